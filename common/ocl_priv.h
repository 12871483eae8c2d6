/*
 * ocl_priv.h - internals shared by ocl.c (the base), ocl_cache.c (programs)
 * and ocl_pack.c; not for other modules.  ocl_cache.c and ocl_pack.c call
 * into ocl.c, never the other way.
 */
#ifndef SP_OCL_PRIV_H
#define SP_OCL_PRIV_H

#include "ocl.h"
#include "sp_tmp.h"
#include "util.h"

/* A program built on a context (ctx->progs), released by ocl_close. */
struct ocl_prog {
	char *name, *options;
	cl_program prog;
	struct ocl_prog *next;
};

/* "TOOL: ocl: ..." on stderr when SEEDPIPE_DEBUG is set. */
void ocl_debug(const char *fmt, ...) SP_PRINTF(1, 2);

/*
 * ERR, the status of an OpenCL call that may load a platform's libraries
 * or its compiler; every such call (the platform and device queries, the
 * context's creation, a program's build) passes its status through here.
 * PoCL's LLVM puts its own handlers on SIGINT, SIGTERM, SIGHUP, SIGUSR1 and
 * SIGPIPE when it loads, and none of them removes our temporary files (its
 * SIGUSR1 one does not even end the process): sp_tmp takes those signals
 * back right after the call (sp_tmp_reclaim, sp_tmp.h).
 */
static inline cl_int ocl_loaded(cl_int err)
{
	sp_tmp_reclaim();
	return err;
}

#endif
