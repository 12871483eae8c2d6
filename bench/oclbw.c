/*
 * oclbw.c - host-device bandwidth of the first OpenCL GPU (not part of the
 * seedpipe library): reads and writes of SIZE MiB between one device buffer
 * and (a) pageable memory (malloc), (b) page-locked memory (a
 * CL_MEM_ALLOC_HOST_PTR buffer, mapped), three rounds, blocking.
 *
 *   cc -O2 -o oclbw bench/oclbw.c -lOpenCL && ./oclbw [SIZE_MIB=512]
 *
 * Exit status: 0 ok, 1 no GPU or an OpenCL error.
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int fail(const char *what, cl_int e)
{
	fprintf(stderr, "oclbw: %s failed (%d)\n", what, (int)e);
	return 1;
}

int main(int argc, char **argv)
{
	size_t n = (size_t)(argc > 1 ? atol(argv[1]) : 512) << 20;
	cl_platform_id pf[16];
	cl_device_id dev = NULL;
	cl_uint np = 0, i;
	cl_int e;
	cl_context c;
	cl_command_queue q;
	cl_mem d, hm;
	char *pg, *pin, name[256] = "";
	int r;

	if (n == 0 || clGetPlatformIDs(16, pf, &np) != CL_SUCCESS)
		return fail("clGetPlatformIDs", -1);
	for (i = 0; i < np && !dev; i++)
		if (clGetDeviceIDs(pf[i], CL_DEVICE_TYPE_GPU, 1, &dev, NULL) != CL_SUCCESS)
			dev = NULL;
	if (!dev) {
		fprintf(stderr, "oclbw: no OpenCL GPU\n");
		return 1;
	}
	clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL);
	if (!(c = clCreateContext(NULL, 1, &dev, NULL, NULL, &e)) || e != CL_SUCCESS)
		return fail("clCreateContext", e);
	if (!(q = clCreateCommandQueue(c, dev, 0, &e)) || e != CL_SUCCESS)
		return fail("clCreateCommandQueue", e);
	if (!(d = clCreateBuffer(c, CL_MEM_READ_WRITE, n, NULL, &e)) || e != CL_SUCCESS)
		return fail("device buffer", e);
	if (!(hm = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, n, NULL, &e))
			|| e != CL_SUCCESS)
		return fail("host buffer", e);
	pin = clEnqueueMapBuffer(q, hm, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, n, 0, NULL, NULL, &e);
	if (!pin || e != CL_SUCCESS || !(pg = malloc(n)))
		return fail("map", e);
	memset(pg, 1, n);
	memset(pin, 1, n);
	if ((e = clEnqueueWriteBuffer(q, d, CL_TRUE, 0, n, pg, 0, NULL, NULL)) != CL_SUCCESS)
		return fail("write", e);
	printf("%s, %zu MiB a transfer, GB/s:\n", name, n >> 20);
	for (r = 0; r < 3; r++) {
		double t[4];

		t[0] = now();
		e = clEnqueueReadBuffer(q, d, CL_TRUE, 0, n, pg, 0, NULL, NULL);
		t[0] = now() - t[0];
		t[1] = now();
		e |= clEnqueueReadBuffer(q, d, CL_TRUE, 0, n, pin, 0, NULL, NULL);
		t[1] = now() - t[1];
		t[2] = now();
		e |= clEnqueueWriteBuffer(q, d, CL_TRUE, 0, n, pg, 0, NULL, NULL);
		t[2] = now() - t[2];
		t[3] = now();
		e |= clEnqueueWriteBuffer(q, d, CL_TRUE, 0, n, pin, 0, NULL, NULL);
		t[3] = now() - t[3];
		if (e != CL_SUCCESS)
			return fail("a transfer", e);
		printf("down pageable %.2f  down page-locked %.2f  up pageable %.2f  up page-locked %.2f\n",
				n / 1e9 / t[0], n / 1e9 / t[1], n / 1e9 / t[2], n / 1e9 / t[3]);
	}
	clEnqueueUnmapMemObject(q, hm, pin, 0, NULL, NULL);
	clFinish(q);
	clReleaseMemObject(hm);
	clReleaseMemObject(d);
	clReleaseCommandQueue(q);
	clReleaseContext(c);
	free(pg);
	return 0;
}
