/*
 * filt.h - seedfilt's work: cut each read (and its reverse complement) into
 * patterns sq (seed s with the index's shape, neighborhood q), match q
 * against SeedBlock(s) of every partition with at most e errors by one of
 * four methods, turn the matches into candidate diagonals, sort and reduce
 * them with support counts (T. T. Tran, Bioinformatics Sequence Comparisons
 * on Manycore Processors, PhD thesis, 2012, ch. 3-6; man/seedfilt.1).
 *
 * Methods and the distance each one uses:
 *   bpr  mflBPR over the general structure: q of v = l - e bases occurs in
 *        the neighborhood (l bases) with at most e edit operations
 *        (substring Levenshtein distance, kernels/inc_bpr.h); any e < l.
 *   bs   every word within Hamming distance e of q (v = l bases), generated
 *        by item index (kernels/inc_degen.h), binary search in the reduced
 *        structure; e <= FILT_MAX_E_HAM.
 *   ph   the same words, looked up through the BDZ perfect hash of the
 *        indexed-block structure.
 *   fm   backward search of the whole window sq (span + l bases) on the
 *        FM-index, with backtracking over at most e substitutions in q
 *        ('-' positions of a spaced seed match any base).
 * bs, ph and fm report the same matches: the seed matches exactly and the
 * neighborhood is within Hamming distance e of q, in a whole window (seed
 * and neighborhood in one sequence, free of N).  The index (format 4) also
 * holds windows whose neighborhood runs past the sequence's end or into N
 * (read as A there): bpr matches them (a read flush with a sequence end
 * needs them, its q being shorter than l), bs and ph drop them
 * (filt_add_hits).
 *
 * Errors anywhere (-a, bs, ph and fm): the e substitutions may fall in the
 * seed's '#' positions too ('-' positions stay wildcards): a window matches
 * when its seed and neighborhood together are within Hamming distance e of
 * the pattern's s and q.  For i = 0..e every seed s' at Hamming distance i
 * from s is looked up with radius e - i around q in SeedBlock(s') (for
 * e = 1, w = l = 10: SeedBlock(s) with radius 1, and 30 blocks with q
 * itself).  bs and ph name a window by its window word (w + l <= 32):
 *
 *     window word:  | q (2v bits)                | seed code (2w bits) |
 *                   63 ...                  2w    2w-1 ...            0
 *
 * The CPU code (filt_match_any.c) pipelines the lookups of a read and turns
 * most one-key lookups away with a bitmap of the index's window words; the
 * kernels enumerate the Hamming ball of the window word by item index and
 * split each word into s' and q'.  fm backtracks over the '#' positions as
 * over q.  bpr refuses -a.
 *
 * Geometry of pattern number i of a read of length m (strand forward, or
 * the reverse complement of the read for strand reverse):
 *
 *     read:   |----------------------- m --------------------------|
 *     pattern i:      o = i*delta
 *                     |<- span ->|<---- v ---->|
 *                     [ seed s   ][ q          ]
 *     index window:   [ seed s   ][ neighborhood (l bases)  ]  at position p
 *
 * A pattern is cut when o + span + v <= m and no base of its window is N;
 * for bpr only the seed [o, o+span) must be free of N: a base of q that is
 * N is packed as 0 with its bit set in nmask, and matches no base (it costs
 * one error, like a mismatch).  A match
 * at window position p (partition offset) gives the candidate diagonal
 * p - o, clamped to the first base of the sequence holding p (a read that
 * overhangs the start of its sequence).
 *
 * The files (each calls only files listed below it; filt_priv.h and
 * filt_ocl_priv.h hold what they share):
 *
 *   filt_run.c         the top loop: an ordered pipeline of batches
 *                      (sp_pipeline), its parallel steps over reads (sp_for)
 *   filt_in.c          the input: FASTA, FASTQ or a reads stream
 *   filt_ocl_match.c   the device's matching of a batch (OpenCL backend)
 *   filt_ocl.c         the device: programs, partitions, commands, profile
 *   filt_read.c        one read on the CPU: cut, match, finish
 *   filt_scheme.c      one read by a scheme (per-pattern q and e, short
 *                      reads, -E's plan): its patterns, matches, finish
 *   filt_match_bpr.c, filt_match_ham.c (bs, ph), filt_match_any.c (bs, ph
 *                      with -a), filt_match_fm.c: the matches of a pattern
 *   filt_cut.c         the patterns of a read; prefetches
 *   filt_reduce.c      the candidates: sort, reduce, cap
 *   filt_mplan.c        -M: batch size and partition groups (cost model)
 *   filt_store.c       -M: candidates kept between passes, spilled to -T
 *   filt_ws.c          the per-thread workspace, candidate keys, -a bitmap
 *   filt_lookup.c      Hamming balls, BDZ slots (bs, ph)
 *   filt_plan.c        -E with -m auto: a setting per read length, measured
 *   filt_sens.c        sensitivity; -m auto with -E (one length)
 *   filt_method.c      methods and their checks
 */
#ifndef SP_FILT_H
#define SP_FILT_H

#include <stddef.h>
#include <stdint.h>

#include "idx.h"
#include "ocl.h"
#include "rec.h"
#include "rec_kinds.h"

#define FILT_MAX_E_HAM 3      /* bs, ph, fm */

enum { FILT_AUTO = 0, FILT_BPR, FILT_BS, FILT_PH, FILT_FM };

/** Filter parameters (after checking). */
typedef struct {
	int method;           /* FILT_BPR .. FILT_FM (never FILT_AUTO here) */
	uint32_t e;           /* f_e */
	uint32_t step;        /* delta >= 1 */
	uint32_t cap;         /* most candidates kept per read, 0 = all */
	int count_only;       /* count the matches, make no candidates (-N) */
	int any;              /* -a: errors anywhere in the window (bs, ph, fm) */
} filt_opt_t;

/** Counters (summed over threads). */
typedef struct {
	/* skipped_n: patterns skipped over N in the window (bpr: in the seed);
	 * kept_n: bpr patterns kept with N in q (counted in patterns too) */
	uint64_t reads, short_reads, patterns, skipped_n, kept_n, matches;
	uint64_t cands, no_cand, capped_reads, capped_dropped;
	uint64_t not_guaranteed;   /* reads whose length misses -E */
	uint64_t items;            /* degenerate words looked up / words scanned */
	uint64_t nbs;              /* neighborhoods in the SeedBlocks of the patterns */
} filt_stats_t;

/** Name of method M ("bpr" ...). */
const char *filt_method_name(int m);

/** Method number of NAME ("auto", "bpr", "bs", "ph", "fm"), -1 if none. */
int filt_method_parse(const char *name);

/** The structure (IDX_S_*) method M needs. */
uint32_t filt_method_struct(int m);

/**
 * The method "auto" stands for: the fastest one that the index X holds and
 * that accepts E errors: ph, then bs, then fm, then bpr; with ANY (-a,
 * errors anywhere in the window) bs, then ph, then fm (bs scans its small
 * blocks, which is faster there).  For bpr (the only edit-distance method) when EDITS is
 * set.  -1 when none fits.
 */
int filt_auto(const idx_t *x, uint32_t e, int edits, int any);

/**
 * Check that method M can run on index X with E errors (anywhere in the
 * window when ANY, -a); 0, or -1 with a message (no tool prefix) in MSG.
 */
int filt_check(const idx_t *x, int m, uint32_t e, int any, char *msg, size_t len);

/** Pattern neighborhood length v: l - e for bpr, l otherwise. */
uint32_t filt_qlen(const idx_t *x, int m, uint32_t e);

/** Sensitivity of the filter for reads of one length (see filt_sensitivity). */
typedef struct {
	uint32_t read_len, window, n_pat;
	int32_t k_sub;        /* substitutions always caught, -1: none */
	int32_t k_edit;       /* edit operations always caught, -1: none */
} filt_sens_t;

/**
 * Pigeonhole bounds for reads of READ_LEN bases (man/seedfilt.1, section
 * SENSITIVITY): with W = span + v, P = floor((m - W) / delta) + 1 patterns,
 * a = ceil(span / delta), b = ceil(v / delta), c = ceil(W / delta),
 * D = floor((P - 1) / c) + 1 pairwise disjoint patterns:
 *   k_sub  = max(D, ceil(P (e+1) / (a (e+1) + b))) - 1
 *   k_edit = k_sub for bpr, max(D, ceil(P / c)) - 1 for the Hamming methods.
 * With O->any (-a) a pattern dies only when e+1 substitutions fall in its
 * window, each of which lies in at most c windows:
 *   k_sub  = max(D (e+1), ceil(P (e+1) / c)) - 1,  k_edit as above.
 */
void filt_sensitivity(const idx_t *x, const filt_opt_t *o, uint32_t read_len,
		filt_sens_t *s);

/**
 * -m auto with -E: of the settings (a method of ph, bs, fm, bpr that the
 * index holds, a step <= O->step, an e >= O->e) for which reads of
 * READ_LEN bases are guaranteed a candidate for EDITS edit operations, the
 * cheapest by a cost model of lookups and chance candidates (filt_sens.c);
 * with O->any set (-a) the same search over bs, ph and fm with errors
 * anywhere (-a never raises k_edit, so it is kept, never chosen).
 * Sets O->method, e, step and returns 0, or -1 (O unchanged) when no
 * setting guarantees it.
 */
int filt_auto_guarantee(const idx_t *x, filt_opt_t *o, uint32_t read_len, int32_t edits);

/**
 * An error bound for the whole pipeline (seedfilt -E, recorded in the
 * candidates stream as seedfilt.E, extend's default -e): VAL edit
 * operations, or with PCT VAL percent of each read's length, rounded down
 * (as razers3 -i and yara -e count).  SET 0: no bound.
 */
typedef struct {
	int set, pct;
	uint32_t val;
} filt_bound_t;

/** Parse "A" (0..1000) or "P%" (0..100) into *B; 0, or -1 when malformed. */
int filt_bound_parse(const char *s, filt_bound_t *b);

/** The bound as text: "3" or "5%". */
void filt_bound_str(const filt_bound_t *b, char *buf, size_t len);

/** The bound's edit operations for a read of M bases. */
static inline int32_t filt_bound_at(const filt_bound_t *b, uint32_t m)
{
	return b->pct ? (int32_t)((uint64_t)b->val * m / 100) : (int32_t)b->val;
}

/**
 * What the filter O over index X guarantees for reads of M bases: every
 * occurrence with at most this many edit operations (substitutions with
 * NOGAPS) yields a candidate (filt_sensitivity); -1 when none.
 */
int32_t filt_guarantee(const idx_t *x, const filt_opt_t *o, uint32_t m, int nogaps);

/**
 * When no setting of index X guarantees EDITS for reads of M bases (-a as
 * O->any): the index that would at the least estimated cost (filt_plan.c:
 * the cost model with the blocks and chance matches of random sequence of
 * X's size, as no index exists to measure on), as seqidx options with the
 * seedfilt options that then guarantee it, in BUF ("seqidx -u 8 -l 9 -m
 * general; seedfilt -m bpr -e 1 -s 8").  Returns 0, or -1 when no index
 * does (reads too short for the bound).
 */
int filt_suggest_index(const idx_t *x, const filt_opt_t *o, uint32_t m, int32_t edits,
		char *buf, size_t len);

typedef struct filt_ws filt_ws_t;

/* ---- per-pattern q for short reads (common/filt_scheme.c) ----------------- */

#define FILT_SCHEME_MAXLEN 64   /* reads longer than this take a plan's setting */
#define FILT_SCHEME_MAXPAT 8    /* patterns per strand */

/**
 * A pattern of a scheme: seed at read offset o (the index's span), q = the
 * v bases after it; a neighborhood t matches when q[0..x) = t[0..x) and
 * q[x..v) is within e edit operations of a prefix of t[x..l) (v + e <= l;
 * e = 0: x = v).
 */
typedef struct {
	uint16_t o, x, v, e;
} filt_spat_t;

/**
 * Patterns for reads of m bases (each strand), such that every occurrence
 * within `edits` edit operations (substitutions among them; an N counts as
 * one) leaves a pattern whose seed and exact part are clean and whose tail
 * holds at most its e: a candidate at the occurrence's diagonal.
 */
typedef struct {
	uint32_t m, np, edits;
	filt_spat_t p[FILT_SCHEME_MAXPAT];
	double cost;          /* model microseconds per strand */
} filt_scheme_t;

/**
 * The cheapest scheme (filt_scheme.c: pieces allowed 0 or 1 edits, at most
 * three) of index X for reads of M bases and E edit operations into *S:
 * 1, or 0 when none fits (M > FILT_SCHEME_MAXLEN, E > 5, too short, or an
 * index without the reduced structure).  Deterministic.
 */
int filt_scheme_make(const idx_t *x, uint32_t m, uint32_t e, filt_scheme_t *s);

/**
 * Whether some pattern of S (seed span SPAN) is alive for the edits CNT
 * (CNT[k]: edits at slot k, 0 <= k <= 2m - 2; slot 2i: position i, slot
 * 2g - 1: the gap before position g), as filt_scheme.c defines it (tests).
 */
int filt_scheme_alive(const filt_scheme_t *s, uint32_t span, const uint8_t *cnt);

/**
 * Whether neighborhood T (L bases, base i in bits 2i..2i+1) matches
 * pattern P with q Q (P->v bases) whose N bases have bit 2i set in NM.
 */
int filt_scheme_match(uint64_t q, uint64_t nm, const filt_spat_t *p, uint64_t t, uint32_t l);

/**
 * A hint: read SEQ (LEN bases) will be filtered by scheme S soon; prefetch
 * STAGE 0 its patterns' start-list entries, 1 their SeedBlocks' keys, 2
 * their first positions (give a read each stage one read apart; WS keeps
 * the seed codes of the last four reads, found again by SEQ's address).
 */
void filt_scheme_prefetch(filt_ws_t *ws, const filt_scheme_t *s, const char *seq,
		uint32_t len, int stage);

/**
 * The keys of a SeedBlock (N of them: K32 when l <= 16, else K64) that
 * match pattern P with q Q (N bases NM): their indexes into OUT (room for
 * N), in order; the count.  The per-key result of filt_scheme_match, with
 * cheap compares first (tests).
 */
size_t filt_scheme_scan(const uint32_t *k32, const uint64_t *k64, uint64_t n, uint64_t q,
		uint64_t nm, const filt_spat_t *p, uint32_t l, uint32_t *out);

/** Scheme S as text "0:0+11/1,9:2+12/2,...", o:x+tail/e per pattern. */
void filt_scheme_str(const filt_scheme_t *s, char *buf, size_t len);

/**
 * The candidates of read SEQ (LEN = S->m bases) by scheme S, as filt_read
 * gives them (WS any workspace of the index; its method is not used).
 */
uint32_t filt_scheme_read(filt_ws_t *ws, const filt_scheme_t *s, const char *seq, uint32_t len,
		rec_cand_t **out, filt_stats_t *st);

/* ---- -E with -m auto: a setting per read length (common/filt_plan.c) ------ */

#define FILT_PLAN_MAXPAIRS 48   /* (method, e) pairs: bpr 0..31, bs, ph, fm 0..3 */
#define FILT_PLAN_PATS 512      /* calibration: patterns counted per pair */
#define FILT_PLAN_SAMPLE 256    /* calibration: the first reads of the input */
#define FILT_PLAN_MAXLEN 2048   /* lengths planned: extend's longest read */

/** A (method, e) pair and its measured model cost of one pattern (microseconds). */
typedef struct {
	int method;
	uint32_t e;
	double cost;
} filt_pair_t;

/**
 * The plan of a run: for each read length 0..maxlen, the cheapest setting
 * (a pair, a step) that guarantees the bound for it, or, where none does,
 * the one that guarantees the most (the read is counted in ncov[length]).
 */
typedef struct {
	const idx_t *x;
	filt_opt_t base;        /* any, cap, count_only, the least e */
	uint32_t max_step;      /* -s with -E: the largest step, 0 = any */
	filt_bound_t bound;
	filt_pair_t pair[FILT_PLAN_MAXPAIRS];   /* cheapest first */
	int npair;
	uint32_t maxlen;
	int16_t *pick;          /* per length: the pair, -1 when no pattern fits */
	uint32_t *step;         /* per length: the step */
	int32_t *guar;          /* per length: edit operations guaranteed, -1 none */
	uint64_t *ncov;         /* per length: reads not covered (filt_run, atomic) */
	filt_scheme_t *sch;     /* per length 0..FILT_SCHEME_MAXLEN: the scheme taken
	                         * instead of the pair (np > 0), when it is cheaper
	                         * or the pair does not cover the length */
} filt_plan_t;

/** The model cost (microseconds) of a pattern of pair METHOD, E with ITEMS, MATCHES. */
double filt_pair_cost(int method, uint32_t e, double items, double matches);

/**
 * Measure the pairs that index X accepts (METHOD, or every method with
 * FILT_AUTO; e from BASE->e up, only BASE->e with E_FIXED; BASE->any kept)
 * on the N reads SEQ (LEN bases each): their cost per pattern as text
 * "bpr/1:0.83,ph/0:0.41" into BUF (the stream's seedfilt.plan).  Returns
 * the number of pairs, or -1 after sp_fail.  Deterministic: counts, no clock.
 */
int filt_plan_calibrate(const idx_t *x, const filt_opt_t *base, int method, int e_fixed,
		const char *const *seq, const uint32_t *len, size_t n, char *buf, size_t blen);

/**
 * Build the plan of index X for bound B from the pair costs COSTS (the text
 * of filt_plan_calibrate), the settings of BASE and MAX_STEP, for lengths
 * 0..MAXLEN.  0, or -1 after sp_fail (malformed text, a pair X refuses).
 */
int filt_plan_init(filt_plan_t *p, const idx_t *x, const filt_opt_t *base, uint32_t max_step,
		const filt_bound_t *b, const char *costs, uint32_t maxlen);

/**
 * The setting of plan P for reads of M bases into *O; returns the edit
 * operations it guarantees for them (-1: none; reads longer than maxlen
 * get maxlen's setting).
 */
int32_t filt_plan_at(const filt_plan_t *p, uint32_t m, filt_opt_t *o);

/** The pair index of reads of M bases, -1 when no pattern fits. */
int filt_plan_pair(const filt_plan_t *p, uint32_t m);

/**
 * The scheme plan P takes for reads of M bases (filt_plan_at's setting is
 * then not used; its return value is the scheme's guarantee), or NULL.
 */
const filt_scheme_t *filt_plan_scheme(const filt_plan_t *p, uint32_t m);

/** Free the tables of P. */
void filt_plan_free(filt_plan_t *p);

/** Per-thread workspace for index X and options O. */
filt_ws_t *filt_ws_new(const idx_t *x, const filt_opt_t *o);

/**
 * A workspace that searches only partitions [P0, P1) of X (seedfilt -M: a
 * pass's group); its candidates name the index's partitions as ever.
 */
filt_ws_t *filt_ws_part(const idx_t *x, const filt_opt_t *o, uint32_t p0, uint32_t p1);

/** Search partitions [P0, P1) from now on (not while WS is in use). */
void filt_ws_range(filt_ws_t *ws, uint32_t p0, uint32_t p1);

/** Free a workspace. */
void filt_ws_free(filt_ws_t *ws);

/**
 * One pattern of a read: neighborhood part q (base i in bits 2i..2i+1), seed
 * code, offset, strand, and (bpr only, v <= 31) nmask: bit i set when base i
 * of q is N (packed as 0 in q; it matches no base).  0 for bs, ph and fm.
 * E is the pattern's error budget: the run's e, less one for each N a
 * Hamming method (bs, ph, fm) replaced by a base (filt_cut); FIXQ and FIXC
 * mask (3 per 2-bit base) those positions in q and the seed code: a match
 * must hold there the base of the pattern, so that the variants of one
 * pattern find each window once.
 */
typedef struct {
	uint64_t q, fixq;
	uint32_t code, o, strand;
	uint32_t nmask;
	uint32_t e, fixc;
} filt_pat_t;

/**
 * Start a new read in WS without cutting it: its patterns were cut before
 * (the device path cuts with filt_cut in one workspace and finishes with
 * filt_hits, filt_finish in another).  filt_cut does this itself.
 */
void filt_begin(filt_ws_t *ws);

/**
 * Start a new read in WS and cut the patterns of SEQ (LEN bases, ASCII;
 * anything but ACGT counts as N): returns their count, *PATS views them
 * (valid until the next read).  Counts reads, short reads, patterns and
 * patterns skipped over N in ST (bpr: N in the seed; a pattern with N only
 * in q is kept with nmask set and counted in kept_n too).
 */
uint32_t filt_cut(filt_ws_t *ws, const char *seq, uint32_t len,
		const filt_pat_t **pats, filt_stats_t *st);

/**
 * A hint: read SEQ (LEN bases) will be filtered soon.  Prefetches the index
 * lines its patterns need first: STAGE 0 their start-list entries, STAGE 1
 * their SeedBlocks (which reads the start lists: give a read stage 0 one
 * read earlier).  Changes no result and no counter; nothing for fm.
 */
void filt_prefetch(filt_ws_t *ws, const char *seq, uint32_t len, int stage);

/** Add N matches of pattern P (window positions HITS in partition PART). */
void filt_hits(filt_ws_t *ws, uint32_t part, const uint32_t *hits, size_t n,
		const filt_pat_t *p);

/**
 * fm: locate the NR BWT row ranges RG (4 u32 each: lo, hi as low and high
 * halves) of pattern P in partition PART and add the windows found, as
 * filt_hits does; counts them as matches in ST.
 */
void filt_hits_fm(filt_ws_t *ws, uint32_t part, const uint32_t *rg, uint32_t nr,
		const filt_pat_t *p, filt_stats_t *st);

/**
 * The candidates of the current read: its matches as diagonals, sorted by
 * (part, pos, strand), unique, with support counts, at most o->cap of them
 * (those with the largest support) when a cap is set.  *OUT points into WS
 * (valid until the next call); returns the count and adds to ST.
 */
uint32_t filt_finish(filt_ws_t *ws, rec_cand_t **out, filt_stats_t *st);

/**
 * The candidates of one read SEQ (LEN bases, ASCII; anything but ACGT counts
 * as N): sorted by (part, pos, strand), unique, with support counts, at
 * most o->cap of them (those with the largest support) when a cap is set.
 * *OUT points into WS (valid until the next call); returns the count and
 * adds to ST.
 */
uint32_t filt_read(filt_ws_t *ws, const char *seq, uint32_t len,
		rec_cand_t **out, filt_stats_t *st);

/** Add the counters of B to A. */
void filt_stats_add(filt_stats_t *a, const filt_stats_t *b);

/* ---- OpenCL backend (common/filt_ocl.c) ------------------------------------ */

typedef struct filt_dev filt_dev_t;

/**
 * Set up method O->method on device OCL for index X: builds the kernels and
 * uploads the partitions (all of them when they fit in 60% of the device
 * memory, else one at a time).  NULL with a message in MSG when the method
 * has no kernel (fm).
 */
filt_dev_t *filt_dev_new(ocl_ctx_t *ocl, const idx_t *x, const filt_opt_t *o,
		char *msg, size_t len);

/** Release the device buffers and kernels. */
void filt_dev_free(filt_dev_t *d);

/**
 * Let the host side of D use at most N threads (-t), the caller's included
 * (it gathers a large batch's patterns with up to 4, by sp_for); default 4.
 */
void filt_dev_set_threads(filt_dev_t *d, int n);

/**
 * Match the NP patterns PAT (of any reads) in partition PART on the device:
 * PCNT[i] gets the number of window positions of pattern i, and the
 * positions are appended to *HITS (*N_HITS used of *CAP_HITS, grown with
 * realloc), those of pattern i from (*HITS)[HOFF[i]] on (the device works
 * on the patterns in seed-code order, so they come in that order).  For fm
 * they are BWT row ranges instead, 4 u32 each (PCNT[i] = 4 x ranges), for
 * filt_hits_fm.  Work is cut into slices whose buffers fit the device;
 * returns 0, or -1 after sp_fail (even one pattern does not fit, or the
 * batch has too many items).  Not thread-safe: one call at a time per D.
 */
int filt_dev_match(filt_dev_t *d, uint32_t part, const filt_pat_t *pat, size_t np,
		uint32_t *pcnt, uint64_t *hoff, uint32_t **hits, size_t *n_hits,
		size_t *cap_hits);

/* ---- memory budget (common/filt_mplan.c, common/filt_store.c) -------------- */

/** What filt_mplan weighs (filt_mplan.c states the model). */
typedef struct {
	uint64_t mem;          /* M: the budget, bytes */
	uint64_t resident;     /* G: bytes held whatever the plan */
	uint64_t per_read;     /* r: bytes per buffered read (> 0) */
	uint64_t max_batch;    /* at most this many reads per batch (0: no limit) */
	uint64_t fixed_batch;  /* -B given: exactly this batch (0: choose) */
	double load_bps;       /* beta: bytes per second a partition loads at */
	double pass_s;         /* tau: seconds one more pass costs a read */
} filt_mplan_in_t;

/** A plan: batch size and groups of consecutive partitions, one per pass. */
typedef struct {
	uint32_t n_groups;
	uint32_t *gbeg;        /* n_groups + 1: group g is partitions [gbeg[g], gbeg[g+1]) */
	uint64_t batch;        /* reads per batch */
	uint64_t chunk;        /* bytes of the largest group */
	int all_in;            /* the whole index fits beside a batch: loaded once */
	double cost;           /* the model's seconds per read */
	char why[320];         /* one line for the -v summary */
} filt_mplan_t;

/**
 * Plan batches and passes for partitions of S[0..N) bytes under IN: the
 * least-cost plan of the model in filt_mplan.c.  Returns 0, or -1 after
 * sp_fail when not even the largest partition fits beside one read.
 */
int filt_mplan(const filt_mplan_in_t *in, const uint64_t *s, uint32_t n, filt_mplan_t *pl);

/** The model's seconds per read of N_GROUPS passes over batches of BATCH reads. */
double filt_mplan_cost(const filt_mplan_in_t *in, uint64_t index_bytes, uint64_t batch,
		uint32_t n_groups);

void filt_mplan_free(filt_mplan_t *pl);

/*
 * Candidates kept between passes: one stream per thread, in memory up to a
 * share of the budget, the rest in an unlinked-at-exit file of -T.
 */
typedef struct filt_store filt_store_t;

/** A store of NT streams of MEM bytes in memory each; spills go to TMP_DIR (NULL: $TMPDIR or /tmp). */
filt_store_t *filt_store_new(int nt, size_t mem, const char *tmp_dir);

/** Forget everything stored (a new batch); the file is reused. */
void filt_store_reset(filt_store_t *s);

/** Append C[0..N) to stream TID: *OFF names them; 0, or -1 after sp_fail (a write error). */
int filt_store_put(filt_store_t *s, int tid, const rec_cand_t *c, uint32_t n, uint64_t *off);

/** The N candidates at OFF of stream TID into OUT; 0, or -1 after sp_fail. Any thread. */
int filt_store_get(filt_store_t *s, int tid, uint64_t off, uint32_t n, rec_cand_t *out);

/** Bytes written to the temporary file so far (all batches). */
uint64_t filt_store_spilled(const filt_store_t *s);

/** Resets so far: the rounds of passes made (a batch makes one or more). */
uint64_t filt_store_rounds(const filt_store_t *s);

/** Bytes stored since the last reset (in memory and in the file). */
uint64_t filt_store_bytes(const filt_store_t *s);

/**
 * Bytes the store may hold now: its memory, plus half the space free in its
 * directory and the file's own (reused) blocks; UINT64_MAX when unknown.
 * SEEDPIPE_DEBUG_TMP_ROOM (bytes) replaces the directory's part (tests).
 */
uint64_t filt_store_room(const filt_store_t *s);

void filt_store_free(filt_store_t *s);

/**
 * Sort the N keys of A (each <= MAX) ascending, T (room for N) the scratch;
 * returns A or T, the one that holds them (an LSD radix sort whose digits
 * fit N: common/filt_reduce.c).
 */
uint64_t *filt_sort_keys(uint64_t *a, uint64_t *t, size_t n, uint64_t max);

/**
 * Keep the CAP candidates of C[0..N) of most support (ties: the first by
 * partition, position, strand), in that order again; N if N <= CAP or
 * CAP = 0.  Counts capped reads and dropped candidates in ST.
 */
uint32_t filt_cap(rec_cand_t *c, uint32_t n, uint32_t cap, filt_stats_t *st);

/* ---- top loop (common/filt_run.c, common/filt_in.c) ------------------------ */

/** Run parameters of the top loop. */
typedef struct {
	filt_opt_t o;
	int n_threads;        /* >= 1 */
	size_t batch;         /* reads per batch */
	int verbose;
	filt_bound_t bound;   /* -E: edit operations to guarantee (set 0: none) */
	uint32_t sens_len;    /* -L: read length of the -v statement, 0 = first read */
	filt_dev_t *dev;      /* OpenCL backend, NULL: native C */
	/* -M: the index is loaded with IDX_LOAD_PARTS and mapped in passes;
	 * plan.n_groups == 0: everything in memory as before */
	filt_mplan_t mplan;
	filt_store_t *store;  /* candidates between passes (native path) */
	size_t gather_max;    /* -M: most bytes of a batch's records held at once (0: all) */
	filt_plan_t *plan;    /* -E with -m auto: each read's setting by its length
	                       * (o: the device's; reads of another pair are
	                       * filtered on the host); NULL: o for every read */
} filt_run_t;

/* seedfilt -M / -T (common/filt_budget.c). */
typedef struct {
	uint64_t mem;          /* -M: bytes */
	const char *tmp_dir;   /* -T (NULL: $TMPDIR, /tmp) */
	int batch_set;         /* -B given: keep run->batch */
	uint32_t read_len;     /* expected read length (0: 150) */
	int dev;               /* a device will match (5 batches in flight, not 3) */
	int parts;             /* set by filt_budget_flags: loaded a partition at a time */
} filt_budget_t;

/** SIZE: bytes, or with K, M, G, T (powers of 1024); 0 if bad. */
uint64_t filt_parse_size(const char *s);

/** A size as the -M lines say it into S (LEN bytes): "N.N MiB" below 1 GiB, else "N.NN GiB". */
void filt_size_str(char *s, size_t len, uint64_t v);

/** The default -M: half the physical memory (0 if unknown). */
uint64_t filt_default_mem(void);

/**
 * The idx_load flags of INDEX for RUN under the budget BO (its mem 0: the
 * default -M, set here): 0 (whole) when the file fits beside a batch of
 * RUN->batch reads, else IDX_LOAD_PARTS (partitions checked one at a time,
 * then left out of memory), with BO->parts set.  RUN->n_threads and
 * RUN->batch must be set.
 */
int filt_budget_flags(const char *index, const filt_run_t *run, filt_budget_t *bo);

/**
 * With BO->parts: RUN->mplan, RUN->batch and RUN->store for passes over
 * index X (loaded with filt_budget_flags' flags), its partitions let go
 * (what the calibrations touched); with the plan's all_in X stays
 * (X->lazy 0).  0, or -1 after sp_fail when the budget cannot hold one
 * partition beside one read.  Nothing to do without BO->parts.
 */
int filt_budget_plan(idx_t *x, filt_run_t *run, const filt_budget_t *bo);

/**
 * Before filt_dev_new under -M in passes: a device whose memory is host
 * memory (a CPU device: PoCL) gets the budget as its memory, so that its
 * partitions are uploaded one at a time and its batch buffers sized by it;
 * a GPU keeps its own memory (an index partition goes to it once a pass).
 */
void filt_budget_device(ocl_ctx_t *ocl, const filt_budget_t *bo);

/**
 * The summary's lines on the budget: when the index was mapped in groups of
 * partitions, the plan and the passes made over BATCHES batches (always);
 * with VERBOSE also the peak RSS and a one-pass plan.
 */
void filt_budget_report(const filt_run_t *run, const filt_budget_t *bo, uint64_t batches, int verbose);

/**
 * Seconds spent per stage: reading batches, filtering them (wall time while
 * some filtering step runs; it encodes the records too) and writing them;
 * the three overlap.  cut, match and finish sum each filtering step's own
 * seconds over the batches (they overlap each other in the pipeline).
 */
typedef struct {
	double read, filter, write;
	uint64_t batches;     /* batches read */
	double cut, match, finish;   /* each filtering step's own seconds (device path:
	                              * cut, match, finish; native: finish only) */
} filt_times_t;

typedef struct filt_in filt_in_t;

/**
 * Open the reads at PATH ("-" = stdin): FASTA or FASTQ (plain or gzip) or a
 * seedpipe reads stream, told apart by the first bytes.  Dies with a
 * message on errors.
 */
filt_in_t *filt_in_open_or_die(const char *path);

/**
 * The next read of IN into RD (views valid until the next call): 1, 0 at
 * the end of the input, or -1 after sp_fail.  Any thread (one at a time).
 */
int filt_in_next(filt_in_t *in, rec_read_t *rd);

/**
 * Make IN paired: MATE2 (NULL: IN interleaved, mate 1 then mate 2) gives
 * the mates 2 of IN's mates 1.  filt_in_next then returns mate 1, mate 2,
 * ... with rec_read_t.mate 1 and 2 and ids counting both; a pair whose
 * names differ (after mate 1's final /1 and mate 2's /2) or a mate without its mate is an
 * error naming the read (-1 after sp_fail).  IN owns MATE2.
 */
void filt_in_pair(filt_in_t *in, filt_in_t *mate2);

/**
 * The length of the first read, before any filt_in_next (which then
 * returns it): 1 with *LEN set, 0 for an empty input, -1 after sp_fail.
 */
int filt_in_peek(filt_in_t *in, uint32_t *len);

/**
 * Hold the first N reads of IN (fewer at its end), before any filt_in_next
 * (which then returns them): *SEQ and *LEN view their bases and lengths
 * (valid until filt_in_close).  The count, or -1 after sp_fail.
 */
int filt_in_sample(filt_in_t *in, size_t n, const char *const **seq, const uint32_t **len);

/** Provenance of a reads stream input, NULL for FASTA/FASTQ. */
const rec_prov_t *filt_in_prov(const filt_in_t *in);

/** Close the input. */
void filt_in_close(filt_in_t *in);

/**
 * Filter every read of IN against index X and write one candidates record
 * per read, in input order, to W.  Totals in TOT, stage times in TM.
 * Returns 0, or -1 after sp_fail (the first error of any thread; the run
 * stops there).  W is put in non-die mode (it is written on a pipeline
 * thread): a write error stops the run and stays in W (rec_writer_error).
 */
int filt_run(const idx_t *x, const filt_run_t *run, filt_in_t *in, rec_writer_t *w,
		filt_stats_t *tot, filt_times_t *tm);

/**
 * -d auto (common/filt_auto_dev.c): the device of ocl_auto_spec(), opened
 * with FLAGS (OCL_VERBOSE is left to the caller), or NULL for the native
 * code, chosen by the measured model of ocl_auto.h for index X, RUN's
 * options and threads (run->o.method set) and reads of LEN bases (the first
 * read's; 0: an empty input) in IN_PATH and IN2_PATH (NULL: none; "-" or
 * a pipe: of unknown size); calibrates first (device and native runs on
 * synthetic reads) when no calibration is cached.  The device comes from
 * ocl_auto_peek: an answer from its cache that proves wrong (the device
 * does not open, or is another one) is forgotten and the device probed
 * again.  WHY gets the choice, its reason and numbers.  Main thread only.
 */
ocl_ctx_t *filt_dev_auto(const idx_t *x, const filt_run_t *run, const char *in_path,
		const char *in2_path, uint32_t len, unsigned flags, char *why, size_t why_len);

/**
 * The index at INDEX (idx_load with LOAD_FLAGS), loaded on a thread while
 * the main thread opens the device SPEC (*OCL; ocl_open_or_die with FLAGS:
 * a bad or missing device exits at once); SPEC NULL: no device (*OCL NULL).  Exits as
 * idx_open_or_die on a bad index.  Main thread (common/filt_auto_dev.c).
 */
idx_t *filt_open_or_die(const char *index, const char *spec, unsigned flags, int load_flags,
		ocl_ctx_t **ocl);

#endif
