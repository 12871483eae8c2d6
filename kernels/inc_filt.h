/*
 * inc_filt.h - the per-word lookups of seedfilt's bs and ph methods, over
 * the arrays of one partition of the index (common/idx.h), shared by the
 * CPU code (common/filt_match_ham.c, filt_match_any.c) and the OpenCL
 * kernels (kernels/filt.cl).
 *
 * Neighborhood keys are u32 when l <= 16 and u64 otherwise (IDX_KEY_BYTES):
 * IS32 says which of NB32 / NB64 holds them (the other may be a null
 * pointer); it is the same for every call of a run, so the choice is no
 * divergent branch.
 *
 *   reduced structure (bs):   red_start[code] .. red_start[code+1]  sorted keys
 *                             red_nbpos[j] .. red_nbpos[j+1]        positions of key j
 *   indexed blocks (ph):      blk_start[code] .. blk_start[code+1]  M = 3r slots,
 *                             slot = BDZ(key, bdz_seed(code, blk_seed[code]))
 *                             (inc_bdz.h), j = red_start[code] + rank of
 *                             slot (idx_blk_rank_at), red_nb[j] == key ?
 */
#ifndef SP_INC_FILT_H
#define SP_INC_FILT_H

#include "inc_bdz.h"
#include "inc_common.h"
#include "inc_idx.h"

/* Key J of a key array (u32 or u64, see above). */
SP_FN ulong filt_key(SP_GLOBAL const uint *nb32, SP_GLOBAL const ulong *nb64,
		uint is32, ulong j)
{
	return is32 ? (ulong)nb32[j] : nb64[j];
}

/*
 * Binary search of Q among the sorted keys [LO, HI): index of Q, or HI when
 * absent.  Always log2(HI - LO) + 1 probes at most.
 */
SP_FN ulong filt_bsearch(SP_GLOBAL const uint *nb32, SP_GLOBAL const ulong *nb64,
		uint is32, ulong lo, ulong hi, ulong q)
{
	ulong end = hi;

	while (lo < hi) {
		ulong mid = lo + (hi - lo) / 2;

		if (filt_key(nb32, nb64, is32, mid) < q)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < end && filt_key(nb32, nb64, is32, lo) == q ? lo : end;
}

/*
 * BDZ lookup of Q in block CODE: the rank j of Q among the block's keys
 * (an index into red_nbpos), or 0xffffffff when Q is not a key.  NB32 /
 * NB64 are the reduced structure's keys (red.nb), which the slot's rank
 * names.
 */
SP_FN uint filt_bdz_find(SP_GLOBAL const uint *blk_start, SP_GLOBAL const uchar *blk_seed,
		SP_GLOBAL const uchar *blk_g, SP_GLOBAL const uint *nb32,
		SP_GLOBAL const ulong *nb64, uint is32, SP_GLOBAL const uint *blk_rank,
		SP_GLOBAL const uint *blk_roff, SP_GLOBAL const uint *red_start, uint code, ulong q)
{
	uint base = blk_start[code], m = blk_start[code + 1] - base, r, v0, v1, v2, sl, j;
	bdz_hash_t hh;

	if (m == 0u)
		return 0xffffffffu;
	r = m / 3u;
	hh = bdz_hash(q, bdz_seed(code, blk_seed[code]));
	v0 = bdz_vertex(hh, r, 0u);
	v1 = bdz_vertex(hh, r, 1u);
	v2 = bdz_vertex(hh, r, 2u);
	sl = bdz_slot(hh, r,
			bdz_g_get(blk_g[(base + v0) >> 2], (base + v0) & 3u),
			bdz_g_get(blk_g[(base + v1) >> 2], (base + v1) & 3u),
			bdz_g_get(blk_g[(base + v2) >> 2], (base + v2) & 3u));
	j = red_start[code] + idx_blk_rank_at(blk_rank, blk_roff, red_start, code, sl);
	return filt_key(nb32, nb64, is32, j) == q ? j : 0xffffffffu;
}

/*
 * The device's work items of one unit (a pattern in one partition, whose
 * SeedBlock holds N_KEYS unique keys), by the kind of its kernels: KIND 0
 * fm, one (its backward search); 1 bpr, chunks of FILT_BPR_CHUNK striped
 * words of H keys each; 2 bs, ph, the N_GRID words of the Hamming ball,
 * none for an empty block unless ANY (-a: the other seeds' blocks may
 * match).  0: the pattern is no unit.  The host's gathering
 * (filt_ocl_match.c) and the kernel that gathers on the device (filt.cl)
 * both count with it.
 */
#define FILT_BPR_CHUNK 16u

SP_FN ulong filt_unit_items(uint kind, ulong n_keys, uint h, uint n_grid, uint any)
{
	ulong nw;

	if (kind == 0u)
		return 1u;
	if (kind == 2u)
		return any || n_keys ? n_grid : 0u;
	nw = (n_keys + h - 1u) / h;
	return (nw + FILT_BPR_CHUNK - 1u) / FILT_BPR_CHUNK;
}

#endif
