/*
 * sp_tmp.c - registered temporary files, removed on exit and fatal signals
 * (sp_tmp.h).
 */
#include "sp_tmp.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

static sp_tmp_t *_Atomic temps;
static atomic_int ending;     /* a cleanup has begun: no more files */
static atomic_int creating;   /* threads between mkstemp and the registration */

void sp_tmp_cleanup(void)
{
	sp_tmp_t *t;
	long spin = 0;

	/* a thread making a file has all signals blocked until it is
	 * registered: wait for it (a second at most), so that no file is
	 * made after the walk below, or made and not yet in the list */
	atomic_store(&ending, 1);
	while (atomic_load(&creating) > 0 && ++spin < 400000000L)
		;
	for (t = atomic_load(&temps); t; t = t->next) {
		if (t->live) {
			t->live = 0;
			unlink(t->path);
		}
	}
}

/* the handler of SIGPIPE that was in place (sp_quiet_sigpipe's), run after
 * the cleanup */
static void (*pipe_next)(int);

static void on_signal(int sig)
{
	sp_tmp_cleanup();
	if (sig == SIGPIPE && pipe_next)
		pipe_next(sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* the signals whose default action ends the process, but for program errors */
static const int fatal_sigs[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGALRM, SIGTERM, SIGUSR1, SIGUSR2,
	SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGIO, SIGPIPE,
};

static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static atomic_int taken[sizeof fatal_sigs / sizeof *fatal_sigs];   /* the handler is ours */

static void install_cleanup(void)
{
	struct sigaction sa;
	size_t i;

	atexit(sp_tmp_cleanup);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof fatal_sigs / sizeof *fatal_sigs; i++) {
		struct sigaction old;

		if (sigaction(fatal_sigs[i], NULL, &old) != 0)
			continue;
		/* a SIGPIPE handler (sp_quiet_sigpipe: exit 0) runs after the
		 * cleanup; keep any other signal ignored or handled as it was */
		if (fatal_sigs[i] == SIGPIPE && !(old.sa_flags & SA_SIGINFO) &&
		    old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN)
			pipe_next = old.sa_handler;
		else if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
			continue;
		if (sigaction(fatal_sigs[i], &sa, NULL) == 0 && fatal_sigs[i] != SIGPIPE)
			atomic_store(&taken[i], 1);
	}
}

void sp_tmp_reclaim(void)
{
	struct sigaction sa, old;
	size_t i;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof fatal_sigs / sizeof *fatal_sigs; i++)
		if (atomic_load(&taken[i]) && sigaction(fatal_sigs[i], NULL, &old) == 0 &&
		    ((old.sa_flags & SA_SIGINFO) || old.sa_handler != on_signal))
			sigaction(fatal_sigs[i], &sa, NULL);
}

void sp_tmp_init(void)
{
	pthread_once(&install_once, install_cleanup);
}

int sp_tmp_create(const char *prefix, sp_tmp_t **node)
{
	size_t n = strlen(prefix) + 7;
	sp_tmp_t *t = sp_malloc(sizeof *t + n);
	sigset_t all, old;
	int fd, e;

	pthread_once(&install_once, install_cleanup);
	snprintf(t->path, n, "%sXXXXXX", prefix);
	t->live = 0;
	/* no signal between the file's creation and its registration */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	atomic_fetch_add(&creating, 1);
	if (atomic_load(&ending)) {
		/* the process is ending (a fatal signal, or exit): make nothing,
		 * and report nothing; wait, signals blocked, for the end */
		struct timespec ts = { 1, 0 };

		atomic_fetch_sub(&creating, 1);
		for (;;)
			nanosleep(&ts, NULL);
	}
	fd = mkstemp(t->path);
	e = errno;
	if (fd >= 0) {
		sp_tmp_t *head = atomic_load(&temps);

		t->live = 1;
		do   /* other threads may be registering theirs */
			t->next = head;
		while (!atomic_compare_exchange_weak(&temps, &head, t));
	}
	atomic_fetch_sub(&creating, 1);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (fd < 0) {
		free(t);
		sp_fail("cannot create the temporary file '%sXXXXXX': %s", prefix, strerror(e));
		errno = e;
		return -1;
	}
	*node = t;
	return fd;
}

void sp_tmp_remove(sp_tmp_t *t)
{
	if (t && t->live) {
		t->live = 0;
		unlink(t->path);
	}
}

void sp_tmp_keep(sp_tmp_t *t)
{
	if (t)
		t->live = 0;
}
