/*
 * align.cl - the alignment kernel: one work item per (read, window) pair,
 * running sp_align_one() of inc_align.h, the same code as the CPU path
 * (common/align.c), so that both write byte-identical result records.
 *
 * A run covers pairs BASE .. BASE+N-1.  The traceback workspace of the run
 * is interleaved so that neighbouring work items touch neighbouring words:
 *
 *     ws[k * N + g]   word k (inc_align.h numbering) of work item g
 *
 * ENDS may be a dummy buffer when FLAGS lacks SP_ALIGN_ENDS; with it, the
 * bytes of a pair's ENDS_STRIDE slot past its window are SP_ALIGN_END_NONE,
 * as on the CPU.
 */
#include "inc_align.h"

__kernel void align(__global const uchar *reads, __global const uchar *wins,
		__global const sp_align_pair_t *pairs, ulong base, ulong n, uint max_a, uint flags,
		__global ulong *ws, __global uchar *ends, ulong ends_stride,
		__global sp_align_res_t *res)
{
	ulong g = get_global_id(0), k, e;
	__global const sp_align_pair_t *p;

	if (g >= n)
		return;
	k = base + g;
	p = pairs + k;
	sp_align_one(reads + p->read_off, p->read_len, wins, p->win_off, p->win_len, max_a, flags,
			p->end_lo, p->end_hi, ws + g, n, (flags & SP_ALIGN_ENDS) ? ends + k * ends_stride : ends, res + k);
	if (flags & SP_ALIGN_ENDS)
		for (e = p->win_len; e < ends_stride; e++)
			ends[k * ends_stride + e] = SP_ALIGN_END_NONE;
}

/*
 * align_ends: extend's first pass kept on the device.  One work item per
 * pair of a run (pairs 0 .. N-1): sp_align_one() with SP_ALIGN_ENDS into
 * the pair's row of FENDS at FOFF[g] (rows packed back to back, each
 * win_len bytes; RES is device scratch, never read back), then its
 * distance into DIST[g]; a pair with an end within the bound takes WIN_LEN
 * bytes of CENDS (an atomic bump of *CNT, so rows land in any order) and
 * copies its row there, COFF[g] its offset; others get COFF[g] = ~0.
 * Only DIST, COFF and the first *CNT bytes of CENDS go back to the host:
 * a few bytes a pair, where the whole rows and records were 250 or more.
 */
__kernel void align_ends(__global const uchar *reads, __global const uchar *wins,
		__global const sp_align_pair_t *pairs, ulong n, uint max_a, uint flags,
		__global ulong *ws, __global const uint *foff, __global uchar *fends,
		__global sp_align_res_t *res, __global int *dist, __global uint *coff,
		__global uchar *cends, __global uint *cnt)
{
	ulong g = get_global_id(0);
	__global const sp_align_pair_t *p;
	__global uchar *row;
	uint e, o;
	int d;

	if (g >= n)
		return;
	p = pairs + g;
	row = fends + foff[g];
	sp_align_one(reads + p->read_off, p->read_len, wins, p->win_off, p->win_len, max_a, flags,
			p->end_lo, p->end_hi, ws, 1, row, res + g);
	d = res[g].dist;
	dist[g] = d;
	if (d < 0) {
		coff[g] = 0xffffffffu;
		return;
	}
	o = atomic_add(cnt, p->win_len);
	coff[g] = o;
	for (e = 0; e < p->win_len; e++)
		cends[o + e] = row[e];
}
