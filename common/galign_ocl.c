/*
 * galign_ocl.c - the global alignment on an OpenCL device (galign.h,
 * kernels/galign.cl): the sequences go to the device once; each batch's
 * score pass is queued without waiting (galign_dev_score) and collected
 * later (galign_dev_wait), so that while the device scores batch k+1 the
 * CPU traces and writes batch k.  The buffers of GA_SLOTS batches in flight
 * are made once, sized from the device's memory: each slot's boundary
 * buffer (one byte a target base a work item) takes a share of
 * ocl_mem_budget(), and a batch runs in as many kernel runs as that buffer
 * needs.  Tracebacks (galign_dev_trace) size their runs the same way from
 * each pair's band.
 */
#include "galign.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define GA_SLOTS 8   /* batches in flight at most (the CLI's pipeline keeps fewer) */
#define GA_WG_LEN 8192   /* queries this long get a work group (SEEDPIPE_GALIGN_WG overrides) */
#define GA_LS 128        /* work items a group of the per-pair kernels (SEEDPIPE_GALIGN_LS) */

struct galign_job {
	galign_dev_t *d;
	int slot;
	cl_event ev;
	cl_event k_first, k_last;      /* with SEEDPIPE_DEBUG: the kernels' span */
	uint64_t cells;
	size_t n;
};

struct galign_dev {
	ocl_ctx_t *ctx;
	galign_scores_t sc;
	cl_mem codes;
	size_t codes_len;
	cl_kernel k_score, k_trace, k_wg, k_lin4, k_lin4m;
	cl_uint wg_len;                /* queries of this length or more: ga_score_wg */
	int lin_kind;                  /* linear gaps: 0 ga_score_lin4, SEEDPIPE_GALIGN_KERNEL=1
	                                  ga_score, 2 ga_score_lin4m */
	size_t ls;                     /* local size of the per-pair kernels (0: ocl_run_q's) */
	cl_command_queue q[GA_SLOTS];  /* one in-order queue a slot: batches overlap */
	cl_ulong t_first, t_last;      /* SEEDPIPE_DEBUG: span of every score kernel */
	uint64_t cells_all;
	size_t batch;                  /* pairs a slot holds */
	size_t bnd_bytes;              /* a slot's boundary buffer */
	cl_mem s_pairs[GA_SLOTS], s_scores[GA_SLOTS], s_bnd[GA_SLOTS], s_widx[GA_SLOTS];
	uint32_t *widx[GA_SLOTS];      /* host side of the long pairs' lists */
	int busy[GA_SLOTS];
	galign_job_t jobs[GA_SLOTS];
	pthread_mutex_t mu;
};

static void ga_sc(const galign_scores_t *sc, cl_int *ma, cl_int *mi, cl_int *g)
{
	*ma = sc->edit ? 0 : sc->match;
	*mi = sc->edit ? -1 : sc->mismatch;
	*g = sc->edit ? -1 : sc->gap;
}

galign_dev_t *galign_dev_new(ocl_ctx_t *ctx, const uint8_t *codes, size_t len,
		const galign_scores_t *sc, size_t batch)
{
	galign_dev_t *d = sp_calloc(1, sizeof *d);
	cl_program prog;
	cl_int err = CL_SUCCESS;
	uint64_t budget = ocl_mem_budget(ctx, 0.5);
	int i;

	d->ctx = ctx;
	d->sc = *sc;
	d->codes_len = len;
	d->batch = batch ? batch : 1;
	pthread_mutex_init(&d->mu, NULL);
	if (len + 1 > budget / 2 || !(d->codes = ocl_buffer_try(ctx, CL_MEM_READ_ONLY, len + 1, &err))) {
		galign_dev_free(d);
		sp_fail("the sequences (%zu bases) do not fit the device's memory (%s)", len,
				ocl_strerror(err));
		return NULL;
	}
	if (len)
		ocl_write(ctx, d->codes, 1, 0, len, codes);
	prog = ocl_program(ctx, "galign", NULL);
	d->k_score = ocl_kernel(prog, "ga_score");
	d->k_trace = ocl_kernel(prog, "ga_trace");
	d->k_wg = ocl_kernel(prog, "ga_score_wg");
	d->k_lin4 = ocl_kernel(prog, "ga_score_lin4");
	d->k_lin4m = ocl_kernel(prog, "ga_score_lin4m");
	d->wg_len = GA_WG_LEN;
	if (getenv("SEEDPIPE_GALIGN_WG") && *getenv("SEEDPIPE_GALIGN_WG"))
		d->wg_len = (cl_uint)strtoul(getenv("SEEDPIPE_GALIGN_WG"), NULL, 10);
	if (getenv("SEEDPIPE_GALIGN_KERNEL"))
		d->lin_kind = atoi(getenv("SEEDPIPE_GALIGN_KERNEL"));
	d->ls = GA_LS;
	if (getenv("SEEDPIPE_GALIGN_LS") && *getenv("SEEDPIPE_GALIGN_LS"))
		d->ls = (size_t)strtoul(getenv("SEEDPIPE_GALIGN_LS"), NULL, 10);
	{
		/* the group size must suit both per-pair kernels and the device */
		size_t kwg[3] = { 0, 0, 0 };
		cl_ulong priv[3] = { 0, 0, 0 };
		cl_kernel ks[3] = { d->k_score, d->k_lin4, d->k_lin4m };

		for (i = 0; i < 3; i++) {
			clGetKernelWorkGroupInfo(ks[i], ctx->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg[i],
					&kwg[i], NULL);
			clGetKernelWorkGroupInfo(ks[i], ctx->device, CL_KERNEL_PRIVATE_MEM_SIZE,
					sizeof priv[i], &priv[i], NULL);
			if (kwg[i] && d->ls > kwg[i])
				d->ls = 0;
		}
		if (d->ls > ctx->max_wg)
			d->ls = 0;
		if (ctx->debug)
			sp_msg("galign: ga_score: %zu items a group at most, %lu bytes private; "
					"ga_score_lin4: %zu, %lu bytes; ga_score_lin4m: %zu, %lu bytes; groups of %zu "
					"(0: the driver's); linear kernel %d", kwg[0], (unsigned long)priv[0], kwg[1],
					(unsigned long)priv[1], kwg[2], (unsigned long)priv[2], d->ls, d->lin_kind);
	}
	for (i = 0; i < GA_SLOTS; i++) {
		if (!(d->q[i] = ocl_slot_queue(ctx, i ? d->q[0] : NULL, ctx->flags & OCL_PROFILE, &err)))
			sp_die("clCreateCommandQueue failed: %s (%d)", ocl_strerror(err), (int)err);
		d->widx[i] = sp_malloc(d->batch * sizeof *d->widx[i]);
	}
	budget = (budget - len) / 2;
	d->bnd_bytes = budget / GA_SLOTS;
	if (d->bnd_bytes > ctx->max_alloc)
		d->bnd_bytes = ctx->max_alloc;
	/* a whole batch of targets of up to 2048 bases in one kernel run is enough */
	if (d->bnd_bytes / 2048 > d->batch)
		d->bnd_bytes = d->batch * 2048 > ((size_t)1 << 20) ? d->batch * 2048 : (size_t)1 << 20;
	for (i = 0; i < GA_SLOTS; i++) {
		while (!(d->s_bnd[i] = ocl_buffer_try(ctx, CL_MEM_READ_WRITE, d->bnd_bytes, &err))
				&& d->bnd_bytes > ((size_t)1 << 20))
			d->bnd_bytes /= 2;
		if (!d->s_bnd[i]
				|| !(d->s_pairs[i] = ocl_buffer_try(ctx, CL_MEM_READ_ONLY,
						d->batch * sizeof(galign_pair_t), &err))
				|| !(d->s_scores[i] = ocl_buffer_try(ctx, CL_MEM_WRITE_ONLY,
						d->batch * sizeof(int32_t), &err))
				|| !(d->s_widx[i] = ocl_buffer_try(ctx, CL_MEM_READ_ONLY,
						d->batch * sizeof(uint32_t), &err))) {
			galign_dev_free(d);
			sp_fail("cannot make the device buffers for batches of %zu pairs (%s)", batch,
					ocl_strerror(err));
			return NULL;
		}
	}
	return d;
}

void galign_dev_free(galign_dev_t *d)
{
	int i;

	if (!d)
		return;
	for (i = 0; i < GA_SLOTS; i++) {
		ocl_release(d->s_pairs[i]);
		ocl_release(d->s_scores[i]);
		ocl_release(d->s_bnd[i]);
		ocl_release(d->s_widx[i]);
		free(d->widx[i]);
		if (d->q[i])
			clReleaseCommandQueue(d->q[i]);
	}
	if (d->cells_all && d->t_last > d->t_first)
		sp_msg("galign: score passes on the device: %.3g cells, %.3f s from the first kernel's "
				"start to the last one's end, %.1f GCUPS", (double)d->cells_all,
				(double)(d->t_last - d->t_first) * 1e-9,
				(double)d->cells_all / (double)(d->t_last - d->t_first));
	ocl_release(d->codes);
	if (d->k_score)
		clReleaseKernel(d->k_score);
	if (d->k_trace)
		clReleaseKernel(d->k_trace);
	if (d->k_wg)
		clReleaseKernel(d->k_wg);
	if (d->k_lin4)
		clReleaseKernel(d->k_lin4);
	if (d->k_lin4m)
		clReleaseKernel(d->k_lin4m);
	pthread_mutex_destroy(&d->mu);
	free(d);
}

/*
 * The pairs of the batch in slot S whose query has wg_len bases or more:
 * one work group each (ga_score_wg), as many groups a run as the slot's
 * boundary buffer holds rows of their longest target.
 */
static cl_int score_wg(galign_dev_t *d, int s, const galign_pair_t *pairs, size_t n)
{
	ocl_ctx_t *ctx = d->ctx;
	size_t i, nw = 0, maxn = 1, maxm = 0, chunk, kwg = 0, ls;
	cl_int err, ma, mi, g, edit = d->sc.edit;
	cl_ulong base, bstride;

	for (i = 0; i < n; i++)
		if (pairs[i].q_len >= d->wg_len) {
			d->widx[s][nw++] = (uint32_t)i;
			if (pairs[i].t_len > maxn)
				maxn = pairs[i].t_len;
			if (pairs[i].q_len > maxm)
				maxm = pairs[i].q_len;
		}
	if (nw == 0)
		return CL_SUCCESS;
	ga_sc(&d->sc, &ma, &mi, &g);
	err = clGetKernelWorkGroupInfo(d->k_wg, ctx->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg,
			&kwg, NULL);
	if (err != CL_SUCCESS)
		return err;
	ls = (maxm + (edit ? 63 : SP_GA_SLICE - 1)) / (edit ? 64 : SP_GA_SLICE);
	if (ls > kwg)
		ls = kwg;
	if (ls > ctx->max_wg)
		ls = ctx->max_wg;
	if (ls > 256)
		ls = 256;
	if (ls < 1)
		ls = 1;
	err = clEnqueueWriteBuffer(d->q[s], d->s_widx[s], CL_FALSE, 0, nw * sizeof *d->widx[s],
			d->widx[s], 0, NULL, NULL);
	if (err != CL_SUCCESS)
		return err;
	chunk = d->bnd_bytes / maxn;
	if (chunk < 1)
		chunk = 1;
	bstride = maxn;
	for (i = 0; i < nw && err == CL_SUCCESS; i += chunk) {
		size_t cn = nw - i < chunk ? nw - i : chunk, global = cn * ls;

		base = i;
		err = ocl_args_try(d->k_wg, 13, sizeof d->codes, &d->codes, sizeof d->s_pairs[s],
				&d->s_pairs[s], sizeof d->s_widx[s], &d->s_widx[s], sizeof base, &base,
				sizeof edit, &edit, sizeof ma, &ma, sizeof mi, &mi, sizeof g, &g,
				sizeof d->s_bnd[s], &d->s_bnd[s], sizeof bstride, &bstride,
				sizeof d->s_scores[s], &d->s_scores[s], 2 * ls * sizeof(cl_uint), NULL,
				ls * sizeof(cl_long), NULL);
		if (err != CL_SUCCESS)
			break;
		err = clEnqueueNDRangeKernel(d->q[s], d->k_wg, 1, NULL, &global, &ls, 0, NULL, NULL);
	}
	return err;
}

galign_job_t *galign_dev_score(galign_dev_t *d, const galign_pair_t *pairs, size_t n,
		int32_t *scores)
{
	ocl_ctx_t *ctx = d->ctx;
	galign_job_t *job;
	cl_int ma, mi, g, edit = d->sc.edit, err = CL_SUCCESS;
	cl_ulong base, cn;
	size_t i, maxt = 1, chunk;
	int s, lin4, timed = ctx->debug && (ctx->flags & OCL_PROFILE);
	cl_event kev = NULL;

	if (n > d->batch) {
		sp_fail("a batch of %zu pairs is larger than the device buffers (%zu)", n, d->batch);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		if (pairs[i].q_off + pairs[i].q_len > d->codes_len
				|| pairs[i].t_off + pairs[i].t_len > d->codes_len) {
			sp_fail("pair %zu lies outside the sequences", i);
			return NULL;
		}
		if (pairs[i].t_len > maxt)
			maxt = pairs[i].t_len;
	}
	pthread_mutex_lock(&d->mu);
	for (s = 0; s < GA_SLOTS && d->busy[s]; s++)
		;
	if (s == GA_SLOTS) {
		pthread_mutex_unlock(&d->mu);
		sp_fail("more than %d batches in flight on the device", GA_SLOTS);
		return NULL;
	}
	d->busy[s] = 1;
	job = &d->jobs[s];
	job->d = d;
	job->slot = s;
	job->ev = NULL;
	job->k_first = job->k_last = NULL;
	job->n = n;
	job->cells = 0;
	if (timed)
		for (i = 0; i < n; i++)
			job->cells += (uint64_t)pairs[i].q_len * pairs[i].t_len;
	ga_sc(&d->sc, &ma, &mi, &g);
	lin4 = !edit && d->lin_kind != 1;
	/* ga_score_lin4's boundary row is whole words of 4 columns */
	chunk = d->bnd_bytes / (lin4 ? (maxt + 3) / 4 * 4 : maxt);
	if (chunk > n)
		chunk = n;
	if (chunk < 1)
		chunk = 1;
	if (n) {
		cl_kernel k = !lin4 ? d->k_score : d->lin_kind == 2 ? d->k_lin4m : d->k_lin4;
		cl_command_queue q = d->q[s];

		err = clEnqueueWriteBuffer(q, d->s_pairs[s], CL_FALSE, 0, n * sizeof *pairs, pairs, 0,
				NULL, NULL);
		for (i = 0; i < n && err == CL_SUCCESS; i += chunk) {
			cl_uint a = 0;

			base = i;
			cn = n - i < chunk ? n - i : chunk;
			ocl_arg(k, a++, sizeof d->codes, &d->codes);
			ocl_arg(k, a++, sizeof d->s_pairs[s], &d->s_pairs[s]);
			ocl_arg(k, a++, sizeof base, &base);
			ocl_arg(k, a++, sizeof cn, &cn);
			if (!lin4)
				ocl_arg(k, a++, sizeof edit, &edit);
			ocl_arg(k, a++, sizeof ma, &ma);
			ocl_arg(k, a++, sizeof mi, &mi);
			ocl_arg(k, a++, sizeof g, &g);
			ocl_arg(k, a++, sizeof d->s_bnd[s], &d->s_bnd[s]);
			ocl_arg(k, a++, sizeof d->s_scores[s], &d->s_scores[s]);
			ocl_arg(k, a++, sizeof d->wg_len, &d->wg_len);
			if (d->ls) {
				size_t local = d->ls, global = ((size_t)cn + local - 1) / local * local;

				err = clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL,
						timed ? &kev : NULL);
			} else {
				err = ocl_run_q(ctx, q, k, (size_t)cn, timed ? &kev : NULL);
			}
			if (kev) {
				if (!job->k_first)
					job->k_first = kev;
				else if (job->k_last)
					clReleaseEvent(job->k_last);
				if (kev != job->k_first)
					job->k_last = kev;
				kev = NULL;
			}
		}
		if (err == CL_SUCCESS)
			err = score_wg(d, s, pairs, n);
		if (err == CL_SUCCESS)
			err = clEnqueueReadBuffer(q, d->s_scores[s], CL_FALSE, 0, n * sizeof *scores,
					scores, 0, NULL, &job->ev);
		if (err == CL_SUCCESS)
			err = clFlush(q);
	}
	pthread_mutex_unlock(&d->mu);
	if (err != CL_SUCCESS) {
		sp_fail("the score pass on the device failed: %s", ocl_strerror(err));
		galign_dev_wait(job);
		return NULL;
	}
	return job;
}

int galign_dev_wait(galign_job_t *job)
{
	galign_dev_t *d = job->d;
	cl_int err = CL_SUCCESS;

	if (job->ev) {
		err = clWaitForEvents(1, &job->ev);
		clReleaseEvent(job->ev);
		job->ev = NULL;
	}
	if (job->k_first) {   /* SEEDPIPE_DEBUG: the work-item kernels' own time */
		cl_ulong t0 = 0, t1 = 0;
		cl_event last = job->k_last ? job->k_last : job->k_first;

		if (err == CL_SUCCESS
				&& clGetEventProfilingInfo(job->k_first, CL_PROFILING_COMMAND_START, sizeof t0, &t0,
					NULL) == CL_SUCCESS
				&& clGetEventProfilingInfo(last, CL_PROFILING_COMMAND_END, sizeof t1, &t1,
					NULL) == CL_SUCCESS && t1 > t0)
			sp_msg("galign: score pass of %zu pairs (%.3g cells) on the device: %.3f s in the "
					"kernels, %.1f GCUPS", job->n, (double)job->cells, (double)(t1 - t0) * 1e-9,
					(double)job->cells / (double)(t1 - t0));
		if (err == CL_SUCCESS && t1 > t0) {
			pthread_mutex_lock(&d->mu);
			if (!d->cells_all || t0 < d->t_first)
				d->t_first = t0;
			if (t1 > d->t_last)
				d->t_last = t1;
			d->cells_all += job->cells;
			pthread_mutex_unlock(&d->mu);
		}
		clReleaseEvent(job->k_first);
		if (job->k_last)
			clReleaseEvent(job->k_last);
		job->k_first = job->k_last = NULL;
	}
	pthread_mutex_lock(&d->mu);
	d->busy[job->slot] = 0;
	pthread_mutex_unlock(&d->mu);
	if (err != CL_SUCCESS)
		return sp_fail("the score pass on the device failed: %s", ocl_strerror(err));
	return 0;
}

/* one kernel run of the traceback: pairs [base, base + cn) with work offsets WO */
static cl_int trace_run(galign_dev_t *d, cl_mem b_pairs, cl_mem b_scores, cl_mem b_ro,
		cl_mem b_runs, cl_mem b_res, size_t base, size_t cn, const uint64_t *wo, uint64_t words)
{
	ocl_ctx_t *ctx = d->ctx;
	cl_mem b_wo = NULL, b_work = NULL;
	cl_int err = CL_SUCCESS, ma, mi, g;
	cl_ulong cb = base, cnn = cn;

	ga_sc(&d->sc, &ma, &mi, &g);
	if (!(b_wo = ocl_buffer_try(ctx, CL_MEM_READ_ONLY, cn * 8, &err))
			|| !(b_work = ocl_buffer_try(ctx, CL_MEM_READ_WRITE, (size_t)words * 4 + 4, &err)))
		goto out;
	ocl_write(ctx, b_wo, 1, 0, cn * 8, wo);
	if ((err = ocl_args_try(d->k_trace, 13, sizeof d->codes, &d->codes, sizeof b_pairs, &b_pairs,
			sizeof b_scores, &b_scores, sizeof cb, &cb, sizeof cnn, &cnn, sizeof ma, &ma,
			sizeof mi, &mi, sizeof g, &g, sizeof b_wo, &b_wo, sizeof b_work, &b_work,
			sizeof b_ro, &b_ro, sizeof b_runs, &b_runs, sizeof b_res, &b_res)) != CL_SUCCESS)
		goto out;
	if ((err = ocl_run_q(ctx, NULL, d->k_trace, cn, NULL)) == CL_SUCCESS)
		err = ocl_finish_try(ctx);
out:
	ocl_release(b_wo);
	ocl_release(b_work);
	return err;
}

int galign_dev_trace(galign_dev_t *d, const galign_pair_t *pairs, const uint32_t *idx, size_t n,
		const int32_t *scores, galign_res_t *res, uint32_t *runs, const uint64_t *off)
{
	ocl_ctx_t *ctx = d->ctx;
	galign_pair_t *ps;
	int32_t *ss;
	uint64_t *ro, *wo, budget, words = 0, nruns;
	cl_mem b_pairs = NULL, b_scores = NULL, b_ro = NULL, b_runs = NULL, b_res = NULL;
	cl_int err = CL_SUCCESS, ma, mi, g;
	size_t k, start;
	int rc = 0;

	if (n == 0)
		return 0;
	ga_sc(&d->sc, &ma, &mi, &g);
	ps = sp_malloc(n * sizeof *ps);
	ss = sp_malloc(n * sizeof *ss);
	ro = sp_malloc((n + 1) * sizeof *ro);
	wo = sp_malloc(n * sizeof *wo);
	for (k = 0; k < n; k++) {
		ps[k] = pairs[idx ? idx[k] : k];
		ss[k] = scores[idx ? idx[k] : k];
		ro[k] = off[k] - off[0];
	}
	ro[n] = off[n] - off[0];
	nruns = ro[n];
	budget = ocl_batch_bytes(ctx, 0.25);
	pthread_mutex_lock(&d->mu);
	if (!(b_pairs = ocl_buffer_try(ctx, CL_MEM_READ_ONLY, n * sizeof *ps, &err))
			|| !(b_scores = ocl_buffer_try(ctx, CL_MEM_READ_ONLY, n * sizeof *ss, &err))
			|| !(b_ro = ocl_buffer_try(ctx, CL_MEM_READ_ONLY, (n + 1) * sizeof *ro, &err))
			|| !(b_runs = ocl_buffer_try(ctx, CL_MEM_WRITE_ONLY, (size_t)nruns * 4 + 4, &err))
			|| !(b_res = ocl_buffer_try(ctx, CL_MEM_WRITE_ONLY, n * sizeof *res, &err)))
		goto out;
	ocl_write(ctx, b_pairs, 1, 0, n * sizeof *ps, ps);
	ocl_write(ctx, b_scores, 1, 0, n * sizeof *ss, ss);
	ocl_write(ctx, b_ro, 1, 0, (n + 1) * sizeof *ro, ro);
	/* runs of pairs whose rows and bits fit the budget together */
	for (start = 0, k = 0; k <= n; k++) {
		uint64_t need = 0;
		int dlo;
		uint32_t w = 0;

		if (k < n) {
			sp_ga_band(ps[k].q_len, ps[k].t_len, ma, g, ss[k], &dlo, &w);
			need = w + sp_ga_bits_words(ps[k].q_len, w);
		}
		if (k > start && (k == n || (words + need) * 4 > budget)) {
			if ((err = trace_run(d, b_pairs, b_scores, b_ro, b_runs, b_res, start, k - start,
							wo + start, words)) != CL_SUCCESS)
				goto out;
			start = k;
			words = 0;
		}
		if (k < n) {
			wo[k] = words;
			words += need;
		}
	}
	ocl_read(ctx, b_res, 1, 0, n * sizeof *res, res);
	if (nruns)
		ocl_read(ctx, b_runs, 1, 0, (size_t)nruns * 4, runs + off[0]);
	for (k = 0; k < n && rc == 0; k++)
		if (res[k].status != SP_GA_OK)
			rc = sp_fail("the traceback on the device failed (status %d) for a pair of %u and %u "
					"bases with score %d", res[k].status, ps[k].q_len, ps[k].t_len, ss[k]);
out:
	pthread_mutex_unlock(&d->mu);
	if (err != CL_SUCCESS)
		rc = sp_fail("the traceback on the device failed: %s", ocl_strerror(err));
	ocl_release(b_pairs);
	ocl_release(b_scores);
	ocl_release(b_ro);
	ocl_release(b_runs);
	ocl_release(b_res);
	free(ps);
	free(ss);
	free(ro);
	free(wo);
	return rc;
}
