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
#include <stdio.h>
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
	double secs;   /* the open's seconds */
	char msg[1024];
	pthread_mutex_t mu;
	pthread_cond_t cv;
} ahead = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static void do_open(void)
{
	double t0 = sp_now();

	ahead.rc = ocl_open(ahead.spec, ahead.flags, &ahead.ctx, ahead.msg, sizeof ahead.msg);
	if (ahead.rc != OCL_OPEN_OK)
		ahead.ctx = NULL;
	ahead.secs = sp_now() - t0;
}

static void *ahead_main(void *arg)
{
	(void)arg;
	do_open();
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
	if (ocl_parse_spec(spec, &os) < 0 || !strcmp(spec, "none")) {
		/* the usage error or the native code: at once */
		ahead.ctx = ocl_open_or_die(spec, flags);
		ahead.done = 1;
		return;
	}
	ahead.pending = 1;
	if (pthread_create(&th, NULL, ahead_main, NULL) != 0) {
		do_open();   /* no thread: here, kept for the join */
		ahead.done = 1;
		return;
	}
	pthread_detach(th);
	atexit(ocl_open_ahead_wait);
}

int ocl_open_ahead_join(ocl_ctx_t **ctx, char *msg, size_t msg_size, double *secs)
{
	int rc = OCL_OPEN_OK;

	if (ahead.pending) {
		ocl_open_ahead_wait();
		ahead.pending = 0;
		rc = ahead.rc;
		if (rc != OCL_OPEN_OK && msg && msg_size)
			snprintf(msg, msg_size, "%s", ahead.msg);
	}
	*ctx = ahead.ctx;
	if (secs)
		*secs = ahead.secs;
	return rc;
}

ocl_ctx_t *ocl_open_ahead_join_or_die(void)
{
	char msg[sizeof ahead.msg];
	ocl_ctx_t *ctx;
	int rc = ocl_open_ahead_join(&ctx, msg, sizeof msg, NULL);

	if (rc != OCL_OPEN_OK)
		sp_die_code(rc, "%s", msg);
	return ctx;
}
