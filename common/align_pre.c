/*
 * align_pre.c - the exact prefilter of align_batch() (the method is in
 * align_pre.h): its mode, the scalar banded pass (the tests' reference),
 * each chunk's windows grouped by shape for the vector pass
 * (align_avx512.c), and the public entry points align_pre_batch() and
 * align_pre_read().
 */
#include "align_pre.h"

#include <pthread.h>

static int pre_mode = ALIGN_PRE_AUTO;

int align_set_prefilter(int mode)
{
	int old = pre_mode;

	pre_mode = mode;
	return old;
}

/* The instructions the vector pass needs. */
#define PRE_CPU (SP_CPU_AVX512F | SP_CPU_AVX512BW | SP_CPU_AVX512DQ | SP_CPU_AVX512VPOPCNTDQ \
		| SP_CPU_BMI2)

static int pre_env;     /* SEEDPIPE_NO_SIMD was set (read once: a batch asks often) */
static pthread_once_t pre_once = PTHREAD_ONCE_INIT;

static void pre_init(void)
{
	pre_env = !sp_simd_allowed();
}

/*
 * Whether this batch's prefilter uses the vector pass.  Where it does not,
 * ALIGN_PRE_AUTO leaves every pair to the core: the scalar banded pass is
 * slower than the core (its column chain is as long, and it adds the
 * window's decoding), so it only serves as ALIGN_PRE_SCALAR, the
 * reference the tests check the vector pass against.
 */
static int pre_simd(int mode)
{
#ifdef ALIGN_PRE_X86
	pthread_once(&pre_once, pre_init);
	return sp_cpu_has(PRE_CPU) && (mode == ALIGN_PRE_SIMD || (mode == ALIGN_PRE_AUTO && !pre_env));
#else
	(void)mode;
	return 0;
#endif
}

int align_pre_on(unsigned flags, int *simd)
{
	*simd = pre_simd(pre_mode);
	return (pre_mode == ALIGN_PRE_SCALAR || *simd) && !(flags & ALIGN_NOGAPS)
		&& (flags & ALIGN_ENDS);
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

/*
 * The decisions (align_pre_batch) for pairs LO..HI (at most ALIGN_CHUNK) into
 * YES[0 .. HI-LO).  Windows of one shape go through the vector pass 8 at a
 * time (the last group of a shape padded with copies of its last window).
 */
void align_pre_chunk(pre_ws_t *w, const uint8_t *reads, const uint8_t *wins,
		const align_pair_t *pairs, size_t lo, size_t hi, unsigned a, unsigned flags,
		int simd, uint8_t *yes)
{
	size_t k, ne = 0, i;
	unsigned packed = (flags & ALIGN_PACKED) != 0;

	for (k = lo; k < hi; k++) {
		const align_pair_t *p = &pairs[k];
		uint32_t m = p->read_len, n = p->win_len;
		yes[k - lo] = 2;
		if (m == 0 || m > PRE_MAX_READ || n > ALIGN_MAX_WIN)
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
#ifdef ALIGN_PRE_X86
		i += align_pre_group_simd(w, reads, wins, pairs, lo, i, ne, a, packed, yes);
#endif
	}
}

void align_pre_batch(const uint8_t *reads, const uint8_t *wins, const align_pair_t *pairs,
		size_t n, unsigned max_a, unsigned flags, uint8_t *yes)
{
	pre_ws_t *w;
	size_t lo;
	int simd;

	if (!align_pre_on(flags, &simd)) {
		memset(yes, 2, n);
		return;
	}
	w = pre_ws_new();
	for (lo = 0; lo < n; lo += ALIGN_CHUNK)
		align_pre_chunk(w, reads, wins, pairs, lo, lo + ALIGN_CHUNK < n ? lo + ALIGN_CHUNK : n,
				max_a, flags, simd, yes + lo);
	free(w);
}

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
#ifdef ALIGN_PRE_X86
	uint32_t nn = win_len;

	if (!pre_simd(pre_mode) || pre_mode == ALIGN_PRE_SCALAR || m == 0 || m > PRE_MAX_READ
			|| (uint64_t)nn + max_a < m || nn > ALIGN_MAX_WIN
			|| nn - m + 2 * max_a + 1 > 32)
		return -1;
	align_pre_read_simd(ws, read, m, pack, off, n, nn, max_a, yes);
	return 0;
#else
	(void)ws; (void)read; (void)m; (void)pack; (void)off; (void)n; (void)win_len;
	(void)max_a; (void)yes;
	return -1;
#endif
}
