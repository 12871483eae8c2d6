#!/bin/bash
test_description='seedfilt -a: errors anywhere in the pattern equal a Hamming scan of whole windows'
. ./test-lib.sh
. "$TEST_DIR"/t2999-filt-lib.sh

test_expect_success 'random references with N runs and reads (short, N, both strands)' '
	"$FILT_ORACLE" -G 61 3 3000 >ref.fa &&
	"$FILT_ORACLE" -R 62 80 40 ref.fa >reads.fa &&
	"$FILT_ORACLE" -K 63 40 30 2 s ref.fa >>reads.fa &&
	grep -q N ref.fa && grep -q N reads.fa &&
	awk "!/^>/ && length(\$0) < 12 { n++ } END { exit !(n > 0) }" reads.fa
'

# check NAME SEQIDX_OPTS SHAPE L E STEP METHODS
check() {
	name=$1 iopt=$2 shape=$3 l=$4 e=$5 step=$6 methods=$7
	test_expect_success "-a: $name" '
		seqidx -q $iopt -l $l -m all -o x.sx ref.fa &&
		P=$(filt_parts x.sx) &&
		"$FILT_ORACLE" -A -S "$shape" -l $l -e $e -s $step -M ham -P "$P" ref.fa reads.fa |
			LC_ALL=C sort >want &&
		"$FILT_ORACLE" -S "$shape" -l $l -e $e -s $step -M ham -P "$P" ref.fa reads.fa |
			LC_ALL=C sort >want.seed &&
		test -s want &&
		for m in $methods; do
			seedfilt -q -x x.sx -m $m -a -e $e -s $step reads.fa >out.$m &&
			filt_tsv x.sx out.$m >got.$m &&
			test_cmp want got.$m || return 1
		done &&
		if test $e -gt 0; then ! test_cmp want want.seed >/dev/null; fi
	'
}

check 'u=5 l=8 e=1, 4 partitions'          '-u 5 -p 2500'   '#####'     8  1 1 'bs ph fm'
check 'spaced ##-#-## l=12 e=2 step 2'     '-S ##-#-##'     '##-#-##'   12 2 2 'bs ph fm'
check 'u=4 l=4 e=0 (the same as without)'  '-u 4'           '####'      4  0 3 'bs ph fm'
check 'u=3 l=16 e=3 step 5'                '-u 3'           '###'       16 3 5 'bs ph fm'
check 'u=2 l=3 e=2 (q of 3 bases)'         '-u 2'           '##'        3  2 4 'bs ph fm'
check 'u=6 l=26 (u64 keys, w + l = 32) e=1' '-u 6'          '######'    26 1 3 'bs ph fm'
check 'spaced #--## l=10 e=3 step 1'       '-S #--##'       '#--##'     10 3 1 'bs ph fm'

test_expect_success '-a -e 0 writes the same records as without -a' '
	seqidx -q -u 5 -l 8 -m all -o x.sx ref.fa &&
	for m in bs ph fm; do
		seedfilt -q -x x.sx -m $m -e 0 reads.fa >a.sp &&
		seedfilt -q -x x.sx -m $m -a -e 0 reads.fa >b.sp &&
		recview a.sp >a.tsv && recview b.sp >b.tsv &&
		test_cmp a.tsv b.tsv || return 1
	done
'

test_expect_success '-a: -t and -B do not change the records; the methods agree' '
	seqidx -q -u 5 -l 10 -m all -p 4000 -o y.sx ref.fa &&
	for m in bs ph fm; do
		seedfilt -q -x y.sx -m $m -a -e 2 -t 1 -B 100000 reads.fa >a.$m.sp &&
		recview a.$m.sp >a.$m.tsv &&
		for tb in "2 1" "3 7" "4 64"; do
			set -- $tb &&
			seedfilt -q -x y.sx -m $m -a -e 2 -t $1 -B $2 reads.fa >b.sp &&
			recview b.sp >b.tsv &&
			test_cmp a.$m.tsv b.tsv || return 1
		done
	done &&
	test_cmp a.bs.tsv a.ph.tsv && test_cmp a.bs.tsv a.fm.tsv &&
	test $(grep -vc "^#" a.bs.tsv) = 120
'

test_expect_success '-a: the summary counts the same matches for bs, ph and fm' '
	for m in bs ph fm; do
		seedfilt -x y.sx -m $m -a -e 1 reads.fa 2>err.$m >/dev/null &&
		sed -n "s/.* \([0-9]*\) matches, \([0-9]*\) candidates.*/\1 \2/p" err.$m >n.$m &&
		test_grep "e = 1 anywhere (-a)" err.$m || return 1
	done &&
	test -s n.bs && test_cmp n.bs n.ph && test_cmp n.bs n.fm
'

test_expect_success 'bpr refuses -a (usage error)' '
	test_expect_code 2 seedfilt -x x.sx -m bpr -a -e 1 reads.fa >out 2>err &&
	test_grep "^seedfilt: -a is not supported by bpr" err &&
	seqidx -q -u 5 -l 8 -m general -o gen.sx ref.fa &&
	test_expect_code 2 seedfilt -x gen.sx -a -e 1 reads.fa >out 2>err &&
	test_grep "^seedfilt: -e 1 -a: no method of index .gen.sx. accepts it" err
'

test_expect_success 'bs and ph refuse -a when w + l > 32; fm takes it' '
	seqidx -q -u 6 -l 28 -m all -o big.sx ref.fa &&
	test_expect_code 2 seedfilt -x big.sx -m ph -a reads.fa >out 2>err &&
	test_grep "^seedfilt: -a with ph needs seed weight + l <= 32 (here 6 + 28)" err &&
	test_expect_code 2 seedfilt -x big.sx -m bs -a reads.fa >out 2>err &&
	test_grep "^seedfilt: -a with bs needs" err &&
	seedfilt -x big.sx -a -e 1 reads.fa 2>err >out &&
	test_grep "method fm, e = 1 anywhere" err &&
	P=$(filt_parts big.sx) &&
	"$FILT_ORACLE" -A -S "######" -l 28 -e 1 -s 1 -M ham -P "$P" ref.fa reads.fa |
		LC_ALL=C sort >want &&
	filt_tsv big.sx out >got && test_cmp want got
'

test_expect_success '-a with -m auto -E -L: the chosen setting keeps -a' '
	seedfilt -x y.sx -a -e 0 -s 4 -E 3 -L 60 -v </dev/null >/dev/null 2>err &&
	test_grep "using -m [bp][sh] -e 0 -s 3 -a" err &&
	test_grep "e = 0 anywhere in the pattern ([bp][sh]): 16 patterns per strand; every occurrence with at most 3 substitutions and at most 3 edit operations" err &&
	seedfilt -x y.sx -e 0 -s 4 -E 3 -L 60 -v </dev/null >/dev/null 2>err &&
	test_grep "using -m ph -e 0 -s 3," err
'

test_expect_success 'the header records -a' '
	seedfilt -q -x x.sx -m ph -a -e 1 reads.fa >h.sp &&
	recview -H h.sp >h.tsv &&
	test_grep "^##seedfilt.anywhere=1$" h.tsv &&
	seedfilt -q -x x.sx -m ph -e 1 reads.fa >h0.sp &&
	recview -H h0.sp >h0.tsv &&
	test_grep "^##seedfilt.anywhere=0$" h0.tsv
'

test_expect_success '-v states the -a bound (H3 design: 3 substitutions for 40 bases)' '
	"$FILT_ORACLE" -G 64 2 20000 >big.fa &&
	seqidx -q -u 10 -l 10 -o h3.sx big.fa &&
	seedfilt -x h3.sx -a -e 1 -s 20 -v -L 40 </dev/null 2>err >/dev/null &&
	test_grep "e = 1 anywhere in the pattern (bs): 2 patterns per strand; every occurrence with at most 3 substitutions and at most 1 edit operations" err &&
	seedfilt -x h3.sx -e 1 -s 20 -v -L 40 </dev/null 2>err >/dev/null &&
	test_grep "at most 1 substitutions" err
'

test_expect_success 'the -a bound holds: every read with k_sub substitutions finds its locus' '
	for t in "h3.sx 20 1 40" "x.sx 4 2 30"; do
		set -- $t &&
		seedfilt -x $1 -a -e $3 -s $2 -v -L $4 </dev/null 2>err >/dev/null &&
		ks=$(sed -n "s/.*at most \([0-9-]*\) substitutions.*/\1/p" err) &&
		test "$ks" -gt $3 &&
		if test $1 = x.sx; then ref=ref.fa; else ref=big.fa; fi &&
		"$FILT_ORACLE" -K 65 300 $4 $ks s $ref >k.fa &&
		awk "/^>/ { printf \"%s%d\", n++ ? \",\" : \"\", t; next } { t += length(\$0) } END { print \"\" }" $ref >off &&
		seedfilt -q -x $1 -a -e $3 -s $2 k.fa >k.sp &&
		recview k.sp | awk -F "\t" -v O=$(cat off) "
			BEGIN { split(O, off, \",\") }
			!/^#/ { split(\$2, r, \":\"); ok = 0; n = split(\$7, c, \",\")
			  for (i = 1; i <= n; i++) { split(c[i], x, \":\")
			    if (x[2] == r[2] && x[4] == r[4] && x[3] - off[x[2] + 1] == r[3]) ok = 1 }
			  if (!ok) { bad++; print \"missed: \" \$2 }
			  tot++ }
			END { exit !(tot == 300 && bad == 0) }" || return 1
	done
'

test_expect_success 'the bound is checked against every placement of errors (C unit test)' '
	"$SEEDPIPE_BUILD"/t/filt_sens_test >sens.tap &&
	! grep "^not ok" sens.tap &&
	test $(grep -c "^ok" sens.tap) = 30
'

# Every index, method and e on the device; the units gathered on the device
# (SEEDPIPE_FILT_GATHER=device, not the default for these small seeds) for
# one e per index and method, each e in turn (a device run is a process
# start: on a GPU about 0.35 s each, so not every setting twice).
test_expect_success OPENCL '-a: the OpenCL backend writes the same bytes (bs, ph, fm)' '
	k=0 &&
	for ix in "-u 5 -l 8 -p 3000" "-S ##-## -l 20" "-u 4 -l 5"; do
		seqidx -q $ix -m all -o d.sx ref.fa &&
		for m in bs ph fm; do
			for e in 0 1 2 3; do
				SEEDPIPE_DEVICE=none seedfilt -q -x d.sx -m $m -a -e $e -s 2 reads.fa >n.sp &&
				SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -q -x d.sx -m $m -a -e $e -s 2 reads.fa >d.sp &&
				cmp n.sp d.sp &&
				if test $((k % 4)) = $e; then
					SEEDPIPE_FILT_GATHER=device SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -q -x d.sx -m $m -a -e $e -s 2 reads.fa >d.sp &&
					cmp n.sp d.sp && echo "gathered on the device: $ix $m e $e"
				fi || return 1
			done &&
			k=$((k + 1))
		done
	done
'

test_expect_success OPENCL '-a on the device with tiny memory: many slices, same bytes' '
	seqidx -q -u 4 -l 8 -m all -o d.sx ref.fa &&
	for m in bs ph fm; do
		SEEDPIPE_DEVICE=none seedfilt -q -x d.sx -m $m -a -e 2 reads.fa >n.sp &&
		SEEDPIPE_DEVICE=$TEST_OCL_DEVICE SEEDPIPE_DEBUG_ALLOC_LIMIT=64K seedfilt -q -x d.sx -m $m -a -e 2 reads.fa >d.sp &&
		cmp n.sp d.sp || return 1
	done
'

test_done
