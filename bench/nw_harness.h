/*
 * nw_harness.h - what the global alignment peers (bench/parasail_nw.c,
 * bench/edlib_nw.c) share: a clock, a FASTA reader (names to the first
 * blank, bases upper-cased), the pairs extend --global makes (all against
 * all of A, i < j, or A against B; every K-th with --sample K) and a
 * pthread run of a worker over them.  A header of static functions, so that
 * each peer still builds from its one .c file:
 *
 *     cc -O2 -o parasail_nw bench/parasail_nw.c -lparasail -lpthread
 */
#ifndef NW_HARNESS_H
#define NW_HARNESS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

static double nw_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct {
	size_t n;
	char **name, **seq;
	int *len;
} nw_set_t;

/* Read the FASTA file PATH into S; PROG names the program in the error. */
static void nw_load(nw_set_t *s, const char *path, const char *prog)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, scap = 0, i;
	ssize_t k;

	memset(s, 0, sizeof *s);
	if (!f) {
		fprintf(stderr, "%s: cannot open '%s'\n", prog, path);
		exit(1);
	}
	while ((k = getline(&line, &cap, f)) > 0) {
		while (k > 0 && (line[k - 1] == '\n' || line[k - 1] == '\r'))
			line[--k] = 0;
		if (line[0] == '>') {
			char *e = line + 1;
			while (*e && *e != ' ' && *e != '\t')
				e++;
			*e = 0;
			s->name = realloc(s->name, (s->n + 1) * sizeof *s->name);
			s->seq = realloc(s->seq, (s->n + 1) * sizeof *s->seq);
			s->len = realloc(s->len, (s->n + 1) * sizeof *s->len);
			s->name[s->n] = strdup(line + 1);
			s->seq[s->n] = NULL;
			s->len[s->n++] = 0;
			scap = 0;
		} else if (s->n) {
			int l = s->len[s->n - 1];
			if ((size_t)(l + k + 1) > scap) {
				scap = (size_t)(l + k + 1) * 2;
				s->seq[s->n - 1] = realloc(s->seq[s->n - 1], scap);
			}
			for (i = 0; i < (size_t)k; i++)
				s->seq[s->n - 1][l++] = (char)(line[i] >= 'a' && line[i] <= 'z' ? line[i] - 32 : line[i]);
			s->seq[s->n - 1][l] = 0;
			s->len[s->n - 1] = l;
		}
	}
	for (i = 0; i < s->n; i++)
		if (!s->seq[i])
			s->seq[i] = strdup("");
	free(line);
	fclose(f);
}

/*
 * The pairs of A against TS (TS == A: all against all, i < j), every
 * SAMPLE-th of them, into *PQ and *PT (query and target indexes); their
 * cells into *CELLS.  Returns their number.
 */
static size_t nw_pairs(const nw_set_t *a, const nw_set_t *ts, uint64_t sample, uint32_t **pq,
		uint32_t **pt, double *cells)
{
	size_t q, t, k = 0, n = 0;
	uint64_t cnt = 0;
	int all = a == ts;

	for (q = 0; q < a->n; q++)
		for (t = all ? q + 1 : 0; t < ts->n; t++)
			if (cnt++ % sample == 0)
				n++;
	*pq = malloc((n + 1) * sizeof **pq);
	*pt = malloc((n + 1) * sizeof **pt);
	*cells = 0;
	cnt = 0;
	for (q = 0; q < a->n; q++)
		for (t = all ? q + 1 : 0; t < ts->n; t++)
			if (cnt++ % sample == 0) {
				(*pq)[k] = (uint32_t)q;
				(*pt)[k++] = (uint32_t)t;
				*cells += (double)a->len[q] * ts->len[t];
			}
	return n;
}

/* The next CHUNK of N items from the shared counter: its first, or N at the end. */
static _Atomic size_t nw_next;

static size_t nw_take(size_t chunk, size_t n, size_t *end)
{
	size_t k = atomic_fetch_add(&nw_next, chunk);

	if (k >= n)
		return n;
	*end = k + chunk < n ? k + chunk : n;
	return k;
}

/* FN on THREADS threads (this one among them) from a counter set to 0. */
static void nw_run(void *(*fn)(void *), int threads)
{
	pthread_t th[256];
	int i;

	atomic_store(&nw_next, 0);
	for (i = 1; i < threads; i++)
		pthread_create(&th[i], NULL, fn, NULL);
	fn(NULL);
	for (i = 1; i < threads; i++)
		pthread_join(th[i], NULL);
}

#endif
