/*
 * filt_mplan_test.c - seedfilt -M's planner (filt_mplan) against a brute-force
 * oracle on random inputs: every way of cutting the partitions into
 * consecutive groups is tried, its batch the largest the memory allows,
 * and the planner's cost must be the least of them; its plan must fit the
 * budget and cover every partition once, in order.  The candidates store
 * (filt_store) against a plain array: what goes in comes out, whatever
 * spills to the file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filt.h"
#include "util.h"
#include "tap.h"
#include "testutil.h"

/* The least model cost over all 2^(n-1) groupings (0 if none fits: *ok = 0). */
static double brute(const filt_mplan_in_t *in, const uint64_t *s, uint32_t n, int *ok)
{
	uint64_t tot = 0, avail = in->mem > in->resident ? in->mem - in->resident : 0;
	uint32_t mask, i;
	double best = 0;

	*ok = 0;
	for (i = 0; i < n; i++)
		tot += s[i];
	if (avail >= tot + in->per_read) {
		*ok = 1;
		return 0;   /* loaded once */
	}
	for (mask = 0; mask < (1u << (n - 1)); mask++) {
		uint64_t cur = 0, mx = 0, b;
		uint32_t g = 1;
		double t;

		for (i = 0; i < n; i++) {
			if (i > 0 && (mask >> (i - 1) & 1)) {
				g++;
				cur = 0;
			}
			cur += s[i];
			if (cur > mx)
				mx = cur;
		}
		if (avail < mx + in->per_read)
			continue;
		b = (avail - mx) / in->per_read;
		if (in->max_batch && b > in->max_batch)
			b = in->max_batch;
		t = filt_mplan_cost(in, tot, b, g);
		if (!*ok || t < best)
			best = t;
		*ok = 1;
	}
	return best;
}

static void test_plan(void)
{
	uint64_t st = 4242;
	int round, ok_cost = 1, ok_fit = 1, ok_cover = 1, ok_fail = 1, n_multi = 0;

	for (round = 0; round < 3000; round++) {
		uint32_t n = 1 + (uint32_t)(tu_xorshift64(&st) % 11), i, g;
		uint64_t s[12], tot = 0, smax = 0, avail;
		filt_mplan_in_t in;
		filt_mplan_t pl;
		int ok, r;
		double want;

		for (i = 0; i < n; i++) {
			s[i] = 1 + tu_xorshift64(&st) % (round % 3 ? 1000 : 100000);
			tot += s[i];
			smax = s[i] > smax ? s[i] : smax;
		}
		memset(&in, 0, sizeof in);
		in.resident = tu_xorshift64(&st) % 5000;
		in.per_read = 1 + tu_xorshift64(&st) % 64;
		in.mem = in.resident + tu_xorshift64(&st) % (tot + tot / 2 + 2);
		in.max_batch = round % 4 ? 0 : 1 + tu_xorshift64(&st) % 200;
		in.load_bps = 1e3 * (double)(1 + tu_xorshift64(&st) % 1000);
		in.pass_s = round % 5 ? 1e-6 * (double)(tu_xorshift64(&st) % 100) : 0;
		want = brute(&in, s, n, &ok);
		r = filt_mplan(&in, s, n, &pl);
		if (!ok) {
			ok_fail &= r < 0 && strstr(sp_errmsg(), "too small") != NULL;
			continue;
		}
		if (r < 0) {
			ok_fail = 0;
			continue;
		}
		if (pl.cost > want * (1 + 1e-9) + 1e-15) {
			if (ok_cost)
				tap_diag("round %d: plan cost %g, oracle %g", round, pl.cost, want);
			ok_cost = 0;
		}
		avail = in.mem - in.resident;
		/* groups: consecutive, cover all, each within chunk; chunk + batch fit */
		if (pl.gbeg[0] != 0 || pl.gbeg[pl.n_groups] != n)
			ok_cover = 0;
		for (g = 0; g < pl.n_groups; g++) {
			uint64_t sum = 0;

			if (pl.gbeg[g + 1] <= pl.gbeg[g])
				ok_cover = 0;
			for (i = pl.gbeg[g]; i < pl.gbeg[g + 1] && i < n; i++)
				sum += s[i];
			if (sum > pl.chunk)
				ok_fit = 0;
		}
		if (pl.batch < 1 || pl.chunk + pl.batch * in.per_read > avail
				|| (in.max_batch && pl.batch > in.max_batch))
			ok_fit = 0;
		n_multi += pl.n_groups > 1;
		filt_mplan_free(&pl);
	}
	tap_ok(ok_cost, "plan: cost equals the brute-force least cost over all groupings");
	tap_ok(ok_fit, "plan: the chunk and the batch fit the budget");
	tap_ok(ok_cover, "plan: groups are consecutive and cover every partition");
	tap_ok(ok_fail, "plan: refused (\"too small\") exactly when no grouping fits");
	tap_ok(n_multi > 100, "plan: %d rounds made several groups", n_multi);
}

static void test_store(void)
{
	uint64_t st = 99;
	int round, ok = 1, ok_spill = 0;

	for (round = 0; round < 40; round++) {
		int nt = 1 + (int)(tu_xorshift64(&st) % 4), t, k;
		size_t mem = sizeof(rec_cand_t) * (1 + tu_xorshift64(&st) % 50);
		filt_store_t *s = filt_store_new(nt, mem, NULL);
		int pass;

		for (pass = 0; pass < 2; pass++) {
			enum { N = 300 };
			uint64_t off[N];
			uint32_t cnt[N];
			int tid[N];
			rec_cand_t *want[N], got[64];

			filt_store_reset(s);
			for (k = 0; k < N; k++) {
				uint32_t i;

				t = (int)(tu_xorshift64(&st) % (uint64_t)nt);
				cnt[k] = (uint32_t)(tu_xorshift64(&st) % 64);
				tid[k] = t;
				want[k] = sp_calloc(cnt[k] + 1, sizeof(rec_cand_t));
				for (i = 0; i < cnt[k]; i++) {
					want[k][i].part = (uint32_t)k;
					want[k][i].pos = (uint32_t)tu_xorshift64(&st);
					want[k][i].support = i;
				}
				if (filt_store_put(s, t, want[k], cnt[k], &off[k]) < 0)
					ok = 0;
			}
			for (k = N - 1; k >= 0; k--) {
				memset(got, 0xff, sizeof got);
				if (filt_store_get(s, tid[k], off[k], cnt[k], got) < 0
						|| memcmp(got, want[k], cnt[k] * sizeof *got) != 0)
					ok = 0;
				free(want[k]);
			}
		}
		ok_spill |= filt_store_spilled(s) > 0;
		filt_store_free(s);
	}
	tap_ok(ok, "store: every list comes back as put, from memory or the file");
	tap_ok(ok_spill, "store: some rounds spilled to the file");
}

int main(void)
{
	test_plan();
	test_store();
	return tap_done();
}
