/*
 * filt.cl - seedfilt's matching kernels: mflBPR over the general structure
 * (bpr), degenerate patterns looked up in the reduced structure (bs) or
 * through the BDZ perfect hash (ph), and FM backward search with
 * backtracking (fm).  The algorithm code is the CPU's
 * (inc_bpr.h, inc_degen.h, inc_filt.h); the host (common/filt_ocl_match.c,
 * filt_run.c) turns the positions into diagonals exactly as the CPU path does.
 *
 * Every method runs twice over the same items: a count pass gives the
 * number of positions of each unit (the host sizes the output from these:
 * nothing can overflow), the items' output offsets are scanned on the
 * device, and the write pass stores the positions.  Only per-unit numbers
 * cross the bus.  fm: the count pass writes each item's count, unit_sum
 * adds them up per unit, unit_scan turns them into offsets from the unit
 * bases the host sends.  bpr, bs and ph add each unit's count up with one
 * atomic per unit and work group, and the groups' sums become output
 * offsets (group_scan): see bpr_count and degen_count below.  The host
 * sends the units in seed-code order, so neighbouring work groups read the
 * same SeedBlock.
 *
 * Units: one unit = one pattern (seed code, neighborhood q) in one
 * partition.  Items:
 *   bpr  chunks of about BPR_CHUNK striped words of the unit's SeedBlock
 *        (its unique keys, red.nb, striped as they are read)
 *        (chunk c of nch takes the words c, c + nch, ...); chunks
 *        CPRE[u] .. CPRE[u+1] belong to unit u (binary search)
 *
 *          unit:   0          1     2              (n_units)
 *          cpre:   0          3     4              9
 *          chunks: [c0 c1 c2][c3  ][c4 c5 c6 c7 c8]
 *
 *   bs, ph  the canonical degenerate words of the unit, n_grid = the size
 *        of the Hamming ball (degen_ball_word, inc_degen.h): item k =
 *        unit (k / n_grid), ball item (k % n_grid), whose word is the
 *        unit's plus the table entry BALL[k % n_grid] (degen_add).  With -a
 *        (CSHIFT = 2w > 0) the unit's word is the window word, seed code
 *        in its low CSHIFT bits: each degenerate word is split into the
 *        seed s' whose block is searched and the neighborhood q'.
 */
#define BPR_TSPACE __local   /* the block-mask tables of the bpr kernels */
#include "inc_bpr.h"
#include "inc_degen.h"
#include "inc_filt.h"
#include "inc_filt_fm.h"

#define BPR_CHUNK FILT_BPR_CHUNK

/*
 * Inclusive scan (Hillis-Steele) of S[0..N) in local memory, N the local
 * size; every item of the group calls it (barriers), item LID's value is
 * in S[LID] before (and visible to all: the first barrier) and its prefix
 * after.
 */
inline void local_scan(__local uint *s, uint lid, uint n)
{
	uint i;

	barrier(CLK_LOCAL_MEM_FENCE);
	for (i = 1u; i < n; i *= 2u) {
		uint x = lid >= i ? s[lid - i] : 0u;

		barrier(CLK_LOCAL_MEM_FENCE);
		s[lid] += x;
		barrier(CLK_LOCAL_MEM_FENCE);
	}
}

/*
 * bpr: work groups of at most BPR_WG items (the host's local size, the same
 * in both passes).  The items of a group cover a few consecutive units;
 * when their block-mask tables (BPR_TSIZE entries each, inc_bpr.h) fit in
 * BPR_LTAB entries of local memory, the group builds them first, as the
 * thesis's kernel does, and every column of every word costs one table
 * lookup (per 4 slices) instead of h compositions from b0..b3:
 *
 *     bm[4 (u - u0) + c] = B[c] of unit u (N positions of q cleared)
 *     tab[BPR_TSIZE (u - u0) + 256 g + x] = entry x of group g of unit u
 *
 * Otherwise (many small units in one group) the masks are composed as
 * before; the choice is the whole group's, so no item diverges on it.
 */
#define BPR_WG 128u
#define BPR_LTAB 4096u

/*
 * The host builds bpr's program with -DBPR_E=e -DBPR_H=h -DBPR_L=l
 * -DBPR_V=v (the run's values, which the kernels' arguments repeat): with
 * constants the loops of bpr_word_any unroll and its R[], I[] stay in
 * registers (with a run-time e they live in private memory).
 */
#ifdef BPR_E
#define BPR_CONSTS(h, l, v, e) do { (h) = BPR_H; (l) = BPR_L; (v) = BPR_V; (e) = BPR_E; } while (0)
#else
#define BPR_CONSTS(h, l, v, e) do { } while (0)
#endif

/* Table entries per unit for H slices: 4^h for h <= 4, else 256 a group. */
inline uint bpr_tsize(uint h)
{
	return h <= 4u ? 1u << (2u * h) : BPR_GROUP * bpr_ngroups(h);
}

/*
 * The last I in [LO, HI) with A[I] <= K, for A ascending and A[LO] <= K:
 * the unit of item K (A = the units' item prefixes), the block of slot K
 * (A = blk_start).
 */
inline uint last_le(__global const uint *a, uint lo, uint hi, uint k)
{
	while (hi - lo > 1u) {
		uint mid = (lo + hi) / 2u;

		if (a[mid] <= k)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The group's part of both bpr passes: the units of the group in UR
 * (first, last), their tables in TAB when they fit (returns 1, else 0).
 * Every item of the group must call it (barriers).
 */
inline uint bpr_group_tables(uint n_chunks, uint n_units, __global const uint *cpre,
		__global const ulong *uq, __global const uint *unm, uint h, uint v,
		__local uint *tab, __local uint *bm, __local uint *ur)
{
	uint lid = get_local_id(0), lsz = get_local_size(0);
	uint k0 = get_group_id(0) * lsz, ts = bpr_tsize(h), nug, t;

	if (lid == 0u) {
		uint k1 = min(k0 + lsz, n_chunks) - 1u;

		ur[0] = last_le(cpre, 0u, n_units, k0);
		ur[1] = last_le(cpre, ur[0], n_units, k1);
	}
	barrier(CLK_LOCAL_MEM_FENCE);
	nug = ur[1] - ur[0] + 1u;
	if (nug * ts > BPR_LTAB)
		return 0u;
	for (t = lid; t < 4u * nug; t += lsz) {
		uint u = ur[0] + t / 4u;

		bm[t] = bpr_bmask(uq[u], v, t % 4u) & ~unm[u];
	}
	barrier(CLK_LOCAL_MEM_FENCE);
	for (t = lid; t < nug * ts; t += lsz) {
		uint uu = t / ts, x = t % ts;
		__local const uint *b = bm + 4u * uu;

		tab[t] = bpr_tab_entry(b[0], b[1], b[2], b[3], v, h, x / BPR_GROUP, x % BPR_GROUP);
	}
	barrier(CLK_LOCAL_MEM_FENCE);
	return 1u;
}

/*
 * Matches of chunk K (of unit U) of a bpr unit; with OUT, their positions
 * are stored.  TAB: the unit's block-mask table when USE_TAB.  The unit's
 * SeedBlock is its unique keys (red.nb, NB32 when l <= 16, else NB64),
 * striped h at a time as they are read; a matching key j stands for the
 * positions RED_POS[NBPOS[j] .. NBPOS[j+1]).
 */
inline uint bpr_chunk(uint k, uint u, __global const uint *cpre,
		__global const uint *ucode, __global const ulong *uq, __global const uint *unm,
		__global const uint *red_start, __global const uint *nb32,
		__global const ulong *nb64, __global const uint *nbpos, __global const uint *red_pos,
		uint h, uint l, uint v, uint e, __local const uint *tab, uint use_tab,
		__global uint *out)
{
	uint code = ucode[u];
	uint beg = red_start[code], n = red_start[code + 1] - beg;
	uint nw = (n + h - 1u) / h, nch = cpre[u + 1] - cpre[u], c = k - cpre[u];
	uint m = 0, b0 = 0u, b1 = 0u, b2 = 0u, b3 = 0u, i;

	if (!use_tab) {
		ulong q = uq[u];
		uint nm = ~unm[u];   /* an N of q (packed as 0) matches no base */

		b0 = bpr_bmask(q, v, 0u) & nm;
		b1 = bpr_bmask(q, v, 1u) & nm;
		b2 = bpr_bmask(q, v, 2u) & nm;
		b3 = bpr_bmask(q, v, 3u) & nm;
	}
	/* chunk c takes words c, c + nch, c + 2 nch, ...: neighbouring work
	 * items read neighbouring keys (coalesced) */
	for (i = c; i < nw; i += nch) {
		uint left = n - i * h, j0 = beg + i * h, hit;
		ulong w = idx_stripe_keys(nb32, nb64, j0, left, h, l);

		hit = bpr_word_any(w, h, l, v, e, tab, use_tab, b0, b1, b2, b3);
		if (left < h)
			hit &= (1u << left) - 1u;
		while (hit) {
			uint j = j0 + 31u - clz(hit & (0u - hit)), p = nbpos[j], pe = nbpos[j + 1u];

			if (out)
				for (; p < pe; p++)
					out[m++] = red_pos[p];
			else
				m += pe - p;
			hit &= hit - 1u;
		}
	}
	return m;
}

/*
 * The count pass: CNT[k] for every chunk; each unit's total is added to
 * USUM with one global atomic per unit and work group (the group's sums per
 * unit first, in local memory); unless the run only counts (-N), GSUM[g]
 * = the group's total, which group_scan turns into the groups' output
 * offsets (positions in unit order, then chunk order).
 */
__kernel void bpr_count(uint n_chunks, uint n_units, __global const uint *cpre,
		__global const uint *ucode, __global const ulong *uq, __global const uint *unm,
		__global const uint *red_start, __global const uint *nb32,
		__global const ulong *nb64, __global const uint *nbpos, uint h, uint l, uint v, uint e,
		__global uint *cnt, __global uint *usum, __global uint *gsum, uint want_gsum)
{
	__local uint tab[BPR_LTAB], bm[4u * BPR_WG], ur[2], us[BPR_WG + 1u];
	uint k = get_global_id(0), lid = get_local_id(0), lsz = get_local_size(0);
	uint use, u = 0u, c = 0u, nug, t;

	BPR_CONSTS(h, l, v, e);
	use = bpr_group_tables(n_chunks, n_units, cpre, uq, unm, h, v, tab, bm, ur);
	nug = ur[1] - ur[0] + 1u;
	for (t = lid; t <= nug; t += lsz)
		us[t] = 0u;   /* us[nug]: the group's total */
	if (k < n_chunks) {
		u = last_le(cpre, ur[0], ur[1] + 1u, k);
		c = bpr_chunk(k, u, cpre, ucode, uq, unm, red_start, nb32, nb64, nbpos, 0,
				h, l, v, e, use ? tab + (u - ur[0]) * bpr_tsize(h) : tab, use, 0);
		cnt[k] = c;
	}
	barrier(CLK_LOCAL_MEM_FENCE);
	if (c) {
		atomic_add(&us[u - ur[0]], c);
		atomic_add(&us[nug], c);
	}
	barrier(CLK_LOCAL_MEM_FENCE);
	for (t = lid; t < nug; t += lsz)
		if (us[t])
			atomic_add(&usum[ur[0] + t], us[t]);
	if (want_gsum && lid == 0u)
		gsum[get_group_id(0)] = us[nug];
}

/*
 * The write pass: each chunk's output offset is its group's GBASE plus the
 * counts of the group's chunks before it (a scan in local memory); only
 * the chunks whose count is not 0 scan their words again.
 */
__kernel void bpr_write(uint n_chunks, uint n_units, __global const uint *cpre,
		__global const uint *ucode, __global const ulong *uq, __global const uint *unm,
		__global const uint *red_start, __global const uint *nb32,
		__global const ulong *nb64, __global const uint *nbpos, __global const uint *red_pos,
		uint h, uint l, uint v, uint e, __global const uint *cnt,
		__global const uint *gbase, __global uint *out)
{
	__local uint tab[BPR_LTAB], bm[4u * BPR_WG], ur[2], sc[BPR_WG];
	uint k = get_global_id(0), lid = get_local_id(0), lsz = get_local_size(0);
	uint use, u, c;

	BPR_CONSTS(h, l, v, e);
	use = bpr_group_tables(n_chunks, n_units, cpre, uq, unm, h, v, tab, bm, ur);
	c = k < n_chunks ? cnt[k] : 0u;
	sc[lid] = c;
	local_scan(sc, lid, lsz);
	if (c == 0u)
		return;
	u = last_le(cpre, ur[0], ur[1] + 1u, k);
	bpr_chunk(k, u, cpre, ucode, uq, unm, red_start, nb32, nb64, nbpos, red_pos,
			h, l, v, e, use ? tab + (u - ur[0]) * bpr_tsize(h) : tab, use,
			out + gbase[get_group_id(0)] + sc[lid] - c);
}

/* Unit of item K of the bs, ph grid: K / n_grid as (K * GMUL) >> GSH (host: grid_div). */
inline uint degen_unit(uint k, uint gmul, uint gsh)
{
	return (uint)(((ulong)k * (ulong)gmul) >> gsh);
}

/*
 * ph on the device: g and a fingerprint of the slot's key, 4 bits per
 * vertex (= slot), two vertices a byte (ph_pack_g):
 *
 *     byte k: [ fp(2k+1) | g(2k+1) | fp(2k) | g(2k) ]   bits 7-6 | 5-4 | 3-2 | 1-0
 *
 * fp = 2 bits of the key's hash that the vertices do not use (ph_fp).  The
 * three g reads bring the slot's fingerprint along, so 3 in 4 of the
 * words that are no key are rejected without reading their slot record.
 */
inline uint ph_nibble(__global const uchar *gf, uint v)
{
	return ((uint)gf[v >> 1] >> (4u * (v & 1u))) & 15u;
}

inline uint ph_fp(bdz_hash_t hh)
{
	return (hh.x0 ^ hh.x1 ^ hh.x2) & 3u;
}

/*
 * Positions of item K (unit U): the count, the first in red_pos in *A.
 * Word = q + BALL[K - U n_grid] (degen_add).  bs: binary search of the
 * reduced block, then red_nbpos.  ph: the BDZ slot of the word, then one
 * 16-byte slot record (key, first position, count: ph_pack) holds all
 * that is left to read, so a lookup is three bytes of g (with the slot's
 * fingerprint: ph_nibble) and, unless the fingerprint differs, one record.
 */
inline uint degen_item(uint k, uint u, uint n_grid, uint cshift, __global const ulong *ball,
		__global const uint *ucode, __global const ulong *uq,
		__global const uint *red_start, __global const uint *nb32,
		__global const ulong *nb64, uint is32, uint ph,
		__global const uint *blk_start, __global const uchar *blk_seed,
		__global const uchar *blk_gf, __global const uint4 *blk_rec,
		__global const uint *red_nbpos, uint *a)
{
	uint code = ucode[u];
	ulong w = degen_add(uq[u], ball[k - u * n_grid]), lo, hi, j;

	if (cshift) {   /* -a: a window word, seed code below q (common/filt.h) */
		code = (uint)(w & ((1UL << cshift) - 1UL));
		w >>= cshift;
	}
	if (ph) {
		uint base = blk_start[code], m = blk_start[code + 1u] - base, r, v0, v1, v2;
		uint n0, n1, n2, sl, ns;
		bdz_hash_t hh;
		uint4 rec;

		if (m == 0u)
			return 0u;
		r = m / 3u;
		hh = bdz_hash(w, bdz_seed(code, blk_seed[code]));
		v0 = base + bdz_vertex(hh, r, 0u);
		v1 = base + bdz_vertex(hh, r, 1u);
		v2 = base + bdz_vertex(hh, r, 2u);
		n0 = ph_nibble(blk_gf, v0);
		n1 = ph_nibble(blk_gf, v1);
		n2 = ph_nibble(blk_gf, v2);
		sl = bdz_pick(n0 & 3u, n1 & 3u, n2 & 3u);
		ns = sl == 0u ? n0 : sl == 1u ? n1 : n2;
		if (ns >> 2 != ph_fp(hh))
			return 0u;   /* not the key of its slot: no record read */
		rec = blk_rec[sl == 0u ? v0 : sl == 1u ? v1 : v2];
		if (((ulong)rec.y << 32 | (ulong)rec.x) != w)
			return 0u;
		*a = rec.z;
		return rec.w;
	}
	lo = red_start[code];
	hi = red_start[code + 1];
	j = filt_bsearch(nb32, nb64, is32, lo, hi, w);
	if (j == hi)
		return 0u;
	*a = red_nbpos[j];
	return red_nbpos[j + 1] - *a;
}

/*
 * bs, ph: the first position index of each unique neighborhood j = 0 .. N-1
 * (N = the partition's unique neighborhoods + 1), as format 1's red.nbpos,
 * from the index's compact form (red.grp, red.rep: idx_nbpos_get in
 * inc_idx.h).
 */
__kernel void nbpos_expand(uint n, __global const uint *grp, __global const uint *rep,
		__global uint *nbpos)
{
	uint j = get_global_id(0);

	if (j < n)
		nbpos[j] = idx_nbpos_get(grp, rep, j);
}

/*
 * ph: the slot records of one partition, built on the device from the
 * index's arrays (which are then released): slot i (partition-wide) of
 * blk.rank (common/idx.h, its block's rank words from blk.roff), with the
 * key red.nb[rank] it names, becomes
 *
 *     REC[i] = (key low 32 bits, key high 32 bits, red_nbpos[rank],
 *               red_nbpos[rank + 1] - red_nbpos[rank])
 *
 * (a phantom slot holds the rank of a real key, so every record is valid).
 */
__kernel void ph_pack(uint n_slots, uint nc, __global const uint *blk_start,
		__global const uint *red_start, __global const uint *rnb32,
		__global const ulong *rnb64, uint is32, __global const uint *blk_rank,
		__global const uint *blk_roff, __global const uint *red_nbpos, __global uint4 *rec)
{
	uint i = get_global_id(0), j, a, c;
	ulong key;

	if (i >= n_slots)
		return;
	c = last_le(blk_start, 0u, nc, i);
	j = red_start[c] + idx_blk_rank_at(blk_rank, blk_roff, red_start, c, i - blk_start[c]);
	key = filt_key(rnb32, rnb64, is32, j);
	a = red_nbpos[j];
	rec[i] = (uint4)((uint)key, (uint)(key >> 32), a, red_nbpos[j + 1u] - a);
}

/*
 * ph: the g + fingerprint bytes of one partition (see ph_nibble) from the
 * index's g (blk.g) and slot keys (red.nb[red.start[block] + rank]); byte
 * i covers slots 2i and 2i + 1, of the blocks found by binary search in
 * blk_start (NC + 1 entries).
 */
__kernel void ph_pack_g(uint n_bytes, uint n_slots, uint nc, __global const uint *blk_start,
		__global const uchar *blk_seed, __global const uchar *blk_g,
		__global const uint *rnb32, __global const ulong *rnb64, uint is32,
		__global const uint *blk_rank, __global const uint *blk_roff,
		__global const uint *red_start,
		__global uchar *gf)
{
	uint i = get_global_id(0), out = 0u, t;

	if (i >= n_bytes)
		return;
	for (t = 0u; t < 2u; t++) {
		uint v = 2u * i + t, lo, j;

		if (v >= n_slots)
			break;
		lo = last_le(blk_start, 0u, nc, v);
		j = red_start[lo] + idx_blk_rank_at(blk_rank, blk_roff, red_start, lo, v - blk_start[lo]);
		out |= (bdz_g_get(blk_g[v >> 2], v)
				| ph_fp(bdz_hash(filt_key(rnb32, rnb64, is32, j), bdz_seed(lo, blk_seed[lo])))
				<< 2)
			<< (4u * t);
	}
	gf[i] = (uchar)out;
}

/*
 * bs, ph: work groups of DG_WG items (the local size L <= DG_WG, the same in
 * both passes).  The count pass adds each unit's count to USUM with one
 * global atomic per unit and work group: a segmented inclusive scan of the
 * group's counts in local memory (the units' items are consecutive, so
 * the segment of item k starts at max(unit start, group start)), the last
 * item of each segment adds the sum.  Unless the run only counts (-N), it
 * also writes the sum of the group's counts to GSUM[group]; group_scan
 * turns these into output offsets GBASE, exclusive over the slice:
 * positions in unit order, then item order (within a pattern the order is
 * free: filt_finish sorts them).  The write pass redoes each item's lookup,
 * scans the group's counts in local memory and copies the group's runs of
 * positions cooperatively (output index i of the group belongs to the
 * item whose inclusive prefix is the first above i), so a key with many
 * positions is not copied by one work item alone.
 */
#define DG_WG 256u

/* The arguments of both passes up to RED_NBPOS: the items and their lookups. */
#define DG_LOOKUP_ARGS uint n_items, uint n_grid, uint gmul, uint gsh, uint cshift, \
		__global const ulong *ball, __global const uint *ucode, __global const ulong *uq, \
		__global const uint *red_start, __global const uint *nb32, \
		__global const ulong *nb64, uint is32, uint ph, \
		__global const uint *blk_start, __global const uchar *blk_seed, \
		__global const uchar *blk_gf, __global const uint4 *blk_rec, \
		__global const uint *red_nbpos

__kernel void degen_count(DG_LOOKUP_ARGS,
		__global uint *usum, __global uint *gsum,
		uint want_gsum)
{
	__local uint s[DG_WG];
	uint k = get_global_id(0), lid = get_local_id(0), n = get_local_size(0), c = 0u;
	uint u = degen_unit(k, gmul, gsh), k0 = k - lid, a = 0u, lo, i;

	if (k < n_items)
		c = degen_item(k, u, n_grid, cshift, ball, ucode, uq, red_start, nb32, nb64,
				is32, ph, blk_start, blk_seed, blk_gf, blk_rec, red_nbpos, &a);
	lo = u * n_grid > k0 ? u * n_grid - k0 : 0u;
	s[lid] = c;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (i = 1u; i < n && i < n_grid; i *= 2u) {
		uint v = lid >= lo + i ? s[lid - i] : 0u;

		barrier(CLK_LOCAL_MEM_FENCE);
		s[lid] += v;
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (k < n_items && (lid == n - 1u || k + 1u == n_items || k + 1u == (u + 1u) * n_grid)
			&& s[lid])
		atomic_add(&usum[u], s[lid]);
	if (!want_gsum)
		return;
	barrier(CLK_LOCAL_MEM_FENCE);
	s[lid] = c;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (i = n / 2u; i > 0u; i /= 2u) {
		if (lid < i)
			s[lid] += s[lid + i];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (lid == 0u)
		gsum[get_group_id(0)] = s[0];
}

/* Exclusive prefix sums of the N group sums, by one work group. */
__kernel void group_scan(uint n, __global const uint *gsum, __global uint *gbase)
{
	__local uint part[DG_WG];
	uint lid = get_local_id(0), l = get_local_size(0), per = (n + l - 1u) / l;
	uint b = lid * per, end = min(b + per, n), t = 0u, i;

	for (i = b; i < end; i++)
		t += gsum[i];
	part[lid] = t;
	barrier(CLK_LOCAL_MEM_FENCE);
	if (lid == 0u) {
		t = 0u;
		for (i = 0u; i < l; i++) {
			uint v = part[i];

			part[i] = t;
			t += v;
		}
	}
	barrier(CLK_LOCAL_MEM_FENCE);
	t = part[lid];
	for (i = b; i < end; i++) {
		uint v = gsum[i];

		gbase[i] = t;
		t += v;
	}
}

__kernel void degen_write(DG_LOOKUP_ARGS,
		__global const uint *red_pos,
		__global const uint *gbase, __global uint *out)
{
	__local uint inc[DG_WG], beg[DG_WG];
	uint k = get_global_id(0), lid = get_local_id(0), n = get_local_size(0);
	uint c = 0u, a = 0u, i, tot;

	if (k < n_items)
		c = degen_item(k, degen_unit(k, gmul, gsh), n_grid, cshift, ball, ucode, uq,
				red_start, nb32, nb64, is32, ph, blk_start, blk_seed, blk_gf, blk_rec,
				red_nbpos, &a);
	inc[lid] = c;
	beg[lid] = a;
	local_scan(inc, lid, n);
	tot = inc[n - 1u];
	out += gbase[get_group_id(0)];
	for (i = lid; i < tot; i += n) {
		uint lo = 0u, hi = n - 1u;

		while (lo < hi) {   /* the first item whose inclusive prefix is above i */
			uint mid = (lo + hi) / 2u;

			if (inc[mid] > i)
				hi = mid;
			else
				lo = mid + 1u;
		}
		out[i] = red_pos[beg[lo] + i - (lo ? inc[lo - 1u] : 0u)];
	}
}

/* Positions of each unit: the sum of its items' counts (items CPRE[u]..). */
__kernel void unit_sum(uint n_units, __global const uint *cpre, __global const uint *cnt,
		__global uint *usum)
{
	uint u = get_global_id(0), k, s = 0;

	if (u >= n_units)
		return;
	for (k = cpre[u]; k < cpre[u + 1]; k++)
		s += cnt[k];
	usum[u] = s;
}

/* Output offset of every item: its unit's base plus the counts before it. */
__kernel void unit_scan(uint n_units, __global const uint *cpre, __global const uint *cnt,
		__global const uint *ubase, __global uint *off)
{
	uint u = get_global_id(0), k, o;

	if (u >= n_units)
		return;
	o = ubase[u];
	for (k = cpre[u]; k < cpre[u + 1]; k++) {
		off[k] = o;
		o += cnt[k];
	}
}

/*
 * fm: one work item per unit, backward search with backtracking
 * (inc_filt_fm.h); the output of a unit is its BWT row ranges, 4 u32 each
 * (lo, hi), which the host locates (filt_hits_fm in common/filt_match_fm.c).
 */
__kernel void fm_count(uint n_units, __global const uint *ucode, __global const ulong *uq,
		__global const uint *occ32, ulong primary, ulong n, ulong C0, ulong C1,
		ulong C2, ulong C3, uint span, uint shape, uint l, uint e, uint any,
		__global uint *cnt)
{
	uint k = get_global_id(0);
	ffm_node_t stack[FFM_STACK];

	if (k >= n_units)
		return;
	cnt[k] = 4u * ffm_search(occ32, primary, n, C0, C1, C2, C3, span, shape, l,
			ucode[k], uq[k], e, any, stack, 0);
}

__kernel void fm_write(uint n_units, __global const uint *ucode, __global const ulong *uq,
		__global const uint *occ32, ulong primary, ulong n, ulong C0, ulong C1,
		ulong C2, ulong C3, uint span, uint shape, uint l, uint e, uint any,
		__global const uint *off, ulong off0, __global uint *out)
{
	uint k = get_global_id(0);
	ffm_node_t stack[FFM_STACK];

	if (k >= n_units)
		return;
	ffm_search(occ32, primary, n, C0, C1, C2, C3, span, shape, l, ucode[k], uq[k], e,
			any, stack, out + (off[k] - (uint)off0));
}

/*
 * Gathering on the device (gather_dev in filt_ocl_match.c): the batch's
 * patterns go up as the host holds them (PAT, the layout of filt_pat_t),
 * and the units of one partition are made here, not by the host reading a
 * start list entry per pattern:
 *
 *   pat_items:   items[i] of pattern i (filt_unit_items, inc_filt.h, the
 *                host's count), the work group's sums of items and of units
 *                (patterns with items) in gsum[2 group], gsum[2 group + 1]
 *   host:        exclusive sums of the groups' sums -> gbase (a few numbers
 *                per 128 patterns; the totals size the slices)
 *   pat_compact: unit u of pattern i (the units in pattern order): ucode,
 *                uq (-a: the window word, seed code below q), unm, upat[u] = i
 *                and cpre[u + 1], the end of its items
 *
 * The match kernels then read the units where they are.  Work groups of
 * GATHER_WG items at most (the host's local size, a power of two).
 */
#define GATHER_WG 128u

typedef struct {
	ulong q, fixq;
	uint code, o, strand, nmask, e, fixc;
} dpat_t;

__kernel void pat_items(uint np, uint kind, uint h, uint n_grid, uint any,
		__global const dpat_t *pat, __global const uint *red_start,
		__global uint *items, __global uint *gsum)
{
	__local uint si[GATHER_WG], su[GATHER_WG];
	uint i = get_global_id(0), lid = get_local_id(0), n = get_local_size(0), it = 0u, k;

	if (i < np) {
		ulong nk = 0u;

		if (kind == 1u || (kind == 2u && !any)) {
			uint c = pat[i].code;

			nk = red_start[c + 1u] - red_start[c];
		}
		it = (uint)min(filt_unit_items(kind, nk, h, n_grid, any), (ulong)0xffffffffu);
		items[i] = it;
	}
	si[lid] = it;
	su[lid] = it != 0u;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (k = n / 2u; k > 0u; k /= 2u) {
		if (lid < k) {
			si[lid] += si[lid + k];
			su[lid] += su[lid + k];
		}
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (lid == 0u) {
		gsum[2u * get_group_id(0)] = si[0];
		gsum[2u * get_group_id(0) + 1u] = su[0];
	}
}

__kernel void pat_compact(uint np, uint cshift, __global const dpat_t *pat,
		__global const uint *items, __global const uint *gbase, __global uint *ucode,
		__global ulong *uq, __global uint *unm, __global uint *upat, __global uint *cpre)
{
	__local uint si[GATHER_WG], su[GATHER_WG];
	uint i = get_global_id(0), lid = get_local_id(0), n = get_local_size(0), g = get_group_id(0);
	uint it = i < np ? items[i] : 0u;

	si[lid] = it;
	su[lid] = it != 0u;
	local_scan(si, lid, n);
	local_scan(su, lid, n);
	if (it) {
		uint u = gbase[2u * g + 1u] + su[lid] - 1u, c = pat[i].code;

		ucode[u] = c;
		uq[u] = cshift ? (ulong)c | pat[i].q << cshift : pat[i].q;
		unm[u] = pat[i].nmask;
		upat[u] = i;
		cpre[u + 1u] = gbase[2u * g] + si[lid];
	}
	if (i == 0u)
		cpre[0] = 0u;
}
