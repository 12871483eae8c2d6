/*
 * idx_oracle.h - format 5's slot ranks read the slow way, for the unit
 * tests of the index (idx_check_test.c, idx_rank_test.c): a block's width
 * counted bit by bit, and each rank read one bit at a time.
 */
#ifndef SP_IDX_ORACLE_H
#define SP_IDX_ORACLE_H

#include <stdint.h>

#include "idx.h"

/* Bits of U - 1 (0 when U <= 1), one at a time. */
static inline uint32_t o_width(uint64_t u)
{
	uint32_t w = 0;

	while (u > 1 && (u - 1) >> w)
		w++;
	return w;
}

/* The rank of slot J of block C, bit by bit from blk.rank at blk.roff[C]. */
static inline uint64_t o_rank(const idx_part_t *pt, uint64_t c, uint64_t j)
{
	uint64_t w = o_width(pt->red_start[c + 1] - pt->red_start[c]), b, v = 0;

	for (b = 0; b < w; b++) {
		uint64_t bit = 32ULL * pt->blk_roff[c] + j * w + b;

		v |= (uint64_t)(pt->blk_rank[bit / 32] >> (bit % 32) & 1) << b;
	}
	return v;
}

#endif
