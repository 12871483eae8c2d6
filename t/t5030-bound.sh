#!/bin/bash
test_description='the error bound stated once: seedfilt -E chooses a lossless setting, the stream records it, extend defaults to it and warns (even with -q) for the reads it does not cover; every hit within the bound equals the full-DP oracle'
. ./test-lib.sh

. "$TEST_DIR"/lib-extend.sh

for seed in 41 42 43; do
	for len in 36 50; do
		for a in 1 2 3; do
			test_expect_success SAMTOOLS "seed $seed, $len bp, seedfilt -E $a | extend (no -e): lossless, no warning" '
				rm -rf d && mkdir d && (cd d &&
				gen '$seed' 6000 150 '$len' '$len' '$a' 1 &&
				seqidx -q -u 5 -l 8 -o ref.sx ref.fa &&
				seedfilt -v -x ref.sx -E '$a' reads.fq 2>sens >c.sp &&
				test_grep "bases: using " sens &&
				! grep "warning" sens &&
				recview -H c.sp | grep "^##seedfilt.E='$a'$" &&
				extend -q c.sp >o.sam 2>err &&
				! test -s err &&
				samtools view -H o.sam | grep "^@PG.*ID:extend" &&
				same_as_oracle '$a' o.sam
	)
			'
		done
	done
done

test_expect_success SAMTOOLS '--no-gaps: seedfilt -E 3 | extend --no-gaps equals the Hamming oracle' '
	rm -rf d && mkdir d && (cd d &&
	gen 44 6000 200 40 40 3 0 &&
	seqidx -q -u 5 -l 8 -o ref.sx ref.fa &&
	seedfilt -q -x ref.sx -E 3 reads.fq | extend -q --no-gaps >g.sam 2>err &&
	! test -s err &&
	same_as_oracle 3 g.sam -g
	)
'

# 5% of each read's own length: reads of 60 bases (3 edit operations) with
# substitutions only, so that no indel makes a read shorter than 60
test_expect_success SAMTOOLS 'the default (no -E, -e, -m): lossless for 5% of the read length' '
	rm -rf d && mkdir d && (cd d &&
	gen 45 6000 150 60 60 3 0 &&
	seqidx -q -u 5 -l 8 -o ref.sx ref.fa &&
	seedfilt -x ref.sx reads.fq 2>sens >c.sp &&
	recview -H c.sp | grep "^##seedfilt.E=5%$" &&
	! grep warning sens &&
	extend -q -e 3 c.sp >o.sam 2>err &&
	! test -s err &&
	same_as_oracle 3 o.sam &&
	same_as_oracle 5% o.sam
	)
'

# with indels some reads are shorter than 60 bases: 5% of them is 2, and
# extend -e 3 says so (the plan is per read length)
test_expect_success SAMTOOLS 'the default bound is per read length: extend -e 3 above it warns' '
	rm -rf d && mkdir d && (cd d &&
	gen 45 6000 150 60 60 3 1 &&
	seqidx -q -u 5 -l 8 -o ref.sx ref.fa &&
	seedfilt -x ref.sx reads.fq 2>sens >c.sp &&
	! grep warning sens &&
	n=$(awk "NR % 4 == 2 && length(\$0) < 60" reads.fq | wc -l) &&
	test $n -gt 0 &&
	extend -q -e 3 c.sp >o.sam 2>err &&
	test_grep "^extend: warning: $n of 150 reads may have hits within -e 3 " err
	)
'

test_expect_success SAMTOOLS 'the mission line seedfilt -e 1 | extend -e 3: warns with the count and the fix, even with -q; --strict exits 1' '
	rm -rf d && mkdir d && (cd d &&
	gen 46 6000 200 40 40 3 1 &&
	seqidx -q -u 5 -l 16 -o ref.sx ref.fa &&
	seedfilt -q -x ref.sx -m ph -e 1 reads.fq >c.sp &&
	extend -q -e 3 c.sp >o.sam 2>err &&
	test_grep "^extend: warning: 200 of 200 reads may have hits within -e 3 that the filter (-m ph -e 1 -s 1) does not guarantee to find (it guarantees [0-9] for [0-9]*-base reads); to cover them: seedfilt -E 3 " err &&
	test_expect_code 1 extend -q -e 3 --strict c.sp >o2.sam 2>err2 &&
	test_cmp err err2 &&
	fix=$(sed -n "s/.*to cover them: seedfilt -E 3 (or \(.*\))$/\1/p" err) &&
	test -n "$fix" &&
	seedfilt -q -x ref.sx $fix reads.fq | extend -q -e 3 --strict >f.sam &&
	same_as_oracle 3 f.sam &&
	"$T"/ext_oracle ref.fa reads.fq 3 | sort >expect &&
	sam2lines o.sam >actual &&
	! test_cmp expect actual >/dev/null
	)
'

test_expect_success SAMTOOLS 'reads of several lengths: each read is checked against the guarantee for its length' '
	rm -rf d && mkdir d && (cd d &&
	gen 47 6000 300 30 90 2 1 &&
	seqidx -q -u 5 -l 8 -o ref.sx ref.fa &&
	seedfilt -q -x ref.sx -m ph -e 1 -s 4 reads.fq >c.sp &&
	seedfilt -q -x ref.sx -m ph -e 1 -s 4 -E 2 -v -L 30 </dev/null 2>/dev/null >/dev/null;
	awk "NR % 4 == 2 { print length(\$0) }" reads.fq | sort -n | uniq -c >lens &&
	extend -q -e 2 c.sp >o.sam 2>err &&
	n=$(sed -n "s/^extend: warning: \([0-9]*\) of 300 reads.*/\1/p" err) &&
	test -n "$n" && test "$n" -gt 0 && test "$n" -lt 300 &&
	seedfilt -x ref.sx -m ph -e 1 -s 4 -E 2 reads.fq 2>serr >/dev/null &&
	test_grep "^seedfilt: warning: -E 2: $n of 300 reads are not guaranteed" serr
	)
'

test_expect_success 'seedfilt -E: bad values are usage errors; P% is recorded' '
	rm -rf d && mkdir d && (cd d &&
	gen 48 3000 10 40 40 1 0 &&
	seqidx -q -u 5 -l 8 -o ref.sx ref.fa &&
	test_expect_code 2 seedfilt -x ref.sx -E 101% reads.fq 2>err &&
	test_grep "try .seedfilt --help." err &&
	test_expect_code 2 seedfilt -x ref.sx -E x reads.fq 2>err &&
	seedfilt -q -x ref.sx -E 10% reads.fq | recview -H | grep "^##seedfilt.E=10%$"
	)
'

test_expect_success SAMTOOLS 'reads shorter than the patterns: the warning says the filter guarantees them no hit' '
	rm -rf d && mkdir d && (cd d &&
	gen 47 6000 60 8 12 0 0 &&
	seqidx -q -u 5 -l 16 -o ref.sx ref.fa &&
	seedfilt -q -x ref.sx -m bpr -e 1 reads.fq >c.sp &&
	extend -q -e 2 c.sp >o.sam 2>err &&
	test_grep "^extend: warning: 60 of 60 reads may have hits within -e 2 that the filter (-m bpr -e 1 -s [0-9]*) does not guarantee to find (it guarantees no hit for [0-9]*-base reads)" err &&
	! grep "guarantees -" err
	)
'

test_done
