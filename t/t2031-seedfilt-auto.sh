#!/bin/bash
test_description='seedfilt -d auto: the measured model chooses, the calibration is cached, the bytes do not change'
. ./test-lib.sh
. "$TEST_DIR"/t2999-filt-lib.sh
. "$TEST_DIR"/lib-auto.sh

run_auto() { SEEDPIPE_DEVICE=auto SEEDPIPE_AUTO_DEVICE=$TEST_OCL_DEVICE seedfilt -v -t 2 -B 16 -x x.sx -m bpr -e 1 "$@"; }

test_expect_success 'setup' '
	"$FILT_ORACLE" -G 51 2 3000 >ref.fa &&
	"$FILT_ORACLE" -R 52 200 60 ref.fa >reads.fa &&
	seqidx -q -u 4 -l 8 -m general -o x.sx ref.fa &&
	SEEDPIPE_DEVICE=none seedfilt -v -t 2 -B 16 -x x.sx -m bpr -e 1 reads.fa >n.sp 2>/dev/null
'

test_expect_success 'no GPU: auto is the native code, and says so' '
	SEEDPIPE_DEVICE=auto SEEDPIPE_AUTO_DEVICE=none seedfilt -v -t 2 -B 16 -x x.sx -m bpr -e 1 reads.fa >a.sp 2>err &&
	test_grep "d auto: native code: no OpenCL GPU" err &&
	test_grep "native C, 2 threads" err &&
	cmp n.sp a.sp
'

test_expect_success OPENCL 'the first run calibrates and writes the calibration' '
	run_auto reads.fa >a.sp 2>err &&
	test_grep "d auto: new calibration of" err &&
	test_grep "predicted .* s on the device, .* s native for [0-9]" err &&
	test "$(cal | wc -l)" = 1 &&
	test_grep "^key seedfilt 1 index .* method bpr e 1 .* threads 2 batch 16 len " "$(cal)" &&
	test_grep "^dev_unit [0-9]" "$(cal)" && test_grep "^nat_unit [0-9]" "$(cal)" &&
	cmp n.sp a.sp
'

test_expect_success OPENCL 'the next run uses the cached calibration' '
	run_auto reads.fa >a.sp 2>err &&
	test_grep "d auto: cached calibration of" err &&
	cmp n.sp a.sp
'

test_expect_success OPENCL 'other run options: another calibration' '
	run_auto -s 3 reads.fa >/dev/null 2>err &&
	test_grep "d auto: new calibration of" err &&
	test "$(cal | wc -l)" = 2 &&
	rm -f $(grep -l " step 3 " $(cal))
'

test_expect_success OPENCL 'a calibration where the device costs less: the device, same bytes' '
	fake 0 1e-12 1 1e-3 &&
	run_auto reads.fa >a.sp 2>err &&
	test_grep "d auto: cached calibration of .*: device: predicted" err &&
	test_grep "using OpenCL device" err &&
	cmp n.sp a.sp
'

test_expect_success OPENCL 'a calibration where the native code costs less: native' '
	fake 1 1e-3 0 1e-12 &&
	run_auto reads.fa >a.sp 2>err &&
	test_grep "d auto: cached calibration of .*: native code: predicted" err &&
	test_grep "native C, 2 threads" err &&
	cmp n.sp a.sp
'

test_expect_success OPENCL 'the input size decides: fixed device cost against per-byte native cost' '
	s=$(wc -c <reads.fa) &&
	for i in 1 2 3 4; do cat reads.fa; done >big.fa &&
	SEEDPIPE_DEVICE=none seedfilt -v -t 2 -B 16 -x x.sx -m bpr -e 1 big.fa >nb.sp 2>/dev/null &&
	fake 100 0 0 $(awk "BEGIN { printf \"%.9g\", 50 / $s }") &&
	run_auto reads.fa >a.sp 2>err &&
	test_grep "native code: predicted 100 s on the device, 50 s native" err &&
	run_auto big.fa >a.sp 2>err &&
	test_grep "device: predicted 100 s on the device, 200 s native" err &&
	test_grep "using OpenCL device" err &&
	cmp nb.sp a.sp &&
	gzip -c reads.fa >reads.fa.gz &&
	fake 100 0 0 $(awk "BEGIN { printf \"%.9g\", 100 / $(wc -c <reads.fa.gz) / 3 }") &&
	run_auto reads.fa.gz >a.sp 2>err &&
	test_grep "device: predicted 100 s on the device, 117 s native" err
'

test_expect_success OPENCL 'stdin (unknown size): the smaller per-byte cost' '
	cat reads.fa | SEEDPIPE_DEVICE=none seedfilt -v -t 2 -B 16 -x x.sx -m bpr -e 1 >ni.sp 2>/dev/null &&
	fake 1000 1e-9 0 2e-9 &&
	cat reads.fa | run_auto >a.sp 2>err &&
	test_grep "device: input of unknown size" err &&
	test_grep "using OpenCL device" err &&
	cmp ni.sp a.sp &&
	fake 0 2e-9 1000 1e-9 &&
	cat reads.fa | run_auto >a.sp 2>err &&
	test_grep "native code: input of unknown size" err &&
	cmp ni.sp a.sp
'

test_expect_success OPENCL 'a damaged calibration is made again' '
	echo garbage >"$(cal)" &&
	run_auto reads.fa >a.sp 2>err &&
	test_grep "d auto: new calibration of" err &&
	test_grep "^seedpipe-auto 1$" "$(cal)" &&
	cmp n.sp a.sp
'

# the device cache of auto (ocl_auto.h): the entry of this setup's fingerprint
# (that of the run_auto environment)
devcache() {
	for g in $(grep -l "^spec $TEST_OCL_DEVICE$" "$CAL"/autodev-*.txt); do
		grep -q "^env POCL_SEEDPIPE_TEST" "$g" || echo "$g"
	done
}
# make the entry say DEVICE-LINES (e.g. "device NAME\ndriver X" or "none SECONDS")
fakedev() {
	f=$(devcache) && { echo "seedpipe-autodev 1" && printf "$1\n" &&
		sed -n "/^fingerprint$/,\$p" "$f"; } >f.tmp && mv f.tmp "$f"
}
# a calibration of device NAME, driver 9.9 with COSTS, for the key of the first one
fakecal() {
	n=$1 && shift &&
	key=$(sed -n "s/^key //p" "$(ls "$CAL"/auto-*.txt | head -n 1)") &&
	p=$("$SEEDPIPE_BUILD"/t/ocl_auto_test --path "$n" 9.9 "$key") &&
	printf "seedpipe-auto 1\ndevice %s\ndriver 9.9\nkey %s\n" "$n" "$key" >"$p" &&
	printf "dev_fixed %s\ndev_unit %s\nnat_fixed %s\nnat_unit %s\n" "$@" >>"$p"
}

test_expect_success OPENCL 'the device auto considers is cached: OpenCL is not probed' '
	run_auto reads.fa >a.sp 2>err &&
	test "$(devcache | wc -l)" = 1 &&
	test_grep "device known from the cache of this system.s OpenCL setup, OpenCL not loaded" err &&
	test_grep "^device " "$(devcache)" && test_grep "^fingerprint$" "$(devcache)" &&
	cmp n.sp a.sp &&
	fakedev "none $(date +%s)" &&
	run_auto reads.fa >a.sp 2>err &&
	test_grep "d auto: native code: no OpenCL GPU (known from the cache" err &&
	cmp n.sp a.sp
'

test_expect_success OPENCL 'another OpenCL setup (the drivers environment): probed again' '
	POCL_SEEDPIPE_TEST=1 run_auto reads.fa >a.sp 2>err &&
	test_grep "d auto: cached calibration of" err &&
	! grep -q "known from the cache" err &&
	test "$(grep -l "^spec $TEST_OCL_DEVICE$" "$CAL"/autodev-*.txt | wc -l)" = 2 &&
	cmp n.sp a.sp &&
	fakedev "none 1000" &&
	run_auto reads.fa >a.sp 2>err &&
	test_grep "d auto: cached calibration of" err &&
	! grep -q "known from the cache" err
'

test_expect_success OPENCL 'a cached device that is another one now: probed again, same bytes' '
	fake 1 1e-3 0 1e-12 &&
	fakedev "device Ghost GPU\ndriver 9.9" &&
	fakecal "Ghost GPU" 0 1e-12 1 1e-3 &&
	run_auto reads.fa >a.sp 2>err &&
	test_grep "the cached device .Ghost GPU. (driver 9.9) is now .*: probed again" err &&
	test_grep "native C, 2 threads" err &&
	cmp n.sp a.sp &&
	! grep -q "Ghost GPU" "$(devcache)" &&
	test_grep "^device " "$(devcache)"
'

test_expect_success OPENCL 'a cached device on a machine without one: native, same bytes' '
	SEEDPIPE_AUTO_DEVICE=7:0 && export SEEDPIPE_AUTO_DEVICE &&
	SEEDPIPE_DEVICE=auto seedfilt -v -t 2 -B 16 -x x.sx -m bpr -e 1 reads.fa >a.sp 2>err &&
	test_grep "d auto: native code: no OpenCL GPU$" err &&
	f=$(grep -l "^spec 7:0$" "$CAL"/autodev-*.txt) && test_grep "^none [0-9]" "$f" &&
	{ printf "seedpipe-autodev 1\ndevice Ghost GPU\ndriver 9.9\n" &&
		sed -n "/^fingerprint$/,\$p" "$f"; } >f.tmp && mv f.tmp "$f" &&
	SEEDPIPE_DEVICE=auto seedfilt -v -t 2 -B 16 -x x.sx -m bpr -e 1 reads.fa >a.sp 2>err &&
	unset SEEDPIPE_AUTO_DEVICE &&
	test_grep "no OpenCL GPU; the cached device .Ghost GPU. (driver 9.9) is now not there: probed again" err &&
	test_grep "native C, 2 threads" err &&
	cmp n.sp a.sp &&
	test_grep "^none [0-9]" "$f"
'

test_expect_success OPENCL 'device path: a first batch of reads too short for a pattern' '
	awk "BEGIN { for (i = 0; i < 40; i++) printf \">s%d\nACGTACG\n\", i }" >short.fa &&
	cat reads.fa >>short.fa &&
	SEEDPIPE_DEVICE=none seedfilt -q -t 2 -B 8 -x x.sx -m bpr -e 1 short.fa >ns.sp &&
	SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -q -t 2 -B 8 -x x.sx -m bpr -e 1 short.fa >ds.sp &&
	cmp ns.sp ds.sp
'

test_done
