/*
 * ocl_priv.h - internals shared by ocl.c (the base), ocl_cache.c (programs)
 * and ocl_pack.c; not for other modules.  ocl_cache.c and ocl_pack.c call
 * into ocl.c, never the other way.
 */
#ifndef SP_OCL_PRIV_H
#define SP_OCL_PRIV_H

#include "ocl.h"
#include "util.h"

/* A program built on a context (ctx->progs), released by ocl_close. */
struct ocl_prog {
	char *name, *options;
	cl_program prog;
	struct ocl_prog *next;
};

/* "TOOL: ocl: ..." on stderr when SEEDPIPE_DEBUG is set. */
void ocl_debug(const char *fmt, ...) SP_PRINTF(1, 2);

#endif
