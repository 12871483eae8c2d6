/*
 * ocl_auto.c - the calibration files and the choice of "-d auto"
 * (ocl_auto.h).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <link.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
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

/* The cache file named PREFIX, a dash, HEX and .txt, HEX the XXH3-64 of
 * the N strings S (with their terminators: no two lists hash the same
 * bytes); NULL when the cache is off or has no directory. */
static char *cache_file(const char *prefix, const char *const *s, int n, int create)
{
	XXH3_state_t *st;
	uint64_t h;
	char *dir, *path;
	size_t len;
	int i;

	if (cache_off() || !(dir = ocl_cache_dir(create)))
		return NULL;
	st = XXH3_createState();
	if (!st) {
		free(dir);
		return NULL;
	}
	XXH3_64bits_reset(st);
	for (i = 0; i < n; i++)
		XXH3_64bits_update(st, s[i], strlen(s[i]) + 1);
	h = XXH3_64bits_digest(st);
	XXH3_freeState(st);
	len = strlen(dir) + strlen(prefix) + 32;
	path = sp_malloc(len);
	snprintf(path, len, "%s/%s-%016" PRIx64 ".txt", dir, prefix, h);
	free(dir);
	return path;
}

char *ocl_auto_path(const char *name, const char *driver, const char *key, int create)
{
	const char *s[3] = { name, driver, key };

	return cache_file("auto", s, 3, create);
}

/* Write TEXT to PATH through a temporary file renamed over it: 0, or -1. */
static int write_replace(const char *path, const char *text)
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
	ok = fputs(text, f) >= 0 && !ferror(f);
	ok = fclose(f) == 0 && ok;
	if (!ok || rename(tmp, path) < 0) {
		unlink(tmp);
		free(tmp);
		return -1;
	}
	free(tmp);
	return 0;
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
	char *text;
	size_t n = strlen(name) + strlen(driver) + strlen(key) + 256;
	int r;

	text = sp_malloc(n);
	snprintf(text, n, AUTO_MAGIC "\ndevice %s\ndriver %s\nkey %s\n"
			"%s %.9g\n%s %.9g\n%s %.9g\n%s %.9g\n", name, driver, key,
			num_name[0], c->dev_fixed, num_name[1], c->dev_unit,
			num_name[2], c->nat_fixed, num_name[3], c->nat_unit);
	r = write_replace(path, text);
	free(text);
	return r;
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

void ocl_auto_fit_cold(double cold, double close, double u1, double t1, double u2, double t2,
		double *fixed, double *unit)
{
	double warm;

	ocl_auto_fit(u1, t1, u2, t2, &warm, unit);
	/* the first use measured (the cold run less the warm one of its size), not
	 * inferred through the slope: a slope too steep takes nothing from it */
	*fixed = (cold > t1 ? cold - t1 : 0) + (close > 0 ? close : 0) + warm;
}

/* --- the device auto considers, known without loading OpenCL ----------- */

#define DEV_MAGIC "seedpipe-autodev 1"
#define DEV_NONE_TTL (24 * 3600)   /* seconds a cached "no device" is trusted */
#define FP_READ 8192               /* most bytes read of a small text file */

typedef struct {
	char *s;
	size_t n, cap;
} fp_t;

static void fp_add(fp_t *b, const char *fmt, ...)
{
	va_list ap;
	int k;

	for (;;) {
		va_start(ap, fmt);
		k = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
		va_end(ap);
		if (k < 0)
			return;
		if ((size_t)k < b->cap - b->n) {
			b->n += (size_t)k;
			return;
		}
		b->cap = 2 * b->cap + (size_t)k + 1;
		b->s = sp_realloc(b->s, b->cap);
	}
}

/* "TAG PATH dev inode size mtime", or "TAG PATH -" when it is not there: 0 or -1 */
static int fp_stat(fp_t *b, const char *tag, const char *path)
{
	struct stat sb;

	if (stat(path, &sb) < 0) {
		fp_add(b, "%s %s -\n", tag, path);
		return -1;
	}
	fp_add(b, "%s %s %llu %llu %lld %lld.%09ld\n", tag, path, (unsigned long long)sb.st_dev,
			(unsigned long long)sb.st_ino, (long long)sb.st_size,
			(long long)sb.st_mtim.tv_sec, (long)sb.st_mtim.tv_nsec);
	return 0;
}

/* The first bytes of PATH (at most FP_READ - 1), trailing white space cut; NULL if unreadable. */
static char *read_small(const char *path, char *buf)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, FP_READ - 1, f);
	fclose(f);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' ' || buf[n - 1] == '\r' ||
				buf[n - 1] == '\t'))
		n--;
	buf[n] = 0;
	return buf;
}

/* the path of the OpenCL ICD loader this process uses (4096 bytes at ARG) */
static int loader_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "libOpenCL") ||
			!strchr(info->dlpi_name, '/'))
		return 0;
	snprintf(arg, 4096, "%s", info->dlpi_name);
	return 1;
}

/* Library LIB as the dynamic linker would find it (LOADER: the loader's directory). */
static void fp_lib(fp_t *b, const char *lib, const char *loader)
{
	static const char *const std_dirs[] = { "/usr/local/lib", "/lib/x86_64-linux-gnu",
		"/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
		"/lib64", "/usr/lib64", "/lib", "/usr/lib" };
	const char *lp = getenv("LD_LIBRARY_PATH");
	char path[4096];
	size_t i;

	if (!*lib)
		return;
	if (strchr(lib, '/')) {
		fp_stat(b, "lib", lib);
		return;
	}
	while (lp && *lp) {   /* LD_LIBRARY_PATH first, as the linker */
		size_t k = strcspn(lp, ":");

		snprintf(path, sizeof path, "%.*s/%s", (int)k, lp, lib);
		if (k && access(path, F_OK) == 0) {
			fp_stat(b, "lib", path);
			return;
		}
		lp += k + (lp[k] == ':');
	}
	for (i = 0; i <= sizeof std_dirs / sizeof *std_dirs; i++) {
		const char *d = i ? std_dirs[i - 1] : loader;

		if (!*d)
			continue;
		snprintf(path, sizeof path, "%s/%s", d, lib);
		if (access(path, F_OK) == 0) {
			fp_stat(b, "lib", path);
			return;
		}
	}
	fp_add(b, "lib %s not found\n", lib);
}

/* the GPU device nodes of /dev */
static int dev_node(const struct dirent *e)
{
	return !strncmp(e->d_name, "nvidia", 6) || !strcmp(e->d_name, "kfd") ||
		!strcmp(e->d_name, "dri") || !strcmp(e->d_name, "accel");
}

static int not_dot(const struct dirent *e)
{
	return e->d_name[0] != '.';
}

static int icd_name(const struct dirent *e)
{
	size_t n = strlen(e->d_name);

	return n > 4 && !strcmp(e->d_name + n - 4, ".icd");
}

/* The entries of DIR that FILTER takes, sorted, with TAG and their device
 * numbers; with RECURSE, the entries of those that are directories instead. */
static void fp_dir(fp_t *b, const char *tag, const char *dir, int (*filter)(const struct dirent *),
		int recurse)
{
	struct dirent **ents;
	char path[4096];
	int n, i;

	if ((n = scandir(dir, &ents, filter, alphasort)) < 0)
		return;
	for (i = 0; i < n; i++) {
		struct stat sb;

		snprintf(path, sizeof path, "%s/%s", dir, ents[i]->d_name);
		if (stat(path, &sb) < 0)
			sb.st_mode = sb.st_rdev = 0;
		if (S_ISDIR(sb.st_mode) && recurse)
			fp_dir(b, tag, path, not_dot, 0);
		else
			fp_add(b, "%s %s %llx\n", tag, path, (unsigned long long)sb.st_rdev);
		free(ents[i]);
	}
	free(ents);
}

static void fp_icd(fp_t *b, const char *path, const char *loader, char *buf)
{
	const char *t = read_small(path, buf);

	fp_add(b, "icd %s %s\n", path, t ? t : "-");
	if (t && !strchr(t, '\n'))
		fp_lib(b, t, loader);
}

static int env_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

extern char **environ;

char *ocl_auto_fingerprint(void)
{
	static const char *const env_pre[] = { "OCL_", "POCL_", "CUDA_", "NVIDIA_", "ROCR_",
		"HIP_", "GPU_", "ZE_", "LD_LIBRARY_PATH=", "LD_PRELOAD=" };
	const char *v = getenv("OCL_ICD_VENDORS"), *fn = getenv("OCL_ICD_FILENAMES");
	char *buf = sp_malloc(FP_READ), loader[4096] = "", **env, *t;
	fp_t b = { NULL, 0, 0 };
	size_t ne = 0, i, j;
	struct stat sb;
	struct dirent **ents;
	struct utsname u;
	cpu_set_t cs;
	int n;

	b.cap = 4096;
	b.s = sp_malloc(b.cap);
	b.s[0] = 0;
	fp_add(&b, "spec %s\n", ocl_auto_spec());
	for (i = 0; environ[i]; i++)
		;
	env = sp_malloc((i + 1) * sizeof *env);
	for (i = 0; environ[i]; i++)
		for (j = 0; j < sizeof env_pre / sizeof *env_pre; j++)
			if (!strncmp(environ[i], env_pre[j], strlen(env_pre[j]))) {
				env[ne++] = environ[i];
				break;
			}
	qsort(env, ne, sizeof *env, env_cmp);   /* the order of environ is the caller's */
	for (i = 0; i < ne; i++)
		fp_add(&b, "env %s\n", env[i]);
	free(env);
	dl_iterate_phdr(loader_cb, loader);
	fp_stat(&b, "loader", loader);
	if ((t = strrchr(loader, '/')))
		*t = 0;   /* its directory, where fp_lib looks too */
	fp_stat(&b, "ldcache", "/etc/ld.so.cache");
	if (!v || !*v)
		v = "/etc/OpenCL/vendors";
	if (stat(v, &sb) == 0 && S_ISREG(sb.st_mode)) {
		fp_icd(&b, v, loader, buf);
	} else if ((n = scandir(v, &ents, icd_name, alphasort)) >= 0) {
		char path[4096];
		int k;

		for (k = 0; k < n; k++) {
			snprintf(path, sizeof path, "%s/%s", v, ents[k]->d_name);
			fp_icd(&b, path, loader, buf);
			free(ents[k]);
		}
		free(ents);
	}
	while (fn && *fn) {
		size_t k = strcspn(fn, ":");

		snprintf(buf, FP_READ, "%.*s", (int)k, fn);
		fp_lib(&b, buf, loader);
		fn += k + (fn[k] == ':');
	}
	fp_dir(&b, "node", "/dev", dev_node, 1);
	if ((t = read_small("/proc/driver/nvidia/version", buf)))
		fp_add(&b, "nvidia %.*s\n", (int)strcspn(t, "\n"), t);
	fp_dir(&b, "nvgpu", "/proc/driver/nvidia/gpus", not_dot, 0);
	if ((n = scandir("/sys/bus/pci/devices", &ents, not_dot, alphasort)) >= 0) {
		char path[4096], cls[64] = "", ven[64] = "", dev[64] = "";
		int k;

		for (k = 0; k < n; k++) {
			snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/class", ents[k]->d_name);
			/* display controllers (0x03), processing accelerators (0x12) */
			if ((t = read_small(path, buf)) && (!strncmp(t, "0x03", 4) ||
						!strncmp(t, "0x12", 4))) {
				snprintf(cls, sizeof cls, "%s", t);
				snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/vendor",
						ents[k]->d_name);
				snprintf(ven, sizeof ven, "%s", (t = read_small(path, buf)) ? t : "-");
				snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/device",
						ents[k]->d_name);
				snprintf(dev, sizeof dev, "%s", (t = read_small(path, buf)) ? t : "-");
				fp_add(&b, "pci %s %s %s %s\n", ents[k]->d_name, cls, ven, dev);
			}
			free(ents[k]);
		}
		free(ents);
	}
	if ((t = read_small("/proc/cpuinfo", buf)) && (t = strstr(t, "model name")))
		fp_add(&b, "cpu %.*s\n", (int)strcspn(t, "\n"), t);
	CPU_ZERO(&cs);
	fp_add(&b, "cpus %ld %d\n", sysconf(_SC_NPROCESSORS_ONLN),
			sched_getaffinity(0, sizeof cs, &cs) == 0 ? CPU_COUNT(&cs) : -1);
	if (uname(&u) == 0)
		fp_add(&b, "kernel %s %s\n", u.release, u.machine);
	free(buf);
	return b.s;
}

/* The autodev file of fingerprint FP, or NULL (no cache). */
static char *dev_path(const char *fp, int create)
{
	return cache_file("autodev", &fp, 1, create);
}

/* The answer cached in PATH for FP: 0 (a device, NAME and DRIVER set), 1 (none), -1 (no answer). */
static int dev_load(const char *path, const char *fp, char *name, size_t name_len,
		char *driver, size_t driver_len)
{
	size_t cap = strlen(fp) + 1024, n;
	char *text = sp_malloc(cap + 1), *p, *body;
	FILE *f = fopen(path, "r");
	int r = -1;

	if (!f) {
		free(text);
		return -1;
	}
	n = fread(text, 1, cap, f);
	fclose(f);
	text[n] = 0;
	body = strstr(text, "\nfingerprint\n");
	if (strncmp(text, DEV_MAGIC "\n", sizeof DEV_MAGIC) || !body || strcmp(body + 13, fp))
		goto out;
	*body = 0;
	p = text + sizeof DEV_MAGIC;
	if (!strncmp(p, "none ", 5)) {
		char *end;
		double when = strtod(p + 5, &end), now = (double)time(NULL);

		r = *end == 0 && now >= when && now - when < DEV_NONE_TTL ? 1 : -1;
	} else if (!strncmp(p, "device ", 7) && (body = strstr(p, "\ndriver ")) &&
			!strchr(body + 8, '\n')) {
		*body = 0;
		snprintf(name, name_len, "%s", p + 7);
		snprintf(driver, driver_len, "%s", body + 8);
		r = 0;
	}
out:
	free(text);
	return r;
}

/*
 * The fingerprint as this process first read it (malloc'ed copy): peek and
 * forget use it, so that forget removes the entry peek read.  Once loaded,
 * an OpenCL loader or driver may change the process's environment (on an
 * NVIDIA machine with PoCL installed too, OCL_ICD_FILENAMES gained
 * libnvidia-opencl.so.1 when the device was opened), and a fingerprint
 * read again would name another entry: the stale one stayed.
 */
static char *proc_fingerprint(void)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static char *first;
	char *fp;

	pthread_mutex_lock(&mu);
	if (!first)
		first = ocl_auto_fingerprint();
	fp = sp_strdup(first);
	pthread_mutex_unlock(&mu);
	return fp;
}

int ocl_auto_peek(char *name, size_t name_len, char *driver, size_t driver_len, int *cached)
{
	char *fp = proc_fingerprint(), *path = dev_path(fp, 1), *text;
	size_t n;
	int r;

	*cached = 0;
	if (path && (r = dev_load(path, fp, name, name_len, driver, driver_len)) >= 0) {
		*cached = 1;
		free(path);
		free(fp);
		return r ? -1 : 0;
	}
	r = ocl_peek("auto", name, name_len, driver, driver_len);
	if (path) {
		n = strlen(fp) + strlen(name) + strlen(driver) + 256;
		text = sp_malloc(n);
		if (r == 0)
			snprintf(text, n, DEV_MAGIC "\ndevice %s\ndriver %s\nfingerprint\n%s", name,
					driver, fp);
		else
			snprintf(text, n, DEV_MAGIC "\nnone %lld\nfingerprint\n%s",
					(long long)time(NULL), fp);
		/* names with a line break cannot be read back: not cached */
		if ((r < 0 || (!strchr(name, '\n') && !strchr(driver, '\n'))) &&
				write_replace(path, text) < 0)
			sp_warn("cannot write the -d auto device cache '%s'", path);
		free(text);
	}
	free(path);
	free(fp);
	return r;
}

void ocl_auto_forget(void)
{
	char *fp = proc_fingerprint(), *path = dev_path(fp, 0);

	if (path)
		unlink(path);
	free(path);
	free(fp);
}
