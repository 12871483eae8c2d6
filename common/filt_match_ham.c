/*
 * filt_match_ham.c - seedfilt's bs and ph methods on the CPU: every word
 * within Hamming distance e of q is looked up in the SeedBlock of the
 * pattern's seed, by binary search in the reduced structure (bs) or through
 * the BDZ perfect hash of the indexed blocks (ph).
 */
#include "filt_priv.h"
#include "inc_filt.h"

void filt_match_ham(filt_ws_t *ws, const filt_pat_t *p, filt_stats_t *st)
{
	const idx_t *x = ws->x;
	uint32_t part, ph = ws->o.method == FILT_PH, nw = 0, k, code = p->code;
	const uint64_t *wd = ws->words;
	uint32_t *slot = ws->slot;

	for (part = ws->p0; part < ws->p1; part++) {
		const idx_part_t *pt = &x->part[part];
		uint64_t lo = pt->red_start[code], hi = pt->red_start[code + 1];
		uint32_t is32 = pt->red_nb32 != NULL;

		if (lo == hi)
			continue;
		if (!nw) {
			nw = filt_degen_words(ws->words, p->q, ws->wv, p->e);
			if (p->fixq)
				nw = filt_fix_words(ws->words, nw, p->q, p->fixq);
		}
		st->items += nw;
		if (ph) {
			/* filt_bdz_find, split: all slots first (no branch), then the keys */
			uint32_t base = pt->blk_start[code], m = pt->blk_start[code + 1] - base;
			uint32_t r = m / 3u;

			if (m == 0)
				continue;
			filt_bdz_slots(wd, nw, idx_blk_seed(pt, code), base, r, pt->blk_g, slot, ws->simd);
			for (k = 0; k < nw; k++) {
				uint32_t j = (uint32_t)idx_blk_rank(pt, code, slot[k]);

				if (filt_key(pt->red_nb32, pt->red_nb, is32, j) == wd[k])
					filt_rank_hits(ws, part, pt, j, p->o, p->strand, st);
			}
		} else {
			for (k = 0; k < nw; k++) {
				uint64_t j = filt_bsearch_cmov(pt->red_nb32, pt->red_nb, is32, lo, hi,
						wd[k]);

				if (j != hi)
					filt_rank_hits(ws, part, pt, j, p->o, p->strand, st);
			}
		}
	}
}
