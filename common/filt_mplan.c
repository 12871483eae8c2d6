/*
 * filt_mplan.c - seedfilt -M: how many reads to buffer and which partitions
 * to load together when the index does not fit the memory budget.
 *
 * The cost model (after Drozd 2014, ch. 3, who splits a GPU's memory
 * between index chunks and reads; written here for any memory, host or
 * device, in our own terms):
 *
 *   M    the budget (bytes);  G  what stays whatever the plan (the global
 *        sections: names, offsets, packed reference; workspaces);
 *   S_i  the bytes of partition i;  I = sum S_i;
 *   r    the bytes one buffered read takes (its text, its record, its
 *        candidates between passes, times the batches in flight);
 *   B    reads per batch;  C  the bytes of the largest group of partitions
 *        loaded at once (a "pass" maps the whole batch against one group);
 *   g(C) the number of groups when consecutive partitions are packed
 *        greedily into groups of at most C bytes;
 *   beta the rate at which a partition is loaded (bytes per second: the
 *        disk, or the host-to-device link);
 *   tau  the fixed cost of one more pass for one read (seconds: its
 *        patterns cut again, its candidates stored and gathered).
 *
 *   Memory:  G + C + B r <= M, C >= max S_i.
 *   Each batch loads every partition once (I bytes), so a read pays
 *   I / (beta B) for loading, and tau for each of the g(C) passes:
 *
 *       t(B, C) = I / (beta B) + g(C) tau.
 *
 *   For a given C the largest batch is best: B(C) = (M - G - C) / r, so
 *
 *       t(C) = I r / (beta (M - G - C)) + g(C) tau.
 *
 *   The first term grows with C (the chunk takes the reads' room), the
 *   second falls with it (fewer passes).  With g(C) ~ I / C (ignoring the
 *   rounding), dt/dC = 0 at I r / (beta (M - G - C)^2) = I tau / C^2, i.e.
 *
 *       C* / (M - G - C*) = sqrt(beta tau / r):
 *
 *   index chunk and reads share the free memory in the ratio
 *   sqrt(beta tau / r).  A slow load (small beta) or a cheap pass (small
 *   tau) leaves more to the reads; large reads (r) leave more to the chunk.
 *   g(C) is a step function, so rather than round C* the planner tries,
 *   for every group count k, the smallest C that makes k groups (C_k), and
 *   keeps the k of least t(C_k) (the fewer passes on a tie).
 *
 *   When the whole index fits beside a batch (G + I + r <= M), it is loaded
 *   once for the whole run: its cost per read tends to zero, and this plan
 *   (one group) beats every other.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filt.h"
#include "util.h"

/* Greedy groups of consecutive partitions of at most CAP bytes (each S_i <= CAP). */
static uint32_t groups(const uint64_t *s, uint32_t n, uint64_t cap, uint32_t *beg)
{
	uint64_t cur = 0;
	uint32_t g = 0, i;

	for (i = 0; i < n; i++) {
		if (i == 0 || cur + s[i] > cap) {
			if (beg)
				beg[g] = i;
			g++;
			cur = 0;
		}
		cur += s[i];
	}
	if (beg)
		beg[g] = n;
	return g;
}

/* The smallest capacity in [LO, HI] that makes at most K groups. */
static uint64_t min_cap(const uint64_t *s, uint32_t n, uint32_t k, uint64_t lo, uint64_t hi)
{
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (groups(s, n, mid, NULL) <= k)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static void mib(char *b, size_t n, uint64_t v)
{
	if (v < (1 << 20))
		snprintf(b, n, "%.1f KiB", (double)v / 1024);
	else if (v < (1ULL << 30))
		snprintf(b, n, "%.1f MiB", (double)v / (1 << 20));
	else
		snprintf(b, n, "%.2f GiB", (double)v / (1ULL << 30));
}

double filt_mplan_cost(const filt_mplan_in_t *in, uint64_t index_bytes, uint64_t batch,
		uint32_t n_groups)
{
	if (batch == 0)
		return 1e300;
	return (double)index_bytes / (in->load_bps * (double)batch) + n_groups * in->pass_s;
}

int filt_mplan(const filt_mplan_in_t *in, const uint64_t *s, uint32_t n, filt_mplan_t *pl)
{
	uint64_t tot = 0, smax = 0, avail, best_b = 0, best_c = 0;
	uint32_t i, k, best_g = 0, smax_i = 0;
	double best = 0;
	char a[32], b[32], c[32];

	memset(pl, 0, sizeof *pl);
	for (i = 0; i < n; i++) {
		tot += s[i];
		if (s[i] > smax) {
			smax = s[i];
			smax_i = i;
		}
	}
	avail = in->mem > in->resident ? in->mem - in->resident : 0;
	/* the whole index once, beside a batch */
	if (avail >= tot + in->per_read && (!in->fixed_batch || avail >= tot + in->fixed_batch * in->per_read)) {
		pl->all_in = 1;
		pl->n_groups = n ? 1 : 0;
		pl->gbeg = sp_calloc(2, sizeof *pl->gbeg);
		pl->gbeg[1] = n;
		pl->chunk = tot;
		pl->batch = in->fixed_batch ? in->fixed_batch : (avail - tot) / in->per_read;
		if (in->max_batch && pl->batch > in->max_batch)
			pl->batch = in->max_batch;
		pl->cost = 0;
		snprintf(pl->why, sizeof pl->why, "the index (%u partitions) fits the budget beside a batch: loaded once",
				n);
		return 0;
	}
	if (avail < smax + in->per_read * (in->fixed_batch ? in->fixed_batch : 1)) {
		mib(a, sizeof a, in->mem);
		mib(b, sizeof b, in->resident);
		mib(c, sizeof c, smax);
		return sp_fail("a memory budget of %s is too small: the reference and workspaces take %s "
				"and partition %u alone %s, with no room left for reads (give at least -M %lluK, "
				"or index the reference in smaller partitions: seqidx -p)",
				a, b, smax_i, c, (unsigned long long)((in->resident + smax
						+ in->per_read * (in->fixed_batch ? in->fixed_batch : 1)) / 1024 + 1));
	}
	for (k = 2; k <= n; k++) {
		uint64_t cap = min_cap(s, n, k, smax, tot), bt;
		uint32_t g;
		double t;

		if (avail < cap + in->per_read)
			continue;
		g = groups(s, n, cap, NULL);
		bt = in->fixed_batch ? in->fixed_batch : (avail - cap) / in->per_read;
		if (in->max_batch && bt > in->max_batch)
			bt = in->max_batch;
		if (in->fixed_batch && avail < cap + bt * in->per_read)
			continue;
		t = filt_mplan_cost(in, tot, bt, g);
		if (best_g == 0 || t < best || (t == best && g < best_g)) {
			best = t;
			best_g = g;
			best_b = bt;
			best_c = cap;
		}
		if (cap == smax)
			break;   /* no smaller chunk: more groups cannot help */
	}
	if (best_g == 0)
		return sp_fail("no plan fits the memory budget");   /* not reached: k = n fits */
	pl->n_groups = best_g;
	pl->gbeg = sp_calloc((size_t)best_g + 1, sizeof *pl->gbeg);
	groups(s, n, best_c, pl->gbeg);
	pl->batch = best_b;
	pl->chunk = best_c;
	pl->cost = best;
	mib(a, sizeof a, tot);
	mib(b, sizeof b, avail);
	mib(c, sizeof c, best_c);
	snprintf(pl->why, sizeof pl->why, "the index (%s in %u partitions) does not fit the %s left "
			"beside the reference: %u passes of at most %s per batch of %llu reads (cost model: "
			"%.3g us per read)", a, n, b, best_g, c, (unsigned long long)best_b, best * 1e6);
	return 0;
}

void filt_mplan_free(filt_mplan_t *pl)
{
	free(pl->gbeg);
	pl->gbeg = NULL;
}
