/*
 * sp_tmp.h - temporary files that never outlive a failed run: the runs of
 * strsort's external sort, and the FILE.tmp.XXXXXX that seqidx -o and
 * strsort -o write before renaming over FILE.
 *
 * A file made by sp_tmp_create is registered in a list that sp_tmp_cleanup
 * removes: at exit, and from a handler of every signal whose default action
 * ends the process (SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGALRM, SIGUSR1/2,
 * SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGIO, and SIGPIPE unless the caller
 * ignores it).  The handler removes the files, restores the default action
 * and raises the signal again, so the process still ends as the signal
 * says.  A signal that was ignored or handled when the first file was made
 * is left as it was (nohup, background jobs, a profiler), but for a SIGPIPE
 * handler (sp_quiet_sigpipe's exit 0), which runs after the files are gone.
 * Signals of a program error (SIGSEGV and the like) are not caught, so a crash still
 * reaches a debugger or a sanitizer.  SIGKILL cannot be caught.
 */
#ifndef SP_TMP_H
#define SP_TMP_H

#include <signal.h>

typedef struct sp_tmp {
	struct sp_tmp *next;
	volatile sig_atomic_t live;
	char path[];
} sp_tmp_t;

/**
 * Install the cleanup on fatal signals now (sp_tmp_create does it on first
 * use).  Call it before anything loads an OpenCL platform: a platform that
 * embeds LLVM installs its own SIGINT/SIGTERM/SIGHUP handlers, and the
 * cleanup, finding a handler in place, would leave those signals alone;
 * installed first, it is the handler LLVM's restores and re-raises to.
 */
void sp_tmp_init(void);

/**
 * Take back the signals the cleanup had (a no-op before sp_tmp_init or the
 * first file): called once an OpenCL platform has loaded, whose LLVM puts
 * its own handlers on SIGINT, SIGTERM, SIGHUP, SIGUSR1 and others (its
 * SIGUSR1 handler does not end the process, and none removes our files).
 */
void sp_tmp_reclaim(void);

/**
 * Make the file "PREFIXXXXXXX" (mkstemp), registered for removal.  Returns
 * its descriptor (*node set), or -1 after sp_fail with errno set.
 */
int sp_tmp_create(const char *prefix, sp_tmp_t **node);

/** Remove a temporary file now (NULL, or one already removed: nothing). */
void sp_tmp_remove(sp_tmp_t *t);

/** Keep the file (it was renamed over its destination): no longer removed. */
void sp_tmp_keep(sp_tmp_t *t);

/** Remove every live temporary file (safe in a signal handler). */
void sp_tmp_cleanup(void);

#endif
