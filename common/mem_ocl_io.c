/*
 * mem_ocl_io.c - seedfilt -m mem's OpenCL backend, its transfers: device
 * buffers that grow, blocking reads and writes, the two page-locked staging
 * buffers that large pageable transfers go through, and a batch's inputs
 * sent up from one page-locked buffer without a wait (mem_ocl_priv.h).
 */
#include <stdlib.h>
#include <string.h>

#include "mem_ocl_priv.h"
#include "util.h"

/* Buffer K holds at least N bytes (content lost when it grows); 0 or -1. */
int mdev_need(mem_dev_t *d, int k, size_t n)
{
	dbuf_t *b = &d->b[k];
	cl_int err;

	if (n <= b->cap && b->m)
		return 0;
	ocl_release(b->m);
	b->cap = n < 256 ? 256 : n + n / 4;
	b->m = ocl_buffer_try(d->ocl, k >= B_OUT ? CL_MEM_READ_WRITE : CL_MEM_READ_ONLY, b->cap, &err);
	if (!b->m) {
		b->cap = 0;
		return sp_fail("cannot allocate %zu bytes on the OpenCL device: %s", n, ocl_strerror(err));
	}
	return 0;
}

int mdev_put(mem_dev_t *d, int k, const void *src, size_t n)
{
	cl_int err;

	if (mdev_need(d, k, n) < 0)
		return -1;
	if (n && (err = clEnqueueWriteBuffer(d->ocl->queue, d->b[k].m, CL_TRUE, 0, n, src, 0, NULL,
					NULL)) != CL_SUCCESS)
		return sp_fail("OpenCL write of %zu bytes failed: %s", n, ocl_strerror(err));
	return 0;
}

int mdev_get(mem_dev_t *d, cl_mem m, void *dst, size_t n)
{
	cl_int err;

	if (n && (err = clEnqueueReadBuffer(d->ocl->queue, m, CL_TRUE, 0, n, dst, 0, NULL, NULL))
			!= CL_SUCCESS)
		return sp_fail("OpenCL read of %zu bytes failed: %s", n, ocl_strerror(err));
	return 0;
}

/* The two staging buffers mapped (once): 1, or 0 when the device cannot give them. */
static int stage_ready(mem_dev_t *d)
{
	int k;

	if (d->stage_ok)
		return d->stage_ok > 0;
	d->stage_ok = -1;
	for (k = 0; k < 2; k++) {
		cl_int err;

		d->stage_p[k] = ocl_pinned_try(d->ocl, NULL, CL_MEM_READ_WRITE, d->stage_bytes,
				&d->stage_m[k], &err);
		if (!d->stage_p[k])
			return 0;
	}
	d->stage_ok = 1;
	return 1;
}

/*
 * N bytes of M down into pageable DST: through the two staging buffers in
 * turn, the copy of one chunk out of its buffer while the next comes down
 * (bench/oclbw.c on an H100: pageable 10-12 GB/s down, page-locked 53-55).
 */
int mdev_get_big(mem_dev_t *d, cl_mem m, void *dst, size_t n)
{
	size_t sb = d->stage_bytes, nch = (n + sb - 1) / sb, c;
	cl_event ev[2] = { NULL, NULL };
	cl_int err = CL_SUCCESS;
	int rc = 0;

	if (n < (sb < STAGE_MIN ? sb : STAGE_MIN) || !stage_ready(d))
		return mdev_get(d, m, dst, n);
	for (c = 0; c <= nch; c++) {
		if (c < nch && rc == 0) {       /* chunk c down into buffer c & 1 */
			size_t off = c * sb, len = n - off < sb ? n - off : sb;

			err = clEnqueueReadBuffer(d->ocl->queue, m, CL_FALSE, off, len, d->stage_p[c & 1],
					0, NULL, &ev[c & 1]);
			if (err != CL_SUCCESS) {
				ev[c & 1] = NULL;
				rc = sp_fail("OpenCL read of %zu bytes failed: %s", len, ocl_strerror(err));
			}
		}
		if (c > 0 && ev[(c - 1) & 1]) {  /* chunk c - 1 out of its buffer */
			size_t off = (c - 1) * sb, len = n - off < sb ? n - off : sb;
			cl_event e = ev[(c - 1) & 1];

			ev[(c - 1) & 1] = NULL;
			err = clWaitForEvents(1, &e);
			clReleaseEvent(e);
			if (err != CL_SUCCESS && rc == 0)
				rc = sp_fail("OpenCL read of %zu bytes failed: %s", len, ocl_strerror(err));
			if (rc == 0)
				memcpy((char *)dst + off, d->stage_p[(c - 1) & 1], len);
		}
	}
	return rc;
}

/*
 * N bytes of pageable SRC up into buffer K: copied into the two staging
 * buffers in turn, one chunk going up while the next is copied in (a write
 * straight from pageable memory goes through the driver's own staging:
 * 7-8 GB/s on an H100 by bench/oclbw.c, page-locked 53-55).
 */
int mdev_put_big(mem_dev_t *d, int k, const void *src, size_t n)
{
	size_t sb = d->stage_bytes, nch = (n + sb - 1) / sb, c;
	cl_event ev[2] = { NULL, NULL };
	cl_int err = CL_SUCCESS;
	int rc = 0, j;

	if (n < (sb < STAGE_MIN ? sb : STAGE_MIN) || d->put_plain || !stage_ready(d))
		return mdev_put(d, k, src, n);
	if (mdev_need(d, k, n) < 0)
		return -1;
	for (c = 0; c < nch && rc == 0; c++) {
		size_t off = c * sb, len = n - off < sb ? n - off : sb;
		cl_event e = ev[c & 1];

		if (e) {        /* the chunk before last left this buffer */
			ev[c & 1] = NULL;
			err = clWaitForEvents(1, &e);
			clReleaseEvent(e);
			if (err != CL_SUCCESS) {
				rc = sp_fail("OpenCL write of %zu bytes failed: %s", len, ocl_strerror(err));
				break;
			}
		}
		memcpy(d->stage_p[c & 1], (const char *)src + off, len);
		err = clEnqueueWriteBuffer(d->ocl->queue, d->b[k].m, CL_FALSE, off, len, d->stage_p[c & 1],
				0, NULL, &ev[c & 1]);
		if (err != CL_SUCCESS) {
			ev[c & 1] = NULL;
			rc = sp_fail("OpenCL write of %zu bytes failed: %s", len, ocl_strerror(err));
		} else {
			clFlush(d->ocl->queue);
		}
	}
	for (j = 0; j < 2; j++)
		if (ev[j]) {
			err = clWaitForEvents(1, &ev[j]);
			clReleaseEvent(ev[j]);
			if (err != CL_SUCCESS && rc == 0)
				rc = sp_fail("OpenCL write of %zu bytes failed: %s", n, ocl_strerror(err));
		}
	return rc;
}

/* A page-locked input buffer unmapped and released. */
void mdev_in_release(mem_dev_t *d, hbuf_t *h)
{
	ocl_pinned_release(d->ocl, NULL, h->m, h->p);
	memset(h, 0, sizeof *h);
}

/*
 * The NP pieces P up from one page-locked buffer (copied into it, then
 * written without waiting: the queue is in order, so the kernels after them
 * read them).  At 16 threads with many small batches (chrX, L 30 or 20) the
 * blocking writes from pageable memory took 12-14 ms a batch, most of the
 * device thread's time.  0; 1 when the page-locked buffer is not available
 * (the caller puts them one by one); -1 after sp_fail.
 */
int mdev_put_all(mem_dev_t *d, const inpiece_t *p, int np)
{
	size_t tot = 0, off;
	hbuf_t *h;
	cl_int err = CL_SUCCESS;
	cl_event ev = NULL;
	int i, k;

	if (d->in_off)
		return 1;
	for (i = 0; i < np; i++)
		tot += (p[i].n + IN_ALIGN - 1) / IN_ALIGN * IN_ALIGN;
	k = d->in_k ^= 1;
	h = &d->in[k];
	if (d->in_ev[k]) {        /* the last upload from this buffer has left it */
		err = clWaitForEvents(1, &d->in_ev[k]);
		clReleaseEvent(d->in_ev[k]);
		d->in_ev[k] = NULL;
		if (err != CL_SUCCESS)
			return sp_fail("OpenCL write failed: %s", ocl_strerror(err));
	}
	if (tot > h->cap) {
		size_t cap = tot + tot / 4 + PIN_MIN;

		mdev_in_release(d, h);
		if (!(h->p = ocl_pinned_try(d->ocl, NULL, CL_MEM_READ_ONLY, cap, &h->m, NULL))) {
			d->in_off = 1;      /* page-locked memory is short: the plain puts from now on */
			return 1;
		}
		h->cap = cap;
	}
	for (i = 0; i < np; i++)
		if (mdev_need(d, p[i].k, p[i].n) < 0)
			return -1;
	for (i = 0, off = 0; i < np && err == CL_SUCCESS; i++) {
		if (!p[i].n)
			continue;
		memcpy((char *)h->p + off, p[i].src, p[i].n);
		if (ev)
			clReleaseEvent(ev);
		ev = NULL;
		err = clEnqueueWriteBuffer(d->ocl->queue, d->b[p[i].k].m, CL_FALSE, 0, p[i].n,
				(char *)h->p + off, 0, NULL, &ev);
		off += (p[i].n + IN_ALIGN - 1) / IN_ALIGN * IN_ALIGN;
	}
	if (err == CL_SUCCESS)
		err = clFlush(d->ocl->queue);
	if (err != CL_SUCCESS) {
		if (ev) {
			clWaitForEvents(1, &ev);
			clReleaseEvent(ev);
		}
		return sp_fail("OpenCL write of %zu bytes failed: %s", tot, ocl_strerror(err));
	}
	d->in_ev[k] = ev;        /* the queue is in order: the last write ends after the others */
	return 0;
}
