/*
 * inc_idx.h - neighborhood codes and the striped word layout of the general
 * structure (Tran 2012 ch. 3, mflBPR), shared by the CPU code and the OpenCL
 * kernels.
 *
 * A neighborhood q of length l (1..32) is a 64-bit value with base j of q in
 * bits 2j..2j+1 (first base in the low bits, A=0 C=1 G=2 T=3), the same
 * order as the 2-bit packed reference (common/seqio.h).  Numeric order of
 * these values is NOT lexicographic order; the reduced structure is sorted
 * numerically.
 *
 * Striped layout.  A 64-bit machine word holds h = floor(32 / l)
 * neighborhoods t^0 .. t^{h-1} of one SeedBlock, interleaved by base so that
 * access j returns the j-th base of all h words at once (t^_j of Tran's
 * Algorithm 3, the index into mflBPR's block mask B^ of 4^h entries):
 *
 *     bit: 2h*j + 2r .. 2h*j + 2r + 1  =  base j of neighborhood r
 *
 *     example l = 16, h = 2 (t = t^0, s = t^1):
 *       bit 63                                                        bit 0
 *       [s15 t15][s14 t14] ... [s1 t1][s0 t0]      each cell 2 bits
 *       t^_j = (word >> 4j) & 0xF
 *
 *     example l = 8, h = 4 (neighborhoods a b c d):
 *       [d7 c7 b7 a7] ... [d1 c1 b1 a1][d0 c0 b0 a0]
 *       t^_j = (word >> 8j) & 0xFF
 *
 * Bits above 2hl are zero.  The k-th word of a SeedBlock holds its
 * neighborhoods k*h .. k*h+h-1 (occurrence order); slots past the end of the
 * block in its last word are zero and must be ignored (the block's count
 * says how many are real).
 */
#ifndef SP_INC_IDX_H
#define SP_INC_IDX_H

#include "inc_common.h"

/* Neighborhoods per 64-bit word for neighborhood length L (1..32). */
SP_FN uint idx_stripe_h(uint l)
{
	return 32u / l;
}

/* Mask of the low 2L bits (L = 1..32). */
SP_FN ulong idx_mask2(uint l)
{
	return l >= 32u ? ~0UL : ((1UL << (2u * l)) - 1UL);
}

/* Base J of the neighborhood in slot R of striped word W (h per word). */
SP_FN uint idx_stripe_base(ulong w, uint h, uint r, uint j)
{
	return (uint)(w >> (2u * (h * j + r))) & 3u;
}

/* t^_j: the j-th bases of all h slots of W, slot 0 in the low 2 bits. */
SP_FN uint idx_stripe_column(ulong w, uint h, uint j)
{
	return (uint)((w >> (2u * h * j)) & idx_mask2(h));
}

/* Neighborhood value (base j in bits 2j..) of slot R of striped word W. */
SP_FN ulong idx_stripe_get(ulong w, uint h, uint l, uint r)
{
	ulong q = 0;
	uint j;

	for (j = 0; j < l; j++)
		q |= (ulong)idx_stripe_base(w, h, r, j) << (2u * j);
	return q;
}

#ifndef __OPENCL_VERSION__
/*
 * Set bits of X, for the CPU: the popcnt instruction where the build
 * targets it, else inline arithmetic (for baseline x86-64,
 * __builtin_popcountll is a call into libgcc's table-driven loop, which
 * idx_nbpos_get made for every lookup of bpr, bs and ph).
 */
SP_FN uint idx_popc64(ulong x)
{
#ifdef __POPCNT__   /* -mpopcnt, -march=native: one instruction */
	return (uint)__builtin_popcountll(x);
#else
	x -= (x >> 1) & 0x5555555555555555UL;
	x = (x & 0x3333333333333333UL) + ((x >> 2) & 0x3333333333333333UL);
	x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FUL;
	return (uint)((x * 0x0101010101010101UL) >> 56);
#endif
}
#endif

/*
 * The first position index of unique neighborhood J (0 .. U, U = the
 * partition's unique neighborhoods; J = U gives the number of positions),
 * red.nbpos of format 1, from its compact form (format 2, red.grp and
 * red.rep).  Most neighborhoods occur once, so nbpos[j] = j + extra(j),
 * extra(j) = the sum of (count - 1) over the neighborhoods before j.  Per
 * group of 64 neighborhoods (j >> 6), 16 bytes in GRP:
 *
 *     u32 base   extra(64g)
 *     u32 xoff   index in REP of the group's first repeated neighborhood
 *     u64 flags  bit t set: neighborhood 64g + t occurs more than once
 *                (as two u32, low half first)
 *
 * and REP, one u32 per repeated neighborhood in order: the sum of (count -
 * 1) over the group's repeated neighborhoods up to and including it.  Then
 *
 *     r = popcount(flags & (2^t - 1)),  t = j & 63
 *     nbpos[j] = j + base + (r ? REP[xoff + r - 1] : 0)
 *
 * (one group read, at most one REP read, no loop).  The groups cover
 * j = 0 .. U: there are U / 64 + 1 of them.
 */
SP_FN uint idx_nbpos_get(SP_GLOBAL const uint *grp, SP_GLOBAL const uint *rep, ulong j)
{
	ulong g = 4UL * (j >> 6), fl = (ulong)grp[g + 2] | (ulong)grp[g + 3] << 32;
	ulong below = fl & ((1UL << (uint)(j & 63UL)) - 1UL);
#ifdef __OPENCL_VERSION__
	uint r = (uint)popcount(below);
#else
	uint r = idx_popc64(below);
#endif

	return (uint)j + grp[g] + (r ? rep[grp[g + 1] + r - 1u] : 0u);
}

/*
 * The rank of slot S's neighborhood within its SeedBlock (blk.rank): W
 * bits per slot, slot s at bits s*W .. s*W+W-1 of the u32 words RK, lowest
 * bit first (W = 0 .. 32).  RK is followed by a spare word so that two
 * words can always be read.
 */
SP_FN uint idx_rank_get(SP_GLOBAL const uint *rk, uint w, ulong s)
{
	ulong bit = s * (ulong)w, i = bit >> 5;
	ulong v = ((ulong)rk[i] | (ulong)rk[i + 1] << 32) >> (uint)(bit & 31UL);

	return (uint)(v & ((1UL << w) - 1UL));
}

/*
 * Format 5: the rank width of a SeedBlock of U unique neighborhoods, the
 * bits of U - 1 (0 when U <= 1).
 */
SP_FN uint idx_rank_width(uint u)
{
#ifdef __OPENCL_VERSION__
	return u > 1u ? 32u - (uint)clz(u - 1u) : 0u;
#else
	return u > 1u ? 32u - (uint)__builtin_clz(u - 1u) : 0u;
#endif
}

/*
 * Format 5: the rank within SeedBlock CODE of its slot S (0 .. M-1, counted
 * from the block's first slot).  Each block's ranks start at a word of
 * blk.rank, ROFF[CODE] (blk.roff), at the block's own width
 * (idx_rank_width of its unique count, from RED_START).
 */
SP_FN uint idx_blk_rank_at(SP_GLOBAL const uint *rk, SP_GLOBAL const uint *roff,
		SP_GLOBAL const uint *red_start, uint code, uint s)
{
	return idx_rank_get(rk + roff[code], idx_rank_width(red_start[code + 1u] - red_start[code]), s);
}

/* Word W with neighborhood Q (length L) written into slot R (slot assumed zero). */
SP_FN ulong idx_stripe_put(ulong w, uint h, uint l, uint r, ulong q)
{
	uint j;

	for (j = 0; j < l; j++)
		w |= ((q >> (2u * j)) & 3UL) << (2u * (h * j + r));
	return w;
}

/*
 * Keys K0, K1 (l <= 16, h = 2) as the two slots of a striped word: an outer
 * perfect shuffle of the 2-bit units of k0 | k1 << 32 (base j of k0 to bits
 * 4j, of k1 to bits 4j + 2).
 */
SP_FN ulong idx_stripe2(ulong k0, ulong k1)
{
	ulong x = k0 | k1 << 32, t;

	t = (x ^ (x >> 16)) & 0x00000000FFFF0000UL;
	x ^= t ^ (t << 16);
	t = (x ^ (x >> 8)) & 0x0000FF000000FF00UL;
	x ^= t ^ (t << 8);
	t = (x ^ (x >> 4)) & 0x00F000F000F000F0UL;
	x ^= t ^ (t << 4);
	t = (x ^ (x >> 2)) & 0x0C0C0C0C0C0C0C0CUL;
	x ^= t ^ (t << 2);
	return x;
}

/*
 * The striped word of keys J0 .. J0 + min(H, LEFT) - 1 of the reduced
 * structure (NB32 when l <= 16, h >= 2; else NB64, h = 1: a key is its own
 * word), slots past LEFT zero.  bpr's kernels stripe red.nb with it as they
 * read it (the CPU: bpr_stripe, the same words).
 */
SP_FN ulong idx_stripe_keys(SP_GLOBAL const uint *nb32, SP_GLOBAL const ulong *nb64, ulong j0,
		ulong left, uint h, uint l)
{
	ulong w = 0;
	uint r;

	if (h == 1u)
		return nb64[j0];
	if (h == 2u)
		return idx_stripe2(nb32[j0], left > 1UL ? nb32[j0 + 1UL] : 0u);
	for (r = 0; r < h && r < left; r++)
		w = idx_stripe_put(w, h, l, r, nb32[j0 + r]);
	return w;
}

#endif
