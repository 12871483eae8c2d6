/*
 * align_keys.c - the candidate keys of extend's device cut decoded on the
 * device (kernels align_keys and align_keys_wg in kernels/align.cl): a
 * group's lists go up as the stream holds them (about 4 bytes a candidate
 * against a key's 8), from page-locked memory; one work item decodes and
 * checks a short list, a work-group a long one; the reads they flag (a
 * malformed list, a candidate outside the index or the reference, a strand
 * out of order) come back by index and the host decodes them (the host's
 * message, its sort), writing their keys where the kernel would have.
 */
#include "align_keys.h"
#include "util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define KEY_POS 0xffffffffffull   /* a key's global position */

int align_keys_check(const uint64_t *keys, size_t n, size_t first, uint32_t n_seq,
		uint64_t ref_len, char *msg, size_t msg_len)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((keys[i] >> 40 & 0x7fffff) >= n_seq || (keys[i] & KEY_POS) / 4 >= ref_len) {
			snprintf(msg, msg_len, "candidate %zu lies outside the reference", first + i);
			return -1;
		}
	return 0;
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The reads of K's group that the kernel flagged (NF), in order, decoded by LS->HOST. */
static cl_int host_keys(const align_keys_dev_t *k, const align_dlists_t *ls,
		const uint32_t *coff, size_t r0, uint32_t nf, uint64_t *st, char *msg, size_t msg_len)
{
	uint32_t *fl = sp_malloc(nf * sizeof *fl);
	uint64_t *keys = NULL;
	size_t cap = 0, i;
	cl_int err = clEnqueueReadBuffer(k->q, k->flag, CL_TRUE, 0, nf * sizeof *fl, fl, 0, NULL,
			NULL);

	qsort(fl, nf, sizeof *fl, u32_cmp);
	for (i = 0; i < nf && err == CL_SUCCESS; i++) {
		size_t r = r0 + fl[i], n = coff[r + 1] - coff[r];
		if (n > cap) {
			cap = n;
			keys = sp_realloc(keys, cap * sizeof *keys);
		}
		if (ls->host(ls->ctx, r, keys, msg, msg_len) < 0
				|| align_keys_check(keys, n, coff[r], k->n_seq, k->ref_len, msg, msg_len) < 0)
			err = ALIGN_KEYS_FAILED;
		else if (n)
			err = clEnqueueWriteBuffer(k->q, k->keys, CL_TRUE, (coff[r] - coff[r0]) * 8,
					n * 8, keys, 0, NULL, NULL);
		st[0] += n * 8;
	}
	free(fl);
	free(keys);
	return err;
}

void align_keys_size(const ocl_ctx_t *ctx, cl_kernel k, cl_kernel k2, size_t *sz)
{
	const char *e = getenv("SEEDPIPE_ALIGN_KEYS_WG"), *l = getenv("SEEDPIPE_ALIGN_KEYS_LONG");
	size_t g = 0, g2 = 0;

	if (clGetKernelWorkGroupInfo(k, ctx->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof g, &g, NULL)
			!= CL_SUCCESS || clGetKernelWorkGroupInfo(k2, ctx->device,
				CL_KERNEL_WORK_GROUP_SIZE, sizeof g2, &g2, NULL) != CL_SUCCESS)
		g = 0;
	g = g < g2 ? g : g2;
	g = g < ctx->max_wg ? g : ctx->max_wg;
	g = g < ALIGN_KEYS_WG ? g : ALIGN_KEYS_WG;
	if (e && atol(e) > 0 && (size_t)atol(e) < g)
		g = (size_t)atol(e);
	sz[0] = g >= 4 ? g : 1;
	sz[1] = l && *l ? (size_t)strtoull(l, NULL, 10) : ALIGN_KEYS_LONG;
}

uint64_t align_keys_span(const align_dlists_t *ls, size_t r0, size_t nr, uint64_t *lo)
{
	*lo = nr ? ls->loff[2 * r0] : 0;
	return nr ? ls->loff[2 * (r0 + nr) - 1] - *lo : 0;
}

cl_int align_keys_run(const align_keys_dev_t *k, const align_dlists_t *ls,
		const uint32_t *coff, size_t r0, size_t nr, uint64_t *st, char *msg, size_t msg_len)
{
	static const cl_uint zero[8] = { 0, 0, 0, 0, 0, 0, 0, 0 };
	uint64_t lo, hi, ref_bases = k->ref_len * 4;
	uint32_t *off = k->stage + nr + 1, *rix = off + 2 * nr;
	uint8_t *lb = (uint8_t *)(rix + nr);
	cl_uint c_first = 0, c_ns = 0, c_nl = 0, cnt[8];
	size_t i, global;
	cl_int err;

	hi = align_keys_span(ls, r0, nr, &lo) + lo;
	if (hi - lo > UINT32_MAX / 2 || nr > UINT32_MAX / 2) {
		snprintf(msg, msg_len, "a batch beyond the device's limits (%" PRIu64 " bytes of "
				"candidate lists)", hi - lo);
		return ALIGN_KEYS_FAILED;
	}
	/* the reads binned: short lists from RIX[0] on, long ones from the end back */
	for (i = 0; i < nr; i++) {
		uint64_t b = ls->loff[2 * (r0 + i)], e = ls->loff[2 * (r0 + i) + 1];
		off[2 * i] = (uint32_t)(b - lo);
		off[2 * i + 1] = (uint32_t)(e - lo);
		if (k->wg >= 4 && e - b > k->long_min)
			rix[nr - ++c_nl] = (uint32_t)i;
		else
			rix[c_ns++] = (uint32_t)i;
	}
	memcpy(lb, ls->list + lo, hi - lo);
	if ((hi > lo && (err = clEnqueueWriteBuffer(k->q, k->list, CL_FALSE, 0, hi - lo, lb, 0, NULL,
						NULL)))
			|| (err = clEnqueueWriteBuffer(k->q, k->loff, CL_FALSE, 0, nr * 8, off, 0, NULL,
					NULL))
			|| (err = clEnqueueWriteBuffer(k->q, k->rix, CL_FALSE, 0, nr * 4, rix, 0, NULL,
					NULL))
			|| (err = clEnqueueWriteBuffer(k->q, k->cnt, CL_FALSE, 0, sizeof zero, zero, 0,
					NULL, NULL)))
		return err;
	if (c_ns && ((err = ocl_args_try(k->k, 15, sizeof(cl_mem), &k->list, sizeof(cl_mem),
						&k->loff, sizeof(cl_mem), &k->coff, sizeof(cl_mem), &k->rix,
						sizeof c_first, &c_first, sizeof c_ns, &c_ns, sizeof(cl_mem), &k->pb,
						sizeof k->n_part, &k->n_part, sizeof(cl_mem), &k->sb,
						sizeof(cl_mem), &k->se, sizeof k->n_seq, &k->n_seq,
						sizeof ref_bases, &ref_bases, sizeof(cl_mem), &k->keys,
						sizeof(cl_mem), &k->flag, sizeof(cl_mem), &k->cnt))
				|| (err = ocl_run_q(k->ctx, k->q, k->k, c_ns, k->ev[0]))))
		return err;
	global = (size_t)c_nl * k->wg;
	if (c_nl && ((err = ocl_args_try(k->k_wg, 15, sizeof(cl_mem), &k->list, sizeof(cl_mem),
						&k->loff, sizeof(cl_mem), &k->coff, sizeof(cl_mem), &k->rix,
						sizeof c_ns, &c_ns, sizeof c_nl, &c_nl, sizeof(cl_mem), &k->pb,
						sizeof k->n_part, &k->n_part, sizeof(cl_mem), &k->sb,
						sizeof(cl_mem), &k->se, sizeof k->n_seq, &k->n_seq,
						sizeof ref_bases, &ref_bases, sizeof(cl_mem), &k->keys,
						sizeof(cl_mem), &k->fix, 80 * k->wg + 52, NULL))
				|| (err = clEnqueueNDRangeKernel(k->q, k->k_wg, 1, NULL, &global, &k->wg, 0,
						NULL, k->ev[1]))
				|| (err = ocl_args_try(k->k_fix, 9, sizeof(cl_mem), &k->coff, sizeof(cl_mem),
						&k->rix, sizeof c_ns, &c_ns, sizeof c_nl, &c_nl, sizeof(cl_mem),
						&k->fix, sizeof(cl_mem), &k->keys, sizeof(cl_mem), &k->flag,
						sizeof(cl_mem), &k->cnt, (size_t)4, NULL))
				|| (err = clEnqueueNDRangeKernel(k->q, k->k_fix, 1, NULL, &global, &k->wg, 0,
						NULL, k->ev[2]))))
		return err;
	if ((err = clEnqueueReadBuffer(k->q, k->cnt, CL_TRUE, 0, sizeof cnt, cnt, 0, NULL, NULL)))
		return err;
	st[0] += (hi - lo) + nr * 12;
	st[1] += cnt[5];
	st[2] += c_nl;
	return cnt[5] ? host_keys(k, ls, coff, r0, cnt[5], st, msg, msg_len) : CL_SUCCESS;
}
