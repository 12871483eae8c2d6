/*
 * seedfilt_plan.c - part of seedfilt: -E with -m auto, a filter setting per
 * read length (common/filt_plan.c): the plan, its -v lines, its warning.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "filt.h"
#include "seedfilt_plan.h"
#include "util.h"

/*
 * -E with -m auto: measure the pairs on the first reads, plan a setting per
 * read length (common/filt_plan.c); run->o becomes the setting of the
 * first read's length (or -L's), the one the device runs.  The method.
 */
int plan_or_die(const idx_t *x, filt_in_t *in, filt_run_t *run, filt_plan_t *plan,
		int e_set, int s_set, char *costs, size_t clen)
{
	const char *const *seq;
	const uint32_t *len;
	filt_opt_t base = run->o;
	int n = filt_in_sample(in, FILT_PLAN_SAMPLE, &seq, &len);
	uint32_t m;

	if (n < 0)
		sp_die("%s", sp_errmsg());
	base.e = e_set ? run->o.e : 0;
	if (filt_plan_calibrate(x, &base, FILT_AUTO, 0, seq, len, (size_t)n, costs, clen) <= 0 ||
	    filt_plan_init(plan, x, &base, s_set ? run->o.step : 0, &run->bound, costs,
			    FILT_PLAN_MAXLEN) < 0)
		sp_die("%s", sp_errmsg()[0] ? sp_errmsg() : "no method of the index fits");
	run->plan = plan;
	m = run->sens_len ? run->sens_len : n ? len[0] : 0;
	filt_plan_at(plan, m, &run->o);
	if (run->verbose) {
		uint32_t k, lo = 0;
		int32_t g;

		sp_msg("-E: measured cost per pattern (microseconds, model): %s", costs);
		for (k = 1; k <= FILT_PLAN_MAXLEN; k++) {   /* the plan of the sample's lengths */
			filt_opt_t o, p;
			int i, seen = 0;

			seen = k == run->sens_len;   /* -L's length, and the sample's */
			for (i = 0; i < n && !seen; i++)
				seen = len[i] == k;
			if (!seen)
				continue;
			g = filt_plan_at(plan, k, &o);
			if (filt_plan_scheme(plan, k)) {
				char d[256];

				filt_scheme_str(filt_plan_scheme(plan, k), d, sizeof d);
				sp_msg("-E: reads of %u bases: using %u patterns per strand with their "
						"own q and e (offset:exact+tail/e: %s), %d edit operations "
						"guaranteed", k, filt_plan_scheme(plan, k)->np, d, g);
				lo = 0;
				continue;
			}
			if (lo && lo < k && filt_plan_at(plan, lo, &p) == g && p.method == o.method &&
					p.e == o.e && p.step == o.step)
				continue;
			lo = k;
			sp_msg("-E: reads of %u bases: using -m %s -e %u -s %u%s, %d edit operations "
					"guaranteed", k, filt_method_name(o.method), o.e, o.step,
					o.any ? " -a" : "", g);
		}
	}
	return run->o.method;
}

/* The -E warning of a plan: the reads not covered, their lengths, a fix. */
void plan_warn(const idx_t *x, const filt_plan_t *plan, const char *bstr, uint64_t ng,
		uint64_t reads)
{
	uint32_t k, lo = 0, hi = 0;
	char fix[320] = "no index covers reads that short", idx[256];
	filt_opt_t o;
	int32_t g;

	for (k = 0; k <= plan->maxlen; k++)
		if (plan->ncov[k]) {
			if (!lo)
				lo = k ? k : 1;
			hi = k;
		}
	if (!lo)
		return;
	/* the shortest of them that some index covers */
	for (k = lo; k <= hi; k++) {
		if (!plan->ncov[k])
			continue;
		filt_plan_at(plan, k, &o);
		if (filt_suggest_index(x, &o, k, filt_bound_at(&plan->bound, k), idx,
					sizeof idx) == 0) {
			snprintf(fix, sizeof fix, "for those of %u bases: %s", k, idx);
			break;
		}
	}
	g = filt_plan_at(plan, lo, &o);
	sp_warn("-E %s: %" PRIu64 " of %" PRIu64 " reads (of %u to %u bases) are not "
			"guaranteed a candidate for every occurrence within the bound (reads of "
			"%u bases: %d edit operations, not %d); %s", bstr, ng, reads, lo, hi, lo, g,
			filt_bound_at(&plan->bound, lo), fix);
}

/*
 * -d auto: whether the plan filters reads of LEN bases (the first read's,
 * or -L's) by a scheme (per-pattern q and e, filt_scheme.c), which has no
 * kernel: then no device is opened.  Says so with -v.
 */
int plan_host_only(const filt_run_t *run, uint32_t len)
{
	uint32_t m = run->sens_len ? run->sens_len : len;

	if (!run->plan || !filt_plan_scheme(run->plan, m))
		return 0;
	if (run->verbose)
		sp_msg("-d auto: native code: the plan's patterns for reads of %u bases (their "
				"own q and e) have no kernel", m);
	return 1;
}
