/*
 * sp_thread.c - parallel-for and ordered batch pipeline (sp_thread.h).
 */
#include "sp_thread.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* ---- the first failure of a run ---------------------------------------- */

typedef struct {
	pthread_mutex_t mu;
	atomic_int failed;
	char msg[SP_ERRMSG_MAX];
} first_err;

static void first_err_init(first_err *f)
{
	pthread_mutex_init(&f->mu, NULL);
	atomic_init(&f->failed, 0);
	f->msg[0] = '\0';
}

/* Record the calling thread's error message if it is the first. */
static void first_err_set(first_err *f)
{
	pthread_mutex_lock(&f->mu);
	if (!atomic_load(&f->failed)) {
		snprintf(f->msg, sizeof f->msg, "%s", sp_errmsg());
		atomic_store(&f->failed, 1);
	}
	pthread_mutex_unlock(&f->mu);
}

/* Hand the first message to the calling thread; returns -1 if there was one. */
static int first_err_finish(first_err *f)
{
	int r = 0;

	if (atomic_load(&f->failed)) {
		sp_fail("%s", f->msg);
		r = -1;
	}
	pthread_mutex_destroy(&f->mu);
	return r;
}

/* Start N-1 threads running MAIN(&args[i]) (i = 1..n-1) and run args[0] on
 * the caller; a thread that cannot start is run on the caller afterwards. */
static void fork_join(int n, void *(*main_fn)(void *), void *args, size_t argsz)
{
	pthread_t stack_th[16], *th = n <= 16 ? stack_th : malloc((size_t)n * sizeof *th);
	char *a = args;
	int i, started = 0;

	if (!th)
		n = 1;
	for (i = 1; i < n; i++) {
		if (pthread_create(&th[i], NULL, main_fn, a + (size_t)i * argsz) != 0)
			break;
		started = i;
	}
	main_fn(a);
	for (i = started + 1; i < n; i++)
		main_fn(a + (size_t)i * argsz);
	for (i = 1; i <= started; i++)
		pthread_join(th[i], NULL);
	if (th != stack_th)
		free(th);
}

static int clamp_threads(int n)
{
	return n < 1 ? 1 : n > SP_THREADS_MAX ? SP_THREADS_MAX : n;
}

/* ---- parallel-for -------------------------------------------------------- */

typedef struct {
	sp_for_fn fn;
	void *ctx;
	size_t n, chunk;
	atomic_size_t next;
	first_err err;
} for_ctl;

typedef struct {
	for_ctl *c;
	int tid;
} for_arg;

static void *for_main(void *p)
{
	for_arg *a = p;
	for_ctl *c = a->c;

	while (!atomic_load_explicit(&c->err.failed, memory_order_relaxed)) {
		size_t s = atomic_fetch_add(&c->next, c->chunk), e, i;

		if (s >= c->n)
			break;
		e = c->n - s < c->chunk ? c->n : s + c->chunk;
		for (i = s; i < e; i++)
			if (c->fn(c->ctx, i, a->tid) < 0) {
				first_err_set(&c->err);
				return NULL;
			}
	}
	return NULL;
}

int sp_for(int nthreads, size_t n, size_t chunk, sp_for_fn fn, void *ctx)
{
	for_ctl c;
	for_arg stack_a[16], *a;
	int i, nt = clamp_threads(nthreads);

	if (n == 0)
		return 0;
	if (chunk == 0) {
		chunk = n / ((size_t)nt * 16);
		if (chunk == 0)
			chunk = 1;
	}
	if ((size_t)nt > (n + chunk - 1) / chunk)
		nt = (int)((n + chunk - 1) / chunk);
	if (nt == 1) {
		size_t k;

		for (k = 0; k < n; k++)
			if (fn(ctx, k, 0) < 0)
				return -1;
		return 0;
	}
	c.fn = fn;
	c.ctx = ctx;
	c.n = n;
	c.chunk = chunk;
	atomic_init(&c.next, 0);
	first_err_init(&c.err);
	a = nt <= 16 ? stack_a : malloc((size_t)nt * sizeof *a);
	if (!a) {
		a = stack_a;
		nt = 1;
	}
	for (i = 0; i < nt; i++) {
		a[i].c = &c;
		a[i].tid = i;
	}
	fork_join(nt, for_main, a, sizeof *a);
	if (a != stack_a)
		free(a);
	return first_err_finish(&c.err);
}

/* ---- ordered pipeline ----------------------------------------------------- */

#define IDLE UINT64_MAX

/*
 * Every worker carries one batch at a time through the steps.  Batches are
 * numbered in input order and leave the last (ordered) step in that order,
 * so those in flight are consecutive and at most nw: batch i's worker is
 * who[i % nw].  Each worker sleeps on its own condition variable, and a
 * change of state wakes only the workers that may now go on (a broadcast
 * would wake every worker at every step of every batch).
 */
typedef struct {
	const sp_pipe *p;
	unsigned parallel;     /* the parallel steps */
	pthread_mutex_t mu;
	uint64_t next;         /* number of the next batch */
	int eof;
	int nw;
	int width, npar;       /* parallel steps: batches at most, now */
	uint64_t *index;       /* per worker: its batch, IDLE if none */
	int *step;             /* per worker: the step it is at or waits for */
	unsigned char *running;  /* per worker: inside step[w] */
	unsigned char *waiting;  /* per worker: asleep on cv[w] */
	int *who;              /* the worker of batch i: who[i % nw] */
	pthread_cond_t *cv;
	first_err err;
} pipe_ctl;

typedef struct {
	pipe_ctl *c;
	int w;
} pipe_arg;

static int is_par(const pipe_ctl *c, int s)
{
	return s > 0 && s < c->p->nsteps - 1 && (c->parallel >> s & 1u);
}

/* The first batch (in input order) that waits for a parallel step. */
static uint64_t par_head(const pipe_ctl *c)
{
	uint64_t head = IDLE;
	int v;

	for (v = 0; v < c->nw; v++)
		if (c->index[v] < head && !c->running[v] && is_par(c, c->step[v]))
			head = c->index[v];
	return head;
}

/*
 * Whether worker W may start its step s: an ordered step once batch i-1 has
 * left it (it left every step before s earlier, so all earlier batches have
 * too); a parallel one when a place is free and no earlier batch waits.
 */
static int may_run(const pipe_ctl *c, int w, uint64_t head)
{
	uint64_t i = c->index[w];
	int s = c->step[w], v;

	if (is_par(c, s))
		return c->npar < c->width && i == head;
	if (i == 0)
		return 1;
	v = c->who[(i - 1) % (uint64_t)c->nw];
	return c->index[v] != i - 1 || c->step[v] > s;
}

/* Whether worker W must stop waiting: it may run, or the run is over for it. */
static int may_go(const pipe_ctl *c, int w, uint64_t head)
{
	return atomic_load(&c->err.failed) || (c->step[w] == 0 && c->eof) || may_run(c, w, head);
}

/* Wake the sleeping workers that may go on. */
static void wake(pipe_ctl *c)
{
	uint64_t head = par_head(c);
	int v;

	for (v = 0; v < c->nw; v++)
		if (c->waiting[v] && may_go(c, v, head))
			pthread_cond_signal(&c->cv[v]);
}

static void *pipe_main(void *arg)
{
	pipe_arg *a = arg;
	pipe_ctl *c = a->c;
	const sp_pipe *p = c->p;
	int w = a->w;

	pthread_mutex_lock(&c->mu);
	while (!c->eof && !atomic_load(&c->err.failed)) {
		uint64_t i = c->next++;
		void *data = NULL;
		int s, r = 0;

		c->index[w] = i;
		c->who[i % (uint64_t)c->nw] = w;
		for (s = 0; s < p->nsteps; s++) {
			int par = is_par(c, s);

			c->step[w] = s;
			while (!may_go(c, w, par_head(c))) {
				c->waiting[w] = 1;
				pthread_cond_wait(&c->cv[w], &c->mu);
				c->waiting[w] = 0;
			}
			if (atomic_load(&c->err.failed) || (s == 0 && c->eof)) {
				r = 2;
				break;
			}
			c->running[w] = 1;
			if (par) {
				c->npar++;
				wake(c);   /* the next batch waiting for a parallel step */
			}
			pthread_mutex_unlock(&c->mu);
			r = p->step(p->ctx, s, &data);
			pthread_mutex_lock(&c->mu);
			c->running[w] = 0;
			if (par)
				c->npar--;
			if (r < 0) {
				first_err_set(&c->err);
				break;
			}
			if (r == 1) {   /* end of input (step 0) */
				c->eof = 1;
				data = NULL;
				break;
			}
			c->step[w] = s + 1;
			wake(c);
		}
		if (r != 0 && data && p->drop)
			p->drop(p->ctx, data);
		c->index[w] = IDLE;
		c->step[w] = p->nsteps;
		wake(c);
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

int sp_pipeline(const sp_pipe *p)
{
	return sp_pipeline_par(p, 0, 0);
}

int sp_pipeline_par(const sp_pipe *p, unsigned parallel, int width)
{
	pipe_ctl c;
	pipe_arg *a;
	int i, nw = p->nbatches < 1 ? 1 : clamp_threads(p->nbatches);

	memset(&c, 0, sizeof c);
	c.p = p;
	c.nw = nw;
	c.parallel = parallel;
	c.width = width > 0 ? width : nw;
	pthread_mutex_init(&c.mu, NULL);
	first_err_init(&c.err);
	c.index = sp_malloc((size_t)nw * sizeof *c.index);
	c.step = sp_malloc((size_t)nw * sizeof *c.step);
	c.running = sp_calloc((size_t)nw, 1);
	c.waiting = sp_calloc((size_t)nw, 1);
	c.who = sp_calloc((size_t)nw, sizeof *c.who);
	c.cv = sp_malloc((size_t)nw * sizeof *c.cv);
	a = sp_malloc((size_t)nw * sizeof *a);
	for (i = 0; i < nw; i++) {
		c.index[i] = IDLE;
		c.step[i] = p->nsteps;
		pthread_cond_init(&c.cv[i], NULL);
		a[i].c = &c;
		a[i].w = i;
	}
	fork_join(nw, pipe_main, a, sizeof *a);
	for (i = 0; i < nw; i++)
		pthread_cond_destroy(&c.cv[i]);
	free(a);
	free(c.cv);
	free(c.who);
	free(c.waiting);
	free(c.running);
	free(c.index);
	free(c.step);
	pthread_mutex_destroy(&c.mu);
	return first_err_finish(&c.err);
}
