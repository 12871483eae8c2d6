/*
 * filt_run.c - seedfilt's top loop: reads in batches, filtered by the
 * native code or the OpenCL device, candidates streamed out in input order,
 * all as one ordered pipeline of batches (sp_pipeline), whose parallel
 * steps spread the reads of a batch over the threads (sp_for).
 *
 * Determinism: a batch is cut by read count only, every read is filtered
 * on its own, and the records of a batch are written in input order after
 * the whole batch is done, so the output does not depend on -t or -B.
 *
 * Native code (-d none), three batches in flight:
 *
 *     read:    read 0 | read 1   | read 2   | read 3   | ...
 *     filter:         | filter 0 | filter 1 | filter 2 | ...   (sp_for: filt_read,
 *     write:                     | write 0  | write 1  | ...    encode the records)
 *
 * OpenCL device, five batches in flight: cut (sp_for: the patterns of every
 * read), match (the patterns of the whole batch on the device, partition by
 * partition), finish (sp_for: the positions made candidates, the records
 * encoded), so that the device matches batch i while the threads finish
 * batch i-1 and cut batch i+1:
 *
 *     read:    read 0 | read 1 | read 2  | read 3  | read 4  | ...
 *     cut:            | cut 0  | cut 1   | cut 2   | cut 3   | ...
 *     match:                   | match 0 | match 1 | match 2 | ...
 *     finish:                            | fin 0   | fin 1   | ...
 *     write:                                       | write 0 | ...
 *
 * Only the match step calls filt_dev_match (sp_pipeline runs no step twice
 * at once).  The cut and the finish step each have a workspace per thread.
 *
 * seedfilt -M (run->mplan with passes): the native filter step, or the
 * device path's finish step for the reads the host filters, is
 * step_passes: for each group of partitions the whole batch is matched
 * against that group only (the workspaces, one per thread and plan pair,
 * made once, are told which partitions to search), the candidates kept in
 * run->store; then each read's candidates of all passes, in partition
 * order, are capped and encoded as the run with the whole index does.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "filt_priv.h"
#include "rec.h"
#include "rec_kinds.h"
#include "sp_thread.h"
#include "util.h"

#define CHUNK 16                 /* reads a thread takes at a time */
#define NB_NATIVE 3              /* batches in flight: read, filter, write */
#define NB_DEVICE 5              /* read, cut, match, finish, write */

/* One read of a batch: its strings live in the batch arena at these offsets. */
typedef struct {
	uint64_t id;
	size_t name, comment, seq, qual;    /* offsets into the arena */
	uint32_t name_len, comment_len, seq_len, has_qual;
	uint8_t mate;            /* rec_read_t.mate */
	size_t enc_off, enc_len, enc_max;  /* its candidates record in enc[enc_w] */
	int enc_w;
	int host;                /* device path: its plan's pair is not the device's */
	int pat_w;               /* device path: its patterns (cut step) are */
	uint32_t n_pat;          /* pat[pat_w].p[pat_off .. pat_off + n_pat) */
	size_t pat_off;
} bread_t;

/*
 * Encoded candidates records of one thread.  This and the other per-thread
 * slots (pbuf_t, tstats_t) take whole cache lines (sp_calloc_lines): they
 * are written for every read, so threads sharing a line would slow each
 * other down (2c6cb0d kept a worker's counters on its stack).
 */
typedef struct {
	SP_LINE_ALIGNED uint8_t *buf;
	size_t used, cap;
} enc_t;

/* Patterns cut by one thread (device path). */
typedef struct {
	SP_LINE_ALIGNED filt_pat_t *p;
	size_t n, cap;
} pbuf_t;

/* The counters of one thread in a step. */
typedef struct {
	SP_LINE_ALIGNED filt_stats_t s;
} tstats_t;

/*
 * Device results of one batch: its patterns in read order (those of read k
 * are pat[pstart[k] .. pstart[k+1])) and, per partition, the positions
 * count of each pattern, where its positions start in hits, the positions.
 */
typedef struct {
	filt_pat_t *pat;
	size_t n_pat, cap_pat;
	size_t *pstart;          /* n+1 */
	size_t cap_reads;
	uint32_t **pcnt;         /* [part][pattern] positions */
	uint64_t **hoff;         /* [part][pattern] first position in hits[part] */
	uint32_t **hits;         /* [part] positions */
	size_t *n_hits, *cap_hits;   /* [part] */
} devset_t;

typedef struct {
	bread_t *r;
	size_t n, cap;
	char *arena;
	size_t used, acap;
	enc_t *enc;              /* per thread: the records it encoded */
	pbuf_t *pat;             /* per thread: the patterns it cut (device path) */
	devset_t dv;             /* device path: the device results */
	filt_stats_t st;         /* the batch's counters */
} batch_t;

/* -M: where one pass left the candidates of one read (filt_store). */
typedef struct {
	uint64_t off;
	uint32_t n;
	int32_t tid;
} pent_t;

typedef struct run_ctx run_ctx;
typedef int (*batch_step_fn)(run_ctx *c, batch_t *b);

struct run_ctx {
	const idx_t *x;
	const filt_run_t *run;
	filt_in_t *in;
	rec_writer_t *w;
	int nt, nb, nsteps;
	batch_step_fn mid[3];    /* the steps between read and write */
	double *t_step[3];       /* their seconds (tm->cut, match, finish) */
	batch_t *bb;             /* batch k in bb[k % nb] */
	uint64_t n_read;         /* batches read (none empty) */
	int eof, said;
	filt_ws_t **ws;          /* per thread: the filter (finish) step's workspaces */
	filt_ws_t **ws_cut;      /* per thread: the cut step's (device path) */
	filt_ws_t ***ws_pair;    /* with a plan: per thread, per pair (made on first use) */
	tstats_t *st_fin, *st_cut;       /* per thread: the counters of a step */
	filt_stats_t *tot;
	filt_times_t *tm;
	pthread_mutex_t busy_mu; /* tm->filter: wall time while a filtering step runs */
	int busy;
	double busy_t0;
	/* -M: the host's matching in passes over partition groups (step_passes) */
	int passes;
	uint32_t p0, p1;         /* the partitions the host searches: a pass's group, else all */
	pent_t *ent;             /* [read * n_groups + group]: its candidates in the store */
	size_t cap_ent;
	rec_cand_t **gbuf;       /* per thread: a read's candidates gathered */
	size_t *cap_gbuf;
};

/* ---- batches --------------------------------------------------------------- */

static size_t arena_put(batch_t *b, const char *s, size_t n)
{
	size_t at = b->used;

	if (b->used + n + 1 > b->acap) {
		b->acap = (b->used + n + 1) * 2;
		b->arena = sp_realloc(b->arena, b->acap);
	}
	if (n)
		memcpy(b->arena + b->used, s, n);
	b->arena[b->used + n] = 0;
	b->used += n + 1;
	return at;
}

static void batch_add(batch_t *b, const rec_read_t *rd)
{
	bread_t *r;

	if (b->n == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 1024;
		b->r = sp_realloc(b->r, b->cap * sizeof *b->r);
	}
	r = &b->r[b->n++];
	memset(r, 0, sizeof *r);
	r->id = rd->id;
	r->name = arena_put(b, rd->name, rd->name_len);
	r->comment = arena_put(b, rd->comment, rd->comment_len);
	r->seq = arena_put(b, rd->seq, rd->seq_len);
	r->has_qual = rd->qual != NULL;
	r->qual = arena_put(b, rd->qual ? rd->qual : "", rd->qual ? rd->seq_len : 0);
	r->name_len = rd->name_len;
	r->comment_len = rd->comment_len;
	r->seq_len = rd->seq_len;
	r->mate = rd->mate;
}

/* The read R of batch B as a rec_read_t (views into the arena). */
static void bread_view(const batch_t *b, const bread_t *r, rec_read_t *rd)
{
	rd->id = r->id;
	rd->name = b->arena + r->name;
	rd->comment = b->arena + r->comment;
	rd->seq = b->arena + r->seq;
	rd->qual = r->has_qual ? b->arena + r->qual : NULL;
	rd->name_len = r->name_len;
	rd->comment_len = r->comment_len;
	rd->seq_len = r->seq_len;
	rd->mate = r->mate;
}

/*
 * Encode the candidates record of read R (candidates C, N of them) into
 * thread W's buffer E, so that the write step only copies it.  enc_max is
 * what rec_put_cands would reserve (it decides where blocks end).
 */
static void bread_encode(const batch_t *b, bread_t *r, enc_t *e, int w,
		const rec_cand_t *c, uint32_t n)
{
	rec_read_t rd;
	size_t max;

	bread_view(b, r, &rd);
	max = rec_cands_size(&rd, n);
	if (e->used + max > e->cap) {   /* a quarter more (twice made a read of 848,812
					 * candidates take 2 x its 14 MB record) */
		e->cap = e->used + max + (e->used + max) / 4;
		if (e->cap < (1 << 20))
			e->cap = 1 << 20;
		e->buf = sp_realloc(e->buf, e->cap);
	}
	r->enc_w = w;
	r->enc_off = e->used;
	r->enc_max = max;
	r->enc_len = rec_cands_encode(e->buf + e->used, &rd, c, n);
	e->used += r->enc_len;
}

static void batch_init(batch_t *b, int nt, uint32_t n_part, int dev)
{
	memset(b, 0, sizeof *b);
	b->enc = sp_calloc_lines((size_t)nt, sizeof *b->enc);
	if (!dev)
		return;
	b->pat = sp_calloc_lines((size_t)nt, sizeof *b->pat);
	b->dv.pcnt = sp_calloc(n_part, sizeof *b->dv.pcnt);
	b->dv.hoff = sp_calloc(n_part, sizeof *b->dv.hoff);
	b->dv.hits = sp_calloc(n_part, sizeof *b->dv.hits);
	b->dv.n_hits = sp_calloc(n_part, sizeof *b->dv.n_hits);
	b->dv.cap_hits = sp_calloc(n_part, sizeof *b->dv.cap_hits);
}

static void batch_free(batch_t *b, int nt, uint32_t n_part)
{
	devset_t *dv = &b->dv;
	uint32_t part;
	int t;

	for (t = 0; t < nt; t++) {
		free(b->enc[t].buf);
		if (b->pat)
			free(b->pat[t].p);
	}
	for (part = 0; part < n_part && dv->pcnt; part++) {
		free(dv->pcnt[part]);
		free(dv->hoff[part]);
		free(dv->hits[part]);
	}
	free(dv->pcnt);
	free(dv->hoff);
	free(dv->hits);
	free(dv->n_hits);
	free(dv->cap_hits);
	free(dv->pat);
	free(dv->pstart);
	free(b->enc);
	free(b->pat);
	free(b->r);
	free(b->arena);
}

/* ---- notes ----------------------------------------------------------------- */

static void print_sens(const idx_t *x, const filt_run_t *run, uint32_t m)
{
	filt_opt_t o = run->o;
	filt_sens_t s;

	if (run->plan && filt_plan_scheme(run->plan, m)) {
		const filt_scheme_t *sc = filt_plan_scheme(run->plan, m);
		char d[256];

		filt_scheme_str(sc, d, sizeof d);
		sp_msg("sensitivity: reads of %u bases, seed span %u, %u patterns per strand "
				"with their own q and e (offset:exact+tail/e: %s); every occurrence "
				"with at most %u substitutions and at most %u edit operations yields "
				"a candidate", m, x->p.span, sc->np, d, sc->edits, sc->edits);
		return;
	}
	if (run->plan)
		filt_plan_at(run->plan, m, &o);
	filt_sensitivity(x, &o, m, &s);
	if (s.n_pat == 0) {
		sp_msg("sensitivity: reads of %u bases are shorter than a pattern "
				"(%u bases): no candidate is guaranteed", m, s.window);
		return;
	}
	sp_msg("sensitivity: reads of %u bases, seed span %u, q %u bases, step %u, "
			"e = %u%s (%s): %u patterns per strand; every occurrence with at most "
			"%d substitutions and at most %d edit operations yields a candidate",
			m, x->p.span, filt_qlen(x, o.method, o.e), o.step,
			o.e, o.any ? " anywhere in the pattern" : "",
			filt_method_name(o.method), s.n_pat, s.k_sub, s.k_edit);
}

/* Notes on the first batch B: the -v sensitivity statement, the -E warning. */
static void first_batch(const run_ctx *c, const batch_t *b)
{
	const filt_run_t *run = c->run;

	if (!c->said && run->verbose)
		print_sens(c->x, run, b->r[0].seq_len);
	if (run->bound.set && !run->plan) {   /* a plan counts per length (seedfilt) */
		uint32_t m = b->r[0].seq_len;
		int32_t g = filt_guarantee(c->x, &run->o, m, 0), a = filt_bound_at(&run->bound, m);
		char bs[16], fix[256];

		filt_bound_str(&run->bound, bs, sizeof bs);
		if (g < a) {
			filt_opt_t t = run->o;

			if (filt_auto_guarantee(c->x, &t, m, a) == 0)
				snprintf(fix, sizeof fix, "seedfilt -m %s -e %u -s %u%s does",
						filt_method_name(t.method), t.e, t.step, t.any ? " -a" : "");
			else if (filt_suggest_index(c->x, &run->o, m, a, fix, sizeof fix) == 0)
				snprintf(fix + strlen(fix), sizeof fix - strlen(fix),
						" would (this index cannot)");
			else
				snprintf(fix, sizeof fix, "no index can: the reads are too short");
			sp_warn("-E %s: reads of %u bases are only guaranteed a candidate for "
					"up to %d edit operations, not %d: %s", bs, m, g, a, fix);
		}
	}
}

/* ---- the per-read work of the parallel steps ------------------------------- */

typedef struct {
	run_ctx *c;
	batch_t *b;
	uint32_t g;              /* -M: the pass */
	size_t lo, hi;           /* the reads of the sp_for: [lo, hi) of the batch */
} job_t;

/* Reads [first, end) of chunk K of batch B. */
/* The reads of chunk K of J's range. */
static void chunk_reads(const job_t *j, size_t k, size_t *first, size_t *end)
{
	*first = j->lo + k * CHUNK;
	*end = *first + CHUNK < j->hi ? *first + CHUNK : j->hi;
}

/*
 * With a plan: thread TID's workspace for reads of M bases, its step set
 * to theirs, searching partitions c->p0 .. c->p1; NULL when no pattern
 * fits them (any workspace will do).  One per (pair, thread), made on first
 * use; a pass only changes the partitions it searches.
 */
static filt_ws_t *plan_ws(run_ctx *c, int tid, uint32_t m)
{
	const filt_plan_t *pl = c->run->plan;
	int pi = filt_plan_pair(pl, m);
	filt_ws_t **w = &c->ws_pair[tid][pi < 0 ? 0 : pi];
	filt_opt_t o;

	if (pi < 0)
		return NULL;
	filt_plan_at(pl, m, &o);
	if (!*w) {
		if (c->passes)
			o.cap = 0;   /* capped over all the passes, by gather_item */
		*w = filt_ws_part(c->x, &o, c->p0, c->p1);
	}
	(*w)->o.step = o.step;
	filt_ws_range(*w, c->p0, c->p1);
	return *w;
}

/*
 * Thread TID's workspace for a read of M bases that the host filters: its
 * plan's setting, else the run's; searching partitions c->p0 .. c->p1.
 */
static filt_ws_t *host_ws(run_ctx *c, int tid, uint32_t m)
{
	filt_ws_t *ws = c->run->plan ? plan_ws(c, tid, m) : NULL;

	if (!ws) {
		ws = c->ws[tid];
		filt_ws_range(ws, c->p0, c->p1);
	}
	return ws;
}

/* -E: count read R in ST (and the plan's ncov) when the bound is not guaranteed for it. */
static void count_bound(const run_ctx *c, const bread_t *r, filt_stats_t *st)
{
	const filt_run_t *run = c->run;

	if (run->plan) {
		filt_opt_t o;
		uint32_t k = r->seq_len < run->plan->maxlen ? r->seq_len : run->plan->maxlen;

		if (filt_plan_at(run->plan, r->seq_len, &o) < filt_bound_at(&run->bound, r->seq_len)) {
			st->not_guaranteed++;
			__atomic_fetch_add(&run->plan->ncov[k], 1, __ATOMIC_RELAXED);
		}
	} else if (run->bound.set) {
		st->not_guaranteed += filt_guarantee(c->x, &run->o, r->seq_len, 0) <
			filt_bound_at(&run->bound, r->seq_len);
	}
}

/* Device path: whether reads of M bases are filtered on the host (plan). */
static int plan_host(const run_ctx *c, uint32_t m)
{
	filt_opt_t o;

	if (c->run->plan && filt_plan_scheme(c->run->plan, m))
		return 1;
	if (!c->run->plan || filt_plan_pair(c->run->plan, m) < 0)
		return 0;
	filt_plan_at(c->run->plan, m, &o);
	return o.method != c->run->o.method || o.e != c->run->o.e;
}

/*
 * sp_for item of the cut step (device path): the patterns of chunk K into
 * the thread's pbuf; counts the reads and patterns (the finish step does
 * not cut them again).
 */
static int cut_item(void *ctx, size_t k, int tid)
{
	job_t *j = ctx;
	batch_t *b = j->b;
	pbuf_t *pb = &b->pat[tid];
	filt_stats_t *st = &j->c->st_cut[tid].s;
	size_t i, e;

	for (chunk_reads(j, k, &i, &e); i < e; i++) {
		bread_t *r = &b->r[i];
		const filt_pat_t *pat;
		filt_ws_t *ws = j->c->ws_cut[tid];

		r->host = plan_host(j->c, r->seq_len);
		if (r->host) {   /* the finish step filters it whole */
			r->n_pat = 0;
			r->pat_w = tid;
			r->pat_off = pb->n;
			continue;
		}
		if (j->c->run->plan) {
			filt_opt_t o;

			filt_plan_at(j->c->run->plan, r->seq_len, &o);
			ws->o.step = o.step;
		}
		r->n_pat = filt_cut(ws, b->arena + r->seq, r->seq_len, &pat, st);
		r->pat_w = tid;
		r->pat_off = pb->n;
		if (pb->n + r->n_pat > pb->cap) {
			pb->cap = (pb->n + r->n_pat) * 2 + 1024;
			pb->p = sp_realloc(pb->p, pb->cap * sizeof *pb->p);
		}
		if (r->n_pat)
			memcpy(pb->p + pb->n, pat, r->n_pat * sizeof *pat);
		pb->n += r->n_pat;
	}
	return 0;
}

/* Device path: the candidates of read I of B from the device results. */
static uint32_t finish_read(run_ctx *c, filt_ws_t *ws, const batch_t *b, size_t i,
		rec_cand_t **cand, filt_stats_t *st)
{
	const devset_t *dv = &b->dv;
	size_t g0 = dv->pstart[i];
	const filt_pat_t *pat = dv->pat + g0;
	uint32_t np = (uint32_t)(dv->pstart[i + 1] - g0), part, j;

	filt_begin(ws);
	for (part = 0; part < c->x->n_part; part++)
		for (j = 0; j < np; j++) {
			uint32_t k = dv->pcnt[part][g0 + j];
			const uint32_t *h = dv->hits[part] + dv->hoff[part][g0 + j];

			if (pat[j].e != c->run->o.e)
				continue;   /* N replaced by a base: matched on the host below */
			if (c->run->o.method == FILT_FM) {
				filt_hits_fm(ws, part, h, k / 4, &pat[j], st);
				continue;
			}
			st->matches += k;
			filt_hits(ws, part, h, k, &pat[j]);
		}
	filt_match_host(ws, pat, np, st);   /* those skipped above */
	return filt_finish(ws, cand, st);
}

/*
 * sp_for item of the filter step (native: filt_read) and of the finish step
 * (device path: finish_read): the candidates of the reads of chunk K, their
 * records encoded into the thread's buffer.
 */
static int filter_item(void *ctx, size_t k, int tid)
{
	job_t *j = ctx;
	run_ctx *c = j->c;
	batch_t *b = j->b;
	const filt_run_t *run = c->run;
	filt_ws_t *ws = c->ws[tid];
	filt_stats_t *st = &c->st_fin[tid].s;
	size_t i, e;

	for (chunk_reads(j, k, &i, &e); i < e; i++) {
		bread_t *r = &b->r[i];
		rec_cand_t *cand;
		uint32_t n;

		const filt_scheme_t *sch = run->plan ? filt_plan_scheme(run->plan, r->seq_len) : NULL;

		if (sch) {   /* per-pattern q and e (filt_scheme.c), prefetched ahead */
			int d;

			filt_ws_range(ws, c->p0, c->p1);
			for (d = 1; d <= 3 && i + (size_t)d < e; d++)
				if (r[d].seq_len == sch->m)
					filt_scheme_prefetch(ws, sch, b->arena + r[d].seq, r[d].seq_len,
							3 - d);
			n = filt_scheme_read(ws, sch, b->arena + r->seq, r->seq_len, &cand, st);
		} else if (run->plan && (!run->dev || r->host)) {   /* the read's own setting */
			n = filt_read(host_ws(c, tid, r->seq_len), b->arena + r->seq, r->seq_len,
					&cand, st);
		} else if (!run->dev) {
			/* software pipeline over the chunk (filt_prefetch) */
			if (i + 2 < e)
				filt_prefetch(ws, b->arena + r[2].seq, r[2].seq_len, 0);
			if (i + 1 < e)
				filt_prefetch(ws, b->arena + r[1].seq, r[1].seq_len, 1);
			n = filt_read(ws, b->arena + r->seq, r->seq_len, &cand, st);
		} else {
			n = finish_read(c, ws, b, i, &cand, st);
		}
		count_bound(c, r, st);
		bread_encode(b, r, &b->enc[tid], tid, cand, n);
	}
	return 0;
}

/* Run FN over the chunks of B on the run's threads; the counters ST into B's. */
static int batch_for(run_ctx *c, batch_t *b, sp_for_fn fn, tstats_t *st)
{
	job_t j;
	int t, r;

	j.c = c;
	j.b = b;
	j.g = 0;
	j.lo = 0;
	j.hi = b->n;
	memset(st, 0, (size_t)c->nt * sizeof *st);
	r = sp_for(c->nt, (b->n + CHUNK - 1) / CHUNK, 1, fn, &j);
	for (t = 0; t < c->nt; t++)
		filt_stats_add(&b->st, &st[t].s);
	return r;
}

/* ---- -M: the host's matching in passes over groups of partitions ------------ */

/*
 * sp_for item of pass G: the reads of chunk K that the host filters (all of
 * them natively; on the device path those of another plan pair) matched
 * against the pass's partitions only, each by its own setting, uncapped;
 * their candidates kept in the store.
 */
static int pass_item(void *ctx, size_t k, int tid)
{
	job_t *j = ctx;
	run_ctx *c = j->c;
	batch_t *b = j->b;
	const filt_run_t *run = c->run;
	uint32_t ng = run->mplan.n_groups, g = j->g;
	filt_stats_t *st = &c->st_fin[tid].s;
	size_t i, e;

	for (chunk_reads(j, k, &i, &e); i < e; i++) {
		bread_t *r = &b->r[i];
		pent_t *pe = &c->ent[i * ng + g];
		const filt_scheme_t *sch;
		filt_ws_t *ws;
		rec_cand_t *cand;
		uint32_t n;

		if (run->dev && !r->host)
			continue;   /* the device matched it */
		sch = run->plan ? filt_plan_scheme(run->plan, r->seq_len) : NULL;
		if (sch) {   /* per-pattern q and e, uncapped: gather_item caps */
			uint32_t cap;

			ws = c->ws[tid];
			filt_ws_range(ws, c->p0, c->p1);
			cap = ws->o.cap;
			ws->o.cap = 0;
			n = filt_scheme_read(ws, sch, b->arena + r->seq, r->seq_len, &cand, st);
			ws->o.cap = cap;
			goto put;
		}
		ws = host_ws(c, tid, r->seq_len);
		if (!run->plan) {   /* software pipeline over the chunk (filt_prefetch) */
			if (i + 2 < e)
				filt_prefetch(ws, b->arena + r[2].seq, r[2].seq_len, 0);
			if (i + 1 < e)
				filt_prefetch(ws, b->arena + r[1].seq, r[1].seq_len, 1);
		}
		n = filt_read(ws, b->arena + r->seq, r->seq_len, &cand, st);
put:
		pe->n = n;
		pe->tid = tid;
		if (filt_store_put(run->store, tid, cand, n, &pe->off) < 0)
			return -1;
	}
	return 0;
}

/*
 * sp_for item after the last pass: each host read's candidates of every
 * pass (in partition order, so sorted as one pass would have them), capped
 * as filt_finish caps; a device read's from the device results
 * (finish_read); the records encoded.
 */
static int gather_item(void *ctx, size_t k, int tid)
{
	job_t *j = ctx;
	run_ctx *c = j->c;
	batch_t *b = j->b;
	const filt_run_t *run = c->run;
	uint32_t ng = run->mplan.n_groups, g;
	filt_stats_t *st = &c->st_fin[tid].s;
	size_t i, e;

	for (chunk_reads(j, k, &i, &e); i < e; i++) {
		bread_t *r = &b->r[i];
		const pent_t *pe = &c->ent[i * ng];
		rec_cand_t *cand;
		size_t n = 0;

		if (run->dev && !r->host) {
			uint32_t nd = finish_read(c, c->ws[tid], b, i, &cand, st);

			count_bound(c, r, st);
			bread_encode(b, r, &b->enc[tid], tid, cand, nd);
			continue;
		}
		for (g = 0; g < ng; g++)
			n += pe[g].n;
		if (n > c->cap_gbuf[tid]) {
			c->cap_gbuf[tid] = n + n / 4;
			c->gbuf[tid] = sp_realloc(c->gbuf[tid], c->cap_gbuf[tid] * sizeof **c->gbuf);
		}
		for (n = 0, g = 0; g < ng; g++) {
			if (pe[g].n && filt_store_get(run->store, pe[g].tid, pe[g].off, pe[g].n,
						c->gbuf[tid] + n) < 0)
				return -1;
			n += pe[g].n;
		}
		if (n == 0)
			st->no_cand++;
		n = filt_cap(c->gbuf[tid], (uint32_t)n, run->o.cap, st);
		st->cands += n;
		count_bound(c, r, st);
		bread_encode(b, r, &b->enc[tid], tid, c->gbuf[tid], (uint32_t)n);
	}
	return 0;
}

/*
 * The counters of a pass into B's: the first pass counts the reads and
 * patterns, every pass its own matches, lookups and neighborhoods; the
 * candidates are counted once, by gather_item (FIRST = 2), which counts
 * all of a device read.
 */
static void pass_stats(filt_stats_t *d, const filt_stats_t *s, int first)
{
	if (first == 2) {
		filt_stats_add(d, s);
		return;
	}
	if (first) {
		d->reads += s->reads;
		d->short_reads += s->short_reads;
		d->patterns += s->patterns;
		d->skipped_n += s->skipped_n;
		d->kept_n += s->kept_n;
	}
	d->matches += s->matches;
	d->items += s->items;
	d->nbs += s->nbs;
}

/* Run FN over the chunks of reads [LO, HI) of B for pass G (or the gather, FIRST = 2). */
static int pass_for(run_ctx *c, batch_t *b, sp_for_fn fn, uint32_t g, int first,
		size_t lo, size_t hi)
{
	job_t j;
	int t, r;

	j.c = c;
	j.b = b;
	j.g = g;
	j.lo = lo;
	j.hi = hi;
	memset(c->st_fin, 0, (size_t)c->nt * sizeof *c->st_fin);
	r = sp_for(c->nt, (hi - lo + CHUNK - 1) / CHUNK, 1, fn, &j);
	for (t = 0; t < c->nt; t++)
		pass_stats(&b->st, &c->st_fin[t].s, first);
	return r;
}

/*
 * Write the records of reads [LO, HI) of B, in order (step_write, or with
 * -M passes gather_write, the one step that writes); 0 or -1.
 */
static int write_records(run_ctx *c, batch_t *b, size_t lo, size_t hi)
{
	double t0 = sp_now();
	size_t k;

	for (k = lo; k < hi; k++) {
		const bread_t *r = &b->r[k];

		memcpy(rec_begin(c->w, r->enc_max), b->enc[r->enc_w].buf + r->enc_off, r->enc_len);
		rec_commit(c->w, r->enc_len);
	}
	c->tm->write += sp_now() - t0;
	return rec_writer_check(c->w);
}

/*
 * Bytes of read I's record of B at most: what rec_cands_size reserves for
 * a host read's candidates of every pass (capped as gather_item caps); a
 * device read's counted without candidates.
 */
static size_t gather_bytes(const run_ctx *c, const batch_t *b, size_t i)
{
	uint32_t ng = c->run->mplan.n_groups, cap = c->run->o.cap, g;
	const bread_t *r = &b->r[i];
	uint64_t n = 0;
	rec_read_t rd;

	for (g = 0; (!c->run->dev || r->host) && g < ng; g++)
		n += c->ent[i * ng + g].n;
	bread_view(b, r, &rd);
	return rec_cands_size(&rd, (uint32_t)(cap && n > cap ? cap : n));
}

/* Free thread T's gather buffer (ENC: its encoded records) when over MAX bytes (a large read's). */
static void gather_trim(run_ctx *c, batch_t *b, int t, size_t max, int enc)
{
	if (!enc && c->cap_gbuf[t] * sizeof **c->gbuf > max) {
		free(c->gbuf[t]);
		c->gbuf[t] = NULL;
		c->cap_gbuf[t] = 0;
	}
	if (enc && b->enc[t].cap > max && b->enc[t].cap > (1 << 20)) {
		free(b->enc[t].buf);
		b->enc[t].buf = NULL;
		b->enc[t].cap = 0;
	}
}

/*
 * After the passes: the records of reads [FROM, TO) of B gathered and
 * written in runs of reads whose records take at most run->gather_max bytes (one read at least;
 * 0: the whole batch at once), so that a batch of reads with many
 * candidates never holds all its records.  They are written here, in
 * input order (no two batches run this step at once); step_write only
 * counts.
 */
static int gather_write(run_ctx *c, batch_t *b, size_t from, size_t to)
{
	size_t lo, hi, max = c->run->gather_max;
	int t;

	for (lo = from; lo < to; lo = hi) {
		size_t sum = max ? gather_bytes(c, b, lo) : 0;

		for (hi = lo + 1; hi < to && (!max || sum + gather_bytes(c, b, hi) <= max); hi++)
			sum += max ? gather_bytes(c, b, hi) : 0;
		for (t = 0; t < c->nt; t++)
			b->enc[t].used = 0;
		if (pass_for(c, b, gather_item, 0, 2, lo, hi) != 0)
			return -1;
		for (t = 0; max && t < c->nt; t++)   /* a large read's buffers back to the run's size */
			gather_trim(c, b, t, max, 0);   /* (its candidates are encoded: before the write) */
		if (write_records(c, b, lo, hi) != 0)
			return -1;
		for (t = 0; max && t < c->nt; t++)
			gather_trim(c, b, t, max, 1);
	}
	return 0;
}

/*
 * The filter step with -M (native), or the device path's finish step: for
 * each group of partitions (a pass) bring it in, match the batch's host
 * reads against it, let it go; then gather.  The workspaces stay (one per
 * thread and plan pair): a pass only sets the partitions they search.  A
 * device batch with no host read makes no pass.
 */
static int step_passes(run_ctx *c, batch_t *b)
{
	const filt_mplan_t *pl = &c->run->mplan;
	filt_store_t *s = c->run->store;
	uint32_t ng = pl->n_groups, g, p;
	size_t k, nhost = 0, lo, hi = 0, e, slice;
	uint64_t room;
	int r = 0;

	for (k = 0; k < b->n; k++)
		nhost += !c->run->dev || b->r[k].host;
	if (!nhost)
		return gather_write(c, b, 0, b->n);
	if (b->n * ng > c->cap_ent) {
		c->cap_ent = b->n * ng;
		c->ent = sp_realloc(c->ent, c->cap_ent * sizeof *c->ent);
	}
	slice = b->n / 16 > CHUNK ? b->n / 16 : CHUNK;
	/*
	 * Reads [LO, HI) make one round of passes: the first pass takes the
	 * batch a slice at a time while the candidates it stored, times the
	 * passes, leave room for one more slice in the store (its memory and
	 * half the free space of -T), so that the candidates of the passes fit
	 * the disk; the rest of the batch makes further rounds (each brings
	 * every partition again).  Written in input order, round by round.
	 */
	for (lo = 0; lo < b->n && r == 0; lo = hi) {
		filt_store_reset(s);
		room = filt_store_room(s);
		for (g = 0; g < ng && r == 0; g++) {
			for (p = pl->gbeg[g]; p < pl->gbeg[g + 1]; p++)
				idx_part_load(c->x, p);
			c->p0 = pl->gbeg[g];
			c->p1 = pl->gbeg[g + 1];
			if (g > 0)
				r = pass_for(c, b, pass_item, g, 0, lo, hi);
			for (hi = g ? hi : lo; g == 0 && hi < b->n && r == 0;) {
				e = b->n - hi > slice ? hi + slice : b->n;
				r = pass_for(c, b, pass_item, 0, 1, hi, e);
				hi = e;
				if ((double)filt_store_bytes(s) * ng * (double)(hi - lo + slice) / (double)(hi - lo) > (double)room)
					break;
			}
			for (p = pl->gbeg[g]; p < pl->gbeg[g + 1]; p++)
				idx_part_drop(c->x, p);
		}
		if (r == 0)
			r = gather_write(c, b, lo, hi);
	}
	return r;
}

/* ---- steps ----------------------------------------------------------------- */

/* Step 0: the next batch, in *OUT; 1 at the end of the input. */
static int step_read(run_ctx *c, batch_t **out)
{
	batch_t *b = &c->bb[c->n_read % (uint64_t)c->nb];
	double t0 = sp_now();
	rec_read_t rd;
	int r = 1;

	if (c->eof)
		return 1;
	b->n = 0;
	b->used = 0;
	memset(&b->st, 0, sizeof b->st);
	while (b->n < c->run->batch && (r = filt_in_next(c->in, &rd)) > 0)
		batch_add(b, &rd);
	c->tm->read += sp_now() - t0;
	if (r < 0)
		return -1;
	c->eof = r == 0;
	if (b->n == 0)
		return 1;
	if (c->n_read++ == 0)
		first_batch(c, b);
	*out = b;
	return 0;
}

/*
 * Native filter step, or the device path's finish step: the candidates of
 * every read of B, its record encoded.
 */
static int step_finish(run_ctx *c, batch_t *b)
{
	int t;

	for (t = 0; t < c->nt; t++)
		b->enc[t].used = 0;
	return batch_for(c, b, filter_item, c->st_fin);
}

/* Device path, cut step: the patterns of every read of B. */
static int step_cut(run_ctx *c, batch_t *b)
{
	int t;

	for (t = 0; t < c->nt; t++)
		b->pat[t].n = 0;
	return batch_for(c, b, cut_item, c->st_cut);
}

/* Device path, match step: the patterns of B in read order, matched on the device. */
static int step_match(run_ctx *c, batch_t *b)
{
	devset_t *dv = &b->dv;
	size_t k;
	uint32_t part;

	if (b->n + 1 > dv->cap_reads) {
		dv->cap_reads = b->n + 1;
		dv->pstart = sp_realloc(dv->pstart, dv->cap_reads * sizeof *dv->pstart);
	}
	dv->n_pat = 0;
	for (k = 0; k < b->n; k++) {
		const bread_t *r = &b->r[k];
		uint32_t np = r->n_pat;

		dv->pstart[k] = dv->n_pat;
		if (dv->n_pat + np > dv->cap_pat) {
			dv->cap_pat = (dv->n_pat + np) * 3 / 2 + 1024;
			dv->pat = sp_realloc(dv->pat, dv->cap_pat * sizeof *dv->pat);
		}
		if (np)
			memcpy(dv->pat + dv->n_pat, b->pat[r->pat_w].p + r->pat_off,
					np * sizeof *dv->pat);
		dv->n_pat += np;
	}
	dv->pstart[b->n] = dv->n_pat;
	for (part = 0; part < c->x->n_part; part++) {
		dv->pcnt[part] = sp_realloc(dv->pcnt[part], (dv->n_pat + 1) * sizeof **dv->pcnt);
		dv->hoff[part] = sp_realloc(dv->hoff[part], (dv->n_pat + 1) * sizeof **dv->hoff);
		dv->n_hits[part] = 0;
		if (filt_dev_match(c->run->dev, part, dv->pat, dv->n_pat, dv->pcnt[part],
					dv->hoff[part], &dv->hits[part], &dv->n_hits[part],
					&dv->cap_hits[part]) < 0)
			return -1;
		/* -M: the device has what it needs (or uploads it again on the
		 * next batch): the host's copy goes (fm's finish reads its
		 * samples back from the file) */
		if (c->run->mplan.n_groups && !c->run->mplan.all_in)
			idx_part_drop(c->x, part);
	}
	return 0;
}

/* Last step: the records of B, in input order; its counters into the totals. */
static int step_write(run_ctx *c, batch_t *b)
{
	filt_stats_add(c->tot, &b->st);
	return c->passes ? 0 : write_records(c, b, 0, b->n);   /* gather_write wrote them */
}

/* Count a filtering step in (D = 1) or out (D = -1) of tm->filter. */
static void busy(run_ctx *c, int d)
{
	double now;

	pthread_mutex_lock(&c->busy_mu);
	now = sp_now();
	if (d > 0 && c->busy++ == 0)
		c->busy_t0 = now;
	if (d < 0 && --c->busy == 0)
		c->tm->filter += now - c->busy_t0;
	pthread_mutex_unlock(&c->busy_mu);
}

static int run_step(void *ctx, int s, void **data)
{
	run_ctx *c = ctx;
	double t0;
	int r;

	if (s == 0)
		return step_read(c, (batch_t **)data);
	if (s == c->nsteps - 1)
		return step_write(c, *data);
	busy(c, 1);
	t0 = sp_now();
	r = c->mid[s - 1](c, *data);
	*c->t_step[s - 1] += sp_now() - t0;   /* no step runs twice at once */
	busy(c, -1);
	return r;
}

/* ---- the run ----------------------------------------------------------------- */

static filt_ws_t **ws_array(const idx_t *x, const filt_opt_t *o, int n)
{
	filt_ws_t **ws = sp_calloc((size_t)n, sizeof *ws);
	int i;

	for (i = 0; i < n; i++)
		ws[i] = filt_ws_new(x, o);
	return ws;
}

static void ws_array_free(filt_ws_t **ws, int n)
{
	int i;

	for (i = 0; ws && i < n; i++)
		filt_ws_free(ws[i]);
	free(ws);
}

/*
 * Stage times: read and write are the read and the write steps' own
 * seconds; filter is the wall time during which a filtering step runs
 * (device path: cut, match and finish, overlapped), so reads / filter is the
 * filtering throughput.
 */
int filt_run(const idx_t *x, const filt_run_t *run, filt_in_t *in, rec_writer_t *w,
		filt_stats_t *tot, filt_times_t *tm)
{
	int dev = run->dev != NULL, i, r;
	int passes = run->mplan.n_groups > 0 && !run->mplan.all_in;
	run_ctx c;
	sp_pipe p;

	memset(&c, 0, sizeof c);
	memset(tot, 0, sizeof *tot);
	memset(tm, 0, sizeof *tm);
	if (passes && !run->store)
		return sp_fail("passes over the index need a candidates store");
	c.passes = passes;
	c.p0 = 0;
	c.p1 = x->n_part;
	c.x = x;
	c.run = run;
	c.in = in;
	c.w = w;
	c.tot = tot;
	c.tm = tm;
	c.nt = run->n_threads < 1 ? 1 : run->n_threads;
	c.nb = dev ? NB_DEVICE : NB_NATIVE;
	if (dev) {
		c.mid[0] = step_cut;
		c.mid[1] = step_match;
		c.mid[2] = passes ? step_passes : step_finish;
		c.t_step[0] = &tm->cut;
		c.t_step[1] = &tm->match;
		c.t_step[2] = &tm->finish;
		c.nsteps = 5;
		c.ws_cut = ws_array(x, &run->o, c.nt);
		c.st_cut = sp_calloc_lines((size_t)c.nt, sizeof *c.st_cut);
	} else {
		c.mid[0] = passes ? step_passes : step_finish;
		c.t_step[0] = &tm->finish;
		c.nsteps = 3;
	}
	if (passes && !dev) {   /* uncapped: gather_item caps over the passes */
		filt_opt_t o = run->o;

		o.cap = 0;
		c.ws = sp_calloc((size_t)c.nt, sizeof *c.ws);
		for (i = 0; i < c.nt; i++)
			c.ws[i] = filt_ws_part(x, &o, 0, 0);
	} else {
		c.ws = ws_array(x, &run->o, c.nt);
	}
	if (passes) {
		c.gbuf = sp_calloc((size_t)c.nt, sizeof *c.gbuf);
		c.cap_gbuf = sp_calloc((size_t)c.nt, sizeof *c.cap_gbuf);
	}
	if (run->plan) {
		c.ws_pair = sp_calloc((size_t)c.nt, sizeof *c.ws_pair);
		for (i = 0; i < c.nt; i++)
			c.ws_pair[i] = sp_calloc(FILT_PLAN_MAXPAIRS, sizeof **c.ws_pair);
	}
	c.st_fin = sp_calloc_lines((size_t)c.nt, sizeof *c.st_fin);
	c.bb = sp_calloc((size_t)c.nb, sizeof *c.bb);
	for (i = 0; i < c.nb; i++)
		batch_init(&c.bb[i], c.nt, x->n_part, dev);
	pthread_mutex_init(&c.busy_mu, NULL);
	if (run->verbose && run->sens_len > 0) {
		print_sens(x, run, run->sens_len);
		c.said = 1;
	}
	/* the write step runs on a pipeline thread, which must not exit: the
	 * writer keeps a write error, and the step returns it */
	rec_writer_set_die(w, 0);
	memset(&p, 0, sizeof p);
	p.nsteps = c.nsteps;
	p.nbatches = c.nb;
	p.step = run_step;
	p.ctx = &c;
	r = sp_pipeline(&p);
	tm->batches = c.n_read;
	pthread_mutex_destroy(&c.busy_mu);
	for (i = 0; i < c.nb; i++)
		batch_free(&c.bb[i], c.nt, x->n_part);
	free(c.bb);
	ws_array_free(c.ws, c.nt);
	for (i = 0; c.ws_pair && i < c.nt; i++) {
		int k;

		for (k = 0; k < FILT_PLAN_MAXPAIRS; k++)
			if (c.ws_pair[i][k])
				filt_ws_free(c.ws_pair[i][k]);
		free(c.ws_pair[i]);
	}
	free(c.ws_pair);
	ws_array_free(c.ws_cut, c.nt);
	for (i = 0; c.gbuf && i < c.nt; i++)
		free(c.gbuf[i]);
	free(c.gbuf);
	free(c.cap_gbuf);
	free(c.ent);
	free(c.st_fin);
	free(c.st_cut);
	return r;
}
