/*
 * mem.c - maximal exact matches: the search's setup (window, K-mer
 * tables), stage 1 on the CPU (kernels/inc_mem.h), stage 2 (true matches,
 * partition cuts, -mum / -mumreference, MUMmer's order) and stage 3 (text
 * lines, candidates); see mem.h.
 */
#include "mem.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sp_le.h"
#include "sp_thread.h"
#include "util.h"

/* 32 reference bases from global position G on (idx_ref_word, inlined: the sort calls it often). */
static inline uint64_t ref_word(const uint8_t *pack, uint64_t g)
{
	uint64_t x = sp_ld64(pack + (g >> 2));
	unsigned sh = (unsigned)(g & 3) * 2;

	if (sh)
		x = x >> sh | (uint64_t)pack[(g >> 2) + 8] << (64 - sh);
	return x;
}

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
typedef struct {
	uint64_t key;              /* row << 24 | partition, + 1; 0: empty */
	uint64_t pos;
} loc_slot_t;

/* A row waiting to be located: the row (then the rows of its LF steps), its match. */
typedef struct {
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
static void sink_push(struct mem_sink *s, uint32_t i, uint64_t p, uint32_t len);
static void sink_row(struct mem_sink *s, uint64_t row, uint32_t i, uint32_t e);
#include "inc_mem.h"

struct mem_q;
static void flush_rows(const mem_fm_t *f, struct mem_q *q);

#define MEM_SINK_T struct mem_sink *
#define MEM_EMIT(s, i_, p_, len_) sink_push((s), (i_), (p_), (len_))
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
				r->pos = f->mark[2 * (row >> 6) + 1] + MEM_POPC64(bits & ((1UL << b) - 1UL));
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
			sink_push(s, r->i, r->pos, len);
			if (q->nk < MEM_KNOWN) {
				q->ki[q->nk] = r->i;
				q->ke[q->nk] = r->i + len;
			}
			q->nk++;
		}
	}
}

#define K_CAP 11u              /* K-mer tables of at most 4^11 entries (32 MiB) */

/* A partition cut inside a sequence: matches covering [x0, x1] lie in neither part. */
typedef struct {
	uint64_t x0, x1;
	uint32_t part;
	char *ref;                 /* the x1 - x0 + 1 letters (ACGTN) */
} mem_cut_t;

struct mem_idx {
	const idx_t *x;
	mem_opt_t o;
	uint32_t w, s;
	mem_fm_t *fm;
	uint32_t **jump;
	size_t *jump_len;
	uint32_t **shal;           /* per partition: the shallow rows (inc_mem.h) */
	mem_cut_t *cut;
	uint32_t n_cut;
	int name_w;
	int popcnt;                /* stage 1 may use the POPCNT instruction */
};

struct mem_scratch {
	loc_slot_t *cache;
	prow_t *pend;              /* struct mem_sink's */
	uint32_t *walk;
	size_t cap_pend;
	mem_vec_t tmp;
	uint32_t *nrun;            /* the strand's N runs: start, end */
	size_t n_nrun, cap_nrun;
	uint32_t *qmin, *qcnt;     /* per query start: shortest match, matches */
	uint32_t cap_q;
	struct skey *key;          /* sort keys (sort_query) */
	size_t cap_key;
};

#define VEC_PUSH(v, x) do { \
		if ((v)->n == (v)->cap) { \
			(v)->cap = (v)->cap ? 2 * (v)->cap : 64; \
			(v)->a = sp_realloc((v)->a, (v)->cap * sizeof *(v)->a); \
		} \
		(v)->a[(v)->n++] = (x); \
	} while (0)

static void sink_push(struct mem_sink *s, uint32_t i, uint64_t p, uint32_t len)
{
	mem_raw_t r = { s->part, i, len, (uint32_t)p };

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

/* The BWT rows of every K-mer (first base in the low bits of its code). */
static uint32_t *jump_build(const mem_fm_t *f, uint32_t k, int nthreads, int popcnt, size_t *len)
{
	uint32_t *prev = sp_malloc(2 * sizeof *prev), j;
	size_t n = 1;

	prev[0] = 0;
	prev[1] = (uint32_t)(f->n + 1);
	for (j = 0; j < k; j++) {
		jump_ctx_t c = { f, prev, sp_malloc(8 * n * sizeof *prev), n, popcnt };

		sp_or_die(sp_for(nthreads, (n + JUMP_CHUNK - 1) / JUMP_CHUNK, 1, jump_step, &c));
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

/*
 * Rows of A^MEM_DEEP in partition PART (view F) and its shallow rows: the
 * positions p whose next MEM_DEEP text bases are A or N (runs of code 0 of
 * the packed text) that are not deep ([p - MEM_DEEP, p + MEM_DEEP) inside
 * one run of N), turned into rows by LF steps from the nearest sampled
 * position at or after them.  Sets F's ylo, yhi, shal, nshal; returns the
 * shallow rows (to free) or NULL.
 */
static uint32_t *deep_build(const idx_t *x, uint32_t part, mem_fm_t *f)
{
	const idx_part_t *pt = &x->part[part];
	const fm_t *fm = &pt->fm;
	const uint64_t H = MEM_DEEP;
	uint64_t lo = 0, hi = f->n + 1, j, t, npos = 0, nrow = 0, ri;
	span_t *str = NULL, *keep = NULL;
	size_t ns = 0, cs = 0, nk = 0, ck = 0, k;
	uint32_t *isa, *rows;

	f->ylo = f->yhi = 0;
	f->nshal = 0;
	for (j = 0; j < H && lo < hi; j++) {
		lo = f->c0 + mem_occ(f, 0, lo);
		hi = f->c0 + mem_occ(f, 0, hi);
	}
	if (lo >= hi)
		return NULL;
	/* the runs of code 0 of H bases or more: p in [u, v - H] */
	for (t = 0; t < f->n;) {
		uint64_t w = mem_word(f->text, t + f->tsh), u;
		uint64_t lim = f->n - t < 32 ? f->n - t : 32;

		if (lim == 32 && w != 0) {
			t += (uint64_t)__builtin_ctzll(w) / 2;  /* up to the first base that is not A */
			if (mem_base(f->text, t + f->tsh) != 0)
				t++;
			continue;
		}
		if (mem_base(f->text, t + f->tsh) != 0) {
			t++;
			continue;
		}
		u = t;
		while (t < f->n) {
			uint64_t z = mem_word(f->text, t + f->tsh), step = f->n - t < 32 ? f->n - t : 32;

			if (z == 0 && step == 32) {
				t += 32;
				continue;
			}
			while (step-- && mem_base(f->text, t + f->tsh) == 0)
				t++;
			break;
		}
		if (t - u >= H)
			span_push(&str, &ns, &cs, u, t - H);
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
	if (npos != hi - lo)
		sp_die("mem: internal error: %llu positions start A^%llu in partition %u, "
				"the FM-index has %llu rows", (unsigned long long)npos,
				(unsigned long long)H, part, (unsigned long long)(hi - lo));
	/* rows: the inverse of the sampled suffix array, then LF steps */
	isa = sp_malloc((f->n / fm->sa_rate + 2) * sizeof *isa);
	for (j = 0; j < fm->n_blocks; j++) {
		uint64_t bits = fm->mark[2 * j], rank = fm->mark[2 * j + 1];

		while (bits) {
			unsigned b = (unsigned)__builtin_ctzll(bits);

			bits &= bits - 1;
			isa[fm->sa[rank++] / fm->sa_rate] = (uint32_t)(64 * j + b);
		}
	}
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
			r = isa[p / fm->sa_rate];
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
	free(keep);
	qsort(rows, nrow, sizeof *rows, cmp_u32);
	for (k = 0; k < nrow; k++)
		if (rows[k] < lo || rows[k] >= hi)
			sp_die("mem: internal error: shallow row %u outside A^%llu in partition %u",
					rows[k], (unsigned long long)H, part);
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

		f->occ = (const uint32_t *)pt->fm.occ;
		f->mark = pt->fm.mark;
		f->sa = pt->fm.sa;
		f->text = (const uint32_t *)x->pack + (pt->beg >> 4);
		f->tsh = (uint32_t)(pt->beg & 15);
		f->n = pt->fm.n;
		f->primary = pt->fm.primary;
		f->c0 = pt->fm.C[0];
		f->c1 = pt->fm.C[1];
		f->c2 = pt->fm.C[2];
		f->c3 = pt->fm.C[3];
		if (k > K_CAP)
			k = K_CAP;
		if (k > mi->w)
			k = mi->w;
		f->k = k;
		if (k) {
			mi->jump[i] = jump_build(f, k, nthreads, mi->popcnt, &mi->jump_len[i]);
			f->jump = mi->jump[i];
		}
		mi->shal[i] = deep_build(x, i, f);
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
			uint64_t w = ref_word(x->pack, g);

			c->ref[g - c->x0] = idx_range_clean(x, g, 1) ? "ACGT"[w & 3] : 'N';
		}
		c->ref[e - b + 2] = 0;
	}
	for (i = 0; i < x->n_seq; i++) {
		size_t l = strlen(x->names[i]);

		if ((int)l > mi->name_w)
			mi->name_w = (int)l;
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
	size_t nw = mem_words_len(m), j;
	uint32_t i;

	for (j = 0; j < nw; j++)
		w[j] = 0;
	for (i = 0; i < m; i++) {
		uint32_t c = sp_nt4_codes[(unsigned char)seq[i]];

		w[i >> 4] |= (c > 3 ? 0 : c) << (2 * (i & 15));
	}
}

/* ---- stage 1 ---------------------------------------------------------------- */

/*
 * The search of a strand and a level of the K-mer tables, compiled twice:
 * with the POPCNT instruction (x86-64 CPUs that have it) and without;
 * flatten puts the whole search inside each, so that its popcounts use the
 * instruction.
 */
#define FIND_BODY { \
		return mem_strand(f, st->words, st->m, mi->w, mi->s, mi->o.L, \
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
	free(s);
}

/* Index of the first N run of X that ends after G. */
static uint64_t nrun_after(const idx_t *x, uint64_t g)
{
	uint64_t lo = 0, hi = x->n_nrun;

	while (lo < hi) {
		uint64_t mid = (lo + hi) / 2;

		if (x->nrun[2 * mid] + x->nrun[2 * mid + 1] <= g)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Reference letter at G (ACGTN); *RUN is a cursor: the first N run ending after a position <= G. */
static char ref_at(const idx_t *x, uint64_t g, uint64_t *run)
{
	while (*run < x->n_nrun && x->nrun[2 * *run] + x->nrun[2 * *run + 1] <= g)
		(*run)++;
	if (*run < x->n_nrun && x->nrun[2 * *run] <= g)
		return 'N';
	return "ACGT"[ref_word(x->pack, g) & 3];
}

/* Letters A (read) and B (reference) match. */
static inline int eqc(const mem_opt_t *o, char a, char b)
{
	return a == b && !(o->acgt && a == 'N');
}

/* Sequence of position G with G < off[s+1] (G inside it); empty sequences skipped. */
static uint32_t seq_of(const idx_t *x, uint64_t g)
{
	return idx_pos2seq(x, g, NULL);
}

/*
 * Whether read letter QC matches the reference at G.  FM_MAX: the FM-MEM
 * ended there on a mismatch of the partition text (N read as A in both),
 * so two letters that are not N differ: the reference is read only for its
 * N runs.
 */
static int ext_match(const mem_idx_t *mi, char qc, uint64_t g, int fm_max)
{
	const idx_t *x = mi->x;
	uint64_t run = nrun_after(x, g);

	if (run < x->n_nrun && x->nrun[2 * run] <= g)
		return eqc(&mi->o, qc, 'N');
	if (qc == 'N' || fm_max)
		return 0;
	return qc == "ACGT"[ref_word(x->pack, g) & 3];
}

/*
 * Keep the match [A, B) at G of strand ST, found in partition PART, if it
 * is long enough, maximal in the whole reference and owned by PART.  LMAX,
 * RMAX: the FM-MEM ended on a mismatch there (ext_match).
 */
static void keep_piece(const mem_idx_t *mi, const mem_strand_t *st, uint32_t part,
		uint32_t a, uint32_t b, uint64_t g, uint32_t sq, int lmax, int rmax, mem_vec_t *out)
{
	const idx_t *x = mi->x;
	uint64_t len = b - a;
	mem_t m;

	if (len < mi->o.L || g >= x->own_end[part])
		return;
	if (a > 0 && g > x->off[sq] && ext_match(mi, st->seq[a - 1], g - 1, lmax))
		return;
	if (b < st->m && g + len < x->off[sq + 1] && ext_match(mi, st->seq[b], g + len, rmax))
		return;
	m.g = g;
	m.i = a;
	m.len = (uint32_t)len;
	VEC_PUSH(out, m);
}

/* Whether read runs N of S hold a base in [A, B). */
static int read_has_n(const mem_scratch_t *s, uint32_t a, uint32_t b)
{
	size_t lo = 0, hi = s->n_nrun;

	while (lo < hi) {       /* first run ending after a */
		size_t mid = (lo + hi) / 2;

		if (s->nrun[2 * mid + 1] <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->n_nrun && s->nrun[2 * lo] < b;
}

/* Cut FM-MEM R into the true matches it holds (letters compared, sequence ends). */
static void split_raw(const mem_idx_t *mi, const mem_strand_t *st, const mem_raw_t *r,
		mem_vec_t *out, const mem_scratch_t *s)
{
	const idx_t *x = mi->x;
	uint64_t g0 = x->part[r->part].beg + r->p, run = nrun_after(x, g0);
	uint32_t sq = seq_of(x, g0), j, a;
	int lmax = r->p > 0, rmax = r->p + (uint64_t)r->len < x->part[r->part].fm.n;

	if (g0 + r->len <= x->off[sq + 1] && !(run < x->n_nrun && x->nrun[2 * run] < g0 + r->len)
			&& !read_has_n(s, r->i, r->i + r->len)) {
		keep_piece(mi, st, r->part, r->i, r->i + r->len, g0, sq, lmax, rmax, out);
		return;
	}
	for (j = 0, a = 0; j <= r->len; j++) {
		uint64_t g = g0 + j;
		int end = j == r->len;

		if (!end && g == x->off[sq + 1]) {     /* next sequence (skip empty ones) */
			if (j > a)
				keep_piece(mi, st, r->part, r->i + a, r->i + j, g0 + a, sq,
						a == 0 && lmax, 0, out);
			a = j;
			sq = seq_of(x, g);
		}
		if (end || !eqc(&mi->o, st->seq[r->i + j], ref_at(x, g, &run))) {
			if (j > a)
				keep_piece(mi, st, r->part, r->i + a, r->i + j, g0 + a, sq,
						a == 0 && lmax, end && rmax, out);
			a = j + 1;
		}
	}
}

/* Matches that cover a partition cut (in neither partition's text): compared directly. */
static void cut_matches(const mem_idx_t *mi, const mem_strand_t *st, mem_vec_t *out)
{
	const idx_t *x = mi->x;
	uint32_t c;

	for (c = 0; c < mi->n_cut; c++) {
		const mem_cut_t *ct = &mi->cut[c];
		uint64_t wl = ct->x1 - ct->x0 + 1;
		uint32_t a, sq;

		if (st->m < wl || (mi->o.acgt && memchr(ct->ref, 'N', wl)))
			continue;
		sq = seq_of(x, ct->x0);
		for (a = 0; a + wl <= st->m; a++) {
			uint64_t gl = ct->x0, gr = ct->x1 + 1, run;
			uint32_t al = a, ar = (uint32_t)(a + wl);
			mem_t m;

			if (st->seq[a] != ct->ref[0] || memcmp(st->seq + a, ct->ref, wl) != 0)
				continue;
			if (mi->o.acgt && memchr(st->seq + a, 'N', wl))
				continue;
			while (al > 0 && gl > x->off[sq]) {
				run = nrun_after(x, gl - 1);
				if (!eqc(&mi->o, st->seq[al - 1], ref_at(x, gl - 1, &run)))
					break;
				al--;
				gl--;
			}
			run = nrun_after(x, gr);
			while (ar < st->m && gr < x->off[sq + 1] && eqc(&mi->o, st->seq[ar], ref_at(x, gr, &run)))
				ar++, gr++;
			if (ar - al < mi->o.L)
				continue;
			m.g = gl;
			m.i = al;
			m.len = ar - al;
			VEC_PUSH(out, m);
		}
	}
}

/* A position in the text "seq1 $ seq2 $ ... seqN" for the suffix order. */
typedef struct {
	uint64_t pos, run;
	uint32_t seq;
} suf_t;

/* Letters at P that hold neither N nor a sequence end, 0 if P is at one. */
static uint64_t suf_clean(const idx_t *x, const suf_t *p)
{
	uint64_t e = x->off[p->seq + 1];

	if (p->run < x->n_nrun && x->nrun[2 * p->run] < e) {
		if (x->nrun[2 * p->run] <= p->pos)
			return 0;
		e = x->nrun[2 * p->run];
	}
	return e - p->pos;
}

/* Rank of the letter at P: A C G N T $ end = 0..6. */
static int suf_rank(const idx_t *x, const suf_t *p)
{
	static const int code_rank[4] = { 0, 1, 2, 4 };

	if (p->pos == x->off[p->seq + 1])
		return p->seq + 1 == x->n_seq ? 6 : 5;
	if (p->run < x->n_nrun && x->nrun[2 * p->run] <= p->pos)
		return 3;
	return code_rank[ref_word(x->pack, p->pos) & 3];
}

static void suf_move(const idx_t *x, suf_t *p, uint64_t d)
{
	p->pos += d;
	while (p->run < x->n_nrun && x->nrun[2 * p->run] + x->nrun[2 * p->run + 1] <= p->pos)
		p->run++;
}

static void suf_init(const idx_t *x, suf_t *p, uint64_t g, uint64_t skip)
{
	p->seq = seq_of(x, g);
	p->pos = g + skip;
	p->run = nrun_after(x, p->pos);
}

/* Order of the suffixes at A and B, which agree on their first SKIP letters. */
static int suf_cmp(const idx_t *x, uint64_t a, uint64_t b, uint64_t skip)
{
	suf_t p, q;

	suf_init(x, &p, a, skip);
	suf_init(x, &q, b, skip);
	for (;;) {
		uint64_t cp = suf_clean(x, &p), cq = suf_clean(x, &q);

		if (cp && cq) {
			uint64_t n = cp < cq ? cp : cq, wp, wq, d;

			if (n > 32)
				n = 32;
			wp = ref_word(x->pack, p.pos);
			wq = ref_word(x->pack, q.pos);
			d = wp ^ wq;
			if (n < 32)
				d &= (1ULL << (2 * n)) - 1;
			if (d) {
				unsigned sh = (unsigned)__builtin_ctzll(d) & ~1u;

				return ((wp >> sh) & 3) < ((wq >> sh) & 3) ? -1 : 1;
			}
			suf_move(x, &p, n);
			suf_move(x, &q, n);
		} else {
			int rp = suf_rank(x, &p), rq = suf_rank(x, &q);

			if (rp != rq)
				return rp < rq ? -1 : 1;
			if (rp == 6)
				return 0;
			if (rp == 5) {
				p.seq++;
				q.seq++;
				p.run = nrun_after(x, p.pos);
				q.run = nrun_after(x, q.pos);
			} else {        /* N in both: skip the shorter rest of run */
				uint64_t ep = x->nrun[2 * p.run] + x->nrun[2 * p.run + 1];
				uint64_t eq = x->nrun[2 * q.run] + x->nrun[2 * q.run + 1], n;

				if (ep > x->off[p.seq + 1])
					ep = x->off[p.seq + 1];
				if (eq > x->off[q.seq + 1])
					eq = x->off[q.seq + 1];
				n = ep - p.pos < eq - q.pos ? ep - p.pos : eq - q.pos;
				suf_move(x, &p, n);
				suf_move(x, &q, n);
			}
		}
	}
}

/*
 * MUMmer's order of the matches of one query start: their reference
 * suffixes, which agree on the letters of the shortest match of that start.
 * Each match gets a key: the ranks of the KEY_LETTERS letters after those
 * (3 bits each, the first highest); the suffixes are compared letter by
 * letter (suf_cmp) only where the keys tie.
 */
#define KEY_LETTERS 21

typedef struct skey {
	uint64_t key;
	uint32_t i, k;             /* query start, index of the match */
} skey_t;

typedef struct {
	const idx_t *x;
	const mem_t *m;
} skey_ctx_t;

/* The key of the suffix at G from G + SKIP on (no sequence end before G + SKIP). */
static uint64_t suf_key(const idx_t *x, uint64_t g, uint64_t skip)
{
	static const uint64_t code_rank[4] = { 0, 1, 2, 4 };
	uint64_t key = 0, w;
	suf_t p;
	int j;

	suf_init(x, &p, g, skip);
	if (suf_clean(x, &p) >= KEY_LETTERS) {
		w = ref_word(x->pack, p.pos);
		for (j = 0; j < KEY_LETTERS; j++, w >>= 2)
			key = key << 3 | code_rank[w & 3];
		return key;
	}
	for (j = 0; j < KEY_LETTERS; j++) {
		int r = suf_rank(x, &p);

		key = key << 3 | (uint64_t)r;
		if (r == 6)
			return key << 3 * (KEY_LETTERS - 1 - j);
		if (r == 5) {           /* "$": the next sequence's letters follow */
			p.seq++;
			p.run = nrun_after(x, p.pos);
		} else {
			suf_move(x, &p, 1);
		}
	}
	return key;
}

static int cmp_skey(const void *va, const void *vb, void *vc)
{
	const skey_t *a = va, *b = vb;
	const skey_ctx_t *c = vc;
	const mem_t *ma, *mb;

	if (a->i != b->i)
		return a->i < b->i ? -1 : 1;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	ma = &c->m[a->k];
	mb = &c->m[b->k];
	if (ma->g == mb->g)
		return 0;
	return suf_cmp(c->x, ma->g, mb->g, ma->len < mb->len ? ma->len : mb->len);
}

/* Sort the N matches M of a strand of QLEN bases in MUMmer's -maxmatch order. */
static void sort_query(const idx_t *x, mem_vec_t *v, uint32_t qlen, mem_scratch_t *s)
{
	mem_t *m = v->a;
	size_t n = v->n, k;
	skey_ctx_t c = { x, m };
	uint32_t i;

	if (qlen > s->cap_q) {
		s->cap_q = qlen;
		s->qmin = sp_realloc(s->qmin, qlen * sizeof *s->qmin);
		s->qcnt = sp_realloc(s->qcnt, qlen * sizeof *s->qcnt);
	}
	if (n > s->cap_key) {
		s->cap_key = n + n / 2;
		s->key = sp_realloc(s->key, s->cap_key * sizeof *s->key);
	}
	for (i = 0; i < qlen; i++) {
		s->qmin[i] = UINT32_MAX;
		s->qcnt[i] = 0;
	}
	for (k = 0; k < n; k++) {
		i = m[k].i;
		s->qcnt[i]++;
		if (m[k].len < s->qmin[i])
			s->qmin[i] = m[k].len;
	}
	for (k = 0; k < n; k++)         /* the keys' letters: one cache miss each, overlapped */
		if (s->qcnt[m[k].i] > 1)
			__builtin_prefetch(x->pack + ((m[k].g + s->qmin[m[k].i]) >> 2));
	for (k = 0; k < n; k++) {
		i = m[k].i;
		s->key[k].i = i;
		s->key[k].k = (uint32_t)k;
		s->key[k].key = s->qcnt[i] > 1 ? suf_key(x, m[k].g, s->qmin[i]) : 0;
	}
	qsort_r(s->key, n, sizeof *s->key, cmp_skey, &c);
	s->tmp.n = 0;
	for (k = 0; k < n; k++)
		VEC_PUSH(&s->tmp, m[s->key[k].k]);
	{
		mem_vec_t t = *v;

		*v = s->tmp;
		s->tmp = t;
	}
}

static int cmp_ref(const void *va, const void *vb)
{
	const mem_t *a = va, *b = vb;

	if (a->g != b->g)
		return a->g < b->g ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

/* By start, then longest first (for the containment sweep). */
static int cmp_span(const void *va, const void *vb)
{
	const mem_t *a = va, *b = vb;

	if (a->i != b->i)
		return a->i < b->i ? -1 : 1;
	if (a->len != b->len)
		return a->len > b->len ? -1 : 1;
	return a->g < b->g ? -1 : a->g > b->g;
}

/*
 * -mumreference: keep the matches whose string occurs once in the
 * reference, i.e. that no other match holds (every occurrence of a string
 * of L letters or more lies in exactly one match); -mum: and once in the
 * query strand.
 */
static size_t unique_filter(const mem_idx_t *mi, const mem_strand_t *st, mem_t *m, size_t n)
{
	size_t k, out = 0;
	uint64_t maxend = 0;
	int any = 0;

	if (n == 0)   /* m may be NULL */
		return 0;
	qsort(m, n, sizeof *m, cmp_span);
	for (k = 0; k < n; k++) {
		uint64_t end = (uint64_t)m[k].i + m[k].len;
		int dom = (any && maxend >= end)
			|| (k + 1 < n && m[k + 1].i == m[k].i && m[k + 1].len == m[k].len);

		if (!any || end > maxend)
			maxend = end;
		any = 1;
		if (dom)
			continue;
		if (mi->o.mode == MEM_MUM) {
			const char *q = st->seq, *hit, *p = q;
			size_t cnt = 0;

			while (cnt < 2 && (hit = memmem(p, st->m - (size_t)(p - q), q + m[k].i, m[k].len))) {
				cnt++;
				p = hit + 1;
			}
			if (cnt != 1)
				continue;
		}
		m[out++] = m[k];
	}
	return out;
}

size_t mem_finish(const mem_idx_t *mi, const mem_strand_t *st, mem_raw_t *raw, size_t nraw,
		mem_vec_t *out, mem_scratch_t *s)
{
	size_t k;
	uint32_t i;

	out->n = 0;
	s->n_nrun = 0;
	for (i = 0; i < st->m; i++) {
		if (st->seq[i] != 'N')
			continue;
		if (s->n_nrun && s->nrun[2 * s->n_nrun - 1] == i) {
			s->nrun[2 * s->n_nrun - 1] = i + 1;
			continue;
		}
		if (s->n_nrun == s->cap_nrun) {
			s->cap_nrun = s->cap_nrun ? 2 * s->cap_nrun : 16;
			s->nrun = sp_realloc(s->nrun, 2 * s->cap_nrun * sizeof *s->nrun);
		}
		s->nrun[2 * s->n_nrun] = i;
		s->nrun[2 * s->n_nrun + 1] = i + 1;
		s->n_nrun++;
	}
	for (k = 0; k < nraw; k++)
		split_raw(mi, st, &raw[k], out, s);
	cut_matches(mi, st, out);
	if (mi->o.mode != MEM_MAXMATCH)
		out->n = unique_filter(mi, st, out->a, out->n);
	if (out->n == 0)   /* out->a may still be NULL: nothing to sort */
		return 0;
	if (mi->o.mode == MEM_MUM)
		qsort(out->a, out->n, sizeof *out->a, cmp_ref);
	else
		sort_query(mi->x, out, st->m, s);
	return out->n;
}

/* ---- stage 3 ---------------------------------------------------------------- */

static void buf_need(mem_buf_t *b, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = b->n + n > 2 * b->cap ? b->n + n + 256 : 2 * b->cap;
		b->a = sp_realloc(b->a, b->cap);
	}
}

/* Right-align V in a field of at least W characters at P; returns the length. */
static size_t put_u64(char *p, uint64_t v, int w)
{
	char t[24];
	int n = 0, k;

	do {
		t[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (k = 0; k < w - n; k++)
		p[k] = ' ';
	for (k = 0; k < n; k++)
		p[(w > n ? w - n : 0) + k] = t[n - 1 - k];
	return (size_t)(w > n ? w : n);
}

void mem_fmt_mummer(const mem_idx_t *mi, mem_buf_t *b, const char *name, size_t name_len,
		int rev, uint32_t len, const mem_t *m, size_t n, int four)
{
	const idx_t *x = mi->x;
	int named = four || x->n_seq > 1;
	size_t k;

	buf_need(b, name_len + 12);
	b->a[b->n++] = '>';
	b->a[b->n++] = ' ';
	memcpy(b->a + b->n, name, name_len);
	b->n += name_len;
	if (rev) {
		memcpy(b->a + b->n, " Reverse", 8);
		b->n += 8;
	}
	b->a[b->n++] = '\n';
	for (k = 0; k < n; k++) {
		uint32_t sq = seq_of(x, m[k].g);
		uint64_t qp = rev ? (uint64_t)len - m[k].i : (uint64_t)m[k].i + 1;
		char *p;

		buf_need(b, (size_t)mi->name_w + 100);
		p = b->a + b->n;
		if (named) {
			size_t l = strlen(x->names[sq]);

			p[0] = p[1] = ' ';
			memcpy(p + 2, x->names[sq], l);
			memset(p + 2 + l, ' ', (size_t)mi->name_w - l + 2);
			p += 2 + mi->name_w + 2;
		}
		p += put_u64(p, m[k].g - x->off[sq] + 1, 8);
		*p++ = ' ';
		*p++ = ' ';
		p += put_u64(p, qp, 8);
		*p++ = ' ';
		*p++ = ' ';
		p += put_u64(p, m[k].len, 8);
		*p++ = '\n';
		b->n = (size_t)(p - b->a);
	}
}

/* The partition that owns global position D (the last one starting at or before it). */
static uint32_t owner(const idx_t *x, uint64_t d)
{
	uint32_t lo = 0, hi = x->n_part;

	while (hi - lo > 1) {
		uint32_t mid = (lo + hi) / 2;

		if (x->part[mid].beg <= d)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static int cmp_cand(const void *va, const void *vb)
{
	const rec_cand_t *a = va, *b = vb;

	if (a->part != b->part)
		return a->part < b->part ? -1 : 1;
	if (a->pos != b->pos)
		return a->pos < b->pos ? -1 : 1;
	return a->strand < b->strand ? -1 : a->strand > b->strand;
}

uint32_t mem_cands(const mem_idx_t *mi, const mem_t *mf, size_t nf, const mem_t *mr, size_t nr,
		rec_cand_t **out, size_t *cap)
{
	const idx_t *x = mi->x;
	size_t k, n = nf + nr, o = 0;

	if (n > *cap) {
		*cap = n + n / 2;
		*out = sp_realloc(*out, *cap * sizeof **out);
	}
	for (k = 0; k < n; k++) {
		const mem_t *m = k < nf ? &mf[k] : &mr[k - nf];
		uint32_t sq = seq_of(x, m->g), p;
		uint64_t d = m->g - m->i;
		rec_cand_t *c = &(*out)[k];

		if (m->g < x->off[sq] + m->i)
			d = x->off[sq];
		p = owner(x, d);
		c->part = p;
		c->pos = (uint32_t)(d - x->part[p].beg);
		c->seq_id = sq;
		c->strand = k < nf ? REC_STRAND_FWD : REC_STRAND_REV;
		c->support = m->len;
	}
	qsort(*out, n, sizeof **out, cmp_cand);
	for (k = 0; k < n; k++) {
		if (o && cmp_cand(&(*out)[o - 1], &(*out)[k]) == 0) {
			uint64_t s = (uint64_t)(*out)[o - 1].support + (*out)[k].support;

			(*out)[o - 1].support = s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
		} else {
			(*out)[o++] = (*out)[k];
		}
	}
	return (uint32_t)o;
}
