#!/bin/bash
test_description='extend on a device: pass 1 windows cut on the device from random candidates (align_cut) give the CPU output'
. ./test-lib.sh

T=$SEEDPIPE_BUILD/t

# Three sequences: one of 6000 bases, one shorter than most reads, one with
# an N run; reads of 1 to 2100 bases from both strands, some with N, an
# empty one.  extend_mkcands -r gives each read random candidates: none,
# runs of neighbours (merged windows cut into pieces), the first and last
# bases of sequences, repeats, shuffled or in seedfilt's order.
test_expect_success 'setup: reference, reads and random candidate streams' '
	awk "BEGIN { srand(3121); n[1] = 6000; n[2] = 37; n[3] = 2500;
		for (s = 1; s <= 3; s++) { x = \"\";
			for (i = 0; i < n[s]; i++) x = x substr(\"ACGT\", int(rand() * 4) + 1, 1);
			if (s == 1) x = x substr(x, 200, 700);
			if (s == 3) x = substr(x, 1, 1200) \"NNNNNNNNNN\" substr(x, 1211);
			printf \">c%d\n%s\n\", s, x } }" >ref.fa &&
	awk "function rc(r,  i, o, c) { o = \"\"; for (i = length(r); i > 0; i--) {
			c = substr(r, i, 1); o = o (c == \"A\" ? \"T\" : c == \"C\" ? \"G\" : c == \"G\" ? \"C\" : c == \"T\" ? \"A\" : c) }
			return o }
		BEGIN { srand(7) } NR % 2 == 0 { s[NR / 2] = \$0 }
		END { for (i = 0; i < 150; i++) { q = 1 + int(rand() * 3); x = s[q];
			m = i % 10 == 9 ? 150 + int(rand() * 1950) : 1 + int(rand() * 150);
			if (m > length(x)) m = length(x);
			p = int(rand() * (length(x) - m + 1)); r = substr(x, p + 1, m);
			if (i % 3 == 0 && m > 20) r = substr(r, 1, 10) substr(r, 12);
			if (i % 4 == 0 && m > 30) r = substr(r, 1, 15) \"A\" substr(r, 16);
			if (i % 7 == 0 && m > 8) r = substr(r, 1, 5) \"N\" substr(r, 7);
			if (i % 2) r = rc(r);
			if (i == 77) r = \"\";
			if (i == 78) { r = s[1] s[1]; r = substr(r, 1, 2100) }
			u = r; gsub(/./, \"I\", u); printf \"@r%d\n%s\n+\n%s\n\", i, r, u } }" ref.fa >reads.fq &&
	seqidx -q -u 5 -l 8 -o ref.sx ref.fa &&
	for s in 1 2 3 4; do "$T"/extend_mkcands ref.sx reads.fq 1 -r $s >c$s.sp || return 1; done &&
	: >empty.fq && "$T"/extend_mkcands ref.sx empty.fq 1 -r 1 >empty.sp
'

# extend's output and its summary line (windows, bases, loci) with options $1 on stream $2
run3() {
	extend -d none $1 $2 2>cpu.err | grep -v "^@PG" >cpu.sam &&
	extend -d $TEST_OCL_DEVICE $1 $2 2>dev.err | grep -v "^@PG" >dev.sam &&
	SEEDPIPE_EXT_HOST_CUT=1 extend -d $TEST_OCL_DEVICE $1 $2 2>host.err | grep -v "^@PG" >host.sam &&
	grep "candidates (" cpu.err >cpu.sum && grep "candidates (" dev.err >dev.sum &&
	grep "candidates (" host.err >host.sum &&
	test_cmp cpu.sam dev.sam && test_cmp cpu.sam host.sam &&
	test_cmp cpu.sum dev.sum && test_cmp cpu.sum host.sum
}

for s in 1 2 3 4; do
	for opts in "-e 4" "-e 7 -B 40" "-e 2 --all -B 1"; do
		test_expect_success OPENCL "random candidates $s, extend $opts: the device cut gives the CPU output" '
			run3 "'"$opts"'" c'$s'.sp &&
			test $(grep -v "^@" cpu.sam | awk "\$3 != \"*\"" | wc -l) -gt 10
		'
	done
done

test_expect_success OPENCL 'the windows are cut on the device, long merged spans in pieces' '
	SEEDPIPE_DEBUG=1 extend -q -d $TEST_OCL_DEVICE -e 5 c1.sp 2>err >/dev/null &&
	test_grep "device cut the windows: [1-9][0-9]* calls" err &&
	extend -d none -e 5 c1.sp 2>&1 >/dev/null | sed -n "s/.*candidates (\([0-9]*\) windows.*/\1/p" >w &&
	test $(cat w) -gt 150 &&
	SEEDPIPE_DEBUG=1 SEEDPIPE_EXT_HOST_CUT=1 extend -q -d $TEST_OCL_DEVICE -e 5 c1.sp 2>err >/dev/null &&
	test_must_fail test_grep "device cut the windows" err
'

test_expect_success OPENCL 'no room for the windows at first: cut again, the same output' '
	extend -q -d none -e 5 c2.sp | grep -v "^@PG" >cpu.sam &&
	SEEDPIPE_DEBUG=1 SEEDPIPE_ALIGN_CUT_CAP=1 extend -q -d $TEST_OCL_DEVICE -e 5 c2.sp 2>err |
		grep -v "^@PG" >dev.sam &&
	test_grep "candidates, [1-9][0-9]* cut again for room" err &&
	test_cmp cpu.sam dev.sam
'

# (60000 bytes a buffer: the stream's keys (8 bytes a candidate) need several
# cuts, but one read's, and its windows, fit: a read of 7500 candidates would not)
test_expect_success OPENCL 'the device short of memory: smaller cuts and runs, the same output' '
	recview c2.sp | awk -F "\\t" "NR > 1 { t += \$6; if (\$6 > m) m = \$6 } END { print t, m }" >n &&
	read total most <n && test $total -gt 15000 && test $most -lt 3000 &&
	extend -q -d none -e 6 c2.sp | grep -v "^@PG" >cpu.sam &&
	SEEDPIPE_DEBUG=1 SEEDPIPE_DEBUG_ALLOC_LIMIT=60000 SEEDPIPE_ALIGN_HOST_KEYS=1 extend -q \
		-d $TEST_OCL_DEVICE -e 6 c2.sp \
		2>err | grep -v "^@PG" >dev.sam &&
	test_grep "short of memory: cuts of" err &&
	test_cmp cpu.sam dev.sam &&
	SEEDPIPE_DEBUG=1 SEEDPIPE_DEBUG_ALLOC_LIMIT=60000 SEEDPIPE_ALIGN_DEV_KEYS=1 extend -q \
		-d $TEST_OCL_DEVICE -e 6 c2.sp 2>err | grep -v "^@PG" >dev.sam &&
	test_grep "short of memory: cuts of" err &&
	test_cmp cpu.sam dev.sam
'

# Streams made with a larger index but naming this one: candidates past the
# end of c2 (c2 three times as long there) and on a fourth sequence, at
# random (-r: the first bad one mostly an entry that resets), and every
# diagonal of each sequence (the first bad one c2's 38th, an entry by delta
# past its end).  The device cut's key decoding (ext_read_keys) must refuse
# the first of them with the native code's message; one batch, one thread:
# the same first.
test_expect_success OPENCL 'candidates outside the index: the device cut gives the native message' '
	fa=$(seqidx --info ref.sx | awk "\$1 == \"fingerprint\" { print \$2 }") &&
	awk "NR == 4 { \$0 = \$0 \$0 \$0 } { print }" ref.fa >big2.fa &&
	{ cat big2.fa; printf ">c4\nACGTACGTTGCAACGTAGCTAGCTAGGCTAGGATCCA\n"; } >big4.fa &&
	seqidx -q -u 5 -l 8 -o big2.sx big2.fa && seqidx -q -u 5 -l 8 -o big4.sx big4.fa &&
	"$T"/extend_mkcands big2.sx reads.fq 1 -r 5 -n ref.sx -f $fa >out2.sp &&
	"$T"/extend_mkcands big4.sx reads.fq 1 -r 5 -n ref.sx -f $fa >out4.sp &&
	head -8 reads.fq >two.fq &&
	"$T"/extend_mkcands big2.sx two.fq 1 -n ref.sx -f $fa >step.sp &&
	for c in out2 out4 step; do
		test_expect_code 1 extend -t 1 -B 1000000 -d none $c.sp >cpu.out 2>cpu.err &&
		test_expect_code 1 env SEEDPIPE_ALIGN_HOST_KEYS=1 extend -t 1 -B 1000000 \
			-d $TEST_OCL_DEVICE $c.sp >dev.out \
			2>dev.err &&
		test_expect_code 1 env SEEDPIPE_ALIGN_DEV_KEYS=1 extend -t 1 -B 1000000 \
			-d $TEST_OCL_DEVICE $c.sp >dev.out 2>dk.err &&
		grep "lies outside the index" cpu.err >cpu.msg &&
		grep "lies outside the index" dev.err >dev.msg &&
		grep "lies outside the index" dk.err >dk.msg &&
		test_cmp cpu.msg dev.msg && test_cmp cpu.msg dk.msg || return 1
	done &&
	grep "candidate [0-9]*:1:[0-9]* " cpu.msg
'

# The keys decoded on the device (align_keys, SEEDPIPE_ALIGN_DEV_KEYS)
# against the host's decoding and the CPU: the same output; the device leaves
# to the host only the reads whose lists are not in order (-r shuffles half
# of them), none of a stream in seedfilt's order (every 7th diagonal).
test_expect_success OPENCL 'the keys decoded on the device: the host decoding and the CPU output' '
	"$T"/extend_mkcands ref.sx reads.fq 7 >c7.sp &&
	for c in c1 c2 c3 c4 c7; do
		extend -d none -e 4 -B 300 $c.sp 2>/dev/null | grep -v "^@PG" >cpu.sam &&
		SEEDPIPE_DEBUG=1 SEEDPIPE_ALIGN_DEV_KEYS=1 extend -d $TEST_OCL_DEVICE -e 4 -B 300 \
			$c.sp 2>dev.err | grep -v "^@PG" >dev.sam &&
		SEEDPIPE_DEBUG=1 SEEDPIPE_ALIGN_HOST_KEYS=1 extend -d $TEST_OCL_DEVICE -e 4 -B 300 \
			$c.sp 2>host.err |
			grep -v "^@PG" >host.sam &&
		test_cmp cpu.sam dev.sam && test_cmp cpu.sam host.sam &&
		sed -n "s/.*; \([0-9]*\) reads. keys decoded on the host.*/\1/p" dev.err >$c.nh &&
		sed -n "s/.*; \([0-9]*\) reads. keys decoded on the host.*/\1/p" host.err >$c.hh &&
		test -s $c.nh && test "$(cat $c.hh)" = 0 || return 1
	done &&
	test "$(cat c7.nh)" = 0 && test "$(cat c1.nh)" -gt 10 && test "$(cat c1.nh)" -lt 140
'

# A read whose list is malformed (its last varint runs past the body's end):
# the device flags it and the host's decoding gives the native message, the
# first such read in order (-X: from the 0th, 40th, 149th read on).
test_expect_success OPENCL 'a malformed candidate list: the device gives the native message' '
	for at in 0 40 149; do
		"$T"/extend_mkcands ref.sx reads.fq 1 -r 2 -X $at >bad.sp &&
		test_expect_code 1 extend -t 1 -B 1000000 -d none bad.sp >cpu.out 2>cpu.err &&
		test_expect_code 1 env SEEDPIPE_ALIGN_HOST_KEYS=1 extend -t 1 -B 1000000 \
			-d $TEST_OCL_DEVICE bad.sp >dev.out \
			2>dev.err &&
		test_expect_code 1 env SEEDPIPE_ALIGN_DEV_KEYS=1 extend -t 1 -B 1000000 \
			-d $TEST_OCL_DEVICE bad.sp >dev.out 2>dk.err &&
		grep "malformed candidates record" cpu.err >cpu.msg &&
		grep "malformed candidates record" dev.err >dev.msg &&
		grep "malformed candidates record" dk.err >dk.msg &&
		test_cmp cpu.msg dev.msg && test_cmp cpu.msg dk.msg || return 1
	done
'

# Long lists (extend_mkcands -L: thousands of candidates, runs on every
# sequence and both strands, every 4th with its order broken near its end)
# through the work-group decoding (align_keys_wg) and the work-item one
# (align_keys), by the threshold (SEEDPIPE_ALIGN_KEYS_LONG) and group size
# (SEEDPIPE_ALIGN_KEYS_WG: 4 lanes take a list 16 bytes a tile, so that
# varints and entries straddle tiles): the CPU output, the same reads left
# to the host (the shuffled short lists, the broken long ones), every list
# with bytes decoded by work-groups at threshold 0, none at 10^9.
test_expect_success OPENCL 'long lists: decoded by work-groups and by work items alike' '
	"$T"/extend_mkcands ref.sx reads.fq 1 -r 9 -L 40 >long.sp &&
	recview long.sp | awk -F "\\t" "NR > 1 && NR <= 41 && \$6 >= 1000 { k++ } END { print k }" >n &&
	test "$(cat n)" -ge 30 &&
	extend -d none -e 3 long.sp 2>/dev/null | grep -v "^@PG" >cpu.sam &&
	test $(grep -v "^@" cpu.sam | awk "\$3 != \"*\"" | wc -l) -gt 10 &&
	for v in "0 4" "0 256" "0 7" "64 32" "1000000000 256"; do
		set -- $v &&
		SEEDPIPE_DEBUG=1 SEEDPIPE_ALIGN_DEV_KEYS=1 SEEDPIPE_ALIGN_KEYS_LONG=$1 \
			SEEDPIPE_ALIGN_KEYS_WG=$2 extend -d $TEST_OCL_DEVICE -e 3 long.sp 2>dev.err |
			grep -v "^@PG" >dev.sam &&
		test_cmp cpu.sam dev.sam &&
		sed -n "s/.*; \([0-9]*\) reads. keys decoded on the host, \([0-9]*\) lists by.*/\1 \2/p" \
			dev.err >"nh.$1.$2" && test -s "nh.$1.$2" || return 1
	done &&
	read h0 w0 <nh.0.4 && read h1 w1 <nh.1000000000.256 && read h2 w2 <nh.64.32 &&
	test $h0 -ge 10 && test $h0 = $h1 && test $h0 = $h2 && test $w1 = 0 &&
	test $w2 -gt 40 && test $w2 -lt $w0 && test "$(cat nh.0.256)" = "$h0 $w0" &&
	test "$(cat nh.0.7)" = "$h0 $w0" &&
	SEEDPIPE_DEBUG=1 SEEDPIPE_ALIGN_HOST_KEYS=1 extend -d $TEST_OCL_DEVICE -e 3 long.sp \
		2>host.err | grep -v "^@PG" >host.sam &&
	test_cmp cpu.sam host.sam && test_grep " 0 reads. keys decoded on the host, 0 lists" host.err
'

# A long list with a byte in its middle turned into a varint's inner byte
# (-Y) or its last varint running past the end (-X): the native message,
# whichever kernel takes it.
test_expect_success OPENCL 'a long list broken in its middle or at its end: the native message' '
	for bad in "-Y 0" "-Y 5" "-Y 33" "-X 2"; do
		"$T"/extend_mkcands ref.sx reads.fq 1 -r 9 -L 40 $bad >bad.sp &&
		test_expect_code 1 extend -t 1 -B 1000000 -d none bad.sp >cpu.out 2>cpu.err &&
		grep "^extend: read" cpu.err >cpu.msg && test $(wc -l <cpu.msg) = 1 &&
		for l in 0 1000000000; do
			test_expect_code 1 env SEEDPIPE_ALIGN_DEV_KEYS=1 SEEDPIPE_ALIGN_KEYS_LONG=$l \
				SEEDPIPE_ALIGN_KEYS_WG=8 extend -t 1 -B 1000000 -d $TEST_OCL_DEVICE bad.sp \
				>dev.out 2>dk.err &&
			grep "^extend: read" dk.err >dk.msg && test_cmp cpu.msg dk.msg || return 1
		done
	done &&
	"$T"/extend_mkcands ref.sx reads.fq 1 -r 9 -L 40 -X 2 >bad.sp &&
	extend -t 1 -B 1000000 -d none bad.sp 2>&1 >/dev/null | grep "malformed candidates record"
'

test_expect_success OPENCL 'a stream without reads, and batches without candidates' '
	extend -q -d $TEST_OCL_DEVICE -e 5 empty.sp | grep -vc "^@" >n || :;
	test "$(cat n)" = 0 &&
	run3 "-e 3 -B 1" c4.sp &&
	grep "candidates (" dev.err
'
test_done
