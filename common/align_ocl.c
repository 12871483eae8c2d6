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

#include <pthread.h>
#include <stdlib.h>
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

/* ---- extend's first pass, resident (align_dev_*) ------------------------------- */

enum { DEV_PROG_SHORT, DEV_PROG_MID, DEV_PROG_LONG, DEV_N_PROG };

/* The buffers of a run of windows, grown as runs need (released to shrink a run). */
enum { DB_READS, DB_ROFF, DB_WP, DB_FENDS, DB_RES, DB_HITS, DB_CENDS, DB_CNT, DB_WS,
	DB_T_WINS, DB_T_PAIRS, DB_T_RES, DB_T_WS, DB_N };   /* DB_T_*: align_dev_trace */

#define HIT_WORDS 3       /* per hit: window, row offset, distance (kernels/align.cl) */
#define DEV_SLOTS 3       /* calls on the device at once, each on its own queue */

/*
 * A slot: what one call uses, so that DEV_SLOTS calls (pipeline threads)
 * run at once, their uploads, kernels and downloads overlapping on the
 * device.
 */
typedef struct {
	cl_command_queue q;
	cl_kernel k[DEV_N_PROG][4];   /* align_ends, align_score, align_rows, align */
	cl_mem buf[DB_N];
	size_t cap[DB_N];     /* bytes of each buffer */
	cl_mem pin;           /* pinned staging of the windows (CL_MEM_ALLOC_HOST_PTR) ... */
	void *pin_p;          /* ... mapped here for good */
	size_t pin_cap;
	uint32_t *roff, *hits;    /* host: 32-bit read offsets, a run's hits */
	size_t roff_cap, hits_cap;
	int busy;
} dev_slot_t;

struct align_dev {
	ocl_ctx_t *ctx;
	cl_mem ref;
	size_t ref_len;
	cl_program prog[DEV_N_PROG];
	int score_first;      /* align_score + align_rows, not align_ends */
	size_t chunk;         /* most windows of a kernel run (lock) */
	pthread_mutex_t lock; /* slots, programs, chunk, stats */
	pthread_cond_t free_slot;
	int n_slot;
	dev_slot_t slot[DEV_SLOTS];
	align_dev_stats_t st;
};

align_dev_t *align_dev_new(ocl_ctx_t *ctx, const uint8_t *ref, size_t ref_len, char *msg,
		size_t msg_len)
{
	align_dev_t *d = sp_calloc(1, sizeof *d);
	double t0 = sp_now();
	const char *e = getenv("SEEDPIPE_ALIGN_SLOTS");
	cl_int err;
	int i;

	d->ctx = ctx;
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->free_slot, NULL);
	d->ref_len = ref_len ? ref_len : 1;
	d->ref = dev_buf(ctx, CL_MEM_READ_ONLY, ref_len, ref, &err);
	if (!d->ref) {
		snprintf(msg, msg_len, "the packed reference (%zu bytes) does not go on the device: %s",
				ref_len, ocl_strerror(err));
		align_dev_free(d);
		return NULL;
	}
	if ((err = ocl_finish_try(ctx)) != CL_SUCCESS) {
		snprintf(msg, msg_len, "the packed reference upload failed: %s", ocl_strerror(err));
		align_dev_free(d);
		return NULL;
	}
	d->n_slot = e && atoi(e) >= 1 && atoi(e) <= DEV_SLOTS ? atoi(e) : DEV_SLOTS;
	for (i = 0; i < d->n_slot; i++) {
		d->slot[i].q = clCreateCommandQueue(ctx->context, ctx->device, 0, &err);
		if (!d->slot[i].q || err != CL_SUCCESS) {
			d->slot[i].q = NULL;
			snprintf(msg, msg_len, "a command queue for the alignment: %s", ocl_strerror(err));
			align_dev_free(d);
			return NULL;
		}
	}
	d->st.t_ref = sp_now() - t0;
	d->chunk = (size_t)1 << 22;
	d->score_first = !getenv("SEEDPIPE_ALIGN_ONE_KERNEL");
	return d;
}

/* Release slot S's pinned staging buffer. */
static void pin_free(dev_slot_t *s)
{
	if (s->pin && s->pin_p) {
		clEnqueueUnmapMemObject(s->q, s->pin, s->pin_p, 0, NULL, NULL);
		clFinish(s->q);
	}
	ocl_release(s->pin);
	s->pin = NULL;
	s->pin_p = NULL;
	s->pin_cap = 0;
}

/* Slot S's pinned staging of at least SIZE bytes, mapped: CL_SUCCESS or the error. */
static cl_int pin_need(align_dev_t *d, dev_slot_t *s, size_t size)
{
	cl_int err = CL_SUCCESS;
	size_t c = size + size / 2;

	if (s->pin && size <= s->pin_cap)
		return CL_SUCCESS;
	pin_free(s);
	if (c > d->ctx->max_alloc)
		c = size;
	if (d->ctx->fail_above && (uint64_t)c > d->ctx->fail_above)
		return CL_MEM_OBJECT_ALLOCATION_FAILURE;   /* the tests' limit, as ocl_buffer_try */
	s->pin = clCreateBuffer(d->ctx->context, CL_MEM_READ_ONLY | CL_MEM_ALLOC_HOST_PTR, c ? c : 1,
			NULL, &err);
	if (!s->pin || err != CL_SUCCESS) {
		s->pin = NULL;
		return err != CL_SUCCESS ? err : CL_MEM_OBJECT_ALLOCATION_FAILURE;
	}
	s->pin_p = clEnqueueMapBuffer(s->q, s->pin, CL_TRUE, CL_MAP_WRITE, 0, c ? c : 1, 0,
			NULL, NULL, &err);
	if (!s->pin_p || err != CL_SUCCESS) {
		s->pin_p = NULL;
		pin_free(s);
		return err != CL_SUCCESS ? err : CL_MEM_OBJECT_ALLOCATION_FAILURE;
	}
	s->pin_cap = c;
	return CL_SUCCESS;
}

/* Release slot S's device buffers but those of the whole call (reads, offsets). */
static void slot_release(dev_slot_t *s, int all)
{
	int b;

	for (b = 0; b < DB_N; b++)
		if (all || (b != DB_READS && b != DB_ROFF)) {
			ocl_release(s->buf[b]);
			s->buf[b] = NULL;
			s->cap[b] = 0;
		}
	pin_free(s);
}

void align_dev_free(align_dev_t *d)
{
	int i, j;

	if (!d)
		return;
	for (i = 0; i < DEV_SLOTS; i++) {
		dev_slot_t *s = &d->slot[i];
		if (s->q)
			slot_release(s, 1);
		for (j = 0; j < 4 * DEV_N_PROG; j++)
			if (s->k[j / 4][j % 4])
				clReleaseKernel(s->k[j / 4][j % 4]);
		if (s->q)
			clReleaseCommandQueue(s->q);
		free(s->roff);
		free(s->hits);
	}
	ocl_release(d->ref);
	pthread_mutex_destroy(&d->lock);
	pthread_cond_destroy(&d->free_slot);
	free(d);
}

void align_dev_stats(const align_dev_t *d, align_dev_stats_t *st)
{
	*st = d->st;
	st->score_first = d->score_first;
	st->slots = d->n_slot;
}

/* Slot S's buffer I of at least SIZE bytes (grown by half again): CL_SUCCESS or the error. */
static cl_int dev_need(align_dev_t *d, dev_slot_t *s, int i, size_t size)
{
	cl_int err = CL_SUCCESS;
	size_t c;

	if (size <= s->cap[i] && s->buf[i])
		return CL_SUCCESS;
	ocl_release(s->buf[i]);
	s->buf[i] = NULL;
	s->cap[i] = 0;
	c = size + size / 2;
	if (c > d->ctx->max_alloc)
		c = size;
	if (!(s->buf[i] = ocl_buffer_try(d->ctx, CL_MEM_READ_WRITE, c ? c : 1, &err)))
		return err;
	s->cap[i] = c;
	return CL_SUCCESS;
}

/* Whether ERR says the device is short of memory (a smaller run may pass). */
static int dev_short(cl_int err)
{
	return err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES
		|| err == CL_INVALID_BUFFER_SIZE || err == CL_OUT_OF_HOST_MEMORY;
}

/*
 * Slot S's kernels for reads of up to LONGEST bases (the program built on
 * first use, under D's lock), or NULL with the error in *ERR.
 */
static cl_kernel *dev_kernel(align_dev_t *d, dev_slot_t *s, uint32_t longest, cl_int *err)
{
	static const char *const name[4] = { "align_ends", "align_score", "align_rows", "align" };
	int w = longest <= ALIGN_SHORT_READ ? DEV_PROG_SHORT : longest <= ALIGN_MID_READ
		? DEV_PROG_MID : DEV_PROG_LONG, i;

	if (s->k[w][0])
		return s->k[w];
	pthread_mutex_lock(&d->lock);
	if (!d->prog[w])
		d->prog[w] = ocl_program_try(d->ctx, "align", ocl_source("align"), w == DEV_PROG_SHORT
				? ALIGN_SHORT_OPTS : w == DEV_PROG_MID ? ALIGN_MID_OPTS : "", err, NULL);
	for (i = 0; d->prog[w] && i < 4; i++)
		if (!(s->k[w][i] = ocl_kernel_try(d->prog[w], name[i], err))) {
			sp_fail("kernel %s: %s", name[i], ocl_strerror(*err));
			while (i-- > 0) {
				clReleaseKernel(s->k[w][i]);
				s->k[w][i] = NULL;
			}
			break;
		}
	pthread_mutex_unlock(&d->lock);
	return s->k[w][0] ? s->k[w] : NULL;
}

/* The times and bytes of one run, added to D's under its lock. */
typedef struct {
	double t_submit, t_wait, t_down;
	uint64_t up, down, hits;
} run_st_t;

/*
 * One run on slot S: windows W[0..N) of rows STRIDE bytes at most; the hits'
 * distances and packed offsets into DIST and EOFF, their rows appended to
 * *ENDS.
 */
static cl_int dev_run(align_dev_t *d, dev_slot_t *s, cl_kernel *k, const align_dwin_t *w,
		size_t n, size_t stride, cl_uint max_a, cl_uint flags, int32_t *dist, uint32_t *eoff,
		uint8_t **ends, size_t *ends_cap, size_t *ends_len, run_st_t *rs)
{
	static const cl_uint zero[2] = { 0, 0 };
	cl_ulong c_n = n, c_stride = stride;
	cl_uint cnt[2];
	cl_int err;
	double t0 = sp_now(), t1, t2;
	size_t i;

	if ((err = dev_need(d, s, DB_WP, n * sizeof *w))
			|| (!d->score_first && (err = dev_need(d, s, DB_FENDS, n * stride)))
			|| (err = dev_need(d, s, DB_CENDS, n * stride))
			|| (err = dev_need(d, s, DB_RES, n * sizeof(align_res_t)))
			|| (err = dev_need(d, s, DB_HITS, n * HIT_WORDS * 4))
			|| (err = dev_need(d, s, DB_CNT, sizeof zero)) || (err = dev_need(d, s, DB_WS, 8))
			|| (err = pin_need(d, s, n * sizeof *w)))
		return err;
	memcpy(s->pin_p, w, n * sizeof *w);
	if ((err = clEnqueueWriteBuffer(s->q, s->buf[DB_WP], CL_FALSE, 0, n * sizeof *w, s->pin_p,
					0, NULL, NULL))
			|| (err = clEnqueueWriteBuffer(s->q, s->buf[DB_CNT], CL_FALSE, 0, sizeof zero,
					zero, 0, NULL, NULL)))
		return err;
	if (d->score_first) {   /* score, then the rows of the hits only */
		err = ocl_args_try(k[1], 11, sizeof(cl_mem), &s->buf[DB_READS], sizeof(cl_mem),
				&s->buf[DB_ROFF], sizeof(cl_mem), &d->ref, sizeof(cl_mem), &s->buf[DB_WP],
				sizeof c_n, &c_n, sizeof max_a, &max_a, sizeof flags, &flags,
				sizeof(cl_mem), &s->buf[DB_WS], sizeof(cl_mem), &s->buf[DB_RES],
				sizeof(cl_mem), &s->buf[DB_HITS], sizeof(cl_mem), &s->buf[DB_CNT]);
		if (err || (err = ocl_run_q(d->ctx, s->q, k[1], n, NULL)))
			return err;
		err = ocl_args_try(k[2], 12, sizeof(cl_mem), &s->buf[DB_READS], sizeof(cl_mem),
				&s->buf[DB_ROFF], sizeof(cl_mem), &d->ref, sizeof(cl_mem), &s->buf[DB_WP],
				sizeof c_n, &c_n, sizeof max_a, &max_a, sizeof flags, &flags,
				sizeof(cl_mem), &s->buf[DB_WS], sizeof(cl_mem), &s->buf[DB_RES],
				sizeof(cl_mem), &s->buf[DB_HITS], sizeof(cl_mem), &s->buf[DB_CNT],
				sizeof(cl_mem), &s->buf[DB_CENDS]);
		if (err || (err = ocl_run_q(d->ctx, s->q, k[2], n, NULL)))
			return err;
	} else {
		err = ocl_args_try(k[0], 14, sizeof(cl_mem), &s->buf[DB_READS], sizeof(cl_mem),
				&s->buf[DB_ROFF], sizeof(cl_mem), &d->ref, sizeof(cl_mem), &s->buf[DB_WP],
				sizeof c_n, &c_n, sizeof max_a, &max_a, sizeof flags, &flags,
				sizeof(cl_mem), &s->buf[DB_WS], sizeof c_stride, &c_stride, sizeof(cl_mem),
				&s->buf[DB_FENDS], sizeof(cl_mem), &s->buf[DB_RES], sizeof(cl_mem),
				&s->buf[DB_HITS], sizeof(cl_mem), &s->buf[DB_CENDS], sizeof(cl_mem),
				&s->buf[DB_CNT]);
		if (err || (err = ocl_run_q(d->ctx, s->q, k[0], n, NULL)))
			return err;
	}
	t1 = sp_now();
	if ((err = clEnqueueReadBuffer(s->q, s->buf[DB_CNT], CL_TRUE, 0, sizeof cnt, cnt, 0, NULL,
					NULL)))
		return err;
	t2 = sp_now();
	if (cnt[1] > n || cnt[0] > n * stride)
		return CL_INVALID_VALUE;
	if (*ends_len + cnt[0] > *ends_cap) {
		size_t c = *ends_cap ? *ends_cap : 4096;
		while (c < *ends_len + cnt[0])
			c *= 2;
		*ends = sp_realloc(*ends, c);
		*ends_cap = c;
	}
	if ((size_t)cnt[1] * HIT_WORDS > s->hits_cap) {
		s->hits_cap = (size_t)cnt[1] * HIT_WORDS * 2;
		s->hits = sp_realloc(s->hits, s->hits_cap * 4);
	}
	if ((cnt[1] && (err = clEnqueueReadBuffer(s->q, s->buf[DB_HITS], CL_FALSE, 0,
						(size_t)cnt[1] * HIT_WORDS * 4, s->hits, 0, NULL, NULL)))
			|| (cnt[0] && (err = clEnqueueReadBuffer(s->q, s->buf[DB_CENDS], CL_TRUE, 0,
						cnt[0], *ends + *ends_len, 0, NULL, NULL)))
			|| (err = clFinish(s->q)))
		return err;
	for (i = 0; i < cnt[1]; i++) {
		const uint32_t *h = s->hits + HIT_WORDS * i;
		if (h[0] >= n)
			return CL_INVALID_VALUE;
		dist[h[0]] = (int32_t)h[2];
		eoff[h[0]] = (uint32_t)*ends_len + h[1];
	}
	*ends_len += cnt[0];
	rs->hits += cnt[1];
	rs->up += n * sizeof *w + sizeof zero;
	rs->down += sizeof cnt + (size_t)cnt[1] * HIT_WORDS * 4 + cnt[0];
	rs->t_submit += t1 - t0;
	rs->t_wait += t2 - t1;
	rs->t_down += sp_now() - t2;
	return CL_SUCCESS;
}

int align_dev_check(const align_dev_t *d, size_t reads_len, const size_t *roff, size_t nr,
		const align_dwin_t *w, size_t n, unsigned max_a, uint32_t *longest, uint32_t *stride,
		char *msg, size_t msg_len)
{
	size_t i;

	*longest = 0;
	*stride = 1;
	if (max_a > ALIGN_MAX_A || reads_len > UINT32_MAX || roff[2 * nr] > reads_len) {
		snprintf(msg, msg_len, "a batch beyond the device's limits (bound %u, %zu read bytes)",
				max_a, reads_len);
		return -1;
	}
	for (i = 0; i < n; i++) {
		uint32_t m;
		if (w[i].rs >= 2 * nr || w[i].len == 0 || w[i].len > ALIGN_MAX_WIN
				|| (w[i].beg + w[i].len + 3) / 4 > d->ref_len) {
			snprintf(msg, msg_len, "window %zu lies outside the reads or the reference", i);
			return -1;
		}
		m = (uint32_t)(roff[w[i].rs + 1] - roff[w[i].rs]);
		if (m == 0 || m > ALIGN_MAX_READ) {
			snprintf(msg, msg_len, "window %zu has a read of %u bases (1 to %d supported)",
					i, m, ALIGN_MAX_READ);
			return -1;
		}
		if (m > *longest)
			*longest = m;
		if (w[i].len > *stride)
			*stride = w[i].len;
	}
	return 0;
}

/* The whole call on slot S (align_dev_ends less the slot's taking and giving back). */
static int dev_ends(align_dev_t *d, dev_slot_t *s, const uint8_t *reads, size_t reads_len,
		const size_t *roff, size_t nr, const align_dwin_t *w, size_t n, unsigned max_a,
		unsigned flags, uint32_t longest, uint32_t stride, int32_t *dist, uint32_t *eoff,
		uint8_t **ends, size_t *ends_cap, size_t *ends_len, char *msg, size_t msg_len)
{
	cl_uint c_flags = (flags & ALIGN_NOGAPS) | ALIGN_ENDS | ALIGN_NOCIGAR | ALIGN_PACKED;
	size_t i, nro = 2 * nr + 1, lim, chunk;
	uint64_t budget = ocl_mem_budget(d->ctx, 0.6) / (uint64_t)d->n_slot;
	run_st_t rs;
	cl_kernel *k;
	cl_int err;
	double t0 = sp_now();

	memset(&rs, 0, sizeof rs);
	*ends_len = 0;
	memset(dist, 0xff, n * sizeof *dist);   /* -1: no hit, unless the device says one */
	if (n == 0)
		return 0;
	if (!(k = dev_kernel(d, s, longest, &err))) {
		snprintf(msg, msg_len, "alignment on the device failed: %s", sp_errmsg());
		return -1;
	}
	if (nro > s->roff_cap) {
		s->roff = sp_realloc(s->roff, nro * sizeof *s->roff);
		s->roff_cap = nro;
	}
	for (i = 0; i < nro; i++)
		s->roff[i] = (uint32_t)roff[i];
	if ((err = dev_need(d, s, DB_READS, reads_len ? reads_len : 1))
			|| (err = dev_need(d, s, DB_ROFF, nro * 4))
			|| (reads_len && (err = clEnqueueWriteBuffer(s->q, s->buf[DB_READS], CL_FALSE, 0,
						reads_len, reads, 0, NULL, NULL)))
			|| (err = clEnqueueWriteBuffer(s->q, s->buf[DB_ROFF], CL_FALSE, 0, nro * 4, s->roff,
					0, NULL, NULL)))
		goto fail;
	rs.t_submit += sp_now() - t0;
	rs.up += reads_len + nro * 4;
	/* a run's buffers within the slot's share of the device, each within max_alloc */
	lim = budget / (2 * stride + sizeof(align_res_t) + 32);
	if (lim > d->ctx->max_alloc / (stride > sizeof(align_res_t) ? stride : sizeof(align_res_t)))
		lim = d->ctx->max_alloc / (stride > sizeof(align_res_t) ? stride : sizeof(align_res_t));
	if (lim > UINT32_MAX / stride)
		lim = UINT32_MAX / stride;
	for (i = 0; i < n;) {
		size_t c;

		pthread_mutex_lock(&d->lock);
		chunk = d->chunk;
		pthread_mutex_unlock(&d->lock);
		if (chunk > lim)
			chunk = lim;
		if (chunk < 1)
			chunk = 1;
		c = n - i < chunk ? n - i : chunk;
		err = dev_run(d, s, k, w + i, c, stride, max_a, c_flags, dist + i, eoff + i, ends,
				ends_cap, ends_len, &rs);
		if (err != CL_SUCCESS && dev_short(err) && c > 1) {
			/* the device is short of memory: smaller runs from here on */
			slot_release(s, 0);
			if ((err = clFinish(s->q)) != CL_SUCCESS)
				goto fail;
			pthread_mutex_lock(&d->lock);
			if (d->chunk > c / 2)
				d->chunk = c / 2;
			pthread_mutex_unlock(&d->lock);
			if (d->ctx->debug)
				sp_msg("align: the device is short of memory: runs of %zu windows", c / 2);
			continue;
		}
		if (err != CL_SUCCESS)
			goto fail;
		i += c;
		pthread_mutex_lock(&d->lock);
		d->st.runs++;
		pthread_mutex_unlock(&d->lock);
	}
	pthread_mutex_lock(&d->lock);
	d->st.calls++;
	d->st.pairs += n;
	d->st.hits += rs.hits;
	d->st.up_bytes += rs.up;
	d->st.down_bytes += rs.down;
	d->st.t_submit += rs.t_submit;
	d->st.t_wait += rs.t_wait;
	d->st.t_down += rs.t_down;
	pthread_mutex_unlock(&d->lock);
	return 0;
fail:
	snprintf(msg, msg_len, "alignment on the device failed: %s", ocl_strerror(err));
	return -1;
}

/* A free slot of D (waiting for one). */
static dev_slot_t *slot_take(align_dev_t *d)
{
	dev_slot_t *s = NULL;
	int i;

	pthread_mutex_lock(&d->lock);
	while (!s) {
		for (i = 0; i < d->n_slot && !s; i++)
			if (!d->slot[i].busy)
				s = &d->slot[i];
		if (!s)
			pthread_cond_wait(&d->free_slot, &d->lock);
	}
	s->busy = 1;
	pthread_mutex_unlock(&d->lock);
	return s;
}

/* Give slot S of D back. */
static void slot_give(align_dev_t *d, dev_slot_t *s)
{
	pthread_mutex_lock(&d->lock);
	s->busy = 0;
	pthread_cond_signal(&d->free_slot);
	pthread_mutex_unlock(&d->lock);
}

int align_dev_ends(align_dev_t *d, const uint8_t *reads, size_t reads_len, const size_t *roff,
		size_t nr, const align_dwin_t *w, size_t n, unsigned max_a, unsigned flags,
		uint32_t longest, uint32_t stride, int32_t *dist, uint32_t *eoff, uint8_t **ends,
		size_t *ends_cap, size_t *ends_len, char *msg, size_t msg_len)
{
	dev_slot_t *s = slot_take(d);
	int rc = dev_ends(d, s, reads, reads_len, roff, nr, w, n, max_a, flags, longest, stride,
			dist, eoff, ends, ends_cap, ends_len, msg, msg_len);

	slot_give(d, s);
	return rc;
}

/* align_dev_trace on slot S. */
static cl_int dev_trace(align_dev_t *d, dev_slot_t *s, const uint8_t *reads, size_t reads_len,
		const uint8_t *wins, size_t wins_len, const align_pair_t *pairs, size_t n,
		unsigned max_a, align_res_t *res)
{
	size_t i, ws_words = 1, chunk, lim;
	uint32_t longest = 0;
	cl_ulong c_base, c_n, c_stride = 1;
	cl_uint c_a = max_a, c_flags = 0;
	cl_kernel *k;
	cl_int err;
	double t0 = sp_now(), t1;

	for (i = 0; i < n; i++) {
		size_t ww = align_ws_words(pairs[i].win_len, pairs[i].read_len);
		if (ww > ws_words)
			ws_words = ww;
		if (pairs[i].read_len > longest)
			longest = pairs[i].read_len;
	}
	if (!(k = dev_kernel(d, s, longest, &err)))
		return err != CL_SUCCESS ? err : CL_INVALID_PROGRAM;
	if ((err = dev_need(d, s, DB_READS, reads_len)) || (err = dev_need(d, s, DB_T_WINS, wins_len))
			|| (err = dev_need(d, s, DB_T_PAIRS, n * sizeof *pairs))
			|| (err = dev_need(d, s, DB_T_RES, n * sizeof *res))
			|| (err = dev_need(d, s, DB_CNT, 8))
			|| (err = clEnqueueWriteBuffer(s->q, s->buf[DB_READS], CL_FALSE, 0, reads_len, reads,
					0, NULL, NULL))
			|| (err = clEnqueueWriteBuffer(s->q, s->buf[DB_T_WINS], CL_FALSE, 0, wins_len, wins,
					0, NULL, NULL))
			|| (err = clEnqueueWriteBuffer(s->q, s->buf[DB_T_PAIRS], CL_FALSE, 0,
					n * sizeof *pairs, pairs, 0, NULL, NULL)))
		return err;
	/* the traceback workspace: within the slot's share of the device */
	lim = ocl_mem_budget(d->ctx, 0.6) / (uint64_t)d->n_slot / 2 / (ws_words * 8);
	if (lim > d->ctx->max_alloc / (ws_words * 8))
		lim = d->ctx->max_alloc / (ws_words * 8);
	pthread_mutex_lock(&d->lock);
	chunk = d->chunk;
	pthread_mutex_unlock(&d->lock);
	if (chunk > lim)
		chunk = lim;
	if (chunk < 1)
		chunk = 1;
	if (chunk > n)
		chunk = n;
	if ((err = dev_need(d, s, DB_T_WS, chunk * ws_words * 8)))
		return err;
	for (i = 0; i < n; i += chunk) {
		c_base = i;
		c_n = n - i < chunk ? n - i : chunk;
		err = ocl_args_try(k[3], 11, sizeof(cl_mem), &s->buf[DB_READS], sizeof(cl_mem),
				&s->buf[DB_T_WINS], sizeof(cl_mem), &s->buf[DB_T_PAIRS], sizeof c_base,
				&c_base, sizeof c_n, &c_n, sizeof c_a, &c_a, sizeof c_flags, &c_flags,
				sizeof(cl_mem), &s->buf[DB_T_WS], sizeof(cl_mem), &s->buf[DB_CNT],
				sizeof c_stride, &c_stride, sizeof(cl_mem), &s->buf[DB_T_RES]);
		if (err || (err = ocl_run_q(d->ctx, s->q, k[3], (size_t)c_n, NULL)))
			return err;
	}
	t1 = sp_now();
	if ((err = clEnqueueReadBuffer(s->q, s->buf[DB_T_RES], CL_TRUE, 0, n * sizeof *res, res, 0,
					NULL, NULL)))
		return err;
	pthread_mutex_lock(&d->lock);
	d->st.t_calls++;
	d->st.t_pairs += n;
	d->st.t_up_bytes += reads_len + wins_len + n * sizeof *pairs;
	d->st.t_down_bytes += n * sizeof *res;
	d->st.t_t_submit += t1 - t0;
	d->st.t_t_wait += sp_now() - t1;
	pthread_mutex_unlock(&d->lock);
	return CL_SUCCESS;
}

int align_dev_trace(align_dev_t *d, const uint8_t *reads, size_t reads_len, const uint8_t *wins,
		size_t wins_len, const align_pair_t *pairs, size_t n, unsigned max_a, align_res_t *res,
		char *msg, size_t msg_len)
{
	dev_slot_t *s;
	cl_int err = CL_SUCCESS;
	size_t i;

	if (align_check(pairs, n, max_a, 0, 0, msg, msg_len) < 0)
		return -1;
	for (i = 0; i < n; i++)
		if (pairs[i].read_off + pairs[i].read_len > reads_len
				|| pairs[i].win_off + pairs[i].win_len > wins_len) {
			snprintf(msg, msg_len, "pair %zu lies outside the read or window buffer", i);
			return -1;
		}
	if (n == 0)
		return 0;
	s = slot_take(d);
	while ((err = dev_trace(d, s, reads, reads_len, wins, wins_len, pairs, n, max_a, res))
			!= CL_SUCCESS && dev_short(err)) {
		size_t c;
		slot_release(s, 1);
		clFinish(s->q);
		pthread_mutex_lock(&d->lock);
		c = d->chunk;
		if (c > 1)
			d->chunk = c / 2;
		pthread_mutex_unlock(&d->lock);
		if (c <= 1)
			break;
		if (d->ctx->debug)
			sp_msg("align: the device is short of memory: runs of %zu pairs", c / 2);
	}
	if (err != CL_SUCCESS)
		clFinish(s->q);
	slot_give(d, s);
	if (err != CL_SUCCESS) {
		snprintf(msg, msg_len, "alignment on the device failed: %s",
				err == CL_INVALID_PROGRAM ? sp_errmsg() : ocl_strerror(err));
		return -1;
	}
	return 0;
}
