/*
 * ocl_auto_test.c - the -d auto model (ocl_auto.h): the choice against the
 * predicted times computed here on random calibrations and sizes, the fit
 * on exact lines, the calibration files (round trip, paths keyed by device,
 * driver and key, stale and damaged files ignored).  Run in an empty
 * XDG_CACHE_HOME (the test script's).  "ocl_auto_test --path NAME DRIVER
 * KEY" prints the calibration file's path (for the tools' tests).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl_auto.h"
#include "tap.h"

static uint64_t rs = 88172645463325252ull;

static double urand(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return (double)(rs >> 11) / 9007199254740992.0;
}

static int near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * (fabs(a) + fabs(b)) + 1e-15;
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

int main(int argc, char **argv)
{
	ocl_auto_cal_t c, d;
	char why[512], *p, *q;
	int i, bad = 0, bad_unknown = 0, n_dev = 0;
	double fx, un;

	if (argc == 5 && !strcmp(argv[1], "--path")) {   /* for the scripts: NAME DRIVER KEY */
		p = ocl_auto_path(argv[2], argv[3], argv[4], 1);
		if (!p)
			return 1;
		printf("%s\n", p);
		free(p);
		return 0;
	}
	/* the choice: the smaller predicted time, per-unit costs for unknown sizes */
	for (i = 0; i < 100000; i++) {
		double u = urand() < 0.1 ? -1 : urand() * 1e9, td, tn;
		int want, got;

		c.dev_fixed = urand() * 2;
		c.dev_unit = urand() * 1e-8;
		c.nat_fixed = urand() * 0.1;
		c.nat_unit = urand() * 1e-8;
		got = ocl_auto_choose(&c, u, why, sizeof why);
		td = c.dev_fixed + u * c.dev_unit;
		tn = c.nat_fixed + u * c.nat_unit;
		want = u < 0 ? c.dev_unit < c.nat_unit : td < tn;
		n_dev += got;
		if (u < 0)
			bad_unknown += got != want;
		else
			bad += got != want;
		if (i == 0)
			tap_diag("why: %s", why);
	}
	tap_ok(bad == 0, "choice = the smaller predicted time (%d wrong)", bad);
	tap_ok(bad_unknown == 0, "unknown size: the smaller per-unit cost (%d wrong)", bad_unknown);
	tap_ok(n_dev > 1000 && n_dev < 99000, "both answers occur (%d device)", n_dev);
	c.dev_fixed = 1;
	c.dev_unit = 1e-9;
	c.nat_fixed = 0;
	c.nat_unit = 4e-9;
	tap_ok(!ocl_auto_choose(&c, 1e8, why, sizeof why) && strstr(why, "native code") == why,
			"small input: native (%s)", why);
	tap_ok(ocl_auto_choose(&c, 1e9, why, sizeof why) && strstr(why, "device") == why &&
			strstr(why, "predicted"), "large input: device (%s)", why);

	/* the fit: exact on lines, never a negative cost */
	for (i = 0, bad = 0; i < 1000; i++) {
		double f0 = urand(), s0 = urand() * 1e-6, u1 = 1 + urand() * 1e6, u2 = u1 * (2 + urand());

		ocl_auto_fit(u1, f0 + s0 * u1, u2, f0 + s0 * u2, &fx, &un);
		bad += !near(fx, f0) || !near(un, s0);
	}
	tap_ok(bad == 0, "fit recovers fixed and per-unit costs (%d wrong)", bad);
	ocl_auto_fit(10, 5, 20, 4, &fx, &un);   /* slower small run: no negative slope */
	tap_ok(un >= 0 && fx >= 0 && near(un, 0.2), "fit: noisy times give no negative cost");
	ocl_auto_fit(10, 0.1, 20, 0.5, &fx, &un);
	tap_ok(fx == 0 && near(un, 0.04), "fit: fixed cost clamped at 0");

	/* the files */
	p = ocl_auto_path("Dev A", "1.0", "k1", 1);
	tap_ok(p != NULL && strstr(p, "/seedpipe/auto-") != NULL, "path in the cache dir: %s",
			p ? p : "(null)");
	q = ocl_auto_path("Dev A", "1.1", "k1", 1);
	tap_ok(q && strcmp(p, q) != 0, "another driver, another file");
	free(q);
	q = ocl_auto_path("Dev A", "1.0", "k2", 1);
	tap_ok(q && strcmp(p, q) != 0, "another key, another file");
	free(q);
	tap_ok(ocl_auto_load(p, "Dev A", "1.0", "k1", &d) < 0, "no file: no calibration");
	c.dev_fixed = 0.75;
	c.dev_unit = 1.5e-9;
	c.nat_fixed = 0.0123;
	c.nat_unit = 3.25e-9;
	tap_ok(ocl_auto_save(p, "Dev A", "1.0", "k1", &c) == 0, "save");
	memset(&d, 0, sizeof d);
	tap_ok(ocl_auto_load(p, "Dev A", "1.0", "k1", &d) == 0 && near(d.dev_fixed, c.dev_fixed) &&
			near(d.dev_unit, c.dev_unit) && near(d.nat_fixed, c.nat_fixed) &&
			near(d.nat_unit, c.nat_unit), "load gives back what was saved");
	tap_ok(ocl_auto_load(p, "Dev B", "1.0", "k1", &d) < 0 &&
			ocl_auto_load(p, "Dev A", "2.0", "k1", &d) < 0 &&
			ocl_auto_load(p, "Dev A", "1.0", "k9", &d) < 0,
			"a file of another device, driver or key is ignored");
	write_file(p, "seedpipe-auto 1\ndevice Dev A\ndriver 1.0\nkey k1\n"
			"dev_fixed 1\ndev_unit 1e-9\nnat_fixed 0\n");
	tap_ok(ocl_auto_load(p, "Dev A", "1.0", "k1", &d) < 0, "a number missing: ignored");
	write_file(p, "seedpipe-auto 1\ndevice Dev A\ndriver 1.0\nkey k1\n"
			"dev_fixed -1\ndev_unit 1e-9\nnat_fixed 0\nnat_unit 2e-9\n");
	tap_ok(ocl_auto_load(p, "Dev A", "1.0", "k1", &d) < 0, "a negative number: ignored");
	write_file(p, "seedpipe-auto 1\ndevice Dev A\ndriver 1.0\nkey k1\n"
			"dev_fixed nan\ndev_unit 1e-9\nnat_fixed 0\nnat_unit 2e-9\n");
	tap_ok(ocl_auto_load(p, "Dev A", "1.0", "k1", &d) < 0, "nan: ignored");
	write_file(p, "seedpipe-auto 2\ndevice Dev A\ndriver 1.0\nkey k1\n"
			"dev_fixed 1\ndev_unit 1e-9\nnat_fixed 0\nnat_unit 2e-9\n");
	tap_ok(ocl_auto_load(p, "Dev A", "1.0", "k1", &d) < 0, "another format version: ignored");
	write_file(p, "seedpipe-auto 1\ndevice Dev A\ndriver 1.0\nkey k1\n"
			"dev_fixed 1x\ndev_unit 1e-9\nnat_fixed 0\nnat_unit 2e-9\n");
	tap_ok(ocl_auto_load(p, "Dev A", "1.0", "k1", &d) < 0, "trailing garbage: ignored");
	free(p);
	setenv("SEEDPIPE_NO_CACHE", "1", 1);
	tap_ok(ocl_auto_path("Dev A", "1.0", "k1", 1) == NULL, "SEEDPIPE_NO_CACHE: no file");
	return tap_done();
}
