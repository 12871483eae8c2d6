/*
 * strsort_ocl.c - strsort's device path (Drozd 2014, ch. 4: the
 * communication-reducing strategy).  Only the 16-byte radix entries of
 * msd.h cross the bus, never the strings: the device sorts them stably by
 * their 8-byte key prefix (LSD radix passes, kernels/msd.cl), the host reads
 * them back and finishes the runs of equal prefixes that the prefix cannot
 * order (keys longer than 8 bytes, or of different lengths) with the CPU sort
 * (msd.c), largest runs cooperatively, the rest task-parallel.
 *
 * Batches: all entries go in one batch when they fit in the device memory
 * (two 16-byte buffers per entry plus the histogram).  Otherwise the entries
 * are bucketed by their first 16 key bits (usually done while the lines were
 * split) and consecutive buckets are grouped into batches; a single bucket
 * larger than a batch is sorted by the CPU.  A device that cannot hold even
 * a small batch leaves the whole sort to the CPU.
 *
 * Passes whose 8 prefix bits are equal in every entry of a batch are
 * skipped (their scatter would copy), so long shared prefixes cost nothing
 * on the device; a batch with one prefix does not go to the device at all.
 *
 * Overlap: the device is opened on a thread while the input is read, and
 * transfers are staged through two pinned buffers so that the host copy of
 * one piece overlaps the DMA of the other.  Ties stay in input order: the
 * entries arrive in idx order within equal prefixes and every pass is
 * stable; the CPU finishing breaks ties by idx as msd.c always does.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "inc_msd.h"
#include "msd.h"
#include "ocl.h"
#include "ocl_auto.h"
#include "sp_thread.h"
#include "strsort.h"
#include "util.h"

#define BUCKETS ((size_t)1 << 16)

enum { DEV_OFF, DEV_ON, DEV_EXPLICIT, DEV_AUTO };

/*
 * -d auto: the measured model of ocl_auto.h (ss_dev_prepare).  The
 * calibration (once per GPU, driver and thread count, cached) sorts
 * synthetic lines, 8 to 32 random letters and digits as sortgen's rand set,
 * 2^19 and 2^21 of them, natively and through the device, with the run's
 * threads; the units are bytes of input.  Measured by hand before (NVIDIA
 * H200, 16 Xeon cores, 1 GiB of random lines): the device path 1.26x faster
 * with -j 1, 1.16x with -j 2, 0.85x with -j 4, 0.59x with -j 16; the
 * calibration is to find the same.  A GPU that cannot be opened then means
 * the CPU sort, silently.
 */
#define SS_CAL_SMALL ((size_t)1 << 19)   /* lines of the two calibration sorts */
#define SS_CAL_LARGE ((size_t)1 << 21)

static struct {
	int mode;               /* DEV_EXPLICIT: until opened; DEV_AUTO: until ss_dev_prepare */
	int fallback;           /* chosen by auto: a failure to open means the CPU */
	int verbose;
	char spec[32];
	pthread_t th;           /* the thread opening the device */
	int started, pending, open_rc;
	char msg[256];
	ocl_ctx_t *ctx;
	cl_kernel k_hist, k_sums, k_top, k_apply, k_scatter;
	cl_mem buf[2], hist, sums;
	cl_mem pin[2];          /* pinned staging buffers (mapped at host[]), or NULL */
	uint8_t *host[2];
	size_t pin_size;
	int pin_tried;
	size_t bcap;            /* entries the buffers hold */
	size_t cap;             /* entries per batch the device memory allows */
	/* statistics for -v */
	double t_open;          /* seconds ocl_open took (the calibration's fixed cost) */
	double t_dev, t_fin;
	size_t n_dev, n_cpu, n_batches, n_runs, n_run_ents, n_pieces;
	unsigned n_passes;
} dev;

/* the program and its kernels, and the batch size; 0, or -1 */
static int dev_setup(void)
{
	static const char *names[5] = { "ss_hist", "ss_scan_sums", "ss_scan_top", "ss_scan_apply",
		"ss_scatter" };
	cl_kernel *ks[5] = { &dev.k_hist, &dev.k_sums, &dev.k_top, &dev.k_apply, &dev.k_scatter };
	cl_int err;
	cl_program p = ocl_program_try(dev.ctx, "msd", ocl_source("msd"), "", &err, NULL);
	uint64_t budget = ocl_mem_budget(dev.ctx, 0.8), c;
	int i;

	if (!p)
		return -1;
	for (i = 0; i < 5; i++)
		if (!(*ks[i] = ocl_kernel_try(p, names[i], &err)))
			return sp_fail("cannot create OpenCL kernel '%s': %s", names[i], ocl_strerror(err));
	/* two entry buffers, the histogram and the scan sums per entry */
	c = budget / (2 * 16 + 1);
	if (c > dev.ctx->max_alloc / 16)
		c = dev.ctx->max_alloc / 16;
	if (c > (uint64_t)UINT32_MAX - 2 * SS_DEV_BLOCK)
		c = (uint64_t)UINT32_MAX - 2 * SS_DEV_BLOCK;
	dev.cap = (size_t)(c / SS_DEV_BLOCK * SS_DEV_BLOCK);
	return 0;
}

/*
 * Open the device on its own thread while the input is read (creating a
 * context can take a good part of a second).  The program is built later,
 * on the main thread: a build points fd 2 at /dev/null for a while, which
 * must not swallow the reader's error messages.
 */
static pthread_mutex_t open_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t open_cv = PTHREAD_COND_INITIALIZER;
static int open_done;

static void do_open(void)
{
	double t0 = sp_now();

	dev.open_rc = ocl_open(dev.spec, dev.verbose ? OCL_VERBOSE : 0, &dev.ctx,
			dev.msg, sizeof dev.msg);
	if (dev.open_rc != OCL_OPEN_OK)
		dev.ctx = NULL;
	dev.t_open = sp_now() - t0;
}

/*
 * The opening thread never ends: LLVM (inside PoCL) gives the thread that
 * first uses it an alternate signal stack of its own, which AddressSanitizer
 * fails to release when such a thread exits.  It waits, idle, for the exit.
 */
static void *open_main(void *arg)
{
	(void)arg;
	do_open();
	pthread_mutex_lock(&open_mu);
	open_done = 1;
	pthread_cond_signal(&open_cv);
	pthread_mutex_unlock(&open_mu);
	for (;;)
		pause();
	return NULL;
}

static void start_open(void)
{
	if (dev.started)
		return;
	dev.started = 1;
	if (pthread_create(&dev.th, NULL, open_main, NULL) == 0) {
		pthread_detach(dev.th);
		dev.pending = 1;
	} else {
		do_open();
	}
}

/* wait for the device; 0, or the exit status for an explicit device that
 * cannot be opened (message in sp_errmsg()) */
static int join_open(void)
{
	if (dev.pending) {
		pthread_mutex_lock(&open_mu);
		while (!open_done)
			pthread_cond_wait(&open_cv, &open_mu);
		pthread_mutex_unlock(&open_mu);
		dev.pending = 0;
	}
	if (!dev.started || dev.mode == DEV_OFF || dev.mode == DEV_ON)
		return 0;
	/* DEV_EXPLICIT: the only mode that opens a device */
	if (dev.open_rc != OCL_OPEN_OK && dev.fallback) {
		if (dev.verbose)
			sp_msg("-d auto: no usable GPU (%s); sorting on the CPU", dev.msg);
		dev.mode = DEV_OFF;
		return 0;
	}
	if (dev.open_rc != OCL_OPEN_OK) {
		dev.mode = DEV_OFF;
		sp_fail("%s", dev.msg);
		return dev.open_rc;
	}
	dev.mode = dev.ctx ? DEV_ON : DEV_OFF;
	if (dev.ctx && dev_setup() < 0) {
		dev.mode = DEV_OFF;
		if (!dev.fallback)
			return SP_EXIT_DATA;
		if (dev.verbose)
			sp_msg("-d auto: %s; sorting on the CPU", sp_errmsg());
	}
	return 0;
}

int ss_dev_open(const char *spec, int verbose, int use)
{
	ocl_spec_t s;

	memset(&dev, 0, sizeof dev);
	dev.verbose = verbose;
	if (!spec || !*spec)
		spec = getenv("SEEDPIPE_DEVICE");
	if (!spec || !*spec)
		spec = "auto";
	if (ocl_parse_spec(spec, &s) < 0)
		return sp_fail("invalid device '%s' (auto, none, cpu, gpu or P:D)", spec);
	snprintf(dev.spec, sizeof dev.spec, "%s", spec);
	if (s.kind == OCL_SPEC_NONE || !use) {
		dev.mode = DEV_OFF;
	} else if (s.kind == OCL_SPEC_AUTO) {
		/* decided by ss_dev_prepare, once the input size is known */
		dev.mode = DEV_AUTO;
	} else {
		dev.mode = DEV_EXPLICIT;
		start_open();
	}
	return dev.mode == DEV_AUTO ? DEV_OFF : dev.mode;
}

/* N synthetic lines (seed SEED) in *BUF, their entries in *E and offsets in *OFF; their bytes */
static size_t cal_lines(size_t n, uint64_t seed, uint8_t **buf, sp_msd_ent **e, uint64_t **off)
{
	static const char alnum[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
	uint8_t *b = sp_malloc(n * 33 + SP_MSD_PAD);
	size_t i, k = 0;

	*e = sp_malloc(n * sizeof **e);
	*off = sp_malloc((n + 1) * sizeof **off);
	for (i = 0; i < n; i++) {
		uint32_t len, j;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		len = 8 + (uint32_t)((seed >> 33) % 25);
		(*off)[i] = k;
		for (j = 0; j < len; j++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			b[k + j] = (uint8_t)alnum[(seed >> 33) % 62];
		}
		b[k + len] = '\n';
		k += len + 1;
	}
	(*off)[n] = k;
	memset(b + k, 0, SP_MSD_PAD);
	for (i = 0; i < n; i++) {
		(*e)[i].len = (uint32_t)((*off)[i + 1] - (*off)[i] - 1);
		(*e)[i].idx = (uint32_t)i;
		(*e)[i].pfx = sp_msd_load(b + (*off)[i], (*e)[i].len, 0);
	}
	*buf = b;
	return k;
}

/* Seconds to sort the N lines (DEVICE: ss_dev_sort, else the CPU); -1 on failure. */
static double cal_sort(size_t n, int device, int nthreads)
{
	uint8_t *buf;
	sp_msd_ent *e;
	uint64_t *off;
	size_t bytes = cal_lines(n, 12345, &buf, &e, &off);
	sp_msd_src src = { buf, off, NULL };
	double t0 = sp_now(), t;
	int r = 1;

	if (device)
		r = ss_dev_sort(e, n, NULL, 0, &src, bytes, nthreads);
	else
		sp_msd_sort_ranges(e, n, &n, 1, &src, nthreads);
	t = sp_now() - t0;
	free(buf);
	free(e);
	free(off);
	return r == 1 ? t : -1;
}

static size_t cal_bytes(size_t n)
{
	uint8_t *buf;
	sp_msd_ent *e;
	uint64_t *off;
	size_t b = cal_lines(n, 12345, &buf, &e, &off);

	free(buf);
	free(e);
	free(off);
	return b;
}

/* Calibrate with the device of ocl_auto_spec() (left open when it works): 0, or -1. */
static int calibrate(int nthreads, ocl_auto_cal_t *c)
{
	double b1 = (double)cal_bytes(SS_CAL_SMALL), b2 = (double)cal_bytes(SS_CAL_LARGE);
	double tn1 = cal_sort(SS_CAL_SMALL, 0, nthreads), tn2 = cal_sort(SS_CAL_LARGE, 0, nthreads);
	double td1 = -1, td2 = -1;

	snprintf(dev.spec, sizeof dev.spec, "%s", ocl_auto_spec());
	dev.fallback = 1;
	dev.mode = DEV_EXPLICIT;
	start_open();
	join_open();
	if (dev.mode == DEV_ON) {
		cal_sort(SS_CAL_SMALL, 1, nthreads);   /* untimed: kernels compiled at first launch */
		td1 = cal_sort(SS_CAL_SMALL, 1, nthreads);
		td2 = td1 < 0 ? -1 : cal_sort(SS_CAL_LARGE, 1, nthreads);
	}
	/* the statistics of -v are the run's */
	dev.t_dev = dev.t_fin = 0;
	dev.n_dev = dev.n_cpu = dev.n_batches = dev.n_runs = dev.n_run_ents = dev.n_pieces = 0;
	dev.n_passes = 0;
	if (tn1 < 0 || tn2 < 0 || td1 < 0 || td2 < 0)
		return -1;
	ocl_auto_fit(b1, tn1, b2, tn2, &c->nat_fixed, &c->nat_unit);
	ocl_auto_fit(b1, td1, b2, td2, &c->dev_fixed, &c->dev_unit);
	/* opening the device, not the program's build (cached for the next runs) */
	c->dev_fixed += dev.t_open;
	return 0;
}

/*
 * -d auto's probe (finding the GPU, its name and driver, and the cached
 * calibration) runs in a child process from ss_dev_prepare on, while the
 * input is read and split, and the choice is made when the sort needs it
 * (ss_dev_wait); a calibration (no cached one) runs then in this process,
 * with the machine to itself.  Measured on the H200 machine (16 threads,
 * 1 GiB of random lines): probing in this process took 0.19-0.22 s before
 * the input was read, and a process that had loaded the GPU's OpenCL driver
 * took 0.04-0.07 s more to exit; the child pays both off the sort's path,
 * and this process loads the driver only for a device it will use.  Where
 * no child can be made, the probe runs here.
 */
static struct {
	int started;            /* the probe was started (and not yet used) */
	int fd;                 /* the child's results (-1: probed here) */
	pid_t pid;
	size_t bytes;
	int nthreads;
	struct probe_res {
		int found;      /* a GPU: its name and driver */
		char name[256], driver[256];
		char path[4096];        /* its calibration cache ("": none) */
		int cached;     /* the cached calibration is in cal */
		ocl_auto_cal_t cal;
	} r;
} pre = { 0, -1, 0, 0, 0, { 0, "", "", "", 0, { 0, 0, 0, 0 } } };

static void probe(struct probe_res *r, int nthreads)
{
	char key[64], *path;

	memset(r, 0, sizeof *r);
	r->found = ocl_peek("auto", r->name, sizeof r->name, r->driver, sizeof r->driver) == 0;
	if (!r->found)
		return;
	snprintf(key, sizeof key, "strsort 1 threads %d", nthreads);
	path = ocl_auto_path(r->name, r->driver, key, 1);
	if (path && strlen(path) < sizeof r->path)
		strcpy(r->path, path);
	free(path);
	r->cached = r->path[0] && ocl_auto_load(r->path, r->name, r->driver, key, &r->cal) == 0;
}

/* the probe's results (waiting for the child) */
static void probe_wait(void)
{
	size_t got = 0;
	int st;

	if (pre.fd < 0)
		return;
	while (got < sizeof pre.r) {
		ssize_t k = read(pre.fd, (char *)&pre.r + got, sizeof pre.r - got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	if (got < sizeof pre.r)
		memset(&pre.r, 0, sizeof pre.r);   /* the child failed: no GPU */
	close(pre.fd);
	pre.fd = -1;
	while (waitpid(pre.pid, &st, 0) < 0 && errno == EINTR)
		;
}

void ss_dev_prepare(size_t bytes, int nthreads)
{
	int fd[2];

	if (dev.mode != DEV_AUTO || pre.started)
		return;    /* none, or an explicit device already opening */
	pre.started = 1;
	pre.bytes = bytes;
	pre.nthreads = nthreads;
	if (pipe(fd) == 0) {
		pid_t pid;

		fflush(NULL);
		pid = fork();
		if (pid == 0) {
			struct probe_res r;
			size_t put = 0;

			close(fd[0]);
			probe(&r, nthreads);
			while (put < sizeof r) {
				ssize_t k = write(fd[1], (const char *)&r + put, sizeof r - put);

				if (k < 0 && errno == EINTR)
					continue;
				if (k <= 0)
					break;
				put += (size_t)k;
			}
			_exit(0);
		}
		close(fd[1]);
		if (pid > 0) {
			pre.fd = fd[0];
			pre.pid = pid;
			return;
		}
		close(fd[0]);
	}
	probe(&pre.r, nthreads);
}

/* -d auto: choose from the probe (calibrating first when nothing was cached) */
static void choose(void)
{
	char why[512], key[64];
	int verbose = dev.verbose;

	if (dev.mode != DEV_AUTO || !pre.started)
		return;
	probe_wait();
	pre.started = 0;
	dev.mode = DEV_OFF;
	if (!pre.r.found) {
		if (verbose)
			sp_msg("-d auto: native code: no OpenCL GPU");
		return;
	}
	if (!pre.r.cached) {
		if (calibrate(pre.nthreads, &pre.r.cal) < 0) {
			if (verbose)
				sp_msg("-d auto: native code: the device '%s' failed its calibration%s%s",
						pre.r.name, dev.msg[0] ? ": " : "", dev.msg);
			ss_dev_close();
			dev.verbose = verbose;
			return;
		}
		snprintf(key, sizeof key, "strsort 1 threads %d", pre.nthreads);
		if (pre.r.path[0] && ocl_auto_save(pre.r.path, pre.r.name, pre.r.driver, key,
				&pre.r.cal) < 0)
			sp_warn("cannot write the -d auto calibration '%s'", pre.r.path);
	}
	if (ocl_auto_choose(&pre.r.cal, (double)pre.bytes, why, sizeof why)) {
		if (verbose)
			sp_msg("-d auto: %s calibration of '%s' (driver %s): %s",
					pre.r.cached ? "cached" : "new", pre.r.name, pre.r.driver, why);
		if (!dev.started) {   /* not opened by the calibration */
			snprintf(dev.spec, sizeof dev.spec, "%s", ocl_auto_spec());
			dev.fallback = 1;
			dev.mode = DEV_EXPLICIT;
			start_open();
		} else {
			dev.mode = dev.ctx ? DEV_ON : DEV_OFF;
		}
	} else {
		if (verbose)
			sp_msg("-d auto: %s calibration of '%s' (driver %s): %s",
					pre.r.cached ? "cached" : "new", pre.r.name, pre.r.driver, why);
		if (dev.started) {   /* the calibration's device, not wanted */
			ss_dev_close();
			dev.verbose = verbose;
		}
		dev.mode = DEV_OFF;
	}
}

int ss_dev_requested(void)
{
	return dev.mode == DEV_ON || dev.mode == DEV_EXPLICIT;
}

int ss_dev_wait(void)
{
	choose();
	return join_open();
}

/* the device, opened and ready, for BYTES of input */
static int dev_ready(size_t bytes)
{
	(void)bytes;
	join_open();
	return dev.mode == DEV_ON;
}

static void dev_free_bufs(void)
{
	ocl_release(dev.buf[0]);
	ocl_release(dev.buf[1]);
	ocl_release(dev.hist);
	ocl_release(dev.sums);
	dev.buf[0] = dev.buf[1] = dev.hist = dev.sums = NULL;
	dev.bcap = 0;
}

/* buffers for batches of m entries; 0, or -1 when the device cannot hold them */
static int dev_alloc(size_t m)
{
	size_t nb = (m + SS_DEV_BLOCK - 1) / SS_DEV_BLOCK, nh = nb * SS_DEV_RADIX;
	size_t ns = (nh + SS_DEV_SCAN - 1) / SS_DEV_SCAN;

	if (m <= dev.bcap)
		return 0;
	dev_free_bufs();
	if (!(dev.buf[0] = ocl_buffer_try(dev.ctx, CL_MEM_READ_WRITE, m * 16, NULL)) ||
			!(dev.buf[1] = ocl_buffer_try(dev.ctx, CL_MEM_READ_WRITE, m * 16, NULL)) ||
			!(dev.hist = ocl_buffer_try(dev.ctx, CL_MEM_READ_WRITE, nh * 4, NULL)) ||
			!(dev.sums = ocl_buffer_try(dev.ctx, CL_MEM_READ_WRITE, ns * 4 + 4, NULL))) {
		dev_free_bufs();
		return -1;
	}
	dev.bcap = m;
	return 0;
}

/* the bits where the prefixes of a[0..n) differ */
static uint64_t diff_bits(const sp_msd_ent *a, size_t n, int nthreads)
{
	return sp_msd_diff(a, n, n < (1u << 16) ? 1 : nthreads);
}

/* ---- transfers -------------------------------------------------------- */

/*
 * Pageable host memory crosses the bus slowly (the driver copies it through
 * a pinned buffer of its own, one thread): transfers go through two pinned
 * staging buffers instead, the copy of one piece (by all threads) overlapping
 * the DMA of the other.  Without them, plain reads and writes.
 */
#define PIN_MAX ((size_t)64 << 20)

/* the staging buffers, sized for transfers of about N bytes */
static void pin_setup(size_t n)
{
	cl_int err;
	int i;

	dev.pin_tried = 1;
	dev.pin_size = (size_t)(dev.ctx->global_mem / 16);
	if (dev.pin_size > PIN_MAX)
		dev.pin_size = PIN_MAX;
	if (n / 2 > ((size_t)1 << 20) && dev.pin_size > n / 2 + 16)
		dev.pin_size = n / 2 + 16;
	else if (dev.pin_size > ((size_t)1 << 20))
		dev.pin_size = (size_t)1 << 20;
	dev.pin_size &= ~(size_t)15;
	if (dev.pin_size < 4096)
		return;
	for (i = 0; i < 2; i++) {
		/* ocl_buffer_try takes no host memory flags */
		if (dev.ctx->fail_above && dev.pin_size > dev.ctx->fail_above)
			break;
		dev.pin[i] = clCreateBuffer(dev.ctx->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
				dev.pin_size, NULL, &err);
		if (!dev.pin[i] || err != CL_SUCCESS) {
			if (dev.pin[i])
				ocl_release(dev.pin[i]);
			dev.pin[i] = NULL;
			break;
		}
		dev.host[i] = clEnqueueMapBuffer(dev.ctx->queue, dev.pin[i], CL_TRUE,
				CL_MAP_READ | CL_MAP_WRITE, 0, dev.pin_size, 0, NULL, NULL, &err);
		if (err != CL_SUCCESS || !dev.host[i]) {
			ocl_release(dev.pin[i]);
			dev.pin[i] = NULL;
			dev.host[i] = NULL;
			break;
		}
	}
	if (i < 2) {
		if (i == 1) {
			clEnqueueUnmapMemObject(dev.ctx->queue, dev.pin[0], dev.host[0], 0, NULL, NULL);
			ocl_finish_try(dev.ctx);
			ocl_release(dev.pin[0]);
		}
		dev.pin[0] = NULL;
		dev.host[0] = NULL;
	}
}

static void pin_free(void)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (!dev.pin[i])
			continue;
		clEnqueueUnmapMemObject(dev.ctx->queue, dev.pin[i], dev.host[i], 0, NULL, NULL);
		ocl_finish_try(dev.ctx);
		ocl_release(dev.pin[i]);
		dev.pin[i] = NULL;
		dev.host[i] = NULL;
	}
}

typedef struct {
	uint8_t *dst;
	const uint8_t *src;
	size_t n, ns;
} copy_ctx;

/* sp_for item: slice I of the copy */
static int copy_slice(void *arg, size_t i, int tid)
{
	copy_ctx *c = arg;
	size_t lo = c->n * i / c->ns, hi = c->n * (i + 1) / c->ns;

	(void)tid;
	memcpy(c->dst + lo, c->src + lo, hi - lo);
	return 0;
}

static void par_copy(void *dst, const void *src, size_t n, int nthreads)
{
	copy_ctx c = { dst, src, n, (size_t)nthreads };

	if (n < ((size_t)4 << 20) || nthreads < 2)
		c.ns = 1;
	if (c.ns > 16)
		c.ns = 16;
	sp_for((int)c.ns, c.ns, 1, copy_slice, &c);
}

/* wait for *ev (if any) and release it; 0, or -1 */
static int wait_ev(cl_event *ev)
{
	cl_int err = CL_SUCCESS;

	if (*ev) {
		err = clWaitForEvents(1, ev);
		clReleaseEvent(*ev);
		*ev = NULL;
	}
	return err == CL_SUCCESS ? 0 : sp_fail("OpenCL transfer failed: %s", ocl_strerror(err));
}

/* a transfer of LEN bytes queued (ERR) */
static int queued(cl_int err, size_t len)
{
	return err == CL_SUCCESS ? 0 :
		sp_fail("OpenCL transfer of %zu bytes failed: %s", len, ocl_strerror(err));
}

/* copy n bytes between host memory h and device buffer b (up: to the
 * device); 0, or -1 */
static int transfer(cl_mem b, void *h, size_t n, int up, int nthreads)
{
	uint8_t *p = h;
	cl_event ev[2] = { NULL, NULL };
	size_t off, k, np;
	int rc = 0;

	if (!dev.pin_tried)
		pin_setup(n);
	if (!dev.pin[0])
		return queued(up ? ocl_write_try(dev.ctx, b, 1, 0, n, h) : ocl_read_try(dev.ctx, b, 1, 0, n, h), n);
	np = (n + dev.pin_size - 1) / dev.pin_size;
	dev.n_pieces += np;
	if (up) {
		for (k = 0; k < np; k++) {
			int i = (int)(k & 1);
			size_t len;

			off = k * dev.pin_size;
			len = n - off < dev.pin_size ? n - off : dev.pin_size;
			if ((rc = wait_ev(&ev[i])) < 0)
				break;
			par_copy(dev.host[i], p + off, len, nthreads);
			if ((rc = queued(clEnqueueWriteBuffer(dev.ctx->queue, b, CL_FALSE, off, len,
					dev.host[i], 0, NULL, &ev[i]), len)) < 0)
				break;
			clFlush(dev.ctx->queue);
		}
	} else {
		for (k = 0; k < np + 1 && rc == 0; k++) {
			/* queue piece k, copy out piece k-1 */
			if (k < np) {
				int i = (int)(k & 1);

				size_t len;

				off = k * dev.pin_size;
				len = n - off < dev.pin_size ? n - off : dev.pin_size;
				if ((rc = queued(clEnqueueReadBuffer(dev.ctx->queue, b, CL_FALSE, off, len,
						dev.host[i], 0, NULL, &ev[i]), len)) < 0)
					break;
				clFlush(dev.ctx->queue);
			}
			if (k > 0) {
				int i = (int)((k - 1) & 1);

				off = (k - 1) * dev.pin_size;
				if ((rc = wait_ev(&ev[i])) < 0)
					break;
				par_copy(p + off, dev.host[i],
						n - off < dev.pin_size ? n - off : dev.pin_size, nthreads);
			}
		}
	}
	/* (the events left are waited for even after a failure) */
	if (wait_ev(&ev[0]) < 0 || wait_ev(&ev[1]) < 0)
		rc = -1;
	return rc;
}

/*
 * Run kernel k on GROUPS work groups, its NARGS arguments given as (size,
 * pointer) pairs, M(buffer) or V(scalar), set by ocl_args_try (ARGS, its
 * result); NAME for the message.  Returns 0, or -1.
 */
#define M(b) (size_t)sizeof(cl_mem), (const void *)&(b)
#define V(x) (size_t)sizeof(x), (const void *)&(x)
#define KERNEL(k, name, groups, nargs, ...) run_kernel(k, name, groups, ocl_args_try(k, nargs, __VA_ARGS__))

static int run_kernel(cl_kernel k, const char *name, size_t groups, cl_int args)
{
	cl_int err = args == CL_SUCCESS ? ocl_run_try(dev.ctx, k, groups * SS_DEV_WG) : args;

	if (err != CL_SUCCESS)
		return sp_fail("OpenCL kernel %s %s: %s", name,
			args == CL_SUCCESS ? "failed" : "arguments refused", ocl_strerror(err));
	return 0;
}

/* sort a[0..m) by prefix on the device, stably (the buffers hold m);
 * 0, or -1 */
static int dev_sort_batch(sp_msd_ent *a, size_t m, int nthreads)
{
	uint64_t x = diff_bits(a, m, nthreads);
	cl_uint n = (cl_uint)m, nb = (cl_uint)((m + SS_DEV_BLOCK - 1) / SS_DEV_BLOCK);
	cl_uint total = nb * SS_DEV_RADIX, nseg = (total + SS_DEV_SCAN - 1) / SS_DEV_SCAN;
	size_t groups = nb < 4096 ? nb : 4096, sgroups = nseg < 4096 ? nseg : 4096;
	cl_uint pass;
	int cur = 0;

	dev.n_batches++;
	dev.n_dev += m;
	if (x == 0)
		return 0;
	if (transfer(dev.buf[0], a, m * sizeof *a, 1, nthreads) < 0)
		return -1;
	for (pass = 0; pass < 64 / SS_DEV_BITS; pass++) {
		if (ss_dev_digit(x, pass) == 0)
			continue;
		dev.n_passes++;
		if (KERNEL(dev.k_hist, "ss_hist", groups, 5, M(dev.buf[cur]), V(n), V(pass), M(dev.hist), V(nb)) < 0 ||
				KERNEL(dev.k_sums, "ss_scan_sums", sgroups, 4, M(dev.hist), V(total), M(dev.sums), V(nseg)) < 0 ||
				KERNEL(dev.k_top, "ss_scan_top", 1, 2, M(dev.sums), V(nseg)) < 0 ||
				KERNEL(dev.k_apply, "ss_scan_apply", sgroups, 4, M(dev.hist), V(total), M(dev.sums), V(nseg)) < 0 ||
				KERNEL(dev.k_scatter, "ss_scatter", groups, 6, M(dev.buf[cur]), M(dev.buf[cur ^ 1]), V(n),
					V(pass), M(dev.hist), V(nb)) < 0)
			return -1;
		cur ^= 1;
	}
	return transfer(dev.buf[cur], a, m * sizeof *a, 0, nthreads);
}

/* ---- CPU finishing ---------------------------------------------------- */

/* a slice of the finishing: its runs left for later (off, n), its counts */
typedef struct {
	size_t *big, nbig, mbig;
	size_t runs, ents;
} fin_slice;

typedef struct {
	sp_msd_ent *a;
	size_t n, limit;
	const sp_msd_src *src;
	int ns;                /* slices */
	size_t *lo;            /* ns + 1 slice starts, at run starts */
	fin_slice *sl;
} fin_ctx;

/* run [s, e) of equal prefixes needs sorting: a key longer than the prefix
 * (step characters), or lengths differ */
static inline int unresolved(const sp_msd_ent *a, size_t s, size_t e, size_t step)
{
	size_t i;

	if (a[s].len > step)
		return 1;
	for (i = s + 1; i < e; i++)
		if (a[i].len != a[s].len)
			return 1;
	return 0;
}

/* sp_for item: slice K */
static int fin_slice_run(void *arg, size_t k, int tid)
{
	fin_ctx *f = arg;
	fin_slice *s = &f->sl[k];
	sp_msd_ent *a = f->a;
	size_t i = f->lo[k], hi = f->lo[k + 1], j;
	const sp_msd_algo *seq = sp_msd_find("msd16");

	(void)tid;
	for (; i < hi; i = j) {
		for (j = i + 1; j < hi && a[j].pfx == a[i].pfx; j++)
			;
		if (j - i < 2 || !unresolved(a, i, j, sp_msd_step(f->src)))
			continue;
		s->runs++;
		s->ents += j - i;
		if (j - i <= f->limit) {
			seq->fn(a + i, j - i, f->src, 1);
			continue;
		}
		if (s->nbig + 2 > s->mbig) {
			s->mbig = s->mbig ? 2 * s->mbig : 16;
			s->big = sp_realloc(s->big, s->mbig * sizeof *s->big);
		}
		s->big[s->nbig++] = i;
		s->big[s->nbig++] = j - i;
	}
	return 0;
}

/* a[0..n) is sorted by prefix, equal prefixes in idx order: finish it */
static void finish(sp_msd_ent *a, size_t n, const sp_msd_src *src, int nthreads)
{
	fin_ctx f;
	int t;
	size_t k;

	memset(&f, 0, sizeof f);
	f.a = a;
	f.n = n;
	f.src = src;
	f.ns = n < (1u << 16) ? 1 : nthreads < 1 ? 1 : nthreads;
	f.limit = n / (8 * (size_t)f.ns);
	if (f.limit < (1u << 16))
		f.limit = 1u << 16;
	f.lo = sp_calloc((size_t)f.ns + 1, sizeof *f.lo);
	f.sl = sp_calloc((size_t)f.ns, sizeof *f.sl);
	/* slices start at run starts */
	for (t = 0; t <= f.ns; t++) {
		size_t p = n * (size_t)t / (size_t)f.ns;

		if (t > 0 && p < f.lo[t - 1])
			p = f.lo[t - 1];
		while (p > 0 && p < n && a[p].pfx == a[p - 1].pfx)
			p++;
		f.lo[t] = p;
	}
	sp_for(f.ns, (size_t)f.ns, 1, fin_slice_run, &f);
	for (t = 0; t < f.ns; t++) {
		fin_slice *s = &f.sl[t];

		for (k = 0; k < s->nbig; k += 2) {
			size_t m = s->big[k + 1];

			sp_msd_sort_ranges(a + s->big[k], m, &m, 1, src, nthreads);
		}
		free(s->big);
		dev.n_runs += s->runs;
		dev.n_run_ents += s->ents;
	}
	free(f.lo);
	free(f.sl);
}

/* ---- batches ---------------------------------------------------------- */

/* stable partition of a[0..n) by the first 16 prefix bits; ends[] as in sp_msd_sort_ranges */
static void bucket16(sp_msd_ent *a, size_t n, size_t *ends)
{
	sp_msd_ent *t = sp_big_alloc(n * sizeof *t);
	size_t i, d, pos = 0;

	memset(ends, 0, BUCKETS * sizeof *ends);
	for (i = 0; i < n; i++)
		ends[a[i].pfx >> 48]++;
	for (d = 0; d < BUCKETS; d++) {
		size_t c = ends[d];

		ends[d] = pos;
		pos += c;
	}
	for (i = 0; i < n; i++)
		t[ends[a[i].pfx >> 48]++] = a[i];
	memcpy(a, t, n * sizeof *a);
	sp_big_free(t, n * sizeof *t);
}

/* sort and finish the batch a[lo, hi); 0, or -1 */
static int flush(sp_msd_ent *a, size_t lo, size_t hi, const sp_msd_src *src, int nthreads)
{
	double t0 = sp_now();

	if (hi <= lo)
		return 0;
	if (dev_sort_batch(a + lo, hi - lo, nthreads) < 0)
		return -1;
	dev.t_dev += sp_now() - t0;
	t0 = sp_now();
	finish(a + lo, hi - lo, src, nthreads);
	dev.t_fin += sp_now() - t0;
	return 0;
}

/*
 * Group the buckets ends[0..nr) of a into batches of at most dev.cap
 * entries; with run, sort them (a bucket larger than a batch on the CPU).
 * Sets *maxb to the largest batch.  Returns 0, or -1 (with run).
 */
static int batches(sp_msd_ent *a, const size_t *ends, size_t nr, const sp_msd_src *src,
		int nthreads, int run, size_t *maxb)
{
	size_t r, pos, blo = 0, bhi = 0;

	*maxb = 0;

	for (r = 0, pos = 0; r < nr; pos = ends[r++]) {
		size_t e = ends[r], m = e - pos;

		if (m > dev.cap || e - blo > dev.cap) {
			if (bhi - blo > *maxb)
				*maxb = bhi - blo;
			if (run && flush(a, blo, bhi, src, nthreads) < 0)
				return -1;
			blo = bhi = pos;
		}
		if (m > dev.cap) {
			if (run) {
				double t0 = sp_now();

				dev.n_cpu += m;
				sp_msd_sort_ranges(a + pos, m, &m, 1, src, nthreads);
				dev.t_fin += sp_now() - t0;
			}
			blo = e;
		}
		bhi = e;
	}
	if (bhi - blo > *maxb)
		*maxb = bhi - blo;
	return run ? flush(a, blo, bhi, src, nthreads) : 0;
}

int ss_dev_sort(sp_msd_ent *a, size_t n, const size_t *ends, size_t nr,
		const sp_msd_src *src, size_t bytes, int nthreads)
{
	size_t *own = NULL, maxb;
	int rc;

	if (n < 2 || !dev_ready(bytes))
		return 0;
	for (;;) {
		if (dev.cap < SS_DEV_BLOCK)
			break;
		if (n <= dev.cap) {
			maxb = n;
		} else {
			if (!ends || nr != BUCKETS) {
				own = sp_malloc(BUCKETS * sizeof *own);
				bucket16(a, n, own);
				ends = own;
				nr = BUCKETS;
			}
			batches(a, ends, nr, src, nthreads, 0, &maxb);
		}
		if (maxb == 0 || dev_alloc(maxb) == 0)
			break;
		dev.cap = dev.cap / 2 / SS_DEV_BLOCK * SS_DEV_BLOCK;
	}
	if (dev.cap < SS_DEV_BLOCK) {
		if (dev.verbose)
			sp_msg("the device cannot hold a batch; sorting on the CPU");
		free(own);
		return 0;
	}
	if (n <= dev.cap)
		rc = flush(a, 0, n, src, nthreads);
	else
		rc = batches(a, ends, nr, src, nthreads, 1, &maxb);
	free(own);
	return rc < 0 ? -1 : 1;
}

void ss_dev_close(void)
{
	probe_wait();
	pre.started = 0;
	join_open();
	if (dev.ctx && dev.verbose && dev.n_batches)
		sp_msg("device sort: %zu entries in %zu batches, %u passes, %.3f s, "
			"%zu pinned transfer pieces; CPU: %zu entries of oversized buckets, "
			"%zu unresolved runs of %zu entries finished in %.3f s",
			dev.n_dev, dev.n_batches, dev.n_passes, dev.t_dev, dev.n_pieces,
			dev.n_cpu, dev.n_runs, dev.n_run_ents, dev.t_fin);
	if (dev.ctx) {
		dev_free_bufs();
		pin_free();
		clReleaseKernel(dev.k_hist);
		clReleaseKernel(dev.k_sums);
		clReleaseKernel(dev.k_top);
		clReleaseKernel(dev.k_apply);
		clReleaseKernel(dev.k_scatter);
		ocl_close(dev.ctx);
	}
	memset(&dev, 0, sizeof dev);
}
