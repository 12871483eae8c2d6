/*
 * idx_build.c - build the index structures of each partition and write the
 * index file sequentially (format in idx.h and man/seedpipe-index.5).
 *
 * Per partition: the seed positions (windows) are sorted by seed code with a
 * two-pass radix sort (slices of the positions in parallel, offsets taken in
 * slice order, so the result is in position order whatever the thread
 * count), then sorted per block by (neighborhood, position): the one order
 * of the positions (red.pos) that the unique neighborhoods (red.nb, which
 * the general and reduced structures search) and the BDZ tables (ranks
 * into those) all follow.  Peak memory: about 28 bytes per seed position plus the
 * FM build (5.5 bytes per base), see man/seqidx.1.
 *
 * Threads (sp_thread.h): the partitions' structures are batches of an
 * ordered pipeline (see "driver" below) whose steps build a structure (its
 * parallel parts through sp_for) and write it, so that checksumming and
 * write(2) overlap the building of the next structure, and the FM-index
 * (libdivsufsort, single-threaded) is built beside the others when -t > 1.
 */
#include "idx_priv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "bdz.h"
#include "inc_bdz.h"
#include "inc_idx.h"
#include "sp_le.h"
#include "sp_thread.h"
#include "util.h"

/* ---- sequential writer --------------------------------------------------- */

typedef struct {
	int fd;
	const char *name;
	uint64_t off, fp, n_sections;
} wr_t;

static int wr_raw(wr_t *w, const void *buf, size_t n)
{
	if (sp_write_all(w->fd, buf, n) != 0)
		return sp_fail("cannot write '%s': %s", w->name, strerror(errno));
	w->off += n;
	return 0;
}

/* Write one section: header, payload, zero padding. */
static int wr_section(wr_t *w, const char *name, uint32_t part, uint32_t esize,
		const void *data, uint64_t len)
{
	uint8_t h[IDX_SEC_HDR], pad[IDX_ALIGN];

	memset(h, 0, sizeof h);
	memcpy(h, name, strnlen(name, 15));
	sp_st32(h + 16, part);
	sp_st32(h + 20, esize);
	sp_st64(h + 24, len);
	sp_st64(h + 32, XXH3_64bits_withSeed(data, (size_t)len, w->fp));
	sp_st64(h + 56, XXH3_64bits(h, 56));
	memset(pad, 0, sizeof pad);
	if (wr_raw(w, h, sizeof h) != 0 || (len && wr_raw(w, data, (size_t)len) != 0)
			|| (len % IDX_ALIGN && wr_raw(w, pad, IDX_ALIGN - len % IDX_ALIGN) != 0))
		return -1;
	w->n_sections++;
	return 0;
}

/* ---- windows ------------------------------------------------------------- */

/* A run of window starts [a, a+n) (global coordinates). */
typedef struct {
	uint64_t a, n, cum;  /* cum: windows in earlier runs */
} wrun_t;

typedef struct {
	wrun_t *run;
	size_t n_run, cap;
	uint64_t total;
} wins_t;

static void wins_add(wins_t *ws, uint64_t x, uint64_t y, uint32_t win)
{
	if (y < x + win)
		return;
	if (ws->n_run == ws->cap) {
		ws->cap = ws->cap ? ws->cap * 2 : 64;
		ws->run = sp_realloc(ws->run, ws->cap * sizeof *ws->run);
	}
	ws->run[ws->n_run].a = x;
	ws->run[ws->n_run].n = y - x - win + 1;
	ws->run[ws->n_run].cum = ws->total;
	ws->total += y - x - win + 1;
	ws->n_run++;
}

/* Every window of WIN bases inside partition PR, within one sequence, free of N. */
static void part_windows(const idx_ref_t *r, const idx_prange_t *pr, uint32_t win, wins_t *ws)
{
	uint32_t s;
	uint64_t lo = 0, hi = r->n_nrun;

	memset(ws, 0, sizeof *ws);
	/* first N run ending after pr->beg */
	while (lo < hi) {
		uint64_t mid = (lo + hi) / 2;

		if (r->nrun[2 * mid] + r->nrun[2 * mid + 1] <= pr->beg)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (s = pr->first_seq; s < pr->end_seq; s++) {
		uint64_t x = r->off[s] > pr->beg ? r->off[s] : pr->beg;
		uint64_t y = r->off[s + 1] < pr->end ? r->off[s + 1] : pr->end;
		uint64_t cur = x;

		while (lo < r->n_nrun && r->nrun[2 * lo] < y) {
			uint64_t st = r->nrun[2 * lo], en = st + r->nrun[2 * lo + 1];

			if (en > cur) {
				if (st > cur)
					wins_add(ws, cur, st, win);
				cur = en;
			}
			if (en > y)
				break;  /* the run goes on past this sequence's part */
			lo++;
		}
		if (cur < y)
			wins_add(ws, cur, y, win);
	}
}

/* Index of the run holding window number K. */
static size_t wins_find(const wins_t *ws, uint64_t k)
{
	size_t lo = 0, hi = ws->n_run;

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (ws->run[mid].cum <= k)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}


/* ---- per-window values ----------------------------------------------------- */

static inline uint32_t seed_code(const idx_params_t *p, const uint8_t *pack, uint64_t g)
{
	uint64_t x = idx_ref_word(pack, g);
	uint32_t c = 0, i;

	if (p->w == p->span)
		return (uint32_t)(x & idx_mask2(p->w));
	for (i = 0; i < p->w; i++)
		c |= (uint32_t)((x >> (2 * p->shape_pos[i])) & 3) << (2 * i);
	return c;
}

static inline uint64_t nb_at(const idx_params_t *p, const uint8_t *pack, uint64_t g)
{
	return idx_ref_word(pack, g + p->span) & idx_mask2(p->l);
}


/* ---- build context ------------------------------------------------------------ */

typedef struct tup tup_t;

/* One partition being built; its arrays are freed by the write step that is
 * the last to need them (or by part_free after a failure). */
typedef struct {
	const idx_ref_t *r;
	const idx_params_t *p;
	const idx_prange_t *pr;
	wins_t ws;
	uint64_t n_codes;        /* 4^w */
	int nt, nsl;             /* threads; slices of each parallel pass */
	uint32_t **cnt;          /* per slice counts / offsets of top buckets */
	uint32_t tshift;         /* code >> tshift = top bucket */
	uint64_t n_top;
	uint32_t *top_off;       /* n_top+1 */
	tup_t *tup;
	uint32_t *gen_start, *gen_pos;   /* occurrence index of each block; positions by code */
	/* reduced */
	uint32_t *ucount;        /* per block unique count, becomes red_start */
	uint64_t *red_nb;
	uint32_t *red_nbpos, *red_pos;
	uint64_t n_uniq;
	/* block */
	uint32_t *blk_start, *blk_seed, *blk_rank;
	uint32_t kb;              /* key bytes: IDX_KEY_BYTES(l) */
	uint8_t *blk_g;
	uint64_t n_slots, attempts_total;
	uint32_t part_no;
	/* FM-index */
	fm_build_t fb;
} bctx_t;

/* First code of slice SL of NSL: balanced by the prefix array START. */
static uint64_t slice_code(const uint32_t *start, uint64_t n_codes, size_t sl, int nsl)
{
	uint64_t want = start[n_codes] * (uint64_t)sl / (uint64_t)nsl, lo = 0, hi = n_codes;

	if (sl == (size_t)nsl)
		return n_codes;
	while (lo < hi) {  /* first code whose start >= want */
		uint64_t mid = (lo + hi) / 2;

		if (start[mid] < want)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Sorting the seed positions by code: two stable counting-sort passes, so
 * that every pass touches few buckets at once (cache friendly).  Pass 1:
 * threads over window ranges write (nb, pos, code) tuples into 256 buckets
 * by the top 8 bits of the code (offsets in thread order keep position
 * order); pass 2: threads over buckets sort each by the low bits straight
 * into gen_pos / red_nb and fill gen_start.
 */
struct tup {
	uint64_t nb;
	uint32_t pos, code;
};


/* The windows of slice SL of a partition, in position order, run by run. */
typedef struct {
	const wins_t *ws;
	uint64_t k, k1;     /* windows k..k1-1 are left */
	size_t ri;          /* the run holding window k */
} win_iter_t;

static void win_slice(const bctx_t *b, size_t sl, win_iter_t *it)
{
	it->ws = &b->ws;
	it->k = b->ws.total * sl / (uint64_t)b->nsl;
	it->k1 = b->ws.total * (sl + 1) / (uint64_t)b->nsl;
	it->ri = it->k < it->k1 ? wins_find(&b->ws, it->k) : 0;
}

/* The next piece of a run: window starts [*g, *gend); 0 when none is left. */
static int win_next(win_iter_t *it, uint64_t *g, uint64_t *gend)
{
	const wrun_t *wr;

	if (it->k >= it->k1)
		return 0;
	wr = &it->ws->run[it->ri++];
	*g = wr->a + (it->k - wr->cum);
	*gend = wr->a + wr->n;
	if (*gend - *g > it->k1 - it->k)
		*gend = *g + (it->k1 - it->k);
	it->k += *gend - *g;
	return 1;
}

static int job_count(void *vc, size_t sl, int tid)
{
	bctx_t *b = vc;
	uint32_t *cnt = b->cnt[sl], sh = b->tshift;
	uint64_t g, gend;
	win_iter_t it;

	(void)tid;
	for (win_slice(b, sl, &it); win_next(&it, &g, &gend); )
		for (; g < gend; g++)
			cnt[seed_code(b->p, b->r->pack, g) >> sh]++;
	return 0;
}

static int job_scatter(void *vc, size_t sl, int tid)
{
	bctx_t *b = vc;
	uint32_t *off = b->cnt[sl], sh = b->tshift;
	uint64_t g, gend;
	win_iter_t it;

	(void)tid;
	for (win_slice(b, sl, &it); win_next(&it, &g, &gend); )
		for (; g < gend; g++) {
			uint32_t c = seed_code(b->p, b->r->pack, g);
			tup_t *t = &b->tup[off[c >> sh]++];

			t->code = c;
			t->pos = (uint32_t)(g - b->pr->beg);
			t->nb = nb_at(b->p, b->r->pack, g);
		}
	return 0;
}

static int job_sort2(void *vc, size_t sl, int tid)
{
	bctx_t *b = vc;
	uint64_t t, nlow = 1ULL << b->tshift, i;
	uint64_t t0 = slice_code(b->top_off, b->n_top, sl, b->nsl);
	uint64_t t1 = slice_code(b->top_off, b->n_top, sl + 1, b->nsl);
	uint32_t *cnt = sp_malloc(nlow * sizeof *cnt), mask = (uint32_t)(nlow - 1);

	(void)tid;
	for (t = t0; t < t1; t++) {
		uint64_t s = b->top_off[t], e = b->top_off[t + 1], acc = s;

		memset(cnt, 0, nlow * sizeof *cnt);
		for (i = s; i < e; i++)
			cnt[b->tup[i].code & mask]++;
		for (i = 0; i < nlow; i++) {
			uint32_t x = cnt[i];

			b->gen_start[(t << b->tshift) + i] = (uint32_t)acc;
			cnt[i] = (uint32_t)acc;
			acc += x;
		}
		for (i = s; i < e; i++) {
			const tup_t *tp = &b->tup[i];
			uint32_t o = cnt[tp->code & mask]++;

			b->gen_pos[o] = tp->pos;
			b->red_nb[o] = tp->nb;
		}
	}
	free(cnt);
	return 0;
}

typedef struct {
	uint64_t nb;
	uint32_t pos;
} nbpos_t;

/* Stable sort of A[0..n) by nb: insertion sort of runs of 16, then bottom-up merges through T. */
static void sort_small(nbpos_t *a, nbpos_t *t, uint64_t n)
{
	uint64_t i, j, w;
	nbpos_t *src = a, *dst = t;

	for (i = 0; i < n; i += 16) {
		uint64_t e = i + 16 < n ? i + 16 : n, k;

		for (k = i + 1; k < e; k++) {
			nbpos_t x = a[k];

			for (j = k; j > i && a[j - 1].nb > x.nb; j--)
				a[j] = a[j - 1];
			a[j] = x;
		}
	}
	for (w = 16; w < n; w *= 2) {
		for (i = 0; i < n; i += 2 * w) {
			uint64_t m = i + w < n ? i + w : n, e = i + 2 * w < n ? i + 2 * w : n, p = i, q = m, o = i;

			while (p < m && q < e)
				dst[o++] = src[q].nb < src[p].nb ? src[q++] : src[p++];
			while (p < m)
				dst[o++] = src[p++];
			while (q < e)
				dst[o++] = src[q++];
		}
		{
			nbpos_t *x = src;

			src = dst;
			dst = x;
		}
	}
	if (src != a)
		memcpy(a, src, n * sizeof *a);
}

/* Stable LSD radix sort of *A[0..n) by nb, ND digits of 8 bits; may swap *A and *T. */
static void sort_radix(nbpos_t **a, nbpos_t **t, uint64_t n, unsigned nd)
{
	unsigned d, k;
	uint64_t i;
	uint32_t cnt[256];

	for (d = 0; d < nd; d++) {
		unsigned sh = 8 * d;
		uint32_t acc = 0;
		nbpos_t *s = *a, *o = *t;

		memset(cnt, 0, sizeof cnt);
		for (i = 0; i < n; i++)
			cnt[(s[i].nb >> sh) & 255]++;
		if (cnt[(s[0].nb >> sh) & 255] == n)
			continue;  /* one digit value: the pass would move nothing */
		for (k = 0; k < 256; k++) {
			uint32_t c2 = cnt[k];

			cnt[k] = acc;
			acc += c2;
		}
		for (i = 0; i < n; i++)
			o[cnt[(s[i].nb >> sh) & 255]++] = s[i];
		*a = o;
		*t = s;
	}
}

static int job_reduce(void *vc, size_t sl, int tid)
{
	bctx_t *b = vc;
	uint64_t c, cap = 0, c0 = slice_code(b->gen_start, b->n_codes, sl, b->nsl);
	uint64_t c1 = slice_code(b->gen_start, b->n_codes, sl + 1, b->nsl);
	nbpos_t *sc = NULL, *tmp = NULL;

	(void)tid;
	for (c = c0; c < c1; c++) {
		uint64_t s = b->gen_start[c], n = b->gen_start[c + 1] - s, i, u = 0;

		if (n > cap) {
			free(sc);
			free(tmp);
			cap = n * 2;
			sc = sp_malloc(cap * sizeof *sc);
			tmp = sp_malloc(cap * sizeof *tmp);
		}
		for (i = 0; i < n; i++) {
			sc[i].pos = b->gen_pos[s + i];
			sc[i].nb = b->red_nb[s + i];
		}
		/* stable sorts by nb: ties stay in position order */
		if (n < 1024)
			sort_small(sc, tmp, n);
		else
			sort_radix(&sc, &tmp, n, (2 * b->p->l + 7) / 8);
		/* every neighborhood goes back in the new order; build_red
		 * keeps the unique ones, listed in red_nbpos */
		for (i = 0; i < n; i++) {
			b->red_pos[s + i] = sc[i].pos;
			b->red_nb[s + i] = sc[i].nb;
			if (i == 0 || sc[i].nb != sc[i - 1].nb)
				b->red_nbpos[s + u++] = (uint32_t)(s + i);
		}
		b->ucount[c] = (uint32_t)u;
	}
	free(sc);
	free(tmp);
	return 0;
}

/*
 * The g values of block slots [G0, G1), 4 a byte (initialised to 0xff, all
 * 3): bytes wholly inside the block are stored, the two shared with
 * neighbouring blocks (maybe another slice's) are ANDed in atomically.
 */
static void put_g(uint8_t *blk_g, uint64_t g0, uint64_t g1, const uint8_t *g)
{
	uint64_t by;

	for (by = g0 >> 2; by <= (g1 - 1) >> 2; by++) {
		uint8_t val = 0xff;
		uint64_t gv = by << 2, e = gv + 4;

		for (; gv < e; gv++)
			if (gv >= g0 && gv < g1)
				val = (uint8_t)((val & ~(3u << (2 * (gv & 3))))
					| (uint32_t)g[gv - g0] << (2 * (gv & 3)));
		if ((by << 2) >= g0 && (by << 2) + 4 <= g1)
			blk_g[by] = val;
		else
			__atomic_fetch_and(&blk_g[by], val, __ATOMIC_RELAXED);
	}
}

static int job_block(void *vc, size_t sl, int tid)
{
	bctx_t *b = vc;
	uint64_t c, att = 0, c0 = slice_code(b->ucount, b->n_codes, sl, b->nsl);
	uint64_t c1 = slice_code(b->ucount, b->n_codes, sl + 1, b->nsl);
	bdz_work_t w;
	uint32_t *slot = NULL, cap = 0;
	uint64_t *kbuf = NULL;
	int rc = 0;

	(void)tid;
	memset(&w, 0, sizeof w);
	for (c = c0; c < c1; c++) {
		uint32_t s = b->ucount[c], n = b->ucount[c + 1] - s, base = b->blk_start[c];
		uint32_t m = b->blk_start[c + 1] - base, seed = 0, a = 0, k;
		const uint64_t *keys;

		if (n == 0) {
			b->blk_seed[c] = 0;
			continue;
		}
		if (n > cap) {
			free(slot);
			free(kbuf);
			cap = n * 2;
			slot = sp_malloc(cap * sizeof *slot);
			kbuf = sp_malloc(cap * sizeof *kbuf);
		}
		if (b->kb == 4) {
			/* red_nb was narrowed to u32 in place */
			for (k = 0; k < n; k++) {
				uint32_t x;

				memcpy(&x, (const uint8_t *)b->red_nb + 4 * ((uint64_t)s + k), 4);
				kbuf[k] = x;
			}
			keys = kbuf;
		} else {
			keys = b->red_nb + s;
		}
		if (bdz_build(&w, keys, n, (uint32_t)c, &seed, slot, &a) != 0) {
			rc = sp_fail("cannot build the perfect hash of seed block %llu (%u neighborhoods) after %u attempts",
				(unsigned long long)c, n, a);
			break;
		}
		att += a;
		b->blk_seed[c] = seed;
		/* phantom slots: the rank of the first (smallest) neighborhood */
		for (k = 0; k < m; k++)
			b->blk_rank[base + k] = 0;   /* ranks within the block */
		for (k = 0; k < n; k++)
			b->blk_rank[base + slot[k]] = k;
		put_g(b->blk_g, base, (uint64_t)base + m, w.g);
	}
	free(slot);
	free(kbuf);
	bdz_work_free(&w);
	__atomic_fetch_add(&b->attempts_total, att, __ATOMIC_RELAXED);
	return rc;
}

/* ---- driver -------------------------------------------------------------- */

/*
 * Per partition, the sort, the red.* sections and the block structure are
 * the batches of an ordered pipeline of three steps: make (the batch names
 * the structure), build (its parallel passes through sp_for) and write; with two
 * batches in flight, a structure is written while the next is built, and
 * each is freed by the write step that is the last to need it.  The block
 * structure is built in its write step instead, after the reduced structure
 * has been written and freed, so that their memory never adds up (the peak
 * stays that of the sort).  The FM-index of the partition is built beside
 * this pipeline (when -t > 1) and written after it, so that every
 * partition's sections go out in file order.
 */
enum { K_SORT, K_RED, K_BLK, K_N };       /* the batches, in file order */
enum { S_MAKE, S_BUILD, S_WRITE, S_N };   /* the steps of a batch */

typedef struct {
	const idx_build_opt_t *o;
	double t0;
	wr_t w;
	bctx_t *b;            /* the partition being built */
	int next;             /* batches made so far */
} build_t;

static void progress(const build_t *bt, const char *fmt, ...) SP_PRINTF(2, 3);

static void progress(const build_t *bt, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (!bt->o->progress)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	sp_msg("[%.1fs] %s", sp_now() - bt->t0, buf);
}

/* Run FN over the slices of one parallel pass of B. */
static int par(bctx_t *b, sp_for_fn fn)
{
	return sp_for(b->nt, (size_t)b->nsl, 1, fn, b);
}

/* Sort the seed positions by seed code, then each block by (neighborhood, position). */
static int build_sort(build_t *bt, bctx_t *b)
{
	const idx_params_t *p = b->p;
	uint64_t nc = b->n_codes, c, nocc = b->ws.total, acc = 0;
	uint32_t pn = b->part_no;
	int sl;

	if (!(p->structs & (IDX_S_GENERAL | IDX_S_REDUCED | IDX_S_BLOCK)))
		return 0;
	progress(bt, "partition %u: %llu seed positions", pn, (unsigned long long)nocc);
	b->tshift = 2 * p->w > 8 ? 2 * p->w - 8 : 0;
	b->n_top = nc >> b->tshift;
	b->cnt = sp_malloc((size_t)b->nsl * sizeof *b->cnt);
	for (sl = 0; sl < b->nsl; sl++)
		b->cnt[sl] = sp_calloc(b->n_top, sizeof **b->cnt);
	if (par(b, job_count) != 0)
		return -1;
	b->top_off = sp_malloc((b->n_top + 1) * sizeof *b->top_off);
	for (c = 0; c < b->n_top; c++) {
		b->top_off[c] = (uint32_t)acc;
		for (sl = 0; sl < b->nsl; sl++) {
			uint32_t x = b->cnt[sl][c];

			b->cnt[sl][c] = (uint32_t)acc;
			acc += x;
		}
	}
	b->top_off[b->n_top] = (uint32_t)acc;
	b->tup = sp_malloc((nocc ? nocc : 1) * sizeof *b->tup);
	if (par(b, job_scatter) != 0)
		return -1;
	for (sl = 0; sl < b->nsl; sl++)
		free(b->cnt[sl]);
	free(b->cnt);
	b->cnt = NULL;
	b->gen_start = sp_malloc((nc + 1) * sizeof *b->gen_start);
	b->gen_pos = sp_malloc((nocc ? nocc : 1) * sizeof *b->gen_pos);
	/* neighborhoods in occurrence order; the reduced structure compacts them in place */
	b->red_nb = sp_malloc((nocc ? nocc : 1) * sizeof *b->red_nb);
	if (par(b, job_sort2) != 0)
		return -1;
	b->gen_start[nc] = (uint32_t)nocc;
	free(b->tup);
	free(b->top_off);
	b->tup = NULL;
	b->top_off = NULL;
	progress(bt, "partition %u: seed positions sorted by seed", pn);
	b->ucount = sp_malloc((nc + 1) * sizeof *b->ucount);
	b->red_nbpos = sp_malloc((nocc + 1) * sizeof *b->red_nbpos);
	b->red_pos = sp_malloc((nocc ? nocc : 1) * sizeof *b->red_pos);
	if (par(b, job_reduce) != 0)
		return -1;
	free(b->gen_pos);   /* the positions in seed order: red_pos has them now */
	b->gen_pos = NULL;
	progress(bt, "partition %u: seed positions sorted by seed and neighborhood", pn);
	return 0;
}

/* Nothing to write after the sort (format 3 has no gen.* sections). */
static int write_sort(build_t *bt, bctx_t *b)
{
	(void)bt;
	(void)b;
	return 0;
}

/* The red.* sections, which all three structures read. */
static int build_red(build_t *bt, bctx_t *b)
{
	uint64_t nc = b->n_codes, c, nocc = b->ws.total, acc = 0;

	if (!(b->p->structs & (IDX_S_GENERAL | IDX_S_REDUCED | IDX_S_BLOCK)))
		return 0;
	/*
	 * Keep the unique neighborhoods, compacted to the front block by
	 * block: the k-th of block c is red_nb[red_nbpos[s + k]] (s its first
	 * occurrence); in place, as acc + k <= s + k <= red_nbpos[s + k].
	 */
	for (c = 0; c < nc; c++) {
		uint32_t u = b->ucount[c], s = b->gen_start[c], k;

		for (k = 0; k < u; k++) {
			uint32_t at = b->red_nbpos[s + k];

			b->red_nb[acc + k] = b->red_nb[at];
			b->red_nbpos[acc + k] = at;
		}
		b->ucount[c] = (uint32_t)acc;
		acc += u;
	}
	b->ucount[nc] = (uint32_t)acc;
	b->red_nbpos[acc] = (uint32_t)nocc;
	b->n_uniq = acc;
	progress(bt, "partition %u: reduced structure built (%llu unique neighborhoods), writing",
		b->part_no, (unsigned long long)acc);
	if (b->kb == 4) {
		/* narrow the keys to u32 in place (l <= 16): byte 4j is below 8j */
		uint64_t j;

		for (j = 0; j < acc; j++) {
			uint32_t x = (uint32_t)b->red_nb[j];

			memcpy((uint8_t *)b->red_nb + 4 * j, &x, 4);
		}
	}
	return 0;
}

/*
 * The compact form of NBPOS[0..NU] (red.grp, red.rep: kernels/inc_idx.h):
 * returns the groups; the REP values go to the front of NBPOS (in place: the
 * k-th repeated neighborhood is at least the k-th one), *NREP of them.
 */
static uint32_t *nbpos_pack(uint32_t *nbpos, uint64_t nu, uint64_t *nrep)
{
	uint64_t ng = nu / 64 + 1, g, x = 0;
	uint32_t *grp = sp_calloc(ng * 4, sizeof *grp);

	for (g = 0; g < ng; g++) {
		uint64_t j, fl = 0, end = 64 * g + 64 < nu ? 64 * g + 64 : nu;
		uint32_t cum = 0;

		grp[4 * g] = nbpos[64 * g] - (uint32_t)(64 * g);
		grp[4 * g + 1] = (uint32_t)x;
		for (j = 64 * g; j < end; j++) {
			uint32_t c = nbpos[j + 1] - nbpos[j];

			if (c > 1) {
				fl |= 1ULL << (j - 64 * g);
				cum += c - 1;
				nbpos[x++] = cum;   /* x <= j: nbpos[j + 1] is still to be read */
			}
		}
		grp[4 * g + 2] = (uint32_t)fl;
		grp[4 * g + 3] = (uint32_t)(fl >> 32);
	}
	*nrep = x;
	return grp;
}

static int write_red(build_t *bt, bctx_t *b)
{
	uint32_t pn = b->part_no;
	uint64_t nc = b->n_codes, nocc = b->ws.total, nu = b->n_uniq;
	int rc = 0;

	/* the red.* sections are built: the blocks' occurrence starts are done with */
	free(b->gen_start);
	b->gen_start = NULL;
	if (b->p->structs & (IDX_S_GENERAL | IDX_S_REDUCED | IDX_S_BLOCK)) {
		wr_t *w = &bt->w;
		uint64_t ng = nu / 64 + 1, nrep = 0;
		uint32_t *grp = nbpos_pack(b->red_nbpos, nu, &nrep);

		/* red_nbpos now holds the repeated neighborhoods' extras (nbpos_pack) */
		rc = wr_section(w, "red.start", pn, 4, b->ucount, (nc + 1) * 4)
			|| wr_section(w, "red.nb", pn, b->kb, b->red_nb, nu * b->kb)
			|| wr_section(w, "red.grp", pn, 16, grp, ng * 16)
			|| wr_section(w, "red.rep", pn, 4, b->red_nbpos, nrep * 4) ? -1 : 0;
		free(grp);
	}
	/* the positions, shared by all three structures */
	if (rc == 0 && (b->p->structs & (IDX_S_GENERAL | IDX_S_REDUCED | IDX_S_BLOCK)))
		rc = wr_section(&bt->w, "red.pos", pn, 4, b->red_pos, nocc * 4);
	free(b->red_nbpos);
	free(b->red_pos);
	b->red_nbpos = b->red_pos = NULL;
	return rc;
}

/* The indexed-block structure: a BDZ perfect hash per seed block. */
static int build_blk(build_t *bt, bctx_t *b)
{
	uint64_t nc = b->n_codes, c, acc = 0;

	if (!(b->p->structs & IDX_S_BLOCK))
		return 0;
	b->blk_start = sp_malloc((nc + 1) * sizeof *b->blk_start);
	for (c = 0; c < nc; c++) {
		b->blk_start[c] = (uint32_t)acc;
		acc += 3ULL * bdz_part_size(b->ucount[c + 1] - b->ucount[c]);
		if (acc > UINT32_MAX)
			return sp_fail("partition %u has too many hash slots: lower the partition size", b->part_no);
	}
	b->blk_start[nc] = (uint32_t)acc;
	b->n_slots = acc;
	b->blk_seed = sp_malloc(nc * sizeof *b->blk_seed);
	b->blk_rank = sp_malloc((acc ? acc : 1) * sizeof *b->blk_rank);
	b->blk_g = sp_malloc((acc + 3) / 4 + 1);
	memset(b->blk_g, 0xff, (acc + 3) / 4 + 1);
	b->attempts_total = 0;
	if (par(b, job_block) != 0)
		return -1;
	progress(bt, "partition %u: indexed-block structure built (%llu slots, %llu graphs tried), writing",
		b->part_no, (unsigned long long)acc, (unsigned long long)b->attempts_total);
	return 0;
}

static void free_blk(bctx_t *b)
{
	free(b->blk_start);
	free(b->blk_seed);
	free(b->blk_g);
	free(b->blk_rank);
	free(b->ucount);
	free(b->red_nb);
	b->blk_start = b->blk_seed = b->blk_rank = b->ucount = NULL;
	b->blk_g = NULL;
	b->red_nb = NULL;
}

/* blk.rank: the ranks within their blocks in W bits each (idx_rank_get). */
static int write_ranks(wr_t *w, const bctx_t *b)
{
	uint64_t c, s, ns = b->n_slots, nw, maxu = 0;
	uint32_t wb = 0, *pk;
	int rc;

	for (c = 0; c < b->n_codes; c++)
		if (b->ucount[c + 1] - b->ucount[c] > maxu)
			maxu = b->ucount[c + 1] - b->ucount[c];
	while (maxu > 1 && ((maxu - 1) >> wb) != 0)
		wb++;
	nw = (ns * wb + 31) / 32 + 1;
	pk = sp_calloc(nw, sizeof *pk);
	for (s = 0; s < ns && wb; s++) {
		uint64_t bit = s * wb, v = (uint64_t)b->blk_rank[s] << (bit & 31);

		pk[bit >> 5] |= (uint32_t)v;
		pk[(bit >> 5) + 1] |= (uint32_t)(v >> 32);
	}
	rc = wr_section(w, "blk.rank", b->part_no, 4, pk, nw * 4);
	free(pk);
	return rc;
}

static int write_blk(build_t *bt, bctx_t *b)
{
	uint32_t pn = b->part_no;
	uint64_t nc = b->n_codes, ns = b->n_slots;
	int rc = 0;

	if (b->p->structs & IDX_S_BLOCK) {
		wr_t *w = &bt->w;

		rc = wr_section(w, "blk.start", pn, 4, b->blk_start, (nc + 1) * 4)
			|| wr_section(w, "blk.seed", pn, 4, b->blk_seed, nc * 4)
			|| wr_section(w, "blk.g", pn, 1, b->blk_g, (ns + 3) / 4)
			|| write_ranks(w, b) ? -1 : 0;
	}
	free_blk(b);
	return rc;
}

/* Everything a failed build left of partition B. */
static void part_free(bctx_t *b)
{
	int sl;

	if (b->cnt)
		for (sl = 0; sl < b->nsl; sl++)
			free(b->cnt[sl]);
	free(b->cnt);
	free(b->tup);
	free(b->top_off);
	free(b->gen_start);
	free(b->gen_pos);
	free(b->red_nbpos);
	free(b->red_pos);
	free_blk(b);
	fm_build_free(&b->fb);
	memset(b, 0, sizeof *b);
}

static int part_step(void *ctx, int s, void **data)
{
	static int (*const build[K_N])(build_t *, bctx_t *) = { build_sort, build_red, NULL };
	static int (*const write[K_N])(build_t *, bctx_t *) = { write_sort, write_red, write_blk };
	build_t *bt = ctx;
	int *kind = *data, rc;

	if (s == S_MAKE) {
		if (bt->next == K_N)
			return 1;
		kind = sp_malloc(sizeof *kind);
		*kind = bt->next++;
		*data = kind;
		return 0;
	}
	if (s == S_BUILD)
		return *kind == K_BLK ? 0 : build[*kind](bt, bt->b);
	rc = *kind == K_BLK ? build_blk(bt, bt->b) : 0;
	if (rc == 0)
		rc = write[*kind](bt, bt->b);
	free(kind);
	*data = NULL;
	return rc;
}

static void part_drop(void *ctx, void *data)
{
	(void)ctx;
	free(data);
}

/* The general, reduced and block structures of partition BT->b. */
static int part_structs(build_t *bt)
{
	sp_pipe pp = { S_N, 2, part_step, part_drop, bt };

	bt->next = 0;
	return sp_pipeline(&pp);
}

static int build_fm(build_t *bt, bctx_t *b)
{
	uint64_t n = b->pr->end - b->pr->beg;

	progress(bt, "partition %u: suffix array of %llu bases", b->part_no, (unsigned long long)n);
	if (fm_build(b->r->pack, b->pr->beg, n, b->p->sa_rate, &b->fb) != 0)
		return sp_fail("cannot build the suffix array of partition %u (libdivsufsort failed)", b->part_no);
	progress(bt, "partition %u: FM-index built, writing", b->part_no);
	return 0;
}

/* Task 0 of a partition: the FM-index; task 1: the other structures. */
static int part_task(void *ctx, size_t i, int tid)
{
	build_t *bt = ctx;

	(void)tid;
	if (i == 0)
		return bt->b->p->structs & IDX_S_FM ? build_fm(bt, bt->b) : 0;
	return bt->b->p->structs & (IDX_S_GENERAL | IDX_S_REDUCED | IDX_S_BLOCK) ? part_structs(bt) : 0;
}

/* Build and write partition BT->b. */
static int build_part(build_t *bt)
{
	bctx_t *b = bt->b;
	fm_build_t *fb = &b->fb;
	uint32_t pn = b->part_no;
	int rc;

	/* the suffix array (one thread in libdivsufsort) is built beside the rest */
	if ((b->p->structs & IDX_S_FM) && b->nt > 1)
		rc = sp_for(2, 2, 1, part_task, bt);
	else
		rc = part_task(bt, 1, 0) != 0 || part_task(bt, 0, 0) != 0 ? -1 : 0;
	if (rc != 0 || !(b->p->structs & IDX_S_FM))
		return rc;
	rc = wr_section(&bt->w, "fm.meta", pn, 8, fb->meta, FM_META_LEN)
		|| wr_section(&bt->w, "fm.occ", pn, 1, fb->occ, fb->occ_len)
		|| wr_section(&bt->w, "fm.mark", pn, 8, fb->mark, fb->mark_len)
		|| wr_section(&bt->w, "fm.sa", pn, 4, fb->sa, fb->sa_len) ? -1 : 0;
	fm_build_free(fb);
	return rc;
}

/* The fingerprint: XXH3-64 of the parameter bytes and the reference. */
static uint64_t fingerprint(const idx_ref_t *r, const uint8_t *params, const char *names, size_t names_len)
{
	XXH3_state_t *st = XXH3_createState();
	uint64_t fp;

	if (!st)
		sp_die("out of memory (xxhash state)");
	XXH3_64bits_reset(st);
	XXH3_64bits_update(st, params, 88);
	XXH3_64bits_update(st, names, names_len);
	XXH3_64bits_update(st, r->len, (size_t)r->n_seq * 8);
	XXH3_64bits_update(st, r->pack, (size_t)((r->total + 3) / 4));
	XXH3_64bits_update(st, r->nrun, (size_t)r->n_nrun * 16);
	fp = XXH3_64bits_digest(st);
	XXH3_freeState(st);
	return fp;
}

/* The header and the global sections (up to "part"). */
static int write_globals(build_t *bt, const idx_ref_t *r, const idx_prange_t *pr,
		const wins_t *ws, uint32_t np, const uint8_t *params, const char *names, size_t names_len)
{
	wr_t *w = &bt->w;
	uint8_t hdr[IDX_HDR_LEN], *part_rec;
	uint32_t i;
	int rc;

	memset(hdr, 0, sizeof hdr);
	memcpy(hdr, IDX_MAGIC, 8);
	sp_st32(hdr + 8, IDX_VERSION);
	sp_st32(hdr + 12, IDX_HDR_LEN);
	sp_st64(hdr + 16, w->fp);
	memcpy(hdr + 24, params, 88);
	sp_st64(hdr + 120, XXH3_64bits(hdr, 120));
	part_rec = sp_calloc(np, 32);
	for (i = 0; i < np; i++) {
		sp_st64(part_rec + 32 * i, pr[i].beg);
		sp_st64(part_rec + 32 * i + 8, pr[i].end);
		sp_st32(part_rec + 32 * i + 16, pr[i].first_seq);
		sp_st32(part_rec + 32 * i + 20, pr[i].end_seq);
		sp_st64(part_rec + 32 * i + 24, ws[i].total);
	}
	rc = wr_raw(w, hdr, sizeof hdr)
		|| wr_section(w, "seq.names", IDX_PART_GLOBAL, 1, names, names_len)
		|| wr_section(w, "seq.len", IDX_PART_GLOBAL, 8, r->len, (uint64_t)r->n_seq * 8)
		|| wr_section(w, "seq.off", IDX_PART_GLOBAL, 8, r->off, ((uint64_t)r->n_seq + 1) * 8)
		/* 16 bytes of zero slack so 64-bit loads at any base stay in the payload */
		|| wr_section(w, "ref.pack", IDX_PART_GLOBAL, 1, r->pack, (r->total + 3) / 4 + 16)
		|| wr_section(w, "ref.nrun", IDX_PART_GLOBAL, 8, r->nrun, r->n_nrun * 16)
		|| wr_section(w, "part", IDX_PART_GLOBAL, 32, part_rec, (uint64_t)np * 32) ? -1 : 0;
	free(part_rec);
	return rc;
}

/* The end section (written last: a file without it is refused). */
static int write_end(wr_t *w)
{
	uint8_t end[32];

	sp_st64(end, w->fp);
	sp_st64(end + 8, w->n_sections + 1);
	sp_st64(end + 16, w->off);
	memset(end + 24, 0, 8);
	memcpy(end + 24, IDX_END_MAGIC, 6);
	return wr_section(w, "end", IDX_PART_GLOBAL, 1, end, sizeof end);
}

/* Checks of the reference against P; the partitions and their windows. */
static int plan(const idx_ref_t *r, const idx_params_t *p, const idx_build_opt_t *o,
		idx_prange_t **pr, wins_t **ws, uint32_t *np)
{
	uint32_t i, win = p->span + p->l, n_short = 0;
	uint64_t total_w = 0;

	if (r->n_seq == 0)
		return sp_fail("no sequence in the input");
	if (p->part_limit < 2ULL * win)
		return sp_fail("partition size %llu is below twice the seed span plus neighborhood (%u)",
			(unsigned long long)p->part_limit, 2 * win);
	for (i = 0; i < r->n_seq; i++) {
		if (r->len[i] >= win)
			continue;
		if (o->warn && n_short < 5)
			sp_warn("sequence '%s' (%llu bases) is shorter than a seed and its neighborhood (%u bases): not indexed",
				r->names[i], (unsigned long long)r->len[i], win);
		n_short++;
	}
	if (o->warn && n_short > 5)
		sp_warn("%u sequences in all are shorter than %u bases and not indexed", n_short, win);
	*np = idx_partition(r->off, r->n_seq, p->part_limit, win, pr);
	*ws = sp_calloc(*np, sizeof **ws);
	for (i = 0; i < *np; i++) {
		part_windows(r, &(*pr)[i], win, &(*ws)[i]);
		if ((*ws)[i].total > UINT32_MAX)
			return sp_fail("partition %u has too many seed positions", i);
		total_w += (*ws)[i].total;
	}
	if (total_w == 0)
		return sp_fail("no seed position in the reference: no sequence holds %u bases (seed span %u + neighborhood %u) free of N",
			win, p->span, p->l);
	return 0;
}

int idx_build(idx_ref_t *r, const idx_params_t *p, const idx_build_opt_t *o,
		int fd, const char *out_name)
{
	build_t bt;
	bctx_t b;
	idx_prange_t *pr = NULL;
	wins_t *ws = NULL;
	uint32_t np = 0, i;
	uint8_t params[88];
	char *names;
	size_t names_len = 0, k;
	int rc, nt = o->n_threads < 1 ? 1 : o->n_threads;

	memset(&bt, 0, sizeof bt);
	bt.o = o;
	bt.t0 = sp_now();
	rc = plan(r, p, o, &pr, &ws, &np);
	if (rc != 0)
		goto out;
	for (i = 0; i < r->n_seq; i++)
		names_len += strlen(r->names[i]) + 1;
	names = sp_malloc(names_len + 1);
	for (i = 0, k = 0; i < r->n_seq; i++) {
		size_t n = strlen(r->names[i]) + 1;

		memcpy(names + k, r->names[i], n);
		k += n;
	}
	idx_params_pack(p, r->n_seq, np, r->total, r->n_nrun, params);
	bt.w.fd = fd;
	bt.w.name = out_name;
	bt.w.fp = fingerprint(r, params, names, names_len);
	rc = write_globals(&bt, r, pr, ws, np, params, names, names_len);
	free(names);
	if (rc != 0)
		goto out;
	progress(&bt, "%u sequences, %llu bases, %u partition%s; seed %s (weight %u), l=%u",
		r->n_seq, (unsigned long long)r->total, np, np > 1 ? "s" : "", p->shape, p->w, p->l);
	for (i = 0; i < np && rc == 0; i++) {
		memset(&b, 0, sizeof b);
		b.r = r;
		b.p = p;
		b.pr = &pr[i];
		b.ws = ws[i];
		b.n_codes = 1ULL << (2 * p->w);
		b.nt = nt;
		b.nsl = nt;
		b.part_no = i;
		b.kb = IDX_KEY_BYTES(p->l);
		bt.b = &b;
		rc = build_part(&bt);
		part_free(&b);
	}
	if (rc == 0)
		rc = write_end(&bt.w);
	if (rc == 0)
		progress(&bt, "done: %llu bytes", (unsigned long long)bt.w.off);
out:
	for (i = 0; i < np; i++)
		free(ws[i].run);
	free(ws);
	free(pr);
	return rc;
}
