/*
 * align.c - the CPU side of the alignment core (align.h): limit checks,
 * one pair, batches split over threads, and the CIGAR and MD texts.  The
 * algorithm itself is kernels/inc_align.h, shared with kernels/align.cl.
 *
 * A batch is cut into chunks of ALIGN_CHUNK pairs that threads take from a
 * shared counter (sp_for); every pair's result depends on that pair only,
 * so the output does not depend on the number of threads or the order in
 * which chunks are taken.
 *
 * Gapped chunks with ALIGN_ENDS (extend's first pass, where ~96% of the
 * windows hold no end within A) first go through an exact prefilter, a
 * banded bit-vector pass over 8 or 16 windows at a time with AVX-512
 * (align_pre.c, align_avx512.c); only the windows it cannot rule out reach
 * the core, and the others get the output the core gives them.
 */
#include "align.h"
#include "align_pre.h"
#include "sp_thread.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN_AHEAD 16    /* pairs between a window's prefetch and its use */

int align_check(const align_pair_t *pairs, size_t n, unsigned max_a, unsigned flags,
		size_t ends_stride, char *msg, size_t msg_len)
{
	size_t k;

	if (max_a > ALIGN_MAX_A) {
		snprintf(msg, msg_len, "%u edit operations are more than the alignment supports (at most %d)",
				max_a, ALIGN_MAX_A);
		return -1;
	}
	for (k = 0; k < n; k++) {
		const align_pair_t *p = &pairs[k];
		if (p->read_len == 0 || p->read_len > ALIGN_MAX_READ) {
			snprintf(msg, msg_len, "read of pair %zu has %u bases (1 to %d supported)", k,
					p->read_len, ALIGN_MAX_READ);
			return -1;
		}
		if (p->win_len > ALIGN_MAX_WIN) {
			snprintf(msg, msg_len, "window of pair %zu has %u bases (at most %d supported)", k,
					p->win_len, ALIGN_MAX_WIN);
			return -1;
		}
		if ((flags & ALIGN_ENDS) && p->win_len > ends_stride) {
			snprintf(msg, msg_len, "window of pair %zu has %u bases, more than the ends stride %zu",
					k, p->win_len, ends_stride);
			return -1;
		}
	}
	return 0;
}

void align_one(const uint8_t *read, uint32_t m, const uint8_t *win, uint64_t win_off, uint32_t n,
		unsigned max_a, unsigned flags, uint32_t end_lo, uint32_t end_hi, uint64_t *ws,
		uint8_t *ends, align_res_t *res)
{
	sp_align_one(read, m, win, win_off, n, max_a, flags, end_lo, end_hi, ws, 1, ends, res);
}

/* A thread's scratch for align_batch (made on its first chunk). */
typedef struct {
	uint64_t *ws;         /* the traceback workspace */
	pre_ws_t *pw;         /* the prefilter's state */
} batch_tws_t;

typedef struct {
	const uint8_t *reads, *wins;
	const align_pair_t *pairs;
	size_t n, nws;        /* pairs; workspace words of the largest */
	unsigned max_a, flags;
	uint8_t *ends;
	size_t ends_stride;
	align_res_t *res;
	int pre, simd;        /* the prefilter runs; with its vector pass */
	batch_tws_t *t;       /* by thread */
} batch_t;

/* Chunk C of batch CTX on thread TID. */
static int batch_chunk(void *ctx, size_t c, int tid)
{
	const batch_t *b = ctx;
	batch_tws_t *t = &b->t[tid];
	uint64_t peq[5][SP_ALIGN_WORDS], peq_off = 0;
	uint32_t peq_len = 0;
	size_t k, lo = c * ALIGN_CHUNK, hi = b->n - lo < ALIGN_CHUNK ? b->n : lo + ALIGN_CHUNK;
	int pre = b->pre;
	uint8_t yes[ALIGN_CHUNK];

	if (!t->ws) {
		t->ws = sp_malloc(b->nws * sizeof *t->ws);
		if (pre)
			t->pw = pre_ws_new();
	}
	if (pre) {
		align_pre_chunk(t->pw, b->reads, b->wins, b->pairs, lo, hi, b->max_a, b->flags, b->simd,
				yes);
#ifdef ALIGN_PRE_X86
		if (b->simd && (b->flags & ALIGN_NOCIGAR))
			align_pre_ends_chunk(t->pw, b->reads, b->wins, b->pairs, lo, hi, b->max_a, b->flags,
					yes, b->ends, b->ends_stride, b->res);
#endif
	}
	for (k = lo; k < hi; k++) {
		const align_pair_t *p = &b->pairs[k];
		uint8_t *ends = b->ends ? b->ends + k * b->ends_stride : NULL;
		/* the window of a pair ahead that goes to the core (the
		 * prefilter read the others already) */
		if (k + ALIGN_AHEAD < hi && (!pre || yes[k + ALIGN_AHEAD - lo] == 1
					|| yes[k + ALIGN_AHEAD - lo] == 2))
			prefetch_pair(b->wins, &b->pairs[k + ALIGN_AHEAD], b->flags & ALIGN_PACKED);
		if (b->flags & ALIGN_NOGAPS) {
			sp_align_one(b->reads + p->read_off, p->read_len, b->wins, p->win_off,
					p->win_len, b->max_a, b->flags, p->end_lo, p->end_hi, t->ws, 1,
					ends, &b->res[k]);
		} else if (pre && yes[k - lo] == 3) {
			continue;       /* align_pre_ends_chunk's: result and ends written */
		} else if (pre && !yes[k - lo]) {
			/* no end within A: the core's output for such a window */
			if (b->flags & ALIGN_ENDS_HITS) {
				b->res[k].dist = ALIGN_NOHIT;
			} else {
				sp_align_clear(&b->res[k], ALIGN_NOHIT);
				memset(ends, ALIGN_END_NONE, p->win_len);
			}
		} else {
			/* the pairs of one read are usually neighbours: its match bits once */
			if (k == lo || p->read_off != peq_off || p->read_len != peq_len) {
				sp_align_peq(b->reads + p->read_off, p->read_len, peq);
				peq_off = p->read_off;
				peq_len = p->read_len;
			}
			sp_align_clear(&b->res[k], ALIGN_NOHIT);
			sp_align_gapped((const uint64_t (*)[SP_ALIGN_WORDS])peq, p->read_len, b->wins,
					p->win_off, p->win_len, b->max_a, b->flags, p->end_lo, p->end_hi,
					t->ws, 1, ends, &b->res[k]);
		}
		if (b->ends && b->ends_stride > p->win_len
				&& !((b->flags & ALIGN_ENDS_HITS) && b->res[k].dist < 0))
			memset(b->ends + k * b->ends_stride + p->win_len, ALIGN_END_NONE,
					b->ends_stride - p->win_len);
	}
	return 0;
}

int align_batch(const uint8_t *reads, const uint8_t *wins, const align_pair_t *pairs, size_t n,
		unsigned max_a, unsigned flags, int n_threads, uint8_t *ends, size_t ends_stride,
		align_res_t *res, char *msg, size_t msg_len)
{
	batch_t b;
	size_t k;
	int t, nt = n_threads < 1 ? 1 : n_threads > SP_THREADS_MAX ? SP_THREADS_MAX : n_threads;

	if (align_check(pairs, n, max_a, flags, ends_stride, msg, msg_len) < 0)
		return -1;
	if ((flags & ALIGN_ENDS) && !ends && n) {
		snprintf(msg, msg_len, "end positions asked for without a buffer");
		return -1;
	}
	memset(&b, 0, sizeof b);
	b.reads = reads;
	b.wins = wins;
	b.pairs = pairs;
	b.n = n;
	b.max_a = max_a;
	b.flags = flags;
	b.ends = (flags & ALIGN_ENDS) ? ends : NULL;   /* NULL only when N is 0 */
	b.ends_stride = ends_stride;
	b.res = res;
	/* the prefilter: gapped pairs with their end columns (extend's first pass) */
	b.pre = align_pre_on(flags, &b.simd);
	/* the traceback workspace for the largest pair (none without a traceback) */
	b.nws = 1;
	if (!(flags & (ALIGN_NOCIGAR | ALIGN_NOGAPS)))
		for (k = 0; k < n; k++)
			if (align_ws_words(pairs[k].win_len, pairs[k].read_len) > b.nws)
				b.nws = align_ws_words(pairs[k].win_len, pairs[k].read_len);
	b.t = sp_calloc((size_t)nt, sizeof *b.t);
	/* nothing in a chunk fails (the limits are checked above) */
	sp_for(nt, (n + ALIGN_CHUNK - 1) / ALIGN_CHUNK, 1, batch_chunk, &b);
	for (t = 0; t < nt; t++) {
		free(b.t[t].ws);
		free(b.t[t].pw);
	}
	free(b.t);
	return 0;
}

char *align_cigar_str(const align_res_t *res, char *buf, size_t len)
{
	static const char ops[] = "MIDNSHP=X";
	char num[20];
	size_t k, o = 0, d;
	unsigned op;

	if (len == 0)
		return buf;
	if (res->dist < 0 || res->n_cigar == 0) {
		snprintf(buf, len, "*");
		return buf;
	}
	for (k = 0; k < res->n_cigar && k < ALIGN_MAX_CIGAR; k++) {
		d = (size_t)(sp_put_u64(num, res->cigar[k] >> 4) - num);
		op = res->cigar[k] & 15u;
		if (o + d + 2 > len)
			break;
		memcpy(buf + o, num, d);
		o += d;
		buf[o++] = op < 9 ? ops[op] : '?';
	}
	buf[o] = 0;
	return buf;
}

/* High bit of each byte of X that is 0 (exact, no false positives). */
static inline uint64_t zero_bytes(uint64_t x)
{
	const uint64_t lo7 = 0x7f7f7f7f7f7f7f7full;

	return ~(((x & lo7) + lo7) | x | lo7);
}

/* Whether the 8 bytes of W are all bases (A, C, G, T in either case: code < 4). */
static inline int all_bases(uint64_t w)
{
	uint64_t x = w | 0x2020202020202020ull;   /* only A and a become a, ... */

	return (zero_bytes(x ^ 0x6161616161616161ull) | zero_bytes(x ^ 0x6363636363636363ull)
			| zero_bytes(x ^ 0x6767676767676767ull) | zero_bytes(x ^ 0x7474747474747474ull))
		== 0x8080808080808080ull;
}

/* Append C to BUF (LEN bytes) at *O, as far as it fits; *O counts every byte. */
static inline void md_putc(char *buf, size_t len, size_t *o, char c)
{
	if (*o + 1 < len)
		buf[*o] = c;
	(*o)++;
}

/* Append the decimal X (as md_putc). */
static inline void md_putu(char *buf, size_t len, size_t *o, unsigned x)
{
	char num[20];
	const char *c, *e = sp_put_u64(num, x);

	for (c = num; c < e; c++)
		md_putc(buf, len, o, *c);
}

/* align_md_str's work for a window of one kind (PACKED a constant in each copy). */
static inline __attribute__((always_inline)) size_t md_str(const align_res_t *res,
		const uint8_t *read, const uint8_t *win, uint64_t win_off, const unsigned packed,
		char *buf, size_t len)
{
	static const char bases[] = "ACGTN";
	unsigned op, l, k, run = 0;
	uint64_t j = win_off + (res->dist >= 0 ? res->start : 0);
	size_t o = 0, i = 0;

	/* as snprintf: the bytes that fit, NUL-terminated, and the length needed */
	if (res->dist < 0 || res->n_cigar == 0) {
		md_putc(buf, len, &o, '*');
	} else {
		for (k = 0; k < res->n_cigar && k < ALIGN_MAX_CIGAR; k++) {
			op = res->cigar[k] & 15u;
			l = res->cigar[k] >> 4;
			if (op == SP_CIGAR_I) {
				i += l;
			} else if (op == SP_CIGAR_D) {
				md_putu(buf, len, &o, run);
				md_putc(buf, len, &o, '^');
				for (; l > 0; l--)
					md_putc(buf, len, &o, bases[sp_align_wcode(win, j++, packed)]);
				run = 0;
			} else {
				for (; l > 0; l--, i++, j++) {
					unsigned c;
					/* 8 equal bytes of an ASCII window, all of them bases, match */
					while (!packed && l >= 8) {
						uint64_t rw, ww;
						memcpy(&rw, read + i, 8);
						memcpy(&ww, win + j, 8);
						if (rw != ww || !all_bases(ww))
							break;
						run += 8;
						l -= 8;
						i += 8;
						j += 8;
					}
					if (!l)
						break;
					c = sp_align_wcode(win, j, packed);
					if (c < 4 && c == sp_align_code(read[i])) {
						run++;
					} else {
						md_putu(buf, len, &o, run);
						md_putc(buf, len, &o, bases[c]);
						run = 0;
					}
				}
			}
		}
		md_putu(buf, len, &o, run);
	}
	if (len)
		buf[o < len ? o : len - 1] = 0;
	return o;
}

size_t align_md_str(const align_res_t *res, const uint8_t *read, const uint8_t *win,
		uint64_t win_off, unsigned flags, char *buf, size_t len)
{
	if (flags & ALIGN_PACKED)
		return md_str(res, read, win, win_off, 1, buf, len);
	return md_str(res, read, win, win_off, 0, buf, len);
}
