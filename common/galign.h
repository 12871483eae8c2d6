/*
 * galign.h - batched global alignment (extend --global): score-only passes
 * over many pairs of whole sequences, the identity bound that decides which
 * pairs are traced back, and the banded traceback, on the CPU (threads,
 * vectors across pairs) and on an OpenCL device, with identical results.
 * The algorithms, the band and the traceback's tie rule are described in
 * kernels/inc_galign.h; the run of extend --global is galign_run.c, its
 * options tools/extend_global.c.
 *
 * Sequences live in one buffer of codes (A 0, C 1, G 2, T 3, other 4);
 * a pair names its query and target by offset and length in it.
 *
 *     codes:  |seq 0 ....|seq 1 .......|seq 2 ...|       (one byte a base)
 *     pairs:  { q_off, t_off, q_len, t_len } x N          (24 bytes each)
 *     scores: int32 x N                                    (score pass)
 *     res:    galign_res_t x K, runs (CIGAR)               (traceback)
 */
#ifndef SP_GALIGN_H
#define SP_GALIGN_H

#include <stddef.h>
#include <stdint.h>

#include "inc_galign.h"
#include "ocl.h"
#include "rec.h"

typedef sp_ga_pair_t galign_pair_t;
typedef sp_ga_res_t galign_res_t;

#define GALIGN_MAX_LEN SP_GA_MAX_LEN
#define GALIGN_IDENT_ONE 1000000u   /* identities are in millionths */

/* The scores: edit distance is 0, -1, -1 with EDIT set (bit-vector pass). */
typedef struct {
	int edit;
	int match, mismatch, gap;
} galign_scores_t;

/**
 * Check a score set against the limits of inc_galign.h: 0, or -1 after
 * sp_fail ("mismatch -5 must be below match 4", ...).
 */
int galign_check_scores(const galign_scores_t *sc);

/* --- score pass on the CPU ------------------------------------------------ */

#define GALIGN_SIMD_OFF 0      /* one pair at a time (inc_galign.h's functions) */
#define GALIGN_SIMD_AVX2 1     /* 32 targets a vector (linear), 4 (edit) */
#define GALIGN_SIMD_AVX512 2   /* 64 and 8 */

/**
 * The vector code the CPU passes use: the best the CPU has unless
 * SEEDPIPE_NO_SIMD is set, or what galign_set_simd() forced.
 */
int galign_simd(void);

/**
 * Force the vector code (GALIGN_SIMD_*, or -1 to go back to the default);
 * a kind the CPU lacks falls back to the best it has.  For tests and
 * measurements; the output never depends on it.  Returns the previous one.
 */
int galign_set_simd(int kind);

/**
 * Allow (1, the default) or forbid (0) the traceback's vector fill with
 * 16-bit lanes, for tests; returns the previous setting.
 */
int galign_set_fill16(int on);

/** Name of a GALIGN_SIMD_* kind ("scalar", "avx2", "avx512"). */
const char *galign_simd_name(int kind);

/**
 * Score N pairs on the CPU with N_THREADS threads: SCORES[k] = H[m][n] of
 * pair k (minus the edit distance in edit mode).  Pairs that share a query
 * go through the vector code together (a pair's score does not depend on
 * its company).  Returns 0, or -1 after sp_fail (a sequence too long).
 */
int galign_score_batch(const uint8_t *codes, const galign_pair_t *pairs, size_t n,
		const galign_scores_t *sc, int n_threads, int32_t *scores);

/* --- the identity bound ---------------------------------------------------- */

/**
 * Whether a pair of lengths M and N whose optimal score is S can have an
 * optimal alignment of identity (matches / columns) of at least
 * IDENT / GALIGN_IDENT_ONE.  0 means that no alignment of that identity
 * scores S or more (exact integer arithmetic; see galign.c), so the pair's
 * optimal alignments all fall short and its traceback can be skipped.
 */
int galign_may_pass(const galign_scores_t *sc, uint32_t m, uint32_t n, int32_t s,
		uint32_t ident);

/** Whether the alignment of R has identity >= IDENT / GALIGN_IDENT_ONE. */
int galign_ident_ok(const galign_res_t *r, uint32_t ident);

/* --- traceback -------------------------------------------------------------- */

/** CIGAR runs the traceback of a pair with score S may write at most. */
uint32_t galign_runs_cap(const galign_scores_t *sc, uint32_t m, uint32_t n, int32_t s);

/**
 * Trace back N pairs on the CPU: pair PAIRS[IDX[k]] with score
 * SCORES[IDX[k]] (IDX NULL: k itself) gives RES[k] and its CIGAR runs at
 * RUNS + OFF[k] (OFF[k + 1] - OFF[k] >= galign_runs_cap() entries, last run
 * first).  Returns 0, or -1 after sp_fail when a traceback contradicts its
 * score (a bug).
 */
int galign_trace_batch(const uint8_t *codes, const galign_pair_t *pairs, const uint32_t *idx,
		size_t n, const galign_scores_t *sc, const int32_t *scores, int n_threads,
		galign_res_t *res, uint32_t *runs, const uint64_t *off);

/**
 * The CIGAR of RES (runs as the traceback wrote them, last first) as SAM
 * text with =, X, I, D into BUF (LEN bytes; 11 a run is always enough).
 * Returns the length written.
 */
size_t galign_cigar_str(const galign_res_t *res, const uint32_t *runs, char *buf, size_t len);

/* --- on an OpenCL device (galign_ocl.c) ------------------------------------ */

typedef struct galign_dev galign_dev_t;

/**
 * Ready device CTX for batches of up to BATCH pairs over the sequences
 * CODES (LEN bytes, copied to the device once) with scores SC: the programs
 * are built and the buffers of the batches in flight made here, sized from
 * the device's memory.  Returns NULL after sp_fail when they do not fit.
 */
galign_dev_t *galign_dev_new(ocl_ctx_t *ctx, const uint8_t *codes, size_t len,
		const galign_scores_t *sc, size_t batch);

/** Release the device's buffers (NULL is fine). */
void galign_dev_free(galign_dev_t *d);

/** A batch's score pass queued on the device. */
typedef struct galign_job galign_job_t;

/**
 * Queue the score pass of N <= BATCH pairs (one work item a pair, one work
 * group a pair for queries of 8192 bases or more, or of
 * $SEEDPIPE_GALIGN_WG) and
 * return at once; SCORES (N) is filled, and PAIRS may be reused, once
 * galign_dev_wait() has returned.  Returns the job, or NULL after sp_fail.
 * Calls for one device must come from one thread at a time;
 * galign_dev_wait may run on another.
 */
galign_job_t *galign_dev_score(galign_dev_t *d, const galign_pair_t *pairs, size_t n,
		int32_t *scores);

/** Wait for JOB and free it: 0, or -1 after sp_fail. */
int galign_dev_wait(galign_job_t *job);

/**
 * galign_trace_batch() on the device (one work item a pair, the bits of
 * each pair's band in device memory, split into runs that fit).  Same
 * arguments and results.  Not concurrently with galign_dev_score().
 */
int galign_dev_trace(galign_dev_t *d, const galign_pair_t *pairs, const uint32_t *idx, size_t n,
		const int32_t *scores, galign_res_t *res, uint32_t *runs, const uint64_t *off);

/* --- the run of extend --global (galign_run.c) --------------------------- */

#define GALIGN_BATCH_CPU 8192       /* pairs a batch without a device */
#define GALIGN_BATCH_DEV 1048576    /* at most, with one */

/* What tools/extend_global.c parsed from the command line. */
typedef struct {
	const char *a_path;            /* queries (and targets without B); "-" is stdin */
	const char *b_path;            /* targets, NULL: all against all of A */
	const char *pairs_path;        /* a list of name pairs, or NULL */
	const char *device;            /* -d, NULL: $SEEDPIPE_DEVICE, else auto */
	const char *out_path;          /* "-": stdout */
	const char *ident_str;         /* --identity as given, for the summary */
	galign_scores_t sc;
	uint32_t ident;                /* millionths */
	int prune;                     /* 0: --no-prune */
	int trace_dev, rec_out, force, quiet, n_threads;
	size_t batch;                  /* -B, 0: the defaults above */
	const rec_prov_t *prov;        /* the provenance of a pairs stream (rec_out) */
} galign_cfg_t;

/**
 * Run extend --global as CFG says: read the sequences and the pairs, open
 * the device, score, trace back and write.  On the main thread only: exits
 * with a message on any error (exit 1; 3 for a missing device; 2 when A
 * and B are both standard input).  Returns 0.
 */
int galign_run_or_die(const galign_cfg_t *cfg);

#endif
