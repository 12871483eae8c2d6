/*
 * galign_simd.c - the vector code of the global alignment (galign_simd.h):
 * galign_tpl.h's kernels built for AVX2 and for AVX-512 (F, BW) through
 * target attributes, so that one binary runs on any x86-64 and uses what
 * the CPU has (sp_cpu_has); other CPUs get the scalar code of galign.c.
 */
#include "galign_simd.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define GA_X86 1
#include <immintrin.h>
#endif

void *ga_scratch(ga_scratch_t *s, size_t n)
{
	if (n > s->cap) {
		size_t cap = n + n / 4 + 64;

		free(s->buf);
		s->buf = NULL;
		if (posix_memalign(&s->buf, 64, (cap + 63) / 64 * 64) != 0)
			sp_die("out of memory (%zu bytes)", cap);
		s->cap = cap;
	}
	return s->buf;
}

void ga_scratch_parts(ga_scratch_t *s, int n, const size_t *len, uint8_t **part)
{
	size_t tot = 0;
	uint8_t *base;
	int i;

	for (i = 0; i < n; i++)
		tot += len[i];
	base = ga_scratch(s, tot);
	for (i = 0; i < n; i++) {
		part[i] = base;
		base += len[i];
	}
}

void ga_scratch_free(ga_scratch_t *s)
{
	free(s->buf);
	s->buf = NULL;
	s->cap = 0;
}

#ifdef GA_X86

/* --- AVX2: 32 bytes, 4 words of 64 bits, 8 words of 32 bits ------------------ */
#define GA_TGT __attribute__((target("avx2")))
#define GA_FN(x) x##_avx2
#define GA_VB 32
typedef __m256i ga_v;
#define V_LD(p) _mm256_load_si256((const __m256i *)(const void *)(p))
#define V_ST(p, v) _mm256_store_si256((__m256i *)(void *)(p), (v))
#define V_SET8(x) _mm256_set1_epi8((char)(x))
#define V_SET32(x) _mm256_set1_epi32(x)
#define V_SET64(x) _mm256_set1_epi64x(x)
#define V_ZERO() _mm256_setzero_si256()
#define V_MAXU8 _mm256_max_epu8
#define V_SUB8 _mm256_sub_epi8
#define V_SEL_EQ8(a, b, x, y) _mm256_blendv_epi8((y), (x), _mm256_cmpeq_epi8((a), (b)))
#define V_SELM(mk, x, y) _mm256_blendv_epi8((y), (x), (mk))
#define V_AND _mm256_and_si256
#define V_OR _mm256_or_si256
#define V_XOR _mm256_xor_si256
#define V_ANDNOT _mm256_andnot_si256
#define V_ADD64 _mm256_add_epi64
#define V_SRL64 _mm256_srli_epi64
#define V_SLL64 _mm256_slli_epi64
#define V_ADD32 _mm256_add_epi32
#define V_MAX32 _mm256_max_epi32
#define V_SEL_EQ32(a, b, x, y) _mm256_blendv_epi8((y), (x), _mm256_cmpeq_epi32((a), (b)))
#define V_EQMASK32(a, b) \
	((unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32((a), (b)))))
#define GA_PUTMASK(p, x) (*(p) = (uint8_t)(x))
#define V_SET16(x) _mm256_set1_epi16((short)(x))
#define V_ADDS16 _mm256_adds_epi16
#define V_MAX16 _mm256_max_epi16
#define V_SEL_EQ16(a, b, x, y) _mm256_blendv_epi8((y), (x), _mm256_cmpeq_epi16((a), (b)))
#define V_EQMASK16(a, b) ((uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi16((a), (b))))
#include "galign_tpl.h"
#undef V_SET16
#undef V_ADDS16
#undef V_MAX16
#undef V_SEL_EQ16
#undef V_EQMASK16
#undef GA_TGT
#undef GA_FN
#undef GA_VB
#undef V_LD
#undef V_ST
#undef V_SET8
#undef V_SET32
#undef V_SET64
#undef V_ZERO
#undef V_MAXU8
#undef V_SUB8
#undef V_SEL_EQ8
#undef V_SELM
#undef V_AND
#undef V_OR
#undef V_XOR
#undef V_ANDNOT
#undef V_ADD64
#undef V_SRL64
#undef V_SLL64
#undef V_ADD32
#undef V_MAX32
#undef V_SEL_EQ32
#undef V_EQMASK32
#undef GA_PUTMASK
#undef GA_K
#undef GA_K2
#undef GA_ST_F4

/* --- AVX-512 (F, BW): 64 bytes, 8 words of 64 bits, 16 of 32 ---------------- */
#define GA_TGT __attribute__((target("avx512f,avx512bw")))
#define GA_FN(x) x##_avx512
#define GA_VB 64
typedef __m512i ga_v512;
#define ga_v ga_v512
#define V_LD(p) _mm512_load_si512((const void *)(p))
#define V_ST(p, v) _mm512_store_si512((void *)(p), (v))
#define V_SET8(x) _mm512_set1_epi8((char)(x))
#define V_SET32(x) _mm512_set1_epi32(x)
#define V_SET64(x) _mm512_set1_epi64(x)
#define V_ZERO() _mm512_setzero_si512()
#define V_MAXU8 _mm512_max_epu8
#define V_SUB8 _mm512_sub_epi8
#define V_SEL_EQ8(a, b, x, y) _mm512_mask_blend_epi8(_mm512_cmpeq_epi8_mask((a), (b)), (y), (x))
#define V_SELM(mk, x, y) _mm512_mask_blend_epi8(_mm512_movepi8_mask(mk), (y), (x))
#define V_AND _mm512_and_si512
#define V_OR _mm512_or_si512
#define V_XOR _mm512_xor_si512
#define V_ANDNOT _mm512_andnot_si512
#define V_ADD64 _mm512_add_epi64
#define V_SRL64 _mm512_srli_epi64
#define V_SLL64 _mm512_slli_epi64
#define V_ADD32 _mm512_add_epi32
#define V_MAX32 _mm512_max_epi32
#define V_SEL_EQ32(a, b, x, y) _mm512_mask_blend_epi32(_mm512_cmpeq_epi32_mask((a), (b)), (y), (x))
#define V_EQMASK32(a, b) ((unsigned)_mm512_cmpeq_epi32_mask((a), (b)))
#define GA_PUTMASK(p, x) do { uint16_t x16_ = (uint16_t)(x); memcpy((p), &x16_, 2); } while (0)
#define V_SET16(x) _mm512_set1_epi16((short)(x))
#define V_ADDS16 _mm512_adds_epi16
#define V_MAX16 _mm512_max_epi16
#define V_SEL_EQ16(a, b, x, y) _mm512_mask_blend_epi16(_mm512_cmpeq_epi16_mask((a), (b)), (y), (x))
#define V_EQMASK16(a, b) ((uint32_t)_mm512_cmpeq_epi16_mask((a), (b)))
#include "galign_tpl.h"

#endif /* GA_X86 */

int ga_simd_best(void)
{
#ifdef GA_X86
	if (sp_cpu_has(SP_CPU_AVX512F | SP_CPU_AVX512BW))
		return GALIGN_SIMD_AVX512;
	if (sp_cpu_has(SP_CPU_AVX2))
		return GALIGN_SIMD_AVX2;
#endif
	return GALIGN_SIMD_OFF;
}

int ga_simd_lanes(int kind, int edit)
{
	int vb = kind == GALIGN_SIMD_AVX512 ? 64 : kind == GALIGN_SIMD_AVX2 ? 32 : 0;

	return vb ? (edit ? vb / 8 : vb) : 1;
}

/* The kernels of galign_tpl.h for one instruction set. */
typedef struct {
	void (*lin)(const galign_scores_t *, const uint8_t *, uint32_t, const uint8_t *const *,
			const uint32_t *, int, ga_scratch_t *, int32_t *);
	void (*lin_pairs)(const galign_scores_t *, const uint8_t *const *, const uint32_t *,
			const uint8_t *const *, const uint32_t *, int, ga_scratch_t *, int32_t *);
	void (*edit)(const uint8_t *, uint32_t, const uint8_t *const *, const uint32_t *, int,
			ga_scratch_t *, int32_t *);
	void (*fill[2])(const galign_scores_t *, const uint8_t *const *, const uint32_t *,
			const uint8_t *const *, const uint32_t *, const int *, uint32_t, int, ga_scratch_t *,
			uint8_t *, int32_t *);   /* 32-bit lanes, 16-bit lanes (narrow) */
} ga_kernels_t;

#ifdef GA_X86
static const ga_kernels_t ga_avx2 = {
	ga_lin_avx2, ga_lin_pairs_avx2, ga_edit_avx2, { ga_fill_avx2, ga_fill16_avx2 }
};
static const ga_kernels_t ga_avx512 = {
	ga_lin_avx512, ga_lin_pairs_avx512, ga_edit_avx512, { ga_fill_avx512, ga_fill16_avx512 }
};
#endif

/* The kernels of KIND, NULL when this build or CPU has none. */
static const ga_kernels_t *ga_kernels(int kind)
{
#ifdef GA_X86
	if (kind == GALIGN_SIMD_AVX512)
		return &ga_avx512;
	if (kind == GALIGN_SIMD_AVX2)
		return &ga_avx2;
#endif
	(void)kind;
	return NULL;
}

int ga_simd_score(int kind, const galign_scores_t *sc, const uint8_t *q, uint32_t m,
		const uint8_t *const *t, const uint32_t *n, int nt, ga_scratch_t *s, int32_t *out)
{
	const ga_kernels_t *k = ga_kernels(kind);

	if (!k)
		return sp_fail("no vector code of kind %d on this CPU", kind);
	if (sc->edit)
		k->edit(q, m, t, n, nt, s, out);
	else
		k->lin(sc, q, m, t, n, nt, s, out);
	return 0;
}

int ga_simd_score_pairs(int kind, const galign_scores_t *sc, const uint8_t *const *q,
		const uint32_t *m, const uint8_t *const *t, const uint32_t *n, int nt, ga_scratch_t *s,
		int32_t *out)
{
	const ga_kernels_t *k = ga_kernels(kind);

	if (!k || sc->edit)
		return sp_fail("no vector code of kind %d for unrelated pairs", kind);
	k->lin_pairs(sc, q, m, t, n, nt, s, out);
	return 0;
}

int ga_simd_fill_lanes(int kind, int narrow)
{
	int l = kind == GALIGN_SIMD_AVX512 ? 16 : kind == GALIGN_SIMD_AVX2 ? 8 : 0;

	return narrow ? 2 * l : l;
}

int ga_simd_fill_maskbits(int kind, int narrow)
{
	return narrow ? 32 : ga_simd_fill_lanes(kind, 0);
}

size_t ga_simd_fill_bytes(int kind, int narrow, uint32_t mmax, uint32_t w)
{
	return (size_t)mmax * w * 3 * (size_t)(ga_simd_fill_maskbits(kind, narrow) / 8) + 8;
}

int ga_simd_fill(int kind, int narrow, const galign_scores_t *sc, const uint8_t *const *q,
		const uint32_t *m, const uint8_t *const *t, const uint32_t *n, const int *dlo,
		uint32_t w, int np, ga_scratch_t *s, uint8_t *bits, int32_t *hmn)
{
	const ga_kernels_t *k = ga_kernels(kind);

	if (!k)
		return sp_fail("no vector code of kind %d on this CPU", kind);
	k->fill[narrow != 0](sc, q, m, t, n, dlo, w, np, s, bits, hmn);
	return 0;
}
