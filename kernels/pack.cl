/*
 * pack.cl - the trivial kernels: 2-bit packing and ASCII reverse complement,
 * the device twins of seqio_pack2 and seqio_revcomp (same inc_pack.h code).
 *
 * pack2: one work item per output byte; byte j holds bases 4j..4j+3, the
 * first in the low bits (layout in inc_pack.h).  Bases past N are packed as
 * 0 (A), as seqio_pack2 does.
 *
 *     seq:  A C G T | T G ...        dst[0] = 11 10 01 00 = 0xE4
 *           0 1 2 3   4 5
 *
 * revcomp: one work item per base, dst[i] = complement(src[n-1-i]).
 */
#include "inc_pack.h"

__kernel void pack2(__global uchar *dst, __global const uchar *seq, ulong n)
{
	ulong j = get_global_id(0);
	ulong i = j * 4;
	uchar c[4];
	int k;

	if (i >= n)
		return;
	for (k = 0; k < 4; k++)
		c[k] = i + k < n ? seq[i + k] : (uchar)'A';
	dst[j] = sp_pack4(c[0], c[1], c[2], c[3]);
}

__kernel void revcomp(__global uchar *dst, __global const uchar *src, ulong n)
{
	ulong i = get_global_id(0);

	if (i >= n)
		return;
	dst[i] = sp_comp_ascii(src[n - 1 - i]);
}
