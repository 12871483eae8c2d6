/*
 * strsort_emit.c - writing a sorted chunk (strsort_priv.h).
 *
 * The output is cut into blocks of lines (about SS_OUTBUF / 2 bytes each).
 * A pipeline with a parallel step (sp_pipeline_par) takes each block through
 * three steps: number it, gather its lines into its buffer (the parallel
 * step: up to one block a thread at once, the random reads of the lines
 * spread over the threads, with no barrier between groups of blocks), and
 * write the buffers in order, so that the writes overlap the gathering.  Packed whole lines no longer than a prefix are
 * written from their entries (see the unpacker).
 */
#include <stdlib.h>
#include <string.h>

#include "sp_thread.h"
#include "strsort_priv.h"
#include "util.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#define HAVE_SSE2 1
#endif

/* blocks in flight beyond one a thread, each a buffer of about SS_OUTBUF / 2
 * bytes (with two a thread, 10M random lines at 16 threads took 32 MB more
 * than with the one a thread of the emit before sp_pipeline_par, and 5% more
 * time: fewer buffers are fewer first-touch page faults) */
#define EMIT_EXTRA 2

/*
 * Writing packed keys back as text (a whole line no longer than a prefix
 * is written from its entry, without reading the input again).  With SSE2
 * the packed bytes are spread so that each output byte holds its own
 * character's bit field in place (mask M), and a byte's rank is counted
 * by comparing that field with each rank's field (T[j]); the character is
 * sym[0] plus the steps D[j] = sym[j] - sym[j-1] of the ranks reached.
 */
typedef struct {
	const sp_msd_pack *pk;
#ifdef HAVE_SSE2
	__m128i m, t[16], d[16], base;
#endif
} unpacker;

static void unpacker_init(unpacker *u, const sp_msd_pack *pk)
{
	u->pk = pk;
#ifdef HAVE_SSE2
	{
		uint8_t m[16], t[16];
		int i, j;

		for (j = 0; j < 16; j++) {
			for (i = 0; i < 16; i++) {
				int sh = pk->per == 2 ? 6 - 2 * (i & 3) : 4 - 4 * (i & 1);

				m[i] = (uint8_t)(((1 << pk->per) - 1) << sh);
				t[i] = (uint8_t)(j << sh);
			}
			u->t[j] = _mm_loadu_si128((const __m128i *)(const void *)t);
			u->d[j] = _mm_set1_epi8((char)(j && j < pk->sigma ? pk->sym[j] - pk->sym[j - 1] : 0));
		}
		u->m = _mm_loadu_si128((const __m128i *)(const void *)m);
		u->base = _mm_set1_epi8((char)pk->sym[0]);
	}
#endif
}

#ifdef HAVE_SSE2
/* 16 characters from their bit fields in place (each byte masked) */
static inline __m128i unpack16(const unpacker *u, __m128i f)
{
	__m128i out = u->base;
	int j;

	for (j = 1; j < u->pk->sigma; j++) {
		__m128i ge = _mm_cmpeq_epi8(_mm_max_epu8(f, u->t[j]), f);

		out = _mm_add_epi8(out, _mm_and_si128(ge, u->d[j]));
	}
	return out;
}
#endif

/* the pk->step characters of prefix w to out (which holds pk->step bytes) */
static inline void unpack_line(const unpacker *u, uint64_t w, uint8_t *out)
{
#ifdef HAVE_SSE2
	__m128i v = _mm_cvtsi64_si128((long long)__builtin_bswap64(w));
	__m128i lo = _mm_unpacklo_epi8(v, v);

	if (u->pk->per == 2) {
		_mm_storeu_si128((__m128i *)(void *)out,
			unpack16(u, _mm_and_si128(_mm_unpacklo_epi8(lo, lo), u->m)));
		_mm_storeu_si128((__m128i *)(void *)(out + 16),
			unpack16(u, _mm_and_si128(_mm_unpackhi_epi8(lo, lo), u->m)));
	} else {
		_mm_storeu_si128((__m128i *)(void *)out, unpack16(u, _mm_and_si128(lo, u->m)));
	}
#else
	sp_msd_pack_unload_all(u->pk, w, out);
#endif
}

/* a block's gathered bytes */
typedef struct {
	uint8_t *buf;
	size_t len, cap;
} emit_buf;

/* a block in flight: its number and its buffer */
typedef struct {
	size_t b;
	emit_buf out;
} emit_batch;

typedef struct {
	const ss_opts *o;
	const ss_chunk *c;
	int fd;
	const char *name;
	int delim, nthreads;
	size_t block, nblocks;        /* lines a block, blocks */
	size_t next;                  /* the next block */
	size_t step;                  /* packed whole lines: characters a prefix */
	unpacker up;
	emit_batch *slot;             /* nslots, block b in slot b % nslots */
	size_t nslots;
} emit_ctx;

/* room for N more bytes in b */
static inline uint8_t *eb_room(emit_buf *b, size_t n)
{
	if (b->len + n > b->cap) {
		while (b->len + n > b->cap)
			b->cap *= 2;
		b->buf = sp_realloc(b->buf, b->cap);
	}
	return b->buf + b->len;
}

/* append the N bytes at P to b */
static inline void eb_put(emit_buf *b, const uint8_t *p, size_t n)
{
	memcpy(eb_room(b, n), p, n);
	b->len += n;
}

/* direct entries: the lines [i, hi) to b */
static void gather_direct(const emit_ctx *e, size_t i, size_t hi, emit_buf *b)
{
	const ss_chunk *c = e->c;
	const sp_msd_ent *en = c->ents;
	const uint8_t *base = c->buf;
	size_t n = c->n;

	for (; i < hi; i++) {
		const uint8_t *ls = base + en[i].idx;
		size_t l = (size_t)en[i].len + 1;

		if (e->o->unique && i > 0 && ss_ent_line_eq(c, &en[i - 1], &en[i]))
			continue;
		if (e->step && en[i].len <= e->step) {
			/* the entry holds the whole line: no random read */
			uint8_t *p = eb_room(b, e->step + 1);

			unpack_line(&e->up, en[i].pfx, p);
			p[l - 1] = (uint8_t)e->delim;
			b->len += l;
			continue;
		}
		if (i + 16 < n) {
			/* both ends: a line often spans two cache lines */
			__builtin_prefetch(base + en[i + 16].idx);
			__builtin_prefetch(base + en[i + 16].idx + en[i + 16].len);
		}
		if (!c->keyw) {
			/* the line around the key: back to the delimiter before
			 * it, on to the one after it */
			const uint8_t *p = en[i].idx ? memrchr(base, e->delim, en[i].idx) : NULL;
			const uint8_t *q = memchr(ls + en[i].len, e->delim,
				c->len - en[i].idx - en[i].len);

			ls = p ? p + 1 : base;
			l = (size_t)(q - ls) + 1;
		}
		eb_put(b, ls, l);
	}
}

/* lines in c->order: the lines [i, hi) to b */
static void gather_order(const emit_ctx *e, size_t i, size_t hi, emit_buf *b)
{
	const ss_chunk *c = e->c;
	const uint32_t *ord = c->order;
	const uint64_t *lo = c->loff;
	const uint8_t *base = c->buf;
	size_t n = c->n;

	for (; i < hi; i++) {
		uint32_t x = ord[i];
		size_t l;

		if (i + 24 < n)
			__builtin_prefetch(&lo[ord[i + 24]]);
		if (i + 12 < n)
			__builtin_prefetch(base + lo[ord[i + 12]]);
		l = lo[x + 1] - lo[x];
		if (e->o->unique && i > 0 && c->tie) {
			if (c->tie[i >> 6] >> (i & 63) & 1)
				continue;
		} else if (e->o->unique && i > 0) {
			uint32_t p = ord[i - 1];

			/* equal keys are an equivalence: comparing with the line
			 * before is comparing with the last one written */
			if (ss_cmp_lines(e->o, 0, base + lo[p], lo[p + 1] - lo[p] - 1,
					base + lo[x], l - 1) == 0)
				continue;
		}
		eb_put(b, base + lo[x], l);
	}
}

/* gather block bt->b into its buffer */
static void gather(const emit_ctx *e, emit_batch *bt)
{
	emit_buf *b = &bt->out;
	size_t i = bt->b * e->block;
	size_t hi = i + e->block < e->c->n ? i + e->block : e->c->n;

	if (!b->buf) {
		b->cap = SS_OUTBUF;
		b->buf = sp_malloc(b->cap);
	}
	b->len = 0;
	if (e->c->direct)
		gather_direct(e, i, hi, b);
	else
		gather_order(e, i, hi, b);
}

/*
 * The steps of a block.  Block b uses slot b % nslots: the block that used
 * it before has left the last step, since at most nslots blocks are in
 * flight and they leave the last step in order.
 */
static int emit_step(void *ctx, int step, void **data)
{
	emit_ctx *e = ctx;
	emit_batch *bt = *data;

	switch (step) {
	case 0:
		if (e->next >= e->nblocks)
			return 1;
		bt = &e->slot[e->next % e->nslots];
		bt->b = e->next++;
		*data = bt;
		return 0;
	case 1:
		gather(e, bt);
		return 0;
	default:
		return bt->out.len ? ss_write(e->fd, e->name, bt->out.buf, bt->out.len) : 0;
	}
}

int ss_emit_chunk(const ss_opts *o, const ss_chunk *c, int fd, const char *name)
{
	emit_ctx e;
	sp_pipe p;
	size_t avg = c->n ? c->len / c->n + 1 : 1, k;
	int r;

	memset(&e, 0, sizeof e);
	e.o = o;
	e.c = c;
	e.fd = fd;
	e.name = name;
	e.delim = ss_delim(o);
	e.nthreads = o->nthreads < 1 ? 1 : o->nthreads;
	e.block = SS_OUTBUF / 2 / avg;
	if (e.block < 256)
		e.block = 256;
	e.nblocks = (c->n + e.block - 1) / e.block;
	if (c->direct && c->unpack) {
		e.step = (size_t)c->pk.step;
		unpacker_init(&e.up, &c->pk);
	}
	/* one thread (-j 1, or a single block): gather and write in turn */
	e.nslots = e.nthreads > 1 && e.nblocks > 1 ? (size_t)e.nthreads + EMIT_EXTRA : 1;
	e.slot = sp_calloc(e.nslots, sizeof *e.slot);
	p.nsteps = 3;
	p.nbatches = (int)e.nslots;
	p.step = emit_step;
	p.drop = NULL;
	p.ctx = &e;
	r = e.nslots > 1 ? sp_pipeline_par(&p, 1u << 1, e.nthreads) : sp_pipeline(&p);
	for (k = 0; k < e.nslots; k++)
		free(e.slot[k].out.buf);
	free(e.slot);
	return r;
}
