/*
 * filt_cut.c - the patterns of a read (filt_cut: seed code, q, offset,
 * strand, N positions) and the prefetches that let the index lookups of a
 * read, and of the reads that come next, overlap (filt_prefetch).
 */
#include <stdlib.h>
#include <string.h>

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
 * A strand's bases packed 2 bits each (N as A), 32 to a word, so that any
 * window's q or contiguous seed code is one or two loads and shifts
 * (pk_bases) instead of a loop over its bases: pk_words words hold LEN
 * bases and a spare word that pk_bases may read.
 */
static inline size_t pk_words(size_t len)
{
	return len / 32 + 2;
}

/* Base I of the packed strand PK is C & 3 (PK zeroed before). */
static inline void pk_put(uint64_t *pk, uint32_t i, uint32_t c)
{
	pk[i >> 5] |= (uint64_t)(c & 3) << (2 * (i & 31));
}

/* N <= 32 bases from POS of the packed strand PK, base j in bits 2j, 2j+1. */
static inline uint64_t pk_bases(const uint64_t *pk, uint32_t pos, uint32_t n)
{
	uint32_t b = 2 * pos, sh = b & 63;
	uint64_t x = pk[b >> 6] >> sh;

	if (sh)
		x |= pk[(b >> 6) + 1] << (64 - sh);
	return n >= 32 ? x : x & ((1ULL << (2 * n)) - 1);
}

/* The seed code at O of strand C, packed PK: pk_bases for a contiguous shape. */
static inline uint32_t seed_code_pk(const idx_t *x, const uint8_t *c, const uint64_t *pk, uint32_t o)
{
	return x->p.span == x->p.w ? (uint32_t)pk_bases(pk, o, x->p.w) : seed_code(x, c, o);
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

/*
 * Stage 0: the start-list entries of seed CODE in partition PT.  This and
 * PF_BLOCK are macros, not inline functions: GCC takes a function whose
 * only effect is __builtin_prefetch for one without side effects and
 * deletes its calls (a loop-free static inline one is marked const), which
 * left filt_prefetch_pats empty, every prefetch of the native filter gone.
 */
#define PF_START(ws, pt, code) do { \
	if ((pt)->red_start) { \
		PF((pt)->red_start + (code)); \
		if ((ws)->o.method == FILT_PH && (pt)->blk_start) { \
			PF((pt)->blk_start + (code)); \
			PF((pt)->blk_seed + (code)); \
			PF((pt)->blk_roff + (code)); \
		} \
	} \
} while (0)

/*
 * Stage 1: the first and last line of each array range of SeedBlock(CODE)
 * in PT (a block may straddle two); reads the start lists.
 */
#define PF_BLOCK(ws, pt, code) do { \
	uint32_t lo_ = (pt)->red_start[code], hi_ = (pt)->red_start[(code) + 1]; \
	\
	if ((ws)->o.method == FILT_PH) { \
		uint32_t b_ = (pt)->blk_start[code], e_ = (pt)->blk_start[(code) + 1]; \
		\
		if (b_ != e_) { \
			PF((pt)->blk_g + (b_ >> 2)); \
			PF((pt)->blk_g + ((e_ - 1) >> 2)); \
			PF((pt)->blk_rank + (pt)->blk_roff[code]); \
			PF((pt)->blk_rank + (pt)->blk_roff[(code) + 1]); \
		} \
	} \
	if (lo_ != hi_) {   /* the keys (with ph: those the slots' ranks name) */ \
		if ((pt)->red_nb32) { \
			PF((pt)->red_nb32 + lo_); \
			PF((pt)->red_nb32 + hi_ - 1); \
		} else { \
			PF((pt)->red_nb + lo_); \
			PF((pt)->red_nb + hi_ - 1); \
		} \
		PF((pt)->red_grp + 4 * (lo_ >> 6)); \
		PF((pt)->red_grp + 4 * (hi_ >> 6)); \
	} \
} while (0)

void filt_prefetch_pats(const filt_ws_t *ws, const filt_pat_t *pat, uint32_t np, int stage)
{
	const idx_t *x = ws->x;
	uint32_t i, part;

	for (part = ws->p0; part < ws->p1; part++) {
		const idx_part_t *pt = &x->part[part];

		for (i = 0; i < np; i++) {
			if (stage == 0)
				PF_START(ws, pt, pat[i].code);
			else
				PF_BLOCK(ws, pt, pat[i].code);
		}
	}
}

/* Neighborhoods in SeedBlock(CODE) over WS's partitions (Tran's nps count). */
static uint64_t block_size(const filt_ws_t *ws, uint32_t code)
{
	const idx_t *x = ws->x;
	uint64_t n = 0;
	uint32_t i;

	for (i = ws->p0; i < ws->p1; i++) {
		const idx_part_t *pt = &x->part[i];

		if (pt->red_start)
			n += idx_nbpos(pt, pt->red_start[code + 1]) - idx_nbpos(pt, pt->red_start[code]);
	}
	return n;
}

/* Room for N more patterns in WS->pat. */
static void need_pats(filt_ws_t *ws, uint32_t n)
{
	if (ws->n_pat + n <= ws->cap_pat)
		return;
	ws->cap_pat = (ws->n_pat + n) * 2;
	ws->pat = sp_realloc(ws->pat, ws->cap_pat * sizeof *ws->pat);
}

/*
 * A Hamming method (bs, ph, fm) and a window with N at O of bases C: an N
 * matches no base, so it costs one error.  Without -a an N in the seed's
 * '#' positions kills the pattern (as an error there does); every N of q,
 * and with -a of the seed too, is replaced by each of A, C, G, T with one
 * error less left for the rest: the 4^k variants of k Ns, budget e - k,
 * find together exactly the windows within e errors when N mismatches
 * every base.  Returns the variants added, 0 when the pattern is dead.
 */
static uint32_t cut_n(filt_ws_t *ws, const uint8_t *c, uint32_t o, uint32_t strand)
{
	const idx_t *x = ws->x;
	uint32_t npos[FILT_MAX_E_HAM + 1], k = 0, j, nv, v;
	uint32_t code = 0;
	uint64_t q = 0;

	for (j = 0; j < x->p.w; j++) {
		uint8_t b = c[o + x->p.shape_pos[j]];

		if (b > 3) {
			if (!ws->o.any || k == ws->o.e)
				return 0;
			npos[k++] = j;
		}
		code |= (uint32_t)(b & 3) << (2 * j);
	}
	for (j = 0; j < ws->v; j++) {
		uint8_t b = c[o + x->p.span + j];

		if (b > 3) {
			if (k == ws->o.e)
				return 0;
			npos[k++] = x->p.w + j;   /* q's positions after the seed's */
		}
		q |= (uint64_t)(b & 3) << (2 * j);
	}
	nv = 1u << (2 * k);
	need_pats(ws, nv);
	for (v = 0; v < nv; v++) {
		filt_pat_t *p = &ws->pat[ws->n_pat++];

		p->code = code;
		p->q = q;
		for (j = 0; j < k; j++) {
			uint32_t b = (v >> (2 * j)) & 3, t = npos[j];

			if (t < x->p.w)
				p->code = (p->code & ~(3u << (2 * t))) | b << (2 * t);
			else
				p->q = (p->q & ~(3ull << (2 * (t - x->p.w)))) |
					(uint64_t)b << (2 * (t - x->p.w));
		}
		p->nmask = 0;
		p->fixq = 0;
		p->fixc = 0;
		for (j = 0; j < k; j++) {
			if (npos[j] < x->p.w)
				p->fixc |= 3u << (2 * npos[j]);
			else
				p->fixq |= 3ull << (2 * (npos[j] - x->p.w));
		}
		p->e = ws->o.e - k;
		p->o = o;
		p->strand = strand;
	}
	return nv;
}

uint32_t filt_fix_words(uint64_t *w, uint32_t n, uint64_t center, uint64_t fix)
{
	uint32_t i, m = 0;

	for (i = 0; i < n; i++)
		if (!((w[i] ^ center) & fix))
			w[m++] = w[i];
	return m;
}

void filt_set_pats(filt_ws_t *ws, const filt_pat_t *pat, uint32_t n)
{
	ws->n_pat = 0;
	need_pats(ws, n);
	if (n)
		memcpy(ws->pat, pat, n * sizeof *pat);
	ws->n_pat = n;
}

void filt_add_pat(filt_ws_t *ws, const filt_pat_t *p)
{
	need_pats(ws, 1);
	ws->pat[ws->n_pat++] = *p;
}

void filt_count_nbs(const filt_ws_t *ws, const filt_pat_t *pat, uint32_t np, filt_stats_t *st)
{
	uint32_t i;

	for (i = 0; i < np && !ws->o.any; i++)   /* -a: counted by match_any_bs */
		st->nbs += block_size(ws, pat[i].code);
}

uint32_t filt_cut(filt_ws_t *ws, const char *seq, uint32_t len,
		const filt_pat_t **pats, filt_stats_t *st)
{
	uint32_t n = filt_cut_pats(ws, seq, len, pats, st);

	filt_count_nbs(ws, *pats, n, st);
	return n;
}

uint32_t filt_cut_pats(filt_ws_t *ws, const char *seq, uint32_t len,
		const filt_pat_t **pats, filt_stats_t *st)
{
	const idx_t *x = ws->x;
	uint32_t span = x->p.span, win = ws->win, strand, o, i;
	size_t pw;

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
		free(ws->pk);
		ws->code[0] = sp_malloc(2 * ws->cap_len);
		ws->ncnt = sp_malloc((ws->cap_len + 1) * sizeof *ws->ncnt);
		ws->pk = sp_malloc(2 * pk_words(ws->cap_len) * sizeof *ws->pk);
	}
	pw = pk_words(ws->cap_len);
	memset(ws->pk, 0, pk_words(len) * sizeof *ws->pk);
	memset(ws->pk + pw, 0, pk_words(len) * sizeof *ws->pk);
	ws->code[1] = ws->code[0] + ws->cap_len;
	ws->ncnt[0] = 0;
	for (i = 0; i < len; i++) {
		uint8_t c = seqio_nt4[(unsigned char)seq[i]];

		ws->code[0][i] = c;
		ws->code[1][len - 1 - i] = c < 4 ? 3 - c : 4;
		ws->ncnt[i + 1] = ws->ncnt[i] + (c > 3);
		pk_put(ws->pk, i, c);
		pk_put(ws->pk + pw, len - 1 - i, c < 4 ? 3 - c : 0);
	}
	need_pats(ws, 2 * (len - win + 1));
	for (strand = 0; strand < 2; strand++) {
		const uint8_t *c = ws->code[strand];
		const uint64_t *pk = ws->pk + strand * pw;

		for (o = 0; o + win <= len; o += ws->o.step) {
			filt_pat_t *p;
			uint32_t j;
			/* N count of [o, o+win) of this strand, from the forward counts */
			uint32_t a = strand ? len - o - win : o, nmask = 0;

			if (ws->ncnt[a + win] - ws->ncnt[a]) {
				/* bpr: an N in q matches no base; an N in the seed skips it */
				uint32_t sa = strand ? len - o - span : o;

				if (ws->o.method != FILT_BPR) {
					if (!cut_n(ws, c, o, strand)) {
						st->skipped_n++;
						continue;
					}
					st->kept_n++;
					st->patterns++;
					continue;
				}
				if (ws->ncnt[sa + span] - ws->ncnt[sa]) {
					st->skipped_n++;
					continue;
				}
				for (j = 0; j < ws->v; j++)
					nmask |= (uint32_t)(c[o + span + j] > 3) << j;
				st->kept_n++;
			}
			need_pats(ws, 1);
			p = &ws->pat[ws->n_pat];
			st->patterns++;
			p->nmask = nmask;
			p->e = ws->o.e;
			p->fixq = 0;
			p->fixc = 0;
			p->q = pk_bases(pk, o + span, ws->v);   /* an N as A, masked by nmask */
			p->code = seed_code_pk(x, c, pk, o);
			p->o = o;
			p->strand = strand;
			ws->n_pat++;
		}
	}
	*pats = ws->pat;
	filt_prefetch_pats(ws, ws->pat, ws->n_pat, 0);
	return ws->n_pat;
}

void filt_prefetch(filt_ws_t *ws, const char *seq, uint32_t len, int stage)
{
	const idx_t *x = ws->x;
	uint32_t win = ws->win, np = 0, strand, o, i;
	size_t pw;

	if (ws->o.method == FILT_FM || ws->o.any || len < win)
		return;   /* -a: match_any prefetches within the read */
	if (len > ws->cap_pf) {
		ws->cap_pf = len + 64;
		free(ws->pf_code);
		free(ws->pf_pat);
		free(ws->pf_pk);
		ws->pf_code = sp_malloc(2 * ws->cap_pf);
		ws->pf_pat = sp_malloc(2 * ws->cap_pf * sizeof *ws->pf_pat);
		ws->pf_pk = sp_malloc(2 * pk_words(ws->cap_pf) * sizeof *ws->pf_pk);
	}
	pw = pk_words(ws->cap_pf);
	memset(ws->pf_pk, 0, pk_words(len) * sizeof *ws->pf_pk);
	memset(ws->pf_pk + pw, 0, pk_words(len) * sizeof *ws->pf_pk);
	for (i = 0; i < len; i++) {   /* N as A: only the addresses matter */
		uint8_t c = seqio_nt4[(unsigned char)seq[i]] & 3;

		ws->pf_code[i] = c;
		ws->pf_code[ws->cap_pf + len - 1 - i] = 3 - c;
		pk_put(ws->pf_pk, i, c);
		pk_put(ws->pf_pk + pw, len - 1 - i, 3u - c);
	}
	for (strand = 0; strand < 2; strand++) {
		const uint8_t *c = ws->pf_code + strand * ws->cap_pf;
		const uint64_t *pk = ws->pf_pk + strand * pw;

		for (o = 0; o + win <= len; o += ws->o.step)
			ws->pf_pat[np++].code = seed_code_pk(x, c, pk, o);
	}
	filt_prefetch_pats(ws, ws->pf_pat, np, stage);
}
