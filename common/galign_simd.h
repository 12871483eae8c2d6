/*
 * galign_simd.h - the vector code of galign.c (galign_simd.c): score
 * passes over several targets of one query at once, one target a vector
 * lane (Truong et al.'s inter-task parallelism, on the CPU), and the banded
 * fill of the traceback over several pairs at once.  Private to galign.c.
 */
#ifndef SP_GALIGN_SIMD_H
#define SP_GALIGN_SIMD_H

#include <stddef.h>
#include <stdint.h>

#include "galign.h"

/** A thread's growable scratch memory (64-byte aligned). */
typedef struct {
	void *buf;
	size_t cap;
} ga_scratch_t;

/** At least N bytes of S (contents not kept). */
void *ga_scratch(ga_scratch_t *s, size_t n);

/**
 * N consecutive parts of S of LEN[i] bytes each into PART[i] (each part
 * starts where the one before ends: 64-byte aligned when the lengths are
 * multiples of 64).
 */
void ga_scratch_parts(ga_scratch_t *s, int n, const size_t *len, uint8_t **part);

/** Free S's memory. */
void ga_scratch_free(ga_scratch_t *s);

/** The GALIGN_SIMD_* kind the CPU supports best (ignoring the environment). */
int ga_simd_best(void);

/** Targets one call of ga_simd_score takes at most with KIND (edit or linear). */
int ga_simd_lanes(int kind, int edit);

/**
 * Score query Q (M codes) against the NT <= ga_simd_lanes() targets T[k]
 * (N[k] codes) with vector code KIND: OUT[k] = the score of (Q, T[k]),
 * what sp_ga_score_lin() or sp_ga_score_edit() give.  Returns 0, or -1
 * after sp_fail when KIND has no code on this CPU.
 */
int ga_simd_score(int kind, const galign_scores_t *sc, const uint8_t *q, uint32_t m,
		const uint8_t *const *t, const uint32_t *n, int nt, ga_scratch_t *s, int32_t *out);

/**
 * ga_simd_score() for NT <= ga_simd_lanes() unrelated pairs (linear gaps
 * only): pair k is Q[k] (M[k] codes) against T[k] (N[k]).  Returns 0, or
 * -1 after sp_fail in edit mode or when KIND has no code on this CPU.
 */
int ga_simd_score_pairs(int kind, const galign_scores_t *sc, const uint8_t *const *q,
		const uint32_t *m, const uint8_t *const *t, const uint32_t *n, int nt, ga_scratch_t *s,
		int32_t *out);

/**
 * Pairs one call of ga_simd_fill takes at most with KIND (0: none), with
 * 32-bit lanes, or with 16-bit ones when NARROW.
 */
int ga_simd_fill_lanes(int kind, int narrow);

/**
 * Bits of each mask in ga_simd_fill's layout (the LANES of
 * sp_ga_bits_at()); pair k's bit is k * (this / ga_simd_fill_lanes()).
 */
int ga_simd_fill_maskbits(int kind, int narrow);

/** Bytes of BITS a fill of rows up to MMAX and a band of W diagonals needs. */
size_t ga_simd_fill_bytes(int kind, int narrow, uint32_t mmax, uint32_t w);

/**
 * sp_ga_fill() of NP <= ga_simd_fill_lanes() pairs at once, all with a band
 * of W diagonals: pair k is Q[k] (M[k] codes) against T[k] (N[k]) with its
 * band from diagonal DLO[k].  BITS (ga_simd_fill_bytes()) gets the bits of
 * every pair in the lane layout of sp_ga_bits_at() (see
 * ga_simd_fill_maskbits()), HMN[k] the banded H[m][n].  The bits of a pair's
 * cells are those sp_ga_fill() gives wherever 1 <= j <= n.  NARROW (16-bit
 * lanes) only where every real score and the sinking values left of column
 * 0 stay apart within 16 bits (galign.c checks).  Returns 0, or -1 after
 * sp_fail when KIND has no code on this CPU.
 */
int ga_simd_fill(int kind, int narrow, const galign_scores_t *sc, const uint8_t *const *q,
		const uint32_t *m, const uint8_t *const *t, const uint32_t *n, const int *dlo,
		uint32_t w, int np, ga_scratch_t *s, uint8_t *bits, int32_t *hmn);

#endif
