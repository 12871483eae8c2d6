#!/bin/bash
test_description='workflow/scripts/scatter.py: reads, pairs, reference and read ranges cut as the Snakefile needs (against a plain Python oracle)'
. ./test-lib.sh

command -v python3 >/dev/null || test_skip_all "no python3"
SC=$SEEDPIPE_SRC/workflow/scripts/scatter.py

# The oracle: records parsed one by one (FASTQ: 4 lines; FASTA: a header and
# its lines), cut into chunks of sizes given by the rule (the first chunks
# one larger; pairs: chunk 0 at least min(10000, all) pairs), each mate with
# its newline.
cat >oracle.py <<'EOS'
import gzip, sys
def recs(path):
    data = open(path, 'rb').read()
    if data[:2] == b'\x1f\x8b':
        data = gzip.decompress(data)
    lines = data.splitlines(keepends=True)
    if data[:1] == b'@':
        return [lines[i:i + 4] for i in range(0, len(lines), 4)]
    out = []
    for l in lines:
        if l.startswith(b'>'):
            out.append([l])
        else:
            out[-1].append(l)
    return out
def sizes(total, n, first):
    if n == 1:
        return [total]
    if not first:
        return [total // n + (i < total % n) for i in range(n)]
    r = total - first
    return [first] + [r // (n - 1) + (i < r % (n - 1)) for i in range(n - 1)]
mode, n, prefix = sys.argv[1], int(sys.argv[-2]), sys.argv[-1]
if mode == 'reads':
    r = recs(sys.argv[2])
    sz = sizes(len(r), n, 0)
    items = [b''.join(x) for x in r]
else:
    a, b = recs(sys.argv[2]), recs(sys.argv[3])
    sz = sizes(len(a), n, max(-(-len(a) // n), min(10000, len(a))))
    nl = lambda x: b''.join(x) if x[-1].endswith(b'\n') else b''.join(x) + b'\n'
    items = [nl(x) + nl(y) for x, y in zip(a, b)]
k = 0
for i, s in enumerate(sz):
    open('%s.%d' % (prefix, i), 'wb').write(b''.join(items[k:k + s]))
    k += s
EOS

test_expect_success 'setup: FASTQ (plain, gzip, CRLF, no final newline), FASTA, pairs' '
	python3 -c "
import gzip, random
R = random.Random(16)
def fq(path, n, term=True, crlf=False, gz=False):
    t = []
    for i in range(n):
        L = R.randrange(1, 60)
        t.append(\"@r%d %s\n%s\n+%s\n%s\n\" % (i, \"x\" * R.randrange(3), \"\".join(R.choice(\"ACGTN\") for _ in range(L)),
                 R.choice([\"\", \"r%d\" % i]), \"\".join(R.choice(\"@+I#!\") for _ in range(L))))
    t = \"\".join(t)
    if not term: t = t[:-1]
    if crlf: t = t.replace(\"\n\", \"\r\n\")
    b = t.encode()
    open(path, \"wb\").write(gzip.compress(b) if gz else b)
fq(\"a.fq\", 3000); fq(\"b.fq\", 5001, term=False); fq(\"c.fq.gz\", 3333, gz=True)
fq(\"d.fq\", 7, crlf=True); fq(\"e.fq\", 2)
fq(\"p1.fq\", 12345); fq(\"p2.fq\", 12345, term=False)
open(\"f.fa\", \"w\").write(\"\".join(\">s%d\nACGT\nAC\n\" % i for i in range(101)))
"
'

# blocks of 1000 bytes (not 16 MiB): records cross block ends; and the
# default block on a.fq
test_expect_success 'reads: the chunks equal the oracle, FASTQ and FASTA' '
	for f in a.fq b.fq c.fq.gz d.fq e.fq f.fa; do
		for n in 1 3 7; do
			SEEDPIPE_SCATTER_BLOCK=1000 python3 "$SC" reads $f $n got 2>err &&
			python3 oracle.py reads $f $n want &&
			for i in $(seq 0 $((n - 1))); do
				test_cmp want.$i got.$i || return 1
			done || return 1
		done || return 1
	done &&
	python3 "$SC" reads a.fq 7 got 2>err &&
	python3 oracle.py reads a.fq 7 want &&
	for i in 0 1 2 3 4 5 6; do test_cmp want.$i got.$i || return 1; done &&
	test_grep "scatter.py: 3000 reads into 7 chunks of 429, 429, 429, 429, 428, 428, 428" err
'

test_expect_success 'reads: concatenated, the chunks are the file again' '
	SEEDPIPE_SCATTER_BLOCK=1000 python3 "$SC" reads b.fq 4 cat 2>/dev/null &&
	cat cat.0 cat.1 cat.2 cat.3 >joined &&
	test_cmp b.fq joined
'

test_expect_success 'pairs: interleaved chunks equal the oracle; chunk 0 holds the first 10000' '
	for n in 1 2 5; do
		SEEDPIPE_SCATTER_BLOCK=1000 python3 "$SC" pairs p1.fq p2.fq $n got 2>err &&
		python3 oracle.py pairs p1.fq p2.fq $n want &&
		for i in $(seq 0 $((n - 1))); do
			test_cmp want.$i got.$i || return 1
		done || return 1
	done &&
	test_grep "12345 pairs into 5 chunks of 10000, 587, 586, 586, 586" err
'

test_expect_success 'malformed FASTQ: the record is named, no chunk under its final name' '
	printf "@a\nAC\n+\nII\n@b\nAC\n" >t1.fq &&
	printf "@a\nAC\n+\nII\nxb\nAC\n+\nII\n" >t2.fq &&
	printf "@a\nAC\n+\nII\n@b\nAC\n-\nII\n" >t3.fq &&
	{ cat a.fq; printf "bad\nAC\n+\nII\n"; } >t4.fq &&
	test_must_fail python3 "$SC" reads t1.fq 2 o1 2>e1 &&
	test_grep "t1.fq.: record 2 is truncated" e1 &&
	test_must_fail python3 "$SC" reads t2.fq 2 o2 2>e2 &&
	test_grep "t2.fq.: record 2 does not start with .@." e2 &&
	test_must_fail python3 "$SC" reads t3.fq 2 o3 2>e3 &&
	test_grep "t3.fq.: record 2 has no .+. line" e3 &&
	SEEDPIPE_SCATTER_BLOCK=1000 test_must_fail python3 "$SC" reads t4.fq 2 o4 2>e4 &&
	test_grep "t4.fq.: record 3001 does not start with .@." e4 &&
	! test -e o1.0 && ! test -e o4.0 && ! test -e o4.1 &&
	test_must_fail python3 "$SC" pairs p1.fq a.fq 2 o5 2>e5 &&
	test_grep "holds 12345 reads but .a.fq. 3000" e5
'

# ranges: the oracle's record starts (the records as the oracle parses
# them, their byte lengths summed): each cut is the first record start at or
# after size * i / n (and not before the cut before it), the file's size
# where none is
cat >ranges.py <<'EOS'
import sys
exec(open('oracle.py').read().split('def sizes')[0])
path, n = sys.argv[1], int(sys.argv[2])
size = len(open(path, 'rb').read())
starts, k = [], 0
for r in recs(path):
    starts.append(k)
    k += sum(len(l) for l in r)
assert k == size
cuts = [0]
for i in range(1, n):
    t = max(size * i // n, cuts[-1])
    cuts.append(min([s for s in starts if s >= t] + [size]))
cuts.append(size)
print(' '.join(map(str, cuts)))
EOS

test_expect_success 'ranges: cuts at the oracle record starts; cat of the ranges is the file' '
	python3 -c "
import random
R = random.Random(21)
# long and short records, qualities starting with @ and +, names with +
with open(\"g.fq\", \"w\") as f:
    for i in range(400):
        L = R.choice([0, 1, 2, 5, 100, 3000])
        f.write(\"@%s\n%s\n+%s\n%s\n\" % (R.choice([\"@\", \"+\", \"r\"]) + str(i), \"\".join(R.choice(\"ACGT\") for _ in range(L)),
                R.choice([\"\", \"@x\"]), \"\".join(R.choice(\"@+\") for _ in range(L))))
" &&
	for f in a.fq b.fq d.fq e.fq f.fa g.fq; do
		for n in 1 3 50; do
			python3 "$SC" ranges $f $n >got &&
			python3 ranges.py $f $n >want &&
			test_cmp want got || return 1
		done &&
		for n in 7; do
			python3 "$SC" ranges $f $n >got &&
			python3 ranges.py $f $n >want &&
			test_cmp want got &&
			set -- $(cat got) &&
			: >joined &&
			while [ $# -gt 1 ]; do
				python3 "$SC" cat $f $1 $2 >>joined && shift || return 1
			done &&
			test_cmp $f joined || return 1
		done || return 1
	done
'

test_expect_success 'ranges: no cut for gzip, neither format, or no record start within the look' '
	test_expect_code 3 python3 "$SC" ranges c.fq.gz 2 &&
	echo hello >h.txt &&
	test_expect_code 3 python3 "$SC" ranges h.txt 2 &&
	python3 -c "
L = 200000
open(\"long.fq\", \"w\").write(\"@a\nA\n+\nI\n@b\n%s\n+\n%s\n@c\nA\n+\nI\n\" % (\"C\" * L, \"@\" * L))
" &&
	SEEDPIPE_RANGE_LOOK=1000 test_expect_code 3 python3 "$SC" ranges long.fq 2 &&
	python3 "$SC" ranges long.fq 2 >got &&
	python3 ranges.py long.fq 2 >want &&
	test_cmp want got &&
	test "$(cat got)" = "0 400016 400025" &&
	test_must_fail python3 "$SC" cat a.fq 0 999999999 2>err &&
	test_grep "a.fq. is shorter than 999999999 bytes" err
'

# chunks: the workflow's chunk count where its config gives none, from an
# estimate of the reads (the records' mean size in the first MiB): exact for
# files within the look, within 10% from a 16 KiB look (plain, gzip, gzip of
# several members, FASTA); pairs count two reads
test_expect_success 'chunks: reads per chunk from the estimated count; 1 chunk for small files' '
	test "$(python3 "$SC" chunks a.fq)" = 1 &&
	test "$(python3 "$SC" chunks a.fq 1000)" = 3 &&
	test "$(python3 "$SC" chunks a.fq 999)" = 4 &&
	test "$(python3 "$SC" chunks b.fq 1000)" = 6 &&
	test "$(python3 "$SC" chunks c.fq.gz 1)" = 3333 &&
	test "$(python3 "$SC" chunks d.fq 2)" = 4 &&
	test "$(python3 "$SC" chunks f.fa 10)" = 11 &&
	test "$(python3 "$SC" chunks p1.fq p2.fq 5000)" = 5 &&
	test "$(python3 "$SC" chunks p1.fq p2.fq)" = 1 &&
	gzip -dc c.fq.gz | head -n 4000 | gzip >m.fq.gz &&
	gzip -dc c.fq.gz | tail -n +4001 | gzip >>m.fq.gz &&
	for f in a.fq:3000 b.fq:5001 c.fq.gz:3333 m.fq.gz:3333 p1.fq:12345; do
		n=$(SEEDPIPE_ESTIMATE_LOOK=16384 python3 "$SC" chunks ${f%:*} 1) &&
		want=${f#*:} &&
		echo "${f%:*}: $n of $want" &&
		test $((n * 10)) -ge $((want * 9)) && test $((n * 10)) -le $((want * 11)) || return 1
	done &&
	n=$(SEEDPIPE_ESTIMATE_LOOK=300 python3 "$SC" chunks f.fa 1) &&
	test $n -ge 91 && test $n -le 111 &&
	: >empty.fq && test "$(python3 "$SC" chunks empty.fq)" = 1 &&
	test_must_fail python3 "$SC" chunks a.fq 0 2>err &&
	test_grep "N must be a positive number" err
'

test_expect_success 'reference: partitions of whole sequences, the seed length of the whole' '
	python3 "$SC" ref f.fa 3 part 2>err &&
	cat part.0.fa part.1.fa part.2.fa >joined &&
	test_cmp f.fa joined &&
	test "$(cat part.u)" = 4 &&
	test_grep "101 sequences, 606 bases into 3 partitions" err
'

test_done
