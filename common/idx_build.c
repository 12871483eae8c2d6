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
 * FM build (5.5 bytes per base), see man/seqidx.1; with seqidx -M, the
 * positions of a partition are sorted in passes over ranges of seed codes
 * (see "build context" below), whose sections are collected in temporary
 * files (idx_spill.c) and written after the last pass.
 *
 * Threads (sp_thread.h): every step of a pass runs its parallel parts
 * through sp_for, and the FM-index (libdivsufsort, single-threaded) is
 * built beside the others when -t > 1.
 */
#include "idx_priv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "bdz.h"
#include "idx_spill.h"
#include "inc_bdz.h"
#include "inc_idx.h"
#include "sp_le.h"
#include "sp_thread.h"
#include "util.h"

/* ---- windows ------------------------------------------------------------- */

/* A run of window starts [a, a+n) (global coordinates). */
typedef struct {
	uint64_t a, n, cum;  /* cum: windows in earlier runs */
	uint64_t lim;        /* the end of their sequence */
} wrun_t;

typedef struct {
	wrun_t *run;
	size_t n_run, cap;
	uint64_t total;
} wins_t;

/* The window starts [x, y) (nothing when y <= x) in a sequence ending at LIM. */
static void wins_add(wins_t *ws, uint64_t x, uint64_t y, uint64_t lim)
{
	if (y <= x)
		return;
	if (ws->n_run == ws->cap) {
		ws->cap = ws->cap ? ws->cap * 2 : 64;
		ws->run = sp_realloc(ws->run, ws->cap * sizeof *ws->run);
	}
	ws->run[ws->n_run].a = x;
	ws->run[ws->n_run].n = y - x;
	ws->run[ws->n_run].cum = ws->total;
	ws->run[ws->n_run].lim = lim;
	ws->total += y - x;
	ws->n_run++;
}

/*
 * Every window owned by partition PR (global coordinates): a start g whose
 * seed span [g, g+SPAN) lies in one sequence and holds no N.  Its
 * neighborhood, the next l bases, may run past the sequence's end or into
 * N: those bases are read as A (nb_at), so that a read flush with the end
 * of a sequence or of an N stretch still finds the windows of its last
 * patterns (a bpr pattern's q is shorter than l).  A partition that cuts a
 * sequence owns the starts of whole windows (WIN bases) in it; the next one,
 * which begins WIN-1 bases before its end, owns the rest.
 */
static void part_windows(const idx_ref_t *r, const idx_prange_t *pr, uint32_t span,
		uint32_t win, wins_t *ws)
{
	uint32_t s;
	uint64_t lo = 0, hi = r->n_nrun, own;

	memset(ws, 0, sizeof *ws);
	/* first N run ending after pr->beg */
	while (lo < hi) {
		uint64_t mid = (lo + hi) / 2;

		if (r->nrun[2 * mid] + r->nrun[2 * mid + 1] <= pr->beg)
			lo = mid + 1;
		else
			hi = mid;
	}
	own = pr->end < r->off[pr->end_seq] ? pr->end - win + 1 : pr->end;
	for (s = pr->first_seq; s < pr->end_seq; s++) {
		uint64_t x = r->off[s] > pr->beg ? r->off[s] : pr->beg;
		uint64_t y = r->off[s + 1] < pr->end ? r->off[s + 1] : pr->end;
		uint64_t cur = x;

		while (lo < r->n_nrun && r->nrun[2 * lo] < y) {
			uint64_t st = r->nrun[2 * lo], en = st + r->nrun[2 * lo + 1];

			if (en > cur) {
				if (st >= cur + span)
					wins_add(ws, cur, st - span + 1 < own ? st - span + 1 : own, r->off[s + 1]);
				cur = en;
			}
			if (en > y)
				break;  /* the run goes on past this sequence's part */
			lo++;
		}
		if (y >= cur + span)
			wins_add(ws, cur, y - span + 1 < own ? y - span + 1 : own, r->off[s + 1]);
	}
}

/* Index of the run holding window number K. */
static size_t wins_find(const wins_t *ws, uint64_t k)
{
	return sp_last_le(ws->run, ws->n_run, sizeof *ws->run, offsetof(wrun_t, cum), k);
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

/* The neighborhood of the window at G; its bases at or past LIM (the end of
 * the sequence) read as A, as N does in the packed reference. */
static inline uint64_t nb_at(const idx_params_t *p, const uint8_t *pack, uint64_t g, uint64_t lim)
{
	uint64_t a = g + p->span;

	return idx_ref_word(pack, a) & idx_mask2(lim >= a + p->l ? p->l : (uint32_t)(lim - a));
}


/* ---- build context ------------------------------------------------------------ */

typedef struct tup tup_t;

/* The sinks of a partition's sections made in passes (idx_spill.h). */
enum { SK_NB, SK_GRP, SK_REP, SK_POS, SK_G, SK_RANK, SK_N };

/*
 * One partition being built.  Its seed positions are sorted in passes over
 * ranges of top buckets (seed code >> tshift), as few as the memory budget
 * allows (seqidx -M; one when the partition fits): a pass sorts the
 * positions of its codes and makes their part of every section, which it
 * appends to the section's sink (in memory when there is one pass, else a
 * temporary file of -T); the sections are written after the last pass.
 * The passes take the codes in file order, so the output is the same
 * whatever their number.  Arrays of the pass are pass-relative: its
 * occurrences [obase, obase + nr), unique neighborhoods [ubase, ubase + nu)
 * and slots [sbase, sbase + ns) of the partition.
 */
typedef struct {
	const idx_ref_t *r;
	const idx_params_t *p;
	const idx_prange_t *pr;
	wins_t ws;
	uint64_t n_codes;        /* 4^w */
	int nt, nsl;             /* threads; slices of each parallel pass */
	uint32_t **cnt;          /* per slice: windows of each top bucket */
	uint32_t **off;          /* per slice: the pass's scatter offsets */
	uint32_t tshift;         /* code >> tshift = top bucket */
	uint64_t n_top;
	uint32_t *gen_start;     /* 4^w+1: first occurrence of each code */
	uint64_t t0, t1, c0, c1, obase, nr;   /* the pass */
	tup_t *tup;
	uint32_t *gen_pos;       /* its positions by code */
	uint64_t *red_nb;        /* their neighborhoods, then the unique ones */
	uint32_t *red_nbpos, *red_pos;
	uint32_t *ucount;        /* 4^w+1: per block unique count, becomes red_start */
	uint64_t ubase, nu;
	uint32_t *blk_start, *blk_roff;   /* 4^w+1 each */
	uint8_t *blk_seed;       /* 4^w: each block's BDZ attempt */
	uint32_t *blk_rank;      /* the pass's rank words, from word rbase */
	uint8_t *blk_g;          /* the g bytes of its slots, from byte sbase / 4 */
	uint64_t sbase, ns, rbase;
	uint8_t g_carry;         /* the g byte a pass shares with the next */
	uint32_t kb;             /* key bytes: IDX_KEY_BYTES(l) */
	uint64_t attempts_total;
	uint32_t part_no;
	idx_grp_t grp;
	idx_sink_t sk[SK_N];
	fm_build_t fb;           /* FM-index */
} bctx_t;

/*
 * First index of slice SL of NSL over [LO, HI], balanced by the prefix
 * array START read at k << SH (codes: SH = 0; top buckets: tshift).
 */
static uint64_t slice_at(const uint32_t *start, uint64_t lo, uint64_t hi, unsigned sh,
		size_t sl, int nsl)
{
	uint64_t base = start[lo << sh];
	uint64_t want = base + (start[hi << sh] - base) * (uint64_t)sl / (uint64_t)nsl;

	if (sl == (size_t)nsl)
		return hi;
	while (lo < hi) {  /* first index whose start >= want */
		uint64_t mid = (lo + hi) / 2;

		if (start[mid << sh] < want)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Sorting the seed positions by code: a stable counting sort in two levels,
 * so that every step touches few buckets at once (cache friendly).  Once
 * per partition, threads over window ranges count the windows of each
 * code (the start lists) and of each top bucket (the top 8 bits of the
 * code) per range; each pass then has them write (nb, pos, code) tuples of
 * its top buckets in bucket order (offsets in range order keep position
 * order), and threads over buckets sort each by the low bits straight into
 * gen_pos / red_nb.
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

/* The next piece of a run: window starts [*g, *gend) in a sequence ending at
 * *LIM; 0 when none is left. */
static int win_next(win_iter_t *it, uint64_t *g, uint64_t *gend, uint64_t *lim)
{
	const wrun_t *wr;

	if (it->k >= it->k1)
		return 0;
	wr = &it->ws->run[it->ri++];
	*g = wr->a + (it->k - wr->cum);
	*gend = wr->a + wr->n;
	*lim = wr->lim;
	if (*gend - *g > it->k1 - it->k)
		*gend = *g + (it->k1 - it->k);
	it->k += *gend - *g;
	return 1;
}

/*
 * The seed positions of slice SL, in window order: counted (SCATTER 0:
 * windows per top bucket in cnt[sl], per seed code in gen_start), or
 * (SCATTER 1) written as tuples at their bucket's offsets off[sl], those of
 * this pass's buckets [t0, t1) only.  Inlined into both jobs, so that each
 * loop has one of the two bodies (as when they were written out twice).
 */
static inline __attribute__((always_inline)) int slice_seeds(bctx_t *b, size_t sl, int scatter)
{
	uint32_t *at = scatter ? b->off[sl] : b->cnt[sl], sh = b->tshift, *gs = b->gen_start;
	uint64_t g, gend, lim;
	win_iter_t it;

	for (win_slice(b, sl, &it); win_next(&it, &g, &gend, &lim); )
		for (; g < gend; g++) {
			uint32_t c = seed_code(b->p, b->r->pack, g);
			tup_t *t;

			if (!scatter) {
				at[c >> sh]++;
				__atomic_fetch_add(&gs[c], 1, __ATOMIC_RELAXED);
				continue;
			}
			if ((c >> sh) < b->t0 || (c >> sh) >= b->t1)
				continue;   /* another pass's */
			t = &b->tup[at[c >> sh]++];
			t->code = c;
			t->pos = (uint32_t)(g - b->pr->beg);
			t->nb = nb_at(b->p, b->r->pack, g, lim);
		}
	return 0;
}

static int job_count(void *vc, size_t sl, int tid)
{
	(void)tid;
	return slice_seeds(vc, sl, 0);
}

static int job_scatter(void *vc, size_t sl, int tid)
{
	(void)tid;
	return slice_seeds(vc, sl, 1);
}

static int job_sort2(void *vc, size_t sl, int tid)
{
	bctx_t *b = vc;
	uint64_t t, nlow = 1ULL << b->tshift, i;
	uint64_t t0 = slice_at(b->gen_start, b->t0, b->t1, b->tshift, sl, b->nsl);
	uint64_t t1 = slice_at(b->gen_start, b->t0, b->t1, b->tshift, sl + 1, b->nsl);
	uint32_t *cnt = sp_malloc(nlow * sizeof *cnt), mask = (uint32_t)(nlow - 1);

	(void)tid;
	for (t = t0; t < t1; t++) {
		const uint32_t *gs = b->gen_start + (t << b->tshift);
		uint64_t s = gs[0] - b->obase, e = gs[nlow] - b->obase;

		for (i = 0; i < nlow; i++)
			cnt[i] = (uint32_t)(gs[i] - b->obase);
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


/* P, a job's scratch array of CAP items, or where N items do not fit a new
 * one of 2N items of SIZE bytes (nothing of P kept). */
static void *scratch(void *p, uint64_t cap, uint64_t n, size_t size)
{
	if (n <= cap)
		return p;
	free(p);
	return sp_malloc(2 * n * size);
}

static int job_reduce(void *vc, size_t sl, int tid)
{
	bctx_t *b = vc;
	uint64_t c, cap = 0, c0 = slice_at(b->gen_start, b->c0, b->c1, 0, sl, b->nsl);
	uint64_t c1 = slice_at(b->gen_start, b->c0, b->c1, 0, sl + 1, b->nsl);
	nbpos_t *sc = NULL, *tmp = NULL;

	(void)tid;
	for (c = c0; c < c1; c++) {
		uint64_t s = b->gen_start[c] - b->obase, n = b->gen_start[c + 1] - b->gen_start[c], i, u = 0;

		sc = scratch(sc, cap, n, sizeof *sc);
		tmp = scratch(tmp, cap, n, sizeof *tmp);
		cap = n > cap ? n * 2 : cap;
		for (i = 0; i < n; i++) {
			sc[i].pos = b->gen_pos[s + i];
			sc[i].nb = b->red_nb[s + i];
		}
		/* stable sorts by nb: ties stay in position order */
		if (n < 1024)
			sort_small(sc, tmp, n);
		else
			sort_radix(&sc, &tmp, n, (2 * b->p->l + 7) / 8);
		/* every neighborhood goes back in the new order; pass_red
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
 * 3) into BLK_G, which holds the bytes from byte B0 on: bytes wholly inside
 * the block are stored, the two shared with neighbouring blocks (maybe
 * another slice's) are ANDed in atomically.
 */
static void put_g(uint8_t *blk_g, uint64_t b0, uint64_t g0, uint64_t g1, const uint8_t *g)
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
			blk_g[by - b0] = val;
		else
			__atomic_fetch_and(&blk_g[by - b0], val, __ATOMIC_RELAXED);
	}
}

static int job_block(void *vc, size_t sl, int tid)
{
	bctx_t *b = vc;
	uint64_t c, att = 0, c0 = slice_at(b->ucount, b->c0, b->c1, 0, sl, b->nsl);
	uint64_t c1 = slice_at(b->ucount, b->c0, b->c1, 0, sl + 1, b->nsl);
	bdz_work_t w;
	uint32_t *slot = NULL, cap = 0;
	uint64_t *kbuf = NULL;
	int rc = 0;

	(void)tid;
	memset(&w, 0, sizeof w);
	for (c = c0; c < c1; c++) {
		uint64_t s = b->ucount[c] - b->ubase;
		uint32_t n = b->ucount[c + 1] - b->ucount[c], *rk = b->blk_rank + (b->blk_roff[c] - b->rbase);
		uint32_t m = b->blk_start[c + 1] - b->blk_start[c], seed = 0, a = 0, k, wd = idx_rank_width(n);
		const uint64_t *keys;

		if (n == 0) {
			b->blk_seed[c] = 0;
			continue;
		}
		slot = scratch(slot, cap, n, sizeof *slot);
		kbuf = scratch(kbuf, cap, n, sizeof *kbuf);
		cap = n > cap ? n * 2 : cap;
		if (b->kb == 4) {
			/* red_nb was narrowed to u32 in place */
			for (k = 0; k < n; k++) {
				uint32_t x;

				memcpy(&x, (const uint8_t *)b->red_nb + 4 * (s + k), 4);
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
		b->blk_seed[c] = (uint8_t)seed;
		/* the block's ranks at its width from word blk_roff[c] (zeroed:
		 * phantom slots hold the rank of the first neighborhood) */
		for (k = 0; k < n && wd; k++) {
			uint64_t bit = (uint64_t)slot[k] * wd, v = (uint64_t)k << (bit & 31);

			rk[bit >> 5] |= (uint32_t)v;
			if ((bit & 31) + wd > 32)
				rk[(bit >> 5) + 1] |= (uint32_t)(v >> 32);
		}
		put_g(b->blk_g, b->sbase >> 2, b->blk_start[c], (uint64_t)b->blk_start[c] + m, w.g);
	}
	free(slot);
	free(kbuf);
	bdz_work_free(&w);
	__atomic_fetch_add(&b->attempts_total, att, __ATOMIC_RELAXED);
	return rc;
}

/* ---- driver -------------------------------------------------------------- */

typedef struct {
	const idx_build_opt_t *o;
	double t0;
	idx_wr_t w;
	bctx_t *b;            /* the partition being built */
	uint64_t fixed;       /* bytes held for the whole build (the reference) */
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

/* Sort the pass's seed positions by seed code, then each block by (neighborhood, position). */
static int pass_sort(bctx_t *b)
{
	uint64_t t, acc = 0;
	int sl;

	for (t = b->t0; t < b->t1; t++)
		for (sl = 0; sl < b->nsl; sl++) {
			b->off[sl][t] = (uint32_t)acc;
			acc += b->cnt[sl][t];
		}
	if (acc != b->nr)
		return sp_fail("internal error: %llu windows in pass, %llu counted",
			(unsigned long long)acc, (unsigned long long)b->nr);
	b->tup = sp_malloc((b->nr ? b->nr : 1) * sizeof *b->tup);
	if (par(b, job_scatter) != 0)
		return -1;
	b->gen_pos = sp_malloc((b->nr ? b->nr : 1) * sizeof *b->gen_pos);
	/* neighborhoods in occurrence order; pass_red compacts them in place */
	b->red_nb = sp_malloc((b->nr ? b->nr : 1) * sizeof *b->red_nb);
	if (par(b, job_sort2) != 0)
		return -1;
	free(b->tup);
	b->tup = NULL;
	b->red_nbpos = sp_malloc((b->nr + 1) * sizeof *b->red_nbpos);
	b->red_pos = sp_malloc((b->nr ? b->nr : 1) * sizeof *b->red_pos);
	if (par(b, job_reduce) != 0)
		return -1;
	free(b->gen_pos);   /* the positions in seed order: red_pos has them now */
	b->gen_pos = NULL;
	return 0;
}

/* The pass's part of the red.* sections, which all three structures read. */
static int pass_red(bctx_t *b)
{
	uint64_t c, acc = 0, k;

	/*
	 * Keep the unique neighborhoods, compacted to the front block by
	 * block: the k-th of block c is red_nb[red_nbpos[s + k]] (s its first
	 * occurrence); in place, as acc + k <= s + k <= red_nbpos[s + k].
	 */
	for (c = b->c0; c < b->c1; c++) {
		uint32_t u = b->ucount[c], s = (uint32_t)(b->gen_start[c] - b->obase), j;

		for (j = 0; j < u; j++) {
			uint32_t at = b->red_nbpos[s + j];

			b->red_nb[acc + j] = b->red_nb[at];
			b->red_nbpos[acc + j] = at;
		}
		b->ucount[c] = (uint32_t)(b->ubase + acc);
		acc += u;
	}
	b->ucount[b->c1] = (uint32_t)(b->ubase + acc);
	b->red_nbpos[acc] = (uint32_t)b->nr;
	b->nu = acc;
	for (k = 0; k < acc; k++)
		if (idx_grp_add(&b->grp, b->red_nbpos[k + 1] - b->red_nbpos[k], &b->sk[SK_GRP], &b->sk[SK_REP]) != 0)
			return -1;
	free(b->red_nbpos);
	b->red_nbpos = NULL;
	if (idx_sink_adopt(&b->sk[SK_POS], b->red_pos, b->nr * 4) != 0) {
		b->red_pos = NULL;
		return -1;
	}
	b->red_pos = NULL;
	if (b->kb == 4) {
		/* narrow the keys to u32 in place (l <= 16): byte 4j is below 8j */
		for (k = 0; k < acc; k++) {
			uint32_t x = (uint32_t)b->red_nb[k];

			memcpy((uint8_t *)b->red_nb + 4 * k, &x, 4);
		}
	}
	return 0;
}

/* The pass's part of the indexed-block structure: a BDZ perfect hash per seed block. */
static int pass_blk(bctx_t *b)
{
	uint64_t c, acc = b->sbase, racc = b->rbase, nby;

	for (c = b->c0; c < b->c1; c++) {
		uint64_t u = b->ucount[c + 1] - b->ucount[c], m = 3ULL * bdz_part_size((uint32_t)u);

		b->blk_start[c] = (uint32_t)acc;
		b->blk_roff[c] = (uint32_t)racc;
		acc += m;
		racc += (m * idx_rank_width((uint32_t)u) + 31) / 32;
		if (acc > UINT32_MAX || racc >= UINT32_MAX)
			return sp_fail("partition %u has too many hash slots: lower the partition size", b->part_no);
	}
	b->blk_start[b->c1] = (uint32_t)acc;
	b->blk_roff[b->c1] = (uint32_t)racc;
	b->ns = acc - b->sbase;
	b->blk_rank = sp_calloc(racc - b->rbase + 1, sizeof *b->blk_rank);
	/* bytes sbase/4 .. (acc+3)/4, the first one shared with the pass before */
	nby = ((acc + 3) >> 2) - (b->sbase >> 2) + 1;
	b->blk_g = sp_malloc(nby);
	memset(b->blk_g, 0xff, nby);
	b->blk_g[0] = b->g_carry;
	if (par(b, job_block) != 0)
		return -1;
	/* the bytes whose four slots are done; the last one may be shared */
	if (idx_sink_put(&b->sk[SK_G], b->blk_g, (acc >> 2) - (b->sbase >> 2)) != 0)
		return -1;
	b->g_carry = b->blk_g[(acc >> 2) - (b->sbase >> 2)];
	free(b->blk_g);
	b->blk_g = NULL;
	if (idx_sink_adopt(&b->sk[SK_RANK], b->blk_rank, (racc - b->rbase) * 4) != 0) {
		b->blk_rank = NULL;
		return -1;
	}
	b->blk_rank = NULL;
	b->sbase = acc;
	b->rbase = racc;
	return 0;
}

/* Everything of the partition but its FM-index (and the sinks). */
static void part_free_arrays(bctx_t *b)
{
	int sl;

	for (sl = 0; sl < b->nsl; sl++) {
		if (b->cnt)
			free(b->cnt[sl]);
		if (b->off)
			free(b->off[sl]);
	}
	free(b->cnt);
	free(b->off);
	free(b->tup);
	free(b->gen_start);
	free(b->gen_pos);
	free(b->red_nb);
	free(b->red_nbpos);
	free(b->red_pos);
	free(b->ucount);
	free(b->blk_start);
	free(b->blk_seed);
	free(b->blk_roff);
	free(b->blk_rank);
	free(b->blk_g);
	b->cnt = b->off = NULL;
	b->tup = NULL;
	b->gen_start = b->gen_pos = b->red_nbpos = b->red_pos = b->ucount = NULL;
	b->blk_start = b->blk_roff = b->blk_rank = NULL;
	b->blk_seed = NULL;
	b->red_nb = NULL;
	b->blk_g = NULL;
}

/* Everything a build left of partition B. */
static void part_free(bctx_t *b)
{
	int i;

	part_free_arrays(b);
	for (i = 0; i < SK_N; i++)
		idx_sink_free(&b->sk[i]);
	fm_build_free(&b->fb);
	memset(b, 0, sizeof *b);
}

/* Bytes a pass over N windows, the largest block MAXB of them, needs at its peak. */
static uint64_t pass_bytes(const bctx_t *b, uint64_t n, uint64_t maxb)
{
	/* the sort's tuples, positions and neighborhoods (28 bytes a window);
	 * each thread's scratch for one block (two arrays of 2 n 16-byte pairs) */
	return 28 * n + 64ULL * (uint64_t)b->nt * maxb;
}

/* Bytes the FM-index's build of partition B needs (man/seqidx.1), 0 without one. */
static uint64_t fm_bytes(const bctx_t *b)
{
	uint64_t n = b->pr->end - b->pr->beg;

	return b->p->structs & IDX_S_FM ? n * (n > (1ULL << 31) ? 19 : 11) / 2 : 0;
}

/* Bytes the partition holds through all its passes (start lists, counts, sinks, FM build). */
static uint64_t part_fixed(const bctx_t *b, int files)
{
	/* gen_start, ucount, blk_start, blk_roff (u32) and blk_seed (a byte) */
	uint64_t nc = b->n_codes, f = (4 * 4 + 1) * (nc + 1) + 8ULL * (uint64_t)b->nsl * b->n_top;

	if (files)
		f += SK_N * (uint64_t)IDX_SINK_BUF;
	return f + fm_bytes(b);   /* the FM-index is built beside the passes */
}

/* N bytes as "12.3 MiB" (or "123 KiB" below 10 MiB) into BUF. */
static const char *mib(uint64_t n, char *buf, size_t len)
{
	if (n < 10 * 1048576ULL)
		snprintf(buf, len, "%.0f KiB", (double)n / 1024.0);
	else
		snprintf(buf, len, "%.1f MiB", (double)n / 1048576.0);
	return buf;
}

/* Windows of top bucket T and the largest block among them (*MAXB). */
static uint64_t top_size(const bctx_t *b, uint64_t t, uint64_t *maxb)
{
	uint64_t c = t << b->tshift, e = (t + 1) << b->tshift;

	*maxb = 0;
	for (; c < e; c++)
		if (b->gen_start[c + 1] - b->gen_start[c] > *maxb)
			*maxb = b->gen_start[c + 1] - b->gen_start[c];
	return b->gen_start[e] - b->gen_start[t << b->tshift];
}

/* The top buckets of the pass from bucket T on within ROOM bytes: [t0, t1), nr; 0 or -1. */
static int next_pass(build_t *bt, bctx_t *b, uint64_t t, uint64_t room, uint64_t fixed)
{
	uint64_t n = 0, maxb = 0, t1 = t;
	char s1[32], s2[32], s3[32];

	while (t1 < b->n_top) {
		uint64_t mb, tn = top_size(b, t1, &mb);

		if (mb < maxb)
			mb = maxb;
		if (t1 > t && pass_bytes(b, n + tn, mb) > room)
			break;
		n += tn;
		maxb = mb;
		t1++;
	}
	if (pass_bytes(b, n, maxb) > room)
		return sp_fail("memory budget -M %s is too small: partition %u needs %s for the program, its reference, start lists and counts%s, and %s for one pass over %llu of its seed positions; raise -M (or lower -p)",
			mib(bt->o->mem_limit, s1, sizeof s1), b->part_no, mib(fixed, s2, sizeof s2),
			b->p->structs & IDX_S_FM ? " (and the FM-index's build beside)" : "",
			mib(pass_bytes(b, n, maxb), s3, sizeof s3), (unsigned long long)n);
	b->t0 = t;
	b->t1 = t1;
	b->c0 = t << b->tshift;
	b->c1 = t1 << b->tshift;
	b->obase = b->gen_start[b->c0];
	b->nr = n;
	return 0;
}

/* The red.* and blk.* sections of partition B, from its sinks. */
static int part_write(build_t *bt, bctx_t *b)
{
	idx_wr_t *w = &bt->w;
	uint64_t nc = b->n_codes;
	uint32_t pn = b->part_no, spare = 0;
	int rc;

	if (idx_grp_end(&b->grp, &b->sk[SK_GRP]) != 0)
		return -1;
	rc = idx_wr_section(w, "red.start", pn, 4, b->ucount, (nc + 1) * 4)
		|| idx_sink_write(w, &b->sk[SK_NB], "red.nb", pn, b->kb)
		|| idx_sink_write(w, &b->sk[SK_GRP], "red.grp", pn, 16)
		|| idx_sink_write(w, &b->sk[SK_REP], "red.rep", pn, 4)
		|| idx_sink_write(w, &b->sk[SK_POS], "red.pos", pn, 4) ? -1 : 0;
	if (rc != 0 || !(b->p->structs & IDX_S_BLOCK))
		return rc;
	if ((b->sbase & 3) && idx_sink_put(&b->sk[SK_G], &b->g_carry, 1) != 0)
		return -1;   /* the last g byte, partly phantom slots' (g = 3) */
	/* blk.rank: the blocks' rank words, then the spare word */
	return idx_wr_section(w, "blk.start", pn, 4, b->blk_start, (nc + 1) * 4)
		|| idx_wr_section(w, "blk.seed", pn, 1, b->blk_seed, nc)
		|| idx_wr_section(w, "blk.roff", pn, 4, b->blk_roff, (nc + 1) * 4)
		|| idx_sink_write(w, &b->sk[SK_G], "blk.g", pn, 1)
		|| idx_sink_put(&b->sk[SK_RANK], &spare, 4)
		|| idx_sink_write(w, &b->sk[SK_RANK], "blk.rank", pn, 4) ? -1 : 0;
}

/*
 * The general, reduced and block structures of partition BT->b: the
 * windows counted by code, then passes over ranges of top buckets (one
 * when the partition fits -M), then the sections written.
 */
static int part_structs(build_t *bt)
{
	bctx_t *b = bt->b;
	const idx_params_t *p = b->p;
	uint64_t nc = b->n_codes, c, t, acc = 0, nocc = b->ws.total, lim = bt->o->mem_limit;
	uint64_t fixed, maxb = 0, npass = 0;
	uint32_t pn = b->part_no;
	const char *dir = NULL;
	int sl, i;

	if (!(p->structs & (IDX_S_GENERAL | IDX_S_REDUCED | IDX_S_BLOCK)))
		return 0;
	progress(bt, "partition %u: %llu seed positions", pn, (unsigned long long)nocc);
	b->tshift = 2 * p->w > 8 ? 2 * p->w - 8 : 0;
	b->n_top = nc >> b->tshift;
	b->cnt = sp_malloc((size_t)b->nsl * sizeof *b->cnt);
	b->off = sp_malloc((size_t)b->nsl * sizeof *b->off);
	for (sl = 0; sl < b->nsl; sl++) {
		b->cnt[sl] = sp_calloc(b->n_top, sizeof **b->cnt);
		b->off[sl] = sp_calloc(b->n_top, sizeof **b->off);
	}
	b->gen_start = sp_calloc(nc + 1, sizeof *b->gen_start);
	if (par(b, job_count) != 0)
		return -1;
	for (c = 0; c < nc; c++) {
		uint32_t x = b->gen_start[c];

		b->gen_start[c] = (uint32_t)acc;
		acc += x;
		if (x > maxb)
			maxb = x;
	}
	b->gen_start[nc] = (uint32_t)acc;
	b->ucount = sp_malloc((nc + 1) * sizeof *b->ucount);
	if (p->structs & IDX_S_BLOCK) {
		b->blk_start = sp_malloc((nc + 1) * sizeof *b->blk_start);
		b->blk_roff = sp_malloc((nc + 1) * sizeof *b->blk_roff);
		b->blk_seed = sp_malloc(nc * sizeof *b->blk_seed);
	}
	/* one pass in memory if the partition fits, else passes through -T */
	fixed = bt->fixed + part_fixed(b, 0);
	if (lim && fixed + pass_bytes(b, nocc, maxb) > lim) {
		dir = bt->o->tmp_dir;
		fixed = bt->fixed + part_fixed(b, 1);
	}
	for (i = 0; i < SK_N; i++)
		if (idx_sink_open(&b->sk[i], dir, bt->w.fp) != 0)
			return -1;
	b->g_carry = 0xff;
	for (t = 0; t < b->n_top || npass == 0; t = b->t1) {
		if (next_pass(bt, b, t, !lim ? UINT64_MAX : lim > fixed ? lim - fixed : 0, fixed) != 0)
			return -1;
		npass++;
		if (dir)
			progress(bt, "partition %u: pass %llu, seeds %llu..%llu (%llu positions)", pn,
				(unsigned long long)npass, (unsigned long long)b->c0,
				(unsigned long long)b->c1 - 1, (unsigned long long)b->nr);
		if (pass_sort(b) != 0 || pass_red(b) != 0)
			return -1;
		if ((p->structs & IDX_S_BLOCK) && pass_blk(b) != 0)
			return -1;
		/* the pass's unique neighborhoods: red.nb */
		b->red_nb = sp_realloc(b->red_nb, b->nu * b->kb + 1);
		if (idx_sink_adopt(&b->sk[SK_NB], b->red_nb, b->nu * b->kb) != 0) {
			b->red_nb = NULL;
			return -1;
		}
		b->red_nb = NULL;
		b->ubase += b->nu;
	}
	progress(bt, "partition %u: %llu unique neighborhoods, %llu hash slots, %llu graphs tried, %llu pass%s%s%s; writing",
		pn, (unsigned long long)b->ubase, (unsigned long long)b->sbase,
		(unsigned long long)b->attempts_total, (unsigned long long)npass, npass > 1 ? "es" : "",
		dir ? " through " : "", dir ? dir : "");
	return part_write(bt, b);
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
	char s1[32], s2[32];

	/* the FM-index of a partition is built whole: its part of the budget */
	if (bt->o->mem_limit && fm_bytes(b) && bt->fixed + fm_bytes(b) > bt->o->mem_limit)
		return sp_fail("memory budget -M %s is too small: the FM-index of partition %u (%llu bases) needs %s to build; raise -M (or lower -p)",
			mib(bt->o->mem_limit, s1, sizeof s1), b->part_no,
			(unsigned long long)(b->pr->end - b->pr->beg), mib(bt->fixed + fm_bytes(b), s2, sizeof s2));
	uint32_t pn = b->part_no;
	int rc;

	/* the suffix array (one thread in libdivsufsort) is built beside the rest */
	if ((b->p->structs & IDX_S_FM) && b->nt > 1)
		rc = sp_for(2, 2, 1, part_task, bt);
	else
		rc = part_task(bt, 1, 0) != 0 || part_task(bt, 0, 0) != 0 ? -1 : 0;
	if (rc != 0 || !(b->p->structs & IDX_S_FM))
		return rc;
	rc = idx_wr_section(&bt->w, "fm.meta", pn, 8, fb->meta, FM_META_LEN)
		|| idx_wr_section(&bt->w, "fm.occ", pn, 1, fb->occ, fb->occ_len)
		|| idx_wr_section(&bt->w, "fm.mark", pn, 8, fb->mark, fb->mark_len)
		|| idx_wr_section(&bt->w, "fm.sa", pn, 4, fb->sa, fb->sa_len) ? -1 : 0;
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
	idx_wr_t *w = &bt->w;
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
	rc = idx_wr_raw(w, hdr, sizeof hdr)
		|| idx_wr_section(w, "seq.names", IDX_PART_GLOBAL, 1, names, names_len)
		|| idx_wr_section(w, "seq.len", IDX_PART_GLOBAL, 8, r->len, (uint64_t)r->n_seq * 8)
		|| idx_wr_section(w, "seq.off", IDX_PART_GLOBAL, 8, r->off, ((uint64_t)r->n_seq + 1) * 8)
		/* 16 bytes of zero slack so 64-bit loads at any base stay in the payload */
		|| idx_wr_section(w, "ref.pack", IDX_PART_GLOBAL, 1, r->pack, (r->total + 3) / 4 + 16)
		|| idx_wr_section(w, "ref.nrun", IDX_PART_GLOBAL, 8, r->nrun, r->n_nrun * 16)
		|| idx_wr_section(w, "part", IDX_PART_GLOBAL, 32, part_rec, (uint64_t)np * 32) ? -1 : 0;
	free(part_rec);
	return rc;
}

/* The end section (written last: a file without it is refused). */
static int write_end(idx_wr_t *w)
{
	uint8_t end[32];

	sp_st64(end, w->fp);
	sp_st64(end + 8, w->n_sections + 1);
	sp_st64(end + 16, w->off);
	memset(end + 24, 0, 8);
	memcpy(end + 24, IDX_END_MAGIC, 6);
	return idx_wr_section(w, "end", IDX_PART_GLOBAL, 1, end, sizeof end);
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
		if (r->len[i] >= p->span)
			continue;
		if (o->warn && n_short < 5)
			sp_warn("sequence '%s' (%llu bases) is shorter than a seed (%u bases): not indexed",
				r->names[i], (unsigned long long)r->len[i], p->span);
		n_short++;
	}
	if (o->warn && n_short > 5)
		sp_warn("%u sequences in all are shorter than %u bases and not indexed", n_short, p->span);
	*np = idx_partition(r->off, r->n_seq, p->part_limit, win, pr);
	*ws = sp_calloc(*np, sizeof **ws);
	for (i = 0; i < *np; i++) {
		part_windows(r, &(*pr)[i], p->span, win, &(*ws)[i]);
		if ((*ws)[i].total > UINT32_MAX)
			return sp_fail("partition %u has too many seed positions", i);
		total_w += (*ws)[i].total;
	}
	if (total_w == 0)
		return sp_fail("no seed position in the reference: no sequence holds %u bases (a seed's span) free of N",
			p->span);
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
	/* what the whole build holds: the reference (and this copy of its
	 * names), or what the process holds now if more (its libraries, the
	 * reader's leftovers), plus the copy */
	bt.fixed = r->pack_cap + 16 * r->nrun_cap + 2 * names_len + 40ULL * r->cap_seq
		+ 4ULL * r->hash_cap + 16ULL * np;
	if (sp_rss(0) + names_len + 16ULL * np > bt.fixed)
		bt.fixed = sp_rss(0) + names_len + 16ULL * np;
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
