/*
 * filt_scheme.c - a pattern set for short reads whose patterns each have
 * their own q and their own error budget (filt.h, filt_scheme_t): the read
 * is cut into pieces, each allowed 0 or 1 edit operations, so that with at
 * most E edits in the read some piece holds no more than its allowance;
 * each piece has one or two patterns that survive whenever it does.
 *
 * Edits as slots.  An alignment of the read (m bases) with the reference
 * is a set of edit operations, each at a slot: a substitution or an
 * insertion at read position i (slot 2i), a deletion of reference bases
 * between read positions g-1 and g (gap g, 1 <= g < m: slot 2g - 1).  A read
 * range [a, b) in which no slot of [2a, 2b - 2] holds an edit is copied
 * exactly from the reference.
 *
 * A pattern (o, x, v, e): seed at offset o (span bases, the index's shape),
 * q = the v bases after it; a neighborhood t (l bases after a seed
 * occurrence) matches when q[0..x) = t[0..x) and q[x..v) is within e edit
 * operations of a prefix of t[x..l) (anchored at the seed's end; v + e <=
 * l, so any prefix fits).  The pattern is alive for an alignment when the
 * slots [2o, 2(o + span + x) - 2] (seed, exact part) hold no edit and
 * [2(o + span + x) - 1, 2(o + span + v) - 2] hold at most e: then the read's
 * window aligns to the seed occurrence at its diagonal, and the pattern
 * matches its neighborhood.
 *
 * Pieces.  [a_j, b_j) owns the slots [2a_j - 1, 2b_j - 2] (its positions and
 * the gaps before them; gap 0 does not exist), so the pieces share no slot;
 * piece j is allowed t_j in {0, 1} edits and sum (t_j + 1) = E + 1, so with
 * at most E edits some piece j holds at most t_j of its slots' edits
 * (pigeonhole).  Its patterns:
 *   t = 0: P = (a, x, v, e) with x = min(b - a - span, l) exact bases in
 *          the piece, then (when it pays) a tail reaching past b with the
 *          read's E edits: alive whenever the piece is clean.
 *   t = 1: A = (a, 0, min(b - a - span, l - 1), 1): alive unless the edit
 *          lies in A's seed; then [a + span, b) is clean and
 *          B = (a + span, x, v, E - 1), x = min(b - a - 2 span, l) is
 *          alive (its tail past b holds at most E - 1 edits).
 * So every alignment within E edits leaves a live pattern: a candidate.
 * The unit test (filt_scheme_test) checks this by brute force over every
 * multiset of E slots, and the matcher against a dynamic program.
 *
 * Of the piece layouts (at most three pieces, every boundary), the one of
 * least model cost is taken: per pattern a fixed cost, the SeedBlock's
 * keys checked, and the chance matches of a random genome (each a
 * candidate that extend aligns).  Deterministic: extend rebuilds it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "degen.h"
#include "filt_priv.h"
#include "seqio.h"
#include "util.h"

/* model costs (microseconds), as filt_plan.c's */
#define S_PAT 0.5        /* cutting, prefetching, reducing a pattern */
#define S_KEY0 0.003     /* a key's exact-prefix check */
#define S_SHIFT 0.003    /* a key's shifted compare, per shift */
#define S_CELL 0.002     /* a cell of the tail's dynamic program */
#define S_MATCH 0.25     /* a match: sorted, reduced, verified by extend */

/* Chance that a random neighborhood matches pattern P. */
static double pat_chance(const filt_spat_t *p)
{
	double c = ldexp(1.0, -2 * (int)p->x);

	if (p->e) {
		uint32_t n = p->v - p->x;
		double t = (double)degen_ball(n, p->e) * (2.0 * p->e + 1) / ldexp(1.0, 2 * (int)n);

		c *= t < 1 ? t : 1;
	}
	return c;
}

/*
 * A random key's check: the exact part, then (for the 4^-x that pass) the
 * shifted compares of the tail, then (for those that leave at most e bases
 * unmatched by every shift) the dynamic program.
 */
static double key_cost(const filt_spat_t *p)
{
	uint32_t n = p->v - p->x, k;
	double u = pow(0.75, 2.0 * p->e + 1), pass = 0, binom = 1;

	if (!p->e)
		return S_KEY0;
	if (p->e == 1)   /* three shifted compares decide it */
		return S_KEY0 + ldexp(1.0, -2 * (int)p->x) * S_SHIFT * 3;
	for (k = 0; k <= p->e && k <= n; k++) {
		pass += binom * pow(u, k) * pow(1 - u, (double)(n - k));
		binom = binom * (double)(n - k) / (double)(k + 1);
	}
	return S_KEY0 + ldexp(1.0, -2 * (int)p->x) *
		(S_SHIFT * (2.0 * p->e + 1) + pass * S_CELL * n * (n + p->e));
}

/* Pattern costs by (x, v, e), computed once each (memo; 0: not yet). */
typedef struct {
	double block;
	double c[FILT_SCHEME_MAXLEN + 1][33][6];
} memo_t;

static double pat_cost(const filt_spat_t *p, memo_t *mo)
{
	double *c = &mo->c[p->x][p->v][p->e];

	if (*c == 0)
		*c = S_PAT + mo->block * key_cost(p) + S_MATCH * mo->block * pat_chance(p);
	return *c;
}

/*
 * The pattern of a clean stretch: seed at O, X exact bases, then the
 * cheaper of stopping there and a tail of up to the read's end (M) with E
 * edits (v + e <= L).
 */
static filt_spat_t clean_pat(uint32_t o, uint32_t x, uint32_t m, uint32_t span, uint32_t l,
		uint32_t e, memo_t *block)
{
	filt_spat_t a = { (uint16_t)o, (uint16_t)x, (uint16_t)x, 0 }, b = a;
	uint32_t v = m - o - span;

	if (e < l) {
		if (v > l - e)
			v = l - e;
		if (v > x) {
			b.v = (uint16_t)v;
			b.e = (uint16_t)e;
			if (!e)
				b.x = b.v;   /* an exact tail: one exact part */
			if (pat_cost(&b, block) < pat_cost(&a, block))
				return b;
		}
	}
	return a;
}

/* The patterns of piece [A, B) allowed T edits into S; 0, or -1 when it is too short. */
static int piece_pats(filt_scheme_t *s, uint32_t a, uint32_t b, uint32_t t, uint32_t m,
		uint32_t span, uint32_t l, uint32_t E, memo_t *block)
{
	uint32_t x;

	if (!t) {
		if (b - a < span)
			return -1;
		x = b - a - span < l ? b - a - span : l;
		s->p[s->np++] = clean_pat(a, x, m, span, l, E, block);
		return 0;
	}
	if (b - a < 2 * span || l < 2)
		return -1;
	x = b - a - span < l - 1 ? b - a - span : l - 1;
	s->p[s->np].o = (uint16_t)a;
	s->p[s->np].x = 0;
	s->p[s->np].v = (uint16_t)x;
	s->p[s->np++].e = 1;
	x = b - a - 2 * span < l ? b - a - 2 * span : l;
	s->p[s->np++] = clean_pat(a + span, x, m, span, l, E - 1, block);
	return 0;
}

/* The pieces ending at BND[1..K] (BND[0] = 0), allowances SEQ: *S and its cost; -1 if unfit. */
static int layout(filt_scheme_t *s, const uint32_t *bnd, uint32_t k, uint32_t seq, uint32_t m,
		uint32_t span, uint32_t l, uint32_t E, memo_t *block)
{
	uint32_t j;

	memset(s, 0, sizeof *s);
	for (j = 0; j < k; j++)
		if (piece_pats(s, bnd[j], bnd[j + 1], seq >> j & 1, m, span, l, E, block) < 0)
			return -1;
	for (j = 0; j < s->np; j++)
		s->cost += pat_cost(&s->p[j], block);
	s->m = m;
	s->edits = E;
	return 0;
}

int filt_scheme_make(const idx_t *x, uint32_t m, uint32_t E, filt_scheme_t *out)
{
	uint32_t span = x->p.span, l = x->p.l, k, seq, b1, b2;
	memo_t *block;
	int found = 0;

	if (m > FILT_SCHEME_MAXLEN || E + 1 > 6 || !l || l > 32 ||
			!(x->p.structs & (IDX_S_GENERAL | IDX_S_REDUCED | IDX_S_BLOCK)))
		return 0;
	block = sp_calloc(1, sizeof *block);
	block->block = (double)(x->total ? x->total : 1) / ldexp(1.0, 2 * (int)x->p.w);
	/* k pieces with allowances t_j (bit j of seq), sum (t_j + 1) = E + 1 */
	for (k = 1; k <= 3; k++)
		for (seq = 0; seq < 1u << k; seq++) {
			if (k + (uint32_t)__builtin_popcount(seq) != E + 1)
				continue;
			for (b1 = k > 1 ? 1 : m; b1 <= m; b1++)
				for (b2 = k > 2 ? b1 + 1 : m; b2 <= m; b2++) {
					uint32_t bnd[4] = { 0, b1, b2, m };
					filt_scheme_t s;

					if ((k > 1 && b1 == m) || (k > 2 && b2 == m))
						continue;
					if (k == 2)
						bnd[2] = m;
					if (k == 1)
						bnd[1] = m;
					if (layout(&s, bnd, k, seq, m, span, l, E, block) < 0)
						continue;
					if (!found || s.cost < out->cost) {
						*out = s;
						found = 1;
					}
					if (k < 3)
						break;   /* b2 does not matter */
				}
		}
	free(block);
	return found;
}

int filt_scheme_alive(const filt_scheme_t *s, uint32_t span, const uint8_t *cnt)
{
	uint32_t i, j;

	for (i = 0; i < s->np; i++) {
		const filt_spat_t *p = &s->p[i];
		uint32_t k0 = 2 * p->o, k1 = 2 * (p->o + span + p->x) - 1, k2 = 2 * (p->o + span + p->v) - 1;
		uint32_t n = 0;

		for (j = k0; j < k1 && !cnt[j]; j++)
			;
		if (j < k1)
			continue;
		for (j = k1; j < k2; j++)
			n += cnt[j];
		if (n <= p->e)
			return 1;
	}
	return 0;
}

void filt_scheme_str(const filt_scheme_t *s, char *buf, size_t len)
{
	size_t used = 0;
	uint32_t i;

	buf[0] = 0;
	for (i = 0; i < s->np && used < len; i++) {
		const filt_spat_t *p = &s->p[i];

		if (p->e)
			used += (size_t)snprintf(buf + used, len - used, "%s%u:%u+%u/%u", i ? "," : "",
					p->o, p->x, p->v - p->x, p->e);
		else
			used += (size_t)snprintf(buf + used, len - used, "%s%u:%u", i ? "," : "",
					p->o, p->x);
	}
}

/* Per-base equality of packed A and B: bit 2i set when base i is equal. */
static inline uint64_t eq_bases(uint64_t a, uint64_t b)
{
	uint64_t d = a ^ b;

	return ~(d | d >> 1) & 0x5555555555555555ull;
}

static inline uint64_t low2(uint32_t n)   /* the bits of the first N bases */
{
	return n >= 32 ? ~0ull : (1ull << (2 * n)) - 1;
}

/* Set bits of B, which has bits at even positions only (no popcnt needed). */
static inline uint32_t count2(uint64_t b)
{
	b = (b & 0x3333333333333333ull) + (b >> 2 & 0x3333333333333333ull);
	b = (b + (b >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (uint32_t)((b * 0x0101010101010101ull) >> 56);
}

/*
 * Anchored edit distance of q[x..v) to a prefix of t[x..l) at most E (q's
 * N bases, NM, match nothing): a banded dynamic program.
 */
static __attribute__((noinline)) int tail_dp(uint64_t q, uint64_t nm, uint64_t t, uint32_t x, uint32_t v, uint32_t l,
		uint32_t e)
{
	uint8_t row[34], nrow[34];
	uint32_t n = v - x, w = l - x, i, j, best;

	if (w > n + e)
		w = n + e;
	for (j = 0; j <= w; j++)
		row[j] = (uint8_t)j;
	for (i = 1; i <= n; i++) {
		uint32_t qi = (uint32_t)(q >> (2 * (x + i - 1))) & 3, isn = (uint32_t)(nm >> (2 * (x + i - 1))) & 1;
		uint32_t rmin = 255;

		nrow[0] = (uint8_t)i;
		for (j = 1; j <= w; j++) {
			uint32_t tj = (uint32_t)(t >> (2 * (x + j - 1))) & 3;
			uint32_t d = row[j - 1] + (isn || qi != tj), a = row[j] + 1u, b = nrow[j - 1] + 1u;

			d = d < a ? d : a;
			nrow[j] = (uint8_t)(d < b ? d : b);
		}
		for (j = 0; j <= w; j++) {
			row[j] = nrow[j];
			rmin = row[j] < rmin ? row[j] : rmin;
		}
		if (rmin > e)
			return 0;
	}
	for (best = 255, j = 0; j <= w; j++)
		best = row[j] < best ? row[j] : best;
	return best <= e;
}

/* filt_scheme_match; FIX: the bits of the exact part, their bases 01. */
static inline __attribute__((always_inline)) int match(uint64_t q, uint64_t nm, const filt_spat_t *p, uint64_t t, uint32_t l)
{
	uint64_t eq = eq_bases(q, t) & ~nm, cover, need, fix = 0x5555555555555555ull & low2(p->x);
	int s;

	if ((eq & fix) != fix)
		return 0;
	if (!p->e)
		return 1;
	/* shifted Hamming: a base of the tail that no shift in [-e, e] matches is
	 * an edit; more than e of them, and no alignment is within e */
	need = 0x5555555555555555ull & low2(p->v) & ~low2(p->x);
	if (count2(need & ~eq) <= p->e)
		return 1;   /* Hamming within e */
	if (p->e == 1) {
		/* one deletion or insertion, at the first mismatch i0 or before: the
		 * tail from i0 on matches t one base on, or from i0 + 1 on one back */
		uint64_t mm = need & ~eq, i0 = mm & -mm;   /* the first mismatch */
		uint64_t from = need & ~(((i0 << 1) - 1));      /* the bases after it */

		return ((from | i0) & ~(eq_bases(q, t >> 2) & ~nm)) == 0 ||
			(from & ~(eq_bases(q, t << 2) & ~nm)) == 0;
	}
	cover = eq;
	for (s = 1; s <= (int)p->e; s++) {
		cover |= eq_bases(q, t >> (2 * s)) & ~nm;
		cover |= eq_bases(q, t << (2 * s)) & ~nm & ~low2((uint32_t)s);
	}
	if (count2(need & ~cover) > p->e)
		return 0;
	return tail_dp(q, nm, t, p->x, p->v, l, p->e);
}

int filt_scheme_match(uint64_t q, uint64_t nm, const filt_spat_t *p, uint64_t t, uint32_t l)
{
	return match(q, nm, p, t, l);
}

size_t filt_scheme_scan(const uint32_t *k32, const uint64_t *k64, uint64_t n, uint64_t q,
		uint64_t nm, const filt_spat_t *p, uint32_t l, uint32_t *out);

/*
 * The keys [UB, UE) of partition PT (u32 keys K32, else K64) that match
 * pattern P with q Q, N mask NM: their indexes into OUT; the count.
 */
static size_t scan(const uint32_t *k32, const uint64_t *k64, uint64_t ub, uint64_t ue,
		uint64_t q, uint64_t nm, const filt_spat_t *p, uint32_t l, uint32_t *out)
{
	uint64_t k, fm = low2(p->x);
	size_t n = 0;

	if (!p->e && !nm) {   /* exact: one compare a key */
		if (k32) {
			uint32_t q32 = (uint32_t)q, m32 = (uint32_t)fm;

			for (k = ub; k < ue; k++) {
				out[n] = (uint32_t)(k - ub);
				n += !((k32[k] ^ q32) & m32);
			}
		} else {
			for (k = ub; k < ue; k++) {
				out[n] = (uint32_t)(k - ub);
				n += !((k64[k] ^ q) & fm);
			}
		}
		return n;
	}
	if (p->e == 1 && !nm) {
		/*
		 * One edit in q[x..v): before it q matches t at shift 0, after it
		 * at a shift of -1, 0 or 1; so either q[0..h) matches t there, h
		 * the tail's middle, or q[0..x) does and q[h..v) matches at one of
		 * the three shifts.  Most keys fail these four compares.
		 */
		uint32_t h = p->x + (p->v - p->x) / 2;
		uint64_t mh = low2(h), mt = low2(p->v) & ~mh;

		for (k = ub; k < ue; k++) {
			uint64_t t = k32 ? k32[k] : k64[k];

			if (((t ^ q) & mh) && (((t ^ q) & fm) ||
					(((t ^ q) & mt) && (((t >> 2) ^ q) & mt) && (((t << 2) ^ q) & mt))))
				continue;
			if (match(q, nm, p, t, l))
				out[n++] = (uint32_t)(k - ub);
		}
		return n;
	}
	if (k32) {
		for (k = ub; k < ue; k++)
			if (((k32[k] ^ q) & fm) == 0 && match(q, nm, p, k32[k], l))
				out[n++] = (uint32_t)(k - ub);
		return n;
	}
	for (k = ub; k < ue; k++)
		if (((k64[k] ^ q) & fm) == 0 && match(q, nm, p, k64[k], l))
			out[n++] = (uint32_t)(k - ub);
	return n;
}

void filt_scheme_prefetch(filt_ws_t *ws, const filt_scheme_t *s, const char *seq,
		uint32_t len, int stage)
{
	const idx_t *x = ws->x;
	filt_pat_t *pat;
	uint32_t i, j, strand, np = 0, part, slot;

	if (len != s->m)
		return;
	/* the codes of this read, computed once for its three stages */
	for (slot = 0; stage > 0 && slot < 4 && ws->sch_seq[slot] != seq; slot++)
		;   /* stage 0: a new read (an address may come again in a later batch) */
	if (stage == 0)
		slot = 4;
	if (slot == 4) {
		uint8_t c[2][FILT_SCHEME_MAXLEN];

		slot = ws->sch_next++ & 3;
		ws->sch_seq[slot] = seq;
		for (i = 0; i < len; i++) {   /* N as A: only the addresses matter */
			uint8_t b = seqio_nt4[(unsigned char)seq[i]] & 3;

			c[0][i] = b;
			c[1][len - 1 - i] = 3 - b;
		}
		for (strand = 0; strand < 2; strand++)
			for (i = 0; i < s->np; i++) {
				uint32_t code = 0;

				for (j = 0; j < x->p.w; j++)
					code |= (uint32_t)c[strand][s->p[i].o + x->p.shape_pos[j]] << (2 * j);
				ws->sch_pat[slot][np++].code = code;
			}
		ws->sch_np[slot] = np;
	}
	pat = ws->sch_pat[slot];
	np = ws->sch_np[slot];
	if (stage < 2) {
		filt_prefetch_pats(ws, pat, np, stage);
		return;
	}
	for (part = ws->p0; part < ws->p1; part++) {   /* the blocks' first positions */
		const idx_part_t *pt = &x->part[part];

		for (i = 0; i < np; i++) {
			uint64_t ub = pt->red_start[pat[i].code];

			if (ub != pt->red_start[pat[i].code + 1])
				PF(pt->red_pos + idx_nbpos(pt, ub));
		}
	}
}

size_t filt_scheme_scan(const uint32_t *k32, const uint64_t *k64, uint64_t n, uint64_t q,
		uint64_t nm, const filt_spat_t *p, uint32_t l, uint32_t *out)
{
	return scan(k32, k64, 0, n, q, nm, p, l, out);
}

uint32_t filt_scheme_read(filt_ws_t *ws, const filt_scheme_t *s, const char *seq, uint32_t len,
		rec_cand_t **out, filt_stats_t *st)
{
	const idx_t *x = ws->x;
	uint32_t span = x->p.span, l = x->p.l, strand, i, j, np = 0, part;
	filt_pat_t pat[2 * FILT_SCHEME_MAXPAT];
	uint64_t nmk[2 * FILT_SCHEME_MAXPAT];
	const filt_spat_t *sp[2 * FILT_SCHEME_MAXPAT];
	uint8_t c[2][FILT_SCHEME_MAXLEN];

	st->reads++;
	filt_begin(ws);
	if (len != s->m || !s->np) {   /* not this scheme's reads: no candidates */
		st->short_reads++;
		return filt_finish(ws, out, st);
	}
	for (i = 0; i < len; i++) {
		uint8_t b = seqio_nt4[(unsigned char)seq[i]];

		c[0][i] = b;
		c[1][len - 1 - i] = b < 4 ? 3 - b : 4;
	}
	for (strand = 0; strand < 2; strand++)
		for (i = 0; i < s->np; i++) {
			const filt_spat_t *p = &s->p[i];
			const uint8_t *r = c[strand] + p->o;
			uint32_t code = 0, dead = 0;
			uint64_t q = 0, nm = 0;

			for (j = 0; j < x->p.w; j++)
				code |= (uint32_t)(r[x->p.shape_pos[j]] & 3) << (2 * j);
			for (j = 0; j < span + p->x; j++)
				dead |= r[j] > 3;   /* an N in the seed's span or the exact part */
			if (dead) {
				st->skipped_n++;
				continue;
			}
			for (j = 0; j < p->v; j++) {
				uint8_t b = r[span + j];

				q |= (uint64_t)(b & 3) << (2 * j);
				nm |= (uint64_t)(b > 3) << (2 * j);
			}
			st->kept_n += nm != 0;
			pat[np].code = code;
			pat[np].o = p->o;
			pat[np].strand = strand;
			pat[np].q = q;
			nmk[np] = nm;
			sp[np++] = p;
		}
	st->patterns += np;
	filt_prefetch_pats(ws, pat, np, 0);
	filt_prefetch_pats(ws, pat, np, 1);
	for (part = ws->p0; part < ws->p1; part++) {
		const idx_part_t *pt = &x->part[part];

		for (i = 0; i < np; i++) {
			uint64_t ub = pt->red_start[pat[i].code], ue = pt->red_start[pat[i].code + 1];
			uint64_t beg, end;
			uint32_t *uh;
			size_t n, m = 0;

			if (ub == ue)
				continue;
			beg = idx_nbpos(pt, ub);
			end = idx_nbpos(pt, ue);
			st->items += ue - ub;
			st->nbs += end - beg;
			/* the matching keys' indexes after room for all the block's positions */
			filt_need_hits(ws, (end - beg) + (ue - ub));
			uh = ws->hits + (end - beg);
			n = scan(pt->red_nb32, pt->red_nb, ub, ue, pat[i].q, nmk[i], sp[i], l, uh);
			for (j = 0; j < n; j++) {
				uint64_t pb = idx_nbpos(pt, ub + uh[j]), pe = idx_nbpos(pt, ub + uh[j] + 1);

				while (pb < pe)
					ws->hits[m++] = pt->red_pos[pb++];
			}
			st->matches += m;
			filt_add_hits(ws, part, ws->hits, m, pat[i].o, pat[i].strand);
		}
	}
	return filt_finish(ws, out, st);
}
