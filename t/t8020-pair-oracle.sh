#!/bin/bash
test_description='extend paired-end: every concordant pair within the bound equals an exhaustive scan (full-DP loci of both mates, every FR pair within the insert size), with and without gaps; mate rescue alone finds them when mate 2 has no candidate; the insert size estimated'
. ./test-lib.sh

. "$TEST_DIR"/lib-extend.sh
. "$TEST_DIR"/lib-pair.sh

# check A LO HI SAM [-g]: pairs and loci of SAM equal the oracle's
check() {
	oracle_loci $1 $5 >ol &&
	oracle_pairs $2 $3 <ol >expect &&
	sam_pairs $4 >actual &&
	test_cmp expect actual &&
	sam_loci $4 >loci &&
	test_cmp ol loci
}

for seed in 31 32; do
	test_expect_success SAMTOOLS "seed $seed: setup, pairs with repeats, every diagonal a candidate" '
		rm -rf d$seed && mkdir d$seed && (cd d$seed &&
		gen_pairs '$seed' 9000 200 50 3 1 260 30 &&
		seqidx -q -u 5 -l 8 -o ref.sx ref.fa &&
		"$T"/extend_mkcands ref.sx r1.fq 20 -p r2.fq >all.sp &&
		"$T"/extend_mkcands ref.sx r1.fq 20 -p r2.fq -2 >half.sp)
	'
	for a in 0 2 3; do
		test_expect_success SAMTOOLS "seed $seed, -e $a: every concordant pair and every locus equal the oracle" '
			(cd d'$seed' &&
			extend -q -e '$a' -I 150,380 all.sp >e.sam &&
			samtools quickcheck e.sam &&
			check '$a' 150 380 e.sam &&
			test $(wc -l <actual) -ge 5)
		'
	done
	test_expect_success SAMTOOLS "seed $seed, --no-gaps -e 3: equal the Hamming oracle" '
		(cd d'$seed' &&
		extend -q -e 3 --no-gaps -I 150,380 all.sp >g.sam &&
		check 3 150 380 g.sam -g)
	'
	test_expect_success SAMTOOLS "seed $seed: mate 2 without candidates: mate rescue finds every concordant pair" '
		(cd d'$seed' &&
		extend -e 3 -I 150,380 half.sp >h.sam 2>err &&
		oracle_loci 3 >ol && oracle_pairs 150 380 <ol >expect &&
		sam_pairs h.sam >actual && test_cmp expect actual &&
		sam_loci h.sam >loci && comm -13 ol loci >extra && ! test -s extra &&
		sed -n "s/.* \([0-9]*\) hits by mate rescue.*/\1/p" err >n &&
		test $(cat n) -ge 100)
	'
	test_expect_success SAMTOOLS "seed $seed, --no-gaps: rescue without gaps" '
		(cd d'$seed' &&
		extend -q -e 2 --no-gaps -I 150,380 half.sp >hg.sam &&
		oracle_loci 2 -g >ol && oracle_pairs 150 380 <ol >expect &&
		sam_pairs hg.sam >actual && test_cmp expect actual)
	'
done

test_expect_success SAMTOOLS 'a narrow insert size: only the pairs within it (the test can tell)' '
	(cd d31 &&
	extend -q -e 3 -I 240,280 all.sp >n.sam &&
	check 3 240 280 n.sam &&
	sam_pairs e.sam >wide && ! test_cmp wide actual >/dev/null)
'

test_expect_success SAMTOOLS 'seedfilt -E 3 paired | extend: the oracle pairs, the insert size estimated' '
	(cd d32 &&
	seedfilt -q -x ref.sx -E 3 r1.fq r2.fq | extend >s.sam 2>err &&
	test_grep "estimated from [0-9]* pairs" err &&
	sed -n "s/.*(estimated from \([0-9]*\) pairs of the first 10000: mean \([0-9.]*\), sd \([0-9.]*\)).*/\1 \2 \3/p" err >est &&
	read n mean sd <est &&
	test $n -ge 100 &&
	awk -v m=$mean -v s=$sd "BEGIN { exit !(m > 250 && m < 270 && s > 20 && s < 40) }" &&
	lo=$(sed -n "s/.*insert size \([0-9]*\)\.\.\([0-9]*\) .*/\1/p" err) &&
	hi=$(sed -n "s/.*insert size \([0-9]*\)\.\.\([0-9]*\) .*/\2/p" err) &&
	check 3 $lo $hi s.sam)
'

test_expect_success SAMTOOLS 'too few pairs to estimate: 1..1000, said so' '
	(cd d32 &&
	head -n 20 r1.fq >s1.fq && head -n 20 r2.fq >s2.fq &&
	seedfilt -q -x ref.sx -E 3 s1.fq s2.fq | extend >few.sam 2>err &&
	test_grep "insert size 1\.\.1000 (too few pairs to estimate it: [0-9]* of 10; give -I)" err &&
	samtools quickcheck few.sam)
'

for bad in "300" "a,b" "300,30,1" ",30" "-5,30" "0,0"; do
	test_expect_success "-I '$bad' is a usage error" '
		test_expect_code 2 extend -I "$bad" d31/all.sp >out 2>err &&
		test_grep "option -I: " err && test $(wc -l <err) = 1
	'
done

test_done
