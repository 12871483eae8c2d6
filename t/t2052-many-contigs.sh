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
	SEEDPIPE_DEVICE=none seedfilt -v -x c.sx -m ph -e 1 -t 2 -M 14M reads.fa >b.sp 2>err &&
	test_grep "6 partitions) does not fit" err &&
	recview a.sp >a.tsv && recview b.sp >b.tsv && test_cmp a.tsv b.tsv &&
	SEEDPIPE_DEVICE=none extend -q -x c.sx -t 2 a.sp >a.sam &&
	test $(grep -c "^@SQ" a.sam) = 150000 &&
	grep -v "^@" a.sam | awk "{ split(\$1, a, \"_\"); n++; if (\$3 != a[1] || \$4 != a[2]) bad++ }
		END { print n, bad + 0 }" >got &&
	echo "300 0" >want &&
	test_cmp want got
'

test_done
