/*
 * filt_priv.h - what the files of seedfilt's work share: the workspace and
 * the helpers each file offers the files above it (filt.h lists the files
 * in their order; a file calls only files below it, never one above).
 */
#ifndef SP_FILT_PRIV_H
#define SP_FILT_PRIV_H

#include <stdint.h>

#include "bpr.h"
#include "filt.h"
#include "inc_filt_fm.h"

/* Candidate key: | part (31 bits) | diagonal (32 bits) | strand (1 bit) |. */
#define KEY(part, diag, strand) ((uint64_t)(part) << 33 | (uint64_t)(diag) << 1 | (strand))
#define KEY_PART(k) ((uint32_t)((k) >> 33))
#define KEY_DIAG(k) ((uint32_t)((k) >> 1))
#define KEY_STRAND(k) ((uint32_t)((k) & 1))

#define PF(a) __builtin_prefetch((const void *)(a), 0, 3)

struct filt_ws {
	const idx_t *x;
	filt_opt_t o;
	uint32_t v, win;          /* q length, window span + v */
	int simd;                 /* ph: bdz_slots may use AVX-512 (filt_lookup.c) */
	uint8_t *code[2];         /* read and reverse complement, 0..3, 4 = N */
	uint32_t *ncnt;           /* N prefix counts of the forward read */
	uint64_t *pk;             /* code[0], code[1] packed (filt_cut.c: pk_bases) */
	size_t cap_len;
	uint64_t *key, *tmp;      /* matches as keys, sort scratch (cap_tmp) */
	size_t cap_tmp;
	size_t n_key, cap_key;
	size_t *run;              /* run[i]: end of sorted run i of key (filt_add_hits) */
	size_t n_run, cap_run;
	int unsorted;             /* some run of key is not sorted */
	uint32_t *hits;           /* positions of one lookup */
	size_t cap_hits;
	rec_cand_t *out;
	size_t cap_out;
	bpr_pat_t bp;
	filt_pat_t *pat;          /* patterns of the current read */
	uint32_t n_pat, cap_pat;
	uint32_t *lpos;           /* bs, ph: L_Pos */
	uint64_t n_lpos;
	uint64_t *words;          /* bs, ph: degenerate words of one pattern (n_lpos << 2e) */
	uint32_t *slot;           /* ph: their BDZ slots */
	uint8_t *pf_code;         /* filt_prefetch: a coming read, both strands */
	uint64_t *pf_pk;          /* filt_prefetch: pf_code packed */
	filt_pat_t *pf_pat;       /* filt_prefetch: its seed codes */
	size_t cap_pf;
	ffm_node_t *stack;        /* fm: FFM_STACK nodes */
	uint32_t shape_mask;      /* fm: bit i set for a '#' at shape position i */
	uint32_t *fmr;            /* fm: row ranges, 4 u32 each */
	size_t cap_fmr, n_fmr_max;
	/* -a with bs, ph: the lookups of one read (seed variant, q variant, pattern) */
	uint32_t wv;              /* positions of the window word: w + v */
	uint32_t *lk_code, *lk_pat, *lk_a, *lk_b, *lk_r;
	uint64_t *lk_q, ball[FILT_MAX_E_HAM + 1];
	size_t cap_lk;
	const uint64_t *wbits;    /* -a: the window-word bitmap (filt_ws.c), or NULL */
	uint32_t wbits_shift;
	int want_bits;            /* -a with bs, ph: wbits is wanted (NULL: too large) */
	uint32_t p0, p1;          /* the partitions searched, [p0, p1) (filt_ws_range) */
	/* filt_scheme_prefetch: the seed codes of the last reads it saw, by their bases */
	const char *sch_seq[4];
	filt_pat_t sch_pat[4][2 * FILT_SCHEME_MAXPAT];
	uint32_t sch_np[4], sch_next;
};

/* -a: the bit of window word WORD in the bitmap ws->wbits (filt_ws.c). */
static inline uint64_t filt_any_hash(uint64_t word, uint32_t shift)
{
	return (word * 0x9e3779b97f4a7c15ULL) >> shift;
}

/* Last sequence of partition PT whose offset is <= G (global). */
static inline uint32_t filt_seq_of(const idx_t *x, const idx_part_t *pt, uint64_t g)
{
	uint32_t lo = pt->first_seq, hi = pt->end_seq;

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (x->off[mid] <= g)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* ---- filt_method.c -------------------------------------------------------- */

#define FILT_NMETHODS FILT_FM   /* methods FILT_BPR .. FILT_FM */

/**
 * The order in which -m auto tries the methods (FILT_NMETHODS of them):
 * ph, bs, fm, bpr; with ANY (-a) bs, ph, fm, bpr.
 */
const int *filt_method_order(int any);

/* ---- filt_ws.c ------------------------------------------------------------ */

/** Room for N positions in ws->hits. */
void filt_need_hits(filt_ws_t *ws, size_t n);

/**
 * Record the N window positions HITS (partition PART) of a pattern at
 * offset O of strand STRAND as candidate keys (nothing with -N).
 */
void filt_add_hits(filt_ws_t *ws, uint32_t part, const uint32_t *hits, size_t n,
		uint32_t o, uint32_t strand);

/* The windows of key rank J of partition PT: matches of a pattern at O, STRAND. */
static inline void filt_rank_hits(filt_ws_t *ws, uint32_t part, const idx_part_t *pt,
		uint64_t j, uint32_t o, uint32_t strand, filt_stats_t *st)
{
	uint64_t pb = idx_nbpos(pt, j), pe = idx_nbpos(pt, j + 1);

	st->matches += pe - pb;
	filt_add_hits(ws, part, pt->red_pos + pb, pe - pb, o, strand);
}

/* ---- filt_cut.c ------------------------------------------------------------ */

/**
 * Prefetch what the NP patterns PAT need first: STAGE 0 their start-list
 * entries, STAGE 1 their SeedBlocks (which reads the start lists).
 */
void filt_prefetch_pats(const filt_ws_t *ws, const filt_pat_t *pat, uint32_t np, int stage);

/**
 * filt_cut without the count of the neighborhoods in the patterns'
 * SeedBlocks (st->nbs), which filt_count_nbs adds: on the CPU path after
 * the match, whose lookups have brought the start lists and red.grp lines
 * it reads into the cache (counted in filt_cut, every pattern waited for
 * its red.grp line there).
 */
uint32_t filt_cut_pats(filt_ws_t *ws, const char *seq, uint32_t len,
		const filt_pat_t **pats, filt_stats_t *st);

/** Add the neighborhoods of the SeedBlocks of PAT[0..NP) to ST->nbs (not with -a). */
void filt_count_nbs(const filt_ws_t *ws, const filt_pat_t *pat, uint32_t np, filt_stats_t *st);

/* ---- filt_lookup.c: the lookups bs and ph share ---------------------------- */

/**
 * Every word within Hamming distance E of Q (V bases), each once, into WD
 * (room for degen_ball(V, E) words); returns their count, degen_ball(V, E).
 */
uint32_t filt_degen_words(uint64_t *wd, uint64_t q, uint32_t v, uint32_t e);

/*
 * filt_bsearch (inc_filt.h) without data-dependent branches (conditional
 * moves): the index of Q among the sorted keys [LO, HI), or HI when absent.
 */
static inline uint64_t filt_bsearch_cmov(const uint32_t *nb32, const uint64_t *nb64,
		uint32_t is32, uint64_t lo, uint64_t hi, uint64_t q)
{
	uint64_t n = hi - lo, b = lo;

	/* the lower bound of Q stays in [b, b + n]; at n = 1 it is b, or HI */
	if (n == 0)
		return hi;
	if (is32) {
		while (n > 1) {
			uint64_t half = n / 2;

			b = nb32[b + half - 1] < q ? b + half : b;
			n -= half;
		}
		return nb32[b] == q ? b : hi;
	}
	while (n > 1) {
		uint64_t half = n / 2;

		b = nb64[b + half - 1] < q ? b + half : b;
		n -= half;
	}
	return nb64[b] == q ? b : hi;
}

/**
 * ph: the BDZ slots of the NW words WD in the block at BASE with part size R
 * and SEED (g values G) into SLOT; SIMD: AVX-512 may be used (ws->simd).
 * WD and SLOT hold 8 entries more than NW.
 */
void filt_bdz_slots(const uint64_t *wd, uint32_t nw, uint32_t seed, uint32_t base,
		uint32_t r, const uint8_t *g, uint32_t *slot, int simd);

/** Whether filt_bdz_slots may use AVX-512 on this CPU (and SEEDPIPE_NO_SIMD is unset). */
int filt_bdz_simd(void);

/* ---- matchers: every match of one pattern or read into the workspace ------- */

/** bpr: pattern P (filt_match_bpr.c). */
void filt_match_bpr(filt_ws_t *ws, const filt_pat_t *p, filt_stats_t *st);

/** bs, ph: pattern P (filt_match_ham.c). */
void filt_match_ham(filt_ws_t *ws, const filt_pat_t *p, filt_stats_t *st);

/**
 * Keep the words W[0..N) that hold CENTER's bases at the positions of FIX
 * (in place, in order); returns their count (filt_cut.c).
 */
uint32_t filt_fix_words(uint64_t *w, uint32_t n, uint64_t center, uint64_t fix);

/** Make PAT[0..N) the patterns of the current read of WS (filt_cut.c). */
void filt_set_pats(filt_ws_t *ws, const filt_pat_t *pat, uint32_t n);

/** Append pattern P to the patterns of the current read of WS (filt_cut.c). */
void filt_add_pat(filt_ws_t *ws, const filt_pat_t *p);

/**
 * Of PAT[0..NP) (the patterns of the current read of WS, cut elsewhere),
 * match those whose budget is below the run's e (N replaced by a base,
 * filt_cut) on the CPU by the run's method, adding their matches to the
 * read (filt_read.c): the device program, built for one e, cannot.
 */
void filt_match_host(filt_ws_t *ws, const filt_pat_t *pat, uint32_t np, filt_stats_t *st);

/** bs, ph with -a: every pattern of the current read (filt_match_any.c). */
void filt_match_any(filt_ws_t *ws, filt_stats_t *st);

/** fm: pattern P (filt_match_fm.c). */
void filt_match_fm(filt_ws_t *ws, const filt_pat_t *p, filt_stats_t *st);

#endif
