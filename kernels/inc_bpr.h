/*
 * inc_bpr.h - mflBPR, the multiple fixed-length bit-parallel row-wise
 * approximate matcher of Tran 2012 (section 3.1.3, Algorithm 3), shared by
 * the CPU code (common/bpr.c) and the OpenCL kernels (kernels/filt.cl).
 *
 * What is computed.  One pattern q of length v (1 <= v <= 32) is compared
 * with the h neighborhoods t^0 .. t^{h-1} (length l, v <= l, h = 32 / l) of
 * one striped word of the general structure (layout: kernels/inc_idx.h).
 * As in the thesis (Problem 1 with the prefix automaton of section 3.1.1,
 * whose initial state has a self-loop), t^r matches when q occurs in t^r
 * with at most e edit operations:
 *
 *     min over 0 <= a <= b <= l of  lev(q, t^r[a..b))  <=  e
 *
 * with lev the Levenshtein distance (substitution, insertion, deletion all
 * cost 1); the empty substring counts, so every t^r matches when e >= v.
 * seedfilt uses v = l - e (the thesis's l = v + e), so the q of a read that
 * aligns to the reference right after the seed with at most e edits always
 * fits in the neighborhood whatever the indels.
 *
 * State.  R_k (k = 0..e) is a 32-bit word of h slices of v bits; bit i of
 * slice r set means "q[0..i] matches a substring of t^r ending at the
 * current column with at most k errors":
 *
 *     bit: 31 ..  v*h | v*h-1 .. v*(h-1) | ... | 2v-1 .. v | v-1 .. 0
 *          (unused)   |  slice h-1       | ... |  slice 1  |  slice 0
 *                                                  bit v*r + i = q[0..i] in t^r
 *
 *   R_k(0)  = (0^{v-k} 1^k)^h
 *   R_0(j)  = ((R_0(j-1) << 1) | (0^{v-1}1)^h) & B^[t^_j]
 *   R_k(j)  = ((R_k(j-1) << 1) & B^[t^_j]) | R_{k-1}(j-1) | (R_{k-1}(j-1) << 1)
 *             | (R_{k-1}(j) << 1) | (0^{v-k} 1^k)^h
 *
 * A bit shifted out of the top of slice r lands on bit 0 of slice r+1,
 * which the thesis's initialisation term (or, for R_0, the "| 1" before the
 * mask) sets anyway, so slices never leak into each other; bits above v*h
 * only ever move up and are ignored.  t^r matches iff bit v*r + v - 1 of
 * R_e was set after some column j = 0..l.
 *
 * Block mask.  B^[t^_j] = OR_r B[t^r_j] << (v*r), B[c] = bits i with
 * q[i] = c.  The thesis tabulates B^ over all 4^h columns; for h > 4
 * (l < 8) that is 4^h entries per pattern, so the table is cut into groups
 * of 4 slices with 256 entries each, one lookup per group:
 *
 *     tab[256*g + x] = OR_{s < 4} B[(x >> 2s) & 3] << (v*(4g+s)),
 *                      g = 0 .. ceil(h/4)-1, x = bases of slices 4g..4g+3
 *
 * (for h <= 4 this is exactly the thesis's block mask, 4^h used entries).
 * Written in the C subset shared by OpenCL C and C99 (inc_common.h).
 */
#ifndef SP_INC_BPR_H
#define SP_INC_BPR_H

#include "inc_common.h"
#include "inc_idx.h"

#define BPR_MAX_E 31          /* e < l <= 32 */
#define BPR_GROUP 256         /* block-mask entries per group of 4 slices */
#define BPR_MAX_GROUPS 8      /* ceil(32 / 4) */

/* Address space of the block-mask table (the kernels set __local). */
#ifndef BPR_TSPACE
#ifdef __OPENCL_VERSION__
#define BPR_TSPACE __global
#else
#define BPR_TSPACE
#endif
#endif

/* Number of 256-entry block-mask groups for H slices. */
SP_FN uint bpr_ngroups(uint h)
{
	return (h + 3u) / 4u;
}

/* Low N bits set (N = 0..32). */
SP_FN uint bpr_low(uint n)
{
	return n >= 32u ? 0xffffffffu : ((1u << n) - 1u);
}

/* PAT replicated in the H slices of V bits: (PAT)^h. */
SP_FN uint bpr_rep(uint pat, uint v, uint h)
{
	uint x = 0, r;

	for (r = 0; r < h; r++)
		x |= pat << (v * r);
	return x;
}

/* Bit mask B[c] of pattern Q (base i in bits 2i..2i+1) of length V. */
SP_FN uint bpr_bmask(ulong q, uint v, uint c)
{
	uint b = 0, i;

	for (i = 0; i < v; i++)
		b |= (uint)(((uint)(q >> (2u * i)) & 3u) == c) << i;
	return b;
}

/*
 * Entry X (0..255) of block-mask group G for the bit masks B0..B3 of a
 * pattern of length V, with H slices (slices past H contribute nothing).
 */
SP_FN uint bpr_tab_entry(uint b0, uint b1, uint b2, uint b3, uint v, uint h,
		uint g, uint x)
{
	uint m = 0, s;

	for (s = 0; s < 4u; s++) {
		uint r = 4u * g + s, c = (x >> (2u * s)) & 3u;
		uint b = c == 0u ? b0 : c == 1u ? b1 : c == 2u ? b2 : b3;

		m |= r < h ? b << (v * r) : 0u;
	}
	return m;
}

/*
 * mflBPR over one striped word W (H neighborhoods of length L) for a
 * pattern of length V with at most E errors (E <= BPR_MAX_E).  The block
 * mask of a column comes from the groups TAB when USE_TAB is set (see the
 * top of the file), else it is composed from the bit masks B0..B3 (h
 * shifts and ors per column: no table to build, for the kernels, where each
 * work item may hold another pattern).  USE_TAB is the same for a whole
 * run, so it is no divergent branch.  Returns the slots that match, slot r
 * in bit r; slots past the end of the SeedBlock must be masked by the
 * caller.  No data-dependent branch: the loops run l and e+1 times.
 */
SP_FN uint bpr_word_any(ulong w, uint h, uint l, uint v, uint e,
		BPR_TSPACE const uint *tab, uint use_tab, uint b0, uint b1, uint b2, uint b3)
{
	uint R[BPR_MAX_E + 1], I[BPR_MAX_E + 1];
	uint ones = bpr_rep(1u, v, h);
	uint ends = ones << (v - 1u);
	uint ng = bpr_ngroups(h), hit, j, k, g, res, r;

	for (k = 0; k <= e; k++)
		R[k] = I[k] = bpr_rep(bpr_low(k < v ? k : v), v, h);
	hit = R[e];
	for (j = 0; j < l; j++) {
		/* t^_j; a ulong, as h = 32 (l = 1) fills all 64 bits */
		ulong col = (w >> (2u * h * j)) & idx_mask2(h);
		uint bh = 0, old_prev, new_prev;

		if (use_tab) {
			for (g = 0; g < ng; g++)
				bh |= tab[BPR_GROUP * g + (uint)((col >> (8u * g)) & 0xffUL)];
		} else {
			for (r = 0; r < h; r++) {
				uint c = (uint)(col >> (2u * r)) & 3u;

				bh |= (c == 0u ? b0 : c == 1u ? b1 : c == 2u ? b2 : b3) << (v * r);
			}
		}
		old_prev = R[0];
		R[0] = ((R[0] << 1) | ones) & bh;
		new_prev = R[0];
		for (k = 1; k <= e; k++) {
			uint old = R[k];

			R[k] = ((old << 1) & bh) | old_prev | (old_prev << 1)
				| (new_prev << 1) | I[k];
			old_prev = old;
			new_prev = R[k];
		}
		hit |= R[e];
	}
	hit &= ends;
	res = 0;
	for (r = 0; r < h; r++)
		res |= ((hit >> (v * r + v - 1u)) & 1u) << r;
	return res;
}

/* mflBPR of one word with the block-mask groups TAB (bpr_word_any). */
SP_FN uint bpr_word(ulong w, uint h, uint l, uint v, uint e, BPR_TSPACE const uint *tab)
{
	return bpr_word_any(w, h, l, v, e, tab, 1u, 0u, 0u, 0u, 0u);
}

/* mflBPR of one word for pattern Q, block masks composed on the fly. */
SP_FN uint bpr_word_q(ulong w, uint h, uint l, uint v, uint e, ulong q)
{
	return bpr_word_any(w, h, l, v, e, 0, 0u, bpr_bmask(q, v, 0u), bpr_bmask(q, v, 1u),
			bpr_bmask(q, v, 2u), bpr_bmask(q, v, 3u));
}

#endif
