/*
 * inc_common.h - the C subset shared by OpenCL C and C99/C11.
 *
 * Code in the kernels/inc_ headers is compiled twice: into the OpenCL kernels and into
 * the native CPU path (the common C files include the same header), so both backends
 * run the same algorithm (inc_scan.h, work-group code, only into the kernels).  Write
 * functions over values (no pointers to device memory: OpenCL 1.2 needs address-space
 * qualifiers on pointers) and declare them with SP_FN.  Use uchar/ushort/uint/ulong and the SP_* macros.
 */
#ifndef SP_INC_COMMON_H
#define SP_INC_COMMON_H

#ifdef __OPENCL_VERSION__
#define SP_FN inline
#define SP_GLOBAL __global
#define SP_CONSTANT __constant
#define SP_PRIVATE __private     /* in casts: an unqualified one is __generic in OpenCL C 2.0+ */
#else
#include <stdint.h>
typedef uint8_t uchar;
typedef uint16_t ushort;
typedef uint32_t uint;
typedef uint64_t ulong;
#define SP_FN static inline
#define SP_GLOBAL
#define SP_CONSTANT const
#define SP_PRIVATE
#endif

#endif
