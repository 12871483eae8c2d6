/*
 * mem.cl - seedfilt -m mem, stage 1 on the device: the FM-MEMs of read
 * strands in one partition (kernels/inc_mem.h, the CPU's code), in two
 * kernels so that every work item has a small, even share of the work:
 *
 * mem_rows: one work item per sampled window of a strand, from window IT0
 *   on (item ITEM is
 *   window ITEM - WPRE[s] of strand s = ISTRAND[item], at read base
 *   (ITEM - WPRE[s]) * step): the backward search of the window and its
 *   left steps; each row that leaves the range (a match starting there)
 *   takes a slot of OUT (MEM_SLOT u32: strand, row, read start, window end,
 *   item - IT0, the row's number j among the item's rows) from the counter
 *   CNT (the slots of up to 32 rows taken at once), and WCNT[item - IT0]
 *   gets the item's number of rows.  A window with many shallow rows
 *   leaves them to mem_shal (below), and a window with many rows (a
 *   repeat's) its left steps to mem_wide (below), which finish its count.
 *   When the counter ends above CAP, the host grows OUT and runs the
 *   kernels again.
 * mem_loc: one work item per slot: locate the row (sampled suffix
 *   array), extend the match to the right, and write it as a mem_raw_t
 *   (mem.h: part, read start, length, partition offset, tail: 2 u32) to
 *   RES[WBASE[item] + j], WBASE the exclusive prefix sums of WCNT
 *   (mem_scan_*, below; the host's under SEEDPIPE_MEM_HOST_SCAN): so the
 *   matches come back in the order in which the CPU's stage 1 finds them,
 *   window by window, whatever order the slots were taken in (stage 2
 *   relies on the rows' order within a window).  Length 0 when the match
 *   is shorter than lmin (VCNT[item] counts the others); the tail is the
 *   32 text bases after the match, 0 when the partition ends within them.
 * mem_compact: the records of length 0 left out, the order kept.
 */
#define MEM_SLOT 6u
#include "inc_common.h"
#include "inc_scan.h"

typedef struct {
	__global uint *out;
	volatile __global uint *cnt;
	uint cap, strand, item, j;
	uint next;                    /* the next slot of those taken ahead */
	__global uint *def;           /* the windows whose shallow rows mem_shal takes */
	uint shal_min;                /* (those with at least this many shallow rows) */
	__global uint *wide;          /* the windows whose left steps mem_wide takes */
	uint wide_min, wide_cap;      /* (those with at least this many rows; room for so many) */
} mem_sink_t;

/*
 * The shallow rows of window K (N of them, the window's last rows) left to
 * mem_shal when they are many: one work item would take them one after the
 * other, while the rest of the device waits (35,000 on chrX: the launch's
 * tail).  The window is listed in DEF (4 u32: item, k, its rows so far,
 * strand), counted in CNT[1].
 */
inline uint mem_shal_defer(mem_sink_t *s, uint k, uint n)
{
	uint d;

	if (n < s->shal_min)
		return 0u;
	d = atomic_inc(s->cnt + 1);
	s->def[4u * d] = s->item;
	s->def[4u * d + 1u] = k;
	s->def[4u * d + 2u] = s->j;
	s->def[4u * d + 3u] = s->strand;
	return 1u;
}

/*
 * The rows [LO, HI) of window K (not deep) left to mem_wide when they are
 * many: mem_left scans the whole range at every left step, and one work
 * item scanning a repeat's thousands of rows alone was each launch's tail
 * (2-4 ms for a few thousand windows on an H100, 8-11 ms for 300,000).  The
 * window is listed in WIDE (8 u32: item, k, its rows so far, strand, LO and
 * HI as two u32 each), counted in CNT[2]; when WIDE is full the item takes
 * its rows itself.
 */
inline uint mem_wide_list(mem_sink_t *s, uint k, ulong lo, ulong hi, uint deep)
{
	__global uint *e;
	uint d;

	d = atomic_inc(s->cnt + 2);
	if (d >= s->wide_cap)
		return 0u;
	e = s->wide + 8u * d;
	e[0] = s->item;
	e[1] = k;
	e[2] = s->j;
	e[3] = s->strand | deep << 31;
	e[4] = (uint)lo;
	e[5] = (uint)(lo >> 32);
	e[6] = (uint)hi;
	e[7] = (uint)(hi >> 32);
	return 1u;
}

inline uint mem_wide_defer(mem_sink_t *s, uint k, ulong lo, ulong hi)
{
	return hi - lo >= (ulong)s->wide_min && mem_wide_list(s, k, lo, hi, 0u);
}

/*
 * A deep window (its rows hold those of A^MEM_DEEP, [YLO, YHI), left out)
 * whose rows beside the deep ones are many (a poly-A stretch's): all of it
 * to mem_wide, flagged in bit 31 of the strand (its left steps beside the
 * deep rows, then its shallow rows, as mem_win_rest takes them).
 */
inline uint mem_deep_defer(mem_sink_t *s, uint k, ulong lo, ulong hi, ulong ylo, ulong yhi)
{
	return (ylo - lo) + (hi - yhi) >= (ulong)s->wide_min && mem_wide_list(s, k, lo, hi, 1u);
}

/* The slots of the next N rows, taken at once (one atomic for up to 32 rows). */
inline void mem_rows_ahead(mem_sink_t *s, uint n)
{
	s->next = atomic_add(s->cnt, n);
}

inline void mem_row_emit(mem_sink_t *s, ulong row, uint i, uint e)
{
	uint k = s->next++;

	if (k < s->cap) {
		s->out[MEM_SLOT * k] = s->strand;
		s->out[MEM_SLOT * k + 1u] = (uint)row;
		s->out[MEM_SLOT * k + 2u] = i;
		s->out[MEM_SLOT * k + 3u] = e;
		s->out[MEM_SLOT * k + 4u] = s->item;
		s->out[MEM_SLOT * k + 5u] = s->j;
	}
	s->j++;
}

#define MEM_SINK_T mem_sink_t *
#define MEM_ROW(f, q, row, i, e) mem_row_emit((q)->sink, (row), (i), (e))
#define MEM_ROWS_AHEAD(sink, n) mem_rows_ahead((sink), (n))
#define MEM_SHAL_DEFER(sink, k, n) mem_shal_defer((sink), (k), (n))
#define MEM_WIDE_DEFER(sink, k, lo, hi) mem_wide_defer((sink), (k), (lo), (hi))
#define MEM_DEEP_DEFER(sink, k, lo, hi, ylo, yhi) mem_deep_defer((sink), (k), (lo), (hi), (ylo), (yhi))
#include "inc_mem.h"

/*
 * mem_rows: one work item per window IT0 + id of the batch; its strand is
 * the last of the N_ST strands whose first window WPRE[st] is at or before
 * it (strands without windows share their successor's WPRE).
 */
__kernel void mem_rows(uint it0, uint n_items, uint n_st, __global const uint *wpre,
		__global const uint *woff, __global const uint *slen, __global const uint *words,
		__global const uint *occ, __global const uint *jump, __global const uint *shal,
		ulong n, ulong primary, ulong c0, ulong c1, ulong c2, ulong c3, ulong ylo, ulong yhi,
		uint nshal, uint k, uint w, uint s, uint lmin,
		__global uint *out, volatile __global uint *cnt, uint cap, __global uint *wcnt,
		__global uint *def, uint shal_min, __global uint *wide, uint wide_min, uint wide_cap)
{
	uint it = (uint)get_global_id(0), st, hi, len;
	mem_fm_t f;
	mem_sink_t sk;
	mem_q_t q;

	if (it >= n_items)
		return;
	it += it0;
	for (st = 0u, hi = n_st; hi - st > 1u;) {   /* wpre[st] <= it < wpre[hi] */
		uint mid = st + (hi - st) / 2u;

		if (wpre[mid] <= it)
			st = mid;
		else
			hi = mid;
	}
	len = slen[st] & 0x7fffffffu;
	mem_fm_init(&f, occ, n, primary, c0, c1, c2, c3);
	f.jump = jump;
	f.shal = shal;
	f.ylo = ylo;
	f.yhi = yhi;
	f.nshal = nshal;
	f.k = k;
	sk.out = out;
	sk.cnt = cnt;
	sk.cap = cap;
	sk.strand = st;
	sk.item = it - it0;
	sk.j = 0u;
	sk.next = 0u;
	sk.def = def;
	sk.shal_min = shal_min;
	sk.wide = wide;
	sk.wide_min = wide_min;
	sk.wide_cap = wide_cap;
	mem_q_init(&q, words + woff[st], len, w, s, lmin, slen[st] >> 31, &sk);
	mem_window(&f, &q, (it - wpre[st]) * s);
	wcnt[it - it0] = sk.j;
}

/*
 * The slots of a work-group's rows, the lane's X of them, taken by one
 * atomic on CNT: a prefix sum in local memory (SC: LSIZE + 1 u32) numbers
 * them, *INCL the lane's inclusive sum, *TOTAL the group's; the group's
 * first slot returned.
 */
inline uint mem_group_slots(__local uint *sc, volatile __global uint *cnt, uint x, uint *incl,
		uint *total)
{
	uint gs = (uint)get_local_size(0);

	*total = sp_group_scan(sc, x, incl);
	if (get_local_id(0) == 0u)
		sc[gs] = *total ? atomic_add(cnt, *total) : 0u;
	barrier(CLK_LOCAL_MEM_FENCE);
	return sc[gs];
}

/*
 * mem_left's steps of rows [LO, HI) of window K by the whole work-group
 * (mem_wide), each step's range a half-block (32 rows) a lane, LSIZE
 * half-blocks a round: each lane's dropped rows counted, a prefix sum in
 * local memory (SC: LSIZE + 1 u32) numbers them in row order from *J on,
 * and one atomic takes their slots: so the rows come numbered as mem_left
 * numbers them.
 */
inline void mem_wide_left(const mem_fm_t *f, const mem_q_t *q, uint k, ulong lo, ulong hi, uint st,
		uint item, uint *j, __global uint *out, volatile __global uint *cnt, uint cap,
		__local uint *sc)
{
	uint lid = (uint)get_local_id(0), gs = (uint)get_local_size(0), t, o;

	for (t = 1u; t <= q->s && t <= k + 1u && lo < hi; t++) {
		uint i = k + 1u - t, c = 4u;    /* i 0: every row drops out (the read's start) */
		ulong nlo = 0UL, nhi = 0UL, hb1 = (hi - 1UL) >> 5, r0;

		if (i > 0u) {
			c = mem_base(q->rw, i - 1u);
			nlo = mem_cval(f, c) + mem_occ(f, c, lo);
			nhi = mem_cval(f, c) + mem_occ(f, c, hi);
		}
		/* no row drops out: no round (a loop, not a branch, around the barriers) */
		for (r0 = c > 3u || nhi - nlo != hi - lo ? lo >> 5 : hb1 + 1UL; r0 <= hb1; r0 += gs) {
			ulong hb = r0 + lid, y = 0UL;
			uint m, incl, total, base;

			if (hb <= hb1)
				y = mem_drop_bits(f, c > 3u ? 0UL : mem_bwords(f, hb >> 1, (uint)(hb & 1UL)),
						hb << 5, lo, hi, c);
			m = (uint)popcount(y);
			base = mem_group_slots(sc, cnt, m, &incl, &total) + incl - m;
			for (o = *j + incl - m; y; o++, base++) {
				ulong row = (hb << 5) + (ulong)((uint)MEM_CTZ64(y) >> 1);

				y &= y - 1UL;
				if (base < cap) {
					__global uint *r = out + MEM_SLOT * base;

					r[0] = st;
					r[1] = (uint)row;
					r[2] = i;
					r[3] = k + q->w;
					r[4] = item;
					r[5] = o;
				}
			}
			*j += total;
			barrier(CLK_LOCAL_MEM_FENCE);
		}
		lo = nlo;
		hi = nhi;
	}
}

/*
 * The shallow rows SHAL[0 .. NSHAL) of deep window K by the whole
 * work-group, LSIZE at a time, one a lane (mem_shal_row), numbered from *J
 * on in their order (as mem_shal numbers them).
 */
inline void mem_wide_shal(const mem_fm_t *f, const mem_q_t *q, uint k, __global const uint *shal,
		uint nshal, uint st, uint item, uint *j, __global uint *out, volatile __global uint *cnt,
		uint cap, __local uint *sc)
{
	uint lid = (uint)get_local_id(0), gs = (uint)get_local_size(0), a0;

	for (a0 = 0u; a0 < nshal; a0 += gs) {
		uint a = a0 + lid, hit = 0u, i = 0u, steps, incl, total, base;
		ulong row = 0UL;

		if (a < nshal)
			hit = mem_shal_row(f, q, k, (ulong)shal[a], &i, &row, &steps);
		base = mem_group_slots(sc, cnt, hit, &incl, &total);
		if (hit && base + incl - 1u < cap) {
			__global uint *r = out + MEM_SLOT * (base + incl - 1u);

			r[0] = st;
			r[1] = (uint)row;
			r[2] = i;
			r[3] = k + q->w;
			r[4] = item;
			r[5] = *j + incl - 1u;
		}
		*j += total;
		barrier(CLK_LOCAL_MEM_FENCE);
	}
}

/*
 * The head of an entry E of DEF (mem_shal_defer) or WIDE (mem_wide_list),
 * the same 4 u32: item, k, the rows so far, strand (bit 31: deep, WIDE
 * only) to *ITEM, *K, *J, *ST, and F and Q set for the strand; the deep
 * flag returned.
 */
inline uint mem_list_head(__global const uint *e, __global const uint *woff,
		__global const uint *slen, __global const uint *words, __global const uint *occ,
		ulong n, ulong primary, ulong c0, ulong c1, ulong c2, ulong c3, uint w, uint s,
		uint *item, uint *k, uint *j, uint *st, mem_fm_t *f, mem_q_t *q)
{
	*item = e[0];
	*k = e[1];
	*j = e[2];
	*st = e[3] & 0x7fffffffu;
	mem_fm_init(f, occ, n, primary, c0, c1, c2, c3);
	mem_q_init(q, words + woff[*st], slen[*st] & 0x7fffffffu, w, s, 0u, 1u, 0);
	return e[3] >> 31;
}

/*
 * mem_shal: one work-group per window of DEF (mem_shal_defer): its shallow
 * rows, LSIZE at a time, one a work item, each one's left steps
 * (mem_shal_row); those that drop out take slots as mem_rows's rows do,
 * numbered in the order of the shallow rows after the window's other rows
 * (a prefix sum in local memory, SC: LSIZE + 1 u32), so the matches come
 * back in the CPU's order.  WCNT[item] gets the window's rows in all.
 */
__kernel void mem_shal(uint n_def, __global const uint *def, __global const uint *woff,
		__global const uint *slen, __global const uint *words, __global const uint *occ,
		__global const uint *shal, ulong n, ulong primary, ulong c0, ulong c1, ulong c2, ulong c3,
		uint nshal, uint w, uint s, __global uint *out, volatile __global uint *cnt, uint cap,
		__global uint *wcnt, __local uint *sc)
{
	uint g = (uint)get_group_id(0), item, k, j, st;
	mem_fm_t f;
	mem_q_t q;

	if (g >= n_def)
		return;
	mem_list_head(def + 4u * g, woff, slen, words, occ, n, primary, c0, c1, c2, c3, w, s,
			&item, &k, &j, &st, &f, &q);
	mem_wide_shal(&f, &q, k, shal, nshal, st, item, &j, out, cnt, cap, sc);
	if (get_local_id(0) == 0u)
		wcnt[item] = j;
}

/*
 * mem_wide: one work-group per window of WIDE (mem_wide_defer,
 * mem_deep_defer): its rows by all lanes together, numbered after the
 * window's rows so far as mem_win_rest numbers them: a window's left steps
 * (mem_wide_left); a deep window's left steps beside the deep rows [YLO,
 * YHI), then its shallow rows (mem_wide_shal).  WCNT[item] gets the
 * window's rows in all.
 */
__kernel void mem_wide(uint n_wide, __global const uint *wide, __global const uint *woff,
		__global const uint *slen, __global const uint *words, __global const uint *occ,
		__global const uint *shal, ulong n, ulong primary, ulong c0, ulong c1, ulong c2, ulong c3,
		ulong ylo, ulong yhi, uint nshal, uint w, uint s, __global uint *out,
		volatile __global uint *cnt, uint cap, __global uint *wcnt, __local uint *sc)
{
	uint g = (uint)get_group_id(0), item, k, j, st, deep, p;
	ulong lo, hi;
	mem_fm_t f;
	mem_q_t q;

	if (g >= n_wide)
		return;
	deep = mem_list_head(wide + 8u * g, woff, slen, words, occ, n, primary, c0, c1, c2, c3, w, s,
			&item, &k, &j, &st, &f, &q);
	lo = wide[8u * g + 4u] | (ulong)wide[8u * g + 5u] << 32;
	hi = wide[8u * g + 6u] | (ulong)wide[8u * g + 7u] << 32;
	/*
	 * Every lane of the group takes the same calls, no branch around them:
	 * PoCL copies the code after each barrier under a branch (several
	 * minutes to compile mem_wide when it had three copies of mem_wide_left
	 * under if/else).  Not deep: the second range and the shallow rows empty.
	 */
	for (p = 0u; p < 2u; p++)
		mem_wide_left(&f, &q, k, p ? (deep ? yhi : hi) : lo, p || !deep ? hi : ylo, st, item, &j,
				out, cnt, cap, sc);
	mem_wide_shal(&f, &q, k, shal, deep ? nshal : 0u, st, item, &j, out, cnt, cap, sc);
	if (get_local_id(0) == 0u)
		wcnt[item] = j;
}

__kernel void mem_loc(uint n_slots, __global const uint *woff, __global const uint *slen,
		__global const uint *words, __global const uint *occ, __global const ulong *mark,
		__global const uint *sa, __global const uint *text,
		ulong n, ulong primary, ulong c0, ulong c1, ulong c2, ulong c3, uint tsh, uint lmin,
		__global const uint *out, uint part, __global const uint *wbase, __global uint *res,
		volatile __global uint *vcnt)
{
	uint it = (uint)get_global_id(0), st, i, e, len;
	ulong p;
	mem_fm_t f;

	if (it >= n_slots)
		return;
	__global const uint *o = out + MEM_SLOT * it;
	__global uint *r;
	ulong tail;

	st = o[0];
	i = o[2];
	e = o[3];
	mem_fm_init(&f, occ, n, primary, c0, c1, c2, c3);
	f.mark = mark;
	f.sa = sa;
	f.text = text;
	f.tsh = tsh;
	p = mem_locate(&f, (ulong)o[1]);
	len = e - i + mem_ext(&f, words + woff[st], e, slen[st] & 0x7fffffffu, p + (e - i));
	tail = p + len + 32UL <= n ? mem_word(text, p + len + tsh) : 0UL;
	r = res + MEM_SLOT * (wbase[o[4]] + o[5]);
	if (len >= lmin)
		atomic_inc(vcnt + o[4]);
	r[0] = part;
	r[1] = i;
	r[2] = len >= lmin ? len : 0u;
	r[3] = len >= lmin ? (uint)p : 0u;
	r[4] = (uint)tail;
	r[5] = (uint)(tail >> 32);
}

/*
 * mem_compact: a work-group per window (SC: its size in local memory): its
 * records of RES that hold a match (length > 0), in order, to
 * CRES[VBASE[item] ..]; the window's records are RES[WBASE[item] ..
 * WBASE[item + 1]) (the last ends at NREC).  The group takes them a tile
 * of its size at a time, each lane its record, a prefix sum of the kept
 * ones in local memory placing them (one work item per window, as before,
 * walked a repeat's thousands of records alone: at L 20 on chrX most of
 * the device's time).
 */
__kernel void mem_compact(uint n_items, uint nrec, __global const uint *wbase,
		__global const uint *vbase, __global const uint *res, __global uint *cres,
		__local uint *sc)
{
	uint it = (uint)get_group_id(0), lid = (uint)get_local_id(0), gs = (uint)get_local_size(0);
	uint r0, e, o, k, incl, kept;

	if (it >= n_items)
		return;                 /* (the whole group) */
	e = it + 1u < n_items ? wbase[it + 1u] : nrec;
	o = vbase[it];
	for (r0 = wbase[it]; r0 < e; r0 += gs) {
		uint r = r0 + lid, f = r < e && res[MEM_SLOT * r + 2u] != 0u;

		kept = sp_group_scan(sc, f, &incl);
		if (f)
			for (k = 0u; k < MEM_SLOT; k++)
				cres[MEM_SLOT * (o + incl - 1u) + k] = res[MEM_SLOT * r + k];
		o += kept;
	}
}

/*
 * The windows' counts to their first places (an exclusive prefix sum in
 * place, on the device: the host read them down and sent the sums up,
 * twice a launch), in three kernels: mem_scan_tiles, each work-group a
 * tile of MEM_SCAN_PER counts a lane, the tile's sum to SUMS[group];
 * mem_scan_sums, one work-group over the NT tiles' sums, their total to
 * TOT[TI]; mem_scan_add, each count's tile's start added.
 */
#define MEM_SCAN_PER 8u

__kernel void mem_scan_tiles(uint n, __global uint *a, __global uint *sums, __local uint *sc)
{
	uint lid = (uint)get_local_id(0), gs = (uint)get_local_size(0), g = (uint)get_group_id(0);
	uint base = (g * gs + lid) * MEM_SCAN_PER, v[MEM_SCAN_PER], t = 0u, incl, tot, k;

	for (k = 0u; k < MEM_SCAN_PER; k++) {
		v[k] = base + k < n ? a[base + k] : 0u;
		t += v[k];
	}
	tot = sp_group_scan(sc, t, &incl);
	t = incl - t;
	for (k = 0u; k < MEM_SCAN_PER; k++) {
		if (base + k < n)
			a[base + k] = t;
		t += v[k];
	}
	if (lid == 0u)
		sums[g] = tot;
}

__kernel void mem_scan_sums(uint nt, __global uint *sums, __global uint *tot, uint ti, __local uint *sc)
{
	uint lid = (uint)get_local_id(0), gs = (uint)get_local_size(0), b0, carry = 0u;

	for (b0 = 0u; b0 < nt; b0 += gs) {
		uint x = b0 + lid < nt ? sums[b0 + lid] : 0u, incl, t;

		t = sp_group_scan(sc, x, &incl);
		if (b0 + lid < nt)
			sums[b0 + lid] = carry + incl - x;
		carry += t;
	}
	if (lid == 0u)
		tot[ti] = carry;
}

__kernel void mem_scan_add(uint n, __global uint *a, __global const uint *sums, uint tile)
{
	uint i = (uint)get_global_id(0);

	if (i < n)
		a[i] += sums[i / tile];
}
