#!/bin/bash
test_description='the kernels and the shared C/OpenCL headers compile as OpenCL C 1.2, 2.0 and 3.0'
. ./test-lib.sh

test_lazy_prereq CLANG_CL 'echo "__kernel void k(void) {}" >probe.cl && clang -x cl -cl-std=CL1.2 -fsyntax-only probe.cl'

test_expect_success CLANG_CL 'a kernel using the BDZ lookup and the striped layout compiles' '
	cat >k.cl <<-\EOF &&
	#include "inc_bdz.h"
	#include "inc_idx.h"
	__kernel void lookup(__global const ulong *keys, __global const uchar *g,
		__global const ulong *slots, __global uint *out, uint r, uint seed)
	{
		uint i = get_global_id(0);
		bdz_hash_t h = bdz_hash(keys[i], seed);
		uint v0 = bdz_vertex(h, r, 0), v1 = bdz_vertex(h, r, 1), v2 = bdz_vertex(h, r, 2);
		uint s = bdz_slot(h, r, bdz_g_get(g[v0 >> 2], v0), bdz_g_get(g[v1 >> 2], v1),
			bdz_g_get(g[v2 >> 2], v2));
		ulong w = idx_stripe_put(0, idx_stripe_h(16), 16, 1, keys[i]);
		out[i] = (slots[s] == keys[i]) + idx_stripe_column(w, 2, 3) + (uint)idx_stripe_get(w, 2, 16, 1);
	}
	EOF
	clang -x cl -cl-std=CL1.2 -Xclang -finclude-default-header -fsyntax-only -Werror \
		-I"$SEEDPIPE_SRC/kernels" k.cl
'

# Every kernel file as each OpenCL C version compiles it: 1.2 (PoCL, older
# drivers) and 2.0/3.0, where an unqualified pointer in a cast is __generic
# (NVIDIA's compiler refused such a cast that PoCL accepted).  clang defines
# __OPENCL_C_VERSION__ but not the platform's __OPENCL_VERSION__, which the
# kernels test for, so it is given here.
for std in CL1.2 CL2.0 CL3.0; do
	test_expect_success CLANG_CL "kernels/*.cl compile as OpenCL C ${std#CL}" '
		for f in "$SEEDPIPE_SRC"/kernels/*.cl; do
			clang -x cl -cl-std='$std' -D__OPENCL_VERSION__=120 -Xclang -finclude-default-header \
				-fsyntax-only -Werror -I"$SEEDPIPE_SRC/kernels" "$f" || return 1
		done
	'
done

test_done
