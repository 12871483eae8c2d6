/*
 * util.h - the base layer: error reporting and the error policy, exit codes,
 * checked allocation, write_all, the CPU-feature probe.
 *
 * Error grammar: "TOOL: message" on stderr, lower case, no final full stop,
 * the subject quoted.  Warnings read "TOOL: warning: ...".
 *
 * Error policy:
 * - Code that can run on a worker thread (anything called from sp_for or
 *   sp_pipeline, and every library function documented as returning -1)
 *   never exits: it returns -1 after sp_fail("message"), which keeps the
 *   message in the calling thread's error slot (sp_errmsg()).  The threading
 *   module carries the first failure of a run back to the thread that
 *   started it (sp_thread.h).
 * - Only tools/ and functions named *_or_die, called on the main thread,
 *   exit: sp_die / sp_die_code print the message and exit; sp_or_die(r)
 *   exits with sp_errmsg() when r < 0.
 * - Out of memory is the exception: sp_malloc and friends exit from any
 *   thread (there is nothing sensible to return to).
 */
#ifndef SP_UTIL_H
#define SP_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit statuses used by every tool. */
#define SP_EXIT_OK 0        /* success */
#define SP_EXIT_DATA 1      /* data or run-time error */
#define SP_EXIT_USAGE 2     /* bad command line */
#define SP_EXIT_NODEVICE 3  /* an explicitly requested OpenCL device is absent */

#define SP_VERSION "0.1.0"

#if defined(__GNUC__)
#define SP_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define SP_NORETURN __attribute__((noreturn))
#else
#define SP_PRINTF(a, b)
#define SP_NORETURN
#endif

/** Name used as the prefix of every message; set once by main(). */
extern const char *sp_progname;

/** Set sp_progname from argv[0] (basename) and ignore nothing else. */
void sp_set_progname(const char *argv0);

/** Print "PROG: message\n" and exit with status 1. */
SP_NORETURN void sp_die(const char *fmt, ...) SP_PRINTF(1, 2);

/** Print "PROG: message\n" and exit with the given status. */
SP_NORETURN void sp_die_code(int code, const char *fmt, ...) SP_PRINTF(2, 3);

/** Print "PROG: warning: message\n" and return. */
void sp_warn(const char *fmt, ...) SP_PRINTF(1, 2);

/** Print "PROG: message\n" (no prefix "warning") and return. */
void sp_msg(const char *fmt, ...) SP_PRINTF(1, 2);

/** malloc/calloc/realloc that die with "out of memory (N bytes)". */
void *sp_malloc(size_t n);
void *sp_calloc(size_t n, size_t size);
void *sp_realloc(void *p, size_t n);
char *sp_strdup(const char *s);

/**
 * sp_calloc with the block aligned to SP_LINE bytes (free() it): for arrays
 * of per-thread slots whose type is padded to SP_LINE (SP_LINE_ALIGNED), so
 * that no two threads write to one cache line.
 */
#define SP_LINE 64
#define SP_LINE_ALIGNED _Alignas(SP_LINE)
void *sp_calloc_lines(size_t n, size_t size);

/**
 * Flush and check stdout at exit of a tool; a write error other than EPIPE
 * is fatal ("failed to write the results"), EPIPE ends quietly with status 0
 * ("| head" is not an error).
 */
void sp_close_stdout(void);

/**
 * Treat SIGPIPE quietly: a reader that closed the pipe (a downstream
 * "| head") ends the tool at once with status 0 and no message, as every
 * man page promises, also when the parent ignored SIGPIPE.  The handler
 * only calls _exit(0); sp_tmp.h chains its cleanup of temporary files in
 * front of it.
 */
void sp_quiet_sigpipe(void);

/**
 * Ignore SIGPIPE (also one sent by kill(1)): a write to a pipe whose reader
 * went away fails with EPIPE instead, for a tool that must clean up first
 * (strsort removes its runs, then ends with status 0).
 */
void sp_ignore_sigpipe(void);

/** The exit status of a tool whose reader went away: 0. */
#define SP_EXIT_PIPE SP_EXIT_OK

/**
 * A usage error: print "PROG: message; try 'PROG --help'" (one line) and
 * exit with status 2.
 */
SP_NORETURN void sp_usage_error(const char *fmt, ...) SP_PRINTF(1, 2);

struct option;

/**
 * getopt_long with the suite's messages: an unknown option, a missing
 * argument or an argument to an option that takes none is a usage error
 * (sp_usage_error, exit 2); otherwise as getopt_long ('?' is never
 * returned).
 */
int sp_getopt(int argc, char *const argv[], const char *optstring,
		const struct option *longopts);

/** Print "PROG (seedpipe) VERSION" on stdout (--version of every tool). */
void sp_print_version(void);

/**
 * The absolute path of PATH when it names a regular file (realpath), else
 * a copy of PATH; the caller frees.  Provenance records this, so that a
 * later stage finds the file from another directory.
 */
char *sp_abspath(const char *path);

/** Longest message an error slot keeps (longer ones are cut). */
#define SP_ERRMSG_MAX 1024

/**
 * Record "message" (printf format, no program name) as the calling thread's
 * error and return -1, so that "return sp_fail(...);" reports and fails.
 */
int sp_fail(const char *fmt, ...) SP_PRINTF(1, 2);

/** The calling thread's last sp_fail message ("" if none). */
const char *sp_errmsg(void);

/** If R < 0, print the calling thread's error message and exit 1. */
void sp_or_die(int r);

/**
 * Write all N bytes of BUF to FD, retrying short writes and EINTR.
 * Returns 0, or -1 with errno set (EIO when write(2) wrote nothing).
 */
int sp_write_all(int fd, const void *buf, size_t n);

/** Empties a full buffer (sp_buf_put): writes it out and sets its fill to 0; 0 or -1 after sp_fail(). */
typedef int (*sp_flush_fn)(void *ctx);

/**
 * Append N bytes at P to the buffer BUF of CAP bytes, *USED of them in use,
 * calling FLUSH(CTX) each time it is full (FLUSH sets *USED to 0): the write
 * loop of a fixed buffer in front of a file.  Returns 0, or -1 when FLUSH
 * failed (the bytes after that point not appended).
 */
int sp_buf_put(uint8_t *buf, size_t cap, size_t *used, const void *p, size_t n,
		sp_flush_fn flush, void *ctx);

/**
 * Write the decimal digits of X at P (1 to 20 bytes, no NUL); returns the
 * byte after the last.
 */
static inline char *sp_put_u64(char *p, uint64_t x)
{
	char num[20];
	int d = 0;

	do {
		num[d++] = (char)('0' + x % 10);
		x /= 10;
	} while (x);
	while (d)
		*p++ = num[--d];
	return p;
}

/**
 * Binary search: the index of the last of N records, STRIDE bytes apart
 * from BASE and ascending in the uint64_t at byte OFF of each, whose key is
 * at most V (the run, part or sequence holding position V); 0 where none
 * is or N is 0.
 */
static inline size_t sp_last_le(const void *base, size_t n, size_t stride, size_t off, uint64_t v)
{
	size_t lo = 0, hi = n;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (*(const uint64_t *)((const char *)base + mid * stride + off) <= v)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* CPU features the vector paths need (bits of sp_cpu_has's NEED). */
#define SP_CPU_AVX512F        0x01u
#define SP_CPU_AVX512BW       0x02u
#define SP_CPU_AVX512DQ       0x04u
#define SP_CPU_AVX512VPOPCNTDQ 0x08u
#define SP_CPU_BMI2           0x10u
#define SP_CPU_AVX2           0x20u
#define SP_CPU_POPCNT         0x40u

/**
 * Whether the CPU has every feature of NEED (probed once, thread-safe).
 * The one CPU probe of the suite; callers combine it with sp_simd_allowed()
 * where the environment may turn a vector path off.  The output of a tool
 * never depends on it.
 */
int sp_cpu_has(unsigned need);

/** Monotonic wall clock in seconds. */
double sp_now(void);

/**
 * For a tool that keeps a memory budget (-M): large blocks (256 KiB and
 * more) come from mmap and go back to the system when freed, and at most
 * 256 KiB of free heap is kept.  Without it glibc raises both thresholds
 * to the largest block freed so far, and a build in passes keeps up to
 * twice a pass's largest array of freed memory beside the next pass.
 */
void sp_malloc_bounded(void);

/** The process's resident memory now, or its peak (PEAK: VmHWM); bytes, 0 where unknown. */
uint64_t sp_rss(int peak);

/**
 * Whether the native code may use its vector (AVX-512) paths: 0 when
 * SEEDPIPE_NO_SIMD is set (to anything).  Each path still checks the CPU
 * for the instructions it needs; the output never depends on this.
 */
int sp_simd_allowed(void);

/** Most threads a tool's -t accepts. */
#define SP_MAX_THREADS 256

/**
 * Online CPUs, clamped to 1..MAX: the default of the tools' -t/-j options
 * (every tool passes SP_MAX_THREADS, so the default is every processor).
 */
int sp_default_threads(int max);

/**
 * Parse the integer argument S of option OPT (e.g. "-t"), which must lie in
 * LO..HI; otherwise a usage error (one line, exit 2): "PROG: option OPT:
 * 'S' is not an integer in LO..HI; try 'PROG --help'".
 */
long long sp_opt_int(const char *s, const char *opt, long long lo, long long hi);

/** Join argv into one space-separated string (for provenance); caller frees. */
char *sp_join_argv(int argc, char **argv);

#endif
