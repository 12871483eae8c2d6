/*
 * tap.h - TAP output for C unit tests (header only).
 *
 *     tap_ok(cond, "name %d", i);   prints "ok N - name" or "not ok N - name"
 *     tap_skip("why");              prints "ok N # skip why"
 *     return tap_done();            prints the plan "1..N", returns the exit status
 *
 * Diagnostics go to stdout as "# ..." lines (tap_diag), which TAP ignores.
 */
#ifndef SP_TAP_H
#define SP_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int tap_n, tap_failed;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static inline int tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	printf("%sok %d - ", cond ? "" : "not ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!cond)
		tap_failed++;
	return cond;
}

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static inline void tap_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static inline void tap_skip(const char *why)
{
	tap_n++;
	printf("ok %d # skip %s\n", tap_n, why);
}

static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	fflush(stdout);
	return tap_failed ? 1 : 0;
}

#endif
