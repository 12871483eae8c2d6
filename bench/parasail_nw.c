/*
 * parasail_nw.c - the peer of extend --global for bench/global.sh and the
 * t7002 test: parasail (libparasail-dev) doing the same work the same way,
 * with pthreads over the pairs:
 *
 *   1. a score-only NW pass over every pair with parasail's fastest vector
 *      function (-a, default nw_striped_avx2_256_16 where the CPU has AVX2,
 *      else nw_striped_16, which dispatches; in parasail 2.6 the striped
 *      NW functions give wrong, lower scores on some pairs, ~0.6% of a
 *      16S-like family, where nw and nw_scan agree with extend: -a
 *      nw_scan_avx2_256_16 is right, and slower);
 *   2. a traceback (-T, default nw_trace_scan_16, its fastest trace here)
 *      of the pairs whose score passes the identity bound of extend(1)
 *      (the same bound, so both trace the same pairs), the identity
 *      (matches / columns) from parasail's CIGAR, and the pairs at or above
 *      --identity printed.
 *
 *   parasail_nw [-t THREADS] [-a FUNC] [-T FUNC] [--score M,X,G] [--identity P]
 *               [--sample K] [--score-only] A.fa [B.fa]
 *
 * Pairs: all against all of A (each once, i < j) or A against B, as
 * extend --global makes them; --sample K keeps every K-th pair (a sample
 * for timing huge sets).  Output, one line a reported pair:
 * query target score cigar (parasail's =/X/I/D CIGAR); the summary
 * "pairs P cells C traced T reported R score_s S trace_s U" on stderr.
 * Edit distance is --score 0,-1,-1 (the default).
 *
 *     cc -O2 -o parasail_nw bench/parasail_nw.c -lparasail -lpthread
 */
#define _GNU_SOURCE
#include <parasail.h>

#include "nw_harness.h"

static nw_set_t A, B;
static const nw_set_t *QS, *TS;
static int all_vs_all, ma = 0, mi = -1, gp = -1, score_only;
static uint64_t ident, sample = 1;       /* millionths */
static parasail_function_t *f_score, *f_trace;
static parasail_matrix_t *mat;
static size_t npairs;
static uint32_t *pq, *pt;
static int *score;
static char **out;
static _Atomic uint64_t ntraced;

/* extend(1)'s identity bound (galign_may_pass), in 128-bit integers */
static int may_pass(uint32_t m, uint32_t n, int32_t s)
{
	typedef __int128 i128;
	i128 T = ident, U = 1000000, mn = (i128)m + n, phi = m < n ? m : n, a, b, flo, fhi;

	if (!ident)
		return 1;
	if (T * mn > phi * (U + T))
		return 0;
	a = (i128)(ma - mi) * T * mn + (i128)gp * U * mn;
	b = (i128)(mi - 2 * gp) * U - (i128)(ma - mi) * T;
	fhi = (a + phi * b) * (U + T);
	flo = a * (U + T) + T * mn * b;
	return (i128)s * U * (U + T) >= (flo < fhi ? flo : fhi);
}

static void *work_score(void *arg)
{
	size_t k, e = 0;

	(void)arg;
	while ((k = nw_take(64, npairs, &e)) < npairs) {
		for (; k < e; k++) {
			parasail_result_t *r;

			if (!QS->len[pq[k]] || !TS->len[pt[k]]) {   /* parasail refuses empty sequences */
				score[k] = gp * (QS->len[pq[k]] + TS->len[pt[k]]);
				continue;
			}
			r = f_score(QS->seq[pq[k]], QS->len[pq[k]], TS->seq[pt[k]], TS->len[pt[k]], -gp, -gp,
					mat);
			score[k] = parasail_result_get_score(r);
			parasail_result_free(r);
		}
	}
	return NULL;
}

static void *work_trace(void *arg)
{
	size_t k, e = 0;

	(void)arg;
	while ((k = nw_take(16, npairs, &e)) < npairs) {
		for (; k < e; k++) {
			const char *q = QS->seq[pq[k]], *t = TS->seq[pt[k]];
			int m = QS->len[pq[k]], n = TS->len[pt[k]];
			parasail_result_t *r;
			parasail_cigar_t *c;
			uint64_t mt = 0, cols = 0;
			int i;
			char *cs;

			if (!may_pass((uint32_t)m, (uint32_t)n, score[k]))
				continue;
			atomic_fetch_add(&ntraced, 1);
			if (!m || !n) {   /* one gap (or nothing): identity 0 (100 without columns) */
				if (ident && m + n)
					continue;
				if (m + n == 0 ? asprintf(&out[k], "%s\t%s\t0\t*\n", QS->name[pq[k]],
							TS->name[pt[k]]) < 0
						: asprintf(&out[k], "%s\t%s\t%d\t%d%c\n", QS->name[pq[k]], TS->name[pt[k]],
							score[k], m + n, m ? 'I' : 'D') < 0)
					exit(1);
				continue;
			}
			r = f_trace(q, m, t, n, -gp, -gp, mat);
			c = parasail_result_get_cigar(r, q, m, t, n, mat);
			for (i = 0; i < c->len; i++) {
				uint32_t l = parasail_cigar_decode_len(c->seq[i]);
				cols += l;
				if (parasail_cigar_decode_op(c->seq[i]) == '=')
					mt += l;
			}
			if (mt * 1000000 >= ident * cols) {
				cs = parasail_cigar_decode(c);
				if (asprintf(&out[k], "%s\t%s\t%d\t%s\n", QS->name[pq[k]], TS->name[pt[k]],
							parasail_result_get_score(r), cs[0] ? cs : "*") < 0)
					exit(1);
				free(cs);
			}
			parasail_cigar_free(c);
			parasail_result_free(r);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *fs = NULL, *ft = "nw_trace_scan_16";
	int threads = 1, i = 1;
	size_t k, cnt = 0;
	double cells, t0, t1, t2;

	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (!strcmp(argv[i], "-t") && i + 1 < argc)
			threads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-a") && i + 1 < argc)
			fs = argv[++i];
		else if (!strcmp(argv[i], "-T") && i + 1 < argc)
			ft = argv[++i];
		else if (!strcmp(argv[i], "--score") && i + 1 < argc)
			sscanf(argv[++i], "%d,%d,%d", &ma, &mi, &gp);
		else if (!strcmp(argv[i], "--identity") && i + 1 < argc)
			ident = (uint64_t)(atof(argv[++i]) * 10000 + 0.5);
		else if (!strcmp(argv[i], "--sample") && i + 1 < argc)
			sample = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--score-only"))
			score_only = 1;
		else
			break;
	}
	if (i >= argc || argc - i > 2 || threads < 1 || threads > 256 || sample < 1) {
		fprintf(stderr, "usage: parasail_nw [-t THREADS] [-a FUNC] [-T FUNC] [--score M,X,G] "
				"[--identity P] [--sample K] [--score-only] A.fa [B.fa]\n");
		return 2;
	}
	if (!fs)
		fs = __builtin_cpu_supports("avx2") ? "nw_striped_avx2_256_16" : "nw_striped_16";
	f_score = parasail_lookup_function(fs);
	f_trace = parasail_lookup_function(ft);
	if (!f_score || !f_trace) {
		fprintf(stderr, "parasail_nw: no parasail function '%s'\n", f_score ? ft : fs);
		return 2;
	}
	mat = parasail_matrix_create("ACGT", ma, mi);
	nw_load(&A, argv[i], "parasail_nw");
	all_vs_all = argc - i == 1;
	if (!all_vs_all)
		nw_load(&B, argv[i + 1], "parasail_nw");
	QS = &A;
	TS = all_vs_all ? &A : &B;
	npairs = nw_pairs(&A, TS, sample, &pq, &pt, &cells);
	score = malloc((npairs + 1) * sizeof *score);
	out = calloc(npairs + 1, sizeof *out);
	t0 = nw_now();
	nw_run(work_score, threads);
	t1 = nw_now();
	if (!score_only)
		nw_run(work_trace, threads);
	t2 = nw_now();
	for (k = 0; k < npairs; k++)
		if (out[k]) {
			fputs(out[k], stdout);
			free(out[k]);
			cnt++;
		}
	fprintf(stderr, "pairs %zu cells %.0f traced %llu score_s %.3f trace_s %.3f score_gcups %.2f "
			"functions %s %s threads %d\n", npairs, cells, (unsigned long long)ntraced, t1 - t0,
			t2 - t1, cells / (t1 - t0) / 1e9, fs, ft, threads);
	parasail_matrix_free(mat);
	return 0;
}
