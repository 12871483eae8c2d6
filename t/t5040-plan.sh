#!/bin/bash
test_description='seedfilt -E with -m auto: a setting per read length, the cheapest by the measured cost model; reads of mixed lengths all lossless (full-DP oracle); the reads no setting covers counted, with an index that does'
. ./test-lib.sh

. "$TEST_DIR"/lib-extend.sh

# reads of 30 to 150 bases, up to 3 edit operations
test_expect_success SAMTOOLS 'mixed lengths, -E 3: a setting per length, every hit of the oracle, no warning' '
	rm -rf d && mkdir d && (cd d &&
	gen 51 8000 300 36 150 3 1 &&
	seqidx -q -u 5 -l 8 -o ref.sx ref.fa &&
	seedfilt -v -x ref.sx -E 3 reads.fq 2>sens >c.sp &&
	! grep warning sens &&
	test $(grep -c "^seedfilt: -E: reads of [0-9]* bases: using -m" sens) -gt 3 &&
	test $(grep -c "^seedfilt: -E: reads of [0-9]* bases: using [0-9]* patterns per strand with their own q and e" sens) -gt 3 &&
	test $(sed -n "s/.*bases: using \(.*\), [0-9]* edit operations guaranteed/\1/p" sens | sort -u | wc -l) -gt 2 &&
	recview -H c.sp | grep "^##seedfilt.plan=bpr/0:" &&
	extend -q c.sp >o.sam 2>err &&
	! test -s err &&
	same_as_oracle 3 o.sam
	)
'

test_expect_success SAMTOOLS 'mixed lengths, --no-gaps: every hit of the Hamming oracle' '
	rm -rf d && mkdir d && (cd d &&
	gen 52 8000 300 36 150 3 0 &&
	seqidx -q -u 6 -l 10 -o ref.sx ref.fa &&
	seedfilt -q -x ref.sx -E 3 reads.fq | extend -q --no-gaps >g.sam 2>err &&
	! test -s err &&
	same_as_oracle 3 g.sam -g
	)
'

test_expect_success 'the plan does not depend on -t or -B (counts, no clock)' '
	rm -rf d && mkdir d && (cd d &&
	gen 53 8000 400 30 120 3 1 &&
	seqidx -q -u 5 -l 8 -o ref.sx ref.fa &&
	seedfilt -q -t 1 -x ref.sx -E 3 -o a.sp reads.fq &&
	seedfilt -q -t 3 -B 7 -x ref.sx -E 3 -o b.sp reads.fq &&
	recview a.sp >a.txt && recview b.sp >b.txt && test_cmp a.txt b.txt &&
	recview -H a.sp | grep "^##seedfilt.plan=" >pa &&
	recview -H b.sp | grep "^##seedfilt.plan=" >pb && test_cmp pa pb
	)
'

# exact 10-mers (ph -e 0, 4 per strand) against bpr with a q of 1..4 bases
# behind a 5-base seed: the measured model takes ph; the estimate of the
# random genome took bpr (-s 10, a step asked for, keeps the plan to the
# settings of one e and step: no patterns of their own)
test_expect_success 'the cheapest setting, not the first that fits: 40 bp, -E 3, seed 5 + 5' '
	rm -rf d && mkdir d && (cd d &&
	gen 54 20000 300 40 40 3 0 &&
	seqidx -q -u 5 -l 5 -o ref.sx ref.fa &&
	seedfilt -v -x ref.sx -E 3 -s 10 reads.fq 2>sens >c.sp &&
	test_grep "reads of 40 bases: using -m ph -e 0 -s 10, 3 edit operations" sens &&
	n=$(sed -n "s/.* \([0-9]*\) candidates$/\1/p" sens) &&
	seedfilt -v -x ref.sx -m bpr -e 2 -s 10 reads.fq 2>bsens >/dev/null &&
	test_grep "at most 3 edit operations" bsens &&
	nb=$(sed -n "s/.* \([0-9]*\) candidates$/\1/p" bsens) &&
	test "$n" -lt "$nb"
	)
'

# without -s the plan may give each pattern its own q and e (filt_scheme.c):
# for reads of 36 to 44 bases (indels) and -E 3 on seed 5 + 10 that beats
# the best setting of one e and step (-s 10) by about 10 times in
# candidates, with every hit of the full-DP oracle kept (edit distance and
# Hamming)
test_expect_success SAMTOOLS 'patterns of their own for short reads: fewer candidates than the best pair, the same hits as the oracle' '
	rm -rf d && mkdir d && (cd d &&
	gen 56 20000 300 36 44 3 1 &&
	seqidx -q -u 5 -l 10 -o ref.sx ref.fa &&
	seedfilt -v -x ref.sx -E 3 reads.fq 2>sens >c.sp &&
	test_grep "reads of 40 bases: using [0-9]* patterns per strand with their own q and e" sens &&
	test_grep "at most 3 substitutions and at most 3 edit operations yields a candidate" sens &&
	! grep warning sens &&
	n=$(sed -n "s/.* \([0-9]*\) candidates$/\1/p" sens) &&
	seedfilt -v -x ref.sx -E 3 -s 10 reads.fq 2>psens >p.sp &&
	np=$(sed -n "s/.* \([0-9]*\) candidates$/\1/p" psens) &&
	test "$n" -lt "$np" &&
	extend -q c.sp >o.sam 2>err && ! test -s err &&
	same_as_oracle 3 o.sam &&
	extend -q --no-gaps c.sp >g.sam 2>err && ! test -s err &&
	same_as_oracle 3 g.sam -g
	)
'

# 5-base seeds and 8-base neighborhoods cover 3 edit operations from about
# 30 bases on: the shorter reads are counted, with an index that covers them
test_expect_success SAMTOOLS 'reads no setting covers: counted by length, and the index named covers them' '
	rm -rf d && mkdir d && (cd d &&
	gen 55 8000 300 16 60 3 0 &&
	seqidx -q -u 5 -l 8 -o ref.sx ref.fa &&
	seedfilt -x ref.sx -E 3 reads.fq 2>err >c.sp &&
	test_grep "^seedfilt: warning: -E 3: [0-9]* of 300 reads (of [0-9]* to [0-9]* bases) are not guaranteed" err &&
	ng=$(sed -n "s/.*-E 3: \([0-9]*\) of 300 reads.*/\1/p" err) &&
	hi=$(sed -n "s/.*reads (of [0-9]* to \([0-9]*\) bases).*/\1/p" err) &&
	lo=$(sed -n "s/.*reads (of \([0-9]*\) to [0-9]* bases).*/\1/p" err) &&
	extend -q c.sp >o.sam 2>xerr &&
	test_grep "^extend: warning: $ng of 300 reads may have hits within -e 3" xerr &&
	fix=$(sed -n "s/.*; for those of [0-9]* bases: \(seqidx .*\); seedfilt .*$/\1/p" err) &&
	len=$(sed -n "s/.*; for those of \([0-9]*\) bases: seqidx .*$/\1/p" err) &&
	test -n "$fix" && test $len -ge $lo && test $len -le $hi &&
	$fix -q -o fix.sx ref.fa &&
	awk -v len=$len "NR % 4 == 1 { h = \$0 } NR % 4 == 2 { s = \$0 } NR % 4 == 0 && length(s) == len { print h; print s; print \"+\"; print \$0 }" reads.fq >short.fq &&
	test -s short.fq &&
	seedfilt -x fix.sx -E 3 short.fq 2>ferr | extend -q >f.sam &&
	! grep warning ferr &&
	"$T"/ext_oracle ref.fa short.fq 3 | sort >expect &&
	sam2lines f.sam >actual &&
	test_cmp expect actual
	)
'

# extend -e above the stream's -E: its warning of the reads the filter does
# not cover names what filtered the shortest of them, the plan's scheme or
# seed pair for that length (seedfilt -v's line for it), not the one setting
# the stream records (seedfilt.method, e, step).
# plan_warning "GEN ARGS" L E WHAT: reads of gen GEN ARGS, an index -u 5 -l L,
# seedfilt -v -E 3, extend -e E; WHAT is a sed s command that prints, from
# seedfilt -v's line for reads of LO bases (LO: the shortest length the
# warning says the filter does not cover), the filter the warning must name
plan_warning() {
	gen $1 &&
	seqidx -q -u 5 -l $2 -o ref.sx ref.fa &&
	seedfilt -v -x ref.sx -E 3 reads.fq 2>sens >c.sp &&
	extend -q -e $3 c.sp 2>err >/dev/null &&
	lo=$(sed -n "s/.*(it guarantees [0-9]* for \([0-9]*\)-base reads).*/\1/p" err) &&
	test -n "$lo" &&
	what=$(sed -n "$(printf "%s" "$4" | sed "s/LO/$lo/")" sens) &&
	test -n "$what" &&
	test_grep "within -e $3 that the filter (seedfilt -E 3: $what for $lo-base reads) does not guarantee" err
}

test_expect_success 'extend -e above -E: the warning names the plan'"'"'s filter of those reads' '
	rm -rf d && mkdir d && (cd d &&
	plan_warning "56 20000 300 36 44 3 1" 10 5 \
		"s/.*reads of LO bases: using \([0-9]* patterns per strand with their own q and e\).*/\1/p" &&
	plan_warning "57 8000 300 70 150 3 1" 8 6 \
		"s/.*reads of LO bases: using \(-m [a-z]* -e [0-9]* -s [0-9]*\),.*/\1/p"
	)
'

test_done
