/*
 * align.h - the alignment core of extend: semi-global alignment of whole
 * reads against reference windows within A edit operations (or A
 * substitutions with ALIGN_NOGAPS), with a CIGAR, on the CPU (threads) and
 * in OpenCL, with byte-identical results (one algorithm, in
 * kernels/inc_align.h: the problem, the tie-breaking and the record layout
 * are described there).
 *
 * Limits: reads 1..ALIGN_MAX_READ (2048) bases, windows up to
 * ALIGN_MAX_WIN (8192) bases, A <= ALIGN_MAX_A (15).
 *
 * A batch: READS and WINS are byte buffers (ASCII bases); pair k aligns
 * READS[p.read_off .. + p.read_len) against WINS[p.win_off .. + p.win_len):
 *
 *     reads: |read 0 ......|read 1 ....|...      (ASCII, any order, shared)
 *     wins:  |window 0 ..........|window 1 ...|  (ASCII)
 *     pairs: { read_off, win_off, read_len, win_len, end_lo, end_hi } x N
 *            (32 bytes each; end_hi 0: the best end anywhere in the window)
 *     res:   align_res_t x N                               (144 bytes each)
 *     ends:  N x ENDS_STRIDE bytes, with ALIGN_ENDS only: pair k's end
 *            distances at k * ENDS_STRIDE, ALIGN_END_NONE past its window
 *
 * With ALIGN_PACKED, WINS is 2-bit packed (seqio_pack2's layout: 4 bases a
 * byte, the first in the low bits, N as A) and win_off counts bases, so a
 * whole packed reference (idx_t.pack) can serve as WINS with win_off its
 * global positions; windows may overlap and start anywhere in a byte.
 * Reference N runs then read as A: a caller that cares checks them.
 *
 * On the CPU a batch builds a read's match bits once for the run of pairs
 * that share it (same read_off and read_len, as extend's candidates of one
 * read are), and prefetches the windows of the pairs ahead.
 *
 * Output buffers are best reused from batch to batch: on the device path a
 * freshly allocated RES costs more in page faults than the download itself.
 *
 * For extend: align each candidate's window with ALIGN_ENDS; the maximal
 * runs of ENDS entries within A are the loci (Rabema); the result is the
 * best of the whole window, and a further locus of the same window is
 * traced back by aligning again with end_lo..end_hi around its run.  NM is
 * res.dist, MD comes from align_md_str(), POS is the window's origin plus
 * res.start.  ALIGN_NOCIGAR makes a cheaper first pass (no workspace) when
 * most candidates fail.
 */
#ifndef SP_ALIGN_H
#define SP_ALIGN_H

#include <stddef.h>
#include <stdint.h>

#include "inc_align.h"
#include "ocl.h"

typedef sp_align_pair_t align_pair_t;
typedef sp_align_res_t align_res_t;

#define ALIGN_MAX_READ SP_ALIGN_MAX_READ
#define ALIGN_MAX_WIN SP_ALIGN_MAX_WIN
#define ALIGN_PRE_MAX_READ 1024   /* longest read of the AVX-512 first pass (align_pre.h) */
#define ALIGN_MAX_A SP_ALIGN_MAX_A
#define ALIGN_MAX_CIGAR SP_ALIGN_MAX_CIGAR
#define ALIGN_NOGAPS SP_ALIGN_NOGAPS
#define ALIGN_NOCIGAR SP_ALIGN_NOCIGAR
#define ALIGN_ENDS SP_ALIGN_ENDS
#define ALIGN_PACKED SP_ALIGN_PACKED
#define ALIGN_NOHIT SP_ALIGN_NOHIT
#define ALIGN_INVALID SP_ALIGN_INVALID
#define ALIGN_END_NONE SP_ALIGN_END_NONE
/*
 * With ALIGN_ENDS, on the CPU: of a pair without a hit only res.dist (< 0) is
 * sure to be written, not its ends row nor the rest of its res (extend's pass
 * 1 reads nothing else of them; it saves writing ~250 bytes for each of the
 * many rejected windows).  Not for the device.
 */
#define ALIGN_ENDS_HITS 64u

/** Workspace words align_one() needs for a window of N and a read of M bases. */
static inline size_t align_ws_words(uint32_t n, uint32_t m)
{
	return (size_t)SP_ALIGN_WS_WORDS(n, m);
}

/**
 * Check a batch against the limits: returns 0, or -1 with a message (no
 * tool prefix) in MSG, e.g. "read of pair 7 has 2100 bases (1 to 2048 supported)".  ENDS_STRIDE
 * matters only with ALIGN_ENDS (it must hold every window).
 */
int align_check(const align_pair_t *pairs, size_t n, unsigned max_a, unsigned flags,
		size_t ends_stride, char *msg, size_t msg_len);

/**
 * Align one pair on the CPU: READ (M bases) against the N bases at WIN +
 * WIN_OFF (ASCII; with ALIGN_PACKED, WIN is 2-bit packed as seqio_pack2
 * writes it and WIN_OFF counts bases) within MAX_A, FLAGS ALIGN_*, the best
 * end among window offsets END_LO..END_HI (END_HI 0: anywhere); WS holds align_ws_words(N, M) words (unused with
 * ALIGN_NOGAPS or ALIGN_NOCIGAR); ENDS (N bytes) is filled with ALIGN_ENDS.
 * Allocates nothing.  Out-of-limit input gives dist ALIGN_INVALID.
 */
void align_one(const uint8_t *read, uint32_t m, const uint8_t *win, uint64_t win_off, uint32_t n,
		unsigned max_a, unsigned flags, uint32_t end_lo, uint32_t end_hi, uint64_t *ws,
		uint8_t *ends, align_res_t *res);

/**
 * Align N pairs on the CPU with N_THREADS threads (<= 1: the calling thread),
 * filling RES[0..N) and, with ALIGN_ENDS, ENDS (N * ENDS_STRIDE bytes).
 * Returns 0, or -1 (nothing done, message in MSG) when align_check fails.
 * The results do not depend on N_THREADS.
 */
int align_batch(const uint8_t *reads, const uint8_t *wins, const align_pair_t *pairs, size_t n,
		unsigned max_a, unsigned flags, int n_threads, uint8_t *ends, size_t ends_stride,
		align_res_t *res, char *msg, size_t msg_len);

/*
 * The exact prefilter of align_batch() on the CPU, for gapped pairs with
 * ALIGN_ENDS (extend's first pass): a banded bit-vector pass (one band of
 * 64 diagonals a window, 8 windows a vector, or of 32 diagonals, 16
 * windows a vector, with AVX-512) decides whether any end column of a
 * window is within A; a window where none is gets the core's output for
 * it (no hit, every end ALIGN_END_NONE) without the core, the others go
 * to the core.  Windows whose band is wider than 64 diagonals (n - m + 2A
 * + 1 > 64) always go to the core.
 */
#define ALIGN_PRE_OFF 0      /* every pair to the core */
#define ALIGN_PRE_SCALAR 1   /* the banded pass one window at a time (slower
                              * than the core: the tests' reference) */
#define ALIGN_PRE_SIMD 2     /* the vector pass where the CPU has AVX-512
                              * (F, BW, DQ, VPOPCNTDQ), else as OFF */
#define ALIGN_PRE_AUTO 3     /* SIMD unless SEEDPIPE_NO_SIMD is set (then OFF):
                              * the default */

/**
 * Set the prefilter mode (ALIGN_PRE_*) of later align_batch() calls in the
 * process, for tests and measurements; returns the previous one.  The
 * output never depends on it.
 */
int align_set_prefilter(int mode);

/**
 * The prefilter's decisions for N pairs (as align_batch() takes them) in
 * the current mode: YES[k] = 0 when no end column of pair k is within
 * MAX_A, 1 when one is, 2 when the prefilter does not decide the pair (it
 * goes to the core).  Pairs are not checked against the limits.
 */
void align_pre_batch(const uint8_t *reads, const uint8_t *wins, const align_pair_t *pairs,
		size_t n, unsigned max_a, unsigned flags, uint8_t *yes);

/** A thread's workspace for align_pre_read(). */
typedef struct align_pre_ws align_pre_ws_t;

/** A new workspace for align_pre_read() (free with align_pre_ws_free). */
align_pre_ws_t *align_pre_ws_new(void);

/** Free W (NULL is fine). */
void align_pre_ws_free(align_pre_ws_t *w);

/**
 * The prefilter's decisions (as align_pre_batch() makes them for gapped
 * ALIGN_ENDS | ALIGN_PACKED pairs) for N windows of one read, without
 * pairs: READ (M bases, ASCII) against the WIN_LEN bases from base OFF[k]
 * of the 2-bit packed PACK (idx_t.pack), for k < N.  YES[k] = 0 when no end
 * column of window k is within MAX_A, 1 when one is.  extend's first pass
 * makes pairs only of the windows this lets through (a few percent on a
 * repetitive genome).  Returns 0, or -1 (YES untouched) where the vector
 * pass does not take the shape or is not in use (no AVX-512, the mode, a
 * band of over 32 diagonals: WIN_LEN - M + 2 MAX_A + 1 > 32).
 */
int align_pre_read(align_pre_ws_t *w, const uint8_t *read, uint32_t m, const uint8_t *pack,
		const uint64_t *off, size_t n, uint32_t win_len, unsigned max_a, uint8_t *yes);

/**
 * align_batch() on an OpenCL device (kernels/align.cl, one work item per
 * pair), byte-identical to the CPU.  The buffers are copied to the device
 * whole (the caller sizes batches); the traceback workspace is split into
 * as many kernel runs as ocl_batch_bytes() allows, halved when the device
 * refuses an allocation.  READS_LEN and WINS_LEN are the buffers' sizes in
 * bytes.  Returns CL_SUCCESS, the CL error that even a small run could not
 * avoid (message in MSG), or CL_INVALID_VALUE (message in MSG) when
 * align_check fails or a pair lies outside the buffers.
 */
cl_int align_batch_ocl(ocl_ctx_t *ctx, const uint8_t *reads, size_t reads_len,
		const uint8_t *wins, size_t wins_len, const align_pair_t *pairs, size_t n,
		unsigned max_a, unsigned flags, uint8_t *ends, size_t ends_stride, align_res_t *res,
		char *msg, size_t msg_len);

/*
 * extend's first pass kept on a device (align_dev_*): the 2-bit packed
 * reference goes up once and stays; a call sends the reads and the windows
 * (16 bytes each: align_dwin_t), runs the kernel align_ends
 * (kernels/align.cl) and brings back only the windows with an end within
 * the bound: which, their distance and their ends rows, packed.  Windows
 * go through pinned staging buffers, in runs of at most a chunk, halved
 * when the device refuses memory (down to one window: then the error).
 * Several threads may call at once (each call takes a slot: a queue and
 * buffers of its own), so that one call's transfers overlap another's
 * kernels.
 */
typedef struct align_dev align_dev_t;

/** A window of the first pass, as the device takes it. */
typedef struct {
	uint64_t beg;        /* first base: global offset into the packed reference */
	uint32_t rs;         /* 2 read + strand: the read as aligned (ROFF) */
	uint32_t len;        /* bases */
} align_dwin_t;

/**
 * Put the packed reference REF (REF_LEN bytes, idx_t.pack) on device CTX.
 * NULL with a message in MSG when the device refuses it.  Never exits.
 */
align_dev_t *align_dev_new(ocl_ctx_t *ctx, const uint8_t *ref, size_t ref_len, char *msg,
		size_t msg_len);

/** Free D and its device buffers (NULL is fine). */
void align_dev_free(align_dev_t *d);

/**
 * Check the N windows W against D's reference and the reads (ROFF: NR
 * reads, READS_LEN bytes) before align_dev_ends, on any thread: 0, or -1
 * with a message in MSG; *LONGEST and *STRIDE get the longest read and
 * window.
 */
int align_dev_check(const align_dev_t *d, size_t reads_len, const size_t *roff, size_t nr,
		const align_dwin_t *w, size_t n, unsigned max_a, uint32_t *longest, uint32_t *stride,
		char *msg, size_t msg_len);

/**
 * Align the N windows W against D's reference (ALIGN_NOGAPS in FLAGS or
 * gapped; ALIGN_ENDS, ALIGN_NOCIGAR and ALIGN_PACKED are implied), each
 * with the read at READS + ROFF[w.rs] of ROFF[w.rs + 1] - ROFF[w.rs] bases
 * (ASCII; ROFF has NR + 1 entries, READS READS_LEN bytes): DIST[k] is
 * window k's distance (< 0: no end within MAX_A); for DIST[k] >= 0 its
 * ends row (w.len bytes, as align_batch's ALIGN_ENDS row) is at
 * (*ENDS)[EOFF[k]] (EOFF of the others untouched); *ENDS (*ENDS_CAP bytes,
 * grown with realloc) holds *ENDS_LEN bytes of rows afterwards.  LONGEST
 * and STRIDE are align_dev_check's, which the windows must have passed.
 * Returns 0, or -1 with a message in MSG.  Threads may call at once: up to
 * three calls (SEEDPIPE_ALIGN_SLOTS: 1 to 8) run on the device together, each
 * on its own command queue, buffers and pinned staging; others wait.
 */
int align_dev_ends(align_dev_t *d, const uint8_t *reads, size_t reads_len, const size_t *roff,
		size_t nr, const align_dwin_t *w, size_t n, unsigned max_a, unsigned flags,
		uint32_t longest, uint32_t stride, int32_t *dist, uint32_t *eoff, uint8_t **ends,
		size_t *ends_cap, size_t *ends_len, char *msg, size_t msg_len);

/**
 * align_batch() (gapped, with a CIGAR: FLAGS 0, no ends) of N pairs of
 * READS and WINS (ASCII, READS_LEN and WINS_LEN bytes) on D's device, into
 * RES: extend's second pass, a traceback of each locus.  A slot as
 * align_dev_ends takes; the traceback workspace in runs that fit the
 * slot's share of the device, halved when it is short of memory.  Returns
 * 0, or -1 with a message in MSG.
 */
int align_dev_trace(align_dev_t *d, const uint8_t *reads, size_t reads_len, const uint8_t *wins,
		size_t wins_len, const align_pair_t *pairs, size_t n, unsigned max_a, align_res_t *res,
		char *msg, size_t msg_len);

/*
 * extend's pass-1 windows cut on the device (align_dev_cut): a batch's
 * candidates go up compactly, 8 bytes each, and the kernel align_cut cuts
 * the windows from them, as extend's host code does, into the slot's
 * window buffer; pass 1 then runs on those windows where they are, and
 * only the windows with a hit come back, described (align_dhit_t).
 */

struct align_dlists;

/** A candidate as align_dev_cut takes it: strand, sequence, global position. */
#define ALIGN_DKEY(strand, seq, g) ((uint64_t)(strand) << 63 | (uint64_t)(seq) << 40 | (uint64_t)(g))
#define ALIGN_DKEY_MAX_SEQ (1u << 23)        /* sequences a key can name */
#define ALIGN_DKEY_MAX_POS (1ull << 40)      /* positions a key can hold */

/** A window of align_dev_cut with an end within the bound. */
typedef struct {
	uint64_t beg;        /* its first base (global) */
	uint32_t seq, rs;    /* its sequence; 2 read + strand */
	uint32_t len;        /* bases */
	int32_t dist;        /* its distance */
	uint32_t eoff;       /* its ends row's offset in *ENDS */
} align_dhit_t;

/**
 * Put the sequences' first bases OFF[0..N) and lengths LEN (global, as
 * idx_t) and the partitions' first bases and ends (PBE[2i], PBE[2i + 1],
 * N_PART partitions) on D's device, for align_dev_cut.  0, or -1 with a
 * message.
 */
int align_dev_seqs(align_dev_t *d, const uint64_t *off, const uint64_t *len, size_t n,
		const uint64_t *pbe, size_t n_part, char *msg, size_t msg_len);

/** The host's copies of align_dev_seqs's tables: PBE (*PB) and the sequences' ends (*SE). */
void align_dev_tables(const align_dev_t *d, const uint64_t **pb, const uint64_t **se);

/**
 * Pass 1 of extend (gapped) on D for a batch of NR reads (READS, ROFF as
 * align_dev_ends takes them: read r's strand s at ROFF[2r + s]): read r's
 * candidates are KEYS[COFF[r] .. COFF[r + 1]) (ALIGN_DKEY values, in
 * ascending order, each within its sequence; a read outside 1 ..
 * ALIGN_MAX_READ bases has none), cut on the device into windows as
 * extend's host code cuts them (WIN: the length of merged windows of short
 * reads) and aligned there within MAX_A.  TOT[0], TOT[1]: the windows
 * and their bases.  The windows with an end within MAX_A go to *DH (*N_DH
 * of them, in any order: sorted by read, strand, sequence and first base
 * they are each read's in the order the host cuts them; *DH_CAP entries,
 * grown with realloc),
 * their ends rows to *ENDS as align_dev_ends puts them.  Returns 0, or -1
 * with a message in MSG.  A slot as align_dev_ends takes; runs halved when
 * the device is short of memory.  KEYS NULL: the keys are decoded on the
 * device (kernel align_keys) from the lists LS (below): they go up as the
 * stream holds them, about half the bytes of the keys, and a read the
 * device cannot decode or finds out of order has its keys from LS->HOST
 * (the host's message, if any).
 */
int align_dev_cut(align_dev_t *d, const uint8_t *reads, size_t reads_len, const size_t *roff,
		size_t nr, const uint64_t *keys, const struct align_dlists *ls, const uint32_t *coff,
		unsigned max_a, unsigned win, uint64_t *tot, align_dhit_t **dh, size_t *dh_cap,
		size_t *n_dh, uint8_t **ends, size_t *ends_cap, size_t *ends_len, char *msg,
		size_t msg_len);

/**
 * The candidate lists of a batch as align_dev_cut takes them: read r's
 * list (the stream's encoding, COFF[r + 1] - COFF[r] entries) is LIST +
 * LOFF[2r] .. LIST + LOFF[2r + 1], the offsets ascending over the reads
 * (LOFF[2r + 1] <= LOFF[2r + 2]).  HOST(CTX, r, KEYS, MSG, MSG_LEN): read
 * r's keys, COFF[r + 1] - COFF[r] of them, decoded, checked and sorted on
 * the host into KEYS, for a read the device flags (a malformed list, a
 * candidate outside the index, a strand out of order); 0, or -1 with a
 * message in MSG.
 */
typedef struct align_dlists {
	const uint8_t *list;
	const uint64_t *loff;
	int (*host)(void *ctx, size_t r, uint64_t *keys, char *msg, size_t msg_len);
	void *ctx;
} align_dlists_t;


/** What D has done: calls, pairs, kernel runs, bytes up and down, and seconds. */
typedef struct {
	uint64_t calls, pairs, runs, hits, up_bytes, down_bytes;
	double t_submit;   /* host: offsets, uploads and the kernel enqueued */
	double t_wait;     /* until the distances are back (the kernel, mostly) */
	double t_down;     /* the packed rows brought back */
	double t_ref;      /* the reference uploaded (once) */
	int score_first;   /* kernels align_score + align_rows (else align_ends alone:
	                    * SEEDPIPE_ALIGN_ONE_KERNEL set) */
	int slots;         /* calls that may run at once */
	/* align_dev_trace: calls, pairs, bytes, host seconds to the enqueued
	 * kernels and then waiting for the results */
	uint64_t t_calls, t_pairs, t_up_bytes, t_down_bytes;
	double t_t_submit, t_t_wait;
	/* align_dev_cut: calls, candidates, cuts again for want of room, bytes
	 * up (reads, candidates), reads whose keys the device left to the host
	 * (lists decoded there: LS), host seconds until the window count is back */
	uint64_t c_calls, c_cands, c_again, c_up_bytes, c_host_reads, c_wg_reads;
	double c_t_cut;
	/* every call: seconds the slots were held (summed), and waited for */
	double t_held, t_slot_wait;
	/* SEEDPIPE_ALIGN_PROFILE: the device seconds of the kernels (summed over
	 * the queues) of the keys' decoding (a work item a list, a work-group a
 * long list), the cut, pass 1 (score and rows,
	 * or ends) and pass 2, the kernel runs timed, and the seconds from the
	 * first kernel's start to the last one's end */
	double k_keys, k_keys_wg, k_cut, k_score, k_rows, k_ends, k_trace, k_span;
	uint64_t k_runs;
} align_dev_stats_t;

/** D's counters so far. */
void align_dev_stats(const align_dev_t *d, align_dev_stats_t *st);

/**
 * Write the CIGAR of RES as SAM text ("95M1I4M") into BUF (LEN bytes, 8 per
 * run is always enough); "*" without a CIGAR.  Returns BUF.
 */
char *align_cigar_str(const align_res_t *res, char *buf, size_t len);

/**
 * Write the SAM MD tag's value of RES (without "MD:Z:") into BUF (LEN
 * bytes, NUL-terminated when it fits): READ is the pair's read, WIN and
 * WIN_OFF its window as given to the alignment (ALIGN_PACKED in FLAGS for a
 * packed one).  Reference bases are written upper case, non-ACGT as N; a
 * read N against any base is a mismatch.  "*" without an alignment.
 * Returns the length the value needs (as snprintf: at least LEN means cut).
 * NM is RES->dist.
 */
size_t align_md_str(const align_res_t *res, const uint8_t *read, const uint8_t *win,
		uint64_t win_off, unsigned flags, char *buf, size_t len);

#endif
