/*
 * thread_test.c - sp_for and sp_pipeline against plain serial oracles:
 * every item exactly once, batches through every step in input order,
 * at most nbatches in flight, the first failure reported once and work
 * stopped, abandoned batches dropped; parallel steps run for several
 * batches at once (never more than the width) while the ordered steps
 * around them still see the batches in order; a crew runs every item of
 * every job exactly once, its waiter returns only after all of them, with
 * the job's first failure.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sp_thread.h"
#include "util.h"
#include "tap.h"
#include "testutil.h"

/* ---- sp_for ---- */

typedef struct {
	atomic_int *hits;
	size_t fail_at;     /* item that fails, or (size_t)-1 */
	int nthreads;
	atomic_int bad_tid;
	atomic_size_t ran;
} for_ctx;

static int for_item(void *ctx, size_t i, int tid)
{
	for_ctx *c = ctx;

	if (tid < 0 || tid >= c->nthreads)
		atomic_store(&c->bad_tid, 1);
	atomic_fetch_add(&c->ran, 1);
	if (i == c->fail_at)
		return sp_fail("item %zu failed", i);
	atomic_fetch_add(&c->hits[i], 1);
	return 0;
}

static void test_for(void)
{
	uint64_t st = 12345;
	int round, ok_once = 1, ok_tid = 1, ok_err = 1, ok_stop = 1;

	for (round = 0; round < 200; round++) {
		size_t n = tu_xorshift64(&st) % 5000, chunk = tu_xorshift64(&st) % 40, i;
		int nt = 1 + (int)(tu_xorshift64(&st) % 9), r;
		for_ctx c;

		c.hits = calloc(n + 1, sizeof *c.hits);
		c.fail_at = (size_t)-1;
		c.nthreads = nt;
		atomic_init(&c.bad_tid, 0);
		atomic_init(&c.ran, 0);
		if (round % 4 == 3 && n > 0)
			c.fail_at = tu_xorshift64(&st) % n;
		sp_fail("%s", "");
		r = sp_for(nt, n, chunk, for_item, &c);
		if (c.fail_at == (size_t)-1) {
			for (i = 0; i < n; i++)
				if (atomic_load(&c.hits[i]) != 1)
					ok_once = 0;
			if (r != 0)
				ok_err = 0;
		} else {
			char want[64];

			snprintf(want, sizeof want, "item %zu failed", c.fail_at);
			if (r != -1 || strcmp(sp_errmsg(), want) != 0)
				ok_err = 0;
			for (i = 0; i < n; i++)
				if (atomic_load(&c.hits[i]) > 1)
					ok_once = 0;
		}
		if (atomic_load(&c.bad_tid))
			ok_tid = 0;
		free(c.hits);
	}
	tap_ok(ok_once, "sp_for: every item runs exactly once (200 random n, chunk, threads)");
	tap_ok(ok_tid, "sp_for: tid is below the thread count");
	tap_ok(ok_err, "sp_for: a failure returns -1 with the failing item's message");

	/* after a failure in the first item, a large run stops early */
	{
		size_t n = 1000000;
		for_ctx c;

		c.hits = calloc(n, sizeof *c.hits);
		c.fail_at = 0;
		c.nthreads = 4;
		atomic_init(&c.bad_tid, 0);
		atomic_init(&c.ran, 0);
		(void)sp_for(4, n, 1, for_item, &c);
		ok_stop = atomic_load(&c.ran) < n;
		free(c.hits);
	}
	tap_ok(ok_stop, "sp_for: work stops after the first failure");
}

/* ---- sp_pipeline ---- */

typedef struct { int id; int val; } batch;

#define NSTEP 4

typedef struct {
	int nb;             /* batches to produce */
	int produced;
	int seen[NSTEP];    /* next batch number each step expects */
	int in_order;
	atomic_int inflight, max_inflight;
	int fail_step, fail_batch;
	atomic_int dropped;
	int finished;
	int busy[NSTEP];    /* an ordered step never runs twice at once */
	int overlap_bad;
	uint64_t rng;
	unsigned par;       /* the parallel steps */
	atomic_int in_par, max_par;  /* batches in parallel steps: now, most */
	atomic_int second_in;        /* batch 1 reached a parallel step */
	int met;            /* batch 0 saw batch 1 in a parallel step while in one */
	int can_meet;       /* width and nbatches let them */
	int waited;         /* batch 0 waited (in its first parallel step only) */
} pipe_ctx;

/*
 * Parallel step: count who is in; batch 0 waits in its first one (up to
 * 5 s) for batch 1 to reach one.
 */
static void par_step(pipe_ctx *c, batch *b)
{
	int k = atomic_fetch_add(&c->in_par, 1) + 1, m = atomic_load(&c->max_par), t;

	while (k > m && !atomic_compare_exchange_weak(&c->max_par, &m, k))
		;
	if (b->id == 1)
		atomic_store(&c->second_in, 1);
	if (b->id == 0 && c->can_meet && !c->waited++)
		for (t = 0; t < 5000 && !c->met; t++) {
			if (atomic_load(&c->second_in))
				c->met = 1;
			else
				usleep(1000);
		}
	usleep(b->id % 3 == 0 ? 200 : 20);
	atomic_fetch_sub(&c->in_par, 1);
}

static int pipe_step(void *ctx, int step, void **data)
{
	pipe_ctx *c = ctx;
	batch *b;

	/* only ordered steps are exclusive: a parallel one may run for several
	 * batches at once, so counting it here would report a false overlap */
	if (!(c->par >> step & 1) && __atomic_fetch_add(&c->busy[step], 1, __ATOMIC_SEQ_CST) != 0)
		c->overlap_bad = 1;
	if (step == 0) {
		if (c->produced == c->nb) {
			__atomic_fetch_sub(&c->busy[step], 1, __ATOMIC_SEQ_CST);
			return 1;
		}
		b = malloc(sizeof *b);
		b->id = c->produced++;
		b->val = 0;
		*data = b;
		int k = atomic_fetch_add(&c->inflight, 1) + 1, m = atomic_load(&c->max_inflight);

		while (k > m && !atomic_compare_exchange_weak(&c->max_inflight, &m, k))
			;
	}
	b = *data;
	if (c->par >> step & 1) {
		if (b->val != step)
			c->in_order = 0;
		b->val++;
		par_step(c, b);
		if (step == c->fail_step && b->id == c->fail_batch)
			return sp_fail("batch %d failed at step %d", b->id, step);
		return 0;
	}
	if (b->id != c->seen[step])
		c->in_order = 0;
	c->seen[step] = b->id + 1;
	if (b->val != step)
		c->in_order = 0;
	b->val++;
	if (b->id % 3 == 0)
		usleep(50);
	__atomic_fetch_sub(&c->busy[step], 1, __ATOMIC_SEQ_CST);
	if (step == c->fail_step && b->id == c->fail_batch)
		return sp_fail("batch %d failed at step %d", b->id, step);
	if (step == NSTEP - 1) {
		c->finished++;
		atomic_fetch_sub(&c->inflight, 1);
		free(b);
		*data = NULL;
	}
	return 0;
}

static void pipe_drop(void *ctx, void *data)
{
	pipe_ctx *c = ctx;

	atomic_fetch_add(&c->dropped, 1);
	atomic_fetch_sub(&c->inflight, 1);
	free(data);
}

/*
 * NB batches, NBATCHES in flight, steps PAR parallel (of WIDTH), none
 * failing: sp_pipeline's (or sp_pipeline_par's) result, C filled.
 */
static int run_all(pipe_ctx *c, int nbatches, int nb, unsigned par, int width)
{
	sp_pipe p = { NSTEP, nbatches, pipe_step, pipe_drop, NULL };

	memset(c, 0, sizeof *c);
	c->nb = nb;
	c->in_order = 1;
	c->fail_step = -1;
	c->par = par;
	c->can_meet = (width >= 2 || (width == 0 && nbatches >= 2)) && nbatches >= 2;
	p.ctx = c;
	return par ? sp_pipeline_par(&p, par, width) : sp_pipeline(&p);
}

/*
 * 50 batches, NB in flight, steps PAR parallel (of WIDTH), batch 7 failing
 * at step 2: whether the run returned that failure alone and nothing leaked
 * (every batch made was finished or dropped, none after batch 6 finished).
 */
static int fails_once(int nb, unsigned par, int width)
{
	pipe_ctx c;
	sp_pipe p = { NSTEP, nb, pipe_step, pipe_drop, NULL };
	int r;

	memset(&c, 0, sizeof c);
	c.nb = 50;
	c.in_order = 1;
	c.fail_step = 2;
	c.fail_batch = 7;
	c.par = par;
	p.ctx = &c;
	r = par ? sp_pipeline_par(&p, par, width) : sp_pipeline(&p);
	return r == -1 && strcmp(sp_errmsg(), "batch 7 failed at step 2") == 0
		&& atomic_load(&c.inflight) == 0 && c.finished <= 7;
}

static void test_pipeline(void)
{
	int nbs[] = { 1, 2, 3, 5, 8 }, k, ok = 1, ok_bound = 1, ok_fail = 1, ok_excl = 1;

	for (k = 0; k < 5; k++) {
		int nb;

		for (nb = 0; nb < 40; nb += 13) {
			pipe_ctx c;
			int r = run_all(&c, nbs[k], nb, 0, 0);

			if (r != 0 || !c.in_order || c.finished != nb || atomic_load(&c.dropped))
				ok = 0;
			if (atomic_load(&c.max_inflight) > nbs[k])
				ok_bound = 0;
			if (c.overlap_bad)
				ok_excl = 0;
		}
	}
	tap_ok(ok, "sp_pipeline: every batch passes every step once, in input order");
	tap_ok(ok_bound, "sp_pipeline: at most nbatches batches in flight");
	tap_ok(ok_excl, "sp_pipeline: a step never runs on two batches at once");

	for (k = 0; k < 5; k++)
		if (!fails_once(nbs[k], 0, 0))
			ok_fail = 0;
	tap_ok(ok_fail, "sp_pipeline: the first failure stops the run, is reported once, "
			"and every batch left is dropped");
}

/* Steps 1 and 2 of 4 parallel, of width 1, 2, 3 or any. */
static void test_parallel(void)
{
	int nbs[] = { 1, 2, 3, 5, 8 }, widths[] = { 1, 2, 3, 0 }, k, q;
	int ok = 1, ok_bound = 1, ok_width = 1, ok_met = 1, ok_excl = 1, ok_fail = 1;

	for (k = 0; k < 5; k++)
		for (q = 0; q < 4; q++) {
			int nb, width = widths[q] ? widths[q] : nbs[k];

			for (nb = 0; nb < 40; nb += 13) {
				pipe_ctx c;
				int r = run_all(&c, nbs[k], nb, 6u, widths[q]);
				if (r != 0 || !c.in_order || c.finished != nb || atomic_load(&c.dropped))
					ok = 0;
				if (atomic_load(&c.max_inflight) > nbs[k])
					ok_bound = 0;
				if (atomic_load(&c.max_par) > width)
					ok_width = 0;
				/* two batches in parallel steps at once whenever they may be */
				if (nb >= 2 && width >= 2 && nbs[k] >= 2 && !c.met)
					ok_met = 0;
				if (c.overlap_bad)
					ok_excl = 0;
			}
		}
	tap_ok(ok, "sp_pipeline, parallel steps: every batch passes every step once, "
			"the ordered ones in input order");
	tap_ok(ok_bound, "sp_pipeline, parallel steps: at most nbatches batches in flight");
	tap_ok(ok_width, "sp_pipeline, parallel steps: at most width batches in them at once");
	tap_ok(ok_met, "sp_pipeline, parallel steps: they run for several batches at once");
	tap_ok(ok_excl, "sp_pipeline, parallel steps: an ordered step never runs twice at once");

	for (k = 0; k < 5; k++)
		for (q = 0; q < 4; q++)
			if (!fails_once(nbs[k], 6u, widths[q]))
				ok_fail = 0;
	tap_ok(ok_fail, "sp_pipeline, parallel steps: the first failure stops the run, is "
			"reported once, and every batch left is dropped");
}

/*
 * The read step runs ahead on one thread: step 0 of batch i on the thread
 * that ran it for batch i-1 while fewer than nbatches are in flight (no
 * hand-over to another thread per batch), with a slow parallel step 1.
 */
typedef struct {
	int n;
	pthread_t reader[64];
} ahead_ctx;

static int ahead_step(void *ctx, int step, void **data)
{
	ahead_ctx *c = ctx;

	if (step == 0) {
		if (c->n == 64)
			return 1;
		c->reader[c->n] = pthread_self();
		*data = (void *)(intptr_t)(c->n++ + 1);
	} else if (step == 1) {
		usleep(2000);
	}
	return 0;
}

static void test_read_ahead(void)
{
	ahead_ctx c;
	sp_pipe p = { 3, 8, ahead_step, NULL, NULL };
	int i, same = 1;

	memset(&c, 0, sizeof c);
	p.ctx = &c;
	tap_ok(sp_pipeline_par(&p, 2u, 4) == 0 && c.n == 64, "read-ahead pipeline runs");
	for (i = 1; i < 8; i++)
		same &= pthread_equal(c.reader[i], c.reader[0]) != 0;
	tap_ok(same, "sp_pipeline: one thread reads the first nbatches batches in turn "
			"(no hand-over per batch)");
}

/*
 * Stress: many small batches through 6 steps, random parallel steps (of 1,
 * 2, 3, 4), widths and batches in flight, each step of each batch a
 * different short time (a busy wait, a yield now and then), so that the
 * hand-over of every ordered step from batch to batch happens in every
 * interleaving the scheduler allows.  An ordered step must never run for
 * two batches at once and must see the batches in input order; seen[] is
 * written with plain stores, so a second thread in an ordered step is also
 * a data race ThreadSanitizer reports (make tsan-check builds this test).
 */
#define SSTEP 6

typedef struct { int id, done; } sbatch;

typedef struct {
	int nb, produced;
	unsigned par;
	int seen[SSTEP];
	atomic_int busy[SSTEP], in_par, max_par, bad, finished;
} stress_ctx;

static void stress_wait(unsigned id, int step)
{
	unsigned h = (id * 2654435761u) ^ ((unsigned)step * 40503u), k;
	volatile unsigned sink = 0;

	if (h % 17 == 0)
		sched_yield();
	for (k = 0; k < h % 1500; k++)
		sink += k;
	(void)sink;
}

static int stress_step(void *ctx, int step, void **data)
{
	stress_ctx *c = ctx;
	int ordered = !(c->par >> step & 1);
	sbatch *b;

	if (ordered && atomic_fetch_add(&c->busy[step], 1) != 0)
		atomic_store(&c->bad, 1);
	if (step == 0) {
		if (c->produced == c->nb) {
			atomic_fetch_sub(&c->busy[step], 1);
			return 1;
		}
		b = malloc(sizeof *b);
		b->id = c->produced++;
		b->done = 0;
		*data = b;
	}
	b = *data;
	if (b->done++ != step)
		atomic_store(&c->bad, 1);
	if (ordered) {
		if (b->id != c->seen[step])
			atomic_store(&c->bad, 1);
		c->seen[step] = b->id + 1;
		stress_wait((unsigned)b->id, step);
		atomic_fetch_sub(&c->busy[step], 1);
	} else {
		int k = atomic_fetch_add(&c->in_par, 1) + 1, m = atomic_load(&c->max_par);

		while (k > m && !atomic_compare_exchange_weak(&c->max_par, &m, k))
			;
		stress_wait((unsigned)b->id, step);
		atomic_fetch_sub(&c->in_par, 1);
	}
	if (step == SSTEP - 1) {
		atomic_fetch_add(&c->finished, 1);
		free(b);
		*data = NULL;
	}
	return 0;
}

static void test_stress(void)
{
	uint64_t st = 777;
	int round, ok = 1, ok_width = 1;

	for (round = 0; round < 120; round++) {
		stress_ctx c;
		sp_pipe p = { SSTEP, 1 + (int)(tu_xorshift64(&st) % 10), stress_step, NULL, NULL };
		int width = (int)(tu_xorshift64(&st) % 5), r, k;
		unsigned par = (unsigned)(tu_xorshift64(&st) % 16) << 1;

		memset(&c, 0, sizeof c);
		c.nb = (int)(tu_xorshift64(&st) % 300);
		c.par = round % 6 == 0 ? 0 : par;
		for (k = 0; k < SSTEP; k++)
			atomic_init(&c.busy[k], 0);
		atomic_init(&c.in_par, 0);
		atomic_init(&c.max_par, 0);
		atomic_init(&c.bad, 0);
		atomic_init(&c.finished, 0);
		p.ctx = &c;
		r = c.par ? sp_pipeline_par(&p, c.par, width) : sp_pipeline(&p);
		if (r != 0 || atomic_load(&c.bad) || atomic_load(&c.finished) != c.nb)
			ok = 0;
		if (atomic_load(&c.max_par) > (width ? width : p.nbatches))
			ok_width = 0;
	}
	tap_ok(ok, "sp_pipeline stress (120 random shapes, up to 300 batches): no ordered "
			"step runs twice at once, each sees the batches in order");
	tap_ok(ok_width, "sp_pipeline stress: at most width batches in parallel steps");
}

/* ---- sp_crew ---- */

typedef struct {
	atomic_int *hits;
	size_t n, fail_at;
	int ntid;           /* valid TIDs: 0..ntid-1 */
	atomic_int bad_tid;
} crew_ctx;

static int crew_item(void *ctx, size_t i, int tid)
{
	crew_ctx *c = ctx;

	if (tid < 0 || tid >= c->ntid)
		atomic_store(&c->bad_tid, 1);
	if (i % 7 == 0)
		sched_yield();
	if (i == c->fail_at)
		return sp_fail("job item %zu failed", i);
	atomic_fetch_add(&c->hits[i], 1);
	return 0;
}

static void test_crew(void)
{
	uint64_t st = 777;
	int round, ok_once = 1, ok_tid = 1, ok_err = 1, ok_none = 1;

	for (round = 0; round < 60; round++) {
		int nt = 1 + (int)(tu_xorshift64(&st) % 6), nj = 1 + (int)(tu_xorshift64(&st) % 6), k;
		sp_crew *cr = sp_crew_new(nt);
		crew_ctx c[6];
		sp_job job[6];

		for (k = 0; k < nj; k++) {   /* the jobs queued at once, as a pipeline's steps would */
			c[k].n = tu_xorshift64(&st) % 3000;
			c[k].hits = calloc(c[k].n + 1, sizeof *c[k].hits);
			c[k].fail_at = tu_xorshift64(&st) % 4 == 0 && c[k].n ? tu_xorshift64(&st) % c[k].n : (size_t)-1;
			c[k].ntid = nt + 1;
			atomic_init(&c[k].bad_tid, 0);
			memset(&job[k], 0, sizeof job[k]);
			sp_crew_add(cr, &job[k], c[k].n, 1 + tu_xorshift64(&st) % 50, crew_item, &c[k]);
		}
		for (k = 0; k < nj; k++) {   /* one waiter, in order, helping as TID nt */
			size_t i;
			int r = sp_crew_wait(cr, &job[k], nt);

			for (i = 0; i < c[k].n; i++)   /* after a failure, items not yet run are skipped */
				if (atomic_load(&c[k].hits[i]) > 1 || (i == c[k].fail_at && atomic_load(&c[k].hits[i])))
					ok_once = 0;
			if (c[k].fail_at == (size_t)-1) {
				for (i = 0; i < c[k].n; i++)
					if (atomic_load(&c[k].hits[i]) != 1)
						ok_once = 0;
				if (r != 0)
					ok_err = 0;
			} else {
				char want[64];

				snprintf(want, sizeof want, "job item %zu failed", c[k].fail_at);
				if (r != -1 || strcmp(sp_errmsg(), want) != 0)
					ok_err = 0;
			}
			if (atomic_load(&c[k].bad_tid))
				ok_tid = 0;
			if (sp_crew_wait(cr, &job[k], nt) != 0)   /* waited already: nothing to do */
				ok_none = 0;
			free(c[k].hits);
		}
		sp_crew_free(cr);
	}
	{       /* a job never added, and a crew freed idle */
		sp_crew *cr = sp_crew_new(3);
		sp_job j;

		memset(&j, 0, sizeof j);
		if (sp_crew_wait(cr, &j, 3) != 0)
			ok_none = 0;
		sp_crew_free(cr);
	}
	tap_ok(ok_once, "crew: every item of every job ran once (none after a failure ran twice)");
	tap_ok(ok_tid, "crew: items ran on the crew's TIDs or the waiter's");
	tap_ok(ok_err, "crew: a job's first failure comes back to its waiter, the others succeed");
	tap_ok(ok_none, "crew: waiting on a job not added (or waited) returns 0 at once");
}

int main(void)
{
	test_for();
	test_crew();
	test_pipeline();
	test_parallel();
	test_read_ahead();
	test_stress();
	return tap_done();
}
