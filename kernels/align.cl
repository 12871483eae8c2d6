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
 * window of a run (0 .. N-1), given compactly, 16 bytes:
 *
 *     wp[2g]      its first base in the packed reference REF
 *     wp[2g + 1]  its length << 32 | rs, rs = 2 read + strand
 *
 * the read as aligned at READS + ROFF[rs], ROFF[rs + 1] - ROFF[rs] bases.
 * sp_align_one() with SP_ALIGN_ENDS writes the ends into the window's row
 * of FENDS (at g * STRIDE; RES is scratch: neither goes back to the host).
 * A window with an end within the bound takes HIT_WORDS words of HITS
 * (window, row offset, distance) at an atomic count CNT[1], and copies its
 * row to CENDS at an atomic count of bytes CNT[0] (so hits land in any
 * order).  Only CNT, the hits and the rows they name go back.
 */
#define HIT_WORDS 3

__kernel void align_ends(__global const uchar *reads, __global const uint *roff,
		__global const uchar *ref, __global const ulong *wp, ulong n, uint max_a, uint flags,
		__global ulong *ws, ulong stride, __global uchar *fends, __global sp_align_res_t *res,
		__global uint *hits, __global uchar *cends, __global uint *cnt)
{
	ulong g = get_global_id(0), w;
	__global uchar *row;
	uint e, o, h, rs, len, ro;
	int d;

	if (g >= n)
		return;
	w = wp[2 * g + 1];
	rs = (uint)w;
	len = (uint)(w >> 32);
	ro = roff[rs];
	row = fends + g * stride;
	sp_align_one(reads + ro, roff[rs + 1] - ro, ref, wp[2 * g], len, max_a, flags, 0, 0, ws, 1,
			row, res + g);
	d = res[g].dist;
	if (d < 0)
		return;
	o = atomic_add(cnt, len);
	h = atomic_inc(cnt + 1);
	hits[HIT_WORDS * h] = (uint)g;
	hits[HIT_WORDS * h + 1] = o;
	hits[HIT_WORDS * h + 2] = (uint)d;
	for (e = 0; e < len; e++)
		cends[o + e] = row[e];
}

/*
 * The same first pass scored first (Truong et al.: score every pair, trace
 * back only the survivors): align_score aligns each window without ends
 * rows (the distance alone decides whether the window has an end within
 * the bound) and gives a window with one its hit entry and its row's room
 * as align_ends does; align_rows then aligns only those windows again with
 * SP_ALIGN_ENDS, straight into their rows of CENDS.  It runs N work items
 * (the host does not wait for the count), those past CNT[1] idle.  No
 * window's full row is written, only the rows that go back.
 */
__kernel void align_score(__global const uchar *reads, __global const uint *roff,
		__global const uchar *ref, __global const ulong *wp, ulong n, uint max_a, uint flags,
		__global ulong *ws, __global sp_align_res_t *res, __global uint *hits,
		__global uint *cnt)
{
	ulong g = get_global_id(0), w;
	uint o, h, rs, len, ro;
	int d;

	if (g >= n)
		return;
	w = wp[2 * g + 1];
	rs = (uint)w;
	len = (uint)(w >> 32);
	ro = roff[rs];
	sp_align_one(reads + ro, roff[rs + 1] - ro, ref, wp[2 * g], len, max_a,
			flags & ~SP_ALIGN_ENDS, 0, 0, ws, 1, 0, res + g);
	d = res[g].dist;
	if (d < 0)
		return;
	o = atomic_add(cnt, len);
	h = atomic_inc(cnt + 1);
	hits[HIT_WORDS * h] = (uint)g;
	hits[HIT_WORDS * h + 1] = o;
	hits[HIT_WORDS * h + 2] = (uint)d;
}

__kernel void align_rows(__global const uchar *reads, __global const uint *roff,
		__global const uchar *ref, __global const ulong *wp, ulong n, uint max_a, uint flags,
		__global ulong *ws, __global sp_align_res_t *res, __global const uint *hits,
		__global const uint *cnt, __global uchar *cends)
{
	ulong h = get_global_id(0), g, w;
	uint rs, len, ro;

	if (h >= n || h >= cnt[1])
		return;
	g = hits[HIT_WORDS * h];
	w = wp[2 * g + 1];
	rs = (uint)w;
	len = (uint)(w >> 32);
	ro = roff[rs];
	sp_align_one(reads + ro, roff[rs + 1] - ro, ref, wp[2 * g], len, max_a, flags, 0, 0, ws, 1,
			cends + hits[HIT_WORDS * h + 1], res + h);
}
