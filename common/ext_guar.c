/*
 * ext_guar.c - what the filter that made extend's candidates stream
 * guaranteed: the stream's provenance (seedfilt's method, e, step, and
 * where seedfilt -E chose a setting per read length, its plan) turned into
 * a table of the edit operations guaranteed for each read length, and the
 * warning, with the command that would cover them, for the reads whose
 * bound exceeds it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ext_guar.h"
#include "util.h"

/*
 * seedfilt -E with -m auto chose a setting per read length (seedfilt.plan,
 * common/filt_plan.c): the same plan, rebuilt from the stream, gives what
 * each length is guaranteed into G.  0, or -1 when the stream has no plan.
 */
static int plan_open(const rec_prov_t *up, const idx_t *x, const filt_opt_t *o,
		filt_plan_t *plan)
{
	const char *pl = rec_prov_get(up, "seedfilt.plan"), *b = rec_prov_get(up, "seedfilt.E");
	const char *ms = rec_prov_get(up, "seedfilt.plan_step");
	filt_bound_t bound;

	if (!pl || !b || filt_bound_parse(b, &bound) < 0 ||
	    filt_plan_init(plan, x, o, ms ? (uint32_t)strtoul(ms, NULL, 10) : 0, &bound, pl,
			    ALIGN_MAX_READ) < 0)
		return -1;
	return 0;
}

static int plan_table(const rec_prov_t *up, const idx_t *x, int nogaps, const filt_opt_t *o,
		int16_t *g)
{
	filt_plan_t plan;
	uint32_t i;

	if (plan_open(up, x, o, &plan) < 0)
		return -1;
	for (i = 0; i <= ALIGN_MAX_READ; i++) {
		filt_opt_t t;
		int32_t k = filt_plan_at(&plan, i, &t);

		if (nogaps && k >= 0 && !filt_plan_scheme(&plan, i))
			k = filt_guarantee(x, &t, i, 1);   /* a scheme's holds for both */
		g[i] = (int16_t)(k > 1000 ? 1000 : k);
	}
	filt_plan_free(&plan);
	return 0;
}

/*
 * What the filter that made the stream UP guarantees for each read length
 * 0..ALIGN_MAX_READ (filt_guarantee over the stream's seedfilt.method, e,
 * step and anywhere, and index X), or NULL when the stream does not say
 * (no seedfilt, or -m mem).
 */
int16_t *ext_guar_table(const rec_prov_t *up, const idx_t *x, int nogaps, filt_opt_t *o)
{
	const char *m = rec_prov_get(up, "seedfilt.method"), *e = rec_prov_get(up, "seedfilt.e");
	const char *s = rec_prov_get(up, "seedfilt.step"), *a = rec_prov_get(up, "seedfilt.anywhere");
	char msg[256];
	int16_t *g;
	uint32_t i;

	memset(o, 0, sizeof *o);
	if (!m || !e || !s || (o->method = filt_method_parse(m)) <= FILT_AUTO)
		return NULL;
	o->e = (uint32_t)strtoul(e, NULL, 10);
	o->step = (uint32_t)strtoul(s, NULL, 10);
	o->any = a && !strcmp(a, "1");
	if (!o->step || filt_check(x, o->method, o->e, o->any, msg, sizeof msg) < 0)
		return NULL;
	g = sp_malloc((ALIGN_MAX_READ + 1) * sizeof *g);
	if (plan_table(up, x, nogaps, o, g) == 0)
		return g;
	for (i = 0; i <= ALIGN_MAX_READ; i++) {
		int32_t k = filt_guarantee(x, o, i, nogaps);

		g[i] = (int16_t)(k > 1000 ? 1000 : k);
	}
	return g;
}

/*
 * What filtered reads of M bases, as the stream UP (its provenance) says:
 * the stream's setting FO, or where seedfilt -E chose one per length (a
 * plan) that length's own, a seed pair or a scheme's patterns.
 */
static void filter_at(const rec_prov_t *up, const idx_t *x, const filt_opt_t *fo, uint32_t m,
		char *buf, size_t len)
{
	filt_plan_t plan;
	filt_opt_t o = *fo;

	if (m && plan_open(up, x, fo, &plan) == 0) {
		const filt_scheme_t *sc = filt_plan_scheme(&plan, m);
		const char *b = rec_prov_get(up, "seedfilt.E");

		if (sc)
			snprintf(buf, len, "seedfilt -E %s: %u patterns per strand with their own q "
					"and e for %u-base reads", b, sc->np, m);
		else {
			filt_plan_at(&plan, m, &o);
			snprintf(buf, len, "seedfilt -E %s: -m %s -e %u -s %u%s for %u-base reads", b,
					filt_method_name(o.method), o.e, o.step, o.any ? " -a" : "", m);
		}
		filt_plan_free(&plan);
		return;
	}
	snprintf(buf, len, "-m %s -e %u -s %u%s", filt_method_name(o.method), o.e, o.step,
			o.any ? " -a" : "");
}

/*
 * Reads for which A exceeds the filter's guarantee (ST's count): said even
 * with -q, as the results may be incomplete, with the commands that would
 * cover them; UP is the stream's provenance (what filtered the shortest of
 * them), FO the setting ext_guar_table read from it.
 */
void ext_not_covered(const ext_opt_t *eo, const idx_t *x, const ext_stats_t *st,
		const filt_opt_t *fo, const rec_prov_t *up)
{
	const int16_t *g = eo->guar;
	uint32_t hi = st->not_covered_len;
	char fix[320] = "", within[32], used[160], gs[16];
	filt_opt_t t = *fo;

	t.step = hi ? hi : 1;
	t.e = 0;
	if (hi && filt_auto_guarantee(x, &t, hi, ext_bound_at(eo, hi)) == 0)
		snprintf(fix, sizeof fix, "seedfilt -E %d (or -m %s -e %u -s %u%s)",
				ext_bound_at(eo, hi),
				filt_method_name(t.method), t.e, t.step, t.any ? " -a" : "");
	else if (hi && filt_suggest_index(x, fo, hi, ext_bound_at(eo, hi), fix,
				sizeof fix) == 0)
		;
	else
		snprintf(fix, sizeof fix, "no filter can: the reads are too short");
	if (eo->bound_pct)
		snprintf(within, sizeof within, "-E %u%%", eo->bound_pct);
	else
		snprintf(within, sizeof within, "-e %u", eo->max_a);
	filter_at(up, x, fo, hi, used, sizeof used);
	if (hi && g[hi] < 0)   /* shorter than the filter's patterns: not even an exact hit */
		snprintf(gs, sizeof gs, "no hit");
	else
		snprintf(gs, sizeof gs, "%d", hi ? g[hi] : 0);
	sp_warn("%" PRIu64 " of %" PRIu64 " reads may have hits within %s%s that the filter "
			"(%s) does not guarantee to find (it guarantees %s for %u-base reads); to "
			"cover them: %s", st->not_covered, st->reads, within,
			eo->nogaps ? " --no-gaps" : "", used, gs, hi, fix);
}
