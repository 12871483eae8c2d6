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
 * dev_fixed holds what a device run pays besides its units: opening the
 * device, uploading the index, loading the kernels, making the buffers, the
 * latency of its first batches, closing it (ocl_auto_fit_cold: timed from a
 * cold start, as a run pays it; extend does so, see ext_auto.c).
 *
 * Cache file: auto-HEX followed by the .txt suffix, in the kernel cache directory
 * (HEX: XXH3-64 of name, driver and key),
 * text lines "seedpipe-auto 1", "device NAME", "driver DRIVER", "key KEY",
 * then "dev_fixed X", "dev_unit X", "nat_fixed X", "nat_unit X" (seconds);
 * a file whose device, driver or key lines differ, or with a number missing,
 * negative or not finite, is ignored (calibrate again).
 *
 * Which device auto considers (its name and driver, the first half of the
 * key) is itself cached, so that a run whose calibration says "native code"
 * never loads an OpenCL platform (on an NVIDIA machine that alone takes
 * about 0.2 s): file autodev-HEX followed by .txt, HEX the XXH3-64 of a
 * fingerprint of this system's OpenCL setup read from the file system
 * without loading it (ocl_auto_fingerprint), lines "seedpipe-autodev 1",
 * then "device NAME" and "driver DRIVER", or "none SECONDS" (no such
 * device at that time of the clock: trusted for a day), then "fingerprint"
 * and the fingerprint itself (compared in full).  Validated lazily: when
 * the device is opened for the choice, its name and driver must be the
 * cached ones, else the entry goes (ocl_auto_forget) and the device is
 * probed again (a stale "device" never runs on the wrong device or on a
 * machine without one).  ocl_auto_peek and ocl_auto_forget use the
 * fingerprint as the process first read it (its first peek, before OpenCL
 * was loaded): a loaded OpenCL loader or driver may change the process's
 * environment, which a fingerprint read again would see.
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
 * The fingerprint of this system's OpenCL setup, read without loading it
 * (malloc'ed text, one item a line): the spec auto opens; the environment
 * of the ICD loaders, drivers and dynamic linker (OCL_*, POCL_*, CUDA_*,
 * NVIDIA_*, ROCR_*, HIP_*, GPU_*, ZE_*, LD_LIBRARY_PATH, LD_PRELOAD); the
 * loader library in use; every ICD file (path and text) of
 * $OCL_ICD_VENDORS (a directory or one file) or /etc/OpenCL/vendors, and
 * each library they or $OCL_ICD_FILENAMES name, found as the dynamic
 * linker would in the usual directories, with its device, inode, size and
 * modification time, and the linker's cache's; the GPU device nodes (/dev/nvidia*,
 * /dev/dri/, /dev/kfd, /dev/accel/), the NVIDIA kernel module's version
 * and GPUs, the PCI display and accelerator devices; the CPU model and
 * count (CPU devices), the kernel release.
 */
char *ocl_auto_fingerprint(void);

/**
 * The device auto considers (ocl_peek("auto", ...)): 0 with NAME and DRIVER
 * set, or -1 when there is none.  *CACHED is set when the answer came
 * from the autodev file of this fingerprint (OpenCL not loaded); else the
 * platforms were probed and the answer is cached for the next runs.
 */
int ocl_auto_peek(char *name, size_t name_len, char *driver, size_t driver_len, int *cached);

/** The cached answer of ocl_auto_peek proved wrong: remove it. */
void ocl_auto_forget(void);

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

/**
 * Costs of a path that pays for its first use (opening a device, loading kernels, making
 * buffers): COLD seconds from nothing to the end of a first run of U1 units, CLOSE seconds
 * to close it, then warm runs of U1 < U2 units taking T1 and T2: *UNIT the warm runs' slope
 * (ocl_auto_fit), *FIXED = COLD + CLOSE - U1 * *UNIT, every second a run pays besides its
 * units: the first use (COLD - T1, not below 0) + CLOSE + the warm fit's fixed cost.
 */
void ocl_auto_fit_cold(double cold, double close, double u1, double t1, double u2, double t2,
		double *fixed, double *unit);

#endif
