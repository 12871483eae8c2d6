/*
 * fm.h - FM-index of one partition of the reference: 2-bit BWT interleaved
 * with sampled occurrence counts, and a suffix array sampled by text position
 * (built with libdivsufsort, the 64-bit variant above 2^31 bases).
 *
 * Text T = the partition's bases (N stored as A, like the packed reference;
 * hits over N or a sequence boundary are removed by idx_fm_locate), with a
 * virtual sentinel $ < A at the end.  Row 0 of the BWT matrix is the suffix
 * "$"; BWT[i] = T[SA[i]-1], '$' for the row "primary" where SA = 0 ('$' is
 * stored as code 0 and corrected for in counts).
 *
 *   fm.meta (64 bytes): | n u64 | primary u64 | C[5] u64 | sa_rate u32 | 0 u32 |
 *       C[c] = 1 + number of T letters < c, C[4] = n + 1
 *   fm.occ: one 32-byte block per 64 rows
 *       | cnt[4] u32: occurrences of A,C,G,T in rows before the block |
 *       | bits[2] u64: the block's 64 BWT codes, row 64k+i at bits
 *         2*(i%32) of bits[i/32] |
 *   fm.mark: per 64 rows | bits u64 (row marked: SA[row] % sa_rate == 0) |
 *       rank u64 (marked rows before the block) |
 *   fm.sa: u32 SA value of each marked row, in row order
 */
#ifndef SP_FM_H
#define SP_FM_H

#include <stddef.h>
#include <stdint.h>

#define FM_META_LEN 64
#define FM_OCC_BLOCK 32
#define FM_MAX_RATE (1u << 20)  /* largest SA sampling rate (seqidx -r) */
#define FM_NO_POS UINT64_MAX    /* fm_locate_row on a damaged index */

/** Read-only view of an FM-index (arrays in a mapping or a build buffer). */
typedef struct {
	uint64_t n, primary, C[5];
	uint32_t sa_rate;
	const uint8_t *occ;     /* (n+1+63)/64 blocks of 32 bytes */
	const uint64_t *mark;   /* 2 u64 per 64 rows */
	const uint32_t *sa;     /* n_samples */
	uint64_t n_blocks, n_samples;
} fm_t;

/** An FM-index being built: owns its arrays; fm views them. */
typedef struct {
	fm_t fm;
	uint8_t meta[FM_META_LEN];
	uint8_t *occ; uint64_t occ_len;
	uint64_t *mark; uint64_t mark_len;
	uint32_t *sa; uint64_t sa_len;
} fm_build_t;

/**
 * Build the FM-index of bases [BEG, BEG+N) of the 2-bit packed sequence PACK
 * (seqio.h layout) with SA sampling rate RATE.  Memory: N bytes of text plus
 * 4N (N < 2^31) or 8N bytes of suffix array while building.  Returns 0, or
 * -1 after sp_fail (libdivsufsort failed, or an internal inconsistency);
 * runs on worker threads (it never exits).
 */
int fm_build(const uint8_t *pack, uint64_t beg, uint64_t n, uint32_t rate, fm_build_t *b);

/** Free the arrays of a build. */
void fm_build_free(fm_build_t *b);

/**
 * Set up FM from the payloads of fm.meta, fm.occ, fm.mark, fm.sa; -1 if the
 * meta values or the sizes are inconsistent (O(1): the arrays are not read;
 * fm_check does that).
 */
int fm_view(fm_t *fm, const uint8_t *meta, const uint8_t *occ, uint64_t occ_len,
		const uint64_t *mark, uint64_t mark_len, const uint32_t *sa, uint64_t sa_len);

/**
 * Check the arrays of a viewed FM-index against their invariants in one pass
 * (O(n / 64) blocks plus the samples): each block's counts are the codes of
 * the rows before it, the totals agree with C[], the primary row holds code
 * 0, rows past n hold nothing; the mark ranks count the marks before them,
 * the marks number the samples, and the samples are the multiples of the
 * rate up to n, each once, the primary row's being 0.  Then every row range
 * fm_backward or ffm_search (kernels/inc_filt_fm.h) makes lies in [0, n+1]
 * and every lookup stays inside the arrays.  Returns 0, or -1 with the
 * reason in WHY (LEN bytes).
 */
int fm_check(const fm_t *fm, char *why, size_t len);

/**
 * The whole check of a checked FM-index (fm_check first): walk the LF
 * mapping from row 0 through all n + 1 rows; it must reach the primary row
 * exactly at the last step, and every marked row on the way must hold the
 * text position it stands for (and every row of a position that is a
 * multiple of the rate be marked).  Then fm_locate_row ends within sa_rate
 * steps from any row and returns the true position.  O(n) random accesses:
 * for seqidx --verify, not for every load.  0, or -1 with the reason.
 */
int fm_check_walk(const fm_t *fm, char *why, size_t len);

/** Occurrences of code C (0..3) in BWT rows [0, I). */
uint64_t fm_occ(const fm_t *fm, unsigned c, uint64_t i);

/**
 * Backward search of the M codes (0..3) of P: on return [*lo, *hi) are the
 * rows of the suffixes that start with P.  Returns *hi - *lo.
 */
uint64_t fm_backward(const fm_t *fm, const uint8_t *p, size_t m, uint64_t *lo, uint64_t *hi);

/**
 * Text position of BWT row ROW (1 .. n; row 0 is the '$' suffix, position n).
 * A sound index reaches a marked row within sa_rate - 1 steps; on an index
 * whose LF mapping cycles without a mark (fm_check cannot see that, only
 * fm_check_walk) the walk stops there and returns FM_NO_POS.
 */
uint64_t fm_locate_row(const fm_t *fm, uint64_t row);

#endif
