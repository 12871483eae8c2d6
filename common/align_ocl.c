/*
 * align_ocl.c - align_batch_ocl(): the alignment batch on an OpenCL device
 * (kernels/align.cl).  Reads, windows, pairs, results and ends go to the
 * device whole; the traceback workspace (SP_ALIGN_WS_WORDS per pair, about
 * 3.5 KiB for 100 bp) is what limits a kernel run, so the pairs are run in
 * chunks whose workspace fits in a quarter of the device budget, halved
 * when an allocation fails.  A batch whose reads all have at most 256
 * bases runs the program built with 4-word arrays (-DSP_ALIGN_WORDS=4), one
 * whose reads have at most 1024 bases the 16-word build, others the one
 * for reads of up to ALIGN_MAX_READ.  With SEEDPIPE_DEBUG set (ctx->debug) the
 * phases are timed (with a clFinish after each) and reported on stderr.
 */
#include "align.h"
#include "util.h"

#include <string.h>

#define ALIGN_SHORT_READ 256                  /* reads of up to 4 words ... */
#define ALIGN_SHORT_OPTS "-DSP_ALIGN_WORDS=4"  /* ... use the program built so */
#define ALIGN_MID_READ 1024                   /* and of up to 16 words ... */
#define ALIGN_MID_OPTS "-DSP_ALIGN_WORDS=16"   /* ... this one */

/* A buffer of at least one byte (OpenCL refuses empty ones), written from SRC if given. */
static cl_mem dev_buf(ocl_ctx_t *ctx, cl_mem_flags fl, size_t size, const void *src, cl_int *err)
{
	cl_mem m = ocl_buffer_try(ctx, fl, size ? size : 1, err);

	if (m && src && size && (*err = ocl_write_try(ctx, m, 0, 0, size, src)) != CL_SUCCESS) {
		ocl_release(m);
		m = NULL;
	}
	return m;
}

cl_int align_batch_ocl(ocl_ctx_t *ctx, const uint8_t *reads, size_t reads_len,
		const uint8_t *wins, size_t wins_len, const align_pair_t *pairs, size_t n,
		unsigned max_a, unsigned flags, uint8_t *ends, size_t ends_stride, align_res_t *res,
		char *msg, size_t msg_len)
{
	cl_mem b_reads = NULL, b_wins = NULL, b_pairs = NULL, b_res = NULL, b_ends = NULL, b_ws = NULL;
	cl_int err = CL_SUCCESS;
	cl_program prog = NULL;
	cl_kernel k = NULL;
	size_t i, ws_words = 1, chunk, ends_len;
	uint64_t budget;
	cl_ulong c_base, c_n, c_stride;
	cl_uint c_a = max_a, c_flags = flags;
	double t0 = sp_now(), t_up = 0, t_run = 0;
	unsigned n_runs = 0;
	int short_reads, said = 0;
	uint32_t longest;

	if (align_check(pairs, n, max_a, flags, ends_stride, msg, msg_len) < 0)
		return CL_INVALID_VALUE;
	for (i = 0; i < n; i++) {   /* the device must not read past the buffers */
		uint64_t w_end = pairs[i].win_off + pairs[i].win_len;
		if (flags & ALIGN_PACKED)
			w_end = (w_end + 3) / 4;
		if (pairs[i].read_off + pairs[i].read_len > reads_len || w_end > wins_len) {
			snprintf(msg, msg_len, "pair %zu lies outside the read or window buffer", i);
			return CL_INVALID_VALUE;
		}
	}
	if (n == 0)
		return CL_SUCCESS;
	if ((flags & ALIGN_ENDS) && !ends) {
		snprintf(msg, msg_len, "end positions asked for without a buffer");
		return CL_INVALID_VALUE;
	}
	if (!(flags & (ALIGN_NOCIGAR | ALIGN_NOGAPS)))
		for (i = 0; i < n; i++) {
			size_t w = align_ws_words(pairs[i].win_len, pairs[i].read_len);
			if (w > ws_words)
				ws_words = w;
		}
	for (i = 0, longest = 0; i < n; i++)
		if (pairs[i].read_len > longest)
			longest = pairs[i].read_len;
	short_reads = longest <= ALIGN_SHORT_READ;
	ends_len = (flags & ALIGN_ENDS) ? n * ends_stride : 0;
	if (!(b_reads = dev_buf(ctx, CL_MEM_READ_ONLY, reads_len, reads, &err))
			|| !(b_wins = dev_buf(ctx, CL_MEM_READ_ONLY, wins_len, wins, &err))
			|| !(b_pairs = dev_buf(ctx, CL_MEM_READ_ONLY, n * sizeof *pairs, pairs, &err))
			|| !(b_res = dev_buf(ctx, CL_MEM_WRITE_ONLY, n * sizeof *res, NULL, &err))
			|| !(b_ends = dev_buf(ctx, CL_MEM_WRITE_ONLY, ends_len, NULL, &err)))
		goto out;
	if (ctx->debug) {   /* not ocl_finish, which exits: a pipeline thread runs this */
		if ((err = ocl_finish_try(ctx)) != CL_SUCCESS)
			goto out;
		t_up = sp_now();
	}

	budget = ocl_batch_bytes(ctx, 0.25);
	chunk = budget / (ws_words * sizeof(cl_ulong));
	if (chunk > n)
		chunk = n;
	if (chunk < 1)
		chunk = 1;
	while (!(b_ws = ocl_buffer_try(ctx, CL_MEM_READ_WRITE, chunk * ws_words * sizeof(cl_ulong), &err))) {
		if (chunk == 1)
			goto out;
		chunk /= 2;
	}
	/* reads of up to 4 words: a build with small private arrays (inc_align.h) */
	prog = ocl_program_try(ctx, "align", ocl_source("align"), short_reads ? ALIGN_SHORT_OPTS :
			longest <= ALIGN_MID_READ ? ALIGN_MID_OPTS : "", &err, NULL);
	if (!prog) {
		snprintf(msg, msg_len, "%s", sp_errmsg());
		said = 1;
		goto out;
	}
	if (!(k = ocl_kernel_try(prog, "align", &err)))
		goto out;
	c_stride = ends_stride;
	for (i = 0; i < n; i += chunk) {
		c_base = i;
		c_n = n - i < chunk ? n - i : chunk;
		err = ocl_args_try(k, 11, sizeof b_reads, &b_reads, sizeof b_wins, &b_wins,
				sizeof b_pairs, &b_pairs, sizeof c_base, &c_base, sizeof c_n, &c_n,
				sizeof c_a, &c_a, sizeof c_flags, &c_flags, sizeof b_ws, &b_ws,
				sizeof b_ends, &b_ends, sizeof c_stride, &c_stride, sizeof b_res, &b_res);
		if (err != CL_SUCCESS || (err = ocl_run_try(ctx, k, (size_t)c_n)) != CL_SUCCESS)
			goto out;
		n_runs++;
	}
	if (ctx->debug) {
		if ((err = ocl_finish_try(ctx)) != CL_SUCCESS)
			goto out;
		t_run = sp_now();
	}
	if ((err = ocl_read_try(ctx, b_res, 1, 0, n * sizeof *res, res)) != CL_SUCCESS
			|| (err = ocl_read_try(ctx, b_ends, 1, 0, ends_len, ends)) != CL_SUCCESS)
		goto out;
	if (ctx->debug)
		sp_msg("align: %zu pairs, %u kernel runs of <= %zu; upload %.3f s, workspace and"
				" kernels %.3f s, download %.3f s", n, n_runs, chunk, t_up - t0, t_run - t_up,
				sp_now() - t_run);
out:
	if (err != CL_SUCCESS && !said)
		snprintf(msg, msg_len, "alignment on the device failed: %s", ocl_strerror(err));
	if (k)
		clReleaseKernel(k);
	ocl_release(b_ws);
	ocl_release(b_reads);
	ocl_release(b_wins);
	ocl_release(b_pairs);
	ocl_release(b_res);
	ocl_release(b_ends);
	return err;
}
