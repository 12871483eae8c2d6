/*
 * bpr_test.c - mflBPR (kernels/inc_bpr.h) against dynamic programming: for
 * random patterns and striped words of every neighborhood length and error
 * count, the slots bpr_word reports are exactly those whose substring edit
 * distance to the pattern is at most e; bpr_scan agrees on whole blocks.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bpr.h"
#include "seqio.h"
#include "tap.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A random word of L bases, often close to Q (so matches are frequent). */
static uint64_t near_word(uint64_t q, uint32_t v, uint32_t l)
{
	uint64_t t = rnd() & idx_mask2(l);
	uint32_t sh, k, i;

	if (rnd() % 3 == 0)
		return t;
	sh = (uint32_t)(rnd() % (l - v + 1));
	t &= ~(idx_mask2(v) << (2 * sh));
	t |= (q & idx_mask2(v)) << (2 * sh);
	k = (uint32_t)(rnd() % 4);
	for (i = 0; i < k; i++) {
		uint32_t p = (uint32_t)(rnd() % l), op = (uint32_t)(rnd() % 3);

		if (op == 0) {      /* substitution */
			t ^= (uint64_t)(1 + rnd() % 3) << (2 * p);
		} else if (op == 1) { /* delete base p, shift the rest down */
			uint64_t lo = t & idx_mask2(p), hi = p + 1 < l ? t >> (2 * (p + 1)) : 0;

			t = (lo | hi << (2 * p) | (rnd() & 3) << (2 * (l - 1))) & idx_mask2(l);
		} else {            /* insert a base at p */
			uint64_t lo = t & idx_mask2(p), hi = t >> (2 * p);

			t = (lo | (rnd() & 3) << (2 * p) | (p + 1 < 32 ? hi << (2 * (p + 1)) : 0)) & idx_mask2(l);
		}
	}
	return t;
}

int main(void)
{
	uint32_t l, e;
	static bpr_pat_t bp;
	int bad_total = 0;

	/* the example of the thesis, figure 3.3: q = ATC, e = 1 */
	{
		uint64_t q = 0 | 3 << 2 | 1 << 4, w = 0;
		const char *t[4] = { "ATCG", "GGAC", "AGCG", "AGTC" };
		int r, j;

		for (r = 0; r < 4; r++) {
			uint64_t x = 0;

			for (j = 0; j < 4; j++)
				x |= (uint64_t)seqio_nt4[(unsigned char)t[r][j]] << (2 * j);
			w = idx_stripe_put(w, 8, 4, (uint32_t)r, x);
		}
		bpr_pat_init(&bp, q, 3, 4, 1);
		tap_ok(bpr_word(w, 8, 4, 3, 1, bp.tab) == 0xf,
				"thesis figure 3.3: all four words match ATC with 1 error");
		bpr_pat_init(&bp, q, 3, 4, 0);
		tap_ok(bpr_word(w, 8, 4, 3, 0, bp.tab) == 0x1,
				"thesis figure 3.3: only ATCG holds ATC exactly");
	}
	for (l = 1; l <= 32; l++) {
		uint32_t h = idx_stripe_h(l);

		for (e = 0; e < l && e <= 6; e++) {
			uint32_t v = l - e, it, bad = 0, nmatch = 0, nslot = 0;

			for (it = 0; it < 300; it++) {
				uint64_t q = rnd() & idx_mask2(v), w = 0, t[32];
				uint32_t r, got, want = 0;

				for (r = 0; r < h; r++) {
					t[r] = near_word(q, v, l);
					w = idx_stripe_put(w, h, l, r, t[r]);
					want |= (uint32_t)(bpr_dp_dist(q, v, t[r], l) <= e) << r;
				}
				bpr_pat_init(&bp, q, v, l, e);
				got = bpr_word(w, h, l, v, e, bp.tab);
				if (got != want && bad++ < 3)
					tap_diag("l=%u e=%u q=%llx w=%llx got %x want %x", l, e,
							(unsigned long long)q, (unsigned long long)w, got, want);
				got = bpr_word_q(w, h, l, v, e, q);
				if (got != want && bad++ < 3)
					tap_diag("bpr_word_q l=%u e=%u got %x want %x", l, e, got, want);
				nmatch += (uint32_t)__builtin_popcount(want);
				nslot += h;
			}
			/* shorter patterns than l - e too */
			for (it = 0; it < 100 && v > 1; it++) {
				uint32_t vv = 1 + (uint32_t)(rnd() % v), r, got, want = 0;
				uint64_t q = rnd() & idx_mask2(vv), w = 0;

				for (r = 0; r < h; r++) {
					uint64_t t = near_word(q, vv, l);

					w = idx_stripe_put(w, h, l, r, t);
					want |= (uint32_t)(bpr_dp_dist(q, vv, t, l) <= e) << r;
				}
				bpr_pat_init(&bp, q, vv, l, e);
				got = bpr_word(w, h, l, vv, e, bp.tab);
				if (got != want && bad++ < 3)
					tap_diag("l=%u e=%u v=%u got %x want %x", l, e, vv, got, want);
			}
			bad_total += bad != 0;
			tap_ok(bad == 0, "l=%u h=%u e=%u: bpr_word (table and masks) equals DP (%u of %u slots match)",
					l, h, e, nmatch, nslot);
		}
	}
	/* bpr_scan on whole blocks with a partial last word */
	{
		uint32_t it, bad = 0;

		for (it = 0; it < 200; it++) {
			uint32_t ll = 1 + (uint32_t)(rnd() % 32), hh = idx_stripe_h(ll);
			uint32_t ee = (uint32_t)(rnd() % (ll < 4 ? ll : 4)), v = ll - ee;
			uint64_t n = rnd() % 70, i, q = rnd() & idx_mask2(v);
			uint64_t words[80] = { 0 };
			uint32_t out[80], want[80];
			size_t m, nw = 0;

			for (i = 0; i < n; i++) {
				uint64_t t = near_word(q, v, ll);

				words[i / hh] = idx_stripe_put(words[i / hh], hh, ll, (uint32_t)(i % hh), t);
				if (bpr_dp_dist(q, v, t, ll) <= ee)
					want[nw++] = (uint32_t)i;
			}
			/* garbage in the unused slots of the last word must be ignored */
			if (n % hh)
				for (i = n % hh; i < hh; i++)
					words[n / hh] = idx_stripe_put(words[n / hh], hh, ll,
							(uint32_t)i, q);
			bpr_pat_init(&bp, q, v, ll, ee);
			m = bpr_scan(&bp, words, n, out);
			if (m != nw) {
				bad++;
				continue;
			}
			for (i = 0; i < m; i++)
				bad += out[i] != want[i];
		}
		tap_ok(bad == 0, "bpr_scan equals DP on 200 random blocks");
	}
	(void)bad_total;
	return tap_done();
}
