/*
 * filt_plan.c - seedfilt -E with -m auto: for every read length, the
 * cheapest filter setting (method, e, step) that the index guarantees
 * lossless for the bound (filt.h, filt_plan_t; man/seedfilt.1, CHOOSING A
 * SETTING).
 *
 * The cost model is measured, not guessed: every (method, e) pair that
 * the index accepts is run over the first reads of the input (at most
 * PLAN_SAMPLE reads, patterns FILT_PLAN_PATS or neighborhoods PLAN_ITEMS,
 * whichever ends first), and its work per pattern is counted: the words
 * or neighborhoods looked at (items) and the matches, each of which is a
 * candidate that seedfilt sorts and extend aligns.  These counts are
 * exact and deterministic (no clock is read: the choice, and so the
 * output, does not depend on the machine's load or on -t); they are
 * turned into microseconds by coefficients fitted to timings of seedfilt
 * and extend on the benchmark sets (the man page gives the data).  A
 * setting's cost for reads of m bases is 2 P(m) times its pair's cost per
 * pattern, P(m) the patterns per strand; of the settings that guarantee
 * the bound for m, the cheapest is taken.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "degen.h"
#include "filt_priv.h"
#include "util.h"

#define PLAN_ITEMS 1000000u   /* calibration: stop a pair after this many items */

/*
 * Microseconds of one unit: user CPU of seedfilt -t 1 | extend -t 1 on
 * 20,000 40-bp E. coli reads with 3 substitutions, four indexes
 * (bench/costmodel.sh; the table and the fit are in man/seedfilt.1,
 * CHOOSING A SETTING).  Measured on a loaded 2-core machine: good to a
 * factor of about 2, enough to tell settings that differ 10-fold apart.
 */
#define C_PAT 0.5              /* cutting, setting up and reducing a pattern */
#define C_MATCH 0.25           /* a match: sorted, reduced, verified by extend */
#define C_BPR_PAT 0.8          /* bpr: its pattern tables, per error row (e + 1) */
#define C_BPR_ITEM 0.004       /* bpr: a neighborhood scanned, per error row */
#define C_HAM_ITEM 0.02        /* ph: a word of the Hamming ball looked up */
#define C_BS_ITEM 0.025        /* bs: a word searched in the reduced block */
#define C_FM_ITEM 1.0          /* fm: a BWT range (not fitted: no fm data) */

static double item_cost(int m, uint32_t e)
{
	switch (m) {
	case FILT_BPR: return C_BPR_ITEM * (e + 1);
	case FILT_PH: return C_HAM_ITEM;
	case FILT_BS: return C_BS_ITEM;
	}
	return C_FM_ITEM;
}

double filt_pair_cost(int method, uint32_t e, double items, double matches)
{
	return C_PAT + (method == FILT_BPR ? C_BPR_PAT * (e + 1) : 0) +
		item_cost(method, e) * items + C_MATCH * matches;
}

/* The (method, e) pairs of BASE that index X accepts, in *PAIR; their count. */
static int plan_pairs(const idx_t *x, const filt_opt_t *base, int method, int e_fixed,
		filt_pair_t *pair)
{
	char msg[256];
	int n = 0, m;
	uint32_t e;

	for (m = FILT_BPR; m <= FILT_FM; m++) {
		uint32_t emax = m == FILT_BPR ? (x->p.l ? x->p.l - 1 : 0) : FILT_MAX_E_HAM;

		if ((method != FILT_AUTO && m != method) || (base->any && m == FILT_BPR))
			continue;
		for (e = base->e; e <= emax && n < FILT_PLAN_MAXPAIRS; e++) {
			if (filt_check(x, m, e, base->any, msg, sizeof msg) < 0)
				continue;
			pair[n].method = m;
			pair[n].e = e;
			pair[n].cost = 0;
			n++;
			if (e_fixed)
				break;
		}
	}
	return n;
}

/*
 * The counts of pair O over the first reads of SEQ (at most N: until
 * FILT_PLAN_PATS patterns or PLAN_ITEMS items) into *ST.  An index loaded
 * in parts (seedfilt -M: X->lazy) is read one partition at a time, each
 * let go after its reads: per read, patterns (the same in every partition),
 * items and matches (summed over the partitions) are kept, and the stop
 * rule applied to their sums, so the counts are those of the whole index.
 */
static void plan_count(const idx_t *x, const filt_opt_t *o, const char *const *seq,
		const uint32_t *len, size_t n, filt_stats_t *st)
{
	uint64_t *pat, *it, *mt, np = 0, ni;
	size_t r, nr = n;
	rec_cand_t *c;
	uint32_t p;

	memset(st, 0, sizeof *st);
	if (!x->lazy || x->n_part < 2) {
		filt_ws_t *ws = filt_ws_new(x, o);

		for (r = 0; r < n && st->patterns < FILT_PLAN_PATS && st->items < PLAN_ITEMS; r++)
			filt_read(ws, seq[r], len[r], &c, st);
		filt_ws_free(ws);
		return;
	}
	pat = sp_calloc(n ? n : 1, sizeof *pat);
	it = sp_calloc(n ? n : 1, sizeof *it);
	mt = sp_calloc(n ? n : 1, sizeof *mt);
	for (p = 0; p < x->n_part; p++) {
		filt_ws_t *ws = filt_ws_part(x, o, p, p + 1);

		for (r = 0; r < nr; r++) {
			filt_stats_t s;

			if (p == 0 && np >= FILT_PLAN_PATS) {   /* no read after this counts */
				nr = r;
				break;
			}
			memset(&s, 0, sizeof s);
			filt_read(ws, seq[r], len[r], &c, &s);
			pat[r] = p == 0 ? s.patterns : pat[r];
			np += p == 0 ? s.patterns : 0;
			it[r] += s.items;
			mt[r] += s.matches;
		}
		filt_ws_free(ws);
		idx_part_drop(x, p);
		/* the items stop (sums so far only grow): no later read counts */
		for (r = 0, ni = 0; r < nr && ni < PLAN_ITEMS; r++)
			ni += it[r];
		nr = r;
	}
	for (r = 0; r < nr && st->patterns < FILT_PLAN_PATS && st->items < PLAN_ITEMS; r++) {
		st->patterns += pat[r];
		st->items += it[r];
		st->matches += mt[r];
	}
	free(pat);
	free(it);
	free(mt);
}

int filt_plan_calibrate(const idx_t *x, const filt_opt_t *base, int method, int e_fixed,
		const char *const *seq, const uint32_t *len, size_t n, char *buf, size_t blen)
{
	filt_pair_t pair[FILT_PLAN_MAXPAIRS];
	int np = plan_pairs(x, base, method, e_fixed, pair), i;
	size_t used = 0;

	buf[0] = 0;
	for (i = 0; i < np; i++) {
		filt_opt_t o = *base;
		filt_stats_t st;
		double ip, mp;

		o.method = pair[i].method;
		o.e = pair[i].e;
		o.cap = 0;
		o.count_only = 0;
		o.step = x->p.span + filt_qlen(x, o.method, o.e);   /* disjoint patterns */
		plan_count(x, &o, seq, len, n, &st);
		ip = st.patterns ? (double)st.items / (double)st.patterns : 0;
		mp = st.patterns ? (double)st.matches / (double)st.patterns : 0;
		/* no pattern in the sample (reads too short): the cost of a random
		 * genome's block, which only orders the pairs among themselves */
		if (!st.patterns)
			ip = (double)(x->total ? x->total : 1) / (double)(1ull << (2 * x->p.w));
		used += (size_t)snprintf(buf + used, used < blen ? blen - used : 0, "%s%s/%u:%.4g",
				i ? "," : "", filt_method_name(o.method), o.e,
				filt_pair_cost(o.method, o.e, ip, mp));
		if (used >= blen)
			return sp_fail("calibration text too long");
	}
	return np;
}

static int pair_cmp(const void *a, const void *b)
{
	const filt_pair_t *p = a, *q = b;

	if (p->cost != q->cost)
		return p->cost < q->cost ? -1 : 1;
	if (p->method != q->method)
		return p->method - q->method;
	return (int)p->e - (int)q->e;
}

/*
 * The cheapest setting for reads of M bases that guarantees NEED edit
 * operations (NEED < 0: the one that guarantees the most, then the
 * cheapest); 0 with *PI, *STEP, *G (its k_edit) set, -1 when no pattern
 * fits.
 */
static int plan_choose(const filt_plan_t *p, uint32_t m, int32_t need, int *pi,
		uint32_t *step, int32_t *g)
{
	double best = HUGE_VAL;
	int32_t best_g = -1;
	int i, found = 0;

	for (i = 0; i < p->npair; i++) {
		const filt_pair_t *pr = &p->pair[i];
		filt_opt_t o = p->base;
		uint32_t v = filt_qlen(p->x, pr->method, pr->e), w = p->x->p.span + v, d, dmax;
		double low;

		if (m < w)
			continue;
		low = 2.0 * (need > 0 ? need + 1 : 1) * pr->cost;   /* P >= need + 1 */
		if (need >= 0 && found && low >= best)
			break;   /* the pairs come cheapest first */
		dmax = need > 0 ? (m - w) / (uint32_t)need : m - w + 1;
		if (dmax < 1)
			continue;
		if (p->max_step && dmax > p->max_step)
			dmax = p->max_step;
		o.method = pr->method;
		o.e = pr->e;
		for (d = dmax; d >= 1; d--) {
			filt_sens_t s;
			double cost = 2.0 * ((m - w) / d + 1) * pr->cost;

			/* not covered (need < 0): the steps that guarantee the most,
			 * disjoint windows, chained q's, one base */
			if (need < 0 && d != 1 && d != v && d != w && d != p->x->p.span &&
					d != dmax)
				continue;

			if (need >= 0 && found && cost >= best)
				break;
			o.step = d;
			filt_sensitivity(p->x, &o, m, &s);
			if (need >= 0 ? s.k_edit >= need :
					(s.k_edit > best_g || (s.k_edit == best_g && cost < best))) {
				best = cost;
				best_g = s.k_edit;
				*pi = i;
				*step = d;
				found = 1;
				if (need >= 0)
					break;   /* a smaller step costs more */
			}
		}
	}
	*g = best_g;
	return found ? 0 : -1;
}

/*
 * Reads of M bases and bound NEED: the scheme (filt_scheme.c) instead of
 * the pair when it is cheaper by the model, or the pair does not cover
 * them (COVERED 0).  Not with -a or -s (a step asked for).  extend
 * rebuilds the plan from the stream and takes the same schemes.
 */
static void plan_scheme(filt_plan_t *p, uint32_t m, int32_t need, int covered)
{
	filt_scheme_t s;
	double pair = HUGE_VAL;

	if (m > FILT_SCHEME_MAXLEN || need < 0 || p->base.any || p->max_step ||
			!filt_scheme_make(p->x, m, (uint32_t)need, &s))
		return;
	if (covered && p->pick[m] >= 0) {
		uint32_t w = p->x->p.span + filt_qlen(p->x, p->pair[p->pick[m]].method,
				p->pair[p->pick[m]].e);

		pair = ((m - w) / p->step[m] + 1) * p->pair[p->pick[m]].cost;
	}
	if (covered && !(s.cost < pair))
		return;
	p->sch[m] = s;
	p->guar[m] = need;
}

int filt_plan_init(filt_plan_t *p, const idx_t *x, const filt_opt_t *base, uint32_t max_step,
		const filt_bound_t *b, const char *costs, uint32_t maxlen)
{
	const char *s = costs;
	uint32_t m;

	memset(p, 0, sizeof *p);
	p->x = x;
	p->base = *base;
	p->max_step = max_step;
	p->bound = *b;
	p->maxlen = maxlen;
	while (*s) {
		char name[8], *end;
		size_t k = strcspn(s, "/");
		filt_pair_t *pr;

		if (p->npair == FILT_PLAN_MAXPAIRS || k == 0 || k >= sizeof name || s[k] != '/')
			return sp_fail("malformed filter plan '%s'", costs);
		memcpy(name, s, k);
		name[k] = 0;
		pr = &p->pair[p->npair];
		if ((pr->method = filt_method_parse(name)) <= FILT_AUTO)
			return sp_fail("malformed filter plan '%s'", costs);
		pr->e = (uint32_t)strtoul(s + k + 1, &end, 10);
		if (*end != ':')
			return sp_fail("malformed filter plan '%s'", costs);
		pr->cost = strtod(end + 1, &end);
		if ((*end && *end != ',') || !(pr->cost > 0) || pr->e > BPR_MAX_E)
			return sp_fail("malformed filter plan '%s'", costs);
		{
			char msg[256];

			if (filt_check(x, pr->method, pr->e, base->any, msg, sizeof msg) < 0)
				return sp_fail("filter plan: %s", msg);
		}
		p->npair++;
		s = *end ? end + 1 : end;
	}
	qsort(p->pair, (size_t)p->npair, sizeof *p->pair, pair_cmp);
	p->pick = sp_malloc((maxlen + 1) * sizeof *p->pick);
	p->step = sp_malloc((maxlen + 1) * sizeof *p->step);
	p->guar = sp_malloc((maxlen + 1) * sizeof *p->guar);
	p->ncov = sp_calloc(maxlen + 1, sizeof *p->ncov);
	p->sch = sp_calloc(FILT_SCHEME_MAXLEN + 1, sizeof *p->sch);
	for (m = 0; m <= maxlen; m++) {
		int32_t need = filt_bound_at(b, m), g = -1;
		int pi = -1;
		uint32_t st = 1;

		int covered = plan_choose(p, m, need, &pi, &st, &g) == 0;

		if (!covered)
			plan_choose(p, m, -1, &pi, &st, &g);   /* not covered: the most it can */
		p->pick[m] = (int16_t)pi;
		p->step[m] = st;
		p->guar[m] = g;
		plan_scheme(p, m, need, covered);
	}
	return 0;
}

int32_t filt_plan_at(const filt_plan_t *p, uint32_t m, filt_opt_t *o)
{
	uint32_t k = m < p->maxlen ? m : p->maxlen;
	filt_sens_t s;

	*o = p->base;
	if (p->pick[k] < 0) {   /* no pattern fits: any pair, the read is short */
		o->method = p->npair ? p->pair[0].method : FILT_BPR;
		o->e = p->npair ? p->pair[0].e : 0;
		o->step = 1;
		return filt_plan_scheme(p, m) ? p->guar[m] : -1;
	}
	o->method = p->pair[p->pick[k]].method;
	o->e = p->pair[p->pick[k]].e;
	o->step = p->step[k];
	if (k == m)
		return p->guar[k];
	filt_sensitivity(p->x, o, m, &s);   /* longer than the table */
	return s.k_edit;
}

const filt_scheme_t *filt_plan_scheme(const filt_plan_t *p, uint32_t m)
{
	return m <= FILT_SCHEME_MAXLEN && m <= p->maxlen && p->sch[m].np ? &p->sch[m] : NULL;
}

int filt_plan_pair(const filt_plan_t *p, uint32_t m)
{
	return p->pick[m < p->maxlen ? m : p->maxlen];
}

void filt_plan_free(filt_plan_t *p)
{
	free(p->pick);
	free(p->step);
	free(p->guar);
	free(p->ncov);
	free(p->sch);
	memset(p, 0, sizeof *p);
}

/*
 * The estimated cost per pattern of pair M, E on an index of seed weight W,
 * neighborhood L over TOTAL bases of random sequence (no index to measure
 * on): a block holds TOTAL / 4^W neighborhoods, a q of v bases matches one
 * with the chance of its error ball (bpr: times the 2e + 1 shifts).
 */
static double est_cost(int m, uint32_t e, uint32_t w, uint32_t l, uint64_t total)
{
	uint32_t v = m == FILT_BPR ? l - e : l;
	double block = (double)(total ? total : 1) / ldexp(1.0, 2 * (int)w);
	double p = (double)degen_ball(v, e) / ldexp(1.0, 2 * (int)v), items;

	if (m == FILT_BPR)
		p *= 2.0 * e + 1;
	if (p > 1)
		p = 1;
	items = m == FILT_BPR ? block : (double)degen_ball(l, e);
	return filt_pair_cost(m, e, items, block * p);
}

int filt_suggest_index(const idx_t *x, const filt_opt_t *o, uint32_t m, int32_t edits,
		char *buf, size_t len)
{
	static const uint32_t structs[] = { IDX_S_GENERAL, IDX_S_REDUCED | IDX_S_BLOCK };
	double best = HUGE_VAL;
	uint32_t bdiff = 64;
	filt_plan_t p;
	idx_t y;
	uint32_t u, l, k;

	memset(&p, 0, sizeof p);
	memset(&y, 0, sizeof y);
	y.total = x->total;
	p.x = &y;
	p.base = *o;
	p.base.e = 0;
	buf[0] = 0;
	for (k = 0; k < 2; k++)
		for (u = 4; u <= 12; u++)
			for (l = 1; l <= 32; l++) {
				uint32_t step;
				int32_t g;
				int pi, mm, n = 0;
				double cost;

				y.p.w = y.p.span = u;
				y.p.l = l;
				y.p.structs = structs[k];
				for (mm = FILT_BPR; mm <= FILT_PH; mm++) {
					uint32_t e, emax = mm == FILT_BPR ? l - 1 : FILT_MAX_E_HAM;
					char msg[256];

					for (e = 0; e <= emax && n < FILT_PLAN_MAXPAIRS; e++) {
						if (filt_check(&y, mm, e, o->any, msg, sizeof msg) < 0)
							continue;
						p.pair[n].method = mm;
						p.pair[n].e = e;
						p.pair[n].cost = est_cost(mm, e, u, l, x->total);
						n++;
					}
				}
				p.npair = n;
				qsort(p.pair, (size_t)n, sizeof *p.pair, pair_cmp);
				if (plan_choose(&p, m, edits, &pi, &step, &g) < 0)
					continue;
				cost = 2.0 * ((m - u - filt_qlen(&y, p.pair[pi].method,
						p.pair[pi].e)) / step + 1) * p.pair[pi].cost;
				/* equal costs (within 2%): the seed and neighborhood
				 * closest in length */
				if (!(cost < best * 0.98 || (cost < best * 1.02 &&
						(u > l ? u - l : l - u) < bdiff)))
					continue;
				best = cost;
				bdiff = u > l ? u - l : l - u;
				snprintf(buf, len, "seqidx -u %u -l %u -m %s; seedfilt -m %s -e %u -s %u%s",
						u, l, k ? "reduced,block" : "general",
						filt_method_name(p.pair[pi].method), p.pair[pi].e, step,
						o->any ? " -a" : "");
			}
	return buf[0] ? 0 : -1;
}
