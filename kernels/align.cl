/*
 * align.cl - the alignment kernel: one work item per (read, window) pair,
 * running sp_align_one() of inc_align.h, the same code as the CPU path
 * (common/align.c), so that both write byte-identical result records.
 *
 * A run covers pairs BASE .. BASE+N-1.  The traceback workspace of the run
 * is interleaved so that neighbouring work items touch neighbouring words:
 *
 *     ws[k * N + g]   word k (inc_align.h numbering) of work item g
 *
 * ENDS may be a dummy buffer when FLAGS lacks SP_ALIGN_ENDS; with it, the
 * bytes of a pair's ENDS_STRIDE slot past its window are SP_ALIGN_END_NONE,
 * as on the CPU.
 */
#include "inc_align.h"
#include "inc_keys.h"
#include "inc_scan.h"

__kernel void align(__global const uchar *reads, __global const uchar *wins,
		__global const sp_align_pair_t *pairs, ulong base, ulong n, uint max_a, uint flags,
		__global ulong *ws, __global uchar *ends, ulong ends_stride,
		__global sp_align_res_t *res)
{
	ulong g = get_global_id(0), k, e;
	__global const sp_align_pair_t *p;

	if (g >= n)
		return;
	k = base + g;
	p = pairs + k;
	sp_align_one(reads + p->read_off, p->read_len, wins, p->win_off, p->win_len, max_a, flags,
			p->end_lo, p->end_hi, ws + g, n, (flags & SP_ALIGN_ENDS) ? ends + k * ends_stride : ends, res + k);
	if (flags & SP_ALIGN_ENDS)
		for (e = p->win_len; e < ends_stride; e++)
			ends[k * ends_stride + e] = SP_ALIGN_END_NONE;
}

/*
 * extend's first pass kept on the device.  A window is given compactly,
 * 16 bytes (WP; a run's windows from WP + 2 BASE):
 *
 *     wp[2g]      its first base in the packed reference REF (bits 0..39;
 *                 bits 40..62 its sequence, which the alignment ignores)
 *     wp[2g + 1]  its length << 32 | rs, rs = 2 read + strand
 *
 * the read as aligned at READS + ROFF[rs], ROFF[rs + 1] - ROFF[rs] bases.
 * A window with an end within the bound takes HIT_WORDS words of HITS at
 * an atomic count CNT[1] (put_hit: run window, row offset, distance, and
 * its two WP words), and the room for its row in CENDS at an atomic count
 * of bytes CNT[0], so hits land in any order.  Only CNT, the hits and the
 * rows they name go back.
 */
#define HIT_WORDS 7
#define DW_BEG 0xffffffffffull   /* wp[2g]'s first base */

/* Window G's hit entry (distance D) and the room for its row: the row's offset. */
static uint put_hit(__global uint *hits, __global uint *cnt, ulong g, __global const ulong *w,
		int d)
{
	uint len = (uint)(w[1] >> 32), o = atomic_add(cnt, len), h = atomic_inc(cnt + 1);
	__global uint *e = hits + HIT_WORDS * h;

	e[0] = (uint)g;
	e[1] = o;
	e[2] = (uint)d;
	e[3] = (uint)w[0];
	e[4] = (uint)(w[0] >> 32);
	e[5] = (uint)w[1];
	e[6] = (uint)(w[1] >> 32);
	return o;
}

/* Align window G of WP (flags FLAGS) into RES, its ends into ROW when FLAGS asks. */
static void win_align(__global const uchar *reads, __global const uint *roff,
		__global const uchar *ref, __global const ulong *w, uint max_a, uint flags,
		__global ulong *ws, __global uchar *row, __global sp_align_res_t *res)
{
	uint rs = (uint)w[1], ro = roff[rs];

	sp_align_one(reads + ro, roff[rs + 1] - ro, ref, w[0] & DW_BEG, (uint)(w[1] >> 32), max_a,
			flags, 0, 0, ws, 1, row, res);
}

/*
 * align_ends: every window aligned with its ends row (FENDS, at g * STRIDE;
 * RES is scratch): a hit's row copied to CENDS.
 */
__kernel void align_ends(__global const uchar *reads, __global const uint *roff,
		__global const uchar *ref, __global const ulong *wp, ulong base, ulong n, uint max_a,
		uint flags, __global ulong *ws, ulong stride, __global uchar *fends,
		__global sp_align_res_t *res, __global uint *hits, __global uchar *cends,
		__global uint *cnt)
{
	ulong g = get_global_id(0);
	__global uchar *row;
	uint e, o, len;
	int d;

	if (g >= n)
		return;
	wp += 2 * (base + g);
	row = fends + g * stride;
	win_align(reads, roff, ref, wp, max_a, flags, ws, row, res + g);
	d = res[g].dist;
	if (d < 0)
		return;
	o = put_hit(hits, cnt, g, wp, d);
	len = (uint)(wp[1] >> 32);
	for (e = 0; e < len; e++)
		cends[o + e] = row[e];
}

/*
 * The same first pass scored first (Truong et al.: score every pair, trace
 * back only the survivors): align_score aligns each window without ends
 * rows (the distance alone decides whether the window has an end within
 * the bound) and gives a window with one its hit entry and its row's room;
 * align_rows then aligns only those windows again with SP_ALIGN_ENDS,
 * straight into their rows of CENDS.  It runs N work items (the host does
 * not wait for the count), those past CNT[1] idle.  No window's full row
 * is written, only the rows that go back.
 */
__kernel void align_score(__global const uchar *reads, __global const uint *roff,
		__global const uchar *ref, __global const ulong *wp, ulong base, ulong n, uint max_a,
		uint flags, __global ulong *ws, __global sp_align_res_t *res, __global uint *hits,
		__global uint *cnt)
{
	ulong g = get_global_id(0);
	int d;

	if (g >= n)
		return;
	wp += 2 * (base + g);
	win_align(reads, roff, ref, wp, max_a, flags & ~SP_ALIGN_ENDS, ws, 0, res + g);
	d = res[g].dist;
	if (d >= 0)
		put_hit(hits, cnt, g, wp, d);
}

__kernel void align_rows(__global const uchar *reads, __global const uint *roff,
		__global const uchar *ref, __global const ulong *wp, ulong base, ulong n, uint max_a,
		uint flags, __global ulong *ws, __global sp_align_res_t *res,
		__global const uint *hits, __global const uint *cnt, __global uchar *cends)
{
	ulong h = get_global_id(0);

	if (h >= n || h >= cnt[1])
		return;
	win_align(reads, roff, ref, wp + 2 * (base + hits[HIT_WORDS * h]), max_a, flags, ws,
			cends + hits[HIT_WORDS * h + 1], res + h);
}

/*
 * align_cut: extend's pass-1 windows cut on the device from the
 * candidates of a group of the batch's reads (r0 .. r0 + NR - 1), as the
 * host's ext_read_windows cuts them, one work item per candidate.  Read
 * R0 + q (m = ROFF[2r + 1] - ROFF[2r] bases; none outside 1 ..
 * SP_ALIGN_MAX_READ) has the candidates KEYS[COFF[q] - COFF[0] ..
 * COFF[q + 1] - COFF[0]) (KEYS holds the group's), each
 *
 *     strand << 63 | sequence << 40 | global position g
 *
 * in ascending order (the host sorts a list that is not).  A candidate's
 * span is [g - A, g + m + A) clipped to its sequence (SB[seq], SE[seq]:
 * its first base, one past its last); in that order both ends of the
 * spans of one strand and sequence only grow, so a span starts a merged
 * one where it is its read's first, or of another strand or sequence than
 * the one before, or starts past that one's end.  The work item of such a
 * head follows the spans that merge with it; a merged span too short to
 * hold the read within A is dropped, the others are cut into pieces of at
 * most CUT bases overlapping by m - 1 + A (every end column is exact in
 * some piece).  A work group's windows take a range of WP (layout above)
 * from an atomic count CNT[2] (a scan in local memory gives each head its
 * place), in any order; a place past CAP is left unwritten (the host sees
 * the count and cuts again with room).  CNT[3] and CNT[4] count the
 * windows' bases (low and high words).
 */
#define CUT_WG 256        /* the most work items of a group (ocl_run_q) */

/* Candidate key K's span for a read of M bases: *BEG, *END. */
static void cut_span(ulong k, uint m, uint a, __global const ulong *sb, __global const ulong *se,
		ulong *beg, ulong *end)
{
	ulong g = k & DW_BEG, s0 = sb[(k >> 40) & 0x7fffff], s1 = se[(k >> 40) & 0x7fffff];

	*beg = g >= s0 + a ? g - a : s0;
	*end = g + m + a < s1 ? g + m + a : s1;
}

__kernel void align_cut(__global const uint *roff, __global const ulong *keys,
		__global const uint *coff, ulong r0, ulong nr, uint max_a, uint win,
		__global const ulong *sb, __global const ulong *se, __global ulong *wp, ulong cap,
		__global uint *cnt)
{
	__local uint sc[CUT_WG];
	__local ulong sbases[CUT_WG];
	__local uint obase;
	uint lid = get_local_id(0), ls = get_local_size(0), nw = 0, m = 0, lo = 0, hi, incl, tw;
	ulong gi = get_global_id(0), kb = coff[0], nk = coff[nr] - coff[0], bases = 0, tb;
	ulong beg = 0, end = 0, cut = 0, step = 0, key = 0, p, e, w, r = 0;

	if (gi < nk) {
		/* the read: the last whose first candidate is at or before this one */
		hi = (uint)nr;
		while (hi - lo > 1) {
			uint mid = lo + (hi - lo) / 2;
			if (coff[mid] - kb <= gi)
				lo = mid;
			else
				hi = mid;
		}
		r = r0 + lo;
		m = roff[2 * r + 1] - roff[2 * r];
		key = keys[gi];
		if (m >= 1 && m <= SP_ALIGN_MAX_READ)
			cut_span(key, m, max_a, sb, se, &beg, &end);
		if (m >= 1 && m <= SP_ALIGN_MAX_READ && gi > coff[lo] - kb
				&& (keys[gi - 1] >> 40) == (key >> 40)) {
			ulong pb, pe;
			cut_span(keys[gi - 1], m, max_a, sb, se, &pb, &pe);
			if (beg <= pe)
				m = 0;      /* merged into the span before: no head */
		}
		if (m >= 1 && m <= SP_ALIGN_MAX_READ) {
			ulong j, last = coff[lo + 1] - kb;
			for (j = gi + 1; j < last && (keys[j] >> 40) == (key >> 40); j++) {
				ulong b2, e2;
				cut_span(keys[j], m, max_a, sb, se, &b2, &e2);
				if (b2 > end)
					break;
				if (e2 > end)
					end = e2;
			}
			if (m > max_a && end - beg + max_a < m)
				m = 0;      /* too short to hold the read within A */
		} else {
			m = 0;
		}
		if (m) {
			cut = m - 1 + max_a < win / 2 ? win : 4 * (m + max_a) < SP_ALIGN_MAX_WIN
				? 4 * (m + max_a) : SP_ALIGN_MAX_WIN;
			step = cut - (m - 1 + max_a);
			for (p = beg;; p += step) {
				e = p + cut < end ? p + cut : end;
				nw++;
				bases += e - p;
				if (e == end)
					break;
			}
		}
	}
	/* the group's places: an inclusive scan of the counts, one atomic */
	tw = sp_group_scan2(sc, sbases, nw, bases, &incl, &tb);
	if (lid == ls - 1) {
		uint old, l32 = (uint)tb;
		obase = tw ? atomic_add(cnt + 2, tw) : 0;
		if (tb) {
			old = atomic_add(cnt + 3, l32);
			atomic_add(cnt + 4, (uint)(tb >> 32) + (old + l32 < old));
		}
	}
	barrier(CLK_LOCAL_MEM_FENCE);
	if (!nw)
		return;
	w = (ulong)obase + incl - nw;
	if (w + nw > cap)
		return;
	for (p = beg;; p += step) {
		e = p + cut < end ? p + cut : end;
		wp[2 * w] = (key >> 40 & 0x7fffff) << 40 | p;
		wp[2 * w + 1] = (e - p) << 32 | (2 * r + (uint)(key >> 63));
		w++;
		if (e == end)
			break;
	}
}

/*
 * align_keys: the candidate keys of align_cut decoded on the device from
 * the candidate lists as the stream holds them (extend's ext_read_keys on
 * the host), one work item per read: read q = RIX[FIRST + i] for i < NR
 * (the short lists: common/align_keys.c bins the reads by their lists'
 * bytes; align_keys_wg takes the long ones).  Read q's list is
 * LIST[LOFF[2q] .. LOFF[2q + 1]) and has COFF[q + 1] - COFF[q] entries;
 * its keys go to KEYS[COFF[q] - COFF[0] ..), the forward strand's first,
 * then the reverse strand's, each in the list's order, decoded and checked
 * by sp_keys_read (kernels/inc_keys.h, the host's decoding too) against
 * the index (PB: the partitions' first bases and ends, 2 words each,
 * N_PART; SB, SE: the sequences', N_SEQ) and the reference (REF_BASES).  A
 * read whose list is malformed, points outside the index or the reference,
 * or is not in ascending order on a strand is flagged instead: its index
 * goes to FLAG at a place from the count CNT[5], and the host decodes it
 * (its message, its sort) and writes its keys.
 */
__kernel void align_keys(__global const uchar *list, __global const uint *loff,
		__global const uint *coff, __global const uint *rix, uint first, uint nr,
		__global const ulong *pb, uint n_part, __global const ulong *sb,
		__global const ulong *se, uint n_seq, ulong ref_bases, __global ulong *keys,
		__global uint *flag, __global uint *cnt)
{
	uint i = (uint)get_global_id(0), q, nf = 0, n, bad[3];
	__global ulong *k;

	if (i >= nr)
		return;
	q = rix[first + i];
	n = coff[q + 1] - coff[q];
	k = keys + (coff[q] - coff[0]);
	if (sp_keys_read(list, loff[2 * q], loff[2 * q + 1], n, pb, n_part, sb, se, n_seq,
				ref_bases, k, &nf, 0, bad) != KEYS_OK
			|| sp_keys_read(list, loff[2 * q], loff[2 * q + 1], n, pb, n_part, sb, se, n_seq,
				ref_bases, k, &nf, 1, bad) != KEYS_OK)
		flag[atomic_inc(&cnt[5])] = q;
}

#define KW_PER 4u   /* bytes, and varints, a lane of align_keys_wg */

/*
 * align_keys_wg: align_keys for the long lists, a work-group a read (read
 * q = RIX[FIRST + group]), so that a list of thousands of entries takes
 * its bytes / (4 x the group's size) steps, not one work item thousands
 * of steps while its warp and batch wait.  The list is taken a tile of
 * KW_PER bytes a lane at a time (inc_keys.h: the parallel decoding): a
 * prefix sum of the varint ends numbers the tile's varints (VEND: their
 * last bytes); each lane decodes its KW_PER varints and composes their
 * maps; a scan of the maps gives each varint's state (XV, RV: values and
 * states, after the previous tile's last three); then one scan of three
 * values over the entries' last varints: the entries and the forward ones
 * before each (their places: forward keys from KEYS[0], reverse ones from
 * the end backwards), and a segmented sum of the positions from the last
 * reset (its slot, a max).  What a tile leaves to the next (the varint in
 * progress, the state, counts, the last reset) is in every lane's
 * registers.  At the end the reverse keys are turned round and each strand
 * checked for order; a list that fails any check is flagged as
 * align_keys flags it.  LM: local memory, 80 x the group's size + 52 bytes.
 */
__kernel void align_keys_wg(__global const uchar *list, __global const uint *loff,
		__global const uint *coff, __global const uint *rix, uint first, uint nr,
		__global const ulong *pb, uint n_part, __global const ulong *sb,
		__global const ulong *se, uint n_seq, ulong ref_bases, __global ulong *keys,
		__global uint *fix, __local ulong *lm)
{
	uint lid = (uint)get_local_id(0), wg = (uint)get_local_size(0), tile = KW_PER * wg;
	__local ulong *xv = lm, *sl = lm + tile + 3u;
	__local uint *vend = (__local uint *)(sl + wg), *su = vend + tile, *rv = su + wg;
	__local uint *cm = rv + tile + 3u;
	__local int *si = (__local int *)(cm + 4);
	uint q, end, n, t, k, j, st, cst, state = 0u, ne = 0u, nfw = 0u, have = 0u, bad, stop;
	ulong rpos = 0u, rd = 0u, ry = 0u;
	__global ulong *kp;

	(void)nr;   /* NR groups exactly: no early return, which PoCL 3 miscompiles before a barrier */
	q = rix[first + (uint)get_group_id(0)];
	cst = loff[2 * q];
	end = loff[2 * q + 1];
	n = coff[q + 1] - coff[q];
	kp = keys + (coff[q] - coff[0]);
	if (lid < 3u)
		xv[lid] = 0u;
	if (lid == 0u)
		cm[0] = 0u;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (t = cst, stop = 0u; t < end; t = stop ? end : t + tile) {
		uint b0 = t + KW_PER * lid, em = 0u, ec = 0u, o, nv, fm = KEYS_MAP_ID, v, s;
		uint lc = 0u, st_end;
		ulong x[KW_PER], ls = 0u, pos, d, y, g;
		int lr = -1, r;

		bad = 0u;
		for (k = 0u; k < KW_PER; k++)         /* the varints' ends */
			if (b0 + k < end && list[b0 + k] < 0x80u) {
				em |= 1u << k;
				ec++;
			}
		nv = sp_group_scan(su, ec, &o);
		o -= ec;
		for (k = 0u; k < KW_PER; k++)
			if (em >> k & 1u)
				vend[o++] = b0 + k;
		barrier(CLK_LOCAL_MEM_FENCE);
		for (k = 0u; k < KW_PER; k++) {       /* this lane's varints and their maps */
			j = KW_PER * lid + k;
			x[k] = 0u;
			if (j < nv) {
				uint b = j ? vend[j - 1u] + 1u : cst, e = vend[j], i;
				if (e - b >= KEYS_VAR_MAX)
					bad = 1u;
				else
					for (i = b; i <= e; i++)
						x[k] |= (ulong)(list[i] & 0x7fu) << (7u * (i - b));
				fm = sp_keys_then(fm, sp_keys_map(x[k]));
			}
		}
		su[lid] = fm;
		barrier(CLK_LOCAL_MEM_FENCE);
		for (st = 1u; st < wg; st <<= 1) {
			v = lid >= st ? su[lid - st] : KEYS_MAP_ID;
			barrier(CLK_LOCAL_MEM_FENCE);
			su[lid] = sp_keys_then(v, su[lid]);
			barrier(CLK_LOCAL_MEM_FENCE);
		}
		s = lid ? sp_keys_at(su[lid - 1u], state) : state;
		st_end = sp_keys_at(su[wg - 1u], state);
		for (k = 0u; k < KW_PER; k++) {       /* each varint's state */
			j = KW_PER * lid + k;
			if (j < nv) {
				if (x[k] >> KEYS_BITS(s))
					bad = 1u;
				xv[3u + j] = x[k];
				rv[3u + j] = s;
				s = sp_keys_at(sp_keys_map(x[k]), s);
			}
		}
		barrier(CLK_LOCAL_MEM_FENCE);
		for (k = 0u; k < KW_PER; k++) {       /* the entries this lane's varints end */
			j = KW_PER * lid + k;
			s = j < nv ? rv[3u + j] : 0u;
			if (s == 3u || s == 4u) {
				lc += 1u | (uint)(~xv[3u + j - (s == 3u ? 3u : 1u)] >> 1 & 1u) << 16;
				if (s == 3u) {
					lr = (int)j;
					ls = x[k];
				} else {
					ls += x[k];
				}
			}
		}
		su[lid] = lc;
		sl[lid] = ls;
		si[lid] = lr;
		barrier(CLK_LOCAL_MEM_FENCE);
		for (st = 1u; st < wg; st <<= 1) {
			uint a = 0u;
			ulong b = 0u;
			int c = -1;
			if (lid >= st) {
				a = su[lid - st];
				b = sl[lid - st];
				c = si[lid - st];
			}
			barrier(CLK_LOCAL_MEM_FENCE);
			su[lid] += a;
			if (si[lid] < 0)
				sl[lid] += b;
			si[lid] = max(si[lid], c);
			barrier(CLK_LOCAL_MEM_FENCE);
		}
		/* the entries before this lane's, and their segment */
		o = ne + (lid ? su[lid - 1u] & 0xffffu : 0u);
		v = nfw + (lid ? su[lid - 1u] >> 16 : 0u);
		r = lid ? si[lid - 1u] : -1;
		if (r >= 0) {
			pos = sl[lid - 1u];
			d = xv[3u + (uint)r - 2u];
			y = xv[3u + (uint)r - 1u];
			s = 1u;
		} else {
			pos = rpos + (lid ? sl[lid - 1u] : 0u);
			d = rd;
			y = ry;
			s = have;
		}
		for (k = 0u; k < KW_PER; k++) {
			uint rs, strand;
			j = KW_PER * lid + k;
			rs = j < nv ? rv[3u + j] : 0u;
			if (rs != 3u && rs != 4u)
				continue;
			strand = (uint)(xv[3u + j - (rs == 3u ? 3u : 1u)] >> 1 & 1u);
			if (rs == 3u) {
				d = xv[3u + j - 2u];
				y = xv[3u + j - 1u];
				pos = x[k];
				s = 1u;
			} else {
				pos += x[k];
			}
			if (!s || o >= n || !sp_keys_ok(d, y, pos, pb, n_part, sb, se, n_seq, ref_bases,
						&g))
				bad = 1u;
			else if (strand)
				kp[n - 1u - (o - v)] = (ulong)1u << 63 | y << 40 | g;
			else
				kp[v] = y << 40 | g;
			v += !strand;
			o++;
		}
		/* what the next tile takes over */
		ne += su[wg - 1u] & 0xffffu;
		nfw += su[wg - 1u] >> 16;
		r = si[wg - 1u];
		if (r >= 0) {
			rd = xv[3u + (uint)r - 2u];
			ry = xv[3u + (uint)r - 1u];
			rpos = sl[wg - 1u];
			have = 1u;
		} else {
			rpos += sl[wg - 1u];
		}
		state = st_end;
		if (nv)
			cst = vend[nv - 1u] + 1u;
		g = lid < 3u ? xv[nv + lid] : 0u;
		if (bad)
			cm[0] = 1u;
		barrier(CLK_LOCAL_MEM_FENCE);
		if (lid < 3u)
			xv[lid] = g;
		stop = cm[0];
	}
	if (lid == 0u)   /* align_keys_fix turns the reverse keys round, checks the order */
		fix[get_group_id(0)] = cm[0] || cst != end || state || ne != n || nfw > n ? ~0u : nfw;
}

/*
 * align_keys_fix: align_keys_wg's second step, a work-group a read as
 * there: FIX[group] is the read's forward keys, or ~0 for a list that
 * failed a check; the reverse keys, written from the end backwards, are
 * turned round, then each strand checked for ascending order, and a read
 * that failed is flagged as align_keys flags it.
 */
__kernel void align_keys_fix(__global const uint *coff, __global const uint *rix, uint first,
		uint nr, __global const uint *fix, __global ulong *keys, __global uint *flag,
		__global uint *cnt, __local uint *lm)
{
	uint lid = (uint)get_local_id(0), wg = (uint)get_local_size(0), q, n, nf, j, h, bad;
	__global ulong *kp;

	(void)nr;   /* NR groups exactly, as align_keys_wg */
	q = rix[first + (uint)get_group_id(0)];
	n = coff[q + 1] - coff[q];
	kp = keys + (coff[q] - coff[0]);
	nf = fix[get_group_id(0)];
	bad = nf > n;
	h = bad ? 0u : (n - nf) / 2u;
	for (j = lid; j < h; j += wg) {
		ulong a = kp[nf + j];
		kp[nf + j] = kp[n - 1u - j];
		kp[n - 1u - j] = a;
	}
	if (lid == 0u)
		lm[0] = 0u;
	barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
	for (j = lid + 1u; !bad && j < n; j += wg)
		if (j != nf && kp[j] < kp[j - 1u])
			lm[0] = 1u;
	barrier(CLK_LOCAL_MEM_FENCE);
	if (lid == 0u && (bad || lm[0]))
		flag[atomic_inc(&cnt[5])] = q;
}
