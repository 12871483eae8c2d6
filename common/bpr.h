/*
 * bpr.h - host side of mflBPR (kernels/inc_bpr.h): the block-mask table of a
 * pattern and the scan of a whole SeedBlock of the general structure.
 */
#ifndef SP_BPR_H
#define SP_BPR_H

#include <stddef.h>
#include <stdint.h>

#include "inc_bpr.h"

/** A pattern ready for mflBPR: its length, errors and block-mask groups. */
typedef struct {
	uint32_t v, e, l, h, ng;
	uint32_t tab[BPR_GROUP * BPR_MAX_GROUPS];
} bpr_pat_t;

/**
 * Prepare pattern Q (V bases, base i in bits 2i..2i+1) for neighborhoods of
 * length L (h = 32 / L per word) with at most E errors.  Needs 1 <= V <= L
 * <= 32 and E <= BPR_MAX_E.  Fills only the table entries that can occur.
 */
void bpr_pat_init(bpr_pat_t *bp, uint64_t q, uint32_t v, uint32_t l, uint32_t e);

/**
 * Scan the N neighborhoods of a SeedBlock stored in striped WORDS
 * (ceil(N/h) words): append to OUT the index (0..N-1) of every neighborhood
 * that q occurs in with at most e edits (inc_bpr.h), in increasing order.
 * OUT must hold N entries; returns how many were written.
 */
size_t bpr_scan(const bpr_pat_t *bp, const uint64_t *words, uint64_t n, uint32_t *out);

/**
 * Striped words (kernels/inc_idx.h) of N neighborhoods of length L, h =
 * 32 / L per word: K32 (u32 keys) when L <= 16, else K64 (the words are
 * then the keys).  WORDS gets ceil(N/h) words, slots past N zero: the
 * words of idx_stripe_keys.
 */
void bpr_stripe(const uint32_t *k32, const uint64_t *k64, uint64_t n, uint32_t l, uint64_t *words);

/**
 * bpr_scan over the N keys of a SeedBlock as the reduced structure stores
 * them (K32 when l <= 16, else K64: see bpr_stripe), striped on the fly a
 * few hundred words at a time (for l > 16 a key is its own striped word;
 * for h = 2 with AVX-512, in registers: bpr_scan_keys_simd):
 * OUT gets the index of every matching key, in increasing order, and must
 * hold N entries; returns how many were written.
 */
size_t bpr_scan_keys(const bpr_pat_t *bp, const uint32_t *k32, const uint64_t *k64,
		uint64_t n, uint32_t *out);

/*
 * bpr_scan picks one of these two at run time: the AVX-512 scan where
 * bpr_simd_on() and h <= 4 (l >= 7), else the plain C one.  Both give
 * exactly the same output; they are public for the tests.
 */

/** bpr_scan in plain C. */
size_t bpr_scan_scalar(const bpr_pat_t *bp, const uint64_t *words, uint64_t n, uint32_t *out);

/**
 * bpr_scan with AVX-512 (16 words at a time), whatever SEEDPIPE_NO_SIMD
 * says: returns the count written, or -1 (nothing written) when the CPU
 * lacks AVX-512F and BMI2, or the build is not for x86-64, or h > 4.
 */
int64_t bpr_scan_simd(const bpr_pat_t *bp, const uint64_t *words, uint64_t n, uint32_t *out);

/**
 * bpr_scan_keys for h = 2 (11 <= l <= 16) with AVX-512, whatever
 * SEEDPIPE_NO_SIMD says: the u32 keys K32[0..N) go to the registers as
 * bpr_stripe would stripe them, without striped words in memory.  Returns
 * the count written, or -1 (nothing written) where bpr_scan_simd would
 * decline, or h != 2.  bpr_scan_keys uses it where bpr_simd_on().
 */
int64_t bpr_scan_keys_simd(const bpr_pat_t *bp, const uint32_t *k32, uint64_t n, uint32_t *out);

/**
 * Whether bpr_scan uses bpr_scan_simd (for h <= 4): the CPU has AVX-512F
 * and BMI2 and the environment variable SEEDPIPE_NO_SIMD is unset (read
 * once, at the first call).
 */
int bpr_simd_on(void);

/**
 * Reference: min over substrings t[a..b) of T (length L) of the Levenshtein
 * distance to Q (length V), by dynamic programming (tests and oracles).
 */
uint32_t bpr_dp_dist(uint64_t q, uint32_t v, uint64_t t, uint32_t l);

#endif
