#!/bin/bash
test_description='seedfilt: output independent of threads and batch size, repeats lose nothing'
. ./test-lib.sh
. "$TEST_DIR"/t2999-filt-lib.sh

test_expect_success 'setup' '
	"$FILT_ORACLE" -G 21 4 5000 >ref.fa &&
	"$FILT_ORACLE" -R 22 500 60 ref.fa >reads.fa &&
	seqidx -q -u 5 -l 10 -m all -p 6000 -o x.sx ref.fa
'

for m in bpr bs ph fm; do
	test_expect_success "$m: -t and -B do not change the records" '
		seedfilt -q -x x.sx -m '$m' -e 1 -t 1 -B 100000 reads.fa >a.sp &&
		recview a.sp >a.tsv &&
		for tb in "2 1" "3 7" "4 64" "8 499"; do
			set -- $tb &&
			seedfilt -q -x x.sx -m '$m' -e 1 -t $1 -B $2 reads.fa >b.sp &&
			recview b.sp >b.tsv &&
			test_cmp a.tsv b.tsv || return 1
		done &&
		test $(grep -vc "^#" a.tsv) = 500
	'
done

test_expect_success 'ph: the plain C slot path (SEEDPIPE_NO_SIMD) gives the same records' '
	seedfilt -q -x x.sx -m ph -e 2 -t 2 reads.fa >simd.sp &&
	SEEDPIPE_NO_SIMD=1 seedfilt -q -x x.sx -m ph -e 2 -t 2 reads.fa >plain.sp &&
	recview simd.sp >simd.tsv && recview plain.sp >plain.tsv &&
	test_cmp simd.tsv plain.tsv &&
	test $(grep -vc "^#" simd.tsv) = 500
'

test_expect_success 'reads keep their order, names and qualities' '
	awk "/^>/ { n = substr(\$0, 2); next } { q = \$0; gsub(/./, \"5\", q); printf \"@%s c%d\n%s\n+\n%s\n\", n, NR, \$0, q }" reads.fa >reads.fq &&
	seedfilt -q -x x.sx -t 3 -B 17 reads.fq >c.sp &&
	recview c.sp | awk -F "\t" "!/^#/ { print \$2, \$3, \$5 }" >got &&
	awk "NR % 4 == 1 { n = substr(\$1, 2); c = \$2 } NR % 4 == 0 { print n, c, \$0 }" reads.fq >want &&
	test_cmp want got
'

test_expect_success 'a reads stream gives the same records as FASTA, from a file or a pipe' '
	recview --import reads.fa >reads.sp &&
	seedfilt -q -x x.sx reads.fa >a.sp &&
	seedfilt -q -x x.sx reads.sp >b.sp &&
	seedfilt -q -x x.sx <reads.sp >c.sp &&
	cat reads.fa | seedfilt -q -x x.sx >d.sp &&
	recview a.sp >a.tsv && recview b.sp >b.tsv && recview c.sp >c.tsv && recview d.sp >d.tsv &&
	test_cmp a.tsv b.tsv && test_cmp a.tsv c.tsv && test_cmp a.tsv d.tsv
'

test_expect_success 'the header records the index, its fingerprint, the parameters and the pg lines' '
	seedfilt -q -x x.sx -m ph -e 1 -s 2 reads.sp >h.sp &&
	recview -H h.sp >h.tsv &&
	fp=$(seqidx --info x.sx | awk "\$1 == \"fingerprint\" { print \$2 }") &&
	test_grep "^##index=$(pwd -P)/x.sx$" h.tsv &&
	test_grep "^##index_fp=$fp$" h.tsv &&
	test_grep "^##seedfilt.method=ph$" h.tsv &&
	test_grep "^##seedfilt.e=1$" h.tsv &&
	test_grep "^##seedfilt.step=2$" h.tsv &&
	test_grep "^##pg=seedfilt" h.tsv &&
	test $(grep -c "^##pg=" h.tsv) -ge 2
'

test_expect_success 'a read that occurs 100,000 times loses no candidate' '
	R=ACGTTGCAAGGCTTACCGATGCATTCGAGCTAGGCTAACCGTTAGCAT &&
	awk -v R=$R "BEGIN { srand(7); print \">rep\"; for (i = 0; i < 100000; i++) { s = R; for (j = 0; j < 12; j++) s = s substr(\"ACGT\", int(rand() * 4) + 1, 1); print s } }" >rep.fa &&
	seqidx -q -u 10 -l 12 -o rep.sx rep.fa &&
	printf ">r\n%s\n" $R >r.fa &&
	seedfilt -q -x rep.sx -e 0 -t 2 r.fa >rep.sp &&
	recview rep.sp | awk -F "\t" "!/^#/ { print \$6; n = split(\$7, c, \",\"); for (i = 1; i <= n; i++) { split(c[i], f, \":\"); if (f[4] == \"+\" && f[3] % 60 == 0 && f[5] == 27) k++ } print k }" >got &&
	printf "100000\n100000\n" >want &&
	test_cmp want got
'

test_expect_success '-N counts the same matches and writes reads without candidates' '
	for m in bpr bs ph fm; do
		seedfilt -x x.sx -m $m -e 1 reads.fa 2>a.err >a.sp &&
		seedfilt -x x.sx -m $m -e 1 -N reads.fa 2>b.err >b.sp &&
		sed -n "s/.* \([0-9]*\) matches.*/\1/p" a.err >ma &&
		sed -n "s/.* \([0-9]*\) matches.*/\1/p" b.err >mb &&
		test -s ma && test_cmp ma mb &&
		test_grep " 0 candidates" b.err &&
		recview b.sp | awk -F "\t" "!/^#/ && \$6 != 0 { exit 1 }" || return 1
	done
'

test_expect_success 'a cap -c keeps the best supported candidates and counts the rest' '
	seedfilt -x x.sx -e 1 -c 2 reads.fa >cap.sp 2>err &&
	test_grep "reads capped" err &&
	recview cap.sp | awk -F "\t" "!/^#/ && \$6 > 2 { bad++ } END { exit bad > 0 }" &&
	seedfilt -q -x x.sx -e 1 reads.fa >all.sp &&
	recview all.sp | awk -F "\t" "!/^#/ && \$6 > 2 { n += \$6 - 2 } END { print n }" >want &&
	sed -n "s/.*capped, \([0-9]*\) candidates dropped.*/\1/p" err >got &&
	test_cmp want got
'

test_done
