/*
 * mem_priv.h - what mem.c (setup, stage 1) and mem_finish.c (stages 2 and 3)
 * share: the prepared index and the per-thread scratch (see mem.h).
 */
#ifndef SP_MEM_PRIV_H
#define SP_MEM_PRIV_H

#include "mem.h"

#include <stdint.h>

#include "inc_mem.h"
#include "sp_le.h"
#include "util.h"

#define MEM_NUM8 1024u        /* query starts and lengths below this: fields from a table */
#define K_CAP 11u              /* K-mer tables of at most 4^11 entries (32 MiB) */

/* A partition cut inside a sequence: matches covering [x0, x1] lie in neither part. */
typedef struct {
	uint64_t x0, x1;
	uint32_t part;
	char *ref;                 /* the x1 - x0 + 1 letters (ACGTN) */
} mem_cut_t;

struct mem_idx {
	const idx_t *x;
	mem_opt_t o;
	uint32_t w, s;
	mem_fm_t *fm;
	uint32_t **jump;
	size_t *jump_len;
	uint32_t **shal;           /* per partition: the shallow rows (inc_mem.h) */
	mem_cut_t *cut;
	uint32_t n_cut;
	uint32_t *nrun_b;          /* per 2^NRUN_SH bases from 0: the first N run ending after the start */
	uint64_t n_nrun_b;
	int name_w;
	int popcnt;                /* stage 1 may use the POPCNT instruction */
	int full_sort;             /* $SEEDPIPE_MEM_FULL_SORT: sort every query start in full (tests) */
	uint64_t num8[MEM_NUM8];   /* the text's 8-character fields of 0 .. MEM_NUM8 - 1 (mem_fmt_init) */
};

/* Fill MI's num8 (mem_finish.c). */
void mem_fmt_init(mem_idx_t *mi);

struct mem_scratch {
	struct loc_slot *cache;    /* mem.c's */
	struct prow *pend;         /* struct mem_sink's */
	uint32_t *walk;
	size_t cap_pend;
	mem_vec_t tmp;
	uint32_t *nrun;            /* the strand's N runs: start, end */
	size_t n_nrun, cap_nrun;
	uint32_t *qmin, *qcnt;     /* per query start: shortest match, matches */
	uint32_t cap_q;
	struct skey *key;          /* sort keys (sort_query) */
	size_t cap_key;
	struct mem_und { uint32_t k, skip; } *und;   /* order_query's pairs to decide */
	size_t cap_und;
};

#define NRUN_SH 16

/* The first N run of X in [LO, HI) that ends after G (HI if none): a binary search. */
static inline uint64_t mem_nrun_search(const idx_t *x, uint64_t g, uint64_t lo, uint64_t hi)
{
	while (lo < hi) {
		uint64_t mid = (lo + hi) / 2;

		if (x->nrun[2 * mid] + x->nrun[2 * mid + 1] <= g)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The first N run of the reference that ends after G: between the first
 * ones of G's bucket and of the next (mostly the same run).
 */
static inline uint64_t mem_nrun_after(const mem_idx_t *mi, uint64_t g)
{
	const idx_t *x = mi->x;
	uint64_t j = g >> NRUN_SH;

	if (j >= mi->n_nrun_b)
		j = mi->n_nrun_b - 1;
	return mem_nrun_search(x, g, mi->nrun_b[j],
			j + 1 < mi->n_nrun_b ? mi->nrun_b[j + 1] : x->n_nrun);
}

#define VEC_PUSH(v, x) do { \
		if ((v)->n == (v)->cap) { \
			(v)->cap = (v)->cap ? 2 * (v)->cap : 64; \
			(v)->a = sp_realloc((v)->a, (v)->cap * sizeof *(v)->a); \
		} \
		(v)->a[(v)->n++] = (x); \
	} while (0)


/* 32 reference bases from global position G on (idx_ref_word, inlined: the sort calls it often). */
static inline uint64_t mem_ref_word(const uint8_t *pack, uint64_t g)
{
	uint64_t x = sp_ld64(pack + (g >> 2));
	unsigned sh = (unsigned)(g & 3) * 2;

	if (sh)
		x = x >> sh | (uint64_t)pack[(g >> 2) + 8] << (64 - sh);
	return x;
}

#endif
