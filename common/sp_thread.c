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

typedef struct {
	const sp_pipe *p;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t next;         /* number of the next batch */
	int eof;
	int nw;
	uint64_t *index;       /* per worker: its batch, IDLE if none */
	int *step;             /* per worker: the step it is at or waits for */
	first_err err;
} pipe_ctl;

typedef struct {
	pipe_ctl *c;
	int w;
} pipe_arg;

/* Whether batch I may start step S: no earlier batch is at step <= S. */
static int may_run(const pipe_ctl *c, int w, uint64_t i, int s)
{
	int v;

	for (v = 0; v < c->nw; v++)
		if (v != w && c->index[v] < i && c->step[v] <= s)
			return 0;
	return 1;
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
		for (s = 0; s < p->nsteps; s++) {
			c->step[w] = s;
			while (!atomic_load(&c->err.failed) && !(s == 0 && c->eof) && !may_run(c, w, i, s))
				pthread_cond_wait(&c->cv, &c->mu);
			if (atomic_load(&c->err.failed) || (s == 0 && c->eof)) {
				r = 2;
				break;
			}
			pthread_mutex_unlock(&c->mu);
			r = p->step(p->ctx, s, &data);
			pthread_mutex_lock(&c->mu);
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
			pthread_cond_broadcast(&c->cv);
		}
		if (r != 0 && data && p->drop)
			p->drop(p->ctx, data);
		c->index[w] = IDLE;
		c->step[w] = p->nsteps;
		pthread_cond_broadcast(&c->cv);
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

int sp_pipeline(const sp_pipe *p)
{
	pipe_ctl c;
	pipe_arg *a;
	int i, nw = p->nbatches < 1 ? 1 : p->nbatches > 64 ? 64 : p->nbatches;

	memset(&c, 0, sizeof c);
	c.p = p;
	c.nw = nw;
	pthread_mutex_init(&c.mu, NULL);
	pthread_cond_init(&c.cv, NULL);
	first_err_init(&c.err);
	c.index = sp_malloc((size_t)nw * sizeof *c.index);
	c.step = sp_malloc((size_t)nw * sizeof *c.step);
	a = sp_malloc((size_t)nw * sizeof *a);
	for (i = 0; i < nw; i++) {
		c.index[i] = IDLE;
		c.step[i] = p->nsteps;
		a[i].c = &c;
		a[i].w = i;
	}
	fork_join(nw, pipe_main, a, sizeof *a);
	free(a);
	free(c.index);
	free(c.step);
	pthread_cond_destroy(&c.cv);
	pthread_mutex_destroy(&c.mu);
	return first_err_finish(&c.err);
}
