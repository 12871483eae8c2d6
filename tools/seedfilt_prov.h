/*
 * seedfilt_prov.h - the provenance of seedfilt's stream (tools/seedfilt_prov.c).
 */
#ifndef SEEDFILT_PROV_H
#define SEEDFILT_PROV_H

#include "filt.h"
#include "idx.h"
#include "rec.h"

/**
 * Fill PROV (rec_prov_init'ed here) for a run of seedfilt ARGC, ARGV: the
 * input's provenance carried, the @PG line, index INDEX (X), METHOD and
 * RUN's setting, -E's text BSTR (with RUN->bound set), PAIRED ("files",
 * "interleaved" or NULL), the plan's COSTS (with RUN->plan).
 */
void seedfilt_prov(rec_prov_t *prov, filt_in_t *in, int argc, char **argv, const char *index,
		const idx_t *x, int method, const filt_run_t *run, const char *bstr,
		const char *paired, const char *costs);

#endif
