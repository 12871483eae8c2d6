/*
 * degen.h - host side of the degenerate-pattern enumeration
 * (kernels/inc_degen.h): the L_Pos table and the item counts.
 */
#ifndef SP_DEGEN_H
#define SP_DEGEN_H

#include <stdint.h>

#include "inc_degen.h"

/** C(V, E): number of L_Pos entries (0 when E > V). */
uint64_t degen_n_lpos(uint32_t v, uint32_t e);

/**
 * Fill OUT with the C(V, E) position subsets of L_Pos in lexicographic
 * order (5 bits per position, inc_degen.h).  V <= 32, E <= DEGEN_MAX_E.
 * Returns the count.
 */
uint64_t degen_lpos(uint32_t v, uint32_t e, uint32_t *out);

/** Items of the SP x SC grid: C(V, E) * 4^E. */
uint64_t degen_n_items(uint32_t v, uint32_t e);

/** Distinct words within Hamming distance E of a word of length V. */
uint64_t degen_ball(uint32_t v, uint32_t e);

#endif
