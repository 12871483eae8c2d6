/*
 * ocl_auto.h - "-d auto" by a measured model.  A tool times its native and
 * its device path on a small fixed synthetic workload (a calibration, done
 * once), keeps the four numbers below in the cache directory next to the
 * kernel cache, keyed by the device's name, its driver version and the
 * tool's workload key (what changes the costs: index, method, threads...),
 * and then chooses per run from the size of the input:
 *
 *     native: nat_fixed + units * nat_unit seconds
 *     device: dev_fixed + units * dev_unit seconds
 *
 * the smaller wins (units unknown, as for a pipe: the smaller per-unit cost).
 * dev_fixed holds what a device run pays before its first unit (opening the
 * device, uploading the index, building or loading the kernels).
 *
 * Cache file: auto-HEX followed by the .txt suffix, in the kernel cache directory
 * (HEX: XXH3-64 of name, driver and key),
 * text lines "seedpipe-auto 1", "device NAME", "driver DRIVER", "key KEY",
 * then "dev_fixed X", "dev_unit X", "nat_fixed X", "nat_unit X" (seconds);
 * a file whose device, driver or key lines differ, or with a number missing,
 * negative or not finite, is ignored (calibrate again).
 *
 * Environment: SEEDPIPE_AUTO_DEVICE (the device auto considers instead of
 * the first GPU, e.g. cpu: for the tests), SEEDPIPE_NO_CACHE=1 (nothing
 * read or written: every auto run calibrates).
 */
#ifndef SP_OCL_AUTO_H
#define SP_OCL_AUTO_H

#include <stddef.h>

typedef struct {
	double dev_fixed, dev_unit;   /* device: seconds before the first unit, per unit */
	double nat_fixed, nat_unit;   /* native */
} ocl_auto_cal_t;

/** The spec auto opens when it chooses the device: $SEEDPIPE_AUTO_DEVICE, else "gpu". */
const char *ocl_auto_spec(void);

/**
 * The calibration file of device NAME with driver DRIVER for workload KEY
 * (malloc'ed path), or NULL when the cache is off or has no directory
 * (created when CREATE is set).
 */
char *ocl_auto_path(const char *name, const char *driver, const char *key, int create);

/** Read the calibration of PATH into *C: 0, or -1 (missing, stale or malformed). */
int ocl_auto_load(const char *path, const char *name, const char *driver, const char *key,
		ocl_auto_cal_t *c);

/** Write *C to PATH (through a temporary file renamed over it): 0, or -1. */
int ocl_auto_save(const char *path, const char *name, const char *driver, const char *key,
		const ocl_auto_cal_t *c);

/**
 * The model's choice for UNITS units (< 0: unknown): 1 the device, 0 the
 * native code, with the reason and the predicted times in WHY.
 */
int ocl_auto_choose(const ocl_auto_cal_t *c, double units, char *why, size_t len);

/**
 * Costs from two timed runs of U1 < U2 units taking T1 and T2 seconds:
 * *UNIT = (T2 - T1) / (U2 - U1), *FIXED = T1 - U1 * *UNIT (neither below 0).
 */
void ocl_auto_fit(double u1, double t1, double u2, double t2, double *fixed, double *unit);

#endif
