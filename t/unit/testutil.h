/*
 * testutil.h - what the C unit tests share: the random generator
 * (Marsaglia's xorshift64, shifts 13, 7, 17).  Each test keeps its own
 * state and seed, so its inputs do not depend on another test's draws.
 */
#ifndef SP_TESTUTIL_H
#define SP_TESTUTIL_H

#include <stdint.h>

/* The next number of the xorshift64 sequence in *S (never 0 from a state that is not 0). */
static inline uint64_t tu_xorshift64(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

#endif
