/*
 * inc_fm.h - occurrence counts on the FM-index of a partition (common/fm.h),
 * shared by seedfilt's fm method (inc_filt_fm.h) and the MEMs (inc_mem.h),
 * on the CPU and in the OpenCL kernels.
 *
 * The occurrence blocks are read as u32 words (fm.h: 32 bytes per 64 rows,
 * little-endian):
 *
 *     occ[8b + 0..3] = A, C, G, T counts before block b
 *     occ[8b + 4..5] = codes of rows 64b .. 64b+31   (row 64b+i at bits 2i)
 *     occ[8b + 6..7] = codes of rows 64b+32 .. 64b+63
 */
#ifndef SP_INC_FM_H
#define SP_INC_FM_H

#include "inc_common.h"

#define SP_FM_M55 0x5555555555555555UL

#ifdef __OPENCL_VERSION__
#define SP_FM_POPC64(x) ((uint)popcount(x))
#else
#define SP_FM_POPC64(x) ((uint)__builtin_popcountll(x))
#endif

/* Codes equal to C among the first M (0..32) codes of X. */
SP_FN uint sp_fm_count_code(ulong x, uint c, uint m)
{
	ulong y = ~(x ^ ((ulong)c * SP_FM_M55));

	y = y & (y >> 1) & SP_FM_M55;
	if (m < 32u)
		y &= (1UL << (2u * m)) - 1UL;
	return SP_FM_POPC64(y);
}

/* The code word HW (0: rows 64b.., 1: rows 64b+32..) of block B. */
SP_FN ulong sp_fm_bwords(SP_GLOBAL const uint *occ, ulong b, uint hw)
{
	return (ulong)occ[8UL * b + 4u + 2u * hw] | (ulong)occ[8UL * b + 5u + 2u * hw] << 32;
}

/* Occurrences of code C in BWT rows [0, I) (fm_occ of common/fm.c); PRIMARY:
 * the '$' row, stored as code 0. */
SP_FN ulong sp_fm_occ(SP_GLOBAL const uint *occ, ulong primary, uint c, ulong i)
{
	ulong b = i >> 6, r = occ[8UL * b + c];
	uint k = (uint)(i & 63UL);

	if (k) {
		r += sp_fm_count_code(sp_fm_bwords(occ, b, 0u), c, k < 32u ? k : 32u);
		if (k > 32u)
			r += sp_fm_count_code(sp_fm_bwords(occ, b, 1u), c, k - 32u);
		if (c == 0u && primary >= (i & ~63UL) && primary < i)
			r--;
	}
	return r;
}

#endif
