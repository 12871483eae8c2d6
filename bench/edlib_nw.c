/*
 * edlib_nw.c - edlib (libedlib-dev) in its global mode (EDLIB_MODE_NW,
 * distance only) over the pairs extend --global makes (all against all of
 * A, i < j, or A against B), with pthreads: the edit-distance peer of
 * bench/global.sh and of the t7002 test.  One line a pair:
 * query target distance; "pairs P cells C seconds S gcups G" on stderr.
 *
 *   edlib_nw [-t THREADS] [--sample K] A.fa [B.fa]
 *
 *     cc -O2 -o edlib_nw bench/edlib_nw.c -ledlib -lpthread
 */
#define _GNU_SOURCE
#include <edlib.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct {
	size_t n;
	char **name, **seq;
	int *len;
} set_t;

static void load(set_t *s, const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, scap = 0, i;
	ssize_t k;

	memset(s, 0, sizeof *s);
	if (!f) {
		fprintf(stderr, "edlib_nw: cannot open '%s'\n", path);
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

static set_t A, B;
static const set_t *TS;
static size_t npairs;
static uint32_t *pq, *pt;
static int *dist;
static _Atomic size_t next;

static void *work(void *arg)
{
	size_t k;

	(void)arg;
	while ((k = atomic_fetch_add(&next, 64)) < npairs) {
		size_t e = k + 64 < npairs ? k + 64 : npairs;
		for (; k < e; k++) {
			EdlibAlignResult r = edlibAlign(A.seq[pq[k]], A.len[pq[k]], TS->seq[pt[k]],
					TS->len[pt[k]], edlibNewAlignConfig(-1, EDLIB_MODE_NW, EDLIB_TASK_DISTANCE,
						NULL, 0));
			dist[k] = r.editDistance;
			edlibFreeAlignResult(r);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 1, i = 1, all;
	uint64_t sample = 1, cnt = 0;
	size_t q, t, k = 0;
	double cells = 0, t0, t1;
	pthread_t th[256];

	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "-t"))
			threads = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--sample"))
			sample = strtoull(argv[i + 1], NULL, 10);
		else
			break;
	}
	if (i >= argc || argc - i > 2 || threads < 1 || threads > 256 || sample < 1) {
		fprintf(stderr, "usage: edlib_nw [-t THREADS] [--sample K] A.fa [B.fa]\n");
		return 2;
	}
	load(&A, argv[i]);
	all = argc - i == 1;
	if (!all)
		load(&B, argv[i + 1]);
	TS = all ? &A : &B;
	for (q = 0; q < A.n; q++)
		for (t = all ? q + 1 : 0; t < TS->n; t++)
			if (cnt++ % sample == 0)
				npairs++;
	pq = malloc((npairs + 1) * sizeof *pq);
	pt = malloc((npairs + 1) * sizeof *pt);
	dist = malloc((npairs + 1) * sizeof *dist);
	cnt = 0;
	for (q = 0; q < A.n; q++)
		for (t = all ? q + 1 : 0; t < TS->n; t++)
			if (cnt++ % sample == 0) {
				pq[k] = (uint32_t)q;
				pt[k++] = (uint32_t)t;
				cells += (double)A.len[q] * TS->len[t];
			}
	t0 = now();
	for (i = 1; i < threads; i++)
		pthread_create(&th[i], NULL, work, NULL);
	work(NULL);
	for (i = 1; i < threads; i++)
		pthread_join(th[i], NULL);
	t1 = now();
	for (k = 0; k < npairs; k++)
		printf("%s\t%s\t%d\n", A.name[pq[k]], TS->name[pt[k]], dist[k]);
	fprintf(stderr, "pairs %zu cells %.0f seconds %.3f gcups %.2f threads %d\n", npairs, cells,
			t1 - t0, cells / (t1 - t0) / 1e9, threads);
	return 0;
}
