/*
 * ocl_embed.h - the table of OpenCL kernel sources embedded at build time
 * (build-aux/embed.sh turns kernels/NAME.cl, with its inc_*.h headers
 * inlined, into one C string each).
 */
#ifndef SP_OCL_EMBED_H
#define SP_OCL_EMBED_H

/** One embedded kernel source: NAME is the .cl file's base name. */
typedef struct {
	const char *name;
	const char *source;
} sp_kernel_src_t;

/** The table, terminated by { 0, 0 }; sp_n_kernel_srcs entries before it. */
extern const sp_kernel_src_t sp_kernel_srcs[];
extern const int sp_n_kernel_srcs;

#endif
