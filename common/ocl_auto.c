/*
 * ocl_auto.c - the calibration files and the choice of "-d auto"
 * (ocl_auto.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "ocl.h"
#include "ocl_auto.h"
#include "util.h"

#define AUTO_MAGIC "seedpipe-auto 1"

static const char *const num_name[4] = { "dev_fixed", "dev_unit", "nat_fixed", "nat_unit" };

const char *ocl_auto_spec(void)
{
	const char *s = getenv("SEEDPIPE_AUTO_DEVICE");

	return s && *s ? s : "gpu";
}

static int cache_off(void)
{
	const char *s = getenv("SEEDPIPE_NO_CACHE");

	return s && *s && strcmp(s, "0") != 0;
}

char *ocl_auto_path(const char *name, const char *driver, const char *key, int create)
{
	XXH3_state_t *st;
	uint64_t h;
	char *dir, *path;
	size_t n;

	if (cache_off() || !(dir = ocl_cache_dir(create)))
		return NULL;
	st = XXH3_createState();
	if (!st) {
		free(dir);
		return NULL;
	}
	XXH3_64bits_reset(st);
	/* the strings with their terminators: no two triples hash the same bytes */
	XXH3_64bits_update(st, name, strlen(name) + 1);
	XXH3_64bits_update(st, driver, strlen(driver) + 1);
	XXH3_64bits_update(st, key, strlen(key) + 1);
	h = XXH3_64bits_digest(st);
	XXH3_freeState(st);
	n = strlen(dir) + 40;
	path = sp_malloc(n);
	snprintf(path, n, "%s/auto-%016" PRIx64 ".txt", dir, h);
	free(dir);
	return path;
}

/* Line LINE (its newline cut) is "WORD VALUE": VALUE, else NULL. */
static const char *after(const char *line, const char *word)
{
	size_t n = strlen(word);

	return !strncmp(line, word, n) && line[n] == ' ' ? line + n + 1 : NULL;
}

int ocl_auto_load(const char *path, const char *name, const char *driver, const char *key,
		ocl_auto_cal_t *c)
{
	double v[4];
	int have = 0, id = 0, i;
	char line[1024];
	FILE *f;

	if (!path || !(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof line, f)) {
		const char *a;

		line[strcspn(line, "\n")] = 0;
		if (!strcmp(line, AUTO_MAGIC))
			id |= 1;
		else if ((a = after(line, "device")))
			id |= !strcmp(a, name) ? 2 : 16;
		else if ((a = after(line, "driver")))
			id |= !strcmp(a, driver) ? 4 : 16;
		else if ((a = after(line, "key")))
			id |= !strcmp(a, key) ? 8 : 16;
		else
			for (i = 0; i < 4; i++)
				if ((a = after(line, num_name[i]))) {
					char *end;

					errno = 0;
					v[i] = strtod(a, &end);
					if (!*end && end != a && !errno && isfinite(v[i]) && v[i] >= 0)
						have |= 1 << i;
				}
	}
	fclose(f);
	if (id != 15 || have != 15)
		return -1;
	c->dev_fixed = v[0];
	c->dev_unit = v[1];
	c->nat_fixed = v[2];
	c->nat_unit = v[3];
	return 0;
}

int ocl_auto_save(const char *path, const char *name, const char *driver, const char *key,
		const ocl_auto_cal_t *c)
{
	size_t n = strlen(path) + 32;
	char *tmp = sp_malloc(n);
	FILE *f;
	int ok;

	snprintf(tmp, n, "%s.%ld.tmp", path, (long)getpid());
	if (!(f = fopen(tmp, "w"))) {
		free(tmp);
		return -1;
	}
	fprintf(f, AUTO_MAGIC "\ndevice %s\ndriver %s\nkey %s\n", name, driver, key);
	fprintf(f, "%s %.9g\n%s %.9g\n%s %.9g\n%s %.9g\n", num_name[0], c->dev_fixed,
			num_name[1], c->dev_unit, num_name[2], c->nat_fixed, num_name[3], c->nat_unit);
	ok = !ferror(f);
	ok = fclose(f) == 0 && ok;
	if (!ok || rename(tmp, path) < 0) {
		unlink(tmp);
		free(tmp);
		return -1;
	}
	free(tmp);
	return 0;
}

int ocl_auto_choose(const ocl_auto_cal_t *c, double units, char *why, size_t len)
{
	char model[256];
	int dev;

	snprintf(model, sizeof model, "device %.3g s + %.3g s/unit, native %.3g s + %.3g s/unit",
			c->dev_fixed, c->dev_unit, c->nat_fixed, c->nat_unit);
	if (units < 0) {
		dev = c->dev_unit < c->nat_unit;
		snprintf(why, len, "%s: input of unknown size, the %s costs less per unit (%s)",
				dev ? "device" : "native code", dev ? "device" : "native code", model);
	} else {
		double td = c->dev_fixed + units * c->dev_unit, tn = c->nat_fixed + units * c->nat_unit;

		dev = td < tn;
		snprintf(why, len, "%s: predicted %.3g s on the device, %.3g s native for %.4g "
				"units (%s)", dev ? "device" : "native code", td, tn, units, model);
	}
	return dev;
}

void ocl_auto_fit(double u1, double t1, double u2, double t2, double *fixed, double *unit)
{
	*unit = u2 > u1 && t2 > t1 ? (t2 - t1) / (u2 - u1) : (u2 > 0 ? t2 / u2 : 0);
	*fixed = t1 - u1 * *unit;
	if (*fixed < 0)
		*fixed = 0;
}
