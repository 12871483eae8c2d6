/*
 * filt_match_fm.c - seedfilt's fm method on the CPU: backward search of a
 * pattern's whole window on each partition's FM-index with backtracking
 * over at most e substitutions (kernels/inc_filt_fm.h), then the rows
 * located as window positions.
 */
#include <stdlib.h>

#include "filt_priv.h"
#include "util.h"

/* FM: backward search of the window of pattern P with backtracking (inc_filt_fm.h). */
void filt_match_fm(filt_ws_t *ws, const filt_pat_t *p, filt_stats_t *st)
{
	const idx_t *x = ws->x;
	uint32_t span = x->p.span, part;

	for (part = ws->p0; part < ws->p1; part++) {
		const fm_t *fm = &x->part[part].fm;
		uint32_t nr;

		nr = ffm_search((const uint32_t *)fm->occ, fm->primary, fm->n, fm->C[0], fm->C[1],
				fm->C[2], fm->C[3], span, ws->shape_mask, x->p.l, p->code, p->q,
				p->e, (uint32_t)ws->o.any, ws->stack, ws->n_fmr_max ? ws->fmr : NULL);
		if (!ws->n_fmr_max) {   /* no bound known: count, then write */
			if (4 * (size_t)nr > ws->cap_fmr) {
				ws->cap_fmr = 4 * (size_t)nr + 64;
				free(ws->fmr);
				ws->fmr = sp_malloc(ws->cap_fmr * sizeof *ws->fmr);
			}
			ffm_search((const uint32_t *)fm->occ, fm->primary, fm->n, fm->C[0], fm->C[1],
					fm->C[2], fm->C[3], span, ws->shape_mask, x->p.l, p->code, p->q,
					p->e, (uint32_t)ws->o.any, ws->stack, ws->fmr);
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

		filt_need_hits(ws, hi - lo);
		n = idx_fm_locate(x, part, lo, hi, W, ws->hits);
		if (p->fixc || p->fixq) {   /* a variant of a pattern with N (filt_cut) */
			size_t i, m = 0;

			for (i = 0; i < n; i++) {
				uint64_t g = x->part[part].beg + ws->hits[i];

				if (!((idx_seed_code(x, g) ^ p->code) & p->fixc) &&
				    !((idx_nb_at(x, g) ^ p->q) & p->fixq))
					ws->hits[m++] = ws->hits[i];
			}
			n = m;
		}
		st->matches += n;
		filt_add_hits(ws, part, ws->hits, n, p->o, p->strand);
	}
}
