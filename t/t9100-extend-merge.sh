#!/bin/bash
test_description='extend --merge: the hits streams of index partitions give the whole reference'"'"'s output'
. ./test-lib.sh

# mkref SEED NSEQ NREADS: ref.fa (NSEQ sequences of 300 to 9000 bases with a
# shared repeat family, an N run, lower case), reads.fq (60-150 bases,
# substitutions and indels, half reverse-complemented, some from the
# repeats), and the partition cut points parts.txt (random, 1 to NSEQ parts).
mkref() {
	PYTHONPATH="$TEST_DIR" python3 - "$@" <<'PY'
import random, sys
from gen_genome import rnd as rnd_, mutate_any, write_cuts
seed, nseq, nr = map(int, sys.argv[1:4])
R = random.Random(seed)
def rnd(n): return rnd_(R, n)
def mut(s, k): return mutate_any(R, s, k)
rep = rnd(250)
seqs = []
for i in range(nseq):
    s = rnd(R.randrange(300, 9000))
    for _ in range(R.randrange(0, 4)):
        p = R.randrange(0, max(1, len(s) - 250)); s = s[:p] + mut(rep, R.randrange(0, 3)) + s[p + 250:]
    if R.random() < 0.3:
        p = R.randrange(0, len(s) - 10); s = s[:p] + 'N' * 6 + s[p + 6:]
    if R.random() < 0.3:
        s = s[:50] + s[50:120].lower() + s[120:]
    seqs.append(('seq%d' % i, s))
with open('ref.fa', 'w') as f:
    for n, s in seqs:
        f.write('>%s some description\n' % n)
        for i in range(0, len(s), 70): f.write(s[i:i + 70] + '\n')
comp = str.maketrans('ACGTNacgtn', 'TGCANtgcan')
with open('reads.fq', 'w') as f:
    for i in range(nr):
        n, s = R.choice(seqs); m = R.randrange(60, 151)
        if len(s) <= m or R.random() < 0.03:
            r = rnd(m)
        elif R.random() < 0.2:
            r = mut(rep[:m] if m <= 250 else rep, R.randrange(0, 4))
        else:
            p = R.randrange(0, len(s) - m); r = mut(s[p:p + m].upper(), R.randrange(0, 6))
        if R.random() < 0.5: r = r.translate(comp)[::-1]
        f.write('@r%d\n%s\n+\n%s\n' % (i, r, ''.join(chr(33 + R.randrange(2, 41)) for _ in r)))
write_cuts(R, nseq, 'parts.txt')
PY
}

# split_ref: p0.fa p1.fa ... from ref.fa at the cut points of parts.txt
split_ref() {
	awk -v cuts="$(cat parts.txt)" 'BEGIN { n = split(cuts, c, " "); p = 0 }
		/^>/ { s++; while (p + 2 <= n && s > c[p + 2]) p++; out = "p" p ".fa" }
		{ print > out }' ref.fa
}

# run_case SEED NSEQ NREADS SEEDFILT_OPTS EXTEND_OPTS...: the whole
# reference against its partitions, for every selection mode.  The filter's
# settings are given (-m -e -s): seedfilt -E alone chooses them from the
# index's size and the first read, which differ between a partition and the
# whole; the workflow pins them the same way.
run_case() {
	seed=$1 nseq=$2 nr=$3 fopt=$4; shift 4
	rm -f p*.fa p*.sx h*.sp &&
	mkref "$seed" "$nseq" "$nr" &&
	split_ref &&
	seqidx -q -u 5 -o ref.sx ref.fa &&
	seedfilt -q $fopt -x ref.sx reads.fq >whole.cand &&
	hs= &&
	for f in $(ls p*.fa | sort -V); do
		b=${f%.fa} &&
		seqidx -q -u 5 -o $b.sx $f &&
		seedfilt -q $fopt -x $b.sx reads.fq | extend -q -O rec "$@" -o h$b.sp &&
		hs="$hs h$b.sp" || return 1
	done &&
	echo "case $seed: $(wc -w <parts.txt) cut points, streams$hs" &&
	for mode in "" "-k 1" "-k 3" "--best"; do
		extend -q "$@" $mode -o whole.sam whole.cand &&
		extend --merge -q $mode -o merged.sam $hs &&
		grep -v "^@" whole.sam >want &&
		grep -v "^@" merged.sam >got &&
		test_cmp want got &&
		grep "^@SQ" whole.sam >want &&
		grep "^@SQ" merged.sam >got &&
		test_cmp want got || return 1
	done &&
	extend -q -O bam "$@" -k 2 -o whole.bam whole.cand &&
	extend --merge -q -O bam -k 2 -t 2 -o merged.bam $hs &&
	samtools quickcheck merged.bam &&
	samtools view whole.bam >want &&
	samtools view merged.bam >got &&
	test_cmp want got
}

test_expect_success 'random references and partitions: the same records, in the same order' '
	run_case 1 9 1500 "-E 5% -m bpr -e 1 -s 15" &&
	run_case 2 5 800 "-E 4 -m ph -e 0 -s 20" &&
	run_case 3 12 800 "-E 5% -m bs -e 1 -s 10" &&
	run_case 4 3 600 "-E 3 -m ph -e 0 -s 25" &&
	run_case 5 1 300 ""
'

test_expect_success 'substitutions only (--no-gaps)' '
	run_case 6 7 800 "-E 3 -m ph -e 0 -s 25" --no-gaps
'

test_expect_success 'loci in several partitions: the primary, secondaries and MAPQ over all of them' '
	run_case 7 6 1000 "-E 5% -m bpr -e 1 -s 15" &&
	extend --merge -q $hs >merged.sam &&
	grep -v "^@" merged.sam | awk -F"\t" "int(\$2 / 256) % 2 == 0 && \$3 != \"*\" { p[\$1] = \$3 }
		int(\$2 / 256) % 2 { if (\$3 != p[\$1]) n++ } END { print n + 0 }" >spread &&
	test $(cat spread) -gt 0 &&
	grep -v "^@" merged.sam | awk -F"\t" "int(\$2 / 256) % 2 == 0 && \$5 == 0" | grep -q . &&
	grep "^@PG" merged.sam >pg &&
	test_grep "CL:extend --merge" pg &&
	test $(grep -c "PN:seedfilt" pg) = $(echo $hs | wc -w)
'

# mkpairs SEED NSEQ NPAIRS: ref.fa as mkref (a repeat family over the
# sequences), r1.fq and r2.fq: fragments of 150 to 450 bases (a few far
# longer), mates of 60 to 120 bases with edits (some beyond what the pinned
# filter finds: mate rescue), some random, some from the repeats, FASTQ
# comments on some; the partition cut points parts.txt.
mkpairs() {
	PYTHONPATH="$TEST_DIR" python3 - "$@" <<'PY'
import random, sys
from gen_genome import rnd as rnd_, mutate_any, write_cuts
seed, nseq, npair = map(int, sys.argv[1:4])
R = random.Random(seed)
def rnd(n): return rnd_(R, n)
def mut(s, k): return mutate_any(R, s, k)
rep = rnd(600)
seqs = []
for i in range(nseq):
    s = rnd(R.randrange(1500, 9000))
    for _ in range(R.randrange(0, 3)):
        p = R.randrange(0, len(s) - 600); s = s[:p] + mut(rep, R.randrange(0, 3)) + s[p + 600:]
    if R.random() < 0.3:
        p = R.randrange(0, len(s) - 10); s = s[:p] + 'N' * 6 + s[p + 6:]
    seqs.append(('seq%d' % i, s))
with open('ref.fa', 'w') as f:
    for n, s in seqs:
        f.write('>%s\n' % n)
        for i in range(0, len(s), 70): f.write(s[i:i + 70] + '\n')
comp = str.maketrans('ACGTNacgtn', 'TGCANtgcan')
rc = lambda s: s.translate(comp)[::-1]
qual = lambda r: ''.join(chr(33 + R.randrange(2, 41)) for _ in r)
f1 = open('r1.fq', 'w'); f2 = open('r2.fq', 'w')
for i in range(npair):
    n, s = R.choice(seqs)
    m1, m2 = R.randrange(60, 121), R.randrange(60, 121)
    L = max(m1, m2, int(R.gauss(300, 40)))
    if R.random() < 0.03: L = 2000
    L = min(L, len(s))
    p = R.randrange(0, len(s) - L + 1)
    frag = s[p:p + L]
    a, b = frag[:m1], rc(frag[-m2:])
    if R.random() < 0.5: a, b = b, a
    a = mut(a, R.randrange(0, 4)); b = mut(b, R.randrange(0, 4))
    if R.random() < 0.03: a = rnd(len(a))
    if R.random() < 0.03: b = rnd(len(b))
    c = ' BC:Z:AC%d' % i if R.random() < 0.3 else ''
    f1.write('@p%d/1%s\n%s\n+\n%s\n' % (i, c, a, qual(a)))
    f2.write('@p%d/2%s\n%s\n+\n%s\n' % (i, c, b, qual(b)))
write_cuts(R, nseq, 'parts.txt')
PY
}

# run_pcase SEED NSEQ NPAIRS SEEDFILT_OPTS: paired-end reads, the whole
# reference against its partitions (seedfilt R1 R2 | extend -O rec each,
# then extend --merge), for each selection mode and SAM convention.
run_pcase() {
	seed=$1 nseq=$2 np=$3 fopt=$4; shift 4
	rm -f p*.fa p*.sx h*.sp &&
	mkpairs "$seed" "$nseq" "$np" &&
	split_ref &&
	seqidx -q -u 5 -o ref.sx ref.fa &&
	seedfilt -q $fopt -x ref.sx r1.fq r2.fq >whole.cand &&
	hs= &&
	for f in $(ls p*.fa | sort -V); do
		b=${f%.fa} &&
		seqidx -q -u 5 -o $b.sx $f &&
		seedfilt -q $fopt -x $b.sx r1.fq r2.fq | extend -q -O rec "$@" -o h$b.sp &&
		hs="$hs h$b.sp" || return 1
	done &&
	echo "paired case $seed: $(wc -w <parts.txt) cut points, streams$hs" &&
	extend "$@" -o whole.sam whole.cand 2>whole.err &&
	extend --merge -o merged.sam $hs 2>merged.err &&
	grep "pairs, " whole.err >want && grep "pairs, " merged.err >got &&
	test_cmp want got &&
	for mode in "" "-k 1" "-k 3" "--best" "--secondary tag" "-C" "-I 250,40" "-I 200,500"; do
		extend -q "$@" $mode -o whole.sam whole.cand &&
		extend --merge -q $mode -o merged.sam $hs &&
		grep -v "^@" whole.sam >want &&
		grep -v "^@" merged.sam >got &&
		test_cmp want got &&
		grep "^@SQ" whole.sam >want &&
		grep "^@SQ" merged.sam >got &&
		test_cmp want got || return 1
	done &&
	extend -q "$@" -R "@RG\tID:g1\tSM:s1" -O bam -o whole.bam whole.cand &&
	extend --merge -q -R "@RG\tID:g1\tSM:s1" -O bam -t 2 -o merged.bam $hs &&
	samtools quickcheck merged.bam &&
	samtools view whole.bam >want &&
	samtools view merged.bam >got &&
	test_cmp want got &&
	samtools view -H merged.bam | grep "^@RG" >got &&
	printf "@RG\tID:g1\tSM:s1\n" >want &&
	test_cmp want got
}

test_expect_success 'paired-end: pairs, rescue, MAPQ and insert size over the partitions' '
	run_pcase 21 7 700 "-E 3 -m ph -e 0 -s 25" &&
	grep -q "[1-9][0-9]* hits by mate rescue" merged.err &&
	grep -q "estimated from" merged.err &&
	run_pcase 22 4 500 "-E 5% -m bpr -e 1 -s 15" &&
	run_pcase 23 1 300 "-E 3 -m ph -e 0 -s 25"
'

test_expect_success 'paired-end: the merged pairs span partitions, and a stream of single reads is refused' '
	run_pcase 25 9 800 "-E 4 -m ph -e 0 -s 20" &&
	test $(wc -w <parts.txt) -gt 3 &&
	samtools view -f 0x102 merged.bam | grep -q . &&
	samtools view -F 0x100 merged.bam | awk -F"\t" "\$5 == 0" | grep -q . &&
	set -- $hs &&
	seedfilt -q -E 4 -m ph -e 0 -s 20 -x p1.sx r1.fq | extend -q -O rec -o single.sp &&
	test_expect_code 1 extend --merge $1 single.sp >out 2>err &&
	test_grep "paired-end" err
'

test_expect_success 'setup: two partitions of one reference' '
	mkref 11 4 200 &&
	echo "0 2 4" >parts.txt && split_ref &&
	seqidx -q -u 5 -o p0.sx p0.fa && seqidx -q -u 5 -o p1.sx p1.fa &&
	seedfilt -q -x p0.sx reads.fq >c0.sp && seedfilt -q -x p1.sx reads.fq >c1.sp &&
	extend -q -O rec c0.sp >h0.sp && extend -q -O rec c1.sp >h1.sp &&
	extend --merge -q h0.sp h1.sp >ok.sam
'

test_expect_success 'a stream made with -k or --best is refused' '
	extend -q -O rec -k 2 c1.sp >k1.sp &&
	test_expect_code 1 extend --merge h0.sp k1.sp >out 2>err &&
	test_grep "needs every locus" err &&
	extend -q -O rec --best c1.sp >b1.sp &&
	test_expect_code 1 extend --merge h0.sp b1.sp >out 2>err &&
	test_grep "needs every locus" err &&
	extend -q -O rec -k 2 --all c1.sp >a1.sp &&
	extend --merge -q h0.sp a1.sp >out
'

test_expect_success 'streams of other reads, fewer reads, the same partition twice' '
	head -n 400 reads.fq >less.fq &&
	seedfilt -q -x p1.sx less.fq | extend -q -O rec >less.sp &&
	test_expect_code 1 extend --merge h0.sp less.sp >out 2>err &&
	test_grep "ends after 100 reads but .h0.sp. holds more" err &&
	tail -n +5 reads.fq >shift.fq &&
	seedfilt -q -x p1.sx shift.fq | extend -q -O rec >shift.sp &&
	test_expect_code 1 extend --merge h0.sp shift.sp >out 2>err &&
	test_grep "differ at read 1 (.r0. and .r1.)" err &&
	tail -n 1 out | test_grep "the output is incomplete" - &&
	test_expect_code 1 extend --merge h0.sp h0.sp >out 2>err &&
	test_grep "the same index" err
'

test_expect_success 'different bounds, wrong or missing -x, a truncated stream, wrong kinds' '
	extend -q -O rec -e 2 c1.sp >e2.sp &&
	test_expect_code 1 extend --merge h0.sp e2.sp >out 2>err &&
	test_grep "different extend.e" err &&
	test_expect_code 1 extend --merge -x p1.sx -x p0.sx h0.sp h1.sp >out 2>err &&
	test_grep "fingerprint" err &&
	extend --merge -q -x p0.sx -x p1.sx h0.sp h1.sp >x.sam &&
	grep -v "^@PG" ok.sam >want && grep -v "^@PG" x.sam >got &&
	test_cmp want got &&
	test_expect_code 2 extend --merge -x p0.sx h0.sp h1.sp 2>err &&
	test_grep "1 -x options for 2 hits streams" err &&
	test_expect_code 2 extend --merge 2>err &&
	test_grep "needs the hits streams" err &&
	size=$(wc -c <h1.sp) && head -c $((size - 30)) h1.sp >cut.sp &&
	test_expect_code 1 extend --merge h0.sp cut.sp >out 2>err &&
	test_grep "truncated\|no end block" err &&
	test_expect_code 1 extend --merge h0.sp c1.sp >out 2>err &&
	test_grep "expected hits, got candidates" err &&
	test_expect_code 2 extend --merge -O rec h0.sp 2>err &&
	test_grep "sam or bam" err
'

test_expect_success 'a sequence in two partitions is refused' '
	{ cat p1.fa && awk "/^>/ { n++ } n == 1" p0.fa; } >dup.fa &&
	seqidx -q -u 5 -o dup.sx dup.fa &&
	seedfilt -q -x dup.sx reads.fq | extend -q -O rec >hdup.sp &&
	test_expect_code 1 extend --merge h0.sp hdup.sp >out 2>err &&
	test_grep "is a sequence in two partitions" err
'

test_done
