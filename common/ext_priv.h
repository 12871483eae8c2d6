/*
 * ext_priv.h - the inside of extend's batches, shared by ext_batch.c (the
 * batch, its two alignment passes and the loci) and ext_win.c (the pass-1
 * windows a read's candidates give), which ext_batch.c calls, and
 * ext_pair.c (grow, ext_cmp): not a public interface.
 */
#ifndef SP_EXT_PRIV_H
#define SP_EXT_PRIV_H

#include <stddef.h>
#include <stdlib.h>

#include "ext.h"
#include "util.h"

#define EXT_P1_ROWS (1 << 20)   /* pass 1's ends rows at once, on the CPU (run_pass1) */
#define EXT_WIN 1024    /* merged windows are cut to this length (longer for long reads) */

/* A window of pass 1 or 2: which read and where. */
typedef struct {
	uint32_t read;
	uint32_t seq;
	uint8_t strand;
	uint64_t beg;        /* global position of the window's first base */
	uint32_t len;
} ext_win_t;

/* An end position within the bound (pass 1). */
typedef struct {
	uint64_t e;          /* global end position */
	uint32_t seq;
	uint8_t strand, d;
	uint8_t exact;       /* D is the unclipped value (ext_batch_run) */
} ext_end_t;

/* A candidate window before merging. */
typedef struct {
	uint64_t beg, end;
	uint32_t seq;
	uint8_t strand;
} ext_span_t;

/*
 * The scratch of a batch's alignment (ext_batch_run): made and read during
 * a run only, so one thread's serves every batch it aligns.
 */
struct ext_ws {
	/* reads as aligned: forward and reverse complement */
	uint8_t *rseq;
	size_t rseq_cap;
	size_t *rseq_off;     /* 2 per read */
	size_t rseq_off_cap;
	/* windows, pairs, results */
	ext_win_t *win;
	align_pair_t *pair;
	align_res_t *res;
	size_t n_win, win_cap;
	uint8_t *wins, *ends;
	size_t wins_cap, ends_cap;
	ext_span_t *span;
	size_t span_cap;
	ext_end_t *endv;
	size_t endv_cap;
	/* --no-gaps prefilter: each read's strands 2-bit packed, N bits */
	uint64_t *hpk;        /* 2 hw words per read and strand, hw = (m + 31) / 32 */
	size_t *hpk_off;      /* per read: its first word in hpk */
	uint8_t *hpk_set;     /* per read: bit s set when strand s is packed */
	size_t hpk_cap, hpk_off_cap, hpk_set_cap;
	/* pass-1 windows with N: again from ASCII */
	size_t *dmap;
	align_pair_t *dpair;
	align_res_t *dres;
	uint8_t *dends;
	size_t dmap_cap, dpair_cap, dres_cap, dends_cap;
	/* pass 1 on the device (ext_batch_dev): each window's distance and its
	 * ends row's offset in ends (rows of windows with a hit only) */
	align_dwin_t *dwin;   /* the windows as the device takes them */
	uint32_t longest, dstride;   /* their longest read and window (align_dev_check) */
	int32_t *ddist;
	uint32_t *eoff;
	size_t dwin_cap, ddist_cap, eoff_cap;
	int packed_rows;      /* ends holds eoff's rows, not n_win x stride */
	int rows_hit;         /* ... of the windows with a hit, on the CPU (run_pass1) */
	uint8_t *cends;       /* run_pass1's rows of a chunk of windows */
	size_t cends_cap;
	size_t stride;        /* pass 1's stride */
	size_t p2_nd, p2_stride, p2_wins_len;   /* pass 2: windows for the core (dpair) */
	uint8_t *wins2;       /* ... on the device: theirs alone (pass2_pack) */
	int p2_packed;        /* dpair's win_off point into wins2 */
	size_t wins2_cap;
	size_t *win_beg;      /* per read: its first pass-1 window (n + 1) */
	size_t win_beg_cap;
	/* pass 2: per locus, whether its pass-1 distance is unclipped (ext_batch_run) */
	uint8_t *hexact;
	size_t hexact_cap;
	/* pass-1 windows of a read before the prefilter (ext_read_windows): those
	 * of one candidate, m + 2A long (offset, sequence; the forward strand's,
	 * then the reverse one's), others */
	uint64_t *sw_off;
	uint32_t *sw_seq;
	size_t sw_cap;
	ext_win_t *pc;
	size_t pc_cap;
	uint64_t *pc_off;     /* a group of pc: offsets, sequences; pc entries grouped */
	uint32_t *pc_seq;
	uint8_t *pc_done;
	size_t pc_off_cap, pc_seq_cap, pc_done_cap;
	uint8_t *pre_yes;     /* pre_group's decisions */
	size_t pre_yes_cap;
	align_pre_ws_t *pre;
	uint64_t pre_windows, pre_bases;   /* windows the prefilter turned away */
	/* pass 1's windows cut on the device (align_dev_cut): the candidates as
	 * keys (read r's from coff[r]), the windows and bases cut (cut_tot),
	 * the windows with a hit */
	int cut;              /* this batch's windows are cut on the device */
	uint64_t *ckey, cut_tot[2];
	uint32_t *coff;
	size_t n_key, ckey_cap, coff_cap;
	int dkeys;            /* the keys decoded on the device from the lists (loff) */
	uint64_t *loff;       /* read r's list: lists + loff[2r] .. lists + loff[2r + 1] */
	uint8_t *lists;       /* the reads' lists back to back (the arena without the reads) */
	size_t loff_cap, lists_cap;
	align_dhit_t *dhit;
	size_t n_dhit, dhit_cap;
	align_dhit_t *dhit2;  /* dhit_sort's scratch, and per read its count */
	size_t dhit2_cap, *dcnt, dcnt_cap;
};

struct ext_batch {
	/* input: copied bodies, and their views (moved with the arena) */
	uint8_t *arena;
	size_t arena_len, arena_cap;
	rec_cands_t *cv;
	size_t n, cap;
	uint64_t n_cands, max_cands;   /* candidates: all, of the read with most */
	/* per read: its hits, their MD values */
	size_t *hit_beg;      /* n + 1 */
	uint32_t *n_hits;
	ext_hit_t *hits;
	size_t n_hit, hit_cap;
	char *md;
	size_t md_len, md_cap;
	/* the scratch of the run in progress, and ext_batch_run's own */
	ext_ws_t *w, *own;
};

/*
 * Free struct S (NULL: nothing) and the N arrays it owns, the pointer
 * members at the byte offsets OFF.
 */
static inline void ext_free_owned(void *s, const size_t *off, size_t n)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < n; i++)
		free(*(void **)((char *)s + off[i]));
	free(s);
}

/* Grow *P (of *CAP elements of SIZE bytes) to hold at least N. */
static inline void grow(void *pp, size_t *cap, size_t n, size_t size)
{
	void **p = pp;

	if (n <= *cap)
		return;
	size_t c = *cap ? *cap : 64;
	while (c < n)
		c *= 2;
	*p = sp_realloc(*p, c * size);
	*cap = c;
}

/* -1, 0 or 1 as A is below, equal to or above B (the sort orders' fields). */
static inline int ext_cmp(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

/* ---- ext_win.c ---- */

/** Reads as aligned (each forward and reverse-complemented), and with
 * HPK the room for their --no-gaps packing. */
void ext_prep_reads(ext_batch_t *b, int hpk);

/** Append a window (and its pair) for read R; the bases are filled later. */
void ext_add_win(ext_batch_t *b, uint32_t r, uint8_t strand, uint32_t seq,
		uint64_t beg, uint32_t len, uint32_t end_lo, uint32_t end_hi);

/** Fill the window bases of every window and set the pairs' offsets; returns the stride. */
size_t ext_fill_wins(ext_batch_t *b, const idx_t *x);

/** Ask for the reference bytes of read R's first candidates ahead of use. */
void ext_prefetch_ref(const ext_batch_t *b, const idx_t *x, size_t r);

/** -1, with the message that read V's candidate list is malformed. */
int ext_bad_cands(const rec_cands_t *v, char *msg, size_t msg_len);

/**
 * Read R's candidates as keys for the device's cut (B->w->ckey from
 * B->w->n_key, in ascending order), checked as ext_read_windows checks
 * them (against DEV's copies of X's tables: align_dev_tables), decoded as
 * the kernel align_keys decodes them (kernels/inc_keys.h); -1 with its
 * message.
 */
int ext_read_keys(ext_batch_t *b, const idx_t *x, const align_dev_t *dev, uint32_t r,
		char *msg, size_t msg_len);

/** Pass-1 windows of read R; -1 with a message on a candidate outside X. */
int ext_read_windows(ext_batch_t *b, const idx_t *x, const ext_opt_t *o, uint32_t r,
		char *msg, size_t msg_len);

#endif
