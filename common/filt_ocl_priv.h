/*
 * filt_ocl_priv.h - what the two files of seedfilt's OpenCL backend share:
 * the device state (filt_ocl.c sets it up and runs its commands,
 * filt_ocl_match.c matches the patterns of a batch with them).
 */
#ifndef SP_FILT_OCL_PRIV_H
#define SP_FILT_OCL_PRIV_H

#include "filt.h"
#include "ocl.h"

#define GATHER_T 4                  /* most threads gathering a batch's units (16 made the
                                     * H200's match step slower: 0.82 s against 0.42 s) */

/* The arrays of a partition on the device. */
enum { B_RSTART, B_RNB, B_NBPOS, B_RPOS,
	B_BSTART, B_BSEED, B_BG, B_BRANK, B_BROFF, B_OCC, B_BREC, B_BGF, B_GRP, B_REP, B_N };

typedef struct {
	cl_mem b[B_N];
} dpart_t;

/* SEEDPIPE_PROFILE=1: device time per command kind, host phases (stderr) */
enum { P_H2D, P_D2H, P_FILL, P_COUNT, P_SUM, P_SCAN, P_WRITE, P_GATHER, P_N };

typedef struct {
	cl_event *ev;
	int *what;
	size_t n, cap;
	double dev[P_N];
	uint64_t cnt[P_N], bytes[P_N];
	double t_match, t_prep, t_wait;
	uint64_t n_calls, n_slices, n_items, n_units;
} prof_t;

struct filt_dev {
	ocl_ctx_t *ocl;
	cl_command_queue q;       /* ocl->queue, or a profiling queue of ours */
	prof_t *prof;             /* SEEDPIPE_PROFILE set */
	const idx_t *x;
	filt_opt_t o;
	cl_kernel k_count, k_write, k_sum, k_scan, k_gscan, k_pack, k_pack_g, k_nbpos;
	size_t wg;                /* bs, ph, bpr: local size of the count and write kernels */
	uint32_t v, h, is32, n_grid, shape, cshift;
	uint32_t gmul, gsh;       /* bs, ph: k / n_grid = (k * gmul) >> gsh */
	cl_mem lpos, dummy;        /* lpos: the ball table (bs, ph), u64 letter offsets */
	dpart_t *part;
	ocl_residency_t res;     /* which partitions are on the device */
	/* gathering on the device (gather_dev, filt_ocl_match.c): its kernels,
	 * local size (0: the host gathers), the batch's patterns, their items,
	 * the groups' sums and bases, the units' patterns; dev_units: the units
	 * of the current match are on the device (ucode, uq, unm, cpre), not in
	 * the host arrays */
	cl_kernel k_pitems, k_pcompact;
	size_t gwg;
	int gather;               /* SEEDPIPE_FILT_GATHER: 0 auto, 1 host, 2 device */
	cl_mem dpat, pitems, gsum2, upat;
	size_t cap_dpat, cap_pitems, cap_gsum2, cap_upat;
	uint32_t *h_gs, *h_upat32;
	size_t h_cap_gs, h_cap_upat32;
	int dev_units;
	/* slice buffers */
	cl_mem ucode, uq, unm, cpre, cnt, off, out, usum, ubase, gsum;
	size_t cap_ucode, cap_uq, cap_unm, cap_cpre, cap_cnt, cap_off, cap_out, cap_usum,
	       cap_ubase, cap_gsum;
	/* host scratch */
	uint32_t *h_code, *h_cpre, *h_cnt;
	uint32_t *h_items, *h_ucnt;   /* per pattern: its items; per unit: its count */
	size_t *h_upat;               /* per unit: its pattern */
	uint64_t *h_q;
	uint32_t *h_nm;           /* bpr: nmask of each unit */
	size_t h_cap_units, h_cap_items;
	int n_threads;            /* most threads of gather_units (filt_dev_set_threads) */
	/* two pinned staging buffers for device->host reads (filt_dev_d2h), mapped
	 * at pin_host; none (pin_tried set, pin[0] NULL): plain reads */
	cl_mem pin[2];
	void *pin_host[2];
	int pin_tried;
	/* the first failed call of a match (filt_dev_err): the match step runs on
	 * a pipeline thread, which must not exit, so the calls that used to exit
	 * keep their error here and filt_dev_match returns it */
	cl_int err;
	const char *err_call;
};

/* Keep ERR of CALL as D's first error unless it is CL_SUCCESS; 0, or -1 if it is an error. */
int filt_dev_err(filt_dev_t *d, cl_int err, const char *call);

/* clSetKernelArg, its error kept in D (nothing once D has one). */
void filt_dev_arg(filt_dev_t *d, cl_kernel k, cl_uint i, size_t size, const void *value);

/*
 * Enqueue a write of N bytes from SRC to B (of kind P_H2D).  This, d2h and
 * zero keep a failure in D (filt_dev_err) and do nothing once D has one;
 * d2h then zeroes DST.
 */
void filt_dev_h2d(filt_dev_t *d, cl_mem b, int blocking, size_t n, const void *src);

/* Blocking read of N bytes of B into DST (waits for everything queued before). */
void filt_dev_d2h(filt_dev_t *d, cl_mem b, size_t n, void *dst);

/* Run K over N items (kind WHAT); the CL error. */
cl_int filt_dev_run(filt_dev_t *d, cl_kernel k, size_t n, int what);

/* Run K over N items in work groups of L (kind WHAT); the CL error. */
cl_int filt_dev_run_wg(filt_dev_t *d, cl_kernel k, size_t n, size_t l, int what);

/* Zero the first N bytes of B (N a multiple of 4). */
void filt_dev_zero(filt_dev_t *d, cl_mem b, size_t n);

/* SEEDPIPE_PROFILE: count a slice of NU units and NI items. */
void filt_dev_prof_slice(filt_dev_t *d, size_t nu, size_t ni);

/* Upload partition I (releasing the others unless all fit); 0, or -1 if it does not fit. */
int filt_dev_upload(filt_dev_t *d, uint32_t i);

#endif
