/*
 * fm.c - FM-index build (libdivsufsort) and backward search; layout in fm.h.
 */
#include "fm.h"

#include <divsufsort.h>
#include <divsufsort64.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sp_thread.h"
#include "util.h"

#define M55 0x5555555555555555ULL

static uint64_t rd64(const uint8_t *p) { uint64_t x; memcpy(&x, p, 8); return x; }
static void wr64(uint8_t *p, uint64_t x) { memcpy(p, &x, 8); }

/* Rows of the BWT matrix (n + 1) and blocks of 64 rows (one spare). */
static uint64_t n_blocks(uint64_t n) { return (n + 1) / 64 + 1; }

int fm_build(const uint8_t *pack, uint64_t beg, uint64_t n, uint32_t rate, fm_build_t *b)
{
	uint8_t *t;
	int32_t *sa32 = NULL;
	int64_t *sa64 = NULL;
	uint64_t i, rows = n + 1, nb = n_blocks(n), cnt[4] = {0, 0, 0, 0}, ns = 0, primary = 0;

	memset(b, 0, sizeof *b);
	if (n == 0 || rate == 0)
		return sp_fail("fm: nothing to index (%llu bases, sampling rate %u)",
				(unsigned long long)n, rate);
	t = sp_malloc(n);
	for (i = 0; i < n; i++)
		t[i] = (pack[(beg + i) >> 2] >> (2 * ((beg + i) & 3))) & 3;
	if (n < (uint64_t)INT32_MAX) {
		sa32 = sp_malloc(n * sizeof *sa32);
		if (divsufsort(t, sa32, (saidx_t)n) != 0)
			goto fail;
	} else {
		sa64 = sp_malloc(n * sizeof *sa64);
		if (divsufsort64(t, sa64, (saidx64_t)n) != 0)
			goto fail;
	}
	b->occ_len = nb * FM_OCC_BLOCK;
	b->occ = sp_calloc(nb, FM_OCC_BLOCK);
	b->mark_len = nb * 16;
	b->mark = sp_calloc(nb * 2, 8);
	b->sa_len = (n / rate + 1) * 4;
	b->sa = sp_malloc(b->sa_len);
	for (i = 0; i <= rows; i++) {
		uint64_t s, c, k = i & 63, blk = i >> 6;
		uint8_t *ob = b->occ + blk * FM_OCC_BLOCK;

		if (k == 0) {
			uint32_t c32[4] = { (uint32_t)cnt[0], (uint32_t)cnt[1], (uint32_t)cnt[2], (uint32_t)cnt[3] };
			memcpy(ob, c32, sizeof c32);
			b->mark[2 * blk + 1] = ns;
		}
		if (i == rows)
			break;
		s = i == 0 ? n : sa32 ? (uint64_t)sa32[i - 1] : (uint64_t)sa64[i - 1];
		if (s == 0) {
			primary = i;
			c = 0;  /* '$' stored as 0, not counted */
		} else {
			c = t[s - 1];
			cnt[c]++;
		}
		if (c) {
			uint8_t *wp = ob + 16 + 8 * (k >> 5);
			wr64(wp, rd64(wp) | c << (2 * (k & 31)));
		}
		if (s % rate == 0) {
			b->mark[2 * blk] |= 1ULL << k;
			b->sa[ns++] = (uint32_t)s;
		}
	}
	free(t);
	free(sa32);
	free(sa64);
	if (ns * 4 != b->sa_len) {
		fm_build_free(b);
		return sp_fail("fm: internal error: %llu samples, expected %llu",
			(unsigned long long)ns, (unsigned long long)(b->sa_len / 4));
	}
	{
		uint64_t C[5];
		uint32_t r2[2] = { rate, 0 };

		C[0] = 1;
		for (i = 1; i <= 4; i++)
			C[i] = C[i - 1] + cnt[i - 1];
		wr64(b->meta, n);
		wr64(b->meta + 8, primary);
		for (i = 0; i < 5; i++)
			wr64(b->meta + 16 + 8 * i, C[i]);
		memcpy(b->meta + 56, r2, 8);
	}
	if (fm_view(&b->fm, b->meta, b->occ, b->occ_len, b->mark, b->mark_len, b->sa, b->sa_len) != 0) {
		fm_build_free(b);
		return sp_fail("fm: internal error: inconsistent build");
	}
	return 0;
fail:
	free(t);
	free(sa32);
	free(sa64);
	return sp_fail("libdivsufsort failed");
}

void fm_build_free(fm_build_t *b)
{
	free(b->occ);
	free(b->mark);
	free(b->sa);
	memset(b, 0, sizeof *b);
}

int fm_view(fm_t *fm, const uint8_t *meta, const uint8_t *occ, uint64_t occ_len,
		const uint64_t *mark, uint64_t mark_len, const uint32_t *sa, uint64_t sa_len)
{
	int i;
	uint32_t r2[2];

	memset(fm, 0, sizeof *fm);
	fm->n = rd64(meta);
	fm->primary = rd64(meta + 8);
	for (i = 0; i < 5; i++)
		fm->C[i] = rd64(meta + 16 + 8 * i);
	memcpy(r2, meta + 56, 8);
	fm->sa_rate = r2[0];
	if (fm->n == 0 || fm->n >= (1ULL << 40) || fm->sa_rate == 0 || fm->sa_rate > FM_MAX_RATE
			|| fm->primary == 0 || fm->primary > fm->n
			|| fm->C[0] != 1 || fm->C[4] != fm->n + 1 || r2[1] != 0)
		return -1;
	for (i = 0; i < 4; i++)
		if (fm->C[i] > fm->C[i + 1])
			return -1;
	fm->n_blocks = n_blocks(fm->n);
	if (occ_len != fm->n_blocks * FM_OCC_BLOCK || mark_len != fm->n_blocks * 16
			|| sa_len != (fm->n / fm->sa_rate + 1) * 4)
		return -1;
	fm->occ = occ;
	fm->mark = mark;
	fm->sa = sa;
	fm->n_samples = sa_len / 4;
	return 0;
}

/* Codes equal to C among the first M (0..32) codes of X. */
static inline unsigned count_code(uint64_t x, unsigned c, unsigned m)
{
	uint64_t y = ~(x ^ (c * M55));

	y = y & (y >> 1) & M55;
	if (m < 32)
		y &= (1ULL << (2 * m)) - 1;
	return (unsigned)__builtin_popcountll(y);
}

uint64_t fm_occ(const fm_t *fm, unsigned c, uint64_t i)
{
	const uint8_t *ob = fm->occ + (i >> 6) * FM_OCC_BLOCK;
	uint32_t base;
	unsigned k = (unsigned)(i & 63);
	uint64_t r;

	memcpy(&base, ob + 4 * c, 4);
	r = base;
	if (k) {
		r += count_code(rd64(ob + 16), c, k < 32 ? k : 32);
		if (k > 32)
			r += count_code(rd64(ob + 24), c, k - 32);
		if (c == 0 && fm->primary >= (i & ~63ULL) && fm->primary < i)
			r--;
	}
	return r;
}

static inline unsigned bwt_at(const fm_t *fm, uint64_t row)
{
	const uint8_t *ob = fm->occ + (row >> 6) * FM_OCC_BLOCK;
	unsigned k = (unsigned)(row & 63);

	return (unsigned)(rd64(ob + 16 + 8 * (k >> 5)) >> (2 * (k & 31))) & 3;
}

uint64_t fm_backward(const fm_t *fm, const uint8_t *p, size_t m, uint64_t *lo, uint64_t *hi)
{
	uint64_t l = 0, h = fm->n + 1;
	size_t j;

	for (j = m; j > 0 && l < h; j--) {
		unsigned c = p[j - 1] & 3;

		l = fm->C[c] + fm_occ(fm, c, l);
		h = fm->C[c] + fm_occ(fm, c, h);
	}
	if (l > h)
		l = h;
	*lo = l;
	*hi = h;
	return h - l;
}

uint64_t fm_locate_row(const fm_t *fm, uint64_t row)
{
	uint64_t steps = 0;

	for (;; steps++) {
		uint64_t bits = fm->mark[2 * (row >> 6)];
		unsigned k = (unsigned)(row & 63);

		if (bits >> k & 1) {
			uint64_t rank = fm->mark[2 * (row >> 6) + 1]
				+ (uint64_t)__builtin_popcountll(bits & ((1ULL << k) - 1));
			return fm->sa[rank] + steps;
		}
		if (steps + 1 >= fm->sa_rate || steps >= fm->n)
			return FM_NO_POS;   /* a damaged index: no mark on this cycle */
		{
			unsigned c = bwt_at(fm, row);

			row = fm->C[c] + fm_occ(fm, c, row);
		}
	}
}

#define WHY(...) (snprintf(why, len, __VA_ARGS__), -1)

static int fm_check_serial(const fm_t *fm, char *why, size_t len);

/*
 * fm_check in parallel: chunks of blocks, each checked against the counts
 * and the mark rank of its own first block, then each chunk's first block
 * against the counts at the end of the chunk before; the samples marked in
 * an array of bytes, which must then be full.  It passes where fm_check passes; where it
 * fails, fm_check runs to tell the first fault.  (A large index took 0.1 s
 * to check on one thread, before anything else could start.)
 */
#define CHK_BLOCKS (1u << 15)   /* blocks of a chunk (2 Mi rows); samples of a chunk: 32 times this */
#define CHK_MIN_BLOCKS (1u << 17)   /* smaller indexes: on one thread */

typedef struct {
	const fm_t *fm;
	uint64_t nchunk, nsamp, per;   /* PER: blocks of a chunk */
	uint64_t (*end)[5];        /* per chunk: the counts and the marks after its blocks */
	uint8_t *seen;
	int bad;
} chk_t;

static int chk_blocks(void *vc, size_t j, int tid)
{
	chk_t *k = vc;
	const fm_t *fm = k->fm;
	uint64_t rows = fm->n + 1, b0 = j * k->per, b1 = b0 + k->per, b, cnt[4], marks;
	int c;

	(void)tid;
	if (b1 > fm->n_blocks)
		b1 = fm->n_blocks;
	for (c = 0; c < 4; c++) {
		uint32_t v;

		memcpy(&v, fm->occ + b0 * FM_OCC_BLOCK + 4 * c, 4);
		cnt[c] = v;
	}
	marks = fm->mark[2 * b0 + 1];
	for (b = b0; b < b1; b++) {
		const uint8_t *ob = fm->occ + b * FM_OCC_BLOCK;
		uint64_t w[2] = { rd64(ob + 16), rd64(ob + 24) }, mk = fm->mark[2 * b];
		uint64_t r0 = b * 64, in = rows > r0 ? rows - r0 : 0;
		uint32_t base[4];

		memcpy(base, ob, sizeof base);
		for (c = 0; c < 4; c++)
			if (base[c] != cnt[c])
				goto bad;
		if (fm->mark[2 * b + 1] != marks)
			goto bad;
		if (in < 64 && ((in < 32 ? w[0] >> (2 * in) | w[1] : in == 32 ? w[1]
						: w[1] >> (2 * (in - 32))) != 0 || mk >> in != 0))
			goto bad;
		if (fm->primary >= r0 && fm->primary < r0 + 64) {
			unsigned q = (unsigned)(fm->primary - r0);

			if ((w[q >> 5] >> (2 * (q & 31)) & 3) != 0 || !(mk >> q & 1))
				goto bad;
		}
		for (c = 0; c < 4; c++)
			cnt[c] += count_code(w[0], (unsigned)c, 32) + count_code(w[1], (unsigned)c, 32);
		cnt[0] -= fm->primary >> 6 == b;
		marks += (uint64_t)__builtin_popcountll(mk);
	}
	for (c = 0; c < 4; c++)
		k->end[j][c] = cnt[c];
	k->end[j][4] = marks;
	return 0;
bad:
	__atomic_store_n(&k->bad, 1, __ATOMIC_RELAXED);
	return 0;
}

static int chk_samples(void *vc, size_t j, int tid)
{
	chk_t *k = vc;
	const fm_t *fm = k->fm;
	uint64_t i0 = j * 32 * k->per, i1 = i0 + 32 * k->per, i;

	(void)tid;
	if (i1 > k->nsamp)
		i1 = k->nsamp;
	for (i = i0; i < i1; i++) {
		uint64_t v = fm->sa[i];

		if (v % fm->sa_rate != 0 || v > fm->n) {
			__atomic_store_n(&k->bad, 1, __ATOMIC_RELAXED);
			return 0;
		}
		__atomic_store_n(&k->seen[v / fm->sa_rate], 1, __ATOMIC_RELAXED);   /* a plain store */
	}
	return 0;
}

/* 1: FM passes fm_check's tests (in parallel, chunks of PER blocks), 0: it may not. */
static int fm_check_par(const fm_t *fm, uint64_t per)
{
	chk_t k;
	uint64_t rows = fm->n + 1, j, i, b, cnt[4] = { 0, 0, 0, 0 }, marks = 0;
	int c, nt = sp_default_threads(16), ok = 1;

	memset(&k, 0, sizeof k);
	k.fm = fm;
	k.per = per;
	k.nchunk = (fm->n_blocks + per - 1) / per;
	k.nsamp = fm->n / fm->sa_rate + 1;
	if (fm->n_samples != k.nsamp)
		return 0;
	k.end = sp_malloc(k.nchunk * sizeof *k.end);
	k.seen = sp_calloc(k.nsamp, 1);
	if (sp_for(nt, k.nchunk, 1, chk_blocks, &k) < 0
			|| sp_for(nt, (k.nsamp + 32 * per - 1) / (32 * per), 1, chk_samples, &k) < 0)
		ok = 0;
	/* NSAMP values in 0 .. NSAMP - 1: all differ if every one is there */
	ok = ok && !k.bad && !memchr(k.seen, 0, k.nsamp);
	for (j = 0; ok && j < k.nchunk; j++) {   /* each chunk starts where the one before ended */
		const uint8_t *ob = fm->occ + j * per * FM_OCC_BLOCK;

		for (c = 0; c < 4; c++) {
			uint32_t v;

			memcpy(&v, ob + 4 * c, 4);
			ok = ok && v == cnt[c];
		}
		ok = ok && fm->mark[2 * j * per + 1] == marks;
		for (c = 0; c < 4; c++)
			cnt[c] = k.end[j][c];
		marks = k.end[j][4];
	}
	free(k.end);
	free(k.seen);
	if (!ok)
		return 0;
	cnt[0] -= fm->n_blocks * 64 - rows;
	for (c = 0; c < 4; c++)
		if (cnt[c] != fm->C[c + 1] - fm->C[c])
			return 0;
	if (marks != fm->n_samples)
		return 0;
	if (((fm->mark[0] & 1) != 0) != (fm->n % fm->sa_rate == 0)
			|| ((fm->mark[0] & 1) && fm->sa[0] != fm->n))
		return 0;
	b = fm->primary >> 6;
	i = fm->mark[2 * b + 1] + (uint64_t)__builtin_popcountll(fm->mark[2 * b]
			& ((1ULL << (fm->primary & 63)) - 1));
	return fm->sa[i] == 0;
}

int fm_check(const fm_t *fm, char *why, size_t len)
{
	const char *e = getenv("SEEDPIPE_FM_CHECK_CHUNK");   /* tests: chunks of so many blocks, any index */
	uint64_t per = e && atol(e) > 0 ? (uint64_t)atol(e) : 0;

	if ((per || fm->n_blocks >= CHK_MIN_BLOCKS) && fm_check_par(fm, per ? per : CHK_BLOCKS))
		return 0;
	return fm_check_serial(fm, why, len);
}

/* fm_check on one thread: the first fault in the order of the blocks. */
static int fm_check_serial(const fm_t *fm, char *why, size_t len)
{
	uint64_t cnt[4] = { 0, 0, 0, 0 }, rows = fm->n + 1, b, marks = 0, i;
	uint64_t nsamp = fm->n / fm->sa_rate + 1;
	uint8_t *seen;
	int c;

	for (b = 0; b < fm->n_blocks; b++) {
		const uint8_t *ob = fm->occ + b * FM_OCC_BLOCK;
		uint64_t w[2] = { rd64(ob + 16), rd64(ob + 24) }, mk = fm->mark[2 * b];
		uint64_t r0 = b * 64, in = rows > r0 ? rows - r0 : 0;   /* rows of the block */
		uint32_t base[4];

		memcpy(base, ob, sizeof base);
		for (c = 0; c < 4; c++)
			if (base[c] != cnt[c])
				return WHY("occurrence counts of block %llu are wrong", (unsigned long long)b);
		if (fm->mark[2 * b + 1] != marks)
			return WHY("mark rank of block %llu is wrong", (unsigned long long)b);
		if (in < 64) {
			if ((in < 32 ? w[0] >> (2 * in) | w[1] : in == 32 ? w[1] : w[1] >> (2 * (in - 32))) != 0
					|| mk >> in != 0)
				return WHY("rows past the end are not empty");
		}
		if (fm->primary >= r0 && fm->primary < r0 + 64) {
			unsigned k = (unsigned)(fm->primary - r0);

			if ((w[k >> 5] >> (2 * (k & 31)) & 3) != 0 || !(mk >> k & 1))
				return WHY("the primary row holds a code or no mark");
		}
		for (c = 0; c < 4; c++)
			cnt[c] += count_code(w[0], (unsigned)c, 32) + count_code(w[1], (unsigned)c, 32);
		cnt[0] -= fm->primary >> 6 == b;   /* its 0 is '$', not A */
		marks += (uint64_t)__builtin_popcountll(mk);
	}
	cnt[0] -= fm->n_blocks * 64 - rows;    /* the padding, counted as A */
	for (c = 0; c < 4; c++)
		if (cnt[c] != fm->C[c + 1] - fm->C[c])
			return WHY("occurrence counts disagree with C[]");
	if (marks != fm->n_samples || marks != nsamp)
		return WHY("%llu rows are marked for %llu samples", (unsigned long long)marks,
				(unsigned long long)fm->n_samples);
	if (((fm->mark[0] & 1) != 0) != (fm->n % fm->sa_rate == 0)
			|| ((fm->mark[0] & 1) && fm->sa[0] != fm->n))
		return WHY("the mark of row 0 is wrong");
	seen = sp_calloc(nsamp / 8 + 1, 1);
	for (i = 0; i < nsamp; i++) {
		uint64_t v = fm->sa[i], k = v / fm->sa_rate;

		if (v % fm->sa_rate != 0 || v > fm->n || (seen[k / 8] >> (k % 8) & 1)) {
			free(seen);
			return WHY("suffix array sample %llu is wrong", (unsigned long long)i);
		}
		seen[k / 8] |= (uint8_t)(1u << (k % 8));
	}
	free(seen);
	/* the primary row's sample */
	b = fm->primary >> 6;
	i = fm->mark[2 * b + 1] + (uint64_t)__builtin_popcountll(fm->mark[2 * b]
			& ((1ULL << (fm->primary & 63)) - 1));
	if (fm->sa[i] != 0)
		return WHY("the primary row's sample is not 0");
	return 0;
}

int fm_check_walk(const fm_t *fm, char *why, size_t len)
{
	uint64_t row = 0, t;

	/* row of text position n - t at step t */
	for (t = 0;; t++) {
		uint64_t pos = fm->n - t, bits = fm->mark[2 * (row >> 6)];
		unsigned k = (unsigned)(row & 63);
		int marked = bits >> k & 1;

		if (marked != (pos % fm->sa_rate == 0))
			return WHY("row %llu (text position %llu) is %smarked", (unsigned long long)row,
					(unsigned long long)pos, marked ? "" : "not ");
		if (marked && fm->sa[fm->mark[2 * (row >> 6) + 1]
				+ (uint64_t)__builtin_popcountll(bits & ((1ULL << k) - 1))] != pos)
			return WHY("the sample of row %llu is not %llu", (unsigned long long)row,
					(unsigned long long)pos);
		if ((row == fm->primary) != (pos == 0))
			return WHY("the LF mapping reaches the primary row after %llu of %llu steps",
					(unsigned long long)t, (unsigned long long)fm->n);
		if (pos == 0)
			return 0;
		{
			unsigned c = bwt_at(fm, row);

			row = fm->C[c] + fm_occ(fm, c, row);
		}
	}
}
