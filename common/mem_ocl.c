/*
 * mem_ocl.c - seedfilt -m mem, stage 1 on an OpenCL device (kernels/mem.cl,
 * the search of kernels/inc_mem.h that the CPU runs in mem.c).
 *
 * The reads stream past the partitions, as in MUMmerGPU 2.0: a batch's
 * strands go up once, then every partition is searched in turn (its
 * FM-index, K-mer table and packed text stay on the device when all
 * partitions fit in 60% of its memory, else each is uploaded for its turn
 * and released after it).  Two kernels a partition (kernels/mem.cl): one
 * work item per window finds the rows where matches start, which take
 * slots from an atomic counter (a partition whose rows overflow the output
 * runs again with room for all of them), and counts them; the host turns
 * the counts into each window's place in the results; then one work item
 * per row locates and extends it and writes it there, as a mem_raw_t;
 * the records of matches shorter than L are left out on the device.  So
 * the results come back grouped by strand, window by window, in the
 * order of the CPU's stage 1 (stage 2, mem_finish, is the CPU's and relies
 * on it), straight into the batch's array of matches.
 */
#include "mem.h"

#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "inc_mem.h"
#include "mem_ocl_priv.h"
#include "sp_le.h"
#include "util.h"

static void let_go(mem_dev_t *d, int k);

/* Sizes and host addresses of the buffers of partition I. */
static void part_bufs(const mem_dev_t *d, uint32_t i, size_t sz[P_N], const void *src[P_N])
{
	const idx_t *x = d->x;
	const idx_part_t *pt = &x->part[i];
	uint64_t w0 = pt->beg >> 4, w1 = (pt->end - 1) / 16 + 3, wmax = ((x->total + 3) / 4 + 16) / 4;
	size_t jl;

	if (w1 > wmax)
		w1 = wmax;
	sz[P_OCC] = pt->fm.n_blocks * FM_OCC_BLOCK;
	src[P_OCC] = pt->fm.occ;
	sz[P_MARK] = pt->fm.n_blocks * 16;
	src[P_MARK] = pt->fm.mark;
	sz[P_SA] = pt->fm.n_samples * 4;
	src[P_SA] = pt->fm.sa;
	src[P_JUMP] = mem_idx_jump(d->mi, i, &jl);
	sz[P_JUMP] = jl ? jl : 0;
	sz[P_TEXT] = (w1 - w0) * 4;
	src[P_TEXT] = x->pack + 4 * w0;
	sz[P_SHAL] = (size_t)((const mem_fm_t *)mem_idx_fm(d->mi, i))->nshal * 4;
	src[P_SHAL] = ((const mem_fm_t *)mem_idx_fm(d->mi, i))->shal;
}

static void part_release(dpart_t *p)
{
	int k;

	for (k = 0; k < P_N; k++) {
		ocl_release(p->b[k]);
		p->b[k] = NULL;
	}
}

/* ocl_residency's bytes of partition I. */
static uint64_t part_bytes(void *cb, uint32_t i)
{
	size_t sz[P_N];
	const void *src[P_N];

	part_bufs(cb, i, sz, src);
	return ocl_arrays_bytes(sz, P_N);
}

/* ocl_residency's upload of partition I: 0, or -1 (no room) with none of it left;
 * an empty array gets a buffer of 64 bytes (a kernel argument). */
static int part_upload(void *cb, uint32_t i)
{
	mem_dev_t *d = cb;
	size_t sz[P_N];
	const void *src[P_N];

	int rc;

	part_bufs(d, i, sz, src);
	mem_part_load(d->x, i);   /* -M: the host maps one partition at a time (blocking writes) */
	rc = ocl_upload_arrays(d->ocl, d->part[i].b, P_N, sz, src, 64);
	mem_part_drop(d->x, i);
	return rc;
}

static void part_release_cb(void *cb, uint32_t i)
{
	mem_dev_t *d = cb;

	part_release(&d->part[i]);
}

static void hbuf_release(mem_dev_t *d, hbuf_t *h)
{
	pthread_mutex_lock(&d->hmu);
	d->pin_held -= h->p ? h->cap : 0;
	pthread_mutex_unlock(&d->hmu);
	ocl_pinned_release(d->ocl, d->q_pin, h->m, h->p);
	h->m = NULL;
	h->p = NULL;
}

/*
 * An array of at least N bytes for the matches of a batch (on the thread
 * that runs mem_dev_find): a kept page-locked one, a new one, or, when the
 * device gives none, pageable memory (*PINNED 0).  NULL only when N is 0.
 */
static void *host_get(mem_dev_t *d, size_t n, int *pinned, size_t *cap_bytes)
{
	hbuf_t h = { NULL, NULL, 0 };
	size_t k, best = SIZE_MAX, big;
	cl_int err;

	*pinned = 0;
	*cap_bytes = n;
	if (!n)
		return NULL;
	pthread_mutex_lock(&d->hmu);
	for (k = 0; k < d->n_hfree; k++)    /* the smallest that holds N */
		if (d->hfree[k].cap >= n && (best == SIZE_MAX || d->hfree[k].cap < d->hfree[best].cap))
			best = k;
	if (best != SIZE_MAX) {
		h = d->hfree[best];
		d->hfree[best] = d->hfree[--d->n_hfree];
	} else if (d->n_hfree && d->n_hfree + 1 >= d->pin_free_max) {   /* too small to keep: make room */
		for (k = 1, best = 0; k < d->n_hfree; k++)
			if (d->hfree[k].cap < d->hfree[best].cap)
				best = k;
		h = d->hfree[best];
		d->hfree[best] = d->hfree[--d->n_hfree];
		pthread_mutex_unlock(&d->hmu);
		hbuf_release(d, &h);
		pthread_mutex_lock(&d->hmu);
		h.cap = 0;
	}
	for (k = 0, big = 0; k < d->n_hout; k++)
		if (d->hout[k].cap > big)
			big = d->hout[k].cap;
	pthread_mutex_unlock(&d->hmu);
	if (!h.p && !__atomic_load_n(&d->pin_off, __ATOMIC_RELAXED)) {
		/*
		 * A quarter more, and at least the largest array out, in steps of
		 * PIN_MIN: the next batches' arrays are about as large, and each
		 * allocation costs (0.32 s for 704 MB in 14 batches on an H200
		 * when they grew by an eighth)
		 */
		size_t cap = n + n / 4 > big ? n + n / 4 : big;
		double t0 = sp_now();
		int off = 0;

		cap = (cap + d->pin_min - 1) / d->pin_min * d->pin_min;

		if (!(h.p = ocl_pinned_try(d->ocl, d->q_pin, CL_MEM_READ_WRITE, cap, &h.m, &err)))
			off = 1;
		else
			h.cap = cap;
		pthread_mutex_lock(&d->hmu);
		if (off)
			__atomic_store_n(&d->pin_off, 1, __ATOMIC_RELAXED);
		else
			d->tm.pinned += cap;
		if (!off && (d->pin_held += cap) > d->tm.pin_held_max)
			d->tm.pin_held_max = d->pin_held;
		d->tm.pin += sp_now() - t0;
		pthread_mutex_unlock(&d->hmu);
	}
	if (!h.p) {
		*cap_bytes = n + n / 4;
		return sp_malloc(*cap_bytes);
	}
	pthread_mutex_lock(&d->hmu);
	if (d->n_hout == d->cap_hout) {
		d->cap_hout = d->cap_hout ? 2 * d->cap_hout : 8;
		d->hout = sp_realloc(d->hout, d->cap_hout * sizeof *d->hout);
	}
	d->hout[d->n_hout++] = h;
	pthread_mutex_unlock(&d->hmu);
	*pinned = 1;
	*cap_bytes = h.cap;
	return h.p;
}

void mem_dev_raw_free(mem_dev_t *d, mem_raw_t *raw)
{
	size_t k;

	if (!raw)
		return;
	pthread_mutex_lock(&d->hmu);
	for (k = 0; k < d->n_hout; k++)
		if (d->hout[k].p == (void *)raw)
			break;
	if (k < d->n_hout) {
		if (d->n_hfree == d->cap_hfree) {
			d->cap_hfree = d->cap_hfree ? 2 * d->cap_hfree : 8;
			d->hfree = sp_realloc(d->hfree, d->cap_hfree * sizeof *d->hfree);
		}
		d->hfree[d->n_hfree++] = d->hout[k];
		d->hout[k] = d->hout[--d->n_hout];
		raw = NULL;
	}
	pthread_mutex_unlock(&d->hmu);
	free(raw);                        /* pageable: not from the pool */
}

/* A batch's array *R (*CAP records, *PIN: page-locked) of NR records grown to hold WANT. */
static void raw_grow(mem_dev_t *d, mem_raw_t **r, size_t *cap, int *pin, size_t nr, size_t want)
{
	size_t bytes;
	mem_raw_t *g = host_get(d, want * sizeof *g, pin, &bytes);

	if (nr)
		memcpy(g, *r, nr * sizeof *g);
	mem_dev_raw_free(d, *r);
	*r = g;
	*cap = bytes / sizeof *g;
}

mem_dev_t *mem_dev_new(ocl_ctx_t *ocl, const mem_idx_t *mi, char *msg, size_t len)
{
	mem_dev_t *d = sp_calloc(1, sizeof *d);
	const idx_t *x = mem_idx_x(mi);
	double t0 = sp_now();

	d->ocl = ocl;
	d->mi = mi;
	d->x = x;
	d->stage_bytes = STAGE_BYTES;
	pthread_mutex_init(&d->hmu, NULL);
	d->q_pin = ocl_queue_create(ocl);
	d->q_dl = ocl_queue_create(ocl);
	d->sync = getenv("SEEDPIPE_MEM_SYNC") != NULL;
	if (getenv("SEEDPIPE_MEM_HOLD_MS"))
		d->hold_ms = atoi(getenv("SEEDPIPE_MEM_HOLD_MS"));
	d->pin_off = getenv("SEEDPIPE_MEM_NO_PIN") != NULL;   /* tests: the staged path */
	d->pin_min = PIN_MIN;
	d->pin_free_max = PIN_FREE_MAX;
	if (getenv("SEEDPIPE_MEM_PIN_FREE") && atol(getenv("SEEDPIPE_MEM_PIN_FREE")) > 0)
		d->pin_free_max = (size_t)atol(getenv("SEEDPIPE_MEM_PIN_FREE"));
	d->put_plain = getenv("SEEDPIPE_MEM_PUT_PLAIN") != NULL;
	d->in_off = d->put_plain || d->pin_off;   /* NO_PIN: the staging's path (tests) */
	d->trace = getenv("SEEDPIPE_MEM_TRACE") != NULL;
	if (getenv("SEEDPIPE_MEM_WG") && atol(getenv("SEEDPIPE_MEM_WG")) > 0)
		d->wg = (size_t)atol(getenv("SEEDPIPE_MEM_WG"));
	if (getenv("SEEDPIPE_MEM_PIN_MIN") && atol(getenv("SEEDPIPE_MEM_PIN_MIN")) >= 64)
		d->pin_min = (size_t)atol(getenv("SEEDPIPE_MEM_PIN_MIN"));
	{
		const char *e = getenv("SEEDPIPE_MEM_STAGE");   /* tests: many small chunks */

		if (e && atol(e) >= 64)
			d->stage_bytes = (size_t)atol(e);
	}
	{
		/* $SEEDPIPE_MEM_CL_OPTIONS: build options to try (register limits); with
		 * SEEDPIPE_DEBUG the build log follows (a driver's register counts) */
		const char *opts = getenv("SEEDPIPE_MEM_CL_OPTIONS");
		cl_program prog = ocl_program(ocl, "mem", opts);
		size_t n = 0;

		if (getenv("SEEDPIPE_DEBUG") && *getenv("SEEDPIPE_DEBUG") && clGetProgramBuildInfo(prog,
					ocl->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) == CL_SUCCESS && n > 1) {
			char *log = sp_malloc(n + 1);

			if (clGetProgramBuildInfo(prog, ocl->device, CL_PROGRAM_BUILD_LOG, n, log, NULL)
					== CL_SUCCESS) {
				log[n] = 0;
				sp_msg("-m mem: build log of the kernels (options '%s'):\n%s", opts ? opts : "",
						log);
			}
			free(log);
		}

		d->k_rows = ocl_kernel(prog, "mem_rows");
		d->k_loc = ocl_kernel(prog, "mem_loc");
		d->k_compact = ocl_kernel(prog, "mem_compact");
		d->k_shal = ocl_kernel(prog, "mem_shal");
		d->k_wide = ocl_kernel(prog, "mem_wide");
		d->k_scan_t = ocl_kernel(prog, "mem_scan_tiles");
		d->k_scan_s = ocl_kernel(prog, "mem_scan_sums");
		d->k_scan_a = ocl_kernel(prog, "mem_scan_add");
	}
	d->host_scan = getenv("SEEDPIPE_MEM_HOST_SCAN") != NULL;
	d->wide_min = WIDE_MIN;
	if (getenv("SEEDPIPE_MEM_WIDE_MIN"))
		d->wide_min = (uint32_t)atol(getenv("SEEDPIPE_MEM_WIDE_MIN"));
	if (d->wide_min == 0)
		d->wide_min = UINT32_MAX;   /* none deferred */
	d->shal_min = SHAL_MIN;
	if (getenv("SEEDPIPE_MEM_SHAL_MIN"))
		d->shal_min = (uint32_t)atol(getenv("SEEDPIPE_MEM_SHAL_MIN"));
	{
		size_t g = 0;
		int k;

		if (clGetKernelWorkGroupInfo(d->k_shal, ocl->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof g,
					&g, NULL) != CL_SUCCESS || g == 0)
			g = 1;
		d->shal_wg = g < SHAL_WG ? g : SHAL_WG;
		if (clGetKernelWorkGroupInfo(d->k_wide, ocl->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof g,
					&g, NULL) != CL_SUCCESS || g == 0)
			g = 1;
		d->wide_wg = g < WIDE_WG ? g : WIDE_WG;
		if (getenv("SEEDPIPE_MEM_WIDE_WG") && atol(getenv("SEEDPIPE_MEM_WIDE_WG")) > 0
				&& (size_t)atol(getenv("SEEDPIPE_MEM_WIDE_WG")) < d->wide_wg)
			d->wide_wg = (size_t)atol(getenv("SEEDPIPE_MEM_WIDE_WG"));   /* tests: many rounds */
		if (clGetKernelWorkGroupInfo(d->k_compact, ocl->device, CL_KERNEL_WORK_GROUP_SIZE,
					sizeof g, &g, NULL) != CL_SUCCESS || g == 0)
			g = 1;
		d->compact_wg = g < COMPACT_WG ? g : COMPACT_WG;
		if (getenv("SEEDPIPE_MEM_COMPACT_WG") && atol(getenv("SEEDPIPE_MEM_COMPACT_WG")) > 0
				&& (size_t)atol(getenv("SEEDPIPE_MEM_COMPACT_WG")) < d->compact_wg)
			d->compact_wg = (size_t)atol(getenv("SEEDPIPE_MEM_COMPACT_WG"));   /* tests: many tiles */
		d->scan_wg = SCAN_WG;
		for (k = 0; k < 2; k++)
			if (clGetKernelWorkGroupInfo(k ? d->k_scan_s : d->k_scan_t, ocl->device,
						CL_KERNEL_WORK_GROUP_SIZE, sizeof g, &g, NULL) != CL_SUCCESS
					|| g < d->scan_wg)
				d->scan_wg = g ? g : 1;
		if (getenv("SEEDPIPE_MEM_SCAN_WG") && atol(getenv("SEEDPIPE_MEM_SCAN_WG")) > 0
				&& (size_t)atol(getenv("SEEDPIPE_MEM_SCAN_WG")) < d->scan_wg)
			d->scan_wg = (size_t)atol(getenv("SEEDPIPE_MEM_SCAN_WG"));   /* tests: many tiles */
		if (getenv("SEEDPIPE_MEM_SHAL_WG") && atol(getenv("SEEDPIPE_MEM_SHAL_WG")) > 0
				&& (size_t)atol(getenv("SEEDPIPE_MEM_SHAL_WG")) < d->shal_wg)
			d->shal_wg = (size_t)atol(getenv("SEEDPIPE_MEM_SHAL_WG"));   /* tests: many rounds */
	}
	d->part = sp_calloc(x->n_part ? x->n_part : 1, sizeof *d->part);
	if (ocl_residency_init(&d->resid, ocl, x->n_part, part_bytes, part_upload, part_release_cb,
				d, msg, len) < 0) {
		mem_dev_free(d);
		return NULL;
	}
	d->tm.setup = sp_now() - t0;
	return d;
}

int mem_dev_resident(const mem_dev_t *d)
{
	return d->resid.all;
}

void mem_dev_free(mem_dev_t *d)
{
	uint32_t i;
	int k;

	if (!d)
		return;
	for (k = 0; k < 2; k++)
		let_go(d, k);
	for (k = 0; k < 2; k++)
		if (d->ev_dl[k]) {
			clWaitForEvents(1, &d->ev_dl[k]);
			clReleaseEvent(d->ev_dl[k]);
		}
	ocl_residency_free(&d->resid);
	for (i = 0; i < d->n_hout; i++)    /* not given back: unmapped all the same */
		hbuf_release(d, &d->hout[i]);
	for (i = 0; i < d->n_hfree; i++)
		hbuf_release(d, &d->hfree[i]);
	free(d->hout);
	free(d->hfree);
	if (d->q_dl)
		clReleaseCommandQueue(d->q_dl);
	if (d->q_pin)
		clReleaseCommandQueue(d->q_pin);
	pthread_mutex_destroy(&d->hmu);
	for (i = 0; d->part && i < d->x->n_part; i++)
		part_release(&d->part[i]);
	for (k = 0; k < 2; k++) {
		if (d->in_ev[k]) {
			clWaitForEvents(1, &d->in_ev[k]);
			clReleaseEvent(d->in_ev[k]);
		}
		mdev_in_release(d, &d->in[k]);
	}
	for (k = 0; k < 2; k++)
		if (d->stage_p[k])
			clEnqueueUnmapMemObject(d->ocl->queue, d->stage_m[k], d->stage_p[k], 0, NULL, NULL);
	if (d->stage_ok > 0)
		clFinish(d->ocl->queue);
	for (k = 0; k < 2; k++)
		ocl_release(d->stage_m[k]);
	for (k = 0; k < B_N; k++)
		ocl_release(d->b[k].m);
	clReleaseKernel(d->k_rows);
	clReleaseKernel(d->k_loc);
	clReleaseKernel(d->k_compact);
	clReleaseKernel(d->k_shal);
	clReleaseKernel(d->k_wide);
	clReleaseKernel(d->k_scan_t);
	clReleaseKernel(d->k_scan_s);
	clReleaseKernel(d->k_scan_a);
	free(d->part);
	free(d->h_cnt);
	free(d);
}









/* Kernel K over N items: ocl_run_try's work-groups, or $SEEDPIPE_MEM_WG items each (measurements). */
static cl_int run_k(mem_dev_t *d, cl_kernel k, size_t n)
{
	size_t global;

	if (!d->wg || n == 0)
		return ocl_run_try(d->ocl, k, n);
	global = (n + d->wg - 1) / d->wg * d->wg;
	return clEnqueueNDRangeKernel(d->ocl->queue, k, 1, NULL, &global, &d->wg, 0, NULL, NULL);
}

/* Set the arguments of kernel K from A on: the buffers of partition P listed in BUFS (-1 ends). */
static cl_uint part_args(cl_kernel k, cl_uint a, const dpart_t *dp, const int *bufs)
{
	for (; *bufs >= 0; bufs++)
		ocl_arg(k, a++, sizeof(cl_mem), &dp->b[*bufs]);
	return a;
}

/*
 * The kernel mem_shal (WIDE 0) or mem_wide (1) over the N windows that the
 * kernel rows left it (partition P, slots for CAP rows), a work-group a
 * window: *CNT gets the slots taken in all.
 */
static int run_groups(mem_dev_t *d, int wide, uint32_t p, uint32_t n, uint32_t cap, uint32_t *cnt)
{
	static const int bufs[] = { P_OCC, P_SHAL, -1 };
	const mem_fm_t *f = mem_idx_fm(d->mi, p);
	cl_ulong v[8] = { f->n, f->primary, f->c0, f->c1, f->c2, f->c3, f->ylo, f->yhi };
	uint32_t w = mem_idx_w(d->mi), s = mem_idx_s(d->mi);
	cl_kernel kn = wide ? d->k_wide : d->k_shal;
	const char *name = wide ? "mem_wide" : "mem_shal";
	size_t wg = wide ? d->wide_wg : d->shal_wg, global = (size_t)n * wg;
	cl_uint a = 0;
	cl_int err;
	int k;

	ocl_arg(kn, a++, sizeof n, &n);
	ocl_arg(kn, a++, sizeof(cl_mem), &d->b[wide ? B_WIDE : B_DEF].m);
	for (k = B_WOFF; k <= B_WORDS; k++)
		ocl_arg(kn, a++, sizeof(cl_mem), &d->b[k].m);
	a = part_args(kn, a, &d->part[p], bufs);
	for (k = 0; k < (wide ? 8 : 6); k++)   /* mem_wide: the deep rows' range too */
		ocl_arg(kn, a++, sizeof v[k], &v[k]);
	ocl_arg(kn, a++, sizeof f->nshal, &f->nshal);
	ocl_arg(kn, a++, sizeof w, &w);
	ocl_arg(kn, a++, sizeof s, &s);
	ocl_arg(kn, a++, sizeof(cl_mem), &d->b[B_OUT].m);
	ocl_arg(kn, a++, sizeof(cl_mem), &d->b[B_CNT].m);
	ocl_arg(kn, a++, sizeof cap, &cap);
	ocl_arg(kn, a++, sizeof(cl_mem), &d->b[B_WCNT].m);
	if ((err = clSetKernelArg(kn, a++, (wg + 1) * 4, NULL)) != CL_SUCCESS)
		return sp_fail("OpenCL kernel %s: local memory: %s", name, ocl_strerror(err));
	if ((err = clEnqueueNDRangeKernel(d->ocl->queue, kn, 1, NULL, &global, &wg, 0, NULL, NULL))
			!= CL_SUCCESS)
		return sp_fail("OpenCL kernel %s failed: %s", name, ocl_strerror(err));
	if (wide)
		d->tm.wide += n;
	else
		d->tm.shal += n;
	return mdev_get(d, d->b[B_CNT].m, cnt, 4);
}

/*
 * Buffer K's N counts to their exclusive prefix sums on the device, their
 * total to B_TOT[TI] (the kernels mem_scan_*; nothing waited for).
 */
static int run_scan(mem_dev_t *d, int k, uint32_t n, uint32_t ti)
{
	size_t wg = d->scan_wg, tile = wg * 8, nt = (n + tile - 1) / tile, global = nt * wg;
	uint32_t ntiles = (uint32_t)nt, t32 = (uint32_t)tile;
	cl_uint a = 0;
	cl_int err;

	if (mdev_need(d, B_SUMS, nt * 4) < 0 || mdev_need(d, B_TOT, 8) < 0)
		return -1;
	ocl_arg(d->k_scan_t, a++, sizeof n, &n);
	ocl_arg(d->k_scan_t, a++, sizeof(cl_mem), &d->b[k].m);
	ocl_arg(d->k_scan_t, a++, sizeof(cl_mem), &d->b[B_SUMS].m);
	err = clSetKernelArg(d->k_scan_t, a++, wg * 4, NULL);
	if (err == CL_SUCCESS)
		err = clEnqueueNDRangeKernel(d->ocl->queue, d->k_scan_t, 1, NULL, &global, &wg, 0, NULL, NULL);
	a = 0;
	ocl_arg(d->k_scan_s, a++, sizeof ntiles, &ntiles);
	ocl_arg(d->k_scan_s, a++, sizeof(cl_mem), &d->b[B_SUMS].m);
	ocl_arg(d->k_scan_s, a++, sizeof(cl_mem), &d->b[B_TOT].m);
	ocl_arg(d->k_scan_s, a++, sizeof ti, &ti);
	if (err == CL_SUCCESS)
		err = clSetKernelArg(d->k_scan_s, a++, wg * 4, NULL);
	if (err == CL_SUCCESS)
		err = clEnqueueNDRangeKernel(d->ocl->queue, d->k_scan_s, 1, NULL, &wg, &wg, 0, NULL, NULL);
	a = 0;
	ocl_arg(d->k_scan_a, a++, sizeof n, &n);
	ocl_arg(d->k_scan_a, a++, sizeof(cl_mem), &d->b[k].m);
	ocl_arg(d->k_scan_a, a++, sizeof(cl_mem), &d->b[B_SUMS].m);
	ocl_arg(d->k_scan_a, a++, sizeof t32, &t32);
	if (err == CL_SUCCESS && nt > 1)
		err = run_k(d, d->k_scan_a, n);
	if (err != CL_SUCCESS)
		return sp_fail("OpenCL kernels mem_scan failed: %s", ocl_strerror(err));
	return 0;
}

/*
 * Run partition P over the N_ITEMS windows from IT0 on: their matches
 * (*NOUT records) into d->b[d->res] in window order, and the matches of
 * each window into d->h_cnt[0 .. N_ITEMS).
 * Returns 0, -1 after sp_fail, or -2 when the slots would not fit in one
 * buffer (the caller takes fewer windows).
 */
static int run_part(mem_dev_t *d, uint32_t p, uint32_t n_st, uint32_t it0, uint32_t n_items, size_t *nout)
{
	static const int rows_bufs[] = { P_OCC, P_JUMP, P_SHAL, -1 };
	static const int loc_bufs[] = { P_OCC, P_MARK, P_SA, P_TEXT, -1 };
	const mem_fm_t *f = mem_idx_fm(d->mi, p);
	const dpart_t *dp = &d->part[p];
	uint32_t w = mem_idx_w(d->mi), s = mem_idx_s(d->mi), lmin = mem_idx_opt(d->mi)->L, zero = 0;
	cl_ulong v[8] = { f->n, f->primary, f->c0, f->c1, f->c2, f->c3, f->ylo, f->yhi };
	uint32_t cnt = 0, sum, j, zero3[3] = { 0, 0, 0 }, c3[3];
	double tk[2];
	uint32_t wcap = n_items / 16 + 1;   /* wide windows are few: the rest take their rows themselves */
	double t0;
	int pass, rk = d->set ? B_RES1 : B_RES, ck = d->set ? B_CRES1 : B_CRES;

	if (mdev_need(d, B_WCNT, (size_t)n_items * 4) < 0 || mdev_need(d, B_DEF, (size_t)n_items * 16) < 0
			|| mdev_need(d, B_WIDE, (size_t)wcap * 32) < 0)
		return -1;
	for (pass = 0;; pass++) {
		uint32_t cap = (uint32_t)(d->b[B_OUT].cap / SLOT_BYTES);
		cl_uint a = 0;
		cl_int err;
		int k;

		if (pass == 2)
			return sp_fail("internal error: the matches of a partition changed between two runs");
		/* the slots taken, the windows left to mem_shal and to mem_wide */
		if (mdev_put(d, B_CNT, zero3, 12) < 0)
			return -1;
		t0 = sp_now();
		ocl_arg(d->k_rows, a++, sizeof it0, &it0);
		ocl_arg(d->k_rows, a++, sizeof n_items, &n_items);
		ocl_arg(d->k_rows, a++, sizeof n_st, &n_st);
		ocl_arg(d->k_rows, a++, sizeof(cl_mem), &d->b[B_WPRE].m);
		for (k = B_WOFF; k <= B_WORDS; k++)
			ocl_arg(d->k_rows, a++, sizeof(cl_mem), &d->b[k].m);
		a = part_args(d->k_rows, a, dp, rows_bufs);
		for (k = 0; k < 8; k++)
			ocl_arg(d->k_rows, a++, sizeof v[k], &v[k]);
		ocl_arg(d->k_rows, a++, sizeof f->nshal, &f->nshal);
		ocl_arg(d->k_rows, a++, sizeof f->k, &f->k);
		ocl_arg(d->k_rows, a++, sizeof w, &w);
		ocl_arg(d->k_rows, a++, sizeof s, &s);
		ocl_arg(d->k_rows, a++, sizeof lmin, &lmin);
		ocl_arg(d->k_rows, a++, sizeof(cl_mem), &d->b[B_OUT].m);
		ocl_arg(d->k_rows, a++, sizeof(cl_mem), &d->b[B_CNT].m);
		ocl_arg(d->k_rows, a++, sizeof cap, &cap);
		ocl_arg(d->k_rows, a++, sizeof(cl_mem), &d->b[B_WCNT].m);
		ocl_arg(d->k_rows, a++, sizeof(cl_mem), &d->b[B_DEF].m);
		ocl_arg(d->k_rows, a++, sizeof d->shal_min, &d->shal_min);
		ocl_arg(d->k_rows, a++, sizeof(cl_mem), &d->b[B_WIDE].m);
		ocl_arg(d->k_rows, a++, sizeof d->wide_min, &d->wide_min);
		ocl_arg(d->k_rows, a++, sizeof wcap, &wcap);
		if ((err = run_k(d, d->k_rows, n_items)) != CL_SUCCESS)
			return sp_fail("OpenCL kernel mem_rows failed: %s", ocl_strerror(err));
		if (mdev_get(d, d->b[B_CNT].m, c3, 12) < 0)
			return -1;
		tk[0] = sp_now();
		cnt = c3[0];
		if (c3[1] && run_groups(d, 0, p, c3[1], cap, &cnt) < 0)
			return -1;
		tk[1] = sp_now();
		if (c3[2] && run_groups(d, 1, p, c3[2] < wcap ? c3[2] : wcap, cap, &cnt) < 0)
			return -1;
		d->tm.rows += sp_now() - t0;
		d->tm.launches++;
		if (d->trace)   /* $SEEDPIPE_MEM_TRACE (measurements): each launch's windows and time */
			sp_msg("-m mem trace: batch %" PRIu64 ", partition %u, kernel rows over %u windows "
					"(from %u), %u rows (%u windows' shallow rows in mem_shal, %u windows' left "
					"steps in mem_wide): %.1f ms (rows %.1f, shal %.1f, wide %.1f)", d->nbatch, p,
					n_items, it0, cnt, c3[1], c3[2], 1e3 * (sp_now() - t0), 1e3 * (tk[0] - t0),
					1e3 * (tk[1] - tk[0]), 1e3 * (sp_now() - tk[1]));
		if (cnt <= cap)
			break;
		d->tm.reruns++;
		if ((uint64_t)cnt * SLOT_BYTES > d->ocl->max_alloc)
			return -2;
		if (mdev_need(d, B_OUT, (size_t)cnt * SLOT_BYTES) < 0)
			return -1;
	}
	*nout = cnt;
	if (cnt > d->per_win * n_items)
		d->per_win = (double)cnt / n_items;
	t0 = sp_now();
	if (d->h_cnt_cap < n_items) {
		d->h_cnt_cap = (size_t)n_items + n_items / 4;
		d->h_cnt = sp_realloc(d->h_cnt, d->h_cnt_cap * sizeof *d->h_cnt);
	}
	if (!cnt || d->host_scan) {
		if (mdev_get(d, d->b[B_WCNT].m, d->h_cnt, (size_t)n_items * 4) < 0)
			return -1;
	}
	if (cnt) {
		cl_uint a = 0;
		cl_int err;
		int k;

		if (d->host_scan) {
			for (j = 0, sum = 0; j < n_items; j++) {    /* each window's first record */
				uint32_t c = d->h_cnt[j];

				d->h_cnt[j] = sum;
				sum += c;
			}
			if (sum != cnt)
				return sp_fail("internal error: the rows of the windows do not add up");
			if (mdev_put(d, B_WCNT, d->h_cnt, (size_t)n_items * 4) < 0)
				return -1;
		} else if (run_scan(d, B_WCNT, n_items, 0) < 0) {
			return -1;
		}
		if (mdev_need(d, rk, (size_t)cnt * SLOT_BYTES) < 0
				|| mdev_need(d, B_VCNT, (size_t)n_items * 4) < 0)
			return -1;
		if ((err = clEnqueueFillBuffer(d->ocl->queue, d->b[B_VCNT].m, &zero, 4, 0,
						(size_t)n_items * 4, 0, NULL, NULL)) != CL_SUCCESS)
			return sp_fail("OpenCL fill of %u bytes failed: %s", 4 * n_items, ocl_strerror(err));
		d->tm.scan += sp_now() - t0;
		t0 = sp_now();
		ocl_arg(d->k_loc, a++, sizeof cnt, &cnt);
		for (k = B_WOFF; k <= B_WORDS; k++)
			ocl_arg(d->k_loc, a++, sizeof(cl_mem), &d->b[k].m);
		a = part_args(d->k_loc, a, dp, loc_bufs);
		for (k = 0; k < 6; k++)
			ocl_arg(d->k_loc, a++, sizeof v[k], &v[k]);
		ocl_arg(d->k_loc, a++, sizeof f->tsh, &f->tsh);
		ocl_arg(d->k_loc, a++, sizeof lmin, &lmin);
		ocl_arg(d->k_loc, a++, sizeof(cl_mem), &d->b[B_OUT].m);
		ocl_arg(d->k_loc, a++, sizeof p, &p);
		ocl_arg(d->k_loc, a++, sizeof(cl_mem), &d->b[B_WCNT].m);
		ocl_arg(d->k_loc, a++, sizeof(cl_mem), &d->b[rk].m);
		ocl_arg(d->k_loc, a++, sizeof(cl_mem), &d->b[B_VCNT].m);
		if ((err = run_k(d, d->k_loc, cnt)) != CL_SUCCESS)
			return sp_fail("OpenCL kernel mem_loc failed: %s", ocl_strerror(err));
		if (d->host_scan) {
			/* the matches of each window (the blocking read waits for the kernel) */
			if (mdev_get(d, d->b[B_VCNT].m, d->h_cnt, (size_t)n_items * 4) < 0)
				return -1;
			d->tm.loc += sp_now() - t0;
			t0 = sp_now();
			for (j = 0, sum = 0; j < n_items; j++) {
				uint32_t c = d->h_cnt[j];

				d->h_cnt[j] = sum;
				sum += c;
			}
		} else {
			uint32_t tot[2];

			/* each window's first match, and the totals (the blocking read waits for the kernels) */
			if (run_scan(d, B_VCNT, n_items, 1) < 0 || mdev_get(d, d->b[B_TOT].m, tot, 8) < 0)
				return -1;
			if (tot[0] != cnt)
				return sp_fail("internal error: the rows of the windows do not add up");
			sum = tot[1];
			d->tm.loc += sp_now() - t0;
			t0 = sp_now();
		}
		*nout = sum;
		d->res = rk;
		if (sum < cnt && sum) {   /* leave out the records of short matches */
			a = 0;
			if ((d->host_scan && mdev_put(d, B_VCNT, d->h_cnt, (size_t)n_items * 4) < 0)
					|| mdev_need(d, ck, (size_t)sum * SLOT_BYTES) < 0)
				return -1;
			ocl_arg(d->k_compact, a++, sizeof n_items, &n_items);
			ocl_arg(d->k_compact, a++, sizeof cnt, &cnt);
			ocl_arg(d->k_compact, a++, sizeof(cl_mem), &d->b[B_WCNT].m);
			ocl_arg(d->k_compact, a++, sizeof(cl_mem), &d->b[B_VCNT].m);
			ocl_arg(d->k_compact, a++, sizeof(cl_mem), &d->b[rk].m);
			ocl_arg(d->k_compact, a++, sizeof(cl_mem), &d->b[ck].m);
			{
				size_t global = (size_t)n_items * d->compact_wg;

				if ((err = clSetKernelArg(d->k_compact, a++, d->compact_wg * 4, NULL))
						!= CL_SUCCESS || (err = clEnqueueNDRangeKernel(d->ocl->queue,
							d->k_compact, 1, NULL, &global, &d->compact_wg, 0,
							NULL, NULL)) != CL_SUCCESS)
					return sp_fail("OpenCL kernel mem_compact failed: %s",
							ocl_strerror(err));
			}
			d->res = ck;
		}
		if (!d->host_scan && mdev_get(d, d->b[B_VCNT].m, d->h_cnt, (size_t)n_items * 4) < 0)
			return -1;                         /* the windows' first matches */
		for (j = 0; j + 1 < n_items; j++)           /* back to the counts */
			d->h_cnt[j] = d->h_cnt[j + 1] - d->h_cnt[j];
		d->h_cnt[n_items - 1] = sum - d->h_cnt[n_items - 1];
		d->tm.pack += sp_now() - t0;
	} else {
		d->tm.scan += sp_now() - t0;
	}
	return 0;
}

/* Slots for the first run of N_WIN windows: twice as many a window as the batches so far needed. */
static size_t slots_first(const mem_dev_t *d, uint64_t n_win)
{
	double want = n_win * (d->per_win > 0.5 ? 2 * d->per_win : 1);
	double most = (double)(d->ocl->max_alloc / SLOT_BYTES / 2);

	return (size_t)(want < most ? want : most);
}

/* The held download of set K, if any, let go (tests). */
static void let_go(mem_dev_t *d, int k)
{
	cl_event e;

	pthread_mutex_lock(&d->hmu);
	e = d->held[k];
	d->held[k] = NULL;
	pthread_mutex_unlock(&d->hmu);
	if (e) {
		clSetUserEventStatus(e, CL_COMPLETE);
		clReleaseEvent(e);
	}
}

/* The pending download of set K waited for: 0, or -1 after sp_fail. */
static int wait_set(mem_dev_t *d, int k)
{
	cl_event e = d->ev_dl[k];

	d->ev_dl[k] = NULL;
	return mem_dev_wait(d, &e);
}

int mem_dev_wait(mem_dev_t *d, cl_event *done)
{
	cl_int err, st = CL_COMPLETE;
	cl_event e = *done;
	double t0 = sp_now();

	if (!e)
		return 0;
	*done = NULL;
	if (d->hold_ms) {   /* tests: the next batch's kernels have run by now, or there is none */
		struct timespec ts = { d->hold_ms / 1000, (long)(d->hold_ms % 1000) * 1000000L };

		nanosleep(&ts, NULL);
		let_go(d, 0);
		let_go(d, 1);
	}
	err = clWaitForEvents(1, &e);
	if (err == CL_SUCCESS)
		err = clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
	clReleaseEvent(e);
	pthread_mutex_lock(&d->hmu);
	d->tm.wait += sp_now() - t0;
	pthread_mutex_unlock(&d->hmu);
	if (err != CL_SUCCESS || st < 0)
		return sp_fail("OpenCL read of the matches failed: %s",
				ocl_strerror(err != CL_SUCCESS ? err : st));
	return 0;
}

/*
 * The last results of the batch, NOUT records of d->res, down into R
 * without waiting (the device's thread goes on with the next batch's
 * kernels, which fill the other set): *DONE completes with it.
 */
static int get_async(mem_dev_t *d, mem_raw_t *r, size_t nout, cl_event *done)
{
	cl_event mk = NULL, e = NULL, wl[2];
	cl_int err;

	err = clEnqueueMarkerWithWaitList(d->ocl->queue, 0, NULL, &mk);   /* the kernels' end */
	if (err == CL_SUCCESS)
		err = clFlush(d->ocl->queue);
	wl[0] = mk;
	wl[1] = NULL;
	if (err == CL_SUCCESS && d->hold_ms) {   /* tests: held until the next batch's kernels ran */
		wl[1] = clCreateUserEvent(d->ocl->context, &err);
		if (err == CL_SUCCESS) {
			pthread_mutex_lock(&d->hmu);
			d->held[d->set] = wl[1];
			pthread_mutex_unlock(&d->hmu);
		}
	}
	if (err == CL_SUCCESS)
		err = clEnqueueReadBuffer(d->q_dl, d->b[d->res].m, CL_FALSE, 0, nout * SLOT_BYTES, r,
				wl[1] ? 2 : 1, wl, &e);
	if (mk)
		clReleaseEvent(mk);
	if (err != CL_SUCCESS)
		let_go(d, d->set);
	if (err == CL_SUCCESS)
		err = clFlush(d->q_dl);
	if (err != CL_SUCCESS) {
		if (e) {
			clWaitForEvents(1, &e);
			clReleaseEvent(e);
		}
		return sp_fail("OpenCL read of %zu bytes failed: %s", nout * SLOT_BYTES, ocl_strerror(err));
	}
	clRetainEvent(e);
	d->ev_dl[d->set] = e;
	*done = e;
	return 0;
}

/*
 * The matches of windows [W0, W0 + NW) (H[j] of window W0 + j) added to
 * their strands' counts: strand k has windows [WPRE[k], WPRE[k + 1]) of
 * the N_ST strands (the last one's run to the end).
 */
static void win_counts(const uint32_t *wpre, uint64_t n_st, uint64_t w0, uint64_t nw, const uint32_t *h,
		uint64_t *cnt)
{
	uint64_t lo = 0, hi = n_st, j;

	while (hi - lo > 1) {   /* the last strand whose first window is at or before W0 */
		uint64_t mid = lo + (hi - lo) / 2;

		if (wpre[mid] <= w0)
			lo = mid;
		else
			hi = mid;
	}
	for (j = 0; j < nw; j++) {
		while (lo + 1 < n_st && wpre[lo + 1] <= w0 + j)
			lo++;
		cnt[lo] += h[j];
	}
}

int mem_dev_find(mem_dev_t *d, const uint32_t *words, size_t nwords, size_t ns,
		const uint64_t *woff, const uint32_t *len, mem_raw_t **raw, uint64_t **roff, cl_event *done)
{
	const idx_t *x = d->x;
	uint32_t *w32 = sp_malloc((ns + 1) * sizeof *w32), p, pi, np = x->n_part;
	uint32_t *wpre = sp_malloc((ns + 1) * sizeof *wpre);
	uint64_t n_st = 0, n_win = 0, *off = sp_calloc(ns + 1, sizeof *off);
	uint64_t *pcnt = NULL;      /* with several partitions: matches per (partition, strand) */
	size_t *pbeg = NULL;        /* and where each partition's begin */
	mem_raw_t *r = NULL;
	size_t k, nr = 0, cap_r = 0;
	int pin = 0;
	double t0 = sp_now();
	int rc = -1, async = 0;

	*done = NULL;
	d->set ^= 1;                /* this batch's results: the set whose download is the older */
	if (wait_set(d, d->set) < 0)
		goto out;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* one partition: the matches come down as they are, straight into the batch's array */
	async = np == 1 && !d->sync;
#endif

	for (k = 0; k < ns; k++) {
		uint32_t nw = mem_n_windows(d->mi, len[k] & 0x7fffffffu);

		if (woff[k] > UINT32_MAX || n_win + nw > UINT32_MAX) {
			sp_fail("a batch of %zu strands is too large for the OpenCL path (give a smaller -B)",
					ns);
			goto out;
		}
		w32[k] = (uint32_t)woff[k];
		wpre[k] = (uint32_t)n_win;
		n_win += nw;
		if (nw)
			n_st = k + 1;
	}
	if (np > 1) {
		pcnt = sp_calloc((size_t)np * (ns + 1), sizeof *pcnt);
		pbeg = sp_calloc((size_t)np + 1, sizeof *pbeg);
	}
	if (n_win) {
		inpiece_t pc[4] = { { B_WOFF, w32, n_st * 4 }, { B_SLEN, len, n_st * 4 },
			{ B_WORDS, words, nwords * 4 }, { B_WPRE, wpre, n_st * 4 } };
		int pr = mdev_put_all(d, pc, 4);

		if (pr < 0 || (pr > 0 && (mdev_put(d, B_WOFF, w32, n_st * 4) < 0
					|| mdev_put(d, B_SLEN, len, n_st * 4) < 0
					|| mdev_put_big(d, B_WORDS, words, nwords * 4) < 0
					|| mdev_put(d, B_WPRE, wpre, n_st * 4) < 0))
				|| mdev_need(d, B_OUT, slots_first(d, n_win) * SLOT_BYTES) < 0
				|| mdev_need(d, B_CNT, 12) < 0)
			goto out;
	}
	d->tm.in += sp_now() - t0;
	for (pi = 0; pi < np && n_win; pi++) {
		uint64_t w0, chunk = n_win, *cnt;

		/* the partitions back and forth when they take turns: the last one stays up */
		p = !d->resid.all && d->nbatch % 2 ? np - 1 - pi : pi;
		cnt = np > 1 ? pcnt + (size_t)p * (ns + 1) : off + 1;
		t0 = sp_now();
		if (ocl_residency_get(&d->resid, p) < 0) {
			sp_fail("cannot upload index partition %u to the OpenCL device", p);
			goto out;
		}
		d->tm.part += sp_now() - t0;
		if (pbeg)
			pbeg[p] = nr;
		for (w0 = 0; w0 < n_win;) {       /* windows in chunks whose slots fit */
			size_t nout = 0;
			uint64_t nw = chunk < n_win - w0 ? chunk : n_win - w0;
			int prc = run_part(d, p, (uint32_t)n_st, (uint32_t)w0, (uint32_t)nw, &nout);

			if (prc == -2 && nw > 1) {
				chunk = nw / 2;
				continue;
			}
			if (prc == -2)
				sp_fail("the match starts of one window do not fit the OpenCL device");
			if (prc < 0)
				goto out;
			t0 = sp_now();
			win_counts(wpre, n_st, w0, nw, d->h_cnt, cnt);
			w0 += nw;
			if (nr + nout > cap_r)
				raw_grow(d, &r, &cap_r, &pin, nr, nr + nout);
			if (w0 == n_win)    /* this batch's kernels ran: the previous batch's matches may come down */
				let_go(d, d->set ^ 1);
			if (async && pin && w0 == n_win && nout) {    /* the batch's last results */
				if (get_async(d, r + nr, nout, done) < 0)
					goto out;
			} else if ((pin ? mdev_get(d, d->b[d->res].m, r + nr, nout * SLOT_BYTES)
						: mdev_get_big(d, d->b[d->res].m, r + nr, nout * SLOT_BYTES)) < 0) {
				goto out;
			}
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
			for (size_t j = nr; j < nr + nout; j++) {   /* the device's u32 words are little-endian */
				uint32_t *u = (uint32_t *)&r[j], lo = sp_ld32(u + 4), hi = sp_ld32(u + 5);

				r[j].part = sp_ld32(u);
				r[j].i = sp_ld32(u + 1);
				r[j].len = sp_ld32(u + 2);
				r[j].p = sp_ld32(u + 3);
				r[j].tail = lo | (uint64_t)hi << 32;
			}
#endif
			nr += nout;
			d->tm.get += sp_now() - t0;
			d->tm.slots += nout;
		}
	}
	d->nbatch++;
	t0 = sp_now();
	if (np > 1 && nr) {      /* strand by strand, the partitions in turn */
		size_t o = 0, gcap;
		int gpin;
		mem_raw_t *g = host_get(d, nr * sizeof *g, &gpin, &gcap);

		pbeg[np] = nr;
		for (p = 0; p < np; p++) {   /* the partition's strand offsets */
			uint64_t *c = pcnt + (size_t)p * (ns + 1), sum = pbeg[p];

			for (k = 0; k < ns; k++) {
				uint64_t n = c[k];

				c[k] = sum;
				sum += n;
			}
			c[ns] = sum;
		}
		for (k = 0; k < ns; k++) {
			off[k] = o;
			for (p = 0; p < np; p++) {
				const uint64_t *c = pcnt + (size_t)p * (ns + 1);
				size_t n = c[k + 1] - c[k];

				memcpy(g + o, r + c[k], n * sizeof *g);
				o += n;
			}
		}
		off[ns] = o;
		mem_dev_raw_free(d, r);
		r = g;
	} else {
		for (k = 0; k < ns; k++)
			off[k + 1] += off[k];
	}
	if (!r)
		raw_grow(d, &r, &cap_r, &pin, 0, 1);
	d->tm.group += sp_now() - t0;
	d->tm.batches++;
	rc = 0;
out:
	free(w32);
	free(wpre);
	free(pcnt);
	free(pbeg);
	*raw = r;
	if (rc == 0) {
		*roff = off;
	} else {
		free(off);
		*roff = NULL;
	}
	return rc;
}

const mem_dev_time_t *mem_dev_time(const mem_dev_t *d)
{
	return &d->tm;
}
