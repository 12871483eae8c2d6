/* bdz_ocl_test.cl - the kernels of t/unit/bdz_ocl_test.c (embedded with their headers at build time) */
#include "inc_bdz.h"
#include "inc_idx.h"
__kernel void blk_lookup(__global const uint *blk_start, __global const uchar *blk_seed,
	__global const uchar *blk_g, __global const uint *keys32, __global const ulong *keys64,
	uint kb, __global const uint *qcode, __global const ulong *q, __global uint *out, uint nq,
	__global const uint *blk_rank, __global const uint *blk_roff, __global const uint *red_start)
{
	uint i = get_global_id(0), c, base, m, r, v0, v1, v2, s, s2;
	bdz_hash_t h;
	ulong key;
	if (i >= nq) return;
	c = qcode[i]; base = blk_start[c]; m = blk_start[c + 1] - base;
	if (m == 0) { out[2 * i] = 0xffffffffu; out[2 * i + 1] = 0; return; }
	r = m / 3;
	h = bdz_hash(q[i], bdz_seed(c, blk_seed[c]));
	v0 = bdz_vertex(h, r, 0); v1 = bdz_vertex(h, r, 1); v2 = bdz_vertex(h, r, 2);
	s = bdz_slot(h, r, bdz_g_get(blk_g[(base + v0) >> 2], base + v0),
		bdz_g_get(blk_g[(base + v1) >> 2], base + v1), bdz_g_get(blk_g[(base + v2) >> 2], base + v2));
	s2 = red_start[c] + idx_blk_rank_at(blk_rank, blk_roff, red_start, c, s);
	key = kb == 4 ? (ulong)keys32[s2] : keys64[s2];
	out[2 * i] = s;
	out[2 * i + 1] = key == q[i];
}
__kernel void stripe(__global const uint *k32, __global const ulong *k64, uint h, uint l,
	__global ulong *out, uint n)
{
	uint k = get_global_id(0);
	if (k * h >= n) return;
	out[k] = idx_stripe_keys(k32, k64, k * h, n - k * h, h, l);
}
