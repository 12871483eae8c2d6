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

#include "nw_harness.h"

static nw_set_t A, B;
static const nw_set_t *TS;
static size_t npairs;
static uint32_t *pq, *pt;
static int *dist;

static void *work(void *arg)
{
	size_t k, e = 0;

	(void)arg;
	while ((k = nw_take(64, npairs, &e)) < npairs) {
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
	int threads = 1, i = 1;
	uint64_t sample = 1;
	size_t k;
	double cells, t0, t1;

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
	nw_load(&A, argv[i], "edlib_nw");
	if (argc - i == 2)
		nw_load(&B, argv[i + 1], "edlib_nw");
	TS = argc - i == 2 ? &B : &A;
	npairs = nw_pairs(&A, TS, sample, &pq, &pt, &cells);
	dist = malloc((npairs + 1) * sizeof *dist);
	t0 = nw_now();
	nw_run(work, threads);
	t1 = nw_now();
	for (k = 0; k < npairs; k++)
		printf("%s\t%s\t%d\n", A.name[pq[k]], TS->name[pt[k]], dist[k]);
	fprintf(stderr, "pairs %zu cells %.0f seconds %.3f gcups %.2f threads %d\n", npairs, cells,
			t1 - t0, cells / (t1 - t0) / 1e9, threads);
	return 0;
}
