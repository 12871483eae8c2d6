/*
 * filt_read.c - the candidates of one read on the CPU: cut its patterns,
 * match them by the run's method, sort and reduce the matches (filt.h).
 */
#include "filt_priv.h"

/* Match the patterns WS->pat[0..NP) of the current read by the run's method. */
static void match_pats(filt_ws_t *ws, const filt_pat_t *pat, uint32_t np, filt_stats_t *st)
{
	uint32_t i;

	if (ws->o.any && ws->o.method != FILT_FM) {
		filt_match_any(ws, st);
		return;
	}
	if (ws->o.method != FILT_FM)
		filt_prefetch_pats(ws, pat, np, 1);
	for (i = 0; i < np; i++) {
		const filt_pat_t *p = &pat[i];

		switch (ws->o.method) {
		case FILT_BPR:
			filt_match_bpr(ws, p, st);
			break;
		case FILT_BS:
		case FILT_PH:
			filt_match_ham(ws, p, st);
			break;
		case FILT_FM:
			filt_match_fm(ws, p, st);
			break;
		}
	}
}

uint32_t filt_read(filt_ws_t *ws, const char *seq, uint32_t len,
		rec_cand_t **out, filt_stats_t *st)
{
	const filt_pat_t *pat;
	uint32_t np = filt_cut_pats(ws, seq, len, &pat, st);
	uint64_t items = st->items;

	match_pats(ws, pat, np, st);
	/* bpr's items are the neighborhoods of the patterns' SeedBlocks: it
	 * counts each block's (red.pos range) once, no second nbpos lookup */
	if (ws->o.method == FILT_BPR)
		st->nbs += st->items - items;
	else
		filt_count_nbs(ws, pat, np, st);
	return filt_finish(ws, out, st);
}

void filt_match_host(filt_ws_t *ws, const filt_pat_t *pat, uint32_t np, filt_stats_t *st)
{
	uint32_t i, n = 0;

	for (i = 0; i < np; i++)
		if (pat[i].e < ws->o.e && n++ == 0)
			filt_set_pats(ws, NULL, 0);
	if (!n)
		return;
	for (i = 0; i < np; i++)
		if (pat[i].e < ws->o.e)
			filt_add_pat(ws, &pat[i]);
	match_pats(ws, ws->pat, n, st);
}
