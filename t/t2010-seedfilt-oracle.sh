#!/bin/bash
test_description='seedfilt: every method equals a brute-force scan of all seed occurrences'
. ./test-lib.sh
. "$TEST_DIR"/t2999-filt-lib.sh

test_expect_success 'random references with N runs and reads' '
	"$FILT_ORACLE" -G 11 3 3000 >ref.fa &&
	"$FILT_ORACLE" -R 12 60 50 ref.fa >reads.fa &&
	grep -q N ref.fa && grep -q N reads.fa
'

# check NAME SEQIDX_OPTS SHAPE L E STEP METHODS
check() {
	name=$1 iopt=$2 shape=$3 l=$4 e=$5 step=$6 methods=$7
	test_expect_success "$name" '
		seqidx -q $iopt -l $l -m all -o x.sx ref.fa &&
		P=$(filt_parts x.sx) &&
		"$FILT_ORACLE" -S "$shape" -l $l -e $e -s $step -M bpr -P "$P" ref.fa reads.fa |
			LC_ALL=C sort >want.bpr &&
		"$FILT_ORACLE" -S "$shape" -l $l -e $e -s $step -M ham -P "$P" ref.fa reads.fa |
			LC_ALL=C sort >want.ham &&
		test -s want.ham &&
		for m in $methods; do
			seedfilt -q -x x.sx -m $m -e $e -s $step reads.fa >out.$m &&
			filt_tsv x.sx out.$m >got.$m || return 1
			if test $m = bpr; then test_cmp want.bpr got.$m || return 1
			else test_cmp want.ham got.$m || return 1; fi
		done
	'
}

check 'u=5 l=8 e=1, 5 partitions'           '-u 5 -p 2000'        '#####'   8  1 1 'bpr bs ph fm'
check 'spaced ##-#-## l=12 e=2 step 2'      '-S ##-#-##'          '##-#-##' 12 2 2 'bpr bs ph fm'
check 'u=4 l=4 (h=8, two mask groups) e=0'  '-u 4'                '####'    4  0 3 'bpr bs ph fm'
check 'u=4 l=5 (h=6) e=1 step 1'            '-u 4 -p 2500'        '####'    5  1 1 'bpr bs ph fm'
check 'u=3 l=16 e=3 step 5'                 '-u 3'                '###'     16 3 5 'bpr bs ph fm'
check 'u=6 l=32 (h=1) e=2'                  '-u 6'                '######'  32 2 1 'bpr bs ph fm'
check 'bpr e=5 l=10'                        '-u 4'                '####'    10 5 2 'bpr'
check 'u=2 l=3 e=2 (q of 1 base)'           '-u 2'                '##'      3  2 4 'bpr bs ph fm'
# thousands of matches per read in about 90 sorted runs (filt_finish sorts
# them by radix, not by merging runs as for the cases above)
check 'u=2 l=3 e=1 step 1 (many runs)'      '-u 2 -p 4000'        '##'      3  1 1 'bpr bs ph fm'

test_expect_success 'FASTQ and gzip input give the same candidates as FASTA' '
	seqidx -q -u 5 -l 8 -o x.sx ref.fa &&
	seedfilt -q -x x.sx reads.fa >a.sp &&
	awk "/^>/ { n = substr(\$0, 2); next } { q = \$0; gsub(/./, \"I\", q); printf \"@%s\n%s\n+\n%s\n\", n, \$0, q }" reads.fa >reads.fq &&
	seedfilt -q -x x.sx <reads.fq >b.sp &&
	filt_tsv x.sx a.sp >a.tsv && filt_tsv x.sx b.sp >b.tsv && test_cmp a.tsv b.tsv &&
	gzip -c reads.fq >reads.fq.gz &&
	seedfilt -q -x x.sx reads.fq.gz >c.sp &&
	filt_tsv x.sx c.sp >c.tsv && test_cmp a.tsv c.tsv
'

test_done
