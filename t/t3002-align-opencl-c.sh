#!/bin/bash
test_description='kernels/align.cl with inc_align.h compiles as OpenCL C 1.2 with every warning an error'
. ./test-lib.sh

test_lazy_prereq CLANG_CL 'echo "__kernel void k(void) {}" >probe.cl && clang -x cl -cl-std=CL1.2 -fsyntax-only probe.cl'

# clang defines __OPENCL_VERSION__ only for a device target; the drivers do
test_expect_success CLANG_CL 'align.cl is clean OpenCL C 1.2 (-Wall -Wextra -Werror)' '
	clang -x cl -cl-std=CL1.2 -D__OPENCL_VERSION__=120 -Xclang -finclude-default-header \
		-fsyntax-only -Wall -Wextra -Werror -I"$SEEDPIPE_SRC/kernels" \
		"$SEEDPIPE_SRC/kernels/align.cl"
'

test_expect_success CLANG_CL 'a broken use of the shared header is caught (the check can fail)' '
	printf "#include \"inc_align.h\"\n__kernel void k(__global uchar *x) { sp_align_nosuch(x); }\n" >bad.cl &&
	test_must_fail clang -x cl -cl-std=CL1.2 -D__OPENCL_VERSION__=120 -Xclang -finclude-default-header \
		-fsyntax-only -Werror -I"$SEEDPIPE_SRC/kernels" bad.cl 2>err &&
	test_grep "sp_align_nosuch" err
'

test_done
