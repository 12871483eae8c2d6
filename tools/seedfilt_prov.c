/*
 * seedfilt_prov.c - part of seedfilt: the provenance of its candidates
 * stream (what extend and recview read back: the index, the setting, the
 * plan).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "filt.h"
#include "seedfilt_prov.h"
#include "util.h"

void seedfilt_prov(rec_prov_t *prov, filt_in_t *in, int argc, char **argv, const char *index,
		const idx_t *x, int method, const filt_run_t *run, const char *bstr,
		const char *paired, const char *costs)
{
	char buf[64], *abs_index;

	rec_prov_init(prov);
	if (filt_in_prov(in))
		rec_prov_carry(prov, filt_in_prov(in));
	rec_prov_add_pg(prov, "seedfilt", SP_VERSION, argc, argv);
	abs_index = sp_abspath(index);   /* extend finds it from any directory */
	rec_prov_set(prov, REC_PROV_INDEX, abs_index);
	free(abs_index);
	snprintf(buf, sizeof buf, "%016" PRIx64, x->fingerprint);
	rec_prov_set(prov, REC_PROV_INDEX_FP, buf);
	rec_prov_set(prov, "seedfilt.method", filt_method_name(method));
	snprintf(buf, sizeof buf, "%u", run->o.e);
	rec_prov_set(prov, "seedfilt.e", buf);
	snprintf(buf, sizeof buf, "%u", run->o.step);
	rec_prov_set(prov, "seedfilt.step", buf);
	rec_prov_set(prov, "seedfilt.anywhere", run->o.any ? "1" : "0");
	if (run->bound.set)
		rec_prov_set(prov, "seedfilt.E", bstr);
	if (paired)
		rec_prov_set(prov, "seedfilt.paired", paired);
	if (run->plan) {   /* extend rebuilds the plan: the guarantee of each length */
		rec_prov_set(prov, "seedfilt.plan", costs);
		snprintf(buf, sizeof buf, "%u", run->plan->max_step);
		rec_prov_set(prov, "seedfilt.plan_step", buf);
	}
	snprintf(buf, sizeof buf, "%u", run->o.cap);
	rec_prov_set(prov, "seedfilt.cap", buf);
	if (run->o.count_only)
		rec_prov_set(prov, "seedfilt.count_only", "1");
	rec_prov_set(prov, "seedfilt.shape", x->p.shape);
	snprintf(buf, sizeof buf, "%u", x->p.l);
	rec_prov_set(prov, "seedfilt.l", buf);
	snprintf(buf, sizeof buf, "%u", filt_qlen(x, method, run->o.e));
	rec_prov_set(prov, "seedfilt.qlen", buf);
}
