/*
 * inc_bdz.h - per-key arithmetic of the BDZ perfect hash of the indexed-block
 * structure (Tran 2012 ch. 4, Botelho 2008), shared by the CPU code
 * (common/bdz.c, common/idx*.c) and the OpenCL kernels.
 *
 * A SeedBlock with U unique neighborhoods (the keys) gets a 3-partite random
 * 3-hypergraph on M = 3r vertices, r = ceil(1.23 U / 3) (r = 2 when U = 2,
 * because two edges on 3 vertices are always the same edge).  Vertex i of a
 * key lies in part i, [i*r, (i+1)*r).  The hash family is
 *
 *     a = fmix64(key ^ (seed * 0x9e3779b97f4a7c15))
 *     b = fmix64(a + 0x632be59bd9b4e019 + seed)
 *     x0 = low 32 bits of a, x1 = high 32 bits of a, x2 = low 32 bits of b
 *     v_i = i*r + ((x_i * r) >> 32)
 *
 * with fmix64 the MurmurHash3 finaliser (a bijection, so distinct keys give
 * distinct a) and one 32-bit seed per block, bdz_seed(block code, attempt),
 * the attempt chosen by the builder (common/bdz.c).  The slot of a key is
 *
 *     slot = v_j,  j = (g[v0] + g[v1] + g[v2]) mod 3
 *
 * where g holds 2 bits per vertex (value 3 = never assigned, counts as 0).
 * g is packed 4 vertices per byte, vertex v at bits 2*(v%4)..2*(v%4)+1 of
 * byte v/4 (the same order as the 2-bit packed sequence):
 *
 *     byte k: [ g(4k+3) | g(4k+2) | g(4k+1) | g(4k) ]   bit 7 .. bit 0
 *
 * Written in the C subset shared by OpenCL C and C99 (kernels/inc_common.h).
 */
#ifndef SP_INC_BDZ_H
#define SP_INC_BDZ_H

#include "inc_common.h"

/* Three 32-bit hash values of one key: x[0..2] of the comment above. */
typedef struct {
	uint x0, x1, x2;
} bdz_hash_t;

/* MurmurHash3 64-bit finaliser: a bijection with good avalanche. */
SP_FN ulong bdz_fmix64(ulong k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdUL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53UL;
	k ^= k >> 33;
	return k;
}

/* Hash a 64-bit key with the block's 32-bit seed into three 32-bit values. */
SP_FN bdz_hash_t bdz_hash(ulong key, uint seed)
{
	bdz_hash_t h;
	ulong a = bdz_fmix64(key ^ ((ulong)seed * 0x9e3779b97f4a7c15UL));
	ulong b = bdz_fmix64(a + 0x632be59bd9b4e019UL + (ulong)seed);

	h.x0 = (uint)a;
	h.x1 = (uint)(a >> 32);
	h.x2 = (uint)b;
	return h;
}

/*
 * The 32-bit hash seed of attempt A (0 .. BDZ_ATTEMPTS - 1) of SeedBlock
 * CODE: the index stores A in a byte (blk.seed, format 5), so the seed is
 * a function the kernels can compute.
 */
#define BDZ_ATTEMPTS 256u
SP_FN uint bdz_seed(uint code, uint a)
{
	return (uint)bdz_fmix64(((ulong)code << 8 | (ulong)(a & 255u)) + 0x2545f4914f6cdd1dUL);
}

/* Part size r of a block with U keys: ceil(1.23 U / 3), 2 for U = 2, 0 for U = 0. */
SP_FN uint bdz_part_size(uint nkeys)
{
	if (nkeys == 2)
		return 2;
	return (uint)(((ulong)nkeys * 123UL + 299UL) / 300UL);
}

/* Vertex I (0, 1 or 2) of hash H in a graph with part size R: in [I*R, (I+1)*R). */
SP_FN uint bdz_vertex(bdz_hash_t h, uint r, uint i)
{
	uint x = i == 0 ? h.x0 : i == 1 ? h.x1 : h.x2;

	return i * r + (uint)(((ulong)x * (ulong)r) >> 32);
}

/* The 2-bit g value of vertex V from the byte that holds it (byte V/4). */
SP_FN uint bdz_g_get(uchar byte, uint v)
{
	return ((uint)byte >> (2u * (v & 3u))) & 3u;
}

/* Which of the three vertices is the slot: (g0 + g1 + g2) mod 3. */
SP_FN uint bdz_pick(uint g0, uint g1, uint g2)
{
	return (g0 + g1 + g2) % 3u;
}

/* The slot (0 .. 3r-1 within the block) of hash H, given the three g values. */
SP_FN uint bdz_slot(bdz_hash_t h, uint r, uint g0, uint g1, uint g2)
{
	return bdz_vertex(h, r, bdz_pick(g0, g1, g2));
}

#endif
