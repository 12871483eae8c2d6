/*
 * filt_match_bpr.c - seedfilt's bpr method on the CPU: mflBPR (bpr.c,
 * kernels/inc_bpr.h) scans the SeedBlock of a pattern's seed in the general
 * structure for neighborhoods that hold q with at most e edit operations.
 */
#include "filt_priv.h"

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

void filt_match_bpr(filt_ws_t *ws, const filt_pat_t *p, filt_stats_t *st)
{
	const idx_t *x = ws->x;
	uint32_t part, code = p->code;
	int ready = 0;

	for (part = 0; part < x->n_part; part++) {
		const idx_part_t *pt = &x->part[part];
		uint64_t beg = pt->gen_start[code], end = pt->gen_start[code + 1];
		size_t n, i;

		if (beg == end)
			continue;
		if (!ready) {
			bpr_pat_init_n(&ws->bp, p->q, p->nmask, ws->v, x->p.l, ws->o.e);
			ready = 1;
		}
		filt_need_hits(ws, end - beg);
		n = bpr_scan(&ws->bp, pt->gen_nb + pt->gen_wstart[code], end - beg, ws->hits);
		st->items += end - beg;
		for (i = 0; i < n; i++)
			ws->hits[i] = pt->red_pos[beg + ws->hits[i]];
		st->matches += n;
		filt_add_hits(ws, part, ws->hits, n, p->o, p->strand);
	}
}
