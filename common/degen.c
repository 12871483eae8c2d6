/*
 * degen.c - L_Pos tables and counts for the degenerate patterns of BS and
 * PH (Tran 2012 section 3.2.2).
 */
#include "degen.h"

uint64_t degen_n_lpos(uint32_t v, uint32_t e)
{
	uint64_t c = 1;
	uint32_t i;

	if (e > v)
		return 0;
	for (i = 0; i < e; i++)
		c = c * (v - i) / (i + 1);
	return c;
}

uint64_t degen_lpos(uint32_t v, uint32_t e, uint32_t *out)
{
	uint32_t p[DEGEN_MAX_E + 1], i;
	uint64_t n = 0;

	if (e > v)
		return 0;
	for (i = 0; i < e; i++)
		p[i] = i;
	for (;;) {
		uint32_t lp = 0;
		int k;

		for (i = 0; i < e; i++)
			lp |= p[i] << (5 * i);
		out[n++] = lp;
		/* next e-subset in lexicographic order */
		for (k = (int)e - 1; k >= 0 && p[k] == v - e + (uint32_t)k; k--)
			;
		if (k < 0)
			break;
		p[k]++;
		for (i = (uint32_t)k + 1; i < e; i++)
			p[i] = p[i - 1] + 1;
	}
	return n;
}

uint64_t degen_n_items(uint32_t v, uint32_t e)
{
	return degen_n_lpos(v, e) << (2 * e);
}

uint64_t degen_ball(uint32_t v, uint32_t e)
{
	uint64_t s = 0, p3 = 1;
	uint32_t m;

	for (m = 0; m <= e && m <= v; m++) {
		s += degen_n_lpos(v, m) * p3;
		p3 *= 3;
	}
	return s;
}
