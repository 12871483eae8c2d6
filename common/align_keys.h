/*
 * align_keys.h - (internal to align_ocl.c) the candidate keys of
 * align_dev_cut decoded on the device (kernel align_keys) from the lists as
 * the stream holds them, and the keys' check.
 */
#ifndef SP_ALIGN_KEYS_H
#define SP_ALIGN_KEYS_H

#include "align.h"

/*
 * The lists of more than ALIGN_KEYS_LONG bytes (SEEDPIPE_ALIGN_KEYS_LONG:
 * another number) are decoded by align_keys_wg, a work-group of up to
 * ALIGN_KEYS_WG work items each, the others by align_keys, a work item
 * each: a list of 256 bytes holds about 60 candidates (1,144 MB for
 * 284.6M on the 1M chrX reads), and a warp of align_keys lasts as long as
 * its longest list.
 */
#define ALIGN_KEYS_LONG 256
#define ALIGN_KEYS_WG 256

/*
 * Into SZ[0] the work-group size of align_keys_wg and align_keys_fix
 * (kernels K, K2): at most ALIGN_KEYS_WG, the kernels' limits,
 * SEEDPIPE_ALIGN_KEYS_WG (tests: many tiles), 1 where that is below 4 (no
 * work-groups then); into SZ[1] the threshold, ALIGN_KEYS_LONG or
 * SEEDPIPE_ALIGN_KEYS_LONG.
 */
void align_keys_size(const ocl_ctx_t *ctx, cl_kernel k, cl_kernel k2, size_t *sz);

/* Where a group's keys are decoded: a queue, the kernels, and the buffers. */
typedef struct {
	ocl_ctx_t *ctx;
	cl_command_queue q;
	cl_kernel k, k_wg, k_fix; /* align_keys, align_keys_wg, align_keys_fix */
	size_t wg;                /* align_keys_wg's work-group (below 4: none, align_keys
	                           * for all) */
	uint64_t long_min;        /* lists of more bytes go to align_keys_wg */
	cl_mem list, loff, coff, keys, flag, cnt, rix, fix;   /* the slot's (room made) */
	cl_mem pb, sb, se;        /* partitions and sequences (align_dev_seqs) */
	uint32_t n_part, n_seq;
	uint64_t ref_len;         /* the packed reference's bytes */
	uint32_t *stage;          /* pinned, mapped: 4 NR + 1 words and the lists' bytes */
	cl_event *ev[3];          /* the kernels' events, if wanted */
} align_keys_dev_t;

/*
 * The keys of reads R0 .. R0 + NR (COFF, LS as align_dev_cut takes them)
 * into K->keys, decoded on K's device; the reads it flags decoded by
 * LS->HOST and written there.  The lists go up from K->stage (copied
 * there, page-locked), a read's by one kernel or the other by its bytes.
 * ST[0] counts the bytes sent, ST[1] the reads flagged, ST[2] the reads
 * decoded by work-groups.  CL_SUCCESS, or
 * the error; ALIGN_KEYS_FAILED (no OpenCL code) with a message in MSG when
 * LS->HOST fails or a key lies outside the reference.
 */
#define ALIGN_KEYS_FAILED 1
cl_int align_keys_run(const align_keys_dev_t *k, const align_dlists_t *ls,
		const uint32_t *coff, size_t r0, size_t nr, uint64_t *st, char *msg, size_t msg_len);

/* The bytes of the lists of reads R0 .. R0 + NR that the device decodes, from *LO. */
uint64_t align_keys_span(const align_dlists_t *ls, size_t r0, size_t nr, uint64_t *lo);

/*
 * Whether KEYS[0..N) (ALIGN_DKEY) lie within N_SEQ sequences and REF_LEN
 * packed bytes: 0, or -1 with a message naming key FIRST + i.
 */
int align_keys_check(const uint64_t *keys, size_t n, size_t first, uint32_t n_seq,
		uint64_t ref_len, char *msg, size_t msg_len);

#endif
