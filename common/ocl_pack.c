/*
 * ocl_pack.c - the host side of the pack kernels (kernels/pack.cl):
 * seqio_pack2 and seqio_revcomp on the device, in batches that shrink when
 * the device cannot hold them.
 */
#include "ocl.h"
#include "ocl_priv.h"

/* Errors that mean "too big for the device now": try a smaller batch. */
static int too_big(cl_int err)
{
	return err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES
		|| err == CL_OUT_OF_HOST_MEMORY || err == CL_INVALID_BUFFER_SIZE;
}

#define OCL_MIN_BATCH 256 /* bases; smaller batches are not worth splitting */

/*
 * Run kernel KNAME of "pack" over SRC[0..n) in batches.  pack2 (PACK = 1):
 * batch [a, a+c) of the bases (a, c multiples of 4 but for the last) gives
 * DST[a/4 .. (a+c+3)/4).  revcomp: it gives DST[n-a-c .. n-a).  A batch
 * the device cannot hold is halved and run again.
 */
static cl_int run_batched(ocl_ctx_t *ctx, const char *kname, int pack, uint8_t *dst,
		const char *src, size_t n)
{
	cl_program prog;
	cl_kernel k;
	cl_mem in = NULL, out = NULL;
	uint64_t budget;
	size_t batch, cap = 0, a = 0;
	cl_int err = CL_SUCCESS;

	if (n == 0)
		return CL_SUCCESS;
	if (!(prog = ocl_program_try(ctx, "pack", ocl_source("pack"), NULL, &err, NULL)))
		return err;
	k = clCreateKernel(prog, kname, &err);
	if (!k || err != CL_SUCCESS)
		return err != CL_SUCCESS ? err : CL_INVALID_KERNEL;
	/* the input and the output of one batch share the budget */
	budget = ocl_batch_bytes(ctx, 0.5);
	budget = pack ? budget / 5 * 4 : budget / 2;
	batch = budget < n ? (size_t)budget : n;
	if (batch < OCL_MIN_BATCH)
		batch = n < OCL_MIN_BATCH ? n : OCL_MIN_BATCH;
	if (pack && batch < n)
		batch &= ~(size_t)3;
	while (a < n) {
		size_t c = n - a < batch ? n - a : batch;
		size_t out_len = pack ? (c + 3) / 4 : c;
		cl_ulong cn = c;

		if (!in || c > cap) {
			ocl_release(in);
			ocl_release(out);
			out = NULL;
			in = ocl_buffer_try(ctx, CL_MEM_READ_ONLY, c, &err);
			if (in)
				out = ocl_buffer_try(ctx, CL_MEM_WRITE_ONLY, pack ? (c + 3) / 4 : c, &err);
			cap = c;
		}
		if (in && out) {
			err = clEnqueueWriteBuffer(ctx->queue, in, CL_FALSE, 0, c, src + a, 0, NULL, NULL);
			if (err == CL_SUCCESS)
				err = clSetKernelArg(k, 0, sizeof out, &out);
			if (err == CL_SUCCESS)
				err = clSetKernelArg(k, 1, sizeof in, &in);
			if (err == CL_SUCCESS)
				err = clSetKernelArg(k, 2, sizeof cn, &cn);
			if (err == CL_SUCCESS)
				err = ocl_run_try(ctx, k, pack ? (c + 3) / 4 : c);
			if (err == CL_SUCCESS)
				err = clEnqueueReadBuffer(ctx->queue, out, CL_TRUE, 0, out_len,
						pack ? dst + a / 4 : dst + (n - a - c), 0, NULL, NULL);
		}
		if (err != CL_SUCCESS) {
			clFinish(ctx->queue);
			if (!too_big(err) || batch <= OCL_MIN_BATCH)
				break;
			/* split: the same batch again, half as large */
			ocl_debug("%s: %s for a batch of %zu bytes; halving it", kname,
					ocl_strerror(err), batch);
			batch = pack ? (batch / 2) & ~(size_t)3 : batch / 2;
			ocl_release(in);
			ocl_release(out);
			in = out = NULL;
			err = CL_SUCCESS;
			continue;
		}
		a += c;
	}
	ocl_release(in);
	ocl_release(out);
	clReleaseKernel(k);
	return err;
}

cl_int ocl_pack2(ocl_ctx_t *ctx, uint8_t *dst, const char *seq, size_t n)
{
	return run_batched(ctx, "pack2", 1, dst, seq, n);
}

cl_int ocl_revcomp(ocl_ctx_t *ctx, char *dst, const char *src, size_t n)
{
	return run_batched(ctx, "revcomp", 0, (uint8_t *)dst, src, n);
}
