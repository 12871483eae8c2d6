/*
 * msd.cl - strsort's device sort (common/strsort_ocl.c): stable LSD radix
 * passes over the 64-bit key prefixes of 16-byte entries (layout, digits and
 * block geometry in inc_msd.h).  One pass is
 *
 *   ss_hist        per block, count the digits (local-memory counters)
 *   ss_scan_sums   \
 *   ss_scan_top     > exclusive prefix sum over the digit-major histogram
 *   ss_scan_apply  /
 *   ss_scatter     per block, tile by tile: a stable local split sort of the
 *                  tile's digits (two bits at a time, four counters packed
 *                  in a ulong per work item) gives each element its
 *                  rank among the tile's elements of its digit; it goes to
 *                  the digit's slot for the block plus that rank
 *
 * Any power-of-two work-group size up to SS_DEV_WG works (the host does not
 * choose it); work-groups loop over blocks, so any number of them works too.
 */
#include "inc_msd.h"

/*
 * NAME(s, v, lid, nl): the inclusive prefix sum of v (type T) over the
 * work-group; s[nl-1] is the total after.  wg_scan sums uints, wg_scan4
 * four 16-bit lanes packed in a ulong (each lane's total <= 256).
 */
#define WG_SCAN(NAME, T) \
inline T NAME(__local T *s, T v, uint lid, uint nl) \
{ \
	uint off; \
	T t; \
 \
	s[lid] = v; \
	barrier(CLK_LOCAL_MEM_FENCE); \
	for (off = 1; off < nl; off <<= 1) { \
		t = lid >= off ? s[lid - off] : 0; \
		barrier(CLK_LOCAL_MEM_FENCE); \
		s[lid] += t; \
		barrier(CLK_LOCAL_MEM_FENCE); \
	} \
	return s[lid]; \
}

WG_SCAN(wg_scan, uint)
WG_SCAN(wg_scan4, ulong)

__kernel void ss_hist(__global const ulong2 *src, uint n, uint pass,
		__global uint *hist, uint nblocks)
{
	__local uint cnt[SS_DEV_RADIX];
	uint lid = get_local_id(0), nl = get_local_size(0), blk, i, d;

	for (blk = get_group_id(0); blk < nblocks; blk += get_num_groups(0)) {
		uint lo = blk * SS_DEV_BLOCK, hi = min(n, lo + SS_DEV_BLOCK);

		for (d = lid; d < SS_DEV_RADIX; d += nl)
			cnt[d] = 0;
		barrier(CLK_LOCAL_MEM_FENCE);
		for (i = lo + lid; i < hi; i += nl)
			atomic_inc(&cnt[ss_dev_digit(src[i].x, pass)]);
		barrier(CLK_LOCAL_MEM_FENCE);
		for (d = lid; d < SS_DEV_RADIX; d += nl)
			hist[d * nblocks + blk] = cnt[d];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
}

/* sums[g] = the total of hist segment g (SS_DEV_SCAN counters) */
__kernel void ss_scan_sums(__global const uint *hist, uint total, __global uint *sums, uint nseg)
{
	__local uint s[SS_DEV_WG];
	uint lid = get_local_id(0), nl = get_local_size(0), g, i;

	for (g = get_group_id(0); g < nseg; g += get_num_groups(0)) {
		uint lo = g * SS_DEV_SCAN, hi = min(total, lo + SS_DEV_SCAN), v = 0;

		for (i = lo + lid; i < hi; i += nl)
			v += hist[i];
		wg_scan(s, v, lid, nl);
		if (lid == 0)
			sums[g] = s[nl - 1];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
}

/* exclusive prefix sum of a[0..m) plus base, by one work-group: contiguous chunks per item */
inline void wg_scan_excl(__global uint *a, uint m, uint base, __local uint *s, uint lid, uint nl)
{
	uint per = (m + nl - 1) / nl, lo = min(m, lid * per), hi = min(m, lo + per), i, v = 0, run;

	for (i = lo; i < hi; i++)
		v += a[i];
	run = wg_scan(s, v, lid, nl) - v + base;
	for (i = lo; i < hi; i++) {
		uint x = a[i];

		a[i] = run;
		run += x;
	}
	barrier(CLK_LOCAL_MEM_FENCE);
}

/* exclusive prefix sum of sums[0..nseg), by work-group 0 */
__kernel void ss_scan_top(__global uint *sums, uint nseg)
{
	__local uint s[SS_DEV_WG];

	if (get_group_id(0) != 0)
		return;
	wg_scan_excl(sums, nseg, 0, s, get_local_id(0), get_local_size(0));
}

/* hist segment g: exclusive prefix sum starting at sums[g] */
__kernel void ss_scan_apply(__global uint *hist, uint total, __global const uint *sums, uint nseg)
{
	__local uint s[SS_DEV_WG];
	uint lid = get_local_id(0), nl = get_local_size(0), g;

	for (g = get_group_id(0); g < nseg; g += get_num_groups(0)) {
		uint lo = g * SS_DEV_SCAN, hi = min(total, lo + SS_DEV_SCAN);

		wg_scan_excl(hist + lo, hi - lo, sums[g], s, lid, nl);
	}
}

__kernel void ss_scatter(__global const ulong2 *src, __global ulong2 *dst, uint n, uint pass,
		__global const uint *hist, uint nblocks)
{
	__local uint base[SS_DEV_RADIX], start[SS_DEV_RADIX];
	__local uint sd[SS_DEV_WG], perm[SS_DEV_WG];
	__local ulong s[SS_DEV_WG];
	uint lid = get_local_id(0), nl = get_local_size(0), blk, d, bit;

	for (blk = get_group_id(0); blk < nblocks; blk += get_num_groups(0)) {
		uint lo = blk * SS_DEV_BLOCK, hi = min(n, lo + SS_DEV_BLOCK), t0;

		for (d = lid; d < SS_DEV_RADIX; d += nl)
			base[d] = hist[d * nblocks + blk];
		barrier(CLK_LOCAL_MEM_FENCE);
		for (t0 = lo; t0 < hi; t0 += nl) {
			uint i = t0 + lid, md, mp, p, si;

			/* past the end: the last digit, so they stay behind the real ones */
			sd[lid] = i < hi ? ss_dev_digit(src[i].x, pass) : SS_DEV_RADIX - 1;
			perm[lid] = lid;
			barrier(CLK_LOCAL_MEM_FENCE);
			/* split by 2 bits at a time: one counter lane per value */
			for (bit = 0; bit < SS_DEV_BITS; bit += 2) {
				uint b, np, before;
				ulong one, excl, tot;

				md = sd[lid];
				mp = perm[lid];
				b = (md >> bit) & 3;
				one = (ulong)1 << (16 * b);
				excl = wg_scan4(s, one, lid, nl) - one;
				tot = s[nl - 1];
				/* elements of smaller values, then those of b before me */
				before = (uint)(tot & 0xffff) * (b > 0) +
					(uint)((tot >> 16) & 0xffff) * (b > 1) +
					(uint)((tot >> 32) & 0xffff) * (b > 2);
				np = before + (uint)((excl >> (16 * b)) & 0xffff);
				barrier(CLK_LOCAL_MEM_FENCE);
				sd[np] = md;
				perm[np] = mp;
				barrier(CLK_LOCAL_MEM_FENCE);
			}
			p = lid;
			d = sd[p];
			if (p == 0 || sd[p - 1] != d)
				start[d] = p;
			barrier(CLK_LOCAL_MEM_FENCE);
			si = t0 + perm[p];
			if (si < hi)
				dst[base[d] + p - start[d]] = src[si];
			barrier(CLK_LOCAL_MEM_FENCE);
			/* the last of its digit in the tile moves the digit's slot on */
			if (si < hi && (p == nl - 1 || sd[p + 1] != d || t0 + perm[p + 1] >= hi))
				base[d] += p - start[d] + 1;
			barrier(CLK_LOCAL_MEM_FENCE);
		}
	}
}
