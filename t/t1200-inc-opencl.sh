#!/bin/bash
test_description='kernels/inc_bdz.h and inc_idx.h compile as OpenCL C 1.2 (shared C/OpenCL subset)'
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

test_done
