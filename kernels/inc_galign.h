/*
 * inc_galign.h - global (Needleman-Wunsch) alignment of whole sequences
 * against whole sequences, shared by the CPU path (common/galign.c) and the
 * OpenCL kernels (kernels/galign.cl): a score-only pass, and for the pairs
 * that pass it a banded fill that stores a few bits per cell and a walk
 * that turns them into a CIGAR.
 *
 * Problem: query Q[0..m) against target T[0..n), both aligned whole, end
 * gaps charged.  H[i][j] = best score of Q[0..i) against T[0..j):
 *
 *     H[0][0] = 0, H[i][0] = i g, H[0][j] = j g
 *     H[i][j] = max(H[i-1][j-1] + s(Q[i-1], T[j-1]), H[i-1][j] + g, H[i][j-1] + g)
 *
 * s(a, b) = MATCH when a and b are the same base of ACGT, else MISMATCH
 * (N, code 4, matches nothing, not even N).  Edit distance is the score
 * set 0, -1, -1 (distance = -H[m][n]).  Limits (checked by the callers):
 * MATCH > MISMATCH, GAP < 0, MATCH >= 0, MATCH - 2 GAP <= 255, every score
 * within -255..255.
 *
 * Sequences are codes (A 0, C 1, G 2, T 3, other 4), one byte each.
 *
 * Score pass, linear gaps (sp_ga_score_lin): difference recurrence.  With
 * a = H[i-1][j-1], the vertical difference E(i,j) = H[i][j] - H[i-1][j] - g
 * and the horizontal one F(i,j) = H[i][j] - H[i][j-1] - g lie in
 * 0 .. MATCH - 2 GAP, and
 *
 *     Z = max(S', F(i-1,j), E(i,j-1)),   S' = max(s - 2g, 0)
 *     E(i,j) = Z - F(i-1,j),             F(i,j) = Z - E(i,j-1)
 *
 * (H[i][j] = a + 2g + Z; S' clamps a mismatch worse than two gaps, which
 * never wins).  So every cell is two maxima and two subtractions on bytes,
 * whatever the sequence lengths, and H[m][n] = (m + n) g + sum_i E(i,n).
 * Rows are done SP_GA_SLICE at a time (their E in registers) across all
 * columns; BND (one byte a column) carries F of the slice's last row down
 * to the next slice, as Truong et al. keep one boundary row per slice.
 *
 * Score pass, edit distance (sp_ga_score_edit): Myers' bit-vector
 * algorithm in Hyyro's block form, the query as pattern, 64 rows a slice,
 * the horizontal delta at the slice's last row (plus 1) carried in BND.
 * The top row is charged (global): the first slice's horizontal input is
 * +1 in every column.
 *
 * Band: the optimal score S fixes how many gap columns an optimal path can
 * have: a path with G gap columns scores at most MATCH (m + n - G) / 2 + G g,
 * so G <= GMAX = floor((MATCH (m + n) - 2 S) / (MATCH - 2 g)), and a path
 * through cell (i, j) has at least |d| + |n - m - d| gap columns (d = j - i).
 * Every optimal path thus lies within the diagonals d of sp_ga_band(), and
 * the fill computes only those cells (others count as minus infinity):
 * on every cell of an optimal path the banded H equals the full one, and so
 * do the comparisons the walk makes there.
 *
 * Fill (sp_ga_fill): for every band cell with i, j >= 1 four bits,
 * SP_GA_BD (the diagonal move gives H), SP_GA_BV (the vertical move,
 * H[i-1][j] + g, gives H), SP_GA_BH (the horizontal move gives H), packed
 * 8 cells to a 32-bit word, cell (i, k = j - i - dlo) at nibble (i-1) W + k.
 * ROW holds W ints (one band row).  Returns H[m][n] as banded.
 *
 * Walk (sp_ga_walk), the tie rule (parasail's NW traceback, found by
 * comparing its CIGARs on small cases, for linear gaps): from (m, n) in
 * state H:
 *   - row 0: the remaining target bases are deletions (D); column 0: the
 *     remaining query bases are insertions (I);
 *   - state H at (i, j): the diagonal if it gives H[i][j] ('=' or 'X'),
 *     else state V if the vertical move gives it, else state E;
 *   - state V: take the vertical move (I) to (i-1, j); stay in V while that
 *     move also gives H[i-1][j] (i-1 >= 1), else back to state H;
 *   - state E: likewise with the horizontal move (D) and H[i][j-1].
 * So a gap, once entered, is extended as long as extending it is optimal,
 * even where a diagonal move would be optimal too.
 *
 * The CIGAR is written from its end: RUNS[0] is the last run, each run
 * len << 4 | op with BAM op codes (I 1, D 2, '=' 7, 'X' 8).
 */
#ifndef SP_INC_GALIGN_H
#define SP_INC_GALIGN_H

#include "inc_common.h"

#define SP_GA_SLICE 32           /* rows of a slice in the linear score pass */
#ifdef __OPENCL_VERSION__        /* the slice's rows in registers: unroll its loop */
#define SP_GA_UNROLL _Pragma("unroll")
#else
#define SP_GA_UNROLL _Pragma("GCC unroll 32")
#endif
#define SP_GA_MAX_LEN (1u << 20) /* longest sequence */
#define SP_GA_NEG (-(1 << 30))   /* minus infinity of the fill */

#define SP_GA_BD 1u
#define SP_GA_BV 2u
#define SP_GA_BH 4u

#define SP_GA_OP_I 1u
#define SP_GA_OP_D 2u
#define SP_GA_OP_EQ 7u
#define SP_GA_OP_X 8u

#define SP_GA_OK 0
#define SP_GA_ERR_SCORE 1        /* the fill's H[m][n] is not the score pass's */
#define SP_GA_ERR_WALK 2         /* the walk left the band or found no move */
#define SP_GA_ERR_CAP 3          /* more CIGAR runs than room */

/* One pair: offsets of the query and the target in the code buffer. */
typedef struct {
	ulong q_off;
	ulong t_off;
	uint q_len;
	uint t_len;
} sp_ga_pair_t;

/* The traceback's result (24 bytes in C and OpenCL C). */
typedef struct {
	int status;                  /* SP_GA_OK or SP_GA_ERR_* */
	uint matches, mismatches;
	uint ins, del;               /* I columns (query base only), D columns (target base only) */
	uint n_runs;                 /* CIGAR runs written to RUNS */
} sp_ga_res_t;

SP_FN uint sp_ga_umax(uint a, uint b)
{
	return a > b ? a : b;
}

SP_FN int sp_ga_imax(int a, int b)
{
	return a > b ? a : b;
}

/* Whether query code A and target code B match (N matches nothing). */
SP_FN int sp_ga_eq(uint a, uint b)
{
	return a == b && a < 4u;
}

/*
 * One column of a slice, linear gaps: E[r] of the slice's rows (QC their
 * query codes, N and padding as 6) against target code TC, F the input from
 * the row above the slice; returns F of the slice's last row.
 */
SP_FN uint sp_ga_lin_col(uint *e, const uint *qc, uint tc, uint f, uint sm, uint sx)
{
	uint r;

	SP_GA_UNROLL
	for (r = 0; r < SP_GA_SLICE; r++) {
		uint s = qc[r] == tc ? sm : sx;
		uint z = sp_ga_umax(s, sp_ga_umax(f, e[r]));
		uint en = z - f;

		f = z - e[r];
		e[r] = en;
	}
	return f;
}

/*
 * One column of a 64-row slice, edit distance (Myers, Hyyro's block step):
 * PV, MV the slice's vertical deltas, EQ its match bits for the column's
 * target base, HIN the horizontal delta into its top row; returns the one
 * out of row HBIT (the slice's last).
 */
SP_FN int sp_ga_edit_col(ulong *pv, ulong *mv, ulong eq, int hin, ulong hbit)
{
	ulong xv = eq | *mv, xh, ph, mh;
	int hout;

	if (hin < 0)
		eq |= 1;
	xh = (((eq & *pv) + *pv) ^ *pv) | eq;
	ph = *mv | ~(xh | *pv);
	mh = *pv & xh;
	hout = (ph & hbit) ? 1 : (mh & hbit) ? -1 : 0;
	ph <<= 1;
	mh <<= 1;
	if (hin < 0)
		mh |= 1;
	else if (hin > 0)
		ph |= 1;
	*pv = mh | ~(xv | ph);
	*mv = ph & xv;
	return hout;
}

/* Match bits of the ROWS (<= 64) query codes Q for each target code. */
SP_FN void sp_ga_peq(SP_GLOBAL const uchar *q, uint rows, ulong *p0, ulong *p1, ulong *p2,
		ulong *p3)
{
	uint r;

	*p0 = *p1 = *p2 = *p3 = 0;
	for (r = 0; r < rows; r++) {
		uint c = q[r];
		ulong b = (ulong)1 << r;
		if (c == 0) *p0 |= b;
		else if (c == 1) *p1 |= b;
		else if (c == 2) *p2 |= b;
		else if (c == 3) *p3 |= b;
	}
}

/* Score pass with linear gaps (see the top); BND holds N bytes at stride ST. */
SP_FN int sp_ga_score_lin(SP_GLOBAL const uchar *q, uint m, SP_GLOBAL const uchar *t, uint n,
		int ma, int mi, int g, SP_GLOBAL uchar *bnd, ulong st)
{
	uint sm = (uint)(ma - 2 * g), sx = mi - 2 * g > 0 ? (uint)(mi - 2 * g) : 0u;
	uint e[SP_GA_SLICE], qc[SP_GA_SLICE], r0, r, j;
	long sum = 0;

	if (m == 0 || n == 0)
		return g * (int)(m + n);
	for (j = 0; j < n; j++)
		bnd[j * st] = 0;
	for (r0 = 0; r0 < m; r0 += SP_GA_SLICE) {
		uint rows = m - r0 < SP_GA_SLICE ? m - r0 : SP_GA_SLICE;

		/* every loop over the slice unrolled: the arrays stay in registers on a GPU */
		SP_GA_UNROLL
		for (r = 0; r < SP_GA_SLICE; r++) {
			e[r] = 0;
			qc[r] = r < rows && q[r0 + r] < 4u ? q[r0 + r] : 6u;   /* N and padding rows match nothing */
		}
		for (j = 0; j < n; j++)
			bnd[j * st] = (uchar)sp_ga_lin_col(e, qc, t[j], bnd[j * st], sm, sx);
		SP_GA_UNROLL
		for (r = 0; r < SP_GA_SLICE; r++)
			if (r < rows)
				sum += e[r];
	}
	return g * (int)(m + n) + (int)sum;
}

/* Score pass for edit distance: minus the distance (see the top). */
SP_FN int sp_ga_score_edit(SP_GLOBAL const uchar *q, uint m, SP_GLOBAL const uchar *t, uint n,
		SP_GLOBAL uchar *bnd, ulong st)
{
	uint w0, j;
	int sumh = 0;

	if (m == 0 || n == 0)
		return -(int)(m + n);
	for (j = 0; j < n; j++)
		bnd[j * st] = 2;   /* horizontal input +1: the top row is charged */
	for (w0 = 0; w0 < m; w0 += 64) {
		uint rows = m - w0 < 64 ? m - w0 : 64;
		ulong peq0, peq1, peq2, peq3, pv = ~(ulong)0, mv = 0;
		ulong hbit = (ulong)1 << (rows - 1);

		sp_ga_peq(q + w0, rows, &peq0, &peq1, &peq2, &peq3);
		sumh = 0;
		for (j = 0; j < n; j++) {
			uint tc = t[j];
			ulong eq = tc == 0 ? peq0 : tc == 1 ? peq1 : tc == 2 ? peq2 : tc == 3 ? peq3 : 0;
			int hout = sp_ga_edit_col(&pv, &mv, eq, (int)bnd[j * st] - 1, hbit);

			bnd[j * st] = (uchar)(hout + 1);
			sumh += hout;
		}
	}
	return -((int)m + sumh);   /* H[m][n] = -(D[m][0] + sum of the last row's deltas) */
}

/*
 * The band of the optimal paths of a pair with score S: diagonals d = j - i
 * from *DLO over *W diagonals (see the top).  MA, G: the match and gap scores.
 */
SP_FN void sp_ga_band(uint m, uint n, int ma, int g, int s, int *dlo, uint *w)
{
	long num = (long)ma * (long)(m + n) - 2 * (long)s;
	long gmax = num < 0 ? 0 : num / (long)(ma - 2 * g);
	long delta = (long)n - (long)m, ad = delta < 0 ? -delta : delta;
	long hw = gmax > ad ? (gmax - ad) / 2 : 0;
	long lo = (delta < 0 ? delta : 0) - hw, hi = (delta > 0 ? delta : 0) + hw;

	if (lo < -(long)m)
		lo = -(long)m;
	if (hi > (long)n)
		hi = (long)n;
	*dlo = (int)lo;
	*w = (uint)(hi - lo + 1);
}

/* 32-bit words of bits a fill of M rows and a band of W diagonals needs. */
SP_FN ulong sp_ga_bits_words(uint m, uint w)
{
	return ((ulong)m * w + 7u) / 8u;
}

/* The banded fill (see the top); returns H[m][n] (SP_GA_NEG if outside the band). */
SP_FN int sp_ga_fill(SP_GLOBAL const uchar *q, uint m, SP_GLOBAL const uchar *t, uint n,
		int ma, int mi, int g, int dlo, uint w, SP_GLOBAL int *row, SP_GLOBAL uint *bits)
{
	uint i, k, word = 0;
	ulong idx = 0;
	int res;

	for (k = 0; k < w; k++) {
		int j = dlo + (int)k;
		row[k] = j >= 0 && j <= (int)n ? g * j : SP_GA_NEG;
	}
	for (i = 1; i <= m; i++) {
		int left = SP_GA_NEG, j = (int)i + dlo;
		uint qc = q[i - 1];

		for (k = 0; k < w; k++, j++, idx++) {
			int diag = row[k], top = k + 1 < w ? row[k + 1] : SP_GA_NEG, h;
			uint b = 0;

			if (j < 0 || j > (int)n) {
				h = SP_GA_NEG;
			} else if (j == 0) {
				h = g * (int)i;
			} else {
				int a = diag + (sp_ga_eq(qc, t[j - 1]) ? ma : mi), v = top + g, z = left + g;

				h = sp_ga_imax(a, sp_ga_imax(v, z));
				b = (h == a ? SP_GA_BD : 0u) | (h == v ? SP_GA_BV : 0u) | (h == z ? SP_GA_BH : 0u);
			}
			row[k] = h;
			left = h;
			word |= b << ((idx & 7u) * 4u);
			if ((idx & 7u) == 7u) {
				bits[idx >> 3] = word;
				word = 0;
			}
		}
	}
	if (idx & 7u)
		bits[idx >> 3] = word;
	k = (uint)((int)n - (int)m - dlo);
	res = k < w ? row[k] : SP_GA_NEG;
	return res;
}

/*
 * The bits of cell (I, J) (I, J >= 1), 0 outside the band.  LANES 0: the
 * nibble layout of sp_ga_fill(); otherwise the CPU vector fill's layout of
 * several pairs at once: cell idx = (i-1) W + k holds three masks of LANES
 * bits (a multiple of 8) for D, V and H, starting at byte 3 idx LANES / 8,
 * and this pair's bit in each is bit LANE.
 */
SP_FN uint sp_ga_bits_at(SP_GLOBAL const uint *bits, uint i, uint j, int dlo, uint w, uint lanes,
		uint lane)
{
	int k = (int)j - (int)i - dlo;
	ulong idx;

	if (k < 0 || k >= (int)w)
		return 0;
	idx = (ulong)(i - 1) * w + (uint)k;
	if (lanes) {
		SP_GLOBAL const uchar *b = (SP_GLOBAL const uchar *)bits + idx * 3u * (lanes >> 3) + (lane >> 3);
		uint sh = lane & 7u;

		return ((b[0] >> sh) & 1u) * SP_GA_BD | ((b[lanes >> 3] >> sh) & 1u) * SP_GA_BV
			| ((b[2u * (lanes >> 3)] >> sh) & 1u) * SP_GA_BH;
	}
	return (bits[idx >> 3] >> ((idx & 7u) * 4u)) & 15u;
}

/* Append LEN of OP to the runs being written backwards; 0, or -1 when out of room. */
SP_FN int sp_ga_push(SP_GLOBAL uint *runs, uint cap, uint *nr, uint *op, uint *len, uint nop)
{
	if (*len && *op == nop) {
		(*len)++;
		return 0;
	}
	if (*len) {
		if (*nr >= cap)
			return -1;
		runs[*nr] = *len << 4 | *op;
		(*nr)++;
	}
	*op = nop;
	*len = 1;
	return 0;
}

/*
 * The walk (the tie rule at the top): the CIGAR into RUNS (CAP runs), counts
 * into RES; BITS in the layout of LANES and LANE (sp_ga_bits_at).
 */
SP_FN void sp_ga_walk(SP_GLOBAL const uchar *q, uint m, SP_GLOBAL const uchar *t, uint n,
		int dlo, uint w, SP_GLOBAL const uint *bits, uint lanes, uint lane, SP_GLOBAL uint *runs,
		uint cap, SP_GLOBAL sp_ga_res_t *res)
{
	uint i = m, j = n, state = 0, op = 0, len = 0, nr = 0;
	uint nm = 0, nx = 0, ni = 0, nd = 0;
	int st = SP_GA_OK, full = 0;

	while (i > 0 || j > 0) {
		uint nop;

		if (i == 0) {
			nop = SP_GA_OP_D;
			j--;
		} else if (j == 0) {
			nop = SP_GA_OP_I;
			i--;
		} else {
			if (state == 0) {
				uint b = sp_ga_bits_at(bits, i, j, dlo, w, lanes, lane);

				if (b & SP_GA_BD) {
					nop = sp_ga_eq(q[i - 1], t[j - 1]) ? SP_GA_OP_EQ : SP_GA_OP_X;
					i--;
					j--;
					full |= sp_ga_push(runs, cap, &nr, &op, &len, nop);
					if (nop == SP_GA_OP_EQ)
						nm++;
					else
						nx++;
					continue;
				}
				if (!(b & (SP_GA_BV | SP_GA_BH))) {
					st = SP_GA_ERR_WALK;
					break;
				}
				state = (b & SP_GA_BV) ? 1u : 2u;
			}
			if (state == 1) {
				nop = SP_GA_OP_I;
				i--;
				if (!(i >= 1 && (sp_ga_bits_at(bits, i, j, dlo, w, lanes, lane) & SP_GA_BV)))
					state = 0;
			} else {
				nop = SP_GA_OP_D;
				j--;
				if (!(j >= 1 && (sp_ga_bits_at(bits, i, j, dlo, w, lanes, lane) & SP_GA_BH)))
					state = 0;
			}
		}
		full |= sp_ga_push(runs, cap, &nr, &op, &len, nop);
		if (nop == SP_GA_OP_I)
			ni++;
		else
			nd++;
	}
	if (len) {
		if (nr < cap)
			runs[nr++] = len << 4 | op;
		else
			full = -1;
	}
	if (full && st == SP_GA_OK)
		st = SP_GA_ERR_CAP;
	res->status = st;
	res->matches = nm;
	res->mismatches = nx;
	res->ins = ni;
	res->del = nd;
	res->n_runs = nr;
}

/*
 * CIGAR runs a pair with score S can need at most (for sizing RUNS): an
 * optimal alignment falls short of MATCH (m + n) / 2 by MATCH - MISMATCH a
 * mismatch and MATCH / 2 - GAP a gap column, and has at most twice as many
 * runs as such columns, plus one.
 */
SP_FN uint sp_ga_runs_cap(uint m, uint n, int ma, int mi, int g, int s)
{
	long def2 = (long)ma * (long)(m + n) - 2 * (long)s;   /* twice the shortfall */
	long c1 = 2 * (long)(ma - mi), c2 = (long)(ma - 2 * g), c = c1 < c2 ? c1 : c2;
	long ops = def2 < 0 ? 0 : def2 / c, cap = 2 * ops + 1;

	return cap > (long)(m + n) ? (m + n > 0 ? m + n : 1u) : (uint)cap;
}

#endif
