/*
 * inc_msd.h - the radix digits and block geometry of strsort's device sort,
 * shared by kernels/msd.cl and common/strsort_ocl.c (C/OpenCL subset of
 * kernels/inc_common.h).
 *
 * The device sorts the 16-byte entries of msd.h as they are (the 8-byte key
 * prefix plus the string's index and length, never the strings): LSD radix
 * passes of SS_DEV_BITS bits over the 64-bit prefix, each pass stable, so the
 * result is ordered by prefix with equal prefixes in their input order.
 *
 *   entry (ulong2)     .x = prefix (key bytes [0, 8), big-endian)
 *                      .y = idx | (ulong)len << 32
 *
 *   digit of pass p:   (prefix >> (SS_DEV_BITS * p)) & (SS_DEV_RADIX - 1)
 *
 * Blocks: work-group b handles elements [b * SS_DEV_BLOCK, (b + 1) *
 * SS_DEV_BLOCK) in tiles of get_local_size(0) elements.  The histogram is
 * digit-major so that one exclusive scan over it gives every (digit, block)
 * its first output slot:
 *
 *   hist[d * nblocks + b] = count of digit d in block b
 *   after the scan: the output position of block b's first digit-d element
 */
#ifndef SP_INC_MSD_H
#define SP_INC_MSD_H

#include "inc_common.h"

#define SS_DEV_BITS 8
#define SS_DEV_RADIX (1 << SS_DEV_BITS)
#define SS_DEV_BLOCK 4096         /* elements per histogram block */
#define SS_DEV_SCAN 4096          /* histogram counters per scan segment */
#define SS_DEV_WG 256             /* the largest work-group the kernels handle */

/* The digit of prefix P in pass P (pass 0: the least significant bits). */
SP_FN uint ss_dev_digit(ulong pfx, uint pass)
{
	return (uint)(pfx >> (SS_DEV_BITS * pass)) & (SS_DEV_RADIX - 1);
}

#endif
