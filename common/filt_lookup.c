/*
 * filt_lookup.c - the lookups that bs and ph (with and without -a) share:
 * the words of a Hamming ball and the BDZ slots of many words (AVX-512 where the CPU has
 * it; the slots, and so the output, are the same either way).
 */
#include <stdint.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>   /* bdz_slots_x8 */
#endif

#include "filt_priv.h"
#include "inc_filt.h"
#include "util.h"

/*
 * filt_degen_words: every word within Hamming distance E of Q (V bases),
 * each once, into WD; returns their count, degen_ball(V, E).  These are exactly
 * the words of the canonical items of inc_degen.h (the kernels enumerate
 * them by item index; the order differs, which changes nothing: the matches
 * are sorted).  Here each word costs one xor: position p gets letter
 * q[p] ^ d, d = 1..3, for every set of at most e positions (e <= 3).
 */
uint32_t filt_degen_words(uint64_t *wd, uint64_t q, uint32_t v, uint32_t e)
{
	uint32_t k = 0, p1, p2, p3;
	uint64_t d1, d2, d3;

	wd[k++] = q;
	if (e < 1)
		return k;
	for (p1 = 0; p1 < v; p1++)
		for (d1 = 1; d1 < 4; d1++) {
			uint64_t w1 = q ^ d1 << (2 * p1);

			wd[k++] = w1;
			if (e < 2)
				continue;
			for (p2 = p1 + 1; p2 < v; p2++)
				for (d2 = 1; d2 < 4; d2++) {
					uint64_t w2 = w1 ^ d2 << (2 * p2);

					wd[k++] = w2;
					if (e < 3)
						continue;
					for (p3 = p2 + 1; p3 < v; p3++)
						for (d3 = 1; d3 < 4; d3++)
							wd[k++] = w2 ^ d3 << (2 * p3);
				}
		}
	return k;
}

#if defined(__x86_64__) && defined(__GNUC__)

/* fmix64 of 8 lanes (bdz_fmix64). */
__attribute__((target("avx512f,avx512dq")))
static inline __m512i fmix64_x8(__m512i k)
{
	k = _mm512_xor_si512(k, _mm512_srli_epi64(k, 33));
	k = _mm512_mullo_epi64(k, _mm512_set1_epi64((long long)0xff51afd7ed558ccdULL));
	k = _mm512_xor_si512(k, _mm512_srli_epi64(k, 33));
	k = _mm512_mullo_epi64(k, _mm512_set1_epi64((long long)0xc4ceb9fe1a85ec53ULL));
	return _mm512_xor_si512(k, _mm512_srli_epi64(k, 33));
}

/* g values of the 8 vertices V (u64 lanes): 2 bits of the aligned u32 holding byte v/4. */
__attribute__((target("avx512f,avx512dq")))
static inline __m512i g_x8(const uint8_t *g, __m512i v)
{
	__m512i w = _mm512_srli_epi64(v, 4), sh;
	__m512i d = _mm512_cvtepu32_epi64(_mm512_i64gather_epi32(w, (const void *)g, 4));

	sh = _mm512_slli_epi64(_mm512_and_si512(v, _mm512_set1_epi64(15)), 1);
	return _mm512_and_si512(_mm512_srlv_epi64(d, sh), _mm512_set1_epi64(3));
}

/*
 * bdz_slots for 8 words at a time with AVX-512 (the same integer
 * arithmetic, so the same slots); the last group is padded with whatever
 * words follow in the buffer (their slots lie in the block too, and are not
 * used).  Reads g as the aligned 32-bit words that
 * hold the wanted bytes (little-endian: byte v/4 is bits 8*((v/4)&3) of
 * u32 v/16, so g(v) is at bit 2*(v&15)); an aligned word never crosses a
 * page, and the index pads its sections to 64 bytes.
 */
__attribute__((target("avx512f,avx512dq")))
static uint32_t bdz_slots_x8(const uint64_t *wd, uint32_t nw, uint32_t seed, uint32_t base,
		uint32_t r, const uint8_t *g, uint32_t *slot)
{
	const __m512i sm = _mm512_set1_epi64((long long)((uint64_t)seed * 0x9e3779b97f4a7c15ULL));
	const __m512i s2 = _mm512_set1_epi64((long long)(0x632be59bd9b4e019ULL + seed));
	const __m512i rr = _mm512_set1_epi64(r), lo32 = _mm512_set1_epi64(0xffffffffLL);
	const __m512i b0 = _mm512_set1_epi64(base), b1 = _mm512_set1_epi64((long long)base + r);
	const __m512i b2 = _mm512_set1_epi64((long long)base + 2 * (long long)r);
	uint32_t k;

	for (k = 0; k < nw; k += 8) {   /* the buffers hold 8 more (filt_ws_new) */
		__m512i a = fmix64_x8(_mm512_xor_si512(_mm512_loadu_si512((const void *)(wd + k)), sm));
		__m512i b = fmix64_x8(_mm512_add_epi64(a, s2));
		__m512i v0 = _mm512_add_epi64(b0, _mm512_srli_epi64(_mm512_mul_epu32(a, rr), 32));
		__m512i v1 = _mm512_add_epi64(b1, _mm512_srli_epi64(
				_mm512_mul_epu32(_mm512_srli_epi64(a, 32), rr), 32));
		__m512i v2 = _mm512_add_epi64(b2, _mm512_srli_epi64(_mm512_mul_epu32(b, rr), 32));
		__m512i sum = _mm512_add_epi64(_mm512_add_epi64(g_x8(g, v0), g_x8(g, v1)), g_x8(g, v2));
		/* (sum mod 3), sum <= 9: 0x24924 holds it 2 bits per value */
		__m512i pick = _mm512_and_si512(_mm512_srlv_epi64(_mm512_set1_epi64(0x24924),
				_mm512_slli_epi64(sum, 1)), _mm512_set1_epi64(3));
		__mmask8 is1 = _mm512_cmpeq_epi64_mask(pick, _mm512_set1_epi64(1));
		__mmask8 is2 = _mm512_cmpeq_epi64_mask(pick, _mm512_set1_epi64(2));
		__m512i v = _mm512_mask_blend_epi64(is2, _mm512_mask_blend_epi64(is1, v0, v1), v2);

		_mm256_storeu_si256((__m256i *)(void *)(slot + k),
				_mm512_cvtepi64_epi32(_mm512_and_si512(v, lo32)));
	}
	return nw;
}
#endif

int filt_bdz_simd(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
	return sp_cpu_has(SP_CPU_AVX512F | SP_CPU_AVX512DQ) && sp_simd_allowed();
#else
	return 0;
#endif
}

/*
 * filt_bdz_slots: the BDZ slots (partition-wide) of the NW words WD in the
 * block at BASE with part size R and SEED (bdz_slots_x8 when SIMD): SLOT[k] = base + bdz_slot(...) as in
 * filt_bdz_find, computed without branches (the vertex is picked by index,
 * (g0 + g1 + g2) mod 3 from a 2-bit table) and out of line, so the loop
 * keeps its values in registers.
 */
__attribute__((noinline))
void filt_bdz_slots(const uint64_t *wd, uint32_t nw, uint32_t seed, uint32_t base,
		uint32_t r, const uint8_t *g, uint32_t *slot, int simd)
{
	/* (s mod 3) for s = 0..9 at bits 2s..2s+1 */
	const uint32_t mod3 = 0 | 1 << 2 | 2 << 4 | 0 << 6 | 1 << 8 | 2 << 10
		| 0 << 12 | 1 << 14 | 2 << 16 | 0 << 18;
	uint32_t k = 0;

#if defined(__x86_64__) && defined(__GNUC__)
	if (simd && ((uintptr_t)g & 3) == 0)
		k = bdz_slots_x8(wd, nw, seed, base, r, g, slot);
#endif
	for (; k < nw; k++) {
		bdz_hash_t hh = bdz_hash(wd[k], seed);
		uint32_t v[3], s;

		v[0] = base + bdz_vertex(hh, r, 0u);
		v[1] = base + bdz_vertex(hh, r, 1u);
		v[2] = base + bdz_vertex(hh, r, 2u);
		s = bdz_g_get(g[v[0] >> 2], v[0] & 3u) + bdz_g_get(g[v[1] >> 2], v[1] & 3u)
			+ bdz_g_get(g[v[2] >> 2], v[2] & 3u);
		slot[k] = v[(mod3 >> (2 * s)) & 3];
	}
}
