/*
 * ocl.c - the OpenCL layer: device choice and listing, wrapped calls with
 * symbolic error names, programs from embedded sources through an on-disk
 * binary cache, memory limits, and the pack kernels' host side.
 *
 * Program cache: $XDG_CACHE_HOME/seedpipe/KEY.bin (else ~/.cache/seedpipe),
 * KEY = hex XXH128 of every build input (source text, options, platform name
 * and version, device name and version, driver version, seedpipe version,
 * cache format).  Little-endian file layout:
 *
 *     +----------+---------+----------+---------+---------+---------+---------+
 *     | magic    | version | reserved | key     | bin_len | bin_xxh | binary  |
 *     | 8        | u32 (1) | u32 (0)  | 16      | u64     | u64     | bin_len |
 *     +----------+---------+----------+---------+---------+---------+---------+
 *     magic = "\x89SPK\r\n\x1a\n"; key = canonical (big-endian) XXH128, the
 *     same bytes as the file name; bin_xxh = XXH3-64 (seed 0) of the binary.
 *
 * Files are written to a mkstemp() file in the same directory and renamed
 * into place, so a reader never sees half a file.  Any problem (no directory,
 * unwritable, short or corrupt file, bad checksum, binary refused by the
 * driver) means a silent build from source; SEEDPIPE_DEBUG=1 tells.
 */
#define _POSIX_C_SOURCE 200809L
#include "ocl.h"
#include "ocl_embed.h"
#include "sp_le.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#define OCL_CACHE_MAGIC "\x89SPK\r\n\x1a\n"
#define OCL_CACHE_VERSION 1u
#define OCL_CACHE_HDR 48
#define OCL_CACHE_MAX ((uint64_t)1 << 30) /* larger files are not ours */

struct ocl_prog {
	char *name, *options;
	cl_program prog;
	struct ocl_prog *next;
};

/* --- errors ------------------------------------------------------------- */

static const struct { cl_int code; const char *name; } ocl_errors[] = {
	{ 0, "CL_SUCCESS" },
	{ -1, "CL_DEVICE_NOT_FOUND" },
	{ -2, "CL_DEVICE_NOT_AVAILABLE" },
	{ -3, "CL_COMPILER_NOT_AVAILABLE" },
	{ -4, "CL_MEM_OBJECT_ALLOCATION_FAILURE" },
	{ -5, "CL_OUT_OF_RESOURCES" },
	{ -6, "CL_OUT_OF_HOST_MEMORY" },
	{ -7, "CL_PROFILING_INFO_NOT_AVAILABLE" },
	{ -8, "CL_MEM_COPY_OVERLAP" },
	{ -9, "CL_IMAGE_FORMAT_MISMATCH" },
	{ -10, "CL_IMAGE_FORMAT_NOT_SUPPORTED" },
	{ -11, "CL_BUILD_PROGRAM_FAILURE" },
	{ -12, "CL_MAP_FAILURE" },
	{ -13, "CL_MISALIGNED_SUB_BUFFER_OFFSET" },
	{ -14, "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST" },
	{ -15, "CL_COMPILE_PROGRAM_FAILURE" },
	{ -16, "CL_LINKER_NOT_AVAILABLE" },
	{ -17, "CL_LINK_PROGRAM_FAILURE" },
	{ -18, "CL_DEVICE_PARTITION_FAILED" },
	{ -19, "CL_KERNEL_ARG_INFO_NOT_AVAILABLE" },
	{ -30, "CL_INVALID_VALUE" },
	{ -31, "CL_INVALID_DEVICE_TYPE" },
	{ -32, "CL_INVALID_PLATFORM" },
	{ -33, "CL_INVALID_DEVICE" },
	{ -34, "CL_INVALID_CONTEXT" },
	{ -35, "CL_INVALID_QUEUE_PROPERTIES" },
	{ -36, "CL_INVALID_COMMAND_QUEUE" },
	{ -37, "CL_INVALID_HOST_PTR" },
	{ -38, "CL_INVALID_MEM_OBJECT" },
	{ -39, "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR" },
	{ -40, "CL_INVALID_IMAGE_SIZE" },
	{ -41, "CL_INVALID_SAMPLER" },
	{ -42, "CL_INVALID_BINARY" },
	{ -43, "CL_INVALID_BUILD_OPTIONS" },
	{ -44, "CL_INVALID_PROGRAM" },
	{ -45, "CL_INVALID_PROGRAM_EXECUTABLE" },
	{ -46, "CL_INVALID_KERNEL_NAME" },
	{ -47, "CL_INVALID_KERNEL_DEFINITION" },
	{ -48, "CL_INVALID_KERNEL" },
	{ -49, "CL_INVALID_ARG_INDEX" },
	{ -50, "CL_INVALID_ARG_VALUE" },
	{ -51, "CL_INVALID_ARG_SIZE" },
	{ -52, "CL_INVALID_KERNEL_ARGS" },
	{ -53, "CL_INVALID_WORK_DIMENSION" },
	{ -54, "CL_INVALID_WORK_GROUP_SIZE" },
	{ -55, "CL_INVALID_WORK_ITEM_SIZE" },
	{ -56, "CL_INVALID_GLOBAL_OFFSET" },
	{ -57, "CL_INVALID_EVENT_WAIT_LIST" },
	{ -58, "CL_INVALID_EVENT" },
	{ -59, "CL_INVALID_OPERATION" },
	{ -60, "CL_INVALID_GL_OBJECT" },
	{ -61, "CL_INVALID_BUFFER_SIZE" },
	{ -62, "CL_INVALID_MIP_LEVEL" },
	{ -63, "CL_INVALID_GLOBAL_WORK_SIZE" },
	{ -64, "CL_INVALID_PROPERTY" },
	{ -65, "CL_INVALID_IMAGE_DESCRIPTOR" },
	{ -66, "CL_INVALID_COMPILER_OPTIONS" },
	{ -67, "CL_INVALID_LINKER_OPTIONS" },
	{ -68, "CL_INVALID_DEVICE_PARTITION_COUNT" },
	/* OpenCL 2.x and 3.0 drivers may return these too */
	{ -69, "CL_INVALID_PIPE_SIZE" },
	{ -70, "CL_INVALID_DEVICE_QUEUE" },
	{ -71, "CL_INVALID_SPEC_ID" },
	{ -72, "CL_MAX_SIZE_RESTRICTION_EXCEEDED" },
	/* extensions */
	{ -1000, "CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR" },
	{ -1001, "CL_PLATFORM_NOT_FOUND_KHR" },
	{ -1057, "CL_DEVICE_PARTITION_FAILED_EXT" },
	{ -1058, "CL_INVALID_PARTITION_COUNT_EXT" },
	{ -1059, "CL_INVALID_PARTITION_NAME_EXT" },
	{ -1092, "CL_EGL_RESOURCE_NOT_ACQUIRED_KHR" },
	{ -1093, "CL_INVALID_EGL_OBJECT_KHR" },
	{ -1094, "CL_INVALID_ACCELERATOR_INTEL" },
	{ -1095, "CL_INVALID_ACCELERATOR_TYPE_INTEL" },
	{ -1096, "CL_INVALID_ACCELERATOR_DESCRIPTOR_INTEL" },
	{ -1097, "CL_ACCELERATOR_TYPE_NOT_SUPPORTED_INTEL" },
	{ -1098, "CL_INVALID_VA_API_MEDIA_ADAPTER_INTEL" },
	{ -1099, "CL_INVALID_VA_API_MEDIA_SURFACE_INTEL" },
	{ -1100, "CL_VA_API_MEDIA_SURFACE_ALREADY_ACQUIRED_INTEL" },
	{ -1101, "CL_VA_API_MEDIA_SURFACE_NOT_ACQUIRED_INTEL" },
};

const char *ocl_strerror(cl_int err)
{
	size_t i;

	for (i = 0; i < sizeof ocl_errors / sizeof ocl_errors[0]; i++)
		if (ocl_errors[i].code == err)
			return ocl_errors[i].name;
	return "CL_UNKNOWN_ERROR";
}

void ocl_check(cl_int err, const char *call)
{
	if (err != CL_SUCCESS)
		sp_die("%s failed: %s (%d)", call, ocl_strerror(err), (int)err);
}

static void ocl_debug(const char *fmt, ...) SP_PRINTF(1, 2);

static int ocl_debug_on(void)
{
	const char *s = getenv("SEEDPIPE_DEBUG");
	return s && *s && strcmp(s, "0") != 0;
}

/* "TOOL: ocl: ..." on stderr when SEEDPIPE_DEBUG is set */
static void ocl_debug(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	if (!ocl_debug_on())
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	sp_msg("ocl: %s", buf);
}

/* --- platforms and devices ---------------------------------------------- */

/*
 * All platform ids (*ids malloc'ed, caller frees).  "No platform" (the ICD
 * loader's CL_PLATFORM_NOT_FOUND_KHR, or zero platforms) is 0 platforms and
 * CL_SUCCESS; other errors are returned.
 */
static cl_int get_platforms(cl_platform_id **ids, cl_uint *n)
{
	cl_int err;
	cl_uint m = 0;

	*ids = NULL;
	*n = 0;
	err = clGetPlatformIDs(0, NULL, &m);
	if (err == -1001 || (err == CL_SUCCESS && m == 0))
		return CL_SUCCESS;
	if (err != CL_SUCCESS)
		return err;
	*ids = sp_calloc(m, sizeof **ids);
	err = clGetPlatformIDs(m, *ids, &m);
	if (err != CL_SUCCESS) {
		free(*ids);
		*ids = NULL;
		return err == -1001 ? CL_SUCCESS : err;
	}
	*n = m;
	return CL_SUCCESS;
}

/* Devices of TYPE on platform P (*ids malloc'ed); none is 0 devices. */
static cl_int get_devices(cl_platform_id p, cl_device_type type, cl_device_id **ids, cl_uint *n)
{
	cl_int err;
	cl_uint m = 0;

	*ids = NULL;
	*n = 0;
	err = clGetDeviceIDs(p, type, 0, NULL, &m);
	if (err == CL_DEVICE_NOT_FOUND || (err == CL_SUCCESS && m == 0))
		return CL_SUCCESS;
	if (err != CL_SUCCESS)
		return err;
	*ids = sp_calloc(m, sizeof **ids);
	err = clGetDeviceIDs(p, type, m, *ids, &m);
	if (err != CL_SUCCESS) {
		free(*ids);
		*ids = NULL;
		return err == CL_DEVICE_NOT_FOUND ? CL_SUCCESS : err;
	}
	*n = m;
	return CL_SUCCESS;
}

static void plat_str(cl_platform_id p, cl_platform_info what, char *buf, size_t len)
{
	buf[0] = 0;
	if (clGetPlatformInfo(p, what, len, buf, NULL) != CL_SUCCESS)
		snprintf(buf, len, "?");
	buf[len - 1] = 0;
}

static void dev_str(cl_device_id d, cl_device_info what, char *buf, size_t len)
{
	size_t n;

	buf[0] = 0;
	if (clGetDeviceInfo(d, what, len, buf, NULL) != CL_SUCCESS)
		snprintf(buf, len, "?");
	buf[len - 1] = 0;
	/* some drivers pad names with blanks */
	n = strlen(buf);
	while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == '\t' || buf[n - 1] == '\n'))
		buf[--n] = 0;
}

static uint64_t dev_u64(cl_device_id d, cl_device_info what)
{
	cl_ulong v = 0;
	return clGetDeviceInfo(d, what, sizeof v, &v, NULL) == CL_SUCCESS ? (uint64_t)v : 0;
}

static unsigned dev_uint(cl_device_id d, cl_device_info what)
{
	cl_uint v = 0;
	return clGetDeviceInfo(d, what, sizeof v, &v, NULL) == CL_SUCCESS ? (unsigned)v : 0;
}

static const char *type_name(cl_device_type t)
{
	if (t & CL_DEVICE_TYPE_GPU)
		return "gpu";
	if (t & CL_DEVICE_TYPE_CPU)
		return "cpu";
	if (t & CL_DEVICE_TYPE_ACCELERATOR)
		return "accelerator";
	return "other";
}

/* Replace tabs and newlines (which would break the listing) by blanks. */
static void no_tabs(char *s)
{
	for (; *s; s++)
		if (*s == '\t' || *s == '\n' || *s == '\r')
			*s = ' ';
}

void ocl_list_devices(FILE *out)
{
	cl_platform_id *plats;
	cl_uint np, p;
	cl_int err;

	err = get_platforms(&plats, &np);
	if (err != CL_SUCCESS) {
		fprintf(out, "no OpenCL platform (clGetPlatformIDs failed: %s (%d))\n",
				ocl_strerror(err), (int)err);
		return;
	}
	if (np == 0) {
		fprintf(out, "no OpenCL platform\n");
		return;
	}
	for (p = 0; p < np; p++) {
		cl_device_id *devs;
		cl_uint nd, d;
		char pname[128];

		plat_str(plats[p], CL_PLATFORM_NAME, pname, sizeof pname);
		no_tabs(pname);
		if (get_devices(plats[p], CL_DEVICE_TYPE_ALL, &devs, &nd) != CL_SUCCESS)
			continue;
		for (d = 0; d < nd; d++) {
			char dname[128], drv[128];
			cl_device_type t = 0;

			dev_str(devs[d], CL_DEVICE_NAME, dname, sizeof dname);
			dev_str(devs[d], CL_DRIVER_VERSION, drv, sizeof drv);
			no_tabs(dname);
			no_tabs(drv);
			clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof t, &t, NULL);
			fprintf(out, "%u:%u\t%s\t%s\t%s\t%llu\t%llu\t%u\t%s\n", p, d, type_name(t),
					pname, dname,
					(unsigned long long)dev_u64(devs[d], CL_DEVICE_GLOBAL_MEM_SIZE),
					(unsigned long long)dev_u64(devs[d], CL_DEVICE_MAX_MEM_ALLOC_SIZE),
					dev_uint(devs[d], CL_DEVICE_MAX_COMPUTE_UNITS), drv);
		}
		free(devs);
	}
	free(plats);
}

/* "(platforms: NAME: 1 cpu, 2 gpu; NAME2: ...)" or "(no OpenCL platform)" */
static void platforms_summary(cl_platform_id *plats, cl_uint np, char *buf, size_t len)
{
	size_t k;
	cl_uint p;

	if (np == 0) {
		snprintf(buf, len, "(no OpenCL platform)");
		return;
	}
	k = (size_t)snprintf(buf, len, "(platforms: ");
	for (p = 0; p < np && k < len; p++) {
		char pname[128];
		cl_device_id *devs;
		cl_uint nd, d, ngpu = 0, ncpu = 0, nother = 0;

		plat_str(plats[p], CL_PLATFORM_NAME, pname, sizeof pname);
		if (get_devices(plats[p], CL_DEVICE_TYPE_ALL, &devs, &nd) != CL_SUCCESS)
			nd = 0;
		for (d = 0; d < nd; d++) {
			cl_device_type t = 0;
			clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof t, &t, NULL);
			if (t & CL_DEVICE_TYPE_GPU)
				ngpu++;
			else if (t & CL_DEVICE_TYPE_CPU)
				ncpu++;
			else
				nother++;
		}
		free(devs);
		k += (size_t)snprintf(buf + k, len - k, "%s%u %s:", p ? "; " : "", p, pname);
		if (k < len && nd == 0)
			k += (size_t)snprintf(buf + k, len - k, " no device");
		if (k < len && ngpu)
			k += (size_t)snprintf(buf + k, len - k, " %u gpu", ngpu);
		if (k < len && ncpu)
			k += (size_t)snprintf(buf + k, len - k, " %u cpu", ncpu);
		if (k < len && nother)
			k += (size_t)snprintf(buf + k, len - k, " %u other", nother);
	}
	if (k < len)
		snprintf(buf + k, len - k, ")");
}

int ocl_parse_spec(const char *spec, ocl_spec_t *s)
{
	const char *q;
	char *end;
	unsigned long p, d;

	memset(s, 0, sizeof *s);
	if (!spec)
		return -1;
	if (!strcmp(spec, "auto"))
		s->kind = OCL_SPEC_AUTO;
	else if (!strcmp(spec, "none"))
		s->kind = OCL_SPEC_NONE;
	else if (!strcmp(spec, "gpu"))
		s->kind = OCL_SPEC_GPU;
	else if (!strcmp(spec, "cpu"))
		s->kind = OCL_SPEC_CPU;
	else {
		/* P:D, both plain decimal numbers */
		q = strchr(spec, ':');
		if (!q || q == spec || spec[0] < '0' || spec[0] > '9' || q[1] < '0' || q[1] > '9')
			return -1;
		errno = 0;
		p = strtoul(spec, &end, 10);
		if (end != q || errno || p > 65535)
			return -1;
		d = strtoul(q + 1, &end, 10);
		if (*end || errno || d > 65535)
			return -1;
		s->kind = OCL_SPEC_INDEX;
		s->plat = (unsigned)p;
		s->dev = (unsigned)d;
	}
	return 0;
}

/* Parse "123", "64K", "2M", "1G" (powers of 1024); -1 if malformed. */
static int parse_size(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case 0: break;
	case 'k': case 'K': x <<= 10; end++; break;
	case 'm': case 'M': x <<= 20; end++; break;
	case 'g': case 'G': x <<= 30; end++; break;
	default: return -1;
	}
	if (*end || x == 0)
		return -1;
	*v = x;
	return 0;
}

static void ctx_info(ocl_ctx_t *c)
{
	const char *cap;
	uint64_t lim;

	plat_str(c->platform, CL_PLATFORM_NAME, c->platform_name, sizeof c->platform_name);
	plat_str(c->platform, CL_PLATFORM_VERSION, c->platform_version, sizeof c->platform_version);
	dev_str(c->device, CL_DEVICE_NAME, c->name, sizeof c->name);
	dev_str(c->device, CL_DEVICE_VENDOR, c->vendor, sizeof c->vendor);
	dev_str(c->device, CL_DEVICE_VERSION, c->device_version, sizeof c->device_version);
	dev_str(c->device, CL_DRIVER_VERSION, c->driver_version, sizeof c->driver_version);
	clGetDeviceInfo(c->device, CL_DEVICE_TYPE, sizeof c->type, &c->type, NULL);
	c->global_mem = dev_u64(c->device, CL_DEVICE_GLOBAL_MEM_SIZE);
	c->max_alloc = dev_u64(c->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
	c->local_mem = dev_u64(c->device, CL_DEVICE_LOCAL_MEM_SIZE);
	c->compute_units = dev_uint(c->device, CL_DEVICE_MAX_COMPUTE_UNITS);
	if (clGetDeviceInfo(c->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof c->max_wg,
				&c->max_wg, NULL) != CL_SUCCESS || c->max_wg == 0)
		c->max_wg = 1;
	cap = getenv("SEEDPIPE_DEBUG_ALLOC_LIMIT");
	if (cap && *cap && parse_size(cap, &c->fail_above) < 0)
		sp_warn("ignoring SEEDPIPE_DEBUG_ALLOC_LIMIT '%s' (expected a size like 512M)", cap);
	cap = getenv("SEEDPIPE_DEVICE_MEM");
	if (cap && *cap) {
		if (parse_size(cap, &lim) < 0) {
			sp_warn("ignoring SEEDPIPE_DEVICE_MEM '%s' (expected a size like 512M)", cap);
		} else {
			if (c->global_mem > lim)
				c->global_mem = lim;
			if (c->max_alloc > lim)
				c->max_alloc = lim;
		}
	}
}

/* Create context and queue on PLAT/DEV; 0 or OCL_OPEN_FAIL with MSG. */
static int ctx_create(cl_platform_id plat, cl_device_id dev, unsigned pi, unsigned di,
		unsigned flags, ocl_ctx_t **out, char *msg, size_t msg_len)
{
	ocl_ctx_t *c = sp_calloc(1, sizeof *c);
	cl_context_properties props[3];
	cl_int err;

	c->platform = plat;
	c->device = dev;
	c->plat_idx = pi;
	c->dev_idx = di;
	c->flags = flags;
	c->debug = ocl_debug_on();
	ctx_info(c);
	props[0] = CL_CONTEXT_PLATFORM;
	props[1] = (cl_context_properties)plat;
	props[2] = 0;
	c->context = clCreateContext(props, 1, &dev, NULL, NULL, &err);
	if (!c->context || err != CL_SUCCESS) {
		snprintf(msg, msg_len, "cannot use OpenCL device %u:%u '%s': clCreateContext failed: %s (%d)",
				pi, di, c->name, ocl_strerror(err), (int)err);
		free(c);
		return OCL_OPEN_FAIL;
	}
	c->queue = clCreateCommandQueue(c->context, dev,
			(flags & OCL_PROFILE) ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
	if (!c->queue || err != CL_SUCCESS) {
		snprintf(msg, msg_len, "cannot use OpenCL device %u:%u '%s': clCreateCommandQueue failed: %s (%d)",
				pi, di, c->name, ocl_strerror(err), (int)err);
		clReleaseContext(c->context);
		free(c);
		return OCL_OPEN_FAIL;
	}
	*out = c;
	return OCL_OPEN_OK;
}

/* First device of TYPE on any platform: 1 found (*pi, *di, *dev set), 0 none. */
static int find_first(cl_platform_id *plats, cl_uint np, cl_device_type type,
		unsigned *pi, unsigned *di, cl_device_id *dev)
{
	cl_uint p;

	for (p = 0; p < np; p++) {
		cl_device_id *all;
		cl_uint nd, d;

		/* walk all devices so that the index matches the listing */
		if (get_devices(plats[p], CL_DEVICE_TYPE_ALL, &all, &nd) != CL_SUCCESS)
			continue;
		for (d = 0; d < nd; d++) {
			cl_device_type t = 0;
			clGetDeviceInfo(all[d], CL_DEVICE_TYPE, sizeof t, &t, NULL);
			if (t & type) {
				*pi = p;
				*di = d;
				*dev = all[d];
				free(all);
				return 1;
			}
		}
		free(all);
	}
	return 0;
}

int ocl_open(const char *spec, unsigned flags, ocl_ctx_t **ctx, char *msg, size_t msg_len)
{
	const char *what = "device";
	cl_platform_id *plats = NULL;
	cl_device_id dev = NULL;
	cl_uint np = 0;
	unsigned pi = 0, di = 0;
	ocl_spec_t s;
	char summary[512];
	cl_int err;
	int rc, found;

	*ctx = NULL;
	if (msg_len)
		msg[0] = 0;
	if (!spec) {
		spec = getenv("SEEDPIPE_DEVICE");
		what = "SEEDPIPE_DEVICE";
		if (!spec || !*spec)
			spec = "auto";
	}
	if (ocl_parse_spec(spec, &s) < 0) {
		snprintf(msg, msg_len, "invalid %s '%s' (expected auto, gpu, cpu, none or P:D)",
				what, spec);
		return OCL_OPEN_BADSPEC;
	}
	if (s.kind == OCL_SPEC_NONE) {
		if (flags & OCL_VERBOSE)
			sp_msg("using the native CPU code (device 'none')");
		return OCL_OPEN_OK;
	}
	err = get_platforms(&plats, &np);
	if (err != CL_SUCCESS) {
		if (s.kind == OCL_SPEC_AUTO) {
			ocl_debug("clGetPlatformIDs failed: %s (%d); using the native code",
					ocl_strerror(err), (int)err);
			if (flags & OCL_VERBOSE)
				sp_msg("using the native CPU code (no OpenCL platform)");
			return OCL_OPEN_OK;
		}
		snprintf(msg, msg_len, "no OpenCL device '%s' (clGetPlatformIDs failed: %s (%d))",
				spec, ocl_strerror(err), (int)err);
		return OCL_OPEN_NODEV;
	}
	switch (s.kind) {
	case OCL_SPEC_AUTO:
	case OCL_SPEC_GPU:
		found = find_first(plats, np, CL_DEVICE_TYPE_GPU, &pi, &di, &dev);
		break;
	case OCL_SPEC_CPU:
		found = find_first(plats, np, CL_DEVICE_TYPE_CPU, &pi, &di, &dev);
		break;
	default: {
		cl_device_id *all = NULL;
		cl_uint nd = 0;

		found = 0;
		if (s.plat < np && get_devices(plats[s.plat], CL_DEVICE_TYPE_ALL, &all, &nd) == CL_SUCCESS
				&& s.dev < nd) {
			pi = s.plat;
			di = s.dev;
			dev = all[s.dev];
			found = 1;
		}
		free(all);
		break;
	}
	}
	if (!found) {
		free(plats);
		if (s.kind == OCL_SPEC_AUTO) {
			const char *why = np ? "no OpenCL GPU" : "no OpenCL platform";
			ocl_debug("%s; using the native code", why);
			if (flags & OCL_VERBOSE)
				sp_msg("using the native CPU code (%s)", why);
			return OCL_OPEN_OK;
		}
		get_platforms(&plats, &np);
		platforms_summary(plats, np, summary, sizeof summary);
		free(plats);
		if (s.kind == OCL_SPEC_GPU)
			snprintf(msg, msg_len, "no OpenCL GPU found %s", summary);
		else if (s.kind == OCL_SPEC_CPU)
			snprintf(msg, msg_len, "no OpenCL CPU device found %s", summary);
		else
			snprintf(msg, msg_len, "no OpenCL device %u:%u %s", s.plat, s.dev, summary);
		return OCL_OPEN_NODEV;
	}
	rc = ctx_create(plats[pi], dev, pi, di, flags, ctx, msg, msg_len);
	free(plats);
	if (rc != OCL_OPEN_OK && s.kind == OCL_SPEC_AUTO) {
		/* a GPU that cannot be used is no reason to fail the default */
		sp_warn("%s; using the native CPU code", msg);
		msg[0] = 0;
		return OCL_OPEN_OK;
	}
	if (rc == OCL_OPEN_OK && (flags & OCL_VERBOSE)) {
		char d[512];
		ocl_describe(*ctx, d, sizeof d);
		sp_msg("using OpenCL device %s", d);
	}
	if (rc == OCL_OPEN_OK)
		ocl_debug("device %u:%u '%s' (%s), global %llu, max alloc %llu", pi, di,
				(*ctx)->name, (*ctx)->platform_name,
				(unsigned long long)(*ctx)->global_mem,
				(unsigned long long)(*ctx)->max_alloc);
	return rc;
}

ocl_ctx_t *ocl_open_or_die(const char *spec, unsigned flags)
{
	ocl_ctx_t *c;
	char msg[1024];
	int rc;

	rc = ocl_open(spec, flags, &c, msg, sizeof msg);
	if (rc != OCL_OPEN_OK)
		sp_die_code(rc, "%s", msg);
	return c;
}

void ocl_close(ocl_ctx_t *ctx)
{
	ocl_prog_t *p, *next;

	if (!ctx)
		return;
	for (p = ctx->progs; p; p = next) {
		next = p->next;
		clReleaseProgram(p->prog);
		free(p->name);
		free(p->options);
		free(p);
	}
	if (ctx->queue) {
		clFinish(ctx->queue);
		clReleaseCommandQueue(ctx->queue);
	}
	if (ctx->context)
		clReleaseContext(ctx->context);
	free(ctx);
}

void ocl_describe(const ocl_ctx_t *ctx, char *buf, size_t len)
{
	snprintf(buf, len, "%u:%u %s (%s, %s, driver %s, %llu MiB, %u compute units)",
			ctx->plat_idx, ctx->dev_idx, ctx->name, type_name(ctx->type),
			ctx->platform_name, ctx->driver_version,
			(unsigned long long)(ctx->global_mem >> 20), ctx->compute_units);
}

uint64_t ocl_mem_budget(const ocl_ctx_t *ctx, double fraction)
{
	if (!(fraction > 0 && fraction <= 1))
		fraction = 0.5;
	return (uint64_t)((double)ctx->global_mem * fraction);
}

uint64_t ocl_batch_bytes(const ocl_ctx_t *ctx, double fraction)
{
	uint64_t b = ocl_mem_budget(ctx, fraction);
	return b < ctx->max_alloc ? b : ctx->max_alloc;
}

/* --- program cache ------------------------------------------------------ */

static int cache_disabled(void)
{
	const char *s = getenv("SEEDPIPE_NO_CACHE");
	return s && *s && strcmp(s, "0") != 0;
}

/* The cache directory (malloc'ed), created if missing; NULL if none. */
static char *cache_dir(int create)
{
	const char *base = getenv("XDG_CACHE_HOME");
	char *parent, *dir;
	size_t n;

	if (base && base[0] == '/') {
		parent = sp_strdup(base);
	} else {
		const char *home = getenv("HOME");
		if (!home || home[0] != '/')
			return NULL;
		n = strlen(home) + sizeof "/.cache";
		parent = sp_malloc(n);
		snprintf(parent, n, "%s/.cache", home);
	}
	n = strlen(parent) + sizeof "/seedpipe";
	dir = sp_malloc(n);
	snprintf(dir, n, "%s/seedpipe", parent);
	if (create) {
		/* errors show up when the file is written */
		if (mkdir(parent, 0700) < 0 && errno != EEXIST)
			ocl_debug("cannot create '%s': %s", parent, strerror(errno));
		else if (mkdir(dir, 0777) < 0 && errno != EEXIST)
			ocl_debug("cannot create '%s': %s", dir, strerror(errno));
	}
	free(parent);
	return dir;
}

static void hash_str(XXH3_state_t *st, const char *s)
{
	uint64_t n = s ? strlen(s) : 0;
	uint8_t len[8];
	int i;

	/* length prefix: ("ab","c") and ("a","bc") must not collide */
	for (i = 0; i < 8; i++)
		len[i] = (uint8_t)(n >> (8 * i));
	XXH3_128bits_update(st, len, sizeof len);
	if (n)
		XXH3_128bits_update(st, s, (size_t)n);
}

/* The canonical XXH128 of every build input. */
static void cache_key(const ocl_ctx_t *ctx, const char *src, const char *options,
		XXH128_canonical_t *key)
{
	XXH3_state_t *st = XXH3_createState();
	XXH128_hash_t h;

	if (!st)
		sp_die("out of memory (xxhash state)");
	XXH3_128bits_reset(st);
	hash_str(st, "seedpipe kernel cache 1");
	hash_str(st, SP_VERSION);
	hash_str(st, src);
	hash_str(st, options ? options : "");
	hash_str(st, ctx->platform_name);
	hash_str(st, ctx->platform_version);
	hash_str(st, ctx->name);
	hash_str(st, ctx->vendor);
	hash_str(st, ctx->device_version);
	hash_str(st, ctx->driver_version);
	h = XXH3_128bits_digest(st);
	XXH3_freeState(st);
	XXH128_canonicalFromHash(key, h);
}

static char *key_path(const char *dir, const XXH128_canonical_t *key)
{
	size_t n = strlen(dir) + 1 + 32 + sizeof ".bin";
	char *path = sp_malloc(n);
	char *q;
	int i;

	q = path + snprintf(path, n, "%s/", dir);
	for (i = 0; i < 16; i++)
		q += sprintf(q, "%02x", key->digest[i]);
	strcpy(q, ".bin");
	return path;
}

char *ocl_cache_path(const ocl_ctx_t *ctx, const char *src, const char *options)
{
	XXH128_canonical_t key;
	char *dir, *path;

	if (cache_disabled() || !(dir = cache_dir(0)))
		return NULL;
	cache_key(ctx, src, options, &key);
	path = key_path(dir, &key);
	free(dir);
	return path;
}

/*
 * Read and check the cache file PATH for KEY; returns the binary (malloc'ed,
 * *len set) or NULL with the reason in *why.
 */
static uint8_t *cache_load(const char *path, const XXH128_canonical_t *key, size_t *len,
		const char **why)
{
	uint8_t hdr[OCL_CACHE_HDR], *bin;
	struct stat st;
	uint64_t n;
	ssize_t r;
	size_t got;
	int fd;

	*why = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*why = errno == ENOENT ? "no file" : strerror(errno);
		return NULL;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < OCL_CACHE_HDR
			|| (uint64_t)st.st_size > OCL_CACHE_MAX + OCL_CACHE_HDR) {
		*why = "not a cache file or wrong size";
		close(fd);
		return NULL;
	}
	for (got = 0; got < OCL_CACHE_HDR; got += (size_t)r)
		if ((r = read(fd, hdr + got, OCL_CACHE_HDR - got)) <= 0)
			break;
	n = sp_ld64(hdr + 32);
	if (got < OCL_CACHE_HDR || memcmp(hdr, OCL_CACHE_MAGIC, 8) != 0
			|| sp_ld32(hdr + 8) != OCL_CACHE_VERSION
			|| memcmp(hdr + 16, key->digest, 16) != 0
			|| n == 0 || n != (uint64_t)st.st_size - OCL_CACHE_HDR) {
		*why = "bad header";
		close(fd);
		return NULL;
	}
	bin = sp_malloc((size_t)n);
	for (got = 0; got < n; got += (size_t)r)
		if ((r = read(fd, bin + got, (size_t)n - got)) <= 0)
			break;
	close(fd);
	if (got != n) {
		*why = "short read";
		free(bin);
		return NULL;
	}
	if (XXH3_64bits(bin, (size_t)n) != sp_ld64(hdr + 40)) {
		*why = "checksum mismatch";
		free(bin);
		return NULL;
	}
	*len = (size_t)n;
	return bin;
}

/* Write the binary of PROG to PATH atomically; 0 ok, -1 (debug note) if not. */
static int cache_store(ocl_ctx_t *ctx, cl_program prog, const char *path,
		const XXH128_canonical_t *key)
{
	uint8_t hdr[OCL_CACHE_HDR], *bin = NULL;
	size_t bin_len = 0;
	char *tmp, *slash;
	const char *fail = NULL;
	cl_uint ndev = 0;
	cl_int err;
	size_t n;
	int fd;

	err = clGetProgramInfo(prog, CL_PROGRAM_NUM_DEVICES, sizeof ndev, &ndev, NULL);
	if (err == CL_SUCCESS && ndev != 1)
		err = CL_INVALID_PROGRAM;
	if (err == CL_SUCCESS)
		err = clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof bin_len, &bin_len, NULL);
	if (err == CL_SUCCESS && (bin_len == 0 || bin_len > OCL_CACHE_MAX))
		err = CL_INVALID_BINARY;
	if (err == CL_SUCCESS) {
		unsigned char *bins[1];
		bin = sp_malloc(bin_len);
		bins[0] = bin;
		err = clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL);
	}
	if (err != CL_SUCCESS) {
		ocl_debug("no program binary to cache: clGetProgramInfo failed: %s (%d)",
				ocl_strerror(err), (int)err);
		free(bin);
		return -1;
	}
	memcpy(hdr, OCL_CACHE_MAGIC, 8);
	sp_st32(hdr + 8, OCL_CACHE_VERSION);
	sp_st32(hdr + 12, 0);
	memcpy(hdr + 16, key->digest, 16);
	sp_st64(hdr + 32, (uint64_t)bin_len);
	sp_st64(hdr + 40, XXH3_64bits(bin, bin_len));

	/* temporary file in the same directory, so that rename() is atomic */
	n = strlen(path) + sizeof ".tmp.XXXXXX";
	tmp = sp_malloc(n);
	slash = strrchr(path, '/');
	snprintf(tmp, n, "%.*s.%s.XXXXXX", (int)(slash - path + 1), path, slash + 1);
	fd = mkstemp(tmp);
	if (fd < 0) {
		fail = strerror(errno);
	} else {
		if (sp_write_all(fd, hdr, sizeof hdr) < 0 || sp_write_all(fd, bin, bin_len) < 0)
			fail = strerror(errno ? errno : EIO);
		if (close(fd) < 0 && !fail)
			fail = strerror(errno);
		if (!fail && rename(tmp, path) < 0)
			fail = strerror(errno);
		if (fail)
			unlink(tmp);
	}
	if (fail)
		ocl_debug("cannot write the program cache '%s': %s", path, fail);
	else
		ctx->n_cache_writes++;
	free(tmp);
	free(bin);
	return fail ? -1 : 0;
}

/*
 * clBuildProgram with the driver's own stderr chatter (PoCL's compiler
 * prints "1 warning generated." there) silenced unless SEEDPIPE_DEBUG is
 * set: diagnostics belong in the build log, which is printed on failure.
 */
static cl_int build_quiet(ocl_ctx_t *ctx, cl_program prog, const char *options)
{
	int saved = -1, null_fd;
	cl_int err;

	if (!ctx->debug) {
		fflush(stderr);
		null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (null_fd >= 0) {
			saved = fcntl(2, F_DUPFD_CLOEXEC, 3);
			if (saved >= 0 && dup2(null_fd, 2) < 0) {
				close(saved);
				saved = -1;
			}
			close(null_fd);
		}
	}
	err = clBuildProgram(prog, 1, &ctx->device, options, NULL, NULL);
	if (saved >= 0) {
		fflush(stderr);
		dup2(saved, 2);
		close(saved);
	}
	return err;
}

/* The build log of PROG for CTX's device (malloc'ed, never NULL). */
static char *build_log(ocl_ctx_t *ctx, cl_program prog)
{
	size_t n = 0;
	char *log;

	if (clGetProgramBuildInfo(prog, ctx->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) != CL_SUCCESS
			|| n == 0)
		return sp_strdup("");
	log = sp_malloc(n + 1);
	if (clGetProgramBuildInfo(prog, ctx->device, CL_PROGRAM_BUILD_LOG, n, log, NULL) != CL_SUCCESS)
		n = 0;
	log[n] = 0;
	return log;
}

cl_program ocl_build(ocl_ctx_t *ctx, const char *label, const char *src,
		const char *options, cl_int *err, char **log)
{
	XXH128_canonical_t key;
	cl_program prog;
	char *dir = NULL, *path = NULL;
	const char *why;
	double t0 = sp_now();
	cl_int e;

	if (!options)
		options = "";
	if (log)
		*log = NULL;
	if (!cache_disabled() && (dir = cache_dir(1))) {
		uint8_t *bin;
		size_t len;

		cache_key(ctx, src, options, &key);
		path = key_path(dir, &key);
		bin = cache_load(path, &key, &len, &why);
		if (bin) {
			const unsigned char *bins[1];
			cl_int status = CL_SUCCESS;

			bins[0] = bin;
			prog = clCreateProgramWithBinary(ctx->context, 1, &ctx->device, &len, bins,
					&status, &e);
			if (prog && e == CL_SUCCESS && status == CL_SUCCESS)
				e = build_quiet(ctx, prog, options);
			else if (e == CL_SUCCESS)
				e = status;
			free(bin);
			if (e == CL_SUCCESS) {
				ctx->n_cache_hits++;
				ocl_debug("program cache hit '%s' (%s)", label, path);
				if ((ctx->flags & OCL_VERBOSE) && !ctx->debug)
					sp_msg("OpenCL program '%s' loaded from the cache (%.2f s)", label,
							sp_now() - t0);
				free(path);
				free(dir);
				if (err)
					*err = CL_SUCCESS;
				return prog;
			}
			if (prog)
				clReleaseProgram(prog);
			ocl_debug("cached program '%s' refused by the driver: %s (%d); rebuilding",
					label, ocl_strerror(e), (int)e);
		} else {
			ocl_debug("program cache miss '%s' (%s: %s)", label, path, why);
		}
	} else {
		ocl_debug("program cache disabled");
	}
	free(dir);

	prog = clCreateProgramWithSource(ctx->context, 1, &src, NULL, &e);
	if (!prog || e != CL_SUCCESS) {
		free(path);
		if (err)
			*err = e != CL_SUCCESS ? e : CL_INVALID_PROGRAM;
		return NULL;
	}
	e = build_quiet(ctx, prog, options);
	if (e != CL_SUCCESS) {
		if (log)
			*log = build_log(ctx, prog);
		clReleaseProgram(prog);
		free(path);
		if (err)
			*err = e;
		return NULL;
	}
	ctx->n_builds++;
	ocl_debug("built program '%s' from source (%.2f s)", label, sp_now() - t0);
	if ((ctx->flags & OCL_VERBOSE) && !ctx->debug)
		sp_msg("OpenCL program '%s' built from source (%.2f s)", label, sp_now() - t0);
	if (path)
		cache_store(ctx, prog, path, &key);
	free(path);
	if (err)
		*err = CL_SUCCESS;
	return prog;
}

const char *ocl_source(const char *name)
{
	int i;

	for (i = 0; i < sp_n_kernel_srcs; i++)
		if (!strcmp(sp_kernel_srcs[i].name, name))
			return sp_kernel_srcs[i].source;
	return NULL;
}

cl_program ocl_program_src(ocl_ctx_t *ctx, const char *label, const char *src,
		const char *options)
{
	ocl_prog_t *p;
	cl_program prog;
	char *log;
	cl_int err;

	if (!options)
		options = "";
	for (p = ctx->progs; p; p = p->next)
		if (!strcmp(p->name, label) && !strcmp(p->options, options))
			return p->prog;
	prog = ocl_build(ctx, label, src, options, &err, &log);
	if (!prog) {
		sp_msg("cannot build OpenCL program '%s' for '%s': clBuildProgram failed: %s (%d)%s",
				label, ctx->name, ocl_strerror(err), (int)err,
				log && *log ? "; build log:" : "");
		if (log && *log)
			fprintf(stderr, "%s%s", log, log[strlen(log) - 1] == '\n' ? "" : "\n");
		free(log);
		exit(SP_EXIT_DATA);
	}
	p = sp_calloc(1, sizeof *p);
	p->name = sp_strdup(label);
	p->options = sp_strdup(options);
	p->prog = prog;
	p->next = ctx->progs;
	ctx->progs = p;
	return prog;
}

cl_program ocl_program(ocl_ctx_t *ctx, const char *name, const char *options)
{
	const char *src = ocl_source(name);

	if (!src)
		sp_die("no embedded OpenCL source '%s' (a bug)", name);
	return ocl_program_src(ctx, name, src, options);
}

/* --- wrapped calls ------------------------------------------------------ */

cl_kernel ocl_kernel(cl_program prog, const char *name)
{
	cl_int err;
	cl_kernel k = clCreateKernel(prog, name, &err);

	if (err != CL_SUCCESS || !k)
		sp_die("clCreateKernel failed for '%s': %s (%d)", name, ocl_strerror(err), (int)err);
	return k;
}

void ocl_arg(cl_kernel k, cl_uint i, size_t size, const void *value)
{
	cl_int err = clSetKernelArg(k, i, size, value);

	if (err != CL_SUCCESS)
		sp_die("clSetKernelArg failed for argument %u: %s (%d)", (unsigned)i,
				ocl_strerror(err), (int)err);
}

cl_mem ocl_buffer_try(ocl_ctx_t *ctx, cl_mem_flags flags, size_t size, cl_int *err)
{
	cl_int e, dummy;
	cl_mem m;
	uint8_t zero = 0;

	if (!err)
		err = &dummy;
	if (flags & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR)) {
		*err = CL_INVALID_VALUE;
		return NULL;
	}
	if (size == 0 || (uint64_t)size > ctx->max_alloc) {
		*err = CL_INVALID_BUFFER_SIZE;
		return NULL;
	}
	if (ctx->fail_above && (uint64_t)size > ctx->fail_above) {
		*err = CL_MEM_OBJECT_ALLOCATION_FAILURE;
		return NULL;
	}
	m = clCreateBuffer(ctx->context, flags, size, NULL, &e);
	if (!m || e != CL_SUCCESS) {
		*err = e != CL_SUCCESS ? e : CL_MEM_OBJECT_ALLOCATION_FAILURE;
		return NULL;
	}
	/* drivers allocate on first use: use it now, while failing is harmless */
	e = clEnqueueWriteBuffer(ctx->queue, m, CL_TRUE, 0, 1, &zero, 0, NULL, NULL);
	if (e != CL_SUCCESS) {
		clReleaseMemObject(m);
		*err = e;
		return NULL;
	}
	*err = CL_SUCCESS;
	return m;
}

cl_mem ocl_buffer(ocl_ctx_t *ctx, cl_mem_flags flags, size_t size)
{
	cl_int err;
	cl_mem m = ocl_buffer_try(ctx, flags, size, &err);

	if (!m)
		sp_die("clCreateBuffer failed for %zu bytes: %s (%d)", size, ocl_strerror(err), (int)err);
	return m;
}

void ocl_release(cl_mem m)
{
	if (m)
		clReleaseMemObject(m);
}

void ocl_write(ocl_ctx_t *ctx, cl_mem buf, int blocking, size_t off, size_t n, const void *src)
{
	if (n)
		ocl_check(clEnqueueWriteBuffer(ctx->queue, buf, blocking ? CL_TRUE : CL_FALSE, off, n,
					src, 0, NULL, NULL), "clEnqueueWriteBuffer");
}

void ocl_read(ocl_ctx_t *ctx, cl_mem buf, int blocking, size_t off, size_t n, void *dst)
{
	if (n)
		ocl_check(clEnqueueReadBuffer(ctx->queue, buf, blocking ? CL_TRUE : CL_FALSE, off, n,
					dst, 0, NULL, NULL), "clEnqueueReadBuffer");
}

cl_int ocl_run_try(ocl_ctx_t *ctx, cl_kernel k, size_t n)
{
	return ocl_run_q(ctx, NULL, k, n, NULL);
}

cl_int ocl_run_q(ocl_ctx_t *ctx, cl_command_queue q, cl_kernel k, size_t n, cl_event *ev)
{
	size_t kwg = 0, local = 1, global, lim;
	cl_int err;

	if (ev)
		*ev = NULL;
	if (n == 0)
		return CL_SUCCESS;
	err = clGetKernelWorkGroupInfo(k, ctx->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg,
			&kwg, NULL);
	if (err != CL_SUCCESS)
		return err;
	lim = kwg < ctx->max_wg ? kwg : ctx->max_wg;
	if (lim > 256)
		lim = 256;
	while (local * 2 <= lim)
		local *= 2;
	if (n > (size_t)-1 - local)
		return CL_INVALID_GLOBAL_WORK_SIZE;
	global = (n + local - 1) / local * local;
	return clEnqueueNDRangeKernel(q ? q : ctx->queue, k, 1, NULL, &global, &local, 0, NULL, ev);
}

void ocl_run(ocl_ctx_t *ctx, cl_kernel k, size_t n)
{
	ocl_check(ocl_run_try(ctx, k, n), "clEnqueueNDRangeKernel");
}

cl_command_queue ocl_queue_create(ocl_ctx_t *ctx)
{
	cl_int err;
	cl_command_queue q = clCreateCommandQueue(ctx->context, ctx->device,
			(ctx->flags & OCL_PROFILE) ? CL_QUEUE_PROFILING_ENABLE : 0, &err);

	if (!q || err != CL_SUCCESS)
		sp_die("clCreateCommandQueue failed: %s (%d)", ocl_strerror(err), (int)err);
	return q;
}

double ocl_event_seconds(cl_event ev)
{
	cl_ulong t0 = 0, t1 = 0;

	if (!ev || clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL)
			!= CL_SUCCESS || clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END,
				sizeof t1, &t1, NULL) != CL_SUCCESS || t1 < t0)
		return -1;
	return (double)(t1 - t0) * 1e-9;
}

cl_int ocl_finish_try(ocl_ctx_t *ctx)
{
	return clFinish(ctx->queue);
}

void ocl_finish(ocl_ctx_t *ctx)
{
	ocl_check(clFinish(ctx->queue), "clFinish");
}

/* --- the pack kernels --------------------------------------------------- */

/* Errors that mean "too big for the device now": try a smaller batch. */
static int too_big(cl_int err)
{
	return err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES
		|| err == CL_OUT_OF_HOST_MEMORY || err == CL_INVALID_BUFFER_SIZE;
}

#define OCL_MIN_BATCH 256 /* bases; smaller batches are not worth splitting */

/*
 * Run kernel KNAME of "pack" over SRC[0..n) in batches.  pack2 (PACK = 1):
 * batch [a, a+c) of the bases (a, c multiples of 4 but for the last) gives
 * DST[a/4 .. (a+c+3)/4).  revcomp: it gives DST[n-a-c .. n-a).  A batch
 * the device cannot hold is halved and run again.
 */
static cl_int run_batched(ocl_ctx_t *ctx, const char *kname, int pack, uint8_t *dst,
		const char *src, size_t n)
{
	cl_program prog;
	cl_kernel k;
	cl_mem in = NULL, out = NULL;
	uint64_t budget;
	size_t batch, cap = 0, a = 0;
	cl_int err = CL_SUCCESS;

	if (n == 0)
		return CL_SUCCESS;
	prog = ocl_program(ctx, "pack", NULL);
	k = ocl_kernel(prog, kname);
	/* the input and the output of one batch share the budget */
	budget = ocl_batch_bytes(ctx, 0.5);
	budget = pack ? budget / 5 * 4 : budget / 2;
	batch = budget < n ? (size_t)budget : n;
	if (batch < OCL_MIN_BATCH)
		batch = n < OCL_MIN_BATCH ? n : OCL_MIN_BATCH;
	if (pack && batch < n)
		batch &= ~(size_t)3;
	while (a < n) {
		size_t c = n - a < batch ? n - a : batch;
		size_t out_len = pack ? (c + 3) / 4 : c;
		cl_ulong cn = c;

		if (!in || c > cap) {
			ocl_release(in);
			ocl_release(out);
			out = NULL;
			in = ocl_buffer_try(ctx, CL_MEM_READ_ONLY, c, &err);
			if (in)
				out = ocl_buffer_try(ctx, CL_MEM_WRITE_ONLY, pack ? (c + 3) / 4 : c, &err);
			cap = c;
		}
		if (in && out) {
			err = clEnqueueWriteBuffer(ctx->queue, in, CL_FALSE, 0, c, src + a, 0, NULL, NULL);
			if (err == CL_SUCCESS) {
				ocl_arg(k, 0, sizeof out, &out);
				ocl_arg(k, 1, sizeof in, &in);
				ocl_arg(k, 2, sizeof cn, &cn);
				err = ocl_run_try(ctx, k, pack ? (c + 3) / 4 : c);
			}
			if (err == CL_SUCCESS)
				err = clEnqueueReadBuffer(ctx->queue, out, CL_TRUE, 0, out_len,
						pack ? dst + a / 4 : dst + (n - a - c), 0, NULL, NULL);
		}
		if (err != CL_SUCCESS) {
			clFinish(ctx->queue);
			if (!too_big(err) || batch <= OCL_MIN_BATCH)
				break;
			/* split: the same batch again, half as large */
			ocl_debug("%s: %s for a batch of %zu bytes; halving it", kname,
					ocl_strerror(err), batch);
			batch = pack ? (batch / 2) & ~(size_t)3 : batch / 2;
			ocl_release(in);
			ocl_release(out);
			in = out = NULL;
			err = CL_SUCCESS;
			continue;
		}
		a += c;
	}
	ocl_release(in);
	ocl_release(out);
	clReleaseKernel(k);
	return err;
}

cl_int ocl_pack2(ocl_ctx_t *ctx, uint8_t *dst, const char *seq, size_t n)
{
	return run_batched(ctx, "pack2", 1, dst, seq, n);
}

cl_int ocl_revcomp(ocl_ctx_t *ctx, char *dst, const char *src, size_t n)
{
	return run_batched(ctx, "revcomp", 0, (uint8_t *)dst, src, n);
}
