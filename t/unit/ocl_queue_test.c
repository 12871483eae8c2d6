/*
 * ocl_queue_test.c - ocl_slot_queue (common/ocl.c) and the PoCL abort it
 * avoids (ocl.h: one_queue).
 *
 *     ocl_queue_test --info      "one_queue=N shared=S PLATFORM_VERSION" for the
 *                                test device (S: whether a second slot queue
 *                                is the first one, retained; its reference
 *                                count checked), exit 1 on a wrong count
 *     ocl_queue_test --pattern   the pattern that aborts PoCL before 6: one
 *                                kernel, one local size, three slot queues;
 *                                two runs of 64 items that spin for a while,
 *                                then one of 65,536 items (a wider run: a new
 *                                dlhandle entry) that ends first; exit 0 when
 *                                all three ran and their outputs are right
 *
 * The test device is $OCL_TEST_DEVICE, else "cpu", else 0:0 (exit 77: none).
 */
#include "ocl.h"
#include "ocl_testdev.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NQ 3
#define WIDE 65536u

static const char *src =
	"__kernel void spin(__global uint *o, uint base, uint n, uint rounds)\n"
	"{\n"
	"	uint i = get_global_id(0), x, j;\n"
	"	if (i >= n)\n"
	"		return;\n"
	"	x = base + i;\n"
	"	for (j = 0; j < rounds; j++)\n"
	"		x = x * 1664525u + 1013904223u;\n"
	"	o[base + i] = x;\n"
	"}\n";

static ocl_ctx_t *open_dev(void)
{
	static const char *const specs[] = { "cpu", "0:0" };

	return tu_open_device(specs, sizeof specs / sizeof specs[0], 0);
}

static cl_uint refs(cl_command_queue q)
{
	cl_uint n = 0;

	clGetCommandQueueInfo(q, CL_QUEUE_REFERENCE_COUNT, sizeof n, &n, NULL);
	return n;
}

static int info(ocl_ctx_t *c)
{
	cl_command_queue q[NQ];
	cl_int err;
	int i, shared, bad = 0;

	for (i = 0; i < NQ; i++)
		if (!(q[i] = ocl_slot_queue(c, i ? q[0] : NULL, 0, &err)))
			sp_die("ocl_slot_queue: %s", ocl_strerror(err));
	shared = q[1] == q[0] && q[2] == q[0];
	if (shared ? refs(q[0]) != NQ : q[1] == q[0] || q[2] == q[0] || q[2] == q[1])
		bad = 1;
	printf("one_queue=%d shared=%d %s\n", c->one_queue, shared, c->platform_version);
	for (i = 0; i < NQ; i++)
		clReleaseCommandQueue(q[i]);
	return bad;
}

static int pattern(ocl_ctx_t *c)
{
	size_t n[NQ] = { 64, 64, WIDE };
	cl_uint base[NQ] = { 0, 64, 128 }, rounds[NQ] = { 20000000, 40000000, 1 };
	cl_command_queue q[NQ];
	cl_kernel k[NQ];
	cl_program p = ocl_program_src(c, "queue_test", src, "");
	cl_mem m = ocl_buffer(c, CL_MEM_READ_WRITE, (128 + WIDE) * sizeof(cl_uint));
	cl_uint *out = sp_malloc((128 + WIDE) * sizeof *out), x, j, i2;
	cl_int err;
	int i, bad = 0;

	for (i = 0; i < NQ; i++) {
		cl_uint nn = (cl_uint)n[i];

		if (!(q[i] = ocl_slot_queue(c, i ? q[0] : NULL, 0, &err)))
			sp_die("ocl_slot_queue: %s", ocl_strerror(err));
		k[i] = ocl_kernel(p, "spin");
		ocl_check(ocl_args_try(k[i], 4, sizeof m, &m, sizeof base[i], &base[i], sizeof nn,
					&nn, sizeof rounds[i], &rounds[i]), "clSetKernelArg");
	}
	for (i = 0; i < NQ; i++) {
		ocl_check(ocl_run_q(c, q[i], k[i], n[i], NULL), "clEnqueueNDRangeKernel");
		clFlush(q[i]);
	}
	for (i = NQ; i-- > 0;)
		ocl_check(clFinish(q[i]), "clFinish");
	ocl_check(clEnqueueReadBuffer(q[0], m, CL_TRUE, 0, (128 + WIDE) * sizeof *out, out, 0,
				NULL, NULL), "clEnqueueReadBuffer");
	for (i = 0; i < NQ; i++)
		for (i2 = 0; i2 < n[i]; i2 += n[i] > 64 ? 997 : 1) {
			for (x = base[i] + i2, j = 0; j < rounds[i]; j++)
				x = x * 1664525u + 1013904223u;
			bad |= out[base[i] + i2] != x;
		}
	for (i = 0; i < NQ; i++) {
		clReleaseKernel(k[i]);
		clReleaseCommandQueue(q[i]);
	}
	ocl_release(m);
	free(out);
	printf("%s\n", bad ? "wrong output" : "ran");
	return bad;
}

int main(int argc, char **argv)
{
	ocl_ctx_t *c;
	int rc;

	sp_set_progname("ocl_queue_test");
	if (argc != 2 || (strcmp(argv[1], "--info") && strcmp(argv[1], "--pattern")))
		sp_die("usage: ocl_queue_test --info | --pattern");
	if (!(c = open_dev()))
		return 77;
	rc = !strcmp(argv[1], "--info") ? info(c) : pattern(c);
	ocl_close(c);
	return rc;
}
