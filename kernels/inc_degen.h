/*
 * inc_degen.h - degenerate patterns by work-item index (Tran 2012 section
 * 3.2.1-3.2.2): every word within Hamming distance e of a neighborhood q of
 * length v, enumerated without branches, shared by the CPU code
 * (common/degen.c) and the OpenCL kernels (kernels/filt.cl).
 *
 * Work item n (0 <= n < |SP| * |SC|) takes
 *
 *     sp = n >> 2e        an e-subset of positions: L_Pos[sp]
 *     sc = n & (4^e - 1)  e letters: letter i = (sc >> 2i) & 3
 *
 * and writes letter i at position p_i of q (a letter may equal q's own: the
 * thesis substitutes each character by itself too, so that words with fewer
 * than e substitutions come out of the same loop).  L_Pos holds the C(v, e)
 * subsets p_0 < p_1 < ... < p_{e-1} in lexicographic order, 5 bits each
 * (the thesis's upper triangle of M_sub for e = 2, generalised):
 *
 *     L_Pos entry: bit 31..30 | 29..25 | ... | 14..10 | 9..5 | 4..0
 *                      0      |  p_5   | ... |  p_2   | p_1  | p_0
 *
 * Canonical items.  The map (sp, sc) -> word is not injective (a word with
 * m < e substitutions comes from C(v-m, e-m) subsets).  Exactly one item
 * per word is canonical: the one whose unchanged positions are the
 * smallest positions outside the changed set, i.e. every i with
 * letter_i = q[p_i] has p_i = i.  Testing it is branch-free
 * (degen_canonical); the canonical items enumerate the ball
 * sum_{m <= e} C(v, m) 3^m words exactly once each, so every degenerate
 * word is looked up once and no position is reported twice.
 *
 * The OpenCL kernels number the canonical words alone (degen_ball_word
 * below): no work item is spent on a word that another one looks up.
 */
#ifndef SP_INC_DEGEN_H
#define SP_INC_DEGEN_H

#include "inc_common.h"

#define DEGEN_MAX_E 6         /* 6 positions of 5 bits in a 32-bit L_Pos entry */

/* Position I of L_Pos entry LP. */
SP_FN uint degen_lpos_at(uint lp, uint i)
{
	return (lp >> (5u * i)) & 31u;
}

/* The degenerate word of item (LP, SC) for neighborhood Q with E positions. */
SP_FN ulong degen_word(ulong q, uint lp, uint sc, uint e)
{
	uint i;

	for (i = 0; i < e; i++) {
		uint p = degen_lpos_at(lp, i), a = (sc >> (2u * i)) & 3u;

		q = (q & ~(3UL << (2u * p))) | ((ulong)a << (2u * p));
	}
	return q;
}

/* 1 if item (LP, SC) is the canonical item of its word (see above), else 0. */
SP_FN uint degen_canonical(ulong q, uint lp, uint sc, uint e)
{
	uint ok = 1u, i;

	for (i = 0; i < e; i++) {
		uint p = degen_lpos_at(lp, i), a = (sc >> (2u * i)) & 3u;
		uint b = (uint)(q >> (2u * p)) & 3u;

		ok &= (uint)(a != b) | (uint)(p == i);
	}
	return ok;
}

/* Item N of the SP x SC grid: its L_Pos index and letters (E errors). */
SP_FN uint degen_item_sp(uint n, uint e)
{
	return n >> (2u * e);
}

SP_FN uint degen_item_sc(uint n, uint e)
{
	return n & ((1u << (2u * e)) - 1u);
}

/*
 * The ball by item index, canonical words only (the OpenCL kernels): items
 * 0 .. sum_{m <= e} C(v, m) 3^m - 1 in blocks by the number m of changed
 * positions, m = 0 .. e; in block m, item BOFF[m] + s 3^m + d changes the
 * positions of L_Pos entry s of the m-subsets (table LPOS_m) to the letters
 * (q's letter + 1 + digit_i) mod 4, digit_i = base-3 digit i of d.  One
 * constant table BALL holds everything:
 *
 *     BALL:  BOFF[0] .. BOFF[e+1] | LOFF[0] .. LOFF[e] | LPOS_0 LPOS_1 .. LPOS_e
 *            (BOFF[e+1] = items)    (LOFF[m]: LPOS_m's first entry, counted
 *                                    from the start of LPOS_0)
 */
SP_FN ulong degen_ball_word(ulong q, uint n, uint e, SP_CONSTANT const uint *ball)
{
	uint m = 0u, i, r, p3 = 1u, s, d, lp;

	for (i = 1u; i <= e; i++)
		m += (uint)(n >= ball[i]);
	r = n - ball[m];
	for (i = 0u; i < m; i++)
		p3 *= 3u;
	s = r / p3;
	d = r - s * p3;
	lp = ball[2u * e + 3u + ball[e + 2u + m] + s];
	for (i = 0u; i < m; i++) {
		uint p = degen_lpos_at(lp, i), b = (uint)(q >> (2u * p)) & 3u;
		uint a = (b + 1u + d % 3u) & 3u;

		d /= 3u;
		q = (q & ~(3UL << (2u * p))) | ((ulong)a << (2u * p));
	}
	return q;
}

/*
 * Q with T added letter by letter, mod 4, no carry between letters (SWAR):
 * with T = degen_ball_word(0, n, e, ball), degen_add(q, T) equals
 * degen_ball_word(q, n, e, ball), since each changed letter is q's letter
 * plus 1 + digit_i (mod 4) and T holds 1 + digit_i at that position, 0
 * elsewhere.  The OpenCL kernels read T from a table instead of decoding n.
 *
 *     per letter (2 bits hl):  low = q.l + t.l  (carry into bit h, never
 *     beyond the letter);  result = low ^ ((q ^ t) & H)
 */
SP_FN ulong degen_add(ulong q, ulong t)
{
	ulong lo = 0x5555555555555555UL, hi = 0xaaaaaaaaaaaaaaaaUL;

	return ((q & lo) + (t & lo)) ^ ((q ^ t) & hi);
}

#endif
