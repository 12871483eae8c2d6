/*
 * bpr.c - host side of mflBPR: block-mask tables, SeedBlock scans (plain C,
 * and AVX-512 where the CPU has it) and the dynamic-programming reference
 * the tests compare with.
 */
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>   /* scan_x16 */
#define BPR_X86 1
#endif

#include "bpr.h"
#include "sp_bits.h"
#include "util.h"

void bpr_pat_init(bpr_pat_t *bp, uint64_t q, uint32_t v, uint32_t l, uint32_t e)
{
	uint64_t lo = v >= 32 ? ~0ULL : (1ULL << (2 * v)) - 1;
	uint32_t b[4], i, g;

	bp->v = v;
	bp->e = e;
	bp->l = l;
	bp->h = idx_stripe_h(l);
	bp->ng = bpr_ngroups(bp->h);
	/* bpr_bmask for the four letters: base i is c where q ^ c..c has both
	 * bits of base i clear (no loop carried through memory: this runs for
	 * every pattern) */
	for (i = 0; i < 4; i++) {
		uint64_t x = (q ^ (0x5555555555555555ULL * i)) & lo;

		b[i] = (uint32_t)sp_even_bits(~(x | x >> 1) & lo);
	}
	if (bp->h == 2) {   /* 11 <= l <= 16: one group of two slices */
		uint32_t *t = bp->tab;

		for (i = 0; i < 4; i++) {
			uint32_t hi = b[i] << v;

			t[4 * i] = b[0] | hi;
			t[4 * i + 1] = b[1] | hi;
			t[4 * i + 2] = b[2] | hi;
			t[4 * i + 3] = b[3] | hi;
		}
		return;
	}
	/*
	 * The entries of bpr_tab_entry, built slice by slice: with the first s
	 * slices of group g done in tab[0 .. 4^s), entry x | c << 2s is entry x
	 * or'ed with B[c] in slice 4g+s (c = 0 last: it updates in place).
	 */
	for (g = 0; g < bp->ng; g++) {
		uint32_t *t = &bp->tab[BPR_GROUP * g];
		uint32_t k = bp->h - 4 * g, n = 1, s, x;
		int c;

		if (k > 4)
			k = 4;
		t[0] = 0;
		for (s = 0; s < k; s++, n *= 4) {
			uint32_t sh = v * (4 * g + s);

			for (c = 3; c >= 0; c--) {
				uint32_t m = b[c] << sh;

				for (x = 0; x < n; x++)
					t[(uint32_t)c * n + x] = t[x] | m;
			}
		}
	}
}

/*
 * bpr_scan for a fixed E: with E a constant (flatten inlines bpr_word_any)
 * the loops over k unroll and R, I stay in registers.
 */
#define BPR_SCAN_E(name, E) \
__attribute__((flatten)) \
static size_t name(const bpr_pat_t *bp, const uint64_t *words, uint64_t n, uint32_t *out) \
{ \
	uint64_t nw = (n + bp->h - 1) / bp->h, k; \
	size_t m = 0; \
 \
	for (k = 0; k < nw; k++) { \
		uint32_t hit = bpr_word(words[k], bp->h, bp->l, bp->v, (E), bp->tab); \
		uint64_t base = k * bp->h; \
 \
		if (n - base < bp->h) \
			hit &= (1u << (n - base)) - 1; \
		while (hit) { \
			int r = __builtin_ctz(hit); \
 \
			out[m++] = (uint32_t)(base + (uint32_t)r); \
			hit &= hit - 1; \
		} \
	} \
	return m; \
}

BPR_SCAN_E(scan_e0, 0u)
BPR_SCAN_E(scan_e1, 1u)
BPR_SCAN_E(scan_e2, 2u)
BPR_SCAN_E(scan_e3, 3u)
BPR_SCAN_E(scan_any, bp->e)

size_t bpr_scan_scalar(const bpr_pat_t *bp, const uint64_t *words, uint64_t n, uint32_t *out)
{
	switch (bp->e) {
	case 0: return scan_e0(bp, words, n, out);
	case 1: return scan_e1(bp, words, n, out);
	case 2: return scan_e2(bp, words, n, out);
	case 3: return scan_e3(bp, words, n, out);
	}
	return scan_any(bp, words, n, out);
}

#ifdef BPR_X86

/*
 * The AVX-512 scan: bpr_word_any for 16 striped words at once, one word per
 * 32-bit lane (R_k are 32-bit words in the scalar code too, so every bit is
 * the same).  For h <= 2 a column t^_j is 2h bits and 16 / h columns fill
 * each 32-bit half of a word exactly, so the 16 words are split once into
 * their low halves (columns 0 .. 16/h-1) and high halves (the rest):
 *
 *     words k .. k+15 (u64)  -> lo = [w15.lo ... w1.lo w0.lo]  (u32 lanes)
 *                               hi = [w15.hi ... w1.hi w0.hi]
 *     column j of lane i      = (lo_i >> 2h*j) & (4^h - 1), j < 16/h
 *
 * and the block mask of a column is one vpermd over a 16-entry table in
 * one register, T0 (vpermd reads the low 4 bits of each index lane; for
 * h = 1 the table repeats tab[0..3], so the next column's bits do not
 * matter).  For h = 3, 4 (WIDE) the columns straddle the halves, so each
 * column is shifted out of the 64-bit words and packed to 32-bit lanes,
 * and its block mask is T0[bits 0..3] | T1[bits 4..7]: T0 the slices 0, 1
 * of tab[x], T1 the slices 2, 3 of tab[y << 4] (an entry is an or of one
 * term per slice, so masking the bits of the other slices separates them;
 * for h = 3 T1 repeats tab[(y & 3) << 4], bits 6, 7 being the next column).
 *
 * Lane i's slot r matches when bit v*r + v - 1 of its hit word is set; the
 * hit bits, interleaved to bit h*i + r, are the neighborhoods k*h ..
 * k*h + 16h - 1 in order, which vpcompressd turns into indices, 16 at a
 * time.  Words past the block are not read (they load as zero) and slots
 * past N are masked off like in the scalar loop.  E is a constant in the
 * instances for e <= 3.
 */
#define BPR_TGT __attribute__((target("avx512f,bmi2")))

/* One column of the recurrence (inc_bpr.h) in 16 lanes, block mask BH. */
#define BPR_X16_STEP(bh) do { \
	__m512i op_ = R[0], np_; \
\
	/* R_0 = ((R_0 << 1) | ones) & bh */ \
	R[0] = _mm512_ternarylogic_epi32(_mm512_slli_epi32(R[0], 1), ones, (bh), 0xa8); \
	np_ = R[0]; \
	for (kk = 1; kk <= E; kk++) { \
		__m512i old_ = R[kk]; \
		/* ((old << 1) & bh) | old_prev */ \
		__m512i u_ = _mm512_ternarylogic_epi32(_mm512_slli_epi32(old_, 1), (bh), op_, 0xea); \
\
		/* | (old_prev << 1) | (new_prev << 1) | I_k */ \
		R[kk] = _mm512_ternarylogic_epi32(u_, _mm512_slli_epi32( \
					_mm512_or_si512(op_, np_), 1), I[kk], 0xfe); \
		op_ = old_; \
		np_ = R[kk]; \
	} \
	hit = _mm512_or_si512(hit, R[E]); \
} while (0)

BPR_TGT __attribute__((always_inline))
static inline size_t scan_x16(const bpr_pat_t *bp, const uint64_t *words, const uint32_t *keys,
		uint64_t n, uint32_t *out, uint32_t E, int WIDE)
{
	const uint32_t h = bp->h, l = bp->l, v = bp->v, cpw = 16 / h;
	const uint64_t nw = (n + h - 1) / h;
	const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14,
			16, 18, 20, 22, 24, 26, 28, 30);
	const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
	const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7,
			8, 9, 10, 11, 12, 13, 14, 15);
	const __m512i ones = _mm512_set1_epi32((int)bpr_rep(1u, v, h));
	const __m128i sh = _mm_cvtsi32_si128((int)(2 * h));
	__m512i t0, t1 = _mm512_setzero_si512(), I[BPR_MAX_E + 1], end[4];
	uint64_t k, dep[4];
	uint32_t kk, r;
	size_t m = 0;

	if (!WIDE) {
		t0 = h == 1
			? _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(const void *)bp->tab))
			: _mm512_loadu_si512((const void *)bp->tab);
	} else {
		const __m512i lo2 = _mm512_set1_epi32((int)bpr_low(2 * v));
		__m512i y = _mm512_and_si512(iota, _mm512_set1_epi32(h == 3 ? 3 : 15));

		t0 = _mm512_and_si512(_mm512_loadu_si512((const void *)bp->tab), lo2);
		t1 = _mm512_andnot_si512(lo2, _mm512_i32gather_epi32(_mm512_slli_epi32(y, 4),
					(const void *)bp->tab, 4));
	}
	for (kk = 0; kk <= E; kk++)
		I[kk] = _mm512_set1_epi32((int)bpr_rep(bpr_low(kk < v ? kk : v), v, h));
	for (r = 0; r < h; r++) {   /* slot r: bit v*r + v - 1, to bit h*i + r */
		uint32_t i;

		end[r] = _mm512_set1_epi32((int)(1u << (v * r + v - 1)));
		for (dep[r] = 0, i = 0; i < 16; i++)
			dep[r] |= 1ULL << (h * i + r);
	}
	for (k = 0; k < nw; k += 16) {
		uint64_t left = nw - k, base = k * h, mm;
		__m512i a, b, R[BPR_MAX_E + 1], hit;
		uint32_t j;

		if (keys) {   /* 32 keys, 16 a register; slots past N load as zero */
			uint64_t kl = n - 2 * k;
			__mmask16 ka = kl >= 16 ? 0xffff : (__mmask16)((1u << kl) - 1);
			__mmask16 kb = kl >= 32 ? 0xffff : kl > 16 ? (__mmask16)((1u << (kl - 16)) - 1) : 0;

			a = _mm512_maskz_loadu_epi32(ka, (const void *)(keys + 2 * k));
			b = kb ? _mm512_maskz_loadu_epi32(kb, (const void *)(keys + 2 * k + 16))
				: _mm512_setzero_si512();
		} else {
			__mmask8 ma = left >= 8 ? 0xff : (__mmask8)((1u << left) - 1);
			__mmask8 mb = left >= 16 ? 0xff : left > 8 ? (__mmask8)((1u << (left - 8)) - 1) : 0;

			a = _mm512_maskz_loadu_epi64(ma, (const void *)(words + k));
			b = mb ? _mm512_maskz_loadu_epi64(mb, (const void *)(words + k + 8))
				: _mm512_setzero_si512();
		}
		for (kk = 0; kk <= E; kk++)
			R[kk] = I[kk];
		hit = R[E];
		if (keys) {
			/*
			 * h = 2 from the keys: lane i holds keys 2i (ke) and 2i+1
			 * (ko) of the group, and column j's 4 bits, as the striped
			 * word has them, are bits 2j, 2j+1 of ke below those of ko:
			 * xe has the even columns in its nibbles, xo the odd ones
			 */
			const __m512i m3 = _mm512_set1_epi32(0x33333333);
			__m512i ke = _mm512_permutex2var_epi32(a, even, b);
			__m512i ko = _mm512_permutex2var_epi32(a, odd, b);
			__m512i xe = _mm512_ternarylogic_epi32(m3, ke, _mm512_slli_epi32(ko, 2), 0xca);
			__m512i xo = _mm512_ternarylogic_epi32(m3, _mm512_srli_epi32(ke, 2), ko, 0xca);

			for (j = 0; j < l; j++) {
				__m512i bh;

				if (j & 1) {
					bh = _mm512_permutexvar_epi32(xo, t0);
					xo = _mm512_srli_epi32(xo, 4);
				} else {
					bh = _mm512_permutexvar_epi32(xe, t0);
					xe = _mm512_srli_epi32(xe, 4);
				}
				BPR_X16_STEP(bh);
			}
		} else if (!WIDE) {
			__m512i x = _mm512_permutex2var_epi32(a, even, b);
			uint32_t jend = cpw < l ? cpw : l;

			for (j = 0; j < jend; j++) {
				__m512i bh = _mm512_permutexvar_epi32(x, t0);

				x = _mm512_srl_epi32(x, sh);
				BPR_X16_STEP(bh);
			}
			x = _mm512_permutex2var_epi32(a, odd, b);
			for (; j < l; j++) {
				__m512i bh = _mm512_permutexvar_epi32(x, t0);

				x = _mm512_srl_epi32(x, sh);
				BPR_X16_STEP(bh);
			}
		} else {
			for (j = 0; j < l; j++) {
				__m512i x = _mm512_permutex2var_epi32(a, even, b);
				__m512i bh = _mm512_or_si512(_mm512_permutexvar_epi32(x, t0),
						_mm512_permutexvar_epi32(_mm512_srli_epi32(x, 4), t1));

				a = _mm512_srl_epi64(a, sh);
				b = _mm512_srl_epi64(b, sh);
				BPR_X16_STEP(bh);
			}
		}
		mm = _mm512_test_epi32_mask(hit, end[0]);
		if (h > 1)
			for (mm = _pdep_u64(mm, dep[0]), r = 1; r < h; r++)
				mm |= _pdep_u64(_mm512_test_epi32_mask(hit, end[r]), dep[r]);
		if (n - base < 64)
			mm &= (1ULL << (n - base)) - 1;
		for (; mm; mm >>= 16, base += 16) {
			__mmask16 c16 = (__mmask16)mm;
			uint32_t c = (uint32_t)__builtin_popcount(c16);

			_mm512_mask_storeu_epi32(out + m, (__mmask16)((1u << c) - 1),
					_mm512_maskz_compress_epi32(c16,
						_mm512_add_epi32(iota, _mm512_set1_epi32((int)(uint32_t)base))));
			m += c;
		}
	}
	return m;
}

#define BPR_X16_E(name, E, WIDE) \
BPR_TGT __attribute__((noinline)) \
static size_t name(const bpr_pat_t *bp, const uint64_t *words, uint64_t n, uint32_t *out) \
{ \
	return scan_x16(bp, words, NULL, n, out, (E), (WIDE)); \
}

/* scan_x16 for h = 2 reading the u32 keys themselves (no striped words). */
#define BPR_X16K_E(name, E) \
BPR_TGT __attribute__((noinline)) \
static size_t name(const bpr_pat_t *bp, const uint32_t *keys, uint64_t n, uint32_t *out) \
{ \
	return scan_x16(bp, NULL, keys, n, out, (E), 0); \
}

BPR_X16_E(x16_e0, 0u, 0)
BPR_X16_E(x16_e1, 1u, 0)
BPR_X16_E(x16_e2, 2u, 0)
BPR_X16_E(x16_e3, 3u, 0)
BPR_X16_E(x16_any, bp->e, 0)
BPR_X16_E(x16w_e0, 0u, 1)
BPR_X16_E(x16w_e1, 1u, 1)
BPR_X16_E(x16w_e2, 2u, 1)
BPR_X16_E(x16w_e3, 3u, 1)
BPR_X16_E(x16w_any, bp->e, 1)
BPR_X16K_E(x16k_e0, 0u)
BPR_X16K_E(x16k_e1, 1u)
BPR_X16K_E(x16k_e2, 2u)
BPR_X16K_E(x16k_e3, 3u)
BPR_X16K_E(x16k_any, bp->e)

/* The CPU has what scan_x16 uses. */
static int cpu_x16(void)
{
	return sp_cpu_has(SP_CPU_AVX512F | SP_CPU_BMI2);
}
#endif

int64_t bpr_scan_simd(const bpr_pat_t *bp, const uint64_t *words, uint64_t n, uint32_t *out)
{
#ifdef BPR_X86
	if (bp->h <= 2 && cpu_x16()) {
		switch (bp->e) {
		case 0: return (int64_t)x16_e0(bp, words, n, out);
		case 1: return (int64_t)x16_e1(bp, words, n, out);
		case 2: return (int64_t)x16_e2(bp, words, n, out);
		case 3: return (int64_t)x16_e3(bp, words, n, out);
		}
		return (int64_t)x16_any(bp, words, n, out);
	}
	if (bp->h <= 4 && cpu_x16()) {
		switch (bp->e) {
		case 0: return (int64_t)x16w_e0(bp, words, n, out);
		case 1: return (int64_t)x16w_e1(bp, words, n, out);
		case 2: return (int64_t)x16w_e2(bp, words, n, out);
		case 3: return (int64_t)x16w_e3(bp, words, n, out);
		}
		return (int64_t)x16w_any(bp, words, n, out);
	}
#endif
	(void)bp;
	(void)words;
	(void)n;
	(void)out;
	return -1;
}

int64_t bpr_scan_keys_simd(const bpr_pat_t *bp, const uint32_t *k32, uint64_t n, uint32_t *out)
{
#ifdef BPR_X86
	if (bp->h == 2 && cpu_x16()) {
		switch (bp->e) {
		case 0: return (int64_t)x16k_e0(bp, k32, n, out);
		case 1: return (int64_t)x16k_e1(bp, k32, n, out);
		case 2: return (int64_t)x16k_e2(bp, k32, n, out);
		case 3: return (int64_t)x16k_e3(bp, k32, n, out);
		}
		return (int64_t)x16k_any(bp, k32, n, out);
	}
#endif
	(void)bp;
	(void)k32;
	(void)n;
	(void)out;
	return -1;
}

int bpr_simd_on(void)
{
	static int on = -1;   /* threads that race here store the same answer */
	int x = __atomic_load_n(&on, __ATOMIC_RELAXED);

	if (x < 0) {
#ifdef BPR_X86
		x = cpu_x16() && sp_simd_allowed();
#else
		x = 0;
#endif
		__atomic_store_n(&on, x, __ATOMIC_RELAXED);
	}
	return x;
}

size_t bpr_scan(const bpr_pat_t *bp, const uint64_t *words, uint64_t n, uint32_t *out)
{
	if (bp->h <= 4 && bpr_simd_on()) {
		int64_t m = bpr_scan_simd(bp, words, n, out);

		if (m >= 0)
			return (size_t)m;
	}
	return bpr_scan_scalar(bp, words, n, out);
}

#ifdef BPR_X86
/* idx_stripe2 by pdep (where bpr_simd_on: CPUs with AVX-512 have a fast pdep). */
__attribute__((target("bmi2")))
static void stripe2_pdep(const uint32_t *k, uint64_t n, uint64_t *wd)
{
	uint64_t i;

	for (i = 0; i + 1 < n; i += 2)
		wd[i / 2] = _pdep_u64(k[i], 0x3333333333333333ULL) | _pdep_u64(k[i + 1], 0xCCCCCCCCCCCCCCCCULL);
	if (n & 1)
		wd[n / 2] = _pdep_u64(k[n - 1], 0x3333333333333333ULL);
}
#endif

void bpr_stripe(const uint32_t *k32, const uint64_t *k64, uint64_t n, uint32_t l, uint64_t *words)
{
	uint32_t h = idx_stripe_h(l);
	uint64_t i;

	if (h == 1) {
		memcpy(words, k64, n * sizeof *words);
		return;
	}
#ifdef BPR_X86
	if (h == 2 && bpr_simd_on()) {
		stripe2_pdep(k32, n, words);
		return;
	}
#endif
	for (i = 0; i < n; i += h)
		words[i / h] = idx_stripe_keys(k32, k64, i, n - i, h, l);
}

#define BPR_KCHUNK 256u   /* words striped at a time (2 KiB, stays in L1) */

size_t bpr_scan_keys(const bpr_pat_t *bp, const uint32_t *k32, const uint64_t *k64,
		uint64_t n, uint32_t *out)
{
	uint64_t wd[BPR_KCHUNK], i, step = (uint64_t)BPR_KCHUNK * bp->h;
	size_t m = 0;

	if (bp->h == 1)   /* l > 16: the keys are their own striped words */
		return bpr_scan(bp, k64, n, out);
	if (bp->h == 2 && bpr_simd_on()) {   /* striped in registers */
		int64_t r = bpr_scan_keys_simd(bp, k32, n, out);

		if (r >= 0)
			return (size_t)r;
	}
	for (i = 0; i < n; i += step) {
		uint64_t c = n - i < step ? n - i : step;
		size_t k, t;

		bpr_stripe(k32 ? k32 + i : NULL, k32 ? NULL : k64 + i, c, bp->l, wd);
		k = bpr_scan(bp, wd, c, out + m);
		for (t = 0; t < k; t++)
			out[m + t] += (uint32_t)i;
		m += k;
	}
	return m;
}

uint32_t bpr_dp_dist(uint64_t q, uint32_t v, uint64_t t, uint32_t l)
{
	uint32_t d[33], best, i, j;

	/* d[i] = min distance of q[0..i) to a substring of t ending here */
	for (i = 0; i <= v; i++)
		d[i] = i;
	best = d[v];
	for (j = 0; j < l; j++) {
		uint32_t diag = d[0], tc = (uint32_t)(t >> (2 * j)) & 3;

		d[0] = 0;   /* free start */
		for (i = 1; i <= v; i++) {
			uint32_t qc = (uint32_t)(q >> (2 * (i - 1))) & 3;
			uint32_t x = diag + (qc != tc), up = d[i] + 1, left = d[i - 1] + 1;
			uint32_t nx = x < up ? x : up;

			nx = nx < left ? nx : left;
			diag = d[i];
			d[i] = nx;
		}
		if (d[v] < best)
			best = d[v];
	}
	return best;
}
