/*
 * ocl_test.c - unit tests of the OpenCL layer (common/ocl.c) and the pack
 * kernels (kernels/pack.cl), printing TAP.
 *
 *     ocl_test                 the TAP tests (device tests skip without OpenCL)
 *     ocl_test --probe         exit 0 iff an OpenCL device can be opened
 *     ocl_test --list          ocl_list_devices() on stdout
 *     ocl_test --open [SPEC]   ocl_open_or_die(SPEC, verbose); "native" or the device
 *     ocl_test --build [OPTS]  build "pack" with OPTS on the test device, check
 *                              pack2 against seqio_pack2, print the cache counters
 *     ocl_test --build-src FILE [OPTS]  ocl_program_src() of FILE ("built")
 *
 * The test device is $OCL_TEST_DEVICE, else the first GPU, else the first CPU
 * device, else 0:0.  Oracles: seqio_pack2 / seqio_revcomp (the C path) and a
 * naive version written here from the layout in seqio.h.
 */
#include "ocl.h"
#include "ocl_testdev.h"
#include "seqio.h"
#include "tap.h"
#include "util.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>
#include <xxhash.h>

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rng(void)
{
	return tu_xorshift64(&rng_state);
}

static void rand_seq(char *s, size_t n, const char *alphabet)
{
	size_t i, k = strlen(alphabet);

	for (i = 0; i < n; i++)
		s[i] = alphabet[rng() % k];
}

static void naive_pack2(uint8_t *dst, const char *s, size_t n)
{
	size_t i;

	memset(dst, 0, (n + 3) / 4);
	for (i = 0; i < n; i++) {
		int c = s[i] == 'C' || s[i] == 'c' ? 1 : s[i] == 'G' || s[i] == 'g' ? 2
			: s[i] == 'T' || s[i] == 't' ? 3 : 0;
		dst[i / 4] |= (uint8_t)(c << (2 * (i % 4)));
	}
}

static void naive_revcomp(char *dst, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char c = s[n - 1 - i];
		dst[i] = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : c == 'T' ? 'A' : 'N';
	}
}

static ocl_ctx_t *open_test_device(unsigned flags)
{
	static const char *const specs[] = { "gpu", "cpu", "0:0" };

	return tu_open_device(specs, sizeof specs / sizeof specs[0], flags);
}

/* Does any platform have a GPU?  Asked directly, not through ocl.c. */
static int have_gpu(void)
{
	cl_platform_id p[16];
	cl_uint np = 0, i, nd;

	if (clGetPlatformIDs(16, p, &np) != CL_SUCCESS)
		return 0;
	for (i = 0; i < np && i < 16; i++)
		if (clGetDeviceIDs(p[i], CL_DEVICE_TYPE_GPU, 0, NULL, &nd) == CL_SUCCESS && nd > 0)
			return 1;
	return 0;
}

/* --- modes for the shell tests ------------------------------------------ */

static int mode_build(const char *options)
{
	ocl_ctx_t *c = open_test_device(0);
	cl_program prog;
	cl_kernel k;
	cl_mem in, out;
	size_t n = 100003, nb = (n + 3) / 4;
	char *seq, *path;
	uint8_t *got, *want;
	cl_ulong cn = n;
	int ok;

	if (!c)
		sp_die("no OpenCL device");
	seq = sp_malloc(n);
	got = sp_malloc(nb);
	want = sp_malloc(nb);
	rand_seq(seq, n, "ACGTNacgt");
	prog = ocl_program(c, "pack", options);
	k = ocl_kernel(prog, "pack2");
	in = ocl_buffer(c, CL_MEM_READ_ONLY, n);
	out = ocl_buffer(c, CL_MEM_WRITE_ONLY, nb);
	ocl_write(c, in, 0, 0, n, seq);
	ocl_arg(k, 0, sizeof out, &out);
	ocl_arg(k, 1, sizeof in, &in);
	ocl_arg(k, 2, sizeof cn, &cn);
	ocl_run(c, k, nb);
	ocl_read(c, out, 1, 0, nb, got);
	seqio_pack2(want, seq, n);
	ok = !memcmp(got, want, nb);
	path = ocl_cache_path(c, ocl_source("pack"), options);
	printf("hits=%u builds=%u writes=%u\n", c->n_cache_hits, c->n_builds, c->n_cache_writes);
	printf("path=%s\n", path ? path : "(none)");
	printf("%s\n", ok ? "pack2 ok" : "pack2 MISMATCH");
	free(path);
	ocl_release(in);
	ocl_release(out);
	clReleaseKernel(k);
	ocl_close(c);
	free(seq);
	free(got);
	free(want);
	return ok ? 0 : 1;
}

/* Build the OpenCL source in FILE (through ocl_program_src: dies on failure). */
static int mode_build_src(const char *file, const char *options)
{
	ocl_ctx_t *c = open_test_device(0);
	FILE *f = fopen(file, "rb");
	char *src = sp_calloc(1, 1 << 20);
	size_t n;

	if (!c)
		sp_die("no OpenCL device");
	if (!f)
		sp_die("cannot open '%s'", file);
	n = fread(src, 1, (1 << 20) - 1, f);
	src[n] = 0;
	fclose(f);
	ocl_program_src(c, file, src, options);
	printf("built\n");
	ocl_close(c);
	free(src);
	return 0;
}

static int mode_open(const char *spec)
{
	ocl_ctx_t *c = ocl_open_or_die(spec, OCL_VERBOSE);
	char d[512];

	if (!c) {
		printf("native\n");
		return 0;
	}
	ocl_describe(c, d, sizeof d);
	printf("%s\n", d);
	ocl_close(c);
	return 0;
}

/* --- TAP tests ----------------------------------------------------------- */

#define ERR(x) { x, #x }
static void test_errors(void)
{
	static const struct { cl_int code; const char *name; } tab[] = {
		ERR(CL_SUCCESS), ERR(CL_DEVICE_NOT_FOUND), ERR(CL_DEVICE_NOT_AVAILABLE),
		ERR(CL_COMPILER_NOT_AVAILABLE), ERR(CL_MEM_OBJECT_ALLOCATION_FAILURE),
		ERR(CL_OUT_OF_RESOURCES), ERR(CL_OUT_OF_HOST_MEMORY),
		ERR(CL_PROFILING_INFO_NOT_AVAILABLE), ERR(CL_MEM_COPY_OVERLAP),
		ERR(CL_IMAGE_FORMAT_MISMATCH), ERR(CL_IMAGE_FORMAT_NOT_SUPPORTED),
		ERR(CL_BUILD_PROGRAM_FAILURE), ERR(CL_MAP_FAILURE),
		ERR(CL_MISALIGNED_SUB_BUFFER_OFFSET),
		ERR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST),
		ERR(CL_COMPILE_PROGRAM_FAILURE), ERR(CL_LINKER_NOT_AVAILABLE),
		ERR(CL_LINK_PROGRAM_FAILURE), ERR(CL_DEVICE_PARTITION_FAILED),
		ERR(CL_KERNEL_ARG_INFO_NOT_AVAILABLE), ERR(CL_INVALID_VALUE),
		ERR(CL_INVALID_DEVICE_TYPE), ERR(CL_INVALID_PLATFORM), ERR(CL_INVALID_DEVICE),
		ERR(CL_INVALID_CONTEXT), ERR(CL_INVALID_QUEUE_PROPERTIES),
		ERR(CL_INVALID_COMMAND_QUEUE), ERR(CL_INVALID_HOST_PTR),
		ERR(CL_INVALID_MEM_OBJECT), ERR(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR),
		ERR(CL_INVALID_IMAGE_SIZE), ERR(CL_INVALID_SAMPLER), ERR(CL_INVALID_BINARY),
		ERR(CL_INVALID_BUILD_OPTIONS), ERR(CL_INVALID_PROGRAM),
		ERR(CL_INVALID_PROGRAM_EXECUTABLE), ERR(CL_INVALID_KERNEL_NAME),
		ERR(CL_INVALID_KERNEL_DEFINITION), ERR(CL_INVALID_KERNEL),
		ERR(CL_INVALID_ARG_INDEX), ERR(CL_INVALID_ARG_VALUE), ERR(CL_INVALID_ARG_SIZE),
		ERR(CL_INVALID_KERNEL_ARGS), ERR(CL_INVALID_WORK_DIMENSION),
		ERR(CL_INVALID_WORK_GROUP_SIZE), ERR(CL_INVALID_WORK_ITEM_SIZE),
		ERR(CL_INVALID_GLOBAL_OFFSET), ERR(CL_INVALID_EVENT_WAIT_LIST),
		ERR(CL_INVALID_EVENT), ERR(CL_INVALID_OPERATION), ERR(CL_INVALID_GL_OBJECT),
		ERR(CL_INVALID_BUFFER_SIZE), ERR(CL_INVALID_MIP_LEVEL),
		ERR(CL_INVALID_GLOBAL_WORK_SIZE), ERR(CL_INVALID_PROPERTY),
		ERR(CL_INVALID_IMAGE_DESCRIPTOR), ERR(CL_INVALID_COMPILER_OPTIONS),
		ERR(CL_INVALID_LINKER_OPTIONS), ERR(CL_INVALID_DEVICE_PARTITION_COUNT),
	};
	size_t i, bad = 0;

	for (i = 0; i < sizeof tab / sizeof tab[0]; i++)
		if (strcmp(ocl_strerror(tab[i].code), tab[i].name) != 0) {
			tap_diag("%d: got %s, want %s", (int)tab[i].code, ocl_strerror(tab[i].code),
					tab[i].name);
			bad++;
		}
	tap_ok(bad == 0 && i == 59, "every OpenCL 1.2 error code has its symbolic name (%zu codes)", i);
	tap_ok(!strcmp(ocl_strerror(-1001), "CL_PLATFORM_NOT_FOUND_KHR"),
			"-1001 is CL_PLATFORM_NOT_FOUND_KHR");
	tap_ok(!strcmp(ocl_strerror(-9999), "CL_UNKNOWN_ERROR")
			&& !strcmp(ocl_strerror(1), "CL_UNKNOWN_ERROR"), "unknown codes are named so");
}

static void test_specs(void)
{
	static const char *bad[] = { "", "x", "GPU", "gpu0", "0:", ":0", "0:0:0", "-1:0",
		"0:-1", " 0:0", "0: 1", "1:x", "99999999999:0", "0:70000", "a:b", "0x1:0" };
	ocl_spec_t s;
	size_t i, nbad = 0;

	tap_ok(ocl_parse_spec("auto", &s) == 0 && s.kind == OCL_SPEC_AUTO, "spec auto");
	tap_ok(ocl_parse_spec("none", &s) == 0 && s.kind == OCL_SPEC_NONE, "spec none");
	tap_ok(ocl_parse_spec("gpu", &s) == 0 && s.kind == OCL_SPEC_GPU, "spec gpu");
	tap_ok(ocl_parse_spec("cpu", &s) == 0 && s.kind == OCL_SPEC_CPU, "spec cpu");
	tap_ok(ocl_parse_spec("0:0", &s) == 0 && s.kind == OCL_SPEC_INDEX && s.plat == 0
			&& s.dev == 0, "spec 0:0");
	tap_ok(ocl_parse_spec("12:3", &s) == 0 && s.kind == OCL_SPEC_INDEX && s.plat == 12
			&& s.dev == 3, "spec 12:3");
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (ocl_parse_spec(bad[i], &s) != -1) {
			tap_diag("bad spec '%s' accepted", bad[i]);
			nbad++;
		}
	tap_ok(nbad == 0, "malformed specs are refused (%zu tried)", i);
}

static void test_open(void)
{
	ocl_ctx_t *c;
	char msg[1024];
	int rc, gpu = have_gpu();

	rc = ocl_open("none", 0, &c, msg, sizeof msg);
	tap_ok(rc == OCL_OPEN_OK && !c, "none: native code, no context");
	rc = ocl_open("x", 0, &c, msg, sizeof msg);
	tap_ok(rc == OCL_OPEN_BADSPEC && !c && strstr(msg, "invalid device 'x'"),
			"bad spec x: status 2 (%s)", msg);
	rc = ocl_open("9:9", 0, &c, msg, sizeof msg);
	tap_ok(rc == OCL_OPEN_NODEV && !c && strstr(msg, "no OpenCL device 9:9"),
			"absent 9:9: status 3 (%s)", msg);
	rc = ocl_open("gpu", 0, &c, msg, sizeof msg);
	if (gpu)
		tap_ok(rc == OCL_OPEN_OK && c && (c->type & CL_DEVICE_TYPE_GPU), "gpu: opened a GPU");
	else
		tap_ok(rc == OCL_OPEN_NODEV && !c && strstr(msg, "no OpenCL GPU found ("),
				"gpu absent: status 3 (%s)", msg);
	ocl_close(c);
	rc = ocl_open("auto", 0, &c, msg, sizeof msg);
	tap_ok(rc == OCL_OPEN_OK && (gpu ? c != NULL : c == NULL),
			"auto: %s", gpu ? "the GPU" : "native code without a GPU");
	ocl_close(c);

	setenv("SEEDPIPE_DEVICE", "none", 1);
	rc = ocl_open(NULL, 0, &c, msg, sizeof msg);
	tap_ok(rc == OCL_OPEN_OK && !c, "SEEDPIPE_DEVICE=none is used when no spec is given");
	rc = ocl_open("9:9", 0, &c, msg, sizeof msg);
	tap_ok(rc == OCL_OPEN_NODEV, "an explicit spec overrides SEEDPIPE_DEVICE");
	setenv("SEEDPIPE_DEVICE", "bogus", 1);
	rc = ocl_open(NULL, 0, &c, msg, sizeof msg);
	tap_ok(rc == OCL_OPEN_BADSPEC && strstr(msg, "invalid SEEDPIPE_DEVICE 'bogus'"),
			"bad SEEDPIPE_DEVICE: status 2 naming the variable (%s)", msg);
	setenv("SEEDPIPE_DEVICE", "", 1);
	rc = ocl_open(NULL, 0, &c, msg, sizeof msg);
	tap_ok(rc == OCL_OPEN_OK && (gpu ? c != NULL : c == NULL), "empty SEEDPIPE_DEVICE is auto");
	ocl_close(c);
	unsetenv("SEEDPIPE_DEVICE");
}

static void test_device_info(ocl_ctx_t *c)
{
	ocl_ctx_t *c2 = NULL;
	char spec[32], msg[512];

	tap_diag("device: %s; global %llu, max alloc %llu, local %llu, max wg %zu", c->name,
			(unsigned long long)c->global_mem, (unsigned long long)c->max_alloc,
			(unsigned long long)c->local_mem, c->max_wg);
	tap_ok(c->name[0] && c->platform_name[0] && c->driver_version[0] && c->device_version[0],
			"device, platform and driver are named");
	tap_ok(c->global_mem > 0 && c->max_alloc > 0 && c->max_alloc <= c->global_mem
			&& c->compute_units > 0 && c->max_wg > 0, "memory sizes, compute units, work-group size");
	tap_ok(ocl_batch_bytes(c, 0.5) <= c->max_alloc && ocl_batch_bytes(c, 0.5) <= c->global_mem / 2
			&& ocl_mem_budget(c, 0.25) == (uint64_t)((double)c->global_mem * 0.25)
			&& ocl_mem_budget(c, 0) == ocl_mem_budget(c, 0.5),
			"batch budget is min(max alloc, fraction of global memory)");
	snprintf(spec, sizeof spec, "%u:%u", c->plat_idx, c->dev_idx);
	tap_ok(ocl_open(spec, 0, &c2, msg, sizeof msg) == OCL_OPEN_OK && c2
			&& !strcmp(c2->name, c->name), "P:D %s opens the same device", spec);
	ocl_close(c2);
}

static void test_pack(ocl_ctx_t *c, const char *what)
{
	static const size_t lens[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 1000, 4099, 1000003 };
	size_t li, bad_pack = 0, bad_rc = 0, bad_guard = 0;

	for (li = 0; li < sizeof lens / sizeof lens[0]; li++) {
		size_t n = lens[li], nb = (n + 3) / 4;
		char *s = sp_malloc(n + 1), *r1 = sp_malloc(n + 8), *r2 = sp_malloc(n + 1);
		char *r3 = sp_malloc(n + 1);
		uint8_t *p1 = sp_malloc(nb + 8), *p2 = sp_malloc(nb + 1), *p3 = sp_malloc(nb + 1);
		cl_int e1, e2;

		rand_seq(s, n, "ACGTNacgtRY-*");
		memset(p1, 0xA5, nb + 8);
		e1 = ocl_pack2(c, p1, s, n);
		seqio_pack2(p2, s, n);
		naive_pack2(p3, s, n);
		if (e1 != CL_SUCCESS || memcmp(p1, p2, nb) || memcmp(p1, p3, nb)) {
			tap_diag("%s pack2 n=%zu: %s", what, n, ocl_strerror(e1));
			bad_pack++;
		}
		rand_seq(s, n, "ACGTN");
		memset(r1, '@', n + 8);
		e2 = ocl_revcomp(c, r1, s, n);
		seqio_revcomp(r2, s, n);
		naive_revcomp(r3, s, n);
		if (e2 != CL_SUCCESS || memcmp(r1, r2, n) || memcmp(r1, r3, n)) {
			tap_diag("%s revcomp n=%zu: %s", what, n, ocl_strerror(e2));
			bad_rc++;
		}
		if (p1[nb] != 0xA5 || p1[nb + 7] != 0xA5 || r1[n] != '@' || r1[n + 7] != '@')
			bad_guard++;
		free(s);
		free(r1);
		free(r2);
		free(r3);
		free(p1);
		free(p2);
		free(p3);
	}
	tap_ok(bad_pack == 0, "%s: pack2 kernel equals seqio_pack2 and the naive oracle (%zu lengths)",
			what, li);
	tap_ok(bad_rc == 0, "%s: revcomp kernel equals seqio_revcomp and the naive oracle", what);
	tap_ok(bad_guard == 0, "%s: nothing written past the output", what);
}

static void test_buffers(ocl_ctx_t *c)
{
	cl_int err = CL_SUCCESS;
	cl_mem m;

	m = ocl_buffer_try(c, CL_MEM_READ_WRITE, (size_t)c->max_alloc + 1, &err);
	tap_ok(!m && err == CL_INVALID_BUFFER_SIZE, "a buffer above max alloc fails softly (%s)",
			ocl_strerror(err));
	m = ocl_buffer_try(c, CL_MEM_READ_WRITE, 0, &err);
	tap_ok(!m && err == CL_INVALID_BUFFER_SIZE, "a zero-byte buffer fails softly");
	m = ocl_buffer_try(c, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, 16, &err);
	tap_ok(!m && err == CL_INVALID_VALUE, "host-pointer flags are refused");
	m = ocl_buffer_try(c, CL_MEM_READ_WRITE, 1 << 20, &err);
	tap_ok(m && err == CL_SUCCESS, "a 1 MiB buffer");
	ocl_release(m);
}

static void test_build_fail(ocl_ctx_t *c)
{
	cl_program p;
	cl_int err = 0;
	char *log = NULL;

	p = ocl_build(c, "broken", "__kernel void f(__global int *x) { x[0] = undeclared_y; }\n",
			"", &err, &log);
	tap_ok(!p && err == CL_BUILD_PROGRAM_FAILURE && log && strstr(log, "undeclared_y"),
			"a broken kernel: CL_BUILD_PROGRAM_FAILURE with the build log naming the error");
	if (log && !strstr(log, "undeclared_y"))
		tap_diag("log: %s", log);
	free(log);
}

/* ocl_program_try: a failure is returned with its message, a success is kept. */
static void test_program_try(ocl_ctx_t *c)
{
	const char *bad = "__kernel void f(__global int *x) { x[0] = undeclared_z; }\n";
	const char *good = "__kernel void g(__global int *x) { x[0] = 1; }\n";
	cl_program p, q;
	cl_int err = 0;
	char *log = NULL, want[300];

	snprintf(want, sizeof want, "cannot build OpenCL program 'bad_try' for '%s': "
			"clBuildProgram failed: CL_BUILD_PROGRAM_FAILURE (-11)", c->name);
	p = ocl_program_try(c, "bad_try", bad, "", &err, &log);
	tap_ok(!p && err == CL_BUILD_PROGRAM_FAILURE && strcmp(sp_errmsg(), want) == 0
			&& log && strstr(log, "undeclared_z"),
			"ocl_program_try: a broken kernel returns NULL, the error, the message and the log");
	free(log);
	p = ocl_program_try(c, "good_try", good, "-DX=1", &err, NULL);
	q = ocl_program_try(c, "good_try", good, "-DX=1", &err, NULL);
	tap_ok(p && p == q && err == CL_SUCCESS, "ocl_program_try: a program is built once per context");
	p = ocl_program_try(c, "none_try", NULL, "", &err, NULL);
	tap_ok(!p && err == CL_INVALID_VALUE, "ocl_program_try: no source is CL_INVALID_VALUE");
}

static size_t count_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* A test kernel that is tiny (fast to build); SEED makes its source unique. */
static int run_tiny(ocl_ctx_t *c, cl_program p)
{
	cl_kernel k = ocl_kernel(p, "tiny");
	cl_mem m = ocl_buffer(c, CL_MEM_READ_WRITE, 4 * sizeof(cl_uint));
	cl_uint v[4] = { 0, 0, 0, 0 };

	ocl_arg(k, 0, sizeof m, &m);
	ocl_run(c, k, 4);
	ocl_read(c, m, 1, 0, sizeof v, v);
	ocl_release(m);
	clReleaseKernel(k);
	return v[0] == 7 && v[1] == 8 && v[2] == 9 && v[3] == 10;
}

static void test_cache(ocl_ctx_t *c)
{
	static const char *src = "__kernel void tiny(__global uint *x)"
		" { size_t i = get_global_id(0); if (i < 4) x[i] = TINY + (uint)i; }\n";
	char base[4096], dir[4200], *path, *path2, *old = NULL;
	uint8_t hdr[48], junk[256];
	cl_program p;
	cl_int err;
	FILE *f;
	size_t i;
	unsigned hits, builds, writes;

	/* a fresh cache in the current (trash) directory */
	if (!getcwd(base, sizeof base - 32)) {
		tap_skip("getcwd failed");
		return;
	}
	strcat(base, "/ocl_test.XXXXXX");
	if (!mkdtemp(base)) {
		tap_skip("cannot make a temporary directory");
		return;
	}
	if (getenv("XDG_CACHE_HOME"))
		old = sp_strdup(getenv("XDG_CACHE_HOME"));
	setenv("XDG_CACHE_HOME", base, 1);
	unsetenv("SEEDPIPE_NO_CACHE");
	snprintf(dir, sizeof dir, "%s/seedpipe", base);
	hits = c->n_cache_hits;
	builds = c->n_builds;
	writes = c->n_cache_writes;
	p = ocl_build(c, "tiny", src, "-DTINY=7", &err, NULL);
	tap_ok(p && run_tiny(c, p) && c->n_builds == builds + 1 && c->n_cache_writes == writes + 1
			&& count_files(dir) == 1, "first build: from source, one cache file");
	if (p)
		clReleaseProgram(p);
	p = ocl_build(c, "tiny", src, "-DTINY=7", &err, NULL);
	tap_ok(p && run_tiny(c, p) && c->n_cache_hits == hits + 1 && c->n_builds == builds + 1
			&& count_files(dir) == 1, "second build: a cache hit, no new file");
	if (p)
		clReleaseProgram(p);
	path = ocl_cache_path(c, src, "-DTINY=7");
	path2 = ocl_cache_path(c, src, "-DTINY=7 ");
	tap_ok(path && path2 && strcmp(path, path2) != 0 && !strncmp(path, dir, strlen(dir)),
			"the key changes with the build options");

	/* a well-formed file whose binary the driver must refuse */
	f = path ? fopen(path, "r+b") : NULL;
	if (f && fread(hdr, 1, sizeof hdr, f) == sizeof hdr) {
		for (i = 0; i < sizeof junk; i++)
			junk[i] = (uint8_t)rng();
		for (i = 0; i < 8; i++) {
			hdr[32 + i] = (uint8_t)((uint64_t)sizeof junk >> (8 * i));
			hdr[40 + i] = (uint8_t)(XXH3_64bits(junk, sizeof junk) >> (8 * i));
		}
		fclose(f);
		f = fopen(path, "wb");
		fwrite(hdr, 1, sizeof hdr, f);
		fwrite(junk, 1, sizeof junk, f);
		fclose(f);
		builds = c->n_builds;
		p = ocl_build(c, "tiny", src, "-DTINY=7", &err, NULL);
		tap_ok(p && run_tiny(c, p) && c->n_builds == builds + 1 && count_files(dir) == 1,
				"a binary refused by the driver is rebuilt silently");
		if (p)
			clReleaseProgram(p);
		p = ocl_build(c, "tiny", src, "-DTINY=7", &err, NULL);
		tap_ok(p && run_tiny(c, p) && c->n_builds == builds + 1,
				"and the rewritten cache file is used again");
		if (p)
			clReleaseProgram(p);
	} else {
		if (f)
			fclose(f);
		tap_ok(0, "cache file '%s' readable", path ? path : "(none)");
	}

	/* SEEDPIPE_NO_CACHE: builds every time, writes nothing */
	setenv("SEEDPIPE_NO_CACHE", "1", 1);
	builds = c->n_builds;
	writes = c->n_cache_writes;
	p = ocl_build(c, "tiny", src, "-DTINY=7", &err, NULL);
	tap_ok(p && run_tiny(c, p) && c->n_builds == builds + 1 && c->n_cache_writes == writes
			&& ocl_cache_path(c, src, "") == NULL, "SEEDPIPE_NO_CACHE=1 bypasses the cache");
	if (p)
		clReleaseProgram(p);
	unsetenv("SEEDPIPE_NO_CACHE");

	if (old)
		setenv("XDG_CACHE_HOME", old, 1);
	else
		unsetenv("XDG_CACHE_HOME");
	free(old);
	if (path)
		unlink(path);
	rmdir(dir);
	rmdir(base);
	free(path);
	free(path2);
}

static void test_batches(void)
{
	ocl_ctx_t *c;
	size_t n = 100001, nb = (n + 3) / 4;
	char *s = sp_malloc(n), *r1 = sp_malloc(n), *r2 = sp_malloc(n);
	uint8_t *p1 = sp_malloc(nb), *p2 = sp_malloc(nb);

	/* 8 KiB of "device memory": about 3 KiB per batch, so dozens of batches */
	setenv("SEEDPIPE_DEVICE_MEM", "8K", 1);
	c = open_test_device(0);
	unsetenv("SEEDPIPE_DEVICE_MEM");
	if (!c) {
		tap_skip("no device");
		return;
	}
	tap_ok(c->global_mem == 8192 && c->max_alloc == 8192, "SEEDPIPE_DEVICE_MEM caps the sizes");
	rand_seq(s, n, "ACGTN");
	seqio_pack2(p2, s, n);
	seqio_revcomp(r2, s, n);
	tap_ok(ocl_pack2(c, p1, s, n) == CL_SUCCESS && !memcmp(p1, p2, nb),
			"pack2 in many small batches");
	tap_ok(ocl_revcomp(c, r1, s, n) == CL_SUCCESS && !memcmp(r1, r2, n),
			"revcomp in many small batches");
	ocl_close(c);

	/* a device that claims more than it can give: batches are halved */
	setenv("SEEDPIPE_DEBUG_ALLOC_LIMIT", "5000", 1);
	c = open_test_device(0);
	if (c) {
		memset(p1, 0, nb);
		memset(r1, 0, n);
		tap_ok(ocl_pack2(c, p1, s, n) == CL_SUCCESS && !memcmp(p1, p2, nb),
				"pack2: failed allocations split the batch");
		tap_ok(ocl_revcomp(c, r1, s, n) == CL_SUCCESS && !memcmp(r1, r2, n),
				"revcomp: failed allocations split the batch");
		ocl_close(c);
	}
	setenv("SEEDPIPE_DEBUG_ALLOC_LIMIT", "100", 1);
	c = open_test_device(0);
	if (c) {
		tap_ok(ocl_pack2(c, p1, s, n) == CL_MEM_OBJECT_ALLOCATION_FAILURE,
				"an allocation that fails even for a small batch is returned, not fatal");
		ocl_close(c);
	}
	unsetenv("SEEDPIPE_DEBUG_ALLOC_LIMIT");
	free(s);
	free(r1);
	free(r2);
	free(p1);
	free(p2);
}

/* Profiling queue, a second queue, event timing. */
static void test_queues(void)
{
	ocl_ctx_t *c = open_test_device(OCL_PROFILE);
	cl_command_queue q;
	cl_kernel k;
	cl_mem in, out;
	cl_event ev = NULL;
	cl_ulong cn = 4000;
	char s[4000], r[4000], want[4000];
	double t;

	if (!c) {
		tap_skip("no device");
		return;
	}
	rand_seq(s, sizeof s, "ACGT");
	q = ocl_queue_create(c);
	k = ocl_kernel(ocl_program(c, "pack", NULL), "revcomp");
	in = ocl_buffer(c, CL_MEM_READ_ONLY, sizeof s);
	out = ocl_buffer(c, CL_MEM_WRITE_ONLY, sizeof r);
	ocl_check(clEnqueueWriteBuffer(q, in, CL_TRUE, 0, sizeof s, s, 0, NULL, NULL),
			"clEnqueueWriteBuffer");
	ocl_arg(k, 0, sizeof out, &out);
	ocl_arg(k, 1, sizeof in, &in);
	ocl_arg(k, 2, sizeof cn, &cn);
	tap_ok(ocl_run_q(c, q, k, sizeof s, &ev) == CL_SUCCESS && ev, "kernel on a second queue");
	ocl_check(clEnqueueReadBuffer(q, out, CL_TRUE, 0, sizeof r, r, 0, NULL, NULL),
			"clEnqueueReadBuffer");
	seqio_revcomp(want, s, sizeof s);
	t = ocl_event_seconds(ev);
	tap_ok(!memcmp(r, want, sizeof r) && t >= 0 && t < 60,
			"its result is right and its event has a time (%.6f s)", t);
	if (ev)
		clReleaseEvent(ev);
	tap_ok(ocl_run_q(c, q, k, 0, &ev) == CL_SUCCESS && ev == NULL, "n = 0 runs nothing");
	ocl_release(in);
	ocl_release(out);
	clReleaseKernel(k);
	clReleaseCommandQueue(q);
	ocl_close(c);
}

int main(int argc, char **argv)
{
	ocl_ctx_t *c;

	sp_set_progname(argv[0]);
	if (argc > 1 && !strcmp(argv[1], "--probe")) {
		c = open_test_device(0);
		ocl_close(c);
		return c ? 0 : 1;
	}
	if (argc > 1 && !strcmp(argv[1], "--list")) {
		ocl_list_devices(stdout);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--open"))
		return mode_open(argc > 2 ? argv[2] : NULL);
	if (argc > 1 && !strcmp(argv[1], "--build"))
		return mode_build(argc > 2 ? argv[2] : "");
	if (argc > 2 && !strcmp(argv[1], "--build-src"))
		return mode_build_src(argv[2], argc > 3 ? argv[3] : "");
	if (argc > 1) {
		fprintf(stderr, "usage: ocl_test [--probe | --list | --open [SPEC] | --build [OPTIONS] |"
				" --build-src FILE [OPTIONS]]\n");
		return 2;
	}

	test_errors();
	test_specs();
	test_open();
	c = open_test_device(0);
	if (!c) {
		tap_skip("no OpenCL device: device tests");
		return tap_done();
	}
	test_device_info(c);
	test_buffers(c);
	test_pack(c, c->name);
	test_build_fail(c);
	test_program_try(c);
	test_cache(c);
	ocl_close(c);
	test_batches();
	test_queues();
	return tap_done();
}
