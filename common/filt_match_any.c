/*
 * filt_match_any.c - bs and ph with -a on the CPU: the e substitutions may
 * fall in the seed too, so every seed s' within Hamming distance i <= e of
 * the pattern's seed is looked up with the radius e - i left for q (filt.h).
 * The lookups of a whole read go through software pipelines, so that their
 * cache misses overlap.
 */
#include "degen.h"
#include "filt_priv.h"
#include "inc_filt.h"
#include "util.h"

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

	filt_rank_hits(ws, part, pt, j, p->o, p->strand, st);
}

/* Prefetch key rank J of partition PT (32- or 64-bit keys). */
static inline void pf_key(const idx_part_t *pt, uint32_t is32, uint64_t j)
{
	if (is32)
		PF(pt->red_nb32 + j);
	else
		PF(pt->red_nb + j);
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

#define ANY_D 12    /* lookups between the stages of a software pipeline */

/*
 * The lookups of every pattern of the current read: for pattern p, each
 * seed s' within Hamming distance i <= e of its seed (filt_degen_words over
 * the seed's w bases, each once) with q and the radius e - i; then the
 * one-key lookups (radius 0) whose window word the bitmap ws->wbits does
 * not hold are dropped (it holds every window word of the index, in every
 * partition).  Returns the count left, in ws->lk_*.
 */
static size_t any_lookups(filt_ws_t *ws)
{
	const uint64_t *wb = ws->wbits;
	uint32_t w = ws->x->p.w, w2 = 2 * w, e = ws->o.e, sh = ws->wbits_shift, i, t, nw;
	size_t n = 0, k, m = 0;

	need_lk(ws, (size_t)ws->n_pat * degen_ball(w, e) + 1);
	for (i = 0; i < ws->n_pat; i++) {
		uint32_t code = ws->pat[i].code;

		e = ws->pat[i].e;   /* less than the run's e for a read with N (filt_cut) */
		nw = filt_degen_words(ws->words, code, w, e);
		if (ws->pat[i].fixc)
			nw = filt_fix_words(ws->words, nw, code, ws->pat[i].fixc);
		for (t = 0; t < nw; t++, n++) {
			ws->lk_code[n] = (uint32_t)ws->words[t];
			ws->lk_r[n] = e - ham2(ws->words[t], code);
			ws->lk_q[n] = ws->pat[i].q;
			ws->lk_pat[n] = i;
		}
	}
	if (!wb)
		return n;
	/* software pipeline: hash of lookup k (bitmap line prefetched), test of k - D */
	for (k = 0; k < n + ANY_D; k++) {
		size_t k1 = k - ANY_D;

		if (k < n) {
			uint64_t h = filt_any_hash(ws->lk_code[k] | ws->lk_q[k] << w2, sh);

			ws->lk_a[k] = (uint32_t)h;   /* < 2^31 */
			if (ws->lk_r[k] == 0)
				PF(wb + (h >> 6));
		}
		if (k1 < n && (ws->lk_r[k1] > 0 || (wb[ws->lk_a[k1] >> 6] >> (ws->lk_a[k1] & 63) & 1))) {
			ws->lk_code[m] = ws->lk_code[k1];
			ws->lk_r[m] = ws->lk_r[k1];
			ws->lk_q[m] = ws->lk_q[k1];
			ws->lk_pat[m++] = ws->lk_pat[k1];
		}
	}
	return m;
}

/* Search lookup K of match_any_bs in partition PT (its block range is in lk_a, lk_b). */
static void any_search(filt_ws_t *ws, uint32_t part, const idx_part_t *pt, uint32_t is32,
		size_t k, filt_stats_t *st)
{
	uint64_t lo = ws->lk_a[k], hi = ws->lk_b[k], j, q = ws->lk_q[k];
	uint64_t fix = ws->pat[ws->lk_pat[k]].fixq;
	uint32_t r = ws->lk_r[k], nw, t;

	if (lo == hi)
		return;
	if (r == 0) {
		st->items++;
		j = filt_bsearch_cmov(pt->red_nb32, pt->red_nb, is32, lo, hi, q);
		if (j != hi)
			any_hit(ws, part, pt, j, (uint32_t)k, st);
	} else if (hi - lo <= ws->ball[r]) {
		st->items += hi - lo;
		for (j = lo; j < hi; j++) {
			uint64_t key = filt_key(pt->red_nb32, pt->red_nb, is32, j);

			if (ham2(key, q) <= r && !((key ^ q) & fix))
				any_hit(ws, part, pt, j, (uint32_t)k, st);
		}
	} else {
		nw = filt_degen_words(ws->words, q, ws->v, r);
		if (fix)
			nw = filt_fix_words(ws->words, nw, q, fix);
		st->items += nw;
		for (t = 0; t < nw; t++) {
			j = filt_bsearch_cmov(pt->red_nb32, pt->red_nb, is32, lo, hi, ws->words[t]);
			if (j != hi)
				any_hit(ws, part, pt, j, (uint32_t)k, st);
		}
	}
}

/*
 * bs with -a in partition PART: lookup k = (seed s', q, radius r)
 * searches SeedBlock(s') for the neighborhoods within Hamming distance r of q: one binary search when
 * r = 0; when r > 0 a scan of the block's keys when the block holds no
 * more keys than the ball has words, else the ball's words one binary
 * search each (the same set either way).  A software pipeline over the
 * lookups of the read: start list of k (prefetched), keys of k - D
 * (prefetched), search k - 2D, so that their cache misses overlap.
 */
static void match_any_bs(filt_ws_t *ws, uint32_t part, size_t n, filt_stats_t *st)
{
	const idx_part_t *pt = &ws->x->part[part];
	uint32_t is32 = pt->red_nb32 != NULL;
	size_t k;

	for (k = 0; k < n + 2 * ANY_D; k++) {
		size_t k1 = k - ANY_D, k2 = k - 2 * ANY_D;

		if (k < n)
			PF(pt->red_start + ws->lk_code[k]);
		if (k1 < n) {
			uint32_t lo = pt->red_start[ws->lk_code[k1]];
			uint32_t hi = pt->red_start[ws->lk_code[k1] + 1];

			ws->lk_a[k1] = lo;
			ws->lk_b[k1] = hi;
			st->nbs += hi - lo;
			pf_key(pt, is32, lo);
		}
		if (k2 < n)
			any_search(ws, part, pt, is32, k2, st);
	}
}

/*
 * ph with -a in partition PART: the lookups of match_any_bs through the
 * BDZ perfect hash of the indexed blocks.  A lookup with radius 0 is one key: it goes through
 * a software pipeline (block start and seed; vertices, g values
 * prefetched; slot, its rank prefetched; the rank's key in the reduced
 * structure prefetched; compare).  A lookup with radius r > 0
 * (seed s itself, once per pattern for e = 1) hashes the ball's words of
 * its one block at the last stage, with filt_bdz_slots.  lk_a: 0 = one
 * key, 1 = a ball, 2 = nothing to do; vertices, then the slot, then its
 * rank, in lk_b.
 */
static void match_any_ph(filt_ws_t *ws, uint32_t part, size_t n, filt_stats_t *st)
{
	const idx_part_t *pt = &ws->x->part[part];
	uint32_t is32 = pt->red_nb32 != NULL;
	const uint8_t *g = pt->blk_g;
	size_t k;

	for (k = 0; k < n + 4 * ANY_D; k++) {
		size_t k1 = k - ANY_D, k2 = k - 2 * ANY_D, k3 = k - 3 * ANY_D, k4 = k - 4 * ANY_D;

		if (k < n) {
			ws->lk_a[k] = ws->lk_r[k] > 0;
			PF(pt->blk_start + ws->lk_code[k]);
			PF(pt->blk_seed + ws->lk_code[k]);
			PF(pt->blk_roff + ws->lk_code[k]);
			PF(pt->red_start + ws->lk_code[k]);
		}
		if (k1 < n) {
			uint32_t code = ws->lk_code[k1], base = pt->blk_start[code];
			uint32_t m = pt->blk_start[code + 1] - base, *v = ws->lk_b + 3 * k1;
			bdz_hash_t hh;

			if (m == 0)
				ws->lk_a[k1] = 2;
			if (ws->lk_a[k1] == 0) {
				hh = bdz_hash(ws->lk_q[k1], idx_blk_seed(pt, code));
				v[0] = base + bdz_vertex(hh, m / 3u, 0u);
				v[1] = base + bdz_vertex(hh, m / 3u, 1u);
				v[2] = base + bdz_vertex(hh, m / 3u, 2u);
				PF(g + (v[0] >> 2));
				PF(g + (v[1] >> 2));
				PF(g + (v[2] >> 2));
			}
		}
		if (k2 < n && ws->lk_a[k2] == 0) {
			const uint32_t *v = ws->lk_b + 3 * k2, code = ws->lk_code[k2];
			uint32_t sm = bdz_g_get(g[v[0] >> 2], v[0] & 3u)
				+ bdz_g_get(g[v[1] >> 2], v[1] & 3u)
				+ bdz_g_get(g[v[2] >> 2], v[2] & 3u);

			ws->lk_b[3 * k2] = v[sm % 3u];   /* the slot */
			PF(pt->blk_rank + pt->blk_roff[code] + ((uint64_t)(ws->lk_b[3 * k2] - pt->blk_start[code])
				* idx_rank_width(pt->red_start[code + 1] - pt->red_start[code]) >> 5));
		}
		if (k3 < n && ws->lk_a[k3] == 0) {
			uint32_t j = (uint32_t)idx_blk_rank(pt, ws->lk_code[k3], ws->lk_b[3 * k3]);

			ws->lk_b[3 * k3] = j;   /* the rank of the slot's key */
			pf_key(pt, is32, j);
		}
		if (k4 < n && ws->lk_a[k4] == 0) {
			uint32_t j = ws->lk_b[3 * k4];

			st->items++;
			if (filt_key(pt->red_nb32, pt->red_nb, is32, j) == ws->lk_q[k4])
				any_hit(ws, part, pt, j, (uint32_t)k4, st);
		} else if (k4 < n && ws->lk_a[k4] == 1) {
			uint32_t code = ws->lk_code[k4], base = pt->blk_start[code];
			uint32_t m = pt->blk_start[code + 1] - base, nw, t;

			nw = filt_degen_words(ws->words, ws->lk_q[k4], ws->v, ws->lk_r[k4]);
			if (ws->pat[ws->lk_pat[k4]].fixq)
				nw = filt_fix_words(ws->words, nw, ws->lk_q[k4],
						ws->pat[ws->lk_pat[k4]].fixq);
			st->items += nw;
			filt_bdz_slots(ws->words, nw, idx_blk_seed(pt, code), base, m / 3u, g, ws->slot,
					ws->simd);
			for (t = 0; t < nw; t++) {
				uint32_t j = (uint32_t)idx_blk_rank(pt, code, ws->slot[t]);

				if (filt_key(pt->red_nb32, pt->red_nb, is32, j) == ws->words[t])
					any_hit(ws, part, pt, j, (uint32_t)k4, st);
			}
		}
	}
}

void filt_match_any(filt_ws_t *ws, filt_stats_t *st)
{
	size_t n = any_lookups(ws);
	uint32_t part;

	for (part = ws->p0; part < ws->p1; part++)
		if (ws->o.method == FILT_BS)
			match_any_bs(ws, part, n, st);
		else
			match_any_ph(ws, part, n, st);
}
