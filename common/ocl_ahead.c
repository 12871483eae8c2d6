/*
 * ocl_ahead.c - open the device on a thread of its own while the main
 * thread loads its inputs (ocl_open_ahead, ocl_open_ahead_join_or_die;
 * ocl.h): creating an OpenCL context takes a good part of a second.
 *
 * The opening thread never ends: LLVM (inside PoCL) gives the thread that
 * first uses it an alternate signal stack of its own, which
 * AddressSanitizer fails to release when such a thread exits.  It waits,
 * idle, for the process to exit.  An exit on the main thread (an input
 * error) while the open is under way would run the exit handlers of the
 * libraries the open is loading (LLVM's, in PoCL) while the thread still
 * uses them: code that may exit then calls ocl_open_ahead_wait first.  The
 * exit handler registered here waits too, but runs after the handlers of
 * libraries loaded later.
 */
#include "ocl.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

/* one open ahead per process: the thread and the exit handler outlive it */
static struct {
	const char *spec;
	unsigned flags;
	ocl_ctx_t *ctx;
	int rc, done, pending, started;
	char msg[1024];
	pthread_mutex_t mu;
	pthread_cond_t cv;
} ahead = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static void *ahead_main(void *arg)
{
	(void)arg;
	ahead.rc = ocl_open(ahead.spec, ahead.flags, &ahead.ctx, ahead.msg, sizeof ahead.msg);
	pthread_mutex_lock(&ahead.mu);
	ahead.done = 1;
	pthread_cond_signal(&ahead.cv);
	pthread_mutex_unlock(&ahead.mu);
	for (;;)
		pause();
	return NULL;
}

void ocl_open_ahead_wait(void)
{
	if (!ahead.started)
		return;
	pthread_mutex_lock(&ahead.mu);
	while (!ahead.done)
		pthread_cond_wait(&ahead.cv, &ahead.mu);
	pthread_mutex_unlock(&ahead.mu);
}

void ocl_open_ahead(const char *spec, unsigned flags)
{
	ocl_spec_t os;
	pthread_t th;

	if (ahead.started)
		sp_die("ocl_open_ahead called twice");   /* a bug */
	ahead.started = 1;
	if (!spec || !*spec)
		spec = getenv("SEEDPIPE_DEVICE");
	if (!spec || !*spec)
		spec = "auto";
	ahead.spec = spec;
	ahead.flags = flags;
	if (ocl_parse_spec(spec, &os) < 0 || !strcmp(spec, "none")
			|| pthread_create(&th, NULL, ahead_main, NULL) != 0) {
		/* the usage error, the native code, or no thread: at once */
		ahead.ctx = ocl_open_or_die(spec, flags);
		ahead.done = 1;
		return;
	}
	pthread_detach(th);
	ahead.pending = 1;
	atexit(ocl_open_ahead_wait);
}

ocl_ctx_t *ocl_open_ahead_join_or_die(void)
{
	if (ahead.pending) {
		ocl_open_ahead_wait();
		ahead.pending = 0;
		if (ahead.rc != OCL_OPEN_OK)
			sp_die_code(ahead.rc, "%s", ahead.msg);
	}
	return ahead.ctx;
}
