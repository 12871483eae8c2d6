/*
 * filt_sens_test.c - the sensitivity statement of seedfilt (filt_sensitivity,
 * man/seedfilt.1 SENSITIVITY) checked against an exhaustive placement of
 * errors in small reads: for every set of k_sub substitution positions some
 * pattern must still match (seed exact and at most e errors in q, or with
 * -a at most e errors over the '#' and q positions), and for every set of
 * k_edit edit positions some pattern must be free of them (an indel spoils
 * every window that covers it, and a substitution is no worse).  Also pins
 * the numbers of the H3 design (u = l = 10, step 20, e = 1, -a, 40 bases).
 */
#include <stdlib.h>
#include <string.h>

#include "filt.h"
#include "tap.h"

typedef struct {
	uint32_t m, span, v, step, e, any, n_pat;
	uint64_t seed_mask, q_mask, win_mask;   /* pattern 0's positions */
} model_t;

/* 1 if some pattern survives the errors at the positions of ERR. */
static int survives(const model_t *md, uint64_t err, int edits)
{
	uint32_t i;

	for (i = 0; i < md->n_pat; i++) {
		uint32_t o = i * md->step;
		uint64_t s = err >> o & md->seed_mask, q = err >> o & md->q_mask;

		if (edits) {
			if ((err >> o & md->win_mask) == 0)
				return 1;
		} else if (md->any) {
			if ((uint32_t)__builtin_popcountll(s | q) <= md->e)
				return 1;
		} else if (s == 0 && (uint32_t)__builtin_popcountll(q) <= md->e) {
			return 1;
		}
	}
	return 0;
}

/* Number of K-subsets of positions [from, m) added to ERR that kill every pattern. */
static uint64_t killers(const model_t *md, uint64_t err, uint32_t from, uint32_t k, int edits)
{
	uint64_t n = 0;
	uint32_t p;

	if (k == 0)
		return !survives(md, err, edits);
	for (p = from; p + k <= md->m; p++)
		n += killers(md, err | (uint64_t)1 << p, p + 1, k - 1, edits);
	return n;
}

static void check(const char *shape, uint32_t l, uint32_t step, uint32_t e, int any,
		uint32_t m)
{
	static idx_t x;
	filt_opt_t o;
	filt_sens_t s;
	model_t md;
	uint32_t i;
	uint64_t bad_sub = 0, bad_edit = 0, tight;

	memset(&x, 0, sizeof x);
	memset(&o, 0, sizeof o);
	strcpy(x.p.shape, shape);
	x.p.span = (uint32_t)strlen(shape);
	x.p.l = l;
	for (i = 0; i < x.p.span; i++)
		x.p.w += shape[i] == '#';
	o.method = FILT_BS;
	o.e = e;
	o.step = step;
	o.any = any;
	filt_sensitivity(&x, &o, m, &s);
	memset(&md, 0, sizeof md);
	md.m = m;
	md.span = x.p.span;
	md.v = l;
	md.step = step;
	md.e = e;
	md.any = (uint32_t)any;
	md.n_pat = s.n_pat;
	for (i = 0; i < x.p.span; i++)
		if (shape[i] == '#')
			md.seed_mask |= (uint64_t)1 << i;
	for (i = 0; i < l; i++)
		md.q_mask |= (uint64_t)1 << (x.p.span + i);
	md.win_mask = ((uint64_t)1 << (x.p.span + l)) - 1;
	if (s.k_sub >= 0)
		bad_sub = killers(&md, 0, 0, (uint32_t)s.k_sub, 0);
	if (s.k_edit >= 0)
		bad_edit = killers(&md, 0, 0, (uint32_t)s.k_edit, 1);
	tight = killers(&md, 0, 0, (uint32_t)(s.k_sub + 1), 0);
	tap_ok(s.k_sub >= 0 && bad_sub == 0 && s.k_edit >= 0 && bad_edit == 0,
			"%s l=%u step %u e=%u%s m=%u: P=%u k_sub=%d k_edit=%d hold for every "
			"placement (%llu, %llu killers; k_sub+1: %llu)", shape, l, step, e,
			any ? " -a" : "", m, s.n_pat, s.k_sub, s.k_edit,
			(unsigned long long)bad_sub, (unsigned long long)bad_edit,
			(unsigned long long)tight);
}

int main(void)
{
	static idx_t x;
	filt_opt_t o;
	filt_sens_t s;
	static const struct { const char *shape; uint32_t l, step, e, m; } cs[] = {
		{ "##########", 10, 20, 1, 40 },   /* H3 */
		{ "##########", 10, 10, 1, 40 },
		{ "####", 4, 8, 1, 32 },
		{ "####", 4, 1, 1, 24 },
		{ "###", 5, 2, 2, 26 },
		{ "##-#", 4, 3, 1, 28 },
		{ "#-#-#", 3, 1, 0, 20 },
		{ "###", 3, 6, 3, 30 },
		{ "####", 6, 5, 2, 30 },
		{ "##", 3, 1, 1, 16 },
		{ "####", 4, 4, 1, 28 },   /* chained: step = l */
		{ "###", 5, 5, 1, 33 },
		{ "##-#", 4, 4, 2, 24 },
		{ "##", 3, 3, 1, 20 },
	};
	size_t i;
	int any;

	for (i = 0; i < sizeof cs / sizeof cs[0]; i++)
		for (any = 0; any < 2; any++)
			check(cs[i].shape, cs[i].l, cs[i].step, cs[i].e, any, cs[i].m);

	/* H3: 2 disjoint patterns per strand, 3 substitutions always found */
	memset(&o, 0, sizeof o);
	strcpy(x.p.shape, "##########");
	x.p.span = x.p.w = x.p.l = 10;
	o.method = FILT_PH;
	o.e = 1;
	o.step = 20;
	o.any = 1;
	filt_sensitivity(&x, &o, 40, &s);
	tap_ok(s.n_pat == 2 && s.window == 20 && s.k_sub == 3 && s.k_edit == 1,
			"H3 design -a: P=%u W=%u k_sub=%d k_edit=%d (want 2 20 3 1)",
			s.n_pat, s.window, s.k_sub, s.k_edit);
	o.any = 0;
	filt_sensitivity(&x, &o, 40, &s);
	tap_ok(s.k_sub == 1, "H3 design without -a: k_sub=%d (want 1)", s.k_sub);
	return tap_done();
}
