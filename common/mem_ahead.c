/*
 * mem_ahead.c - seedfilt -m mem: the reads parsed ahead on a thread of
 * their own (mem_ahead.h).
 */
#include "mem_ahead.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static size_t chunk_add(achunk_t *c, const char *s, size_t n)
{
	size_t o = c->len;

	if (c->len + n > c->cap) {
		c->cap = (c->len + n) * 2 + 4096;
		c->a = sp_realloc(c->a, c->cap);
	}
	if (n)
		memcpy(c->a + o, s, n);
	c->len += n;
	return o;
}

static void chunk_free(achunk_t *c)
{
	if (c) {
		free(c->r);
		free(c->a);
		free(c);
	}
}

static size_t chunk_bytes(const achunk_t *c)
{
	return c->cap + c->n * sizeof *c->r;
}

static void *ahead_main(void *arg)
{
	ahead_t *a = arg;
	int st = 1;

	while (st > 0) {
		achunk_t *c = sp_calloc(1, sizeof *c);
		double t0 = sp_now();
		rec_read_t rd;

		c->r = sp_malloc(a->per_chunk * sizeof *c->r);
		while (c->n < a->per_chunk && (st = filt_in_next(a->in, &rd)) > 0) {
			aread_t *r = &c->r[c->n++];

			r->id = rd.id;
			r->name = chunk_add(c, rd.name, rd.name_len);
			r->comment = chunk_add(c, rd.comment, rd.comment_len);
			r->seq = chunk_add(c, rd.seq, rd.seq_len);
			r->qual = rd.qual ? chunk_add(c, rd.qual, rd.seq_len) : SIZE_MAX;
			r->name_len = rd.name_len;
			r->comment_len = rd.comment_len;
			r->len = rd.seq_len;
		}
		if (c->len && c->cap > c->len + c->len / 8) {   /* what waits is what it holds (chrX: 2/3 of it) */
			c->a = sp_realloc(c->a, c->len);
			c->cap = c->len;
		}
		pthread_mutex_lock(&a->mu);
		a->t_parse += sp_now() - t0;
		if (st < 0) {
			a->err = 1;
			snprintf(a->msg, sizeof a->msg, "%s", sp_errmsg());
		}
		if (c->n) {
			if (a->tail)
				a->tail->next = c;
			else
				a->head = c;
			a->tail = c;
			a->bytes += chunk_bytes(c);
			if (a->bytes > a->bytes_max)
				a->bytes_max = a->bytes;
			c = NULL;
		}
		if (st <= 0)
			a->eof = 1;
		pthread_cond_broadcast(&a->cv);
		while (!a->eof && !a->stop && a->bytes > a->max_bytes)
			pthread_cond_wait(&a->cv, &a->mu);
		if (a->stop)
			st = 0;
		pthread_mutex_unlock(&a->mu);
		chunk_free(c);
	}
	return NULL;
}

void mem_ahead_start(ahead_t *a, filt_in_t *in)
{
	const char *e;

	memset(a, 0, sizeof *a);
	a->in = in;
	a->max_bytes = AHEAD_OPEN_BYTES;
	a->per_chunk = AHEAD_READS;
	if ((e = getenv("SEEDPIPE_MEM_AHEAD")) && atol(e) > 0) {
		a->max_bytes = (size_t)atol(e);
		a->fixed = 1;
	}
	if ((e = getenv("SEEDPIPE_MEM_AHEAD_READS")) && atol(e) > 0)
		a->per_chunk = (size_t)atol(e);
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	if (pthread_create(&a->th, NULL, ahead_main, a) != 0)
		sp_die("cannot start a thread: %s", strerror(errno));
}

void mem_ahead_limit(ahead_t *a, size_t max_bytes)
{
	pthread_mutex_lock(&a->mu);
	if (!a->fixed)
		a->max_bytes = max_bytes;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
}

int mem_ahead_next(ahead_t *a, rec_read_t *rd)
{
	achunk_t *c = a->cur;
	const aread_t *r;

	if (!c || c->taken == c->n) {
		pthread_mutex_lock(&a->mu);
		if (c) {
			a->bytes -= chunk_bytes(c);
			pthread_cond_broadcast(&a->cv);   /* the parser may wait for room */
		}
		while (!a->head && !a->eof)
			pthread_cond_wait(&a->cv, &a->mu);
		a->cur = a->head;
		if (a->head && !(a->head = a->head->next))
			a->tail = NULL;
		pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->mu);
		chunk_free(c);
		if (!(c = a->cur))    /* the reads before an error came first */
			return a->err ? sp_fail("%s", a->msg) : 0;
	}
	r = &c->r[c->taken++];
	rd->id = r->id;
	rd->mate = 0;
	rd->name = c->a + r->name;
	rd->comment = c->a + r->comment;
	rd->seq = c->a + r->seq;
	rd->qual = r->qual == SIZE_MAX ? NULL : c->a + r->qual;
	rd->name_len = r->name_len;
	rd->comment_len = r->comment_len;
	rd->seq_len = r->len;
	return 1;
}

void mem_ahead_end(ahead_t *a)
{
	achunk_t *c;

	pthread_mutex_lock(&a->mu);
	a->stop = 1;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	pthread_join(a->th, NULL);
	chunk_free(a->cur);
	while ((c = a->head)) {
		a->head = c->next;
		chunk_free(c);
	}
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->cv);
}
