/*
 * filt.c - seedfilt's per-read work on the CPU: patterns, matching by bpr /
 * bs / ph / fm, diagonals, sort and reduce (filt.h), and the sensitivity
 * bounds.  The same inc_bpr.h / inc_degen.h code runs in kernels/filt.cl.
 */
#include <stdlib.h>
#include <string.h>

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

struct filt_ws {
	const idx_t *x;
	filt_opt_t o;
	uint32_t v, win;          /* q length, window span + v */
	uint8_t *code[2];         /* read and reverse complement, 0..3, 4 = N */
	uint32_t *ncnt;           /* N prefix counts of the forward read */
	size_t cap_len;
	uint64_t *key, *tmp;      /* matches as keys, radix scratch */
	size_t n_key, cap_key;
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
	ffm_node_t *stack;        /* fm: FFM_STACK nodes */
	uint32_t shape_mask;      /* fm: bit i set for a '#' at shape position i */
	uint32_t *fmr;            /* fm: row ranges, 4 u32 each */
	size_t cap_fmr, n_fmr_max;
};

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

int filt_check(const idx_t *x, int m, uint32_t e, char *msg, size_t len)
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
	return 0;
}

int filt_auto(const idx_t *x, uint32_t e, int edits)
{
	static const int order[] = { FILT_PH, FILT_BS, FILT_FM, FILT_BPR };
	char msg[256];
	size_t i;

	for (i = 0; i < 4; i++) {
		if (edits && order[i] != FILT_BPR)
			continue;
		if (filt_check(x, order[i], e, msg, sizeof msg) == 0)
			return order[i];
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
	s->n_pat = (uint32_t)P;
	s->k_sub = (int32_t)ks - 1;
	s->k_edit = o->method == FILT_BPR ? s->k_sub : (int32_t)ke - 1;
}

int filt_auto_guarantee(const idx_t *x, filt_opt_t *o, uint32_t read_len, int32_t edits)
{
	static const int order[] = { FILT_PH, FILT_BS, FILT_FM, FILT_BPR };
	char msg[256];
	size_t i;

	for (i = 0; i < 4; i++) {
		uint32_t step, e, emax = order[i] == FILT_BPR ? x->p.l - 1 : FILT_MAX_E_HAM;

		for (step = o->step; step >= 1; step--)
			for (e = o->e; e <= emax; e++) {
				filt_opt_t t = *o;
				filt_sens_t sn;

				t.method = order[i];
				t.e = e;
				t.step = step;
				if (filt_check(x, t.method, e, msg, sizeof msg) < 0)
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

	ws->x = x;
	ws->o = *o;
	ws->v = filt_qlen(x, o->method, o->e);
	ws->win = x->p.span + ws->v;
	if (o->method == FILT_BS || o->method == FILT_PH) {
		ws->n_lpos = degen_n_lpos(ws->v, o->e);
		ws->lpos = sp_malloc((ws->n_lpos + 1) * sizeof *ws->lpos);
		degen_lpos(ws->v, o->e, ws->lpos);
	}
	if (o->method == FILT_FM) {
		uint32_t i;
		uint64_t bound = degen_ball(x->p.l, o->e);

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
	free(ws->tmp);
	free(ws->hits);
	free(ws->out);
	free(ws->sup);
	free(ws->lpos);
	free(ws->pat);
	free(ws->stack);
	free(ws->fmr);
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

static void push_key(filt_ws_t *ws, uint64_t k)
{
	if (ws->n_key == ws->cap_key) {
		ws->cap_key = ws->cap_key ? ws->cap_key * 2 : 1024;
		ws->key = sp_realloc(ws->key, ws->cap_key * sizeof *ws->key);
	}
	ws->key[ws->n_key++] = k;
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

/* Record the N window positions HITS of pattern offset O as diagonals. */
static void add_hits(filt_ws_t *ws, uint32_t part, const uint32_t *hits, size_t n,
		uint32_t o, uint32_t strand)
{
	const idx_t *x = ws->x;
	const idx_part_t *pt = &x->part[part];
	int one = pt->end_seq - pt->first_seq <= 1;
	size_t i;

	if (ws->o.count_only)
		return;

	for (i = 0; i < n; i++) {
		uint32_t p = hits[i], diag;
		uint64_t st;

		if (one && p >= o) {
			st = x->off[pt->first_seq] > pt->beg ? x->off[pt->first_seq] - pt->beg : 0;
		} else {
			uint32_t s = seq_of(x, pt, pt->beg + p);

			st = x->off[s] > pt->beg ? x->off[s] - pt->beg : 0;
		}
		diag = (uint64_t)p >= st + o ? p - o : (uint32_t)st;
		push_key(ws, KEY(part, diag, strand));
	}
}

/* ---- methods ----------------------------------------------------------- */

static void match_bpr(filt_ws_t *ws, uint32_t code, uint64_t q, uint32_t o,
		uint32_t strand, filt_stats_t *st)
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
			bpr_pat_init(&ws->bp, q, ws->v, x->p.l, ws->o.e);
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

static void match_degen(filt_ws_t *ws, uint32_t code, uint64_t q, uint32_t o,
		uint32_t strand, filt_stats_t *st)
{
	const idx_t *x = ws->x;
	uint32_t e = ws->o.e, part, ph = ws->o.method == FILT_PH;
	uint64_t items = ws->n_lpos << (2 * e), n;

	for (part = 0; part < x->n_part; part++) {
		const idx_part_t *pt = &x->part[part];
		uint64_t lo = pt->red_start[code], hi = pt->red_start[code + 1];
		uint32_t is32 = pt->red_nb32 != NULL;

		if (lo == hi)
			continue;
		for (n = 0; n < items; n++) {
			uint32_t sp = degen_item_sp((uint32_t)n, e), sc = degen_item_sc((uint32_t)n, e);
			uint64_t w, j, pb, pe;

			if (!degen_canonical(q, ws->lpos[sp], sc, e))
				continue;
			w = degen_word(q, ws->lpos[sp], sc, e);
			st->items++;
			if (ph) {
				j = filt_bdz_find(pt->blk_start, pt->blk_seed, pt->blk_g,
						pt->blk_nb32, pt->blk_nb, pt->blk_nb32 != NULL,
						pt->blk_rank, code, w);
				if (j == 0xffffffffu)
					continue;
			} else {
				j = filt_bsearch(pt->red_nb32, pt->red_nb, is32, lo, hi, w);
				if (j == hi)
					continue;
			}
			pb = pt->red_nbpos[j];
			pe = pt->red_nbpos[j + 1];
			st->matches += pe - pb;
			add_hits(ws, part, pt->red_pos + pb, pe - pb, o, strand);
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
				ws->o.e, ws->stack, ws->n_fmr_max ? ws->fmr : NULL);
		if (!ws->n_fmr_max) {   /* no bound known: count, then write */
			if (4 * (size_t)nr > ws->cap_fmr) {
				ws->cap_fmr = 4 * (size_t)nr + 64;
				free(ws->fmr);
				ws->fmr = sp_malloc(ws->cap_fmr * sizeof *ws->fmr);
			}
			ffm_search((const uint32_t *)fm->occ, fm->primary, fm->n, fm->C[0], fm->C[1],
					fm->C[2], fm->C[3], span, ws->shape_mask, x->p.l, p->code, p->q,
					ws->o.e, ws->stack, ws->fmr);
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

uint32_t filt_cut(filt_ws_t *ws, const char *seq, uint32_t len,
		const filt_pat_t **pats, filt_stats_t *st)
{
	const idx_t *x = ws->x;
	uint32_t span = x->p.span, w = x->p.w, win = ws->win, strand, o, i;

	st->reads++;
	ws->n_key = 0;
	ws->n_pat = 0;
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
			uint32_t a = strand ? len - o - win : o;

			if (ws->ncnt[a + win] - ws->ncnt[a]) {
				st->skipped_n++;
				continue;
			}
			st->patterns++;
			for (j = 0; j < w; j++)
				code |= (uint32_t)c[o + x->p.shape_pos[j]] << (2 * j);
			for (j = 0; j < ws->v; j++)
				q |= (uint64_t)c[o + span + j] << (2 * j);
			st->nbs += block_size(x, code);
			p->q = q;
			p->code = code;
			p->o = o;
			p->strand = strand;
			ws->n_pat++;
		}
	}
	return ws->n_pat;
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

	for (i = 0; i < np; i++) {
		const filt_pat_t *p = &pat[i];

		switch (ws->o.method) {
		case FILT_BPR:
			match_bpr(ws, p->code, p->q, p->o, p->strand, st);
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
	uint64_t maxk = 0;
	size_t n, k;
	uint32_t i;

	*out = ws->out;
	n = ws->n_key;
	if (n == 0) {
		st->no_cand++;
		return 0;
	}
	ws->tmp = sp_realloc(ws->tmp, n * sizeof *ws->tmp);
	for (k = 0; k < n; k++)
		maxk |= ws->key[k];
	radix_sort(ws->key, ws->tmp, n, maxk);
	if (n > ws->cap_out) {
		ws->cap_out = n;
		ws->out = sp_realloc(ws->out, n * sizeof *ws->out);
	}
	*out = ws->out;
	for (k = 0, i = 0; k < n; i++) {
		size_t e = k + 1;
		rec_cand_t *cd = &ws->out[i];
		uint32_t part = KEY_PART(ws->key[k]);

		while (e < n && ws->key[e] == ws->key[k])
			e++;
		cd->part = part;
		cd->pos = KEY_DIAG(ws->key[k]);
		cd->strand = (uint8_t)KEY_STRAND(ws->key[k]);
		cd->support = (uint32_t)(e - k);
		cd->seq_id = seq_of(x, &x->part[part], x->part[part].beg + cd->pos);
		k = e;
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
	a->matches += b->matches;
	a->cands += b->cands;
	a->no_cand += b->no_cand;
	a->capped_reads += b->capped_reads;
	a->capped_dropped += b->capped_dropped;
	a->not_guaranteed += b->not_guaranteed;
	a->items += b->items;
	a->nbs += b->nbs;
}
