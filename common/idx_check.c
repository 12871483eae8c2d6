/*
 * idx_check.c - the load-time checks of an index's partitions and section
 * checksums, run in parallel (sp_for): the same verdicts and the same
 * message as one pass over the arrays in order, on every core.
 *
 * A partition's arrays are cut into slices (positions, red.grp groups,
 * SeedBlocks); each slice is checked on its own and sets a bit per kind of
 * defect in a shared word, and the defect reported is the first kind in the
 * order a single pass checks them.  A slice reads only what its own bounds
 * checks allow, so a damaged start list never leads a slice outside a
 * section, whatever the other slices find.
 */
#include "idx_priv.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "inc_bdz.h"
#include "inc_idx.h"
#include "sp_csum.h"
#include "sp_thread.h"
#include "util.h"

/* Defects, in the order they are reported (the lowest bit set wins; bit k
 * is the message what[k] of idx_check_part). */
enum {
	BAD_POS = 1,         /* red.pos: a position out of range */
	BAD_RSTART = 2,      /* red.start not non-decreasing from 0 to n_uniq */
	BAD_GRP = 4,         /* red.grp / red.rep inconsistent */
	BAD_KEYS = 8,        /* red.nb: a block's keys not strictly increasing below 4^l */
	BAD_BSTART = 16,     /* blk.start not non-decreasing from 0 to n_slots */
	BAD_BSIZE = 32,      /* blk.start disagrees with red.start */
	BAD_RANK = 64,       /* blk.rank: an index out of its block */
	BAD_ROFF = 128       /* blk.roff not each block's rank words from 0 to the total */
};

/*
 * Items of each kind per thread (about: a slice holds at least MIN_SLICE
 * elements), so that the threads that end first take over the others' last
 * slices.
 */
#define SLICES_PER_THREAD 16
#define MIN_SLICE 64

typedef struct {
	const idx_part_t *pt;
	int block;                  /* the blk.* structures are there */
	uint64_t nc;                /* SeedBlocks */
	uint64_t len;               /* positions below this */
	uint64_t mask;              /* keys below 4^l */
	uint64_t ng;                /* red.grp groups */
	uint64_t pos_slice, grp_slice, blk_slice;   /* elements per work item */
	uint64_t npos, ngrp;        /* work items of each kind; the rest are SeedBlock slices */
	_Atomic unsigned bad;
} part_ck_t;

static void flag(part_ck_t *c, unsigned bits)
{
	if (bits)
		atomic_fetch_or_explicit(&c->bad, bits, memory_order_relaxed);
}

/* Positions [lo, hi) of red.pos below the partition's seed starts. */
static unsigned ck_pos(const part_ck_t *c, uint64_t lo, uint64_t hi)
{
	const uint32_t *a = c->pt->red_pos;
	uint64_t i, lim = c->len;
	unsigned over = 0;

	for (i = lo; i < hi; i++)
		over |= a[i] >= lim;
	return over ? BAD_POS : 0;
}

/*
 * red.grp groups [lo, hi): the compact first positions (kernels/inc_idx.h)
 * make nbpos[0] = 0, nbpos[j + 1] > nbpos[j] and nbpos[n_uniq] = n_occ.  One
 * pass in order would carry (extra, x) from group to group and compare each
 * group's stored pair with it; here each group starts from its own stored
 * pair and must produce the next group's (group 0's is (0, 0), the last
 * must end at n_rep and n_occ), which by induction is the same condition.
 */
static unsigned ck_grp(const part_ck_t *c, uint64_t lo, uint64_t hi)
{
	const idx_part_t *pt = c->pt;
	uint64_t ng = c->ng, g;

	for (g = lo; g < hi; g++) {
		const uint32_t *e = pt->red_grp + 4 * g;
		uint64_t fl = (uint64_t)e[2] | (uint64_t)e[3] << 32, left = pt->n_uniq - 64 * g, k, n;
		uint64_t x = e[1], extra = e[0];
		uint32_t prev = 0;

		if ((g == 0 && (x != 0 || extra != 0)) || x > pt->n_rep || extra > pt->n_occ
				|| (left < 64 && (fl >> left) != 0))
			return BAD_GRP;
		n = (uint64_t)__builtin_popcountll(fl);
		if (n > pt->n_rep - x)
			return BAD_GRP;
		for (k = 0; k < n; k++) {
			if (pt->red_rep[x + k] <= prev)
				return BAD_GRP;
			prev = pt->red_rep[x + k];
		}
		x += n;
		extra += prev;
		if (extra > pt->n_occ)
			return BAD_GRP;
		if (g + 1 < ng) {
			if (e[4] != extra || e[5] != x)
				return BAD_GRP;
		} else if (x != pt->n_rep || pt->n_uniq + extra != pt->n_occ) {
			return BAD_GRP;
		}
	}
	return 0;
}

/* Keys [lo, hi) strictly increasing and below 4^l (MASK); KEY(j) the j-th key. */
#define KEYS_OK(KEY, lo, hi, mask, ok) do { \
		uint64_t j_, bits_ = (KEY(lo)) & ~(mask); \
		unsigned down_ = 0; \
		for (j_ = (lo) + 1; j_ < (hi); j_++) { \
			bits_ |= (KEY(j_)) & ~(mask); \
			down_ |= (KEY(j_ - 1)) >= (KEY(j_)); \
		} \
		(ok) = !bits_ && !down_; \
	} while (0)

/*
 * SeedBlocks [lo, hi): red.start (and blk.start) non-decreasing there and
 * within their totals (so the keys and slots read are in their sections),
 * each block's keys sorted, its slot count, its rank words (blk.roff: the
 * block's slots at its width, inside blk.rank) and its slots' ranks.
 */
static unsigned ck_blocks(const part_ck_t *c, uint64_t lo, uint64_t hi)
{
	const idx_part_t *pt = c->pt;
	const uint32_t *rs = pt->red_start, *bs = pt->blk_start, *ro = pt->blk_roff;
	unsigned bad = 0, wd;
	uint64_t b;

	for (b = lo; b < hi; b++) {
		uint64_t s = rs[b], e = rs[b + 1];
		int ok;

		if (s > e || e > pt->n_uniq) {
			bad |= BAD_RSTART;
			continue;
		}
		if (e > s) {
			if (pt->red_nb32) {
#define K32(j) ((uint64_t)pt->red_nb32[j])
				KEYS_OK(K32, s, e, c->mask, ok);
#undef K32
			} else {
#define K64(j) (pt->red_nb[j])
				KEYS_OK(K64, s, e, c->mask, ok);
#undef K64
			}
			if (!ok)
				bad |= BAD_KEYS;
		}
	}
	if (!c->block)
		return bad;
	for (b = lo; b < hi; b++) {
		uint64_t sl;

		if (bs[b] > bs[b + 1] || bs[b + 1] > pt->n_slots) {
			bad |= BAD_BSTART;
			continue;
		}
		if (bs[b + 1] - bs[b] != 3 * bdz_part_size(rs[b + 1] - rs[b])) {
			bad |= BAD_BSIZE;
			continue;
		}
		/* the block's ranks: the words of M slots at its width, in blk.rank */
		wd = idx_rank_width(rs[b + 1] - rs[b]);
		if (ro[b] > ro[b + 1] || ro[b + 1] > pt->n_rank_words
				|| ro[b + 1] - ro[b] != ((bs[b + 1] - bs[b]) * (uint64_t)wd + 31) / 32) {
			bad |= BAD_ROFF;
			continue;
		}
		for (sl = 0; sl < bs[b + 1] - bs[b]; sl++)
			if (idx_rank_get(pt->blk_rank + ro[b], wd, sl) >= rs[b + 1] - rs[b]) {
				bad |= BAD_RANK;
				break;
			}
	}
	return bad;
}

/* Elements per work item for N of them on NTHREADS threads. */
static uint64_t slice(uint64_t n, int nthreads)
{
	uint64_t k = n / ((uint64_t)(nthreads > 0 ? nthreads : 1) * SLICES_PER_THREAD);

	return k > MIN_SLICE ? k : MIN_SLICE;
}

static int part_item(void *ctx, size_t i, int tid)
{
	part_ck_t *c = ctx;
	uint64_t lo, hi;

	(void)tid;
	if (i < c->npos) {
		lo = (uint64_t)i * c->pos_slice;
		hi = c->pt->n_occ - lo > c->pos_slice ? lo + c->pos_slice : c->pt->n_occ;
		flag(c, ck_pos(c, lo, hi));
	} else if ((i -= c->npos) < c->ngrp) {
		lo = (uint64_t)i * c->grp_slice;
		hi = c->ng - lo > c->grp_slice ? lo + c->grp_slice : c->ng;
		flag(c, ck_grp(c, lo, hi));
	} else {
		lo = (uint64_t)(i - c->ngrp) * c->blk_slice;
		hi = c->nc - lo > c->blk_slice ? lo + c->blk_slice : c->nc;
		flag(c, ck_blocks(c, lo, hi));
	}
	return 0;
}

int idx_check_part(const idx_t *x, uint32_t i, int nthreads, char *msg, size_t n)
{
	const idx_part_t *pt = &x->part[i];
	part_ck_t c;
	uint64_t len = pt->end - pt->beg, nitems;
	unsigned bad;
	char why[160];

	/* a position is the start of a seed (span bases) in the partition,
	 * and owned by it (a partition that cuts a sequence owns the starts of
	 * whole windows only: idx_build.c) */
	len = len >= x->p.span ? len - x->p.span + 1 : 0;
	if (x->own_end[i] - pt->beg < len)
		len = x->own_end[i] - pt->beg;

	c.pt = pt;
	c.block = (x->p.structs & IDX_S_BLOCK) != 0;
	c.nc = 1ULL << (2 * x->p.w);
	c.len = len;
	c.mask = idx_mask2(x->p.l);
	c.ng = pt->n_uniq / 64 + 1;
	c.pos_slice = slice(pt->n_occ, nthreads);
	c.grp_slice = slice(c.ng, nthreads);
	c.blk_slice = slice(c.nc, nthreads);
	c.npos = pt->red_pos ? (pt->n_occ + c.pos_slice - 1) / c.pos_slice : 0;
	c.ngrp = pt->red_start ? (c.ng + c.grp_slice - 1) / c.grp_slice : 0;
	atomic_init(&c.bad, 0);
	if (pt->red_start && (pt->red_start[0] != 0 || pt->red_start[c.nc] != pt->n_uniq))
		flag(&c, BAD_RSTART);
	if (c.block && (pt->blk_start[0] != 0 || pt->blk_start[c.nc] != pt->n_slots))
		flag(&c, BAD_BSTART);
	if (c.block && pt->blk_roff[0] != 0)
		flag(&c, BAD_ROFF);
	/* the slices of the SeedBlocks check red.start's order, which the
	 * structures need: with blk.* there is red.*, and without red.* the
	 * index holds no SeedBlock structures */
	nitems = c.npos + c.ngrp + (pt->red_start ? (c.nc + c.blk_slice - 1) / c.blk_slice : 0);
	if (nitems)
		(void)sp_for(nthreads, (size_t)nitems, 1, part_item, &c);
	bad = atomic_load(&c.bad);
	if (bad) {
		/* the message of each defect bit, lowest first */
		static const char *const what[] = {
			"section 'red.pos' of partition %u holds a position out of range",
			"section 'red.start' of partition %u is inconsistent",
			"section 'red.grp' or 'red.rep' of partition %u is inconsistent",
			"section 'red.nb' of partition %u is not sorted within a SeedBlock",
			"section 'blk.start' of partition %u is inconsistent",
			"section 'blk.start' of partition %u disagrees with 'red.start'",
			"section 'blk.rank' of partition %u holds an index out of its block",
			"section 'blk.roff' of partition %u is inconsistent",
		};

		snprintf(msg, n, what[__builtin_ctz(bad)], i);
	} else if ((x->p.structs & IDX_S_FM) && fm_check(&pt->fm, why, sizeof why) != 0) {
		snprintf(msg, n, "FM-index sections of partition %u are inconsistent: %s", i, why);
	} else {
		return 0;
	}
	return -1;
}

typedef struct {
	const idx_t *x;
	const uint32_t *which;       /* section numbers to check */
	uint8_t *bad;                /* per entry of WHICH */
} sums_ck_t;

static int sum_item(void *ctx, size_t i, int tid)
{
	sums_ck_t *c = ctx;
	const idx_sec_t *s = (const idx_sec_t *)c->x->secs + c->which[i];

	(void)tid;
	c->bad[i] = SP_SUM_BAD(XXH3_64bits_withSeed(s->data, (size_t)s->len, c->x->fingerprint), s->xxh3);
	return 0;
}

/* A section to hash: its size first, so that the largest are hashed first. */
typedef struct {
	uint64_t len;
	uint32_t sec;
} sum_job_t;

static int by_len_desc(const void *a, const void *b)
{
	const sum_job_t *p = a, *q = b;

	if (p->len != q->len)
		return p->len < q->len ? 1 : -1;
	return (p->sec > q->sec) - (p->sec < q->sec);
}

int64_t idx_sums_first_bad(const idx_t *x, uint32_t part, int nthreads)
{
	const idx_sec_t *secs = x->secs;
	sum_job_t *job = sp_malloc((x->n_sections ? x->n_sections : 1) * sizeof *job);
	uint32_t *which;
	uint8_t *bad;
	uint64_t i, n = 0;
	int64_t first = -1;
	sums_ck_t c;

	for (i = 0; i < x->n_sections; i++)
		if (part == IDX_SUMS_ALL || secs[i].part == part) {
			job[n].len = secs[i].len;
			job[n++].sec = (uint32_t)i;
		}
	qsort(job, n, sizeof *job, by_len_desc);
	which = sp_malloc((n ? n : 1) * sizeof *which);
	for (i = 0; i < n; i++)
		which[i] = job[i].sec;
	bad = sp_calloc(n ? n : 1, 1);
	c.x = x;
	c.which = which;
	c.bad = bad;
	if (n)
		(void)sp_for(nthreads, (size_t)n, 1, sum_item, &c);
	/* the first section in file order whose sum is wrong */
	for (i = 0; i < n; i++)
		if (bad[i] && (first < 0 || which[i] < (uint64_t)first))
			first = which[i];
	free(bad);
	free(which);
	free(job);
	return first;
}
