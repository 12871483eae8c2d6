/*
 * ocl.h - the OpenCL layer: device choice, wrapped OpenCL calls, kernel
 * programs built from the sources embedded at build time (with an on-disk
 * binary cache), and memory limits for batching.  Files: ocl.c (devices,
 * contexts, wrapped calls), ocl_cache.c (programs and their cache),
 * ocl_pack.c (the pack kernels), ocl_ahead.c (a device opened on a thread
 * of its own while the inputs are read).
 *
 * Batching: a tool sizes the work it puts on the device at once so that all
 * the buffers of one batch stay within a fraction of the device's global
 * memory (ocl_mem_budget) and each buffer within its largest allocation
 * (ctx->max_alloc; ocl_batch_bytes gives the smaller of both).  Drivers
 * allocate lazily and may still refuse: the *_try calls return the CL error
 * instead of exiting, and the caller halves its batch and tries again.
 *
 * A tool does:
 *
 *     ocl_ctx_t *ocl = ocl_open_or_die(opt_device, verbose ? OCL_VERBOSE : 0);
 *     if (!ocl) ...native C path...
 *     cl_program p = ocl_program(ocl, "pack", "-DFOO=1");
 *     cl_kernel k = ocl_kernel(p, "pack2");
 *     ...
 *     ocl_close(ocl);
 *
 * Device specs (-d option, else $SEEDPIPE_DEVICE, else "auto"):
 *     auto   a GPU if there is one, else the native C code (no OpenCL)
 *     gpu    the first GPU of any platform (absent: exit status 3)
 *     cpu    the first OpenCL CPU device, e.g. PoCL (absent: exit status 3)
 *     none   the native C code, OpenCL is not even loaded
 *     P:D    device D of platform P, numbered as in ocl_list_devices()
 *
 * Errors: every OpenCL call goes through this module.  The plain wrappers
 * print "TOOL: clXxx failed: CL_SYMBOLIC_NAME (code)" and exit 1 (a failed
 * build also prints the build log): they are for the main thread.  The
 * *_try forms return the CL error instead, so that a caller can split a
 * batch that does not fit, and so that code on a worker thread (an
 * sp_pipeline step, see util.h's error policy) can return it: there it uses
 * ocl_program_try, ocl_kernel_try, ocl_args_try, ocl_buffer_try,
 * ocl_write_try / ocl_read_try, ocl_run_try / ocl_run_q, ocl_finish_try,
 * ocl_pack2 / ocl_revcomp, or the clXxx call itself with ocl_strerror().
 *
 * Environment: SEEDPIPE_DEVICE (default spec), SEEDPIPE_NO_CACHE=1 (no
 * program cache), XDG_CACHE_HOME (cache in $XDG_CACHE_HOME/seedpipe, else
 * ~/.cache/seedpipe), SEEDPIPE_DEBUG=1 (notes on stderr: device chosen,
 * cache hits/misses/problems), SEEDPIPE_DEVICE_MEM=SIZE (pretend the device
 * has at most SIZE bytes, suffix K/M/G: forces small batches, for tests),
 * SEEDPIPE_DEBUG_ALLOC_LIMIT=SIZE (buffers above SIZE fail as if the device
 * had run out of memory: tests the batch splitting).
 *
 * While a program is built, file descriptor 2 points to /dev/null (drivers
 * such as PoCL print compiler chatter there; the build log keeps it), unless
 * SEEDPIPE_DEBUG is set: build programs before starting threads that print.
 *
 * Not thread-safe: one ocl_ctx_t per thread, or lock around it.
 */
#ifndef SP_OCL_H
#define SP_OCL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

/* ocl_open() flags */
#define OCL_PROFILE 1u   /* the queue records event profiling information */
#define OCL_VERBOSE 2u   /* say on stderr which device (or native code) is used */

/*
 * ocl_open() results; the values are the exit statuses a tool should use
 * (SP_EXIT_* in util.h).
 */
#define OCL_OPEN_OK 0       /* *ctx is the device, or NULL for the native code */
#define OCL_OPEN_FAIL 1     /* OpenCL failed while creating the context or queue */
#define OCL_OPEN_BADSPEC 2  /* the spec is malformed (a usage error) */
#define OCL_OPEN_NODEV 3    /* the explicitly requested device does not exist */

/* Parsed device spec. */
enum ocl_spec_kind { OCL_SPEC_AUTO, OCL_SPEC_NONE, OCL_SPEC_GPU, OCL_SPEC_CPU, OCL_SPEC_INDEX };
typedef struct {
	enum ocl_spec_kind kind;
	unsigned plat, dev;   /* OCL_SPEC_INDEX only */
} ocl_spec_t;

typedef struct ocl_prog ocl_prog_t; /* private: programs built so far */

/** An open device: context, default in-order queue and device facts. */
typedef struct {
	cl_platform_id platform;
	cl_device_id device;
	cl_context context;
	cl_command_queue queue;        /* in-order; profiling with OCL_PROFILE */
	unsigned plat_idx, dev_idx;    /* P:D as in ocl_list_devices() */
	cl_device_type type;
	char platform_name[128], platform_version[128];
	char name[128], vendor[128], device_version[128], driver_version[128];
	uint64_t global_mem;           /* CL_DEVICE_GLOBAL_MEM_SIZE (or SEEDPIPE_DEVICE_MEM) */
	uint64_t max_alloc;            /* CL_DEVICE_MAX_MEM_ALLOC_SIZE (capped likewise) */
	uint64_t local_mem;            /* CL_DEVICE_LOCAL_MEM_SIZE */
	uint64_t fail_above;           /* SEEDPIPE_DEBUG_ALLOC_LIMIT (tests), 0 = off */
	unsigned compute_units;        /* CL_DEVICE_MAX_COMPUTE_UNITS */
	size_t max_wg;                 /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
	unsigned flags;                /* OCL_* flags given to ocl_open */
	int debug;                     /* SEEDPIPE_DEBUG set */
	int one_queue;                 /* ocl_slot_queue shares one queue (see there) */
	/* counters, for -v and the tests */
	unsigned n_cache_hits, n_cache_writes, n_builds;
	ocl_prog_t *progs;             /* private */
} ocl_ctx_t;

/* --- errors ------------------------------------------------------------- */

/** Symbolic name of an OpenCL error code ("CL_INVALID_VALUE"), "CL_UNKNOWN_ERROR" if unknown. */
const char *ocl_strerror(cl_int err);

/** If ERR is not CL_SUCCESS: "TOOL: CALL failed: NAME (ERR)" and exit 1. */
void ocl_check(cl_int err, const char *call);

/* --- devices ------------------------------------------------------------ */

/**
 * Parse a device spec (see the top of this file) into *S.  Returns 0, or -1
 * when SPEC is not one of auto, gpu, cpu, none, P:D.
 */
int ocl_parse_spec(const char *spec, ocl_spec_t *s);

/**
 * Open the device chosen by SPEC (NULL: $SEEDPIPE_DEVICE, else "auto").
 * Returns OCL_OPEN_OK with *CTX the device, or *CTX = NULL when the native
 * C code is to be used ("none", or "auto" with no GPU).  Otherwise returns
 * OCL_OPEN_BADSPEC, OCL_OPEN_NODEV or OCL_OPEN_FAIL with a message (no tool
 * prefix) in MSG, e.g. "no OpenCL GPU found (platforms: Portable Computing
 * Language)".  A missing OpenCL platform is "no device", never a crash.
 */
int ocl_open(const char *spec, unsigned flags, ocl_ctx_t **ctx, char *msg, size_t msg_len);

/**
 * ocl_open() for tools: on failure print "TOOL: message" and exit with the
 * matching status (2 bad spec, 3 no such device, 1 OpenCL failure).
 * Returns the device, or NULL for the native code.
 */
ocl_ctx_t *ocl_open_or_die(const char *spec, unsigned flags);

/**
 * Start opening SPEC (NULL or "": $SEEDPIPE_DEVICE, else "auto") with
 * FLAGS on a thread of its own, so that the main thread can read its
 * inputs meanwhile; a malformed spec (the usage error) and "none" are
 * handled at once, as ocl_open_or_die.  Once per process, on the main
 * thread; an exit before the join waits for the open to end.
 */
void ocl_open_ahead(const char *spec, unsigned flags);

/**
 * Wait for the device of ocl_open_ahead: returns it, or NULL for the
 * native code; on failure exits as ocl_open_or_die (main thread only).
 */
ocl_ctx_t *ocl_open_ahead_join_or_die(void);

/**
 * The same without the exit, for callers that fall back to the native code:
 * waits, sets *CTX (NULL: the native code, or a failure) and returns
 * ocl_open's status (OCL_OPEN_OK, else its message in MSG); *SECS (if not
 * NULL) gets the seconds the open took.  Again after a join: the same
 * device, OCL_OPEN_OK.
 */
int ocl_open_ahead_join(ocl_ctx_t **ctx, char *msg, size_t msg_size, double *secs);

/**
 * Wait until the open of ocl_open_ahead is over, whatever came of it
 * (returns at once when there is none): an exit while the driver starts up
 * on its thread could tear it down under that thread, so code that exits
 * on an input error before the join calls this first.
 */
void ocl_open_ahead_wait(void);

/** Release every program, the queue and the context, then free CTX (NULL is fine). */
void ocl_close(ocl_ctx_t *ctx);

/**
 * Print one line per OpenCL device:
 * "P:D\tTYPE\tPLATFORM\tDEVICE\tGLOBAL_MEM\tMAX_ALLOC\tCOMPUTE_UNITS\tDRIVER"
 * (TYPE gpu/cpu/accelerator/other, memory sizes in bytes), or the line
 * "no OpenCL platform" when there is none.
 */
void ocl_list_devices(FILE *out);

/** One line describing the device, "P:D NAME (PLATFORM, driver X, N MiB)", for -v. */
void ocl_describe(const ocl_ctx_t *ctx, char *buf, size_t len);

/**
 * Bytes one batch may keep on the device in all its buffers together:
 * FRACTION (0 < f <= 1; 0 means 0.5) of the global memory.  Each single
 * buffer must also stay within ctx->max_alloc; ocl_batch_bytes() gives the
 * smaller of both, for a batch held in one buffer.
 */
uint64_t ocl_mem_budget(const ocl_ctx_t *ctx, double fraction);

/** min(ctx->max_alloc, ocl_mem_budget(ctx, fraction)). */
uint64_t ocl_batch_bytes(const ocl_ctx_t *ctx, double fraction);

/*
 * Device residency of the N partitions of an index that the device uses
 * one at a time.  When all of them (BYTES(cb, i) each) fit within
 * ocl_mem_budget(ctx, 0.6) and every upload succeeds, they stay on the
 * device; otherwise ocl_residency_get uploads part i on demand after
 * releasing the others, and ocl_residency_init checks that each part fits
 * on its own.  UPLOAD puts part i on the device (0, or -1 when there is no
 * room, with nothing of it left there: ocl_upload_arrays); RELEASE frees
 * it.  The calls never exit (they may run on a pipeline thread).
 */
typedef struct {
	uint32_t n;
	int all;                 /* every part stays on the device */
	unsigned char *up;       /* per part: on the device */
	int (*upload)(void *cb, uint32_t i);
	void (*release)(void *cb, uint32_t i);
	void *cb;
} ocl_residency_t;

/**
 * Set R up for N parts on CTX and upload them all if they fit together.
 * 0, or -1 with a message in MSG (LEN bytes) naming the first partition
 * that does not fit alone (then nothing is on the device;
 * ocl_residency_free R all the same).
 */
int ocl_residency_init(ocl_residency_t *r, const ocl_ctx_t *ctx, uint32_t n,
		uint64_t (*bytes)(void *cb, uint32_t i), int (*upload)(void *cb, uint32_t i),
		void (*release)(void *cb, uint32_t i), void *cb, char *msg, size_t len);

/** Have part I on the device (releasing the others unless all fit): 0, or -1. */
int ocl_residency_get(ocl_residency_t *r, uint32_t i);

/** Release every part on the device and free R's arrays. */
void ocl_residency_free(ocl_residency_t *r);

/**
 * Upload the N arrays of a part as the buffers B[0..N-1]: SZ[k] bytes from
 * SRC[k] (read-only), or, where SRC[k] is null, SZ[k] bytes that kernels
 * fill (read-write); an empty array gets a buffer of EMPTY bytes (for a
 * kernel argument), or none (null) where EMPTY is 0.  0, or -1 when the
 * device has no room, with every B[k] released and null.  Never exits.
 */
int ocl_upload_arrays(ocl_ctx_t *ctx, cl_mem *b, int n, const size_t *sz,
		const void *const *src, size_t empty);

/** The bytes of N arrays of sizes SZ (ocl_residency's BYTES of a part). */
uint64_t ocl_arrays_bytes(const size_t *sz, int n);

/* --- programs ----------------------------------------------------------- */

/**
 * The program built from the embedded kernel source NAME (kernels/NAME.cl)
 * with build OPTIONS (NULL = ""), for CTX's device.  Built once per context;
 * the binary is cached on disk (see the top of this file).  A build failure
 * prints the build log and exits 1; an unknown NAME is a bug (exit 1).
 * The program belongs to CTX (released by ocl_close).
 */
cl_program ocl_program(ocl_ctx_t *ctx, const char *name, const char *options);

/**
 * The program of ocl_program_src() without exiting: NULL on a build failure
 * (or a NULL SRC) after sp_fail("cannot build OpenCL program 'LABEL' for
 * 'DEVICE': clBuildProgram failed: CL_NAME (code)"), the CL error in *ERR
 * and the build log in *LOG (caller frees) when they are not NULL.  For
 * worker threads; ocl_source() gives the embedded sources.
 */
cl_program ocl_program_try(ocl_ctx_t *ctx, const char *label, const char *src,
		const char *options, cl_int *err, char **log);

/**
 * ocl_program() for a source that is not embedded (generated at run time):
 * LABEL names it in messages and, with OPTIONS, identifies it in CTX's list
 * of programs built (so one LABEL must always mean the same SRC).
 */
cl_program ocl_program_src(ocl_ctx_t *ctx, const char *label, const char *src,
		const char *options);

/**
 * Build SRC with OPTIONS for CTX's device through the program cache (LABEL
 * names it in messages).  Returns the program (owned by the caller), or NULL
 * on a build failure with the CL error in *ERR and, when LOG is not NULL,
 * the build log in *LOG (caller frees).
 */
cl_program ocl_build(ocl_ctx_t *ctx, const char *label, const char *src,
		const char *options, cl_int *err, char **log);

/**
 * The cache directory, $XDG_CACHE_HOME/seedpipe (else ~/.cache/seedpipe),
 * malloc'ed, created when CREATE is set; NULL when there is none (the
 * program cache and the -d auto calibrations both live there).
 */
char *ocl_cache_dir(int create);

/**
 * The name and driver version of the device SPEC names (auto: the first
 * GPU, or what $SEEDPIPE_AUTO_DEVICE names, for tests) without opening it:
 * 0 with NAME and DRIVER set, -1 when there is no such device (or no
 * OpenCL, or SPEC is none or malformed).
 */
int ocl_peek(const char *spec, char *name, size_t name_len, char *driver, size_t driver_len);

/** The embedded source NAME, or NULL. */
const char *ocl_source(const char *name);

/**
 * The cache file for SRC + OPTIONS on CTX's device (malloc'ed path), or NULL
 * when the cache is disabled or there is no cache directory.
 */
char *ocl_cache_path(const ocl_ctx_t *ctx, const char *src, const char *options);

/*
 * --- wrapped calls --------------------------------------------------------
 * The plain forms exit 1 with a message on error: for the main thread only.
 * Code that can run on a worker thread (a pipeline step) uses the *_try
 * forms, which return the CL error with no message (the caller makes one,
 * sp_fail), so that no thread exits while another is inside the platform.
 */

/** clCreateKernel; NULL with the CL error in *ERR on failure. */
cl_kernel ocl_kernel_try(cl_program prog, const char *name, cl_int *err);

/** ocl_kernel_try that exits 1 with a message on failure. */
cl_kernel ocl_kernel(cl_program prog, const char *name);

/** clSetKernelArg. */
void ocl_arg(cl_kernel k, cl_uint i, size_t size, const void *value);

/**
 * The arguments of K from 0 on: N pairs of (size_t size, const void *value)
 * after N.  Returns the first CL error, CL_SUCCESS when all are set.
 */
cl_int ocl_args_try(cl_kernel k, cl_uint n, ...);

/**
 * Create a buffer of SIZE bytes and make sure it is really backed by device
 * memory (drivers allocate lazily: one byte is written).  Returns NULL with
 * the CL error in *ERR (may be NULL) on failure, with no message, so that
 * the caller can split its batch.  SIZE above ctx->max_alloc fails with
 * CL_INVALID_BUFFER_SIZE.
 */
cl_mem ocl_buffer_try(ocl_ctx_t *ctx, cl_mem_flags flags, size_t size, cl_int *err);

/**
 * A page-locked host buffer of SIZE bytes (CL_MEM_ALLOC_HOST_PTR with FLAGS,
 * CL_MEM_READ_ONLY or CL_MEM_READ_WRITE) mapped for good on queue Q (NULL:
 * the default queue), for transfers at the bus's speed: the mapping, with
 * the buffer in *M; NULL with *M NULL and the CL error in *ERR (may be
 * NULL) when the device gives none.  SIZE above ctx->fail_above
 * (SEEDPIPE_DEBUG_ALLOC_LIMIT) fails too, as ocl_buffer_try does (tests of
 * the pageable fallbacks).  Unmap and release with ocl_pinned_release.
 */
void *ocl_pinned_try(ocl_ctx_t *ctx, cl_command_queue q, cl_mem_flags flags, size_t size,
		cl_mem *m, cl_int *err);

/** Unmap P from M on queue Q (NULL: the default), wait for it, release M (NULL is fine). */
void ocl_pinned_release(ocl_ctx_t *ctx, cl_command_queue q, cl_mem m, void *p);

/** ocl_buffer_try that exits 1 with a message on failure. */
cl_mem ocl_buffer(ocl_ctx_t *ctx, cl_mem_flags flags, size_t size);

/** clReleaseMemObject (NULL is fine). */
void ocl_release(cl_mem m);

/** clEnqueueWriteBuffer on the default queue (blocking or not); N = 0 does nothing. */
cl_int ocl_write_try(ocl_ctx_t *ctx, cl_mem buf, int blocking, size_t off, size_t n,
		const void *src);

/** ocl_write_try that exits 1 with a message on failure. */
void ocl_write(ocl_ctx_t *ctx, cl_mem buf, int blocking, size_t off, size_t n, const void *src);

/** clEnqueueReadBuffer on the default queue (blocking or not); N = 0 does nothing. */
cl_int ocl_read_try(ocl_ctx_t *ctx, cl_mem buf, int blocking, size_t off, size_t n, void *dst);

/** ocl_read_try that exits 1 with a message on failure. */
void ocl_read(ocl_ctx_t *ctx, cl_mem buf, int blocking, size_t off, size_t n, void *dst);

/**
 * Run K over N work items (one dimension) on the default queue.  The local
 * size is chosen from the kernel's limits and the global size rounded up to
 * it, so kernels must ignore get_global_id(0) >= their item count.  N = 0
 * does nothing.  Returns the CL error (no message), CL_SUCCESS if queued.
 */
cl_int ocl_run_try(ocl_ctx_t *ctx, cl_kernel k, size_t n);

/**
 * ocl_run_try on queue Q (NULL: the default queue), with the command's event
 * in *EV when EV is not NULL (the caller releases it).
 */
cl_int ocl_run_q(ocl_ctx_t *ctx, cl_command_queue q, cl_kernel k, size_t n, cl_event *ev);

/** ocl_run_try that exits 1 with a message on failure. */
void ocl_run(ocl_ctx_t *ctx, cl_kernel k, size_t n);

/**
 * A further in-order queue on CTX's device (profiling as the default queue),
 * e.g. to overlap transfers with kernels.  The caller releases it with
 * clReleaseCommandQueue().  Exit 1 on error.
 */
cl_command_queue ocl_queue_create(ocl_ctx_t *ctx);

/**
 * The queue of one slot of a set that runs the same kernels at once (the
 * alignment's device slots, galign's batches): FIRST NULL, a new in-order
 * queue (profiling with PROF); else, where CTX->one_queue, FIRST retained,
 * so that every slot's commands run in order on one queue.  NULL with the
 * error in *ERR on failure.  The caller releases it with clReleaseCommandQueue.
 *
 * one_queue is set for PoCL's CPU drivers before PoCL 6: they release a
 * kernel's work-group library (pocl_release_dlhandle_cache) by the kernel's
 * hash and local size, not by the cache entry the command took, and a run
 * wider than any before gets an entry of its own; so the same kernel in
 * flight on two queues with global sizes that differ drops the wrong
 * entry's count, and a later release aborts the process ("Assertion
 * `found->ref_count > 0' failed", exit 134; fixed upstream by PoCL commit
 * c9ac4c0c3).  On one in-order queue a command is released before the next
 * one takes an entry.  SEEDPIPE_OCL_ONE_QUEUE=1 sets it, =0 clears it (tests).
 */
cl_command_queue ocl_slot_queue(ocl_ctx_t *ctx, cl_command_queue first, int prof, cl_int *err);

/**
 * Seconds between the start and the end of the command of EV (which must
 * have completed, on a queue made with OCL_PROFILE); -1 when not available.
 */
double ocl_event_seconds(cl_event ev);

/** clFinish on the default queue; returns the CL error (no message). */
cl_int ocl_finish_try(ocl_ctx_t *ctx);

/** clFinish on the default queue, exit 1 with a message on failure. */
void ocl_finish(ocl_ctx_t *ctx);

/* --- the pack kernels (kernels/pack.cl) -------------------------------- */

/**
 * seqio_pack2 on the device: pack N ASCII bases of SEQ into DST (ceil(N/4)
 * bytes, non-ACGT as 0).  Works in batches sized by ocl_batch_bytes() and
 * halves a batch the device cannot hold.  Returns CL_SUCCESS or the CL error
 * that made even a small batch fail.
 */
cl_int ocl_pack2(ocl_ctx_t *ctx, uint8_t *dst, const char *seq, size_t n);

/**
 * seqio_revcomp on the device: reverse complement of N ASCII bases of SRC
 * into DST (not in place).  Batched like ocl_pack2; same return value.
 */
cl_int ocl_revcomp(ocl_ctx_t *ctx, char *dst, const char *src, size_t n);

#endif
