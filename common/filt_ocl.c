/*
 * filt_ocl.c - seedfilt's OpenCL backend (kernels/filt.cl): the index
 * partitions on the device, the patterns of a batch of reads matched by the
 * bpr, bs, ph or fm kernels in slices sized from device memory, with a count
 * pass before the write pass so that no output can overflow.  The host
 * turns the positions into candidates with the CPU code (filt_hits,
 * filt_finish), so both backends write the same bytes.
 *
 * Units (unit = one pattern whose SeedBlock is not empty) go to the device
 * in slices, in seed-code order for seeds of weight <= FILT_SORT_W
 * (sort_by_code: the work groups of neighbouring units then share a
 * SeedBlock in the caches):
 *
 *   bpr (items = chunks of a unit's striped words, at most FILT_MAX_ITEMS):
 *   host: ucode[], uq[], unm[] (N positions of q), cpre[] (first item of
 *         each unit) -> device; usum[] = 0
 *   count kernel (work groups of d->wg; block-mask tables in local memory):
 *                 cnt[item], usum[unit] += count (atomics per group),
 *                 gsum[work group] (skipped with -N)
 *   group_scan: gbase[work group]                     -> host: usum
 *   write kernel: chunks with cnt > 0 scanned again, out[gbase + local
 *                 scan..]; out -> host
 *   The program is built for the run's e, h, l, v (-DBPR_E=..: unrolled).
 *
 *   fm (one item per unit, at most FILT_MAX_ITEMS):
 *   host: ucode[], uq[], cpre[] -> device
 *   count kernel: cnt[item]; unit_sum: usum[unit]     -> host: totals, bases
 *   (output buffer grown to the total; a failed allocation halves the slice)
 *   bases -> device; unit_scan: off[item]; write kernel: out[off[item]..]
 *   out -> host
 *
 *   bs, ph (items = the canonical words of each unit's Hamming ball, up to
 *   FILT_MAX_DEGEN of them: a whole batch is one slice):
 *   host: ucode[], uq[] -> device; usum[] = 0
 *   count kernel: usum[unit] += count (atomics, matching items only),
 *                 gsum[work group] (skipped with -N)
 *   group_scan: gbase[work group]                     -> host: usum
 *   write kernel: lookups again, out[gbase + local scan..]; out -> host
 *
 * SEEDPIPE_PROFILE=1 (a debugging aid) runs the commands on a profiling
 * queue of their own and prints, when the device is released, the device
 * time of each kind of command and the host's time in filt_dev_match.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "degen.h"
#include "filt.h"
#include "ocl.h"
#include "util.h"

#define FILT_BPR_CHUNK 16u          /* words per bpr item: BPR_CHUNK in filt.cl */
#define FILT_BPR_WG 128u            /* BPR_WG in filt.cl: most items of a bpr work group */
#define GATHER_T 4                  /* most threads gathering a batch's units */
#define GATHER_MIN 65536            /* patterns below which one thread gathers */
#define FILT_PREFETCH 16            /* patterns ahead whose block start is prefetched */
#define FILT_SORT_W 8               /* units go in seed-code order for seeds of weight <= 8 */
#define FILT_MAX_ITEMS (1u << 22)   /* items per launch (bpr, fm: a count each) */
#define FILT_MAX_DEGEN (1u << 27)   /* bs, ph: no per-item array */
#define FILT_DG_WG 256u             /* DG_WG in filt.cl: local size of bs, ph */
#define FILT_READ_PIECE ((size_t)2 << 20)   /* bytes per device->host read */

enum { B_START, B_WSTART, B_NB, B_POS, B_RSTART, B_RNB, B_NBPOS, B_RPOS,
	B_BSTART, B_BSEED, B_BG, B_BNB, B_BRANK, B_OCC, B_BREC, B_BGF, B_N };
#define FILT_REC_BYTES 16u          /* ph: one slot record (ph_pack in filt.cl) */

typedef struct {
	cl_mem b[B_N];
	int up;
} dpart_t;

/* SEEDPIPE_PROFILE=1: device time per command kind, host phases (stderr) */
enum { P_H2D, P_D2H, P_FILL, P_COUNT, P_SUM, P_SCAN, P_WRITE, P_N };
static const char *const prof_name[P_N] = { "host->device", "device->host", "fill",
	"count kernel", "unit sum", "scan", "write kernel" };

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
	cl_kernel k_count, k_write, k_sum, k_scan, k_gscan, k_pack, k_pack_g;
	size_t wg;                /* bs, ph, bpr: local size of the count and write kernels */
	uint32_t v, h, is32, n_grid, shape, cshift;
	uint32_t gmul, gsh;       /* bs, ph: k / n_grid = (k * gmul) >> gsh */
	cl_mem lpos, dummy;        /* lpos: the ball table (bs, ph), u64 letter offsets */
	dpart_t *part;
	int all_resident;
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
};

/* Bytes of each array of partition PT for method M (0 where unused). */
static void part_sizes(const filt_dev_t *d, const idx_part_t *pt, size_t sz[B_N])
{
	uint64_t nc = (uint64_t)1 << (2 * d->x->p.w), kb = IDX_KEY_BYTES(d->x->p.l);
	int m = d->o.method;

	memset(sz, 0, B_N * sizeof *sz);
	if (m == FILT_FM) {
		sz[B_OCC] = pt->fm.n_blocks * FM_OCC_BLOCK;
		return;
	}
	if (m == FILT_BPR) {
		sz[B_START] = (nc + 1) * 4;
		sz[B_WSTART] = (nc + 1) * 4;
		sz[B_NB] = pt->gen_nwords * 8;
		sz[B_POS] = pt->n_occ * 4;
		return;
	}
	sz[B_NBPOS] = (pt->n_uniq + 1) * 4;
	sz[B_RPOS] = pt->n_occ * 4;
	if (m == FILT_BS) {
		sz[B_RSTART] = (nc + 1) * 4;
		sz[B_RNB] = pt->n_uniq * kb;
	} else {
		/* B_BG, B_BNB, B_BRANK, B_NBPOS: only until ph_pack has made B_BREC, B_BGF */
		sz[B_BSTART] = (nc + 1) * 4;
		sz[B_BSEED] = nc * 4;
		sz[B_BG] = (pt->n_slots + 3) / 4;
		sz[B_BNB] = pt->n_slots * kb;
		sz[B_BRANK] = pt->n_slots * 4;
		sz[B_BREC] = pt->n_slots * FILT_REC_BYTES;
		sz[B_BGF] = (pt->n_slots + 1) / 2;
	}
}

static const void *part_ptr(const filt_dev_t *d, const idx_part_t *pt, int i)
{
	switch (i) {
	case B_START: return pt->gen_start;
	case B_WSTART: return pt->gen_wstart;
	case B_NB: return pt->gen_nb;
	case B_POS: return pt->gen_pos;
	case B_RSTART: return pt->red_start;
	case B_RNB: return d->is32 ? (const void *)pt->red_nb32 : (const void *)pt->red_nb;
	case B_NBPOS: return pt->red_nbpos;
	case B_RPOS: return pt->red_pos;
	case B_BSTART: return pt->blk_start;
	case B_BSEED: return pt->blk_seed;
	case B_BG: return pt->blk_g;
	case B_BNB: return d->is32 ? (const void *)pt->blk_nb32 : (const void *)pt->blk_nb;
	case B_BRANK: return pt->blk_rank;
	case B_OCC: return pt->fm.occ;
	case B_BREC: case B_BGF: return NULL;   /* made on the device */
	}
	return NULL;
}

static void part_release(dpart_t *p)
{
	int i;

	for (i = 0; i < B_N; i++) {
		ocl_release(p->b[i]);
		p->b[i] = NULL;
	}
	p->up = 0;
}

/* Upload partition I (releasing the others unless all fit); -1 if it does not fit. */
/* Keep EV (a command of kind WHAT) for the profile, or release it. */
static void prof_ev(filt_dev_t *d, int what, cl_event ev, size_t bytes)
{
	prof_t *pf = d->prof;

	if (!ev)
		return;
	if (!pf) {
		clReleaseEvent(ev);
		return;
	}
	if (pf->n == pf->cap) {
		pf->cap = pf->cap ? 2 * pf->cap : 64;
		pf->ev = sp_realloc(pf->ev, pf->cap * sizeof *pf->ev);
		pf->what = sp_realloc(pf->what, pf->cap * sizeof *pf->what);
	}
	pf->ev[pf->n] = ev;
	pf->what[pf->n++] = what;
	pf->cnt[what]++;
	pf->bytes[what] += bytes;
}

/* Add the device times of the kept events (all complete after a blocking call). */
static void prof_collect(filt_dev_t *d)
{
	prof_t *pf = d->prof;
	size_t i;

	if (!pf)
		return;
	for (i = 0; i < pf->n; i++) {
		double s;

		clWaitForEvents(1, &pf->ev[i]);
		s = ocl_event_seconds(pf->ev[i]);
		if (s > 0)
			pf->dev[pf->what[i]] += s;
		clReleaseEvent(pf->ev[i]);
	}
	pf->n = 0;
}

static void prof_print(const filt_dev_t *d)
{
	const prof_t *pf = d->prof;
	double sum = 0;
	int i;

	for (i = 0; i < P_N; i++)
		sum += pf->dev[i];
	fprintf(stderr, "seedfilt: profile: %" PRIu64 " match calls, %" PRIu64 " slices, %"
			PRIu64 " units, %" PRIu64 " items; host: match %.6f s (prepare %.6f s, "
			"waiting %.6f s); device busy %.6f s\n", pf->n_calls, pf->n_slices,
			pf->n_units, pf->n_items, pf->t_match, pf->t_prep, pf->t_wait, sum);
	for (i = 0; i < P_N; i++)
		if (pf->cnt[i])
			fprintf(stderr, "seedfilt: profile: %-12s %8" PRIu64 " commands %10.6f s %14"
					PRIu64 " bytes\n", prof_name[i], pf->cnt[i], pf->dev[i], pf->bytes[i]);
}

/* Enqueue a write of N bytes (of kind P_H2D). */
static void dwrite(filt_dev_t *d, cl_mem b, int blocking, size_t n, const void *src)
{
	cl_event ev = NULL;

	if (!n)
		return;
	ocl_check(clEnqueueWriteBuffer(d->q, b, blocking ? CL_TRUE : CL_FALSE, 0, n, src, 0,
				NULL, d->prof ? &ev : NULL), "clEnqueueWriteBuffer");
	prof_ev(d, P_H2D, ev, n);
}

/*
 * Blocking read of N bytes (waits for everything queued before), in pieces
 * of FILT_READ_PIECE bytes: on the H200, reads of ~1.6 MB into pageable
 * memory ran at 31 GB/s, reads of 25 MB at 9 GB/s.
 */
static void dread(filt_dev_t *d, cl_mem b, size_t n, void *dst)
{
	double t0 = d->prof ? sp_now() : 0;
	size_t o;

	for (o = 0; o < n; o += FILT_READ_PIECE) {
		size_t c = n - o < FILT_READ_PIECE ? n - o : FILT_READ_PIECE;
		cl_event ev = NULL;

		ocl_check(clEnqueueReadBuffer(d->q, b, o + c == n ? CL_TRUE : CL_FALSE, o, c,
					(char *)dst + o, 0, NULL, d->prof ? &ev : NULL),
				"clEnqueueReadBuffer");
		prof_ev(d, P_D2H, ev, c);
	}
	if (d->prof) {
		d->prof->t_wait += sp_now() - t0;
		prof_collect(d);
	}
}

/* Run K over N items (kind WHAT); the CL error. */
static cl_int drun(filt_dev_t *d, cl_kernel k, size_t n, int what)
{
	cl_event ev = NULL;
	cl_int err = ocl_run_q(d->ocl, d->q, k, n, d->prof ? &ev : NULL);

	prof_ev(d, what, ev, 0);
	return err;
}

/* Run K over N items in work groups of L (kind WHAT); the CL error. */
static cl_int drun_wg(filt_dev_t *d, cl_kernel k, size_t n, size_t l, int what)
{
	cl_event ev = NULL;
	size_t global = (n + l - 1) / l * l;
	cl_int err = clEnqueueNDRangeKernel(d->q, k, 1, NULL, &global, &l, 0, NULL,
			d->prof ? &ev : NULL);

	prof_ev(d, what, ev, 0);
	return err;
}

/* SEEDPIPE_PROFILE: count a slice of NU units and NI items. */
static void prof_slice(filt_dev_t *d, size_t nu, size_t ni)
{
	if (d->prof) {
		d->prof->n_slices++;
		d->prof->n_items += ni;
		d->prof->n_units += nu;
	}
}

/* Zero the first N bytes of B (N a multiple of 4). */
static void dzero(filt_dev_t *d, cl_mem b, size_t n)
{
	cl_event ev = NULL;
	cl_uint zero = 0;

	ocl_check(clEnqueueFillBuffer(d->q, b, &zero, sizeof zero, 0, n, 0, NULL,
				d->prof ? &ev : NULL), "clEnqueueFillBuffer");
	prof_ev(d, P_FILL, ev, n);
}

/*
 * ph: make partition P's slot records and g + fingerprint bytes (ph_pack,
 * ph_pack_g in filt.cl) from the uploaded g, keys, ranks and red_nbpos,
 * then release those four.  0 or -1.
 */
static int ph_pack(filt_dev_t *d, const idx_part_t *pt, dpart_t *p)
{
	uint32_t n = (uint32_t)pt->n_slots, nb = (n + 1) / 2;
	uint32_t nc = (uint32_t)1 << (2 * d->x->p.w);
	cl_mem nb32 = d->is32 ? p->b[B_BNB] : d->dummy, nb64 = d->is32 ? d->dummy : p->b[B_BNB];
	cl_int err;

	if (pt->n_slots > UINT32_MAX / 2)
		return -1;   /* the kernels index slots with u32 */
	if (n) {
		ocl_arg(d->k_pack_g, 0, sizeof nb, &nb);
		ocl_arg(d->k_pack_g, 1, sizeof n, &n);
		ocl_arg(d->k_pack_g, 2, sizeof nc, &nc);
		ocl_arg(d->k_pack_g, 3, sizeof(cl_mem), &p->b[B_BSTART]);
		ocl_arg(d->k_pack_g, 4, sizeof(cl_mem), &p->b[B_BSEED]);
		ocl_arg(d->k_pack_g, 5, sizeof(cl_mem), &p->b[B_BG]);
		ocl_arg(d->k_pack_g, 6, sizeof(cl_mem), &nb32);
		ocl_arg(d->k_pack_g, 7, sizeof(cl_mem), &nb64);
		ocl_arg(d->k_pack_g, 8, sizeof d->is32, &d->is32);
		ocl_arg(d->k_pack_g, 9, sizeof(cl_mem), &p->b[B_BGF]);
		if (ocl_run_q(d->ocl, d->ocl->queue, d->k_pack_g, nb, NULL) != CL_SUCCESS)
			return -1;
		ocl_arg(d->k_pack, 0, sizeof n, &n);
		ocl_arg(d->k_pack, 1, sizeof(cl_mem), &nb32);
		ocl_arg(d->k_pack, 2, sizeof(cl_mem), &nb64);
		ocl_arg(d->k_pack, 3, sizeof d->is32, &d->is32);
		ocl_arg(d->k_pack, 4, sizeof(cl_mem), &p->b[B_BRANK]);
		ocl_arg(d->k_pack, 5, sizeof(cl_mem), &p->b[B_NBPOS]);
		ocl_arg(d->k_pack, 6, sizeof(cl_mem), &p->b[B_BREC]);
		err = ocl_run_q(d->ocl, d->ocl->queue, d->k_pack, n, NULL);
		if (err == CL_SUCCESS)
			err = clFinish(d->ocl->queue);
		if (err != CL_SUCCESS)
			return -1;
	}
	ocl_release(p->b[B_BG]);
	ocl_release(p->b[B_BNB]);
	ocl_release(p->b[B_BRANK]);
	ocl_release(p->b[B_NBPOS]);
	p->b[B_BG] = p->b[B_BNB] = p->b[B_BRANK] = p->b[B_NBPOS] = NULL;
	return 0;
}

static int part_upload(filt_dev_t *d, uint32_t i)
{
	const idx_part_t *pt = &d->x->part[i];
	size_t sz[B_N];
	int k;

	if (d->part[i].up)
		return 0;
	if (!d->all_resident) {
		uint32_t j;

		for (j = 0; j < d->x->n_part; j++)
			if (d->part[j].up)
				part_release(&d->part[j]);
	}
	part_sizes(d, pt, sz);
	for (k = 0; k < B_N; k++) {
		cl_int err;

		if (!sz[k])
			continue;
		d->part[i].b[k] = ocl_buffer_try(d->ocl, !part_ptr(d, pt, k) ? CL_MEM_READ_WRITE :
				CL_MEM_READ_ONLY, sz[k], &err);
		if (!d->part[i].b[k]) {
			part_release(&d->part[i]);
			return -1;
		}
		if (part_ptr(d, pt, k))
			ocl_write(d->ocl, d->part[i].b[k], 1, 0, sz[k], part_ptr(d, pt, k));
	}
	if (d->o.method == FILT_PH && ph_pack(d, pt, &d->part[i]) < 0) {
		part_release(&d->part[i]);
		return -1;
	}
	d->part[i].up = 1;
	return 0;
}

/* LIM capped by the work-group size K allows on the device. */
static size_t kernel_wg(const filt_dev_t *d, cl_kernel k, size_t lim)
{
	size_t kwg = 0;

	ocl_check(clGetKernelWorkGroupInfo(k, d->ocl->device, CL_KERNEL_WORK_GROUP_SIZE,
				sizeof kwg, &kwg, NULL), "clGetKernelWorkGroupInfo");
	return kwg && kwg < lim ? kwg : lim;
}

/*
 * Multiplier and shift that divide by N (1 <= N <= 2^27) every k < 2^28:
 * k / N = (k * MUL) >> SH with SH = 28 + ceil(log2 N), MUL = ceil(2^SH / N)
 * (MUL < 2^29; the error k (MUL N - 2^SH) / (N 2^SH) < 1/N keeps the floor).
 */
static void grid_div(uint32_t n, uint32_t *mul, uint32_t *sh)
{
	uint32_t lg = 0;

	while (((uint64_t)1 << lg) < n)
		lg++;
	*sh = 28 + lg;
	*mul = (uint32_t)((((uint64_t)1 << *sh) + n - 1) / n);
}

filt_dev_t *filt_dev_new(ocl_ctx_t *ocl, const idx_t *x, const filt_opt_t *o, char *msg,
		size_t len)
{
	filt_dev_t *d;
	cl_program prog;
	uint64_t total = 0;
	uint32_t i, nl = 0, *lp;
	size_t sz[B_N];
	int k;

	d = sp_calloc(1, sizeof *d);
	d->ocl = ocl;
	d->q = ocl->queue;
	{
		const char *pe = getenv("SEEDPIPE_PROFILE");

		if (pe && *pe && strcmp(pe, "0") != 0) {
			cl_int err;

			d->prof = sp_calloc(1, sizeof *d->prof);
			d->q = clCreateCommandQueue(ocl->context, ocl->device,
					CL_QUEUE_PROFILING_ENABLE, &err);
			if (!d->q || err != CL_SUCCESS)
				sp_die("clCreateCommandQueue failed: %s (%d)", ocl_strerror(err), (int)err);
		}
	}
	d->x = x;
	d->o = *o;
	d->n_threads = GATHER_T;
	d->v = filt_qlen(x, o->method, o->e);
	d->h = x->p.h;
	d->is32 = IDX_KEY_BYTES(x->p.l) == 4;
	if (o->method == FILT_BPR) {
		/* bpr's program for this run's e, h, l, v: its loops unroll (filt.cl) */
		char opts[96];
		size_t lim = ocl->max_wg < FILT_BPR_WG ? ocl->max_wg : FILT_BPR_WG;

		snprintf(opts, sizeof opts, "-DBPR_E=%uu -DBPR_H=%uu -DBPR_L=%uu -DBPR_V=%uu",
				o->e, d->h, x->p.l, d->v);
		prog = ocl_program(ocl, "filt", opts);
		d->k_count = ocl_kernel(prog, "bpr_count");
		d->k_write = ocl_kernel(prog, "bpr_write");
		d->k_gscan = ocl_kernel(prog, "group_scan");
		lim = kernel_wg(d, d->k_count, lim);
		lim = kernel_wg(d, d->k_write, lim);
		lim = kernel_wg(d, d->k_gscan, lim);
		for (d->wg = 1; d->wg * 2 <= lim; d->wg *= 2)
			;
	} else if (o->method == FILT_FM) {
		uint32_t j;

		prog = ocl_program(ocl, "filt", "");
		d->k_count = ocl_kernel(prog, "fm_count");
		d->k_write = ocl_kernel(prog, "fm_write");
		for (j = 0; j < x->p.span; j++)
			d->shape |= (uint32_t)(x->p.shape[j] == '#') << j;
	} else {
		size_t lim = ocl->max_wg < FILT_DG_WG ? ocl->max_wg : FILT_DG_WG;

		prog = ocl_program(ocl, "filt", "");
		d->k_count = ocl_kernel(prog, "degen_count");
		d->k_write = ocl_kernel(prog, "degen_write");
		d->k_gscan = ocl_kernel(prog, "group_scan");
		if (o->method == FILT_PH) {
			d->k_pack = ocl_kernel(prog, "ph_pack");
			d->k_pack_g = ocl_kernel(prog, "ph_pack_g");
		}
		lim = kernel_wg(d, d->k_count, lim);
		lim = kernel_wg(d, d->k_write, lim);
		lim = kernel_wg(d, d->k_gscan, lim);
		for (d->wg = 1; d->wg * 2 <= lim; d->wg *= 2)
			;
	}
	d->k_sum = ocl_kernel(prog, "unit_sum");
	d->k_scan = ocl_kernel(prog, "unit_scan");
	/* -a: the degenerate words are window words, seed code below q */
	d->cshift = o->any && o->method != FILT_FM ? 2 * x->p.w : 0;
	if (o->method == FILT_BS || o->method == FILT_PH) {
		/* the ball table of degen_ball_word (inc_degen.h) */
		uint32_t vv = d->v + d->cshift / 2, e = o->e, m, nb = 0;
		uint64_t *bw;

		for (m = 0; m <= e; m++)
			nl += (uint32_t)degen_n_lpos(vv, m);
		lp = sp_malloc((2 * e + 3 + nl) * sizeof *lp);
		for (m = 0, nl = 0; m <= e; m++) {
			uint32_t c = (uint32_t)degen_n_lpos(vv, m), p3 = 1, i;

			for (i = 0; i < m; i++)
				p3 *= 3;
			lp[m] = nb;
			lp[e + 2 + m] = nl;
			degen_lpos(vv, m, lp + 2 * e + 3 + nl);
			nb += c * p3;
			nl += c;
		}
		lp[e + 1] = nb;
		d->n_grid = nb;
		/* the kernels add word i of the ball of q = 0 to q (degen_add) */
		bw = sp_malloc((size_t)nb * sizeof *bw);
		for (i = 0; i < nb; i++)
			bw[i] = degen_ball_word(0, i, e, lp);
		d->lpos = ocl_buffer(ocl, CL_MEM_READ_ONLY, (size_t)nb * sizeof *bw);
		ocl_write(ocl, d->lpos, 1, 0, (size_t)nb * sizeof *bw, bw);
		free(bw);
		free(lp);
		grid_div(nb, &d->gmul, &d->gsh);
	} else {
		d->lpos = ocl_buffer(ocl, CL_MEM_READ_ONLY, 64);
	}
	d->dummy = ocl_buffer(ocl, CL_MEM_READ_ONLY, 64);
	d->part = sp_calloc(x->n_part, sizeof *d->part);
	for (i = 0; i < x->n_part; i++) {
		part_sizes(d, &x->part[i], sz);
		for (k = 0; k < B_N; k++)
			total += sz[k];
	}
	d->all_resident = total <= ocl_mem_budget(ocl, 0.6);
	for (i = 0; i < x->n_part && d->all_resident; i++)
		if (part_upload(d, i) < 0)
			d->all_resident = 0;
	if (!d->all_resident) {
		/* one at a time: each partition must fit on its own */
		for (i = 0; i < x->n_part; i++)
			part_release(&d->part[i]);
		for (i = 0; i < x->n_part; i++) {
			if (part_upload(d, i) < 0) {
				snprintf(msg, len, "index partition %u does not fit the OpenCL device "
						"(rebuild the index with a smaller seqidx -p)", i);
				filt_dev_free(d);
				return NULL;
			}
			part_release(&d->part[i]);
		}
	}
	return d;
}

void filt_dev_free(filt_dev_t *d)
{
	uint32_t i;

	if (!d)
		return;
	if (d->prof) {
		clFinish(d->q);
		prof_collect(d);
		prof_print(d);
		clReleaseCommandQueue(d->q);
		free(d->prof->ev);
		free(d->prof->what);
		free(d->prof);
	}
	for (i = 0; i < d->x->n_part; i++)
		part_release(&d->part[i]);
	free(d->part);
	ocl_release(d->lpos);
	ocl_release(d->dummy);
	ocl_release(d->ucode);
	ocl_release(d->uq);
	ocl_release(d->unm);
	ocl_release(d->cpre);
	ocl_release(d->cnt);
	ocl_release(d->off);
	ocl_release(d->gsum);
	ocl_release(d->out);
	ocl_release(d->usum);
	ocl_release(d->ubase);
	clReleaseKernel(d->k_count);
	clReleaseKernel(d->k_write);
	clReleaseKernel(d->k_sum);
	clReleaseKernel(d->k_scan);
	if (d->k_gscan)
		clReleaseKernel(d->k_gscan);
	if (d->k_pack)
		clReleaseKernel(d->k_pack);
	if (d->k_pack_g)
		clReleaseKernel(d->k_pack_g);
	free(d->h_code);
	free(d->h_cpre);
	free(d->h_cnt);
	free(d->h_items);
	free(d->h_ucnt);
	free(d->h_upat);
	free(d->h_q);
	free(d->h_nm);
	free(d);
}

/* Grow device buffer *B to at least N bytes (content lost); 0 or -1. */
static int grow(filt_dev_t *d, cl_mem *b, size_t *cap, size_t n, cl_mem_flags fl)
{
	cl_int err;

	if (n <= *cap && *b)
		return 0;
	ocl_release(*b);
	*b = NULL;
	*cap = 0;
	n = n < 64 ? 64 : n + n / 4;
	*b = ocl_buffer_try(d->ocl, fl, n, &err);
	if (!*b)
		return -1;
	*cap = n;
	return 0;
}

static cl_mem buf_or_dummy(filt_dev_t *d, const dpart_t *p, int i)
{
	return p->b[i] ? p->b[i] : d->dummy;
}

/* Set the arguments shared by both kernels of a method; returns the next index. */
static cl_uint set_args(filt_dev_t *d, cl_kernel k, const dpart_t *p, uint32_t n_items,
		uint32_t n_units, int write)
{
	cl_uint a = 0;
	uint32_t ph = d->o.method == FILT_PH, e = d->o.e, l = d->x->p.l, any = d->o.any != 0;

	ocl_arg(k, a++, sizeof n_items, &n_items);
	if (d->o.method == FILT_FM) {
		const fm_t *fm = &d->x->part[p - d->part].fm;
		cl_ulong v64[6];
		uint32_t span = d->x->p.span;
		int i;

		v64[0] = fm->primary;
		v64[1] = fm->n;
		for (i = 0; i < 4; i++)
			v64[2 + i] = fm->C[i];
		ocl_arg(k, a++, sizeof(cl_mem), &d->ucode);
		ocl_arg(k, a++, sizeof(cl_mem), &d->uq);
		ocl_arg(k, a++, sizeof(cl_mem), &p->b[B_OCC]);
		for (i = 0; i < 6; i++)
			ocl_arg(k, a++, sizeof v64[i], &v64[i]);
		ocl_arg(k, a++, sizeof span, &span);
		ocl_arg(k, a++, sizeof d->shape, &d->shape);
		ocl_arg(k, a++, sizeof l, &l);
		ocl_arg(k, a++, sizeof e, &e);
		ocl_arg(k, a++, sizeof any, &any);
		return a;
	}
	if (d->o.method == FILT_BPR) {
		ocl_arg(k, a++, sizeof n_units, &n_units);
		ocl_arg(k, a++, sizeof(cl_mem), &d->cpre);
		ocl_arg(k, a++, sizeof(cl_mem), &d->ucode);
		ocl_arg(k, a++, sizeof(cl_mem), &d->uq);
		ocl_arg(k, a++, sizeof(cl_mem), &d->unm);
		ocl_arg(k, a++, sizeof(cl_mem), &p->b[B_START]);
		ocl_arg(k, a++, sizeof(cl_mem), &p->b[B_WSTART]);
		ocl_arg(k, a++, sizeof(cl_mem), &p->b[B_NB]);
		if (write)
			ocl_arg(k, a++, sizeof(cl_mem), &p->b[B_POS]);
		ocl_arg(k, a++, sizeof d->h, &d->h);
		ocl_arg(k, a++, sizeof l, &l);
		ocl_arg(k, a++, sizeof d->v, &d->v);
		ocl_arg(k, a++, sizeof e, &e);
	} else {
		cl_mem m;

		ocl_arg(k, a++, sizeof d->n_grid, &d->n_grid);
		ocl_arg(k, a++, sizeof d->gmul, &d->gmul);
		ocl_arg(k, a++, sizeof d->gsh, &d->gsh);
		ocl_arg(k, a++, sizeof d->cshift, &d->cshift);
		ocl_arg(k, a++, sizeof(cl_mem), &d->lpos);
		ocl_arg(k, a++, sizeof(cl_mem), &d->ucode);
		ocl_arg(k, a++, sizeof(cl_mem), &d->uq);
		m = buf_or_dummy(d, p, B_RSTART);
		ocl_arg(k, a++, sizeof(cl_mem), &m);
		m = d->is32 ? buf_or_dummy(d, p, B_RNB) : d->dummy;
		ocl_arg(k, a++, sizeof(cl_mem), &m);
		m = d->is32 ? d->dummy : buf_or_dummy(d, p, B_RNB);
		ocl_arg(k, a++, sizeof(cl_mem), &m);
		ocl_arg(k, a++, sizeof d->is32, &d->is32);
		ocl_arg(k, a++, sizeof ph, &ph);
		m = buf_or_dummy(d, p, B_BSTART);
		ocl_arg(k, a++, sizeof(cl_mem), &m);
		m = buf_or_dummy(d, p, B_BSEED);
		ocl_arg(k, a++, sizeof(cl_mem), &m);
		m = buf_or_dummy(d, p, B_BGF);
		ocl_arg(k, a++, sizeof(cl_mem), &m);
		m = buf_or_dummy(d, p, B_BREC);
		ocl_arg(k, a++, sizeof(cl_mem), &m);
		m = buf_or_dummy(d, p, B_NBPOS);
		ocl_arg(k, a++, sizeof(cl_mem), &m);
		if (write)
			ocl_arg(k, a++, sizeof(cl_mem), &p->b[B_RPOS]);
	}
	return a;
}

/* Items of unit with seed CODE in partition PT (0: empty block). */
static uint64_t unit_items(const filt_dev_t *d, const idx_part_t *pt, uint32_t code)
{
	if (d->o.method == FILT_FM)
		return 1;
	if (d->o.method == FILT_BPR) {
		uint64_t n = pt->gen_start[code + 1] - pt->gen_start[code];
		uint64_t nw = (n + d->h - 1) / d->h;

		return (nw + FILT_BPR_CHUNK - 1) / FILT_BPR_CHUNK;
	}
	if (d->cshift)
		return d->n_grid;   /* -a: the other seeds' blocks may match */
	return pt->red_start[code + 1] > pt->red_start[code] ? d->n_grid : 0;
}

/*
 * Host scratch for a slice of NU units, 2 NU + 2 entries: [0, NU] for
 * inputs that a non-blocking write sends (bpr's chunk prefix), [NU + 1,
 * 2 NU + 1] for the unit sums read back.  Grown only here, before either
 * part is used in the slice.
 */
static uint32_t *host_scratch(filt_dev_t *d, size_t nu)
{
	if (d->h_cap_items < 2 * nu + 2) {
		d->h_cap_items = 3 * nu + 2;
		d->h_cnt = sp_realloc(d->h_cnt, d->h_cap_items * sizeof *d->h_cnt);
	}
	return d->h_cnt;
}

/* Append the TOT positions of the last write pass (d->out) to *HITS. */
static void append_out(filt_dev_t *d, uint64_t tot, uint32_t **hits, size_t *n_hits,
		size_t *cap_hits)
{
	if (*n_hits + tot > *cap_hits) {
		*cap_hits = (*n_hits + tot) * 3 / 2 + 1024;
		*hits = sp_realloc(*hits, *cap_hits * sizeof **hits);
	}
	dread(d, d->out, tot * 4, *hits + *n_hits);
	*n_hits += tot;
}

/*
 * The passes that bpr, bs and ph share, over the NI items of the NU units
 * from U0 whose own inputs are on the device: the count pass adds up the
 * units' counts (one atomic per unit and work group) and the groups'
 * (skipped with -N), group_scan makes the groups' output offsets, the write
 * pass stores the positions.  bpr's kernels also take the items' counts
 * (d->cnt: its write pass rescans only the chunks that have some).
 * Returns 0, or -1 when a device buffer could not be had.
 */
static int run_grouped(filt_dev_t *d, const dpart_t *p, size_t u0, size_t nu, size_t ni,
		uint32_t *ucnt, uint32_t **hits, size_t *n_hits, size_t *cap_hits)
{
	size_t ng = (ni + d->wg - 1) / d->wg, u;
	uint32_t n_items = (uint32_t)ni, n_units = (uint32_t)nu, ng32 = (uint32_t)ng;
	uint32_t want = !d->o.count_only, bpr = d->o.method == FILT_BPR, *usum;
	uint64_t tot = 0;
	cl_mem gs;
	cl_uint a;

	if (grow(d, &d->usum, &d->cap_usum, nu * 4, CL_MEM_READ_WRITE) < 0 ||
			(want && (grow(d, &d->gsum, &d->cap_gsum, ng * 4, CL_MEM_READ_WRITE) < 0 ||
				grow(d, &d->off, &d->cap_off, ng * 4, CL_MEM_READ_WRITE) < 0)))
		return -1;
	usum = host_scratch(d, nu) + nu + 1;
	dzero(d, d->usum, nu * 4);
	gs = want ? d->gsum : d->dummy;
	a = set_args(d, d->k_count, p, n_items, n_units, 0);
	if (bpr)
		ocl_arg(d->k_count, a++, sizeof(cl_mem), &d->cnt);
	ocl_arg(d->k_count, a++, sizeof(cl_mem), &d->usum);
	ocl_arg(d->k_count, a++, sizeof(cl_mem), &gs);
	ocl_arg(d->k_count, a, sizeof want, &want);
	if (drun_wg(d, d->k_count, ni, d->wg, P_COUNT) != CL_SUCCESS)
		return -1;
	if (want) {
		ocl_arg(d->k_gscan, 0, sizeof ng32, &ng32);
		ocl_arg(d->k_gscan, 1, sizeof(cl_mem), &d->gsum);
		ocl_arg(d->k_gscan, 2, sizeof(cl_mem), &d->off);
		if (drun_wg(d, d->k_gscan, d->wg, d->wg, P_SCAN) != CL_SUCCESS)
			return -1;
	}
	dread(d, d->usum, nu * 4, usum);   /* also waits for the kernels */
	for (u = 0; u < nu; u++) {
		ucnt[u0 + u] = usum[u];
		tot += usum[u];
	}
	if (tot == 0 || !want)
		return 0;
	if (tot >= UINT32_MAX / 2)
		return -1;   /* halve: offsets are u32 */
	if (grow(d, &d->out, &d->cap_out, tot * 4, CL_MEM_WRITE_ONLY) < 0)
		return -1;
	a = set_args(d, d->k_write, p, n_items, n_units, 1);
	if (bpr)
		ocl_arg(d->k_write, a++, sizeof(cl_mem), &d->cnt);
	ocl_arg(d->k_write, a++, sizeof(cl_mem), &d->off);
	ocl_arg(d->k_write, a, sizeof(cl_mem), &d->out);
	if (drun_wg(d, d->k_write, ni, d->wg, P_WRITE) != CL_SUCCESS)
		return -1;
	append_out(d, tot, hits, n_hits, cap_hits);
	return 0;
}

/*
 * run_slice for bs and ph: units [U0, U1) are items U0 * n_grid ..
 * (degen_count, degen_write in filt.cl: the write pass redoes the lookups).
 */
static int run_slice_degen(filt_dev_t *d, const dpart_t *p, size_t u0, size_t u1,
		uint32_t *ucnt, uint32_t **hits, size_t *n_hits, size_t *cap_hits)
{
	size_t nu = u1 - u0, ni = nu * d->n_grid;

	if (ni == 0)
		return 0;
	if (grow(d, &d->ucode, &d->cap_ucode, nu * 4, CL_MEM_READ_ONLY) < 0 ||
			grow(d, &d->uq, &d->cap_uq, nu * 8, CL_MEM_READ_ONLY) < 0)
		return -1;
	prof_slice(d, nu, ni);
	dwrite(d, d->ucode, 0, nu * 4, d->h_code + u0);
	dwrite(d, d->uq, 0, nu * 8, d->h_q + u0);
	return run_grouped(d, p, u0, nu, ni, ucnt, hits, n_hits, cap_hits);
}

/*
 * run_slice for bpr: units [U0, U1) with their chunks (items prefix
 * h_cpre; bpr_count, bpr_write in filt.cl).
 */
static int run_slice_bpr(filt_dev_t *d, const dpart_t *p, size_t u0, size_t u1,
		uint32_t *ucnt, uint32_t **hits, size_t *n_hits, size_t *cap_hits)
{
	size_t nu = u1 - u0, ni = d->h_cpre[u1] - d->h_cpre[u0], u;
	uint32_t *rel;

	if (ni == 0)
		return 0;
	if (grow(d, &d->ucode, &d->cap_ucode, nu * 4, CL_MEM_READ_ONLY) < 0 ||
			grow(d, &d->uq, &d->cap_uq, nu * 8, CL_MEM_READ_ONLY) < 0 ||
			grow(d, &d->unm, &d->cap_unm, nu * 4, CL_MEM_READ_ONLY) < 0 ||
			grow(d, &d->cpre, &d->cap_cpre, (nu + 1) * 4, CL_MEM_READ_ONLY) < 0 ||
			grow(d, &d->cnt, &d->cap_cnt, ni * 4, CL_MEM_READ_WRITE) < 0)
		return -1;
	prof_slice(d, nu, ni);
	rel = host_scratch(d, nu);   /* item prefix relative to the slice */
	for (u = u0; u <= u1; u++)
		rel[u - u0] = d->h_cpre[u] - d->h_cpre[u0];
	dwrite(d, d->ucode, 0, nu * 4, d->h_code + u0);
	dwrite(d, d->uq, 0, nu * 8, d->h_q + u0);
	dwrite(d, d->unm, 0, nu * 4, d->h_nm + u0);
	dwrite(d, d->cpre, 0, (nu + 1) * 4, rel);
	return run_grouped(d, p, u0, nu, ni, ucnt, hits, n_hits, cap_hits);
}

/*
 * fm: run units [U0, U1) of the host arrays (items prefix h_cpre) on partition
 * P: appends the positions of each unit to HITS and its count to UCNT.
 * Returns 0, or -1 when a device buffer could not be had (halve and retry).
 */
static int run_slice(filt_dev_t *d, const dpart_t *p, size_t u0, size_t u1,
		uint32_t *ucnt, uint32_t **hits, size_t *n_hits, size_t *cap_hits)
{
	size_t nu = u1 - u0, ni = d->h_cpre[u1] - d->h_cpre[u0], u;
	uint64_t tot = 0;
	uint32_t n_items = (uint32_t)ni, n_units = (uint32_t)nu, *rel, *usum;
	cl_uint a;

	if (ni == 0)
		return 0;
	prof_slice(d, nu, ni);
	if (grow(d, &d->ucode, &d->cap_ucode, nu * 4, CL_MEM_READ_ONLY) < 0 ||
			grow(d, &d->uq, &d->cap_uq, nu * 8, CL_MEM_READ_ONLY) < 0 ||
			grow(d, &d->cpre, &d->cap_cpre, (nu + 1) * 4, CL_MEM_READ_ONLY) < 0 ||
			grow(d, &d->usum, &d->cap_usum, nu * 4, CL_MEM_READ_WRITE) < 0 ||
			grow(d, &d->cnt, &d->cap_cnt, (ni + 1) * 4, CL_MEM_READ_WRITE) < 0)
		return -1;
	rel = host_scratch(d, nu);   /* nu + 1: item prefix relative to the slice */
	usum = d->h_cnt + nu + 1;    /* nu: per-unit totals, then bases */
	for (u = u0; u <= u1; u++)
		rel[u - u0] = d->h_cpre[u] - d->h_cpre[u0];
	dwrite(d, d->ucode, 0, nu * 4, d->h_code + u0);
	dwrite(d, d->uq, 0, nu * 8, d->h_q + u0);
	dwrite(d, d->cpre, 0, (nu + 1) * 4, rel);
	a = set_args(d, d->k_count, p, n_items, n_units, 0);
	ocl_arg(d->k_count, a, sizeof(cl_mem), &d->cnt);
	if (drun(d, d->k_count, ni, P_COUNT) != CL_SUCCESS)
		return -1;
	ocl_arg(d->k_sum, 0, sizeof n_units, &n_units);
	ocl_arg(d->k_sum, 1, sizeof(cl_mem), &d->cpre);
	ocl_arg(d->k_sum, 2, sizeof(cl_mem), &d->cnt);
	ocl_arg(d->k_sum, 3, sizeof(cl_mem), &d->usum);
	if (drun(d, d->k_sum, nu, P_SUM) != CL_SUCCESS)
		return -1;
	dread(d, d->usum, nu * 4, usum);   /* also waits for the writes */
	for (u = 0; u < nu; u++) {
		uint32_t c = usum[u];

		ucnt[u0 + u] = c;
		usum[u] = (uint32_t)tot;     /* now the unit's base */
		tot += c;
	}
	if (tot == 0)
		return 0;   /* fm needs its ranges even with -N: the host locates them */
	if (tot >= UINT32_MAX / 2)
		return -1;   /* halve: offsets are u32 */
	if (grow(d, &d->off, &d->cap_off, (ni + 1) * 4, CL_MEM_READ_WRITE) < 0 ||
			grow(d, &d->ubase, &d->cap_ubase, nu * 4, CL_MEM_READ_ONLY) < 0 ||
			grow(d, &d->out, &d->cap_out, tot * 4, CL_MEM_WRITE_ONLY) < 0)
		return -1;
	dwrite(d, d->ubase, 0, nu * 4, usum);
	ocl_arg(d->k_scan, 0, sizeof n_units, &n_units);
	ocl_arg(d->k_scan, 1, sizeof(cl_mem), &d->cpre);
	ocl_arg(d->k_scan, 2, sizeof(cl_mem), &d->cnt);
	ocl_arg(d->k_scan, 3, sizeof(cl_mem), &d->ubase);
	ocl_arg(d->k_scan, 4, sizeof(cl_mem), &d->off);
	if (drun(d, d->k_scan, nu, P_SCAN) != CL_SUCCESS)
		return -1;
	{
		cl_ulong off0 = 0;

		a = set_args(d, d->k_write, p, n_items, n_units, 1);
		ocl_arg(d->k_write, a++, sizeof(cl_mem), &d->off);
		ocl_arg(d->k_write, a++, sizeof off0, &off0);
		ocl_arg(d->k_write, a, sizeof(cl_mem), &d->out);
	}
	if (drun(d, d->k_write, ni, P_WRITE) != CL_SUCCESS)
		return -1;
	append_out(d, tot, hits, n_hits, cap_hits);
	return 0;
}

void filt_dev_set_threads(filt_dev_t *d, int n)
{
	d->n_threads = n < 1 ? 1 : n;
}

/* Unit U of the host arrays: pattern P, with IT items (after unit U-1's). */
static void unit_fill(filt_dev_t *d, size_t u, const filt_pat_t *p, uint64_t it)
{
	d->h_code[u] = p->code;
	d->h_q[u] = d->cshift ? p->code | p->q << d->cshift : p->q;
	d->h_nm[u] = p->nmask;
	d->h_cpre[u + 1] = d->h_cpre[u] + (uint32_t)it;
	if (d->h_cpre[u + 1] > UINT32_MAX / 2)
		sp_die("too many matching items in one batch (use a smaller -B)");
}

/*
 * Order the N units (pattern indices IDX, seed codes CODE) by seed code,
 * stable, with one counting pass over the NC codes; TMP holds N entries.
 */
static void sort_by_code(size_t *idx, const uint32_t *code, size_t *tmp, size_t n, size_t nc)
{
	size_t *cnt = sp_calloc(nc + 1, sizeof *cnt), i, sum = 0;

	for (i = 0; i < n; i++)
		cnt[code[i]]++;
	for (i = 0; i < nc; i++) {
		size_t c = cnt[i];

		cnt[i] = sum;
		sum += c;
	}
	for (i = 0; i < n; i++)
		tmp[cnt[code[i]]++] = idx[i];
	memcpy(idx, tmp, n * sizeof *idx);
	free(cnt);
}

/*
 * gather_units: the units of patterns [a, b) (those whose SeedBlock is not
 * empty), by GATHER_T threads for a large batch.  Pass 1 finds each
 * pattern's items (a random read of the block starts: the host's main cost
 * here) and counts a piece's units and items; pass 2 writes the piece's
 * units from its offsets on.
 */

typedef struct {
	filt_dev_t *d;
	const idx_part_t *pt;
	const filt_pat_t *pat;
	uint32_t *pcnt, *items;      /* items: per pattern, pass 1 -> pass 2 */
	uint64_t *hoff, h0;
	size_t *unit_pat;
	size_t a, b, nu, u0;         /* patterns [a, b); its units, the first one's index */
	uint64_t ni, i0;             /* its items, the first one's */
	int pass;
} gather_t;

static void *gather_main(void *arg)
{
	gather_t *g = arg;
	filt_dev_t *d = g->d;
	const uint32_t *st = d->o.method == FILT_BPR ? g->pt->gen_start :
		d->o.method == FILT_FM || d->cshift ? NULL : g->pt->red_start;
	size_t i, u = g->u0;
	uint64_t c = g->i0;

	if (g->pass == 1) {
		g->nu = 0;
		g->ni = 0;
		for (i = g->a; i < g->b; i++) {
			uint64_t it;

			if (st && i + FILT_PREFETCH < g->b)   /* else a cache miss a pattern */
				__builtin_prefetch(&st[g->pat[i + FILT_PREFETCH].code]);
			it = unit_items(d, g->pt, g->pat[i].code);
			g->items[i] = it > UINT32_MAX ? UINT32_MAX : (uint32_t)it;
			g->pcnt[i] = 0;
			g->hoff[i] = g->h0;
			g->nu += it != 0;
			g->ni += it;
		}
		return NULL;
	}
	for (i = g->a; i < g->b; i++) {
		const filt_pat_t *p = &g->pat[i];

		if (!g->items[i])
			continue;
		g->unit_pat[u] = i;
		d->h_code[u] = p->code;
		d->h_q[u] = d->cshift ? p->code | p->q << d->cshift : p->q;
		d->h_nm[u] = p->nmask;
		c += g->items[i];
		d->h_cpre[u + 1] = (uint32_t)c;
		u++;
	}
	return NULL;
}

/* The units of the NP patterns PAT into d's host arrays and UNIT_PAT; returns their number. */
static size_t gather_units(filt_dev_t *d, const idx_part_t *pt, const filt_pat_t *pat,
		size_t np, uint32_t *pcnt, uint64_t *hoff, uint64_t h0, size_t *unit_pat)
{
	gather_t g[GATHER_T];
	pthread_t th[GATHER_T];
	int nt = np < GATHER_MIN ? 1 : d->n_threads < GATHER_T ? d->n_threads : GATHER_T, t, pass;
	uint32_t *items = d->h_items;
	size_t nu = 0;
	uint64_t ni = 0;

	for (t = 0; t < nt; t++) {
		g[t].d = d;
		g[t].pt = pt;
		g[t].pat = pat;
		g[t].pcnt = pcnt;
		g[t].items = items;
		g[t].hoff = hoff;
		g[t].h0 = h0;
		g[t].unit_pat = unit_pat;
		g[t].a = np * (size_t)t / (size_t)nt;
		g[t].b = np * (size_t)(t + 1) / (size_t)nt;
		g[t].u0 = 0;
		g[t].i0 = 0;
	}
	for (pass = 1; pass <= 2; pass++) {
		for (t = 0; t < nt; t++)
			g[t].pass = pass;
		for (t = 1; t < nt; t++)
			if (pthread_create(&th[t], NULL, gather_main, &g[t]) != 0)
				sp_die("cannot start a thread: %s", strerror(errno));
		gather_main(&g[0]);
		for (t = 1; t < nt; t++)
			pthread_join(th[t], NULL);
		if (pass == 2)
			break;
		for (t = 0; t < nt; t++) {   /* each piece's first unit and item */
			g[t].u0 = nu;
			g[t].i0 = ni;
			nu += g[t].nu;
			ni += g[t].ni;
		}
		if (ni > UINT32_MAX / 2)
			sp_die("too many matching items in one batch (use a smaller -B)");
	}
	return nu;
}

int filt_dev_match(filt_dev_t *d, uint32_t part, const filt_pat_t *pat, size_t np,
		uint32_t *pcnt, uint64_t *hoff, uint32_t **hits, size_t *n_hits, size_t *cap_hits)
{
	const idx_part_t *pt = &d->x->part[part];
	size_t nu = 0, i, u0, *unit_pat, *tmp, h0 = *n_hits;
	uint32_t *ucnt;
	double t0 = d->prof ? sp_now() : 0;
	int degen = d->o.method == FILT_BS || d->o.method == FILT_PH;
	int sort = d->x->p.w <= FILT_SORT_W;
	uint32_t max_items = degen ? FILT_MAX_DEGEN : FILT_MAX_ITEMS;

	if (part_upload(d, part) < 0)
		return -1;
	if (np > d->h_cap_units) {
		d->h_cap_units = np + np / 2;
		d->h_code = sp_realloc(d->h_code, d->h_cap_units * sizeof *d->h_code);
		d->h_q = sp_realloc(d->h_q, d->h_cap_units * sizeof *d->h_q);
		d->h_nm = sp_realloc(d->h_nm, d->h_cap_units * sizeof *d->h_nm);
		d->h_cpre = sp_realloc(d->h_cpre, (d->h_cap_units + 1) * sizeof *d->h_cpre);
		d->h_items = sp_realloc(d->h_items, (d->h_cap_units + 1) * sizeof *d->h_items);
		d->h_ucnt = sp_realloc(d->h_ucnt, (d->h_cap_units + 1) * sizeof *d->h_ucnt);
		d->h_upat = sp_realloc(d->h_upat, (d->h_cap_units + 1) * sizeof *d->h_upat);
	}
	unit_pat = d->h_upat;
	ucnt = d->h_ucnt;   /* every unit's is set by its slice */
	d->h_cpre[0] = 0;
	if (!sort) {
		nu = gather_units(d, pt, pat, np, pcnt, hoff, h0, unit_pat);
	} else {
		for (i = 0; i < np; i++) {
			uint64_t it = unit_items(d, pt, pat[i].code);

			pcnt[i] = 0;
			hoff[i] = h0;
			d->h_items[i] = it > UINT32_MAX ? UINT32_MAX : (uint32_t)it;
			if (it) {
				unit_pat[nu] = i;
				d->h_code[nu++] = pat[i].code;
			}
		}
	}
	/*
	 * Units in seed-code order when the seed weight is at most FILT_SORT_W
	 * (at most 4^8 codes: large SeedBlocks): the work items of neighbouring
	 * units then read the same SeedBlock (and, for ph, the same part of g),
	 * which the device's caches keep.  With more codes the blocks are small
	 * and the sort would cost the host more than it saves.  The positions
	 * come back in unit order, so HOFF says where each pattern's start.
	 */
	if (sort) {
		tmp = sp_malloc((nu + 1) * sizeof *tmp);
		sort_by_code(unit_pat, d->h_code, tmp, nu, (size_t)1 << (2 * d->x->p.w));
		free(tmp);
		for (i = 0; i < nu; i++)
			unit_fill(d, i, &pat[unit_pat[i]], d->h_items[unit_pat[i]]);
	}
	if (d->prof) {
		d->prof->n_calls++;
		d->prof->t_prep += sp_now() - t0;
	}
	/* slices of at most max_items items (a unit alone may be more) */
	for (u0 = 0; u0 < nu;) {
		size_t u1 = u0 + 1;

		while (u1 < nu && d->h_cpre[u1 + 1] - d->h_cpre[u0] <= max_items)
			u1++;
		while ((degen ? run_slice_degen : d->o.method == FILT_BPR ? run_slice_bpr :
					run_slice)(d, &d->part[part], u0, u1, ucnt, hits, n_hits,
					cap_hits) < 0) {
			if (u1 - u0 == 1)
				return -1;
			u1 = u0 + (u1 - u0) / 2;
		}
		u0 = u1;
	}
	for (i = 0; i < nu; i++) {
		pcnt[unit_pat[i]] = ucnt[i];
		hoff[unit_pat[i]] = h0;
		h0 += ucnt[i];
	}
	if (d->prof)
		d->prof->t_match += sp_now() - t0;
	return 0;
}
