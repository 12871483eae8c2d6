/*
 * idx_check_test.c - the parallel load-time checks of an index
 * (idx_check.c) against a plain serial oracle: random small indexes of
 * every structure, damaged one array element at a time in the arrays the
 * checks cover (red.pos, red.start, red.nb, red.grp, red.rep, blk.start,
 * blk.rank, blk.roff), give the same verdict and the same message on 1 to 8
 * threads; and the parallel section checksums name the first damaged
 * section in file order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "idx.h"
#include "idx_priv.h"
#include "inc_bdz.h"
#include "inc_idx.h"
#include "idx_oracle.h"
#include "tap.h"
#include "testutil.h"
#include "util.h"

static uint64_t rng_s = 0x2545f4914f6cdd1dULL;

static uint64_t rnd(void)
{
	return tu_xorshift64(&rng_s);
}

static uint64_t rndn(uint64_t n) { return n ? rnd() % n : 0; }

/* ---- the oracle: each condition checked in one pass, in order ---------- */

static int o_mono(const uint32_t *start, uint64_t n, uint64_t last)
{
	uint64_t i;

	if (start[0] != 0 || start[n] != last)
		return 0;
	for (i = 0; i < n; i++)
		if (start[i] > start[i + 1])
			return 0;
	return 1;
}

static int o_keys(const idx_part_t *pt, uint64_t lo, uint64_t hi, uint64_t mask)
{
	uint64_t j;

	for (j = lo; j < hi; j++)
		if ((idx_red_key(pt, j) & ~mask) || (j > lo && idx_red_key(pt, j - 1) >= idx_red_key(pt, j)))
			return 0;
	return 1;
}

/* Walk the groups carrying (extra, x) from the start. */
static int o_nbpos(const idx_part_t *pt)
{
	uint64_t ng = pt->n_uniq / 64 + 1, g, x = 0, extra = 0;

	for (g = 0; g < ng; g++) {
		const uint32_t *e = pt->red_grp + 4 * g;
		uint64_t fl = (uint64_t)e[2] | (uint64_t)e[3] << 32, left = pt->n_uniq - 64 * g, k, n = 0;
		uint32_t prev = 0;

		if (e[0] != extra || e[1] != x || (left < 64 && (fl >> left) != 0))
			return 0;
		for (k = 0; k < 64; k++)
			n += fl >> k & 1;
		if (n > pt->n_rep - x)
			return 0;
		for (k = 0; k < n; k++) {
			if (pt->red_rep[x + k] <= prev)
				return 0;
			prev = pt->red_rep[x + k];
		}
		x += n;
		extra += prev;
		if (extra > pt->n_occ)
			return 0;
	}
	return x == pt->n_rep && pt->n_uniq + extra == pt->n_occ;
}

/* Block C's entry of blk.roff: its words (M slots at its width), inside blk.rank. */
static int o_roff(const idx_part_t *pt, uint64_t c)
{
	uint64_t m = pt->blk_start[c + 1] - pt->blk_start[c];
	uint64_t bits = m * o_width(pt->red_start[c + 1] - pt->red_start[c]);

	return pt->blk_roff[c] <= pt->blk_roff[c + 1] && pt->blk_roff[c + 1] <= pt->n_rank_words
		&& pt->blk_roff[c + 1] - pt->blk_roff[c] == (bits + 31) / 32;
}

static int oracle(const idx_t *x, uint32_t i, char *msg, size_t n)
{
	const idx_part_t *pt = &x->part[i];
	uint64_t nc = 1ULL << (2 * x->p.w), c, j, len = pt->end - pt->beg;
	char why[160];

	len = len >= x->p.span ? len - x->p.span + 1 : 0;
	if (x->own_end[i] - pt->beg < len)
		len = x->own_end[i] - pt->beg;
	if (pt->red_pos)
		for (j = 0; j < pt->n_occ; j++)
			if (pt->red_pos[j] >= len) {
				snprintf(msg, n, "section 'red.pos' of partition %u holds a position out of range", i);
				return -1;
			}
	if (pt->red_start) {
		if (!o_mono(pt->red_start, nc, pt->n_uniq)) {
			snprintf(msg, n, "section 'red.start' of partition %u is inconsistent", i);
			return -1;
		}
		if (!o_nbpos(pt)) {
			snprintf(msg, n, "section 'red.grp' or 'red.rep' of partition %u is inconsistent", i);
			return -1;
		}
		for (c = 0; c < nc; c++)
			if (!o_keys(pt, pt->red_start[c], pt->red_start[c + 1], idx_mask2(x->p.l))) {
				snprintf(msg, n, "section 'red.nb' of partition %u is not sorted within a SeedBlock", i);
				return -1;
			}
	}
	if (x->p.structs & IDX_S_BLOCK) {
		if (!o_mono(pt->blk_start, nc, pt->n_slots)) {
			snprintf(msg, n, "section 'blk.start' of partition %u is inconsistent", i);
			return -1;
		}
		for (c = 0; c < nc; c++)
			if (pt->blk_start[c + 1] - pt->blk_start[c]
					!= 3 * bdz_part_size(pt->red_start[c + 1] - pt->red_start[c])) {
				snprintf(msg, n, "section 'blk.start' of partition %u disagrees with 'red.start'", i);
				return -1;
			}
		/* the ranks of the blocks whose blk.roff entry is sound, then blk.roff */
		for (c = 0; c < nc; c++)
			for (j = 0; o_roff(pt, c) && j < pt->blk_start[c + 1] - pt->blk_start[c]; j++)
				if (o_rank(pt, c, j) >= pt->red_start[c + 1] - pt->red_start[c]) {
					snprintf(msg, n, "section 'blk.rank' of partition %u holds an index out of its block", i);
					return -1;
				}
		for (c = 0; c < nc; c++)
			if (pt->blk_roff[0] != 0 || !o_roff(pt, c)) {
				snprintf(msg, n, "section 'blk.roff' of partition %u is inconsistent", i);
				return -1;
			}
	}
	if ((x->p.structs & IDX_S_FM) && fm_check(&pt->fm, why, sizeof why) != 0) {
		snprintf(msg, n, "FM-index sections of partition %u are inconsistent: %s", i, why);
		return -1;
	}
	return 0;
}

/* ---- random indexes ------------------------------------------------------ */

static char *build(uint64_t total, int u, int l, int lowcomplex, uint64_t limit)
{
	char *path = strdup("/tmp/idx_check_test.XXXXXX"), *s = malloc(total + 1), err[128];
	int fd = mkstemp(path);
	idx_ref_t *r = idx_ref_init();
	idx_build_opt_t o = { 2, 0, 0, 0, NULL };
	idx_params_t p;
	uint64_t j;

	for (j = 0; j < total; j++)
		s[j] = j % 997 >= 990 ? 'N' : "ACGT"[lowcomplex ? rndn(2) : rndn(4)];
	if (idx_ref_add(r, "a", s, total / 3) != 0 || idx_ref_add(r, "b", s + total / 3, total - total / 3) != 0)
		sp_or_die(-1);
	if (idx_params_init(&p, NULL, u, l, total, err, sizeof err) != 0)
		sp_die("params: %s", err);
	p.structs = IDX_S_GENERAL | IDX_S_REDUCED | IDX_S_BLOCK | IDX_S_FM;
	if (limit)
		p.part_limit = limit;
	sp_or_die(idx_build(r, &p, &o, fd, path));
	close(fd);
	idx_ref_free(r);
	free(s);
	return path;
}

/* A writable element of one of the checked arrays of PT. */
typedef struct {
	const char *name;
	uint8_t *base;
	uint64_t n;       /* elements */
	int size;         /* bytes per element */
} arr_t;

static int arrays(const idx_part_t *pt, int kb, arr_t *a)
{
	int n = 0;

	a[n++] = (arr_t){ "red.pos", (uint8_t *)(uintptr_t)pt->red_pos, pt->n_occ, 4 };
	a[n++] = (arr_t){ "red.start", (uint8_t *)(uintptr_t)pt->red_start, 0, 4 };
	a[n++] = (arr_t){ "red.nb", kb == 4 ? (uint8_t *)(uintptr_t)pt->red_nb32 : (uint8_t *)(uintptr_t)pt->red_nb,
		pt->n_uniq, kb };
	a[n++] = (arr_t){ "red.grp", (uint8_t *)(uintptr_t)pt->red_grp, (pt->n_uniq / 64 + 1) * 4, 4 };
	a[n++] = (arr_t){ "red.rep", (uint8_t *)(uintptr_t)pt->red_rep, pt->n_rep, 4 };
	a[n++] = (arr_t){ "blk.start", (uint8_t *)(uintptr_t)pt->blk_start, 0, 4 };
	a[n++] = (arr_t){ "blk.rank", (uint8_t *)(uintptr_t)pt->blk_rank, pt->n_rank_words, 4 };
	a[n++] = (arr_t){ "blk.roff", (uint8_t *)(uintptr_t)pt->blk_roff, 0, 4 };
	return n;
}

static uint64_t get(const arr_t *a, uint64_t i)
{
	return a->size == 4 ? (uint64_t)((uint32_t *)a->base)[i] : ((uint64_t *)a->base)[i];
}

static void put(arr_t *a, uint64_t i, uint64_t v)
{
	if (a->size == 4)
		((uint32_t *)a->base)[i] = (uint32_t)v;
	else
		((uint64_t *)a->base)[i] = v;
}

/* Damage A at a random element; undo with the returned old value at *AT (and *AT2). */
static void damage(arr_t *a, uint64_t *at, uint64_t *old, uint64_t *at2, uint64_t *old2)
{
	/* the ends a quarter of the time (the first group, the totals) */
	uint64_t i = rndn(4) ? rndn(a->n) : rndn(2) ? rndn(a->n < 2 ? a->n : 2) : a->n - 1 - rndn(a->n < 2 ? a->n : 2);
	uint64_t v = get(a, i), w;

	*at = i;
	*old = v;
	*at2 = i;
	*old2 = v;
	switch (rndn(7)) {
	case 0: w = v + 1; break;
	case 1: w = v - 1; break;
	case 2: w = rnd(); break;
	case 3: w = 0; break;
	case 4: w = a->size == 4 ? 0xffffffffu : ~0ULL; break;
	case 5: w = v ^ (1ULL << rndn(8 * (uint64_t)a->size)); break;
	default:
		/* swap with the next element */
		if (i + 1 < a->n) {
			*at2 = i + 1;
			*old2 = get(a, i + 1);
			put(a, i + 1, v);
			w = *old2;
		} else {
			w = v + 1;
		}
	}
	put(a, i, w);
}

int main(void)
{
	static const int nts[] = { 1, 2, 3, 8 };
	uint64_t seen = 0, diff = 0, trials = 0;
	int round, kinds = 0;
	char *kind_msg[16] = { NULL };

	sp_set_progname("idx_check_test");
	for (round = 0; round < 12; round++) {
		int u = 3 + (int)rndn(4), l = round % 3 == 2 ? 17 + (int)rndn(16) : 1 + (int)rndn(16), t;
		uint64_t total = 2000 + rndn(20000);
		char *path = build(total, u, l, round % 4 == 1, round % 5 == 4 ? total / 2 : 0), *e = NULL;
		idx_t *x = idx_load(path, IDX_LOAD_READ | IDX_LOAD_NOVERIFY, &e);
		uint32_t pi;
		int ok = 1;

		if (!tap_ok(x != NULL, "round %d: load (u %d, l %d, %llu bases)", round, u, l,
				(unsigned long long)total)) {
			tap_diag("%s", e);
			free(e);
			unlink(path);
			free(path);
			continue;
		}
		for (pi = 0; pi < x->n_part; pi++) {
			const idx_part_t *pt = &x->part[pi];
			uint64_t nc = 1ULL << (2 * x->p.w);
			arr_t a[8];
			int na = arrays(pt, IDX_KEY_BYTES(x->p.l), a), k;
			char want[512], got[512];

			a[1].n = nc + 1;
			a[5].n = nc + 1;
			a[7].n = nc + 1;
			for (t = 0; t < 4; t++)
				ok &= idx_check_part(x, pi, nts[t], got, sizeof got) == 0;
			ok &= oracle(x, pi, want, sizeof want) == 0;
			for (k = 0; k < 300; k++) {
				arr_t *d = &a[rndn((uint64_t)na)];
				uint64_t at, old, at2, old2;
				int rw;

				if (!d->n)
					continue;
				damage(d, &at, &old, &at2, &old2);
				rw = oracle(x, pi, want, sizeof want);
				if (rw == 0)
					want[0] = 0;
				for (t = 0; t < 4; t++) {
					int rg = idx_check_part(x, pi, nts[t], got, sizeof got);

					if (rg == 0)
						got[0] = 0;
					trials++;
					if (rg != rw || strcmp(got, want) != 0) {
						if (diff++ < 5)
							tap_diag("round %d, %s[%llu], %d threads: '%s', the oracle '%s'",
								round, d->name, (unsigned long long)at, nts[t], got, want);
					}
				}
				if (rw) {
					/* the kind of defect: the message but the partition */
					char *p = strstr(want, " of partition "), kind[512];
					int j;

					seen++;
					snprintf(kind, sizeof kind, "%.*s%s", p ? (int)(p - want) : (int)strlen(want), want,
						p ? strchr(p + 14, ' ') ? strchr(p + 14, ' ') : "" : "");
					for (j = 0; j < kinds && strcmp(kind_msg[j], kind) != 0; j++)
						;
					if (j == kinds && kinds < 16)
						kind_msg[kinds++] = strdup(kind);
				}
				put(d, at2, old2);
				put(d, at, old);
			}
		}
		tap_ok(ok, "round %d: the sound index passes on 1, 2, 3, 8 threads and in the oracle", round);
		{
			/* checksums: damage one or two sections' payloads; the
			 * first in file order is named */
			const idx_sec_t *s = x->secs;
			int r2, good = 1;

			good &= idx_sums_first_bad(x, IDX_SUMS_ALL, 3) == -1;
			for (r2 = 0; r2 < 20; r2++) {
				uint64_t i1 = rndn(x->n_sections), i2 = rndn(x->n_sections), o1, o2, first;
				uint8_t *p1, *p2, b1, b2;

				if (!s[i1].len || !s[i2].len)
					continue;
				o1 = rndn(s[i1].len);
				o2 = rndn(s[i2].len);
				p1 = (uint8_t *)(uintptr_t)s[i1].data + o1;
				p2 = (uint8_t *)(uintptr_t)s[i2].data + o2;
				b1 = *p1;
				b2 = *p2;
				*p1 ^= 0x5a;
				if (i2 != i1 || o2 != o1)
					*p2 ^= 0xa5;
				first = i1 < i2 ? i1 : i2;
				good &= idx_sums_first_bad(x, IDX_SUMS_ALL, 1 + (int)rndn(6)) == (int64_t)first;
				good &= idx_sums_first_bad(x, s[i1].part, 4) == (int64_t)(s[i2].part == s[i1].part ? first : i1);
				*p2 = b2;
				*p1 = b1;
			}
			good &= idx_sums_first_bad(x, IDX_SUMS_ALL, 8) == -1;
			tap_ok(good, "round %d: the checksums of %llu sections name the first damaged one", round,
				(unsigned long long)x->n_sections);
		}
		idx_close(x);
		unlink(path);
		free(path);
	}
	tap_ok(diff == 0, "the parallel checks agree with the oracle on %llu damaged indexes x threads (%llu refused)",
		(unsigned long long)trials, (unsigned long long)seen);
	tap_ok(kinds == 8, "the damage reached the %d kinds of defect (8)", kinds);
	for (round = 0; round < kinds; round++) {
		tap_diag("defect: %s", kind_msg[round]);
		free(kind_msg[round]);
	}
	return tap_done();
}
