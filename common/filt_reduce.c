/*
 * filt_reduce.c - the candidates of a read from its matches (filt_finish):
 * the keys (part, diagonal, strand) sorted by merging their sorted runs or
 * by radix sort, equal keys reduced to one candidate with its support, and
 * the cap (-c) that keeps the best supported.
 */
#include <stdlib.h>
#include <string.h>

#include "filt_priv.h"
#include "util.h"

/* LSD radix sort of N >= 64 keys of BITS bits (filt_sort_keys); returns A or T. */
static uint64_t *radix_keys(uint64_t *a, uint64_t *t, size_t n, int bits)
{
	size_t cnt[1 << 11], i, cost, best = (size_t)-1, nb, mask;
	int p, w, d, best_p = 1, best_w = bits;

	for (d = 4; d <= 11; d++) {
		p = (bits + d - 1) / d;
		w = (bits + p - 1) / p;
		cost = (size_t)p * (4 * n + ((size_t)1 << w));
		if (cost < best)
			best = cost, best_p = p, best_w = w;
	}
	nb = (size_t)1 << best_w;
	mask = nb - 1;
	for (p = 0; p < best_p; p++) {
		int sh = p * best_w;
		size_t sum = 0, j;
		uint64_t *s;

		memset(cnt, 0, nb * sizeof *cnt);
		for (i = 0; i < n; i++)
			cnt[(a[i] >> sh) & mask]++;
		if (cnt[(a[0] >> sh) & mask] == n)
			continue;           /* every key has this digit */
		for (j = 0; j < nb; j++) {
			size_t x = cnt[j];

			cnt[j] = sum;
			sum += x;
		}
		for (i = 0; i < n; i++)
			t[cnt[(a[i] >> sh) & mask]++] = a[i];
		s = a, a = t, t = s;
	}
	return a;
}

/* Insertion sort of A[0..N); 0 once it has moved keys more than LIMIT places (A then a permutation). */
static int insertion_keys(uint64_t *a, size_t n, size_t limit)
{
	size_t i, moved = 0;

	for (i = 1; i < n; i++) {
		uint64_t k = a[i];
		size_t j = i;

		for (; j > 0 && a[j - 1] > k; j--)
			a[j] = a[j - 1];
		a[j] = k;
		moved += i - j;
		if (moved > limit)
			return 0;
	}
	return 1;
}

/*
 * filt_sort_keys: N keys (each <= MAX) of A sorted, T (room for N) the
 * scratch; returns A or T, the one that holds them.  A read has a few
 * hundred keys spread over the reference, so below 2048 keys one pass
 * scatters them by their top floor(log2 N) + 1 bits (a bucket a key or
 * fewer on average) and an insertion sort finishes, moving each key a few
 * places; keys that crowd into few buckets (a read of a repeat) make it
 * stop after 4N moves, and the radix sort takes them.  Otherwise an LSD
 * radix sort whose digit width fits N: P passes of W = ceil(bits / P) bits
 * cost about P * (4N + 2^W) steps (a count and a scatter per key, the
 * counters cleared and summed), so 28-bit keys take 4 passes of 7 bits
 * where 11-bit digits would clear and sum 2048 counters a pass; a digit
 * every key shares is skipped.  Measured on random 28-bit keys (2-core
 * machine, user s for 2e8 keys, bench/RESULTS.md filt21-key-sort): 300 keys
 * a sort 3.60 s with 3 passes of 11 bits, 1.61 s by the fitted radix; 343
 * keys 1.66-1.72 s by the fitted radix, 1.10 s by the buckets.
 */
uint64_t *filt_sort_keys(uint64_t *a, uint64_t *t, size_t n, uint64_t max)
{
	int bits = 64 - (max ? __builtin_clzll(max) : 63);

	if (n < 64) {
		insertion_keys(a, n, (size_t)-1);
		return a;
	}
	if (n < 2048) {
		size_t cnt[1 << 11], nb, i, sum = 0;
		int d = 64 - __builtin_clzll(n), sh;

		d = d > bits ? bits : d;
		sh = bits - d;
		nb = (size_t)1 << d;
		memset(cnt, 0, nb * sizeof *cnt);
		for (i = 0; i < n; i++)
			cnt[a[i] >> sh]++;
		for (i = 0; i < nb; i++) {
			size_t x = cnt[i];

			cnt[i] = sum;
			sum += x;
		}
		for (i = 0; i < n; i++)
			t[cnt[a[i] >> sh]++] = a[i];
		if (insertion_keys(t, n, 4 * n))
			return t;
		return radix_keys(t, a, n, bits);
	}
	return radix_keys(a, t, n, bits);
}

/* Merge sorted A (NA keys) and B (NB keys) into OUT, from the front. */
static void merge_fwd(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, uint64_t *out)
{
	const uint64_t *ae = a + na, *be = b + nb;

	while (a < ae && b < be) {
		uint64_t x = *a, y = *b;
		int t = y < x;

		*out++ = t ? y : x;
		b += t;
		a += !t;
	}
	if (a < ae)
		memcpy(out, a, (size_t)(ae - a) * sizeof *a);
	else if (b < be)
		memcpy(out, b, (size_t)(be - b) * sizeof *b);
}

/*
 * Merge sorted A (NA keys) and B (NB keys, a few) into OUT with a branch
 * per key of A, which runs of A make predictable.
 */
static void merge_few(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, uint64_t *out)
{
	const uint64_t *ae = a + na;
	size_t j;

	for (j = 0; j < nb; j++) {
		uint64_t y = b[j];

		while (a < ae && *a <= y)
			*out++ = *a++;
		*out++ = y;
	}
	if (a < ae)
		memcpy(out, a, (size_t)(ae - a) * sizeof *a);
}

/* Merge A and B into OUT: merge_few when one is much shorter, else merge_fwd. */
static void merge_tail(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, uint64_t *out)
{
	if (nb * 8 < na)
		merge_few(a, na, b, nb, out);
	else if (na * 8 < nb)
		merge_few(b, nb, a, na, out);
	else
		merge_fwd(a, na, b, nb, out);
}

/*
 * Merge sorted A (NA keys) and B (NB keys) into OUT.  A branchless merge
 * waits on each load for the comparison that chose its address; merging
 * from both ends at once runs two such chains side by side.  The front
 * takes the smallest keys (A's first on a tie), the back the largest
 * (B's first on a tie); for min(NA, NB, half) steps neither can run out
 * or meet the other, and the middle left is merged from the front.
 */
static void merge2(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, uint64_t *out)
{
	size_t s = (na + nb) / 2, i, ia = 0, ib = 0, ja = na, jb = nb, o = 0, ob = na + nb;

	if (s > na)
		s = na;
	if (s > nb)
		s = nb;
	for (i = 0; i < s; i++) {   /* ja, jb: ends of what is left */
		uint64_t x = a[ia], y = b[ib], u = a[ja - 1], v = b[jb - 1];
		size_t t = y < x, w = u > v;

		out[o++] = t ? y : x;
		ib += t;
		ia += !t;
		out[--ob] = w ? u : v;
		ja -= w;
		jb -= !w;
	}
	merge_tail(a + ia, ja - ia, b + ib, jb - ib, out + o);
}

/*
 * Sort A (RUN[NR - 1] keys in NR sorted runs, run i ending at RUN[i]) by
 * merging neighbouring runs pairwise, T as scratch; returns A or T, the
 * one holding the result.  RUN is overwritten.
 */
static uint64_t *merge_runs(uint64_t *a, uint64_t *t, size_t *run, size_t nr)
{
	while (nr > 1) {
		size_t i, m = 0, beg = 0;
		uint64_t *s;

		for (i = 0; i + 1 < nr; i += 2) {
			size_t mid = run[i], end = run[i + 1];

			merge2(a + beg, mid - beg, a + mid, end - mid, t + beg);
			run[m++] = end;
			beg = end;
		}
		if (i < nr) {
			memcpy(t + beg, a + beg, (run[i] - beg) * sizeof *a);
			run[m++] = run[i];
		}
		nr = m;
		s = a, a = t, t = s;
	}
	return a;
}

/* The largest support first, then as rec_cand_cmp. */
static int cmp_sup(const void *pa, const void *pb)
{
	const rec_cand_t *a = pa, *b = pb;

	if (a->support != b->support)
		return a->support > b->support ? -1 : 1;
	return rec_cand_cmp(pa, pb);
}

uint32_t filt_finish(filt_ws_t *ws, rec_cand_t **out, filt_stats_t *st)
{
	const idx_t *x = ws->x;
	uint64_t maxk = 0, *key = ws->key;
	size_t n, k, beg;
	uint32_t i;

	*out = ws->out;
	n = ws->n_key;
	if (n == 0) {
		st->no_cand++;
		return 0;
	}
	if (n > ws->cap_tmp) {
		ws->cap_tmp = ws->cap_key > n ? ws->cap_key : n;
		free(ws->tmp);
		ws->tmp = sp_malloc(ws->cap_tmp * sizeof *ws->tmp);
	}
	if (n > ws->cap_out) {
		ws->cap_out = n;
		ws->out = sp_realloc(ws->out, n * sizeof *ws->out);
	}
	*out = ws->out;
	if (!ws->unsorted && (ws->n_run <= 64 || n < 4096)) {
		key = merge_runs(key, ws->tmp, ws->run, ws->n_run);
	} else {
		for (k = 0; k < n; k++)
			maxk |= key[k];
		key = filt_sort_keys(key, ws->tmp, n, maxk);
	}
	/*
	 * Reduce: every key writes its candidate at out[i]; i moves on after
	 * the last key of a run of equal keys (no branch on the runs).
	 */
	for (k = 0, i = 0, beg = 0; k < n; k++) {
		rec_cand_t *cd = &ws->out[i];
		uint64_t kk = key[k];
		uint32_t part = KEY_PART(kk), last = k + 1 == n || key[k + 1] != kk;
		const idx_part_t *pt = &x->part[part];

		cd->part = part;
		cd->pos = KEY_DIAG(kk);
		cd->strand = (uint8_t)KEY_STRAND(kk);
		cd->support = (uint32_t)(k + 1 - beg);
		cd->seq_id = pt->end_seq - pt->first_seq <= 1 ? pt->first_seq
			: filt_seq_of(x, pt, pt->beg + cd->pos);
		i += last;
		beg = last ? k + 1 : beg;
	}
	i = filt_cap(ws->out, i, ws->o.cap, st);
	st->cands += i;
	return i;
}

uint32_t filt_cap(rec_cand_t *c, uint32_t n, uint32_t cap, filt_stats_t *st)
{
	if (!cap || n <= cap)
		return n;
	st->capped_reads++;
	st->capped_dropped += n - cap;
	qsort(c, n, sizeof *c, cmp_sup);
	qsort(c, cap, sizeof *c, rec_cand_cmp);
	return cap;
}
