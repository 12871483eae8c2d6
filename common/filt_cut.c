/*
 * filt_cut.c - the patterns of a read (filt_cut: seed code, q, offset,
 * strand, N positions) and the prefetches that let the index lookups of a
 * read, and of the reads that come next, overlap (filt_prefetch).
 */
#include <stdlib.h>

#include "filt_priv.h"
#include "seqio.h"
#include "util.h"

/* The seed code of the window at O of the bases C (0..3; the shape's '#'s). */
static inline uint32_t seed_code(const idx_t *x, const uint8_t *c, uint32_t o)
{
	uint32_t code = 0, j;

	for (j = 0; j < x->p.w; j++)
		code |= (uint32_t)c[o + x->p.shape_pos[j]] << (2 * j);
	return code;
}

/*
 * Memory-level parallelism.  Each pattern touches a few random cache lines
 * of the index (its start-list entries, then its SeedBlock's keys, g values,
 * ranks and positions), and one lookup depends on the previous load.  Done
 * pattern by pattern the misses come one at a time; instead all patterns of
 * a read first prefetch their start-list entries (stage 0), then their
 * blocks (stage 1: filt_prefetch_pats), so the misses overlap.  Prefetches
 * change no result.
 */

/* Stage 0: the start-list entries of seed CODE in partition PT. */
static inline void prefetch_start(const filt_ws_t *ws, const idx_part_t *pt, uint32_t code)
{
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

/*
 * Stage 1: the first and last line of each array range of SeedBlock(CODE)
 * in PT (a block may straddle two); reads the start lists.
 */
static inline void prefetch_block(const filt_ws_t *ws, const idx_part_t *pt, uint32_t code)
{
	if (ws->o.method == FILT_BPR) {
		uint32_t b = pt->gen_start[code], e = pt->gen_start[code + 1];
		uint32_t wb = pt->gen_wstart[code], we = pt->gen_wstart[code + 1];

		if (b == e)
			return;
		PF(pt->gen_nb + wb);
		PF(pt->gen_nb + we - 1);
		PF(pt->red_pos + b);
		PF(pt->red_pos + e - 1);
	} else if (ws->o.method == FILT_PH) {
		uint32_t b = pt->blk_start[code], e = pt->blk_start[code + 1];
		uint32_t lo = pt->red_start[code], hi = pt->red_start[code + 1];

		if (b == e)
			return;
		PF(pt->blk_g + (b >> 2));
		PF(pt->blk_g + ((e - 1) >> 2));
		if (pt->red_nb32) {   /* the keys the slots' ranks name */
			PF(pt->red_nb32 + lo);
			PF(pt->red_nb32 + hi - 1);
		} else {
			PF(pt->red_nb + lo);
			PF(pt->red_nb + hi - 1);
		}
		PF(pt->blk_rank + ((uint64_t)b * pt->rank_bits >> 5));
		PF(pt->blk_rank + ((uint64_t)(e - 1) * pt->rank_bits >> 5));
		PF(pt->red_grp + 4 * (lo >> 6));
		PF(pt->red_grp + 4 * (hi >> 6));
	} else {
		uint32_t lo = pt->red_start[code], hi = pt->red_start[code + 1];

		if (lo == hi)
			return;
		if (pt->red_nb32) {
			PF(pt->red_nb32 + lo);
			PF(pt->red_nb32 + hi - 1);
		} else {
			PF(pt->red_nb + lo);
			PF(pt->red_nb + hi - 1);
		}
		PF(pt->red_grp + 4 * (lo >> 6));
		PF(pt->red_grp + 4 * (hi >> 6));
	}
}

void filt_prefetch_pats(const filt_ws_t *ws, const filt_pat_t *pat, uint32_t np, int stage)
{
	const idx_t *x = ws->x;
	uint32_t i, part;

	for (part = 0; part < x->n_part; part++) {
		const idx_part_t *pt = &x->part[part];

		for (i = 0; i < np; i++) {
			if (stage == 0)
				prefetch_start(ws, pt, pat[i].code);
			else
				prefetch_block(ws, pt, pat[i].code);
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
			n += idx_nbpos(pt, pt->red_start[code + 1]) - idx_nbpos(pt, pt->red_start[code]);
	}
	return n;
}

uint32_t filt_cut(filt_ws_t *ws, const char *seq, uint32_t len,
		const filt_pat_t **pats, filt_stats_t *st)
{
	const idx_t *x = ws->x;
	uint32_t span = x->p.span, win = ws->win, strand, o, i;

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
			uint32_t j;
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
			for (j = 0; j < ws->v; j++)
				q |= (uint64_t)(c[o + span + j] & 3) << (2 * j);
			p->nmask = nmask;
			p->q = q;
			p->code = seed_code(x, c, o);
			p->o = o;
			p->strand = strand;
			ws->n_pat++;
		}
	}
	filt_prefetch_pats(ws, ws->pat, ws->n_pat, 0);
	for (i = 0; i < ws->n_pat && !ws->o.any; i++)   /* -a: counted by match_any_bs */
		st->nbs += block_size(x, ws->pat[i].code);
	return ws->n_pat;
}

void filt_prefetch(filt_ws_t *ws, const char *seq, uint32_t len, int stage)
{
	const idx_t *x = ws->x;
	uint32_t win = ws->win, np = 0, strand, o, i;

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

		for (o = 0; o + win <= len; o += ws->o.step)
			ws->pf_pat[np++].code = seed_code(x, c, o);
	}
	filt_prefetch_pats(ws, ws->pf_pat, np, stage);
}
