/*
 * ext_guar.h - what the filter that made extend's candidates stream
 * guaranteed (ext_guar.c): a table of the edit operations it guarantees
 * for each read length, and the warning for the reads it does not cover.
 */
#ifndef EXT_GUAR_H
#define EXT_GUAR_H

#include <stdint.h>

#include "ext.h"
#include "filt.h"

/**
 * What the filter that made the stream UP guarantees for each read length
 * 0..ALIGN_MAX_READ (its seedfilt.method, e, step and anywhere, or its
 * per-length plan, against index X; NOGAPS: --no-gaps), as a table the
 * caller frees; the stream's setting in *O.  NULL when the stream does not
 * say (no seedfilt, or -m mem).
 */
int16_t *ext_guar_table(const rec_prov_t *up, const idx_t *x, int nogaps, filt_opt_t *o);

/**
 * Warn (even with -q) about ST's reads whose bound in EO exceeds the
 * table EO->guar, naming the setting FO of the stream UP and a command
 * that would cover them.
 */
void ext_not_covered(const ext_opt_t *eo, const idx_t *x, const ext_stats_t *st,
		const filt_opt_t *fo, const rec_prov_t *up);

#endif
