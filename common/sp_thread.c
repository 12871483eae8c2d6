/*
 * sp_thread.c - parallel-for, ordered batch pipeline and crew (sp_thread.h).
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

/*
 * Tasks, not threads, carry the batches: a task is step s of batch i, and
 * any pipeline thread runs any task that may start.  Batches in flight are
 * numbered head..next-1 and kept in a ring (batch i in slot i % nb), with
 * the number of steps each has done.  Step s of batch i may start when the
 * batch has done s steps and, for an ordered step, batch i-1 has done more
 * than s (or has left); for a parallel one, when fewer than width batches
 * are in parallel steps.  Step 0 makes batch next, while fewer than nb are
 * in flight.
 *
 * A thread that ends an ordered step goes on with the same step of the
 * next batch if it may start: the read step reads ahead and the write step
 * writes batch after batch with no hand-over to another thread, whose
 * wake-up (a futex, the scheduler, a busy core) would stall the whole
 * pipeline behind a serial step.  Otherwise it goes on with its batch's
 * next step (its data is in the cache), else with an ordered step of any
 * batch (they are the serial part), the last ones first, else with the
 * first batch in input order that waits for a parallel step.  A thread
 * with nothing to do sleeps on its own condition variable and is woken
 * when a task is there for it.
 */
typedef struct {
	void *data;
	int done;                /* steps done */
	int running;             /* inside step `done` */
} pipe_slot;

typedef struct {
	const sp_pipe *p;
	unsigned parallel;       /* the parallel steps */
	pthread_mutex_t mu;
	int nb, nthreads;
	int width, npar;         /* parallel steps: batches at most, now */
	uint64_t head, next;     /* batches in flight: head..next-1 */
	int eof, reading;        /* step 0 said end; step 0 is running */
	pipe_slot *slot;
	int *idle;               /* threads asleep (a stack of their numbers) */
	int nidle, pending;      /* asleep; woken but not yet back */
	unsigned char *woken;    /* per thread: signalled since it went to sleep */
	pthread_cond_t *cv;
	first_err err;
} pipe_ctl;

typedef struct {
	pipe_ctl *c;
	int w;
} pipe_arg;

#define NO_TASK (-1)

static int is_par(const pipe_ctl *c, int s)
{
	return s > 0 && s < c->p->nsteps - 1 && (c->parallel >> s & 1u);
}

static pipe_slot *slot_of(const pipe_ctl *c, uint64_t i)
{
	return &c->slot[i % (uint64_t)c->nb];
}

/* Whether step 0 (a new batch) may start. */
static int may_read(const pipe_ctl *c)
{
	return !c->eof && !c->reading && c->next - c->head < (uint64_t)c->nb;
}

/* Whether the next step of batch I (in flight) may start; its step in *S. */
static int may_step(const pipe_ctl *c, uint64_t i, int *s)
{
	const pipe_slot *b = slot_of(c, i);

	*s = b->done;
	if (b->running || b->done >= c->p->nsteps)
		return 0;
	if (is_par(c, b->done))
		return c->npar < c->width;
	return i == c->head || slot_of(c, i - 1)->done > b->done;
}

/*
 * The task the thread that ended step S of batch I (S < 0: none) takes
 * next: its batch number in *I and step in *S, or 0 if none may start.
 */
static int pick(const pipe_ctl *c, uint64_t *pi, int *ps)
{
	uint64_t i = *pi, k, best_i = 0;
	int s = *ps, t, best_s = NO_TASK, best_par = 1;

	if (s == 0 && may_read(c)) {
		*pi = c->next;
		return 1;
	}
	if (s > 0 && !is_par(c, s) && i + 1 < c->next && may_step(c, i + 1, &t) && t == s) {
		*pi = i + 1;
		return 1;
	}
	if (s >= 0 && i >= c->head && i < c->next && may_step(c, i, &t)) {
		*ps = t;
		return 1;
	}
	for (k = c->head; k < c->next; k++) {
		int par;

		if (!may_step(c, k, &t))
			continue;
		par = is_par(c, t);
		/* ordered before parallel; among ordered, the later step; among
		 * parallel, the first batch */
		if (best_s == NO_TASK || (best_par && !par) || (!par && t > best_s)) {
			best_i = k;
			best_s = t;
			best_par = par;
		}
	}
	if (best_s != NO_TASK && !best_par) {
		*pi = best_i;
		*ps = best_s;
		return 1;
	}
	if (may_read(c)) {
		*pi = c->next;
		*ps = 0;
		return 1;
	}
	if (best_s != NO_TASK) {
		*pi = best_i;
		*ps = best_s;
		return 1;
	}
	return 0;
}

/* Tasks that may start now (at most LIMIT counted). */
static int count_ready(const pipe_ctl *c, int limit)
{
	uint64_t k;
	int n = may_read(c), t, par = 0;

	for (k = c->head; k < c->next && n < limit; k++)
		if (may_step(c, k, &t)) {
			if (is_par(c, t) && c->npar + par++ >= c->width)
				continue;
			n++;
		}
	return n;
}

/* Whether the run is over for the threads: a failure, or the end reached. */
static int pipe_over(const pipe_ctl *c)
{
	return atomic_load(&c->err.failed) || (c->eof && !c->reading && c->head == c->next);
}

/*
 * Wake sleeping threads: one per task that may start and that no thread
 * woken before will take; all when the run is over.
 */
static void wake(pipe_ctl *c)
{
	int n = pipe_over(c) ? c->nidle : count_ready(c, c->nidle + c->pending) - c->pending;

	while (n-- > 0 && c->nidle > 0) {
		int v = c->idle[--c->nidle];

		c->woken[v] = 1;
		c->pending++;
		pthread_cond_signal(&c->cv[v]);
	}
}

static void *pipe_main(void *arg)
{
	pipe_arg *a = arg;
	pipe_ctl *c = a->c;
	const sp_pipe *p = c->p;
	uint64_t i = 0;
	int s = NO_TASK, w = a->w;

	pthread_mutex_lock(&c->mu);
	for (;;) {
		pipe_slot *b;
		void *data;
		int r, par;

		if (pipe_over(c)) {
			wake(c);
			break;
		}
		if (!pick(c, &i, &s)) {
			c->woken[w] = 0;
			c->idle[c->nidle++] = w;
			while (!c->woken[w])
				pthread_cond_wait(&c->cv[w], &c->mu);
			c->pending--;
			s = NO_TASK;
			continue;
		}
		par = is_par(c, s);
		if (s == 0) {
			c->reading = 1;
			b = NULL;
			data = NULL;
		} else {
			b = slot_of(c, i);
			b->running = 1;
			data = b->data;
			if (par)
				c->npar++;
		}
		wake(c);   /* a task this one let start, or one it left */
		pthread_mutex_unlock(&c->mu);
		r = p->step(p->ctx, s, &data);
		pthread_mutex_lock(&c->mu);
		if (s == 0) {
			c->reading = 0;
			if (r == 0) {
				b = slot_of(c, c->next);
				b->data = data;
				b->done = 1;
				b->running = 0;
				i = c->next++;
				if (p->nsteps == 1) {   /* step 0 was the last */
					b->data = NULL;
					c->head = c->next;
				}
			} else if (r == 1) {
				c->eof = 1;
			} else if (data && p->drop) {
				p->drop(p->ctx, data);
			}
		} else {
			b->running = 0;
			b->data = data;
			if (par)
				c->npar--;
			if (r == 0 && ++b->done == p->nsteps) {
				b->data = NULL;   /* the last step has it */
				while (c->head < c->next && slot_of(c, c->head)->done == p->nsteps)
					c->head++;
			}
		}
		if (r < 0)
			first_err_set(&c->err);
		if (r != 0)
			s = NO_TASK;
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
	uint64_t k;
	int i, nb = p->nbatches < 1 ? 1 : clamp_threads(p->nbatches), nt, s;

	memset(&c, 0, sizeof c);
	c.p = p;
	c.nb = nb;
	c.parallel = 0;
	for (s = 1; s < p->nsteps - 1; s++)
		c.parallel |= parallel & (1u << s);
	c.width = width > 0 && width < nb ? width : nb;
	/* no parallel step: one thread per step at most; else one per batch in
	 * the parallel steps and one for the ordered ones */
	nt = c.parallel ? c.width + 1 : p->nsteps;
	c.nthreads = nt < nb ? nt : nb;
	pthread_mutex_init(&c.mu, NULL);
	first_err_init(&c.err);
	c.slot = sp_calloc((size_t)nb, sizeof *c.slot);
	c.idle = sp_malloc((size_t)c.nthreads * sizeof *c.idle);
	c.woken = sp_calloc((size_t)c.nthreads, 1);
	c.cv = sp_malloc((size_t)c.nthreads * sizeof *c.cv);
	a = sp_malloc((size_t)c.nthreads * sizeof *a);
	for (i = 0; i < c.nthreads; i++) {
		pthread_cond_init(&c.cv[i], NULL);
		a[i].c = &c;
		a[i].w = i;
	}
	fork_join(c.nthreads, pipe_main, a, sizeof *a);
	/* after a failure: the batches left in flight */
	for (k = c.head; k < c.next; k++) {
		pipe_slot *b = slot_of(&c, k);

		if (b->data && b->done < p->nsteps && p->drop)
			p->drop(p->ctx, b->data);
	}
	for (i = 0; i < c.nthreads; i++)
		pthread_cond_destroy(&c.cv[i]);
	free(a);
	free(c.cv);
	free(c.woken);
	free(c.idle);
	free(c.slot);
	pthread_mutex_destroy(&c.mu);
	return first_err_finish(&c.err);
}

/* ---- a crew: threads kept for a stream of jobs ------------------------------- */

struct crew_arg {
	sp_crew *c;
	int tid;
};

struct sp_crew {
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	sp_job *head, *tail;      /* jobs with items not handed out, oldest first */
	int quit, nth, started;
	pthread_t *th;
	struct crew_arg *arg;
};

/* Under C->mu: the next chunk of J taken (*S, *E); J leaves the list when all are handed out. */
static void crew_take(sp_crew *c, sp_job *j, size_t *s, size_t *e)
{
	*s = j->given;
	*e = j->n - *s < j->chunk ? j->n : *s + j->chunk;
	j->given = *e;
	if (j->given == j->n) {
		sp_job **pp = &c->head, *prev = NULL;

		while (*pp != j) {
			prev = *pp;
			pp = &(*pp)->next;
		}
		*pp = j->next;
		if (c->tail == j)
			c->tail = prev;
		j->next = NULL;
	}
}

/* Run items S..E-1 of J as TID, then (C->mu held again) count them ended. */
static void crew_run(sp_crew *c, sp_job *j, size_t s, size_t e, int tid)
{
	int skip = j->failed, failed = 0;
	size_t i;

	pthread_mutex_unlock(&c->mu);
	for (i = s; i < e && !skip; i++)
		if (j->fn(j->ctx, i, tid) < 0) {
			failed = 1;
			break;
		}
	pthread_mutex_lock(&c->mu);
	if (failed && !j->failed) {
		j->failed = 1;
		snprintf(j->msg, sizeof j->msg, "%s", sp_errmsg());
	}
	j->left -= e - s;
	if (j->left == 0)
		pthread_cond_broadcast(&c->done);
}

static void *crew_main(void *p)
{
	struct crew_arg *a = p;
	sp_crew *c = a->c;

	pthread_mutex_lock(&c->mu);
	for (;;) {
		size_t s, e;
		sp_job *j;

		while (!c->head && !c->quit)
			pthread_cond_wait(&c->work, &c->mu);
		if (!c->head)
			break;
		j = c->head;
		crew_take(c, j, &s, &e);
		crew_run(c, j, s, e, a->tid);
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

sp_crew *sp_crew_new(int nthreads)
{
	sp_crew *c = sp_calloc(1, sizeof *c);
	int i;

	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->work, NULL);
	pthread_cond_init(&c->done, NULL);
	c->nth = clamp_threads(nthreads);
	c->th = sp_calloc((size_t)c->nth, sizeof *c->th);
	c->arg = sp_calloc((size_t)c->nth, sizeof *c->arg);
	for (i = 0; i < c->nth; i++) {
		c->arg[i].c = c;
		c->arg[i].tid = i;
		if (pthread_create(&c->th[i], NULL, crew_main, &c->arg[i]) != 0)
			break;
		c->started = i + 1;
	}
	return c;
}

void sp_crew_add(sp_crew *c, sp_job *j, size_t n, size_t chunk, sp_for_fn fn, void *ctx)
{
	j->next = NULL;
	j->fn = fn;
	j->ctx = ctx;
	j->n = n;
	j->chunk = chunk ? chunk : 1;
	j->given = 0;
	j->left = n;
	j->failed = 0;
	j->msg[0] = '\0';
	j->added = 1;
	if (n == 0)
		return;
	pthread_mutex_lock(&c->mu);
	if (c->tail)
		c->tail->next = j;
	else
		c->head = j;
	c->tail = j;
	pthread_cond_broadcast(&c->work);
	pthread_mutex_unlock(&c->mu);
}

int sp_crew_wait(sp_crew *c, sp_job *j, int tid)
{
	int failed;

	if (!j->added)
		return 0;
	pthread_mutex_lock(&c->mu);
	while (j->left) {
		size_t s, e;

		if (j->given < j->n) {
			crew_take(c, j, &s, &e);
			crew_run(c, j, s, e, tid);
		} else {
			pthread_cond_wait(&c->done, &c->mu);
		}
	}
	failed = j->failed;
	pthread_mutex_unlock(&c->mu);
	j->added = 0;
	if (failed)
		return sp_fail("%s", j->msg);
	return 0;
}

void sp_crew_free(sp_crew *c)
{
	int i;

	if (!c)
		return;
	pthread_mutex_lock(&c->mu);
	c->quit = 1;
	pthread_cond_broadcast(&c->work);
	pthread_mutex_unlock(&c->mu);
	for (i = 0; i < c->started; i++)
		pthread_join(c->th[i], NULL);
	pthread_cond_destroy(&c->work);
	pthread_cond_destroy(&c->done);
	pthread_mutex_destroy(&c->mu);
	free(c->th);
	free(c->arg);
	free(c);
}
