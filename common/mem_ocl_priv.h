/*
 * mem_ocl_priv.h - what the two files of seedfilt -m mem's OpenCL backend
 * share: the device state (mem_ocl.c sets it up and runs the kernels,
 * mem_ocl_io.c moves the data between host and device).
 */
#ifndef SP_MEM_OCL_PRIV_H
#define SP_MEM_OCL_PRIV_H

#include <pthread.h>
#include <stddef.h>

#include "mem.h"
#include "ocl.h"

#define SLOT_U32 6              /* kernels/mem.cl's MEM_SLOT */
#define SLOT_BYTES (4 * SLOT_U32)
#define STAGE_BYTES (16u << 20) /* a page-locked staging buffer for the matches coming down */
#define STAGE_MIN (1u << 20)    /* smaller reads go straight into pageable memory */

enum { P_OCC, P_MARK, P_SA, P_JUMP, P_TEXT, P_SHAL, P_N };

typedef struct {
	cl_mem b[P_N];
} dpart_t;

/* A device buffer that grows. */
typedef struct {
	cl_mem m;
	size_t cap;
} dbuf_t;

/* B_RES1, B_CRES1: the second set of results, which a batch fills while the other comes down */
enum { B_WOFF, B_SLEN, B_WORDS, B_WPRE, B_OUT, B_CNT, B_WCNT, B_RES, B_VCNT, B_CRES, B_RES1,
	B_CRES1, B_DEF, B_WIDE, B_SUMS, B_TOT, B_N };

#define SHAL_MIN 64             /* windows with this many shallow rows leave them to mem_shal */
#define SHAL_WG 256             /* its work-groups (at most) */
#define WIDE_MIN 1024           /* windows with this many rows leave their left steps to mem_wide */
#define WIDE_WG 256             /* its work-groups (at most) */
#define COMPACT_WG 32           /* mem_compact's work-groups (a window each; at most) */
#define SCAN_WG 256             /* the prefix sums' work-groups (at most), 8 counts a lane */

/* A page-locked host array: the buffer, its mapping, its size in bytes. */
typedef struct {
	cl_mem m;
	void *p;
	size_t cap;
} hbuf_t;

#define PIN_MIN (8u << 20)      /* page-locked arrays of matches: multiples of this */
#define PIN_FREE_MAX 3          /* arrays kept free at most */

/* The kernel writes mem_raw_t records as 6 little-endian u32. */
_Static_assert(sizeof(mem_raw_t) == SLOT_BYTES && offsetof(mem_raw_t, tail) == 16,
		"mem_raw_t is the device's result record");

struct mem_dev {
	ocl_ctx_t *ocl;
	const mem_idx_t *mi;
	const idx_t *x;
	cl_kernel k_rows, k_loc, k_compact, k_shal, k_wide, k_scan_t, k_scan_s, k_scan_a;
	size_t scan_wg;            /* their work-group size (SCAN_WG at most; $SEEDPIPE_MEM_SCAN_WG: tests) */
	int host_scan;             /* $SEEDPIPE_MEM_HOST_SCAN (measurements): the prefix sums on the host */
	uint32_t shal_min;         /* SHAL_MIN or $SEEDPIPE_MEM_SHAL_MIN (tests: 0: each deep window not in mem_wide) */
	size_t compact_wg;         /* mem_compact's work-group size */
	size_t shal_wg;            /* mem_shal's work-group size (SHAL_WG at most; $SEEDPIPE_MEM_SHAL_WG: tests) */
	uint32_t wide_min;         /* WIDE_MIN or $SEEDPIPE_MEM_WIDE_MIN (tests: small; 0: none deferred) */
	size_t wide_wg;            /* mem_wide's work-group size (WIDE_WG at most; $SEEDPIPE_MEM_WIDE_WG) */
	int res;                   /* B_RES or B_CRES (B_RES1, B_CRES1): where the last run_part left its matches */
	int set;                   /* the set of results of this batch: 0 (B_RES, B_CRES) or 1 */
	int sync;                  /* $SEEDPIPE_MEM_SYNC (tests): every download waited for on the device's thread */
	cl_command_queue q_dl;     /* the downloads that overlap the next batch's kernels */
	cl_event ev_dl[2];         /* the pending download of each set */
	int hold_ms;               /* $SEEDPIPE_MEM_HOLD_MS (tests): downloads held until the next batch's
	                            * kernels have run (or for that long in mem_dev_wait) */
	cl_event held[2];          /* the user events that hold them (hmu) */
	dpart_t *part;
	ocl_residency_t resid;
	uint64_t nbatch;           /* batches so far (the partitions' turn goes back and forth) */
	dbuf_t b[B_N];
	/* two page-locked host buffers (CL_MEM_ALLOC_HOST_PTR, mapped for good): reads into them
	 * run at the bus's speed, while the previous one is copied out */
	cl_mem stage_m[2];
	void *stage_p[2];
	int stage_ok;              /* 1: mapped, 0: not tried yet, -1: not available */
	size_t stage_bytes;        /* their size: STAGE_BYTES or $SEEDPIPE_MEM_STAGE (tests) */
	/* a batch's inputs (strands and their tables) go up from one page-locked buffer of
	 * two, with no wait: the other may still be going up (IN_EV: its last write) */
	hbuf_t in[2];
	cl_event in_ev[2];
	int in_k;
	int in_off;                /* $SEEDPIPE_MEM_PUT_PLAIN, or the buffers failed: the puts one by one */
	/* the batches' arrays of matches: page-locked too, so the matches come down into them
	 * at the bus's speed, with no copy; FREE: kept for the next batches, OUT: handed out */
	pthread_mutex_t hmu;
	cl_command_queue q_pin;    /* their maps and unmaps, off the queue of the kernels (other threads) */
	hbuf_t *hfree, *hout;
	size_t n_hfree, n_hout, cap_hfree, cap_hout;
	int pin_off;               /* page-locked arrays failed: pageable ones and the staging */
	size_t wg;                 /* $SEEDPIPE_MEM_WG: the work-groups of the kernels rows and loc, 0: ocl_run_try's */
	int trace;                 /* $SEEDPIPE_MEM_TRACE: a line for each launch of the kernel rows */
	int put_plain;             /* $SEEDPIPE_MEM_PUT_PLAIN (measurements): the strands up without the staging */
	size_t pin_min;            /* PIN_MIN or $SEEDPIPE_MEM_PIN_MIN (tests: small arrays, grown often) */
	size_t pin_free_max;       /* PIN_FREE_MAX or $SEEDPIPE_MEM_PIN_FREE (measurements) */
	uint64_t pin_held;         /* bytes of page-locked arrays now (hmu) */
	double per_win;            /* rows per window so far: the first size of the slots */
	uint32_t *h_cnt;           /* a chunk's counts per window, then their prefix sums */
	size_t h_cnt_cap;
	mem_dev_time_t tm;
};

/* The pieces of one upload: buffer K gets N bytes from SRC. */
typedef struct {
	int k;
	const void *src;
	size_t n;
} inpiece_t;

#define IN_ALIGN 256


/* ---- transfers (common/mem_ocl_io.c) ---- */

/** Device buffer K of D holds at least N bytes (content lost when it grows); 0, or -1 after sp_fail. */
int mdev_need(mem_dev_t *d, int k, size_t n);

/** N bytes of SRC into buffer K (grown), waiting for the write; 0, or -1 after sp_fail. */
int mdev_put(mem_dev_t *d, int k, const void *src, size_t n);

/** N bytes of M into DST, waiting for the read; 0, or -1 after sp_fail. */
int mdev_get(mem_dev_t *d, cl_mem m, void *dst, size_t n);

/** mdev_get into pageable memory through the two staging buffers (large reads). */
int mdev_get_big(mem_dev_t *d, cl_mem m, void *dst, size_t n);

/** mdev_put from pageable memory through the two staging buffers (large writes). */
int mdev_put_big(mem_dev_t *d, int k, const void *src, size_t n);

/** A page-locked input buffer unmapped and released. */
void mdev_in_release(mem_dev_t *d, hbuf_t *h);

/**
 * The NP pieces P up from one page-locked buffer of D->in (copied into it,
 * then written without waiting: the queue is in order, so the kernels after
 * them read them).  0; 1 when page-locked buffers are not available (the
 * caller puts the pieces one by one); -1 after sp_fail.
 */
int mdev_put_all(mem_dev_t *d, const inpiece_t *p, int np);

#endif
