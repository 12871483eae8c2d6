/*
 * align.c - the CPU side of the alignment core (align.h): limit checks,
 * one pair, and batches split over threads.  The algorithm itself is
 * kernels/inc_align.h, shared with kernels/align.cl.
 *
 * Threads take fixed chunks of pairs from a shared counter; every pair's
 * result depends on that pair only, so the output does not depend on the
 * number of threads or the order in which chunks are taken.
 *
 * Gapped chunks with ALIGN_ENDS (extend's first pass, where ~96% of the
 * windows hold no end within A) first go through an exact prefilter, a
 * banded bit-vector pass over 8 or 16 windows at a time with AVX-512 (see
 * "the prefilter" below); only the windows it cannot rule out reach the
 * core, and the others get the output the core gives them.
 */
#include "align.h"
#include "util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>   /* the prefilter's vector pass */
#endif

#define ALIGN_CHUNK 256   /* pairs a thread takes at a time */
#define ALIGN_AHEAD 16    /* pairs between a window's prefetch and its use */

int align_check(const align_pair_t *pairs, size_t n, unsigned max_a, unsigned flags,
		size_t ends_stride, char *msg, size_t msg_len)
{
	size_t k;

	if (max_a > ALIGN_MAX_A) {
		snprintf(msg, msg_len, "%u edit operations are more than the alignment supports (at most %d)",
				max_a, ALIGN_MAX_A);
		return -1;
	}
	for (k = 0; k < n; k++) {
		const align_pair_t *p = &pairs[k];
		if (p->read_len == 0 || p->read_len > ALIGN_MAX_READ) {
			snprintf(msg, msg_len, "read of pair %zu has %u bases (1 to %d supported)", k,
					p->read_len, ALIGN_MAX_READ);
			return -1;
		}
		if (p->win_len > ALIGN_MAX_WIN) {
			snprintf(msg, msg_len, "window of pair %zu has %u bases (at most %d supported)", k,
					p->win_len, ALIGN_MAX_WIN);
			return -1;
		}
		if ((flags & ALIGN_ENDS) && p->win_len > ends_stride) {
			snprintf(msg, msg_len, "window of pair %zu has %u bases, more than the ends stride %zu",
					k, p->win_len, ends_stride);
			return -1;
		}
	}
	return 0;
}

void align_one(const uint8_t *read, uint32_t m, const uint8_t *win, uint64_t win_off, uint32_t n,
		unsigned max_a, unsigned flags, uint32_t end_lo, uint32_t end_hi, uint64_t *ws,
		uint8_t *ends, align_res_t *res)
{
	sp_align_one(read, m, win, win_off, n, max_a, flags, end_lo, end_hi, ws, 1, ends, res);
}

/*
 * Prefetch the cache line of P.  On x86-64 an asm statement: GCC 12 at -O2
 * drops a __builtin_prefetch here (its mod-ref analysis sees no use).
 */
static inline void prefetch(const void *p)
{
#if defined(__GNUC__) && defined(__x86_64__)
	__asm__ volatile("prefetcht0 %0" : : "m"(*(const char *)p));
#else
	__builtin_prefetch(p);
#endif
}

/* Prefetch the LEN (>= 1) bytes at P, at most 256 of them. */
static inline void prefetch_range(const uint8_t *p, size_t len)
{
	size_t o;

	for (o = 0; o < len && o < 256; o += 64)
		prefetch(p + o);
	prefetch(p + (len - 1 < 256 ? len - 1 : 256));
}

/* --- the prefilter ------------------------------------------------------------
 *
 * A gapped pass-1 pair (ALIGN_ENDS) asks for the end columns within A; most
 * windows have none, and for those the core's output is fixed (no hit,
 * every end ALIGN_END_NONE).  The prefilter decides which windows have one,
 * exactly, and only those go to the core.
 *
 * Band.  An alignment of the read (m rows) within A edits that ends in the
 * window (n columns) starts on a diagonal d = column - row >= 0 and strays
 * at most A from it, and ends on one <= n - m, so it lies within diagonals
 * -A .. DMAX = n - m + A.  The DP restricted to 64 diagonals DMAX - 63 ..
 * DMAX (all of them when DMAX + A + 1 <= 64; the extra ones below do no
 * harm) is one word per column (Hyyro's banded Myers): bit k of column j is
 * row r_t + k, r_t = j - DMAX, so the band slides down a row per column.
 * Cells outside the band are replaced by path costs (the row below the
 * band by +1 from its upper neighbour, the cell above the top by +1 from
 * its left neighbour), so every value is the cost of a real alignment, at
 * least the true one, and at most the band-restricted one: exact where
 * the true value is <= A.  Rows <= 0 are virtual rows of value 0 that match
 * every base (the free start), so the top needs no special case but its
 * horizontal input: 0 while r_t <= 1 (row 0 is 0), else +1.
 *
 * Match bits.  For code c the extended read X_c has bit t = row + DMAX:
 *
 *     t:     0 .. DMAX          DMAX+1 .. DMAX+m        DMAX+m+1 ..
 *     X_c:   1 (rows <= 0)      read base (row - 1) == c 0 (past the read)
 *
 * so column j's match bits are bits j .. j + 63 of X_c (a funnel shift of
 * two words), the read's N matching nothing as in sp_align_peq; a window N
 * (ASCII windows only) matches only the virtual rows.
 *
 * Score.  S follows row min(m, bottom row): while the bottom row r_t + 63
 * is at most m, S += 1 + h(bit 63) (the bottom cell came in as +1 from the
 * one above it); after that S = D[m][j] += h(bit m - r_t).  Each column
 * where row m is in the band with S <= A is an end within A: the answer is
 * yes.  Every 4 columns a lower bound on the band column between rows c =
 * m - (n - j) and min(m, j + A) (sp_align_dead's rows: an end after column
 * j passes one of them within A) stops the window when it exceeds A:
 * D[kh] - #(+1 of rows c+1..kh), with D[kh] from S by the deltas between.
 *
 * Vectors (AVX-512).  A chunk's eligible pairs are grouped by shape (n, m;
 * extend's are nearly all n = m + 2A), so every column's shifts, masks and
 * phase are the same in all lanes.  Bands of at most 32 diagonals (A <= 7
 * for that shape) run 16 windows a vector in 32-bit lanes (the same pass
 * with 32 for 64); wider ones 8 a vector in 64-bit lanes, two vectors
 * interleaved.  A vector runs until each of its windows has an end within
 * A or is stopped; the last one of a shape is filled with copies.  Pairs
 * the prefilter does not take (NOGAPS, no ENDS, bands over 64 diagonals)
 * and the windows it finds an end in go to the core unchanged.
 */

#define PRE_XW 18     /* words of X_c: (n >> 6) + 2, n <= m + 63 - 2A <= 1087 */
#define PRE_WB 17     /* 64-column blocks of a window */
#define PRE_LANES 8   /* windows of a vector */
#define PRE_AHEAD 24  /* windows between a window's prefetch and its pass */
#define PRE_CW 70     /* 16-base code words of a window (align_pre_read): n <= 1087, even */

/* A group of 8 windows of one shape (n, m, DMAX) for the vector pass. */
typedef struct {
	uint64_t x[PRE_XW][4][PRE_LANES];   /* X_c word w of each lane */
	uint64_t wl[PRE_WB][PRE_LANES];     /* window base codes, bit 0 (column j: bit j-1) */
	uint64_t wh[PRE_WB][PRE_LANES];     /* bit 1 */
	uint64_t wn[PRE_WB][PRE_LANES];     /* N (ASCII windows) */
} pre_group_t;

/* 16 windows of one shape with a band of at most 32 diagonals: 32-bit lanes. */
typedef struct {
	uint32_t x[2 * PRE_XW][4][2 * PRE_LANES];
	uint32_t wl[2 * PRE_WB][2 * PRE_LANES];
	uint32_t wh[2 * PRE_WB][2 * PRE_LANES];
	uint32_t wn[2 * PRE_WB][2 * PRE_LANES];
} pre_group32_t;

/* A thread's prefilter state: the last read's X_c, and a group. */
typedef struct {
	uint64_t read_off;
	uint32_t m, dmax;
	int have;
	uint64_t x[4][PRE_XW];
	uint64_t peq[5][SP_ALIGN_WORDS];
	uint64_t key[ALIGN_CHUNK];          /* shape and index of the chunk's pairs */
	uint64_t tmp[ALIGN_CHUNK];
	pre_group_t g[2];
	pre_group32_t g32;
	uint8_t spare[ALIGN_MAX_WIN];       /* the ends of pre_ends_chunk's filler lanes */
} pre_ws_t;

static int pre_mode = ALIGN_PRE_AUTO;

int align_set_prefilter(int mode)
{
	int old = pre_mode;

	pre_mode = mode;
	return old;
}

#if defined(__x86_64__) && defined(__GNUC__)
static int pre_cpu, pre_env;
static pthread_once_t pre_once = PTHREAD_ONCE_INIT;

static void pre_init(void)
{
	pre_cpu = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
		&& __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vpopcntdq")
		&& __builtin_cpu_supports("bmi2");
	pre_env = !sp_simd_allowed();
}
#endif

/*
 * Whether this batch's prefilter uses the vector pass.  Where it does not,
 * ALIGN_PRE_AUTO leaves every pair to the core: the scalar banded pass is
 * slower than the core (its column chain is as long, and it adds the
 * window's decoding), so it only serves as ALIGN_PRE_SCALAR, the
 * reference the tests check the vector pass against.
 */
static int pre_simd(int mode)
{
#if defined(__x86_64__) && defined(__GNUC__)
	pthread_once(&pre_once, pre_init);
	return pre_cpu && (mode == ALIGN_PRE_SIMD || (mode == ALIGN_PRE_AUTO && !pre_env));
#else
	(void)mode;
	return 0;
#endif
}

/* X_c (words 0 .. NXW) of the read with match bits PEQ (M bases) for DMAX. */
static void pre_build_x(const uint64_t peq[5][SP_ALIGN_WORDS], uint32_t m, uint32_t dmax,
		uint32_t nxw, uint64_t x[4][PRE_XW])
{
	uint32_t c, w, nw = (m + 63) >> 6, sh = dmax + 1;   /* 1 .. 64 */

	for (c = 0; c < 4; c++) {
		for (w = 0; w < nxw; w++) {
			uint64_t cur = w < nw ? peq[c][w] : 0, prev = w && w - 1 < nw ? peq[c][w - 1] : 0;
			x[c][w] = sh == 64 ? prev : cur << sh | (w ? prev >> (64 - sh) : 0);
		}
		x[c][0] |= sh == 64 ? ~0ull : (1ull << sh) - 1;
	}
}

/* The even bits of X (bits 0, 2, .., 62) as bits 0 .. 31. */
static inline uint64_t even_bits(uint64_t x)
{
	x &= 0x5555555555555555ull;
	x = (x | x >> 1) & 0x3333333333333333ull;
	x = (x | x >> 2) & 0x0f0f0f0f0f0f0f0full;
	x = (x | x >> 4) & 0x00ff00ff00ff00ffull;
	x = (x | x >> 8) & 0x0000ffff0000ffffull;
	return (x | x >> 16) & 0xffffffffull;
}

/* The 32 packed bases from base POS of WIN (2 bits each), no byte past LAST read. */
static inline uint64_t pk_load32(const uint8_t *win, uint64_t pos, uint64_t last)
{
	uint64_t q = pos >> 2, w = 0, hi = 0;
	unsigned sh = (unsigned)(pos & 3) * 2, i;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (q + 8 <= last) {
		memcpy(&w, win + q, 8);
		hi = win[q + 8];
	} else
#endif
	{
		for (i = 0; i < 8 && q + i <= last; i++)
			w |= (uint64_t)win[q + i] << (8 * i);
		if (q + 8 <= last)
			hi = win[q + 8];
	}
	return sh ? w >> sh | hi << (64 - sh) : w;
}

/* The code planes of the N-base window at WOFF of WIN (columns 1..N: bits 0..N-1). */
static void pre_planes(const uint8_t *win, uint64_t woff, uint32_t n, unsigned packed,
		uint64_t *wl, uint64_t *wh, uint64_t *wn, size_t st)
{
	uint32_t b, k, nb = (n + 63) >> 6;

	if (packed) {
		uint64_t last = (woff + n - 1) >> 2;
		for (b = 0; b < nb; b++) {
			uint64_t c0 = pk_load32(win, woff + 64 * b, last);
			uint64_t c1 = 64 * b + 32 < n ? pk_load32(win, woff + 64 * b + 32, last) : 0;
			wl[b * st] = even_bits(c0) | even_bits(c1) << 32;
			wh[b * st] = even_bits(c0 >> 1) | even_bits(c1 >> 1) << 32;
			wn[b * st] = 0;
		}
		return;
	}
	for (b = 0; b < nb; b++) {
		uint64_t l = 0, h = 0, nn = 0;
		for (k = 64 * b; k < n && k < 64 * b + 64; k++) {
			uint64_t c = sp_nt4_codes[win[woff + k]], bit = 1ull << (k & 63);
			if (c > 3)
				nn |= bit;
			else {
				l |= (c & 1) ? bit : 0;
				h |= (c & 2) ? bit : 0;
			}
		}
		wl[b * st] = l;
		wh[b * st] = h;
		wn[b * st] = nn;
	}
}

/* Bits LO..HI (HI <= 63) set; 0 when LO > HI. */
static inline uint64_t bit_range(uint32_t lo, uint32_t hi)
{
	return lo > hi ? 0 : (~0ull >> (63 - hi)) & (~0ull << lo);
}

/* The banded pass of one window (layout above): 1 when an end column is within A. */
static int pre_scalar(const uint64_t x[4][PRE_XW], const uint64_t *wl, const uint64_t *wh,
		const uint64_t *wn, uint32_t m, uint32_t n, uint32_t dmax, unsigned a)
{
	uint64_t pv = dmax + 1 < 64 ? ~0ull << (dmax + 1) : 0, mv = 0;
	uint64_t vmask = dmax + 1 < 64 ? (1ull << (dmax + 1)) - 1 : ~0ull;
	int64_t s = m < 63 - dmax ? m : 63 - dmax;
	uint32_t j;

	for (j = 1; j <= n; j++) {
		uint32_t b = (j - 1) >> 6, w = j >> 6, sh = j & 63, km = m + dmax - j;
		uint64_t bit = 1ull << ((j - 1) & 63), eq, pvi, mvi, xv, xh, ph, mh;
		if (wn[b] & bit) {
			eq = j <= dmax ? vmask >> j : 0;
		} else {
			unsigned c = ((wl[b] & bit) != 0) | ((wh[b] & bit) != 0) << 1;
			eq = x[c][w] >> sh | (sh ? x[c][w + 1] << (64 - sh) : 0);
		}
		pvi = pv >> 1 | 1ull << 63;
		mvi = mv >> 1;
		xv = eq | mvi;
		xh = (((eq & pvi) + pvi) ^ pvi) | eq;
		ph = mvi | ~(xh | pvi);
		mh = pvi & xh;
		if (km >= 63)
			s += 1 + (int64_t)(ph >> 63) - (int64_t)(mh >> 63);
		else
			s += (int64_t)((ph >> km) & 1) - (int64_t)((mh >> km) & 1);
		ph = ph << 1 | (j >= dmax + 2);
		mh <<= 1;
		pv = mh | ~(xv | ph);
		mv = ph & xv;
		if (km <= 63 && s <= (int64_t)a)
			return 1;
		if ((j & 3) == 0 && j < n && j + a > dmax) {
			uint32_t ks = km < 63 ? km : 63, kh = km < dmax + a ? km : dmax + a;
			int64_t lb = s - sp_align_popc(pv & bit_range(a + 1, ks))
				+ sp_align_popc(mv & bit_range(kh + 1, ks));
			if (lb > (int64_t)a)
				return 0;
		}
	}
	return 0;
}

#if defined(__x86_64__) && defined(__GNUC__)
#define PRE_TARGET __attribute__((target("avx512f,avx512bw,avx512dq,avx512vpopcntdq,bmi2")))

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
			__m512i lo = _mm512_mask_blend_epi64(k1,
					_mm512_mask_blend_epi64(k0, _mm512_loadu_si512(gu->x[w][0]),
						_mm512_loadu_si512(gu->x[w][1])),
					_mm512_mask_blend_epi64(k0, _mm512_loadu_si512(gu->x[w][2]),
						_mm512_loadu_si512(gu->x[w][3])));
			__m512i hi = _mm512_mask_blend_epi64(k1,
					_mm512_mask_blend_epi64(k0, _mm512_loadu_si512(gu->x[w + 1][0]),
						_mm512_loadu_si512(gu->x[w + 1][1])),
					_mm512_mask_blend_epi64(k0, _mm512_loadu_si512(gu->x[w + 1][2]),
						_mm512_loadu_si512(gu->x[w + 1][3])));
			__m512i eq = _mm512_or_si512(_mm512_srl_epi64(lo, cs), _mm512_sll_epi64(hi, cl));
			__m512i pvi, mvi, xv, xh, ph, mh;
			if (ascii) {
				__mmask8 kn = _mm512_test_epi64_mask(_mm512_loadu_si512(gu->wn[b]), bit);
				eq = _mm512_mask_mov_epi64(eq, kn,
						_mm512_set1_epi64((long long)(j <= dmax ? vmask >> j : 0)));
			}
			pvi = _mm512_or_si512(_mm512_srli_epi64(pv[u], 1), top);
			mvi = _mm512_srli_epi64(mv[u], 1);
			xv = _mm512_or_si512(eq, mvi);
			xh = _mm512_add_epi64(_mm512_and_si512(eq, pvi), pvi);
			xh = _mm512_ternarylogic_epi64(xh, pvi, eq, 0xbe);      /* (xh ^ pvi) | eq */
			ph = _mm512_ternarylogic_epi64(mvi, xh, pvi, 0xf1);     /* mvi | ~(xh | pvi) */
			mh = _mm512_and_si512(pvi, xh);
			if (km >= 63) {   /* S follows the bottom row: +1 in, h of bit 63 */
				s[u] = _mm512_add_epi64(s[u], _mm512_add_epi64(one, _mm512_srli_epi64(ph, 63)));
				s[u] = _mm512_sub_epi64(s[u], _mm512_srli_epi64(mh, 63));
			} else {          /* S = D[m][j]: h of row m's bit */
				s[u] = _mm512_mask_add_epi64(s[u], _mm512_test_epi64_mask(ph, bk), s[u], one);
				s[u] = _mm512_mask_sub_epi64(s[u], _mm512_test_epi64_mask(mh, bk), s[u], one);
			}
			ph = _mm512_slli_epi64(ph, 1);
			if (j >= dmax + 2)
				ph = _mm512_or_si512(ph, one);
			mh = _mm512_slli_epi64(mh, 1);
			pv[u] = _mm512_ternarylogic_epi64(mh, xv, ph, 0xf1);   /* mh | ~(xv | ph) */
			mv[u] = _mm512_and_si512(ph, xv);
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
		__m512i eq, pvi, mvi, xv, xh, ph, mh;
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
			eq = _mm512_mask_blend_epi32(k1,
					_mm512_mask_blend_epi32(k0, _mm512_set1_epi32((int)eqc[j][0]),
						_mm512_set1_epi32((int)eqc[j][1])),
					_mm512_mask_blend_epi32(k0, _mm512_set1_epi32((int)eqc[j][2]),
						_mm512_set1_epi32((int)eqc[j][3])));
		} else {
			__m512i lo = _mm512_mask_blend_epi32(k1,
					_mm512_mask_blend_epi32(k0, _mm512_loadu_si512(g->x[w][0]),
						_mm512_loadu_si512(g->x[w][1])),
					_mm512_mask_blend_epi32(k0, _mm512_loadu_si512(g->x[w][2]),
						_mm512_loadu_si512(g->x[w][3])));
			__m512i hi = _mm512_mask_blend_epi32(k1,
					_mm512_mask_blend_epi32(k0, _mm512_loadu_si512(g->x[w + 1][0]),
						_mm512_loadu_si512(g->x[w + 1][1])),
					_mm512_mask_blend_epi32(k0, _mm512_loadu_si512(g->x[w + 1][2]),
						_mm512_loadu_si512(g->x[w + 1][3])));
			eq = _mm512_or_si512(_mm512_srl_epi32(lo, cs), _mm512_sll_epi32(hi, cl));
		}
		if (ascii) {
			__mmask16 kn = _mm512_test_epi32_mask(_mm512_loadu_si512(g->wn[b]), bit);
			eq = _mm512_mask_mov_epi32(eq, kn,
					_mm512_set1_epi32((int)(j <= dmax ? vmask >> j : 0)));
		}
		pvi = _mm512_or_si512(_mm512_srli_epi32(pv, 1), top);
		mvi = _mm512_srli_epi32(mv, 1);
		xv = _mm512_or_si512(eq, mvi);
		xh = _mm512_add_epi32(_mm512_and_si512(eq, pvi), pvi);
		xh = _mm512_ternarylogic_epi32(xh, pvi, eq, 0xbe);      /* (xh ^ pvi) | eq */
		ph = _mm512_ternarylogic_epi32(mvi, xh, pvi, 0xf1);     /* mvi | ~(xh | pvi) */
		mh = _mm512_and_si512(pvi, xh);
		if (km >= 31) {   /* S follows the bottom row: +1 in, h of bit 31 */
			s = _mm512_add_epi32(s, _mm512_add_epi32(one, _mm512_srli_epi32(ph, 31)));
			s = _mm512_sub_epi32(s, _mm512_srli_epi32(mh, 31));
		} else {          /* S = D[m][j]: h of row m's bit */
			__m512i bk = _mm512_set1_epi32((int)(1u << km));
			s = _mm512_mask_add_epi32(s, _mm512_test_epi32_mask(ph, bk), s, one);
			s = _mm512_mask_sub_epi32(s, _mm512_test_epi32_mask(mh, bk), s, one);
		}
		ph = _mm512_slli_epi32(ph, 1);
		if (j >= dmax + 2)
			ph = _mm512_or_si512(ph, one);
		mh = _mm512_slli_epi32(mh, 1);
		pv = _mm512_ternarylogic_epi32(mh, xv, ph, 0xf1);      /* mh | ~(xv | ph) */
		mv = _mm512_and_si512(ph, xv);
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
#endif

/* X_c of pair P for DMAX into W->x (kept while the read and DMAX stay). */
static void pre_read(pre_ws_t *w, const uint8_t *reads, const align_pair_t *p, uint32_t dmax)
{
	if (w->have && w->read_off == p->read_off && w->m == p->read_len) {
		if (w->dmax == dmax)
			return;
	} else {
		sp_align_peq(reads + p->read_off, p->read_len, w->peq);
	}
	w->have = 1;
	w->read_off = p->read_off;
	w->m = p->read_len;
	w->dmax = dmax;
	pre_build_x((const uint64_t (*)[SP_ALIGN_WORDS])w->peq, p->read_len, dmax, PRE_XW, w->x);
}

/* Ask for the window of pair P ahead of its pass. */
static inline void prefetch_pair(const uint8_t *wins, const align_pair_t *p, unsigned packed)
{
	if (!p->win_len)
		return;
	if (packed)     /* the bytes holding bases win_off .. + win_len - 1 */
		prefetch_range(wins + (p->win_off >> 2),
				((p->win_off + p->win_len - 1) >> 2) - (p->win_off >> 2) + 1);
	else
		prefetch_range(wins + p->win_off, p->win_len);
}

/* Order of two keys. */
static int key_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

#if defined(__x86_64__) && defined(__GNUC__)
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

/*
 * The core's output for the chunk's pairs LO..HI that the prefilter let
 * through (YES 1), where a first pass asks only for the ends (ALIGN_ENDS |
 * ALIGN_NOCIGAR, the best end anywhere) and the band has at most 32
 * diagonals: the banded pass run on to the window's end gives every end
 * column within A with its exact distance, and from those the result
 * (least distance at its leftmost column, their count).  Those pairs get
 * YES 3 (done).
 */
PRE_TARGET static void pre_ends_chunk(pre_ws_t *w, const uint8_t *reads, const uint8_t *wins,
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
#endif

/*
 * The decisions (align_pre_batch) for pairs LO..HI (at most ALIGN_CHUNK) into
 * YES[0 .. HI-LO).  Windows of one shape go through the vector pass 8 at a
 * time (the last group of a shape padded with copies of its last window).
 */
static void pre_chunk(pre_ws_t *w, const uint8_t *reads, const uint8_t *wins,
		const align_pair_t *pairs, size_t lo, size_t hi, unsigned a, unsigned flags,
		int simd, uint8_t *yes)
{
	size_t k, ne = 0, i;
	unsigned packed = (flags & ALIGN_PACKED) != 0;

	for (k = lo; k < hi; k++) {
		const align_pair_t *p = &pairs[k];
		uint32_t m = p->read_len, n = p->win_len;
		yes[k - lo] = 2;
		if (m == 0 || m > ALIGN_MAX_READ || n > ALIGN_MAX_WIN)
			continue;
		if ((uint64_t)n + a < m) {
			yes[k - lo] = 0;   /* too short to hold the read within A */
			continue;
		}
		if (n - m + 2 * a + 1 > 64)   /* (n - m + a) + a + 1 diagonals */
			continue;
		w->key[ne++] = (uint64_t)n << 40 | (uint64_t)m << 16 | (k - lo);
	}
	/* the shape of the first pair first (extend's usual n = m + 2A), then the rest sorted */
	for (i = 0, k = 0; i < ne; i++)
		if (w->key[i] >> 16 == w->key[0] >> 16)
			w->tmp[k++] = w->key[i];
	if (k < ne) {
		size_t r = k;
		for (i = 0; i < ne; i++)
			if (w->key[i] >> 16 != w->key[0] >> 16)
				w->tmp[r++] = w->key[i];
		memcpy(w->key, w->tmp, ne * sizeof *w->key);
		for (i = k + 1; i < ne && w->key[i - 1] <= w->key[i]; i++)
			;
		if (i < ne)
			qsort(w->key + k, ne - k, sizeof *w->key, key_cmp);
	}
	for (i = 0; i < ne && i < PRE_AHEAD; i++)
		prefetch_pair(wins, &pairs[lo + (w->key[i] & 0xffff)], packed);
	for (i = 0; i < ne;) {
		const align_pair_t *p = &pairs[lo + (w->key[i] & 0xffff)];
		uint32_t m = p->read_len, n = p->win_len, dmax = n - m + a;
		if (!simd) {
			uint64_t wl[PRE_WB], wh[PRE_WB], wn[PRE_WB];
			if (i + PRE_AHEAD < ne)
				prefetch_pair(wins, &pairs[lo + (w->key[i + PRE_AHEAD] & 0xffff)], packed);
			pre_read(w, reads, p, dmax);
			pre_planes(wins, p->win_off, n, packed, wl, wh, wn, 1);
			yes[w->key[i] & 0xffff] = (uint8_t)pre_scalar((const uint64_t (*)[PRE_XW])w->x,
					wl, wh, wn, m, n, dmax, a);
			i++;
			continue;
		}
#if defined(__x86_64__) && defined(__GNUC__)
		{
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
				i += nl;
				continue;
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
			i += nl;
		}
#endif
	}
}

void align_pre_batch(const uint8_t *reads, const uint8_t *wins, const align_pair_t *pairs,
		size_t n, unsigned max_a, unsigned flags, uint8_t *yes)
{
	pre_ws_t *w;
	size_t lo;
	int simd = pre_simd(pre_mode);

	if ((pre_mode != ALIGN_PRE_SCALAR && !simd) || (flags & ALIGN_NOGAPS) || !(flags & ALIGN_ENDS)) {
		memset(yes, 2, n);
		return;
	}
	w = sp_malloc(sizeof *w);
	w->have = 0;
	for (lo = 0; lo < n; lo += ALIGN_CHUNK)
		pre_chunk(w, reads, wins, pairs, lo, lo + ALIGN_CHUNK < n ? lo + ALIGN_CHUNK : n,
				max_a, flags, simd, yes + lo);
	free(w);
}

struct align_pre_ws {
	pre_ws_t w;
	uint32_t eqc[ALIGN_MAX_WIN + 1][4];   /* column j's match bits for each code */
	uint32_t cw[PRE_CW][2 * PRE_LANES];  /* windows' 2-bit codes, 16 bases a word */
};

align_pre_ws_t *align_pre_ws_new(void)
{
	align_pre_ws_t *w = sp_malloc(sizeof *w);

	w->w.have = 0;
	return w;
}

void align_pre_ws_free(align_pre_ws_t *w)
{
	free(w);
}

int align_pre_read(align_pre_ws_t *ws, const uint8_t *read, uint32_t m, const uint8_t *pack,
		const uint64_t *off, size_t n, uint32_t win_len, unsigned max_a, uint8_t *yes)
{
#if defined(__x86_64__) && defined(__GNUC__)
	pre_ws_t *w = &ws->w;
	uint32_t dmax, nn = win_len;
	size_t i, k;

	if (!pre_simd(pre_mode) || pre_mode == ALIGN_PRE_SCALAR || m == 0 || m > ALIGN_MAX_READ
			|| (uint64_t)nn + max_a < m || nn > ALIGN_MAX_WIN
			|| nn - m + 2 * max_a + 1 > 32)
		return -1;
	dmax = nn - m + max_a;
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
	return 0;
#else
	(void)ws; (void)read; (void)m; (void)pack; (void)off; (void)n; (void)win_len;
	(void)max_a; (void)yes;
	return -1;
#endif
}

typedef struct {
	const uint8_t *reads, *wins;
	const align_pair_t *pairs;
	size_t n, next;
	unsigned max_a, flags;
	uint8_t *ends;
	size_t ends_stride;
	align_res_t *res;
	pthread_mutex_t lock;
} batch_t;

static void *batch_worker(void *arg)
{
	batch_t *b = arg;
	uint64_t *ws, peq[5][SP_ALIGN_WORDS], peq_off = 0;
	uint32_t peq_len = 0;
	size_t k, lo, hi, nws = 1;
	/* the prefilter: gapped pairs with their end columns (extend's first pass) */
	int simd = pre_simd(pre_mode);
	int pre = (pre_mode == ALIGN_PRE_SCALAR || simd) && !(b->flags & ALIGN_NOGAPS)
		&& (b->flags & ALIGN_ENDS);
	pre_ws_t *pw = NULL;
	uint8_t yes[ALIGN_CHUNK];

	/* the traceback workspace for the largest pair (none without a traceback) */
	if (!(b->flags & (ALIGN_NOCIGAR | ALIGN_NOGAPS)))
		for (k = 0; k < b->n; k++)
			if (align_ws_words(b->pairs[k].win_len, b->pairs[k].read_len) > nws)
				nws = align_ws_words(b->pairs[k].win_len, b->pairs[k].read_len);
	ws = sp_malloc(nws * sizeof *ws);
	if (pre) {
		pw = sp_malloc(sizeof *pw);
		pw->have = 0;
	}

	for (;;) {
		pthread_mutex_lock(&b->lock);
		lo = b->next;
		b->next = lo + ALIGN_CHUNK < b->n ? lo + ALIGN_CHUNK : b->n;
		hi = b->next;
		pthread_mutex_unlock(&b->lock);
		if (lo >= hi)
			break;
		if (pre) {
			pre_chunk(pw, b->reads, b->wins, b->pairs, lo, hi, b->max_a, b->flags, simd, yes);
#if defined(__x86_64__) && defined(__GNUC__)
			if (simd && (b->flags & ALIGN_NOCIGAR))
				pre_ends_chunk(pw, b->reads, b->wins, b->pairs, lo, hi, b->max_a, b->flags,
						yes, b->ends, b->ends_stride, b->res);
#endif
		}
		for (k = lo; k < hi; k++) {
			const align_pair_t *p = &b->pairs[k];
			uint8_t *ends = b->ends ? b->ends + k * b->ends_stride : NULL;
			/* the window of a pair ahead that goes to the core (the
			 * prefilter read the others already) */
			if (k + ALIGN_AHEAD < hi && (!pre || yes[k + ALIGN_AHEAD - lo] == 1
						|| yes[k + ALIGN_AHEAD - lo] == 2))
				prefetch_pair(b->wins, &b->pairs[k + ALIGN_AHEAD], b->flags & ALIGN_PACKED);
			if (b->flags & ALIGN_NOGAPS) {
				sp_align_one(b->reads + p->read_off, p->read_len, b->wins, p->win_off,
						p->win_len, b->max_a, b->flags, p->end_lo, p->end_hi, ws, 1,
						ends, &b->res[k]);
			} else if (pre && yes[k - lo] == 3) {
				continue;       /* pre_ends_chunk's: result and ends written */
			} else if (pre && !yes[k - lo]) {
				/* no end within A: the core's output for such a window */
				if (b->flags & ALIGN_ENDS_HITS) {
					b->res[k].dist = ALIGN_NOHIT;
				} else {
					sp_align_clear(&b->res[k], ALIGN_NOHIT);
					memset(ends, ALIGN_END_NONE, p->win_len);
				}
			} else {
				/* the pairs of one read are usually neighbours: its match bits once */
				if (k == lo || p->read_off != peq_off || p->read_len != peq_len) {
					sp_align_peq(b->reads + p->read_off, p->read_len, peq);
					peq_off = p->read_off;
					peq_len = p->read_len;
				}
				sp_align_clear(&b->res[k], ALIGN_NOHIT);
				sp_align_gapped((const uint64_t (*)[SP_ALIGN_WORDS])peq, p->read_len, b->wins,
						p->win_off, p->win_len, b->max_a, b->flags, p->end_lo, p->end_hi,
						ws, 1, ends, &b->res[k]);
			}
			if (b->ends && b->ends_stride > p->win_len
					&& !((b->flags & ALIGN_ENDS_HITS) && b->res[k].dist < 0))
				memset(b->ends + k * b->ends_stride + p->win_len, ALIGN_END_NONE,
						b->ends_stride - p->win_len);
		}
	}
	free(ws);
	free(pw);
	return NULL;
}

int align_batch(const uint8_t *reads, const uint8_t *wins, const align_pair_t *pairs, size_t n,
		unsigned max_a, unsigned flags, int n_threads, uint8_t *ends, size_t ends_stride,
		align_res_t *res, char *msg, size_t msg_len)
{
	batch_t b;
	pthread_t *tid;
	int t, nt;

	if (align_check(pairs, n, max_a, flags, ends_stride, msg, msg_len) < 0)
		return -1;
	if ((flags & ALIGN_ENDS) && !ends && n) {
		snprintf(msg, msg_len, "end positions asked for without a buffer");
		return -1;
	}
	memset(&b, 0, sizeof b);
	b.reads = reads;
	b.wins = wins;
	b.pairs = pairs;
	b.n = n;
	b.max_a = max_a;
	b.flags = flags;
	b.ends = (flags & ALIGN_ENDS) ? ends : NULL;   /* NULL only when N is 0 */
	b.ends_stride = ends_stride;
	b.res = res;
	pthread_mutex_init(&b.lock, NULL);
	nt = n_threads < 1 ? 1 : n_threads;
	if ((size_t)nt > (n + ALIGN_CHUNK - 1) / ALIGN_CHUNK)
		nt = (int)((n + ALIGN_CHUNK - 1) / ALIGN_CHUNK);
	if (nt <= 1) {
		batch_worker(&b);
	} else {
		tid = sp_malloc((size_t)nt * sizeof *tid);
		for (t = 0; t < nt; t++)
			if (pthread_create(&tid[t], NULL, batch_worker, &b) != 0)
				sp_die("cannot start a thread");
		for (t = 0; t < nt; t++)
			pthread_join(tid[t], NULL);
		free(tid);
	}
	pthread_mutex_destroy(&b.lock);
	return 0;
}

char *align_cigar_str(const align_res_t *res, char *buf, size_t len)
{
	static const char ops[] = "MIDNSHP=X";
	char num[12];
	size_t k, o = 0, d;
	unsigned x, op;

	if (len == 0)
		return buf;
	if (res->dist < 0 || res->n_cigar == 0) {
		snprintf(buf, len, "*");
		return buf;
	}
	for (k = 0; k < res->n_cigar && k < ALIGN_MAX_CIGAR; k++) {
		x = res->cigar[k] >> 4;
		op = res->cigar[k] & 15u;
		d = 0;
		do {
			num[d++] = (char)('0' + x % 10);
			x /= 10;
		} while (x);
		if (o + d + 2 > len)
			break;
		while (d)
			buf[o++] = num[--d];
		buf[o++] = op < 9 ? ops[op] : '?';
	}
	buf[o] = 0;
	return buf;
}

/* High bit of each byte of X that is 0 (exact, no false positives). */
static inline uint64_t zero_bytes(uint64_t x)
{
	const uint64_t lo7 = 0x7f7f7f7f7f7f7f7full;

	return ~(((x & lo7) + lo7) | x | lo7);
}

/* Whether the 8 bytes of W are all bases (A, C, G, T in either case: code < 4). */
static inline int all_bases(uint64_t w)
{
	uint64_t x = w | 0x2020202020202020ull;   /* only A and a become a, ... */

	return (zero_bytes(x ^ 0x6161616161616161ull) | zero_bytes(x ^ 0x6363636363636363ull)
			| zero_bytes(x ^ 0x6767676767676767ull) | zero_bytes(x ^ 0x7474747474747474ull))
		== 0x8080808080808080ull;
}

/* Append C to BUF (LEN bytes) at *O, as far as it fits; *O counts every byte. */
static inline void md_putc(char *buf, size_t len, size_t *o, char c)
{
	if (*o + 1 < len)
		buf[*o] = c;
	(*o)++;
}

/* Append the decimal X (as md_putc). */
static inline void md_putu(char *buf, size_t len, size_t *o, unsigned x)
{
	char num[12];
	int d = 0;

	do {
		num[d++] = (char)('0' + x % 10);
		x /= 10;
	} while (x);
	while (d)
		md_putc(buf, len, o, num[--d]);
}

/* align_md_str's work for a window of one kind (PACKED a constant in each copy). */
static inline __attribute__((always_inline)) size_t md_str(const align_res_t *res,
		const uint8_t *read, const uint8_t *win, uint64_t win_off, const unsigned packed,
		char *buf, size_t len)
{
	static const char bases[] = "ACGTN";
	unsigned op, l, k, run = 0;
	uint64_t j = win_off + (res->dist >= 0 ? res->start : 0);
	size_t o = 0, i = 0;

	/* as snprintf: the bytes that fit, NUL-terminated, and the length needed */
	if (res->dist < 0 || res->n_cigar == 0) {
		md_putc(buf, len, &o, '*');
	} else {
		for (k = 0; k < res->n_cigar && k < ALIGN_MAX_CIGAR; k++) {
			op = res->cigar[k] & 15u;
			l = res->cigar[k] >> 4;
			if (op == SP_CIGAR_I) {
				i += l;
			} else if (op == SP_CIGAR_D) {
				md_putu(buf, len, &o, run);
				md_putc(buf, len, &o, '^');
				for (; l > 0; l--)
					md_putc(buf, len, &o, bases[sp_align_wcode(win, j++, packed)]);
				run = 0;
			} else {
				for (; l > 0; l--, i++, j++) {
					unsigned c;
					/* 8 equal bytes of an ASCII window, all of them bases, match */
					while (!packed && l >= 8) {
						uint64_t rw, ww;
						memcpy(&rw, read + i, 8);
						memcpy(&ww, win + j, 8);
						if (rw != ww || !all_bases(ww))
							break;
						run += 8;
						l -= 8;
						i += 8;
						j += 8;
					}
					if (!l)
						break;
					c = sp_align_wcode(win, j, packed);
					if (c < 4 && c == sp_align_code(read[i])) {
						run++;
					} else {
						md_putu(buf, len, &o, run);
						md_putc(buf, len, &o, bases[c]);
						run = 0;
					}
				}
			}
		}
		md_putu(buf, len, &o, run);
	}
	if (len)
		buf[o < len ? o : len - 1] = 0;
	return o;
}

size_t align_md_str(const align_res_t *res, const uint8_t *read, const uint8_t *win,
		uint64_t win_off, unsigned flags, char *buf, size_t len)
{
	if (flags & ALIGN_PACKED)
		return md_str(res, read, win, win_off, 1, buf, len);
	return md_str(res, read, win, win_off, 0, buf, len);
}
