/*
 * galign_test.c - the global alignment (galign.h, inc_galign.h) against a
 * plain dynamic-programming oracle: the full (m+1) x (n+1) matrix and the
 * documented tie rule (parasail's NW traceback), on random and on similar
 * sequences, for edit distance and several linear score sets.  Checks the
 * score passes (scalar, each vector code, threads), the traceback (scalar
 * and vector fill), the identity bound on random alignments (it never
 * prunes an alignment that reaches the identity), and the OpenCL path
 * against the CPU when a device exists.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "galign.h"
#include "ocl.h"
#include "galign_oracle.h"
#include "tap.h"
#include "testutil.h"
#include "util.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t k)
{
	return k ? (uint32_t)(tu_xorshift64(&rng) % k) : 0;
}

/* --- inputs ----------------------------------------------------------------- */

/* A random sequence of LEN codes over the first ALPHA bases, with N now and then. */
static void rand_seq(uint8_t *s, uint32_t len, uint32_t alpha)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		s[i] = rnd(50) == 0 ? 4 : (uint8_t)rnd(alpha);
}

/* A mutated copy of SRC (N bases) into DST, at most CAP: substitutions and indels at RATE %. */
static uint32_t mutate(uint8_t *dst, uint32_t cap, const uint8_t *src, uint32_t n, uint32_t rate)
{
	uint32_t i, o = 0;

	for (i = 0; i < n && o < cap; i++) {
		uint32_t r = rnd(100);
		if (r < rate / 2 + 1 && rate) {
			uint32_t kind = rnd(3);
			if (kind == 0)
				dst[o++] = (uint8_t)rnd(4);
			else if (kind == 1)
				continue;
			else {
				dst[o++] = src[i];
				if (o < cap)
					dst[o++] = (uint8_t)rnd(4);
			}
		} else {
			dst[o++] = src[i];
		}
	}
	return o;
}

typedef struct {
	int edit, ma, mi, g;
	const char *name;
} scoreset_t;

static const scoreset_t sets[] = {
	{ 1, 0, -1, -1, "edit" },
	{ 0, 4, -5, -8, "4,-5,-8" },
	{ 0, 1, -1, -1, "1,-1,-1" },
	{ 0, 2, -3, -5, "2,-3,-5" },
	{ 0, 0, -1, -1, "0,-1,-1 linear" },
	{ 0, 3, 0, -1, "3,0,-1" },
	{ 0, 5, -20, -3, "5,-20,-3 (mismatch below two gaps)" },
	{ 0, 55, -100, -100, "55,-100,-100 (byte range)" },
};

/* The pairs of one round: codes buffer, pairs, sizes. */
typedef struct {
	uint8_t *codes;
	size_t len, cap;
	galign_pair_t *p;
	size_t n, pcap;
} batch_t;

static uint64_t add_seq(batch_t *b, const uint8_t *s, uint32_t n)
{
	uint64_t off = b->len;

	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->codes = sp_realloc(b->codes, b->cap);
	}
	if (n)
		memcpy(b->codes + b->len, s, n);
	b->len += n;
	return off;
}

static void add_pair(batch_t *b, uint64_t qo, uint32_t m, uint64_t to, uint32_t n)
{
	if (b->n == b->pcap) {
		b->pcap = b->pcap ? b->pcap * 2 : 256;
		b->p = sp_realloc(b->p, b->pcap * sizeof *b->p);
	}
	b->p[b->n].q_off = qo;
	b->p[b->n].q_len = m;
	b->p[b->n].t_off = to;
	b->p[b->n].t_len = n;
	b->n++;
}

/*
 * A round: several queries, each against a run of targets (random and
 * mutated copies, lengths 0..MAXLEN), so that the vector code sees full and
 * partial groups.
 */
static void make_batch(batch_t *b, uint32_t nq, uint32_t maxlen)
{
	uint8_t *q = malloc(maxlen * 2 + 8), *t = malloc(maxlen * 2 + 8);
	uint32_t a, k;

	b->len = 0;
	b->n = 0;
	for (a = 0; a < nq; a++) {
		uint32_t m = rnd(8) == 0 ? rnd(4) : rnd(maxlen + 1), alpha = 1 + rnd(4);
		uint32_t nt = rnd(5) == 0 ? 1 + rnd(3) : 1 + rnd(80);
		uint64_t qo;

		rand_seq(q, m, alpha);
		qo = add_seq(b, q, m);
		for (k = 0; k < nt; k++) {
			uint32_t n, kind = rnd(4);
			if (kind == 0) {
				n = rnd(8) == 0 ? rnd(3) : rnd(maxlen + 1);
				rand_seq(t, n, alpha);
			} else {
				n = mutate(t, maxlen * 2, q, m, kind == 1 ? 2 : kind == 2 ? 10 : 30);
			}
			add_pair(b, qo, m, add_seq(b, t, n), n);
		}
	}
	free(q);
	free(t);
}

static void scoreset(const scoreset_t *s, galign_scores_t *sc)
{
	sc->edit = s->edit;
	sc->match = s->ma;
	sc->mismatch = s->mi;
	sc->gap = s->g;
}

/* Trace every pair of B with SIMD kind KIND and THREADS; compare with the oracles. */
static int check_trace(const batch_t *b, const galign_scores_t *sc, const int32_t *scores,
		const oracle_t *o, int threads, uint32_t *bad_pair)
{
	galign_res_t *res = malloc(b->n * sizeof *res);
	uint64_t *off = malloc((b->n + 1) * sizeof *off);
	uint32_t *runs;
	char *cig = malloc(11 * 40000);
	size_t k;
	int ok = 1;

	off[0] = 0;
	for (k = 0; k < b->n; k++)
		off[k + 1] = off[k] + galign_runs_cap(sc, b->p[k].q_len, b->p[k].t_len, scores[k]);
	runs = malloc((off[b->n] + 1) * sizeof *runs);
	if (galign_trace_batch(b->codes, b->p, NULL, b->n, sc, scores, threads, res, runs, off) < 0) {
		tap_diag("trace: %s", sp_errmsg());
		ok = 0;
	}
	for (k = 0; ok && k < b->n; k++) {
		galign_cigar_str(&res[k], runs + off[k], cig, 11 * 40000);
		if (strcmp(cig, o[k].cigar) || res[k].matches != o[k].matches
				|| res[k].mismatches != o[k].mismatches || res[k].ins != o[k].ins
				|| res[k].del != o[k].del) {
			tap_diag("pair %zu (%u x %u): cigar %s, oracle %s", k, b->p[k].q_len, b->p[k].t_len,
					cig, o[k].cigar);
			*bad_pair = (uint32_t)k;
			ok = 0;
		}
	}
	free(res);
	free(off);
	free(runs);
	free(cig);
	return ok;
}

static void test_set(const scoreset_t *set, uint32_t rounds, uint32_t maxlen)
{
	galign_scores_t sc;
	batch_t b = { 0 };
	uint32_t r;
	int kinds[3] = { GALIGN_SIMD_OFF, GALIGN_SIMD_AVX2, GALIGN_SIMD_AVX512 }, ki;
	int ok_score = 1, ok_trace = 1, ok_scalar = 1, ok_bound = 1;
	uint32_t bad = 0;

	scoreset(set, &sc);
	for (r = 0; r < rounds; r++) {
		oracle_t *o;
		int32_t *sco = malloc(sizeof *sco * 1), *s2;
		size_t k;

		make_batch(&b, 4 + rnd(4), maxlen);
		o = malloc(b.n * sizeof *o);
		sco = realloc(sco, b.n * sizeof *sco);
		s2 = malloc(b.n * sizeof *s2);
		for (k = 0; k < b.n; k++) {
			const galign_pair_t *p = &b.p[k];
			uint8_t *bnd = malloc(p->t_len + 1);
			int32_t s1;

			oracle(b.codes + p->q_off, p->q_len, b.codes + p->t_off, p->t_len,
					sc.edit ? 0 : sc.match, sc.edit ? -1 : sc.mismatch, sc.edit ? -1 : sc.gap,
					&o[k]);
			s1 = sc.edit ? sp_ga_score_edit(b.codes + p->q_off, p->q_len, b.codes + p->t_off,
					p->t_len, bnd, 1)
				: sp_ga_score_lin(b.codes + p->q_off, p->q_len, b.codes + p->t_off, p->t_len,
					sc.match, sc.mismatch, sc.gap, bnd, 1);
			if (s1 != o[k].score && ok_scalar) {
				tap_diag("scalar pair %zu (%u x %u): %d, oracle %d", k, p->q_len, p->t_len, s1,
						o[k].score);
				ok_scalar = 0;
			}
			free(bnd);
			/* the oracle's alignment reaches its own identity: the bound must let it pass */
			{
				uint64_t cols = (uint64_t)o[k].matches + o[k].mismatches + o[k].ins + o[k].del;
				uint32_t id = cols ? (uint32_t)((uint64_t)o[k].matches * GALIGN_IDENT_ONE / cols)
					: GALIGN_IDENT_ONE;
				if (!galign_may_pass(&sc, p->q_len, p->t_len, o[k].score, id) && ok_bound) {
					tap_diag("bound prunes pair %zu of identity %u (score %d)", k, id, o[k].score);
					ok_bound = 0;
				}
			}
		}
		for (ki = 0; ki < 3; ki++) {
			galign_set_simd(kinds[ki]);
			memset(s2, 0, b.n * sizeof *s2);
			if (galign_score_batch(b.codes, b.p, b.n, &sc, 1 + (int)rnd(3), s2) < 0) {
				tap_diag("score: %s", sp_errmsg());
				ok_score = 0;
			}
			for (k = 0; k < b.n && ok_score; k++)
				if (s2[k] != o[k].score) {
					tap_diag("%s pair %zu (%u x %u): %d, oracle %d", galign_simd_name(galign_simd()),
							k, b.p[k].q_len, b.p[k].t_len, s2[k], o[k].score);
					ok_score = 0;
				}
			galign_set_fill16(1);
			if (ok_trace && !check_trace(&b, &sc, s2, o, 1 + (int)rnd(3), &bad)) {
				tap_diag("with the %s fill", galign_simd_name(galign_simd()));
				ok_trace = 0;
			}
			galign_set_fill16(0);   /* 32-bit lanes only */
			if (ok_trace && kinds[ki] != GALIGN_SIMD_OFF
					&& !check_trace(&b, &sc, s2, o, 1 + (int)rnd(3), &bad)) {
				tap_diag("with the %s fill, 32-bit lanes", galign_simd_name(galign_simd()));
				ok_trace = 0;
			}
			galign_set_fill16(1);
		}
		galign_set_simd(-1);
		for (k = 0; k < b.n; k++)
			oracle_free(&o[k]);
		free(o);
		free(sco);
		free(s2);
	}
	tap_ok(ok_scalar, "%s: scalar score passes equal the oracle", set->name);
	tap_ok(ok_score, "%s: batch score passes (scalar, avx2, avx512 where present, threads) "
			"equal the oracle", set->name);
	tap_ok(ok_trace, "%s: tracebacks (CIGAR and counts) equal the oracle's tie rule", set->name);
	tap_ok(ok_bound, "%s: the identity bound lets every optimal alignment pass at its identity",
			set->name);
	free(b.codes);
	free(b.p);
}

/*
 * The bound against random alignments: a random path through random
 * sequences has a score and an identity; no threshold at or below that
 * identity may prune that score (nor any higher one).
 */
static void test_bound_random(const scoreset_t *set)
{
	galign_scores_t sc;
	uint32_t it, bad = 0, tight = 0;

	scoreset(set, &sc);
	for (it = 0; it < 200000; it++) {
		uint32_t m = 0, n = 0, x = 0, y = 0, gcols = 0, L = rnd(rnd(2) ? 30 : 400), c;
		int ma = sc.edit ? 0 : sc.match, mi = sc.edit ? -1 : sc.mismatch, g = sc.edit ? -1 : sc.gap;
		int64_t s;
		uint32_t id, th;
		uint32_t pm = rnd(101), px = rnd(101 - pm);

		for (c = 0; c < L; c++) {
			uint32_t r = rnd(100);
			if (r < pm) { x++; m++; n++; }
			else if (r < pm + px) { y++; m++; n++; }
			else if (rnd(2)) { gcols++; m++; }
			else { gcols++; n++; }
		}
		s = (int64_t)ma * x + (int64_t)mi * y + (int64_t)g * gcols;
		id = L ? (uint32_t)((uint64_t)x * GALIGN_IDENT_ONE / L) : GALIGN_IDENT_ONE;
		th = rnd(id + 1);
		if (!galign_may_pass(&sc, m, n, (int32_t)s, id) || !galign_may_pass(&sc, m, n, (int32_t)s, th))
			bad++;
		/* a score one below the least an identity-ID alignment can have is pruned (tightness) */
		if (!galign_may_pass(&sc, m, n, (int32_t)s - 1000000, id))
			tight++;
	}
	tap_ok(bad == 0, "%s: the bound never prunes a random alignment at or below its identity "
			"(%u failures)", set->name, bad);
	tap_ok(tight > 0, "%s: the bound does prune far lower scores (%u of 200000)", set->name, tight);
}

static void test_limits(void)
{
	galign_scores_t sc = { 0, 4, 4, -1 };
	int ok = galign_check_scores(&sc) < 0;

	sc.mismatch = -5;
	sc.gap = 0;
	ok = ok && galign_check_scores(&sc) < 0;
	sc.gap = -200;
	ok = ok && galign_check_scores(&sc) < 0;   /* 4 + 400 > 255 */
	sc.gap = -8;
	ok = ok && galign_check_scores(&sc) == 0;
	tap_ok(ok, "score limits: mismatch below match, gap negative, match - 2 gap <= 255");
}

/* Long sequences: a few pairs of 1000..3000 bases, every code path once more. */
static void test_long(void)
{
	const scoreset_t *sets2[2] = { &sets[0], &sets[1] };
	int s;

	for (s = 0; s < 2; s++)
		test_set(sets2[s], 1, 2000);
}

/* The device against the CPU (scores and traceback), when there is one. */
static void test_device(void)
{
	char msg[256];
	ocl_ctx_t *ctx = NULL;
	const char *spec = getenv("SEEDPIPE_TEST_DEVICE");
	int s;

	if (ocl_open(spec && *spec ? spec : "cpu", 0, &ctx, msg, sizeof msg) != OCL_OPEN_OK || !ctx) {
		tap_skip("no OpenCL device");
		return;
	}
	/* rounds: score set, a work group a pair, the linear kernel (SEEDPIPE_GALIGN_KERNEL) */
	static const int rounds[][3] = {
		{ 0, 0, 0 }, { 1, 0, 0 }, { 2, 0, 0 }, { 3, 0, 0 },
		{ 0, 1, 0 }, { 1, 1, 0 }, { 2, 1, 0 }, { 3, 1, 0 },
		{ 1, 0, 1 }, { 3, 0, 1 }, { 5, 0, 0 }, { 6, 0, 0 }, { 7, 0, 0 }, { 7, 1, 0 },
		{ 1, 0, 2 }, { 2, 0, 2 }, { 7, 0, 2 },
	};
	for (s = 0; s < (int)(sizeof rounds / sizeof rounds[0]); s++) {
		const scoreset_t *set = &sets[rounds[s][0]];
		galign_scores_t sc;
		batch_t b = { 0 };
		galign_dev_t *d;
		galign_job_t *job;
		int32_t *s1, *s2;
		galign_res_t *r1, *r2;
		uint64_t *off;
		uint32_t *u1, *u2, *idx;
		size_t k, ns = 0;
		int ok = 1;

		/* the second round of each score set: every pair by a work group */
		if (rounds[s][1])
			setenv("SEEDPIPE_GALIGN_WG", "0", 1);
		else
			unsetenv("SEEDPIPE_GALIGN_WG");
		if (rounds[s][2])
			setenv("SEEDPIPE_GALIGN_KERNEL", rounds[s][2] == 1 ? "1" : "2", 1);
		else
			unsetenv("SEEDPIPE_GALIGN_KERNEL");
		scoreset(set, &sc);
		make_batch(&b, 6, 300);
		s1 = malloc(b.n * 4);
		s2 = malloc(b.n * 4);
		galign_score_batch(b.codes, b.p, b.n, &sc, 2, s1);
		d = galign_dev_new(ctx, b.codes, b.len, &sc, b.n);
		job = d ? galign_dev_score(d, b.p, b.n, s2) : NULL;
		if (!job || galign_dev_wait(job) < 0) {
			tap_diag("device: %s", sp_errmsg());
			ok = 0;
		}
		for (k = 0; ok && k < b.n; k++)
			if (s1[k] != s2[k]) {
				tap_diag("pair %zu (%u x %u): device %d, cpu %d", k, b.p[k].q_len, b.p[k].t_len,
						s2[k], s1[k]);
				ok = 0;
			}
		tap_ok(ok, "%s: device scores%s equal the CPU's (%zu pairs)", set->name,
				rounds[s][1] ? " (a work group a pair)" : rounds[s][2] == 1 ? " (ga_score)"
				: rounds[s][2] == 2 ? " (ga_score_lin4m)"
				: set->edit ? "" : " (ga_score_lin4)", b.n);
		/* trace every other pair */
		idx = malloc(b.n * 4);
		for (k = 0; k < b.n; k += 2)
			idx[ns++] = (uint32_t)k;
		off = malloc((ns + 1) * 8);
		off[0] = 0;
		for (k = 0; k < ns; k++)
			off[k + 1] = off[k] + galign_runs_cap(&sc, b.p[idx[k]].q_len, b.p[idx[k]].t_len, s1[idx[k]]);
		r1 = calloc(ns + 1, sizeof *r1);
		r2 = calloc(ns + 1, sizeof *r2);
		u1 = calloc(off[ns] + 1, 4);
		u2 = calloc(off[ns] + 1, 4);
		ok = galign_trace_batch(b.codes, b.p, idx, ns, &sc, s1, 2, r1, u1, off) == 0;
		if (ok && galign_dev_trace(d, b.p, idx, ns, s1, r2, u2, off) < 0) {
			tap_diag("device trace: %s", sp_errmsg());
			ok = 0;
		}
		for (k = 0; ok && k < ns; k++)
			if (memcmp(&r1[k], &r2[k], sizeof r1[k])
					|| memcmp(u1 + off[k], u2 + off[k], r1[k].n_runs * 4)) {
				tap_diag("traced pair %zu differs", k);
				ok = 0;
			}
		tap_ok(ok, "%s: device tracebacks equal the CPU's (%zu pairs)", set->name, ns);
		galign_dev_free(d);
		free(s1);
		free(s2);
		free(r1);
		free(r2);
		free(u1);
		free(u2);
		free(off);
		free(idx);
		free(b.codes);
		free(b.p);
	}
	unsetenv("SEEDPIPE_GALIGN_WG");
	unsetenv("SEEDPIPE_GALIGN_KERNEL");
	ocl_close(ctx);
}

int main(int argc, char **argv)
{
	size_t s;

	(void)argc;
	sp_set_progname(argv[0]);
	tap_diag("vector code on this CPU: %s", galign_simd_name(galign_simd()));
	test_limits();
	for (s = 0; s < sizeof sets / sizeof sets[0]; s++)
		test_set(&sets[s], 6, 160);
	test_long();
	for (s = 0; s < 3; s++)
		test_bound_random(&sets[s]);
	test_device();
	return tap_done();
}
