/*
 * strsort_split.c - finding the lines of a chunk (strsort_priv.h).
 *
 * Line starts are found with memchr (64-byte SSE2 masks) in parallel
 * slices, the span of the first key of every line is computed once, and the
 * msd.h radix entries (8 cached key bytes, index, length) are made.  Two
 * shapes are found from a sample and confirmed by the scan that counts the
 * lines (else the plain entries are made): keys of at most 16 distinct
 * bytes get packed prefixes (msd.h, sp_msd_pack; DNA 32-mers are then
 * ordered by the entries alone and written back from them), and a prefix
 * that every key shares is skipped (the entries cache the bytes after it).
 * For the default sort the count pass also makes the first radix pass (a
 * histogram of the first 16 key bits per slice), and the entries are
 * scattered to their buckets as they are made (write-combined, full cache
 * lines streamed out, when a slice has few active buckets).
 */
#include <stdlib.h>
#include <string.h>

#include "sp_thread.h"
#include "strsort_priv.h"
#include "util.h"

#if defined(__SSE2__)
#include <emmintrin.h>

/* bit i set where p[i] == d, for 64 bytes at p */
static inline uint64_t delim_mask64(const uint8_t *p, __m128i d)
{
	uint64_t m0 = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)p), d));
	uint64_t m1 = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + 16)), d));
	uint64_t m2 = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + 32)), d));
	uint64_t m3 = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + 48)), d));

	return m0 | m1 << 16 | m2 << 32 | m3 << 48;
}
#define HAVE_MASK64 1
#endif

typedef struct {
	ss_chunk *c;
	int delim, nslices, whole, direct, bucket;
	int fill;              /* the pass fills the entries (else it counts) */
	size_t *lo, *cnt;      /* per slice: its start (lo[nslices]: the end), its lines */
	uint32_t *hist;        /* nslices x 65536 counters, then slots (bucket) */
	const ss_opts *o;
	sp_msd_src src;        /* how entries cache keys (src.pack: packed) */
	int check;             /* the count pass checks the packing's alphabet */
	uint8_t member[256];   /* the alphabet and the delimiter */
	int *bad;              /* per slice: a byte outside the alphabet, or a key
	                        * without the shared prefix (the bucket pass) */
	int hshift;            /* bucket = prefix >> hshift (16 or 8 top bits) */
	size_t lcp;            /* the bytes every key shares (the bucket pass checks) */
	const uint8_t *lcp_ref;
	uint8_t *wc_ok;        /* per slice: the scatter goes through write combining */
	int wc_mode;           /* 2: by the heuristic; SEEDPIPE_STRSORT_WC=0: never,
	                        * =1: every slice (for the tests) */
} split_ctx;

/* the top 16 bits of the prefix of key [p, p+len) (for the bucket pass) */
static inline uint64_t key_top16(const split_ctx *s, const uint8_t *p, size_t len)
{
	const sp_msd_pack *pk = s->src.pack;
	size_t i, m;
	uint64_t w = 0;

	if (!pk)
		return sp_msd_load(p, len, s->lcp) >> 48;
	m = (size_t)(16 / pk->per);
	for (i = 0; i < m; i++)
		w = w << pk->per | (i < len ? pk->rank[p[i]] : 0);
	return w;
}

/*
 * Write combining for the bucket scatter.  Every entry of the fill pass
 * goes to a random one of its slice's active buckets, and each store
 * misses the caches: the line is read before it is written (a read for
 * ownership), and with more streams than the cache holds it is evicted
 * and read again before its four entries are all in.  With few active
 * buckets (WC_ACTIVE or fewer in the slice), the entries of each bucket
 * are gathered in a cache line of their own (four entries) and a full line
 * is written with streaming stores, which skip the read.  The slots are
 * the same: only when the bytes are written changes.  A line that starts
 * before the slice's first slot in its bucket belongs partly to another
 * slice (or bucket), and its entries are stored one by one.
 */
#define WC_ACTIVE 8192
#define WC_MIN_LINES 65536   /* a slice with fewer lines scatters directly */

typedef struct {
	sp_msd_ent *line;      /* 65536 lines of four entries, 64-byte aligned */
	uint32_t *first;       /* the slice's first slot in each bucket */
	void *mem;             /* (allocated) */
	size_t size;
} wc_state;

#ifdef HAVE_MASK64
/* entry T to slot P of bucket B (the slot's line complete: written out) */
static inline void wc_put(const wc_state *w, sp_msd_ent *ents, size_t b, uint32_t p,
		const sp_msd_ent *t)
{
	sp_msd_ent *l = w->line + (b << 2);

	l[p & 3] = *t;
	if ((p & 3) != 3)
		return;
	if (p - 3 >= w->first[b]) {
		__m128i *d = (__m128i *)(void *)(ents + p - 3);
		const __m128i *q = (const __m128i *)(const void *)l;

		_mm_stream_si128(d, _mm_load_si128(q));
		_mm_stream_si128(d + 1, _mm_load_si128(q + 1));
		_mm_stream_si128(d + 2, _mm_load_si128(q + 2));
		_mm_stream_si128(d + 3, _mm_load_si128(q + 3));
	} else {
		uint32_t x;

		for (x = w->first[b]; x <= p; x++)
			ents[x] = l[x & 3];
	}
}
#endif

#ifdef HAVE_MASK64
/* bit i set where p[i] is in the alphabet or the delimiter, for 64 bytes */
static inline uint64_t member_mask64(const sp_msd_pack *pk, const uint8_t *p, __m128i d)
{
	uint64_t m = 0;
	int q, j;

	for (q = 0; q < 4; q++) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * q));
		__m128i e = _mm_cmpeq_epi8(v, d);

		for (j = 0; j < pk->sigma; j++)
			e = _mm_or_si128(e, _mm_cmpeq_epi8(v, _mm_set1_epi8((char)pk->sym[j])));
		m |= (uint64_t)(uint32_t)_mm_movemask_epi8(e) << (16 * q);
	}
	return m;
}
#endif

/*
 * The alphabet of a sample of c (the start and blocks spread over it) minus
 * the delimiter, as a packing; 0 when it has more than 16 bytes.
 */
static int sample_alphabet(const ss_chunk *c, int delim, sp_msd_pack *pk)
{
	uint64_t set[4] = { 0, 0, 0, 0 };
	size_t i, b, first = c->len < (64u << 10) ? c->len : (32u << 10);

	for (i = 0; i < first; i++)
		set[c->buf[i] >> 6] |= (uint64_t)1 << (c->buf[i] & 63);
	if (first < c->len) {
		for (b = 1; b <= 32; b++) {
			size_t at = (c->len - 1024) / 32 * b;

			for (i = at; i < at + 1024; i++)
				set[c->buf[i] >> 6] |= (uint64_t)1 << (c->buf[i] & 63);
		}
	}
	set[delim >> 6] &= ~((uint64_t)1 << (delim & 63));
	return sp_msd_pack_init(pk, set);
}

static inline void key_of(const split_ctx *s, size_t start, size_t end, size_t *kb, size_t *kl);

/*
 * The prefix shared by the keys of the first lines (up to 4096), when it is
 * at least 8 bytes: s->lcp and s->lcp_ref (the first key) are set.  Radix
 * passes over a prefix every key shares do nothing but reload the next 8
 * bytes; the bucket pass checks that the whole input shares it.
 */
static void sample_lcp(split_ctx *s)
{
	const ss_chunk *c = s->c;
	size_t pos = 0, lines = 0, lcp = SIZE_MAX, kb0 = 0;

	s->lcp = 0;
	while (pos < c->len && lines < 4096) {
		const uint8_t *q = memchr(c->buf + pos, s->delim, c->len - pos);
		size_t end = q ? (size_t)(q - c->buf) : c->len, kb, kl, i;

		key_of(s, pos, end, &kb, &kl);
		if (lines++ == 0) {
			kb0 = kb;
			lcp = kl;
		} else {
			if (kl < lcp)
				lcp = kl;
			for (i = 0; i < lcp && c->buf[kb + i] == c->buf[kb0 + i]; i++)
				;
			lcp = i;
		}
		if (lcp < 8)
			return;
		pos = end + 1;
	}
	if (lines < 2 || lcp == SIZE_MAX)
		return;
	s->lcp = lcp;
	s->lcp_ref = c->buf + kb0;
}

/* the first key of line [start, end) as an offset and a length */
static inline void key_of(const split_ctx *s, size_t start, size_t end, size_t *kb, size_t *kl)
{
	const uint8_t *b, *e;

	if (s->c->keyw) {
		*kb = start;
		*kl = end - start;
		return;
	}
	ss_key_span(&s->o->keys[0], s->o->tab, s->c->buf + start, end - start, &b, &e);
	*kb = (size_t)(b - s->c->buf);
	*kl = (size_t)(e - b);
}

static int too_long(const char *what, size_t len)
{
	return sp_fail("a %s of %zu bytes is longer than the %u bytes supported", what, len, UINT32_MAX);
}

/* direct mode: the entry of line [start, end) */
static inline int put_direct(const split_ctx *s, sp_msd_ent *e, size_t start, size_t end)
{
	size_t kb, kl;

	key_of(s, start, end, &kb, &kl);
	if (kl > UINT32_MAX)
		return too_long("key", kl);
	e->pfx = sp_msd_key(&s->src, s->c->buf + kb, kl, s->lcp);
	e->idx = (uint32_t)kb;
	e->len = (uint32_t)kl;
	return 0;
}

/* record line k = [start, end) (end: its delimiter) */
static inline int put_line(const split_ctx *s, size_t k, size_t start, size_t end)
{
	ss_chunk *c = s->c;

	if (s->direct)
		return put_direct(s, &c->ents[k], start, end);
	c->loff[k] = start;
	if (s->whole) {
		size_t len = end - start;

		if (len > UINT32_MAX)
			return too_long("line", len);
		c->ents[k].pfx = sp_msd_load(c->buf + start, len, 0);
		c->ents[k].idx = (uint32_t)k;
		c->ents[k].len = (uint32_t)len;
	}
	return 0;
}

enum { SCAN_COUNT, SCAN_HIST, SCAN_FILL, SCAN_SCATTER };

/*
 * One line [start, end) of slice sl: count it, count its first 16 key bits
 * (the first radix pass, made while the line is in cache), or put its entry
 * at its line number or, scattering, at its bucket's next slot.  Returns 0,
 * or -1 for a line too long.
 */
static inline int scan_one(split_ctx *s, size_t sl, int mode, size_t *k, size_t start, size_t end,
		const wc_state *wc)
{
	(void)wc;   /* (without SSE2) */
	switch (mode) {
	case SCAN_COUNT:
		(*k)++;
		break;
	case SCAN_HIST: {
		size_t kb, kl;

		(*k)++;
		key_of(s, start, end, &kb, &kl);
		if (s->lcp && (kl < s->lcp || memcmp(s->c->buf + kb, s->lcp_ref, s->lcp) != 0))
			s->bad[sl] = 1;
		s->hist[sl << 16 | (key_top16(s, s->c->buf + kb, kl) >> (s->hshift - 48))]++;
		break;
	}
	case SCAN_FILL:
		return put_line(s, (*k)++, start, end);
	case SCAN_SCATTER: {
		sp_msd_ent t;
		size_t b;

		if (put_direct(s, &t, start, end) < 0)
			return -1;
		b = (size_t)(t.pfx >> s->hshift);
#ifdef HAVE_MASK64
		if (wc) {
			wc_put(wc, s->c->ents, b, s->hist[sl << 16 | b]++, &t);
			break;
		}
#endif
		s->c->ents[s->hist[sl << 16 | b]++] = t;
		break;
	}
	}
	return 0;
}

static inline int scan_slice(split_ctx *s, size_t sl, int mode, const wc_state *wc)
{
	const uint8_t *b = s->c->buf;
	size_t pos = s->lo[sl], hi = s->lo[sl + 1], start = pos, k = 0;
	int check = s->check && (mode == SCAN_COUNT || mode == SCAN_HIST);
	uint64_t bad = 0;

	if (mode == SCAN_FILL)
		k = s->cnt[sl];
#ifdef HAVE_MASK64
	{
		__m128i d = _mm_set1_epi8((char)s->delim);

		for (; hi - pos >= 64; pos += 64) {
			uint64_t m = delim_mask64(b + pos, d);

			if (check)
				bad |= ~member_mask64(s->src.pack, b + pos, d);
			if (mode == SCAN_COUNT) {
				k += (size_t)__builtin_popcountll(m);
				continue;
			}
			while (m) {
				size_t end = pos + (size_t)__builtin_ctzll(m);

				if (scan_one(s, sl, mode, &k, start, end, wc) < 0)
					return -1;
				start = end + 1;
				m &= m - 1;
			}
		}
		if (mode == SCAN_COUNT)
			start = pos;
	}
#endif
	if (check) {
		size_t i;

		for (i = pos; i < hi; i++)
			bad |= !s->member[b[i]];
		s->bad[sl] = bad != 0;
	}
	while (pos < hi) {
		const uint8_t *q = memchr(b + pos, s->delim, hi - pos);
		size_t end;

		if (!q)
			break;
		end = (size_t)(q - b);
		if (scan_one(s, sl, mode, &k, start, end, wc) < 0)
			return -1;
		start = pos = end + 1;
	}
	if (mode == SCAN_COUNT || mode == SCAN_HIST)
		s->cnt[sl] = k;
	return 0;
}

/* the bucket pass's count of slice sl: its histogram, and whether its
 * scatter is to be write-combined (few active buckets, many lines) */
static int hist_slice(split_ctx *s, size_t sl)
{
	const uint32_t *h = s->hist + (sl << 16);
	size_t b, active = 0;

	if (scan_slice(s, sl, SCAN_HIST, NULL) < 0)
		return -1;
	s->wc_ok[sl] = s->wc_mode == 1;
	if (s->wc_mode != 2 || s->cnt[sl] < WC_MIN_LINES)
		return 0;
	for (b = 0; b < ((size_t)1 << 16); b++)
		active += h[b] != 0;
	s->wc_ok[sl] = active <= WC_ACTIVE;
	return 0;
}

/* the bucket pass's scatter of slice sl, write-combined when s->wc_ok says */
static int scatter_slice(split_ctx *s, size_t sl)
{
#ifdef HAVE_MASK64
	uint32_t *h = s->hist + (sl << 16);
	sp_msd_ent *ents = s->c->ents;
	wc_state w;
	size_t b;
	int r;

	if (!s->wc_ok[sl])
		return scan_slice(s, sl, SCAN_SCATTER, NULL);
	/* (plain pages: only the lines of the active buckets are touched) */
	w.size = ((size_t)1 << 16) * (4 * sizeof *w.line + sizeof *w.first) + 64;
	w.mem = sp_malloc(w.size);
	w.line = (sp_msd_ent *)(void *)(((uintptr_t)w.mem + 63) & ~(uintptr_t)63);
	w.first = (uint32_t *)(void *)(w.line + ((size_t)4 << 16));
	memcpy(w.first, h, ((size_t)1 << 16) * sizeof *w.first);
	r = scan_slice(s, sl, SCAN_SCATTER, &w);
	/* the lines left partly filled: their entries one by one */
	for (b = 0; r == 0 && b < ((size_t)1 << 16); b++) {
		uint32_t p = h[b], x;

		if (!(p & 3) || p == w.first[b])
			continue;
		for (x = (p & ~3u) > w.first[b] ? (p & ~3u) : w.first[b]; x < p; x++)
			ents[x] = w.line[(b << 2) + (x & 3)];
	}
	_mm_sfence();
	free(w.mem);
	return r;
#else
	return scan_slice(s, sl, SCAN_SCATTER, NULL);
#endif
}

/* sp_for item: slice sl, counted (s->fill 0) or filled */
static int scan_pass(void *arg, size_t sl, int tid)
{
	split_ctx *s = arg;

	(void)tid;
	if (s->fill)
		return s->bucket ? scatter_slice(s, sl) : scan_slice(s, sl, SCAN_FILL, NULL);
	return s->bucket ? hist_slice(s, sl) : scan_slice(s, sl, SCAN_COUNT, NULL);
}

/* the first-key spans of the lines of slice sl (c->n lines in s->nslices) */
static int key_fill(void *arg, size_t sl, int tid)
{
	split_ctx *s = arg;
	ss_chunk *c = s->c;
	const ss_key *k = &s->o->keys[0];
	size_t i, lo = c->n * sl / (size_t)s->nslices;
	size_t hi = c->n * (sl + 1) / (size_t)s->nslices;

	(void)tid;
	for (i = lo; i < hi; i++) {
		const uint8_t *t = c->buf + c->loff[i], *kb, *ke;
		size_t len = c->loff[i + 1] - c->loff[i] - 1;

		ss_key_span(k, s->o->tab, t, len, &kb, &ke);
		c->koff[i] = (uint64_t)(kb - c->buf);
		if ((size_t)(ke - kb) > UINT32_MAX)
			return too_long("key", (size_t)(ke - kb));
		c->klen[i] = (uint32_t)(ke - kb);
	}
	return 0;
}

/* run FN over the slices of s */
static int pass(split_ctx *s, sp_for_fn fn)
{
	return sp_for(s->nslices, (size_t)s->nslices, 1, fn, s);
}

/* count the lines of the slices (with the bucket pass: their histograms) */
static int count(split_ctx *s)
{
	if (s->hist)
		memset(s->hist, 0, ((size_t)s->nslices << 16) * sizeof *s->hist);
	s->fill = 0;
	return pass(s, scan_pass);
}

/* the first slice with s->bad set, or s->nslices */
static int first_bad(const split_ctx *s)
{
	int t;

	for (t = 0; t < s->nslices && !s->bad[t]; t++)
		;
	return t;
}

/* the bucket slots: BUCKETS_AT buckets a range of the parallel passes */
#define BUCKETS_AT 1024

typedef struct {
	split_ctx *s;
	size_t nb, *run;       /* buckets; per bucket its total, then its next slot */
} slots_ctx;

/* range r: the totals of its buckets over the slices (row by row) */
static int slots_total(void *arg, size_t r, int tid)
{
	slots_ctx *x = arg;
	size_t lo = r * BUCKETS_AT, hi = lo + BUCKETS_AT < x->nb ? lo + BUCKETS_AT : x->nb, d;
	int t;

	(void)tid;
	for (d = lo; d < hi; d++)
		x->run[d] = 0;
	for (t = 0; t < x->s->nslices; t++) {
		const uint32_t *h = x->s->hist + ((size_t)t << 16);

		for (d = lo; d < hi; d++)
			x->run[d] += h[d];
	}
	return 0;
}

/* range r: each slice's first slot in each bucket (from the buckets' starts) */
static int slots_place(void *arg, size_t r, int tid)
{
	slots_ctx *x = arg;
	size_t lo = r * BUCKETS_AT, hi = lo + BUCKETS_AT < x->nb ? lo + BUCKETS_AT : x->nb, d;
	int t;

	(void)tid;
	for (t = 0; t < x->s->nslices; t++) {
		uint32_t *h = x->s->hist + ((size_t)t << 16);

		for (d = lo; d < hi; d++) {
			uint32_t v = h[d];

			h[d] = (uint32_t)x->run[d];
			x->run[d] += v;
		}
	}
	return 0;
}

/*
 * The scatter's slots: bucket-major, slice-minor, which keeps the scatter
 * in input order (s->hist's counts become each slice's first slot in each
 * bucket), and c->ends.  A shorter bucket (8 bits) is the last of the
 * 16-bit ones it covers (the others are empty), so ends[] always has 65536.
 * The totals and the slots are made in parallel over ranges of buckets, a
 * slice's row at a time (a bucket's slices lie 256 KiB apart).  Returns 0,
 * or -1 (n past the 32-bit slots: the caller's check fails it first).
 */
static int bucket_slots(split_ctx *s)
{
	ss_chunk *c = s->c;
	slots_ctx x;
	size_t d, j, pos = 0, sub = (size_t)1 << (s->hshift - 48), nr;
	int r;

	x.s = s;
	x.nb = (size_t)1 << (64 - s->hshift);
	x.run = sp_malloc(x.nb * sizeof *x.run);
	nr = (x.nb + BUCKETS_AT - 1) / BUCKETS_AT;
	c->ends = sp_malloc(((size_t)1 << 16) * sizeof *c->ends);
	if (sp_for(s->nslices, nr, 1, slots_total, &x) < 0) {
		free(x.run);
		return -1;
	}
	for (d = 0; d < x.nb; d++) {
		size_t m = x.run[d];

		for (j = 0; j + 1 < sub; j++)
			c->ends[d * sub + j] = pos;
		x.run[d] = pos;
		pos += m;
		c->ends[d * sub + sub - 1] = pos;
	}
	if (pos > UINT32_MAX - 1) {
		free(x.run);
		return 0;   /* (too many lines: refused by the caller) */
	}
	r = sp_for(s->nslices, nr, 1, slots_place, &x);
	free(x.run);
	return r;
}

/*
 * Find the lines of c.  For a radix-sorted first key, fill c->ents too:
 * directly while scanning when the key is the whole line (the bytes are in
 * cache then), else from the key spans in c->koff / c->klen.  S has its
 * per-slice arrays.
 */
static int split_lines(split_ctx *s, const ss_opts *o, ss_chunk *c)
{
	int t, nt = s->nslices, encode;
	size_t n;
	const ss_key *k = &o->keys[0];
	double t0 = sp_now(), t1, t2, t3, u0 = ss_cpu_now(), u1, u2, u3;

	s->c = c;
	s->delim = ss_delim(o);
	s->o = o;
	c->keyw = ss_key_is_whole(k);
	/* one bytewise key: entries on the arena itself; a key that is not the
	 * whole line needs the lines for a last-resort comparison */
	s->direct = c->direct = ss_key_plain(k) && !o->check && o->nkeys == 1 &&
		c->len < UINT32_MAX && (ss_key_is_whole(k) || !ss_last_resort(o));
	/* other keys, and a bytewise key that is not the line with a
	 * last-resort comparison: one encoded string per line (strsort_win.c) */
	encode = c->enc = !o->check && !(o->nkeys == 1 && ss_key_plain(k) &&
		(ss_key_is_whole(k) || !ss_last_resort(o)));
	s->whole = ss_key_is_whole(k) && ss_key_plain(k) && !o->check && !encode;
	s->src.base = c->buf;
	s->src.off = NULL;
	s->src.pack = NULL;
	s->check = 0;
	c->packed = 0;
	/* a small alphabet (at most 16 bytes in every key, e.g. DNA): packed
	 * prefixes, if the count pass finds no other byte */
	if (s->direct && !o->no_pack && sample_alphabet(c, s->delim, &c->pk)) {
		int j;

		memset(s->member, 0, sizeof s->member);
		for (j = 0; j < c->pk.sigma; j++)
			s->member[c->pk.sym[j]] = 1;
		s->member[s->delim] = 1;
		s->src.pack = &c->pk;
		s->check = 1;
	}
	/* the first radix pass during the scan: only for the default sort */
	s->bucket = s->direct && o->algo == &sp_msd_algos[0] && c->len >= (1u << 20);
	s->hist = s->bucket ? sp_calloc((size_t)nt << 16, sizeof *s->hist) : NULL;
	s->lo[0] = 0;
	for (t = 1; t < nt; t++) {
		size_t p = c->len * (size_t)t / (size_t)nt;
		const uint8_t *q;

		if (p < s->lo[t - 1])
			p = s->lo[t - 1];
		q = p < c->len ? memchr(c->buf + p, s->delim, c->len - p) : NULL;
		s->lo[t] = q ? (size_t)(q - c->buf) + 1 : c->len;
	}
	s->lo[nt] = c->len;
	/* a prefix shared by all keys (byte prefixes, the bucket pass, CPU) */
	s->lcp = 0;
	if (s->bucket && !s->src.pack && !ss_dev_requested())
		sample_lcp(s);
	/* packed prefixes: 8-bit buckets (a 16-bit digit of DNA spreads over
	 * all 65536 buckets, and scattering to that many streams misses the
	 * caches and the TLB on every store; measured 0.35 s against 1 s of
	 * CPU on 20M 32-mers) */
	s->hshift = s->src.pack ? 56 : 48;
	t1 = sp_now();
	u1 = ss_cpu_now();
	c->prof[0] = t1 - t0;
	c->prof[4] = u1 - u0;
	if (count(s) < 0)
		return -1;
	if (s->lcp && first_bad(s) < nt) {
		/* a key without the sampled prefix: from depth 0 */
		s->lcp = 0;
		if (count(s) < 0)
			return -1;
	}
	c->depth0 = s->lcp;
	if (o->verbose && s->lcp)
		sp_msg("every key starts with the same %zu bytes: skipped", s->lcp);
	if (s->check) {
		t = first_bad(s);
		s->check = 0;
		if (t < nt) {
			/* a byte outside the sampled alphabet: byte prefixes */
			s->src.pack = NULL;
			s->hshift = 48;
			if (s->bucket && count(s) < 0)
				return -1;
		} else {
			c->packed = 1;
			if (o->verbose)
				sp_msg("keys of %d byte values: %d characters packed per prefix",
					c->pk.sigma, c->pk.step);
		}
	}
	t2 = sp_now();
	u2 = ss_cpu_now();
	c->prof[1] = t2 - t1;
	c->prof[5] = u2 - u1;
	for (n = 0, t = 0; t < nt; t++) {
		size_t m = s->cnt[t];

		s->cnt[t] = n;
		n += m;
	}
	if (s->bucket && bucket_slots(s) < 0)
		return -1;
	if (s->bucket && o->verbose) {
		int w = 0;

		for (t = 0; t < nt; t++)
			w += s->wc_ok[t];
		sp_msg("bucket scatter write-combined in %d of %d slices", w, nt);
	}
	if (n > UINT32_MAX - 1)
		return sp_fail("more than %u lines in memory; use -S to sort in runs", UINT32_MAX - 1);
	c->n = n;
	if (!s->direct)
		c->loff = sp_big_alloc((n + 2) * sizeof *c->loff);
	if (ss_key_plain(k) && !encode && !o->check)
		c->ents = sp_big_alloc((n + 1) * sizeof *c->ents);
	s->fill = 1;
	t3 = sp_now();
	u3 = ss_cpu_now();
	c->prof[2] = t3 - t2;
	c->prof[6] = u3 - u2;
	if (pass(s, scan_pass) < 0)
		return -1;
	c->prof[3] = sp_now() - t3;
	c->prof[7] = ss_cpu_now() - u3;
	if (s->direct)
		return 0;
	c->loff[n] = c->len;
	if (encode)
		return 0;
	if (ss_key_is_whole(k)) {
		c->koff = c->loff;
		return 0;
	}
	/* the spans of the first key */
	if (n < (1u << 16))
		s->nslices = 1;
	c->koff = sp_big_alloc((n + 1) * sizeof *c->koff);
	c->klen = sp_big_alloc((n + 1) * sizeof *c->klen);
	if (pass(s, key_fill) < 0)
		return -1;
	if (c->ents) {
		sp_msd_src src = { c->buf, c->koff, NULL };

		sp_msd_fill(c->ents, n, &src, c->klen, 0, o->nthreads);
	}
	return 0;
}

int ss_split_lines(const ss_opts *o, ss_chunk *c)
{
	split_ctx s;
	int r, nt = o->nthreads < 1 ? 1 : o->nthreads;
	const char *env;

	memset(&s, 0, sizeof s);
	s.nslices = c->len < (1u << 20) ? 1 : nt;
	s.lo = sp_calloc((size_t)s.nslices + 1, sizeof *s.lo);
	s.cnt = sp_calloc((size_t)s.nslices + 1, sizeof *s.cnt);
	s.bad = sp_calloc((size_t)s.nslices, sizeof *s.bad);
	s.wc_ok = sp_calloc((size_t)s.nslices, sizeof *s.wc_ok);
	env = getenv("SEEDPIPE_STRSORT_WC");
	s.wc_mode = env && strcmp(env, "0") == 0 ? 0 : env && strcmp(env, "1") == 0 ? 1 : 2;
	r = split_lines(&s, o, c);
	free(s.hist);
	free(s.lo);
	free(s.cnt);
	free(s.bad);
	free(s.wc_ok);
	return r;
}

void ss_ch_free_index(ss_chunk *c)
{
	size_t n = c->n;

	if (c->koff != c->loff)
		sp_big_free(c->koff, (n + 1) * sizeof *c->koff);
	if (c->loff)
		sp_big_free(c->loff, (n + 2) * sizeof *c->loff);
	if (c->klen)
		sp_big_free(c->klen, (n + 1) * sizeof *c->klen);
	if (c->order && c->order != (uint32_t *)(void *)c->ents)
		sp_big_free(c->order, (n + 1) * sizeof *c->order);
	if (c->ents)
		sp_big_free(c->ents, (n + 1) * sizeof *c->ents);
	free(c->ends);
	c->ends = NULL;
	free(c->tie);
	c->tie = NULL;
	c->enc = 0;
	c->loff = c->koff = NULL;
	c->klen = c->order = NULL;
	c->ents = NULL;
	c->n = 0;
}
