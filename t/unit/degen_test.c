/*
 * degen_test.c - degenerate patterns by item index (kernels/inc_degen.h)
 * against a Hamming scan: for random words, the canonical items of the
 * SP x SC grid produce every word within Hamming distance e exactly once and
 * nothing else; L_Pos holds every e-subset once, in order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "degen.h"
#include "inc_idx.h"
#include "tap.h"
#include "testutil.h"

static uint64_t rng = 0x2545f4914f6cdd1dULL;

static uint64_t rnd(void)
{
	return tu_xorshift64(&rng);
}

static uint32_t ham(uint64_t a, uint64_t b, uint32_t v)
{
	uint64_t x = (a ^ b) & idx_mask2(v);

	x = (x | x >> 1) & 0x5555555555555555ULL;
	return (uint32_t)__builtin_popcountll(x);
}

static int cmp64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(void)
{
	uint32_t v, e;
	static uint32_t lpos[40000];

	/* L_Pos for v = 4, e = 2: the thesis's figure 3.5 (6 pairs) */
	{
		uint64_t n = degen_lpos(4, 2, lpos);
		int ok = n == 6 && lpos[0] == (0 | 1 << 5) && lpos[5] == (2 | 3 << 5);

		tap_ok(ok, "L_Pos(v=4, e=2) = (0,1) (0,2) (0,3) (1,2) (1,3) (2,3)");
		tap_ok(degen_n_items(4, 2) == 96 && degen_n_items(16, 3) == 35840,
				"grid sizes |SP| x |SC| of table 3.2");
	}
	for (v = 1; v <= 32; v += (v < 8 ? 1 : 5)) {
		for (e = 0; e <= 3 && e <= v; e++) {
			uint64_t nl = degen_lpos(v, e, lpos), i, items = nl << (2 * e);
			int bad = 0, it;

			/* every subset sorted, distinct */
			for (i = 0; i < nl; i++) {
				uint32_t k;

				for (k = 1; k < e; k++)
					bad |= degen_lpos_at(lpos[i], k) <= degen_lpos_at(lpos[i], k - 1);
				for (k = 0; k < e; k++)
					bad |= degen_lpos_at(lpos[i], k) >= v;
				if (i)
					bad |= lpos[i] == lpos[i - 1];
			}
			for (it = 0; it < 3 && !bad; it++) {
				uint64_t q = rnd() & idx_mask2(v), n, ball = degen_ball(v, e), j;
				uint64_t *got = malloc((ball + 1) * sizeof *got);
				uint32_t cnt = 0;

				for (n = 0; n < items; n++) {
					uint32_t sp = degen_item_sp((uint32_t)n, e);
					uint32_t sc = degen_item_sc((uint32_t)n, e);
					uint64_t w = degen_word(q, lpos[sp], sc, e);

					if (ham(w, q, v) > e || (w & ~idx_mask2(v)))
						bad = 1;
					if (degen_canonical(q, lpos[sp], sc, e)) {
						if (cnt > ball) {
							bad = 1;
							break;
						}
						got[cnt++] = w;
					}
				}
				if (cnt != ball) {
					tap_diag("v=%u e=%u: %u canonical items, ball %llu", v, e, cnt,
							(unsigned long long)ball);
					bad = 1;
				} else {
					qsort(got, cnt, sizeof *got, cmp64);
					for (j = 1; j < cnt; j++)
						bad |= got[j] == got[j - 1];
					/* brute force: count the ball directly for small v */
					if (v <= 8) {
						uint64_t x, nb = 0;

						for (x = 0; x <= idx_mask2(v); x++)
							nb += ham(x, q, v) <= e;
						bad |= nb != cnt;
					}
				}
				free(got);
			}
			tap_ok(!bad, "v=%u e=%u: %llu items, canonical ones = Hamming ball of %llu",
					v, e, (unsigned long long)items,
					(unsigned long long)degen_ball(v, e));
		}
	}
	return tap_done();
}
