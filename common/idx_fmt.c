/*
 * idx_fmt.c - what the index builder and the loader share: the parameters
 * (defaults, checks, their header bytes), the section set of the
 * structures and the packed-reference word.  The loader links this file and
 * idx_load.c only, never the builder.
 */
#include "idx_priv.h"

#include <stdio.h>
#include <string.h>

#include "sp_le.h"

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

/* the u32 words at the start of the packed parameters */
static const size_t params_words[] = {
	offsetof(idx_params_t, w), offsetof(idx_params_t, span), offsetof(idx_params_t, l),
	offsetof(idx_params_t, h), offsetof(idx_params_t, structs), offsetof(idx_params_t, sa_rate)
};
#define PARAMS_N_WORDS (sizeof params_words / sizeof *params_words)

void idx_params_pack(const idx_params_t *p, uint32_t n_seq, uint32_t n_part,
		uint64_t total, uint64_t n_nrun, uint8_t *o)
{
	memset(o, 0, 88);
	sp_st32_fields(o, p, params_words, PARAMS_N_WORDS);
	sp_st64(o + 24, p->part_limit);
	sp_st32(o + 32, n_seq);
	sp_st32(o + 36, n_part);
	sp_st64(o + 40, total);
	memcpy(o + 48, p->shape, p->span);
	sp_st64(o + 80, n_nrun);
}

int idx_params_unpack(idx_params_t *p, const uint8_t *in, uint32_t *n_seq,
		uint32_t *n_part, uint64_t *total, uint64_t *n_nrun)
{
	char shape[IDX_MAX_SPAN + 1], err[128];
	idx_params_t f;   /* the stored words, checked against what idx_params_init derives */
	uint32_t s;
	uint64_t lim;

	sp_ld32_fields(&f, in, params_words, PARAMS_N_WORDS);
	s = f.structs;
	lim = sp_ld64(in + 24);
	if (f.span == 0 || f.span > IDX_MAX_SPAN || f.l == 0 || f.l > IDX_MAX_L)
		return -1;
	memcpy(shape, in + 48, f.span);
	shape[f.span] = 0;
	if (idx_params_init(p, shape, 0, (int)f.l, 0, err, sizeof err) != 0)
		return -1;
	if (p->w != f.w || p->h != f.h || s == 0 || s > 15 || f.sa_rate == 0 || lim == 0
			|| ((s & IDX_S_BLOCK) && !(s & IDX_S_REDUCED)))
		return -1;
	p->structs = s;
	p->sa_rate = f.sa_rate;
	p->part_limit = lim;
	*n_seq = sp_ld32(in + 32);
	*n_part = sp_ld32(in + 36);
	*total = sp_ld64(in + 40);
	*n_nrun = sp_ld64(in + 80);
	return 0;
}

/* ---- sections and the packed reference ------------------------------------ */

int idx_part_sections(uint32_t s, const char **names, int max)
{
	static const char *const all[] = {
		"red.start", "red.nb", "red.grp", "red.rep", "red.pos",
		"blk.start", "blk.seed", "blk.roff", "blk.g", "blk.rank",
		"fm.meta", "fm.occ", "fm.mark", "fm.sa"
	};
	const uint32_t nbs = IDX_S_GENERAL | IDX_S_REDUCED | IDX_S_BLOCK;
	int n = 0, i;

	for (i = 0; i < 14; i++) {
		uint32_t bit = i < 5 ? nbs : i < 10 ? IDX_S_BLOCK : IDX_S_FM;

		if ((s & bit) && n < max)
			names[n++] = all[i];
	}
	return n;
}

uint64_t idx_ref_word(const uint8_t *pack, uint64_t g)
{
	uint64_t x = sp_ld64(pack + (g >> 2));
	unsigned sh = (unsigned)(g & 3) * 2;

	if (sh)
		x = x >> sh | (uint64_t)pack[(g >> 2) + 8] << (64 - sh);
	return x;
}
