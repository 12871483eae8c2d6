/*
 * idx_ref.c - the in-memory reference of seqidx (names, lengths, 2-bit
 * packed bases, N runs) and the partitioning: the builder's input.
 */
#include "idx_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "util.h"

/* ---- partitions -------------------------------------------------------- */

uint32_t idx_partition(const uint64_t *off, uint32_t n, uint64_t limit, uint32_t win,
		idx_prange_t **out)
{
	uint32_t i = 0, np = 0, cap = 4;
	uint64_t cur = 0;
	idx_prange_t *pr = sp_malloc(cap * sizeof *pr), r;

	while (idx_part_next(off, n, limit, win, &i, &cur, &r)) {
		if (np == cap)
			pr = sp_realloc(pr, (cap *= 2) * sizeof *pr);
		pr[np++] = r;
	}
	*out = pr;
	return np;
}

/* ---- reference --------------------------------------------------------- */

idx_ref_t *idx_ref_init(void)
{
	idx_ref_t *r = sp_calloc(1, sizeof *r);

	r->cap_seq = 16;
	r->names = sp_malloc(r->cap_seq * sizeof *r->names);
	r->len = sp_malloc(r->cap_seq * sizeof *r->len);
	r->off = sp_malloc((r->cap_seq + 1) * sizeof *r->off);
	r->off[0] = 0;
	r->pack_cap = 1 << 16;
	r->pack = sp_calloc(r->pack_cap, 1);
	r->hash_cap = 64;
	r->hash = sp_calloc(r->hash_cap, sizeof *r->hash);
	return r;
}

static void hash_insert(idx_ref_t *r, uint32_t idx)
{
	uint32_t mask = r->hash_cap - 1;
	uint64_t h = XXH3_64bits(r->names[idx], strlen(r->names[idx]));
	uint32_t k = (uint32_t)h & mask;

	while (r->hash[k])
		k = (k + 1) & mask;
	r->hash[k] = idx + 1;
}

/* Index of sequence NAME, or -1. */
static int64_t hash_find(const idx_ref_t *r, const char *name)
{
	uint32_t mask = r->hash_cap - 1;
	uint32_t k = (uint32_t)XXH3_64bits(name, strlen(name)) & mask;

	while (r->hash[k]) {
		if (strcmp(r->names[r->hash[k] - 1], name) == 0)
			return r->hash[k] - 1;
		k = (k + 1) & mask;
	}
	return -1;
}

static void add_nrun(idx_ref_t *r, uint64_t start, uint64_t len)
{
	if (r->n_nrun == r->nrun_cap) {
		r->nrun_cap = r->nrun_cap ? r->nrun_cap * 2 : 64;
		r->nrun = sp_realloc(r->nrun, r->nrun_cap * 2 * sizeof *r->nrun);
	}
	r->nrun[2 * r->n_nrun] = start;
	r->nrun[2 * r->n_nrun + 1] = len;
	r->n_nrun++;
}

int idx_ref_add(idx_ref_t *r, const char *name, const char *seq, size_t len)
{
	static uint8_t code[256];
	static int init;
	uint64_t p0 = r->total, i, need, run = 0, nrun0 = r->n_nrun;
	int64_t dup;

	if (!init) {
		memset(code, 5, sizeof code);
		code['A'] = code['a'] = 0;
		code['C'] = code['c'] = 1;
		code['G'] = code['g'] = 2;
		code['T'] = code['t'] = 3;
		code['N'] = code['n'] = 4;
		init = 1;
	}
	if (!name || !*name)
		return sp_fail("sequence %u has an empty name", r->n_seq + 1);
	if ((dup = hash_find(r, name)) >= 0)
		return sp_fail("duplicate sequence name '%s' (sequences %lld and %u)",
			name, (long long)dup + 1, r->n_seq + 1);
	if (r->n_seq == UINT32_MAX - 1)
		return sp_fail("too many sequences");
	if (r->n_seq == r->cap_seq) {
		r->cap_seq *= 2;
		r->names = sp_realloc(r->names, r->cap_seq * sizeof *r->names);
		r->len = sp_realloc(r->len, r->cap_seq * sizeof *r->len);
		r->off = sp_realloc(r->off, (r->cap_seq + 1) * sizeof *r->off);
	}
	if ((uint64_t)(r->n_seq + 1) * 2 > r->hash_cap) {
		uint32_t k;

		free(r->hash);
		r->hash_cap *= 4;
		r->hash = sp_calloc(r->hash_cap, sizeof *r->hash);
		for (k = 0; k < r->n_seq; k++)
			hash_insert(r, k);
	}
	need = (p0 + len) / 4 + 17;
	if (need > r->pack_cap) {
		uint64_t nc = r->pack_cap;

		while (nc < need)
			nc *= 2;
		r->pack = sp_realloc(r->pack, nc);
		memset(r->pack + r->pack_cap, 0, nc - r->pack_cap);
		r->pack_cap = nc;
	}
	for (i = 0; i < len; i++) {
		uint8_t c = code[(uint8_t)seq[i]];

		if (c < 4) {
			r->pack[(p0 + i) >> 2] |= (uint8_t)(c << (2 * ((p0 + i) & 3)));
			if (run)   /* the N run that ended at i */
				add_nrun(r, p0 + i - run, run);
			run = 0;
		} else if (c == 4) {
			run++;
		} else {
			/* leave R as it was: no N run, no base of this sequence */
			r->n_nrun = nrun0;
			r->pack[p0 >> 2] &= (uint8_t)((1u << (2 * (p0 & 3))) - 1);
			memset(r->pack + (p0 >> 2) + 1, 0, (p0 + i) / 4 - p0 / 4);
			return sp_fail("sequence '%s' holds '%c' at position %llu: only A, C, G, T and N are allowed",
				name, seq[i] >= 32 && seq[i] < 127 ? seq[i] : '?', (unsigned long long)i + 1);
		}
	}
	if (run)
		add_nrun(r, p0 + len - run, run);
	r->names[r->n_seq] = sp_strdup(name);
	r->len[r->n_seq] = len;
	r->total += len;
	r->off[r->n_seq + 1] = r->total;
	hash_insert(r, r->n_seq);
	r->n_seq++;
	return 0;
}

uint32_t idx_ref_n_seq(const idx_ref_t *r) { return r->n_seq; }
uint64_t idx_ref_total(const idx_ref_t *r) { return r->total; }

void idx_ref_free(idx_ref_t *r)
{
	uint32_t i;

	if (!r)
		return;
	for (i = 0; i < r->n_seq; i++)
		free(r->names[i]);
	free(r->names);
	free(r->len);
	free(r->off);
	free(r->pack);
	free(r->nrun);
	free(r->hash);
	free(r);
}
