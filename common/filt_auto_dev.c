/*
 * filt_auto_dev.c - seedfilt -d auto: native code or device, by the
 * measured model of ocl_auto.h.
 *
 * Calibration (once per device, driver, index and run options, cached): a
 * fixed synthetic workload, reads of the run's read length (100 when the
 * first read is too short for a pattern) cut from the index's own
 * reference at positions drawn by a fixed generator (windows without N),
 * half of them reverse complemented, one substitution each, named like
 * simulator reads; two
 * sizes (2 and 6 batches of the run's -B) filtered by the native code and
 * by the device with the run's threads, into /dev/null.  Each path's
 * per-byte cost is the slope between the two sizes (the device's after an
 * untimed first run: some drivers compile kernels at their first launch),
 * its fixed cost the rest; the device's fixed cost adds what opening it,
 * setting it up (index upload, kernels from the cache) and releasing it
 * took, timed on a second opening when the first one had to build kernels.
 * The units are bytes of input: the input file's size (a gzip file counts
 * 3.5 times its size; a pipe is of unknown size).  Under seedfilt -M an
 * index loaded in parts is calibrated on one partition (calibrate).
 */
#include <fcntl.h>
#include <pthread.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "filt_priv.h"
#include "ocl.h"
#include "ocl_auto.h"
#include "rec.h"
#include "rec_kinds.h"
#include "sp_tmp.h"
#include "util.h"

#define GZ_RATIO 3.5     /* bytes of FASTQ per byte of gzip, roughly */
#define CAL_LEN 100      /* read length of the calibration when the first read is short */
#define CAL_PARTS_BATCH 512  /* -M: most reads of a calibration batch (see calibrate) */

static uint64_t mix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* N synthetic reads of LEN bases drawn from the bases [LO, HI) of X's
 * reference into a temporary FASTQ file (*T); its bytes, or -1. */
static double write_reads(const idx_t *x, uint32_t len, size_t n, uint64_t lo, uint64_t hi,
		sp_tmp_t **t)
{
	const char *dir = getenv("TMPDIR");
	char prefix[4096], *rd = sp_malloc((size_t)len * 2 + 2), *q = sp_malloc(len + 2);
	uint64_t s = 0x5eedf117ull, span = hi - lo > len ? hi - lo - len : 1;
	double bytes = 0;
	size_t i;
	FILE *f;
	int fd;

	snprintf(prefix, sizeof prefix, "%s/seedfilt-cal.", dir && *dir ? dir : "/tmp");
	fd = sp_tmp_create(prefix, t);
	f = fd < 0 ? NULL : fdopen(fd, "w");
	memset(q, 'I', len);
	q[len] = 0;
	for (i = 0; f && i < n; i++) {
		uint64_t g = hi - lo > len ? lo + mix64(&s) % span : lo, r = mix64(&s);
		uint32_t j, tries;

		/* a window in one sequence without N (N runs are packed as A: poly-A
		 * reads would time the repeats, not the reads), 64 draws at most */
		for (tries = 0; tries < 64 && hi - lo > len && !idx_range_clean(x, g, len); tries++)
			g = lo + mix64(&s) % span;

		for (j = 0; j < len; j++) {
			uint64_t p = g + j < x->total ? g + j : 0;
			int b = (x->pack[p >> 2] >> (2 * (p & 3))) & 3;

			if (r & 1)
				rd[len - 1 - j] = "TGCA"[b];
			else
				rd[j] = "ACGT"[b];
		}
		j = (uint32_t)((r >> 8) % len);
		rd[j] = rd[j] == 'A' ? 'C' : 'A';
		rd[len] = 0;
		bytes += fprintf(f, "@cal.%zu/1 pos=%" PRIu64 "\n%s\n+\n%s\n", i, g, rd, q);
	}
	free(rd);
	free(q);
	if (!f || fclose(f) != 0) {
		if (f == NULL && fd >= 0)
			close(fd);
		sp_tmp_remove(*t);
		return -1;
	}
	return bytes;
}

/* Seconds to filter the reads of PATH with RUN (native when run->dev is NULL); -1 on failure. */
static double timed_run(const idx_t *x, const filt_run_t *run, const char *path)
{
	filt_in_t *in = filt_in_open_or_die(path);
	int fd = open("/dev/null", O_WRONLY);
	filt_stats_t st;
	filt_times_t tm;
	rec_prov_t prov;
	rec_writer_t *w;
	double t0 = sp_now(), t;
	int status = 0, r;

	rec_prov_init(&prov);
	w = fd < 0 ? NULL : rec_writer_fd(fd, "/dev/null", REC_KIND_CANDIDATES, &prov, 0, 1,
			&status);
	r = w ? filt_run(x, run, in, w, &st, &tm) : -1;
	if (w && rec_writer_close(w, NULL, 0) < 0)
		r = -1;
	t = sp_now() - t0;
	if (fd >= 0)
		close(fd);
	filt_in_close(in);
	rec_prov_free(&prov);
	return r < 0 ? -1 : t;
}

/* Open SPEC and set RUN's device up; the seconds it took, or -1 (nothing left open). */
static double dev_open(const idx_t *x, filt_run_t *run, const char *spec, ocl_ctx_t **ocl,
		unsigned *builds)
{
	double t0 = sp_now();
	char msg[512];

	run->dev = NULL;
	if (ocl_open(spec, 0, ocl, msg, sizeof msg) != OCL_OPEN_OK || !*ocl)
		return -1;
	run->dev = filt_dev_new(*ocl, x, &run->o, msg, sizeof msg);
	if (!run->dev) {
		ocl_close(*ocl);
		*ocl = NULL;
		return -1;
	}
	filt_dev_set_threads(run->dev, run->n_threads);
	*builds = (*ocl)->n_builds;
	return sp_now() - t0;
}

static double dev_close(filt_run_t *run, ocl_ctx_t *ocl)
{
	double t0 = sp_now();

	filt_dev_free(run->dev);
	run->dev = NULL;
	ocl_close(ocl);
	return sp_now() - t0;
}

/*
 * The partition an index loaded in parts (seedfilt -M) is calibrated on:
 * the one with the most seed positions (the budget holds each partition
 * beside a batch, so this one too); *F gets the seed positions of the whole
 * index per seed position of it, the factor its times are scaled by.
 */
static uint32_t cal_part(const idx_t *x, double *f)
{
	uint64_t all = 0;
	uint32_t i, best = 0;

	for (i = 0; i < x->n_part; i++) {
		all += x->part[i].n_occ;
		if (x->part[i].n_occ > x->part[best].n_occ)
			best = i;
	}
	*f = x->part[best].n_occ ? (double)all / (double)x->part[best].n_occ : 1;
	return best;
}

/*
 * Calibrate for reads of LEN0 bases into *C: 0, or -1 when the device
 * cannot be used.  An index loaded in parts (seedfilt -M: X0->lazy) is not
 * read whole: the runs are timed on its largest partition alone, with reads
 * drawn from that partition, its pages let go afterwards, and the times
 * scaled by the index's seed positions per seed position of the partition
 * (both paths alike, so the choice between them is that of the partition);
 * its batches hold at most CAL_PARTS_BATCH reads, as the device's buffers
 * for a batch (host memory on a CPU device) are not in the budget's
 * estimate of a read.  The calibration then fits the budget whenever one
 * partition does.
 */
static int calibrate(const idx_t *x0, const filt_run_t *run0, uint32_t len0, ocl_auto_cal_t *c)
{
	filt_run_t run = *run0;
	idx_t view;
	const idx_t *x = x0;
	double f = 1;
	uint32_t part = 0;
	uint64_t lo = 0, hi = x0->total;
	/* reads too short for a pattern would time nothing but the reading */
	uint32_t len = len0 >= 2 * x0->p.span + 8 ? len0 : CAL_LEN;
	size_t n1, n2;
	sp_tmp_t *t1 = NULL, *t2 = NULL;
	double b1, b2, tn1, tn2, td1 = -1, td2 = -1, topen, tclose = 0;
	ocl_ctx_t *ocl = NULL;
	unsigned builds = 0;

	if (x0->lazy && x0->n_part > 1) {
		part = cal_part(x0, &f);
		idx_part_view(x0, part, &view);
		x = &view;
		lo = x->part[0].beg;
		hi = x->part[0].end;
		if (run.batch > CAL_PARTS_BATCH)
			run.batch = CAL_PARTS_BATCH;
	}
	n1 = 2 * run.batch;
	n2 = 6 * run.batch;
	b1 = write_reads(x, len, n1, lo, hi, &t1);
	b2 = b1 < 0 ? -1 : write_reads(x, len, n2, lo, hi, &t2);
	run.verbose = 0;
	run.sens_len = 0;
	run.bound.set = 0;
	run.dev = NULL;
	if (b2 < 0) {
		sp_tmp_remove(t1);
		return -1;
	}
	tn1 = timed_run(x, &run, t1->path);
	tn2 = timed_run(x, &run, t2->path);
	topen = dev_open(x, &run, ocl_auto_spec(), &ocl, &builds);
	if (topen >= 0 && builds) {   /* kernels were built, not loaded: time a warm opening */
		dev_close(&run, ocl);
		topen = dev_open(x, &run, ocl_auto_spec(), &ocl, &builds);
	}
	if (topen >= 0) {
		/* a first run untimed: drivers that compile kernels at their first launch */
		td1 = timed_run(x, &run, t1->path);
		td1 = td1 < 0 ? -1 : timed_run(x, &run, t1->path);
		td2 = td1 < 0 ? -1 : timed_run(x, &run, t2->path);
		tclose = dev_close(&run, ocl);
	}
	sp_tmp_remove(t1);
	sp_tmp_remove(t2);
	if (x != x0)
		idx_part_drop(x0, part);
	if (tn1 < 0 || tn2 < 0 || td1 < 0 || td2 < 0)
		return -1;
	ocl_auto_fit(b1, tn1, b2, tn2, &c->nat_fixed, &c->nat_unit);
	ocl_auto_fit(b1, td1, b2, td2, &c->dev_fixed, &c->dev_unit);
	c->dev_fixed += topen + tclose;
	c->nat_fixed *= f;
	c->nat_unit *= f;
	c->dev_fixed *= f;
	c->dev_unit *= f;
	return 0;
}

/* Bytes of input of PATH (NULL or "-": stdin), -1 when unknown. */
static double input_units(const char *path)
{
	unsigned char m[2] = { 0, 0 };
	struct stat sb;
	int fd;

	if (!path || !strcmp(path, "-") || stat(path, &sb) < 0 || !S_ISREG(sb.st_mode))
		return -1;
	if ((fd = open(path, O_RDONLY)) >= 0) {
		if (read(fd, m, 2) != 2)
			m[0] = 0;
		close(fd);
	}
	return (double)sb.st_size * (m[0] == 0x1f && m[1] == 0x8b ? GZ_RATIO : 1);
}

/* The calibration for device NAME, DRIVER and RUN's key into *C (made when
 * not cached: *CACHED 0): 0, or -1 when the device failed it. */
static int calibration(const idx_t *x, const filt_run_t *run, uint32_t len, const char *name,
		const char *driver, ocl_auto_cal_t *c, int *cached)
{
	char key[512], fp[20], *path;
	int r = 0;

	snprintf(fp, sizeof fp, "%016" PRIx64, x->fingerprint);
	snprintf(key, sizeof key, "seedfilt 1 index %s method %s e %u step %u any %d cap %u "
			"count %d threads %d batch %zu len %u", fp, filt_method_name(run->o.method),
			run->o.e, run->o.step, run->o.any, run->o.cap, run->o.count_only,
			run->n_threads, run->batch, len);
	path = ocl_auto_path(name, driver, key, 1);
	*cached = ocl_auto_load(path, name, driver, key, c) == 0;
	if (!*cached && (r = calibrate(x, run, len, c)) == 0 && path &&
			ocl_auto_save(path, name, driver, key, c) < 0)
		sp_warn("cannot write the -d auto calibration '%s'", path);
	free(path);
	return r;
}

ocl_ctx_t *filt_dev_auto(const idx_t *x, const filt_run_t *run, const char *in_path,
		const char *in2_path, uint32_t len, unsigned flags, char *why, size_t why_len)
{
	char name[256], driver[256], msg[512], stale[1024] = "";
	const char *from = "";
	ocl_auto_cal_t c;
	ocl_ctx_t *ocl;
	int cached, known, probe;
	size_t k;

	/* a first pass with the device of the cache; a second one, probed, when
	 * the cache proved stale */
	for (probe = 0; probe < 2; probe++) {
		if (probe)
			ocl_auto_forget();
		if (ocl_auto_peek(name, sizeof name, driver, sizeof driver, &known) < 0)
			known = known ? -2 : -1;
		from = known > 0 ? "; the device known from the cache of this system's OpenCL "
			"setup, OpenCL not loaded" : "";
		if (known < 0) {
			snprintf(why, why_len, "native code: no OpenCL GPU%s%s", known == -2 ?
					" (known from the cache of this system's OpenCL setup, OpenCL "
					"not loaded)" : "", stale);
			return NULL;
		}
		if (len == 0) {
			snprintf(why, why_len, "native code: empty input");
			return NULL;
		}
		if (calibration(x, run, len, name, driver, &c, &cached) < 0) {
			if (known) {   /* the cached device may not be there any more */
				snprintf(stale, sizeof stale, "; the cached device '%s' failed its "
						"calibration: probed again", name);
				continue;
			}
			snprintf(why, why_len, "native code: the device '%s' failed its calibration%s",
					name, stale);
			return NULL;
		}
		snprintf(why, why_len, "%s calibration of '%s' (driver %s%s%s): ",
				cached ? "cached" : "new", name, driver, from, stale);
		k = strlen(why);
		{
			double u = input_units(in_path), u2 = in2_path ? input_units(in2_path) : 0;

			if (!ocl_auto_choose(&c, u < 0 || u2 < 0 ? -1 : u + u2, why + k, why_len - k))
				return NULL;
		}
		/* the device: opened here, and checked when the cache named it */
		if (ocl_open(ocl_auto_spec(), flags & ~OCL_VERBOSE, &ocl, msg, sizeof msg) ==
				OCL_OPEN_OK && ocl && (!known || (!strcmp(ocl->name, name) &&
						!strcmp(ocl->driver_version, driver))))
			return ocl;
		if (!known) {
			sp_warn("%s: filtering with the native C code", msg[0] ? msg :
					"no device opened");
			ocl_close(ocl);
			return NULL;
		}
		snprintf(stale, sizeof stale, "; the cached device '%s' (driver %s) is now %s%s%s: "
				"probed again", name, driver, ocl ? "'" : "not there", ocl ? ocl->name : "",
				ocl ? "'" : "");
		ocl_close(ocl);
	}
	snprintf(why, why_len, "native code: the device could not be had%s", stale);
	return NULL;
}

typedef struct {
	const char *path;
	int flags;    /* idx_load's */
	idx_t *x;
	char *err;
	double t;     /* seconds it took */
} idx_job_t;

static void *idx_thread(void *arg)
{
	idx_job_t *j = arg;
	double t0 = sp_now();

	j->x = idx_load(j->path, j->flags, &j->err);
	j->t = sp_now() - t0;
	return NULL;
}

idx_t *filt_open_or_die(const char *index, const char *spec, unsigned flags, int load_flags,
		ocl_ctx_t **ocl)
{
	idx_job_t j = { index, load_flags, NULL, NULL, 0 };
	double t0 = sp_now(), t_open;
	pthread_t th;
	int threaded;

	*ocl = NULL;
	if (!spec)
		return idx_open_or_die(index, load_flags);
	threaded = pthread_create(&th, NULL, idx_thread, &j) == 0;
	*ocl = ocl_open_or_die(spec, flags);
	t_open = sp_now() - t0;
	if (threaded)
		pthread_join(th, NULL);
	else
		idx_thread(&j);
	if (!j.x)
		sp_die("index '%s': %s", index, j.err);
	if ((flags & OCL_VERBOSE) && *ocl)
		sp_msg("device opened in %.3f s while the index loaded in %.3f s", t_open, j.t);
	return j.x;
}
