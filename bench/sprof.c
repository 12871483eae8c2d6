/*
 * sprof.c - a sampling profiler to preload, for machines without perf (the
 * lent device machines): cc -O2 -shared -fPIC -pthread -o sprof.so bench/sprof.c
 *
 *   SPROF_OUT=prof.txt LD_PRELOAD=./sprof.so seedfilt ...
 *
 * Every SPROF_US microseconds of the process's CPU time (ITIMER_PROF: user
 * and system time of all its threads; default 1000) the thread the kernel
 * interrupts records its program counter.  At exit the counts go to
 * SPROF_OUT: "pc count" lines, then the process's executable mappings
 * ("map start end offset path"), so that bench/sprof-report.py names the
 * functions on another machine with the same binaries (addr2line).  The
 * counts are kept in an open-addressed table written from the signal
 * handler only (atomic increments; a full table drops samples and says so).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>

#define NSLOT (1u << 20)

static uintptr_t pcs[NSLOT];
static unsigned long cnt[NSLOT];
static unsigned long dropped, total;

static void on_prof(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	uintptr_t pc;
	uint32_t h, i;

	(void)sig;
	(void)si;
#if defined(__x86_64__)
	pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	pc = (uintptr_t)uc->uc_mcontext.pc;
#else
	pc = 0;
	(void)uc;
#endif
	__atomic_add_fetch(&total, 1, __ATOMIC_RELAXED);
	h = (uint32_t)((pc * 0x9E3779B97F4A7C15ull) >> 44) & (NSLOT - 1);
	for (i = 0; i < 64; i++, h = (h + 1) & (NSLOT - 1)) {
		uintptr_t cur = __atomic_load_n(&pcs[h], __ATOMIC_RELAXED);

		if (cur == 0 && !__atomic_compare_exchange_n(&pcs[h], &cur, pc, 0, __ATOMIC_RELAXED,
					__ATOMIC_RELAXED) && cur != pc)
			continue;       /* taken by another pc meanwhile */
		if (cur == 0 || cur == pc) {
			__atomic_add_fetch(&cnt[h], 1, __ATOMIC_RELAXED);
			return;
		}
	}
	__atomic_add_fetch(&dropped, 1, __ATOMIC_RELAXED);
}

/* The table so far to SPROF_OUT (through a temporary file and a rename). */
static void dump(void)
{
	const char *path = getenv("SPROF_OUT");
	FILE *f, *m;
	char line[4096], tmp[4096];
	uint32_t i;

	if (!path)
		return;
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	if (!(f = fopen(tmp, "w")))
		return;
	fprintf(f, "# samples %lu dropped %lu\n", total, dropped);
	for (i = 0; i < NSLOT; i++)
		if (pcs[i])
			fprintf(f, "pc %lx %lu\n", (unsigned long)pcs[i], cnt[i]);
	if ((m = fopen("/proc/self/maps", "r"))) {
		while (fgets(line, sizeof line, m)) {
			unsigned long a, b, off2;
			char perm[8], path2[3000];

			if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %2999s", &a, &b, perm, &off2, path2) == 5
					&& perm[2] == 'x')
				fprintf(f, "map %lx %lx %lx %s\n", a, b, off2, path2);
		}
		fclose(m);
	}
	fclose(f);
	rename(tmp, path);
}

/*
 * A snapshot every 100 ms as well: a process whose exit handlers never
 * return (a GPU driver's teardown under the signals) still leaves its profile.
 */
static void *snap_main(void *arg)
{
	struct timespec ts = { 0, 100000000 };

	(void)arg;
	for (;;) {
		nanosleep(&ts, NULL);
		dump();
	}
	return NULL;
}

__attribute__((constructor)) static void start(void)
{
	struct sigaction sa;
	struct itimerval it;
	const char *us = getenv("SPROF_US");
	long u = us ? atol(us) : 1000;

	if (!getenv("SPROF_OUT"))
		return;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_prof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, NULL);
	memset(&it, 0, sizeof it);
	it.it_interval.tv_usec = it.it_value.tv_usec = u > 0 && u < 1000000 ? u : 1000;
	setitimer(ITIMER_PROF, &it, NULL);
	atexit(dump);
	{
		pthread_t th;
		sigset_t all, old;

		sigfillset(&all);   /* the snapshots' thread takes no signals */
		pthread_sigmask(SIG_SETMASK, &all, &old);
		if (pthread_create(&th, NULL, snap_main, NULL) == 0)
			pthread_detach(th);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
}
