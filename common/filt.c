/*
 * filt.c - seedfilt's per-read work on the CPU: patterns, matching by bpr /
 * bs / ph / fm (and with -a, errors anywhere in the pattern: match_any_bs,
 * match_any_ph), diagonals, sort and reduce (filt.h), and the sensitivity
 * bounds.  The same inc_bpr.h / inc_degen.h code runs in kernels/filt.cl.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>   /* ph: bdz_slots_x8 */
#endif

#include "bpr.h"
#include "degen.h"
#include "filt.h"
#include "inc_filt.h"
#include "inc_filt_fm.h"
#include "seqio.h"
#include "util.h"

/* Candidate key: | part (31 bits) | diagonal (32 bits) | strand (1 bit) |. */
#define KEY(part, diag, strand) ((uint64_t)(part) << 33 | (uint64_t)(diag) << 1 | (strand))
#define KEY_PART(k) ((uint32_t)((k) >> 33))
#define KEY_DIAG(k) ((uint32_t)((k) >> 1))
#define KEY_STRAND(k) ((uint32_t)((k) & 1))

#define PF(a) __builtin_prefetch((const void *)(a), 0, 3)

struct filt_ws {
	const idx_t *x;
	filt_opt_t o;
	uint32_t v, win;          /* q length, window span + v */
	uint8_t *code[2];         /* read and reverse complement, 0..3, 4 = N */
	uint32_t *ncnt;           /* N prefix counts of the forward read */
	size_t cap_len;
	uint64_t *key, *tmp;      /* matches as keys, sort scratch (cap_tmp) */
	size_t cap_tmp;
	size_t n_key, cap_key;
	size_t *run;              /* run[i]: end of sorted run i of key (add_hits) */
	size_t n_run, cap_run;
	int unsorted;             /* some run of key is not sorted */
	uint32_t *hits;           /* positions of one lookup */
	size_t cap_hits;
	rec_cand_t *out;
	size_t cap_out;
	uint32_t *sup;
	bpr_pat_t bp;
	filt_pat_t *pat;          /* patterns of the current read */
	uint32_t n_pat;
	uint32_t *lpos;           /* bs, ph: L_Pos */
	uint64_t n_lpos;
	uint64_t *words;          /* bs, ph: degenerate words of one pattern (n_lpos << 2e) */
	uint32_t *slot;           /* ph: their BDZ slots */
	uint8_t *pf_code;         /* filt_prefetch: a coming read, both strands */
	filt_pat_t *pf_pat;       /* filt_prefetch: its seed codes */
	size_t cap_pf;
	ffm_node_t *stack;        /* fm: FFM_STACK nodes */
	uint32_t shape_mask;      /* fm: bit i set for a '#' at shape position i */
	uint32_t *fmr;            /* fm: row ranges, 4 u32 each */
	size_t cap_fmr, n_fmr_max;
	/* -a with bs, ph: the lookups of one read (seed variant, q variant, pattern) */
	uint32_t wv;              /* positions of the window word: w + v */
	uint32_t *lk_code, *lk_pat, *lk_a, *lk_b, *lk_r;
	uint64_t *lk_q, ball[FILT_MAX_E_HAM + 1];
	size_t cap_lk;
	const uint64_t *wbits;    /* -a, bs: the window-word bitmap (any_bits_get) */
	uint32_t wbits_shift;
};

/*
 * -a with bs and ph: a bitmap of the index's window words (seed code | key << 2w,
 * filt.h), one bit per word at hash(word) >> shift, 8 to 16 bits per
 * word.  Most one-key lookups (a seed one substitution away, q exact) ask
 * for a window that is not in the index; the bitmap, small enough to stay
 * in the cache, turns most of them away with one probe instead of two
 * cache misses (start list, then keys).  No word of the index is ever
 * turned away, so the matches do not change.  Built once per index,
 * shared by the workspaces of all threads (reference counted).
 */
static pthread_mutex_t any_bits_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t *any_bits;
static const idx_t *any_bits_x;
static uint32_t any_bits_shift;
static int any_bits_refs;

#define ANY_BITS_MAX 31   /* at most 2^31 bits (256 MiB), so h >> 6 fits a u32 */

static inline uint64_t any_hash(uint64_t word, uint32_t shift)
{
	return (word * 0x9e3779b97f4a7c15ULL) >> shift;
}

static const uint64_t *any_bits_get(const idx_t *x, uint32_t *shift)
{
	pthread_mutex_lock(&any_bits_lock);
	if (any_bits_refs == 0 || any_bits_x != x) {
		uint64_t n = 0, code, nc = (uint64_t)1 << (2 * x->p.w);
		uint32_t bits = 12, part, w2 = 2 * x->p.w;

		if (any_bits_refs > 0)
			sp_die("internal error: -a bitmap for two indexes");
		for (part = 0; part < x->n_part; part++)
			n += x->part[part].n_uniq;
		while (((uint64_t)1 << bits) < 8 * n)
			bits++;
		if (bits > ANY_BITS_MAX) {   /* too large to stay in a cache: none */
			pthread_mutex_unlock(&any_bits_lock);
			*shift = 0;
			return NULL;
		}
		any_bits_shift = 64 - bits;
		free(any_bits);
		any_bits = sp_calloc(((size_t)1 << bits) / 64 + 1, sizeof *any_bits);
		for (part = 0; part < x->n_part; part++) {
			const idx_part_t *pt = &x->part[part];

			for (code = 0; code < nc; code++) {
				uint64_t j;

				for (j = pt->red_start[code]; j < pt->red_start[code + 1]; j++) {
					uint64_t h = any_hash(code | idx_red_key(pt, j) << w2,
							any_bits_shift);

					any_bits[h >> 6] |= (uint64_t)1 << (h & 63);
				}
			}
		}
		any_bits_x = x;
	}
	any_bits_refs++;
	*shift = any_bits_shift;
	pthread_mutex_unlock(&any_bits_lock);
	return any_bits;
}

static void any_bits_put(void)
{
	pthread_mutex_lock(&any_bits_lock);
	if (--any_bits_refs == 0) {
		free(any_bits);
		any_bits = NULL;
		any_bits_x = NULL;
	}
	pthread_mutex_unlock(&any_bits_lock);
}

const char *filt_method_name(int m)
{
	static const char *name[] = { "auto", "bpr", "bs", "ph", "fm" };

	return m >= 0 && m <= FILT_FM ? name[m] : "?";
}

int filt_method_parse(const char *s)
{
	int m;

	for (m = FILT_AUTO; m <= FILT_FM; m++)
		if (strcmp(s, filt_method_name(m)) == 0)
			return m;
	return -1;
}

uint32_t filt_method_struct(int m)
{
	switch (m) {
	case FILT_BPR: return IDX_S_GENERAL;
	case FILT_BS: return IDX_S_REDUCED;
	case FILT_PH: return IDX_S_BLOCK | IDX_S_REDUCED;
	case FILT_FM: return IDX_S_FM;
	}
	return 0;
}

int filt_check(const idx_t *x, int m, uint32_t e, int any, char *msg, size_t len)
{
	static const char *sname[] = { "", "general", "reduced", "", "block", "", "", "", "fm" };
	uint32_t need = filt_method_struct(m), miss = need & ~x->p.structs;

	if (miss) {
		uint32_t b = miss & (uint32_t)-(int32_t)miss;

		snprintf(msg, len, "method %s needs the %s structure, which the index lacks "
				"(rebuild it with seqidx -m ...,%s)", filt_method_name(m),
				sname[b], sname[b]);
		return -1;
	}
	if (m == FILT_BPR && e >= x->p.l) {
		snprintf(msg, len, "-e %u is out of range for bpr: it needs e < l = %u",
				e, x->p.l);
		return -1;
	}
	if (m != FILT_BPR && e > FILT_MAX_E_HAM) {
		snprintf(msg, len, "-e %u is out of range for %s: 0..%d (use -m bpr for more)",
				e, filt_method_name(m), FILT_MAX_E_HAM);
		return -1;
	}
	if (m != FILT_BPR && e > x->p.l) {
		snprintf(msg, len, "-e %u is larger than the neighborhood length %u",
				e, x->p.l);
		return -1;
	}
	if (any && m == FILT_BPR) {
		snprintf(msg, len, "-a is not supported by bpr (its errors are edit "
				"operations in the neighborhood): use -m bs, ph or fm");
		return -1;
	}
	if (any && (m == FILT_BS || m == FILT_PH) && x->p.w + x->p.l > 32) {
		snprintf(msg, len, "-a with %s needs seed weight + l <= 32 (here %u + %u): "
				"use -m fm", filt_method_name(m), x->p.w, x->p.l);
		return -1;
	}
	return 0;
}

int filt_auto(const idx_t *x, uint32_t e, int edits, int any)
{
	static const int order[] = { FILT_PH, FILT_BS, FILT_FM, FILT_BPR };
	static const int order_any[] = { FILT_BS, FILT_PH, FILT_FM, FILT_BPR };
	char msg[256];
	size_t i;

	for (i = 0; i < 4; i++) {
		int m = any ? order_any[i] : order[i];

		if (edits && m != FILT_BPR)
			continue;
		if (filt_check(x, m, e, any, msg, sizeof msg) == 0)
			return m;
	}
	return -1;
}

uint32_t filt_qlen(const idx_t *x, int m, uint32_t e)
{
	return m == FILT_BPR ? x->p.l - e : x->p.l;
}

/* ---- sensitivity ----------------------------------------------------------- */

static uint64_t cdiv(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

void filt_sensitivity(const idx_t *x, const filt_opt_t *o, uint32_t m, filt_sens_t *s)
{
	uint32_t v = filt_qlen(x, o->method, o->e), span = x->p.span, d = o->step;
	uint64_t P, a, b, c, D, f = o->e + 1, ks, ke;

	s->read_len = m;
	s->window = span + v;
	if (m < s->window) {
		s->n_pat = 0;
		s->k_sub = s->k_edit = -1;
		return;
	}
	P = (m - s->window) / d + 1;
	a = cdiv(span, d);
	b = cdiv(v, d);
	c = cdiv(s->window, d);
	D = (P - 1) / c + 1;
	ks = cdiv(P * f, a * f + b);
	ks = ks > D ? ks : D;
	ke = cdiv(P, c);
	ke = ke > D ? ke : D;
	if (o->any) {
		/* only e+1 substitutions in a window kill it; each lies in <= c windows */
		ks = cdiv(P * f, c);
		ks = ks > D * f ? ks : D * f;
	}
	/*
	 * Chained patterns (step = v >= span, e >= 1): the pieces seed_0, q_0,
	 * q_1, ..., q_{P-1} are disjoint and the seed of pattern i+1 lies in q_i,
	 * so pattern i survives when q_{i-1} (or seed_0) is error-free and q_i
	 * has at most e errors.  Killing every pattern then needs an error in
	 * each of the first P pieces: P errors, substitutions or (for bpr, whose
	 * q is matched by edit distance) edit operations alike.
	 */
	if (o->e >= 1 && d == v && span <= v && ks < P)
		ks = P;
	s->n_pat = (uint32_t)P;
	s->k_sub = (int32_t)ks - 1;
	s->k_edit = o->method == FILT_BPR ? s->k_sub : (int32_t)ke - 1;
}

int filt_auto_guarantee(const idx_t *x, filt_opt_t *o, uint32_t read_len, int32_t edits)
{
	static const int order_plain[] = { FILT_PH, FILT_BS, FILT_FM, FILT_BPR };
	static const int order_any[] = { FILT_BS, FILT_PH, FILT_FM, FILT_BPR };
	const int *order = o->any ? order_any : order_plain;
	char msg[256];
	size_t i;

	for (i = 0; i < 4; i++) {
		uint32_t step, e, emax = order[i] == FILT_BPR ? x->p.l - 1 : FILT_MAX_E_HAM;

		if (o->any && order[i] == FILT_BPR)
			continue;
		for (step = o->step; step >= 1; step--)
			for (e = o->e; e <= emax; e++) {
				filt_opt_t t = *o;
				filt_sens_t sn;

				t.method = order[i];
				t.e = e;
				t.step = step;
				if (filt_check(x, t.method, e, t.any, msg, sizeof msg) < 0)
					continue;
				filt_sensitivity(x, &t, read_len, &sn);
				if (sn.k_edit >= edits) {
					*o = t;
					return 0;
				}
			}
	}
	return -1;
}

/* ---- workspace ------------------------------------------------------------- */

filt_ws_t *filt_ws_new(const idx_t *x, const filt_opt_t *o)
{
	filt_ws_t *ws = sp_calloc(1, sizeof *ws);
	uint32_t i;

	ws->x = x;
	ws->o = *o;
	ws->v = filt_qlen(x, o->method, o->e);
	ws->win = x->p.span + ws->v;
	ws->wv = o->any ? x->p.w + ws->v : ws->v;
	if (o->any && (o->method == FILT_BS || o->method == FILT_PH))
		ws->wbits = any_bits_get(x, &ws->wbits_shift);   /* NULL: none */
	for (i = 0; i <= FILT_MAX_E_HAM; i++)
		ws->ball[i] = degen_ball(ws->v, i);
	if (o->method == FILT_BS || o->method == FILT_PH) {
		ws->n_lpos = degen_n_lpos(ws->wv, o->e);
		ws->lpos = sp_malloc((ws->n_lpos + 1) * sizeof *ws->lpos);
		degen_lpos(ws->wv, o->e, ws->lpos);
		/* + 8: bdz_slots_x8 works on whole groups of 8 (the extra lanes are ignored) */
		ws->words = sp_calloc((ws->n_lpos << (2 * o->e)) + 8, sizeof *ws->words);
		ws->slot = sp_calloc((ws->n_lpos << (2 * o->e)) + 8, sizeof *ws->slot);
	}
	if (o->method == FILT_FM) {
		uint64_t bound = degen_ball(o->any ? x->p.w + x->p.l : x->p.l, o->e);

		ws->stack = sp_malloc(FFM_STACK * sizeof *ws->stack);
		for (i = 0; i < x->p.span; i++)
			ws->shape_mask |= (uint32_t)(x->p.shape[i] == '#') << i;
		/* leaves <= words of the Hamming ball x 4 per skipped seed position */
		for (i = x->p.w; i < x->p.span && bound <= (1u << 20); i++)
			bound *= 4;
		if (bound <= (1u << 20)) {
			ws->n_fmr_max = bound;
			ws->cap_fmr = 4 * bound;
			ws->fmr = sp_malloc(ws->cap_fmr * sizeof *ws->fmr);
		}
	}
	return ws;
}

void filt_ws_free(filt_ws_t *ws)
{
	if (!ws)
		return;
	free(ws->code[0]);
	free(ws->ncnt);
	free(ws->key);
	free(ws->run);
	free(ws->tmp);
	free(ws->hits);
	free(ws->out);
	free(ws->sup);
	free(ws->lpos);
	free(ws->words);
	free(ws->slot);
	free(ws->pf_code);
	free(ws->pf_pat);
	free(ws->pat);
	free(ws->stack);
	free(ws->fmr);
	free(ws->lk_code);
	free(ws->lk_pat);
	free(ws->lk_a);
	free(ws->lk_b);
	free(ws->lk_r);
	free(ws->lk_q);
	if (ws->wbits)
		any_bits_put();
	free(ws);
}

static void need_hits(filt_ws_t *ws, size_t n)
{
	if (n > ws->cap_hits) {
		ws->cap_hits = n + n / 2 + 64;
		free(ws->hits);
		ws->hits = sp_malloc(ws->cap_hits * sizeof *ws->hits);
	}
}

/* Room for N more keys. */
static void need_keys(filt_ws_t *ws, size_t n)
{
	if (ws->n_key + n > ws->cap_key) {
		ws->cap_key = ws->n_key + n > 2 * ws->cap_key ? ws->n_key + n : 2 * ws->cap_key;
		if (ws->cap_key < 1024)
			ws->cap_key = 1024;
		ws->key = sp_realloc(ws->key, ws->cap_key * sizeof *ws->key);
	}
}

/* Last sequence of partition PT whose offset is <= G (global). */
static uint32_t seq_of(const idx_t *x, const idx_part_t *pt, uint64_t g)
{
	uint32_t lo = pt->first_seq, hi = pt->end_seq;

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (x->off[mid] <= g)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Record the N window positions HITS of pattern offset O as diagonals: one
 * run of keys.  Positions in increasing order (a SeedBlock's, a
 * neighborhood's) give a sorted run (the diagonal p - o, clamped to the
 * start of p's sequence, does not decrease with p); filt_finish merges the
 * runs when they all are, and radix sorts the keys otherwise.  A run that
 * starts at or above the end of the previous one extends it.
 */
static void add_hits(filt_ws_t *ws, uint32_t part, const uint32_t *hits, size_t n,
		uint32_t o, uint32_t strand)
{
	const idx_t *x = ws->x;
	const idx_part_t *pt = &x->part[part];
	int one = pt->end_seq - pt->first_seq <= 1;
	uint64_t st0 = x->off[pt->first_seq] > pt->beg ? x->off[pt->first_seq] - pt->beg : 0;
	uint64_t *k, prev = 0;
	int bad = 0;
	size_t i;

	if (ws->o.count_only || n == 0)
		return;
	need_keys(ws, n);
	k = ws->key + ws->n_key;
	for (i = 0; i < n; i++) {
		uint32_t p = hits[i], diag;
		uint64_t st, key;

		if (one && p >= o) {
			st = st0;
		} else {
			uint32_t s = seq_of(x, pt, pt->beg + p);

			st = x->off[s] > pt->beg ? x->off[s] - pt->beg : 0;
		}
		diag = (uint64_t)p >= st + o ? p - o : (uint32_t)st;
		key = KEY(part, diag, strand);
		bad |= key < prev;
		prev = key;
		k[i] = key;
	}
	ws->unsorted |= bad;
	if (ws->n_run && ws->key[ws->n_key - 1] <= k[0]) {
		ws->run[ws->n_run - 1] += n;   /* continues the previous run */
	} else {
		if (ws->n_run == ws->cap_run) {
			ws->cap_run = ws->cap_run ? 2 * ws->cap_run : 64;
			ws->run = sp_realloc(ws->run, ws->cap_run * sizeof *ws->run);
		}
		ws->run[ws->n_run++] = ws->n_key + n;
	}
	ws->n_key += n;
}

/* ---- methods ----------------------------------------------------------- */

/*
 * bpr_pat_init for pattern Q with the N positions NMASK (filt_pat_t): every
 * table entry is an or of B[c] << v*r over the slices r < h, so clearing
 * NMASK in every slice of every entry is B[c] &= ~NMASK for all four c (an
 * N matches no base).
 */
static void bpr_pat_init_n(bpr_pat_t *bp, uint64_t q, uint32_t nmask, uint32_t v,
		uint32_t l, uint32_t e)
{
	uint32_t keep, g, k, i;

	bpr_pat_init(bp, q, v, l, e);
	if (!nmask)
		return;
	keep = ~bpr_rep(nmask, v, bp->h);
	for (g = 0; g < bp->ng; g++) {   /* the entries bpr_pat_init fills */
		k = bp->h - 4 * g < 4 ? bp->h - 4 * g : 4;
		for (i = 0; i < 1u << (2 * k); i++)
			bp->tab[BPR_GROUP * g + i] &= keep;
	}
}

static void match_bpr(filt_ws_t *ws, uint32_t code, uint64_t q, uint32_t nmask,
		uint32_t o, uint32_t strand, filt_stats_t *st)
{
	const idx_t *x = ws->x;
	uint32_t part;
	int ready = 0;

	for (part = 0; part < x->n_part; part++) {
		const idx_part_t *pt = &x->part[part];
		uint64_t beg = pt->gen_start[code], end = pt->gen_start[code + 1];
		size_t n, i;

		if (beg == end)
			continue;
		if (!ready) {
			bpr_pat_init_n(&ws->bp, q, nmask, ws->v, x->p.l, ws->o.e);
			ready = 1;
		}
		need_hits(ws, end - beg);
		n = bpr_scan(&ws->bp, pt->gen_nb + pt->gen_wstart[code], end - beg, ws->hits);
		st->items += end - beg;
		for (i = 0; i < n; i++)
			ws->hits[i] = pt->gen_pos[beg + ws->hits[i]];
		st->matches += n;
		add_hits(ws, part, ws->hits, n, o, strand);
	}
}

/*
 * bs, ph: every word within Hamming distance E of Q (V bases), each once,
 * into ws->words; returns their count, degen_ball(V, E) (degen_words: q,
 * or with -a the window word, and f_e).  These are exactly
 * the words of the canonical items of inc_degen.h (the kernels enumerate
 * them by item index; the order differs, which changes nothing: the matches
 * are sorted).  Here each word costs one xor: position p gets letter
 * q[p] ^ d, d = 1..3, for every set of at most e positions (e <= 3).
 */
static uint32_t degen_words_r(filt_ws_t *ws, uint64_t q, uint32_t v, uint32_t e)
{
	uint32_t k = 0, p1, p2, p3;
	uint64_t d1, d2, d3, *wd = ws->words;

	wd[k++] = q;
	if (e < 1)
		return k;
	for (p1 = 0; p1 < v; p1++)
		for (d1 = 1; d1 < 4; d1++) {
			uint64_t w1 = q ^ d1 << (2 * p1);

			wd[k++] = w1;
			if (e < 2)
				continue;
			for (p2 = p1 + 1; p2 < v; p2++)
				for (d2 = 1; d2 < 4; d2++) {
					uint64_t w2 = w1 ^ d2 << (2 * p2);

					wd[k++] = w2;
					if (e < 3)
						continue;
					for (p3 = p2 + 1; p3 < v; p3++)
						for (d3 = 1; d3 < 4; d3++)
							wd[k++] = w2 ^ d3 << (2 * p3);
				}
		}
	return k;
}

static uint32_t degen_words(filt_ws_t *ws, uint64_t q)
{
	return degen_words_r(ws, q, ws->wv, ws->o.e);
}

/*
 * filt_bsearch without data-dependent branches (conditional moves): the
 * index of Q among the sorted keys [LO, HI), or HI when absent.
 */
static uint64_t bsearch_cmov(const uint32_t *nb32, const uint64_t *nb64, uint32_t is32,
		uint64_t lo, uint64_t hi, uint64_t q)
{
	uint64_t n = hi - lo, b = lo;

	/* the lower bound of Q stays in [b, b + n]; at n = 1 it is b, or HI */
	if (n == 0)
		return hi;
	if (is32) {
		while (n > 1) {
			uint64_t half = n / 2;

			b = nb32[b + half - 1] < q ? b + half : b;
			n -= half;
		}
		return nb32[b] == q ? b : hi;
	}
	while (n > 1) {
		uint64_t half = n / 2;

		b = nb64[b + half - 1] < q ? b + half : b;
		n -= half;
	}
	return nb64[b] == q ? b : hi;
}

#if defined(__x86_64__) && defined(__GNUC__)

/* fmix64 of 8 lanes (bdz_fmix64). */
__attribute__((target("avx512f,avx512dq")))
static inline __m512i fmix64_x8(__m512i k)
{
	k = _mm512_xor_si512(k, _mm512_srli_epi64(k, 33));
	k = _mm512_mullo_epi64(k, _mm512_set1_epi64((long long)0xff51afd7ed558ccdULL));
	k = _mm512_xor_si512(k, _mm512_srli_epi64(k, 33));
	k = _mm512_mullo_epi64(k, _mm512_set1_epi64((long long)0xc4ceb9fe1a85ec53ULL));
	return _mm512_xor_si512(k, _mm512_srli_epi64(k, 33));
}

/* g values of the 8 vertices V (u64 lanes): 2 bits of the aligned u32 holding byte v/4. */
__attribute__((target("avx512f,avx512dq")))
static inline __m512i g_x8(const uint8_t *g, __m512i v)
{
	__m512i w = _mm512_srli_epi64(v, 4), sh;
	__m512i d = _mm512_cvtepu32_epi64(_mm512_i64gather_epi32(w, (const void *)g, 4));

	sh = _mm512_slli_epi64(_mm512_and_si512(v, _mm512_set1_epi64(15)), 1);
	return _mm512_and_si512(_mm512_srlv_epi64(d, sh), _mm512_set1_epi64(3));
}

/*
 * bdz_slots for 8 words at a time with AVX-512 (the same integer
 * arithmetic, so the same slots); the last group is padded with whatever
 * words follow in the buffer (their slots lie in the block too, and are not
 * used).  Reads g as the aligned 32-bit words that
 * hold the wanted bytes (little-endian: byte v/4 is bits 8*((v/4)&3) of
 * u32 v/16, so g(v) is at bit 2*(v&15)); an aligned word never crosses a
 * page, and the index pads its sections to 64 bytes.
 */
__attribute__((target("avx512f,avx512dq")))
static uint32_t bdz_slots_x8(const uint64_t *wd, uint32_t nw, uint32_t seed, uint32_t base,
		uint32_t r, const uint8_t *g, uint32_t *slot)
{
	const __m512i sm = _mm512_set1_epi64((long long)((uint64_t)seed * 0x9e3779b97f4a7c15ULL));
	const __m512i s2 = _mm512_set1_epi64((long long)(0x632be59bd9b4e019ULL + seed));
	const __m512i rr = _mm512_set1_epi64(r), lo32 = _mm512_set1_epi64(0xffffffffLL);
	const __m512i b0 = _mm512_set1_epi64(base), b1 = _mm512_set1_epi64((long long)base + r);
	const __m512i b2 = _mm512_set1_epi64((long long)base + 2 * (long long)r);
	uint32_t k;

	for (k = 0; k < nw; k += 8) {   /* the buffers hold 8 more (filt_ws_new) */
		__m512i a = fmix64_x8(_mm512_xor_si512(_mm512_loadu_si512((const void *)(wd + k)), sm));
		__m512i b = fmix64_x8(_mm512_add_epi64(a, s2));
		__m512i v0 = _mm512_add_epi64(b0, _mm512_srli_epi64(_mm512_mul_epu32(a, rr), 32));
		__m512i v1 = _mm512_add_epi64(b1, _mm512_srli_epi64(
				_mm512_mul_epu32(_mm512_srli_epi64(a, 32), rr), 32));
		__m512i v2 = _mm512_add_epi64(b2, _mm512_srli_epi64(_mm512_mul_epu32(b, rr), 32));
		__m512i sum = _mm512_add_epi64(_mm512_add_epi64(g_x8(g, v0), g_x8(g, v1)), g_x8(g, v2));
		/* (sum mod 3), sum <= 9: 0x24924 holds it 2 bits per value */
		__m512i pick = _mm512_and_si512(_mm512_srlv_epi64(_mm512_set1_epi64(0x24924),
				_mm512_slli_epi64(sum, 1)), _mm512_set1_epi64(3));
		__mmask8 is1 = _mm512_cmpeq_epi64_mask(pick, _mm512_set1_epi64(1));
		__mmask8 is2 = _mm512_cmpeq_epi64_mask(pick, _mm512_set1_epi64(2));
		__m512i v = _mm512_mask_blend_epi64(is2, _mm512_mask_blend_epi64(is1, v0, v1), v2);

		_mm256_storeu_si256((__m256i *)(void *)(slot + k),
				_mm512_cvtepi64_epi32(_mm512_and_si512(v, lo32)));
	}
	return nw;
}

static int have_avx512(void)
{
	static int have = -1;

	if (have < 0)
		have = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")
			&& sp_simd_allowed();
	return have;
}
#endif

/*
 * ph: the BDZ slots (partition-wide) of the NW words WD in the block at
 * BASE with part size R and SEED: SLOT[k] = base + bdz_slot(...) as in
 * filt_bdz_find, computed without branches (the vertex is picked by index,
 * (g0 + g1 + g2) mod 3 from a 2-bit table) and out of line, so the loop
 * keeps its values in registers.
 */
__attribute__((noinline))
static void bdz_slots(const uint64_t *wd, uint32_t nw, uint32_t seed, uint32_t base,
		uint32_t r, const uint8_t *g, uint32_t *slot)
{
	/* (s mod 3) for s = 0..9 at bits 2s..2s+1 */
	const uint32_t mod3 = 0 | 1 << 2 | 2 << 4 | 0 << 6 | 1 << 8 | 2 << 10
		| 0 << 12 | 1 << 14 | 2 << 16 | 0 << 18;
	uint32_t k = 0;

#if defined(__x86_64__) && defined(__GNUC__)
	if (have_avx512() && ((uintptr_t)g & 3) == 0)
		k = bdz_slots_x8(wd, nw, seed, base, r, g, slot);
#endif
	for (; k < nw; k++) {
		bdz_hash_t hh = bdz_hash(wd[k], seed);
		uint32_t v[3], s;

		v[0] = base + bdz_vertex(hh, r, 0u);
		v[1] = base + bdz_vertex(hh, r, 1u);
		v[2] = base + bdz_vertex(hh, r, 2u);
		s = bdz_g_get(g[v[0] >> 2], v[0] & 3u) + bdz_g_get(g[v[1] >> 2], v[1] & 3u)
			+ bdz_g_get(g[v[2] >> 2], v[2] & 3u);
		slot[k] = v[(mod3 >> (2 * s)) & 3];
	}
}

static void match_degen(filt_ws_t *ws, uint32_t code, uint64_t q, uint32_t o,
		uint32_t strand, filt_stats_t *st)
{
	const idx_t *x = ws->x;
	uint32_t part, ph = ws->o.method == FILT_PH, nw = 0, k;
	const uint64_t *wd = ws->words;
	uint32_t *slot = ws->slot;

	for (part = 0; part < x->n_part; part++) {
		const idx_part_t *pt = &x->part[part];
		uint64_t lo = pt->red_start[code], hi = pt->red_start[code + 1];
		uint32_t is32 = pt->red_nb32 != NULL;

		if (lo == hi)
			continue;
		if (!nw)
			nw = degen_words(ws, q);
		st->items += nw;
		if (ph) {
			/* filt_bdz_find, split: all slots first (no branch), then the keys */
			uint32_t base = pt->blk_start[code], m = pt->blk_start[code + 1] - base;
			uint32_t r = m / 3u, seed = pt->blk_seed[code];
			uint32_t b32 = pt->blk_nb32 != NULL;

			if (m == 0)
				continue;
			bdz_slots(wd, nw, seed, base, r, pt->blk_g, slot);
			for (k = 0; k < nw; k++) {
				uint64_t j, pb, pe;

				if (filt_key(pt->blk_nb32, pt->blk_nb, b32, slot[k]) != wd[k])
					continue;
				j = pt->blk_rank[slot[k]];
				pb = pt->red_nbpos[j];
				pe = pt->red_nbpos[j + 1];
				st->matches += pe - pb;
				add_hits(ws, part, pt->red_pos + pb, pe - pb, o, strand);
			}
		} else {
			for (k = 0; k < nw; k++) {
				uint64_t j, pb, pe;

				j = bsearch_cmov(pt->red_nb32, pt->red_nb, is32, lo, hi, wd[k]);
				if (j == hi)
					continue;
				pb = pt->red_nbpos[j];
				pe = pt->red_nbpos[j + 1];
				st->matches += pe - pb;
				add_hits(ws, part, pt->red_pos + pb, pe - pb, o, strand);
			}
		}
	}
}

/* -a: room for N lookups. */
static void need_lk(filt_ws_t *ws, size_t n)
{
	if (n <= ws->cap_lk)
		return;
	ws->cap_lk = n + n / 2 + 256;
	ws->lk_code = sp_realloc(ws->lk_code, ws->cap_lk * sizeof *ws->lk_code);
	ws->lk_pat = sp_realloc(ws->lk_pat, ws->cap_lk * sizeof *ws->lk_pat);
	ws->lk_a = sp_realloc(ws->lk_a, ws->cap_lk * sizeof *ws->lk_a);
	ws->lk_b = sp_realloc(ws->lk_b, 3 * ws->cap_lk * sizeof *ws->lk_b);
	ws->lk_r = sp_realloc(ws->lk_r, ws->cap_lk * sizeof *ws->lk_r);
	ws->lk_q = sp_realloc(ws->lk_q, ws->cap_lk * sizeof *ws->lk_q);
}

/* Report the positions of key rank J of partition PT for lookup K. */
static void any_hit(filt_ws_t *ws, uint32_t part, const idx_part_t *pt, uint64_t j,
		uint32_t k, filt_stats_t *st)
{
	const filt_pat_t *p = &ws->pat[ws->lk_pat[k]];
	uint64_t pb = pt->red_nbpos[j], pe = pt->red_nbpos[j + 1];

	st->matches += pe - pb;
	add_hits(ws, part, pt->red_pos + pb, pe - pb, p->o, p->strand);
}

/* Hamming distance of two words of 2-bit bases. */
static inline uint32_t ham2(uint64_t a, uint64_t b)
{
	uint64_t d = a ^ b;

	/* one bit per differing base in its 2-bit field, then a SWAR popcount */
	d = (d | d >> 1) & 0x5555555555555555ULL;
	d = (d & 0x3333333333333333ULL) + (d >> 2 & 0x3333333333333333ULL);
	d = (d + (d >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (uint32_t)((d * 0x0101010101010101ULL) >> 56);
}

/*
 * -a: the seeds within Hamming distance e of CODE (w bases): seed s' at
 * distance i, with the radius e - i left for q, into ws->lk_code / lk_r
 * from N on; returns the new count.  Each seed once (letter ^ d, d = 1..3).
 */
static size_t any_seeds(filt_ws_t *ws, uint32_t code, uint32_t pat, size_t n)
{
	uint32_t w = ws->x->p.w, e = ws->o.e, p1, p2, p3, d1, d2, d3;
	uint64_t q = ws->pat[pat].q;

#define ANY_PUT(c, r) do { ws->lk_code[n] = (c); ws->lk_r[n] = (r); \
		ws->lk_q[n] = q; ws->lk_pat[n] = pat; n++; } while (0)
	ANY_PUT(code, e);
	for (p1 = 0; p1 < w && e >= 1; p1++)
		for (d1 = 1; d1 < 4; d1++) {
			uint32_t c1 = code ^ d1 << (2 * p1);

			ANY_PUT(c1, e - 1);
			for (p2 = p1 + 1; p2 < w && e >= 2; p2++)
				for (d2 = 1; d2 < 4; d2++) {
					uint32_t c2 = c1 ^ d2 << (2 * p2);

					ANY_PUT(c2, e - 2);
					for (p3 = p2 + 1; p3 < w && e >= 3; p3++)
						for (d3 = 1; d3 < 4; d3++)
							ANY_PUT(c2 ^ d3 << (2 * p3), 0);
				}
		}
#undef ANY_PUT
	return n;
}

/* -a: the seed lookups of every pattern of the current read; returns their count. */
static size_t any_read_seeds(filt_ws_t *ws)
{
	size_t n = 0;
	uint32_t i;

	need_lk(ws, (size_t)ws->n_pat * degen_ball(ws->x->p.w, ws->o.e) + 1);
	for (i = 0; i < ws->n_pat; i++)
		n = any_seeds(ws, ws->pat[i].code, i, n);
	return n;
}

/* Search lookup K of match_any_bs in partition PT (its block range is in lk_a, lk_b). */
static void any_search(filt_ws_t *ws, uint32_t part, const idx_part_t *pt, uint32_t is32,
		size_t k, filt_stats_t *st)
{
	uint64_t lo = ws->lk_a[k], hi = ws->lk_b[k], j, q = ws->lk_q[k];
	uint32_t r = ws->lk_r[k], nw, t;

	if (lo == hi)
		return;
	if (r == 0) {
		st->items++;
		j = bsearch_cmov(pt->red_nb32, pt->red_nb, is32, lo, hi, q);
		if (j != hi)
			any_hit(ws, part, pt, j, (uint32_t)k, st);
	} else if (hi - lo <= ws->ball[r]) {
		st->items += hi - lo;
		for (j = lo; j < hi; j++)
			if (ham2(filt_key(pt->red_nb32, pt->red_nb, is32, j), q) <= r)
				any_hit(ws, part, pt, j, (uint32_t)k, st);
	} else {
		nw = degen_words_r(ws, q, ws->v, r);
		st->items += nw;
		for (t = 0; t < nw; t++) {
			j = bsearch_cmov(pt->red_nb32, pt->red_nb, is32, lo, hi, ws->words[t]);
			if (j != hi)
				any_hit(ws, part, pt, j, (uint32_t)k, st);
		}
	}
}

#define ANY_D 12    /* lookups between the pipeline stages of match_any_* */

/*
 * bs with -a: lookup k = (seed s', q, radius r) searches SeedBlock(s') for
 * the neighborhoods within Hamming distance r of q: one binary search when
 * r = 0; when r > 0 a scan of the block's keys when the block holds no
 * more keys than the ball has words, else the ball's words one binary
 * search each (the same set either way).  In passes over all lookups of
 * the read: start lists (prefetched), then keys (prefetched), then search,
 * so that the cache misses of the read's lookups overlap.
 */
static void match_any_bs(filt_ws_t *ws, filt_stats_t *st)
{
	const idx_t *x = ws->x;
	const uint64_t *wb = ws->wbits;
	uint32_t part, w2 = 2 * x->p.w, sh = ws->wbits_shift;
	size_t n, k;

	n = any_read_seeds(ws);
	for (part = 0; part < x->n_part; part++) {
		const idx_part_t *pt = &x->part[part];
		uint32_t is32 = pt->red_nb32 != NULL;

		/*
		 * software pipeline: bitmap (one-key lookups) of k, start list of
		 * k - D when its window word may be in the index, keys of k - 2D,
		 * search k - 3D; lk_a = lk_b = UINT32_MAX marks a lookup turned away
		 */
		for (k = 0; k < n + 3 * ANY_D; k++) {
			size_t k1 = k - ANY_D, k2 = k - 2 * ANY_D, k3 = k - 3 * ANY_D;

			if (k < n) {
				if (ws->lk_r[k] == 0 && wb) {
					uint64_t h = any_hash(ws->lk_code[k] | ws->lk_q[k] << w2, sh);

					ws->lk_a[k] = (uint32_t)(h >> 6);
					ws->lk_b[k] = (uint32_t)(h & 63);
					PF(wb + (h >> 6));
				} else {
					ws->lk_a[k] = 0;
					PF(pt->red_start + ws->lk_code[k]);
				}
			}
			if (k1 < n && ws->lk_r[k1] == 0 && wb) {
				if (wb[ws->lk_a[k1]] >> ws->lk_b[k1] & 1)
					PF(pt->red_start + ws->lk_code[k1]);
				else
					ws->lk_a[k1] = ws->lk_b[k1] = UINT32_MAX;
			}
			if (k2 < n && ws->lk_a[k2] != UINT32_MAX) {
				uint32_t lo = pt->red_start[ws->lk_code[k2]];
				uint32_t hi = pt->red_start[ws->lk_code[k2] + 1];

				ws->lk_a[k2] = lo;
				ws->lk_b[k2] = hi;
				st->nbs += hi - lo;
				if (is32)
					PF(pt->red_nb32 + lo);
				else
					PF(pt->red_nb + lo);
			}
			if (k3 < n)
				any_search(ws, part, pt, is32, k3, st);
		}
	}
}

/*
 * ph with -a: the lookups of match_any_bs through the BDZ perfect hash of
 * the indexed blocks.  A lookup with radius 0 is one key: it goes through
 * a software pipeline (the window-word bitmap; block start and seed;
 * vertices, g values prefetched; slot, key prefetched; compare).  A lookup
 * with radius r > 0 (seed s itself, once per pattern for e = 1) hashes the
 * ball's words of its one block at the last stage, with bdz_slots.
 * lk_a: 0 = one key, 1 = a ball, 2 = nothing to do; vertices, then the
 * slot, in lk_b.
 */
static void match_any_ph(filt_ws_t *ws, filt_stats_t *st)
{
	const idx_t *x = ws->x;
	const uint64_t *wb = ws->wbits;
	uint32_t part, w2 = 2 * x->p.w, sh = ws->wbits_shift;
	size_t n, k;

	n = any_read_seeds(ws);
	for (part = 0; part < x->n_part; part++) {
		const idx_part_t *pt = &x->part[part];
		uint32_t is32 = pt->blk_nb32 != NULL;
		const uint8_t *g = pt->blk_g;

		for (k = 0; k < n + 4 * ANY_D; k++) {
			size_t k1 = k - ANY_D, k2 = k - 2 * ANY_D, k3 = k - 3 * ANY_D, k4 = k - 4 * ANY_D;

			if (k < n) {
				uint64_t h = any_hash(ws->lk_code[k] | ws->lk_q[k] << w2, sh);

				ws->lk_a[k] = ws->lk_r[k] > 0;
				ws->lk_b[3 * k] = (uint32_t)h;
				if (ws->lk_r[k] == 0 && wb)
					PF(wb + (h >> 6));
			}
			if (k1 < n) {
				uint32_t h = ws->lk_b[3 * k1];

				if (ws->lk_a[k1] == 0 && wb && !(wb[h >> 6] >> (h & 63) & 1)) {
					ws->lk_a[k1] = 2;
				} else {
					PF(pt->blk_start + ws->lk_code[k1]);
					PF(pt->blk_seed + ws->lk_code[k1]);
				}
			}
			if (k2 < n && ws->lk_a[k2] != 2) {
				uint32_t code = ws->lk_code[k2], base = pt->blk_start[code];
				uint32_t m = pt->blk_start[code + 1] - base, *v = ws->lk_b + 3 * k2;
				bdz_hash_t hh;

				if (m == 0)
					ws->lk_a[k2] = 2;
				if (ws->lk_a[k2] == 0) {
					hh = bdz_hash(ws->lk_q[k2], pt->blk_seed[code]);
					v[0] = base + bdz_vertex(hh, m / 3u, 0u);
					v[1] = base + bdz_vertex(hh, m / 3u, 1u);
					v[2] = base + bdz_vertex(hh, m / 3u, 2u);
					PF(g + (v[0] >> 2));
					PF(g + (v[1] >> 2));
					PF(g + (v[2] >> 2));
				}
			}
			if (k3 < n && ws->lk_a[k3] == 0) {
				const uint32_t *v = ws->lk_b + 3 * k3;
				uint32_t sm = bdz_g_get(g[v[0] >> 2], v[0] & 3u)
					+ bdz_g_get(g[v[1] >> 2], v[1] & 3u)
					+ bdz_g_get(g[v[2] >> 2], v[2] & 3u);

				ws->lk_b[3 * k3] = v[sm % 3u];   /* the slot */
				if (is32)
					PF(pt->blk_nb32 + ws->lk_b[3 * k3]);
				else
					PF(pt->blk_nb + ws->lk_b[3 * k3]);
			}
			if (k4 < n && ws->lk_a[k4] == 0) {
				uint32_t sl = ws->lk_b[3 * k4];

				st->items++;
				if (filt_key(pt->blk_nb32, pt->blk_nb, is32, sl) == ws->lk_q[k4])
					any_hit(ws, part, pt, pt->blk_rank[sl], (uint32_t)k4, st);
			} else if (k4 < n && ws->lk_a[k4] == 1) {
				uint32_t code = ws->lk_code[k4], base = pt->blk_start[code];
				uint32_t m = pt->blk_start[code + 1] - base, nw, t;

				nw = degen_words_r(ws, ws->lk_q[k4], ws->v, ws->lk_r[k4]);
				st->items += nw;
				bdz_slots(ws->words, nw, pt->blk_seed[code], base, m / 3u, g, ws->slot);
				for (t = 0; t < nw; t++) {
					uint32_t sl = ws->slot[t];

					if (filt_key(pt->blk_nb32, pt->blk_nb, is32, sl) == ws->words[t])
						any_hit(ws, part, pt, pt->blk_rank[sl], (uint32_t)k4, st);
				}
			}
		}
	}
}

/* FM: backward search of the window of pattern P with backtracking (inc_filt_fm.h). */
static void match_fm(filt_ws_t *ws, const filt_pat_t *p, filt_stats_t *st)
{
	const idx_t *x = ws->x;
	uint32_t span = x->p.span, part;

	for (part = 0; part < x->n_part; part++) {
		const fm_t *fm = &x->part[part].fm;
		uint32_t nr;

		nr = ffm_search((const uint32_t *)fm->occ, fm->primary, fm->n, fm->C[0], fm->C[1],
				fm->C[2], fm->C[3], span, ws->shape_mask, x->p.l, p->code, p->q,
				ws->o.e, (uint32_t)ws->o.any, ws->stack, ws->n_fmr_max ? ws->fmr : NULL);
		if (!ws->n_fmr_max) {   /* no bound known: count, then write */
			if (4 * (size_t)nr > ws->cap_fmr) {
				ws->cap_fmr = 4 * (size_t)nr + 64;
				free(ws->fmr);
				ws->fmr = sp_malloc(ws->cap_fmr * sizeof *ws->fmr);
			}
			ffm_search((const uint32_t *)fm->occ, fm->primary, fm->n, fm->C[0], fm->C[1],
					fm->C[2], fm->C[3], span, ws->shape_mask, x->p.l, p->code, p->q,
					ws->o.e, (uint32_t)ws->o.any, ws->stack, ws->fmr);
		}
		st->items += nr;
		filt_hits_fm(ws, part, ws->fmr, nr, p, st);
	}
}

void filt_hits_fm(filt_ws_t *ws, uint32_t part, const uint32_t *rg, uint32_t nr,
		const filt_pat_t *p, filt_stats_t *st)
{
	const idx_t *x = ws->x;
	uint32_t W = x->p.span + x->p.l, k;

	for (k = 0; k < nr; k++) {
		uint64_t lo = rg[4 * k] | (uint64_t)rg[4 * k + 1] << 32;
		uint64_t hi = rg[4 * k + 2] | (uint64_t)rg[4 * k + 3] << 32;
		size_t n;

		need_hits(ws, hi - lo);
		n = idx_fm_locate(x, part, lo, hi, W, ws->hits);
		st->matches += n;
		add_hits(ws, part, ws->hits, n, p->o, p->strand);
	}
}

/* ---- sort and reduce ----------------------------------------------------- */

static void radix_sort(uint64_t *a, uint64_t *t, size_t n, uint64_t max)
{
	int sh, bits = 64 - (max ? __builtin_clzll(max) : 63);
	size_t i;

	if (n < 64) {
		for (i = 1; i < n; i++) {
			uint64_t k = a[i];
			size_t j = i;

			for (; j > 0 && a[j - 1] > k; j--)
				a[j] = a[j - 1];
			a[j] = k;
		}
		return;
	}
	for (sh = 0; sh < bits; sh += 11) {
		size_t cnt[2048] = { 0 }, sum = 0;
		uint64_t *s;

		for (i = 0; i < n; i++)
			cnt[(a[i] >> sh) & 2047]++;
		for (i = 0; i < 2048; i++) {
			size_t c = cnt[i];

			cnt[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			t[cnt[(a[i] >> sh) & 2047]++] = a[i];
		s = a, a = t, t = s;
	}
	if (((bits + 10) / 11) & 1)
		memcpy(t, a, n * sizeof *a);  /* result is in the scratch: copy back */
}

/* Merge sorted A (NA keys) and B (NB keys) into OUT, from the front. */
static void merge_fwd(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, uint64_t *out)
{
	const uint64_t *ae = a + na, *be = b + nb;

	while (a < ae && b < be) {
		uint64_t x = *a, y = *b;
		int t = y < x;

		*out++ = t ? y : x;
		b += t;
		a += !t;
	}
	if (a < ae)
		memcpy(out, a, (size_t)(ae - a) * sizeof *a);
	else if (b < be)
		memcpy(out, b, (size_t)(be - b) * sizeof *b);
}

/*
 * Merge sorted A (NA keys) and B (NB keys, a few) into OUT with a branch
 * per key of A, which runs of A make predictable.
 */
static void merge_few(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, uint64_t *out)
{
	const uint64_t *ae = a + na;
	size_t j;

	for (j = 0; j < nb; j++) {
		uint64_t y = b[j];

		while (a < ae && *a <= y)
			*out++ = *a++;
		*out++ = y;
	}
	if (a < ae)
		memcpy(out, a, (size_t)(ae - a) * sizeof *a);
}

/* Merge A and B into OUT: merge_few when one is much shorter, else merge_fwd. */
static void merge_tail(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, uint64_t *out)
{
	if (nb * 8 < na)
		merge_few(a, na, b, nb, out);
	else if (na * 8 < nb)
		merge_few(b, nb, a, na, out);
	else
		merge_fwd(a, na, b, nb, out);
}

/*
 * Merge sorted A (NA keys) and B (NB keys) into OUT.  A branchless merge
 * waits on each load for the comparison that chose its address; merging
 * from both ends at once runs two such chains side by side.  The front
 * takes the smallest keys (A's first on a tie), the back the largest
 * (B's first on a tie); for min(NA, NB, half) steps neither can run out
 * or meet the other, and the middle left is merged from the front.
 */
static void merge2(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, uint64_t *out)
{
	size_t s = (na + nb) / 2, i, ia = 0, ib = 0, ja = na, jb = nb, o = 0, ob = na + nb;

	if (s > na)
		s = na;
	if (s > nb)
		s = nb;
	for (i = 0; i < s; i++) {   /* ja, jb: ends of what is left */
		uint64_t x = a[ia], y = b[ib], u = a[ja - 1], v = b[jb - 1];
		size_t t = y < x, w = u > v;

		out[o++] = t ? y : x;
		ib += t;
		ia += !t;
		out[--ob] = w ? u : v;
		ja -= w;
		jb -= !w;
	}
	merge_tail(a + ia, ja - ia, b + ib, jb - ib, out + o);
}

/*
 * Sort A (RUN[NR - 1] keys in NR sorted runs, run i ending at RUN[i]) by
 * merging neighbouring runs pairwise, T as scratch; returns A or T, the
 * one holding the result.  RUN is overwritten.
 */
static uint64_t *merge_runs(uint64_t *a, uint64_t *t, size_t *run, size_t nr)
{
	while (nr > 1) {
		size_t i, m = 0, beg = 0;
		uint64_t *s;

		for (i = 0; i + 1 < nr; i += 2) {
			size_t mid = run[i], end = run[i + 1];

			merge2(a + beg, mid - beg, a + mid, end - mid, t + beg);
			run[m++] = end;
			beg = end;
		}
		if (i < nr) {
			memcpy(t + beg, a + beg, (run[i] - beg) * sizeof *a);
			run[m++] = run[i];
		}
		nr = m;
		s = a, a = t, t = s;
	}
	return a;
}

static int cmp_sup(const void *pa, const void *pb)
{
	const rec_cand_t *a = pa, *b = pb;

	if (a->support != b->support)
		return a->support > b->support ? -1 : 1;
	if (a->part != b->part)
		return a->part < b->part ? -1 : 1;
	if (a->pos != b->pos)
		return a->pos < b->pos ? -1 : 1;
	return (int)a->strand - (int)b->strand;
}

static int cmp_key(const void *pa, const void *pb)
{
	const rec_cand_t *a = pa, *b = pb;

	if (a->part != b->part)
		return a->part < b->part ? -1 : 1;
	if (a->pos != b->pos)
		return a->pos < b->pos ? -1 : 1;
	return (int)a->strand - (int)b->strand;
}

/* ---- one read ------------------------------------------------------------- */

/*
 * Memory-level parallelism.  Each pattern touches a few random cache lines
 * of the index (its start-list entries, then its SeedBlock's keys, g values,
 * ranks and positions), and one lookup depends on the previous load.  Done
 * pattern by pattern the misses come one at a time; instead all patterns of
 * a read first prefetch their start-list entries (prefetch_starts), then
 * their blocks (prefetch_blocks), so the misses overlap.  Prefetches change
 * no result.
 */

static void prefetch_starts(const filt_ws_t *ws, const filt_pat_t *pat, uint32_t np)
{
	const idx_t *x = ws->x;
	uint32_t i, part;

	for (part = 0; part < x->n_part; part++) {
		const idx_part_t *pt = &x->part[part];

		for (i = 0; i < np; i++) {
			uint32_t code = pat[i].code;

			if (pt->gen_start)
				PF(pt->gen_start + code);
			if (ws->o.method == FILT_BPR) {
				PF(pt->gen_wstart + code);
			} else if (pt->red_start) {
				PF(pt->red_start + code);
				if (ws->o.method == FILT_PH && pt->blk_start) {
					PF(pt->blk_start + code);
					PF(pt->blk_seed + code);
				}
			}
		}
	}
}

static void prefetch_blocks(const filt_ws_t *ws, const filt_pat_t *pat, uint32_t np)
{
	const idx_t *x = ws->x;
	uint32_t i, part;

	/* first and last line of each array range (a block may straddle two) */
	for (part = 0; part < x->n_part; part++) {
		const idx_part_t *pt = &x->part[part];

		for (i = 0; i < np; i++) {
			uint32_t code = pat[i].code;

			if (ws->o.method == FILT_BPR) {
				uint32_t b = pt->gen_start[code], e = pt->gen_start[code + 1];
				uint32_t wb = pt->gen_wstart[code], we = pt->gen_wstart[code + 1];

				if (b == e)
					continue;
				PF(pt->gen_nb + wb);
				PF(pt->gen_nb + we - 1);
				PF(pt->gen_pos + b);
				PF(pt->gen_pos + e - 1);
			} else if (ws->o.method == FILT_PH) {
				uint32_t b = pt->blk_start[code], e = pt->blk_start[code + 1];
				uint32_t lo = pt->red_start[code], hi = pt->red_start[code + 1];

				if (b == e)
					continue;
				PF(pt->blk_g + (b >> 2));
				PF(pt->blk_g + ((e - 1) >> 2));
				if (pt->blk_nb32) {
					PF(pt->blk_nb32 + b);
					PF(pt->blk_nb32 + e - 1);
				} else {
					PF(pt->blk_nb + b);
					PF(pt->blk_nb + e - 1);
				}
				PF(pt->blk_rank + b);
				PF(pt->blk_rank + e - 1);
				PF(pt->red_nbpos + lo);
				PF(pt->red_nbpos + hi);
			} else {
				uint32_t lo = pt->red_start[code], hi = pt->red_start[code + 1];

				if (lo == hi)
					continue;
				if (pt->red_nb32) {
					PF(pt->red_nb32 + lo);
					PF(pt->red_nb32 + hi - 1);
				} else {
					PF(pt->red_nb + lo);
					PF(pt->red_nb + hi - 1);
				}
				PF(pt->red_nbpos + lo);
				PF(pt->red_nbpos + hi);
			}
		}
	}
}

/* Neighborhoods in SeedBlock(CODE) over all partitions (Tran's nps count). */
static uint64_t block_size(const idx_t *x, uint32_t code)
{
	uint64_t n = 0;
	uint32_t i;

	for (i = 0; i < x->n_part; i++) {
		const idx_part_t *pt = &x->part[i];

		if (pt->gen_start)
			n += pt->gen_start[code + 1] - pt->gen_start[code];
		else if (pt->red_start)
			n += pt->red_nbpos[pt->red_start[code + 1]] - pt->red_nbpos[pt->red_start[code]];
	}
	return n;
}

void filt_begin(filt_ws_t *ws)
{
	ws->n_key = 0;
	ws->n_run = 0;
	ws->unsorted = 0;
	ws->n_pat = 0;
}

uint32_t filt_cut(filt_ws_t *ws, const char *seq, uint32_t len,
		const filt_pat_t **pats, filt_stats_t *st)
{
	const idx_t *x = ws->x;
	uint32_t span = x->p.span, w = x->p.w, win = ws->win, strand, o, i;

	st->reads++;
	filt_begin(ws);
	*pats = ws->pat;
	if (len < win) {
		st->short_reads++;
		return 0;
	}
	if (len > ws->cap_len) {
		ws->cap_len = len + 64;
		free(ws->code[0]);
		free(ws->ncnt);
		free(ws->pat);
		ws->code[0] = sp_malloc(2 * ws->cap_len);
		ws->ncnt = sp_malloc((ws->cap_len + 1) * sizeof *ws->ncnt);
		ws->pat = sp_malloc(2 * ws->cap_len * sizeof *ws->pat);
		*pats = ws->pat;
	}
	ws->code[1] = ws->code[0] + ws->cap_len;
	ws->ncnt[0] = 0;
	for (i = 0; i < len; i++) {
		uint8_t c = seqio_nt4[(unsigned char)seq[i]];

		ws->code[0][i] = c;
		ws->code[1][len - 1 - i] = c < 4 ? 3 - c : 4;
		ws->ncnt[i + 1] = ws->ncnt[i] + (c > 3);
	}
	for (strand = 0; strand < 2; strand++) {
		const uint8_t *c = ws->code[strand];

		for (o = 0; o + win <= len; o += ws->o.step) {
			filt_pat_t *p = &ws->pat[ws->n_pat];
			uint32_t code = 0, j;
			uint64_t q = 0;
			/* N count of [o, o+win) of this strand, from the forward counts */
			uint32_t a = strand ? len - o - win : o, nmask = 0;

			if (ws->ncnt[a + win] - ws->ncnt[a]) {
				/* bpr: an N in q matches no base; an N in the seed skips it */
				uint32_t sa = strand ? len - o - span : o;

				if (ws->o.method != FILT_BPR || ws->ncnt[sa + span] - ws->ncnt[sa]) {
					st->skipped_n++;
					continue;
				}
				for (j = 0; j < ws->v; j++)
					nmask |= (uint32_t)(c[o + span + j] > 3) << j;
				st->kept_n++;
			}
			st->patterns++;
			for (j = 0; j < w; j++)
				code |= (uint32_t)c[o + x->p.shape_pos[j]] << (2 * j);
			for (j = 0; j < ws->v; j++)
				q |= (uint64_t)(c[o + span + j] & 3) << (2 * j);
			p->nmask = nmask;
			p->q = q;
			p->code = code;
			p->o = o;
			p->strand = strand;
			ws->n_pat++;
		}
	}
	prefetch_starts(ws, ws->pat, ws->n_pat);
	for (i = 0; i < ws->n_pat && !ws->o.any; i++)   /* -a: counted by match_any_bs */
		st->nbs += block_size(x, ws->pat[i].code);
	return ws->n_pat;
}

void filt_prefetch(filt_ws_t *ws, const char *seq, uint32_t len, int stage)
{
	const idx_t *x = ws->x;
	uint32_t w = x->p.w, win = ws->win, np = 0, strand, o, i, j;

	if (ws->o.method == FILT_FM || ws->o.any || len < win)
		return;   /* -a: match_any prefetches within the read */
	if (len > ws->cap_pf) {
		ws->cap_pf = len + 64;
		free(ws->pf_code);
		free(ws->pf_pat);
		ws->pf_code = sp_malloc(2 * ws->cap_pf);
		ws->pf_pat = sp_malloc(2 * ws->cap_pf * sizeof *ws->pf_pat);
	}
	for (i = 0; i < len; i++) {   /* N as A: only the addresses matter */
		uint8_t c = seqio_nt4[(unsigned char)seq[i]] & 3;

		ws->pf_code[i] = c;
		ws->pf_code[ws->cap_pf + len - 1 - i] = 3 - c;
	}
	for (strand = 0; strand < 2; strand++) {
		const uint8_t *c = ws->pf_code + strand * ws->cap_pf;

		for (o = 0; o + win <= len; o += ws->o.step) {
			uint32_t code = 0;

			for (j = 0; j < w; j++)
				code |= (uint32_t)c[o + x->p.shape_pos[j]] << (2 * j);
			ws->pf_pat[np++].code = code;
		}
	}
	if (stage == 0)
		prefetch_starts(ws, ws->pf_pat, np);
	else
		prefetch_blocks(ws, ws->pf_pat, np);
}

void filt_hits(filt_ws_t *ws, uint32_t part, const uint32_t *hits, size_t n,
		const filt_pat_t *p)
{
	add_hits(ws, part, hits, n, p->o, p->strand);
}

uint32_t filt_read(filt_ws_t *ws, const char *seq, uint32_t len,
		rec_cand_t **out, filt_stats_t *st)
{
	const filt_pat_t *pat;
	uint32_t np = filt_cut(ws, seq, len, &pat, st), i;

	if (ws->o.any && ws->o.method != FILT_FM) {
		if (ws->o.method == FILT_BS)
			match_any_bs(ws, st);
		else
			match_any_ph(ws, st);
		return filt_finish(ws, out, st);
	}
	if (ws->o.method != FILT_FM)
		prefetch_blocks(ws, ws->pat, ws->n_pat);
	for (i = 0; i < np; i++) {
		const filt_pat_t *p = &pat[i];

		switch (ws->o.method) {
		case FILT_BPR:
			match_bpr(ws, p->code, p->q, p->nmask, p->o, p->strand, st);
			break;
		case FILT_BS:
		case FILT_PH:
			match_degen(ws, p->code, p->q, p->o, p->strand, st);
			break;
		case FILT_FM:
			match_fm(ws, p, st);
			break;
		}
	}
	return filt_finish(ws, out, st);
}

uint32_t filt_finish(filt_ws_t *ws, rec_cand_t **out, filt_stats_t *st)
{
	const idx_t *x = ws->x;
	uint64_t maxk = 0, *key = ws->key;
	size_t n, k, beg;
	uint32_t i;

	*out = ws->out;
	n = ws->n_key;
	if (n == 0) {
		st->no_cand++;
		return 0;
	}
	if (n > ws->cap_tmp) {
		ws->cap_tmp = ws->cap_key > n ? ws->cap_key : n;
		free(ws->tmp);
		ws->tmp = sp_malloc(ws->cap_tmp * sizeof *ws->tmp);
	}
	if (n > ws->cap_out) {
		ws->cap_out = n;
		ws->out = sp_realloc(ws->out, n * sizeof *ws->out);
	}
	*out = ws->out;
	if (!ws->unsorted && (ws->n_run <= 64 || n < 4096)) {
		key = merge_runs(key, ws->tmp, ws->run, ws->n_run);
	} else {
		for (k = 0; k < n; k++)
			maxk |= key[k];
		radix_sort(key, ws->tmp, n, maxk);
	}
	/*
	 * Reduce: every key writes its candidate at out[i]; i moves on after
	 * the last key of a run of equal keys (no branch on the runs).
	 */
	for (k = 0, i = 0, beg = 0; k < n; k++) {
		rec_cand_t *cd = &ws->out[i];
		uint64_t kk = key[k];
		uint32_t part = KEY_PART(kk), last = k + 1 == n || key[k + 1] != kk;
		const idx_part_t *pt = &x->part[part];

		cd->part = part;
		cd->pos = KEY_DIAG(kk);
		cd->strand = (uint8_t)KEY_STRAND(kk);
		cd->support = (uint32_t)(k + 1 - beg);
		cd->seq_id = pt->end_seq - pt->first_seq <= 1 ? pt->first_seq
			: seq_of(x, pt, pt->beg + cd->pos);
		i += last;
		beg = last ? k + 1 : beg;
	}
	if (ws->o.cap && i > ws->o.cap) {
		st->capped_reads++;
		st->capped_dropped += i - ws->o.cap;
		qsort(ws->out, i, sizeof *ws->out, cmp_sup);
		i = ws->o.cap;
		qsort(ws->out, i, sizeof *ws->out, cmp_key);
	}
	st->cands += i;
	return i;
}

void filt_stats_add(filt_stats_t *a, const filt_stats_t *b)
{
	a->reads += b->reads;
	a->short_reads += b->short_reads;
	a->patterns += b->patterns;
	a->skipped_n += b->skipped_n;
	a->kept_n += b->kept_n;
	a->matches += b->matches;
	a->cands += b->cands;
	a->no_cand += b->no_cand;
	a->capped_reads += b->capped_reads;
	a->capped_dropped += b->capped_dropped;
	a->not_guaranteed += b->not_guaranteed;
	a->items += b->items;
	a->nbs += b->nbs;
}
