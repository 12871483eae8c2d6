/*
 * inc_align.h - semi-global alignment of a whole read against a reference
 * window within at most A edit operations: Myers' bit-parallel algorithm in
 * Hyyro's block (multi-word) form, banded by words (a word of the read
 * is computed only from the column where it can hold a cell within A, as
 * edlib adds blocks), traceback to a CIGAR from the stored delta vectors,
 * and a substitutions-only (Hamming) mode.  Shared
 * by the CPU path (common/align.c) and the OpenCL kernel (kernels/align.cl).
 *
 * Problem (edlib's HW / infix mode): the read R[0..m) must be aligned whole,
 * the window T[0..n) is free at both ends.  D[i][j] = edit distance of
 * R[0..i) against the best suffix of T[0..j); D[0][j] = 0, D[i][0] = i.
 * The distance is min D[m][j] over j = 1..n; a hit needs it <= A.
 * Bases: A C G T (either case) match themselves; anything else (N) is a
 * mismatch against everything, N against N included.
 *
 * Bit vectors: the read is the pattern, W = ceil(m / 64) words (m <= 1024,
 * W <= 16), row i (1-based) is bit (i-1) % 64 of word (i-1) / 64.  For each
 * window column j = 1..n the vertical deltas D[i][j] - D[i-1][j] are kept
 * as Pv (+1) and Mv (-1), the horizontal deltas D[i][j] - D[i][j-1] as Ph
 * (+1) and Mh (-1); the top row is 0 (horizontal input 0).  The traceback
 * needs only column j's four vectors at each cell, no population counts:
 *
 *     D[i-1][j]   = D[i][j] - v(i,j)
 *     D[i][j-1]   = D[i][j] - h(i,j)
 *     D[i-1][j-1] = D[i-1][j] - h(i-1,j)        (h(0,j) = 0)
 *
 * Workspace (traceback), one pair, word k at ws[k * ST] (ST = 1 on the CPU,
 * the number of work items on a device, so that neighbours read neighbours):
 *
 *     k = (j-1)*4W + w        Pv of column j, word w     (j = 1..n, w < W)
 *     k = (j-1)*4W + W + w    Mv
 *     k = (j-1)*4W + 2W + w   Ph
 *     k = (j-1)*4W + 3W + w   Mh
 *
 * i.e. n * 4W words (SP_ALIGN_WS_WORDS(n, m)); none with SP_ALIGN_NOCIGAR.
 *
 * Result and tie-breaking (deterministic, identical on every backend):
 * the best end is the leftmost column with the least D[m][j] (among the
 * window offsets END_LO..END_HI when END_HI is not 0: then n_ends and ENDS
 * still cover the whole window); the traceback walks from (m, j) to row 0
 * choosing, among the moves that keep the cost exact, M (diagonal, match
 * or mismatch) before I (read base against no reference base) before D
 * (reference base against no read base).  Column 0 forces I.  The path's first reference base is START and
 * its last END (window offsets; END = START - 1 when it consumes none, a
 * read of insertions only).  An optimal path never has I next to D (a
 * single M would cost less), so the CIGAR has at most 2A + 1 runs.
 *
 * Early stop: every few columns (SP_ALIGN_DEAD_EVERY), once the window
 * has fewer columns left than the read rows, the column is checked with
 * sp_align_dead(); when no cell of it can still lead to an end within A,
 * the remaining columns are skipped (their ENDS entries SP_ALIGN_END_NONE).
 * The result is the same as that of the full pass, by the bound proven
 * there.
 *
 * Windows are ASCII, or with SP_ALIGN_PACKED 2-bit packed (inc_pack.h's
 * layout, N stored as A) and addressed by base offset, so that a packed
 * reference can be used in place.
 *
 * --no-gaps (SP_ALIGN_NOGAPS): Hamming distance of the read against each
 * window diagonal T[s..s+m), s = 0..n-m; least mismatches, leftmost s;
 * CIGAR "mM".
 *
 * Result record (sp_align_res_t, 144 bytes, same layout in C and OpenCL C):
 *
 *     offset  0  int  dist      distance, SP_ALIGN_NOHIT (-1) above A,
 *                               SP_ALIGN_INVALID (-2) beyond the limits
 *             4  uint start     window offset of the first reference base
 *             8  uint end       window offset of the last reference base
 *            12  uint n_cigar   CIGAR runs used (0 with SP_ALIGN_NOCIGAR)
 *            16  uint n_ends    end columns j with D[m][j] <= A
 *            20  uint cigar[31] BAM encoding len << 4 | op (M 0, I 1, D 2),
 *                               unused entries 0
 *
 * With SP_ALIGN_ENDS, ENDS[j-1] = D[m][j] when <= A, else SP_ALIGN_END_NONE
 * (255), for j = 1..n: every end position of the read within the bound
 * (Rabema's loci are maximal runs of these).  Without a hit start, end,
 * n_cigar and the CIGAR are 0.
 */
#ifndef SP_INC_ALIGN_H
#define SP_INC_ALIGN_H

#include "inc_common.h"
#include "inc_pack.h"

/*
 * The longest read: 2048 bases (32 words), so that Illumina reads of any
 * length and merged pairs are aligned, not dropped; the per-pair arrays of
 * a build are sized for it (SP_ALIGN_WORDS) and the windows (4 reads'
 * length) must fit SP_ALIGN_MAX_WIN.  Longer reads are left unmapped and
 * counted (extend warns even with -q).
 */
#define SP_ALIGN_MAX_READ 2048  /* longest read (W <= 32 words) */
#define SP_ALIGN_MAX_A 15       /* most edit operations: 2A+1 CIGAR runs fit */
#define SP_ALIGN_MAX_WIN 8192   /* longest window */

/*
 * Words of the longest read a build aligns: the size of the per-pair
 * arrays (match bits, vectors).  32 (SP_ALIGN_MAX_READ) unless the build
 * says less: the device programs for batches of short reads are built with
 * -DSP_ALIGN_WORDS=4 (up to 256 bases) or 16 (up to 1024), which keeps
 * their private memory small; a longer read then gives SP_ALIGN_INVALID
 * (align_batch_ocl never sends one).
 */
#ifndef SP_ALIGN_WORDS
#define SP_ALIGN_WORDS 32
#endif
#define SP_ALIGN_MAX_CIGAR 31   /* 2 * SP_ALIGN_MAX_A + 1 */

#define SP_ALIGN_NOGAPS 1u      /* substitutions only (Hamming) */
#define SP_ALIGN_NOCIGAR 2u     /* distance and end only: no workspace, no traceback */
#define SP_ALIGN_ENDS 4u        /* fill the per-column end distances */
#define SP_ALIGN_PACKED 8u      /* windows are 2-bit packed (inc_pack.h), offsets in bases */

#define SP_ALIGN_NOHIT (-1)
#define SP_ALIGN_INVALID (-2)
#define SP_ALIGN_END_NONE 255

#define SP_CIGAR_M 0u
#define SP_CIGAR_I 1u
#define SP_CIGAR_D 2u

/* Workspace words for a window of N bases and a read of M bases. */
#define SP_ALIGN_WS_WORDS(n, m) ((ulong)(n) * 4u * (((ulong)(m) + 63u) >> 6))

/*
 * One (read, window) pair: offsets into the read and window buffers, and
 * the window offsets END_LO..END_HI where the best end may lie (END_HI 0:
 * anywhere), so that a second locus of one window can be traced back.
 */
typedef struct {
	ulong read_off;
	ulong win_off;
	uint read_len;
	uint win_len;
	uint end_lo;
	uint end_hi;
} sp_align_pair_t;

/* One result (layout above). */
typedef struct {
	int dist;
	uint start;
	uint end;
	uint n_cigar;
	uint n_ends;
	uint cigar[SP_ALIGN_MAX_CIGAR];
} sp_align_res_t;


/* Code of an ASCII base (sp_nt4_codes of inc_pack.h). */
SP_FN uint sp_align_code(uchar c)
{
	return sp_nt4_codes[c];
}

/*
 * Code of window base K (offset in bases from WIN): ASCII, or with PACKED
 * 2-bit packed, 4 bases a byte, the first in the low bits (no N: N is A).
 */
SP_FN uint sp_align_wcode(SP_GLOBAL const uchar *win, ulong k, uint packed)
{
	return packed ? (uint)(win[k >> 2] >> ((k & 3u) << 1)) & 3u : sp_nt4_codes[win[k]];
}

/*
 * The delta at row I (1-based) of column COL's vectors starting at word
 * K (0: Pv/Mv, 2*NW: Ph/Mh): the P bit minus the M bit, +1, 0 or -1.
 */
SP_FN int sp_align_delta(SP_GLOBAL const ulong *col, ulong st, uint nw, uint k, uint i)
{
	uint w = k + ((i - 1) >> 6), b = (i - 1) & 63u;

	return (int)((col[w * st] >> b) & 1u) - (int)((col[(w + nw) * st] >> b) & 1u);
}

/* Clear RES to "no hit" (dist D). */
SP_FN void sp_align_clear(SP_GLOBAL sp_align_res_t *res, int d)
{
	uint k;

	res->dist = d;
	res->start = 0;
	res->end = 0;
	res->n_cigar = 0;
	res->n_ends = 0;
	for (k = 0; k < SP_ALIGN_MAX_CIGAR; k++)
		res->cigar[k] = 0;
}

/* Substitutions only: the leftmost diagonal with the fewest mismatches. */
SP_FN void sp_align_nogaps(SP_GLOBAL const uchar *read, uint m, SP_GLOBAL const uchar *win,
		ulong woff, uint n, uint max_a, uint flags, uint end_lo, uint end_hi,
		SP_GLOBAL uchar *ends, SP_GLOBAL sp_align_res_t *res)
{
	int best = (int)max_a + 1, lim = (int)max_a;   /* every diagonal within A counts */
	uint s, i, best_s = 0, n_ends = 0, packed = (flags & SP_ALIGN_PACKED) != 0;

	if (flags & SP_ALIGN_ENDS)
		for (s = 0; s < n; s++)
			ends[s] = SP_ALIGN_END_NONE;
	for (s = 0; m <= n && s <= n - m; s++) {
		int mm = 0, in = s + m - 1 >= end_lo && s + m - 1 <= end_hi;
		for (i = 0; i < m && mm <= lim; i++) {
			uint c = sp_align_code(read[i]);
			mm += c > 3 || c != sp_align_wcode(win, woff + s + i, packed);
		}
		if (mm > lim)
			continue;
		n_ends++;
		if (flags & SP_ALIGN_ENDS)
			ends[s + m - 1] = (uchar)mm;
		if (in && mm < best) {
			best = mm;
			best_s = s;
		}
	}
	if (best > (int)max_a)
		return;
	res->dist = best;
	res->start = best_s;
	res->end = best_s + m - 1;
	res->n_ends = n_ends;
	if (!(flags & SP_ALIGN_NOCIGAR)) {
		res->n_cigar = 1;
		res->cigar[0] = m << 4 | SP_CIGAR_M;
	}
}

/* Bits set in X. */
SP_FN int sp_align_popc(ulong x)
{
#ifdef __OPENCL_VERSION__
	return (int)popcount(x);
#else
	x = x - ((x >> 1) & 0x5555555555555555ul);
	x = (x & 0x3333333333333333ul) + ((x >> 2) & 0x3333333333333333ul);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0ful;
	return (int)((x * 0x0101010101010101ul) >> 56);
#endif
}

/*
 * Early termination: whether no end column after column j can be within
 * A, given column j's vertical deltas P, Q (words of rows 1..).  A path to
 * (m, j'), j' > j, leaves column j from some cell (i, j) (or starts later
 * on row 0, no cheaper than leaving (0, j)), and from there it needs m - i
 * rows in at most n - j columns, so its cost is at least D[i][j] +
 * max(0, (m - i) - (n - j)).  With c = m - (n - j) >= 1, rows i < c are
 * no better than row c (D[i][j] - i does not grow with i, so D[i][j] +
 * c - i >= D[c][j]), and rows i > j + A hold D[i][j] >= i - j > A: the
 * window is dead when D[i][j] > A for every row i = c .. HI = min(m, j +
 * A).  D[i][j] is the sum of the deltas of rows 1..i (row 0 is 0).  The
 * banded words hold upper bounds that are exact where <= A, so a bound
 * above A is one for the true value too.
 */
SP_FN int sp_align_dead(const ulong *P, const ulong *Q, uint c, uint hi, int a)
{
	uint w, r = c & 63u, i;
	int d = 0;

	for (w = 0; w < (c >> 6); w++)
		d += sp_align_popc(P[w]) - sp_align_popc(Q[w]);
	if (r) {
		ulong lo = (1ul << r) - 1;
		d += sp_align_popc(P[c >> 6] & lo) - sp_align_popc(Q[c >> 6] & lo);
	}
	if (d <= a)
		return 0;
	if (hi > c && hi - c < 64 && (c >> 6) == ((hi - 1) >> 6)
			&& d - sp_align_popc(Q[c >> 6] & (((1ul << (hi - c)) - 1) << r)) > a)
		return 1;   /* even every -1 of rows c+1..HI (one word) leaves them above A */
	for (i = c; i < hi; i++) {   /* row i + 1 is bit i */
		d += (int)((P[i >> 6] >> (i & 63u)) & 1u) - (int)((Q[i >> 6] >> (i & 63u)) & 1u);
		if (d <= a)
			return 0;
	}
	return 1;
}

/* Columns between two checks of sp_align_dead (a power of two). */
#define SP_ALIGN_DEAD_EVERY 8u

/*
 * Whether to check column j (window n, read m): only where c = m - (n - j)
 * >= 1 (before that row 0 itself is alive) and before the last column.
 */
#define SP_ALIGN_CHECK_DEAD(j) (((j) & (SP_ALIGN_DEAD_EVERY - 1)) == 0 && (j) + m > n && (j) < n)

/* sp_align_dead's C, HI and A at column j (window n, read m, bound max_a). */
#define SP_ALIGN_DEAD_AT(j) ((j) + m - n), ((j) + max_a < m ? (j) + max_a : m), (int)max_a

/* sp_align_dead for a pass of one or two words (P1, Q1 unread when m <= 64). */
SP_FN int sp_align_dead2(ulong p0, ulong q0, ulong p1, ulong q1, uint c, uint hi, int a)
{
	ulong pp[2], qq[2];

	pp[0] = p0;
	qq[0] = q0;
	pp[1] = p1;
	qq[1] = q1;
	return sp_align_dead(pp, qq, c, hi, a);
}

/* Fill the ends of the columns after column j (dead) and leave the loop. */
#define SP_ALIGN_STOP(j) { \
	if (flags & SP_ALIGN_ENDS) \
		for (; j < n; j++) \
			ends[j] = SP_ALIGN_END_NONE; \
	break; \
}

/*
 * The code of the next window base into C, reading the window in order
 * (RPOS, and for a packed one the byte RBUF with RLEFT bases left): no
 * shift by a variable count in the column loop, which on x86 would wait on
 * the flags of the column before.
 */
#define SP_ALIGN_NEXT(C) do { \
	if (packed) { \
		if (!rleft) { \
			rbuf = win[rpos >> 2]; \
			rleft = 4; \
		} \
		(C) = rbuf & 3u; \
		rbuf >>= 2; \
		rleft--; \
	} else { \
		(C) = sp_nt4_codes[win[rpos]]; \
	} \
	rpos++; \
} while (0)

/*
 * One word of one column, edlib's calculateBlock: P, Q are the word's Pv,
 * Mv (updated), EQ its match bits, K its index; hp, hm carry the horizontal
 * delta of the row above in and of the word's last row out; phs, mhs are
 * left holding the word's horizontal deltas (stored for the traceback).
 */
#define SP_ALIGN_WORD(P, Q, EQ, K) do { \
	ulong eq_ = (EQ), xv_ = eq_ | (Q), xh_, ph_, mh_; \
	eq_ |= hm; \
	xh_ = (((eq_ & (P)) + (P)) ^ (P)) | eq_; \
	phs = (Q) | ~(xh_ | (P)); \
	mhs = (P) & xh_; \
	ph_ = phs << 1 | hp; \
	mh_ = mhs << 1 | hm; \
	hp = phs >> 63; \
	hm = mhs >> 63; \
	(P) = mh_ | ~(xv_ | ph_); \
	(Q) = ph_ & xv_; \
	if (store) { \
		col[(K) * st] = (P); \
		col[(nw + (K)) * st] = (Q); \
		col[(2 * nw + (K)) * st] = phs; \
		col[(3 * nw + (K)) * st] = mhs; \
	} \
} while (0)

/* After the last word of column j: row m's score, the ends, the best end. */
#define SP_ALIGN_COLUMN_END() do { \
	score += (int)((phs & lastmask) != 0) - (int)((mhs & lastmask) != 0); \
	if (score <= (int)max_a) \
		n_ends++; \
	if (flags & SP_ALIGN_ENDS) \
		ends[j - 1] = score <= (int)max_a ? (uchar)score : (uchar)SP_ALIGN_END_NONE; \
	if (score < best && j > end_lo && j <= end_hi + 1) { \
		best = score; \
		best_j = j; \
	} \
} while (0)

/*
 * The match bits of READ (M bases, 1..64 * SP_ALIGN_WORDS): bit i % 64 of
 * PEQ[c][i / 64] is set where base i has code c < 4; PEQ[4] (N, and the
 * read's own N) is all 0, since N matches nothing.  Words past the read's
 * are not written.  Each word is built in registers.
 */
SP_FN void sp_align_peq(SP_GLOBAL const uchar *read, uint m, ulong peq[5][SP_ALIGN_WORDS])
{
	uint w, i, nw = (m + 63) >> 6;

	for (w = 0; w < nw; w++) {
		ulong lb = 0, hb = 0, nb = 0, b = 1;   /* bit planes: code bit 0, bit 1, N */
		uint lo = 64 * w, hi = m < lo + 64 ? m : lo + 64;
		for (i = lo; i < hi; i++, b <<= 1) {
			uint c = sp_align_code(read[i]);
			lb |= b & (0 - (ulong)(c & 1u));
			hb |= b & (0 - (ulong)((c >> 1) & 1u));
			nb |= b & (0 - (ulong)(c >> 2));
		}
		peq[0][w] = ~hb & ~lb & ~nb;
		peq[1][w] = ~hb & lb;
		peq[2][w] = hb & ~lb;
		peq[3][w] = hb & lb;
		peq[4][w] = 0;
		if (hi - lo < 64)   /* no rows past the read */
			peq[0][w] &= (1ul << (hi - lo)) - 1;
	}
}

#ifdef __OPENCL_VERSION__
#define SP_ALIGN_INLINE inline
#else
#define SP_ALIGN_INLINE static inline __attribute__((always_inline))
#endif

/* sp_align_gapped's work, inlined where FLAGS is a constant. */
SP_ALIGN_INLINE void sp_align_gapped_k(const ulong peq[5][SP_ALIGN_WORDS], uint m,
		SP_GLOBAL const uchar *win, ulong woff, uint n, uint max_a, uint flags, uint end_lo,
		uint end_hi, SP_GLOBAL ulong *ws, ulong st, SP_GLOBAL uchar *ends,
		SP_GLOBAL sp_align_res_t *res)
{
	ulong pv[SP_ALIGN_WORDS], mv[SP_ALIGN_WORDS];
	ulong lastmask;
	uint nw, i, j, w, c, best_j = 0, n_ends = 0, nops = 0, op, prev_op, run;
	int score, best = (int)max_a + 1, v;
	int store = !(flags & SP_ALIGN_NOCIGAR);
	uint packed = (flags & SP_ALIGN_PACKED) != 0, rbuf = 0, rleft = 0;
	ulong rpos = woff;   /* the next window base (SP_ALIGN_NEXT) */

	if (end_hi == 0)
		end_hi = n;   /* anywhere (beyond the last offset is harmless) */
	nw = (m + 63) >> 6;
	lastmask = 1ul << ((m - 1) & 63u);
	for (w = 0; w < nw; w++) {
		pv[w] = ~0ul;
		mv[w] = 0;
	}
	if (packed && n) {   /* the window's first (partial) byte */
		rbuf = (uint)win[woff >> 2] >> ((woff & 3u) << 1);
		rleft = 4 - (uint)(woff & 3u);
	}

	/*
	 * forward: column by column; one- and two-word reads in registers.
	 * Word w (rows 64w+1..) is computed only from the column where its
	 * first row can be within A (j + A >= 64w + 1): before that all its
	 * cells exceed A, so it enters as an upper bound (every vertical delta
	 * +1 below the word above, as edlib adds a block), which leaves every
	 * value <= A exact, and the traceback and the ends only use those.
	 */
	score = (int)m;
	if (nw == 1) {
		ulong p0 = ~0ul, q0 = 0;
		for (j = 1; j <= n; j++) {
			ulong hp = 0, hm = 0, phs, mhs;   /* horizontal input: 0 on row 0 */
			SP_GLOBAL ulong *col = store ? ws + (ulong)(j - 1) * 4u * st : ws;
			SP_ALIGN_NEXT(c);
			SP_ALIGN_WORD(p0, q0, peq[c][0], 0);
			SP_ALIGN_COLUMN_END();
			if (SP_ALIGN_CHECK_DEAD(j) && sp_align_dead2(p0, q0, 0, 0, SP_ALIGN_DEAD_AT(j)))
				SP_ALIGN_STOP(j);
		}
	} else if (nw == 2) {
		ulong p0 = ~0ul, q0 = 0, p1 = ~0ul, q1 = 0;
		uint j1 = 65 > max_a + 1 ? 65 - max_a : 1;   /* word 1 from column j1 */
		int s0 = 64;   /* D[64][j], the bottom of word 0 */
		for (j = 1; j < j1 && j <= n; j++) {
			ulong hp = 0, hm = 0, phs, mhs;
			SP_GLOBAL ulong *col = store ? ws + (ulong)(j - 1) * 8u * st : ws;
			SP_ALIGN_NEXT(c);
			SP_ALIGN_WORD(p0, q0, peq[c][0], 0);
			s0 += (int)hp - (int)hm;
			if (flags & SP_ALIGN_ENDS)
				ends[j - 1] = SP_ALIGN_END_NONE;
			if (SP_ALIGN_CHECK_DEAD(j) && sp_align_dead2(p0, q0, p1, q1, SP_ALIGN_DEAD_AT(j)))
				break;
		}
		if (j < j1 && j < n) {   /* dead before word 1 entered */
			if (flags & SP_ALIGN_ENDS)
				for (; j < n; j++)
					ends[j] = SP_ALIGN_END_NONE;
			j = n + 1;   /* skip the second loop */
		}
		score = s0 + (int)m - 64;   /* D'[m][j1-1]: word 1 enters as all +1 */
		for (; j <= n; j++) {
			ulong hp = 0, hm = 0, phs, mhs;
			SP_GLOBAL ulong *col = store ? ws + (ulong)(j - 1) * 8u * st : ws;
			SP_ALIGN_NEXT(c);
			SP_ALIGN_WORD(p0, q0, peq[c][0], 0);
			SP_ALIGN_WORD(p1, q1, peq[c][1], 1);
			SP_ALIGN_COLUMN_END();
			if (SP_ALIGN_CHECK_DEAD(j) && sp_align_dead2(p0, q0, p1, q1, SP_ALIGN_DEAD_AT(j)))
				SP_ALIGN_STOP(j);
		}
	} else {
		int bs[SP_ALIGN_WORDS];   /* D at the bottom row of each active word */
		uint na = 1;              /* words computed */
		bs[0] = 64;
		for (j = 1; j <= n; j++) {
			ulong hp = 0, hm = 0, phs = 0, mhs = 0;
			SP_GLOBAL ulong *col = store ? ws + (ulong)(j - 1) * 4u * nw * st : ws;
			while (na < nw && j + max_a >= 64 * na + 1) {   /* word na enters, all +1 */
				pv[na] = ~0ul;
				mv[na] = 0;
				bs[na] = bs[na - 1] + (na == nw - 1 ? (int)(m - 64 * na) : 64);
				if (na == nw - 1)
					score = bs[na];
				na++;
			}
			SP_ALIGN_NEXT(c);
			for (w = 0; w < na; w++) {
				SP_ALIGN_WORD(pv[w], mv[w], peq[c][w], w);
				bs[w] += (int)hp - (int)hm;
			}
			if (na == nw)
				SP_ALIGN_COLUMN_END();
			else if (flags & SP_ALIGN_ENDS)
				ends[j - 1] = SP_ALIGN_END_NONE;
			if (SP_ALIGN_CHECK_DEAD(j)
					&& sp_align_dead(pv, mv, SP_ALIGN_DEAD_AT(j)))
				SP_ALIGN_STOP(j);
		}
	}
	if (best > (int)max_a)
		return;
	res->dist = best;
	res->n_ends = n_ends;
	res->end = best_j - 1;
	if (!store)
		return;

	/* traceback from (m, best_j): M before I before D; runs stored reversed */
	i = m;
	j = best_j;
	v = best;
	prev_op = 3;
	run = 0;
	while (i > 0) {
		if (j == 0) {
			op = SP_CIGAR_I;
			i--;
			v--;
		} else {
			SP_GLOBAL const ulong *col = ws + (ulong)(j - 1) * 4u * nw * st;
			int up = v - sp_align_delta(col, st, nw, 0, i);
			int diag = up - (i > 1 ? sp_align_delta(col, st, nw, 2 * nw, i - 1) : 0);
			int cost;
			c = sp_align_wcode(win, woff + j - 1, packed);   /* the read's match bits: 0 for N */
			cost = 1 - (int)((peq[c][(i - 1) >> 6] >> ((i - 1) & 63u)) & 1u);
			if (diag + cost == v) {
				op = SP_CIGAR_M;
				v = diag;
				i--;
				j--;
			} else if (up + 1 == v) {
				op = SP_CIGAR_I;
				v = up;
				i--;
			} else {
				op = SP_CIGAR_D;
				v -= sp_align_delta(col, st, nw, 2 * nw, i);
				j--;
			}
		}
		if (op == prev_op) {
			run++;
		} else {
			if (run && nops < SP_ALIGN_MAX_CIGAR)
				res->cigar[nops++] = run << 4 | prev_op;
			prev_op = op;
			run = 1;
		}
	}
	if (run && nops < SP_ALIGN_MAX_CIGAR)
		res->cigar[nops++] = run << 4 | prev_op;
	for (w = 0; w < nops / 2; w++) {
		uint t = res->cigar[w];
		res->cigar[w] = res->cigar[nops - 1 - w];
		res->cigar[nops - 1 - w] = t;
	}
	res->n_cigar = nops;
	res->start = j;
}

/*
 * The gapped alignment of sp_align_one() for a read of M bases given by its
 * match bits PEQ (sp_align_peq), the limits already checked: RES must be
 * cleared to no hit (sp_align_clear) by the caller.  A caller aligning one
 * read against many windows builds PEQ once.  extend's first pass (ends
 * only, from the packed reference) gets a copy of its own, and so does the
 * device's scoring pass (the same without ends: kernels/align.cl).
 */
SP_FN void sp_align_gapped(const ulong peq[5][SP_ALIGN_WORDS], uint m, SP_GLOBAL const uchar *win,
		ulong woff, uint n, uint max_a, uint flags, uint end_lo, uint end_hi, SP_GLOBAL ulong *ws,
		ulong st, SP_GLOBAL uchar *ends, SP_GLOBAL sp_align_res_t *res)
{
	if (flags == (SP_ALIGN_NOCIGAR | SP_ALIGN_ENDS | SP_ALIGN_PACKED))
		sp_align_gapped_k(peq, m, win, woff, n, max_a, SP_ALIGN_NOCIGAR | SP_ALIGN_ENDS
				| SP_ALIGN_PACKED, end_lo, end_hi, ws, st, ends, res);
	else if (flags == (SP_ALIGN_NOCIGAR | SP_ALIGN_PACKED))   /* the device's scoring pass */
		sp_align_gapped_k(peq, m, win, woff, n, max_a, SP_ALIGN_NOCIGAR | SP_ALIGN_PACKED,
				end_lo, end_hi, ws, st, ends, res);
	else
		sp_align_gapped_k(peq, m, win, woff, n, max_a, flags, end_lo, end_hi, ws, st, ends, res);
}

/*
 * Align READ (M bases) against the N window bases at WIN + WOFF (ASCII, or
 * base offset WOFF into the packed WIN with SP_ALIGN_PACKED) within MAX_A
 * edits as described at the top, the best end among window offsets
 * END_LO..END_HI (END_HI 0: anywhere), writing *RES (and ENDS[0..N) with
 * SP_ALIGN_ENDS).  WS is the traceback workspace (SP_ALIGN_WS_WORDS(n, m)
 * words at stride ST).
 */
SP_FN void sp_align_one(SP_GLOBAL const uchar *read, uint m, SP_GLOBAL const uchar *win,
		ulong woff, uint n, uint max_a, uint flags, uint end_lo, uint end_hi, SP_GLOBAL ulong *ws, ulong st, SP_GLOBAL uchar *ends,
		SP_GLOBAL sp_align_res_t *res)
{
	ulong peq[5][SP_ALIGN_WORDS];

	sp_align_clear(res, SP_ALIGN_NOHIT);
	if (m == 0 || m > SP_ALIGN_MAX_READ || m > 64u * SP_ALIGN_WORDS || n > SP_ALIGN_MAX_WIN
			|| max_a > SP_ALIGN_MAX_A) {
		res->dist = SP_ALIGN_INVALID;
		return;
	}
	if (flags & SP_ALIGN_NOGAPS) {
		sp_align_nogaps(read, m, win, woff, n, max_a, flags, end_lo, end_hi ? end_hi : n, ends, res);
		return;
	}
	sp_align_peq(read, m, peq);
	sp_align_gapped((const SP_PRIVATE ulong (*)[SP_ALIGN_WORDS])peq, m, win, woff, n, max_a, flags, end_lo,
			end_hi, ws, st, ends, res);
}

#endif
