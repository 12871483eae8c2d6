/*
 * ocl.c - the OpenCL layer's base: error names, device choice and listing,
 * contexts, memory limits and the wrapped calls.  Programs (and their binary
 * cache) are in ocl_cache.c, the pack kernels' host side in ocl_pack.c; the
 * three share ocl_priv.h.
 */
#define _POSIX_C_SOURCE 200809L
#include "ocl.h"
#include "ocl_priv.h"
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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

static int ocl_debug_on(void)
{
	const char *s = getenv("SEEDPIPE_DEBUG");
	return s && *s && strcmp(s, "0") != 0;
}

void ocl_debug(const char *fmt, ...)
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
	err = ocl_loaded(clGetPlatformIDs(0, NULL, &m));
	if (err == -1001 || (err == CL_SUCCESS && m == 0))
		return CL_SUCCESS;
	if (err != CL_SUCCESS)
		return err;
	*ids = sp_calloc(m, sizeof **ids);
	err = ocl_loaded(clGetPlatformIDs(m, *ids, &m));
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
	err = ocl_loaded(clGetDeviceIDs(p, type, 0, NULL, &m));
	if (err == CL_DEVICE_NOT_FOUND || (err == CL_SUCCESS && m == 0))
		return CL_SUCCESS;
	if (err != CL_SUCCESS)
		return err;
	*ids = sp_calloc(m, sizeof **ids);
	err = ocl_loaded(clGetDeviceIDs(p, type, m, *ids, &m));
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

/*
 * Whether CTX is a CPU device of PoCL before 6, whose release of a kernel's
 * library handle is by kernel and local size (ocl.h, ocl_slot_queue); with
 * SEEDPIPE_OCL_ONE_QUEUE set, its value.
 */
static int pocl_shared_entries(const ocl_ctx_t *c)
{
	const char *e = getenv("SEEDPIPE_OCL_ONE_QUEUE"), *v = strstr(c->platform_version, "PoCL ");

	if (e && *e)
		return strcmp(e, "0") != 0;
	return v && (c->type & CL_DEVICE_TYPE_CPU) && atoi(v + 5) < 6;
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
	c->one_queue = pocl_shared_entries(c);
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
	err = ocl_loaded(err);
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

int ocl_peek(const char *spec, char *name, size_t name_len, char *driver, size_t driver_len)
{
	cl_platform_id *plats = NULL;
	cl_device_id dev = NULL;
	cl_uint np = 0;
	unsigned pi = 0, di = 0;
	ocl_spec_t s;
	int found = 0;

	if (spec && !strcmp(spec, "auto")) {
		const char *a = getenv("SEEDPIPE_AUTO_DEVICE");

		spec = a && *a ? a : "gpu";
	}
	if (!spec || ocl_parse_spec(spec, &s) < 0 || s.kind == OCL_SPEC_NONE ||
			s.kind == OCL_SPEC_AUTO || get_platforms(&plats, &np) != CL_SUCCESS)
		return -1;
	if (s.kind == OCL_SPEC_GPU || s.kind == OCL_SPEC_CPU) {
		found = find_first(plats, np, s.kind == OCL_SPEC_GPU ? CL_DEVICE_TYPE_GPU :
				CL_DEVICE_TYPE_CPU, &pi, &di, &dev);
	} else {
		cl_device_id *all = NULL;
		cl_uint nd = 0;

		if (s.plat < np && get_devices(plats[s.plat], CL_DEVICE_TYPE_ALL, &all, &nd) ==
				CL_SUCCESS && s.dev < nd) {
			dev = all[s.dev];
			found = 1;
		}
		free(all);
	}
	free(plats);
	if (!found)
		return -1;
	dev_str(dev, CL_DEVICE_NAME, name, name_len);   /* as ctx->name, driver_version */
	dev_str(dev, CL_DRIVER_VERSION, driver, driver_len);
	return 0;
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

/* ---- residency of a structure's parts ---------------------------------- */

static void residency_release(ocl_residency_t *r, uint32_t i)
{
	if (r->up[i]) {
		r->release(r->cb, i);
		r->up[i] = 0;
	}
}

int ocl_residency_get(ocl_residency_t *r, uint32_t i)
{
	uint32_t j;

	if (r->up[i])
		return 0;
	if (!r->all)
		for (j = 0; j < r->n; j++)
			residency_release(r, j);
	if (r->upload(r->cb, i) < 0)
		return -1;
	r->up[i] = 1;
	return 0;
}

int ocl_residency_init(ocl_residency_t *r, const ocl_ctx_t *ctx, uint32_t n,
		uint64_t (*bytes)(void *cb, uint32_t i), int (*upload)(void *cb, uint32_t i),
		void (*release)(void *cb, uint32_t i), void *cb, char *msg, size_t len)
{
	uint64_t total = 0;
	uint32_t i;

	for (i = 0; i < n; i++)
		total += bytes(cb, i);
	r->n = n;
	r->up = sp_calloc(n ? n : 1, 1);
	r->upload = upload;
	r->release = release;
	r->cb = cb;
	r->all = total <= ocl_mem_budget(ctx, 0.6);
	for (i = 0; i < n && r->all; i++)
		if (ocl_residency_get(r, i) < 0)
			r->all = 0;
	if (r->all)
		return 0;
	/* one at a time: each part must fit on its own */
	for (i = 0; i < n; i++)
		residency_release(r, i);
	for (i = 0; i < n; i++) {
		if (ocl_residency_get(r, i) < 0) {
			snprintf(msg, len, "index partition %u does not fit the OpenCL device "
					"(rebuild the index with a smaller seqidx -p)", i);
			return -1;
		}
		residency_release(r, i);
	}
	return 0;
}

void ocl_residency_free(ocl_residency_t *r)
{
	uint32_t i;

	for (i = 0; r->up && i < r->n; i++)
		residency_release(r, i);
	free(r->up);
	r->up = NULL;
}

int ocl_upload_arrays(ocl_ctx_t *ctx, cl_mem *b, int n, const size_t *sz,
		const void *const *src, size_t empty)
{
	int k;

	for (k = 0; k < n; k++)
		b[k] = NULL;
	for (k = 0; k < n; k++) {
		cl_int err;

		if (!sz[k] && !empty)
			continue;
		b[k] = ocl_buffer_try(ctx, sz[k] && !src[k] ? CL_MEM_READ_WRITE : CL_MEM_READ_ONLY,
				sz[k] ? sz[k] : empty, &err);
		if (!b[k] || (sz[k] && src[k] && ocl_write_try(ctx, b[k], 1, 0, sz[k], src[k])
					!= CL_SUCCESS))   /* as a buffer not had */
			break;
	}
	if (k == n)
		return 0;
	for (k = 0; k < n; k++) {
		ocl_release(b[k]);
		b[k] = NULL;
	}
	return -1;
}

uint64_t ocl_arrays_bytes(const size_t *sz, int n)
{
	uint64_t t = 0;
	int k;

	for (k = 0; k < n; k++)
		t += sz[k];
	return t;
}

/* --- wrapped calls ------------------------------------------------------ */

cl_kernel ocl_kernel_try(cl_program prog, const char *name, cl_int *err)
{
	cl_int e = CL_INVALID_PROGRAM;
	cl_kernel k = prog ? clCreateKernel(prog, name, &e) : NULL;

	if (k && e != CL_SUCCESS) {
		clReleaseKernel(k);
		k = NULL;
	}
	if (!k && e == CL_SUCCESS)
		e = CL_INVALID_KERNEL;
	*err = e;
	return k;
}

cl_kernel ocl_kernel(cl_program prog, const char *name)
{
	cl_int err;
	cl_kernel k = ocl_kernel_try(prog, name, &err);

	if (!k)
		sp_die("clCreateKernel failed for '%s': %s (%d)", name, ocl_strerror(err), (int)err);
	return k;
}

cl_int ocl_args_try(cl_kernel k, cl_uint n, ...)
{
	cl_int err = CL_SUCCESS;
	va_list ap;
	cl_uint i;

	va_start(ap, n);
	for (i = 0; i < n; i++) {
		size_t size = va_arg(ap, size_t);
		const void *value = va_arg(ap, const void *);

		if (err == CL_SUCCESS)
			err = clSetKernelArg(k, i, size, value);
	}
	va_end(ap);
	return err;
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

void *ocl_pinned_try(ocl_ctx_t *ctx, cl_command_queue q, cl_mem_flags flags, size_t size,
		cl_mem *m, cl_int *err)
{
	cl_int e = CL_SUCCESS, dummy;
	void *p = NULL;

	if (!err)
		err = &dummy;
	*m = NULL;
	if (size == 0 || (ctx->fail_above && (uint64_t)size > ctx->fail_above)) {
		*err = size ? CL_MEM_OBJECT_ALLOCATION_FAILURE : CL_INVALID_BUFFER_SIZE;
		return NULL;
	}
	*m = clCreateBuffer(ctx->context, flags | CL_MEM_ALLOC_HOST_PTR, size, NULL, &e);
	if (*m && e == CL_SUCCESS)
		p = clEnqueueMapBuffer(q ? q : ctx->queue, *m, CL_TRUE, flags & CL_MEM_READ_ONLY
				? CL_MAP_WRITE : CL_MAP_READ | CL_MAP_WRITE, 0, size, 0, NULL, NULL, &e);
	if (!p || e != CL_SUCCESS) {
		ocl_release(*m);
		*m = NULL;
		*err = e != CL_SUCCESS ? e : CL_MEM_OBJECT_ALLOCATION_FAILURE;
		return NULL;
	}
	*err = CL_SUCCESS;
	return p;
}

void ocl_pinned_release(ocl_ctx_t *ctx, cl_command_queue q, cl_mem m, void *p)
{
	if (!m)
		return;
	if (p) {
		clEnqueueUnmapMemObject(q ? q : ctx->queue, m, p, 0, NULL, NULL);
		clFinish(q ? q : ctx->queue);
	}
	ocl_release(m);
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

cl_int ocl_write_try(ocl_ctx_t *ctx, cl_mem buf, int blocking, size_t off, size_t n,
		const void *src)
{
	return n ? clEnqueueWriteBuffer(ctx->queue, buf, blocking ? CL_TRUE : CL_FALSE, off, n,
			src, 0, NULL, NULL) : CL_SUCCESS;
}

void ocl_write(ocl_ctx_t *ctx, cl_mem buf, int blocking, size_t off, size_t n, const void *src)
{
	ocl_check(ocl_write_try(ctx, buf, blocking, off, n, src), "clEnqueueWriteBuffer");
}

cl_int ocl_read_try(ocl_ctx_t *ctx, cl_mem buf, int blocking, size_t off, size_t n, void *dst)
{
	return n ? clEnqueueReadBuffer(ctx->queue, buf, blocking ? CL_TRUE : CL_FALSE, off, n,
			dst, 0, NULL, NULL) : CL_SUCCESS;
}

void ocl_read(ocl_ctx_t *ctx, cl_mem buf, int blocking, size_t off, size_t n, void *dst)
{
	ocl_check(ocl_read_try(ctx, buf, blocking, off, n, dst), "clEnqueueReadBuffer");
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

cl_command_queue ocl_slot_queue(ocl_ctx_t *ctx, cl_command_queue first, int prof, cl_int *err)
{
	cl_command_queue q;

	*err = CL_SUCCESS;
	if (first && ctx->one_queue) {
		*err = clRetainCommandQueue(first);
		return *err == CL_SUCCESS ? first : NULL;
	}
	q = clCreateCommandQueue(ctx->context, ctx->device, prof ? CL_QUEUE_PROFILING_ENABLE : 0, err);
	if (q && *err != CL_SUCCESS) {
		clReleaseCommandQueue(q);
		q = NULL;
	}
	if (!q && *err == CL_SUCCESS)
		*err = CL_OUT_OF_RESOURCES;
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

