/*
 * strsort_emit.c - writing a sorted chunk (strsort_priv.h).
 *
 * The output is cut into blocks of lines (about SS_OUTBUF / 2 bytes each).
 * sp_for hands the blocks out one at a time in order; a thread gathers its
 * block into its own buffer (the random reads of the lines spread over the
 * threads), waits for the block's turn and writes it, so that the writes
 * stay in order and overlap the other threads' gathering, with no barrier
 * between groups of blocks.  (The same block stream through sp_pipeline_par,
 * a buffer a block in flight and the writes handed to a pipeline thread,
 * was 5-7% slower on 10M random lines at 16 threads.)  Packed whole lines no
 * longer than a prefix are written from their entries (see the unpacker).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sp_thread.h"
#include "strsort_priv.h"
#include "util.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#define HAVE_SSE2 1
#endif

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

/* a block's gathered bytes (a thread's buffer, on a cache line of its own) */
typedef struct {
	uint8_t *buf;
	size_t len, cap;
	char pad[64 - sizeof(uint8_t *) - 2 * sizeof(size_t)];
} emit_buf;

typedef struct {
	const ss_opts *o;
	const ss_chunk *c;
	int fd;
	const char *name;
	int delim;
	size_t block, nblocks;        /* lines a block, blocks */
	size_t step;                  /* packed whole lines: characters a prefix */
	unpacker up;
	emit_buf *tbuf;               /* a buffer a thread */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t turn;                  /* the block to be written next */
	int failed;                   /* a write failed: the others stop */
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

/*
 * Append the line of N bytes at P to b: a short line as a fixed 32 or 64
 * bytes (inlined moves, no call), the bytes past it overwritten later; the
 * arena has SS_PAD readable bytes past its last line.
 */
static inline void eb_put_line(emit_buf *b, const uint8_t *p, size_t n)
{
	if (n <= 32 && b->len + 32 <= b->cap) {
		__builtin_memcpy(b->buf + b->len, p, 32);
		b->len += n;
	} else if (n <= 64 && b->len + 64 <= b->cap) {
		__builtin_memcpy(b->buf + b->len, p, 64);
		b->len += n;
	} else {
		eb_put(b, p, n);
	}
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
		eb_put_line(b, ls, l);
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
		eb_put_line(b, base + lo[x], l);
	}
}

/*
 * Gather block BN into tb, through a copy on this thread's stack: the length
 * moves with every line, and buffers side by side share cache lines
 * (strsort rand at 16 threads on the H200 machine, write phase: 0.052 s
 * with the threads' buffers packed in one array, 0.029 s with the
 * pipeline's slots two to a cache line, 0.019 s for 2c6cb0d, whose buffers
 * were a thread's locals).
 */
static void gather(const emit_ctx *e, size_t bn, emit_buf *tb)
{
	size_t i = bn * e->block;
	size_t hi = i + e->block < e->c->n ? i + e->block : e->c->n;
	emit_buf b = *tb;

	if (!b.buf) {
		b.cap = SS_OUTBUF;
		b.buf = sp_malloc(b.cap);
	}
	b.len = 0;
	if (e->c->direct)
		gather_direct(e, i, hi, &b);
	else
		gather_order(e, i, hi, &b);
	*tb = b;
}

/*
 * Block BN on thread TID (sp_for hands the blocks out in increasing order):
 * gather it into the thread's buffer, wait for its turn, write it and pass
 * the turn on.  Every block below BN is held by a running thread, so the
 * wait ends; a failed write stops the others (they return quietly: the
 * message is the failing thread's).
 */
static int emit_block(void *ctx, size_t bn, int tid)
{
	emit_ctx *e = ctx;
	emit_buf *b = &e->tbuf[tid];
	int r = 0, failed;

	pthread_mutex_lock(&e->mu);
	failed = e->failed;
	pthread_mutex_unlock(&e->mu);
	if (failed)
		return 0;
	gather(e, bn, b);
	pthread_mutex_lock(&e->mu);
	while (e->turn != bn && !e->failed)
		pthread_cond_wait(&e->cv, &e->mu);
	failed = e->failed;
	pthread_mutex_unlock(&e->mu);
	if (failed)
		return 0;
	/* the only thread whose turn it is: the writes stay in order */
	if (b->len)
		r = ss_write(e->fd, e->name, b->buf, b->len);
	pthread_mutex_lock(&e->mu);
	if (r < 0)
		e->failed = 1;
	e->turn = bn + 1;
	pthread_cond_broadcast(&e->cv);
	pthread_mutex_unlock(&e->mu);
	return r;
}

int ss_emit_chunk(const ss_opts *o, const ss_chunk *c, int fd, const char *name)
{
	emit_ctx e;
	size_t avg = c->n ? c->len / c->n + 1 : 1;
	int k, r, nt = o->nthreads < 1 ? 1 : o->nthreads;

	memset(&e, 0, sizeof e);
	e.o = o;
	e.c = c;
	e.fd = fd;
	e.name = name;
	e.delim = ss_delim(o);
	e.block = SS_OUTBUF / 2 / avg;
	if (e.block < 256)
		e.block = 256;
	e.nblocks = (c->n + e.block - 1) / e.block;
	if (c->direct && c->unpack) {
		e.step = (size_t)c->pk.step;
		unpacker_init(&e.up, &c->pk);
	}
	if (e.nblocks < 2)
		nt = 1;
	e.tbuf = sp_calloc((size_t)nt, sizeof *e.tbuf);
	pthread_mutex_init(&e.mu, NULL);
	pthread_cond_init(&e.cv, NULL);
	r = sp_for(nt, e.nblocks, 1, emit_block, &e);
	pthread_cond_destroy(&e.cv);
	pthread_mutex_destroy(&e.mu);
	for (k = 0; k < nt; k++)
		free(e.tbuf[k].buf);
	free(e.tbuf);
	return r;
}
