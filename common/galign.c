/*
 * galign.c - the CPU side of the batched global alignment (galign.h):
 * score checks, the score pass over a batch (pairs that share a query go
 * through the vector code of galign_simd.c together, one target a lane;
 * the rest one pair at a time with inc_galign.h), the identity bound, and
 * the banded traceback.
 *
 * Threads take groups of pairs from sp_for's counter; a pair's score and
 * traceback depend on that pair only, so the results do not depend on the
 * threads, on the vector code, or on how pairs are grouped.
 */
#include "galign.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "galign_simd.h"
#include "sp_thread.h"
#include "util.h"

/* a traceback needing more than this for its band's bits is refused */
#define GA_TRACE_MAX_BYTES ((size_t)4 << 30)

int galign_check_scores(const galign_scores_t *sc)
{
	if (sc->edit)
		return 0;
	if (sc->match < 0 || sc->match > 255)
		return sp_fail("match %d must lie in 0..255", sc->match);
	if (sc->mismatch >= sc->match || sc->mismatch < -255)
		return sp_fail("mismatch %d must lie in -255..%d (below the match)", sc->mismatch,
				sc->match - 1);
	if (sc->gap >= 0 || sc->gap < -255)
		return sp_fail("gap %d must lie in -255..-1", sc->gap);
	if (sc->match - 2 * sc->gap > 255)
		return sp_fail("match - 2 gap is %d, at most 255 is supported", sc->match - 2 * sc->gap);
	return 0;
}

/* the score set the shared code runs with */
static void ga_sc(const galign_scores_t *sc, int *ma, int *mi, int *g)
{
	*ma = sc->edit ? 0 : sc->match;
	*mi = sc->edit ? -1 : sc->mismatch;
	*g = sc->edit ? -1 : sc->gap;
}

/* What a batch pass reads: its pair k is PAIRS[IDX[k]] (PAIRS[k] without IDX). */
typedef struct {
	const uint8_t *codes;
	const galign_pair_t *pairs;
	const uint32_t *idx;
	const galign_scores_t *sc;
} ga_batch_t;

/* The index in PAIRS of the batch's pair K. */
static size_t ga_at(const ga_batch_t *b, size_t k)
{
	return b->idx ? b->idx[k] : k;
}

/*
 * The checks both batch passes make before their work: the N pairs of B of
 * at most GALIGN_MAX_LEN bases each; clamps *N_THREADS to at least 1.
 * Returns -1 after sp_fail, else 0.
 */
static int ga_batch_check(const ga_batch_t *b, size_t n, int *n_threads)
{
	size_t k;

	if (n > UINT32_MAX)
		return sp_fail("a batch of %zu pairs is too large", n);
	if (*n_threads < 1)
		*n_threads = 1;
	for (k = 0; k < n; k++) {
		const galign_pair_t *p = &b->pairs[ga_at(b, k)];

		if (p->q_len > GALIGN_MAX_LEN || p->t_len > GALIGN_MAX_LEN)
			return sp_fail("pair %zu has a sequence of more than %u bases", k, GALIGN_MAX_LEN);
	}
	return 0;
}

/* N scratch areas (one a thread), and their release. */
static ga_scratch_t *ga_scratch_new(int n)
{
	return sp_calloc((size_t)n, sizeof(ga_scratch_t));
}

static void ga_scratch_free_n(ga_scratch_t *s, int n)
{
	int t;

	for (t = 0; t < n; t++)
		ga_scratch_free(&s[t]);
	free(s);
}

/* -1, 0 or 1 as A is below, equal to or above B */
static int ga_cmp(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

/* ga_cmp of (A0, A1, A2) and (B0, B1, B2) in that order */
static int ga_cmp3(uint64_t a0, uint64_t b0, uint64_t a1, uint64_t b1, uint64_t a2, uint64_t b2)
{
	int c;

	if ((c = ga_cmp(a0, b0)) || (c = ga_cmp(a1, b1)))
		return c;
	return ga_cmp(a2, b2);
}

/* --- vector code selection -------------------------------------------------- */

static atomic_int ga_forced = -1;
static atomic_int ga_fill16 = 1;

int galign_set_fill16(int on)
{
	return atomic_exchange(&ga_fill16, on);
}

int galign_simd(void)
{
	int f = atomic_load(&ga_forced), best = ga_simd_best();

	if (f >= 0)
		return f < best ? f : best;
	return sp_simd_allowed() ? best : GALIGN_SIMD_OFF;
}

int galign_set_simd(int kind)
{
	return atomic_exchange(&ga_forced, kind);
}

const char *galign_simd_name(int kind)
{
	return kind == GALIGN_SIMD_AVX512 ? "avx512" : kind == GALIGN_SIMD_AVX2 ? "avx2" : "scalar";
}

/* --- score pass ------------------------------------------------------------- */

typedef struct {
	uint64_t q_off;
	uint32_t q_len, t_len;
	uint32_t idx;
} sb_key;

static int sb_cmp_len(const void *a, const void *b)
{
	const sb_key *x = a, *y = b;

	return ga_cmp3(x->q_len, y->q_len, x->t_len, y->t_len, x->idx, y->idx);
}

/* by query, then as sb_cmp_len */
static int sb_cmp(const void *a, const void *b)
{
	const sb_key *x = a, *y = b;
	int c = ga_cmp(x->q_off, y->q_off);

	return c ? c : sb_cmp_len(a, b);
}

enum { SB_SCALAR, SB_QUERY, SB_PAIRS };   /* one pair at a time, one query a group, any pairs */

typedef struct {
	const sb_key *k;
	uint32_t count;
	int how;
} sb_group;

typedef struct {
	ga_batch_t in;
	int32_t *scores;
	const sb_group *groups;
	int kind;
	ga_scratch_t *scr;
} sb_ctx;

static int32_t score_one(const uint8_t *codes, const galign_pair_t *p, const galign_scores_t *sc,
		ga_scratch_t *s)
{
	uint8_t *bnd = ga_scratch(s, (size_t)p->t_len + 1);

	if (sc->edit)
		return sp_ga_score_edit(codes + p->q_off, p->q_len, codes + p->t_off, p->t_len, bnd, 1);
	return sp_ga_score_lin(codes + p->q_off, p->q_len, codes + p->t_off, p->t_len, sc->match,
			sc->mismatch, sc->gap, bnd, 1);
}

static int sb_group_run(void *vc, size_t g, int tid)
{
	sb_ctx *c = vc;
	const sb_group *gr = &c->groups[g];
	const sb_key *k = gr->k;
	const uint8_t *q[64], *t[64];
	uint32_t m[64], n[64], i;
	int32_t out[64];
	int rc;

	if (gr->how == SB_SCALAR) {
		for (i = 0; i < gr->count; i++)
			c->scores[k[i].idx] = score_one(c->in.codes, &c->in.pairs[k[i].idx], c->in.sc, &c->scr[tid]);
		return 0;
	}
	for (i = 0; i < gr->count; i++) {
		const galign_pair_t *p = &c->in.pairs[k[i].idx];
		q[i] = c->in.codes + p->q_off;
		m[i] = p->q_len;
		t[i] = c->in.codes + p->t_off;
		n[i] = p->t_len;
	}
	if (gr->how == SB_QUERY)
		rc = ga_simd_score(c->kind, c->in.sc, q[0], m[0], t, n, (int)gr->count, &c->scr[tid], out);
	else
		rc = ga_simd_score_pairs(c->kind, c->in.sc, q, m, t, n, (int)gr->count, &c->scr[tid], out);
	if (rc < 0)
		return -1;
	for (i = 0; i < gr->count; i++)
		c->scores[k[i].idx] = out[i];
	return 0;
}

/* Groups of COUNT pairs of K (HOW) at the end of G (*NG of them), LANES at a time. */
static void sb_groups(sb_group *g, size_t *ng, const sb_key *k, size_t count, size_t lanes, int how)
{
	size_t r;

	for (r = 0; r < count; r += lanes) {
		g[*ng].k = k + r;
		g[*ng].count = (uint32_t)(count - r < lanes ? count - r : lanes);
		g[(*ng)++].how = how;
	}
}

int galign_score_batch(const uint8_t *codes, const galign_pair_t *pairs, size_t n,
		const galign_scores_t *sc, int n_threads, int32_t *scores)
{
	sb_key *keys, *left;
	sb_group *groups;
	size_t i, ng = 0, nl = 0;
	int kind = galign_simd(), lanes, rc;
	sb_ctx c;

	if (n == 0)
		return 0;
	c.in = (ga_batch_t){ codes, pairs, NULL, sc };
	if (ga_batch_check(&c.in, n, &n_threads) < 0)
		return -1;
	lanes = kind == GALIGN_SIMD_OFF ? 1 : ga_simd_lanes(kind, sc->edit);
	keys = sp_malloc(n * sizeof *keys);
	left = sp_malloc(n * sizeof *left);
	for (i = 0; i < n; i++) {
		keys[i].q_off = pairs[i].q_off;
		keys[i].q_len = pairs[i].q_len;
		keys[i].t_len = pairs[i].t_len;
		keys[i].idx = (uint32_t)i;
	}
	qsort(keys, n, sizeof *keys, sb_cmp);
	/*
	 * Runs of one query: groups of LANES targets, one query a vector.  The
	 * pairs of short runs are left over: with linear gaps they go through
	 * the vector code for unrelated pairs, sorted by lengths so that a
	 * group's lanes are alike; in edit mode one at a time (the scalar
	 * bit-vector pass is fast already).
	 */
	groups = sp_malloc(2 * n * sizeof *groups);
	for (i = 0; i < n;) {
		size_t e = i + 1;

		while (e < n && keys[e].q_off == keys[i].q_off && keys[e].q_len == keys[i].q_len)
			e++;
		if (lanes == 1 || (e - i) * 4 < (size_t)lanes) {
			memcpy(left + nl, keys + i, (e - i) * sizeof *left);
			nl += e - i;
		} else {
			sb_groups(groups, &ng, keys + i, e - i, (size_t)lanes, SB_QUERY);
		}
		i = e;
	}
	if (nl && lanes > 1 && !sc->edit) {
		qsort(left, nl, sizeof *left, sb_cmp_len);
		sb_groups(groups, &ng, left, nl, (size_t)lanes, SB_PAIRS);
	} else {
		sb_groups(groups, &ng, left, nl, 8, SB_SCALAR);
	}
	c.scores = scores;
	c.groups = groups;
	c.kind = kind;
	c.scr = ga_scratch_new(n_threads);
	rc = sp_for(n_threads, ng, 1, sb_group_run, &c);
	ga_scratch_free_n(c.scr, n_threads);
	free(groups);
	free(keys);
	free(left);
	return rc;
}

/* --- the identity bound ------------------------------------------------------ */

/*
 * An alignment of lengths m, n with P aligned pairs (x matches, P - x
 * mismatches) has m + n - 2P gap columns and c = m + n - P columns; its
 * identity x / c >= T / U (U = GALIGN_IDENT_ONE) needs x >= T c / U, and its
 * score is (M - X) x + X P + g (m + n - 2P), at least
 *
 *     f(P) = [(M - X) T (m + n) + g U (m + n) + P ((X - 2g) U - (M - X) T)] / U
 *
 * with x relaxed to T c / U (M > X).  x <= P gives P >= T (m + n) / (U + T),
 * and P <= min(m, n); f is linear in P, so over the real interval its least
 * value is at an end, and no alignment of identity >= T / U scores below
 * min(f(P_lo), f(P_hi)) (the integer alignments are among the real points).
 * An empty interval means that no alignment reaches the identity.  The
 * comparison is done times U (U + T) in 128-bit integers, exactly.
 */
int galign_may_pass(const galign_scores_t *sc, uint32_t m, uint32_t n, int32_t s,
		uint32_t ident)
{
	typedef __int128 i128;
	int ma, mi, g;
	i128 T = ident, U = GALIGN_IDENT_ONE, mn = (i128)m + n, phi = m < n ? m : n;
	i128 a, b, flo, fhi, lo;

	if (ident == 0)
		return 1;
	ga_sc(sc, &ma, &mi, &g);
	if (T * mn > phi * (U + T))
		return 0;                          /* P_lo > P_hi */
	a = (i128)(ma - mi) * T * mn + (i128)g * U * mn;
	b = (i128)(mi - 2 * g) * U - (i128)(ma - mi) * T;
	fhi = (a + phi * b) * (U + T);
	flo = a * (U + T) + T * mn * b;
	lo = flo < fhi ? flo : fhi;
	return (i128)s * U * (U + T) >= lo;
}

int galign_ident_ok(const galign_res_t *r, uint32_t ident)
{
	uint64_t cols = (uint64_t)r->matches + r->mismatches + r->ins + r->del;

	return (uint64_t)r->matches * GALIGN_IDENT_ONE >= (uint64_t)ident * cols;
}

/* --- traceback ------------------------------------------------------------- */

uint32_t galign_runs_cap(const galign_scores_t *sc, uint32_t m, uint32_t n, int32_t s)
{
	int ma, mi, g;

	ga_sc(sc, &ma, &mi, &g);
	return sp_ga_runs_cap(m, n, ma, mi, g, s);
}

typedef struct {
	uint32_t w, m;
	uint32_t k;
	int dlo;
} tb_key;

static int tb_cmp(const void *a, const void *b)
{
	const tb_key *x = a, *y = b;

	return ga_cmp3(x->w, y->w, x->m, y->m, x->k, y->k);
}

typedef struct {
	ga_batch_t in;
	const int32_t *scores;
	galign_res_t *res;
	uint32_t *runs;
	const uint64_t *off;
	const tb_key *keys;          /* sorted by band width, then rows */
	size_t npairs;
	int kind, lanes;             /* vector fill, pairs a group (1: none) */
	int narrow;                  /* 16-bit lanes allowed (galign_set_fill16) */
	ga_scratch_t *rows, *bits, *vs;
} tb_ctx;

static int tb_walked(tb_ctx *c, size_t k, const galign_pair_t *p, int32_t s)
{
	if (c->res[k].status != SP_GA_OK)
		return sp_fail("traceback failed (status %d) for a pair of %u and %u bases with score %d",
				c->res[k].status, p->q_len, p->t_len, s);
	return 0;
}

static int tb_badscore(const galign_pair_t *p, int32_t h, int32_t s)
{
	return sp_fail("traceback: the band gives score %d where the score pass gave %d "
			"(pair of %u and %u bases)", h, s, p->q_len, p->t_len);
}

/* Trace pair K of the batch (one pair, the shared code). */
static int tb_one(tb_ctx *c, size_t k, int tid)
{
	size_t pi = ga_at(&c->in, k);
	const galign_pair_t *p = &c->in.pairs[pi];
	const uint8_t *q = c->in.codes + p->q_off, *t = c->in.codes + p->t_off;
	int32_t s = c->scores[pi], h;
	int ma, mi, g, dlo;
	uint32_t w;
	size_t words;
	int *row;
	uint32_t *bits;

	ga_sc(c->in.sc, &ma, &mi, &g);
	sp_ga_band(p->q_len, p->t_len, ma, g, s, &dlo, &w);
	words = (size_t)sp_ga_bits_words(p->q_len, w);
	if (words * 4 > GA_TRACE_MAX_BYTES)
		return sp_fail("the traceback of a pair of %u and %u bases needs %zu MiB for its band "
				"of %u diagonals (at most %zu MiB)", p->q_len, p->t_len, words * 4 >> 20, w,
				GA_TRACE_MAX_BYTES >> 20);
	row = ga_scratch(&c->rows[tid], (size_t)w * sizeof(int));
	bits = ga_scratch(&c->bits[tid], (words ? words : 1) * 4);
	h = sp_ga_fill(q, p->q_len, t, p->t_len, ma, mi, g, dlo, w, row, bits);
	if (h != s)
		return tb_badscore(p, h, s);
	sp_ga_walk(q, p->q_len, t, p->t_len, dlo, w, bits, 0, 0, c->runs + c->off[k],
			(uint32_t)(c->off[k + 1] - c->off[k]), &c->res[k]);
	return tb_walked(c, k, p, s);
}

/*
 * Whether 16-bit lanes hold a fill of pairs of up to MMAX x NMAX: every
 * value a real cell or its candidates take lies in g (m + n) + min(mi, 0)
 * .. ma m, and what sinks left of column 0 from -32768 rises by ma a row at
 * most; both must stay apart and within 16 bits.
 */
static int tb_narrow_ok(const galign_scores_t *sc, uint32_t mmax, uint32_t nmax)
{
	int ma, mi, g;
	int64_t lo, hi;

	ga_sc(sc, &ma, &mi, &g);
	lo = (int64_t)g * ((int64_t)mmax + nmax) + (mi < 0 ? mi : 0) + g - 2;
	hi = (int64_t)ma * mmax;
	return hi < INT16_MAX && INT16_MIN + (int64_t)ma * (mmax + 1) < lo;
}

/* The vector fill and the walks of the CNT (>= 2) pairs of K. */
static int tb_fill(tb_ctx *c, const tb_key *k, size_t cnt, int narrow, int tid)
{
	const uint8_t *q[32], *t[32];
	uint32_t m[32], n[32], w = 0, mmax = 0, mbits, step;
	int dlo[32];
	int32_t hmn[32];
	uint8_t *bits;
	size_t bytes, l;

	for (l = 0; l < cnt; l++) {
		const galign_pair_t *p = &c->in.pairs[ga_at(&c->in, k[l].k)];

		q[l] = c->in.codes + p->q_off;
		t[l] = c->in.codes + p->t_off;
		m[l] = p->q_len;
		n[l] = p->t_len;
		dlo[l] = k[l].dlo;
		if (k[l].w > w)
			w = k[l].w;
		if (k[l].m > mmax)
			mmax = k[l].m;
	}
	bytes = ga_simd_fill_bytes(c->kind, narrow, mmax, w);
	if (bytes > GA_TRACE_MAX_BYTES) {
		for (l = 0; l < cnt; l++)
			if (tb_one(c, k[l].k, tid) < 0)
				return -1;
		return 0;
	}
	bits = ga_scratch(&c->bits[tid], bytes);
	if (ga_simd_fill(c->kind, narrow, c->in.sc, q, m, t, n, dlo, w, (int)cnt, &c->vs[tid], bits,
				hmn) < 0)
		return -1;
	mbits = (uint32_t)ga_simd_fill_maskbits(c->kind, narrow);
	step = mbits / (uint32_t)ga_simd_fill_lanes(c->kind, narrow);
	for (l = 0; l < cnt; l++) {
		size_t kk = k[l].k, pi = ga_at(&c->in, kk);
		const galign_pair_t *p = &c->in.pairs[pi];
		int32_t s = c->scores[pi];

		if (hmn[l] != s)
			return tb_badscore(p, hmn[l], s);
		sp_ga_walk(q[l], m[l], t[l], n[l], dlo[l], w, (const uint32_t *)(void *)bits, mbits,
				(uint32_t)l * step, c->runs + c->off[kk], (uint32_t)(c->off[kk + 1] - c->off[kk]),
				&c->res[kk]);
		if (tb_walked(c, kk, p, s) < 0)
			return -1;
	}
	return 0;
}

/*
 * Group G of the sorted pairs: one vector fill with 16-bit lanes where the
 * scores fit, else fills with 32-bit lanes (half as many pairs each), or one
 * pair at a time without vector code or for a lone pair.
 */
static int tb_group(void *vc, size_t g, int tid)
{
	tb_ctx *c = vc;
	size_t first = g * (size_t)c->lanes, cnt = c->lanes, l, half;
	const tb_key *k = c->keys + first;
	uint32_t mmax = 0, nmax = 0;

	if (first + cnt > c->npairs)
		cnt = c->npairs - first;
	if (c->lanes == 1 || cnt == 1)
		return tb_one(c, k[0].k, tid);
	for (l = 0; l < cnt; l++) {
		const galign_pair_t *p = &c->in.pairs[ga_at(&c->in, k[l].k)];
		if (p->q_len > mmax)
			mmax = p->q_len;
		if (p->t_len > nmax)
			nmax = p->t_len;
	}
	if (tb_narrow_ok(c->in.sc, mmax, nmax) && c->narrow)
		return tb_fill(c, k, cnt, 1, tid);
	half = (size_t)ga_simd_fill_lanes(c->kind, 0);
	for (l = 0; l < cnt; l += half) {
		size_t h = cnt - l < half ? cnt - l : half;
		if ((h == 1 ? tb_one(c, k[l].k, tid) : tb_fill(c, k + l, h, 0, tid)) < 0)
			return -1;
	}
	return 0;
}

int galign_trace_batch(const uint8_t *codes, const galign_pair_t *pairs, const uint32_t *idx,
		size_t n, const galign_scores_t *sc, const int32_t *scores, int n_threads,
		galign_res_t *res, uint32_t *runs, const uint64_t *off)
{
	tb_ctx c;
	tb_key *keys;
	size_t k;
	int rc, ma, mi, g;

	if (n == 0)
		return 0;
	c.in = (ga_batch_t){ codes, pairs, idx, sc };
	if (ga_batch_check(&c.in, n, &n_threads) < 0)
		return -1;
	ga_sc(sc, &ma, &mi, &g);
	keys = sp_malloc(n * sizeof *keys);
	for (k = 0; k < n; k++) {
		const galign_pair_t *p = &pairs[ga_at(&c.in, k)];

		sp_ga_band(p->q_len, p->t_len, ma, g, scores[ga_at(&c.in, k)], &keys[k].dlo, &keys[k].w);
		keys[k].m = p->q_len;
		keys[k].k = (uint32_t)k;
	}
	c.kind = galign_simd();
	c.narrow = atomic_load(&ga_fill16);
	c.lanes = c.kind == GALIGN_SIMD_OFF ? 1 : ga_simd_fill_lanes(c.kind, c.narrow);
	if (c.lanes > 1)
		qsort(keys, n, sizeof *keys, tb_cmp);
	c.scores = scores;
	c.res = res;
	c.runs = runs;
	c.off = off;
	c.keys = keys;
	c.npairs = n;
	c.rows = ga_scratch_new(n_threads);
	c.bits = ga_scratch_new(n_threads);
	c.vs = ga_scratch_new(n_threads);
	rc = sp_for(n_threads, (n + (size_t)c.lanes - 1) / (size_t)c.lanes, 1, tb_group, &c);
	ga_scratch_free_n(c.rows, n_threads);
	ga_scratch_free_n(c.bits, n_threads);
	ga_scratch_free_n(c.vs, n_threads);
	free(keys);
	return rc;
}

size_t galign_cigar_str(const galign_res_t *res, const uint32_t *runs, char *buf, size_t len)
{
	size_t o = 0;
	uint32_t r;

	if (len == 0)
		return 0;
	buf[0] = 0;
	/* by hand: snprintf a run made the write step the slowest of the pipeline */
	for (r = res->n_runs; r-- > 0;) {
		uint32_t op = runs[r] & 15u, v = runs[r] >> 4;
		char d[12];
		size_t nd = 0;

		do {
			d[nd++] = (char)('0' + v % 10u);
			v /= 10u;
		} while (v);
		if (nd + 2 > len - o)
			break;
		while (nd)
			buf[o++] = d[--nd];
		buf[o++] = op == SP_GA_OP_I ? 'I' : op == SP_GA_OP_D ? 'D' : op == SP_GA_OP_EQ ? '=' : 'X';
		buf[o] = 0;
	}
	return o;
}
