/*
 * ocl_cache.c - OpenCL programs: built from the sources embedded at build
 * time, through an on-disk binary cache, once per context.
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
#include "ocl_priv.h"
#include "sp_le.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#define OCL_CACHE_MAGIC "\x89SPK\r\n\x1a\n"
#define OCL_CACHE_VERSION 1u
#define OCL_CACHE_HDR 48
#define OCL_CACHE_MAX ((uint64_t)1 << 30) /* larger files are not ours */

static int cache_disabled(void)
{
	const char *s = getenv("SEEDPIPE_NO_CACHE");
	return s && *s && strcmp(s, "0") != 0;
}

/* The cache directory (malloc'ed), created if missing; NULL if none. */
static char *cache_dir(int create)
{
	return ocl_cache_dir(create);
}

char *ocl_cache_dir(int create)
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
	err = ocl_loaded(clBuildProgram(prog, 1, &ctx->device, options, NULL, NULL));
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

cl_program ocl_program_try(ocl_ctx_t *ctx, const char *label, const char *src,
		const char *options, cl_int *err, char **log)
{
	ocl_prog_t *p;
	cl_program prog;
	cl_int e;

	if (!options)
		options = "";
	if (log)
		*log = NULL;
	for (p = ctx->progs; p; p = p->next)
		if (!strcmp(p->name, label) && !strcmp(p->options, options))
			return p->prog;
	prog = src ? ocl_build(ctx, label, src, options, &e, log) : NULL;
	if (!src)
		e = CL_INVALID_VALUE;
	if (err)
		*err = prog ? CL_SUCCESS : e;
	if (!prog) {
		sp_fail("cannot build OpenCL program '%s' for '%s': clBuildProgram failed: %s (%d)",
				label, ctx->name, ocl_strerror(e), (int)e);
		return NULL;
	}
	p = sp_calloc(1, sizeof *p);
	p->name = sp_strdup(label);
	p->options = sp_strdup(options);
	p->prog = prog;
	p->next = ctx->progs;
	ctx->progs = p;
	return prog;
}

cl_program ocl_program_src(ocl_ctx_t *ctx, const char *label, const char *src,
		const char *options)
{
	char *log;
	cl_program prog = ocl_program_try(ctx, label, src, options, NULL, &log);

	if (!prog) {
		sp_msg("%s%s", sp_errmsg(), log && *log ? "; build log:" : "");
		if (log && *log)
			fprintf(stderr, "%s%s", log, log[strlen(log) - 1] == '\n' ? "" : "\n");
		free(log);
		exit(SP_EXIT_DATA);
	}
	return prog;
}

cl_program ocl_program(ocl_ctx_t *ctx, const char *name, const char *options)
{
	const char *src = ocl_source(name);

	if (!src)
		sp_die("no embedded OpenCL source '%s' (a bug)", name);
	return ocl_program_src(ctx, name, src, options);
}

