/*
 * mem.c - maximal exact matches: the search's setup (window, K-mer
 * tables) and stage 1 on the CPU (kernels/inc_mem.h); stages 2 and 3 are
 * in mem_finish.c; see mem.h.
 */
#include "mem_priv.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sp_thread.h"
#include "util.h"

/*
 * Stage 1 on the CPU appends to a vector.  The rows of a window where
 * matches start are collected and located together at the window's end
 * (flush_rows), so that their memory accesses overlap: the lookups of a
 * per-thread direct-mapped cache of located rows (a repeat's rows come
 * back read after read: the poly-A tails of a human chromosome give every
 * read with such a tail the same thousands of rows), the LF steps of the
 * rows that miss it, the suffix array samples and the text they are
 * extended in are each prefetched for all rows before any is used.
 */
#define LOC_BITS 16
typedef struct loc_slot {
	uint64_t key;              /* row << 24 | partition, + 1; 0: empty */
	uint64_t pos;
} loc_slot_t;

/* A row waiting to be located: the row (then the rows of its LF steps), its match. */
typedef struct prow {
	uint64_t row, key, pos;    /* pos: the sample's rank while pending */
	loc_slot_t *slot;
	uint32_t i, e, steps, state;
} prow_t;

enum { PROW_WALK, PROW_SA, PROW_DONE };

struct mem_sink {
	mem_rawvec_t *v;
	uint32_t part;
	uint64_t n;
	loc_slot_t *cache;         /* 1 << LOC_BITS slots */
	prow_t *pend;              /* the rows of the current window */
	uint32_t *walk;
	size_t np, cap;
};
static void sink_push(struct mem_sink *s, uint32_t i, uint64_t p, uint32_t len, uint64_t tail);
static void sink_row(struct mem_sink *s, uint64_t row, uint32_t i, uint32_t e);
struct mem_q;
static void flush_rows(const mem_fm_t *f, struct mem_q *q);

#define MEM_SINK_T struct mem_sink *
#define MEM_EMIT(s, i_, p_, len_) sink_push((s), (i_), (p_), (len_), 0)
#define MEM_ROW(f, q, row, i, e) sink_row((q)->sink, (row), (i), (e))
#define MEM_WINDOW_END(f, q) flush_rows((f), (q))
#include "inc_mem.h"

static void sink_row(struct mem_sink *s, uint64_t row, uint32_t i, uint32_t e)
{
	prow_t *r;

	if (s->np == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 256;
		s->pend = sp_realloc(s->pend, s->cap * sizeof *s->pend);
		s->walk = sp_realloc(s->walk, s->cap * sizeof *s->walk);
	}
	r = &s->pend[s->np++];
	r->row = row;
	r->i = i;
	r->e = e;
}

/* Prefetch what locating ROW reads next: its marks and its occurrence block. */
static inline void prefetch_row(const mem_fm_t *f, uint64_t row)
{
	__builtin_prefetch(&f->mark[2 * (row >> 6)]);
	__builtin_prefetch(&f->occ[8 * (row >> 6)]);
}

/* Locate, extend and report the rows of the window just searched (mem_report for each). */
static void flush_rows(const mem_fm_t *f, struct mem_q *q)
{
	struct mem_sink *s = q->sink;
	prow_t *a = s->pend;
	size_t n = s->np, k, nw = 0;

	if (!n)
		return;
	s->np = 0;
	for (k = 0; k < n; k++) {
		uint64_t key = (a[k].row << 24 | s->part) + 1;

		a[k].key = key;
		a[k].slot = &s->cache[(key * 0x9e3779b97f4a7c15ULL) >> (64 - LOC_BITS)];
		__builtin_prefetch(a[k].slot);
	}
	for (k = 0; k < n; k++) {
		if (a[k].slot->key == a[k].key) {
			a[k].pos = a[k].slot->pos;
			a[k].state = PROW_DONE;
		} else {
			a[k].state = PROW_WALK;
			a[k].steps = 0;
			prefetch_row(f, a[k].row);
			s->walk[nw++] = (uint32_t)k;
		}
	}
	while (nw) {            /* one LF step of every row still walking, in turn */
		size_t j, m = 0;

		for (j = 0; j < nw; j++) {
			prow_t *r = &a[s->walk[j]];
			uint64_t row = r->row, bits = f->mark[2 * (row >> 6)];
			unsigned b = (unsigned)(row & 63);

			if ((bits >> b) & 1) {
				r->pos = f->mark[2 * (row >> 6) + 1] + SP_FM_POPC64(bits & ((1UL << b) - 1UL));
				r->state = PROW_SA;
				__builtin_prefetch(&f->sa[r->pos]);
			} else {
				unsigned c = mem_bwt(f, row);

				r->row = mem_cval(f, c) + mem_occ(f, c, row);
				r->steps++;
				prefetch_row(f, r->row);
				s->walk[m++] = s->walk[j];
			}
		}
		nw = m;
	}
	for (k = 0; k < n; k++) {
		prow_t *r = &a[k];

		if (r->state == PROW_SA) {
			r->pos = (uint64_t)f->sa[r->pos] + r->steps;
			r->slot->key = r->key;
			r->slot->pos = r->pos;
		}
		{
			uint64_t t = r->pos + (r->e - r->i) + f->tsh;

			__builtin_prefetch(&f->text[t >> 4]);
			__builtin_prefetch(&f->text[(t >> 4) + 2]);
		}
	}
	for (k = 0; k < n; k++) {
		const prow_t *r = &a[k];
		uint32_t len = r->e - r->i + mem_ext(f, q->rw, r->e, q->rlen, r->pos + (r->e - r->i));

		if (len >= q->lmin) {
			uint64_t t = r->pos + len, tail = t + 32 <= f->n ? mem_word(f->text, t + f->tsh) : 0;

			sink_push(s, r->i, r->pos, len, tail);
			if (q->nk < MEM_KNOWN) {
				q->ki[q->nk] = r->i;
				q->ke[q->nk] = r->i + len;
			}
			q->nk++;
		}
	}
}

static void sink_push(struct mem_sink *s, uint32_t i, uint64_t p, uint32_t len, uint64_t tail)
{
	mem_raw_t r = { s->part, i, len, (uint32_t)p, tail };

	VEC_PUSH(s->v, r);
	s->n++;
}

/* floor(log4 N), 0 for N < 4. */
static uint32_t log4_floor(uint64_t n)
{
	uint32_t k = 0;

	while (n >= 4) {
		n >>= 2;
		k++;
	}
	return k;
}

int mem_check(const idx_t *x, char *msg, size_t len)
{
	char have[64];

	if (x->p.structs & IDX_S_FM)
		return 0;
	idx_structs_str(x->p.structs, have, sizeof have);
	snprintf(msg, len, "-m mem needs the FM-index, which index '%s' does not hold "
			"(it has %s): rebuild it with seqidx -m fm (or -m all)",
			x->path ? x->path : "-", have);
	return -1;
}

/* ---- K-mer tables ---------------------------------------------------------- */

typedef struct {
	const mem_fm_t *f;
	const uint32_t *prev;
	uint32_t *next;
	size_t n;                  /* entries of prev */
	int popcnt;
} jump_ctx_t;

#define JUMP_CHUNK 4096

static void jump_level(const mem_fm_t *f, const uint32_t *prev, uint32_t *next, size_t y0,
		size_t y1, int popcnt);
static int use_popcnt(void);

static int jump_step(void *vctx, size_t ci, int tid)
{
	jump_ctx_t *c = vctx;
	size_t end = (ci + 1) * JUMP_CHUNK < c->n ? (ci + 1) * JUMP_CHUNK : c->n;

	(void)tid;
	jump_level(c->f, c->prev, c->next, ci * JUMP_CHUNK, end, c->popcnt);
	return 0;
}

/* The BWT rows of every K-mer (first base in the low bits of its code); NULL after sp_fail. */
static uint32_t *jump_build(const mem_fm_t *f, uint32_t k, int nthreads, int popcnt, size_t *len)
{
	uint32_t *prev = sp_malloc(2 * sizeof *prev), j;
	size_t n = 1;

	prev[0] = 0;
	prev[1] = (uint32_t)(f->n + 1);
	for (j = 0; j < k; j++) {
		jump_ctx_t c = { f, prev, sp_malloc(8 * n * sizeof *prev), n, popcnt };

		if (sp_for(nthreads, (n + JUMP_CHUNK - 1) / JUMP_CHUNK, 1, jump_step, &c) < 0) {
			free(prev);
			free(c.next);
			return NULL;
		}
		free(prev);
		prev = c.next;
		n *= 4;
	}
	*len = 2 * n * sizeof *prev;
	return prev;
}

/* ---- long runs of N (the deep rows of kernels/inc_mem.h) -------------------- */

typedef struct {
	uint64_t x, y;          /* positions x .. y (inclusive) */
} span_t;

static void span_push(span_t **a, size_t *n, size_t *cap, uint64_t x, uint64_t y)
{
	if (x > y)
		return;
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 16;
		*a = sp_realloc(*a, *cap * sizeof **a);
	}
	(*a)[*n].x = x;
	(*a)[*n].y = y;
	(*n)++;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Index of V in the N ascending values A (V is one of them). */
static size_t u64_find(const uint64_t *a, size_t n, uint64_t v)
{
	return sp_last_le(a, n, sizeof *a, 0, v);
}

/*
 * Rows of A^MEM_DEEP in partition PART (view F) and its shallow rows: the
 * positions p whose next MEM_DEEP text bases are A or N (runs of code 0 of
 * the packed text) that are not deep ([p - MEM_DEEP, p + MEM_DEEP) inside
 * one run of N), turned into rows by LF steps from the nearest sampled
 * position at or after them.  Sets F's ylo, yhi, shal, nshal; returns the
 * shallow rows (to free) or NULL: none, or *ERR = -1 after sp_fail.
 */
static uint32_t *deep_build(const idx_t *x, uint32_t part, mem_fm_t *f, int *err)
{
	const idx_part_t *pt = &x->part[part];
	const fm_t *fm = &pt->fm;
	const uint64_t H = MEM_DEEP;
	uint64_t lo = 0, hi = f->n + 1, j, t, npos = 0, nrow = 0, ri;
	span_t *str = NULL, *keep = NULL;
	size_t ns = 0, cs = 0, nk = 0, ck = 0, k;
	uint32_t *isa, *rows;
	uint64_t *need, *bm;
	size_t nneed = 0;

	f->ylo = f->yhi = 0;
	f->nshal = 0;
	for (j = 0; j < H && lo < hi; j++) {
		lo = f->c0 + mem_occ(f, 0, lo);
		hi = f->c0 + mem_occ(f, 0, hi);
	}
	if (lo >= hi)
		return NULL;
	/*
	 * the runs of code 0 of H bases or more: p in [u, v - H].  Each holds
	 * an aligned block of H / 2 bases: only the blocks of code 0 are
	 * extended base by base (a word at a time where it can).
	 */
	for (t = 0; t + H / 2 <= f->n;) {
		uint64_t z = 0, u, v, q;

		for (q = 0; q < H / 2; q += 32)
			z |= mem_word(f->text, t + q + f->tsh);
		if (z) {
			t += H / 2;
			continue;
		}
		for (u = t; u > 0;) {
			if (u >= 32 && mem_word(f->text, u - 32 + f->tsh) == 0)
				u -= 32;
			else if (mem_base(f->text, u - 1 + f->tsh) == 0)
				u--;
			else
				break;
		}
		for (v = t + H / 2; v < f->n;) {
			if (v + 32 <= f->n && mem_word(f->text, v + f->tsh) == 0)
				v += 32;
			else if (mem_base(f->text, v + f->tsh) == 0)
				v++;
			else
				break;
		}
		if (v - u >= H)
			span_push(&str, &ns, &cs, u, v - H);
		t = (v + H / 2 - 1) / (H / 2) * (H / 2);
	}
	/* minus the deep positions of each run of N (clipped to the partition) */
	ri = 0;
	while (ri < x->n_nrun && x->nrun[2 * ri] + x->nrun[2 * ri + 1] <= pt->beg)
		ri++;
	for (k = 0; k < ns; k++) {
		uint64_t from = str[k].x;

		npos += str[k].y - str[k].x + 1;
		for (; ri < x->n_nrun && x->nrun[2 * ri] < pt->end; ri++) {
			uint64_t a = x->nrun[2 * ri], e = a + x->nrun[2 * ri + 1];

			a = a > pt->beg ? a - pt->beg : 0;
			e = (e < pt->end ? e : pt->end) - pt->beg;
			if (a > str[k].y + H)
				break;          /* after this run of code 0 */
			if (a + H <= e - H && a + H <= str[k].y && e - H >= from) {
				uint64_t d0 = a + H > from ? a + H : from, d1 = e - H < str[k].y ? e - H : str[k].y;

				if (d0 > from)
					span_push(&keep, &nk, &ck, from, d0 - 1);
				from = d1 + 1;
			}
		}
		if (from <= str[k].y)
			span_push(&keep, &nk, &ck, from, str[k].y);
	}
	free(str);
	if (npos != hi - lo) {
		free(keep);
		*err = sp_fail("internal error: %llu positions start A^%llu in partition %u, "
				"the FM-index has %llu rows", (unsigned long long)npos,
				(unsigned long long)H, part, (unsigned long long)(hi - lo));
		return NULL;
	}
	/*
	 * rows: the row of the sampled position at or after each span's end
	 * (one scan of the samples, marked in a bitmap), then LF steps
	 */
	need = sp_malloc((nk ? nk : 1) * sizeof *need);
	for (k = 0; k < nk; k++) {
		uint64_t p = (keep[k].y + fm->sa_rate - 1) / fm->sa_rate;

		need[nneed] = p;
		nneed += p * fm->sa_rate < f->n;
	}
	qsort(need, nneed, sizeof *need, cmp_u64);
	for (k = j = 0; k < nneed; k++)
		if (!j || need[j - 1] != need[k])
			need[j++] = need[k];
	nneed = j;
	bm = sp_calloc(f->n / fm->sa_rate / 64 + 2, sizeof *bm);
	for (k = 0; k < nneed; k++)
		bm[need[k] / 64] |= 1ULL << (need[k] % 64);
	isa = sp_malloc((nneed ? nneed : 1) * sizeof *isa);
	for (j = 0; j < fm->n_blocks && nneed; j++) {
		uint64_t bits = fm->mark[2 * j], rank = fm->mark[2 * j + 1];

		while (bits) {
			unsigned b = (unsigned)__builtin_ctzll(bits);
			uint64_t v = fm->sa[rank++] / fm->sa_rate;

			bits &= bits - 1;
			if ((bm[v / 64] >> (v % 64)) & 1)
				isa[u64_find(need, nneed, v)] = (uint32_t)(64 * j + b);
		}
	}
	free(bm);
	for (k = 0; k < nk; k++)
		nrow += keep[k].y - keep[k].x + 1;
	rows = sp_malloc((nrow ? nrow : 1) * sizeof *rows);
	nrow = 0;
	for (k = 0; k < nk; k++) {
		uint64_t p = (keep[k].y + fm->sa_rate - 1) / fm->sa_rate * fm->sa_rate, r;

		if (p >= f->n) {
			p = f->n;       /* row 0 is the suffix "$" at n */
			r = 0;
		} else {
			r = isa[u64_find(need, nneed, p / fm->sa_rate)];
		}
		for (;; p--) {
			if (p <= keep[k].y)
				rows[nrow++] = (uint32_t)r;
			if (p == keep[k].x)
				break;
			{
				unsigned c = mem_bwt(f, r);

				r = mem_cval(f, c) + mem_occ(f, c, r);
			}
		}
	}
	free(isa);
	free(need);
	free(keep);
	qsort(rows, nrow, sizeof *rows, cmp_u32);
	for (k = 0; k < nrow; k++)
		if (rows[k] < lo || rows[k] >= hi) {
			*err = sp_fail("internal error: shallow row %u outside A^%llu in partition %u",
					rows[k], (unsigned long long)H, part);
			free(rows);
			return NULL;
		}
	f->ylo = lo;
	f->yhi = hi;
	f->shal = rows;
	f->nshal = (uint32_t)nrow;
	return rows;
}

int mem_deep_ok(const mem_idx_t *mi, const char *seq, uint32_t m)
{
	uint32_t i, nn = 0;

	if (m > MEM_DEEP)
		return 0;
	if (mi->o.acgt)
		return 1;
	for (i = 0; i < m; i++)
		nn += seq[i] == 'N';
	return nn < mi->o.L;
}

/* ---- setup ------------------------------------------------------------------ */

typedef struct {
	const idx_t *x;
	uint32_t part;
	mem_fm_t *f;               /* deep_build sets its ylo, yhi, nshal; jump_build reads other fields */
	uint32_t *shal;
	int err;
	char msg[512];
} deep_job_t;

static void *deep_main(void *arg)
{
	deep_job_t *j = arg;

	j->shal = deep_build(j->x, j->part, j->f, &j->err);
	if (j->err < 0)
		snprintf(j->msg, sizeof j->msg, "%s", sp_errmsg());
	return NULL;
}

mem_idx_t *mem_idx_new(const idx_t *x, const mem_opt_t *o, int nthreads, char *msg, size_t len)
{
	mem_idx_t *mi;
	uint64_t nmax = 0;
	uint32_t i;

	if (mem_check(x, msg, len) < 0)
		return NULL;
	if (o->L < 1 || (o->w && o->w > o->L)) {
		snprintf(msg, len, "-w %u: the window must lie in 1..L (%u)", o->w, o->L);
		return NULL;
	}
	mi = sp_calloc(1, sizeof *mi);
	mi->x = x;
	mi->o = *o;
	for (i = 0; i < x->n_part; i++)
		if (x->part[i].fm.n > nmax)
			nmax = x->part[i].fm.n;
	/* a window of log4(n) + 3 bases has about 1/64 of a chance occurrence */
	mi->w = o->w ? o->w : log4_floor(nmax) + 3;
	mi->popcnt = use_popcnt();
	mi->full_sort = getenv("SEEDPIPE_MEM_FULL_SORT") != NULL;
	mem_fmt_init(mi);
	if (mi->w > o->L)
		mi->w = o->L;
	mi->s = o->L - mi->w + 1;
	mi->fm = sp_calloc(x->n_part ? x->n_part : 1, sizeof *mi->fm);
	mi->jump = sp_calloc(x->n_part ? x->n_part : 1, sizeof *mi->jump);
	mi->jump_len = sp_calloc(x->n_part ? x->n_part : 1, sizeof *mi->jump_len);
	mi->shal = sp_calloc(x->n_part ? x->n_part : 1, sizeof *mi->shal);
	for (i = 0; i < x->n_part; i++) {
		const idx_part_t *pt = &x->part[i];
		mem_fm_t *f = &mi->fm[i];
		uint32_t lg = log4_floor(pt->fm.n), k = lg >= 2 ? lg - 1 : 0;

		mem_fm_init(f, (const uint32_t *)pt->fm.occ, pt->fm.n, pt->fm.primary, pt->fm.C[0],
				pt->fm.C[1], pt->fm.C[2], pt->fm.C[3]);
		f->mark = pt->fm.mark;
		f->sa = pt->fm.sa;
		f->text = (const uint32_t *)x->pack + (pt->beg >> 4);
		f->tsh = (uint32_t)(pt->beg & 15);
		if (k > K_CAP)
			k = K_CAP;
		if (k > mi->w)
			k = mi->w;
		while (x->lazy && k && (8ULL << 2 * k) > mem_part_bytes(x, i) / 4)
			k--;   /* -M in parts: the table a quarter of its FM-index at most */
		f->k = k;
		mem_part_load(x, i);   /* -M in passes: one partition in memory at a time */
		{       /* the deep rows (one thread) while the K-mer table is built (all threads) */
			deep_job_t dj = { x, i, f, NULL, 0, "" };
			pthread_t th;
			int started = nthreads > 1 && pthread_create(&th, NULL, deep_main, &dj) == 0;

			if (k)
				mi->jump[i] = jump_build(f, k, nthreads, mi->popcnt, &mi->jump_len[i]);
			if (!mi->jump[i] && k)
				snprintf(msg, len, "%s", sp_errmsg());
			if (started)
				pthread_join(th, NULL);
			else
				deep_main(&dj);
			mi->shal[i] = dj.shal;
			f->jump = mi->jump[i];
			mem_part_drop(x, i);
			if ((!mi->jump[i] && k) || dj.err < 0) {
				if (mi->jump[i] || !k)
					snprintf(msg, len, "%s", dj.msg);
				mem_idx_free(mi);
				return NULL;
			}
		}
	}
	/* cuts: partition i+1 starts inside partition i (a split sequence) */
	for (i = 0; i + 1 < x->n_part; i++) {
		uint64_t b = x->part[i + 1].beg, e = x->part[i].end, g;
		mem_cut_t *c;

		if (b >= e)
			continue;
		mi->cut = sp_realloc(mi->cut, (mi->n_cut + 1) * sizeof *mi->cut);
		c = &mi->cut[mi->n_cut++];
		c->x0 = b - 1;
		c->x1 = e;
		c->part = i;
		c->ref = sp_malloc(e - b + 3);
		for (g = c->x0; g <= c->x1; g++) {
			uint64_t w = mem_ref_word(x->pack, g);

			c->ref[g - c->x0] = idx_range_clean(x, g, 1) ? "ACGT"[w & 3] : 'N';
		}
		c->ref[e - b + 2] = 0;
	}
	for (i = 0; i < x->n_seq; i++) {
		size_t l = strlen(x->names[i]);

		if ((int)l > mi->name_w)
			mi->name_w = (int)l;
	}
	{       /* mem_nrun_after's buckets */
		uint64_t j, k = 0;

		mi->n_nrun_b = (x->total >> NRUN_SH) + 1;
		mi->nrun_b = sp_malloc(mi->n_nrun_b * sizeof *mi->nrun_b);
		for (j = 0; j < mi->n_nrun_b; j++) {
			while (k < x->n_nrun && x->nrun[2 * k] + x->nrun[2 * k + 1] <= j << NRUN_SH)
				k++;
			mi->nrun_b[j] = (uint32_t)k;
		}
	}
	return mi;
}

void mem_idx_free(mem_idx_t *mi)
{
	uint32_t i;

	if (!mi)
		return;
	for (i = 0; i < mi->x->n_part; i++) {
		free(mi->jump[i]);
		free(mi->shal[i]);
	}
	free(mi->shal);
	for (i = 0; i < mi->n_cut; i++)
		free(mi->cut[i].ref);
	free(mi->cut);
	free(mi->nrun_b);
	free(mi->jump);
	free(mi->jump_len);
	free(mi->fm);
	free(mi);
}

const idx_t *mem_idx_x(const mem_idx_t *mi) { return mi->x; }
const mem_opt_t *mem_idx_opt(const mem_idx_t *mi) { return &mi->o; }
uint32_t mem_idx_w(const mem_idx_t *mi) { return mi->w; }
uint32_t mem_idx_s(const mem_idx_t *mi) { return mi->s; }
const void *mem_idx_fm(const mem_idx_t *mi, uint32_t part) { return &mi->fm[part]; }

const uint32_t *mem_idx_jump(const mem_idx_t *mi, uint32_t part, size_t *jump_len)
{
	*jump_len = mi->jump_len[part];
	return mi->jump[part];
}

uint32_t mem_n_windows(const mem_idx_t *mi, uint32_t m)
{
	return m < mi->o.L ? 0 : (m - mi->w) / mi->s + 1;
}

void mem_pack(uint32_t *w, const char *seq, uint32_t m)
{
	const unsigned char *s = (const unsigned char *)seq;
	size_t nw = mem_words_len(m), full = m / 16, j;
	uint32_t i, v;
	int k;

	/* a word at a time in a register (sp_nt4_codes is 0..3, or 4 for N: & 3 makes it 0) */
	for (j = 0; j < full; j++, s += 16) {
		for (k = 0, v = 0; k < 16; k++)
			v |= (uint32_t)(sp_nt4_codes[s[k]] & 3) << (2 * k);
		w[j] = v;
	}
	for (i = 0, v = 0; i < (m & 15); i++)
		v |= (uint32_t)(sp_nt4_codes[s[i]] & 3) << (2 * i);
	for (; j < nw; j++, v = 0)
		w[j] = v;
}

/* ---- stage 1 ---------------------------------------------------------------- */

/* A window's backward search in progress. */
typedef struct {
	uint64_t lo, hi;
	uint32_t j;
} wsearch_t;

#define WS_STACK 64

/*
 * mem_strand (kernels/inc_mem.h) with the backward searches of all windows
 * in lock step, one base of each in turn, the occurrence blocks of the
 * next step prefetched for all (they are independent; the left steps
 * depend on the matches of the windows before, and follow in order).
 */
static inline uint32_t strand_lockstep(const mem_fm_t *f, const uint32_t *rw, uint32_t rlen,
		uint32_t w, uint32_t s, uint32_t lmin, uint32_t deep, struct mem_sink *sk, uint32_t *nwin)
{
	wsearch_t stack[WS_STACK], *ws = stack;
	uint32_t n, t, steps = 0, active;
	mem_q_t q;

	*nwin = 0;
	if (rlen < lmin)
		return 0;
	mem_q_init(&q, rw, rlen, w, s, lmin, deep, sk);
	n = (rlen - w) / s + 1;
	if (n > WS_STACK)
		ws = sp_malloc(n * sizeof *ws);
	for (t = 0; t < n; t++) {
		uint32_t k = t * s;

		ws[t].lo = 0;
		ws[t].hi = f->n + 1;
		ws[t].j = k + w;
		if (f->k && w >= f->k) {
			uint64_t code = mem_word(rw, k + w - f->k) & ((1UL << (2u * f->k)) - 1UL);

			ws[t].lo = code;        /* the table entry, read next */
			ws[t].j = k + w - f->k;
			__builtin_prefetch(&f->jump[2 * code]);
		}
	}
	if (f->k && w >= f->k)
		for (t = 0; t < n; t++) {
			uint64_t code = ws[t].lo;

			ws[t].lo = f->jump[2 * code];
			ws[t].hi = f->jump[2 * code + 1];
			__builtin_prefetch(&f->occ[8 * (ws[t].lo >> 6)]);
			__builtin_prefetch(&f->occ[8 * (ws[t].hi >> 6)]);
		}
	do {
		active = 0;
		for (t = 0; t < n; t++) {
			wsearch_t *x = &ws[t];

			if (x->j > t * s && x->lo < x->hi) {
				uint32_t c = mem_base(rw, --x->j);

				x->lo = mem_cval(f, c) + mem_occ(f, c, x->lo);
				x->hi = mem_cval(f, c) + mem_occ(f, c, x->hi);
				__builtin_prefetch(&f->occ[8 * (x->lo >> 6)]);
				__builtin_prefetch(&f->occ[8 * (x->hi >> 6)]);
				steps++;
				active = 1;
			}
		}
	} while (active);
	for (t = 0; t < n; t++) {
		if (ws[t].lo < ws[t].hi)
			steps += mem_win_rest(f, &q, t * s, ws[t].lo, ws[t].hi);
		flush_rows(f, &q);
		(*nwin)++;
	}
	if (ws != stack)
		free(ws);
	return steps;
}

/*
 * The search of a strand and a level of the K-mer tables, compiled twice:
 * with the POPCNT instruction (x86-64 CPUs that have it) and without;
 * flatten puts the whole search inside each, so that its popcounts use the
 * instruction.
 */
#define FIND_BODY { \
		return strand_lockstep(f, st->words, st->m, mi->w, mi->s, mi->o.L, \
				(uint32_t)mem_deep_ok(mi, st->seq, st->m), sk, nwin); \
	}
#define JUMP_BODY { \
		size_t y; \
		unsigned a; \
		for (y = y0; y < y1; y++) { \
			uint64_t lo = prev[2 * y], hi = prev[2 * y + 1]; \
			for (a = 0; a < 4; a++) { \
				size_t z = a | y << 2; \
				next[2 * z] = lo >= hi ? 0 : (uint32_t)(mem_cval(f, a) + mem_occ(f, a, lo)); \
				next[2 * z + 1] = lo >= hi ? 0 : (uint32_t)(mem_cval(f, a) + mem_occ(f, a, hi)); \
			} \
		} \
	}

#if defined(__x86_64__) && defined(__GNUC__)
#define HAVE_POPCNT 1
__attribute__((target("popcnt"), flatten))
static uint32_t find_popcnt(const mem_idx_t *mi, const mem_fm_t *f, const mem_strand_t *st,
		struct mem_sink *sk, uint32_t *nwin)
FIND_BODY

__attribute__((target("popcnt"), flatten))
static void jump_popcnt(const mem_fm_t *f, const uint32_t *prev, uint32_t *next, size_t y0,
		size_t y1)
JUMP_BODY
#endif

__attribute__((flatten))
static uint32_t find_plain(const mem_idx_t *mi, const mem_fm_t *f, const mem_strand_t *st,
		struct mem_sink *sk, uint32_t *nwin)
FIND_BODY

__attribute__((flatten))
static void jump_plain(const mem_fm_t *f, const uint32_t *prev, uint32_t *next, size_t y0,
		size_t y1)
JUMP_BODY

/* Whether the search may use the POPCNT instruction. */
static int use_popcnt(void)
{
	return sp_cpu_has(SP_CPU_POPCNT) && sp_simd_allowed();
}

static void jump_level(const mem_fm_t *f, const uint32_t *prev, uint32_t *next, size_t y0,
		size_t y1, int popcnt)
{
#ifdef HAVE_POPCNT
	if (popcnt) {
		jump_popcnt(f, prev, next, y0, y1);
		return;
	}
#endif
	(void)popcnt;
	jump_plain(f, prev, next, y0, y1);
}

void mem_find_fm(const mem_idx_t *mi, uint32_t part, const mem_strand_t *st,
		mem_rawvec_t *v, mem_stats_t *stat, mem_scratch_t *s)
{
	struct mem_sink sk;
	uint32_t nwin = 0;

	if (!s->cache)
		s->cache = sp_calloc((size_t)1 << LOC_BITS, sizeof *s->cache);
	sk.v = v;
	sk.part = part;
	sk.n = 0;
	sk.cache = s->cache;
	sk.pend = s->pend;
	sk.walk = s->walk;
	sk.np = 0;
	sk.cap = s->cap_pend;

#ifdef HAVE_POPCNT
	if (mi->popcnt)
		stat->steps += find_popcnt(mi, &mi->fm[part], st, &sk, &nwin);
	else
#endif
		stat->steps += find_plain(mi, &mi->fm[part], st, &sk, &nwin);
	s->pend = sk.pend;
	s->walk = sk.walk;
	s->cap_pend = sk.cap;
	stat->windows += nwin;
	stat->raw += sk.n;
}

/* ---- stage 2 ---------------------------------------------------------------- */

mem_scratch_t *mem_scratch_new(void)
{
	return sp_calloc(1, sizeof(mem_scratch_t));
}

void mem_scratch_free(mem_scratch_t *s)
{
	if (!s)
		return;
	free(s->cache);
	free(s->pend);
	free(s->walk);
	free(s->tmp.a);
	free(s->nrun);
	free(s->qmin);
	free(s->qcnt);
	free(s->key);
	free(s->und);
	free(s);
}

