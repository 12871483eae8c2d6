/*
 * mem.cl - seedfilt -m mem, stage 1 on the device: the FM-MEMs of read
 * strands in one partition (kernels/inc_mem.h, the CPU's code).  One work
 * item per sampled window of a strand; item ITEM belongs to strand
 * ISTRAND[item], whose windows are items WPRE[strand] ... (window k at
 * read base k * s).  Each match found takes a slot of OUT (4 u32: strand,
 * read start, partition offset, length) from the counter CNT; when the
 * counter ends above CAP, the host grows OUT and runs the partition again
 * (the set of matches does not depend on the order of the slots, which the
 * host sorts away).
 */
#include "inc_common.h"

typedef struct {
	__global uint *out;
	volatile __global uint *cnt;
	uint cap, strand;
} mem_sink_t;

inline void mem_emit(mem_sink_t *s, uint i, ulong p, uint len)
{
	uint k = atomic_inc(s->cnt);

	if (k < s->cap) {
		s->out[4u * k] = s->strand;
		s->out[4u * k + 1u] = i;
		s->out[4u * k + 2u] = (uint)p;
		s->out[4u * k + 3u] = len;
	}
}

#define MEM_SINK_T mem_sink_t *
#define MEM_EMIT(s, i, p, len) mem_emit((s), (i), (p), (len))
#include "inc_mem.h"

__kernel void mem_find(uint n_items, __global const uint *woff, __global const uint *slen, __global const uint *words,
		__global const uint *occ, __global const ulong *mark, __global const uint *sa,
		__global const uint *jump, __global const uint *text, __global const uint *shal,
		ulong n, ulong primary, ulong c0, ulong c1, ulong c2, ulong c3, ulong ylo, ulong yhi,
		uint nshal, uint k, uint tsh,
		uint w, uint s, uint lmin, __global uint *out, volatile __global uint *cnt, uint cap)
{
	uint it = (uint)get_global_id(0), nwin, len;
	mem_fm_t f;
	mem_sink_t sk;

	if (it >= n_items)
		return;
	len = slen[it] & 0x7fffffffu;
	if (len < lmin)
		return;
	f.occ = occ;
	f.mark = mark;
	f.sa = sa;
	f.jump = jump;
	f.text = text;
	f.shal = shal;
	f.ylo = ylo;
	f.yhi = yhi;
	f.nshal = nshal;
	f.n = n;
	f.primary = primary;
	f.c0 = c0;
	f.c1 = c1;
	f.c2 = c2;
	f.c3 = c3;
	f.k = k;
	f.tsh = tsh;
	sk.out = out;
	sk.cnt = cnt;
	sk.cap = cap;
	sk.strand = it;
	mem_strand(&f, words + woff[it], len, w, s, lmin, slen[it] >> 31, &sk, &nwin);
}
