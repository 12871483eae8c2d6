/*
 * bdz.h - building the BDZ perfect hash of one SeedBlock (Tran 2012 ch. 4,
 * Botelho 2008): random 3-partite 3-hypergraph from the hash family of
 * kernels/inc_bdz.h, peeling (acyclicity test) with a new seed per attempt,
 * then the g assignment.  The per-key arithmetic and the lookup are in
 * kernels/inc_bdz.h.
 */
#ifndef SP_BDZ_H
#define SP_BDZ_H

#include <stddef.h>
#include <stdint.h>


/** Scratch space reused across blocks (one per thread); zero it before use. */
typedef struct {
	uint32_t *deg, *xr, *queue, *order;
	uint8_t *which, *g;
	size_t cap_v, cap_e;
} bdz_work_t;

/**
 * Build a perfect hash for the NKEYS distinct KEYS of block BLOCK on
 * M = 3 * bdz_part_size(NKEYS) vertices, trying the seeds bdz_seed(BLOCK,
 * a) for a = 0, 1, ... (kernels/inc_bdz.h).  On success returns 0 and sets
 * *SEED (the attempt a), SLOT[k] (the vertex of key k, 0..M-1), and W->g[0..M-1] (one g
 * value 0..3 per vertex, 3 = never assigned); *ATTEMPTS counts the graphs
 * tried.  Returns -1 after BDZ_ATTEMPTS cyclic graphs.
 */
int bdz_build(bdz_work_t *w, const uint64_t *keys, uint32_t nkeys, uint32_t block,
		uint32_t *seed, uint32_t *slot, uint32_t *attempts);

/** Free the scratch space. */
void bdz_work_free(bdz_work_t *w);

#endif
