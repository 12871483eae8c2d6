/*
 * ocl_testdev.h - the OpenCL device of the C unit tests: $OCL_TEST_DEVICE,
 * else the first of SPECS that opens.
 */
#ifndef SP_OCL_TESTDEV_H
#define SP_OCL_TESTDEV_H

#include <stdlib.h>

#include "ocl.h"

/* Open the test device (FLAGS as ocl_open's); NULL when none opens. */
static inline ocl_ctx_t *tu_open_device(const char *const *specs, size_t n, unsigned flags)
{
	const char *env = getenv("OCL_TEST_DEVICE");
	ocl_ctx_t *c = NULL;
	char msg[512];
	size_t i;

	if (env && *env)
		return ocl_open(env, flags, &c, msg, sizeof msg) == OCL_OPEN_OK ? c : NULL;
	for (i = 0; i < n; i++)
		if (ocl_open(specs[i], flags, &c, msg, sizeof msg) == OCL_OPEN_OK && c)
			return c;
	return NULL;
}

#endif
