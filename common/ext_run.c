/*
 * ext_run.c - extend's run (ext_run_or_die): the device, the candidates
 * stream and its index, the provenance, and the pipeline of batches
 * (read -> align -> format -> write, each step in input order) that
 * turns the candidates into the output.
 *
 * A batch of the pipeline holds up to n_sub sub-batches of -B candidates
 * (or reads).  The align step runs a batch's sub-batches on the threads
 * (sp_for), each sub-batch whole on one thread with that thread's scratch
 * (a batch keeps only its reads and their hits); the
 * format step makes their SAM text the same way, while the next batch is
 * aligned and the one before is written.  At most EXT_PIPE_BATCHES batches
 * are in flight, which bounds the memory: three keep the align step busy,
 * as the next batch is read while one is aligned and the one before is
 * formatted and written.
 *
 * The align step ends with its slowest sub-batch, and a sub-batch ends
 * after the read that reaches -B candidates, so one read with many
 * candidates (a repeat) makes a sub-batch several times longer.  A batch
 * has three sub-batches per thread, which the threads take largest first:
 * on 50,000 reads of chrX (-e 5), counting bases aligned, the threads then
 * stand idle for 3% of the align steps with -t 2 (9% taking them in input
 * order, 6% with two sub-batches per thread) and 5% with -t 8 (17%, 11%);
 * the format step of the batch before fills part of that.  The scratch of
 * the alignment is the threads' (ext_ws_t), not the sub-batches'.
 *
 * With a device a batch is one sub-batch of EXT_BATCH_DEV candidates, as
 * the device aligns a batch at once, and its align step is the only code
 * that enters the OpenCL platform; being a step, it never runs twice at
 * once.  It may run on a pipeline thread rather than the main thread:
 * what once made device batches run on the main thread was an exit on a
 * bad input while another thread was inside the OpenCL platform (PoCL with
 * its LLVM), which could abort in the platform's destructors.  Now no step
 * exits: an error is returned (sp_fail), the pipeline stops handing out
 * work and waits for every step to end, and only then does the main
 * thread end the output and exit, with no thread inside OpenCL.  The
 * device is opened before the pipeline and closed after it, on the main
 * thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ext.h"
#include "filt.h"
#include "sp_thread.h"
#include "util.h"

#define EXT_PIPE_BATCHES 3    /* batches in flight (see above) */
#define EXT_SUB_PER_THREAD 3  /* CPU sub-batches of a batch per thread */

enum { STEP_READ, STEP_ALIGN, STEP_FORMAT, STEP_WRITE, N_STEPS };

typedef struct run run_t;

/* A batch of the pipeline: sub-batches with their counters and SAM text. */
typedef struct job {
	run_t *run;
	ext_batch_t **sub;
	ext_stats_t *st;
	kstring_t *txt;
	size_t *order;        /* the sub-batches by size, largest first */
	size_t n_sub;         /* in use */
	struct job *next;     /* on the free list */
} job_t;

struct run {
	rec_reader_t *r;
	idx_t *x;
	ext_opt_t eo;         /* of a sub-batch: one thread, the device */
	ext_out_t *out;
	size_t batch;         /* candidates (or reads) of a sub-batch */
	size_t n_sub;         /* sub-batches of a batch */
	int n_threads;        /* of the align and format steps */
	ext_ws_t **ws;        /* each align thread's scratch, made on first use */
	int eof;              /* the reader reached the end (read step only) */
	ext_stats_t st;       /* totals (write step only) */
	pthread_mutex_t lock; /* the free list */
	job_t *free;
};

/* A batch off the free list, or a new one. */
static job_t *job_get(run_t *p)
{
	job_t *j;
	size_t i;

	pthread_mutex_lock(&p->lock);
	j = p->free;
	if (j)
		p->free = j->next;
	pthread_mutex_unlock(&p->lock);
	if (j)
		return j;
	j = sp_calloc(1, sizeof *j);
	j->run = p;
	j->sub = sp_malloc(p->n_sub * sizeof *j->sub);
	j->st = sp_malloc(p->n_sub * sizeof *j->st);
	j->txt = sp_calloc(p->n_sub, sizeof *j->txt);
	j->order = sp_malloc(p->n_sub * sizeof *j->order);
	for (i = 0; i < p->n_sub; i++)
		j->sub[i] = ext_batch_new();
	return j;
}

/* Put batch J back on the free list (its buffers are kept). */
static void job_put(run_t *p, job_t *j)
{
	pthread_mutex_lock(&p->lock);
	j->next = p->free;
	p->free = j;
	pthread_mutex_unlock(&p->lock);
}

static void job_drop(void *ctx, void *data)
{
	job_put(ctx, data);
}

/* Read step: fill batch J's sub-batches; 1 when the input has ended. */
static int read_batch(run_t *p, job_t *j)
{
	const uint8_t *body;
	uint32_t len;
	int rc = 1;

	j->n_sub = 0;
	while (j->n_sub < p->n_sub && rc > 0) {
		ext_batch_t *b = j->sub[j->n_sub];

		ext_batch_clear(b);
		memset(&j->st[j->n_sub], 0, sizeof j->st[0]);
		j->txt[j->n_sub].l = 0;
		while ((rc = rec_read(p->r, &body, &len)) > 0) {
			if (ext_batch_add(b, body, len) < 0) {
				rec_reader_bad_record(p->r, NULL, "malformed candidates record");
				return sp_fail("%s", rec_errmsg(p->r));
			}
			if (ext_batch_cands(b) >= p->batch || ext_batch_reads(b) >= p->batch)
				break;
		}
		if (rc < 0)
			return sp_fail("%s", rec_errmsg(p->r));
		if (ext_batch_reads(b))
			j->n_sub++;
	}
	if (rc == 0)
		p->eof = 1;
	return j->n_sub ? 0 : 1;
}

/* Align the I-th largest sub-batch of batch CTX (an sp_for item). */
static int align_sub(void *ctx, size_t i, int tid)
{
	job_t *j = ctx;
	run_t *p = j->run;
	size_t k = j->order[i];
	char msg[512];

	if (!p->ws[tid])
		p->ws[tid] = ext_ws_new();
	if (ext_batch_run_ws(j->sub[k], p->ws[tid], p->x, &p->eo, &j->st[k], msg, sizeof msg) < 0)
		return sp_fail("%s", msg);
	return 0;
}

/* Align step: batch J's sub-batches on the threads, the largest first. */
static int align_batch_subs(run_t *p, job_t *j)
{
	size_t i, k;

	for (i = 0; i < j->n_sub; i++) {     /* insertion: a few sub-batches */
		uint64_t c = ext_batch_cands(j->sub[i]);
		for (k = i; k > 0 && ext_batch_cands(j->sub[j->order[k - 1]]) < c; k--)
			j->order[k] = j->order[k - 1];
		j->order[k] = i;
	}
	return sp_for(p->n_threads, j->n_sub, 1, align_sub, j);
}

/* The SAM text of sub-batch I of batch CTX (an sp_for item). */
static int format_sub(void *ctx, size_t i, int tid)
{
	job_t *j = ctx;

	(void)tid;
	ext_out_format(j->run->out, j->sub[i], &j->txt[i]);
	return 0;
}

/* Write step: batch J's sub-batches in order, and their counters. */
static int write_batch(run_t *p, job_t *j)
{
	size_t i;

	for (i = 0; i < j->n_sub; i++) {
		const ext_stats_t *s = &j->st[i];

		if (ext_out_write(p->out, j->sub[i], &j->txt[i]) < 0)
			return -1;
		p->st.reads += s->reads;
		p->st.cands += s->cands;
		p->st.windows += s->windows;
		p->st.bases += s->bases;
		p->st.loci += s->loci;
		p->st.hits += s->hits;
		p->st.mapped += s->mapped;
		p->st.unmapped += s->unmapped;
		p->st.too_long += s->too_long;
		p->st.not_covered += s->not_covered;
		if (s->not_covered_len && (!p->st.not_covered_len ||
					s->not_covered_len < p->st.not_covered_len))
			p->st.not_covered_len = s->not_covered_len;
	}
	return 0;
}

static int step(void *ctx, int s, void **data)
{
	run_t *p = ctx;
	job_t *j = *data;
	int rc;

	switch (s) {
	case STEP_READ:
		if (p->eof)
			return 1;
		j = job_get(p);
		rc = read_batch(p, j);
		if (rc != 0) {
			job_put(p, j);
			return rc;
		}
		*data = j;
		return 0;
	case STEP_ALIGN:
		return align_batch_subs(p, j);
	case STEP_FORMAT:
		return ext_out_text(p->out) ? sp_for(p->n_threads, j->n_sub, 1, format_sub, j) : 0;
	default:
		rc = write_batch(p, j);
		job_put(p, j);
		*data = NULL;
		return rc;
	}
}

/*
 * The index of the stream of R, with the stream's fingerprint: C->index
 * when given (-x); else the path the stream records (absolute since
 * seedfilt records it so; relative to here in older streams), then a file
 * of the same name next to the candidates file.  A path that is absent,
 * or an index of another fingerprint, is noted and the next one tried;
 * when none fits the message lists every path tried and points to -x.
 */
static idx_t *open_index(const ext_cfg_t *c, rec_reader_t *r)
{
	const rec_prov_t *up = rec_reader_prov(r);
	const char *sidx = rec_prov_get(up, REC_PROV_INDEX), *sfp = rec_prov_get(up, REC_PROV_INDEX_FP);
	char fp[32], *try[2] = { NULL, NULL }, tried[2048] = "";
	idx_t *x = NULL;
	int i, n = 0;

	if (c->index) {
		x = ext_idx_open(c->index);
		snprintf(fp, sizeof fp, "%016" PRIx64, x->fingerprint);
		if (!sfp)
			sp_die("the candidates stream holds no index fingerprint: it cannot be "
					"checked against index '%s'", c->index);
		if (strcmp(sfp, fp))
			sp_die("index '%s' has fingerprint %s but the candidates were made with "
					"index '%s' of fingerprint %s", c->index, fp, sidx ? sidx : "?", sfp);
		return x;
	}
	if (!sidx || !*sidx)
		sp_die("the candidates stream names no index: give -x FILE");
	if (!sfp)
		sp_die("the candidates stream holds no index fingerprint: it cannot be checked "
				"against index '%s'", sidx);
	try[n++] = sp_strdup(sidx);
	if (strcmp(c->in_path, "-")) {
		const char *base = strrchr(sidx, '/'), *dir = strrchr(c->in_path, '/');
		size_t dn = dir ? (size_t)(dir - c->in_path) + 1 : 0;
		char *p;

		base = base ? base + 1 : sidx;
		p = sp_malloc(dn + strlen(base) + 1);
		memcpy(p, c->in_path, dn);
		strcpy(p + dn, base);
		if (strcmp(p, sidx))
			try[n++] = p;
		else
			free(p);
	}
	for (i = 0; i < n && !x; i++) {
		struct stat st;
		size_t k = strlen(tried);

		if (stat(try[i], &st) != 0) {
			snprintf(tried + k, sizeof tried - k, "%s'%s' (%s)", k ? ", " : "", try[i],
					strerror(errno));
			continue;
		}
		x = ext_idx_open(try[i]);
		snprintf(fp, sizeof fp, "%016" PRIx64, x->fingerprint);
		if (strcmp(sfp, fp)) {
			snprintf(tried + k, sizeof tried - k, "%s'%s' (fingerprint %s, not %s)",
					k ? ", " : "", try[i], fp, sfp);
			idx_close(x);
			x = NULL;
		} else if (i > 0 && !c->quiet) {
			sp_warn("index %s: using '%s', next to the candidates", tried, try[i]);
		}
	}
	for (i = 0; i < n; i++)
		free(try[i]);
	if (!x)
		sp_die("cannot find the index of the candidates: tried %s; give it with -x FILE",
				tried);
	return x;
}

/* The output's provenance: the input's, then this stage's lines OWN. */
static void make_prov(rec_prov_t *p, const rec_prov_t *up, const rec_prov_t *own)
{
	size_t i;

	rec_prov_init(p);
	rec_prov_carry(p, up);
	for (i = 0; own && i < own->n; i++) {
		if (!strcmp(own->key[i], REC_PROV_PG))
			rec_prov_add(p, own->key[i], own->val[i]);
		else
			rec_prov_set(p, own->key[i], own->val[i]);
	}
}

/*
 * What the filter that made the stream UP guarantees for each read length
 * 0..ALIGN_MAX_READ (filt_guarantee over the stream's seedfilt.method, e,
 * step and anywhere, and index X), or NULL when the stream does not say
 * (no seedfilt, or -m mem).
 */
static int16_t *guar_table(const rec_prov_t *up, const idx_t *x, int nogaps, filt_opt_t *o)
{
	const char *m = rec_prov_get(up, "seedfilt.method"), *e = rec_prov_get(up, "seedfilt.e");
	const char *s = rec_prov_get(up, "seedfilt.step"), *a = rec_prov_get(up, "seedfilt.anywhere");
	char msg[256];
	int16_t *g;
	uint32_t i;

	memset(o, 0, sizeof *o);
	if (!m || !e || !s || (o->method = filt_method_parse(m)) <= FILT_AUTO)
		return NULL;
	o->e = (uint32_t)strtoul(e, NULL, 10);
	o->step = (uint32_t)strtoul(s, NULL, 10);
	o->any = a && !strcmp(a, "1");
	if (!o->step || filt_check(x, o->method, o->e, o->any, msg, sizeof msg) < 0)
		return NULL;
	g = sp_malloc((ALIGN_MAX_READ + 1) * sizeof *g);
	for (i = 0; i <= ALIGN_MAX_READ; i++) {
		int32_t k = filt_guarantee(x, o, i, nogaps);

		g[i] = (int16_t)(k > 1000 ? 1000 : k);
	}
	return g;
}

/*
 * Reads for which A exceeds the filter's guarantee: said even with -q, as
 * the results may be incomplete, with the commands that would cover them.
 */
static void not_covered(const ext_cfg_t *c, const run_t *p, const filt_opt_t *fo)
{
	const int16_t *g = p->eo.guar;
	uint32_t hi = p->st.not_covered_len;
	char fix[320] = "", within[32];
	filt_opt_t t = *fo;

	t.step = hi ? hi : 1;
	t.e = 0;
	if (hi && filt_auto_guarantee(p->x, &t, hi, ext_bound_at(&p->eo, hi)) == 0)
		snprintf(fix, sizeof fix, "seedfilt -E %d (or -m %s -e %u -s %u%s)",
				ext_bound_at(&p->eo, hi),
				filt_method_name(t.method), t.e, t.step, t.any ? " -a" : "");
	else if (hi && filt_suggest_index(p->x, fo, hi, ext_bound_at(&p->eo, hi), fix,
				sizeof fix) == 0)
		;
	else
		snprintf(fix, sizeof fix, "no filter can: the reads are too short");
	if (p->eo.bound_pct)
		snprintf(within, sizeof within, "-E %u%%", p->eo.bound_pct);
	else
		snprintf(within, sizeof within, "-e %u", p->eo.max_a);
	sp_warn("%" PRIu64 " of %" PRIu64 " reads may have hits within %s%s that the filter "
			"(-m %s -e %u -s %u%s) does not guarantee to find (it guarantees %d for "
			"%u-base reads); to cover them: %s", p->st.not_covered, p->st.reads,
			within, c->eo.nogaps ? " --no-gaps" : "", filt_method_name(fo->method),
			fo->e, fo->step, fo->any ? " -a" : "", hi ? g[hi] : 0, hi, fix);
}

static void summary(const ext_cfg_t *c, const ext_stats_t *st, unsigned a, const char *dev,
		double t0)
{
	sp_msg("%" PRIu64 " reads, %" PRIu64 " candidates (%" PRIu64 " windows aligned, %" PRIu64
			" bases), %" PRIu64 " verified hits (loci), %" PRIu64 " reported, %" PRIu64
			" mapped, %" PRIu64 " unmapped", st->reads, st->cands, st->windows, st->bases,
			st->loci, st->hits, st->mapped, st->unmapped);
	sp_msg("-e %u%s, %s, %d threads, %.2f s", a, c->eo.nogaps ? " --no-gaps" : "",
			dev, c->eo.n_threads, sp_now() - t0);
}

int ext_run_or_die(const ext_cfg_t *c)
{
	const char *device = c->device;
	char dev_desc[256] = "native C";
	double t0 = sp_now();
	ocl_ctx_t *ocl;
	rec_prov_t prov;
	sp_pipe pipe;
	run_t p;
	int i;
	const char *bound;
	char num[32];
	int16_t *guar;
	filt_opt_t fo;

	/* the device before the index: a missing GPU is reported at once (exit
	 * 3).  auto is the native code here: on chrX candidates it was several
	 * times faster than an H200 (bench/RESULTS.md, extend-chrx1m-gpu-vs-cpu) */
	if (!device)
		device = getenv("SEEDPIPE_DEVICE");
	if (!device || !*device || !strcmp(device, "auto"))
		device = "none";
	ocl = ocl_open_or_die(device, 0);

	memset(&p, 0, sizeof p);
	p.r = rec_open_or_die(c->in_path, REC_KIND_CANDIDATES);
	p.x = open_index(c, p.r);
	make_prov(&prov, rec_reader_prov(p.r), c->prov);
	p.eo = c->eo;
	if (!c->a_set && (bound = rec_prov_get(rec_reader_prov(p.r), "seedfilt.E")) &&
	    !strchr(bound, '%')) {   /* the stream's -E: the bound stated once */
		unsigned long a = strtoul(bound, NULL, 10);

		if (a > ALIGN_MAX_A)
			sp_die("the stream's bound -E %s exceeds the %d edit operations extend "
					"aligns: give -e", bound, ALIGN_MAX_A);
		p.eo.max_a = (unsigned)a;
		snprintf(num, sizeof num, "%lu", a);
		rec_prov_set(&prov, "extend.e", num);
	} else if (!c->a_set && bound) {   /* P%: checked per read, up to -e's default */
		p.eo.bound_pct = (uint32_t)strtoul(bound, NULL, 10);
	}
	p.eo.guar = guar = guar_table(rec_reader_prov(p.r), p.x, c->eo.nogaps, &fo);
	p.out = ext_out_open_or_die(c->out_path, c->fmt, p.x, &prov, c->force, c->eo.n_threads);
	p.eo.n_threads = 1;   /* a sub-batch is one thread's (the device ignores it) */
	p.eo.ocl = ocl;
	p.batch = c->batch ? c->batch : ocl ? EXT_BATCH_DEV : EXT_BATCH_CPU;
	p.n_threads = ocl ? 1 : c->eo.n_threads;
	p.n_sub = ocl ? 1 : (size_t)EXT_SUB_PER_THREAD * (size_t)p.n_threads;
	p.ws = sp_calloc((size_t)p.n_threads, sizeof *p.ws);
	pthread_mutex_init(&p.lock, NULL);

	pipe = (sp_pipe){ .nsteps = N_STEPS, .nbatches = EXT_PIPE_BATCHES, .step = step,
		.drop = job_drop, .ctx = &p };
	if (sp_pipeline(&pipe) < 0) {
		char msg[SP_ERRMSG_MAX];

		snprintf(msg, sizeof msg, "%s", sp_errmsg());
		ext_out_fail(p.out, msg);
		sp_die("%s", msg);
	}

	while (p.free) {
		job_t *j = p.free;
		size_t i;

		p.free = j->next;
		for (i = 0; i < p.n_sub; i++) {
			ext_batch_free(j->sub[i]);
			free(j->txt[i].s);
		}
		free(j->sub);
		free(j->st);
		free(j->txt);
		free(j->order);
		free(j);
	}
	for (i = 0; i < p.n_threads; i++)
		ext_ws_free(p.ws[i]);
	free(p.ws);
	pthread_mutex_destroy(&p.lock);
	if (ocl)
		ocl_describe(ocl, dev_desc, sizeof dev_desc);
	ext_out_close_or_die(p.out);
	rec_reader_free(p.r);
	if (p.st.too_long)   /* even with -q: those reads are not aligned */
		sp_warn("%" PRIu64 " reads longer than %d bases were left unmapped", p.st.too_long,
				ALIGN_MAX_READ);
	if (p.st.not_covered)
		not_covered(c, &p, &fo);
	if (!c->quiet)
		summary(c, &p.st, p.eo.max_a, dev_desc, t0);
	free(guar);
	rec_prov_free(&prov);
	ocl_close(ocl);
	idx_close(p.x);
	return c->strict && p.st.not_covered ? SP_EXIT_DATA : 0;
}
