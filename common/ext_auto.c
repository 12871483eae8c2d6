/*
 * ext_auto.c - extend's device set-up (ext_dev_setup) and -d auto: native
 * code or device by the measured model of ocl_auto.h.
 *
 * Calibration (once per device, driver, index and run options, cached): a
 * synthetic candidates stream made in memory from the index's own
 * reference: reads of CAL_LEN bases at positions of a fixed generator
 * (windows without N), half reverse complemented, one substitution each,
 * each with its own diagonal and CAL_CANDS - 1 others drawn by the
 * generator, in seedfilt's order.  Two sizes (CAL_B1 and CAL_B2 device
 * batches of candidates: the run's -B, else EXT_BATCH_DEV) are aligned
 * natively (ext_batch_run_ws, batches of EXT_PARTS_CPU times -B or
 * EXT_BATCH_CPU candidates on the run's threads) and on the device
 * (ext_batch_prep, dev, loci, trace and mkhits on the threads and three
 * more, as the pipeline runs them), the device
 * after an untimed first run (kernels built or loaded).  The slope between
 * the sizes is a path's cost per byte of the stream, the rest its fixed
 * cost; the device's adds what opening it, putting the reference on it and
 * closing it took.  SAM formatting and writing are left out: both paths
 * pay them alike.  The units of a run: the size of its candidates file (a
 * pipe: unknown).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ext_priv.h"
#include "idx_priv.h"
#include "ocl_auto.h"
#include "rec_kinds.h"
#include "sp_thread.h"

#define CAL_LEN 100      /* bases of a calibration read */
#define CAL_CANDS 64     /* candidates of a calibration read */
#define CAL_B1 2         /* device batches of the two calibration sizes */
#define CAL_B2 6

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

/* The calibration stream: N candidates bodies, back to back in *BUF (OFF[i] .. OFF[i + 1]). */
typedef struct {
	uint8_t *buf;
	size_t *off, n;
} cal_in_t;

static void make_input(const idx_t *x, size_t n, cal_in_t *in)
{
	uint64_t s = 0x5eedca1ull, span = x->total > CAL_LEN ? x->total - CAL_LEN : 1;
	char seq[CAL_LEN], qual[CAL_LEN], name[32];
	rec_cand_t c[CAL_CANDS];
	size_t i, len = 0, cap = 0;

	memset(qual, 'I', sizeof qual);
	in->off = sp_malloc((n + 1) * sizeof *in->off);
	in->buf = NULL;
	for (i = 0; i < n; i++) {
		uint64_t g = mix64(&s) % span, r = mix64(&s);
		uint32_t j, nc = 0, tries;
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
		while (nc < CAL_CANDS) {
			uint64_t h = mix64(&s);
			if (ext_cand_at(x, h % x->total, (unsigned)(h >> 63), &c[nc]) == 0)
				nc++;
			else if (x->total < 2)
				break;
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
		grow(&in->buf, &cap, len + rec_cands_size(&rd, nc), 1);
		in->off[i] = len;
		len += rec_cands_encode(in->buf + len, &rd, c, nc);
	}
	in->off[n] = len;
	in->n = n;
}

/* A timed calibration run: the reads IN cut into NB batches of BATCH candidates. */
typedef struct {
	const idx_t *x;
	const cal_in_t *in;
	size_t batch, per;    /* candidates of a batch; reads of a batch */
	ext_opt_t eo, heo;    /* the run's options (with the device), on the host */
	ext_batch_t **b;      /* a batch per index */
	ext_ws_t **ws;        /* native: a scratch per thread */
} cal_run_t;

/* Batch I of the run: its reads added. */
static ext_batch_t *cal_batch(cal_run_t *r, size_t i)
{
	ext_batch_t *b = r->b[i];
	size_t k, end = (i + 1) * r->per < r->in->n ? (i + 1) * r->per : r->in->n;

	ext_batch_clear(b);
	for (k = i * r->per; k < end; k++)
		if (ext_batch_add(b, r->in->buf + r->in->off[k],
					(uint32_t)(r->in->off[k + 1] - r->in->off[k])) < 0)
			return NULL;
	return b;
}

static int cal_native(void *ctx, size_t i, int tid)
{
	cal_run_t *r = ctx;
	ext_batch_t *b = cal_batch(r, i);
	ext_stats_t st;
	char msg[256];

	memset(&st, 0, sizeof st);
	if (!b || ext_batch_run_ws(b, r->ws[tid], r->x, &r->eo, &st, msg, sizeof msg) < 0)
		return sp_fail("calibration: %s", b ? msg : "a batch");
	return 0;
}

static int cal_device(void *ctx, size_t i, int tid)
{
	cal_run_t *r = ctx;
	ext_batch_t *b = cal_batch(r, i);
	ext_stats_t st;
	char msg[256];

	(void)tid;
	memset(&st, 0, sizeof st);
	if (!b || ext_batch_prep(b, r->x, &r->eo, &st, msg, sizeof msg) < 0
			|| ext_batch_dev(b, r->x, &r->eo, msg, sizeof msg) < 0
			|| ext_batch_loci(b, r->x, &r->heo, &st, msg, sizeof msg) < 0
			|| ext_batch_trace(b, &r->eo, msg, sizeof msg) < 0
			|| ext_batch_mkhits(b, r->x, &r->heo, &st) < 0)
		return sp_fail("calibration: %s", b ? msg : "a batch");
	return 0;
}

/* Seconds to align the first N reads of R->in (the device's when EO has one), or -1. */
static double cal_time(cal_run_t *r, size_t n, int nt)
{
	size_t nb = (n + r->per - 1) / r->per, i;
	double t0 = sp_now(), t;
	int rc;

	r->b = sp_calloc(nb ? nb : 1, sizeof *r->b);
	for (i = 0; i < nb; i++)
		r->b[i] = ext_batch_new();
	if (r->eo.dev) {
		rc = sp_for(nt + 3, nb, 1, cal_device, r);
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
	for (i = 0; i < nb; i++)
		ext_batch_free(r->b[i]);
	free(r->b);
	return rc < 0 ? -1 : t;
}

/* Calibrate EO's run (threads NT) into *C: 0, or -1 when the device cannot be used. */
static int calibrate(const idx_t *x, const ext_opt_t *eo, int nt, size_t batch,
		ocl_auto_cal_t *c)
{
	size_t bd = batch ? batch : EXT_BATCH_DEV, bn = EXT_PARTS_CPU * (batch ? batch : EXT_BATCH_CPU);
	size_t n2 = (CAL_B2 * bd + CAL_CANDS - 1) / CAL_CANDS, n1 = (CAL_B1 * bd + CAL_CANDS - 1) / CAL_CANDS;
	double tn1, tn2, td1 = -1, td2 = -1, topen, tclose = 0, u1, u2;
	cal_run_t r;
	cal_in_t in;
	ocl_ctx_t *ocl = NULL;
	char msg[512];

	if (x->total < 2 * CAL_LEN)
		return -1;
	make_input(x, n2, &in);
	u1 = (double)in.off[n1];
	u2 = (double)in.off[n2];
	memset(&r, 0, sizeof r);
	r.x = x;
	r.in = &in;
	r.eo = *eo;
	r.eo.n_threads = 1;
	r.eo.ocl = NULL;
	r.eo.dev = NULL;
	r.eo.guar = NULL;
	r.heo = r.eo;
	r.per = (bn + CAL_CANDS - 1) / CAL_CANDS;
	tn1 = cal_time(&r, n1, nt);
	tn2 = tn1 < 0 ? -1 : cal_time(&r, n2, nt);
	topen = sp_now();
	if (ocl_open(ocl_auto_spec(), 0, &ocl, msg, sizeof msg) != OCL_OPEN_OK || !ocl
			|| ext_dev_setup(ocl, x, &r.eo, msg, sizeof msg) < 0) {
		topen = -1;
	} else {
		topen = sp_now() - topen;
		r.per = (bd + CAL_CANDS - 1) / CAL_CANDS;
		/* a first run untimed: kernels built or loaded, buffers made */
		td1 = cal_time(&r, n1, nt);
		td1 = td1 < 0 ? -1 : cal_time(&r, n1, nt);
		td2 = td1 < 0 ? -1 : cal_time(&r, n2, nt);
		tclose = sp_now();
		align_dev_free(r.eo.dev);
	}
	if (ocl) {
		ocl_close(ocl);
		tclose = sp_now() - tclose;
	}
	free(in.buf);
	free(in.off);
	if (tn1 < 0 || tn2 < 0 || td1 < 0 || td2 < 0)
		return -1;
	ocl_auto_fit(u1, tn1, u2, tn2, &c->nat_fixed, &c->nat_unit);
	ocl_auto_fit(u1, td1, u2, td2, &c->dev_fixed, &c->dev_unit);
	c->dev_fixed += topen + tclose;
	return 0;
}

const char *ext_dev_auto(const idx_t *x, const ext_opt_t *eo, int nt, size_t batch,
		const char *in_path, char *why, size_t why_len)
{
	char name[256], driver[256], key[512], *path;
	ocl_auto_cal_t c;
	struct stat sb;
	double u = -1;
	size_t k;
	int cached = 0, dev;

	if (ocl_peek("auto", name, sizeof name, driver, sizeof driver) < 0) {
		snprintf(why, why_len, "native code: no OpenCL GPU");
		return "none";
	}
	snprintf(key, sizeof key, "extend 1 index %016" PRIx64 " e %u nogaps %d threads %d "
			"mode %d batch %zu", x->fingerprint, eo->max_a, eo->nogaps, nt, eo->mode, batch);
	path = ocl_auto_path(name, driver, key, 1);
	if (ocl_auto_load(path, name, driver, key, &c) == 0) {
		cached = 1;
	} else if (calibrate(x, eo, nt, batch, &c) < 0) {
		snprintf(why, why_len, "native code: the device '%s' failed its calibration", name);
		free(path);
		return "none";
	} else if (path && ocl_auto_save(path, name, driver, key, &c) < 0) {
		sp_warn("cannot write the -d auto calibration '%s'", path);
	}
	free(path);
	snprintf(why, why_len, "%s calibration of '%s' (driver %s): ", cached ? "cached" : "new",
			name, driver);
	k = strlen(why);
	if (in_path && strcmp(in_path, "-") && stat(in_path, &sb) == 0 && S_ISREG(sb.st_mode))
		u = (double)sb.st_size;
	dev = ocl_auto_choose(&c, u, why + k, why_len - k);
	return dev ? ocl_auto_spec() : "none";
}
