/*
 * seedfilt_plan.h - seedfilt -E with -m auto (tools/seedfilt_plan.c).
 */
#ifndef SEEDFILT_PLAN_H
#define SEEDFILT_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "filt.h"
#include "idx.h"

/**
 * Measure the (method, e) pairs of index X on the first reads of IN and
 * plan a setting per read length into *PLAN (RUN->plan set; RUN->o the
 * setting of -L's length, else the first read's: the device's); the pair
 * costs, the stream's seedfilt.plan, into COSTS.  E_SET, S_SET: -e (the
 * least e) and -s (the largest step) were given.  Returns the method; dies
 * on errors.
 */
int plan_or_die(const idx_t *x, filt_in_t *in, filt_run_t *run, filt_plan_t *plan,
		int e_set, int s_set, char *costs, size_t clen);

/**
 * The -E warning of PLAN after the run: NG of READS reads not covered,
 * their lengths, and an index that would cover the shortest (BSTR: -E's
 * text).
 */
void plan_warn(const idx_t *x, const filt_plan_t *plan, const char *bstr, uint64_t ng,
		uint64_t reads);

/**
 * -d auto: 1 when RUN's plan filters reads of LEN bases (or -L's) by a
 * scheme, which has no kernel (no device is opened then); says so with -v.
 */
int plan_host_only(const filt_run_t *run, uint32_t len);

#endif
