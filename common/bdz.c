/*
 * bdz.c - BDZ perfect hash construction for one key set (see bdz.h).
 *
 * Peeling uses the xor trick: per vertex its degree and the xor of its
 * incident edge numbers, so a vertex of degree 1 names its last edge.
 */
#include "bdz.h"

#include <stdlib.h>
#include <string.h>

#include "inc_bdz.h"
#include "util.h"

static void reserve(bdz_work_t *w, size_t nv, size_t ne)
{
	if (nv > w->cap_v) {
		free(w->deg); free(w->xr); free(w->g); free(w->queue);
		w->cap_v = nv + nv / 2 + 16;
		w->deg = sp_malloc(w->cap_v * sizeof *w->deg);
		w->xr = sp_malloc(w->cap_v * sizeof *w->xr);
		w->queue = sp_malloc(w->cap_v * sizeof *w->queue);
		w->g = sp_malloc(w->cap_v);
	}
	if (ne > w->cap_e) {
		free(w->order); free(w->which);
		w->cap_e = ne + ne / 2 + 16;
		w->order = sp_malloc(w->cap_e * 3 * sizeof *w->order);
		w->which = sp_malloc(w->cap_e);
	}
}

int bdz_build(bdz_work_t *w, const uint64_t *keys, uint32_t nkeys, uint32_t block,
		uint32_t *seed, uint32_t *slot, uint32_t *attempts)
{
	uint32_t r = bdz_part_size(nkeys), m = 3 * r, att;

	*attempts = 0;
	if (nkeys == 0) {
		*seed = 0;
		return 0;
	}
	reserve(w, m, nkeys);
	for (att = 0; att < BDZ_ATTEMPTS; att++) {
		/* order doubles as edge storage: 3 vertices per edge, then peel order */
		uint32_t *ev = w->order, k, qh = 0, qt = 0, npeeled = 0, *peel;
		uint32_t s = bdz_seed(block, att);

		*attempts = att + 1;
		memset(w->deg, 0, m * sizeof *w->deg);
		memset(w->xr, 0, m * sizeof *w->xr);
		for (k = 0; k < nkeys; k++) {
			bdz_hash_t h = bdz_hash(keys[k], s);
			unsigned i;

			for (i = 0; i < 3; i++) {
				uint32_t v = bdz_vertex(h, r, i);

				ev[3 * k + i] = v;
				w->deg[v]++;
				w->xr[v] ^= k;
			}
		}
		for (k = 0; k < m; k++) {
			w->queue[qt] = k;
			qt += w->deg[k] == 1;
		}
		/* peel order reuses slot[] (nkeys entries) */
		peel = slot;
		while (qh < qt) {
			uint32_t v = w->queue[qh++], e;
			unsigned i;

			if (w->deg[v] != 1)
				continue;
			e = w->xr[v];
			peel[npeeled++] = e;
			w->which[e] = (uint8_t)((ev[3 * e + 1] == v) + 2 * (ev[3 * e + 2] == v));
			for (i = 0; i < 3; i++) {
				uint32_t u = ev[3 * e + i];

				w->deg[u]--;
				w->xr[u] ^= e;
				w->queue[qt] = u;
				qt += w->deg[u] == 1;
			}
		}
		if (npeeled != nkeys)
			continue;
		/* g assignment in reverse peel order; 3 = unassigned (counts as 0) */
		memset(w->g, 3, m);
		for (k = nkeys; k > 0; k--) {
			uint32_t e = peel[k - 1], j = w->which[e];
			uint32_t a = ev[3 * e + (j + 1) % 3], b = ev[3 * e + (j + 2) % 3];
			uint32_t t = (w->g[a] + w->g[b]) % 3;

			w->g[ev[3 * e + j]] = (uint8_t)((j + 3 - t) % 3);
		}
		for (k = 0; k < nkeys; k++) {
			uint32_t *v = &ev[3 * k];

			slot[k] = v[bdz_pick(w->g[v[0]], w->g[v[1]], w->g[v[2]])];
		}
		*seed = att;
		return 0;
	}
	return -1;
}

void bdz_work_free(bdz_work_t *w)
{
	free(w->deg); free(w->xr); free(w->queue); free(w->g);
	free(w->order); free(w->which);
	memset(w, 0, sizeof *w);
}
