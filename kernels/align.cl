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
