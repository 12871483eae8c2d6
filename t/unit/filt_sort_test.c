/*
 * filt_sort_test.c - filt_sort_keys (seedfilt's sort of a read's candidate
 * keys) against qsort on random inputs: every size around the insertion
 * sort's limit and the digit widths' changes, keys of 1 to 64 bits, keys
 * with few distinct values, keys sharing their low or high digits (the
 * skipped passes), an already sorted and a reversed input, and keys
 * crowded into one bucket of the small sort (its insertion sort gives up).  The sorted
 * keys must be the input's, in order, in the array it returns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filt.h"
#include "util.h"
#include "tap.h"
#include "testutil.h"

static int cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

/* Sort K (N keys) both ways; 1 if filt_sort_keys gives qsort's order. */
static int check(const uint64_t *k, size_t n)
{
	uint64_t *a = sp_malloc((n + 1) * sizeof *a), *t = sp_malloc((n + 1) * sizeof *t);
	uint64_t *want = sp_malloc((n + 1) * sizeof *want), *got, max = 0;
	size_t i;
	int ok;

	for (i = 0; i < n; i++)
		max |= k[i];
	memcpy(a, k, n * sizeof *a);
	memcpy(want, k, n * sizeof *want);
	qsort(want, n, sizeof *want, cmp_u64);
	got = filt_sort_keys(a, t, n, max);
	ok = (got == a || got == t) && (n == 0 || memcmp(got, want, n * sizeof *got) == 0);
	free(a);
	free(t);
	free(want);
	return ok;
}

int main(void)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 63, 64, 65, 100, 127, 128, 300, 343, 1000, 2047,
		2048, 4096, 5000, 20000, 100000 };
	uint64_t s = 0x9e3779b97f4a7c15ULL, *k = sp_malloc(100000 * sizeof *k);
	size_t si, i;
	int bits, bad = 0, runs = 0;

	/* random keys of every width, every size */
	for (si = 0; si < sizeof sizes / sizeof *sizes; si++)
		for (bits = 1; bits <= 64; bits += (sizes[si] > 5000 ? 9 : 1)) {
			uint64_t m = bits == 64 ? ~0ULL : ((uint64_t)1 << bits) - 1;

			for (i = 0; i < sizes[si]; i++)
				k[i] = tu_xorshift64(&s) & m;
			bad += !check(k, sizes[si]);
			runs++;
		}
	tap_ok(!bad, "random keys, %d sizes x widths 1..64 (%d sets, %d wrong)",
			(int)(sizeof sizes / sizeof *sizes), runs, bad);

	/* few distinct values; shared low digits; shared high digits */
	bad = runs = 0;
	for (si = 0; si < sizeof sizes / sizeof *sizes; si++) {
		size_t n = sizes[si];

		for (i = 0; i < n; i++)
			k[i] = (tu_xorshift64(&s) % 3) << 40 | 7;
		bad += !check(k, n);
		for (i = 0; i < n; i++)
			k[i] = (tu_xorshift64(&s) & 0xffffff) << 20 | 0x5a5a5;
		bad += !check(k, n);
		for (i = 0; i < n; i++)
			k[i] = (uint64_t)5 << 33 | (tu_xorshift64(&s) & 0x3ffffff) << 1 | (i & 1);
		bad += !check(k, n);
		for (i = 0; i < n; i++)
			k[i] = 0x123456789ULL;
		bad += !check(k, n);
		runs += 4;
	}
	tap_ok(!bad, "keys sharing digits or values (%d sets, %d wrong)", runs, bad);

	/* sorted and reversed */
	bad = 0;
	for (i = 0; i < 100000; i++)
		k[i] = (uint64_t)i * 977 + (i & 3);
	bad += !check(k, 100000);
	for (i = 0; i < 100000; i++)
		k[i] = (uint64_t)(100000 - i) << 30;
	bad += !check(k, 100000);
	tap_ok(!bad, "sorted and reversed input (%d wrong)", bad);

	/* the buckets' insertion sort over its budget: keys crowded into one bucket, reversed
	 * (the radix sort takes over), and crowded keys in random order */
	bad = runs = 0;
	for (si = 0; si < sizeof sizes / sizeof *sizes; si++) {
		size_t n = sizes[si];

		for (i = 0; i < n; i++)
			k[i] = (uint64_t)1 << 40 | (uint64_t)(n - i) << 3;
		bad += !check(k, n);
		for (i = 0; i < n; i++)
			k[i] = (uint64_t)1 << 40 | (tu_xorshift64(&s) & 0xffff);
		bad += !check(k, n);
		runs += 2;
	}
	tap_ok(!bad, "keys crowded into one bucket (%d sets, %d wrong)", runs, bad);
	free(k);
	return tap_done();
}
