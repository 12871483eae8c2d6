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
#include "align_keys.h"
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
	DB_T_WINS, DB_T_PAIRS, DB_T_RES, DB_T_WS, DB_KEYS, DB_COFF, DB_LIST, DB_LOFF, DB_FLAG,
	DB_RIX, DB_FIX, DB_N };	/* DB_T_*: align_dev_trace; DB_KEYS .. DB_FLAG: align_dev_cut */

/* per hit: window, row offset, distance, the window's two words (kernels/align.cl) */
#define HIT_WORDS 7
#define DW_BEG 0xffffffffffull   /* a window's first base in its first word */
#define DEV_KERNELS 8     /* align_ends, align_score, align_rows, align, align_cut,
                           * align_keys, align_keys_wg, align_keys_fix */
#define DEV_SLOTS 8       /* calls on the device at once at most, each on its own queue */
#define DEV_SLOTS_DEFAULT 3   /* ... unless SEEDPIPE_ALIGN_SLOTS says otherwise */

/*
 * A slot: what one call uses, so that DEV_SLOTS calls (pipeline threads)
 * run at once, their uploads, kernels and downloads overlapping on the
 * device.
 */
typedef struct {
	cl_command_queue q;
	cl_kernel k[DEV_N_PROG][DEV_KERNELS];   /* align_ends, align_score, align_rows, align,
	                                         * align_cut */
	cl_mem buf[DB_N];
	size_t cap[DB_N];     /* bytes of each buffer */
	cl_mem pin;           /* pinned staging of the windows (CL_MEM_ALLOC_HOST_PTR) ... */
	void *pin_p;          /* ... mapped here for good */
	size_t pin_cap;
	uint32_t *roff, *hits;    /* host: 32-bit read offsets, a run's hits */
	size_t roff_cap, hits_cap;
	size_t group_ends;    /* align_dev_cut: rows' bytes before the group in progress */
	int busy;
	double t_took;        /* when it was taken (the stats' t_held) */
} dev_slot_t;

struct align_dev {
	ocl_ctx_t *ctx;
	cl_mem ref;
	size_t ref_len;
	cl_mem sb, se, pb;    /* the sequences' first bases and ends; the partitions' both */
	size_t n_seq, n_part;    /* (align_dev_seqs) */
	uint64_t *h_se, *h_pb;   /* the host's copies of SE and PB (align_dev_tables) */
	cl_program prog[DEV_N_PROG];
	int score_first;      /* align_score + align_rows, not align_ends */
	size_t chunk;         /* most windows of a kernel run (lock) */
	size_t cut_reads;     /* most reads of a group that align_dev_cut cuts (lock) */
	pthread_mutex_t lock; /* slots, programs, chunk, stats */
	pthread_cond_t free_slot;
	int n_slot;
	dev_slot_t slot[DEV_SLOTS];
	align_dev_stats_t st;
	int prof;             /* SEEDPIPE_ALIGN_PROFILE: the kernels' device times */
	size_t keys_wg[2];    /* align_keys_size (lock): the group, the threshold; 0 unknown */
	cl_ulong k_first, k_last;   /* the first kernel's start, the last one's end (ns) */
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
	d->n_slot = e && atoi(e) >= 1 && atoi(e) <= DEV_SLOTS ? atoi(e) : DEV_SLOTS_DEFAULT;
	d->prof = getenv("SEEDPIPE_ALIGN_PROFILE") != NULL;
	for (i = 0; i < d->n_slot; i++) {
		/* one queue for all where PoCL < 6 would abort (ocl_slot_queue) */
		if (!(d->slot[i].q = ocl_slot_queue(ctx, i ? d->slot[0].q : NULL, d->prof, &err))) {
			snprintf(msg, msg_len, "a command queue for the alignment: %s", ocl_strerror(err));
			align_dev_free(d);
			return NULL;
		}
	}
	d->st.t_ref = sp_now() - t0;
	d->chunk = (size_t)1 << 22;
	d->cut_reads = SIZE_MAX;
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

/*
 * Release slot S's device buffers (ALL 0: but those of the whole call, the
 * reads, their offsets, the windows and the candidates, which a smaller run
 * still reads).
 */
static void slot_release(dev_slot_t *s, int all)
{
	int b;

	for (b = 0; b < DB_N; b++)
		if (all || (b != DB_READS && b != DB_ROFF && b != DB_WP && b != DB_KEYS
					&& b != DB_COFF)) {
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
		if (s->q) {
			clFinish(s->q);   /* no command of ours runs on past the release */
			slot_release(s, 1);
		}
		for (j = 0; j < DEV_KERNELS * DEV_N_PROG; j++)
			if (s->k[j / DEV_KERNELS][j % DEV_KERNELS])
				clReleaseKernel(s->k[j / DEV_KERNELS][j % DEV_KERNELS]);
		if (s->q)
			clReleaseCommandQueue(s->q);
		free(s->roff);
		free(s->hits);
	}
	ocl_release(d->ref);
	ocl_release(d->sb);
	ocl_release(d->se);
	ocl_release(d->pb);
	free(d->h_se);
	free(d->h_pb);
	pthread_mutex_destroy(&d->lock);
	pthread_cond_destroy(&d->free_slot);
	free(d);
}

void align_dev_stats(const align_dev_t *d, align_dev_stats_t *st)
{
	*st = d->st;
	st->k_span = d->k_last > d->k_first ? (double)(d->k_last - d->k_first) * 1e-9 : 0;
	st->score_first = d->score_first;
	st->slots = d->n_slot;
}

/* A kernel's event EV for SEEDPIPE_ALIGN_PROFILE (or NULL: none asked for). */
#define TRACE_PROF_EV 16   /* the kernel runs of a pass-2 call profiled, at most */
#define PROF_EV(d, ev) ((d)->prof ? (ev) : NULL)

/*
 * With SEEDPIPE_ALIGN_PROFILE: the device seconds of the kernel of event
 * EV (ended: its queue was waited for) added to *T, and the span of all
 * kernels widened; EV released.
 */
static void prof_add(align_dev_t *d, cl_event ev, double *t)
{
	cl_ulong b = 0, e = 0;

	if (!ev)
		return;
	if (clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof b, &b, NULL)
			== CL_SUCCESS && clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END,
				sizeof e, &e, NULL) == CL_SUCCESS && e >= b) {
		pthread_mutex_lock(&d->lock);
		*t += (double)(e - b) * 1e-9;
		d->st.k_runs++;
		if (!d->k_first || b < d->k_first)
			d->k_first = b;
		if (e > d->k_last)
			d->k_last = e;
		pthread_mutex_unlock(&d->lock);
	}
	clReleaseEvent(ev);
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
	/* room to grow, else the size alone */
	if (!(s->buf[i] = ocl_buffer_try(d->ctx, CL_MEM_READ_WRITE, c ? c : 1, &err))
			&& (c == size || !(s->buf[i] = ocl_buffer_try(d->ctx, CL_MEM_READ_WRITE,
						(c = size) ? size : 1, &err))))
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
	static const char *const name[DEV_KERNELS] = { "align_ends", "align_score", "align_rows",
		"align", "align_cut", "align_keys", "align_keys_wg", "align_keys_fix" };
	int w = longest <= ALIGN_SHORT_READ ? DEV_PROG_SHORT : longest <= ALIGN_MID_READ
		? DEV_PROG_MID : DEV_PROG_LONG, i;

	if (s->k[w][0])
		return s->k[w];
	pthread_mutex_lock(&d->lock);
	if (!d->prog[w])
		d->prog[w] = ocl_program_try(d->ctx, "align", ocl_source("align"), w == DEV_PROG_SHORT
				? ALIGN_SHORT_OPTS : w == DEV_PROG_MID ? ALIGN_MID_OPTS : "", err, NULL);
	for (i = 0; d->prog[w] && i < DEV_KERNELS; i++)
		if (!(s->k[w][i] = ocl_kernel_try(d->prog[w], name[i], err))) {
			sp_fail("kernel %s: %s", name[i], ocl_strerror(*err));
			while (i-- > 0) {
				clReleaseKernel(s->k[w][i]);
				s->k[w][i] = NULL;
			}
			break;
		}
	if (s->k[w][0] && !d->keys_wg[0])
		align_keys_size(d->ctx, s->k[w][6], s->k[w][7], d->keys_wg);
	pthread_mutex_unlock(&d->lock);
	return s->k[w][0] ? s->k[w] : NULL;
}

/* The times and bytes of one run, added to D's under its lock. */
typedef struct {
	double t_submit, t_wait, t_down;
	uint64_t up, down, hits;
} run_st_t;

/*
 * Where a run's hits go: by window (DIST, EOFF: align_dev_ends) or, with
 * DH set, appended to a list (align_dev_cut); their rows to *ENDS.
 */
typedef struct {
	int32_t *dist;
	uint32_t *eoff;
	align_dhit_t **dh;
	size_t *dh_cap, *n_dh;
	uint8_t **ends;
	size_t *ends_cap, *ends_len;
} run_out_t;

/*
 * One run on slot S of N windows of rows STRIDE bytes at most: W[0..N) sent
 * up, or with W NULL those from BASE of the slot's window buffer (cut
 * there); the hits and their rows to OUT.
 */
static cl_int dev_run(align_dev_t *d, dev_slot_t *s, cl_kernel *k, const align_dwin_t *w,
		size_t base, size_t n, size_t stride, cl_uint max_a, cl_uint flags, run_out_t *out,
		run_st_t *rs)
{
	static const cl_uint zero[2] = { 0, 0 };
	cl_ulong c_n = n, c_stride = stride, c_base = w ? 0 : base;
	cl_uint cnt[2];
	cl_int err;
	cl_event ev[2] = { NULL, NULL };
	double t0 = sp_now(), t1, t2;
	size_t i, at = *out->ends_len;

	if ((w && (err = dev_need(d, s, DB_WP, n * sizeof *w)))
			|| (!d->score_first && (err = dev_need(d, s, DB_FENDS, n * stride)))
			|| (err = dev_need(d, s, DB_CENDS, n * stride))
			|| (err = dev_need(d, s, DB_RES, n * sizeof(align_res_t)))
			|| (err = dev_need(d, s, DB_HITS, n * HIT_WORDS * 4))
			|| (err = dev_need(d, s, DB_CNT, 16)) || (err = dev_need(d, s, DB_WS, 8))
			|| (w && (err = pin_need(d, s, n * sizeof *w))))
		return err;
	if (w) {
		memcpy(s->pin_p, w, n * sizeof *w);
		if ((err = clEnqueueWriteBuffer(s->q, s->buf[DB_WP], CL_FALSE, 0, n * sizeof *w,
						s->pin_p, 0, NULL, NULL)))
			return err;
		rs->up += n * sizeof *w;
	}
	if ((err = clEnqueueWriteBuffer(s->q, s->buf[DB_CNT], CL_FALSE, 0, sizeof zero, zero, 0,
					NULL, NULL)))
		return err;
	if (d->score_first) {   /* score, then the rows of the hits only */
		err = ocl_args_try(k[1], 12, sizeof(cl_mem), &s->buf[DB_READS], sizeof(cl_mem),
				&s->buf[DB_ROFF], sizeof(cl_mem), &d->ref, sizeof(cl_mem), &s->buf[DB_WP],
				sizeof c_base, &c_base, sizeof c_n, &c_n, sizeof max_a, &max_a,
				sizeof flags, &flags, sizeof(cl_mem), &s->buf[DB_WS], sizeof(cl_mem),
				&s->buf[DB_RES], sizeof(cl_mem), &s->buf[DB_HITS], sizeof(cl_mem),
				&s->buf[DB_CNT]);
		if (err || (err = ocl_run_q(d->ctx, s->q, k[1], n, PROF_EV(d, &ev[0]))))
			return err;
		err = ocl_args_try(k[2], 13, sizeof(cl_mem), &s->buf[DB_READS], sizeof(cl_mem),
				&s->buf[DB_ROFF], sizeof(cl_mem), &d->ref, sizeof(cl_mem), &s->buf[DB_WP],
				sizeof c_base, &c_base, sizeof c_n, &c_n, sizeof max_a, &max_a,
				sizeof flags, &flags, sizeof(cl_mem), &s->buf[DB_WS], sizeof(cl_mem),
				&s->buf[DB_RES], sizeof(cl_mem), &s->buf[DB_HITS], sizeof(cl_mem),
				&s->buf[DB_CNT], sizeof(cl_mem), &s->buf[DB_CENDS]);
		if (err || (err = ocl_run_q(d->ctx, s->q, k[2], n, PROF_EV(d, &ev[1]))))
			goto fail;
	} else {
		err = ocl_args_try(k[0], 15, sizeof(cl_mem), &s->buf[DB_READS], sizeof(cl_mem),
				&s->buf[DB_ROFF], sizeof(cl_mem), &d->ref, sizeof(cl_mem), &s->buf[DB_WP],
				sizeof c_base, &c_base, sizeof c_n, &c_n, sizeof max_a, &max_a,
				sizeof flags, &flags, sizeof(cl_mem), &s->buf[DB_WS], sizeof c_stride,
				&c_stride, sizeof(cl_mem), &s->buf[DB_FENDS], sizeof(cl_mem),
				&s->buf[DB_RES], sizeof(cl_mem), &s->buf[DB_HITS], sizeof(cl_mem),
				&s->buf[DB_CENDS], sizeof(cl_mem), &s->buf[DB_CNT]);
		if (err || (err = ocl_run_q(d->ctx, s->q, k[0], n, PROF_EV(d, &ev[0]))))
			return err;
	}
	t1 = sp_now();
	if ((err = clEnqueueReadBuffer(s->q, s->buf[DB_CNT], CL_TRUE, 0, sizeof cnt, cnt, 0, NULL,
					NULL)))
		goto fail;
	t2 = sp_now();
	prof_add(d, ev[0], d->score_first ? &d->st.k_score : &d->st.k_ends);
	prof_add(d, ev[1], &d->st.k_rows);
	ev[0] = ev[1] = NULL;
	if (cnt[1] > n || cnt[0] > n * stride)
		return CL_INVALID_VALUE;
	if (at + cnt[0] > *out->ends_cap) {
		size_t c = *out->ends_cap ? *out->ends_cap : 4096;
		while (c < at + cnt[0])
			c *= 2;
		*out->ends = sp_realloc(*out->ends, c);
		*out->ends_cap = c;
	}
	if ((size_t)cnt[1] * HIT_WORDS > s->hits_cap) {
		s->hits_cap = (size_t)cnt[1] * HIT_WORDS * 2;
		s->hits = sp_realloc(s->hits, s->hits_cap * 4);
	}
	if ((cnt[1] && (err = clEnqueueReadBuffer(s->q, s->buf[DB_HITS], CL_FALSE, 0,
						(size_t)cnt[1] * HIT_WORDS * 4, s->hits, 0, NULL, NULL)))
			|| (cnt[0] && (err = clEnqueueReadBuffer(s->q, s->buf[DB_CENDS], CL_TRUE, 0,
						cnt[0], *out->ends + at, 0, NULL, NULL)))
			|| (err = clFinish(s->q)))
		return err;
	if (out->dh) {
		size_t nh = *out->n_dh;
		if (nh + cnt[1] > *out->dh_cap) {
			*out->dh_cap = 2 * (nh + cnt[1]);
			*out->dh = sp_realloc(*out->dh, *out->dh_cap * sizeof **out->dh);
		}
		for (i = 0; i < cnt[1]; i++) {
			const uint32_t *h = s->hits + HIT_WORDS * i;
			align_dhit_t *e = *out->dh + nh + i;
			uint64_t w0 = h[3] | (uint64_t)h[4] << 32;
			if (h[0] >= n)
				return CL_INVALID_VALUE;
			e->beg = w0 & DW_BEG;
			e->seq = (uint32_t)(w0 >> 40);
			e->rs = h[5];
			e->len = h[6];
			e->dist = (int32_t)h[2];
			e->eoff = (uint32_t)at + h[1];
		}
		*out->n_dh = nh + cnt[1];
	} else {
		for (i = 0; i < cnt[1]; i++) {
			const uint32_t *h = s->hits + HIT_WORDS * i;
			if (h[0] >= n)
				return CL_INVALID_VALUE;
			out->dist[base + h[0]] = (int32_t)h[2];
			out->eoff[base + h[0]] = (uint32_t)at + h[1];
		}
	}
	*out->ends_len = at + cnt[0];
	rs->hits += cnt[1];
	rs->up += sizeof zero;
	rs->down += sizeof cnt + (size_t)cnt[1] * HIT_WORDS * 4 + cnt[0];
	rs->t_submit += t1 - t0;
	rs->t_wait += t2 - t1;
	rs->t_down += sp_now() - t2;
	return CL_SUCCESS;
fail:
	for (i = 0; i < 2; i++)
		if (ev[i])
			clReleaseEvent(ev[i]);
	return err;
}

/*
 * After the device ran short of memory in a run of C items on slot S:
 * its buffers released (ALL: those of the whole call too), and D's runs
 * no longer than C / 2 from here on.  CL_SUCCESS, or the error of the
 * queue.
 */
static cl_int dev_halve(align_dev_t *d, dev_slot_t *s, size_t c, int all, const char *what)
{
	cl_int err;

	slot_release(s, all);
	if ((err = clFinish(s->q)) != CL_SUCCESS)
		return err;
	pthread_mutex_lock(&d->lock);
	if (d->chunk > c / 2)
		d->chunk = c / 2;
	pthread_mutex_unlock(&d->lock);
	if (d->ctx->debug)
		sp_msg("align: the device is short of memory: runs of %zu %s", c / 2, what);
	return CL_SUCCESS;
}

/* D's most items of a run, within LIM (and at least one). */
static size_t dev_chunk(align_dev_t *d, size_t lim)
{
	size_t chunk;

	pthread_mutex_lock(&d->lock);
	chunk = d->chunk;
	pthread_mutex_unlock(&d->lock);
	if (chunk > lim)
		chunk = lim;
	return chunk < 1 ? 1 : chunk;
}

/* The longest run of windows of rows STRIDE bytes within D's share for a slot. */
static size_t dev_run_lim(const align_dev_t *d, size_t stride)
{
	uint64_t budget = ocl_mem_budget(d->ctx, 0.6) / (uint64_t)d->n_slot;
	size_t big = stride > sizeof(align_res_t) ? stride : sizeof(align_res_t);
	size_t lim = budget / (2 * stride + sizeof(align_res_t) + 32);

	if (lim > d->ctx->max_alloc / big)
		lim = d->ctx->max_alloc / big;
	if (lim > UINT32_MAX / stride)
		lim = UINT32_MAX / stride;
	return lim;
}

/*
 * The N windows (W, or with W NULL those on slot S's window buffer) in runs
 * that fit, halved when the device is short of memory; the counts of the
 * call added to D's stats.  CL_SUCCESS or the error.
 */
static cl_int dev_runs(align_dev_t *d, dev_slot_t *s, cl_kernel *k, const align_dwin_t *w,
		size_t n, size_t stride, cl_uint max_a, cl_uint flags, run_out_t *out, run_st_t *rs)
{
	size_t i, lim = dev_run_lim(d, stride);
	cl_int err;

	for (i = 0; i < n;) {
		size_t chunk = dev_chunk(d, lim), c = n - i < chunk ? n - i : chunk;

		err = dev_run(d, s, k, w ? w + i : NULL, i, c, stride, max_a, flags, out, rs);
		if (err != CL_SUCCESS && dev_short(err) && c > 1) {
			if ((err = dev_halve(d, s, c, 0, "windows")) != CL_SUCCESS)
				return err;
			continue;
		}
		if (err != CL_SUCCESS)
			return err;
		i += c;
		pthread_mutex_lock(&d->lock);
		d->st.runs++;
		pthread_mutex_unlock(&d->lock);
	}
	pthread_mutex_lock(&d->lock);
	d->st.calls++;
	d->st.pairs += n;
	d->st.hits += rs->hits;
	d->st.up_bytes += rs->up;
	d->st.down_bytes += rs->down;
	d->st.t_submit += rs->t_submit;
	d->st.t_wait += rs->t_wait;
	d->st.t_down += rs->t_down;
	pthread_mutex_unlock(&d->lock);
	return CL_SUCCESS;
}

/*
 * The reads of a call (ASCII, READS_LEN bytes, ROFF: 2 NR + 1 offsets) to
 * slot S, enqueued.  CL_SUCCESS or the error; their bytes added to RS.
 */
static cl_int dev_reads(align_dev_t *d, dev_slot_t *s, const uint8_t *reads, size_t reads_len,
		const size_t *roff, size_t nr, run_st_t *rs)
{
	size_t i, nro = 2 * nr + 1;
	cl_int err;

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
		return err;
	rs->up += reads_len + nro * 4;
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
	run_out_t out = { dist, eoff, NULL, NULL, NULL, ends, ends_cap, ends_len };
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
	if ((err = dev_reads(d, s, reads, reads_len, roff, nr, &rs)) != CL_SUCCESS)
		goto fail;
	rs.t_submit += sp_now() - t0;
	if ((err = dev_runs(d, s, k, w, n, stride, max_a, c_flags, &out, &rs)) != CL_SUCCESS)
		goto fail;
	return 0;
fail:
	snprintf(msg, msg_len, "alignment on the device failed: %s", ocl_strerror(err));
	return -1;
}

/* A free slot of D (waiting for one). */
static dev_slot_t *slot_take(align_dev_t *d)
{
	dev_slot_t *s = NULL;
	double t0 = sp_now();
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
	s->t_took = sp_now();
	d->st.t_slot_wait += s->t_took - t0;
	pthread_mutex_unlock(&d->lock);
	return s;
}

/* Give slot S of D back. */
static void slot_give(align_dev_t *d, dev_slot_t *s)
{
	pthread_mutex_lock(&d->lock);
	s->busy = 0;
	d->st.t_held += sp_now() - s->t_took;
	pthread_cond_signal(&d->free_slot);
	pthread_mutex_unlock(&d->lock);
}

/*
 * The end of a call of align_dev_cut or align_dev_trace on slot S: after an
 * error its queue drained, the slot given back; 0, or -1 with the message
 * (a program that did not build: the one sp_fail left).
 */
static int slot_end(align_dev_t *d, dev_slot_t *s, cl_int err, char *msg, size_t msg_len)
{
	if (err != CL_SUCCESS)
		clFinish(s->q);
	slot_give(d, s);
	if (err == CL_SUCCESS)
		return 0;
	snprintf(msg, msg_len, "alignment on the device failed: %s",
			err == CL_INVALID_PROGRAM ? sp_errmsg() : ocl_strerror(err));
	return -1;
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

int align_dev_seqs(align_dev_t *d, const uint64_t *off, const uint64_t *len, size_t n,
		const uint64_t *pbe, size_t n_part, char *msg, size_t msg_len)
{
	uint64_t *e = d->h_se = sp_realloc(d->h_se, (n ? n : 1) * sizeof *e);
	cl_int err = CL_SUCCESS;
	size_t i;

	d->h_pb = sp_realloc(d->h_pb, (n_part ? 2 * n_part : 1) * sizeof *d->h_pb);
	memcpy(d->h_pb, pbe, 2 * n_part * sizeof *pbe);
	for (i = 0; i < n; i++)
		e[i] = off[i] + len[i];
	ocl_release(d->sb);
	ocl_release(d->se);
	ocl_release(d->pb);
	d->se = d->pb = NULL;
	if ((d->sb = dev_buf(d->ctx, CL_MEM_READ_ONLY, n * 8, off, &err))
			&& (d->se = dev_buf(d->ctx, CL_MEM_READ_ONLY, n * 8, e, &err)))
		d->pb = dev_buf(d->ctx, CL_MEM_READ_ONLY, n_part * 16, pbe, &err);
	if (d->pb)
		err = ocl_finish_try(d->ctx);
	d->n_seq = n;
	d->n_part = n_part;
	if (!d->pb || err != CL_SUCCESS) {
		snprintf(msg, msg_len, "the sequence table (%zu sequences) does not go on the device: %s",
				n, ocl_strerror(err));
		return -1;
	}
	return 0;
}

void align_dev_tables(const align_dev_t *d, const uint64_t **pb, const uint64_t **se)
{
	*pb = d->h_pb;
	*se = d->h_se;
}

/* The pass-1 window length for reads of M bases (as ext_read_windows cuts). */
static uint64_t cut_len(uint64_t m, uint64_t a, uint64_t win)
{
	return m - 1 + a < win / 2 ? win : 4 * (m + a) < ALIGN_MAX_WIN ? 4 * (m + a) : ALIGN_MAX_WIN;
}

/*
 * Reads R0 .. R0 + NR of align_dev_cut on slot S (the call's reads up): the
 * windows cut into the slot's window buffer and aligned there.  CL_SUCCESS
 * or the error.
 */
static cl_int dev_cut_group(align_dev_t *d, dev_slot_t *s, cl_kernel *k, size_t r0, size_t nr,
		const uint64_t *keys, const align_dlists_t *ls, const uint32_t *coff, unsigned max_a,
		unsigned win, size_t stride, uint64_t *tot, run_out_t *out, char *msg, size_t msg_len)
{
	static const cl_uint zero[8] = { 0, 0, 0, 0, 0, 0, 0, 0 };
	cl_uint c_a = max_a, c_win = win, cnt[8];
	cl_ulong c_r0 = r0, c_nr = nr, c_cap;
	size_t kb = coff[r0], nk = coff[r0 + nr] - kb, cap, nw;
	const char *e = getenv("SEEDPIPE_ALIGN_CUT_CAP");
	uint64_t kst[3] = { 0, 0, 0 }, lo;   /* align_keys_run's: bytes up, flagged, by groups */
	run_st_t rs;
	cl_int err;
	double t0 = sp_now();

	memset(&rs, 0, sizeof rs);
	/* the windows' room: as many as candidates (more is rare: a second cut) */
	cap = e && atol(e) > 0 ? (size_t)atol(e) : nk ? nk : 1;
	if ((err = dev_need(d, s, DB_KEYS, nk * 8))
			|| (err = dev_need(d, s, DB_COFF, (nr + 1) * 4))
			|| (err = dev_need(d, s, DB_CNT, sizeof zero))
			|| (err = pin_need(d, s, keys ? (nr + 1) * 4 : (4 * nr + 1) * 4
					+ align_keys_span(ls, r0, nr, &lo))))
		return err;
	/* the keys straight from the caller, read before the count comes back below */
	memcpy(s->pin_p, coff + r0, (nr + 1) * 4);
	if ((nk && keys && (err = clEnqueueWriteBuffer(s->q, s->buf[DB_KEYS], CL_FALSE, 0,
						nk * 8, keys + kb, 0, NULL, NULL)))
			|| (err = clEnqueueWriteBuffer(s->q, s->buf[DB_COFF], CL_FALSE, 0, (nr + 1) * 4,
					s->pin_p, 0, NULL, NULL)))
		return err;
	rs.up += (keys ? nk * 8 : 0) + (nr + 1) * 4;
	if (!keys) {     /* decoded on the device from the lists */
		cl_event ev[3] = { NULL, NULL, NULL };
		if ((err = dev_need(d, s, DB_LIST, align_keys_span(ls, r0, nr, &lo)))
				|| (err = dev_need(d, s, DB_LOFF, nr * 8))
				|| (err = dev_need(d, s, DB_FLAG, nr * 4))
				|| (err = dev_need(d, s, DB_RIX, nr * 4)) || (err = dev_need(d, s, DB_FIX, nr * 4)))
			return err;
		align_keys_dev_t kd = { d->ctx, s->q, k[5], k[6], k[7], d->keys_wg[0],
			d->keys_wg[1], s->buf[DB_LIST], s->buf[DB_LOFF], s->buf[DB_COFF],
			s->buf[DB_KEYS], s->buf[DB_FLAG], s->buf[DB_CNT], s->buf[DB_RIX],
			s->buf[DB_FIX], d->pb, d->sb, d->se, (uint32_t)d->n_part, (uint32_t)d->n_seq,
			d->ref_len, s->pin_p,
			{ PROF_EV(d, &ev[0]), PROF_EV(d, &ev[1]), PROF_EV(d, &ev[2]) } };
		err = align_keys_run(&kd, ls, coff, r0, nr, kst, msg, msg_len);
		prof_add(d, ev[0], &d->st.k_keys);
		prof_add(d, ev[1], &d->st.k_keys_wg);
		prof_add(d, ev[2], &d->st.k_keys_wg);
		rs.up += kst[0];
		if (err)
			return err;
	}
	for (;;) {
		cl_event ev = NULL;
		c_cap = cap;
		if ((err = dev_need(d, s, DB_WP, cap * 16))
				|| (err = clEnqueueWriteBuffer(s->q, s->buf[DB_CNT], CL_FALSE, 0, sizeof zero,
						zero, 0, NULL, NULL))
				|| (err = ocl_args_try(k[4], 12, sizeof(cl_mem), &s->buf[DB_ROFF],
						sizeof(cl_mem), &s->buf[DB_KEYS], sizeof(cl_mem), &s->buf[DB_COFF],
						sizeof c_r0, &c_r0, sizeof c_nr, &c_nr, sizeof c_a, &c_a,
						sizeof c_win, &c_win, sizeof(cl_mem), &d->sb, sizeof(cl_mem), &d->se,
						sizeof(cl_mem), &s->buf[DB_WP], sizeof c_cap, &c_cap, sizeof(cl_mem),
						&s->buf[DB_CNT]))
				|| (err = ocl_run_q(d->ctx, s->q, k[4], nk, PROF_EV(d, &ev))))
			return err;
		err = clEnqueueReadBuffer(s->q, s->buf[DB_CNT], CL_TRUE, 0, sizeof cnt, cnt, 0, NULL,
				NULL);
		prof_add(d, ev, &d->st.k_cut);
		if (err)
			return err;
		nw = cnt[2];
		rs.down += sizeof cnt;
		if (nw <= cap)
			break;
		cap = nw;      /* more windows than room: cut again */
		pthread_mutex_lock(&d->lock);
		d->st.c_again++;
		pthread_mutex_unlock(&d->lock);
	}
	tot[0] += nw;
	tot[1] += cnt[3] | (uint64_t)cnt[4] << 32;
	pthread_mutex_lock(&d->lock);
	d->st.c_cands += nk;
	d->st.c_up_bytes += rs.up;
	d->st.c_t_cut += sp_now() - t0;
	d->st.c_host_reads += kst[1];
	d->st.c_wg_reads += kst[2];
	pthread_mutex_unlock(&d->lock);
	memset(&rs, 0, sizeof rs);
	return dev_runs(d, s, k, NULL, nw, stride, max_a, ALIGN_ENDS | ALIGN_NOCIGAR | ALIGN_PACKED,
			out, &rs);
}

/*
 * align_dev_cut on slot S: the reads up, then groups of reads cut and
 * aligned (dev_cut_group), the groups halved when the device is short of
 * memory.  CL_SUCCESS or the error.
 */
static cl_int dev_cut(align_dev_t *d, dev_slot_t *s, const uint8_t *reads, size_t reads_len,
		const size_t *roff, size_t nr, const uint64_t *keys, const align_dlists_t *ls,
		const uint32_t *coff, unsigned max_a, unsigned win, uint64_t *tot, run_out_t *out,
		char *msg, size_t msg_len)
{
	size_t i, r0, stride = 1;
	uint32_t longest = 0;
	run_st_t rs;
	cl_kernel *k;
	cl_int err;

	memset(&rs, 0, sizeof rs);
	for (i = 0; i < nr; i++) {
		uint64_t m = roff[2 * i + 1] - roff[2 * i];
		if (coff[i + 1] > coff[i] && m >= 1 && m <= ALIGN_MAX_READ && m > longest)
			longest = (uint32_t)m;
	}
	if (longest)
		stride = (size_t)cut_len(longest, max_a, win);
	if (!(k = dev_kernel(d, s, longest, &err)))
		return err != CL_SUCCESS ? err : CL_INVALID_PROGRAM;
	if ((err = dev_reads(d, s, reads, reads_len, roff, nr, &rs)) != CL_SUCCESS)
		return err;
	for (r0 = 0; r0 < nr;) {
		size_t g;
		pthread_mutex_lock(&d->lock);
		g = d->cut_reads;
		pthread_mutex_unlock(&d->lock);
		if (g > nr - r0)
			g = nr - r0;
		uint64_t t[2] = { 0, 0 };
		err = dev_cut_group(d, s, k, r0, g, keys, ls, coff, max_a, win, stride, t, out, msg,
				msg_len);
		if (err != CL_SUCCESS && dev_short(err) && g > 1) {
			/* the hits of the group so far are dropped: it is cut again */
			while (*out->n_dh && out->dh[0][*out->n_dh - 1].rs >> 1 >= r0)
				--*out->n_dh;
			*out->ends_len = s->group_ends;
			slot_release(s, 0);
			if ((err = clFinish(s->q)) != CL_SUCCESS)
				return err;
			pthread_mutex_lock(&d->lock);
			if (d->cut_reads > g / 2)
				d->cut_reads = g / 2;
			pthread_mutex_unlock(&d->lock);
			if (d->ctx->debug)
				sp_msg("align: the device is short of memory: cuts of %zu reads", g / 2);
			continue;
		}
		if (err != CL_SUCCESS)
			return err;
		r0 += g;
		tot[0] += t[0];
		tot[1] += t[1];
		s->group_ends = *out->ends_len;
	}
	pthread_mutex_lock(&d->lock);
	d->st.c_calls++;
	d->st.c_up_bytes += rs.up;
	pthread_mutex_unlock(&d->lock);
	return CL_SUCCESS;
}

int align_dev_cut(align_dev_t *d, const uint8_t *reads, size_t reads_len, const size_t *roff,
		size_t nr, const uint64_t *keys, const align_dlists_t *ls, const uint32_t *coff,
		unsigned max_a, unsigned win, uint64_t *tot, align_dhit_t **dh, size_t *dh_cap,
		size_t *n_dh, uint8_t **ends, size_t *ends_cap, size_t *ends_len, char *msg,
		size_t msg_len)
{
	run_out_t out = { NULL, NULL, dh, dh_cap, n_dh, ends, ends_cap, ends_len };
	dev_slot_t *s;
	cl_int err;
	size_t i;

	*n_dh = 0;
	*ends_len = 0;
	if (max_a > ALIGN_MAX_A || reads_len > UINT32_MAX || roff[2 * nr] > reads_len || !d->pb
			|| win > ALIGN_MAX_WIN || coff[0] != 0 || (!keys && !ls)) {
		snprintf(msg, msg_len, "a batch beyond the device's limits (bound %u, %zu read bytes)",
				max_a, reads_len);
		return -1;
	}
	for (i = 0; i < nr; i++)
		if (coff[i + 1] < coff[i]) {
			snprintf(msg, msg_len, "the candidates of read %zu are out of order", i);
			return -1;
		}
	if (keys && align_keys_check(keys, coff[nr], 0, (uint32_t)d->n_seq, d->ref_len, msg,
				msg_len) < 0)
		return -1;
	tot[0] = tot[1] = 0;
	if (!nr || !coff[nr])
		return 0;
	s = slot_take(d);
	s->group_ends = 0;
	err = dev_cut(d, s, reads, reads_len, roff, nr, keys, ls, coff, max_a, win, tot, &out, msg,
			msg_len);
	if (err == ALIGN_KEYS_FAILED) {   /* the message is the host's */
		clFinish(s->q);
		slot_give(d, s);
		return -1;
	}
	return slot_end(d, s, err, msg, msg_len);
}

/* align_dev_trace on slot S. */
static cl_int dev_trace(align_dev_t *d, dev_slot_t *s, const uint8_t *reads, size_t reads_len,
		const uint8_t *wins, size_t wins_len, const align_pair_t *pairs, size_t n,
		unsigned max_a, align_res_t *res, size_t *used)
{
	size_t i, ws_words = 1, chunk, lim;
	uint32_t longest = 0;
	cl_ulong c_base, c_n, c_stride = 1;
	cl_uint c_a = max_a, c_flags = 0;
	cl_kernel *k;
	cl_int err;
	cl_event ev[TRACE_PROF_EV];
	size_t nev = 0;
	double t0 = sp_now(), t1;

	for (i = 0; i < n; i++) {
		size_t ww = align_ws_words(pairs[i].win_len, pairs[i].read_len);
		if (ww > ws_words)
			ws_words = ww;
		if (pairs[i].read_len > longest)
			longest = pairs[i].read_len;
	}
	*used = 1;
	if (!(k = dev_kernel(d, s, longest, &err)))
		return err != CL_SUCCESS ? err : CL_INVALID_PROGRAM;
	if ((err = dev_need(d, s, DB_READS, reads_len)) || (err = dev_need(d, s, DB_T_WINS, wins_len))
			|| (err = dev_need(d, s, DB_T_PAIRS, n * sizeof *pairs))
			|| (err = dev_need(d, s, DB_T_RES, n * sizeof *res))
			|| (err = dev_need(d, s, DB_CNT, 16))
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
	chunk = dev_chunk(d, lim);
	if (chunk > n)
		chunk = n;
	*used = chunk;
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
		if (err || (err = ocl_run_q(d->ctx, s->q, k[3], (size_t)c_n,
							PROF_EV(d, nev < TRACE_PROF_EV ? &ev[nev] : NULL))))
			break;
		nev += d->prof && nev < TRACE_PROF_EV;
	}
	t1 = sp_now();
	if (err == CL_SUCCESS)
		err = clEnqueueReadBuffer(s->q, s->buf[DB_T_RES], CL_TRUE, 0, n * sizeof *res, res, 0,
				NULL, NULL);
	for (i = 0; i < nev; i++)
		prof_add(d, ev[i], &d->st.k_trace);
	if (err)
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
	size_t i, c;

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
	while ((err = dev_trace(d, s, reads, reads_len, wins, wins_len, pairs, n, max_a, res, &c))
			!= CL_SUCCESS && dev_short(err) && c > 1)
		if ((err = dev_halve(d, s, c, 1, "pairs")) != CL_SUCCESS)
			break;
	return slot_end(d, s, err, msg, msg_len);
}
