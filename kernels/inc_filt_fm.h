/*
 * inc_filt_fm.h - seedfilt's fm method: backward search of a pattern window
 * sq on the FM-index of a partition (common/fm.h) with backtracking over at
 * most e substitutions in q, shared by the CPU code (common/filt_match_fm.c)
 * and the OpenCL kernels (kernels/filt.cl).
 *
 * The occurrence blocks occ32 are read as inc_fm.h says (sp_fm_occ).
 *
 * The window is W = span + l bases: the seed (positions whose bit is set in
 * SHAPE take their base from the seed code, in order; the others match any
 * base) and q (base i of q in bits 2i..2i+1).  The search goes from the last
 * base to the first, depth first with an explicit stack (at most 3W + 1
 * nodes); each leaf is a BWT row range [lo, hi) of windows within Hamming
 * distance e of q whose seed matches; with ANY (-a) the '#' positions of the
 * seed may take any base too, each mismatch counting as an error (windows
 * within Hamming distance e of sq over the '#' and q positions).  Ranges are reported in a fixed order
 * (A before C before G before T at every level).
 */
#ifndef SP_INC_FILT_FM_H
#define SP_INC_FILT_FM_H

#include "inc_fm.h"

#define FFM_STACK (3 * 64 + 4)

#ifdef __OPENCL_VERSION__
#define FFM_POPC32(x) ((uint)popcount(x))
#else
#define FFM_POPC32(x) ((uint)__builtin_popcount(x))
#endif

/* One node of the search: the window suffix from J on is matched with ERR errors. */
typedef struct {
	ulong lo, hi;
	uint j, err;
} ffm_node_t;

/*
 * Search the window of seed CODE and neighborhood Q (errors in the seed
 * too when ANY); returns the number of
 * row ranges and, when OUT is not null, stores range m as OUT[4m..4m+3] =
 * lo (low, high 32 bits), hi (low, high).  C0..C3 are the FM C[] values, N
 * the text length; STACK holds FFM_STACK nodes.
 */
SP_FN uint ffm_search(SP_GLOBAL const uint *occ32, ulong primary, ulong n,
		ulong C0, ulong C1, ulong C2, ulong C3, uint span, uint shape, uint l,
		uint code, ulong q, uint e, uint any, ffm_node_t *stack, SP_GLOBAL uint *out)
{
	uint sp = 1, m = 0;

	stack[0].lo = 0;
	stack[0].hi = n + 1UL;
	stack[0].j = span + l;
	stack[0].err = 0;
	while (sp > 0u) {
		ffm_node_t nd = stack[--sp];
		uint i, a, a0, a1, b;

		if (nd.lo >= nd.hi)
			continue;
		if (nd.j == 0u) {
			if (out) {
				out[4u * m] = (uint)nd.lo;
				out[4u * m + 1u] = (uint)(nd.lo >> 32);
				out[4u * m + 2u] = (uint)nd.hi;
				out[4u * m + 3u] = (uint)(nd.hi >> 32);
			}
			m++;
			continue;
		}
		i = nd.j - 1u;
		if (i >= span) {
			b = (uint)(q >> (2u * (i - span))) & 3u;
			a0 = 0u;
			a1 = 3u;
		} else if ((shape >> i) & 1u) {
			b = (code >> (2u * FFM_POPC32(shape & ((1u << i) - 1u)))) & 3u;
			a0 = any ? 0u : b;
			a1 = any ? 3u : b;
		} else {
			b = 4u;
			a0 = 0u;
			a1 = 3u;
		}
		/* push T first so that A is searched first */
		for (a = a1 + 1u; a-- > a0;) {
			uint err = nd.err + (uint)(b < 4u && a != b);
			ulong c = a == 0u ? C0 : a == 1u ? C1 : a == 2u ? C2 : C3;

			if (err > e)
				continue;
			stack[sp].lo = c + sp_fm_occ(occ32, primary, a, nd.lo);
			stack[sp].hi = c + sp_fm_occ(occ32, primary, a, nd.hi);
			stack[sp].j = i;
			stack[sp].err = err;
			sp++;
		}
	}
	return m;
}

#endif
