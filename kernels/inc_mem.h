/*
 * inc_mem.h - maximal exact matches (seedfilt -m mem) on the FM-index of
 * one partition (common/fm.h), shared by the CPU code (common/mem.c) and
 * the OpenCL kernel (kernels/mem.cl).
 *
 * What is found here: the "FM-MEMs" of a read strand q (m bases, N read as
 * A) against the partition text T (its bases, N stored as A, sequences
 * joined without a separator): triples (i, p, len) with q[i..i+len) =
 * T[p..p+len), i = 0 or p = 0 or q[i-1] != T[p-1], i+len = m or p+len = n
 * or q[i+len] != T[p+len], and len >= L.  The host (common/mem.c) cuts them
 * at N and at sequence ends into the true matches.
 *
 * Sampled windows: with a window of w <= L bases and a step s = L - w + 1,
 * every match of L bases or more holds the window at k = the first multiple
 * of s at or after its start i (k - i < s, and k + w <= i + L).  So each
 * window k = 0, s, 2s, ... (k + w <= m) is searched backwards (the last K
 * bases through a table of the BWT rows of every K-mer, then one base per
 * step), and its rows are extended to the left one base at a time for at
 * most s steps: a row whose BWT letter differs from the next read base (or
 * that is the '$' row, or that reaches the read's start) is an occurrence
 * whose match starts here, at i = k - t + 1 > k - s: it is reported by this
 * window and no other.  The rows that survive s steps start at or before
 * k - s, and an earlier window reports them.  A reported row is located
 * (sampled suffix array) and extended to the right by comparing 32 bases
 * at a time with the packed text.
 *
 * The occurrence blocks are read as inc_fm.h says (sp_fm_occ).
 * Long runs of N.  The text stores N as A, so a window of A's has every
 * position of every long N run in its rows (millions on a human
 * chromosome), and each of them would be located and thrown away.  The
 * rows of A^MEM_DEEP, [ylo, yhi), are all the positions p whose next
 * MEM_DEEP text bases are A or N; p is "deep" when [p - MEM_DEEP,
 * p + MEM_DEEP) lies inside one run of N.  A strand of at most MEM_DEEP
 * bases with fewer than L N's (or any strand under -n) can have no match
 * there: its FM-MEM through a deep row lies inside the run of N, where only
 * the strand's own N's match.  So for such a strand a window of A's takes
 * the rows [lo, ylo) and [yhi, hi) as ranges and, of [ylo, yhi), only the
 * few shallow (not deep) rows, one by one (SHAL, built by the host).
 *
 * Packed sequences (text and reads) are u32 words, base j at bits
 * 2(j%16) of word j/16, with two spare words after the last base.
 *
 * The search (mem_strand and its helpers) is compiled when the includer
 * defines MEM_SINK_T (the type of the last argument of mem_strand) and
 * MEM_EMIT(sink, i, p, len) before including this header (the first time
 * or a second time); without them only the view and the index functions
 * are (the host's uploads need them).
 */
#ifndef SP_INC_MEM_H
#define SP_INC_MEM_H

#include "inc_fm.h"

#define MEM_K_MAX 12u            /* longest K-mer of the jump table */
#define MEM_DEEP 512u            /* reads up to this long may skip deep N rows */

/* MEM_CTZ64: trailing zeros of a non-zero X. */
#ifdef __OPENCL_VERSION__
#define MEM_CTZ64(x) SP_FM_POPC64(((x) & (~(x) + 1UL)) - 1UL)
#else
#define MEM_CTZ64(x) ((uint)__builtin_ctzll(x))
#endif

/** One partition's FM-index as the search sees it. */
typedef struct {
	SP_GLOBAL const uint *occ;    /* 8 u32 per 64 rows */
	SP_GLOBAL const ulong *mark;  /* fm.mark: marked-row bits, rank; per 64 rows */
	SP_GLOBAL const uint *sa;     /* fm.sa */
	SP_GLOBAL const uint *jump;   /* 2 u32 (lo, hi) per K-mer, first base lowest */
	SP_GLOBAL const uint *text;   /* packed words; text base t is word base t + tsh */
	SP_GLOBAL const uint *shal;   /* the shallow rows of [ylo, yhi), ascending */
	ulong n, primary;
	ulong c0, c1, c2, c3;         /* fm C[0..3] */
	ulong ylo, yhi;               /* rows of A^MEM_DEEP (ylo = yhi: none) */
	uint nshal;
	uint k;                       /* K-mer length of the jump table, 0: none */
	uint tsh;                     /* 0..15 */
} mem_fm_t;

/*
 * F on the FM-index OCC of N rows besides '$' (PRIMARY: the '$' row; C[] =
 * C0..C3) and nothing else: no marks, samples, jump table, text or deep
 * rows, for the caller to set what its search reads.
 */
SP_FN void mem_fm_init(mem_fm_t *f, SP_GLOBAL const uint *occ, ulong n, ulong primary,
		ulong c0, ulong c1, ulong c2, ulong c3)
{
	const mem_fm_t v = { .occ = occ, .n = n, .primary = primary, .c0 = c0, .c1 = c1, .c2 = c2,
		.c3 = c3 };

	*f = v;
}

SP_FN ulong mem_cval(const mem_fm_t *f, uint c)
{
	return c == 0u ? f->c0 : c == 1u ? f->c1 : c == 2u ? f->c2 : f->c3;
}

/* The code word HW of block B (sp_fm_bwords). */
SP_FN ulong mem_bwords(const mem_fm_t *f, ulong b, uint hw)
{
	return sp_fm_bwords(f->occ, b, hw);
}

/* Occurrences of code C in BWT rows [0, I). */
SP_FN ulong mem_occ(const mem_fm_t *f, uint c, ulong i)
{
	return sp_fm_occ(f->occ, f->primary, c, i);
}

/* BWT code of ROW (0 for the '$' row). */
SP_FN uint mem_bwt(const mem_fm_t *f, ulong row)
{
	uint k = (uint)(row & 63UL);

	return (uint)(mem_bwords(f, row >> 6, k >> 5) >> (2u * (k & 31u))) & 3u;
}

/* Text position of the suffix of ROW (sampled suffix array, LF steps). */
SP_FN ulong mem_locate(const mem_fm_t *f, ulong row)
{
	ulong steps = 0;

	for (;;) {
		ulong bits = f->mark[2UL * (row >> 6)];
		uint k = (uint)(row & 63UL);
		uint c;

		if ((bits >> k) & 1UL) {
			ulong rank = f->mark[2UL * (row >> 6) + 1UL]
				+ SP_FM_POPC64(bits & ((1UL << k) - 1UL));
			return (ulong)f->sa[rank] + steps;
		}
		c = mem_bwt(f, row);
		row = mem_cval(f, c) + mem_occ(f, c, row);
		steps++;
	}
}

/* 32 bases of packed words W from base POS on (base POS in the low bits). */
SP_FN ulong mem_word(SP_GLOBAL const uint *w, ulong pos)
{
	ulong j = pos >> 4, x = (ulong)w[j] | (ulong)w[j + 1UL] << 32;
	uint sh = 2u * (uint)(pos & 15UL);

	if (sh)
		x = x >> sh | (ulong)w[j + 2UL] << (64u - sh);
	return x;
}

/* Base POS of packed words W. */
SP_FN uint mem_base(SP_GLOBAL const uint *w, ulong pos)
{
	return (w[pos >> 4] >> (2u * (uint)(pos & 15UL))) & 3u;
}

/*
 * Bases that match from read base A (of RLEN) and text base T (of the
 * partition's N) on, at most min(RLEN - A, N - T).
 */
SP_FN uint mem_ext(const mem_fm_t *f, SP_GLOBAL const uint *rw, uint a, uint rlen, ulong t)
{
	ulong lim = f->n - t, e = 0;

	if ((ulong)(rlen - a) < lim)
		lim = rlen - a;
	while (e < lim) {
		ulong x = mem_word(rw, a + e) ^ mem_word(f->text, t + e + f->tsh);

		if (x) {
			e += MEM_CTZ64(x) >> 1;
			break;
		}
		e += 32UL;
	}
	return (uint)(e < lim ? e : lim);
}

#endif

/*
 * The search: included again after defining MEM_EMIT (or MEM_ROW) when the
 * first include had none.
 */
#if (defined(MEM_EMIT) || defined(MEM_ROW)) && !defined(SP_INC_MEM_SEARCH)
#define SP_INC_MEM_SEARCH
/* The includer may locate through a cache of its own: MEM_LOCATE(f, sink, row). */
#ifndef MEM_LOCATE
#define MEM_LOCATE(f, sink, row) mem_locate((f), (row))
#endif
#define MEM_KNOWN 8u             /* matches of a strand remembered for the skip */

/* The strand being searched and the matches it has given so far. */
typedef struct mem_q {
	SP_GLOBAL const uint *rw;     /* packed strand */
	uint rlen, w, s, lmin;
	uint deep;                    /* the strand may skip the deep rows */
	uint nk;                      /* matches emitted (the first MEM_KNOWN kept) */
	uint ki[MEM_KNOWN], ke[MEM_KNOWN];  /* their read starts and ends */
	MEM_SINK_T sink;
} mem_q_t;

/*
 * Row ROW holds an occurrence of the read's bases [I, E) (E = k + w): locate
 * it, extend it to the right and emit it when it is lmin bases or longer.
 * An includer that defines MEM_ROW(f, q, row, i, e) takes the rows itself
 * (the device locates them in a second kernel); the skip of mem_window
 * then never happens (no match is known), which changes no output.  It
 * may also define MEM_ROWS_AHEAD(sink, n): told before each run of n rows
 * (up to 32) that mem_drop gives in a row.
 */
#ifndef MEM_ROW
#define MEM_ROW(f, q, row, i, e) mem_report((f), (q), (row), (i), (e))
SP_FN void mem_report(const mem_fm_t *f, mem_q_t *q, ulong row, uint i, uint e)
{
	ulong p = MEM_LOCATE(f, q->sink, row);
	uint len = e - i + mem_ext(f, q->rw, e, q->rlen, p + (e - i));

	if (len >= q->lmin) {
		MEM_EMIT(q->sink, i, p, len);
		if (q->nk < MEM_KNOWN) {
			q->ki[q->nk] = i;
			q->ke[q->nk] = i + len;
		}
		q->nk++;
	}
}
#endif

/*
 * The rows of half-block R0 (32 rows from R0 on) that mem_drop reports:
 * bit 2j set for row R0 + j in [LO, HI) whose code differs from C (the
 * code words W), every row there when C > 3, and the '$' row.
 */
SP_FN ulong mem_drop_bits(const mem_fm_t *f, ulong w, ulong r0, ulong lo, ulong hi, uint c)
{
	ulong x, y;

	if (c > 3u) {
		y = SP_FM_M55;
	} else {
		x = ~(w ^ ((ulong)c * SP_FM_M55));
		y = ~(x & (x >> 1)) & SP_FM_M55;   /* bit 2j: code of row r0+j != c */
		if (c == 0u && f->primary >= r0 && f->primary < r0 + 32UL)
			y |= 1UL << (2u * (uint)(f->primary - r0));
	}
	if (lo > r0)
		y &= ~0UL << (2u * (uint)(lo - r0));
	if (hi < r0 + 32UL)
		y &= (1UL << (2u * (uint)(hi - r0))) - 1UL;
	return y;
}

/* Report rows R0 + j for the bits 2j of Y (mem_drop). */
SP_FN void mem_drop_emit(const mem_fm_t *f, mem_q_t *q, ulong y, ulong r0, uint i, uint e)
{
	(void)f;        /* (an includer's MEM_ROW may not need it) */
#ifdef MEM_ROWS_AHEAD
	if (y)          /* the includer learns how many rows follow */
		MEM_ROWS_AHEAD((q)->sink, SP_FM_POPC64(y));
#endif
	while (y) {
		ulong row = r0 + (MEM_CTZ64(y) >> 1);

		y &= y - 1UL;
		MEM_ROW(f, q, row, i, e);
	}
}

/*
 * Report the rows of [LO, HI) whose BWT code differs from C (every row
 * when C > 3), the '$' row included, as matches starting at read base I,
 * in row order.  A work item of the device scans a wide range (a window
 * of a repeat: thousands of rows, at every left step) alone: its code
 * words are loaded eight half-blocks ahead of their use, so that
 * eight loads are in flight instead of one (the item waited for each).
 */
#if defined(__OPENCL_VERSION__) && !defined(MEM_DROP_SERIAL)   /* (-DMEM_DROP_SERIAL: measurements) */
#define MEM_HB_WORDS(f, hb) (((SP_GLOBAL const ulong *)(f)->occ)[4UL * ((hb) >> 1) + 2UL + ((hb) & 1UL)])
#define MEM_HB_LOAD(k) (c <= 3u && hb + (k) <= hb1 ? MEM_HB_WORDS(f, hb + (k)) : 0UL)
SP_FN void mem_drop(const mem_fm_t *f, mem_q_t *q, ulong lo, ulong hi, uint c, uint i,
		uint e)
{
	ulong hb = lo >> 5, hb1 = (hi - 1UL) >> 5;
	/* (the device is little-endian: a u64 holds the two u32 code words of a half-block) */
	ulong w0 = MEM_HB_LOAD(0), w1 = MEM_HB_LOAD(1), w2 = MEM_HB_LOAD(2), w3 = MEM_HB_LOAD(3);
	ulong w4 = MEM_HB_LOAD(4), w5 = MEM_HB_LOAD(5), w6 = MEM_HB_LOAD(6), w7 = MEM_HB_LOAD(7);

	for (; hb <= hb1; hb++) {
		ulong w = w0;

		w0 = w1;
		w1 = w2;
		w2 = w3;
		w3 = w4;
		w4 = w5;
		w5 = w6;
		w6 = w7;
		w7 = MEM_HB_LOAD(8);
		mem_drop_emit(f, q, mem_drop_bits(f, w, hb << 5, lo, hi, c), hb << 5, i, e);
	}
}
#else
SP_FN void mem_drop(const mem_fm_t *f, mem_q_t *q, ulong lo, ulong hi, uint c, uint i,
		uint e)
{
	ulong b;

	for (b = lo >> 6; (b << 6) < hi; b++) {
		uint h;

		for (h = 0; h < 2u; h++) {
			ulong r0 = (b << 6) + 32UL * h;

			if (r0 + 32UL <= lo || r0 >= hi)
				continue;
			mem_drop_emit(f, q, mem_drop_bits(f, c > 3u ? 0UL : mem_bwords(f, b, h), r0, lo, hi,
						c), r0, i, e);
		}
	}
}
#endif

/* The left steps of rows [LO, HI) of window K (see mem_window); returns the steps. */
SP_FN uint mem_left(const mem_fm_t *f, mem_q_t *q, uint k, ulong lo, ulong hi)
{
	uint t, steps = 0;
	ulong nlo, nhi;

	for (t = 1; t <= q->s && lo < hi; t++) {
		uint i = k + 1u - t, c;

		if (i == 0u) {
			mem_drop(f, q, lo, hi, 4u, 0u, k + q->w);
			break;
		}
		c = mem_base(q->rw, i - 1u);
		nlo = mem_cval(f, c) + mem_occ(f, c, lo);
		nhi = mem_cval(f, c) + mem_occ(f, c, hi);
		if (nhi - nlo != hi - lo)   /* else every row goes on: none to scan for */
			mem_drop(f, q, lo, hi, c, i, k + q->w);
		lo = nlo;
		hi = nhi;
		steps++;
	}
	return steps;
}

/*
 * The left steps of the single shallow row R of window K (mem_left on
 * [R, R + 1), which reports the row at most once): 1 when it drops out,
 * with its read start in *I and its row then in *ROW; 0 when it survives s
 * steps.  *STEPS gets the backward steps taken.
 */
SP_FN uint mem_shal_row(const mem_fm_t *f, const mem_q_t *q, uint k, ulong r, uint *i, ulong *row,
		uint *steps)
{
	uint t;

	*steps = 0u;
	for (t = 1u; t <= q->s; t++) {
		uint c;
		ulong nlo;

		*i = k + 1u - t;
		*row = r;
		if (*i == 0u)
			return 1u;
		c = mem_base(q->rw, *i - 1u);
		nlo = mem_cval(f, c) + mem_occ(f, c, r);
		(*steps)++;
		if (mem_cval(f, c) + mem_occ(f, c, r + 1UL) == nlo)   /* its code is not C */
			return 1u;
		r = nlo;
	}
	return 0u;
}

/*
 * Window K of the strand: emit every match of at least lmin bases that
 * holds it and starts after K - s (see the top of this file).  The left
 * steps are skipped when the matches already emitted account for every
 * row: each one that starts at or before K - s and ends at or after K + w
 * is a distinct occurrence of the window that survives s steps, so when
 * there are as many as rows, no row drops out.  A window whose rows hold
 * the rows of A^MEM_DEEP leaves out the deep ones when the strand may.
 * Returns the number of backward steps taken.
 */
SP_FN uint mem_win_rest(const mem_fm_t *f, mem_q_t *q, uint k, ulong lo, ulong hi);

SP_FN uint mem_window(const mem_fm_t *f, mem_q_t *q, uint k)
{
	ulong lo = 0, hi = f->n + 1UL;
	uint w = q->w, j = k + w, steps = 0;

	if (f->k && w >= f->k) {
		ulong code = mem_word(q->rw, k + w - f->k) & ((1UL << (2u * f->k)) - 1UL);

		lo = f->jump[2UL * code];
		hi = f->jump[2UL * code + 1UL];
		j = k + w - f->k;
	}
	while (j > k && lo < hi) {
		uint c = mem_base(q->rw, --j);

		lo = mem_cval(f, c) + mem_occ(f, c, lo);
		hi = mem_cval(f, c) + mem_occ(f, c, hi);
		steps++;
	}
	if (lo >= hi)
		return steps;
	return steps + mem_win_rest(f, q, k, lo, hi);
}

/* Window K after its backward search: its rows [LO, HI) (not empty) to the left (mem_window). */
SP_FN uint mem_win_rest(const mem_fm_t *f, mem_q_t *q, uint k, ulong lo, ulong hi)
{
	uint w = q->w, t, steps = 0, cov = 0;

	if (q->deep && f->ylo < f->yhi && lo <= f->ylo && f->yhi <= hi) {
		uint a = 0, b = f->nshal;

#ifdef MEM_DEEP_DEFER
		/* the includer may take the whole window elsewhere (its rows beside the deep ones many) */
		if (MEM_DEEP_DEFER(q->sink, k, lo, hi, f->ylo, f->yhi))
			return steps;
#endif
		steps += mem_left(f, q, k, lo, f->ylo);
		steps += mem_left(f, q, k, f->yhi, hi);
#ifdef MEM_SHAL_DEFER
		/* the includer may take the shallow rows, the window's last, elsewhere (in parallel) */
		if (MEM_SHAL_DEFER(q->sink, k, b))
			return steps;
#endif
		while (a < b) {         /* the shallow rows are all in [ylo, yhi) */
			uint i, n;
			ulong row;

			if (mem_shal_row(f, q, k, f->shal[a], &i, &row, &n)) {
#ifdef MEM_ROWS_AHEAD
				MEM_ROWS_AHEAD(q->sink, 1u);
#endif
				MEM_ROW(f, q, row, i, k + w);
			}
			steps += n;
			a++;
		}
		return steps;
	}
	for (t = 0; t < q->nk && t < MEM_KNOWN; t++)
		cov += q->ki[t] + q->s <= k && q->ke[t] >= k + w;
	if ((ulong)cov >= hi - lo)
		return steps;
#ifdef MEM_WIDE_DEFER
	/* the includer may take a wide range's left steps elsewhere (by many lanes at once) */
	if (MEM_WIDE_DEFER(q->sink, k, lo, hi))
		return steps;
#endif
	return steps + mem_left(f, q, k, lo, hi);
}

/*
 * Every window of strand RW (RLEN bases) in order, with window W and step
 * S: emit its FM-MEMs of at least LMIN bases to SINK.  DEEP: the strand may
 * leave out the deep rows of long N runs (see the top of this file; the
 * caller checks the condition).  Returns the number of backward steps;
 * *NWIN gets the number of windows.
 */
SP_FN void mem_q_init(mem_q_t *q, SP_GLOBAL const uint *rw, uint rlen, uint w, uint s,
		uint lmin, uint deep, MEM_SINK_T sink)
{
	const mem_q_t v = { .rw = rw, .rlen = rlen, .w = w, .s = s, .lmin = lmin, .deep = deep,
		.sink = sink };   /* no match known yet (nk 0) */

	*q = v;
}

SP_FN uint mem_strand(const mem_fm_t *f, SP_GLOBAL const uint *rw, uint rlen, uint w, uint s,
		uint lmin, uint deep, MEM_SINK_T sink, uint *nwin)
{
	mem_q_t q;
	uint k, steps = 0;

	mem_q_init(&q, rw, rlen, w, s, lmin, deep, sink);
	*nwin = 0;
	if (rlen < lmin)
		return 0;
	for (k = 0; k + w <= rlen; k += s) {
		steps += mem_window(f, &q, k);
#ifdef MEM_WINDOW_END
		MEM_WINDOW_END(f, &q);   /* an includer that takes the rows reports them here */
#endif
		(*nwin)++;
	}
	return steps;
}
#endif

