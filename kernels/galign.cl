/*
 * galign.cl - the global alignment kernels (extend --global): one work
 * item a pair, running inc_galign.h's functions, the same code as the CPU
 * path, so both give identical scores and CIGARs.
 *
 * ga_score: the score pass of pairs BASE .. BASE+N-1 (edit distance or
 * linear gaps), one work item a pair; pairs whose query has WG_LEN bases or
 * more are left to ga_score_wg.  The slice boundary row of each pair is interleaved so that
 * neighbouring work items touch neighbouring bytes:
 *
 *     bnd[j * N + g]   column j's boundary byte of work item g
 *
 * ga_trace: the banded fill and the walk of pairs BASE .. BASE+N-1 (each
 * with its score); work item g keeps its band row (W ints) and then its
 * bits at WORK + WO[g] (32-bit words), and writes its CIGAR runs at
 * RUNS + RO[k] (RO[k+1] - RO[k] of room) and its counts at RES[k].
 */
#include "inc_galign.h"

__kernel void ga_score(__global const uchar *codes, __global const sp_ga_pair_t *pairs,
		ulong base, ulong n, int edit, int ma, int mi, int g, __global uchar *bnd,
		__global int *scores, uint wg_len)
{
	ulong gid = get_global_id(0);
	__global const sp_ga_pair_t *p;
	__global const uchar *q, *t;

	if (gid >= n)
		return;
	p = pairs + base + gid;
	if (p->q_len >= wg_len)
		return;
	q = codes + p->q_off;
	t = codes + p->t_off;
	scores[base + gid] = edit ? sp_ga_score_edit(q, p->q_len, t, p->t_len, bnd + gid, n)
		: sp_ga_score_lin(q, p->q_len, t, p->t_len, ma, mi, g, bnd + gid, n);
}

/*
 * ga_score_lin4 and ga_score_lin4m: the score pass with linear gaps of
 * pairs BASE .. BASE+N-1, one work item a pair (those whose query has
 * WG_LEN bases or more are left to ga_score_wg), four columns a step: the
 * slice's boundary row is kept as words of four column bytes, interleaved
 * so that a warp's words lie side by side,
 *
 *     bndw[w * N + g]    columns 4w .. 4w+3 of work item g (byte c: 4w+c)
 *
 * and the next step's word and target bases are loaded before this step's
 * four columns are computed, so that their latency hides behind 128 cells
 * (and the four columns' cells, a wavefront apart, give the scheduler
 * independent work).  The cells are those of sp_ga_score_lin, in the same
 * order within each column: the scores are the same.
 *
 * Both kernels are ga_lin4 with a constant MASKS, which the compiler folds
 * away: 0 (ga_score_lin4) holds the query slice as a code a row, 1
 * (ga_score_lin4m, SEEDPIPE_GALIGN_KERNEL=2) as four match masks (bit r of
 * PQ[c]: row r is base c), 28 registers fewer.
 */
SP_FN uint ga_t4(__global const uchar *t, uint j)
{
	return (uint)t[j] | (uint)t[j + 1] << 8 | (uint)t[j + 2] << 16 | (uint)t[j + 3] << 24;
}

SP_FN uint ga_pq(const uint *pq, uint tc)
{
	return tc == 0 ? pq[0] : tc == 1 ? pq[1] : tc == 2 ? pq[2] : tc == 3 ? pq[3] : 0u;
}

/* sp_ga_lin_col with the slice's match bits EQM for the column's base */
SP_FN uint ga_lin_colm(uint *e, uint eqm, uint f, uint sm, uint sx)
{
	uint r;

	SP_GA_UNROLL
	for (r = 0; r < SP_GA_SLICE; r++) {
		uint s = (eqm >> r) & 1u ? sm : sx;
		uint z = sp_ga_umax(s, sp_ga_umax(f, e[r]));
		uint en = z - f;

		f = z - e[r];
		e[r] = en;
	}
	return f;
}

/* one column against target code TC: by the codes QC or the masks PQ */
SP_FN uint ga_col4(uint *e, const uint *qc, const uint *pq, uint tc, uint f, uint sm, uint sx,
		int masks)
{
	return masks ? ga_lin_colm(e, ga_pq(pq, tc), f, sm, sx) : sp_ga_lin_col(e, qc, tc, f, sm, sx);
}

SP_FN void ga_lin4(__global const uchar *codes, __global const sp_ga_pair_t *pairs,
		ulong base, ulong n, int ma, int mi, int g, __global uint *bndw, __global int *scores,
		uint wg_len, int masks)
{
	ulong gid = get_global_id(0);
	__global const sp_ga_pair_t *p;
	__global const uchar *q, *t;
	__global uint *bw;
	uint m, nt, nw, rem, r0, r, w, c;
	uint sm = (uint)(ma - 2 * g), sx = mi - 2 * g > 0 ? (uint)(mi - 2 * g) : 0u;
	long sum = 0;

	if (gid >= n)
		return;
	p = pairs + base + gid;
	m = p->q_len;
	nt = p->t_len;
	if (m >= wg_len)
		return;
	if (m == 0 || nt == 0) {
		scores[base + gid] = g * (int)(m + nt);
		return;
	}
	q = codes + p->q_off;
	t = codes + p->t_off;
	bw = bndw + gid;
	nw = nt >> 2;
	rem = nt & 3u;
	for (r0 = 0; r0 < m; r0 += SP_GA_SLICE) {
		uint rows = m - r0 < SP_GA_SLICE ? m - r0 : SP_GA_SLICE;
		uint e[SP_GA_SLICE], qc[SP_GA_SLICE], pq[4] = { 0, 0, 0, 0 }, fw, tw;

		SP_GA_UNROLL
		for (r = 0; r < SP_GA_SLICE; r++) {
			e[r] = 0;
			if (!masks)
				qc[r] = r < rows && q[r0 + r] < 4u ? q[r0 + r] : 6u;
		}
		if (masks)
			for (r = 0; r < rows; r++) {
				c = q[r0 + r];
				if (c < 4u)
					pq[c] |= 1u << r;
			}
		fw = nw && r0 ? bw[0] : 0u;
		tw = nw ? ga_t4(t, 0) : 0u;
		for (w = 0; w < nw; w++) {
			uint fn = 0, tn = 0, o0, o1, o2, o3;

			if (w + 1 < nw) {
				fn = r0 ? bw[(ulong)(w + 1) * n] : 0u;
				tn = ga_t4(t, 4 * (w + 1));
			}
			o0 = ga_col4(e, qc, pq, tw & 255u, fw & 255u, sm, sx, masks);
			o1 = ga_col4(e, qc, pq, (tw >> 8) & 255u, (fw >> 8) & 255u, sm, sx, masks);
			o2 = ga_col4(e, qc, pq, (tw >> 16) & 255u, (fw >> 16) & 255u, sm, sx, masks);
			o3 = ga_col4(e, qc, pq, tw >> 24, fw >> 24, sm, sx, masks);
			bw[(ulong)w * n] = o0 | o1 << 8 | o2 << 16 | o3 << 24;
			fw = fn;
			tw = tn;
		}
		if (rem) {
			uint fr = r0 ? bw[(ulong)nw * n] : 0u, out = 0;

			for (c = 0; c < rem; c++)
				out |= ga_col4(e, qc, pq, t[4 * nw + c], (fr >> (8 * c)) & 255u, sm, sx, masks)
					<< (8 * c);
			bw[(ulong)nw * n] = out;
		}
		SP_GA_UNROLL
		for (r = 0; r < SP_GA_SLICE; r++)
			if (r < rows)
				sum += e[r];
	}
	scores[base + gid] = g * (int)(m + nt) + (int)sum;
}

__kernel void ga_score_lin4(__global const uchar *codes, __global const sp_ga_pair_t *pairs,
		ulong base, ulong n, int ma, int mi, int g, __global uint *bndw, __global int *scores,
		uint wg_len)
{
	ga_lin4(codes, pairs, base, n, ma, mi, g, bndw, scores, wg_len, 0);
}

__kernel void ga_score_lin4m(__global const uchar *codes, __global const sp_ga_pair_t *pairs,
		ulong base, ulong n, int ma, int mi, int g, __global uint *bndw, __global int *scores,
		uint wg_len)
{
	ga_lin4(codes, pairs, base, n, ma, mi, g, bndw, scores, wg_len, 1);
}

__kernel void ga_trace(__global const uchar *codes, __global const sp_ga_pair_t *pairs,
		__global const int *scores, ulong base, ulong n, int ma, int mi, int g,
		__global const ulong *wo, __global uint *work, __global const ulong *ro,
		__global uint *runs, __global sp_ga_res_t *res)
{
	ulong gid = get_global_id(0), k;
	__global const sp_ga_pair_t *p;
	__global const uchar *q, *t;
	__global int *row;
	int dlo, h;
	uint w;

	if (gid >= n)
		return;
	k = base + gid;
	p = pairs + k;
	q = codes + p->q_off;
	t = codes + p->t_off;
	sp_ga_band(p->q_len, p->t_len, ma, g, scores[k], &dlo, &w);
	row = (__global int *)(work + wo[gid]);
	h = sp_ga_fill(q, p->q_len, t, p->t_len, ma, mi, g, dlo, w, row, work + wo[gid] + w);
	if (h != scores[k]) {
		res[k].status = SP_GA_ERR_SCORE;
		res[k].matches = res[k].mismatches = res[k].ins = res[k].del = res[k].n_runs = 0;
		return;
	}
	sp_ga_walk(q, p->q_len, t, p->t_len, dlo, w, work + wo[gid] + w, 0, 0, runs + ro[k],
			(uint)(ro[k + 1] - ro[k]), res + k);
}

/*
 * ga_score_wg: the score pass of pair WIDX[BASE + group] with one work
 * group, for long queries: work item s keeps the rows of slice s (32 rows,
 * 64 in edit mode) and at step k works on column k - s, so that the slices
 * form a pipeline down the matrix; each column's boundary value goes from
 * item s to item s+1 through local memory (LF, two rows of the group's size,
 * one barrier a step).  A query longer than the group's slices is done in
 * passes, the last slice's boundary row kept in BND + group * BSTRIDE (one
 * byte a target base).  The score is that of ga_score (the same column
 * steps of inc_galign.h).
 */
__kernel void ga_score_wg(__global const uchar *codes, __global const sp_ga_pair_t *pairs,
		__global const uint *widx, ulong base, int edit, int ma, int mi, int g,
		__global uchar *bnd, ulong bstride, __global int *scores, __local uint *lf,
		__local long *lsum)
{
	uint grp = get_group_id(0), lid = get_local_id(0), ls = get_local_size(0);
	uint k = widx[base + grp];
	__global const sp_ga_pair_t *p = pairs + k;
	__global const uchar *q = codes + p->q_off, *t = codes + p->t_off;
	__global uchar *bd = bnd + (ulong)grp * bstride;
	uint m = p->q_len, n = p->t_len, srows = edit ? 64u : SP_GA_SLICE;
	uint sm = (uint)(ma - 2 * g), sx = mi - 2 * g > 0 ? (uint)(mi - 2 * g) : 0u;
	ulong span = (ulong)ls * srows, pass, step;
	long sum = 0;
	uint r;

	/* no return before a barrier: an empty sequence just skips the passes */
	for (pass = 0; n > 0 && pass < m; pass += span) {
		ulong r0 = pass + (ulong)lid * srows;
		uint rows = r0 < m ? (m - r0 < srows ? (uint)(m - r0) : srows) : 0u;
		uint e[SP_GA_SLICE], qc[SP_GA_SLICE];
		ulong peq0 = 0, peq1 = 0, peq2 = 0, peq3 = 0, pv = ~(ulong)0, mv = 0;
		ulong hbit = rows ? (ulong)1 << (rows - 1) : 0;
		int owner = r0 <= m - 1 && m - 1 < r0 + rows;   /* holds the last row (edit) */

		SP_GA_UNROLL
		for (r = 0; r < SP_GA_SLICE; r++) {
			e[r] = 0;
			qc[r] = !edit && r < rows && q[r0 + r] < 4u ? q[r0 + r] : 6u;
		}
		if (edit && rows)
			sp_ga_peq(q + r0, rows, &peq0, &peq1, &peq2, &peq3);
		for (step = 0; step < (ulong)n + ls - 1; step++) {
			long j = (long)step - (long)lid;
			uint fin, fout;

			if (lid == 0)
				fin = j >= 0 && j < n ? (pass == 0 ? (edit ? 2u : 0u) : bd[j]) : 0u;
			else
				fin = lf[((step + 1) & 1) * ls + lid - 1];
			fout = fin;
			if (j >= 0 && j < n && rows) {
				uint tc = t[j];
				if (edit) {
					ulong eq = tc == 0 ? peq0 : tc == 1 ? peq1 : tc == 2 ? peq2 : tc == 3 ? peq3 : 0;
					int hout = sp_ga_edit_col(&pv, &mv, eq, (int)fin - 1, hbit);
					fout = (uint)(hout + 1);
					if (owner)
						sum += hout;
				} else {
					fout = sp_ga_lin_col(e, qc, tc, fin, sm, sx);
				}
			}
			lf[(step & 1) * ls + lid] = fout;
			if (lid == ls - 1 && j >= 0 && j < n)
				bd[j] = (uchar)fout;
			barrier(CLK_LOCAL_MEM_FENCE);
		}
		if (!edit) {
			SP_GA_UNROLL
			for (r = 0; r < SP_GA_SLICE; r++)
				if (r < rows)
					sum += e[r];
		}
		barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
	}
	lsum[lid] = sum;
	barrier(CLK_LOCAL_MEM_FENCE);
	if (lid == 0) {
		long tot = 0;
		for (r = 0; r < ls; r++)
			tot += lsum[r];
		if (m == 0 || n == 0)
			scores[k] = (edit ? -1 : g) * (int)(m + n);
		else
			scores[k] = edit ? -(int)((long)m + tot) : g * (int)(m + n) + (int)tot;
	}
}
