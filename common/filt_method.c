/*
 * filt_method.c - seedfilt's matching methods: names, the index structure
 * each needs, the checks of a method against an index and -e, the choice of
 * "auto", the neighborhood length (filt.h).
 */
#include <stdio.h>
#include <string.h>

#include "filt_priv.h"

const char *filt_method_name(int m)
{
	static const char *name[] = { "auto", "bpr", "bs", "ph", "fm" };

	return m >= 0 && m <= FILT_FM ? name[m] : "?";
}

int filt_method_parse(const char *s)
{
	int m;

	for (m = FILT_AUTO; m <= FILT_FM; m++)
		if (strcmp(s, filt_method_name(m)) == 0)
			return m;
	return -1;
}

uint32_t filt_method_struct(int m)
{
	switch (m) {
	case FILT_BPR: return IDX_S_GENERAL;
	case FILT_BS: return IDX_S_REDUCED;
	case FILT_PH: return IDX_S_BLOCK | IDX_S_REDUCED;
	case FILT_FM: return IDX_S_FM;
	}
	return 0;
}

int filt_check(const idx_t *x, int m, uint32_t e, int any, char *msg, size_t len)
{
	static const char *sname[] = { "", "general", "reduced", "", "block", "", "", "", "fm" };
	uint32_t need = filt_method_struct(m), miss = need & ~x->p.structs;

	if (miss) {
		uint32_t b = miss & (uint32_t)-(int32_t)miss;

		snprintf(msg, len, "method %s needs the %s structure, which the index lacks "
				"(rebuild it with seqidx -m ...,%s)", filt_method_name(m),
				sname[b], sname[b]);
		return -1;
	}
	if (m == FILT_BPR && e >= x->p.l) {
		snprintf(msg, len, "-e %u is out of range for bpr: it needs e < l = %u",
				e, x->p.l);
		return -1;
	}
	if (m != FILT_BPR && e > FILT_MAX_E_HAM) {
		snprintf(msg, len, "-e %u is out of range for %s: 0..%d (use -m bpr for more)",
				e, filt_method_name(m), FILT_MAX_E_HAM);
		return -1;
	}
	if (m != FILT_BPR && e > x->p.l) {
		snprintf(msg, len, "-e %u is larger than the neighborhood length %u",
				e, x->p.l);
		return -1;
	}
	if (any && m == FILT_BPR) {
		snprintf(msg, len, "-a is not supported by bpr (its errors are edit "
				"operations in the neighborhood): use -m bs, ph or fm");
		return -1;
	}
	if (any && (m == FILT_BS || m == FILT_PH) && x->p.w + x->p.l > 32) {
		snprintf(msg, len, "-a with %s needs seed weight + l <= 32 (here %u + %u): "
				"use -m fm", filt_method_name(m), x->p.w, x->p.l);
		return -1;
	}
	return 0;
}

const int *filt_method_order(int any)
{
	static const int order[FILT_NMETHODS] = { FILT_PH, FILT_BS, FILT_FM, FILT_BPR };
	static const int order_any[FILT_NMETHODS] = { FILT_BS, FILT_PH, FILT_FM, FILT_BPR };

	return any ? order_any : order;
}

int filt_auto(const idx_t *x, uint32_t e, int edits, int any)
{
	const int *order = filt_method_order(any);
	char msg[256];
	size_t i;

	for (i = 0; i < FILT_NMETHODS; i++) {
		int m = order[i];

		if (edits && m != FILT_BPR)
			continue;
		if (filt_check(x, m, e, any, msg, sizeof msg) == 0)
			return m;
	}
	return -1;
}

uint32_t filt_qlen(const idx_t *x, int m, uint32_t e)
{
	return m == FILT_BPR ? x->p.l - e : x->p.l;
}
