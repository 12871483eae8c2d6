#!/bin/bash
test_description='150,000 contigs: index, seedfilt (whole and -M passes) and extend find every read at its contig and position'
. ./test-lib.sh

test_expect_success 'setup: 150,000 contigs of 40 bases in 6 partitions, 300 reads of 30 bases' '
	awk "BEGIN { srand(11); split(\"ACGT\", b, \"\")
		for (i = 0; i < 150000; i++) {
			s = \"\"; for (j = 0; j < 40; j++) s = s b[int(rand() * 4) + 1]
			printf \">c%d\n%s\n\", i, s
			if (i % 500 == 7) { p = int(rand() * 10); printf \">c%d_%d\n%s\n\", i, p + 1, substr(s, p + 1, 30) >\"reads.fa\" }
		} }" >ctg.fa &&
	seqidx -q -t 2 -u 6 -l 10 -p 1000000 -o c.sx ctg.fa &&
	seqidx --info c.sx >info &&
	test_grep "^sequences	150000$" info &&
	test_grep "^partitions	6$" info
'

test_expect_success 'every read at its contig and position; -M passes give the same records' '
	SEEDPIPE_DEVICE=none seedfilt -q -x c.sx -m ph -e 1 -t 2 reads.fa >a.sp &&
	SEEDPIPE_DEVICE=none seedfilt -v -x c.sx -m ph -e 1 -t 2 -M 16M reads.fa >b.sp 2>err &&
	test_grep "6 partitions) does not fit" err &&
	recview a.sp >a.tsv && recview b.sp >b.tsv && test_cmp a.tsv b.tsv &&
	SEEDPIPE_DEVICE=none extend -q -x c.sx -t 2 a.sp >a.sam &&
	test $(grep -c "^@SQ" a.sam) = 150000 &&
	grep -v "^@" a.sam | awk "{ split(\$1, a, \"_\"); n++; if (\$3 != a[1] || \$4 != a[2]) bad++ }
		END { print n, bad + 0 }" >got &&
	echo "300 0" >want &&
	test_cmp want got
'

# More than 2^32 bases (about 2.5 min and 1.1 GB of index on the 2-core
# machine; set SEEDPIPE_TEST_LARGE=1): 4.4 Gbases, mostly two runs of N,
# so that chrB and chrC start beyond 2^32; reads of chrA, chrB, chrC map to
# their positions, whole and in -M passes over the 7 partitions.
test_lazy_prereq LARGE 'test -n "$SEEDPIPE_TEST_LARGE"'

test_expect_success LARGE 'more than 4 Gbases: positions beyond 2^32, -M passes, extend -M' '
	awk "BEGIN { srand(5); split(\"ACGT\", b, \"\")
		for (k = 0; k < 3; k++) { s = \"\"; for (j = 0; j < 30000; j++) s = s b[int(rand() * 4) + 1]; r[k] = s }
		nl = \"\"; for (j = 0; j < 1024; j++) nl = nl \"NNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN\"
		printf \">chrA\n%s\n\", r[0]
		for (c = 0; c < 2; c++) { printf \">chrN%d\n\", c; for (i = 0; i < 33600; i++) print nl }
		printf \">chrB\n%s\n>chrC\n%s\n\", r[1], r[2]
		for (k = 0; k < 3; k++) for (i = 0; i < 100; i++) { p = int(rand() * 29900)
			printf \">chr%s_%d\n%s\n\", substr(\"ABC\", k + 1, 1), p + 1, substr(r[k], p + 1, 100) >\"big-reads.fa\" } }" |
		gzip -1 >big.fa.gz &&
	seqidx -q -t 2 -u 8 -l 12 -p 1000000000 -o big.sx big.fa.gz &&
	seqidx --info big.sx >info &&
	test_grep "^bases	4404109200$" info &&
	test_grep "^partitions	7$" info &&
	SEEDPIPE_DEVICE=none seedfilt -q -x big.sx -m ph -e 1 -t 2 big-reads.fa >a.sp &&
	SEEDPIPE_DEVICE=none seedfilt -v -x big.sx -m ph -e 1 -t 2 -M 1082500K big-reads.fa >b.sp 2>err &&
	test_grep "7 partitions) does not fit .*: [2-7] passes" err &&
	recview a.sp >a.tsv && recview b.sp >b.tsv && test_cmp a.tsv b.tsv &&
	SEEDPIPE_DEVICE=none extend -q -x big.sx -t 2 -M 1200M b.sp >a.sam &&
	grep -v "^@" a.sam | awk "{ split(\$1, a, \"_\"); n++; if (\$3 != a[1] || \$4 != a[2]) bad++ }
		END { print n, bad + 0 }" >got &&
	echo "300 0" >want &&
	test_cmp want got
'

test_done
