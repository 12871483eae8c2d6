/*
 * inc_pack.h - per-base and per-byte 2-bit packing, shared by the CPU path
 * (common/seqio.c) and the OpenCL kernels (kernels/pack.cl).
 *
 * Code: A=0 C=1 G=2 T=3, anything else 4 (packed as 0); complement is 3-x.
 * Packed layout: 4 bases per byte, the first base in the low bits:
 *
 *     bit   7  6  5  4  3  2  1  0
 *          [ c3  ][ c2  ][ c1  ][ c0  ]     c0 = code of the first base
 *
 * Written in the subset of C shared by OpenCL C and C99 (kernels/inc_common.h):
 * functions over values, no pointers, no tables.
 */
#ifndef SP_INC_PACK_H
#define SP_INC_PACK_H

#include "inc_common.h"

/*
 * 2-bit code of each byte as a table: A/a 0, C/c 1, G/g 2, T/t 3, anything
 * else 4 (the same as sp_nt4).  The one copy for C (seqio_nt4) and kernels.
 */
#ifdef __OPENCL_VERSION__
__constant uchar sp_nt4_codes[256] = {
#else
static const uchar sp_nt4_codes[256] = {
#endif
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 0, 4, 1, 4, 4, 4, 2, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 0, 4, 1, 4, 4, 4, 2, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
};

/* 2-bit code of an ASCII base: A/a->0 C/c->1 G/g->2 T/t->3, anything else 4. */
SP_FN uint sp_nt4(uchar c)
{
	switch (c) {
	case 'A': case 'a': return 0;
	case 'C': case 'c': return 1;
	case 'G': case 'g': return 2;
	case 'T': case 't': return 3;
	default: return 4;
	}
}

/* 2-bit code of an ASCII base with every non-ACGT as 0 (A). */
SP_FN uint sp_nt2(uchar c)
{
	uint x = sp_nt4(c);
	return x < 4 ? x : 0;
}

/* Pack 4 ASCII bases into one byte, c0 in bits 0-1, non-ACGT as 0. */
SP_FN uchar sp_pack4(uchar c0, uchar c1, uchar c2, uchar c3)
{
	return (uchar)(sp_nt2(c0) | sp_nt2(c1) << 2 | sp_nt2(c2) << 4 | sp_nt2(c3) << 6);
}

/* Complement of an ASCII base: A<->T C<->G (upper case), anything else 'N'. */
SP_FN uchar sp_comp_ascii(uchar c)
{
	switch (c) {
	case 'A': case 'a': return 'T';
	case 'C': case 'c': return 'G';
	case 'G': case 'g': return 'C';
	case 'T': case 't': return 'A';
	default: return 'N';
	}
}

/*
 * Reverse complement of the 4 bases packed in B: complement every 2-bit code
 * (x -> 3-x, i.e. x^3) and reverse the order of the four codes.
 */
SP_FN uchar sp_revcomp_byte(uchar b)
{
	uint x = (uint)b ^ 0xFFu;
	return (uchar)((x & 0x03u) << 6 | (x & 0x0Cu) << 2 | (x & 0x30u) >> 2 | (x & 0xC0u) >> 6);
}

#endif
