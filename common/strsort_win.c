/*
 * strsort_win.c - ordering lines by their encoded keys (strsort_priv.h).
 *
 * Every key of a line is encoded (strsort_enc.c) into one byte string, and
 * the strings are radix sorted (msd.h).  The encodings are not all kept at
 * once: each line gets a slot of S bytes that holds a window of its string
 * (S - 1 bytes from a depth on), and a string that goes on past the window
 * is cut there and marked, so memory is bounded by the slots whatever the
 * keys' length (an -f whole line would otherwise be a second copy of the
 * input).  S is the sampled longest string, within a budget that keeps the
 * peak near twice the input.
 *
 *   slot k (at k * S, the entry's idx; ties by idx keep the input order)
 *   +----------------------------+------+
 *   | bytes [depth, depth + S-1) | MARK |   a cut string: length S
 *   +----------------------------+------+
 *   | bytes [depth, end) | (unused)     |   a string that fits: its length
 *   +--------------------+--------------+
 *
 * A string that fits orders before a cut one with the same bytes (it is a
 * proper prefix of it); cut strings with equal windows come out as equals,
 * and such a group is sorted again on its next window: a large group in
 * slots the same way, a small one (fewer than WIN_BIG lines) on whole
 * encodings from the depth on, in its own arena.  Lines equal on every key
 * are marked in a tie bitmap for -u and the last-resort comparison.
 *
 * At the top the slots are filled in parallel slices, with a histogram of
 * 16 bits past the prefix all strings share, and the entries are scattered
 * to their buckets as they are made; sp_msd_sort_ranges then needs no copy
 * of the whole entry array as scratch.
 */
#include <stdlib.h>
#include <string.h>

#include "sp_thread.h"
#include "strsort_priv.h"
#include "util.h"

#define WIN_MARK 0xFF
#define WIN_BIG (1u << 16)   /* a group this large: slots, sorted in parallel */
#define WIN_MAXS 4096        /* the widest slot */
#define WIN_SAMPLE 4096      /* lines sampled for the slot width */

/* one ss_win_sort */
typedef struct {
	const ss_opts *o;
	const ss_chunk *c;
	uint64_t *tie;           /* bit i: order[i] has the keys of order[i - 1] */
	size_t budget;           /* bytes for the slots of a group */
	size_t big;              /* a group this large: slots, sorted in parallel */
} win_run;

/* per-thread room for encoding one line */
typedef struct {
	uint8_t *buf;
	size_t cap;
} enc_room;

/* the encoding of every key of line x of c into r; returns its length */
static size_t enc_line(const ss_opts *o, const ss_chunk *c, uint32_t x, enc_room *r)
{
	size_t len = c->loff[x + 1] - c->loff[x] - 1, need = 0;
	int j;

	for (j = 0; j < o->nkeys; j++)
		need += ss_enc_bound(&o->keys[j], len, 1);
	if (need > r->cap) {
		r->cap = need < 256 ? 256 : 2 * need;
		free(r->buf);
		r->buf = sp_malloc(r->cap);
	}
	return ss_enc_line(o, c->buf + c->loff[x], len, r->buf);
}

/* one level of slots: lines ln[0..m) (ascending; NULL: 0..m-1) */
typedef struct {
	const ss_opts *o;
	const ss_chunk *c;
	const uint32_t *ln;
	size_t m, depth, S;
	uint8_t *slots;
	uint16_t *lens;
	sp_msd_ent *e;
	int ns;                  /* slices */
	uint64_t *first, *diff;  /* per slice: the first prefix, the bits that differ */
	uint32_t *hist;          /* ns x 65536 */
	int top;                 /* the first bit where prefixes differ */
	enc_room *room;          /* per thread */
} slot_ctx;

static void slice_of(size_t m, size_t ns, size_t k, size_t *lo, size_t *hi)
{
	*lo = m * k / ns;
	*hi = m * (k + 1) / ns;
}

static inline uint32_t bucket_of(const slot_ctx *s, uint64_t p)
{
	return (uint32_t)((p << s->top) >> 48);
}

/* sp_for item: fill the slots of slice sl */
static int slot_fill(void *arg, size_t sl, int tid)
{
	slot_ctx *s = arg;
	size_t lo, hi, k, S = s->S;
	uint64_t f = 0, x = 0;

	slice_of(s->m, (size_t)s->ns, sl, &lo, &hi);
	for (k = lo; k < hi; k++) {
		size_t full = enc_line(s->o, s->c, s->ln ? s->ln[k] : (uint32_t)k, &s->room[tid]);
		size_t rest = full > s->depth ? full - s->depth : 0;
		uint8_t *slot = s->slots + k * S, w8[8];
		uint64_t p;
		size_t l8;

		if (rest < S) {
			memcpy(slot, s->room[tid].buf + s->depth, rest);
			s->lens[k] = (uint16_t)rest;
		} else {
			memcpy(slot, s->room[tid].buf + s->depth, S - 1);
			slot[S - 1] = WIN_MARK;
			s->lens[k] = (uint16_t)S;
		}
		/* (through a copy: a load at the slot reads 8 bytes, into the
		 * next slot, which another slice may be writing) */
		l8 = s->lens[k] < 8 ? s->lens[k] : 8;
		memset(w8, 0, sizeof w8);
		memcpy(w8, slot, l8);
		p = sp_msd_load(w8, l8, 0);
		if (k == lo)
			f = p;
		x |= p ^ f;
	}
	s->first[sl] = f;
	s->diff[sl] = x;
	return 0;
}

/* sp_for item: the bucket histogram of slice sl */
static int slot_hist(void *arg, size_t sl, int tid)
{
	slot_ctx *s = arg;
	uint32_t *h = s->hist + (sl << 16);
	size_t lo, hi, k;

	(void)tid;
	slice_of(s->m, (size_t)s->ns, sl, &lo, &hi);
	for (k = lo; k < hi; k++)
		h[bucket_of(s, sp_msd_load(s->slots + k * s->S, s->lens[k], 0))]++;
	return 0;
}

/* sp_for item: the entries of slice sl, at their buckets' next places */
static int slot_scatter(void *arg, size_t sl, int tid)
{
	slot_ctx *s = arg;
	uint32_t *h = s->hist + (sl << 16);
	size_t lo, hi, k;

	(void)tid;
	slice_of(s->m, (size_t)s->ns, sl, &lo, &hi);
	for (k = lo; k < hi; k++) {
		sp_msd_ent t;

		t.pfx = sp_msd_load(s->slots + k * s->S, s->lens[k], 0);
		t.idx = (uint32_t)(k * s->S);
		t.len = s->lens[k];
		s->e[h[bucket_of(s, t.pfx)]++] = t;
	}
	return 0;
}

/* a group of equal cut windows, to be sorted on the next one */
typedef struct {
	size_t pos, n;
} group;

typedef struct {
	group *g;
	size_t n, cap;
} group_list;

static void group_add(group_list *l, size_t pos, size_t n)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->g = sp_realloc(l->g, l->cap * sizeof *l->g);
	}
	l->g[l->n].pos = pos;
	l->g[l->n].n = n;
	l->n++;
}

static inline void tie_set(uint64_t *tie, size_t i)
{
	__atomic_fetch_or(&tie[i >> 6], (uint64_t)1 << (i & 63), __ATOMIC_RELAXED);
}

/* entries x and y (sorted, neighbours) have the same string: equal keys
 * share their length and their last prefix (loaded at the same depths) */
static inline int ent_same(const sp_msd_ent *x, const sp_msd_ent *y, const sp_msd_src *src)
{
	return x->len == y->len && x->pfx == y->pfx &&
		memcmp(src->base + (src->off ? src->off[x->idx] : x->idx),
			src->base + (src->off ? src->off[y->idx] : y->idx), x->len) == 0;
}

/* per-thread scratch of the small groups */
typedef struct {
	enc_room room;
	uint8_t *keys;
	size_t kcap;
	uint64_t *off;
	sp_msd_ent *e;
	uint32_t *ln;
	size_t ncap;
} small_room;

/*
 * A small group: lines ord[0..m) (ascending), equal on their first DEPTH
 * encoded bytes, sorted on the rest of their encodings; ties at bits
 * [pos + 1, pos + m).
 */
static void sort_small(const win_run *w, uint32_t *ord, size_t m, size_t depth, size_t pos,
		small_room *r)
{
	const ss_opts *o = w->o;
	const ss_chunk *c = w->c;
	sp_msd_src src = { NULL, NULL, NULL };
	size_t k, at = 0;

	if (m > r->ncap) {
		r->ncap = 2 * m;
		free(r->off);
		free(r->e);
		free(r->ln);
		r->off = sp_malloc((r->ncap + 1) * sizeof *r->off);
		r->e = sp_malloc(r->ncap * sizeof *r->e);
		r->ln = sp_malloc(r->ncap * sizeof *r->ln);
	}
	memcpy(r->ln, ord, m * sizeof *ord);
	for (k = 0; k < m; k++) {
		size_t full;

		/* the lines of a group are spread over the arena */
		if (k + 16 < m)
			__builtin_prefetch(&c->loff[r->ln[k + 16]]);
		if (k + 8 < m) {
			const uint8_t *p = c->buf + c->loff[r->ln[k + 8]];

			__builtin_prefetch(p);
			__builtin_prefetch(p + 64);
		}
		full = enc_line(o, c, r->ln[k], &r->room);
		size_t rest = full > depth ? full - depth : 0;

		if (at + rest + SS_PAD > r->kcap) {
			r->kcap = 2 * (at + rest + SS_PAD);
			r->keys = sp_realloc(r->keys, r->kcap);
		}
		memcpy(r->keys + at, r->room.buf + depth, rest);
		r->off[k] = at;
		r->e[k].idx = (uint32_t)k;
		r->e[k].len = (uint32_t)rest;
		at += rest;
	}
	memset(r->keys + at, 0, SS_PAD);
	src.base = r->keys;
	src.off = r->off;
	for (k = 0; k < m; k++)
		r->e[k].pfx = sp_msd_load(r->keys + r->off[k], r->e[k].len, 0);
	o->algo->fn(r->e, m, &src, 1);
	for (k = 0; k < m; k++) {
		ord[k] = r->ln[r->e[k].idx];
		if (k && ent_same(&r->e[k - 1], &r->e[k], &src))
			tie_set(w->tie, pos + k);
	}
}

typedef struct {
	const win_run *w;
	uint32_t *ord;
	size_t depth, pos;       /* pos: where ord starts in the tie bitmap */
	const group_list *gl;
	small_room *rooms;
} small_ctx;

/* sp_for item: small group i */
static int small_run(void *arg, size_t i, int tid)
{
	small_ctx *s = arg;
	const group *g = &s->gl->g[i];

	sort_small(s->w, s->ord + g->pos, g->n, s->depth, s->pos + g->pos, &s->rooms[tid]);
	return 0;
}

static void sort_slots(const win_run *w, uint32_t **ordp, const uint32_t *ln, size_t m,
		size_t depth, size_t S, size_t pos, int nthreads);

/*
 * Sort the groups of gl (positions in ord, lines equal on their first
 * DEPTH bytes): the large ones one by one with every thread, the small
 * ones in parallel.
 */
static void sort_groups(const win_run *w, uint32_t *ord, const group_list *gl, size_t depth,
		size_t S, size_t pos, int nthreads)
{
	group_list small = { NULL, 0, 0 };
	size_t i;
	int t;

	for (i = 0; i < gl->n; i++) {
		const group *g = &gl->g[i];

		if (g->n >= w->big) {
			uint32_t *ln = sp_big_alloc(g->n * sizeof *ln), *out = ord + g->pos;
			size_t S2 = 2 * S < WIN_MAXS ? 2 * S : WIN_MAXS;

			if (S2 > w->budget / g->n)
				S2 = w->budget / g->n;
			if (S2 > UINT32_MAX / g->n)
				S2 = UINT32_MAX / g->n;
			if (S2 < S)
				S2 = S;
			memcpy(ln, out, g->n * sizeof *ln);
			sort_slots(w, &out, ln, g->n, depth, S2, pos + g->pos, nthreads);
			sp_big_free(ln, g->n * sizeof *ln);
		} else {
			group_add(&small, g->pos, g->n);
		}
	}
	if (small.n) {
		small_ctx s = { w, ord, depth, pos, &small, NULL };
		int nt = small.n < 64 ? 1 : nthreads;

		s.rooms = sp_calloc((size_t)nt, sizeof *s.rooms);
		sp_for(nt, small.n, 16, small_run, &s);
		for (t = 0; t < nt; t++) {
			free(s.rooms[t].room.buf);
			free(s.rooms[t].keys);
			free(s.rooms[t].off);
			free(s.rooms[t].e);
			free(s.rooms[t].ln);
		}
		free(s.rooms);
	}
	free(small.g);
}

/*
 * Sort lines ln[0..m) (ascending; NULL: 0..m-1), equal on their first
 * DEPTH encoded bytes, in slots of S bytes, into *ordp (NULL: allocated
 * here, m + 1 entries, once the slots are freed); ties at bits
 * [pos + 1, pos + m).  BUDGET bounds the slots of the deeper groups.
 */
static void sort_slots(const win_run *w, uint32_t **ordp, const uint32_t *ln, size_t m,
		size_t depth, size_t S, size_t pos, int nthreads)
{
	const ss_opts *o = w->o;
	slot_ctx s;
	sp_msd_src src = { NULL, NULL, NULL };
	group_list gl = { NULL, 0, 0 };
	size_t nb = (size_t)1 << 16, sl, b, at, i, j, scap = m * S + SS_PAD;
	size_t *ends;
	uint64_t x = 0;
	uint32_t *ord;
	int t;

	memset(&s, 0, sizeof s);
	s.o = o;
	s.c = w->c;
	s.ln = ln;
	s.m = m;
	s.depth = depth;
	s.S = S;
	s.ns = nthreads > 1 && m >= w->big ? nthreads : 1;
	s.slots = sp_big_alloc(scap);
	memset(s.slots + m * S, 0, SS_PAD);
	s.lens = sp_big_alloc(m * sizeof *s.lens);
	s.first = sp_calloc((size_t)s.ns, sizeof *s.first);
	s.diff = sp_calloc((size_t)s.ns, sizeof *s.diff);
	s.room = sp_calloc((size_t)s.ns, sizeof *s.room);
	sp_for(s.ns, (size_t)s.ns, 1, slot_fill, &s);
	for (sl = 0; sl < (size_t)s.ns; sl++) {
		size_t lo, hi;

		slice_of(m, (size_t)s.ns, sl, &lo, &hi);
		if (hi > lo)
			x |= s.diff[sl] | (s.first[sl] ^ s.first[0]);
	}
	s.top = x ? __builtin_clzll(x) : 0;
	for (t = 0; t < s.ns; t++)
		free(s.room[t].buf);
	free(s.room);
	/* bucket-major, slice-minor places keep the scatter in input order */
	s.hist = sp_calloc((size_t)s.ns << 16, sizeof *s.hist);
	sp_for(s.ns, (size_t)s.ns, 1, slot_hist, &s);
	ends = sp_malloc(nb * sizeof *ends);
	for (b = 0, at = 0; b < nb; b++) {
		for (sl = 0; sl < (size_t)s.ns; sl++) {
			uint32_t v = s.hist[sl << 16 | b];

			s.hist[sl << 16 | b] = (uint32_t)at;
			at += v;
		}
		ends[b] = at;
	}
	s.e = sp_big_alloc((m + 1) * sizeof *s.e);
	sp_for(s.ns, (size_t)s.ns, 1, slot_scatter, &s);
	free(s.hist);
	sp_big_free(s.lens, m * sizeof *s.lens);
	src.base = s.slots;
	if (o->algo == &sp_msd_algos[0])
		sp_msd_sort_ranges(s.e, m, ends, nb, &src, nthreads);
	else
		o->algo->fn(s.e, m, &src, nthreads);
	free(ends);
	/* ties, and the groups of equal cut windows */
	for (i = 0; i < m; i = j) {
		for (j = i + 1; j < m && ent_same(&s.e[i], &s.e[j], &src); j++)
			;
		if (j - i < 2)
			continue;
		if (s.e[i].len == S)
			group_add(&gl, i, j - i);
		else
			for (b = i + 1; b < j; b++)
				tie_set(w->tie, pos + b);
	}
	sp_big_free(s.slots, scap);
	ord = *ordp ? *ordp : (*ordp = sp_big_alloc((m + 1) * sizeof *ord));
	for (i = 0; i < m; i++) {
		size_t k = s.e[i].idx / S;

		ord[i] = ln ? ln[k] : (uint32_t)k;
	}
	sp_big_free(s.e, (m + 1) * sizeof *s.e);
	free(s.first);
	free(s.diff);
	if (gl.n)
		sort_groups(w, ord, &gl, depth + S - 1, S, pos, nthreads);
	free(gl.g);
}

/*
 * The slot width: the longest encoding of a sample of lines (the first
 * ones and blocks spread over the chunk), and a byte for the mark, within
 * the budget (bytes for all slots).
 */
static size_t slot_width(const ss_opts *o, const ss_chunk *c, size_t budget)
{
	enc_room r = { NULL, 0 };
	size_t n = c->n, i, mx = 0, S, step = n / 64 + 1;

	for (i = 0; i < n; i++) {
		size_t l;

		if (n > WIN_SAMPLE && i >= WIN_SAMPLE / 2 && i % step >= WIN_SAMPLE / 128)
			continue;
		l = enc_line(o, c, (uint32_t)i, &r);
		if (l > mx)
			mx = l;
	}
	free(r.buf);
	S = mx + 1;
	if (S > WIN_MAXS)
		S = WIN_MAXS;
	if (S > budget / (n ? n : 1))
		S = budget / (n ? n : 1);
	if (S > UINT32_MAX / (n ? n : 1))
		S = UINT32_MAX / (n ? n : 1);
	return S < 2 ? 2 : S;
}

int ss_win_sort(const ss_opts *o, ss_chunk *c)
{
	size_t n = c->n, S;
	uint32_t *ord = NULL;
	win_run w = { o, c, NULL, 0, WIN_BIG };
	const char *env = getenv("SEEDPIPE_STRSORT_SLOT");

	w.tie = c->tie = sp_calloc(n / 64 + 1, sizeof *c->tie);
	if (n == 0) {
		c->order = sp_big_alloc(sizeof *c->order);
		return 0;
	}
	if (n > UINT32_MAX / 2)
		return sp_fail("more than %u lines in memory; use -S to sort in runs", UINT32_MAX / 2);
	/* the peak is the arena, the line offsets (8 bytes a line), the
	 * entries (16), the slots, and some scratch: the slots may take what
	 * keeps it within twice the arena, but at least 16 bytes a line */
	w.budget = c->len > 32 * n + c->len / 16 ? c->len - 32 * n - c->len / 16 : 0;
	if (w.budget < 16 * n)
		w.budget = 16 * n;
	S = slot_width(o, c, w.budget);
	if (env && *env) {
		/* (for the tests: "S[,BIG]", the slot width and the group size
		 * sorted in slots) */
		char *end;
		size_t v = (size_t)strtoull(env, &end, 10), cap = UINT32_MAX / n;

		S = v < 2 ? 2 : v > WIN_MAXS ? WIN_MAXS : v;
		S = S > cap ? cap : S;
		w.budget = 2 * S * n;
		if (*end == ',' && strtoull(end + 1, NULL, 10) >= 2)
			w.big = (size_t)strtoull(end + 1, NULL, 10);
	}
	if (o->verbose)
		sp_msg("encoded keys in slots of %zu bytes", S);
	sort_slots(&w, &ord, NULL, n, 0, S, 0, o->nthreads < 1 ? 1 : o->nthreads);
	c->order = ord;
	return 0;
}
