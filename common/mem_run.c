/*
 * mem_run.c - seedfilt -m mem (its options: tools/seedfilt_mem.c): the
 * batch pipeline (read, the reads parsed ahead by mem_ahead.c; find on the
 * device, or find and finish on the CPU threads; finish; write) and the
 * summary.  The matching is in mem.c (CPU)
 * and mem_ocl.c (OpenCL); see mem.h and man/seedfilt.1.
 */
#include "mem.h"

#include "filt.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mem_ahead.h"
#include "ocl.h"
#include "rec.h"
#include "seqio.h"
#include "sp_thread.h"
#include "util.h"

#define DEF_BATCH MEM_DEF_BATCH
#define DEF_BATCH_DEV MEM_DEF_BATCH_DEV
#define BATCH_BASES (64u << 20)   /* a batch ends after this many read bases */
#define BATCH_OUT (16u << 20)     /* output bytes a batch should make at most */
/*
 * With a device, whose kernels want many strands: the batches in flight hold
 * their text, their reads and their page-locked arrays of matches, about
 * 25 times this at chrX, 1M reads, L 30 on an H100 (128 MB: 1.8 GB resident;
 * 32 MB: 0.8 GB, below mummer's 1.1 GB).  The price: each batch's fixed work
 * on the device's thread (strands up, counts, syncs), 0.1-0.2 s more there.
 */
#define BATCH_OUT_DEV (32u << 20)
#define BATCH_FIRST 512           /* reads of the first batches, before their output is known */
#define BATCH_MIN 256

enum { OUT_CANDS, OUT_MUMMER };

/*
 * Sets of text buffers kept for the next batches: only the batches between
 * formatting and writing hold them (two at a time), and a kept buffer's
 * pages need no fault and no clearing (at 16 threads the faults took as
 * long as the formatting).
 */
#define OUT_POOL 2
/*
 * Read batches' arrays kept for the next batches too: fresh ones came from
 * the system each batch (mallopt below) and step 0 paid their page faults
 * (1M chrX reads at L 30: 42 batches, step 0 0.33 s beside the device's 0.32).
 */
#define READS_POOL 2

/* ---- batches ---------------------------------------------------------------- */

/* A read: offsets into the batch's arena and words; its output slice. */
typedef struct {
	uint64_t id;
	size_t name, comment, seq, qual, rc;   /* arena offsets; qual SIZE_MAX: none */
	uint32_t name_len, comment_len, len;
	size_t words[2];                        /* word offsets of the strands */
	size_t out_off, out_len;
	int out_tid;
} mread_t;

typedef struct {
	size_t n;
	mread_t *r;
	char *arena;
	size_t arena_len, arena_cap;
	uint32_t *words;
	size_t nwords, wcap;
	size_t rcap;              /* reads R holds */
	/* the device path: the strands' words and lengths (prepared in step 0) and the raw
	 * matches of strand 2r+s at raw[roff[2r+s] ..] */
	uint64_t *woff;
	uint32_t *slen;
	mem_raw_t *raw;
	cl_event done;            /* the matches' download (mem_dev_wait before they are read) */
	uint64_t *roff;
	/* -M in passes (the CPU path): the raw matches of each pass, per thread, and
	 * where those of strand 2r+s in group g lie: gref[(2r+s) * groups + g] */
	mem_rawvec_t *gv;
	struct gref { uint64_t off, n; int tid; } *gref;
	size_t raw_bytes, raw_made;             /* held now; made in the passes (adapt_batch) */
	mem_buf_t *out;                         /* per thread */
	size_t acct[2];                         /* bytes of the batch's reads and text (the -v memory line) */
	struct run *ru;
	sp_job fin;                             /* the device path: its reads' finish, on the crew */
} batch_t;

typedef struct {
	mem_scratch_t *s;
	mem_rawvec_t raw;
	mem_vec_t mv[2];
	rec_cand_t *cb;
	size_t cb_cap;
	mem_stats_t st;
	double t_fin, t_fmt;      /* thread-seconds in stages 2 and 3 (with -v or SEEDPIPE_DEBUG) */
} tls_t;

typedef struct run {
	const mem_idx_t *mi;
	const mem_budget_t *bud;  /* -M: in passes over groups of partitions when bud->n_groups */
	uint32_t pass;            /* the group of the pass under way (find_pass) */
	batch_t *pcur;            /* the batch of find_pass (step 2, beside step 3's ru->cur) */
	double t_parts;           /* the groups brought into memory and let go */
	size_t batch_bases;       /* a batch ends after this many read bases */
	mem_dev_t *dev;
	filt_in_t *in;
	ahead_t ah;               /* the reads, parsed ahead */
	int nthreads, fmt, four, fd;
	const char *out;          /* -o with -O mummer ("-": standard output) */
	size_t batch;             /* -B: reads per batch at most */
	size_t batch_cur;         /* reads of the next batch (atomic): fewer when reads make much output */
	size_t batch_out;         /* output bytes a batch should make: BATCH_OUT(_DEV) or $SEEDPIPE_MEM_BATCH_OUT */
	rec_writer_t *w;
	tls_t *tls;
	sp_crew *crew;            /* the device path, 2 threads or more: finishes the batches (step 3) */
	sp_crew *pcrew;           /* and packs their strands (step 1) */
	batch_t *cur;             /* the batch of work_read */
	batch_t *prep;            /* the batch of prep_one (device path) */
	double t_read, t_find, t_finish, t_write, t_prep;
	double t_fwait;           /* step 4's wait for the crew (the finish's part after step 3) */
	double arena_per_read;    /* the last batch's arena bytes and words a read (step 0 sizes */
	double words_per_read;    /* the next one's arrays by them) */
	int timed;                /* -v or SEEDPIPE_DEBUG: time the stages */
	uint64_t reads, raw_dev, batches;
	/* the text buffers of batches written (one per thread each), for the next ones */
	pthread_mutex_t pool_mu;
	mem_buf_t *pool[OUT_POOL];
	int n_pool;
	struct rshell { mread_t *r; char *arena; uint32_t *words; size_t rcap, arena_cap, wcap; } rpool[READS_POOL];
	int n_rpool;              /* (pool_mu) */
	int rpool_max;            /* READS_POOL or $SEEDPIPE_MEM_READS_POOL (measurements, tests) */
	/* -v: bytes held by the batches in flight (reads, text) and the text pool, now and at most */
	pthread_mutex_t acct_mu;
	size_t acct_cur[3], acct_max[3], acct_sum_max;
} run_t;

enum { ACCT_READS, ACCT_TEXT, ACCT_POOL };

/* The -v memory line's accounts: KIND grows by ADD bytes and shrinks by SUB. */
static void acct_add(run_t *ru, int kind, size_t add, size_t sub)
{
	size_t sum;

	if (!ru->timed)
		return;
	pthread_mutex_lock(&ru->acct_mu);
	ru->acct_cur[kind] += add;
	ru->acct_cur[kind] -= sub;
	if (ru->acct_cur[kind] > ru->acct_max[kind])
		ru->acct_max[kind] = ru->acct_cur[kind];
	sum = ru->acct_cur[0] + ru->acct_cur[1] + ru->acct_cur[2];
	if (sum > ru->acct_sum_max)
		ru->acct_sum_max = sum;
	pthread_mutex_unlock(&ru->acct_mu);
}

/* Bytes of the text buffers of a batch (one per thread). */
static size_t text_bytes(const run_t *ru, const mem_buf_t *out)
{
	size_t n = 0;
	int t;

	for (t = 0; out && t < ru->nthreads; t++)
		n += out[t].cap;
	return n;
}

/* Resident and peak resident memory in MB (Linux's /proc), -1 when unknown. */
static void rss_mb(double *rss, double *hwm)
{
	FILE *fp = fopen("/proc/self/status", "r");
	char line[256];

	*rss = *hwm = -1;
	if (!fp)
		return;
	while (fgets(line, sizeof line, fp)) {
		if (!strncmp(line, "VmRSS:", 6))
			*rss = atof(line + 6) / 1024;
		else if (!strncmp(line, "VmHWM:", 6))
			*hwm = atof(line + 6) / 1024;
	}
	fclose(fp);
}

/* The batch's output buffers (empty), at the step that fills them: kept ones or new. */
static void out_get(run_t *ru, batch_t *b)
{
	int t;

	pthread_mutex_lock(&ru->pool_mu);
	b->out = ru->n_pool ? ru->pool[--ru->n_pool] : NULL;
	pthread_mutex_unlock(&ru->pool_mu);
	acct_add(ru, ACCT_POOL, 0, text_bytes(ru, b->out));
	if (!b->out)
		b->out = sp_calloc((size_t)ru->nthreads, sizeof *b->out);
	for (t = 0; t < ru->nthreads; t++)
		b->out[t].n = 0;
}

static size_t arena_add(batch_t *b, const char *s, size_t n)
{
	size_t o = b->arena_len;

	if (b->arena_len + n + 1 > b->arena_cap) {
		b->arena_cap = (b->arena_len + n + 1) * 2;
		b->arena = sp_realloc(b->arena, b->arena_cap);
	}
	if (s && n)
		memcpy(b->arena + o, s, n);
	b->arena[o + n] = 0;
	b->arena_len += n + 1;
	return o;
}

/* -M in passes: the batch's raw matches, once stage 2 has them. */
static void pass_free(run_t *ru, batch_t *b)
{
	int t;

	if (b->gv)
		for (t = 0; t < ru->nthreads; t++)
			free(b->gv[t].a);
	free(b->gv);
	free(b->gref);
	b->gv = NULL;
	b->gref = NULL;
	acct_add(ru, ACCT_READS, 0, b->raw_bytes);
	b->acct[0] -= b->raw_bytes;
	b->raw_bytes = 0;
}

static void batch_free(run_t *ru, batch_t *b)
{
	int t;

	if (!b)
		return;
	if (b->fin.added)   /* dropped after a failure: its reads finished first (the crew has them) */
		sp_crew_wait(ru->crew, &b->fin, ru->nthreads - 1);
	pthread_mutex_lock(&ru->pool_mu);
	if (ru->n_rpool < ru->rpool_max && b->r) {
		struct rshell *h = &ru->rpool[ru->n_rpool++];

		h->r = b->r;
		h->arena = b->arena;
		h->words = b->words;
		h->rcap = b->rcap;
		h->arena_cap = b->arena_cap;
		h->wcap = b->wcap;
		acct_add(ru, ACCT_POOL, b->rcap * sizeof *b->r + b->arena_cap + b->wcap * sizeof *b->words, 0);
		b->r = NULL;
		b->arena = NULL;
		b->words = NULL;
	}
	pthread_mutex_unlock(&ru->pool_mu);
	free(b->r);
	free(b->arena);
	free(b->words);
	if (b->done)    /* a batch dropped after a failure: its array is not given back while written */
		mem_dev_wait(ru->dev, &b->done);
	if (b->raw)
		mem_dev_raw_free(ru->dev, b->raw);
	free(b->woff);
	free(b->slen);
	free(b->roff);
	pass_free(ru, b);
	acct_add(ru, ACCT_READS, 0, b->acct[0]);
	acct_add(ru, ACCT_TEXT, 0, b->acct[1]);
	if (b->out) {   /* kept for a later batch: its pages are mapped already */
		size_t tb = text_bytes(ru, b->out);

		pthread_mutex_lock(&ru->pool_mu);
		if (ru->n_pool < OUT_POOL) {
			ru->pool[ru->n_pool++] = b->out;
			b->out = NULL;
		}
		pthread_mutex_unlock(&ru->pool_mu);
		if (!b->out)
			acct_add(ru, ACCT_POOL, tb, 0);
		if (b->out)
			for (t = 0; t < ru->nthreads; t++)
				free(b->out[t].a);
		free(b->out);
	}
	free(b);
}

/* The next batch of reads, NULL at the end (*ERR: -1 after sp_fail). */
static batch_t *batch_read(run_t *ru, int *err)
{
	const mem_opt_t *o = mem_idx_opt(ru->mi);
	batch_t *b = sp_calloc(1, sizeof *b);
	size_t cap = 0, bases = 0;
	rec_read_t rd = { 0 };   /* (ahead_next sets it before use) */
	int st = 0;

	size_t want = __atomic_load_n(&ru->batch_cur, __ATOMIC_RELAXED);

	*err = 0;
	pthread_mutex_lock(&ru->pool_mu);
	if (ru->n_rpool) {   /* a written batch's arrays, mapped already */
		struct rshell *h = &ru->rpool[--ru->n_rpool];

		b->r = h->r;
		b->arena = h->arena;
		b->words = h->words;
		cap = b->rcap = h->rcap;
		b->arena_cap = h->arena_cap;
		b->wcap = h->wcap;
		acct_add(ru, ACCT_POOL, 0, cap * sizeof *b->r + b->arena_cap + b->wcap * sizeof *b->words);
	}
	pthread_mutex_unlock(&ru->pool_mu);
	if (ru->arena_per_read > 0) {   /* one allocation, not a doubling series of copies */
		double a = ru->arena_per_read * (double)want * 1.125 + 4096;
		size_t n = a < 4.0 * ru->batch_bases ? (size_t)a : 4 * ru->batch_bases;

		if (b->arena_cap < n) {
			free(b->arena);
			b->arena_cap = n;
			b->arena = sp_malloc(b->arena_cap);
		}
		n = want < (ru->batch_bases >> 4) ? want : ru->batch_bases >> 4;
		if (cap < n) {
			free(b->r);
			cap = n;
			b->r = sp_malloc(cap * sizeof *b->r);
		}
		if (ru->words_per_read > 0) {
			a = ru->words_per_read * (double)want * 1.125 + 64;
			n = a < ru->batch_bases ? (size_t)a : ru->batch_bases;
			if (b->wcap < n) {
				free(b->words);
				b->wcap = n;
				b->words = sp_malloc(b->wcap * sizeof *b->words);
			}
		}
	}
	while (b->n < want && bases < ru->batch_bases && (st = mem_ahead_next(&ru->ah, &rd)) > 0) {
		mread_t *r;
		int s;

		if (rd.seq_len >= 1u << 31) {   /* the device path flags lengths in bit 31 */
			st = sp_fail("read '%.*s' is longer than 2 Gbases", (int)rd.name_len, rd.name);
			break;
		}

		if (b->n == cap) {
			cap = cap ? 2 * cap : 1024;
			b->r = sp_realloc(b->r, cap * sizeof *b->r);
		}
		r = &b->r[b->n++];
		r->id = rd.id;
		r->name = arena_add(b, rd.name, rd.name_len);
		r->comment = arena_add(b, rd.comment, rd.comment_len);
		r->seq = arena_add(b, rd.seq, rd.seq_len);
		r->qual = rd.qual ? arena_add(b, rd.qual, rd.seq_len) : SIZE_MAX;
		r->rc = arena_add(b, NULL, rd.seq_len);     /* filled by prep_read */
		r->name_len = rd.name_len;
		r->comment_len = rd.comment_len;
		r->len = rd.seq_len;
		bases += rd.seq_len;
		for (s = 0; s < 2; s++) {
			size_t nw = mem_words_len(r->len);

			r->words[s] = b->nwords;
			if (!(o->strands & (s ? MEM_REV : MEM_FWD)) || r->len < o->L)
				continue;
			if (b->nwords + nw > b->wcap) {
				b->wcap = (b->nwords + nw) * 2;
				b->words = sp_realloc(b->words, b->wcap * sizeof *b->words);
			}
			b->nwords += nw;                    /* packed by prep_read */
		}
	}
	b->rcap = cap;
	if (b->n == 0 || st < 0) {
		batch_free(ru, b);
		*err = st < 0 ? -1 : 0;
		return NULL;
	}
	ru->arena_per_read = (double)b->arena_len / (double)b->n;
	ru->words_per_read = (double)b->nwords / (double)b->n;
	b->acct[0] = cap * sizeof *b->r + b->arena_cap + b->wcap * sizeof *b->words;
	acct_add(ru, ACCT_READS, b->acct[0], 0);
	return b;
}

/* Read I's reverse complement and packed strands (on the worker threads). */
static void prep_read(const run_t *ru, batch_t *b, size_t i)
{
	const mem_opt_t *o = mem_idx_opt(ru->mi);
	const mread_t *r = &b->r[i];
	int s;

	seqio_revcomp(b->arena + r->rc, b->arena + r->seq, r->len);
	for (s = 0; s < 2; s++)
		if ((o->strands & (s ? MEM_REV : MEM_FWD)) && r->len >= o->L)
			mem_pack(b->words + r->words[s], b->arena + (s ? r->rc : r->seq), r->len);
}

/* Read I of the batch of step 0 ready for the device: its strands packed, their lengths and places. */
static int prep_one(void *vctx, size_t i, int tid)
{
	run_t *ru = vctx;
	batch_t *b = ru->prep;
	const mread_t *r = &b->r[i];
	const mem_opt_t *o = mem_idx_opt(ru->mi);
	int s;

	(void)tid;
	prep_read(ru, b, i);
	for (s = 0; s < 2; s++) {
		uint32_t *len = &b->slen[2 * i + s];

		b->woff[2 * i + s] = r->words[s];
		*len = o->strands & (s ? MEM_REV : MEM_FWD) ? r->len : 0;
		if (*len && mem_deep_ok(ru->mi, b->arena + (s ? r->rc : r->seq), r->len))
			*len |= 1u << 31;
	}
	return 0;
}

/* The strand S of read R of batch B. */
static mem_strand_t strand_of(const batch_t *b, const mread_t *r, int s)
{
	mem_strand_t st;

	st.seq = b->arena + (s ? r->rc : r->seq);
	st.words = b->words ? b->words + r->words[s] : NULL;   /* none: no strand was packed */
	st.m = r->len;
	return st;
}

/* Find (on the CPU unless the device did), finish and format read I of batch B. */
static int read_one(run_t *ru, batch_t *b, size_t i, int tid)
{
	mread_t *r = &b->r[i];
	tls_t *t = &ru->tls[tid];
	const mem_opt_t *o = mem_idx_opt(ru->mi);
	const idx_t *x = mem_idx_x(ru->mi);
	mem_buf_t *ob = &b->out[tid];
	size_t nm[2] = { 0, 0 };
	double t0 = ru->timed ? sp_now() : 0, t1 = 0;
	int s;

	if (!b->roff && !b->gref)
		prep_read(ru, b, i);        /* the device path and the passes prepared the batch before */
	t->st.reads++;
	for (s = 0; s < 2; s++) {
		mem_strand_t st = strand_of(b, r, s);
		mem_raw_t *raw;
		size_t nraw;
		uint32_t p;

		if (!(o->strands & (s ? MEM_REV : MEM_FWD)))
			continue;
		t->st.strands++;
		if (b->roff) {
			raw = b->raw + b->roff[2 * i + s];
			nraw = b->roff[2 * i + s + 1] - b->roff[2 * i + s];
		} else if (b->gref) {   /* the passes' matches, group by group (mem_find_fm's order) */
			uint32_t g, ng = ru->bud->n_groups;

			t->raw.n = 0;
			for (g = 0; g < ng; g++) {
				const struct gref *q = &b->gref[(2 * i + s) * ng + g];

				if (t->raw.n + q->n > t->raw.cap) {
					t->raw.cap = (t->raw.n + q->n) * 2;
					t->raw.a = sp_realloc(t->raw.a, t->raw.cap * sizeof *t->raw.a);
				}
				if (q->n)
					memcpy(t->raw.a + t->raw.n, b->gv[q->tid].a + q->off, q->n * sizeof *t->raw.a);
				t->raw.n += q->n;
			}
			raw = t->raw.a;
			nraw = t->raw.n;
		} else {
			t->raw.n = 0;
			if (st.m >= o->L)
				for (p = 0; p < x->n_part; p++)
					mem_find_fm(ru->mi, p, &st, &t->raw, &t->st, t->s);
			raw = t->raw.a;
			nraw = t->raw.n;
		}
		nm[s] = mem_finish(ru->mi, &st, raw, nraw, &t->mv[s], t->s);
		t->st.mems += nm[s];
	}
	r->out_tid = tid;
	r->out_off = ob->n;
	if (ru->timed) {
		t1 = sp_now();
		t->t_fin += t1 - t0;
	}
	if (ru->fmt == OUT_MUMMER) {
		for (s = 0; s < 2; s++)
			if (o->strands & (s ? MEM_REV : MEM_FWD))
				mem_fmt_mummer(ru->mi, ob, b->arena + r->name, r->name_len, s, r->len,
						t->mv[s].a, nm[s], ru->four);
	} else {
		uint32_t nc = mem_cands(ru->mi, t->mv[0].a, nm[0], t->mv[1].a, nm[1], &t->cb, &t->cb_cap);
		rec_read_t rd;
		size_t need;

		rd.id = r->id;
		rd.mate = 0;            /* -m mem takes single reads only */
		rd.name = b->arena + r->name;
		rd.comment = b->arena + r->comment;
		rd.seq = b->arena + r->seq;
		rd.qual = r->qual == SIZE_MAX ? NULL : b->arena + r->qual;
		rd.name_len = r->name_len;
		rd.comment_len = r->comment_len;
		rd.seq_len = r->len;
		need = rec_cands_size(&rd, nc);
		if (ob->n + need > ob->cap) {
			ob->cap = (ob->n + need) * 2;
			ob->a = sp_realloc(ob->a, ob->cap);
		}
		ob->n += rec_cands_encode((uint8_t *)ob->a + ob->n, &rd, t->cb, nc);
	}
	r->out_len = ob->n - r->out_off;
	if (ru->timed)
		t->t_fmt += sp_now() - t1;
	return 0;
}

static int work_read(void *vctx, size_t i, int tid)   /* sp_for: read I of ru->cur */
{
	return read_one(vctx, ((run_t *)vctx)->cur, i, tid);
}

static int crew_read(void *vb, size_t i, int tid)     /* the crew: read I of its batch */
{
	return read_one(((batch_t *)vb)->ru, vb, i, tid);
}

/* Step 3's end for batch B: its text counted, its raw matches let go. */
static void finish_end(run_t *ru, batch_t *b)
{
	b->acct[1] = text_bytes(ru, b->out);
	acct_add(ru, ACCT_TEXT, b->acct[1], 0);
	if (ru->dev)
		mem_dev_raw_free(ru->dev, b->raw);   /* for the next batches: one array fewer in flight */
	b->raw = NULL;
	pass_free(ru, b);
}

/* -M in passes: read I of the current batch searched in the partitions of group ru->pass. */
static int find_pass(void *vctx, size_t i, int tid)
{
	run_t *ru = vctx;
	batch_t *b = ru->pcur;
	const mread_t *r = &b->r[i];
	tls_t *t = &ru->tls[ru->nthreads + tid];   /* step 3's threads have the first ones */
	const mem_budget_t *bu = ru->bud;
	const mem_opt_t *o = mem_idx_opt(ru->mi);
	uint32_t g = ru->pass, ng = bu->n_groups, p;
	int s;

	if (g == 0)
		prep_read(ru, b, i);
	for (s = 0; s < 2; s++) {
		struct gref *q = &b->gref[(2 * i + s) * ng + g];
		mem_strand_t st = strand_of(b, r, s);

		q->tid = tid;
		q->off = b->gv[tid].n;
		if ((o->strands & (s ? MEM_REV : MEM_FWD)) && st.m >= o->L)
			for (p = bu->gbeg[g]; p < bu->gbeg[g + 1]; p++)
				mem_find_fm(ru->mi, p, &st, &b->gv[tid], &t->st, t->s);
		q->n = b->gv[tid].n - q->off;
	}
	return 0;
}

/* -M in passes: the batch past every group of partitions in turn, each in memory for its pass. */
static int find_passes(run_t *ru, batch_t *b)
{
	const mem_budget_t *bu = ru->bud;
	const idx_t *x = mem_idx_x(ru->mi);
	uint32_t g, p;
	int t, rc = 0;

	b->gv = sp_calloc((size_t)ru->nthreads, sizeof *b->gv);
	b->gref = sp_calloc(2 * b->n * bu->n_groups, sizeof *b->gref);
	ru->pcur = b;
	for (g = 0; g < bu->n_groups && rc == 0; g++) {
		double t0 = sp_now();

		for (p = bu->gbeg[g]; p < bu->gbeg[g + 1]; p++)
			mem_part_load(x, p);
		ru->t_parts += sp_now() - t0;
		ru->pass = g;
		/* chunks of a few reads: a batch under a tight budget holds a few hundred */
		rc = sp_for(ru->nthreads, b->n, 4, find_pass, ru);
		t0 = sp_now();
		for (p = bu->gbeg[g]; p < bu->gbeg[g + 1]; p++)
			mem_part_drop(x, p);
		ru->t_parts += sp_now() - t0;
	}
	for (t = 0; t < ru->nthreads; t++)
		b->raw_bytes += b->gv[t].cap * sizeof *b->gv[t].a;
	b->raw_bytes += 2 * b->n * bu->n_groups * sizeof *b->gref;
	b->raw_made = b->raw_bytes;
	b->acct[0] += b->raw_bytes;
	acct_add(ru, ACCT_READS, b->raw_bytes, 0);
	return rc;
}

/*
 * Size the next batches from this one's output (a repeat-rich genome at a
 * small L gives some reads thousands of matches: the batches in flight
 * hold all of their text).
 */
static void adapt_batch(run_t *ru, const batch_t *b)
{
	size_t i, out = 0, want;

	for (i = 0; i < b->n; i++)
		out += b->r[i].out_len;
	out += b->raw_made;   /* in passes: the raw matches waited for the last pass */
	want = out ? (size_t)((double)ru->batch_out * b->n / out) : ru->batch;
	if (want > ru->batch)
		want = ru->batch;
	if (want < BATCH_MIN)
		want = BATCH_MIN < ru->batch ? BATCH_MIN : ru->batch;
	__atomic_store_n(&ru->batch_cur, want, __ATOMIC_RELAXED);
}

static int write_batch(run_t *ru, batch_t *b)
{
	size_t i;

	adapt_batch(ru, b);
	if (ru->fmt == OUT_MUMMER) {
		/* consecutive reads of one thread are adjacent in its buffer: write runs */
		for (i = 0; i < b->n;) {
			size_t j = i + 1, off = b->r[i].out_off, len = b->r[i].out_len;
			int t = b->r[i].out_tid;

			while (j < b->n && b->r[j].out_tid == t && b->r[j].out_off == off + len)
				len += b->r[j++].out_len;
			if (sp_write_all(ru->fd, b->out[t].a + off, len) < 0)
				return ru->fd == 1 ? sp_fail("cannot write to standard output: %s", strerror(errno))
					: sp_fail("cannot write '%s': %s", ru->out, strerror(errno));
			i = j;
		}
		return 0;
	}
	for (i = 0; i < b->n; i++) {
		const mread_t *r = &b->r[i];

		rec_put(ru->w, b->out[r->out_tid].a + r->out_off, r->out_len);
	}
	return rec_writer_check(ru->w);
}

static int step(void *vctx, int st, void **data)
{
	run_t *ru = vctx;
	batch_t *b = *data;
	double t0 = sp_now();
	int rc = 0;

	if (!ru->dev && st >= 1)
		st++;        /* the CPU path has no step 1 */
	switch (st) {
	case 0:
		b = batch_read(ru, &rc);
		ru->t_read += sp_now() - t0;
		if (!b)
			return rc < 0 ? -1 : 1;
		ru->reads += b->n;
		ru->batches++;
		*data = b;
		return 0;
	case 1:    /* the device path: the strands ready for the device, off its thread and step 0's */
		b->woff = sp_malloc(2 * b->n * sizeof *b->woff);
		b->slen = sp_malloc(2 * b->n * sizeof *b->slen);
		acct_add(ru, ACCT_READS, 2 * b->n * (sizeof *b->woff + sizeof *b->slen), 0);
		b->acct[0] += 2 * b->n * (sizeof *b->woff + sizeof *b->slen);
		ru->prep = b;
		if (ru->pcrew) {   /* threads kept: a batch's packing is a few ms, the threads' start was most */
			sp_job j;

			memset(&j, 0, sizeof j);
			sp_crew_add(ru->pcrew, &j, b->n, 256, prep_one, ru);
			if (sp_crew_wait(ru->pcrew, &j, ru->nthreads - 1) < 0)
				return -1;
		} else if (sp_for(ru->nthreads, b->n, 256, prep_one, ru) < 0) {
			return -1;   /* the pipeline drops *DATA */
		}
		ru->t_prep += sp_now() - t0;
		return 0;
	case 2:
		if (ru->dev) {
			rc = mem_dev_find(ru->dev, b->words, b->nwords, 2 * b->n, b->woff, b->slen,
					&b->raw, &b->roff, &b->done);
			ru->t_find += sp_now() - t0;
			return rc;
		}
		if (ru->bud->n_groups) {   /* -M: the passes here, stages 2 and 3 in step 3 */
			rc = find_passes(ru, b);
			ru->t_find += sp_now() - t0;
			return rc;
		}
		ru->cur = b;
		out_get(ru, b);
		rc = sp_for(ru->nthreads, b->n, 64, work_read, ru);
		b->acct[1] = text_bytes(ru, b->out);
		acct_add(ru, ACCT_TEXT, b->acct[1], 0);
		ru->t_find += sp_now() - t0;
		return rc;
	case 3:    /* the device path and -M in passes: stages 2 and 3 */
		if (!ru->dev && !ru->bud->n_groups)
			return 0;
		if (ru->dev && mem_dev_wait(ru->dev, &b->done) < 0)
			return -1;
		ru->cur = b;
		out_get(ru, b);   /* small chunks: this step's reads are few and their matches many */
		if (ru->crew) {   /* step 4 waits: no barrier at the batch's end */
			b->ru = ru;
			sp_crew_add(ru->crew, &b->fin, b->n, 16, crew_read, b);
			ru->t_finish += sp_now() - t0;
			return 0;
		}
		rc = sp_for(ru->nthreads, b->n, 16, work_read, ru);
		finish_end(ru, b);
		ru->t_finish += sp_now() - t0;
		return rc;
	default:
		if (b->fin.added) {   /* the crew's threads finish the batch: this one helps */
			rc = sp_crew_wait(ru->crew, &b->fin, ru->nthreads - 1);
			finish_end(ru, b);
			ru->t_fwait += sp_now() - t0;   /* (step 3 adds to t_finish meanwhile) */
			t0 = sp_now();
			if (rc < 0) {
				batch_free(ru, b);
				*data = NULL;
				return rc;
			}
		}
		rc = write_batch(ru, b);
		batch_free(ru, b);
		*data = NULL;
		ru->t_write += sp_now() - t0;
		return rc;
	}
}

static void drop(void *vctx, void *data)
{
	batch_free(vctx, data);
}

/* ---- the run ------------------------------------------------------------------ */

/* The device, its context and the index, left to the exit ($SEEDPIPE_MEM_FREE: released before it) */
static struct {
	mem_dev_t *dev;
	ocl_ctx_t *ocl;
	mem_idx_t *mi;
	idx_t *x;
} kept;

int mem_run(const mem_cli_t *cl)
{
	const char *index = cl->index, *out = cl->out, *device = cl->device;
	int c, rc, force = cl->force, quiet = cl->quiet, verbose = cl->verbose && !cl->quiet;
	int argc = cl->argc;
	char **argv = cl->argv;
	mem_opt_t o = cl->o;
	run_t ru;
	idx_t *x;
	ocl_ctx_t *ocl;
	mem_idx_t *mi;
	mem_stats_t st;
	double t_fin = 0, t_fmt = 0;
	char msg[512], buf[64], dev_desc[256] = "native C";
	double t0 = sp_now(), t_load, t_open, t_prep, t_pipe, t_end, rss_idx, rss_dev, rss_end, hwm;
	sp_pipe pp;
	mem_budget_t bud;
	int ntls, dev_maybe = !(device ? device : getenv("SEEDPIPE_DEVICE")) || strcmp(device ? device
			: getenv("SEEDPIPE_DEVICE"), "none") != 0, flags;

	memset(&ru, 0, sizeof ru);
	memset(&bud, 0, sizeof bud);
	bud.mem = cl->mem;
	pthread_mutex_init(&ru.pool_mu, NULL);
	pthread_mutex_init(&ru.acct_mu, NULL);
	memset(&st, 0, sizeof st);
	ru.nthreads = cl->nthreads;
	ru.batch = cl->batch;
	ru.fmt = cl->mummer ? OUT_MUMMER : OUT_CANDS;
	ru.four = cl->four;
	ru.timed = verbose || (getenv("SEEDPIPE_DEBUG") && *getenv("SEEDPIPE_DEBUG"));
	ru.in = filt_in_open_or_die(cl->in_path);
	mem_ahead_start(&ru.ah, ru.in);                          /* the reads parsed while the index loads */
	if (cl->mem) {   /* -M: the reads parsed ahead a small share of it (the plan may lower it) */
		pthread_mutex_lock(&ru.ah.mu);
		if (ru.ah.max_bytes > cl->mem / 16)
			ru.ah.max_bytes = cl->mem / 16;
		pthread_mutex_unlock(&ru.ah.mu);
	}
	ocl_open_ahead(device, verbose ? OCL_VERBOSE : 0);   /* so is the device opened */
	/*
	 * An exit while the device opens runs the exit handlers of the libraries
	 * the open is loading (LLVM's, in PoCL) under it: every exit before the
	 * join below waits for the open first (ocl_ahead.c; under load an index
	 * without the FM-index crashed here, t6004).
	 */
	flags = mem_budget_flags(index, ru.nthreads, dev_maybe, dev_maybe ? 5 : 4, &bud);
	{
		char *e = NULL;

		if (!(x = idx_load(index, flags, &e))) {
			ocl_open_ahead_wait();
			sp_die("index '%s': %s", index, e);
		}
	}
	t_open = sp_now() - t0;
	if (mem_check(x, msg, sizeof msg) < 0) {
		ocl_open_ahead_wait();
		sp_die_code(SP_EXIT_USAGE, "%s", msg);
	}
	mi = mem_idx_new(x, &o, ru.nthreads, msg, sizeof msg);
	if (!mi) {
		ocl_open_ahead_wait();
		sp_die_code(SP_EXIT_USAGE, "%s", msg);
	}
	t_prep = sp_now() - t0 - t_open;
	rss_mb(&rss_idx, &hwm);
	ocl = ocl_open_ahead_join_or_die();
	t_load = sp_now() - t0;
	mem_ahead_limit(&ru.ah, cl->mem && cl->mem / 16 < AHEAD_BYTES ? cl->mem / 16 : AHEAD_BYTES);
	if (ocl) {
		filt_budget_t fb;   /* -M: a CPU device's memory is the host's */

		memset(&fb, 0, sizeof fb);
		fb.mem = bud.mem;
		fb.parts = bud.parts;
		filt_budget_device(ocl, &fb);
		ru.dev = mem_dev_new(ocl, mi, msg, sizeof msg);
		if (ru.dev) {
			ocl_describe(ocl, dev_desc, sizeof dev_desc);
		} else {
			if (!quiet)
				sp_warn("%s: matching with the native C code", msg);
			ocl_close(ocl);
			ocl = NULL;
		}
	}
	rss_mb(&rss_dev, &hwm);
	if (mem_budget_plan(x, mi, ru.nthreads, !ru.dev ? MEM_BUD_CPU : !(ocl->type & CL_DEVICE_TYPE_CPU)
				? MEM_BUD_GPU : mem_dev_resident(ru.dev) ? MEM_BUD_HOSTDEV_ALL : MEM_BUD_HOSTDEV,
				ru.dev ? 5 : 4, &bud) < 0)
		sp_die("-M: %s", sp_errmsg());
	ru.bud = &bud;
	if (!ru.batch)   /* in passes: large batches, each pass's loads shared by many reads */
		ru.batch = ru.dev || bud.n_groups ? DEF_BATCH_DEV : DEF_BATCH;
	ru.batch_out = ru.dev ? BATCH_OUT_DEV : BATCH_OUT;
	ru.batch_bases = BATCH_BASES;
	if (bud.per_batch) {   /* -M: a batch's text (and raw matches) and its reads within its share */
		if (ru.batch_out > bud.per_batch / 4)
			ru.batch_out = bud.per_batch / 4;
		if (ru.batch_bases > bud.per_batch / 8)
			ru.batch_bases = bud.per_batch / 8;
		pthread_mutex_lock(&ru.ah.mu);
		if (ru.ah.max_bytes > bud.per_batch)
			ru.ah.max_bytes = bud.per_batch;
		pthread_mutex_unlock(&ru.ah.mu);
	}
	if (getenv("SEEDPIPE_MEM_BATCH_OUT") && atol(getenv("SEEDPIPE_MEM_BATCH_OUT")) > 0)
		ru.batch_out = (size_t)atol(getenv("SEEDPIPE_MEM_BATCH_OUT"));   /* tests, tuning */
	{       /* grows once the output per read is known ($SEEDPIPE_MEM_BATCH_FIRST: tuning) */
		const char *e = getenv("SEEDPIPE_MEM_BATCH_FIRST");
		size_t first = e && atol(e) > 0 ? (size_t)atol(e) : BATCH_FIRST;

		ru.batch_cur = ru.batch < first ? ru.batch : first;
	}
	if (verbose)
		sp_msg("-m mem: L %u, window %u, step %u, %s%s, %d threads", o.L, mem_idx_w(mi),
				mem_idx_s(mi), dev_desc, !ru.dev ? "" : mem_dev_resident(ru.dev)
				? " (every partition on the device)" : " (one partition at a time)",
				ru.nthreads);

	ru.mi = mi;
	ntls = bud.n_groups ? 2 * ru.nthreads : ru.nthreads;   /* in passes: step 2's threads too */
	ru.tls = sp_calloc((size_t)ntls, sizeof *ru.tls);
	for (c = 0; c < ntls; c++)
		ru.tls[c].s = mem_scratch_new();
	if (ru.fmt == OUT_MUMMER) {
		ru.fd = 1;
		ru.out = out;
		if (strcmp(out, "-") != 0 && (ru.fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0666)) < 0)
			sp_die("cannot create '%s': %s", out, strerror(errno));
	} else {
		rec_prov_t prov;
		static const char *mode_name[] = { "maxmatch", "mumreference", "mum" };

		rec_prov_init(&prov);
		if (filt_in_prov(ru.in))
			rec_prov_carry(&prov, filt_in_prov(ru.in));
		rec_prov_add_pg(&prov, "seedfilt", SP_VERSION, argc, argv);
		{
			char *abs = sp_abspath(index);   /* extend finds it from anywhere */

			rec_prov_set(&prov, REC_PROV_INDEX, abs);
			free(abs);
		}
		snprintf(buf, sizeof buf, "%016" PRIx64, x->fingerprint);
		rec_prov_set(&prov, REC_PROV_INDEX_FP, buf);
		rec_prov_set(&prov, "seedfilt.method", "mem");
		snprintf(buf, sizeof buf, "%u", o.L);
		rec_prov_set(&prov, "seedfilt.mem_L", buf);
		rec_prov_set(&prov, "seedfilt.mem_mode", mode_name[o.mode]);
		rec_prov_set(&prov, "seedfilt.mem_strands",
				o.strands == MEM_FWD ? "forward" : o.strands == MEM_REV ? "reverse" : "both");
		rec_prov_set(&prov, "seedfilt.mem_n", o.acgt ? "nothing" : "N");
		ru.w = rec_create_worker_or_die(out, REC_KIND_CANDIDATES, &prov, 0, force);
		rec_prov_free(&prov);
	}

#ifdef __GLIBC__
	/*
	 * The batches' buffers (megabytes, grown on the worker threads, freed on
	 * the writing one) come from the system and go back to it: with glibc's
	 * sliding threshold they would stay in the per-thread arenas, a copy
	 * for each thread (at 16 threads RSS grew by a third on chrX, L 20).
	 */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
	/*
	 * Steps: 0 read, 1 strands packed (device path only), 2 find, 3 finish
	 * (device path only: the CPU path finishes in step 2), 4 write.  With a
	 * device, step 1 is its own so that step 0 reads the next batch meanwhile
	 * (together they bounded the device path at L 50: 1.9 s of 2.0 s for 5M
	 * chrX reads on an H100 host).  With a device, step 3 hands the batch's
	 * reads to the crew and step 4 waits for them: with a barrier at each
	 * batch's end (sp_for) the finish used 9-10 of 16 cores at L 20, 1M chrX
	 * reads (6.5-6.8 s; the crew 4.6-5.0 s on the H100 host).
	 */
	pp.nsteps = ru.dev ? 5 : 4;
	ru.rpool_max = cl->mem ? 0 : READS_POOL;   /* -M: the plan counts the batches in flight, not kept ones */
	if (getenv("SEEDPIPE_MEM_READS_POOL") && atoi(getenv("SEEDPIPE_MEM_READS_POOL")) >= 0
			&& atoi(getenv("SEEDPIPE_MEM_READS_POOL")) < READS_POOL)
		ru.rpool_max = atoi(getenv("SEEDPIPE_MEM_READS_POOL"));
	pp.nbatches = ru.dev ? 5 : bud.n_groups ? 4 : 3;   /* the CPU path's step 3 is empty unless in passes */
	if (getenv("SEEDPIPE_MEM_NBATCH") && atoi(getenv("SEEDPIPE_MEM_NBATCH")) > 0)
		pp.nbatches = atoi(getenv("SEEDPIPE_MEM_NBATCH"));   /* measurements */
	pp.step = step;
	pp.drop = drop;
	pp.ctx = &ru;
	if (ru.dev && ru.nthreads > 1) {   /* the last thread's scratch: step 4's; $SEEDPIPE_MEM_CREW: its size */
		const char *e = getenv("SEEDPIPE_MEM_CREW");
		int n = e && *e ? atoi(e) : ru.nthreads - 1;

		if (n > 0) {
			ru.crew = sp_crew_new(n < ru.nthreads - 1 ? n : ru.nthreads - 1);
			ru.pcrew = sp_crew_new(ru.nthreads - 1);
		}
	}
	t_pipe = sp_now();
	rc = sp_pipeline(&pp);
	t_pipe = sp_now() - t_pipe;
	sp_crew_free(ru.crew);
	sp_crew_free(ru.pcrew);
	if (ru.w)
		rec_end_or_die(ru.w, rc);
	else if (rc < 0)
		sp_die("%s", sp_errmsg());
	else if (ru.fd != 1 && close(ru.fd) != 0)
		sp_die("cannot write '%s': %s", out, strerror(errno));
	mem_ahead_end(&ru.ah);
	filt_in_close(ru.in);
	for (c = 0; c < ntls; c++) {
		tls_t *t = &ru.tls[c];

		st.reads += t->st.reads;
		st.strands += t->st.strands;
		st.windows += t->st.windows;
		st.steps += t->st.steps;
		st.raw += t->st.raw;
		st.mems += t->st.mems;
		t_fin += t->t_fin;
		t_fmt += t->t_fmt;
		mem_scratch_free(t->s);
		free(t->raw.a);
		free(t->mv[0].a);
		free(t->mv[1].a);
		free(t->cb);
	}
	if (!quiet) {
		if (ru.dev)
			sp_msg("%" PRIu64 " reads, %" PRIu64 " strands, %" PRIu64 " maximal matches of "
					"%u bases or more", st.reads, st.strands, st.mems, o.L);
		else
			sp_msg("%" PRIu64 " reads, %" PRIu64 " strands, %" PRIu64 " maximal matches of "
					"%u bases or more (%" PRIu64 " windows, %" PRIu64 " backward steps, %"
					PRIu64 " partition matches)", st.reads, st.strands, st.mems, o.L,
					st.windows, st.steps, st.raw);
		sp_msg("-m mem, L %u, window %u, %s, %d threads; time: index %.2f s, read %.2f s, "
				"find %.2f s, finish %.2f s, write %.2f s", o.L, mem_idx_w(mi), dev_desc,
				ru.nthreads, t_load, ru.t_read, ru.t_find, ru.t_finish + ru.t_fwait, ru.t_write);
		mem_budget_report(&bud, ru.batches, verbose);   /* passes: always said */
		if (verbose && bud.n_groups)
			sp_msg("-m mem passes: the groups of partitions brought into memory and let go in %.2f s",
					ru.t_parts);
	}
	if (ru.timed && !quiet) {
		sp_msg("-m mem index: open %.2f s, K-mer tables %.2f s, then the device's open %.2f s; "
				"the reads parsed on their own thread in %.2f s", t_open, t_prep,
				t_load - t_open - t_prep, ru.ah.t_parse);
		if (ru.dev) {
			const mem_dev_time_t *dt = mem_dev_time(ru.dev);

			sp_msg("-m mem device: setup %.2f s; %" PRIu64 " batches: prepare %.2f s, "
					"strands up %.2f s, partitions up %.2f s, kernel rows %.2f s (%"
					PRIu64 " runs, %" PRIu64 " again; the shallow rows of %" PRIu64
					" windows in mem_shal, the left steps of %" PRIu64 " in mem_wide), "
					"counts %.2f s, kernel loc %.2f s, "
					"compact %.2f s, matches down %.2f s (%" PRIu64 " records; page-locked "
					"arrays %.0f MB, allocated in %.2f s; waited for in the next step %.2f s), "
					"regroup %.2f s", dt->setup, dt->batches, ru.t_prep, dt->in, dt->part,
					dt->rows, dt->launches, dt->reruns, dt->shal, dt->wide, dt->scan, dt->loc, dt->pack, dt->get,
					dt->slots, dt->pinned / 1048576.0, dt->pin, dt->wait, dt->group);
		}
		sp_msg("-m mem threads: finish %.2f s, format %.2f s (seconds summed over %d "
				"threads)", t_fin, t_fmt, ru.nthreads);
		rss_mb(&rss_end, &hwm);
		sp_msg("-m mem memory: resident %.0f MB after the index and its tables, %.0f MB after "
				"the device's open, %.0f MB at most; held by the batches in flight at most: "
				"reads %.0f MB, text %.0f MB (and %.0f MB kept for the next ones), %.0f MB "
				"together; page-locked arrays of matches %.0f MB at once; reads parsed ahead %.0f MB",
				rss_idx,
				rss_dev, hwm, ru.acct_max[ACCT_READS] / 1048576.0,
				ru.acct_max[ACCT_TEXT] / 1048576.0, ru.acct_max[ACCT_POOL] / 1048576.0,
				ru.acct_sum_max / 1048576.0,
				ru.dev ? mem_dev_time(ru.dev)->pin_held_max / 1048576.0 : 0.0,
				ru.ah.bytes_max / 1048576.0);
	}
	free(ru.tls);
	for (c = 0; c < ru.n_rpool; c++) {
		free(ru.rpool[c].r);
		free(ru.rpool[c].arena);
		free(ru.rpool[c].words);
	}
	for (c = 0; c < ru.n_pool; c++) {
		int t;

		for (t = 0; t < ru.nthreads; t++)
			free(ru.pool[c][t].a);
		free(ru.pool[c]);
	}
	pthread_mutex_destroy(&ru.pool_mu);
	pthread_mutex_destroy(&ru.acct_mu);
	mem_budget_free(&bud);
	t_end = sp_now();
	if (getenv("SEEDPIPE_MEM_FREE") && *getenv("SEEDPIPE_MEM_FREE")) {
		mem_dev_free(ru.dev);
		ocl_close(ocl);
		mem_idx_free(mi);
		idx_close(x);
	} else {        /* the exit gives them back (one by one they took 0.1-0.2 s on an H200) */
		kept.dev = ru.dev;
		kept.ocl = ocl;
		kept.mi = mi;
		kept.x = x;
	}
	if (ru.timed && !quiet)
		sp_msg("-m mem wall: %.2f s, of which the pipeline %.2f s and the release of the device "
				"and the index %.2f s%s", sp_now() - t0, t_pipe, sp_now() - t_end,
				kept.x ? " (left to the exit)" : "");
	sp_close_stdout();
	return 0;
}
