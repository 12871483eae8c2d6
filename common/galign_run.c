/*
 * galign_run.c - extend --global's run: read the sequences (and the list of
 * pairs), open the device, score, trace back and write the pairs
 * (galign_run_or_die, galign.h); the options and the usage are in
 * tools/extend_global.c.  See man/extend.1, GLOBAL ALIGNMENT.
 *
 * The pairs (all against all of A, A against B, or a list) are made in
 * input order and go through an ordered pipeline (sp_pipeline) in batches:
 *
 *     make batch -> score pass -> bound, traceback, identity -> write
 *
 * With a device the score pass of a batch is queued on it and collected by
 * the next step, so the device scores batches k+1.. while the CPU traces
 * back batch k and writes batch k-1 (six batches in flight); without one
 * the score pass and the traceback share a step (both already use every
 * thread).
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "galign.h"
#include "ocl.h"
#include "rec.h"
#include "rec_kinds.h"
#include "seqio.h"
#include "sp_thread.h"
#include "util.h"

/*
 * An input error while the device is being opened on its thread: exit only
 * once the open is over.  (exit() runs the exit handlers of the libraries
 * the open is loading, such as LLVM's in PoCL, while the thread still uses
 * them: a crash after the message.)
 */
SP_NORETURN SP_PRINTF(1, 2) static void die_input(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	ocl_open_ahead_wait();
	sp_die("%s", msg);
}

/* --- sequences ------------------------------------------------------------- */

typedef struct {
	const char *path;
	size_t n, cap;
	uint64_t *off;       /* into the shared codes */
	uint32_t *len;
	uint64_t *name;      /* into NAMES */
	char *names;
	size_t names_len, names_cap;
	uint32_t *hash;      /* name -> index + 1, UINT32_MAX for a repeated name */
	size_t hmask;
} seqset_t;

typedef struct {
	uint8_t *codes;
	size_t len, cap;
} codes_t;

static void read_set(seqset_t *s, const char *path, codes_t *c)
{
	seqio_reader_t *r = seqio_open_try(path);
	seq_rec_t rec;
	size_t i;
	int rc;

	if (!r)
		die_input("%s", sp_errmsg());
	memset(s, 0, sizeof *s);
	s->path = path;
	seqio_rec_init(&rec);
	while ((rc = seqio_next(r, &rec)) != 0) {
		if (rc < 0)
			die_input("%s", sp_errmsg());
		if (rec.seq_len > GALIGN_MAX_LEN)
			die_input("sequence '%s' of '%s' has %zu bases (at most %u)", rec.name, path,
					rec.seq_len, GALIGN_MAX_LEN);
		if (s->n == s->cap) {
			s->cap = s->cap ? 2 * s->cap : 1024;
			s->off = sp_realloc(s->off, s->cap * sizeof *s->off);
			s->len = sp_realloc(s->len, s->cap * sizeof *s->len);
			s->name = sp_realloc(s->name, s->cap * sizeof *s->name);
		}
		if (c->len + rec.seq_len > c->cap) {
			c->cap = (c->len + rec.seq_len) * 2 + 4096;
			c->codes = sp_realloc(c->codes, c->cap);
		}
		{
			/* local pointers: a byte store could alias C's fields, which would be
			 * loaded again for every base */
			uint8_t *dst = c->codes + c->len;
			const uint8_t *src = (const uint8_t *)rec.seq;

			for (i = 0; i < rec.seq_len; i++)
				dst[i] = sp_nt4_codes[src[i]];
		}
		s->off[s->n] = c->len;
		s->len[s->n] = (uint32_t)rec.seq_len;
		c->len += rec.seq_len;
		if (s->names_len + rec.name_len + 1 > s->names_cap) {
			s->names_cap = (s->names_len + rec.name_len + 1) * 2;
			s->names = sp_realloc(s->names, s->names_cap);
		}
		memcpy(s->names + s->names_len, rec.name, rec.name_len + 1);
		s->name[s->n++] = s->names_len;
		s->names_len += rec.name_len + 1;
	}
	seqio_rec_free(&rec);
	seqio_close(r);
}

static const char *seq_name(const seqset_t *s, size_t i)
{
	return s->names + s->name[i];
}

static uint64_t name_hash(const char *p)
{
	uint64_t h = 1469598103934665603ull;

	for (; *p; p++)
		h = (h ^ (uint8_t)*p) * 1099511628211ull;
	return h;
}

static void index_names(seqset_t *s)
{
	size_t size = 16, i;

	while (size < 2 * s->n)
		size *= 2;
	s->hmask = size - 1;
	s->hash = sp_calloc(size, sizeof *s->hash);
	for (i = 0; i < s->n; i++) {
		size_t h = name_hash(seq_name(s, i)) & s->hmask;

		for (;; h = (h + 1) & s->hmask) {
			uint32_t e = s->hash[h];
			if (!e) {
				s->hash[h] = (uint32_t)i + 1;
				break;
			}
			if (e != UINT32_MAX && !strcmp(seq_name(s, e - 1), seq_name(s, i))) {
				s->hash[h] = UINT32_MAX;
				break;
			}
		}
	}
}

/* Index of NAME in S, or -1 (absent) or -2 (several). */
static int64_t find_name(const seqset_t *s, const char *name)
{
	size_t h = name_hash(name) & s->hmask;

	for (;; h = (h + 1) & s->hmask) {
		uint32_t e = s->hash[h];
		if (!e)
			return -1;
		if (e == UINT32_MAX) {
			/* a repeated name: is it this one? */
			size_t i;
			for (i = 0; i < s->n; i++)
				if (!strcmp(seq_name(s, i), name))
					return -2;
			continue;
		}
		if (!strcmp(seq_name(s, e - 1), name))
			return e - 1;
	}
}

static void free_set(seqset_t *s)
{
	free(s->off);
	free(s->len);
	free(s->name);
	free(s->names);
	free(s->hash);
}

/* --- the pairs ----------------------------------------------------------- */

enum { MODE_ALL, MODE_AB, MODE_LIST };

typedef struct {
	int mode;
	const seqset_t *a, *b;          /* queries from A, targets from B (A in MODE_ALL) */
	uint32_t *list;                 /* MODE_LIST: query, target index pairs */
	size_t nlist;
	size_t i, j, k;                 /* cursor */
} source_t;

/*
 * The list of pairs: the file read whole, cut into pieces at line ends, the
 * pieces parsed on all threads (names looked up in the sets' tables), then
 * joined in order; the first bad line of the file is the one reported.
 */
typedef struct {
	char *beg, *end;               /* the piece's lines */
	uint32_t *pairs;               /* query, target index pairs */
	size_t n, lines;               /* pairs; lines parsed (up to the bad one) */
	int err;                       /* LE_*: the piece's first bad line is line LINES */
	const char *name;              /* its name (LE_QUERY.., LE_TARGET..) */
} lpiece_t;

enum { LE_NONE, LE_NO_TARGET, LE_QUERY, LE_TARGET };

typedef struct {
	const source_t *src;
	lpiece_t *pc;
} lctx_t;

static int is_sep(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* the next name of [*P, END) (NUL-terminated in place), or NULL */
static const char *next_tok(char **p, char *end)
{
	char *s = *p, *e;

	while (s < end && is_sep(*s))
		s++;
	if (s == end)
		return NULL;
	for (e = s; e < end && !is_sep(*e); e++)
		;
	*e = 0;   /* END is a line's end, which it may overwrite */
	*p = e < end ? e + 1 : end;
	return s;
}

static int list_piece(void *ctx, size_t i, int tid)
{
	lctx_t *lc = ctx;
	lpiece_t *pc = &lc->pc[i];
	char *p = pc->beg, *nl, *end, *z;
	(void)tid;

	pc->pairs = sp_malloc(((size_t)(pc->end - pc->beg) / 2 + 2) * sizeof *pc->pairs);
	for (; p < pc->end; p = nl + 1, pc->lines++) {
		const char *qn, *tn;
		int64_t qi, ti;

		nl = memchr(p, '\n', (size_t)(pc->end - p));
		if (!nl)
			nl = pc->end;
		end = (z = memchr(p, 0, (size_t)(nl - p))) ? z : nl;   /* as a C string */
		qn = next_tok(&p, end);
		if (!qn || *qn == '#')
			continue;
		tn = next_tok(&p, end);
		if (!tn) {
			pc->err = LE_NO_TARGET;
			return 0;
		}
		if ((qi = find_name(lc->src->a, qn)) < 0 || (ti = find_name(lc->src->b, tn)) < 0) {
			pc->err = qi < 0 ? LE_QUERY : LE_TARGET;
			pc->name = qi < 0 ? qn : tn;
			/* -1: absent, -2: repeated (as the error says) */
			pc->n = (size_t)(qi < 0 ? -qi : -ti);
			return 0;
		}
		pc->pairs[2 * pc->n] = (uint32_t)qi;
		pc->pairs[2 * pc->n + 1] = (uint32_t)ti;
		pc->n++;
	}
	return 0;
}

static void read_list(source_t *src, const char *path, int n_threads)
{
	int fd = open(path, O_RDONLY);
	char *buf = NULL;
	size_t len = 0, cap = 0, np, i, line = 1, k;
	ssize_t got;
	lpiece_t *pc;
	lctx_t lc;

	if (fd < 0)
		die_input("cannot open '%s': %s", path, strerror(errno));
	for (;;) {
		if (cap - len < 65536) {
			cap = cap ? 2 * cap : 1 << 20;
			buf = sp_realloc(buf, cap + 1);
		}
		got = read(fd, buf + len, cap - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			die_input("cannot read '%s': %s", path, strerror(errno));
		if (got == 0)
			break;
		len += (size_t)got;
	}
	close(fd);
	buf[len] = '\n';   /* the last line's end, if it has none */
	/* pieces of at least 256 KiB, ending after a newline */
	np = len / (256 << 10) + 1;
	if (np > (size_t)n_threads * 4)
		np = (size_t)n_threads * 4;
	pc = sp_calloc(np, sizeof *pc);
	for (i = 0, k = 0; i < np; i++) {
		size_t e = i + 1 == np ? len : len / np * (i + 1);
		char *nl;

		if (e < k)
			e = k;
		nl = e < len ? memchr(buf + e, '\n', len - e) : NULL;
		e = nl ? (size_t)(nl - buf) + 1 : len;
		pc[i].beg = buf + k;
		pc[i].end = buf + e;
		k = e;
	}
	lc.src = src;
	lc.pc = pc;
	if (sp_for(n_threads, np, 1, list_piece, &lc) < 0)
		die_input("%s", sp_errmsg());
	for (i = 0; i < np; i++) {
		if (pc[i].err == LE_NO_TARGET)
			die_input("'%s' line %zu: a query name without a target name", path,
					line + pc[i].lines);
		if (pc[i].err)
			die_input("'%s' line %zu: %s sequence '%s' in '%s'", path, line + pc[i].lines,
					pc[i].n == 1 ? "no" : "more than one", pc[i].name,
					pc[i].err == LE_QUERY ? src->a->path : src->b->path);
		line += pc[i].lines;
		src->nlist += pc[i].n;
	}
	src->list = sp_malloc((2 * src->nlist + 2) * sizeof *src->list);
	for (i = 0, k = 0; i < np; i++) {
		memcpy(src->list + 2 * k, pc[i].pairs, 2 * pc[i].n * sizeof *src->list);
		k += pc[i].n;
		free(pc[i].pairs);
	}
	free(pc);
	free(buf);
}

/* The next pair into *QI, *TI: 1, or 0 at the end. */
static int next_pair(source_t *s, uint32_t *qi, uint32_t *ti)
{
	switch (s->mode) {
	case MODE_ALL:
		if (s->j >= s->a->n) {
			s->i++;
			s->j = s->i + 1;
		}
		if (s->i + 1 >= s->a->n || s->j >= s->a->n)
			return 0;
		*qi = (uint32_t)s->i;
		*ti = (uint32_t)s->j++;
		return 1;
	case MODE_AB:
		if (s->j >= s->b->n) {
			s->i++;
			s->j = 0;
		}
		if (s->i >= s->a->n || s->j >= s->b->n)
			return 0;
		*qi = (uint32_t)s->i;
		*ti = (uint32_t)s->j++;
		return 1;
	default:
		if (s->k >= s->nlist)
			return 0;
		*qi = s->list[2 * s->k];
		*ti = s->list[2 * s->k + 1];
		s->k++;
		return 1;
	}
}

/* --- the pipeline --------------------------------------------------------- */

typedef struct {
	size_t n;
	galign_pair_t *pairs;
	uint32_t *qi, *ti;
	int32_t *scores;
	galign_job_t *job;
	uint32_t *sidx;                /* traced pairs */
	size_t ns;
	galign_res_t *res;
	uint64_t *off;
	uint32_t *runs;
	uint64_t cells, pruned;
} batch_t;

typedef struct {
	source_t src;
	const codes_t *codes;
	galign_scores_t sc;
	uint32_t ident;
	int prune, n_threads, trace_dev, rec_out;
	size_t batch;
	galign_dev_t *dev;
	FILE *out;
	const char *out_path;
	rec_writer_t *w;
	char *cig;
	size_t cig_cap;
	uint64_t pairs, cells, pruned, traced, reported, below;
	double wait_s, trace_s, write_s;   /* SEEDPIPE_DEBUG: each step's own time */
} run_t;

static void batch_free(batch_t *b)
{
	if (!b)
		return;
	if (b->job)
		galign_dev_wait(b->job);
	free(b->pairs);
	free(b->qi);
	free(b->ti);
	free(b->scores);
	free(b->sidx);
	free(b->res);
	free(b->off);
	free(b->runs);
	free(b);
}

static void drop(void *ctx, void *data)
{
	(void)ctx;
	batch_free(data);
}

static int step_make(run_t *r, batch_t **out)
{
	batch_t *b;
	uint32_t qi, ti;

	b = sp_calloc(1, sizeof *b);
	b->pairs = sp_malloc(r->batch * sizeof *b->pairs);
	b->qi = sp_malloc(r->batch * sizeof *b->qi);
	b->ti = sp_malloc(r->batch * sizeof *b->ti);
	while (b->n < r->batch && next_pair(&r->src, &qi, &ti)) {
		galign_pair_t *p = &b->pairs[b->n];

		p->q_off = r->src.a->off[qi];
		p->q_len = r->src.a->len[qi];
		p->t_off = r->src.b->off[ti];
		p->t_len = r->src.b->len[ti];
		b->cells += (uint64_t)p->q_len * p->t_len;
		b->qi[b->n] = qi;
		b->ti[b->n++] = ti;
	}
	if (b->n == 0) {
		batch_free(b);
		return 1;
	}
	b->scores = sp_malloc(b->n * sizeof *b->scores);
	*out = b;
	return 0;
}

static int step_score(run_t *r, batch_t *b)
{
	if (r->dev) {
		b->job = galign_dev_score(r->dev, b->pairs, b->n, b->scores);
		return b->job ? 0 : -1;
	}
	return galign_score_batch(r->codes->codes, b->pairs, b->n, &r->sc, r->n_threads, b->scores);
}

/* Collect the scores, choose the pairs to trace by the bound, trace them. */
static int step_trace(run_t *r, batch_t *b)
{
	size_t k;

	double t0 = sp_now(), t1;
	int rc;

	if (b->job) {
		rc = galign_dev_wait(b->job);
		b->job = NULL;
		if (rc < 0)
			return -1;
	}
	t1 = sp_now();
	r->wait_s += t1 - t0;
	b->sidx = sp_malloc(b->n * sizeof *b->sidx);
	for (k = 0; k < b->n; k++) {
		const galign_pair_t *p = &b->pairs[k];

		if (r->prune && !galign_may_pass(&r->sc, p->q_len, p->t_len, b->scores[k], r->ident))
			b->pruned++;
		else
			b->sidx[b->ns++] = (uint32_t)k;
	}
	b->off = sp_malloc((b->ns + 1) * sizeof *b->off);
	b->off[0] = 0;
	for (k = 0; k < b->ns; k++) {
		const galign_pair_t *p = &b->pairs[b->sidx[k]];
		b->off[k + 1] = b->off[k] + galign_runs_cap(&r->sc, p->q_len, p->t_len,
				b->scores[b->sidx[k]]);
	}
	b->res = sp_malloc((b->ns + 1) * sizeof *b->res);
	b->runs = sp_malloc((b->off[b->ns] + 1) * sizeof *b->runs);
	if (r->dev && r->trace_dev)
		rc = galign_dev_trace(r->dev, b->pairs, b->sidx, b->ns, b->scores, b->res, b->runs,
				b->off);
	else
		rc = galign_trace_batch(r->codes->codes, b->pairs, b->sidx, b->ns, &r->sc, b->scores,
				r->n_threads, b->res, b->runs, b->off);
	r->trace_s += sp_now() - t1;
	return rc;
}

static int step_write(run_t *r, batch_t *b)
{
	size_t k;
	double t0 = sp_now();

	r->pairs += b->n;
	r->cells += b->cells;
	r->pruned += b->pruned;
	r->traced += b->ns;
	/* rec_pair_tsv writes unlocked; messages on other threads flush stdout
	 * (sp_msg, e.g. SEEDPIPE_DEBUG's from the traceback step) */
	if (r->out)
		flockfile(r->out);
	for (k = 0; k < b->ns; k++) {
		const galign_res_t *res = &b->res[k];
		size_t pk = b->sidx[k], need = (size_t)res->n_runs * 11 + 1;
		rec_pair_t p;

		if (!galign_ident_ok(res, r->ident)) {
			r->below++;
			continue;
		}
		if (need > r->cig_cap) {
			r->cig_cap = need * 2;
			r->cig = sp_realloc(r->cig, r->cig_cap);
		}
		p.qid = b->qi[pk];
		p.tid = b->ti[pk];
		p.qlen = b->pairs[pk].q_len;
		p.tlen = b->pairs[pk].t_len;
		p.score = b->scores[pk];
		p.matches = res->matches;
		p.mismatches = res->mismatches;
		p.ins = res->ins;
		p.del = res->del;
		p.qname = seq_name(r->src.a, p.qid);
		p.qname_len = (uint32_t)strlen(p.qname);
		p.tname = seq_name(r->src.b, p.tid);
		p.tname_len = (uint32_t)strlen(p.tname);
		p.cigar = r->cig;
		p.cigar_len = (uint32_t)galign_cigar_str(res, b->runs + b->off[k], r->cig, r->cig_cap);
		if (r->w)
			rec_put_pair(r->w, &p);
		else
			rec_pair_tsv(&p, r->out);
		r->reported++;
	}
	if (r->out)
		funlockfile(r->out);
	r->write_s += sp_now() - t0;
	if (r->w)
		return rec_writer_check(r->w);
	if (ferror(r->out))
		return r->out == stdout ? sp_fail("cannot write to standard output: %s", strerror(errno))
			: sp_fail("cannot write '%s': %s", r->out_path, strerror(errno));
	return 0;
}

static int step(void *ctx, int s, void **data)
{
	run_t *r = ctx;
	batch_t *b = *data;
	int rc;

	if (s == 0)
		return step_make(r, (batch_t **)data);
	if (!r->dev)   /* make, score and trace, write */
		s = s == 1 ? 12 : 3;
	switch (s) {
	case 1: return step_score(r, b);
	case 2: return step_trace(r, b);
	case 12:
		if ((rc = step_score(r, b)) < 0)
			return rc;
		return step_trace(r, b);
	default:
		rc = step_write(r, b);
		batch_free(b);
		*data = NULL;
		return rc;
	}
}

int galign_run_or_die(const galign_cfg_t *cfg)
{
	const char *device = cfg->device;
	char dev_desc[256] = "native C";
	int rc, two = cfg->b_path != NULL;
	run_t r;
	seqset_t a, b;
	codes_t codes = { NULL, 0, 0 };
	ocl_ctx_t *ocl;
	sp_pipe pipe;
	double t0 = sp_now(), dt, t_read, t_dev;
	int debug = getenv("SEEDPIPE_DEBUG") && *getenv("SEEDPIPE_DEBUG");

	memset(&r, 0, sizeof r);
	r.sc = cfg->sc;
	r.ident = cfg->ident;
	r.prune = cfg->prune;
	r.trace_dev = cfg->trace_dev;
	r.rec_out = cfg->rec_out;
	r.n_threads = cfg->n_threads;
	r.batch = cfg->batch;
	r.out_path = cfg->out_path;
	if (two && !strcmp(cfg->a_path, "-") && !strcmp(cfg->b_path, "-"))
		sp_die_code(SP_EXIT_USAGE, "A and B cannot both be standard input");

	/* the device opened while the inputs are read; a missing one is exit 3.
	 * SEEDPIPE_DEBUG: profiled queue, the kernels' time of each batch on stderr */
	ocl_open_ahead(device, debug ? OCL_PROFILE : 0);

	read_set(&a, cfg->a_path, &codes);
	if (two)
		read_set(&b, cfg->b_path, &codes);
	r.src.a = &a;
	r.src.b = two ? &b : &a;
	r.src.mode = cfg->pairs_path ? MODE_LIST : two ? MODE_AB : MODE_ALL;
	r.src.j = r.src.mode == MODE_ALL ? 1 : 0;
	if (cfg->pairs_path) {
		index_names(&a);
		if (r.src.b == &b)
			index_names(&b);
		read_list(&r.src, cfg->pairs_path, r.n_threads);
	}
	r.codes = &codes;
	t_read = sp_now();
	ocl = ocl_open_ahead_join_or_die();
	if (!r.batch && !ocl)
		r.batch = GALIGN_BATCH_CPU;
	if (!r.batch) {
		/* device batches: up to GALIGN_BATCH_DEV, at least 16 of them (so that the CPU's
		 * traceback overlaps the device, and the first and the last batch, which it
		 * does not, are short) unless that makes them smaller than 65536 */
		double total = r.src.mode == MODE_LIST ? (double)r.src.nlist : r.src.mode == MODE_AB
			? (double)a.n * b.n : (double)a.n * (a.n - 1) / 2;
		r.batch = total / 16 > GALIGN_BATCH_DEV ? GALIGN_BATCH_DEV : total / 16 < 65536 ? 65536
			: (size_t)(total / 16);
	}
	if (ocl) {
		r.dev = galign_dev_new(ocl, codes.codes, codes.len, &r.sc, r.batch);
		if (!r.dev)
			sp_die("%s", sp_errmsg());
		ocl_describe(ocl, dev_desc, sizeof dev_desc);
	}
	t_dev = sp_now();

	if (r.rec_out) {
		r.w = rec_create_worker_or_die(cfg->out_path, REC_KIND_PAIRS, cfg->prov, 0, cfg->force);
	} else {
		r.out = strcmp(cfg->out_path, "-") ? fopen(cfg->out_path, "w") : stdout;
		if (!r.out)
			sp_die("cannot create '%s': %s", cfg->out_path, strerror(errno));
		rec_tsv_header(REC_KIND_PAIRS, r.out);
	}

	pipe.nsteps = r.dev ? 4 : 3;
	/* with a device, up to four batches scored ahead of the one traced back:
	 * the device, several times faster than the traceback, is never held up */
	pipe.nbatches = r.dev ? 6 : 2;
	pipe.step = step;
	pipe.drop = drop;
	pipe.ctx = &r;
	rc = sp_pipeline(&pipe);
	if (r.w)
		rec_end_or_die(r.w, rc);
	else if (rc < 0)
		sp_die("%s", sp_errmsg());
	else if (r.out != stdout && fclose(r.out) != 0)
		sp_die("cannot write '%s': %s", cfg->out_path, strerror(errno));
	dt = sp_now() - t0;
	if (debug)
		sp_msg("galign: %.3f s reading the inputs, %.3f s more until the device was ready, "
				"%.3f s the pipeline (the traceback step: %.3f s waiting for scores, %.3f s "
				"tracing back; the write step: %.3f s)", t_read - t0, t_dev - t_read,
				dt - (t_dev - t0), r.wait_s, r.trace_s, r.write_s);
	if (!cfg->quiet) {
		sp_msg("%zu + %zu sequences, %" PRIu64 " pairs, %.3g cells; %" PRIu64 " traced back (%"
				PRIu64 " pruned by the score pass), %" PRIu64 " reported, %" PRIu64
				" below %s%% identity", a.n, r.src.b == &b ? b.n : (size_t)0, r.pairs,
				(double)r.cells, r.traced, r.pruned, r.reported, r.below + r.pruned, cfg->ident_str);
		sp_msg("%s, %s vectors, %d threads, %.2f s, %.2f GCUPS", dev_desc,
				galign_simd_name(galign_simd()), r.n_threads, dt, (double)r.cells / dt / 1e9);
	}
	galign_dev_free(r.dev);
	ocl_close(ocl);
	free(r.src.list);
	free(r.cig);
	free_set(&a);
	if (r.src.b == &b)
		free_set(&b);
	free(codes.codes);
	if (debug)
		sp_msg("galign: %.3f s releasing the device and the memory", sp_now() - t0 - dt);
	if (!r.w)
		sp_close_stdout();
	return 0;
}
