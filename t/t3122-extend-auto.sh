#!/bin/bash
test_description='extend -d auto: the measured model chooses, the calibration is cached, the bytes do not change'
. ./test-lib.sh
. "$TEST_DIR"/lib-auto.sh

T=$SEEDPIPE_BUILD/t
run_auto() { SEEDPIPE_DEVICE=auto SEEDPIPE_AUTO_DEVICE=$TEST_OCL_DEVICE extend -t 2 -e 4 -B 300 "$@"; }

test_expect_success 'setup' '
	awk "BEGIN { srand(3122); x = \"\"; for (i = 0; i < 3000; i++) x = x substr(\"ACGT\", int(rand() * 4) + 1, 1);
		printf \">c1\n%s\n\", x;
		for (i = 0; i < 80; i++) { p = int(rand() * 2900); r = substr(x, p + 1, 60 + i % 40);
			if (i % 3 == 0) r = substr(r, 1, 20) \"T\" substr(r, 22);
			q = r; gsub(/./, \"I\", q); printf \"@r%d\n%s\n+\n%s\n\", i, r, q > \"reads.fq\" } }" >ref.fa &&
	seqidx -q -u 5 -l 8 -o ref.sx ref.fa &&
	"$T"/extend_mkcands ref.sx reads.fq 40 >c.sp &&
	extend -q -d none -t 2 -e 4 -B 300 c.sp | grep -v "^@PG" >n.sam &&
	test $(grep -vc "^@" n.sam) = 80
'

test_expect_success 'no GPU: auto is the native code, silently' '
	SEEDPIPE_DEVICE=auto SEEDPIPE_AUTO_DEVICE=none extend -t 2 -e 4 -B 300 c.sp 2>err |
		grep -v "^@PG" >a.sam &&
	test_grep "native C, 2 threads" err &&
	test_must_fail test_grep "d auto" err &&
	test_cmp n.sam a.sam
'

test_expect_success OPENCL 'the first run calibrates and writes the calibration' '
	run_auto c.sp 2>err | grep -v "^@PG" >a.sam &&
	test_grep "d auto: new calibration (on the input.s first reads) of" err &&
	test_grep "predicted .* s on the device, .* s native for [0-9]" err &&
	test "$(cal | wc -l)" = 1 &&
	test_grep "^key extend 2 index .* e 4 nogaps 0 threads 2 mode 0 batch 300$" "$(cal)" &&
	test_grep "^dev_unit [0-9]" "$(cal)" && test_grep "^nat_unit [0-9]" "$(cal)" &&
	test_cmp n.sam a.sam
'

test_expect_success OPENCL 'the next run uses the cached calibration and the cached device' '
	run_auto c.sp 2>err | grep -v "^@PG" >a.sam &&
	test_grep "d auto: cached calibration of .*; the device known from the cache of this system.s OpenCL setup, OpenCL not loaded)" err &&
	test_cmp n.sam a.sam
'

test_expect_success OPENCL 'a calibration where the device costs less: the device, same bytes' '
	fake 0 1e-12 1 1e-3 &&
	run_auto c.sp 2>err | grep -v "^@PG" >a.sam &&
	test_grep "d auto: cached calibration of .*: device: predicted" err &&
	test_must_fail test_grep "native C" err &&
	test_cmp n.sam a.sam
'

test_expect_success OPENCL 'a calibration where the native code costs less: native' '
	fake 1 1e-3 0 1e-12 &&
	run_auto c.sp 2>err | grep -v "^@PG" >a.sam &&
	test_grep "d auto: cached calibration of .*: native code: predicted" err &&
	test_grep "native C, 2 threads" err &&
	test_cmp n.sam a.sam
'

test_expect_success OPENCL 'the input size decides' '
	s=$(wc -c <c.sp) &&
	fake 100 0 0 $(awk "BEGIN { printf \"%.9g\", 50 / $s }") &&
	run_auto c.sp 2>err >/dev/null &&
	test_grep "native code: predicted 100 s on the device, 50 s native" err &&
	fake 100 0 0 $(awk "BEGIN { printf \"%.9g\", 200 / $s }") &&
	run_auto c.sp 2>err | grep -v "^@PG" >a.sam &&
	test_grep "device: predicted 100 s on the device, 200 s native" err &&
	test_cmp n.sam a.sam
'

# a pipe (size unknown): the path cheaper per byte; with
# SEEDPIPE_EXT_AUTO_SWITCH=1 the native code while the native path is
# predicted faster, then, the input going on, the device for the rest
test_expect_success OPENCL 'a pipe, the device dearer per byte: native code throughout' '
	fake 0 2e-9 0 1e-9 &&
	cat c.sp | run_auto 2>err | grep -v "^@PG" >a.sam &&
	test_grep "native code: input of unknown size, the native code costs less" err &&
	test_grep "native C, 2 threads" err &&
	test_cmp n.sam a.sam
'

test_expect_success OPENCL 'a pipe that ends before the lines cross: native code' '
	fake 1000 1e-9 0 2e-9 &&
	cat c.sp | SEEDPIPE_EXT_AUTO_SWITCH=1 run_auto 2>err | grep -v "^@PG" >a.sam &&
	test_grep "native code first: input of unknown size; the device for the rest if it goes on past 1e+12 bytes" err &&
	test_must_fail test_grep "the device for the rest$" err &&
	test_grep "native C, 2 threads" err &&
	test_cmp n.sam a.sam
'

test_expect_success OPENCL 'a pipe that goes on past the crossing: the device takes the rest, same bytes' '
	s=$(wc -c <c.sp) &&
	fake $(awk "BEGIN { printf \"%.9g\", $s / 4 * 1e-9 }") 1e-9 0 2e-9 &&
	cat c.sp | SEEDPIPE_EXT_AUTO_SWITCH=1 run_auto 2>err | grep -v "^@PG" >a.sam &&
	test_grep "native code first: input of unknown size" err &&
	test_grep "d auto: [0-9]* bytes of input came and it goes on: the device for the rest" err &&
	b=$(sed -n "s/.*d auto: \([0-9]*\) bytes of input came.*/\1/p" err) &&
	test $b -ge $((s / 4)) && test $b -lt $s &&
	test_must_fail test_grep "native C" err &&
	test_cmp n.sam a.sam &&
	cat c.sp | SEEDPIPE_DEBUG=1 run_auto 2>err >/dev/null &&
	test_grep " [1-9][0-9]* kernel runs" err &&
	cat c.sp | run_auto 2>err | grep -v "^@PG" >a.sam &&
	test_grep "device: input of unknown size, the device costs less per unit" err &&
	test_must_fail test_grep "native code first" err &&
	test_cmp n.sam a.sam
'

test_expect_success OPENCL 'a paired pipe switched to the device: the same pairs' '
	"$T"/extend_mkcands ref.sx reads.fq 40 -p reads.fq >p.sp &&
	extend -q -d none -t 2 -e 4 -B 300 -I 1,1000 p.sp | grep -v "^@PG" >np.sam &&
	test $(grep -vc "^@" np.sam) = 160 &&
	s=$(wc -c <p.sp) &&
	fake $(awk "BEGIN { printf \"%.9g\", $s / 3 * 1e-9 }") 1e-9 0 2e-9 &&
	cat p.sp | SEEDPIPE_EXT_AUTO_SWITCH=1 run_auto -I 1,1000 2>err | grep -v "^@PG" >a.sam &&
	test_grep "bytes of input came and it goes on: the device for the rest" err &&
	test_cmp np.sam a.sam
'

test_expect_success OPENCL 'other run options: another calibration; a damaged one is made again' '
	SEEDPIPE_DEVICE=auto SEEDPIPE_AUTO_DEVICE=$TEST_OCL_DEVICE extend -t 2 -e 3 -B 300 c.sp \
		>/dev/null 2>err &&
	test_grep "d auto: new calibration (on the input.s first reads) of" err &&
	test "$(cal | wc -l)" = 2 &&
	rm -f $(grep -l " e 3 " $(cal)) &&
	echo garbage >"$(cal)" &&
	run_auto c.sp 2>err | grep -v "^@PG" >a.sam &&
	test_grep "d auto: new calibration (on the input.s first reads) of" err &&
	test_grep "^seedpipe-auto 1$" "$(cal)" &&
	test_cmp n.sam a.sam
'

# the calibration stream: the input file's first reads (taken in turn as
# often as the calibration sizes need, however few), else a synthetic one
cal_nums() { grep -c "^[a-z]*_[a-z]* [0-9][0-9.e+-]*$" "$(cal)"; }
test_expect_success OPENCL 'a pipe: calibrated on a synthetic stream' '
	rm -f "$CAL"/auto-*.txt &&
	cat c.sp | run_auto 2>err | grep -v "^@PG" >a.sam &&
	test_grep "d auto: new calibration (on a synthetic stream) of" err &&
	test "$(cal_nums)" = 4 &&
	test_cmp n.sam a.sam
'

# a synthetic calibration is cached apart; a pipe with only that one does
# not switch (its crossing comes too early): the cheaper per byte takes it all
test_expect_success OPENCL 'a pipe with only a synthetic calibration: no switch; a file calibrates on its own' '
	rm -f "$CAL"/auto-*.txt &&
	cat c.sp | run_auto >/dev/null 2>err &&
	test_grep "d auto: new calibration (on a synthetic stream) of" err &&
	test_grep "^key extend .* synthetic$" "$(cal)" &&
	s=$(wc -c <c.sp) &&
	fake $(awk "BEGIN { printf \"%.9g\", $s / 4 * 1e-9 }") 1e-9 0 2e-9 &&
	cat c.sp | run_auto 2>err | grep -v "^@PG" >a.sam &&
	test_grep "d auto: cached calibration (made on a synthetic stream) of .*: device: input of unknown size" err &&
	test_must_fail test_grep "native code first" err &&
	test_must_fail test_grep "native C" err &&
	test_cmp n.sam a.sam &&
	run_auto c.sp >/dev/null 2>err &&
	test_grep "d auto: new calibration (on the input.s first reads) of" err &&
	test "$(cal | wc -l)" = 2
'

test_expect_success OPENCL 'a file of 2 reads: calibrated on them, taken in turn' '
	rm -f "$CAL"/auto-*.txt &&
	head -n 8 reads.fq >two.fq &&
	"$T"/extend_mkcands ref.sx two.fq 40 >two.sp &&
	extend -q -d none -t 2 -e 4 -B 300 two.sp | grep -v "^@PG" >n2.sam &&
	run_auto two.sp 2>err | grep -v "^@PG" >a.sam &&
	test_grep "d auto: new calibration (on the input.s first reads) of" err &&
	test "$(cal_nums)" = 4 &&
	test_cmp n2.sam a.sam
'

test_expect_success OPENCL 'a file without a candidate: the synthetic stream' '
	rm -f "$CAL"/auto-*.txt &&
	awk "NR % 4 == 2 { \$0 = \"ACGT\" } NR % 4 == 0 { \$0 = \"IIII\" } { print }" two.fq >short.fq &&
	seedfilt -q -x ref.sx -e 0 -s 8 short.fq >none.sp &&
	recview none.sp | awk "NR > 1 { n++; c += \$6 } END { exit !(n == 2 && c == 0) }" &&
	run_auto none.sp 2>err >/dev/null &&
	test_grep "d auto: new calibration (on a synthetic stream) of" err
'
test_done
