/*
 * align_avx512.c - the prefilter's vector passes (AVX-512 F, BW, DQ,
 * VPOPCNTDQ and BMI2; the layout is in align_pre.h): 8 windows a vector in
 * 64-bit lanes (two vectors interleaved), or 16 in 32-bit lanes for bands
 * of at most 32 diagonals, the same pass run on to give a first pass's
 * ends, and the windows of one read against the packed reference.  Built
 * on x86-64 only; used where align_pre_on() says so.
 */
#include "align_pre.h"

#ifdef ALIGN_PRE_X86
#include <immintrin.h>

#define PRE_TARGET __attribute__((target("avx512f,avx512bw,avx512dq,avx512vpopcntdq,bmi2")))

#define PRE_INLINE PRE_TARGET static inline __attribute__((always_inline))

/* The value of each 64-bit lane by its code (bit 0 in K0, bit 1 in K1): V0 .. V3. */
PRE_INLINE __m512i pick64(__mmask8 k0, __mmask8 k1, __m512i v0, __m512i v1, __m512i v2,
		__m512i v3)
{
	return _mm512_mask_blend_epi64(k1, _mm512_mask_blend_epi64(k0, v0, v1),
			_mm512_mask_blend_epi64(k0, v2, v3));
}

/* pick64() from the four code rows X[0..3] of a group word. */
PRE_INLINE __m512i pick64_rows(__mmask8 k0, __mmask8 k1, const uint64_t (*x)[PRE_LANES])
{
	return pick64(k0, k1, _mm512_loadu_si512(x[0]), _mm512_loadu_si512(x[1]),
			_mm512_loadu_si512(x[2]), _mm512_loadu_si512(x[3]));
}

/* The same for 32-bit lanes. */
PRE_INLINE __m512i pick32(__mmask16 k0, __mmask16 k1, __m512i v0, __m512i v1, __m512i v2,
		__m512i v3)
{
	return _mm512_mask_blend_epi32(k1, _mm512_mask_blend_epi32(k0, v0, v1),
			_mm512_mask_blend_epi32(k0, v2, v3));
}

PRE_INLINE __m512i pick32_rows(__mmask16 k0, __mmask16 k1, const uint32_t (*x)[2 * PRE_LANES])
{
	return pick32(k0, k1, _mm512_loadu_si512(x[0]), _mm512_loadu_si512(x[1]),
			_mm512_loadu_si512(x[2]), _mm512_loadu_si512(x[3]));
}

/*
 * One column of the banded bit-vector pass in lanes of W bits (64 or 32),
 * shared by pre_vec_k and pre_vec32_k: PV, MV (the vertical deltas) from
 * the column's match bits EQ; S follows the bottom row (KM >= W - 1: +1
 * in, h of bit W - 1) or is D[m][j] (h of row m's bit, the mask BK,
 * evaluated only then).  ONE and TOP: 1 and the top bit in every lane;
 * from column DMAX + 2 on, +1 enters at the band's top.
 */
#define PRE_COLUMN(W, eq, pv, mv, s, km, bk, j, dmax, one, top) do { \
	__m512i pvi_ = _mm512_or_si512(_mm512_srli_epi##W(pv, 1), top); \
	__m512i mvi_ = _mm512_srli_epi##W(mv, 1), xv_ = _mm512_or_si512(eq, mvi_); \
	__m512i xh_ = _mm512_add_epi##W(_mm512_and_si512(eq, pvi_), pvi_), ph_, mh_; \
	\
	xh_ = _mm512_ternarylogic_epi##W(xh_, pvi_, eq, 0xbe);      /* (xh ^ pvi) | eq */ \
	ph_ = _mm512_ternarylogic_epi##W(mvi_, xh_, pvi_, 0xf1);    /* mvi | ~(xh | pvi) */ \
	mh_ = _mm512_and_si512(pvi_, xh_); \
	if ((km) >= W - 1) { \
		s = _mm512_add_epi##W(s, _mm512_add_epi##W(one, _mm512_srli_epi##W(ph_, W - 1))); \
		s = _mm512_sub_epi##W(s, _mm512_srli_epi##W(mh_, W - 1)); \
	} else { \
		s = _mm512_mask_add_epi##W(s, _mm512_test_epi##W##_mask(ph_, bk), s, one); \
		s = _mm512_mask_sub_epi##W(s, _mm512_test_epi##W##_mask(mh_, bk), s, one); \
	} \
	ph_ = _mm512_slli_epi##W(ph_, 1); \
	if ((j) >= (dmax) + 2) \
		ph_ = _mm512_or_si512(ph_, one); \
	mh_ = _mm512_slli_epi##W(mh_, 1); \
	pv = _mm512_ternarylogic_epi##W(mh_, xv_, ph_, 0xf1);      /* mh | ~(xv | ph) */ \
	mv = _mm512_and_si512(ph_, xv_); \
} while (0)

/* pre_planes() for a packed window, with BMI2's bit extraction (lane L of G). */
PRE_TARGET static void pre_planes_pext(const uint8_t *win, uint64_t woff, uint32_t n,
		uint64_t *wl, uint64_t *wh, size_t st)
{
	const uint64_t ev = 0x5555555555555555ull, od = 0xaaaaaaaaaaaaaaaaull;
	uint64_t last = (woff + n - 1) >> 2;
	uint32_t b, nb = (n + 63) >> 6;

	for (b = 0; b < nb; b++) {
		uint64_t c0 = pk_load32(win, woff + 64 * b, last);
		uint64_t c1 = 64 * b + 32 < n ? pk_load32(win, woff + 64 * b + 32, last) : 0;
		wl[b * st] = _pext_u64(c0, ev) | _pext_u64(c1, ev) << 32;
		wh[b * st] = _pext_u64(c0, od) | _pext_u64(c1, od) << 32;
	}
}

/*
 * pre_scalar() on the 8 windows of each of the NU (1 or 2) groups of G at
 * once (one shape: N, M, DMAX; two groups interleaved hide the latency of
 * a column's chain): the mask of the windows with an end column within A,
 * group u's at bits 8u...  ASCII adds window N.
 */
PRE_TARGET static inline __attribute__((always_inline)) unsigned pre_vec_k(const pre_group_t *g,
		uint32_t m, uint32_t n, uint32_t dmax, unsigned a, const int ascii, const int nu)
{
	const __m512i one = _mm512_set1_epi64(1), top = _mm512_set1_epi64((long long)(1ull << 63));
	const __m512i av = _mm512_set1_epi64(a);
	uint64_t vmask = dmax + 1 < 64 ? (1ull << (dmax + 1)) - 1 : ~0ull;
	__m512i pv[2], mv[2], s[2];
	unsigned hit = 0, done = 0, all = nu == 2 ? 0xffff : 0xff;
	uint32_t j;
	int u;

	for (u = 0; u < nu; u++) {
		pv[u] = _mm512_set1_epi64((long long)(dmax + 1 < 64 ? ~0ull << (dmax + 1) : 0));
		mv[u] = _mm512_setzero_si512();
		s[u] = _mm512_set1_epi64(m < 63 - dmax ? m : 63 - dmax);
	}
	for (j = 1; j <= n; j++) {
		uint32_t b = (j - 1) >> 6, w = j >> 6, sh = j & 63, km = m + dmax - j;
		__m512i bit = _mm512_set1_epi64((long long)(1ull << ((j - 1) & 63)));
		__m128i cs = _mm_cvtsi32_si128((int)sh), cl = _mm_cvtsi32_si128(64 - (int)sh);
		__m512i bk = _mm512_set1_epi64((long long)(1ull << (km < 63 ? km : 63)));
		for (u = 0; u < nu; u++) {
			const pre_group_t *gu = &g[u];
			__mmask8 k0 = _mm512_test_epi64_mask(_mm512_loadu_si512(gu->wl[b]), bit);
			__mmask8 k1 = _mm512_test_epi64_mask(_mm512_loadu_si512(gu->wh[b]), bit);
			__m512i lo = pick64_rows(k0, k1, gu->x[w]), hi = pick64_rows(k0, k1, gu->x[w + 1]);
			__m512i eq = _mm512_or_si512(_mm512_srl_epi64(lo, cs), _mm512_sll_epi64(hi, cl));
			if (ascii) {
				__mmask8 kn = _mm512_test_epi64_mask(_mm512_loadu_si512(gu->wn[b]), bit);
				eq = _mm512_mask_mov_epi64(eq, kn,
						_mm512_set1_epi64((long long)(j <= dmax ? vmask >> j : 0)));
			}
			PRE_COLUMN(64, eq, pv[u], mv[u], s[u], km, bk, j, dmax, one, top);
		}
		if (km <= 63) {
			unsigned h = 0;
			for (u = 0; u < nu; u++)
				h |= (unsigned)_mm512_cmple_epi64_mask(s[u], av) << (8 * u);
			if (h) {
				hit |= h;
				done |= h;
				if (done == all)
					break;
			}
		}
		if ((j & 3) == 0 && j < n && j + a > dmax) {
			uint32_t ks = km < 63 ? km : 63, kh = km < dmax + a ? km : dmax + a;
			__m512i r1 = _mm512_set1_epi64((long long)bit_range(a + 1, ks));
			__m512i r2 = _mm512_set1_epi64((long long)bit_range(kh + 1, ks));
			for (u = 0; u < nu; u++) {
				__m512i lb = _mm512_sub_epi64(s[u],
						_mm512_popcnt_epi64(_mm512_and_si512(pv[u], r1)));
				lb = _mm512_add_epi64(lb, _mm512_popcnt_epi64(_mm512_and_si512(mv[u], r2)));
				done |= (unsigned)_mm512_cmpgt_epi64_mask(lb, av) << (8 * u);
			}
			if (done == all)
				break;
		}
	}
	return hit;
}

/*
 * pre_vec_k() with 32-bit lanes, 16 windows, for bands of at most 32
 * diagonals (extend's usual n = m + 2A with A <= 7): the same pass with 32
 * in place of 64 (bit 31 the bottom row).
 */
PRE_TARGET static inline __attribute__((always_inline)) unsigned pre_vec32_k(
		const pre_group32_t *g, uint32_t m, uint32_t n, uint32_t dmax, unsigned a,
		const int ascii, uint8_t *const *rows, const uint32_t (*eqc)[4],
		const uint32_t (*cw)[2 * PRE_LANES])
{
	const __m512i one = _mm512_set1_epi32(1), top = _mm512_set1_epi32((int)(1u << 31));
	const __m512i av = _mm512_set1_epi32((int)a);
	uint32_t vmask = dmax + 1 < 32 ? (1u << (dmax + 1)) - 1 : ~0u;
	__m512i pv = _mm512_set1_epi32((int)(dmax + 1 < 32 ? ~0u << (dmax + 1) : 0));
	__m512i mv = _mm512_setzero_si512();
	__m512i s = _mm512_set1_epi32((int)(m < 31 - dmax ? m : 31 - dmax));
	unsigned hit = 0, done = 0;
	uint32_t j;

	for (j = 1; j <= n; j++) {
		uint32_t b = (j - 1) >> 5, w = j >> 5, sh = j & 31, km = m + dmax - j;
		__m512i bit = _mm512_set1_epi32((int)(1u << ((j - 1) & 31)));
		__m128i cs = _mm_cvtsi32_si128((int)sh), cl = _mm_cvtsi32_si128(32 - (int)sh);
		__mmask16 k0, k1;
		__m512i eq;
		if (cw) {         /* 2-bit codes, 16 bases a word: base j-1's two bits */
			__m512i c = _mm512_loadu_si512(cw[(j - 1) >> 4]);
			unsigned t = 2 * ((j - 1) & 15);
			k0 = _mm512_test_epi32_mask(c, _mm512_set1_epi32((int)(1u << t)));
			k1 = _mm512_test_epi32_mask(c, _mm512_set1_epi32((int)(2u << t)));
		} else {
			k0 = _mm512_test_epi32_mask(_mm512_loadu_si512(g->wl[b]), bit);
			k1 = _mm512_test_epi32_mask(_mm512_loadu_si512(g->wh[b]), bit);
		}
		if (eqc) {        /* one read in every lane: column j's match bits of each code */
			eq = pick32(k0, k1, _mm512_set1_epi32((int)eqc[j][0]),
					_mm512_set1_epi32((int)eqc[j][1]), _mm512_set1_epi32((int)eqc[j][2]),
					_mm512_set1_epi32((int)eqc[j][3]));
		} else {
			__m512i lo = pick32_rows(k0, k1, g->x[w]), hi = pick32_rows(k0, k1, g->x[w + 1]);
			eq = _mm512_or_si512(_mm512_srl_epi32(lo, cs), _mm512_sll_epi32(hi, cl));
		}
		if (ascii) {
			__mmask16 kn = _mm512_test_epi32_mask(_mm512_loadu_si512(g->wn[b]), bit);
			eq = _mm512_mask_mov_epi32(eq, kn,
					_mm512_set1_epi32((int)(j <= dmax ? vmask >> j : 0)));
		}
		PRE_COLUMN(32, eq, pv, mv, s, km, _mm512_set1_epi32((int)(1u << km)), j, dmax, one, top);
		if (km <= 31) {
			unsigned h = _mm512_cmple_epi32_mask(s, av);
			if (h) {
				hit |= h;
				if (rows) {       /* the ends: S = D[m][j], exact where <= A */
					uint32_t sv[2 * PRE_LANES];
					_mm512_storeu_si512(sv, s);
					do {
						unsigned l = (unsigned)__builtin_ctz(h);
						rows[l][j - 1] = (uint8_t)sv[l];
						h &= h - 1;
					} while (h);
				} else {
					done |= h;
					if (done == 0xffff)
						break;
				}
			}
		}
		if ((j & 3) == 0 && j < n && j + a > dmax) {
			uint32_t ks = km < 31 ? km : 31, kh = km < dmax + a ? km : dmax + a;
			__m512i lb = _mm512_sub_epi32(s, _mm512_popcnt_epi32(_mm512_and_si512(pv,
							_mm512_set1_epi32((int)bit_range(a + 1, ks)))));
			lb = _mm512_add_epi32(lb, _mm512_popcnt_epi32(_mm512_and_si512(mv,
							_mm512_set1_epi32((int)bit_range(kh + 1, ks)))));
			done |= _mm512_cmpgt_epi32_mask(lb, av);
			if (done == 0xffff)
				break;
		}
	}
	return hit;
}

PRE_TARGET __attribute__((noinline)) static unsigned pre_vec32(const pre_group32_t *g,
		uint32_t m, uint32_t n, uint32_t dmax, unsigned a, unsigned packed)
{
	return packed ? pre_vec32_k(g, m, n, dmax, a, 0, NULL, NULL, NULL)
		: pre_vec32_k(g, m, n, dmax, a, 1, NULL, NULL, NULL);
}

/*
 * pre_vec32() on windows of one read, whose match bits per column are EQC,
 * given as their 2-bit codes CW (word w of lane l: bases 16w.. of window l).
 */
PRE_TARGET __attribute__((noinline)) static unsigned pre_vec32_one(const uint32_t (*eqc)[4],
		const uint32_t (*cw)[2 * PRE_LANES], uint32_t m, uint32_t n, uint32_t dmax, unsigned a)
{
	return pre_vec32_k(NULL, m, n, dmax, a, 0, NULL, eqc, cw);
}

/*
 * The same pass run on until every window's band is dead, writing each
 * end column within A of lane l into ROWS[l] (D[m][j] at ROWS[l][j-1];
 * the rows hold ALIGN_END_NONE elsewhere beforehand): the core's ENDS.
 */
PRE_TARGET __attribute__((noinline)) static void pre_vec32_ends(const pre_group32_t *g,
		uint32_t m, uint32_t n, uint32_t dmax, unsigned a, unsigned packed,
		uint8_t *const *rows)
{
	if (packed)
		pre_vec32_k(g, m, n, dmax, a, 0, rows, NULL, NULL);
	else
		pre_vec32_k(g, m, n, dmax, a, 1, rows, NULL, NULL);
}

PRE_TARGET __attribute__((noinline)) static unsigned pre_vec_packed(const pre_group_t *g,
		uint32_t m, uint32_t n, uint32_t dmax, unsigned a, int nu)
{
	return nu == 2 ? pre_vec_k(g, m, n, dmax, a, 0, 2) : pre_vec_k(g, m, n, dmax, a, 0, 1);
}

PRE_TARGET __attribute__((noinline)) static unsigned pre_vec_ascii(const pre_group_t *g,
		uint32_t m, uint32_t n, uint32_t dmax, unsigned a, int nu)
{
	return nu == 2 ? pre_vec_k(g, m, n, dmax, a, 1, 2) : pre_vec_k(g, m, n, dmax, a, 1, 1);
}

/* Lane L of G (32-bit lanes): pair Q's X_c for DMAX and its window's planes. */
PRE_TARGET static void pre_lane32(pre_ws_t *w, pre_group32_t *g, uint32_t l,
		const uint8_t *reads, const uint8_t *wins, const align_pair_t *q, uint32_t n,
		uint32_t dmax, unsigned packed)
{
	uint64_t wl[PRE_WB], wh[PRE_WB], wn[PRE_WB];
	uint32_t c, x;

	pre_read(w, reads, q, dmax);
	for (x = 0; x < (n >> 5) + 2; x++)
		for (c = 0; c < 4; c++)
			g->x[x][c][l] = (uint32_t)(w->x[c][x >> 1] >> (32 * (x & 1)));
	if (packed)
		pre_planes_pext(wins, q->win_off, n, wl, wh, 1);
	else
		pre_planes(wins, q->win_off, n, packed, wl, wh, wn, 1);
	for (x = 0; x < (n + 31) >> 5; x++) {
		g->wl[x][l] = (uint32_t)(wl[x >> 1] >> (32 * (x & 1)));
		g->wh[x][l] = (uint32_t)(wh[x >> 1] >> (32 * (x & 1)));
		g->wn[x][l] = packed ? 0 : (uint32_t)(wn[x >> 1] >> (32 * (x & 1)));
	}
}

/* The core's output for a chunk's windows from the banded pass run on (align_pre.h). */
PRE_TARGET void align_pre_ends_chunk(pre_ws_t *w, const uint8_t *reads, const uint8_t *wins,
		const align_pair_t *pairs, size_t lo, size_t hi, unsigned a, unsigned flags,
		uint8_t *yes, uint8_t *ends, size_t stride, align_res_t *res)
{
	unsigned packed = (flags & ALIGN_PACKED) != 0;
	size_t k, ne = 0, i;
	uint8_t *rows[2 * PRE_LANES];

	for (k = lo; k < hi; k++) {
		const align_pair_t *p = &pairs[k];
		if (yes[k - lo] == 1 && p->end_hi == 0 && p->win_len - p->read_len + 2 * a + 1 <= 32)
			w->key[ne++] = (uint64_t)p->win_len << 40 | (uint64_t)p->read_len << 16 | (k - lo);
	}
	for (i = 1; i < ne && w->key[i - 1] >> 16 <= w->key[i] >> 16; i++)
		;
	if (i < ne)
		qsort(w->key, ne, sizeof *w->key, key_cmp);
	for (i = 0; i < ne;) {
		const align_pair_t *p = &pairs[lo + (w->key[i] & 0xffff)];
		uint32_t m = p->read_len, n = p->win_len, dmax = n - m + a, l, nl;
		pre_group32_t *g = &w->g32;

		for (nl = 0; nl < 2 * PRE_LANES && i + nl < ne && w->key[i + nl] >> 16 == w->key[i] >> 16;
				nl++)
			;
		for (l = 0; l < 2 * PRE_LANES; l++) {
			const align_pair_t *q = &pairs[lo + (w->key[i + (l < nl ? l : nl - 1)] & 0xffff)];
			pre_lane32(w, g, l, reads, wins, q, n, dmax, packed);
			rows[l] = l < nl ? ends + (lo + (w->key[i + l] & 0xffff)) * stride : w->spare;
			if (l < nl)
				memset(rows[l], ALIGN_END_NONE, stride);
		}
		pre_vec32_ends(g, m, n, dmax, a, packed, rows);
		for (l = 0; l < nl; l++) {
			size_t kk = lo + (w->key[i + l] & 0xffff);
			align_res_t *r = &res[kk];
			uint32_t j, best_j = 0, n_ends = 0;
			unsigned best = a + 1;
			for (j = 0; j < n; j++) {
				if (rows[l][j] == ALIGN_END_NONE)
					continue;
				n_ends++;
				if (rows[l][j] < best) {
					best = rows[l][j];
					best_j = j;
				}
			}
			sp_align_clear(r, ALIGN_NOHIT);
			if (best <= a) {
				r->dist = (int)best;
				r->n_ends = n_ends;
				r->end = best_j;
			}
			yes[kk - lo] = 3;
		}
		i += nl;
	}
}

size_t align_pre_group_simd(pre_ws_t *w, const uint8_t *reads, const uint8_t *wins,
		const align_pair_t *pairs, size_t lo, size_t i, size_t ne, unsigned a,
		unsigned packed, uint8_t *yes)
{
	const align_pair_t *p = &pairs[lo + (w->key[i] & 0xffff)];
	uint32_t m = p->read_len, n = p->win_len, dmax = n - m + a;
	uint32_t l, nl;

	for (nl = 0; nl < 2 * PRE_LANES && i + nl < ne && w->key[i + nl] >> 16 == w->key[i] >> 16;
			nl++)
		;
	if (dmax + a + 1 <= 32 && nl > PRE_LANES) {   /* 16 windows of 32-bit bands */
		pre_group32_t *g = &w->g32;
		unsigned h;
		for (l = 0; l < 2 * PRE_LANES; l++) {
			const align_pair_t *q = &pairs[lo + (w->key[i + (l < nl ? l : nl - 1)] & 0xffff)];
			if (i + l + PRE_AHEAD < ne)
				prefetch_pair(wins, &pairs[lo + (w->key[i + l + PRE_AHEAD] & 0xffff)],
						packed);
			pre_lane32(w, g, l, reads, wins, q, n, dmax, packed);
		}
		h = pre_vec32(g, m, n, dmax, a, packed);
		for (l = 0; l < nl; l++)
			yes[w->key[i + l] & 0xffff] = (uint8_t)((h >> l) & 1);
		return nl;
	}
	for (l = 0; l < (nl > PRE_LANES ? 2 * PRE_LANES : PRE_LANES); l++) {
		const align_pair_t *q = &pairs[lo + (w->key[i + (l < nl ? l : nl - 1)] & 0xffff)];
		pre_group_t *g = &w->g[l / PRE_LANES];
		uint32_t c, x, ln = l % PRE_LANES;
		if (i + l + PRE_AHEAD < ne)
			prefetch_pair(wins, &pairs[lo + (w->key[i + l + PRE_AHEAD] & 0xffff)], packed);
		pre_read(w, reads, q, dmax);
		for (x = 0; x < (n >> 6) + 2; x++)
			for (c = 0; c < 4; c++)
				g->x[x][c][ln] = w->x[c][x];
		if (packed)   /* (wn is not read) */
			pre_planes_pext(wins, q->win_off, n, &g->wl[0][ln], &g->wh[0][ln], PRE_LANES);
		else
			pre_planes(wins, q->win_off, n, packed, &g->wl[0][ln], &g->wh[0][ln],
					&g->wn[0][ln], PRE_LANES);
	}
	{
		int nu = nl > PRE_LANES ? 2 : 1;
		unsigned h = packed ? pre_vec_packed(w->g, m, n, dmax, a, nu)
			: pre_vec_ascii(w->g, m, n, dmax, a, nu);
		for (l = 0; l < nl; l++)
			yes[w->key[i + l] & 0xffff] = (uint8_t)((h >> l) & 1);
	}
	return nl;
}

void align_pre_read_simd(align_pre_ws_t *ws, const uint8_t *read, uint32_t m,
		const uint8_t *pack, const uint64_t *off, size_t n, uint32_t nn, unsigned max_a,
		uint8_t *yes)
{
	pre_ws_t *w = &ws->w;
	uint32_t dmax = nn - m + max_a;
	size_t i, k;

	{
		/* every lane holds this read: the band's match bits of each code at
		 * each column (a funnel shift of X_c) once for all its windows */
		align_pair_t p;
		uint32_t j, c;
		memset(&p, 0, sizeof p);
		p.read_len = m;
		w->have = 0;
		pre_read(w, read, &p, dmax);
		for (c = 0; c < 4; c++) {
			const uint64_t *xc = w->x[c];
			for (j = 1; j <= nn; j++) {
				uint64_t lo = xc[j >> 6], hi = xc[(j >> 6) + 1];
				unsigned sh = j & 63;
				ws->eqc[j][c] = (uint32_t)(sh ? lo >> sh | hi << (64 - sh) : lo);
			}
		}
	}
	for (i = 0; i < n && i < PRE_AHEAD; i++)
		prefetch_range(pack + (off[i] >> 2), ((off[i] + nn - 1) >> 2) - (off[i] >> 2) + 1);
	for (i = 0; i < n; i += 2 * PRE_LANES) {
		size_t nl = n - i < 2 * PRE_LANES ? n - i : 2 * PRE_LANES;
		unsigned h;
		for (k = 0; k < 2 * PRE_LANES; k++) {
			uint64_t o = off[i + (k < nl ? k : nl - 1)], last = (o + nn - 1) >> 2;
			uint32_t x;
			if (i + k + PRE_AHEAD < n) {
				uint64_t q = off[i + k + PRE_AHEAD];
				prefetch_range(pack + (q >> 2), ((q + nn - 1) >> 2) - (q >> 2) + 1);
			}
			for (x = 0; 16 * x < nn; x += 2) {
				uint64_t c = pk_load32(pack, o + 16 * x, last);
				ws->cw[x][k] = (uint32_t)c;
				ws->cw[x + 1][k] = (uint32_t)(c >> 32);
			}
		}
		h = pre_vec32_one((const uint32_t (*)[4])ws->eqc,
				(const uint32_t (*)[2 * PRE_LANES])ws->cw, m, nn, dmax, max_a);
		for (k = 0; k < nl; k++)
			yes[i + k] = (uint8_t)((h >> k) & 1);
	}
}
#endif
