/*
 * filt_ocl.c - seedfilt's OpenCL backend, its device side: the programs of
 * the run's method (kernels/filt.cl), the index partitions on the device
 * (all of them when they fit in 60% of its memory, else one at a time; ph's
 * slot records made there by ph_pack), and the commands that
 * filt_ocl_match.c queues, with their profile.
 *
 * SEEDPIPE_PROFILE=1 (a debugging aid) runs the commands on a profiling
 * queue of their own and prints, when the device is released, the device
 * time of each kind of command and the host's time in filt_dev_match.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "degen.h"
#include "filt_ocl_priv.h"
#include "util.h"

#define FILT_BPR_WG 128u            /* BPR_WG in filt.cl: most items of a bpr work group */
#define FILT_DG_WG 256u             /* DG_WG in filt.cl: local size of bs, ph */
#define FILT_GATHER_WG 128u         /* GATHER_WG in filt.cl: most items of a gathering group */
#define FILT_READ_PIECE ((size_t)2 << 20)   /* bytes per device->host read (no pinned buffers) */
#define FILT_PIN_PIECE ((size_t)4 << 20)    /* bytes of a pinned staging buffer */
#define FILT_REC_BYTES 16u          /* ph: one slot record (ph_pack in filt.cl) */

static const char *const prof_name[P_N] = { "host->device", "device->host", "fill",
	"count kernel", "unit sum", "scan", "write kernel", "gather kernels" };

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
	/* bpr, bs, ph: the red.* sections (bpr scans the keys, index format 3);
	 * B_NBPOS is made on the device from B_GRP, B_REP (nbpos_expand), which go then */
	sz[B_NBPOS] = (pt->n_uniq + 1) * 4;
	sz[B_GRP] = (pt->n_uniq / 64 + 1) * 16;
	sz[B_REP] = pt->n_rep * 4;
	sz[B_RPOS] = pt->n_occ * 4;
	sz[B_RNB] = pt->n_uniq * kb;
	sz[B_RSTART] = (nc + 1) * 4;
	if (m == FILT_PH) {
		/* B_BG, B_RNB, B_BRANK, B_BROFF, B_NBPOS: only until ph_pack has made
		 * B_BREC, B_BGF */
		sz[B_BSTART] = (nc + 1) * 4;
		sz[B_BSEED] = nc;
		sz[B_BG] = (pt->n_slots + 3) / 4;
		sz[B_BRANK] = (pt->n_rank_words + 1) * 4;
		sz[B_BROFF] = (nc + 1) * 4;
		sz[B_BREC] = pt->n_slots * FILT_REC_BYTES;
		sz[B_BGF] = (pt->n_slots + 1) / 2;
	}
}

static const void *part_ptr(const filt_dev_t *d, const idx_part_t *pt, int i)
{
	switch (i) {
	case B_RSTART: return pt->red_start;
	case B_RNB: return d->is32 ? (const void *)pt->red_nb32 : (const void *)pt->red_nb;
	case B_NBPOS: return NULL;   /* made on the device */
	case B_GRP: return pt->red_grp;
	case B_REP: return pt->red_rep;
	case B_RPOS: return pt->red_pos;
	case B_BSTART: return pt->blk_start;
	case B_BSEED: return pt->blk_seed;
	case B_BG: return pt->blk_g;
	case B_BRANK: return pt->blk_rank;
	case B_BROFF: return pt->blk_roff;
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
}

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
int filt_dev_err(filt_dev_t *d, cl_int err, const char *call)
{
	if (err == CL_SUCCESS)
		return 0;
	if (d->err == CL_SUCCESS) {
		d->err = err;
		d->err_call = call;
	}
	return -1;
}

void filt_dev_arg(filt_dev_t *d, cl_kernel k, cl_uint i, size_t size, const void *value)
{
	if (d->err == CL_SUCCESS)
		filt_dev_err(d, clSetKernelArg(k, i, size, value), "clSetKernelArg");
}

void filt_dev_h2d(filt_dev_t *d, cl_mem b, int blocking, size_t n, const void *src)
{
	cl_event ev = NULL;

	if (!n || d->err != CL_SUCCESS)
		return;
	if (filt_dev_err(d, clEnqueueWriteBuffer(d->q, b, blocking ? CL_TRUE : CL_FALSE, 0, n,
					src, 0, NULL, d->prof ? &ev : NULL), "clEnqueueWriteBuffer") == 0)
		prof_ev(d, P_H2D, ev, n);
}

/* Unmap and release the pinned staging buffers. */
static void pin_free(filt_dev_t *d)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (d->pin[i] && d->pin_host[i])
			clEnqueueUnmapMemObject(d->q, d->pin[i], d->pin_host[i], 0, NULL, NULL);
		if (d->pin[i])
			clFinish(d->q);
		ocl_release(d->pin[i]);
		d->pin[i] = NULL;
		d->pin_host[i] = NULL;
	}
}

/*
 * The two pinned staging buffers of FILT_PIN_PIECE bytes (host memory the
 * device reads and writes directly), tried once; with none of them (no
 * room, a driver that refuses) the reads go straight to pageable memory.
 */
static void pin_setup(filt_dev_t *d)
{
	cl_int err;
	int i;

	d->pin_tried = 1;
	for (i = 0; i < 2; i++) {
		/* ocl_buffer_try takes no host memory flags: the test limit by hand */
		if (d->ocl->fail_above && FILT_PIN_PIECE > d->ocl->fail_above)
			break;
		d->pin[i] = clCreateBuffer(d->ocl->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
				FILT_PIN_PIECE, NULL, &err);
		if (!d->pin[i] || err != CL_SUCCESS)
			break;
		d->pin_host[i] = clEnqueueMapBuffer(d->q, d->pin[i], CL_TRUE,
				CL_MAP_READ | CL_MAP_WRITE, 0, FILT_PIN_PIECE, 0, NULL, NULL, &err);
		if (!d->pin_host[i] || err != CL_SUCCESS) {
			d->pin_host[i] = NULL;
			break;
		}
	}
	if (i < 2)
		pin_free(d);
}

/*
 * Read of N bytes of B into DST through the pinned buffers: the DMA of one
 * piece into one buffer overlaps the host's copy of the other out of it.
 * Keeps a failure in D; 0, or -1.
 */
static int d2h_pinned(filt_dev_t *d, cl_mem b, size_t n, void *dst)
{
	cl_event ev[2] = { NULL, NULL };
	size_t o, prev = 0, plen = 0;
	int k = 0, r = 0;

	for (o = 0; o < n || plen; k ^= 1) {
		size_t c = n - o < FILT_PIN_PIECE ? n - o : FILT_PIN_PIECE;

		if (c && filt_dev_err(d, clEnqueueReadBuffer(d->q, b, CL_FALSE, o, c,
						d->pin_host[k], 0, NULL, &ev[k]), "clEnqueueReadBuffer") < 0) {
			r = -1;
			c = 0;
		}
		if (plen) {   /* the piece before, in the other buffer */
			if (filt_dev_err(d, clWaitForEvents(1, &ev[k ^ 1]), "clWaitForEvents") < 0)
				r = -1;
			else
				memcpy((char *)dst + prev, d->pin_host[k ^ 1], plen);
			if (d->prof && r == 0)
				prof_ev(d, P_D2H, ev[k ^ 1], plen);
			else
				clReleaseEvent(ev[k ^ 1]);
			ev[k ^ 1] = NULL;
		}
		if (r < 0) {
			if (ev[k]) {
				clWaitForEvents(1, &ev[k]);
				clReleaseEvent(ev[k]);
			}
			return -1;
		}
		prev = o;
		plen = c;
		o += c;
	}
	return 0;
}

/*
 * Blocking read of N bytes (waits for everything queued before): through
 * the pinned staging buffers, else in pieces of FILT_READ_PIECE bytes
 * straight to DST (on the H200, reads of ~1.6 MB into pageable memory ran
 * at 31 GB/s, reads of 25 MB at 9 GB/s; the pinned path was to take the
 * driver's own copy out of seedfilt's one serial step, the match).
 */
void filt_dev_d2h(filt_dev_t *d, cl_mem b, size_t n, void *dst)
{
	double t0 = d->prof ? sp_now() : 0;
	size_t o;

	if (!d->pin_tried && d->err == CL_SUCCESS)
		pin_setup(d);
	if (d->pin[0] && n && d->err == CL_SUCCESS) {
		if (d2h_pinned(d, b, n, dst) < 0)
			memset(dst, 0, n);   /* no garbage counts: the match fails */
		n = 0;
	}
	for (o = 0; o < n; o += FILT_READ_PIECE) {
		size_t c = n - o < FILT_READ_PIECE ? n - o : FILT_READ_PIECE;
		cl_event ev = NULL;

		if (d->err != CL_SUCCESS || filt_dev_err(d, clEnqueueReadBuffer(d->q, b,
						o + c == n ? CL_TRUE : CL_FALSE, o, c, (char *)dst + o, 0, NULL,
						d->prof ? &ev : NULL), "clEnqueueReadBuffer") < 0) {
			memset(dst, 0, n);   /* no garbage counts: the match fails */
			break;
		}
		prof_ev(d, P_D2H, ev, c);
	}
	if (d->prof) {
		d->prof->t_wait += sp_now() - t0;
		prof_collect(d);
	}
}

/* Run K over N items (kind WHAT); the CL error. */
cl_int filt_dev_run(filt_dev_t *d, cl_kernel k, size_t n, int what)
{
	cl_event ev = NULL;
	cl_int err = ocl_run_q(d->ocl, d->q, k, n, d->prof ? &ev : NULL);

	prof_ev(d, what, ev, 0);
	return err;
}

/* Run K over N items in work groups of L (kind WHAT); the CL error. */
cl_int filt_dev_run_wg(filt_dev_t *d, cl_kernel k, size_t n, size_t l, int what)
{
	cl_event ev = NULL;
	size_t global = (n + l - 1) / l * l;
	cl_int err = clEnqueueNDRangeKernel(d->q, k, 1, NULL, &global, &l, 0, NULL,
			d->prof ? &ev : NULL);

	prof_ev(d, what, ev, 0);
	return err;
}

/* SEEDPIPE_PROFILE: count a slice of NU units and NI items. */
void filt_dev_prof_slice(filt_dev_t *d, size_t nu, size_t ni)
{
	if (d->prof) {
		d->prof->n_slices++;
		d->prof->n_items += ni;
		d->prof->n_units += nu;
	}
}

/* Zero the first N bytes of B (N a multiple of 4). */
void filt_dev_zero(filt_dev_t *d, cl_mem b, size_t n)
{
	cl_event ev = NULL;
	cl_uint zero = 0;

	if (d->err == CL_SUCCESS && filt_dev_err(d, clEnqueueFillBuffer(d->q, b, &zero,
					sizeof zero, 0, n, 0, NULL, d->prof ? &ev : NULL),
				"clEnqueueFillBuffer") == 0)
		prof_ev(d, P_FILL, ev, n);
}

/*
 * ph: make partition P's slot records and g + fingerprint bytes (ph_pack,
 * ph_pack_g in filt.cl) from the uploaded g, ranks, the keys they name
 * (red.nb) and red_nbpos, then release those four.  0 or -1.
 */
static int ph_pack(filt_dev_t *d, const idx_part_t *pt, dpart_t *p)
{
	uint32_t n = (uint32_t)pt->n_slots, nb = (n + 1) / 2;
	uint32_t nc = (uint32_t)1 << (2 * d->x->p.w);
	cl_mem nb32 = d->is32 ? p->b[B_RNB] : d->dummy, nb64 = d->is32 ? d->dummy : p->b[B_RNB];
	cl_int err;

	if (pt->n_slots > UINT32_MAX / 2)
		return -1;   /* the kernels index slots with u32 */
	if (n) {
		filt_dev_arg(d, d->k_pack_g, 0, sizeof nb, &nb);
		filt_dev_arg(d, d->k_pack_g, 1, sizeof n, &n);
		filt_dev_arg(d, d->k_pack_g, 2, sizeof nc, &nc);
		filt_dev_arg(d, d->k_pack_g, 3, sizeof(cl_mem), &p->b[B_BSTART]);
		filt_dev_arg(d, d->k_pack_g, 4, sizeof(cl_mem), &p->b[B_BSEED]);
		filt_dev_arg(d, d->k_pack_g, 5, sizeof(cl_mem), &p->b[B_BG]);
		filt_dev_arg(d, d->k_pack_g, 6, sizeof(cl_mem), &nb32);
		filt_dev_arg(d, d->k_pack_g, 7, sizeof(cl_mem), &nb64);
		filt_dev_arg(d, d->k_pack_g, 8, sizeof d->is32, &d->is32);
		filt_dev_arg(d, d->k_pack_g, 9, sizeof(cl_mem), &p->b[B_BRANK]);
		filt_dev_arg(d, d->k_pack_g, 10, sizeof(cl_mem), &p->b[B_BROFF]);
		filt_dev_arg(d, d->k_pack_g, 11, sizeof(cl_mem), &p->b[B_RSTART]);
		filt_dev_arg(d, d->k_pack_g, 12, sizeof(cl_mem), &p->b[B_BGF]);
		if (ocl_run_q(d->ocl, d->ocl->queue, d->k_pack_g, nb, NULL) != CL_SUCCESS)
			return -1;
		filt_dev_arg(d, d->k_pack, 0, sizeof n, &n);
		filt_dev_arg(d, d->k_pack, 1, sizeof nc, &nc);
		filt_dev_arg(d, d->k_pack, 2, sizeof(cl_mem), &p->b[B_BSTART]);
		filt_dev_arg(d, d->k_pack, 3, sizeof(cl_mem), &p->b[B_RSTART]);
		filt_dev_arg(d, d->k_pack, 4, sizeof(cl_mem), &nb32);
		filt_dev_arg(d, d->k_pack, 5, sizeof(cl_mem), &nb64);
		filt_dev_arg(d, d->k_pack, 6, sizeof d->is32, &d->is32);
		filt_dev_arg(d, d->k_pack, 7, sizeof(cl_mem), &p->b[B_BRANK]);
		filt_dev_arg(d, d->k_pack, 8, sizeof(cl_mem), &p->b[B_BROFF]);
		filt_dev_arg(d, d->k_pack, 9, sizeof(cl_mem), &p->b[B_NBPOS]);
		filt_dev_arg(d, d->k_pack, 10, sizeof(cl_mem), &p->b[B_BREC]);
		err = ocl_run_q(d->ocl, d->ocl->queue, d->k_pack, n, NULL);
		if (err == CL_SUCCESS)
			err = clFinish(d->ocl->queue);
		if (err != CL_SUCCESS)
			return -1;
	}
	ocl_release(p->b[B_BG]);
	ocl_release(p->b[B_RNB]);
	ocl_release(p->b[B_BRANK]);
	ocl_release(p->b[B_BROFF]);
	ocl_release(p->b[B_NBPOS]);
	p->b[B_BG] = p->b[B_RNB] = p->b[B_BRANK] = p->b[B_BROFF] = p->b[B_NBPOS] = NULL;
	return 0;
}

/*
 * bs, ph: partition P's first positions of the unique neighborhoods,
 * B_NBPOS (u32 each, as the lookup kernels read them), expanded on the
 * device from the index's compact form (nbpos_expand in filt.cl), which is
 * then released.  0 or -1.
 */
static int nbpos_expand(filt_dev_t *d, const idx_part_t *pt, dpart_t *p)
{
	uint32_t n = (uint32_t)pt->n_uniq + 1;
	cl_mem rep = p->b[B_REP] ? p->b[B_REP] : d->dummy;
	cl_int err;

	if (pt->n_uniq >= UINT32_MAX)
		return -1;
	/* not ocl_arg, which exits: this may run on a pipeline thread */
	err = clSetKernelArg(d->k_nbpos, 0, sizeof n, &n);
	if (err == CL_SUCCESS)
		err = clSetKernelArg(d->k_nbpos, 1, sizeof(cl_mem), &p->b[B_GRP]);
	if (err == CL_SUCCESS)
		err = clSetKernelArg(d->k_nbpos, 2, sizeof(cl_mem), &rep);
	if (err == CL_SUCCESS)
		err = clSetKernelArg(d->k_nbpos, 3, sizeof(cl_mem), &p->b[B_NBPOS]);
	if (err == CL_SUCCESS)
		err = ocl_run_q(d->ocl, d->ocl->queue, d->k_nbpos, n, NULL);
	if (err == CL_SUCCESS)
		err = clFinish(d->ocl->queue);
	if (err != CL_SUCCESS)
		return -1;
	ocl_release(p->b[B_GRP]);
	ocl_release(p->b[B_REP]);
	p->b[B_GRP] = p->b[B_REP] = NULL;
	return 0;
}

/* ocl_residency's bytes of partition I. */
static uint64_t part_bytes(void *cb, uint32_t i)
{
	const filt_dev_t *d = cb;
	size_t sz[B_N];

	part_sizes(d, &d->x->part[i], sz);
	return ocl_arrays_bytes(sz, B_N);
}

/* ocl_residency's upload of partition I: 0, or -1 with none of it left. */
static int part_upload(void *cb, uint32_t i)
{
	filt_dev_t *d = cb;
	const idx_part_t *pt = &d->x->part[i];
	size_t sz[B_N];
	const void *src[B_N];
	int k;

	part_sizes(d, pt, sz);
	for (k = 0; k < B_N; k++)
		src[k] = part_ptr(d, pt, k);
	if (ocl_upload_arrays(d->ocl, d->part[i].b, B_N, sz, src, 0) < 0)
		return -1;
	if (d->part[i].b[B_GRP] && nbpos_expand(d, pt, &d->part[i]) < 0) {
		part_release(&d->part[i]);
		return -1;
	}
	if (d->o.method == FILT_PH && ph_pack(d, pt, &d->part[i]) < 0) {
		part_release(&d->part[i]);
		return -1;
	}
	/* seedfilt -M: the device has the partition; the host's pages go (read
	 * again from the file if the host needs them), so that uploading an
	 * index larger than the budget does not bring it all into memory */
	if (d->x->lazy)
		idx_part_drop(d->x, i);
	return 0;
}

static void part_release_cb(void *cb, uint32_t i)
{
	filt_dev_t *d = cb;

	part_release(&d->part[i]);
}

int filt_dev_upload(filt_dev_t *d, uint32_t i)
{
	return ocl_residency_get(&d->res, i);
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
	uint32_t i, nl = 0, *lp;

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
			if (!d->q || err != CL_SUCCESS) {
				snprintf(msg, len, "clCreateCommandQueue failed: %s (%d)",
						ocl_strerror(err), (int)err);
				free(d->prof);
				free(d);
				return NULL;
			}
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
		d->k_nbpos = ocl_kernel(prog, "nbpos_expand");
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
		d->k_nbpos = ocl_kernel(prog, "nbpos_expand");
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
	d->k_pitems = ocl_kernel(prog, "pat_items");
	d->k_pcompact = ocl_kernel(prog, "pat_compact");
	{
		size_t lim = kernel_wg(d, d->k_pcompact, kernel_wg(d, d->k_pitems,
					ocl->max_wg < FILT_GATHER_WG ? ocl->max_wg : FILT_GATHER_WG));
		const char *g = getenv("SEEDPIPE_FILT_GATHER");

		for (d->gwg = 1; d->gwg * 2 <= lim; d->gwg *= 2)
			;
		d->gather = g && !strcmp(g, "host") ? 1 : g && !strcmp(g, "device") ? 2 : 0;
	}
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
	if (ocl_residency_init(&d->res, ocl, x->n_part, part_bytes, part_upload, part_release_cb,
				d, msg, len) < 0) {
		filt_dev_free(d);
		return NULL;
	}
	return d;
}

void filt_dev_free(filt_dev_t *d)
{
	uint32_t i;

	if (!d)
		return;
	pin_free(d);   /* mapped on d->q, which the profile's end releases */
	if (d->prof) {
		clFinish(d->q);
		prof_collect(d);
		prof_print(d);
		clReleaseCommandQueue(d->q);
		free(d->prof->ev);
		free(d->prof->what);
		free(d->prof);
	}
	ocl_residency_free(&d->res);
	for (i = 0; d->part && i < d->x->n_part; i++)
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
	ocl_release(d->dpat);
	ocl_release(d->pitems);
	ocl_release(d->gsum2);
	ocl_release(d->upat);
	clReleaseKernel(d->k_pitems);
	clReleaseKernel(d->k_pcompact);
	clReleaseKernel(d->k_count);
	clReleaseKernel(d->k_write);
	clReleaseKernel(d->k_sum);
	clReleaseKernel(d->k_scan);
	if (d->k_gscan)
		clReleaseKernel(d->k_gscan);
	if (d->k_pack)
		clReleaseKernel(d->k_pack);
	if (d->k_nbpos)
		clReleaseKernel(d->k_nbpos);
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
	free(d->h_gs);
	free(d->h_upat32);
	free(d);
}

void filt_dev_set_threads(filt_dev_t *d, int n)
{
	d->n_threads = n < 1 ? 1 : n;
}
