/*
 * msd.c - the MSD radix sort variants of strsort (see msd.h for the entry
 * layout and the order).
 *
 * Registry (sp_msd_algos; entry 0 is the default):
 *   1. msd_par   parallel: buckets larger than n/(8T) are distributed
 *                cooperatively (each thread counts and scatters its slice,
 *                Drozd's data-parallel stage), smaller buckets are sorted
 *                independently by msd16, largest first (task-parallel stage).
 *   2. msd16     sequential; 16-bit digits (a superalphabet of byte pairs)
 *                for buckets of at least 2^14 entries, 8-bit digits below
 *                256, about n buckets below that; under 32 entries an
 *                insertion sort on the prefixes, whose ties are then
 *                sorted deeper with their tails prefetched together.
 *   3. msd8      as msd16 with 8-bit digits only.
 *   4. mkqs      multikey quicksort (Bentley-Sedgewick) on the cached
 *                64-bit prefixes, insertion sort under 32 entries.
 * Common to all: a bucket first finds the first prefix byte where its
 * entries differ (OR of XORs), so long shared prefixes cost one pass per 8
 * bytes; a bucket whose prefixes are all equal is split into keys that end
 * within these 8 bytes (ordered by length, then idx) and the rest, whose
 * prefixes are reloaded 8 bytes deeper.  Distribution is out of place into a
 * scratch array and copied back (stable).  With a packed source (msd.h,
 * sp_msd_pack) "8 bytes" is the packing's step of characters, and the
 * per-bucket alphabet packing below is off (the prefixes are dense).
 */
#include "msd.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sp_thread.h"
#include "util.h"

#define INS_CUTOFF 32
#define RELOAD_AHEAD 16   /* entries; 48 measured no better */

/* the start of the key of string idx */
#define KEY(src, idx) ((src)->base + ((src)->off ? (src)->off[idx] : (idx)))
#define BIG16 (1u << 14)

/* ---- memory --------------------------------------------------------- */

#define BIG_MIN (1u << 21)

void *sp_big_alloc(size_t n)
{
	void *p;

	if (n < BIG_MIN)
		return sp_malloc(n);
	p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		sp_die("out of memory (%zu bytes)", n);
#ifdef MADV_HUGEPAGE
	madvise(p, n, MADV_HUGEPAGE);
#endif
	return p;
}

void sp_big_free(void *p, size_t n)
{
	if (!p)
		return;
	if (n < BIG_MIN)
		free(p);
	else
		munmap(p, n);
}

/* ---- comparisons ------------------------------------------------------ */

int sp_msd_cmp(const sp_msd_ent *x, const sp_msd_ent *y, size_t depth, const sp_msd_src *src)
{
	size_t d = depth + sp_msd_step(src), m;
	int c;

	if (x->pfx != y->pfx)
		return x->pfx < y->pfx ? -1 : 1;
	if (x->len > d && y->len > d) {
		m = (x->len < y->len ? x->len : y->len) - d;
		c = memcmp(KEY(src, x->idx) + d, KEY(src, y->idx) + d, m);
		if (c)
			return c;
	}
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void ins_sort(sp_msd_ent *a, size_t n, size_t depth, const sp_msd_src *src)
{
	size_t i, j;

	for (i = 1; i < n; i++) {
		sp_msd_ent t = a[i];

		for (j = i; j > 0 && (a[j - 1].pfx != t.pfx ? a[j - 1].pfx > t.pfx :
				sp_msd_cmp(&a[j - 1], &t, depth, src) > 0); j--)
			a[j] = a[j - 1];
		a[j] = t;
	}
}

static int len_idx_cmp(const void *p, const void *q)
{
	const sp_msd_ent *x = p, *y = q;

	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void reload(sp_msd_ent *a, size_t n, size_t depth, const sp_msd_src *src)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (i + RELOAD_AHEAD < n)
			__builtin_prefetch(KEY(src, a[i + RELOAD_AHEAD].idx) + depth);
		a[i].pfx = sp_msd_key(src, KEY(src, a[i].idx), a[i].len, depth);
	}
}

/*
 * All prefixes of a[0..n) at depth are equal: move the keys that end within
 * them (before depth + step) to the front ordered by (len, idx), using t as
 * scratch.  Returns how many there are; the rest still need sorting at
 * depth + step.
 */
static size_t split_finished(sp_msd_ent *a, sp_msd_ent *t, size_t n, size_t depth, size_t step)
{
	size_t i, nf = 0, nu = 0, d = depth + step;
	int sorted = 1;

	/* usually none ends here (long shared prefixes): nothing to move */
	for (i = 0; i < n && a[i].len > d; i++)
		;
	if (i == n)
		return 0;
	for (i = 0; i < n; i++) {
		if (a[i].len <= d) {
			if (nf && len_idx_cmp(&a[nf - 1], &a[i]) > 0)
				sorted = 0;
			a[nf++] = a[i];
		} else {
			t[nu++] = a[i];
		}
	}
	memcpy(a + nf, t, nu * sizeof *a);
	if (!sorted)
		qsort(a, nf, sizeof *a, len_idx_cmp);
	return nf;
}

static inline uint64_t diff_mask(const sp_msd_ent *a, size_t n)
{
	uint64_t p0 = a[0].pfx, x = 0;
	size_t i;

	for (i = 1; i < n; i++)
		x |= a[i].pfx ^ p0;
	return x;
}

/* ---- alphabet packing ------------------------------------------------- */

/*
 * Small alphabets waste radix digits (DNA in ASCII varies in 4 bits of 8).
 * When the bytes [b, 8) of a bucket's prefixes take at most 16 values, each
 * byte is replaced by its rank among them (a monotone map, the same for every
 * position, so the order within the bucket is kept) and the ranks are packed
 * at the top of the prefix: 8 DNA bases then fill 16 bits, one radix digit.
 * Bytes before b are equal in the whole bucket and are dropped.
 */
#define PACK_MIN (1u << 12)

typedef struct {
	uint8_t rank[256];
	int b, per;        /* first byte packed, bits per byte */
} pack_map;

static void alpha_add(const sp_msd_ent *a, size_t n, int b, uint64_t set[4])
{
	size_t i;
	int k;

	for (i = 0; i < n; i++) {
		uint64_t p = a[i].pfx;

		for (k = b; k < 8; k++) {
			unsigned c = (unsigned)(p >> (56 - 8 * k)) & 255;

			set[c >> 6] |= (uint64_t)1 << (c & 63);
		}
	}
}

/* a sample of 64 entries spread over a[0..n) has at most 16 byte values */
static int sample_small(const sp_msd_ent *a, size_t n, int b)
{
	uint64_t set[4] = { 0, 0, 0, 0 };
	size_t i, step = n / 64 ? n / 64 : 1;
	int c, sigma = 0;

	for (i = 0; i < n; i += step)
		alpha_add(a + i, 1, b, set);
	for (c = 0; c < 4; c++)
		sigma += __builtin_popcountll(set[c]);
	return sigma <= 16;
}

/* make the map from a byte set; 0 when packing does not pay */
static int pack_plan(const uint64_t set[4], int b, pack_map *m)
{
	int c, r = 0, sigma = 0;

	for (c = 0; c < 4; c++)
		sigma += __builtin_popcountll(set[c]);
	if (sigma > 16)
		return 0;
	m->per = sigma <= 2 ? 1 : sigma <= 4 ? 2 : sigma <= 8 ? 3 : 4;
	m->b = b;
	for (c = 0; c < 256; c++)
		m->rank[c] = (uint8_t)r, r += (int)((set[c >> 6] >> (c & 63)) & 1);
	return 1;
}

static inline uint64_t pack_one(const pack_map *m, uint64_t p)
{
	uint64_t v = 0;
	int k;

	for (k = m->b; k < 8; k++)
		v = v << m->per | m->rank[(p >> (56 - 8 * k)) & 255];
	return v << (64 - m->per * (8 - m->b));
}

/* pack a[0..n) and return the new diff mask against p0 (a packed value) */
static uint64_t pack_apply(const pack_map *m, sp_msd_ent *a, size_t n, uint64_t p0)
{
	uint64_t x = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		a[i].pfx = pack_one(m, a[i].pfx);
		x |= a[i].pfx ^ p0;
	}
	return x;
}

/* ---- whole-input packing (sp_msd_pack) ------------------------------- */

int sp_msd_pack_init(sp_msd_pack *p, const uint64_t set[4])
{
	int c, r = 0;

	memset(p, 0, sizeof *p);
	for (c = 0; c < 256; c++) {
		if ((set[c >> 6] >> (c & 63)) & 1) {
			if (r == 16)
				return 0;
			p->sym[r] = (uint8_t)c;
			p->rank[c] = (uint8_t)r++;
		}
	}
	if (r == 0)
		return 0;
	p->sigma = r;
	p->per = r <= 4 ? 2 : 4;
	p->step = 64 / p->per;
	return 1;
}

void sp_msd_pack_unload(const sp_msd_pack *p, uint64_t w, size_t len, uint8_t *out)
{
	size_t i;

	for (i = 0; i < len; i++, w <<= p->per)
		out[i] = p->sym[w >> (64 - p->per)];
}

/* ---- sequential MSD --------------------------------------------------- */

/* prefetch the key tails of upcoming neighbours with equal prefixes (they
 * will be compared by memcmp past the prefix) */
static inline void prefetch_ties(const sp_msd_ent *a, size_t i, size_t n, size_t depth,
		const sp_msd_src *src)
{
	size_t d = depth + sp_msd_step(src);

	if (i + 1 < n && a[i].pfx == a[i + 1].pfx && a[i].len > d) {
		__builtin_prefetch(KEY(src, a[i].idx) + d);
		__builtin_prefetch(KEY(src, a[i + 1].idx) + d);
	}
}

static void msd_rec(sp_msd_ent *a, sp_msd_ent *t, size_t n, size_t depth,
		const sp_msd_src *src, int wide);

/* the order of entries by prefix, a key that ends within it first (by
 * length, then idx); keys that go on past it are left as equals */
static inline int pfx_before(const sp_msd_ent *x, const sp_msd_ent *y, size_t d)
{
	int fx, fy;

	if (x->pfx != y->pfx)
		return x->pfx < y->pfx;
	fx = x->len <= d;
	fy = y->len <= d;
	if (fx != fy)
		return fx;
	if (!fx)
		return 0;
	if (x->len != y->len)
		return x->len < y->len;
	return x->idx < y->idx;
}

/*
 * A small bucket whose prefixes differ: insertion sort on the prefixes
 * alone, then the runs of keys with equal prefixes that go on past them
 * are sorted deeper (a pair by one comparison of the tails).  Their tails
 * are prefetched all at once first, so the cache misses overlap (comparing
 * each tie by memcmp inside the insertion sort pays them one after
 * another).
 */
static void small_sort(sp_msd_ent *a, sp_msd_ent *t, size_t n, size_t depth,
		const sp_msd_src *src, int wide)
{
	size_t i, j, step = sp_msd_step(src), d = depth + step;
	int ties = 0;

	for (i = 1; i < n; i++) {
		sp_msd_ent x = a[i];

		for (j = i; j > 0 && pfx_before(&x, &a[j - 1], d); j--)
			a[j] = a[j - 1];
		a[j] = x;
	}
	for (i = 0; i + 1 < n; i++) {
		if (a[i].pfx == a[i + 1].pfx && a[i].len > d && a[i + 1].len > d) {
			__builtin_prefetch(KEY(src, a[i].idx) + d);
			__builtin_prefetch(KEY(src, a[i + 1].idx) + d);
			ties = 1;
		}
	}
	if (!ties)
		return;
	for (i = 0; i < n; i = j) {
		j = i + 1;
		if (a[i].len <= d)
			continue;
		/* (keys that end within the prefix came first) */
		while (j < n && a[j].pfx == a[i].pfx)
			j++;
		if (j - i == 2) {
			/* a pair: one comparison of the tails */
			if (sp_msd_cmp(&a[i], &a[i + 1], depth, src) > 0) {
				sp_msd_ent x = a[i];

				a[i] = a[i + 1];
				a[i + 1] = x;
			}
		} else if (j - i > 2) {
			reload(a + i, j - i, d, src);
			msd_rec(a + i, t + i, j - i, d, src, wide);
		}
	}
}

/*
 * wide = 0: the classic byte-aligned 8-bit digits (msd8).  wide = 1: digits
 * are bit windows starting at the first bit where the bucket differs, 16 bits
 * wide for buckets of at least BIG16 entries, and small alphabets are packed.
 */
static void msd_rec(sp_msd_ent *a, sp_msd_ent *t, size_t n, size_t depth,
		const sp_msd_src *src, int wide)
{
	for (;;) {
		uint64_t x;
		int top, shift, bits;
		size_t i, nb, pos, ahead;

		if (n < 2)
			return;
		if (n == 2) {
			/* (e.g. a duplicate: one comparison, its tails prefetched
			 * by the caller, instead of reloading level by level) */
			if (sp_msd_cmp(&a[0], &a[1], depth, src) > 0) {
				sp_msd_ent y = a[0];

				a[0] = a[1];
				a[1] = y;
			}
			return;
		}
		x = diff_mask(a, n);
		if (n < INS_CUTOFF && x != 0) {
			small_sort(a, t, n, depth, src, wide);
			return;
		}
		if (x == 0) {
			size_t nf = split_finished(a, t, n, depth, sp_msd_step(src));

			a += nf;
			n -= nf;
			depth += sp_msd_step(src);
			if (n <= 1)
				return;
			reload(a, n, depth, src);
			continue;
		}
		top = __builtin_clzll(x);
		if (!wide) {
			top &= ~7;
			bits = 8;
		} else {
			/* (a packed source is dense already) */
			if (!src->pack && n >= PACK_MIN && sample_small(a, n, top >> 3)) {
				uint64_t set[4] = { 0, 0, 0, 0 };
				pack_map m;

				alpha_add(a, n, top >> 3, set);
				if (pack_plan(set, top >> 3, &m)) {
					x = pack_apply(&m, a, n, pack_one(&m, a[0].pfx));
					top = __builtin_clzll(x);
				}
			}
			/* 16-bit digits on big buckets; on small ones, about n buckets
			 * (a pass costs O(n + buckets)) */
			bits = n >= BIG16 ? 16 : n >= 256 ? 8 : 63 - __builtin_clzll(n);
			if (top + bits > 64)
				bits = 64 - top;
		}
		shift = 64 - top - bits;
		nb = (size_t)1 << bits;
		{
			uint32_t cnt8[256], *cnt = bits <= 8 ? cnt8 : sp_calloc(nb, sizeof *cnt);
			size_t mask = nb - 1;

			if (bits <= 8)
				memset(cnt8, 0, sizeof cnt8);
			for (i = 0; i < n; i++)
				cnt[(a[i].pfx >> shift) & mask]++;
			/* exclusive prefix sums, then scatter */
			pos = 0;
			for (i = 0; i < nb; i++) {
				uint32_t c = cnt[i];

				cnt[i] = (uint32_t)pos;
				pos += c;
			}
			for (i = 0; i < n; i++)
				t[cnt[(a[i].pfx >> shift) & mask]++] = a[i];
			memcpy(a, t, n * sizeof *a);
			/* the buckets: runs of equal digits (walking the entries costs
			 * O(n), walking the counters O(buckets), often more) */
			pos = 0;
			ahead = 0;
			while (pos < n) {
				size_t e = pos + 1, dg = (a[pos].pfx >> shift) & mask;

				while (e < n && ((a[e].pfx >> shift) & mask) == dg)
					e++;
				if (e - pos > 1) {
					for (; ahead < e + 16 && ahead < n; ahead++)
						prefetch_ties(a, ahead, n, depth, src);
					msd_rec(a + pos, t + pos, e - pos, depth, src, wide);
				}
				pos = e;
			}
			if (bits > 8)
				free(cnt);
		}
		return;
	}
}

static void mkqs_rec(sp_msd_ent *a, sp_msd_ent *t, size_t n, size_t depth, const sp_msd_src *src);

enum { SEQ_MSD8, SEQ_MSD16, SEQ_MKQS };

/* a sequential variant on a[0..n), with scratch as large as a */
static void seq_sort(sp_msd_ent *a, size_t n, const sp_msd_src *src, int how)
{
	sp_msd_ent *t;

	if (n < 2)
		return;
	t = sp_big_alloc(n * sizeof *t);
	if (how == SEQ_MKQS)
		mkqs_rec(a, t, n, 0, src);
	else
		msd_rec(a, t, n, 0, src, how == SEQ_MSD16);
	sp_big_free(t, n * sizeof *t);
}

static void msd16_sort(sp_msd_ent *a, size_t n, const sp_msd_src *src, int nthreads)
{
	(void)nthreads;
	seq_sort(a, n, src, SEQ_MSD16);
}

static void msd8_sort(sp_msd_ent *a, size_t n, const sp_msd_src *src, int nthreads)
{
	(void)nthreads;
	seq_sort(a, n, src, SEQ_MSD8);
}

/* ---- multikey quicksort ---------------------------------------------- */

static inline void swap_ent(sp_msd_ent *a, size_t i, size_t j)
{
	sp_msd_ent x = a[i];

	a[i] = a[j];
	a[j] = x;
}

static uint64_t med3(uint64_t a, uint64_t b, uint64_t c)
{
	if (a < b)
		return b < c ? b : (a < c ? c : a);
	return a < c ? a : (b < c ? c : b);
}

static void mkqs_rec(sp_msd_ent *a, sp_msd_ent *t, size_t n, size_t depth, const sp_msd_src *src)
{
	while (n >= INS_CUTOFF) {
		uint64_t p = med3(a[0].pfx, a[n / 2].pfx, a[n - 1].pfx);
		size_t lt = 0, i = 0, gt = n;

		/* Dijkstra 3-way partition: [0,lt) < p, [lt,i) == p, [gt,n) > p */
		while (i < gt) {
			if (a[i].pfx < p)
				swap_ent(a, lt++, i++);
			else if (a[i].pfx > p)
				swap_ent(a, i, --gt);
			else
				i++;
		}
		mkqs_rec(a, t, lt, depth, src);
		mkqs_rec(a + gt, t, n - gt, depth, src);
		/* the equal part: split off the finished keys, go deeper */
		a += lt;
		n = gt - lt;
		if (n < 2)
			return;
		{
			size_t nf = split_finished(a, t, n, depth, sp_msd_step(src));

			a += nf;
			n -= nf;
		}
		depth += sp_msd_step(src);
		if (n < 2)
			return;
		reload(a, n, depth, src);
	}
	ins_sort(a, n, depth, src);
}

static void mkqs_sort(sp_msd_ent *a, size_t n, const sp_msd_src *src, int nthreads)
{
	(void)nthreads;
	seq_sort(a, n, src, SEQ_MKQS);
}

/* ---- parallel MSD ----------------------------------------------------- */

/*
 * The cooperative passes split the bucket into ns slices (one per thread),
 * one sp_for item each; per-slice results (diff masks, byte sets, counters)
 * are indexed by the slice, so which thread runs it does not matter.
 */
typedef struct {
	size_t off, n, depth;
} par_task;

typedef struct {
	sp_msd_ent *a, *t;
	const sp_msd_src *src;
	int ns;                  /* slices of a cooperative pass */
	/* the current cooperative step */
	size_t off, n, depth;
	int shift, bits, op;
	uint64_t *xs;            /* per slice: diff masks */
	uint64_t (*sets)[4];     /* per slice: byte sets for packing */
	pack_map pm;
	uint64_t p0;
	uint32_t *cnt;           /* ns x nb counters */
	/* the task-parallel stage */
	par_task *tasks;
	size_t ntasks;
	sp_msd_ent **scratch;    /* per thread, as large as the largest task */
} par_ctx;

enum { OP_ALPHA, OP_PACK, OP_COUNT, OP_SCATTER, OP_COPY, OP_RELOAD };

static void slice(size_t n, size_t ns, size_t k, size_t *lo, size_t *hi)
{
	*lo = n * k / ns;
	*hi = n * (k + 1) / ns;
}

/* sp_for item: slice K of the current cooperative step */
static int par_slice(void *arg, size_t k, int tid)
{
	par_ctx *c = arg;
	sp_msd_ent *a = c->a + c->off, *t = c->t;
	size_t lo, hi, i, nb = (size_t)1 << c->bits, mask = nb - 1;
	uint32_t *cnt = c->cnt ? c->cnt + k * nb : NULL;
	int shift = c->shift;

	(void)tid;
	slice(c->n, (size_t)c->ns, k, &lo, &hi);
	switch (c->op) {
	case OP_ALPHA:
		memset(c->sets[k], 0, sizeof c->sets[k]);
		alpha_add(a + lo, hi - lo, c->pm.b, c->sets[k]);
		break;
	case OP_PACK:
		c->xs[k] = pack_apply(&c->pm, a + lo, hi - lo, c->p0);
		break;
	case OP_COUNT:
		for (i = lo; i < hi; i++)
			cnt[(a[i].pfx >> shift) & mask]++;
		break;
	case OP_SCATTER:
		for (i = lo; i < hi; i++)
			t[cnt[(a[i].pfx >> shift) & mask]++] = a[i];
		break;
	case OP_COPY:
		memcpy(a + lo, t + lo, (hi - lo) * sizeof *a);
		break;
	case OP_RELOAD:
		reload(a + lo, hi - lo, c->depth, c->src);
		break;
	}
	return 0;
}

/* run cooperative step OP over the slices */
static void coop(par_ctx *c, int op)
{
	c->op = op;
	sp_for(c->ns, (size_t)c->ns, 1, par_slice, c);
}

/* sp_for item: task K (largest first), on its thread's scratch */
static int par_task_run(void *arg, size_t k, int tid)
{
	par_ctx *c = arg;
	par_task *tk = &c->tasks[k];

	if (!c->scratch[tid])
		c->scratch[tid] = sp_big_alloc(c->tasks[0].n * sizeof **c->scratch);
	msd_rec(c->a + tk->off, c->scratch[tid], tk->n, tk->depth, c->src, 1);
	return 0;
}

typedef struct {
	const sp_msd_ent *a;
	size_t n, ns;
	uint64_t *xs;
} diff_ctx;

static int diff_slice(void *arg, size_t k, int tid)
{
	diff_ctx *d = arg;
	uint64_t p0 = d->a[0].pfx, x = 0;
	size_t lo, hi, i;

	(void)tid;
	slice(d->n, d->ns, k, &lo, &hi);
	for (i = lo; i < hi; i++)
		x |= d->a[i].pfx ^ p0;
	d->xs[k] = x;
	return 0;
}

uint64_t sp_msd_diff(const sp_msd_ent *a, size_t n, int nthreads)
{
	diff_ctx d;
	uint64_t x = 0;
	size_t k;

	if (n < 2)
		return 0;
	if (nthreads <= 1)
		return diff_mask(a, n);
	d.a = a;
	d.n = n;
	d.ns = (size_t)nthreads;
	d.xs = sp_malloc(d.ns * sizeof *d.xs);
	sp_for(nthreads, d.ns, 1, diff_slice, &d);
	for (k = 0; k < d.ns; k++)
		x |= d.xs[k];
	free(d.xs);
	return x;
}

static int task_cmp(const void *p, const void *q)
{
	const par_task *x = p, *y = q;

	return x->n < y->n ? 1 : x->n > y->n ? -1 : 0;
}

void sp_msd_sort_ranges(sp_msd_ent *a, size_t n, const size_t *ends, size_t nr,
		const sp_msd_src *src, int nthreads)
{
	sp_msd_sort_ranges_at(a, n, ends, nr, src, nthreads, 0);
}

void sp_msd_sort_ranges_at(sp_msd_ent *a, size_t n, const size_t *ends, size_t nr,
		const sp_msd_src *src, int nthreads, size_t depth)
{
	par_ctx c;
	par_task *big = NULL;
	size_t nbig = 0, mbig = 0, mtasks = 0, limit, tcap = 0, r, pos;

	if (nthreads < 1)
		nthreads = 1;
	if (n < 2)
		return;
	memset(&c, 0, sizeof c);
	c.a = a;
	c.src = src;
	c.ns = nthreads;
	c.xs = sp_calloc((size_t)nthreads, sizeof *c.xs);
	c.sets = sp_calloc((size_t)nthreads, sizeof *c.sets);
	limit = n / (8 * (size_t)nthreads);
	if (limit < (1u << 16))
		limit = 1u << 16;
#define PUSH(arr, na, ma, o, m, d) do { \
		if (na == ma) { ma = ma ? 2 * ma : 64; arr = sp_realloc(arr, ma * sizeof *arr); } \
		arr[na].off = (o); arr[na].n = (m); arr[na].depth = (d); na++; \
	} while (0)
	for (r = 0, pos = 0; r < nr; pos = ends[r++]) {
		size_t m = ends[r] - pos;

		if (m > limit && nthreads > 1) {
			PUSH(big, nbig, mbig, pos, m, depth);
			if (m > tcap)
				tcap = m;
		} else if (m > 1) {
			PUSH(c.tasks, c.ntasks, mtasks, pos, m, depth);
		}
	}
	/* the scratch of the cooperative passes: the largest big range */
	c.t = tcap ? sp_big_alloc(tcap * sizeof *c.t) : NULL;
	while (nbig) {
		par_task tk = big[--nbig];
		uint64_t x = sp_msd_diff(a + tk.off, tk.n, nthreads);
		int top;

		c.off = tk.off;
		c.n = tk.n;
		c.depth = tk.depth;
		c.cnt = NULL;
		if (x == 0) {
			size_t nf = split_finished(a + tk.off, c.t, tk.n, tk.depth, sp_msd_step(src));

			if (tk.n - nf > 1) {
				c.off = tk.off + nf;
				c.n = tk.n - nf;
				c.depth = tk.depth + sp_msd_step(src);
				coop(&c, OP_RELOAD);
				if (c.n > limit)
					PUSH(big, nbig, mbig, c.off, c.n, c.depth);
				else
					PUSH(c.tasks, c.ntasks, mtasks, c.off, c.n, c.depth);
			}
			continue;
		}
		top = __builtin_clzll(x);
		{
			uint64_t set[4] = { 0, 0, 0, 0 };
			int th, q;

			c.pm.b = top >> 3;
			if (src->pack) {
				/* dense already: no packing */
			} else if (sample_small(a + tk.off, tk.n, top >> 3)) {
				coop(&c, OP_ALPHA);
				for (th = 0; th < nthreads; th++)
					for (q = 0; q < 4; q++)
						set[q] |= c.sets[th][q];
			} else {
				set[0] = set[1] = set[2] = set[3] = ~(uint64_t)0;
			}
			if (!src->pack && pack_plan(set, top >> 3, &c.pm)) {
				c.p0 = pack_one(&c.pm, a[tk.off].pfx);
				coop(&c, OP_PACK);
				for (x = 0, th = 0; th < nthreads; th++)
					x |= c.xs[th];
				top = __builtin_clzll(x);
			}
		}
		c.bits = top + 16 > 64 ? 64 - top : 16;
		c.shift = 64 - top - c.bits;
		{
			size_t nb = (size_t)1 << c.bits, k, pos = 0;
			int th;

			c.cnt = sp_calloc((size_t)nthreads * nb, sizeof *c.cnt);
			coop(&c, OP_COUNT);
			/* bucket-major, slice-minor offsets keep the scatter stable */
			for (k = 0; k < nb; k++) {
				for (th = 0; th < nthreads; th++) {
					uint32_t v = c.cnt[(size_t)th * nb + k];

					c.cnt[(size_t)th * nb + k] = (uint32_t)pos;
					pos += v;
				}
			}
			coop(&c, OP_SCATTER);
			coop(&c, OP_COPY);
			/* after the scatter, the last slice's counter of k is bucket k's end */
			pos = 0;
			for (k = 0; k < nb; k++) {
				size_t e = c.cnt[(size_t)(nthreads - 1) * nb + k], m = e - pos;

				if (m > limit)
					PUSH(big, nbig, mbig, tk.off + pos, m, tk.depth);
				else if (m > 1)
					PUSH(c.tasks, c.ntasks, mtasks, tk.off + pos, m, tk.depth);
				pos = e;
			}
			free(c.cnt);
			c.cnt = NULL;
		}
	}
#undef PUSH
	if (c.ntasks) {
		int th;

		qsort(c.tasks, c.ntasks, sizeof *c.tasks, task_cmp);
		c.scratch = sp_calloc((size_t)nthreads, sizeof *c.scratch);
		sp_for(nthreads, c.ntasks, 1, par_task_run, &c);
		for (th = 0; th < nthreads; th++)
			sp_big_free(c.scratch[th], c.tasks[0].n * sizeof **c.scratch);
		free(c.scratch);
	}
	free(c.tasks);
	free(big);
	free(c.xs);
	free(c.sets);
	sp_big_free(c.t, tcap * sizeof *c.t);
}

static void par_sort(sp_msd_ent *a, size_t n, const sp_msd_src *src, int nthreads)
{
	if (nthreads <= 1 || n < (1u << 16)) {
		msd16_sort(a, n, src, 1);
		return;
	}
	sp_msd_sort_ranges(a, n, &n, 1, src, nthreads);
}

/* ---- filling ---------------------------------------------------------- */

typedef struct {
	sp_msd_ent *a;
	size_t n;
	const sp_msd_src *src;
	const uint32_t *len;
	uint32_t idx0;
	int ns;
} fill_ctx;

static int fill_slice(void *arg, size_t k, int tid)
{
	fill_ctx *f = arg;
	size_t lo, hi, i;

	(void)tid;
	slice(f->n, (size_t)f->ns, k, &lo, &hi);
	for (i = lo; i < hi; i++) {
		f->a[i].pfx = sp_msd_key(f->src, f->src->base + (f->src->off ? f->src->off[i] : i), f->len[i], 0);
		f->a[i].idx = (uint32_t)i + f->idx0;
		f->a[i].len = f->len[i];
	}
	return 0;
}

void sp_msd_fill(sp_msd_ent *a, size_t n, const sp_msd_src *src, const uint32_t *len,
		uint32_t idx0, int nthreads)
{
	fill_ctx f = { a, n, src, len, idx0, nthreads < 1 ? 1 : nthreads };

	if (n < (1u << 16))
		f.ns = 1;
	sp_for(f.ns, (size_t)f.ns, 1, fill_slice, &f);
}

/* ---- registry --------------------------------------------------------- */

const sp_msd_algo sp_msd_algos[] = {
	{ "msd_par", par_sort, "parallel MSD: cooperative passes over big buckets, task-parallel small ones" },
	{ "msd16", msd16_sort, "sequential MSD, 16-bit digits on big buckets, 8-bit below" },
	{ "msd8", msd8_sort, "sequential MSD, 8-bit digits" },
	{ "mkqs", mkqs_sort, "multikey quicksort on cached 8-byte prefixes" },
	{ NULL, NULL, NULL }
};

const sp_msd_algo *sp_msd_find(const char *name)
{
	const sp_msd_algo *a;

	for (a = sp_msd_algos; a->name; a++)
		if (strcmp(a->name, name) == 0)
			return a;
	return NULL;
}
