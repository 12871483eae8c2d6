/*
 * filt_match_bpr.c - seedfilt's bpr method on the CPU: mflBPR (bpr.c,
 * kernels/inc_bpr.h) scans the unique neighborhoods of the SeedBlock of a
 * pattern's seed (red.nb, striped on the fly: bpr_scan_keys) for those that
 * hold q with at most e edit operations, and each match stands for its
 * positions (the general structure of index format 3, idx.h).
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

	for (part = ws->p0; part < ws->p1; part++) {
		const idx_part_t *pt = &x->part[part];
		uint64_t ub = pt->red_start[code], ue = pt->red_start[code + 1], beg, end;
		uint32_t *uh;
		size_t n, i, m = 0;

		if (ub == ue)
			continue;
		if (ws->o.e >= ws->v) {
			/* q (v bases, an N costing one error) is within v <= e edit
			 * operations of any neighborhood: every key matches, and
			 * their positions in key order are the block's, red.pos
			 * [nbpos(ub), nbpos(ue)), as the scan below would list them
			 * (-E chooses this for short reads: seeds alone, q a tail) */
			beg = idx_nbpos(pt, ub);
			end = idx_nbpos(pt, ue);
			st->items += end - beg;
			st->matches += end - beg;
			filt_add_hits(ws, part, pt->red_pos + beg, end - beg, p->o, p->strand);
			continue;
		}
		if (!ready) {
			bpr_pat_init_n(&ws->bp, p->q, p->nmask, ws->v, x->p.l, ws->o.e);
			ready = 1;
		}
		/* the matching keys' indexes after room for all the block's positions */
		beg = idx_nbpos(pt, ub);
		end = idx_nbpos(pt, ue);
		/* the matches' positions are read after the scan: start their
		 * lines now (stage 1 of the prefetches cannot: it has no nbpos) */
		PF(pt->red_pos + beg);
		PF(pt->red_pos + end - 1);
		filt_need_hits(ws, (end - beg) + (ue - ub));
		uh = ws->hits + (end - beg);
		n = bpr_scan_keys(&ws->bp, pt->red_nb32 ? pt->red_nb32 + ub : NULL,
				pt->red_nb32 ? NULL : pt->red_nb + ub, ue - ub, uh);
		st->items += end - beg;
		/* key j stands for the positions red_pos[nbpos(j) .. nbpos(j+1)):
		 * in key order these are the block's occurrence order */
		for (i = 0; i < n; i++) {
			uint64_t j = ub + uh[i], pb = idx_nbpos(pt, j), pe = idx_nbpos(pt, j + 1);

			do   /* a key has one position or more; mostly one (no memcpy call) */
				ws->hits[m++] = pt->red_pos[pb];
			while (++pb < pe);
		}
		st->matches += m;
		filt_add_hits(ws, part, ws->hits, m, p->o, p->strand);
	}
}
