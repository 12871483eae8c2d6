/*
 * align_pre.h - the internals of the alignment prefilter, shared by the
 * files of the alignment core (not a public interface): the band's layout,
 * a thread's prefilter state, the small helpers every pass uses, and the
 * entry points of align_pre.c (the prefilter's decisions, scalar and by
 * shape) and align_avx512.c (the vector passes), which align.c calls.
 * The calls go one way: align.c -> align_pre.c -> align_avx512.c.
 */
#ifndef SP_ALIGN_PRE_H
#define SP_ALIGN_PRE_H

#include <stdlib.h>
#include <string.h>

#include "align.h"
#include "sp_bits.h"
#include "util.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define ALIGN_PRE_X86 1   /* the vector pass is built (align_avx512.c) */
#endif

#define ALIGN_CHUNK 256   /* pairs a thread takes at a time */

/*
 * Prefetch the cache line of P.  On x86-64 an asm statement: GCC 12 at -O2
 * drops a __builtin_prefetch here (its mod-ref analysis sees no use).
 */
static inline void prefetch(const void *p)
{
#if defined(__GNUC__) && defined(__x86_64__)
	__asm__ volatile("prefetcht0 %0" : : "m"(*(const char *)p));
#else
	__builtin_prefetch(p);
#endif
}

/* Prefetch the LEN (>= 1) bytes at P, at most 256 of them. */
static inline void prefetch_range(const uint8_t *p, size_t len)
{
	size_t o;

	for (o = 0; o < len && o < 256; o += 64)
		prefetch(p + o);
	prefetch(p + (len - 1 < 256 ? len - 1 : 256));
}

/* --- the prefilter ------------------------------------------------------------
 *
 * A gapped pass-1 pair (ALIGN_ENDS) asks for the end columns within A; most
 * windows have none, and for those the core's output is fixed (no hit,
 * every end ALIGN_END_NONE).  The prefilter decides which windows have one,
 * exactly, and only those go to the core.
 *
 * Band.  An alignment of the read (m rows) within A edits that ends in the
 * window (n columns) starts on a diagonal d = column - row >= 0 and strays
 * at most A from it, and ends on one <= n - m, so it lies within diagonals
 * -A .. DMAX = n - m + A.  The DP restricted to 64 diagonals DMAX - 63 ..
 * DMAX (all of them when DMAX + A + 1 <= 64; the extra ones below do no
 * harm) is one word per column (Hyyro's banded Myers): bit k of column j is
 * row r_t + k, r_t = j - DMAX, so the band slides down a row per column.
 * Cells outside the band are replaced by path costs (the row below the
 * band by +1 from its upper neighbour, the cell above the top by +1 from
 * its left neighbour), so every value is the cost of a real alignment, at
 * least the true one, and at most the band-restricted one: exact where
 * the true value is <= A.  Rows <= 0 are virtual rows of value 0 that match
 * every base (the free start), so the top needs no special case but its
 * horizontal input: 0 while r_t <= 1 (row 0 is 0), else +1.
 *
 * Match bits.  For code c the extended read X_c has bit t = row + DMAX:
 *
 *     t:     0 .. DMAX          DMAX+1 .. DMAX+m        DMAX+m+1 ..
 *     X_c:   1 (rows <= 0)      read base (row - 1) == c 0 (past the read)
 *
 * so column j's match bits are bits j .. j + 63 of X_c (a funnel shift of
 * two words), the read's N matching nothing as in sp_align_peq; a window N
 * (ASCII windows only) matches only the virtual rows.
 *
 * Score.  S follows row min(m, bottom row): while the bottom row r_t + 63
 * is at most m, S += 1 + h(bit 63) (the bottom cell came in as +1 from the
 * one above it); after that S = D[m][j] += h(bit m - r_t).  Each column
 * where row m is in the band with S <= A is an end within A: the answer is
 * yes.  Every 4 columns a lower bound on the band column between rows c =
 * m - (n - j) and min(m, j + A) (sp_align_dead's rows: an end after column
 * j passes one of them within A) stops the window when it exceeds A:
 * D[kh] - #(+1 of rows c+1..kh), with D[kh] from S by the deltas between.
 *
 * Vectors (AVX-512).  A chunk's eligible pairs are grouped by shape (n, m;
 * extend's are nearly all n = m + 2A), so every column's shifts, masks and
 * phase are the same in all lanes.  Bands of at most 32 diagonals (A <= 7
 * for that shape) run 16 windows a vector in 32-bit lanes (the same pass
 * with 32 for 64); wider ones 8 a vector in 64-bit lanes, two vectors
 * interleaved.  A vector runs until each of its windows has an end within
 * A or is stopped; the last one of a shape is filled with copies.  Pairs
 * the prefilter does not take (NOGAPS, no ENDS, bands over 64 diagonals)
 * and the windows it finds an end in go to the core unchanged.
 */

#define PRE_MAX_READ ALIGN_PRE_MAX_READ   /* longer reads skip the pass (PRE_XW, PRE_CW) */
#define PRE_XW 18     /* words of X_c: (n >> 6) + 2, n <= m + 63 - 2A <= 1087 */
#define PRE_WB 17     /* 64-column blocks of a window */
#define PRE_LANES 8   /* windows of a vector */
#define PRE_AHEAD 24  /* windows between a window's prefetch and its pass */
#define PRE_CW 70     /* 16-base code words of a window (align_pre_read): n <= 1087, even */

/* A group of 8 windows of one shape (n, m, DMAX) for the vector pass. */
typedef struct {
	uint64_t x[PRE_XW][4][PRE_LANES];   /* X_c word w of each lane */
	uint64_t wl[PRE_WB][PRE_LANES];     /* window base codes, bit 0 (column j: bit j-1) */
	uint64_t wh[PRE_WB][PRE_LANES];     /* bit 1 */
	uint64_t wn[PRE_WB][PRE_LANES];     /* N (ASCII windows) */
} pre_group_t;

/* 16 windows of one shape with a band of at most 32 diagonals: 32-bit lanes. */
typedef struct {
	uint32_t x[2 * PRE_XW][4][2 * PRE_LANES];
	uint32_t wl[2 * PRE_WB][2 * PRE_LANES];
	uint32_t wh[2 * PRE_WB][2 * PRE_LANES];
	uint32_t wn[2 * PRE_WB][2 * PRE_LANES];
} pre_group32_t;

/* A thread's prefilter state: the last read's X_c, and a group. */
typedef struct {
	uint64_t read_off;
	uint32_t m, dmax;
	int have;
	uint64_t x[4][PRE_XW];
	uint64_t peq[5][SP_ALIGN_WORDS];
	uint64_t key[ALIGN_CHUNK];          /* shape and index of the chunk's pairs */
	uint64_t tmp[ALIGN_CHUNK];
	pre_group_t g[2];
	pre_group32_t g32;
	uint8_t spare[ALIGN_MAX_WIN];       /* the ends of align_pre_ends_chunk's filler lanes */
} pre_ws_t;

/* align_pre_read()'s workspace: a thread's state and the read's columns. */
struct align_pre_ws {
	pre_ws_t w;
	uint32_t eqc[ALIGN_MAX_WIN + 1][4];   /* column j's match bits for each code */
	uint32_t cw[PRE_CW][2 * PRE_LANES];  /* windows' 2-bit codes, 16 bases a word */
};

/* X_c (words 0 .. NXW) of the read with match bits PEQ (M bases) for DMAX. */
static inline void pre_build_x(const uint64_t peq[5][SP_ALIGN_WORDS], uint32_t m, uint32_t dmax,
		uint32_t nxw, uint64_t x[4][PRE_XW])
{
	uint32_t c, w, nw = (m + 63) >> 6, sh = dmax + 1;   /* 1 .. 64 */

	for (c = 0; c < 4; c++) {
		for (w = 0; w < nxw; w++) {
			uint64_t cur = w < nw ? peq[c][w] : 0, prev = w && w - 1 < nw ? peq[c][w - 1] : 0;
			x[c][w] = sh == 64 ? prev : cur << sh | (w ? prev >> (64 - sh) : 0);
		}
		x[c][0] |= sh == 64 ? ~0ull : (1ull << sh) - 1;
	}
}

/* The 32 packed bases from base POS of WIN (2 bits each), no byte past LAST read. */
static inline uint64_t pk_load32(const uint8_t *win, uint64_t pos, uint64_t last)
{
	uint64_t q = pos >> 2, w = 0, hi = 0;
	unsigned sh = (unsigned)(pos & 3) * 2, i;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (q + 8 <= last) {
		memcpy(&w, win + q, 8);
		hi = win[q + 8];
	} else
#endif
	{
		for (i = 0; i < 8 && q + i <= last; i++)
			w |= (uint64_t)win[q + i] << (8 * i);
		if (q + 8 <= last)
			hi = win[q + 8];
	}
	return sh ? w >> sh | hi << (64 - sh) : w;
}

/* The code planes of the N-base window at WOFF of WIN (columns 1..N: bits 0..N-1). */
static inline void pre_planes(const uint8_t *win, uint64_t woff, uint32_t n, unsigned packed,
		uint64_t *wl, uint64_t *wh, uint64_t *wn, size_t st)
{
	uint32_t b, k, nb = (n + 63) >> 6;

	if (packed) {
		uint64_t last = (woff + n - 1) >> 2;
		for (b = 0; b < nb; b++) {
			uint64_t c0 = pk_load32(win, woff + 64 * b, last);
			uint64_t c1 = 64 * b + 32 < n ? pk_load32(win, woff + 64 * b + 32, last) : 0;
			wl[b * st] = sp_even_bits(c0) | sp_even_bits(c1) << 32;
			wh[b * st] = sp_even_bits(c0 >> 1) | sp_even_bits(c1 >> 1) << 32;
			wn[b * st] = 0;
		}
		return;
	}
	for (b = 0; b < nb; b++) {
		uint64_t l = 0, h = 0, nn = 0;
		for (k = 64 * b; k < n && k < 64 * b + 64; k++) {
			uint64_t c = sp_nt4_codes[win[woff + k]], bit = 1ull << (k & 63);
			if (c > 3)
				nn |= bit;
			else {
				l |= (c & 1) ? bit : 0;
				h |= (c & 2) ? bit : 0;
			}
		}
		wl[b * st] = l;
		wh[b * st] = h;
		wn[b * st] = nn;
	}
}

/* Bits LO..HI (HI <= 63) set; 0 when LO > HI. */
static inline uint64_t bit_range(uint32_t lo, uint32_t hi)
{
	return lo > hi ? 0 : (~0ull >> (63 - hi)) & (~0ull << lo);
}

/* X_c of pair P for DMAX into W->x (kept while the read and DMAX stay). */
static inline void pre_read(pre_ws_t *w, const uint8_t *reads, const align_pair_t *p, uint32_t dmax)
{
	if (w->have && w->read_off == p->read_off && w->m == p->read_len) {
		if (w->dmax == dmax)
			return;
	} else {
		sp_align_peq(reads + p->read_off, p->read_len, w->peq);
	}
	w->have = 1;
	w->read_off = p->read_off;
	w->m = p->read_len;
	w->dmax = dmax;
	pre_build_x((const uint64_t (*)[SP_ALIGN_WORDS])w->peq, p->read_len, dmax, PRE_XW, w->x);
}

/* Ask for the window of pair P ahead of its pass. */
static inline void prefetch_pair(const uint8_t *wins, const align_pair_t *p, unsigned packed)
{
	if (!p->win_len)
		return;
	if (packed)     /* the bytes holding bases win_off .. + win_len - 1 */
		prefetch_range(wins + (p->win_off >> 2),
				((p->win_off + p->win_len - 1) >> 2) - (p->win_off >> 2) + 1);
	else
		prefetch_range(wins + p->win_off, p->win_len);
}

/* Order of two keys. */
static inline int key_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* A new prefilter state (free with free()). */
static inline pre_ws_t *pre_ws_new(void)
{
	pre_ws_t *w = sp_malloc(sizeof *w);

	w->have = 0;
	return w;
}

/* ---- align_pre.c ---- */

/**
 * Whether align_batch() runs the prefilter for a batch with FLAGS (gapped
 * pairs with ALIGN_ENDS, a mode that uses it), and in *SIMD whether it uses
 * the vector pass.
 */
int align_pre_on(unsigned flags, int *simd);

/**
 * The decisions for pairs LO..HI (at most ALIGN_CHUNK) into YES[0 .. HI-LO):
 * 0 no end within A, 1 one, 2 not decided (to the core).
 */
void align_pre_chunk(pre_ws_t *w, const uint8_t *reads, const uint8_t *wins,
		const align_pair_t *pairs, size_t lo, size_t hi, unsigned a, unsigned flags,
		int simd, uint8_t *yes);

#ifdef ALIGN_PRE_X86
/* ---- align_avx512.c (call only where align_pre_on() gave SIMD) ---- */

/**
 * The vector pass for the windows of one shape from key I of W->key[0 ..
 * NE) (pairs LO + (key & 0xffff)): up to 16 of them, decisions into YES by
 * key.  Returns how many windows it decided.
 */
size_t align_pre_group_simd(pre_ws_t *w, const uint8_t *reads, const uint8_t *wins,
		const align_pair_t *pairs, size_t lo, size_t i, size_t ne, unsigned a,
		unsigned packed, uint8_t *yes);

/**
 * The vector pass for N windows of one read (align_pre_read(), whose checks
 * it assumes: a band of at most 32 diagonals).
 */
void align_pre_read_simd(align_pre_ws_t *ws, const uint8_t *read, uint32_t m,
		const uint8_t *pack, const uint64_t *off, size_t n, uint32_t nn, unsigned max_a,
		uint8_t *yes);

/*
 * The core's output for the chunk's pairs LO..HI that the prefilter let
 * through (YES 1), where a first pass asks only for the ends (ALIGN_ENDS |
 * ALIGN_NOCIGAR, the best end anywhere) and the band has at most 32
 * diagonals: the banded pass run on to the window's end gives every end
 * column within A with its exact distance, and from those the result
 * (least distance at its leftmost column, their count).  Those pairs get
 * YES 3 (done).
 */
void align_pre_ends_chunk(pre_ws_t *w, const uint8_t *reads, const uint8_t *wins,
		const align_pair_t *pairs, size_t lo, size_t hi, unsigned a, unsigned flags,
		uint8_t *yes, uint8_t *ends, size_t stride, align_res_t *res);
#endif

#endif
