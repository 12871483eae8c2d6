/*
 * inc_scan.h - a work-group's inclusive prefix sum in local memory, for
 * the kernels (kernels/mem.cl, kernels/align.cl; OpenCL only: the CPU
 * path has no work-groups).  Hillis-Steele: in rounds o = 1, 2, 4 .. below
 * the group's size, each lane adds the value of the lane o before it.
 * The functions hold barriers: every lane of the group must call them,
 * the same number of times (no lane may have returned early); the local
 * memory they are given is free again when they return.
 */
#ifndef SP_INC_SCAN_H
#define SP_INC_SCAN_H

/* The lane's inclusive sum of X over the group (SC: LSIZE u32) to *INCL; the group's total returned. */
inline uint sp_group_scan(__local uint *sc, uint x, uint *incl)
{
	uint lid = (uint)get_local_id(0), gs = (uint)get_local_size(0), o, v, t;

	sc[lid] = x;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (o = 1u; o < gs; o <<= 1) {
		v = lid >= o ? sc[lid - o] : 0u;
		barrier(CLK_LOCAL_MEM_FENCE);
		sc[lid] += v;
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	*incl = sc[lid];
	t = sc[gs - 1u];
	barrier(CLK_LOCAL_MEM_FENCE);
	return t;
}

/*
 * sp_group_scan of X and of a u64 Y at once, in the same rounds (SC: LSIZE
 * u32, SY: LSIZE u64): X's inclusive sum to *INCL, Y's total to *TOT_Y,
 * X's total returned.
 */
inline uint sp_group_scan2(__local uint *sc, __local ulong *sy, uint x, ulong y, uint *incl,
		ulong *tot_y)
{
	uint lid = (uint)get_local_id(0), gs = (uint)get_local_size(0), o, v, t;
	ulong vy;

	sc[lid] = x;
	sy[lid] = y;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (o = 1u; o < gs; o <<= 1) {
		v = lid >= o ? sc[lid - o] : 0u;
		vy = lid >= o ? sy[lid - o] : 0UL;
		barrier(CLK_LOCAL_MEM_FENCE);
		sc[lid] += v;
		sy[lid] += vy;
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	*incl = sc[lid];
	t = sc[gs - 1u];
	*tot_y = sy[gs - 1u];
	barrier(CLK_LOCAL_MEM_FENCE);
	return t;
}

#endif
