#!/bin/bash
test_description='bench/proxygen -P: the sources packed 2 bits a base (N runs kept) read back as a source give the same proxy, byte for byte, plain and gzip; the pool holds the sources'"'"' bases (an awk oracle on the verbatim start of the proxy); damaged pools are refused'
. ./test-lib.sh

test_lazy_prereq PROXYGEN '${CC:-cc} -O2 -std=c11 -D_GNU_SOURCE -o "$TRASH_DIRECTORY/proxygen" "$SEEDPIPE_SRC/bench/proxygen.c" -lz -lm'

# oracle: the bases proxygen takes from FASTA files, one a line: headers
# dropped, upper case, other letters N
bases() { cat "$@" | awk '!/^>/ { s = toupper($0); gsub(/[^A-Z]/, "", s); gsub(/[B-FH-SU-Z]/, "N", s); printf "%s", s }'; }

test_expect_success PROXYGEN 'setup: three sources (4.3 Mbp), N runs at the ends and inside, lower case, IUPAC letters, long lines' '
	python3 - <<-\PY &&
	import random
	R = random.Random(7)
	def rec(f, name, s, w):
	    f.write(">" + name + " a description\n")
	    for i in range(0, len(s), w):
	        f.write(s[i:i + w] + "\n")
	with open("a.fa", "w") as f:
	    s = "NNNN" + "".join(R.choice("ACGTacgt") for _ in range(2000000)) + "N" * 5000
	    rec(f, "a1", s, 60)
	    rec(f, "a2", "".join(R.choice("ACGTRYKM") for _ in range(300001)), 70000)
	with open("b.fa", "w") as f:
	    s = list("".join(R.choice("ACGT") for _ in range(2000003)))
	    for k in range(50):
	        j = R.randrange(len(s) - 300)
	        s[j:j + R.randrange(1, 300)] = "N" * 5
	    rec(f, "b1", "".join(s) + "NN", 61)
	PY
	gzip -c b.fa >b.fa.gz &&
	printf ">c\nACGTN\n>d\n\n>e\nnnnnT\n" >c.fa &&
	bases a.fa b.fa c.fa >want && test $(wc -c <want) -gt 4000000
'

test_expect_success PROXYGEN 'the proxy from the pool (plain and gzip) is the proxy from the sources' '
	./proxygen -P pool a.fa b.fa.gz c.fa 2>err &&
	test_grep "runs of N" err &&
	gzip -9 -c pool >pool.gz &&
	./proxygen -s 0.002 a.fa b.fa.gz c.fa >p.src &&
	./proxygen -s 0.002 pool >p.pool &&
	./proxygen -s 0.002 pool.gz >p.gz &&
	test_cmp p.src p.pool && test_cmp p.src p.gz &&
	./proxygen -s 0.002 -r 5 pool.gz >q.gz && ./proxygen -s 0.002 -r 5 a.fa b.fa c.fa >q.src &&
	test_cmp q.src q.gz && ! cmp -s p.src q.src
'

test_expect_success PROXYGEN 'the pool holds the sources'"'"' bases in order (the proxy starts with them verbatim) and packs back to the same bytes' '
	n=$(wc -c <want) &&
	bases p.pool | head -c "$n" >got &&
	test_cmp want got &&
	./proxygen -P again pool.gz 2>/dev/null && cmp pool again &&
	./proxygen -P mixed pool c.fa 2>/dev/null &&
	./proxygen -s 0.002 mixed >m && ./proxygen -s 0.002 a.fa b.fa c.fa c.fa >m.src && test_cmp m.src m
'

test_expect_success PROXYGEN 'a truncated pool and a bad run of N are refused' '
	head -c 100000 pool >short &&
	test_expect_code 1 ./proxygen -s 0.002 short >/dev/null 2>err && test_grep "truncated pool" err &&
	python3 -c "
import struct
b = bytearray(open(\"pool\", \"rb\").read())
n, r = struct.unpack_from(\"<QQ\", b, 8)
struct.pack_into(\"<QQ\", b, 24, n - 3, 10)
open(\"badrun\", \"wb\").write(b)" &&
	test_expect_code 1 ./proxygen -s 0.002 badrun >/dev/null 2>err && test_grep "bad run of N" err
'

test_done
