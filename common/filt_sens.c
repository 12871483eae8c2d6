/*
 * filt_sens.c - the sensitivity of seedfilt's patterns (the pigeonhole
 * bounds of filt_sensitivity, man/seedfilt.1 SENSITIVITY) and the choice of
 * a method, e and step that guarantees a candidate (filt_auto_guarantee).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "degen.h"
#include "filt_priv.h"

static uint64_t cdiv(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

void filt_sensitivity(const idx_t *x, const filt_opt_t *o, uint32_t m, filt_sens_t *s)
{
	uint32_t v = filt_qlen(x, o->method, o->e), span = x->p.span, d = o->step;
	uint64_t P, a, b, c, D, f = o->e + 1, ks, ke;

	s->read_len = m;
	s->window = span + v;
	if (m < s->window) {
		s->n_pat = 0;
		s->k_sub = s->k_edit = -1;
		return;
	}
	P = (m - s->window) / d + 1;
	a = cdiv(span, d);
	b = cdiv(v, d);
	c = cdiv(s->window, d);
	D = (P - 1) / c + 1;
	ks = cdiv(P * f, a * f + b);
	ks = ks > D ? ks : D;
	ke = cdiv(P, c);
	ke = ke > D ? ke : D;
	if (o->any) {
		/* only e+1 substitutions in a window kill it; each lies in <= c windows */
		ks = cdiv(P * f, c);
		ks = ks > D * f ? ks : D * f;
	}
	/*
	 * Chained patterns (step = v >= span, e >= 1): the pieces seed_0, q_0,
	 * q_1, ..., q_{P-1} are disjoint and the seed of pattern i+1 lies in q_i,
	 * so pattern i survives when q_{i-1} (or seed_0) is error-free and q_i
	 * has at most e errors.  Killing every pattern then needs an error in
	 * each of the first P pieces: P errors, substitutions or (for bpr, whose
	 * q is matched by edit distance) edit operations alike.
	 */
	if (o->e >= 1 && d == v && span <= v && ks < P)
		ks = P;
	s->n_pat = (uint32_t)P;
	s->k_sub = (int32_t)ks - 1;
	s->k_edit = o->method == FILT_BPR ? s->k_sub : (int32_t)ke - 1;
}

/*
 * A model of the cost per read of setting O (no measurement of this
 * machine): the lookups or neighborhoods scanned per pattern, plus the
 * expected chance matches of a random genome, each a candidate that extend
 * aligns, at CAND_COST lookups each.  Only the order of the settings
 * matters: it keeps the first fit (bpr with q of one base) from turning
 * every seed occurrence into a candidate.
 */
#define CAND_COST 50.0

static double setting_cost(const idx_t *x, const filt_opt_t *o, uint32_t m)
{
	uint32_t v = filt_qlen(x, o->method, o->e), span = x->p.span;
	double P, occ = (double)(x->total ? x->total : 1), block, ball, pm, look;

	if (m < span + v)
		return 1e300;
	P = 2.0 * ((m - span - v) / o->step + 1);
	block = occ / (double)((uint64_t)1 << (2 * x->p.w));
	ball = (double)degen_ball(v, o->e);
	pm = ball / (double)((uint64_t)1 << (2 * (v < 31 ? v : 31)));
	if (o->method == FILT_BPR)
		pm *= 2.0 * o->e + 1;   /* a q of v bases anywhere in l: shifts, indels */
	if (o->any)
		pm *= (double)degen_ball(x->p.w, o->e);
	if (pm > 1.0)
		pm = 1.0;
	switch (o->method) {
	case FILT_BPR: look = block / (32.0 / x->p.l); break;
	case FILT_BS: look = ball * (1.0 + log2(block + 1.0)); break;
	default: look = ball * (o->any ? (double)degen_ball(x->p.w, o->e) : 1.0); break;
	}
	return P * (look + CAND_COST * block * pm);
}

int filt_auto_guarantee(const idx_t *x, filt_opt_t *o, uint32_t read_len, int32_t edits)
{
	const int *order = filt_method_order(o->any);
	double best_cost = 0;
	filt_opt_t best = *o;
	int found = 0;
	char msg[256];
	size_t i;

	for (i = 0; i < FILT_NMETHODS; i++) {
		uint32_t step, e, emax = order[i] == FILT_BPR ? x->p.l - 1 : FILT_MAX_E_HAM;

		if (o->any && order[i] == FILT_BPR)
			continue;
		for (step = o->step; step >= 1; step--)
			for (e = o->e; e <= emax; e++) {
				filt_opt_t t = *o;
				filt_sens_t sn;
				double cost;

				t.method = order[i];
				t.e = e;
				t.step = step;
				if (filt_check(x, t.method, e, t.any, msg, sizeof msg) < 0)
					continue;
				filt_sensitivity(x, &t, read_len, &sn);
				if (sn.k_edit < edits)
					continue;
				cost = setting_cost(x, &t, read_len);
				if (!found || cost < best_cost) {
					best = t;
					best_cost = cost;
					found = 1;
				}
				break;   /* a larger e costs more at this step */
			}
	}
	if (!found)
		return -1;
	*o = best;
	return 0;
}

int filt_bound_parse(const char *s, filt_bound_t *b)
{
	char *end;
	unsigned long v;

	if (!*s || *s < '0' || *s > '9')
		return -1;
	v = strtoul(s, &end, 10);
	b->pct = *end == '%';
	if (b->pct)
		end++;
	if (*end || v > (b->pct ? 100ul : 1000ul))
		return -1;
	b->val = (uint32_t)v;
	b->set = 1;
	return 0;
}

void filt_bound_str(const filt_bound_t *b, char *buf, size_t len)
{
	snprintf(buf, len, "%u%s", b->val, b->pct ? "%" : "");
}

int32_t filt_guarantee(const idx_t *x, const filt_opt_t *o, uint32_t m, int nogaps)
{
	filt_sens_t s;

	filt_sensitivity(x, o, m, &s);
	return nogaps ? s.k_sub : s.k_edit;
}
