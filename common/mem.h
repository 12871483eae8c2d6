/*
 * mem.h - maximal exact matches between reads and the reference (seedfilt
 * -m mem, MUMmer's "mummer -maxmatch" on the FM-index that seqidx -m fm
 * builds; man/seedfilt.1, section MAXIMAL EXACT MATCHES).
 *
 * A MEM of a read strand q (m bases) is (i, g, len): q[i..i+len) equals the
 * reference at global position g, within one sequence, len >= L, and it can
 * be extended neither to the left (i = 0, g at the start of its sequence,
 * or q[i-1] != ref[g-1]) nor to the right.  Letters compare as MUMmer
 * compares them: N matches N (and nothing else) unless -n, where N matches
 * nothing.
 *
 * Three stages, each a function here:
 *   1. mem_find_fm: the FM-MEMs of a strand in one partition (the search of
 *      kernels/inc_mem.h, which the OpenCL path runs as kernels/mem.cl): exact
 *      matches over the partition's text with N read as A and the sequences
 *      joined, maximal within the partition.
 *   2. mem_finish: cut them at N (where only one side has N) and at sequence
 *      ends into true matches; keep those that are maximal in the whole
 *      reference and that this partition owns (a match in the overlap of two
 *      partitions belongs to the later one); add the matches that cross a
 *      partition cut (direct comparison); apply -mum / -mumreference; sort
 *      in MUMmer's order.
 *   3. mem_fmt_mummer / mem_cands: the text lines or the candidates.
 *
 * Order (MUMmer's): -maxmatch and -mumreference by query start, then by the
 * reference suffix at g in lexicographic order of the text "seq1 $ seq2 $
 * ... seqN" with A < C < G < N < T < $ < end of text; -mum by g.
 */
#ifndef SP_MEM_H
#define SP_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "idx.h"
#include "ocl.h"
#include "rec_kinds.h"

enum { MEM_MAXMATCH = 0, MEM_MUMREF, MEM_MUM };
#define MEM_FWD 1
#define MEM_REV 2

/** Options. */
typedef struct {
	uint32_t L;           /* shortest match */
	uint32_t w;           /* window of the search, 0 = from the index size */
	int mode;             /* MEM_MAXMATCH, MEM_MUMREF, MEM_MUM */
	int strands;          /* MEM_FWD | MEM_REV */
	int acgt;             /* -n: N matches nothing */
} mem_opt_t;

/**
 * One match found in a partition's FM-index (stage 1).  TAIL: the 32
 * partition text bases after it (from p + len on, the first in the low
 * bits), valid when p + len + 32 <= the partition's length; they save the
 * sort (stage 2) from reading the reference.
 */
typedef struct {
	uint32_t part, i, len, p;     /* p: partition offset */
	uint64_t tail;
} mem_raw_t;

/** One MEM of a read strand; TAIL as mem_raw_t's when TAIL_OK (no N, no sequence end there). */
typedef struct {
	uint64_t g;                   /* global reference position */
	uint32_t i, len;
	uint64_t tail;
	uint32_t tail_ok;
} mem_t;

/** A read strand: ASCII (ACGTN) and 2-bit words (N as A, two spare words). */
typedef struct {
	const char *seq;
	const uint32_t *words;
	uint32_t m;
} mem_strand_t;

/** A growable array of T. */
#define MEM_VEC(T) struct { T *a; size_t n, cap; }
typedef MEM_VEC(mem_raw_t) mem_rawvec_t;
typedef MEM_VEC(mem_t) mem_vec_t;

/** Counters. */
typedef struct {
	uint64_t reads, strands, windows, steps, raw, mems;
} mem_stats_t;

typedef struct mem_idx mem_idx_t;

/**
 * 0 if index X can serve -m mem (it holds the FM-index), else -1 with a
 * message (no tool prefix) in MSG.
 */
int mem_check(const idx_t *x, char *msg, size_t len);

/**
 * Prepare the search on X: the window length, each partition's view and
 * its K-mer table (built with NTHREADS threads).  Returns NULL with a
 * message in MSG when O is out of range (w > L).
 */
mem_idx_t *mem_idx_new(const idx_t *x, const mem_opt_t *o, int nthreads, char *msg, size_t len);

void mem_idx_free(mem_idx_t *mi);

/** The index and options, the window w and step s = L - w + 1. */
const idx_t *mem_idx_x(const mem_idx_t *mi);
const mem_opt_t *mem_idx_opt(const mem_idx_t *mi);
uint32_t mem_idx_w(const mem_idx_t *mi);
uint32_t mem_idx_s(const mem_idx_t *mi);

/**
 * The view of partition PART for the search (kernels/inc_mem.h), as the
 * opaque bytes of a mem_fm_t, and its K-mer table (JUMP_LEN bytes); the
 * device path copies them.
 */
const void *mem_idx_fm(const mem_idx_t *mi, uint32_t part);
const uint32_t *mem_idx_jump(const mem_idx_t *mi, uint32_t part, size_t *jump_len);

/** Windows of a strand of M bases: floor((m - w) / s) + 1, 0 when m < L. */
uint32_t mem_n_windows(const mem_idx_t *mi, uint32_t m);

/** Words of a strand of M bases (two spare words included). */
static inline size_t mem_words_len(uint32_t m) { return ((size_t)m + 15) / 16 + 2; }

/**
 * Pack strand SEQ (M bases, ASCII ACGTN; anything but ACGT counts as A)
 * into mem_words_len(m) words at W.
 */
void mem_pack(uint32_t *w, const char *seq, uint32_t m);

/**
 * 1 when strand SEQ (M bases) may leave out the deep rows of long runs of N
 * (kernels/inc_mem.h): at most MEM_DEEP bases and fewer than L N's, or -n.
 */
int mem_deep_ok(const mem_idx_t *mi, const char *seq, uint32_t m);

/** Per-thread scratch of mem_find_fm and mem_finish. */
typedef struct mem_scratch mem_scratch_t;
mem_scratch_t *mem_scratch_new(void);
void mem_scratch_free(mem_scratch_t *s);

/** Stage 1 on the CPU: append the FM-MEMs of ST in partition PART to V. */
void mem_find_fm(const mem_idx_t *mi, uint32_t part, const mem_strand_t *st,
		mem_rawvec_t *v, mem_stats_t *stat, mem_scratch_t *s);

/**
 * Stage 2: the MEMs of strand ST from its NRAW FM-MEMs RAW (of every
 * partition; reordered), in output order for the mode, into OUT (reset
 * first).  Returns the count.
 */
size_t mem_finish(const mem_idx_t *mi, const mem_strand_t *st, mem_raw_t *raw, size_t nraw,
		mem_vec_t *out, mem_scratch_t *s);

/** A growable byte buffer. */
typedef MEM_VEC(char) mem_buf_t;

/**
 * Stage 3, text: append MUMmer's lines for the N MEMs M of the strand of
 * a read of LEN bases (REV: the reverse complement, whose query positions
 * are given on the forward strand as "mummer -c" does) to B, after the
 * header "> NAME" or "> NAME Reverse".  FOUR: the reference name column
 * even for one sequence (-F).
 */
void mem_fmt_mummer(const mem_idx_t *mi, mem_buf_t *b, const char *name, size_t name_len,
		int rev, uint32_t len, const mem_t *m, size_t n, int four);

/**
 * Stage 3, candidates: the diagonals of the MEMs of both strands (MF, NF
 * forward; MR, NR reverse) as rec_cand_t, sorted by (part, pos, strand),
 * one per diagonal, support = the summed lengths of its MEMs.  The
 * diagonal of a MEM is g - i, clamped to the start of its sequence, in the
 * partition that owns that position.  Returns the count; *OUT is grown
 * with sp_realloc (*CAP entries).
 */
uint32_t mem_cands(const mem_idx_t *mi, const mem_t *mf, size_t nf, const mem_t *mr, size_t nr,
		rec_cand_t **out, size_t *cap);

/* ---- OpenCL backend (common/mem_ocl.c) ---------------------------------- */

typedef struct mem_dev mem_dev_t;

/**
 * Set up stage 1 on device OCL for MI: builds the kernel and
 * uploads the partitions (all of them when they fit, else one at a time per
 * batch).  NULL with a message in MSG when a partition does not fit.
 */
mem_dev_t *mem_dev_new(ocl_ctx_t *ocl, const mem_idx_t *mi, char *msg, size_t len);

void mem_dev_free(mem_dev_t *d);

/** 1 when every partition stays on the device, 0 when they take turns. */
int mem_dev_resident(const mem_dev_t *d);

/**
 * Stage 1 on the device for NS strands: strand k has LEN[k] & 0x7fffffff
 * bases (0: not searched) packed at WORDS + WOFF[k] (NWORDS words in all);
 * bit 31 of LEN[k]: mem_deep_ok holds for it.  The FM-MEMs of strand k
 * (partition by partition, each in the order of mem_find_fm) come back as
 * (*RAW)[(*ROFF)[k] .. (*ROFF)[k+1]].  *RAW is set here to an array of
 * the device's (page-locked host memory where the device gives it, so the
 * matches come down with no copy): give it back with mem_dev_raw_free,
 * after a failure too; *ROFF is allocated here, the caller frees it.
 * *DONE: NULL, or an event that completes when the matches are down (they
 * come down while the next batch's kernels run): give it to mem_dev_wait
 * before *RAW is read or given back, after a failure too.
 * Returns 0, or -1 after sp_fail() (runs on a pipeline thread).
 */
int mem_dev_find(mem_dev_t *d, const uint32_t *words, size_t nwords, size_t ns,
		const uint64_t *woff, const uint32_t *len, mem_raw_t **raw, uint64_t **roff, cl_event *done);

/** Wait for *DONE of mem_dev_find (NULL: nothing), which is set to NULL; 0, or -1 after sp_fail. */
int mem_dev_wait(mem_dev_t *d, cl_event *done);


/** Give back an array of mem_dev_find (NULL is fine); any thread. */
void mem_dev_raw_free(mem_dev_t *d, mem_raw_t *raw);

/** Where the device path's time went (seconds of the pipeline thread that runs it). */
typedef struct {
	double setup;              /* mem_dev_new: the program, the partitions' uploads */
	double in;                 /* the batches' strands up */
	double part;               /* partitions uploaded for their turn */
	double rows, loc;          /* the kernels (each waited for) */
	double scan;               /* the windows' counts to their first places: the prefix
	                            * sums queued on the device (mem_scan_*; waited for in
	                            * LOC's read of the totals), or under
	                            * SEEDPIPE_MEM_HOST_SCAN the counts down, their places up */
	double pack;               /* the short matches' records left out (their counts down) */
	double get;                /* the matches down */
	uint64_t pinned;           /* bytes of page-locked arrays of matches allocated */
	uint64_t pin_held_max;     /* (held at once, at most) */
	double wait;               /* mem_dev_wait: the matches awaited after mem_dev_find (other threads) */
	double pin;                /* the time their allocations took */
	double group;              /* strand by strand when there are several partitions */
	uint64_t batches, launches, reruns, slots;
	uint64_t shal;             /* windows whose shallow rows went to the kernel mem_shal */
	uint64_t wide;             /* windows whose left steps went to the kernel mem_wide */
} mem_dev_time_t;

const mem_dev_time_t *mem_dev_time(const mem_dev_t *d);

/* ---- the memory budget (common/mem_budget.c; seedfilt -m mem -M) ----------- */

/**
 * The plan under -M.  An index whose file fits the budget beside the batches
 * is loaded whole; a larger one is mapped with IDX_LOAD_PARTS: its
 * partitions are checked one at a time and left out of memory, the K-mer
 * tables are built one partition at a time, and stage 1 runs in passes: a
 * batch of reads goes past each group of partitions in turn (its FM-index
 * brought in, searched by every read of the batch, let go), the raw matches
 * kept until the batch's last pass.  With a device the partitions are on
 * the device and the host maps one at a time to upload it.
 */
typedef struct {
	uint64_t mem;              /* -M in bytes (0: half the physical memory, set by mem_budget_flags) */
	int parts;                 /* the index is mapped with IDX_LOAD_PARTS */
	uint32_t n_groups;         /* 0: one pass; else the groups a batch passes in turn */
	uint32_t *gbeg;            /* group g: partitions gbeg[g] .. gbeg[g + 1] - 1 */
	uint64_t fixed;            /* the estimates: global sections, tables, scratch; */
	uint64_t group_max;        /* the largest group's FM-index (the one in memory); */
	uint64_t per_batch;        /* what a batch in flight may hold (0: the defaults) */
	char why[256];
} mem_budget_t;

/** Bytes of partition I's FM-index arrays: what stage 1 reads of it. */
uint64_t mem_part_bytes(const idx_t *x, uint32_t i);

/** Bring partition I's FM-index into memory, or let it go; nothing unless X->lazy. */
void mem_part_load(const idx_t *x, uint32_t i);
void mem_part_drop(const idx_t *x, uint32_t i);

/**
 * The idx_load flags of INDEX under B (B->mem 0: the default, set here):
 * IDX_LOAD_PARTS, with B->parts set, when the file does not fit beside NB
 * batches in flight (DEV: of a device's size) and NTHREADS threads' scratch.
 */
int mem_budget_flags(const char *index, int nthreads, int dev, int nb, mem_budget_t *b);

/** Where stage 1 runs for mem_budget_plan: the CPU, a GPU, a CPU device (PoCL: its copies of the
 * partitions are host memory) that takes the partitions in turn or holds them all. */
enum { MEM_BUD_CPU = 0, MEM_BUD_GPU, MEM_BUD_HOSTDEV, MEM_BUD_HOSTDEV_ALL };

/**
 * With B->parts: the plan for index X (opened with B's flags) and its tables
 * MI, NB batches in flight, stage 1 where DEV says (MEM_BUD_*).  X->lazy is
 * cleared when the whole FM-index fits (one pass).  0, or -1 after sp_fail
 * when the budget cannot hold the largest partition beside the batches.
 */
int mem_budget_plan(idx_t *x, const mem_idx_t *mi, int nthreads, int dev, int nb, mem_budget_t *b);

void mem_budget_free(mem_budget_t *b);

/** The summary's line: always for passes over groups, else with VERBOSE. */
void mem_budget_report(const mem_budget_t *b, uint64_t batches, int verbose);

/* ---- the command (common/mem_run.c; options in tools/seedfilt_mem.c) ------ */

#define MEM_DEF_L 20
#define MEM_DEF_BATCH 16384        /* reads per batch at most */
#define MEM_DEF_BATCH_DEV 262144   /* with a device, which wants many strands in flight */

/** What the command line of seedfilt -m mem asks for. */
typedef struct {
	mem_opt_t o;
	const char *index;            /* -x */
	const char *out;              /* -o, "-": stdout */
	const char *in_path;          /* the reads, "-": stdin */
	const char *device;           /* -d, NULL: $SEEDPIPE_DEVICE or auto */
	int mummer;                   /* -O mummer (else a candidates stream) */
	int four, force, quiet, verbose, nthreads;
	size_t batch;                 /* -B, 0: the default */
	uint64_t mem;                 /* -M, 0: the default */
	int argc;                     /* the whole command line, for the provenance */
	char **argv;
} mem_cli_t;

/**
 * Run seedfilt -m mem: every read of CL->in_path against the index, the
 * matches written out, a summary on stderr unless quiet.  Returns the exit
 * status; dies with a message on an error (main thread).
 */
int mem_run(const mem_cli_t *cl);

#endif
