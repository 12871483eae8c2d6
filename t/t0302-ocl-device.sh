#!/bin/bash
test_description='OpenCL device choice: -d / SEEDPIPE_DEVICE specs, exit statuses, the device listing'
. ./test-lib.sh

OCL=$SEEDPIPE_BUILD/t/ocl_test
TAB=$(printf '\t')

test_lazy_prereq GPU '"$SEEDPIPE_BUILD"/t/ocl_test --list | grep -q "^[0-9]*:[0-9]*	gpu	"'
test_lazy_prereq CPUDEV '"$SEEDPIPE_BUILD"/t/ocl_test --list | grep -q "^[0-9]*:[0-9]*	cpu	"'

test_expect_success 'none: the native code, OpenCL untouched' '
	"$OCL" --open none >out 2>err &&
	echo native >expect && test_cmp expect out &&
	test_grep "^ocl_test: using the native CPU code" err
'

test_expect_success 'a malformed spec is a usage error (exit 2)' '
	for s in x GPU 0: :0 0:0:0 -1:0 1:x ""; do
		test_expect_code 2 "$OCL" --open "$s" >out 2>err &&
		test ! -s out &&
		test_grep "^ocl_test: invalid device '\''$s'\'' (expected auto, gpu, cpu, none or P:D)$" err ||
		return 1
	done
'

test_expect_success 'a malformed SEEDPIPE_DEVICE is a usage error naming the variable' '
	SEEDPIPE_DEVICE=bogus test_expect_code 2 "$OCL" --open 2>err &&
	test_grep "^ocl_test: invalid SEEDPIPE_DEVICE '\''bogus'\''" err
'

test_expect_success 'SEEDPIPE_DEVICE is used without -d, and -d wins over it' '
	SEEDPIPE_DEVICE=none "$OCL" --open >out 2>err &&
	test_grep "^native$" out &&
	SEEDPIPE_DEVICE=none test_expect_code 3 "$OCL" --open 9:9 2>err &&
	test_grep "no OpenCL device 9:9" err
'

test_expect_success 'an absent P:D is exit 3 naming the platforms' '
	test_expect_code 3 "$OCL" --open 9:9 >out 2>err &&
	test ! -s out &&
	test_grep "^ocl_test: no OpenCL device 9:9 (\(platforms: .*\|no OpenCL platform\))$" err
'

test_expect_success !GPU 'gpu without a GPU is exit 3 naming the platforms' '
	test_expect_code 3 "$OCL" --open gpu >out 2>err &&
	test ! -s out &&
	test_grep "^ocl_test: no OpenCL GPU found (\(platforms: .*\|no OpenCL platform\))$" err
'

test_expect_success !GPU 'auto without a GPU is the native code' '
	"$OCL" --open auto >out 2>err &&
	test_grep "^native$" out &&
	"$OCL" --open >out 2>err &&
	test_grep "^native$" out
'

test_expect_success GPU 'gpu and auto open the GPU' '
	"$OCL" --open gpu >out 2>err &&
	test_grep "(gpu, " out &&
	"$OCL" --open >out2 2>err &&
	test_cmp out out2
'

test_expect_success CPUDEV 'cpu opens an OpenCL CPU device' '
	"$OCL" --open cpu >out 2>err &&
	test_grep "^[0-9]*:[0-9]* .*(cpu, " out &&
	test_grep "^ocl_test: using OpenCL device " err
'

test_expect_success !CPUDEV 'cpu without an OpenCL CPU device is exit 3' '
	test_expect_code 3 "$OCL" --open cpu 2>err &&
	test_grep "^ocl_test: no OpenCL CPU device found (" err
'

test_expect_success OPENCL 'the listing: one well-formed line per device, each opens as P:D' '
	"$OCL" --list >list &&
	test -s list &&
	! grep -v -E "^[0-9]+:[0-9]+${TAB}(gpu|cpu|accelerator|other)${TAB}[^${TAB}]+${TAB}[^${TAB}]+${TAB}[0-9]+${TAB}[0-9]+${TAB}[0-9]+${TAB}[^${TAB}]*$" list &&
	while IFS="$TAB" read -r pd type plat name glob alloc cu drv; do
		"$OCL" --open "$pd" >out 2>/dev/null &&
		test_grep -F "$pd $name ($type, $plat, driver $drv" out || return 1
	done <list
'

# An empty vendor directory hides every ICD from the loader (ocl-icd and the
# Khronos loader both read OCL_ICD_VENDORS): "no platform" must be "no device".
test_expect_success 'no OpenCL platform at all is "no device", never a crash' '
	mkdir empty-vendors &&
	OCL_ICD_VENDORS=$PWD/empty-vendors "$OCL" --list >list 2>err &&
	if grep -q "^no OpenCL platform" list; then
		OCL_ICD_VENDORS=$PWD/empty-vendors test_expect_code 3 "$OCL" --open gpu 2>err &&
		test_grep "^ocl_test: no OpenCL GPU found (no OpenCL platform)$" err &&
		OCL_ICD_VENDORS=$PWD/empty-vendors test_expect_code 3 "$OCL" --open cpu 2>err &&
		test_grep "^ocl_test: no OpenCL CPU device found (no OpenCL platform)$" err &&
		OCL_ICD_VENDORS=$PWD/empty-vendors test_expect_code 3 "$OCL" --open 0:0 2>err &&
		OCL_ICD_VENDORS=$PWD/empty-vendors "$OCL" --open auto >out 2>err &&
		test_grep "^native$" out &&
		test_grep "(no OpenCL platform)" err &&
		OCL_ICD_VENDORS=$PWD/empty-vendors test_expect_code 1 "$OCL" --probe
	else
		echo "loader ignores OCL_ICD_VENDORS; listed devices anyway" >&2
	fi
'

test_expect_success OPENCL 'a kernel that does not compile: the error and the build log' '
	printf "__kernel void f(__global int *x) { x[0] = sp_undeclared_thing; }\n" >bad.cl &&
	test_expect_code 1 "$OCL" --build-src bad.cl >out 2>err &&
	test ! -s out &&
	test_grep "^ocl_test: cannot build OpenCL program '\''bad.cl'\'' for .*: clBuildProgram failed: CL_BUILD_PROGRAM_FAILURE (-11); build log:$" err &&
	test_grep "sp_undeclared_thing" err
'

test_expect_success OPENCL 'a kernel that compiles is quiet' '
	printf "__kernel void f(__global int *x) { x[0] = 1; }\n" >good.cl &&
	"$OCL" --build-src good.cl >out 2>err &&
	test_grep "^built$" out &&
	test ! -s err
'

test_done
