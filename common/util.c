/*
 * util.c - error reporting, exit codes and checked allocation.
 */
#define _POSIX_C_SOURCE 200809L
#include "util.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *sp_progname = "seedpipe";

void sp_set_progname(const char *argv0)
{
	const char *s;

	if (!argv0 || !*argv0)
		return;
	s = strrchr(argv0, '/');
	sp_progname = s ? s + 1 : argv0;
}

static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
	char buf[4096];
	int n;

	/* one write so that messages of concurrent pipe stages do not interleave */
	n = snprintf(buf, sizeof buf, "%s: %s", sp_progname, prefix);
	if (n < 0 || (size_t)n >= sizeof buf)
		n = 0;
	vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
	n = (int)strlen(buf);
	buf[n++] = '\n';
	fflush(stdout);
	fwrite(buf, 1, (size_t)n, stderr);
}

void sp_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
	exit(SP_EXIT_DATA);
}

void sp_die_code(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
	exit(code);
}

void sp_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

void sp_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void *sp_malloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		sp_die("out of memory (%zu bytes)", n);
	return p;
}

void *sp_calloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		sp_die("out of memory (%zu x %zu bytes)", n, size);
	return p;
}

void *sp_realloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		sp_die("out of memory (%zu bytes)", n);
	return q;
}

void *sp_calloc_lines(size_t n, size_t size)
{
	size_t b = (n ? n : 1) * (size ? size : 1);
	void *p;

	if (size && n > SIZE_MAX / size)
		sp_die("out of memory (%zu x %zu bytes)", n, size);
	b = (b + SP_LINE - 1) / SP_LINE * SP_LINE;
	if (posix_memalign(&p, SP_LINE, b) != 0)
		sp_die("out of memory (%zu x %zu bytes)", n, size);
	memset(p, 0, b);
	return p;
}

char *sp_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = sp_malloc(n);

	memcpy(p, s, n);
	return p;
}

void sp_close_stdout(void)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (errno == EPIPE)
			exit(SP_EXIT_OK);
		sp_die("failed to write the results: %s", strerror(errno));
	}
}

static void on_sigpipe(int sig)
{
	(void)sig;
	_exit(SP_EXIT_PIPE);
}

/* SIGPIPE taken by HANDLER (a function, or SIG_IGN) */
static void set_sigpipe(void (*handler)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPIPE, &sa, NULL);
}

void sp_quiet_sigpipe(void)
{
	set_sigpipe(on_sigpipe);
}

void sp_ignore_sigpipe(void)
{
	set_sigpipe(SIG_IGN);
}

void sp_usage_error(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	sp_die_code(SP_EXIT_USAGE, "%s; try '%s --help'", msg, sp_progname);
}

int sp_getopt(int argc, char *const argv[], const char *optstring,
		const struct option *longopts)
{
	const char *word, *p;
	int c;

	opterr = 0;
	c = getopt_long(argc, argv, optstring, longopts, NULL);
	if (c != '?')
		return c;
	word = optind > 0 && optind <= argc ? argv[optind - 1] : "";
	if (optopt == 0)
		sp_usage_error("unrecognized option '%s'", word);
	if (strncmp(word, "--", 2) == 0) {
		size_t n = strcspn(word + 2, "=");

		for (; longopts && longopts->name; longopts++)
			if (strlen(longopts->name) == n && !strncmp(longopts->name, word + 2, n))
				break;
		if (longopts && longopts->name)
			sp_usage_error(longopts->has_arg == no_argument ?
					"option '--%s' takes no argument" :
					"option '--%s' requires an argument", longopts->name);
		sp_usage_error("unrecognized option '%s'", word);
	}
	p = optopt != ':' ? strchr(optstring, optopt) : NULL;
	if (p && p[1] == ':')
		sp_usage_error("option '-%c' requires an argument", optopt);
	if (optopt > ' ' && optopt < 127)
		sp_usage_error("unknown option '-%c'", optopt);
	sp_usage_error("unknown option");
}

void sp_print_version(void)
{
	printf("%s (seedpipe) %s\n", sp_progname, SP_VERSION);
}

char *sp_abspath(const char *path)
{
	char buf[PATH_MAX];
	struct stat st;

	if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && realpath(path, buf))
		return sp_strdup(buf);
	return sp_strdup(path);
}

double sp_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void sp_malloc_bounded(void)
{
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	mallopt(M_TRIM_THRESHOLD, 256 * 1024);
}

uint64_t sp_rss(int peak)
{
	const char *key = peak ? "VmHWM:" : "VmRSS:";
	unsigned long long kb = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, key, 6) == 0 && sscanf(line + 6, "%llu", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb * 1024;
}

int sp_simd_allowed(void)
{
	return getenv("SEEDPIPE_NO_SIMD") == NULL;
}

int sp_default_threads(int max)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > max ? max : (int)n;
}

long long sp_opt_int(const char *s, const char *opt, long long lo, long long hi)
{
	char *e;
	long long v;

	errno = 0;
	v = strtoll(s, &e, 10);
	if (errno || e == s || *e || v < lo || v > hi)
		sp_usage_error("option %s: '%s' is not an integer in %lld..%lld", opt, s, lo, hi);
	return v;
}

char *sp_join_argv(int argc, char **argv)
{
	size_t n = 1;
	char *s, *p;
	int i;

	for (i = 0; i < argc; i++)
		n += strlen(argv[i]) + 1;
	s = p = sp_malloc(n);
	for (i = 0; i < argc; i++) {
		size_t k = strlen(argv[i]);

		if (i)
			*p++ = ' ';
		memcpy(p, argv[i], k);
		p += k;
	}
	*p = '\0';
	return s;
}

static _Thread_local char errslot[SP_ERRMSG_MAX];

int sp_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errslot, sizeof errslot, fmt, ap);
	va_end(ap);
	return -1;
}

const char *sp_errmsg(void)
{
	return errslot;
}

void sp_or_die(int r)
{
	if (r < 0)
		sp_die("%s", errslot[0] ? errslot : "unknown error");
}

int sp_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t k = write(fd, p, n);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (k == 0) {
			errno = EIO;
			return -1;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

int sp_buf_put(uint8_t *buf, size_t cap, size_t *used, const void *p, size_t n,
		sp_flush_fn flush, void *ctx)
{
	const uint8_t *q = p;

	while (n) {
		size_t k = cap - *used < n ? cap - *used : n;

		memcpy(buf + *used, q, k);
		*used += k;
		q += k;
		n -= k;
		if (*used == cap && flush(ctx) != 0)
			return -1;
	}
	return 0;
}

static unsigned cpu_bits;
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;

static void cpu_probe(void)
{
	unsigned b = 0;

#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f"))
		b |= SP_CPU_AVX512F;
	if (__builtin_cpu_supports("avx512bw"))
		b |= SP_CPU_AVX512BW;
	if (__builtin_cpu_supports("avx512dq"))
		b |= SP_CPU_AVX512DQ;
	if (__builtin_cpu_supports("avx512vpopcntdq"))
		b |= SP_CPU_AVX512VPOPCNTDQ;
	if (__builtin_cpu_supports("bmi2"))
		b |= SP_CPU_BMI2;
	if (__builtin_cpu_supports("avx2"))
		b |= SP_CPU_AVX2;
	if (__builtin_cpu_supports("popcnt"))
		b |= SP_CPU_POPCNT;
#endif
	cpu_bits = b;
}

int sp_cpu_has(unsigned need)
{
	pthread_once(&cpu_once, cpu_probe);
	return (cpu_bits & need) == need;
}
