/*
 * idx_ref.c - the in-memory reference of seqidx (names, lengths, 2-bit
 * packed bases, N runs), the index parameters and the partitioning.
 */
#include "idx_priv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "util.h"

/* ---- parameters -------------------------------------------------------- */

int idx_default_u(uint64_t n)
{
	int u = 0;

	while (n >= 4) {
		n >>= 2;
		u++;
	}
	u -= 2;
	return u < 4 ? 4 : u > 12 ? 12 : u;
}

int idx_params_init(idx_params_t *p, const char *shape, int u, int l,
		uint64_t genome_len, char *err, size_t errlen)
{
	char buf[IDX_MAX_SPAN + 1];
	size_t i, n;

	memset(p, 0, sizeof *p);
	if (!shape) {
		if (u <= 0)
			u = idx_default_u(genome_len);
		if (u > IDX_MAX_W) {
			snprintf(err, errlen, "seed length %d is above the maximum %d", u, IDX_MAX_W);
			return -1;
		}
		memset(buf, '#', (size_t)u);
		buf[u] = 0;
		shape = buf;
	}
	n = strlen(shape);
	if (n == 0 || n > IDX_MAX_SPAN) {
		snprintf(err, errlen, "seed shape '%s' must have 1 to %d characters", shape, IDX_MAX_SPAN);
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (shape[i] == '#') {
			p->shape_pos[p->w++] = (uint32_t)i;
		} else if (shape[i] != '-') {
			snprintf(err, errlen, "seed shape '%s' may hold only '#' and '-'", shape);
			return -1;
		}
	}
	if (shape[0] != '#' || shape[n - 1] != '#') {
		snprintf(err, errlen, "seed shape '%s' must begin and end with '#'", shape);
		return -1;
	}
	if (p->w > IDX_MAX_W) {
		snprintf(err, errlen, "seed weight %u of '%s' is above the maximum %d", p->w, shape, IDX_MAX_W);
		return -1;
	}
	if (l <= 0)
		l = 16;
	if (l > IDX_MAX_L) {
		snprintf(err, errlen, "neighborhood length %d is above the maximum %d", l, IDX_MAX_L);
		return -1;
	}
	memcpy(p->shape, shape, n + 1);
	p->span = (uint32_t)n;
	p->l = (uint32_t)l;
	p->h = 32 / (uint32_t)l;
	p->structs = IDX_S_DEFAULT;
	p->sa_rate = IDX_SA_RATE;
	p->part_limit = IDX_PART_MAX;
	return 0;
}

static const char *const struct_names[] = { "general", "reduced", "block", "fm" };

int idx_parse_structs(const char *s)
{
	int mask = 0;

	while (*s) {
		size_t n = strcspn(s, ","), i;
		int hit = 0;

		if (n == 3 && strncmp(s, "all", 3) == 0) {
			mask |= IDX_S_GENERAL | IDX_S_REDUCED | IDX_S_BLOCK | IDX_S_FM;
			hit = 1;
		}
		for (i = 0; i < 4 && !hit; i++)
			if (strlen(struct_names[i]) == n && strncmp(s, struct_names[i], n) == 0) {
				mask |= 1 << i;
				hit = 1;
			}
		if (!hit)
			return -1;
		s += n;
		if (*s == ',')
			s++;
	}
	if (mask & IDX_S_BLOCK)
		mask |= IDX_S_REDUCED;
	return mask ? mask : -1;
}

void idx_structs_str(uint32_t mask, char *buf, size_t len)
{
	size_t i, o = 0;

	buf[0] = 0;
	for (i = 0; i < 4; i++)
		if (mask >> i & 1) {
			int k = snprintf(buf + o, len - o, "%s%s", o ? "," : "", struct_names[i]);

			if (k < 0 || (size_t)k >= len - o)
				break;
			o += (size_t)k;
		}
}

void idx_params_pack(const idx_params_t *p, uint32_t n_seq, uint32_t n_part,
		uint64_t total, uint64_t n_nrun, uint8_t *o)
{
	memset(o, 0, 88);
	idx_wr32(o + 0, p->w);
	idx_wr32(o + 4, p->span);
	idx_wr32(o + 8, p->l);
	idx_wr32(o + 12, p->h);
	idx_wr32(o + 16, p->structs);
	idx_wr32(o + 20, p->sa_rate);
	idx_wr64(o + 24, p->part_limit);
	idx_wr32(o + 32, n_seq);
	idx_wr32(o + 36, n_part);
	idx_wr64(o + 40, total);
	memcpy(o + 48, p->shape, p->span);
	idx_wr64(o + 80, n_nrun);
}

int idx_params_unpack(idx_params_t *p, const uint8_t *in, uint32_t *n_seq,
		uint32_t *n_part, uint64_t *total, uint64_t *n_nrun)
{
	char shape[IDX_MAX_SPAN + 1], err[128];
	uint32_t w, span, l, h, s, rate;
	uint64_t lim;

	w = idx_rd32(in);
	span = idx_rd32(in + 4);
	l = idx_rd32(in + 8);
	h = idx_rd32(in + 12);
	s = idx_rd32(in + 16);
	rate = idx_rd32(in + 20);
	lim = idx_rd64(in + 24);
	if (span == 0 || span > IDX_MAX_SPAN || l == 0 || l > IDX_MAX_L)
		return -1;
	memcpy(shape, in + 48, span);
	shape[span] = 0;
	if (idx_params_init(p, shape, 0, (int)l, 0, err, sizeof err) != 0)
		return -1;
	if (p->w != w || p->h != h || s == 0 || s > 15 || rate == 0 || lim == 0
			|| ((s & IDX_S_BLOCK) && !(s & IDX_S_REDUCED)))
		return -1;
	p->structs = s;
	p->sa_rate = rate;
	p->part_limit = lim;
	*n_seq = idx_rd32(in + 32);
	*n_part = idx_rd32(in + 36);
	*total = idx_rd64(in + 40);
	*n_nrun = idx_rd64(in + 80);
	return 0;
}

/* ---- partitions -------------------------------------------------------- */

uint32_t idx_partition(const uint64_t *off, uint32_t n, uint64_t limit, uint32_t win,
		idx_prange_t **out)
{
	uint32_t i = 0, np = 0, cap = 4;
	uint64_t cur = 0;
	idx_prange_t *pr = sp_malloc(cap * sizeof *pr);

	while (i < n) {
		uint64_t beg = cur, end = cur;
		uint32_t first = i;

		while (i < n && off[i + 1] - beg <= limit) {
			end = off[i + 1];
			i++;
		}
		if (end == beg && i > first) {
			/* only empty sequences: they start no seed, no partition */
			cur = end;
			continue;
		}
		if (end == beg) {
			/* sequence i alone is too long: cut it, overlap win-1 bases */
			end = beg + limit;
			cur = end - (win - 1);
		} else {
			cur = end;
		}
		if (np == cap)
			pr = sp_realloc(pr, (cap *= 2) * sizeof *pr);
		pr[np].beg = beg;
		pr[np].end = end;
		pr[np].first_seq = first;
		pr[np].end_seq = i < n && off[i] < end ? i + 1 : i;
		np++;
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

void idx_ref_add(idx_ref_t *r, const char *name, const char *seq, size_t len)
{
	static uint8_t code[256];
	static int init;
	uint64_t p0 = r->total, i, need, run = 0;
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
		sp_die("sequence %u has an empty name", r->n_seq + 1);
	if ((dup = hash_find(r, name)) >= 0)
		sp_die("duplicate sequence name '%s' (sequences %lld and %u)",
			name, (long long)dup + 1, r->n_seq + 1);
	if (r->n_seq == UINT32_MAX - 1)
		sp_die("too many sequences");
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
			if (run) {
				/* close the N run that ended at i */
				if (r->n_nrun == r->nrun_cap) {
					r->nrun_cap = r->nrun_cap ? r->nrun_cap * 2 : 64;
					r->nrun = sp_realloc(r->nrun, r->nrun_cap * 2 * sizeof *r->nrun);
				}
				r->nrun[2 * r->n_nrun] = p0 + i - run;
				r->nrun[2 * r->n_nrun + 1] = run;
				r->n_nrun++;
				run = 0;
			}
		} else if (c == 4) {
			run++;
		} else {
			sp_die("sequence '%s' holds '%c' at position %llu: only A, C, G, T and N are allowed",
				name, seq[i] >= 32 && seq[i] < 127 ? seq[i] : '?', (unsigned long long)i + 1);
		}
	}
	if (run) {
		if (r->n_nrun == r->nrun_cap) {
			r->nrun_cap = r->nrun_cap ? r->nrun_cap * 2 : 64;
			r->nrun = sp_realloc(r->nrun, r->nrun_cap * 2 * sizeof *r->nrun);
		}
		r->nrun[2 * r->n_nrun] = p0 + len - run;
		r->nrun[2 * r->n_nrun + 1] = run;
		r->n_nrun++;
	}
	r->names[r->n_seq] = sp_strdup(name);
	r->len[r->n_seq] = len;
	r->total += len;
	r->off[r->n_seq + 1] = r->total;
	hash_insert(r, r->n_seq);
	r->n_seq++;
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
