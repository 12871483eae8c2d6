/*
 * idx_test.c - the index structures against a brute-force oracle on random
 * references (several sequences, N runs, split partitions): general,
 * reduced, indexed-block (BDZ) and FM-index; bit-identical output across
 * thread counts; damaged and truncated files refused naming the section.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "bdz.h"
#include "bpr.h"
#include "idx.h"
#include "idx_priv.h"
#include "inc_bdz.h"
#include "inc_idx.h"
#include "sp_le.h"
#include "tap.h"
#include "util.h"
#include "testutil.h"

static uint64_t rng_s = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	return tu_xorshift64(&rng_s);
}

static uint64_t rndn(uint64_t n) { return n ? rnd() % n : 0; }

typedef struct {
	int n;
	char **name, **seq;
	size_t *len;
	char *cat;      /* all sequences concatenated */
	size_t total;
	size_t *off;
} tref_t;

static void tref_make(tref_t *t, int nseq, int maxlen, int nrate, int lowcomplex)
{
	int i;
	size_t j;

	memset(t, 0, sizeof *t);
	t->n = nseq;
	t->name = calloc((size_t)nseq, sizeof *t->name);
	t->seq = calloc((size_t)nseq, sizeof *t->seq);
	t->len = calloc((size_t)nseq, sizeof *t->len);
	t->off = calloc((size_t)nseq + 1, sizeof *t->off);
	for (i = 0; i < nseq; i++) {
		size_t len = rndn((uint64_t)maxlen + 1);

		t->name[i] = malloc(32);
		snprintf(t->name[i], 32, "s%d", i);
		t->seq[i] = malloc(len + 1);
		for (j = 0; j < len; j++)
			t->seq[i][j] = "ACGT"[lowcomplex ? rndn(2) : rndn(4)];
		/* N runs */
		if (nrate && len) {
			int k, nr = (int)rndn((uint64_t)nrate + 1);

			for (k = 0; k < nr; k++) {
				size_t a = rndn(len), b = a + 1 + rndn(12);

				for (j = a; j < b && j < len; j++)
					t->seq[i][j] = rndn(5) ? 'N' : 'n';
			}
		}
		/* some repeats */
		if (len > 40 && rndn(2)) {
			size_t a = rndn(len - 20), b = rndn(len - 20);

			memmove(t->seq[i] + b, t->seq[i] + a, 20);
		}
		t->seq[i][len] = 0;
		t->len[i] = len;
		t->off[i + 1] = t->off[i] + len;
	}
	t->total = t->off[nseq];
	t->cat = malloc(t->total + 1);
	for (i = 0; i < nseq; i++)
		memcpy(t->cat + t->off[i], t->seq[i], t->len[i]);
	t->cat[t->total] = 0;
}

static void tref_free(tref_t *t)
{
	int i;

	for (i = 0; i < t->n; i++) {
		free(t->name[i]);
		free(t->seq[i]);
	}
	free(t->name); free(t->seq); free(t->len); free(t->off); free(t->cat);
}

static int code_of(char c)
{
	switch (c) {
	case 'A': return 0;
	case 'C': return 1;
	case 'G': return 2;
	case 'T': return 3;
	default: return -1;
	}
}

static int bad_adds_ok = 1;   /* every refused sequence was refused as it should */

/*
 * Offer R a random sequence (ACGT and N runs) with a '*' at a random
 * position, which it must refuse, leaving itself as it was.
 */
static void add_bad(idx_ref_t *r)
{
	char s[64], want[128];
	size_t len = 1 + rndn(sizeof s), at = rndn(len), i;

	for (i = 0; i < len; i++)
		s[i] = i % 16 >= 8 && i % 16 < 12 && i < at ? 'N' : "ACGT"[rndn(4)];
	s[at] = '*';
	snprintf(want, sizeof want, "sequence 'bad' holds '*' at position %zu: only A, C, G, T and N are allowed",
		at + 1);
	if (idx_ref_add(r, "bad", s, len) != -1 || strcmp(sp_errmsg(), want) != 0) {
		tap_diag("refused sequence: '%s', wanted '%s'", sp_errmsg(), want);
		bad_adds_ok = 0;
	}
}

/*
 * Build T with P and NT threads into a temp file; return its path (malloc).
 * BAD: first offer a sequence with a letter other than ACGTN before each.
 */
static char *build_file(const tref_t *t, const idx_params_t *p, int nt, int bad)
{
	char *path = strdup("/tmp/idx_test.XXXXXX");
	int fd = mkstemp(path), i;
	idx_ref_t *r = idx_ref_init();
	idx_build_opt_t o = { nt, 0, 0, 0, NULL };

	for (i = 0; i < t->n; i++) {
		if (bad)
			add_bad(r);
		if (idx_ref_add(r, t->name[i], t->seq[i], t->len[i]) != 0)
			sp_or_die(-1);
	}
	sp_or_die(idx_build(r, p, &o, fd, path));
	close(fd);
	idx_ref_free(r);
	return path;
}

static char *slurp(const char *path, size_t *n)
{
	FILE *fp = fopen(path, "rb");
	char *b;
	long sz;

	fseek(fp, 0, SEEK_END);
	sz = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	b = malloc((size_t)sz + 1);
	*n = fread(b, 1, (size_t)sz, fp);
	fclose(fp);
	return b;
}

static void spit(const char *path, const char *b, size_t n)
{
	FILE *fp = fopen(path, "wb");

	fwrite(b, 1, n, fp);
	fclose(fp);
}

/* Oracle: the window at global G is valid (in one sequence, no N, length win). */
static int window_ok(const tref_t *t, size_t g, size_t win, int *seq)
{
	int s;
	size_t j;

	for (s = 0; s < t->n; s++)
		if (g >= t->off[s] && g < t->off[s + 1])
			break;
	if (s == t->n || g + win > t->off[s + 1])
		return 0;
	for (j = 0; j < win; j++)
		if (code_of(t->cat[g + j]) < 0)
			return 0;
	if (seq)
		*seq = s;
	return 1;
}

typedef struct { uint32_t code; uint64_t nb; uint32_t pos; } occ_t;

static int cmp_occ_cnp(const void *a, const void *b)
{
	const occ_t *x = a, *y = b;

	if (x->code != y->code) return x->code < y->code ? -1 : 1;
	if (x->nb != y->nb) return x->nb < y->nb ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/*
 * Oracle occurrences of partition PT: the starts it owns (before the next
 * partition's beginning where that one cuts the same sequence) whose seed
 * span lies in one sequence, free of N; neighborhood bases past the
 * sequence's end or on N read as A (code 0).
 */
static occ_t *oracle(const tref_t *t, const idx_t *x, uint32_t part, size_t *n)
{
	const idx_part_t *pt = &x->part[part];
	size_t g, k = 0;
	occ_t *o = malloc((pt->end - pt->beg + 1) * sizeof *o);

	for (g = pt->beg; g < x->own_end[part] && g + x->p.span <= pt->end; g++) {
		uint32_t c = 0, i;
		uint64_t q = 0;
		int s;

		if (!window_ok(t, g, x->p.span, &s))
			continue;
		for (i = 0; i < x->p.w; i++)
			c |= (uint32_t)code_of(t->cat[g + x->p.shape_pos[i]]) << (2 * i);
		for (i = 0; i < x->p.l; i++) {
			size_t a = g + x->p.span + i;
			int b = a < t->off[s + 1] ? code_of(t->cat[a]) : 0;

			q |= (uint64_t)(b < 0 ? 0 : b) << (2 * i);
		}
		o[k].code = c;
		o[k].nb = q;
		o[k].pos = (uint32_t)(g - pt->beg);
		k++;
	}
	*n = k;
	return o;
}

static int check_general(const idx_t *x, uint32_t part, occ_t *o, size_t n)
{
	const idx_part_t *pt = &x->part[part];
	uint64_t nc = 1ULL << (2 * x->p.w), c, k = 0, cap = 0, *wd = NULL;
	uint32_t h = x->p.h;

	/* format 3: bpr stripes each block's unique keys (bpr_stripe), key j
	 * standing for red.pos[nbpos(j) .. nbpos(j+1)): (code, nb, pos) order */
	qsort(o, n, sizeof *o, cmp_occ_cnp);
	if (pt->n_occ != n)
		return 0;
	for (c = 0; c < nc; c++) {
		uint64_t b, e, i, j, ub = pt->red_start[c], nu = pt->red_start[c + 1] - ub;
		uint64_t nw = (nu + h - 1) / h;

		idx_gen_block(pt, (uint32_t)c, &b, &e);
		if (nw + 1 > cap) {
			cap = 2 * (nw + 1);
			free(wd);
			wd = malloc(cap * sizeof *wd);
		}
		bpr_stripe(pt->red_nb32 ? pt->red_nb32 + ub : NULL, pt->red_nb32 ? NULL : pt->red_nb + ub,
			nu, x->p.l, wd);
		for (i = b, j = 0; j < nu; j++) {
			uint64_t q = idx_stripe_get(wd[j / h], h, x->p.l, (uint32_t)(j % h)), p;

			for (p = idx_nbpos(pt, ub + j); p < idx_nbpos(pt, ub + j + 1); p++, i++, k++)
				if (k >= n || o[k].code != c || o[k].pos != pt->red_pos[p] || o[k].nb != q
						|| p != i || o[k].nb != idx_gen_nb(x, pt, (uint32_t)c, i - b)) {
					free(wd);
					return 0;
				}
		}
		/* every occurrence is a key's; unused slots of the last word are zero */
		for (j = nu; j < nw * h; j++)
			if (idx_stripe_get(wd[j / h], h, x->p.l, (uint32_t)(j % h)) != 0)
				i = e + 1;
		if (i != e) {
			free(wd);
			return 0;
		}
	}
	free(wd);
	return k == n;
}

static int check_reduced(const idx_t *x, uint32_t part, occ_t *o, size_t n)
{
	const idx_part_t *pt = &x->part[part];
	uint64_t nc = 1ULL << (2 * x->p.w), c, k = 0;

	qsort(o, n, sizeof *o, cmp_occ_cnp);
	for (c = 0; c < nc; c++) {
		uint64_t j;

		for (j = pt->red_start[c]; j < pt->red_start[c + 1]; j++) {
			uint64_t i, pb, pe;

			if (j > pt->red_start[c] && idx_red_key(pt, j - 1) >= idx_red_key(pt, j))
				return 0;  /* not sorted unique */
			if (idx_nbpos(pt, j) >= idx_nbpos(pt, j + 1))
				return 0;
			for (i = idx_nbpos(pt, j); i < idx_nbpos(pt, j + 1); i++, k++)
				if (k >= n || o[k].code != c || o[k].nb != idx_red_key(pt, j) || o[k].pos != pt->red_pos[i])
					return 0;
			if (!idx_red_find(pt, (uint32_t)c, idx_red_key(pt, j), &pb, &pe)
					|| pb != idx_nbpos(pt, j) || pe != idx_nbpos(pt, j + 1))
				return 0;
		}
	}
	return k == n;
}

/* BDZ: collision-free, every key found at its hash address, absent keys rejected. */
static int check_block(const idx_t *x, uint32_t part, int *n_absent_tested)
{
	const idx_part_t *pt = &x->part[part];
	uint64_t nc = 1ULL << (2 * x->p.w), c;
	unsigned char *used = NULL;
	size_t cap = 0;

	for (c = 0; c < nc; c++) {
		uint32_t u = pt->red_start[c + 1] - pt->red_start[c];
		uint32_t m = pt->blk_start[c + 1] - pt->blk_start[c], j, k;

		if (m != 3 * bdz_part_size(u))
			return 0;
		if (m > cap) {
			free(used);
			cap = m * 2;
			used = malloc(cap);
		}
		if (m)
			memset(used, 0, m);
		for (j = 0; j < u; j++) {
			uint64_t q = idx_red_key(pt, pt->red_start[c] + j), pb, pe, rb, re;
			uint32_t slot;

			if (!idx_blk_find(pt, (uint32_t)c, q, &pb, &pe, &slot))
				return 0;
			if (slot >= m || used[slot]++)
				return 0;  /* collision */
			if (idx_blk_key(pt, (uint32_t)c, pt->blk_start[c] + slot) != q)
				return 0;
			idx_red_find(pt, (uint32_t)c, q, &rb, &re);
			if (pb != rb || pe != re)
				return 0;
		}
		/* phantom slots hold the first neighborhood */
		for (k = 0; k < m; k++)
			if (!used[k] && idx_blk_key(pt, (uint32_t)c, pt->blk_start[c] + k) != idx_red_key(pt, pt->red_start[c]))
				return 0;
		/* absent neighborhoods are rejected */
		for (k = 0; k < 8; k++) {
			uint64_t q = rnd() & idx_mask2(x->p.l), pb, pe, rb, re;
			int inr = idx_red_find(pt, (uint32_t)c, q, &rb, &re);
			int inb = idx_blk_find(pt, (uint32_t)c, q, &pb, &pe, NULL);

			if (inr != inb || (inr && (pb != rb || pe != re)))
				return 0;
			if (!inr)
				(*n_absent_tested)++;
		}
	}
	free(used);
	return 1;
}

/* FM: locate equals a scan of the partition for clean, owned occurrences. */
static int check_fm(const tref_t *t, const idx_t *x, uint32_t part, int trials)
{
	const idx_part_t *pt = &x->part[part];
	int k;
	uint8_t pat[40];
	uint32_t *got = malloc((pt->fm.n + 2) * sizeof *got);

	for (k = 0; k < trials; k++) {
		size_t m = 1 + rndn(10), g, i, ng, ne = 0;
		uint64_t lo, hi;
		char sp[40];
		int ok = 1;

		if (rndn(3) && pt->end - pt->beg > m) {
			size_t a = pt->beg + rndn(pt->end - pt->beg - m);

			for (i = 0; i < m; i++) {
				int cd = code_of(t->cat[a + i]);

				pat[i] = (uint8_t)(cd < 0 ? 0 : cd);
			}
		} else {
			for (i = 0; i < m; i++)
				pat[i] = (uint8_t)rndn(4);
		}
		for (i = 0; i < m; i++)
			sp[i] = "ACGT"[pat[i]];
		idx_fm_count(pt, pat, m, &lo, &hi);
		ng = idx_fm_locate(x, part, lo, hi, m, got);
		for (g = pt->beg; g + m <= pt->end; g++) {
			if (g >= x->own_end[part] || !window_ok(t, g, m, NULL) || memcmp(t->cat + g, sp, m) != 0)
				continue;
			if (ne >= ng || got[ne] != g - pt->beg)
				ok = 0;
			ne++;
		}
		if (!ok || ne != ng) {
			tap_diag("fm mismatch: pattern %.*s, %zu found, %zu expected", (int)m, sp, ng, ne);
			free(got);
			return 0;
		}
	}
	free(got);
	return 1;
}

/* Flip a byte in each section's payload, and truncate: the loader must refuse. */
static void check_damage(const char *path, const idx_t *x)
{
	size_t n, i;
	char *img = slurp(path, &n), *tmp = strdup("/tmp/idx_dmg.XXXXXX"), *e;
	int fd = mkstemp(tmp), bad_ok = 1, trunc_ok = 1;
	const idx_sec_t *s = x->secs;

	close(fd);
	for (i = 0; i < x->n_sections; i++) {
		char want[64];
		idx_t *y;
		size_t at;

		if (s[i].len == 0)
			continue;
		at = s[i].off + rndn(s[i].len);
		img[at] ^= (char)(1 + rndn(255));
		spit(tmp, img, n);
		img[at] = ((const char *)x->map)[at];
		e = NULL;
		y = idx_load(tmp, 0, &e);
		snprintf(want, sizeof want, "'%s'", s[i].name);
		if (y || !e || !strstr(e, want)) {
			tap_diag("damaged %s: %s", s[i].name, e ? e : "accepted");
			bad_ok = 0;
		}
		if (s[i].part != IDX_PART_GLOBAL) {
			snprintf(want, sizeof want, "partition %u", s[i].part);
			if (e && !strstr(e, want))
				bad_ok = 0;
		}
		free(e);
		idx_close(y);
		/* truncated inside this section */
		spit(tmp, img, s[i].off + rndn(s[i].len));
		e = NULL;
		y = idx_load(tmp, 0, &e);
		if (y || !e || !strstr(e, "truncated")) {
			tap_diag("truncated in %s: %s", s[i].name, e ? e : "accepted");
			trunc_ok = 0;
		}
		free(e);
		idx_close(y);
	}
	/* damaged header of a section, and of the file */
	{
		idx_t *y;
		size_t at = s[x->n_sections / 2].off - IDX_SEC_HDR + 24;

		img[at] ^= 0x10;
		spit(tmp, img, n);
		img[at] ^= 0x10;
		e = NULL;
		y = idx_load(tmp, 0, &e);
		tap_ok(!y && e && strstr(e, s[x->n_sections / 2].name), "damaged section header refused: %s", e ? e : "accepted");
		free(e);
		idx_close(y);
		img[50] ^= 1;
		spit(tmp, img, n);
		img[50] ^= 1;
		e = NULL;
		y = idx_load(tmp, 0, &e);
		tap_ok(!y && e && strstr(e, "header"), "damaged file header refused: %s", e ? e : "accepted");
		free(e);
		idx_close(y);
		spit(tmp, img, n - 64);
		e = NULL;
		y = idx_load(tmp, 0, &e);
		tap_ok(!y && e && strstr(e, "truncated"), "file without end section refused: %s", e ? e : "accepted");
		free(e);
		idx_close(y);
	}
	/* a position out of range with a valid checksum: caught by the consistency check */
	for (i = 0; i < x->n_sections; i++) {
		idx_t *y;
		uint8_t *h;
		uint32_t bad = 0xffffffffu;

		if (strcmp(s[i].name, "red.pos") != 0 || s[i].len < 4)
			continue;
		memcpy(img + s[i].off, &bad, 4);
		h = (uint8_t *)img + s[i].off - IDX_SEC_HDR;
		sp_st64(h + 32, XXH3_64bits_withSeed(img + s[i].off, (size_t)s[i].len, x->fingerprint));
		sp_st64(h + 56, XXH3_64bits(h, 56));
		spit(tmp, img, n);
		memcpy(img, x->map, n);
		e = NULL;
		y = idx_load(tmp, 0, &e);
		tap_ok(!y && e && strstr(e, "'red.pos'") && strstr(e, "out of range"),
			"a re-checksummed out-of-range position is refused: %s", e ? e : "accepted");
		free(e);
		idx_close(y);
		break;
	}
	tap_ok(bad_ok, "a flipped byte in each of %llu sections is refused naming the section",
		(unsigned long long)x->n_sections);
	tap_ok(trunc_ok, "truncation inside each section is refused");
	unlink(tmp);
	free(tmp);
	free(img);
}

int main(void)
{
	int round;

	sp_set_progname("idx_test");
	for (round = 0; round < 40; round++) {
		tref_t t;
		idx_params_t p;
		char err[128], *path, *path2, *e = NULL;
		static const char *const shapes[] = { "##-###", "#-#", "##--#-#", "#-##-#" };
		const char *shape = NULL;
		int u = 0, l = 1 + (int)rndn(32), nt = 1 + (int)rndn(4), ok_g = 1, ok_r = 1, ok_b = 1, ok_f = 1, absent = 0;
		uint32_t i;
		idx_t *x;
		size_t total_occ = 0, win;

		for (;;) {
			tref_make(&t, 1 + (int)rndn(6), round < 30 ? 400 : 3000, 4, round % 7 == 3);
			if (t.total >= 80)
				break;
			tref_free(&t);
		}
		if (rndn(3) == 0)
			shape = shapes[rndn(4)];
		else
			u = 1 + (int)rndn(6);
		if (idx_params_init(&p, shape, u, l, t.total, err, sizeof err) != 0) {
			tap_ok(0, "params: %s", err);
			tref_free(&t);
			continue;
		}
		win = p.span + p.l;
		p.structs = IDX_S_GENERAL | IDX_S_REDUCED | IDX_S_BLOCK | IDX_S_FM;
		p.sa_rate = 1 + (uint32_t)rndn(40);
		if (rndn(2))
			p.part_limit = 2 * win + rndn(t.total);
		{
			/* need at least one window somewhere */
			size_t g, any = 0;

			for (g = 0; g + p.span <= t.total && !any; g++)
				any = window_ok(&t, g, p.span, NULL);
			if (!any) {
				tref_free(&t);
				round--;
				continue;
			}
		}
		path = build_file(&t, &p, nt, 0);
		x = idx_load(path, round % 2 ? IDX_LOAD_READ : 0, &e);
		if (!tap_ok(x != NULL, "round %d: load (%s, u=%u l=%u, %d seqs, %zu bases, limit %llu)", round,
				p.shape, p.w, p.l, t.n, t.total, (unsigned long long)p.part_limit)) {
			tap_diag("%s", e);
			free(e);
			tref_free(&t);
			continue;
		}
		for (i = 0; i < x->n_part; i++) {
			size_t n;
			occ_t *o = oracle(&t, x, i, &n);

			total_occ += n;
			ok_g &= check_general(x, i, o, n);
			ok_r &= check_reduced(x, i, o, n);
			ok_b &= check_block(x, i, &absent);
			ok_f &= check_fm(&t, x, i, 30);
			free(o);
		}
		{
			/* every valid window (seed span in a sequence, free of N)
			 * is in exactly one partition */
			size_t g, nvalid = 0;

			for (g = 0; g + p.span <= t.total; g++)
				nvalid += window_ok(&t, g, p.span, NULL);
			tap_ok(nvalid == total_occ, "round %d: %u partitions hold each of the %zu windows once (%zu)",
				round, x->n_part, nvalid, total_occ);
		}
		tap_ok(ok_g, "round %d: general structure equals the brute-force scan", round);
		tap_ok(ok_r, "round %d: reduced structure holds the same multiset", round);
		tap_ok(ok_b, "round %d: BDZ collision-free, keys at their hash address, %d absent rejected", round, absent);
		tap_ok(ok_f, "round %d: FM backward search and locate equal a scan", round);
		{
			/* reference round trip */
			char *buf = malloc(t.total + 1);
			size_t j;
			int ok = x->total == t.total && x->n_seq == (uint32_t)t.n;

			for (j = 0; ok && j < t.total; j++) {
				int cd = code_of(t.cat[j]);
				unsigned b = (x->pack[j >> 2] >> (2 * (j & 3))) & 3;

				if ((cd >= 0 && (unsigned)cd != b) || (cd < 0 && b != 0))
					ok = 0;
				if ((cd < 0) != !idx_range_clean(x, j, 1))
					ok = 0;
			}
			for (j = 0; ok && j < (size_t)t.n; j++)
				ok = strcmp(x->names[j], t.name[j]) == 0 && x->len[j] == t.len[j];
			tap_ok(ok, "round %d: names, lengths, packed bases and N runs round-trip", round);
			free(buf);
		}
		if (round % 5 == 0) {
			size_t n1, n2;
			char *a, *b;

			path2 = build_file(&t, &p, nt == 1 ? 3 : 1, 1);
			a = slurp(path, &n1);
			b = slurp(path2, &n2);
			tap_ok(n1 == n2 && memcmp(a, b, n1) == 0 && bad_adds_ok,
				"round %d: bit-identical with %d and %d threads, and after refused sequences",
				round, nt, nt == 1 ? 3 : 1);
			free(a);
			free(b);
			unlink(path2);
			free(path2);
		}
		if (round % 10 == 0)
			check_damage(path, x);
		idx_close(x);
		unlink(path);
		free(path);
		tref_free(&t);
	}
	/* partitioning: empty sequences anywhere, long sequences split with overlap */
	{
		int ok = 1, k;

		for (k = 0; k < 2000 && ok; k++) {
			uint64_t off[12], limit, win = 2 + rndn(20), g;
			uint32_t n = 1 + (uint32_t)rndn(10), i, np, j;
			idx_prange_t *pr;

			off[0] = 0;
			for (i = 0; i < n; i++)
				off[i + 1] = off[i] + (rndn(3) ? rndn(200) : 0);
			limit = 2 * win + rndn(150);
			np = idx_partition(off, n, limit, (uint32_t)win, &pr);
			for (j = 0; j < np; j++) {
				if (pr[j].beg >= pr[j].end || pr[j].end > off[n] || pr[j].end - pr[j].beg > limit
						|| pr[j].first_seq >= pr[j].end_seq || pr[j].end_seq > n
						|| off[pr[j].first_seq] > pr[j].beg || off[pr[j].end_seq] < pr[j].end
						|| (j && pr[j].beg < pr[j - 1].end - (win - 1 < pr[j - 1].end ? win - 1 : 0)))
					ok = 0;
			}
			/* every window inside a sequence lies whole in exactly one partition's owned range */
			for (i = 0; i < n && ok; i++)
				for (g = off[i]; g + win <= off[i + 1]; g++) {
					uint32_t cnt = 0;

					for (j = 0; j < np; j++)
						cnt += g >= pr[j].beg && g + win <= pr[j].end
							&& (j + 1 == np || pr[j + 1].beg >= pr[j].end || g < pr[j + 1].beg);
					if (cnt != 1)
						ok = 0;
				}
			free(pr);
		}
		tap_ok(ok, "idx_partition: sound partitions, each window owned once (2000 random layouts)");
	}
	/* BDZ on its own: larger key sets, every size class */
	{
		bdz_work_t w;
		uint32_t n, ok = 1;

		memset(&w, 0, sizeof w);
		for (n = 1; n < 3000; n = n < 40 ? n + 1 : n * 3 / 2) {
			uint64_t *keys = malloc(n * sizeof *keys);
			uint32_t *slot = malloc(n * sizeof *slot), seed, att, k, m = 3 * bdz_part_size(n);
			unsigned char *used = calloc(m, 1);

			for (k = 0; k < n; k++)
				keys[k] = rnd() ^ ((uint64_t)k << 40);
			if (bdz_build(&w, keys, n, n, &seed, slot, &att) != 0 || seed != att - 1
					|| seed >= BDZ_ATTEMPTS) {
				ok = 0;
			} else {
				for (k = 0; k < n; k++) {
					bdz_hash_t h = bdz_hash(keys[k], bdz_seed(n, seed));
					uint32_t r = m / 3, v0 = bdz_vertex(h, r, 0), v1 = bdz_vertex(h, r, 1), v2 = bdz_vertex(h, r, 2);
					uint32_t s = bdz_slot(h, r, w.g[v0], w.g[v1], w.g[v2]);

					if (s != slot[k] || s >= m || used[s]++)
						ok = 0;
				}
			}
			free(keys); free(slot); free(used);
		}
		bdz_work_free(&w);
		tap_ok(ok, "bdz_build: collision-free perfect hash for 1..3000 keys");
	}
	return tap_done();
}
