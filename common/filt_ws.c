/*
 * filt_ws.c - seedfilt's per-thread workspace (filt_ws_new), the matches of
 * a read as candidate keys (filt_add_hits, filt_hits), and the -a bitmap of
 * the index's window words that the workspaces of a run share.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "degen.h"
#include "filt_priv.h"
#include "util.h"

/*
 * -a with bs and ph: a bitmap of the index's window words (seed code | key << 2w,
 * filt.h), one bit per word at hash(word) >> shift, 8 to 16 bits per
 * word.  Most one-key lookups (a seed one substitution away, q exact) ask
 * for a window that is not in the index; the bitmap, small enough to stay
 * in the cache, turns most of them away with one probe instead of two
 * cache misses (start list, then keys).  No word of the index is ever
 * turned away, so the matches do not change.  Built once per index and
 * range of partitions searched (seedfilt -M searches a group of them per
 * pass) and shared by the workspaces of all threads (reference counted).
 */
typedef struct any_bits {
	struct any_bits *next;
	const idx_t *x;
	uint32_t p0, p1;
	uint64_t *bits;
	uint32_t shift;
	int refs;
} any_bits_t;

static pthread_mutex_t any_bits_lock = PTHREAD_MUTEX_INITIALIZER;
static any_bits_t *any_bits_list;

#define ANY_BITS_MAX 31   /* at most 2^31 bits (256 MiB), so h >> 6 fits a u32 */

/*
 * The bitmap of partitions [P0, P1) of index X with its shift in *SHIFT,
 * or NULL when too large.
 */
static const uint64_t *any_bits_get(const idx_t *x, uint32_t p0, uint32_t p1, uint32_t *shift)
{
	any_bits_t *a;

	pthread_mutex_lock(&any_bits_lock);
	for (a = any_bits_list; a && (a->x != x || a->p0 != p0 || a->p1 != p1); a = a->next)
		;
	if (!a) {
		uint64_t n = 0, code, nc = (uint64_t)1 << (2 * x->p.w);
		uint32_t bits = 12, part, w2 = 2 * x->p.w;

		for (part = p0; part < p1; part++)
			n += x->part[part].n_uniq;
		while (((uint64_t)1 << bits) < 8 * n)
			bits++;
		if (bits > ANY_BITS_MAX) {   /* too large to stay in a cache: none */
			pthread_mutex_unlock(&any_bits_lock);
			*shift = 0;
			return NULL;
		}
		a = sp_calloc(1, sizeof *a);
		a->x = x;
		a->p0 = p0;
		a->p1 = p1;
		a->shift = 64 - bits;
		a->bits = sp_calloc(((size_t)1 << bits) / 64 + 1, sizeof *a->bits);
		for (part = p0; part < p1; part++) {
			const idx_part_t *pt = &x->part[part];

			for (code = 0; code < nc; code++) {
				uint64_t j;

				for (j = pt->red_start[code]; j < pt->red_start[code + 1]; j++) {
					uint64_t h = filt_any_hash(code | idx_red_key(pt, j) << w2,
							a->shift);

					a->bits[h >> 6] |= (uint64_t)1 << (h & 63);
				}
			}
		}
		a->next = any_bits_list;
		any_bits_list = a;
	}
	a->refs++;
	*shift = a->shift;
	pthread_mutex_unlock(&any_bits_lock);
	return a->bits;
}

/* Let go of the bitmap BITS (from any_bits_get); the last user frees it. */
static void any_bits_put(const uint64_t *bits)
{
	any_bits_t **pa, *a;

	pthread_mutex_lock(&any_bits_lock);
	for (pa = &any_bits_list; (a = *pa) && a->bits != bits; pa = &a->next)
		;
	if (a && --a->refs == 0) {
		*pa = a->next;
		free(a->bits);
		free(a);
	}
	pthread_mutex_unlock(&any_bits_lock);
}

filt_ws_t *filt_ws_new(const idx_t *x, const filt_opt_t *o)
{
	return filt_ws_part(x, o, 0, x->n_part);
}

void filt_ws_range(filt_ws_t *ws, uint32_t p0, uint32_t p1)
{
	if (ws->p0 == p0 && ws->p1 == p1)
		return;
	ws->p0 = p0;
	ws->p1 = p1;
	if (!ws->want_bits)
		return;
	if (ws->wbits)
		any_bits_put(ws->wbits);
	ws->wbits = any_bits_get(ws->x, p0, p1, &ws->wbits_shift);
}

filt_ws_t *filt_ws_part(const idx_t *x, const filt_opt_t *o, uint32_t p0, uint32_t p1)
{
	filt_ws_t *ws = sp_calloc(1, sizeof *ws);
	uint32_t i;

	ws->x = x;
	ws->o = *o;
	ws->v = filt_qlen(x, o->method, o->e);
	ws->win = x->p.span + ws->v;
	ws->wv = o->any ? x->p.w + ws->v : ws->v;
	ws->simd = o->method == FILT_PH && filt_bdz_simd();
	ws->p0 = p0;
	ws->p1 = p1;
	ws->want_bits = o->any && (o->method == FILT_BS || o->method == FILT_PH);
	if (ws->want_bits)
		ws->wbits = any_bits_get(x, p0, p1, &ws->wbits_shift);   /* NULL: none */
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
	free(ws->pk);
	free(ws->pf_pk);
	free(ws->key);
	free(ws->run);
	free(ws->tmp);
	free(ws->hits);
	free(ws->out);
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
		any_bits_put(ws->wbits);
	free(ws);
}

void filt_need_hits(filt_ws_t *ws, size_t n)
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

/*
 * filt_add_hits: the N window positions HITS of pattern offset O as
 * diagonals, one run of keys.  Positions in increasing order (a SeedBlock's, a
 * neighborhood's) give a sorted run (the diagonal p - o, clamped to the
 * start of p's sequence, does not decrease with p); filt_finish merges the
 * runs when they all are, and radix sorts the keys otherwise.  A run that
 * starts at or above the end of the previous one extends it.
 */
void filt_add_hits(filt_ws_t *ws, uint32_t part, const uint32_t *hits, size_t n,
		uint32_t o, uint32_t strand)
{
	const idx_t *x = ws->x;
	const idx_part_t *pt = &x->part[part];
	int one = pt->end_seq - pt->first_seq <= 1;
	uint64_t st0 = x->off[pt->first_seq] > pt->beg ? x->off[pt->first_seq] - pt->beg : 0;
	uint64_t *k, prev = 0;
	/* bs and ph compare whole windows (v = l): a window whose neighborhood
	 * runs past its sequence's end or into N (index format 4, for bpr) holds
	 * no window of a read there; dropped, as fm never finds it */
	int whole = ws->o.method == FILT_BS || ws->o.method == FILT_PH;
	uint32_t win = x->p.span + x->p.l;
	int bad = 0;
	size_t i, j;

	if (ws->o.count_only || n == 0)
		return;
	need_keys(ws, n);
	k = ws->key + ws->n_key;
	for (i = j = 0; i < n; i++) {
		uint32_t p = hits[i], diag;
		uint64_t st, key;

		if (whole && !idx_range_clean(x, pt->beg + p, win))
			continue;

		if (one && p >= o) {
			st = st0;
		} else {
			uint32_t s = filt_seq_of(x, pt, pt->beg + p);

			st = x->off[s] > pt->beg ? x->off[s] - pt->beg : 0;
		}
		diag = (uint64_t)p >= st + o ? p - o : (uint32_t)st;
		key = KEY(part, diag, strand);
		bad |= key < prev;
		prev = key;
		k[j++] = key;
	}
	if ((n = j) == 0)
		return;
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

void filt_begin(filt_ws_t *ws)
{
	ws->n_key = 0;
	ws->n_run = 0;
	ws->unsorted = 0;
	ws->n_pat = 0;
}

void filt_hits(filt_ws_t *ws, uint32_t part, const uint32_t *hits, size_t n,
		const filt_pat_t *p)
{
	filt_add_hits(ws, part, hits, n, p->o, p->strand);
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
