/*
 * ext_auto.c - extend's device set-up (ext_dev_setup) and -d auto: native
 * code or device by the measured model of ocl_auto.h.
 *
 * Calibration (once per device, driver, index and run options, cached): a
 * candidates stream of CAL_HEAD device batches of candidates (the run's -B,
 * else EXT_BATCH_DEV), taken in turn as often as the sizes need:
 *   - the first reads of the run's candidates file: the real shape (most
 *     reads few candidates, a read of a repeat thousands; some 4 bytes a
 *     candidate), which costs per byte what the rest of the run will;
 *   - from a pipe (or a file that is not a candidates stream), a synthetic
 *     stream made in memory from the index's own reference: reads of CAL_LEN
 *     bases at positions of a fixed generator (windows without N), half
 *     reverse complemented, one substitution each, with 2^k candidates, k
 *     uniform in 0 .. CAL_MAXC_LOG - 1 (a mean of 341; seedfilt -m bpr -e 1
 *     -s 14 gives 10,000 mason chrX reads 271 a read), its own diagonal and
 *     others drawn by the generator, in seedfilt's order.
 * Two sizes (CAL_B1 and CAL_B2 device batches of candidates) are aligned
 * natively (ext_batch_run_ws, batches of EXT_PARTS_CPU times -B or
 * EXT_BATCH_CPU candidates on the run's threads) and on the device
 * (ext_batch_prep, dev, loci, trace and mkhits through a pipeline of the
 * run's shape: 2 nt + 2 batches in flight, nt threads and one a device
 * slot, the steps of some batches overlapping the others').  The native costs: the slope between the
 * sizes per byte of the stream, the rest fixed.  The device: opened once
 * untimed (kernels built or loaded into the cache), closed, then timed as a
 * run pays it, from opening it (the reference put on it, kernels loaded,
 * buffers made) to the end of a first run of the small size, and its
 * closing; its cost per byte from two warm runs (ocl_auto_fit_cold).  Main
 * 8490e89's calibration timed only warm runs of 2 and 6 batches (all in
 * flight at once: no throughput seen) plus the opening, and took the device
 * at 200,000 chrX reads where it was ~30% slower (bench/RESULTS.md).  SAM
 * formatting and writing are left out: both paths pay them alike.  The
 * units of a run: the size of its candidates file.  A pipe (size unknown):
 * the path that costs less per byte, at most the device's fixed cost
 * slower than the better path.  With $SEEDPIPE_EXT_AUTO_SWITCH=1 and a
 * calibration made on a file's first reads (a synthetic one is cached
 * apart, under the key with " synthetic": its few hits make the device look
 * cheaper than real candidates do), native code until the input passes the
 * size where the predictions meet, then the device for the rest (ext_run.c,
 * to_device): native throughout for a small input, but up to twice the
 * device's fixed cost slower just past the crossing (bench/RESULTS.md,
 * lead-auto-pipe).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ext_priv.h"
#include "idx_priv.h"
#include "ocl_auto.h"
#include "rec_kinds.h"
#include "sp_thread.h"

#define CAL_LEN 100      /* bases of a synthetic read */
#define CAL_MAXC_LOG 12  /* its candidates: 2^k, k uniform in 0 .. CAL_MAXC_LOG - 1 */
#define CAL_MAXC (1u << (CAL_MAXC_LOG - 1))
#define CAL_HEAD 2       /* device batches of candidates in the stream (cycled) */
#define CAL_B1 4         /* device batches of the two calibration sizes */
#define CAL_B2 16

int ext_dev_setup(ocl_ctx_t *ocl, const idx_t *x, ext_opt_t *eo, char *msg, size_t msg_len)
{
	eo->ocl = ocl;
	eo->dev_cut = 0;
	eo->dev = align_dev_new(ocl, x->pack, (size_t)((x->total + 3) / 4), msg, msg_len);
	if (!eo->dev)
		return -1;
	/* pass 1's windows cut on the device (SEEDPIPE_EXT_HOST_CUT: on the host,
	 * and sent up): gapped, where a key holds every position */
	if (!eo->nogaps && x->n_seq <= ALIGN_DKEY_MAX_SEQ && x->total < ALIGN_DKEY_MAX_POS
			&& !getenv("SEEDPIPE_EXT_HOST_CUT")) {
		uint64_t *pbe = sp_malloc((2 * (size_t)x->n_part + 1) * sizeof *pbe);
		uint32_t i;
		int rc;
		for (i = 0; i < x->n_part; i++) {
			pbe[2 * i] = x->part[i].beg;
			pbe[2 * i + 1] = x->part[i].end;
		}
		rc = align_dev_seqs(eo->dev, x->off, x->len, x->n_seq, pbe, x->n_part, msg, msg_len);
		free(pbe);
		if (rc < 0) {
			align_dev_free(eo->dev);
			eo->dev = NULL;
			return -1;
		}
		eo->dev_cut = 1;
	}
	return 0;
}

static uint64_t mix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The calibration stream: N candidates bodies, back to back in *BUF (OFF[i] .. OFF[i + 1]),
 * read I with NC[i] candidates; batches take them in turn, from the first again after the last. */
typedef struct {
	uint8_t *buf;
	size_t *off, n;
	uint32_t *nc;
	size_t cands, cap, ncap;   /* candidates in all; room in BUF, OFF and NC */
} cal_in_t;

static void in_add(cal_in_t *in, const uint8_t *body, size_t len, uint32_t nc)
{
	if (in->n + 2 > in->ncap) {
		in->ncap = in->ncap ? 2 * in->ncap : 1024;
		in->off = sp_realloc(in->off, in->ncap * sizeof *in->off);
		in->nc = sp_realloc(in->nc, in->ncap * sizeof *in->nc);
	}
	if (!in->n)
		in->off[0] = 0;
	grow(&in->buf, &in->cap, in->off[in->n] + len, 1);
	memcpy(in->buf + in->off[in->n], body, len);
	in->nc[in->n] = nc;
	in->off[in->n + 1] = in->off[in->n] + len;
	in->n++;
	in->cands += nc;
}

static void in_free(cal_in_t *in)
{
	free(in->buf);
	free(in->off);
	free(in->nc);
	memset(in, 0, sizeof *in);
}

/* The synthetic stream: reads of about WANT candidates in all (2^k of a read, k in 0..11). */
static void make_input(const idx_t *x, size_t want, cal_in_t *in)
{
	uint64_t s = 0x5eedca1ull, span = x->total > CAL_LEN ? x->total - CAL_LEN : 1;
	char seq[CAL_LEN], qual[CAL_LEN], name[32];
	rec_cand_t *c = sp_malloc((size_t)CAL_MAXC * sizeof *c);
	uint8_t *body = NULL;
	size_t i, cap = 0;

	memset(qual, 'I', sizeof qual);
	for (i = 0; in->cands < want; i++) {
		uint64_t g = mix64(&s) % span, r = mix64(&s);
		uint32_t j, nc = 0, tries, want_c = 1u << ((r >> 32) % CAL_MAXC_LOG);
		rec_read_t rd;

		for (tries = 0; tries < 64 && !idx_range_clean(x, g, CAL_LEN); tries++)
			g = mix64(&s) % span;
		for (j = 0; j < CAL_LEN; j++) {
			uint64_t p = g + j < x->total ? g + j : 0;
			int b = (x->pack[p >> 2] >> (2 * (p & 3))) & 3;
			if (r & 1)
				seq[CAL_LEN - 1 - j] = "TGCA"[b];
			else
				seq[j] = "ACGT"[b];
		}
		j = (uint32_t)((r >> 8) % CAL_LEN);
		seq[j] = seq[j] == 'A' ? 'C' : 'A';
		if (ext_cand_at(x, g, (unsigned)(r & 1), &c[nc]) == 0)
			nc++;
		for (tries = 0; nc < want_c && tries < 4 * want_c; tries++) {
			uint64_t h = mix64(&s);
			if (ext_cand_at(x, h % x->total, (unsigned)(h >> 63), &c[nc]) == 0)
				nc++;
		}
		ext_cands_sort(c, nc);
		memset(&rd, 0, sizeof rd);
		rd.id = i;
		rd.name = name;
		rd.name_len = (uint32_t)snprintf(name, sizeof name, "cal.%zu", i);
		rd.comment = "";
		rd.seq = seq;
		rd.seq_len = CAL_LEN;
		rd.qual = qual;
		grow(&body, &cap, rec_cands_size(&rd, nc), 1);
		in_add(in, body, rec_cands_encode(body, &rd, c, nc), nc);
		if (!nc && i > 1000 && !in->cands)
			break;   /* no candidate can be made */
	}
	free(body);
	free(c);
}

/* The first reads of the candidates file PATH, about WANT candidates: 0, or -1 (not a
 * candidates stream, malformed, no candidates: the synthetic stream instead). */
static int head_input(const char *path, size_t want, cal_in_t *in)
{
	rec_reader_t *r = rec_reader_path(path);
	ext_batch_t *b = ext_batch_new();
	const uint8_t *body;
	uint32_t len;
	int rc = -1;

	if (r && rec_reader_start(r, REC_KIND_CANDIDATES) == REC_OK) {
		while (in->cands < want && (rc = rec_read(r, &body, &len)) > 0) {
			uint64_t c0;

			if (ext_batch_reads(b) >= 4096)
				ext_batch_clear(b);
			c0 = ext_batch_cands(b);
			if (ext_batch_add(b, body, len) < 0) {
				rc = -1;
				break;
			}
			in_add(in, body, len, (uint32_t)(ext_batch_cands(b) - c0));
		}
	}
	if (r)
		rec_reader_free(r);
	ext_batch_free(b);
	if (rc < 0 || !in->cands) {
		in_free(in);
		return -1;
	}
	return 0;
}

/* The batches of a timed run: batch I the reads FIRST[i] .. FIRST[i + 1] - 1 of the stream
 * taken in turn (index modulo its reads), as the run cuts them (BATCH candidates or reads). */
typedef struct {
	size_t *first, nb;
	double units;   /* bytes */
} cal_plan_t;

static void make_plan(const cal_in_t *in, size_t batch, size_t total, cal_plan_t *pl)
{
	size_t k = 0, cands = 0, cap = 0;

	pl->first = NULL;
	pl->nb = 0;
	pl->units = 0;
	while (cands < total) {
		size_t bc = 0, br = 0;

		grow(&pl->first, &cap, pl->nb + 2, sizeof *pl->first);
		pl->first[pl->nb++] = k;
		while (bc < batch && br < batch) {
			size_t i = k++ % in->n;

			bc += in->nc[i];
			br++;
			pl->units += (double)(in->off[i + 1] - in->off[i]);
		}
		cands += bc;
	}
	pl->first[pl->nb] = k;
}

/* A timed calibration run: the batches of *PL. */
typedef struct {
	const idx_t *x;
	const cal_in_t *in;
	const cal_plan_t *pl;
	ext_opt_t eo, heo;    /* the run's options (with the device), on the host */
	ext_batch_t **b;      /* a batch per thread (reused, as the pipeline's free list) */
	ext_ws_t **ws;        /* native: a scratch per thread */
	size_t next, nfree;   /* the device's pipeline: next batch; free batches in B */
	pthread_mutex_t lock;
} cal_run_t;

/* Batch I of the run in B: its reads added. */
static ext_batch_t *cal_batch(cal_run_t *r, size_t i, ext_batch_t *b)
{
	size_t k;

	ext_batch_clear(b);
	for (k = r->pl->first[i]; k < r->pl->first[i + 1]; k++) {
		size_t j = k % r->in->n;

		if (ext_batch_add(b, r->in->buf + r->in->off[j],
					(uint32_t)(r->in->off[j + 1] - r->in->off[j])) < 0)
			return NULL;
	}
	return b;
}

static int cal_native(void *ctx, size_t i, int tid)
{
	cal_run_t *r = ctx;
	ext_batch_t *b = cal_batch(r, i, r->b[tid]);
	ext_stats_t st;
	char msg[256];

	memset(&st, 0, sizeof st);
	if (!b || ext_batch_run_ws(b, r->ws[tid], r->x, &r->eo, &st, msg, sizeof msg) < 0)
		return sp_fail("calibration: %s", b ? msg : "a batch");
	return 0;
}

/* The device's calibration runs as extend's pipeline does (ext_run.c): the
 * batches in order through prep, pass 1, loci, pass 2 and hits, several
 * at once, so that the host's steps of some overlap the device's of others
 * (batches all in one step at once, as a parallel-for runs them, leave the
 * device idle while the host works and measured the H100's cost per byte
 * 1.6 times what a run pays: bench/RESULTS.md, ext18-auto). */
enum { CS_READ, CS_PREP, CS_DEV, CS_LOCI, CS_TRACE, CS_HITS, CS_DONE, CS_N };

static void cal_put(cal_run_t *r, ext_batch_t *b)
{
	pthread_mutex_lock(&r->lock);
	r->b[r->nfree++] = b;
	pthread_mutex_unlock(&r->lock);
}

static void cal_drop(void *ctx, void *data)
{
	cal_put(ctx, data);
}

static int cal_step(void *ctx, int s, void **data)
{
	cal_run_t *r = ctx;
	ext_batch_t *b = *data;
	ext_stats_t st;
	char msg[256];
	int rc = 0;

	memset(&st, 0, sizeof st);
	switch (s) {
	case CS_READ:
		if (r->next >= r->pl->nb)
			return 1;
		pthread_mutex_lock(&r->lock);
		b = r->b[--r->nfree];
		r->b[r->nfree] = NULL;
		pthread_mutex_unlock(&r->lock);
		if (!cal_batch(r, r->next++, b)) {
			cal_put(r, b);
			return sp_fail("calibration: a batch");
		}
		*data = b;
		return 0;
	case CS_PREP:
		rc = ext_batch_prep(b, r->x, &r->eo, &st, msg, sizeof msg);
		break;
	case CS_DEV:
		rc = ext_batch_dev(b, r->x, &r->eo, msg, sizeof msg);
		break;
	case CS_LOCI:
		rc = ext_batch_loci(b, r->x, &r->heo, &st, msg, sizeof msg);
		break;
	case CS_TRACE:
		rc = ext_batch_trace(b, &r->eo, msg, sizeof msg);
		break;
	case CS_HITS:
		if (ext_batch_mkhits(b, r->x, &r->heo, &st) < 0)
			return sp_fail("calibration: the hits");
		return 0;
	default:
		cal_put(r, b);
		*data = NULL;
		return 0;
	}
	return rc < 0 ? sp_fail("calibration: %s", msg) : 0;
}

/* Seconds to align the batches of PL (the device's when R->eo has one), or -1. */
static double cal_time(cal_run_t *r, const cal_plan_t *pl, int nt)
{
	size_t nb = pl->nb, i, nbt = r->eo.dev ? 2 * (size_t)nt + 2 : (size_t)nt;
	double t0 = sp_now(), t;
	int rc;

	r->pl = pl;
	r->b = sp_calloc(nbt, sizeof *r->b);
	for (i = 0; i < nbt; i++)
		r->b[i] = ext_batch_new();
	if (r->eo.dev) {   /* as ext_run.c's pipeline: 2 nt + 2 batches, nt + slots threads */
		sp_pipe pipe = { .nsteps = CS_N, .nbatches = (int)nbt, .step = cal_step,
			.drop = cal_drop, .ctx = r };
		align_dev_stats_t d;

		align_dev_stats(r->eo.dev, &d);
		r->next = 0;
		r->nfree = nbt;
		pthread_mutex_init(&r->lock, NULL);
		rc = sp_pipeline_par(&pipe, ((1u << CS_N) - 1) & ~(1u << CS_READ | 1u << CS_DONE),
				nt + d.slots);
		pthread_mutex_destroy(&r->lock);
	} else {
		r->ws = sp_calloc((size_t)nt, sizeof *r->ws);
		for (i = 0; i < (size_t)nt; i++)
			r->ws[i] = ext_ws_new();
		rc = sp_for(nt, nb, 1, cal_native, r);
		for (i = 0; i < (size_t)nt; i++)
			ext_ws_free(r->ws[i]);
		free(r->ws);
		r->ws = NULL;
	}
	t = sp_now() - t0;
	for (i = 0; i < nbt; i++)
		ext_batch_free(r->b[i]);
	free(r->b);
	return rc < 0 ? -1 : t;
}

/* The device opened and set up for R (0), or -1. */
static int cal_open(cal_run_t *r, ocl_ctx_t **ocl)
{
	char msg[512];

	*ocl = NULL;
	if (ocl_open(ocl_auto_spec(), 0, ocl, msg, sizeof msg) != OCL_OPEN_OK || !*ocl)
		return -1;
	if (ext_dev_setup(*ocl, r->x, &r->eo, msg, sizeof msg) < 0) {
		ocl_close(*ocl);
		*ocl = NULL;
		return -1;
	}
	return 0;
}

static void cal_close(cal_run_t *r, ocl_ctx_t *ocl)
{
	align_dev_free(r->eo.dev);
	r->eo.dev = NULL;
	r->eo.ocl = NULL;
	ocl_close(ocl);
}

/* Calibrate EO's run (threads NT, candidates file IN_PATH or NULL) into *C: 0, or -1 when
 * the device cannot be used.  *HEAD: whether the stream was the file's first reads. */
static int calibrate(const idx_t *x, const ext_opt_t *eo, int nt, size_t batch,
		const char *in_path, ocl_auto_cal_t *c, int *head)
{
	size_t bd = batch ? batch : EXT_BATCH_DEV, bn = EXT_PARTS_CPU * (batch ? batch : EXT_BATCH_CPU);
	double tn1, tn2, td1 = -1, td2 = -1, tcold = -1, t0 = 0, topen = -1, tcal = sp_now();
	cal_plan_t pn1, pn2, pd1, pd2;
	cal_run_t r;
	cal_in_t in;
	ocl_ctx_t *ocl = NULL;

	if (x->total < 2 * CAL_LEN)
		return -1;
	memset(&in, 0, sizeof in);
	*head = in_path && head_input(in_path, CAL_HEAD * bd, &in) == 0;
	if (!*head)
		make_input(x, CAL_HEAD * bd, &in);
	if (!in.cands) {
		in_free(&in);
		return -1;
	}
	make_plan(&in, bn, CAL_B1 * bd, &pn1);
	make_plan(&in, bn, CAL_B2 * bd, &pn2);
	make_plan(&in, bd, CAL_B1 * bd, &pd1);
	make_plan(&in, bd, CAL_B2 * bd, &pd2);
	memset(&r, 0, sizeof r);
	r.x = x;
	r.in = &in;
	r.eo = *eo;
	r.eo.n_threads = 1;
	r.eo.ocl = NULL;
	r.eo.dev = NULL;
	r.eo.guar = NULL;
	r.heo = r.eo;
	tn1 = cal_time(&r, &pn1, nt);
	tn2 = tn1 < 0 ? -1 : cal_time(&r, &pn2, nt);
	/* an untimed first opening: the kernels built (or loaded) and cached */
	if (cal_open(&r, &ocl) == 0) {
		double w = cal_time(&r, &pd1, nt);

		cal_close(&r, ocl);
		/* then every cost of a run as it pays it: opening the device, putting the
		 * reference on it, loading the kernels, making the buffers, its first
		 * batches, closing it; the cost per byte from two warm sizes */
		t0 = sp_now();
		if (w >= 0 && cal_open(&r, &ocl) == 0) {
			topen = sp_now() - t0;
			tcold = cal_time(&r, &pd1, nt);
			tcold = tcold < 0 ? -1 : sp_now() - t0;
			td1 = tcold < 0 ? -1 : cal_time(&r, &pd1, nt);
			td2 = td1 < 0 ? -1 : cal_time(&r, &pd2, nt);
			t0 = sp_now();
			cal_close(&r, ocl);
			t0 = sp_now() - t0;
		}
	}
	free(pn1.first);
	free(pn2.first);
	free(pd1.first);
	free(pd2.first);
	if (tn1 < 0 || tn2 < 0 || tcold < 0 || td1 < 0 || td2 < 0) {
		in_free(&in);
		return -1;
	}
	ocl_auto_fit(pn1.units, tn1, pn2.units, tn2, &c->nat_fixed, &c->nat_unit);
	ocl_auto_fit_cold(tcold, t0, pd1.units, td1, pd2.units, td2, &c->dev_fixed, &c->dev_unit);
	if (getenv("SEEDPIPE_DEBUG"))   /* what the costs are made of */
		sp_msg("-d auto calibration (%.3f s, %s stream of %zu reads, %zu candidates): native "
				"%.0f bytes %.4f s, %.0f bytes %.4f s; device opened and set up %.4f s, "
				"its first %.0f bytes %.4f s (warm %.4f s), %.0f bytes %.4f s, closed %.4f s",
				sp_now() - tcal, *head ? "the input's" : "a synthetic", in.n, in.cands,
				pn1.units, tn1, pn2.units, tn2, topen, pd1.units, tcold - topen, td1,
				pd2.units, td2, t0);
	in_free(&in);
	return 0;
}

const char *ext_dev_auto(const idx_t *x, const ext_opt_t *eo, int nt, size_t batch,
		const char *in_path, char *why, size_t why_len, ext_auto_t *a)
{
	char key[512], skey[544], *path, *spath = NULL;
	ocl_auto_cal_t c;
	struct stat sb;
	double u = -1;
	size_t k;
	int cached = 0, dev, head = 0;

	a->switch_at = 0;
	if (ocl_auto_peek(a->name, sizeof a->name, a->driver, sizeof a->driver, &a->known) < 0) {
		snprintf(why, why_len, "native code: no OpenCL GPU");
		return "none";
	}
	if (in_path && strcmp(in_path, "-") && stat(in_path, &sb) == 0 && S_ISREG(sb.st_mode))
		u = (double)sb.st_size;
	snprintf(key, sizeof key, "extend 2 index %016" PRIx64 " e %u nogaps %d threads %d "
			"mode %d batch %zu", x->fingerprint, eo->max_a, eo->nogaps, nt, eo->mode, batch);
	/* a calibration on the input's own first reads under KEY, one on the
	 * synthetic stream under SKEY: a pipe takes the first if a file made it,
	 * else the second; a file calibrates on its first reads */
	snprintf(skey, sizeof skey, "%s synthetic", key);
	path = ocl_auto_path(a->name, a->driver, key, 1);
	if (ocl_auto_load(path, a->name, a->driver, key, &c) == 0) {
		cached = head = 1;
	} else if (u < 0 && (spath = ocl_auto_path(a->name, a->driver, skey, 1))
			&& ocl_auto_load(spath, a->name, a->driver, skey, &c) == 0) {
		cached = 1;
	} else if (calibrate(x, eo, nt, batch, u < 0 ? NULL : in_path, &c, &head) < 0) {
		snprintf(why, why_len, "native code: the device '%s' failed its calibration%s",
				a->name, a->known ? " (the next run probes the devices again)" : "");
		if (a->known)
			ocl_auto_forget();
		free(path);
		free(spath);
		return "none";
	} else {
		if (!head && !spath)
			spath = ocl_auto_path(a->name, a->driver, skey, 1);
		if ((head ? path : spath) && ocl_auto_save(head ? path : spath, a->name, a->driver,
					head ? key : skey, &c) < 0)
			sp_warn("cannot write the -d auto calibration '%s'", head ? path : spath);
	}
	free(path);
	free(spath);
	snprintf(why, why_len, "%s calibration%s of '%s' (driver %s%s): ", cached ? "cached" : "new",
			cached ? (head ? "" : " (made on a synthetic stream)")
			: head ? " (on the input's first reads)" : " (on a synthetic stream)",
			a->name, a->driver, a->known ? "; the device known from the cache of this "
			"system's OpenCL setup, OpenCL not loaded" : "");
	k = strlen(why);
	if (u < 0 && head && getenv("SEEDPIPE_EXT_AUTO_SWITCH") && *getenv("SEEDPIPE_EXT_AUTO_SWITCH") == '1'
			&& c.dev_unit < c.nat_unit && c.dev_fixed > c.nat_fixed) {
		/* a pipe: native until the lines cross, then (the input going on) the
		 * device: only with $SEEDPIPE_EXT_AUTO_SWITCH=1 and a calibration on
		 * a file's candidates.  An input just past the crossing pays the
		 * native code up to it and then the device's fixed cost: 200,000
		 * chrX reads through a pipe on the H100 took 1.50-1.55 s switched at
		 * 206 of 234 MB, against 1.07-1.24 s on the device throughout
		 * (bench/RESULTS.md, lead-auto-pipe); a synthetic calibration's
		 * crossing comes earlier still.  By default the path cheaper per
		 * byte takes the whole pipe, as before the switch existed. */
		a->switch_at = (c.dev_fixed - c.nat_fixed) / (c.nat_unit - c.dev_unit);
		snprintf(why + k, why_len - k, "native code first: input of unknown size; the "
				"device for the rest if it goes on past %.4g bytes, where the two "
				"predictions meet (device %.3g s + %.3g s/unit, native %.3g s + %.3g s/unit)",
				a->switch_at, c.dev_fixed, c.dev_unit, c.nat_fixed, c.nat_unit);
		return "none";
	}
	dev = ocl_auto_choose(&c, u, why + k, why_len - k);
	return dev ? ocl_auto_spec() : "none";
}
