/*
 * bpr.c - host side of mflBPR: block-mask tables, SeedBlock scans and the
 * dynamic-programming reference the tests compare with.
 */
#include <string.h>

#include "bpr.h"

void bpr_pat_init(bpr_pat_t *bp, uint64_t q, uint32_t v, uint32_t l, uint32_t e)
{
	uint32_t b[4], c, g, x;

	bp->v = v;
	bp->e = e;
	bp->l = l;
	bp->h = idx_stripe_h(l);
	bp->ng = bpr_ngroups(bp->h);
	for (c = 0; c < 4; c++)
		b[c] = bpr_bmask(q, v, c);
	for (g = 0; g < bp->ng; g++) {
		uint32_t k = bp->h - 4 * g, n = k >= 4 ? 256 : 1u << (2 * k);

		for (x = 0; x < n; x++)
			bp->tab[BPR_GROUP * g + x] = bpr_tab_entry(b[0], b[1], b[2], b[3],
					v, bp->h, g, x);
	}
}

size_t bpr_scan(const bpr_pat_t *bp, const uint64_t *words, uint64_t n, uint32_t *out)
{
	uint64_t nw = (n + bp->h - 1) / bp->h, k;
	size_t m = 0;

	for (k = 0; k < nw; k++) {
		uint32_t hit = bpr_word(words[k], bp->h, bp->l, bp->v, bp->e, bp->tab);
		uint64_t base = k * bp->h;

		if (n - base < bp->h)
			hit &= (1u << (n - base)) - 1;
		while (hit) {
			int r = __builtin_ctz(hit);

			out[m++] = (uint32_t)(base + (uint32_t)r);
			hit &= hit - 1;
		}
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
