/*
 * sp_bits.h - bit manipulation helpers of the base layer.
 */
#ifndef SP_BITS_H
#define SP_BITS_H

#include <stdint.h>

/* The even bits of X (bits 0, 2, .., 62) as bits 0 .. 31. */
static inline uint64_t sp_even_bits(uint64_t x)
{
	x &= 0x5555555555555555ull;
	x = (x | x >> 1) & 0x3333333333333333ull;
	x = (x | x >> 2) & 0x0f0f0f0f0f0f0f0full;
	x = (x | x >> 4) & 0x00ff00ff00ff00ffull;
	x = (x | x >> 8) & 0x0000ffff0000ffffull;
	return (x | x >> 16) & 0xffffffffull;
}

#endif
