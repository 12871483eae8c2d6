/*
 * bpr.c - host side of mflBPR: block-mask tables, SeedBlock scans and the
 * dynamic-programming reference the tests compare with.
 */
#include <string.h>

#include "bpr.h"

void bpr_pat_init(bpr_pat_t *bp, uint64_t q, uint32_t v, uint32_t l, uint32_t e)
{
	uint32_t b[4] = { 0, 0, 0, 0 }, i, g;

	bp->v = v;
	bp->e = e;
	bp->l = l;
	bp->h = idx_stripe_h(l);
	bp->ng = bpr_ngroups(bp->h);
	for (i = 0; i < v; i++)   /* bpr_bmask for the four letters at once */
		b[(q >> (2 * i)) & 3] |= 1u << i;
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

size_t bpr_scan(const bpr_pat_t *bp, const uint64_t *words, uint64_t n, uint32_t *out)
{
	switch (bp->e) {
	case 0: return scan_e0(bp, words, n, out);
	case 1: return scan_e1(bp, words, n, out);
	case 2: return scan_e2(bp, words, n, out);
	case 3: return scan_e3(bp, words, n, out);
	}
	return scan_any(bp, words, n, out);
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
