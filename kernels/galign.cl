/*
 * galign.cl - the global alignment kernels (extend --global): one work
 * item a pair, running inc_galign.h's functions, the same code as the CPU
 * path, so both give identical scores and CIGARs.
 *
 * ga_score: the score pass of pairs BASE .. BASE+N-1 (edit distance or
 * linear gaps).  The slice boundary row of each pair is interleaved so that
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
		__global int *scores)
{
	ulong gid = get_global_id(0);
	__global const sp_ga_pair_t *p;
	__global const uchar *q, *t;

	if (gid >= n)
		return;
	p = pairs + base + gid;
	q = codes + p->q_off;
	t = codes + p->t_off;
	scores[base + gid] = edit ? sp_ga_score_edit(q, p->q_len, t, p->t_len, bnd + gid, n)
		: sp_ga_score_lin(q, p->q_len, t, p->t_len, ma, mi, g, bnd + gid, n);
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
