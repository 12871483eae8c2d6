/*
 * idx_rank_test.c - format 5's indexed-block fields against brute force:
 * SeedBlocks made to hold exactly U unique neighborhoods for U on the rank
 * width boundaries (1, 2, 3, 4, 5, 2^k - 1, 2^k, 2^k + 1 up to 4097, so
 * every width 0 .. 13), built in memory and in passes (seqidx -M), each
 * slot's rank read bit by bit from blk.rank at blk.roff and compared with
 * the slot its key hashes to (idx_blk_find), phantom slots holding rank 0,
 * blk.roff equal to the running sum of each block's words, blk.seed the
 * first attempt whose graph peels (bdz_build again).
 *
 * The reference: for block c (a seed whose last base is A or C) U_c
 * sequences "seed + neighborhood", each neighborhood l = 32 bases of G and
 * T, all distinct; every other window of such a sequence has a seed that
 * ends in G or T, so block c holds exactly those U_c neighborhoods.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bdz.h"
#include "idx.h"
#include "inc_bdz.h"
#include "inc_idx.h"
#include "idx_oracle.h"
#include "tap.h"
#include "testutil.h"
#include "util.h"

#define W 4
#define L 32

static uint64_t rng = 0x853c49e6748fea9bULL;

static uint64_t rnd(void)
{
	return tu_xorshift64(&rng);
}

static char *build(idx_ref_t *r, uint64_t mem, const char *dir)
{
	char *path = strdup("/tmp/idx_rank_test.XXXXXX"), err[128];
	int fd = mkstemp(path);
	idx_build_opt_t o = { 2, getenv("IDX_RANK_V") != NULL, 0, mem, dir };
	idx_params_t p;

	if (idx_params_init(&p, NULL, W, L, idx_ref_total(r), err, sizeof err) != 0)
		sp_die("params: %s", err);
	p.structs = IDX_S_GENERAL | IDX_S_REDUCED | IDX_S_BLOCK;
	sp_or_die(idx_build(r, &p, &o, fd, path));
	close(fd);
	return path;
}

static int same_file(const char *a, const char *b)
{
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	int ca, cb, same = fa && fb;

	while (same && (ca = getc(fa)) != EOF) {
		cb = getc(fb);
		same = ca == cb;
	}
	if (same)
		same = getc(fb) == EOF;
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same;
}

int main(void)
{
	static const uint32_t sizes[] = { 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65,
		127, 128, 129, 255, 256, 257, 511, 512, 513, 1023, 1024, 1025, 2047, 2048, 2049, 4096,
		4097 };
	const uint32_t ns = sizeof sizes / sizeof *sizes;
	uint32_t want[128] = { 0 }, i, k, c, wseen = 0;
	idx_ref_t *r = idx_ref_init();
	uint64_t nseq = 0, **keys = calloc(128, sizeof *keys);
	char seq[W + L + 1], name[32], *p1, *p2;
	idx_t *x;
	char *e = NULL;
	int ok;

	sp_set_progname("idx_rank_test");
	/* block codes 0 .. 127 (last seed base A or C), spread out */
	for (i = 0; i < ns; i++) {
		c = (i * 37u) % 128u;
		want[c] = sizes[i];
		keys[c] = malloc(sizes[i] * sizeof **keys);
		for (k = 0; k < sizes[i]; k++) {
			uint64_t nb;
			uint32_t j, dup;

			do {   /* a new neighborhood of G and T (2 bits a base: 2 + bit) */
				uint64_t bits = rnd();

				nb = 0;
				for (j = 0; j < L; j++)
					nb |= (2ULL + (bits >> j & 1)) << (2 * j);
				for (dup = 0, j = 0; j < k && !dup; j++)
					dup = keys[c][j] == nb;
			} while (dup);
			keys[c][k] = nb;
			for (j = 0; j < W; j++)
				seq[j] = "ACGT"[c >> (2 * j) & 3];
			for (j = 0; j < L; j++)
				seq[W + j] = "ACGT"[nb >> (2 * j) & 3];
			snprintf(name, sizeof name, "b%u_%u", c, k);
			sp_or_die(idx_ref_add(r, name, seq, W + L));
			nseq++;
		}
	}
	p1 = build(r, 0, NULL);
	p2 = build(r, 8300 * 1024, "/tmp");
	tap_ok(same_file(p1, p2), "a build in passes (-M 8300K) equals the one in memory (%llu sequences)",
		(unsigned long long)nseq);
	x = idx_load(p1, 0, &e);
	if (!tap_ok(x != NULL, "load: format 5 index sound (idx_check)")) {
		tap_diag("%s", e);
		return tap_done();
	}
	{
		const idx_part_t *pt = &x->part[0];
		uint64_t roff = 0, nc = 1ULL << (2 * W);
		int okw = 1, okr = 1, okp = 1, oks = 1, oku = 1;
		bdz_work_t bw;
		uint32_t *slot = malloc(4100 * sizeof *slot), seed, att;

		memset(&bw, 0, sizeof bw);
		for (c = 0; c < nc; c++) {
			uint64_t u = pt->red_start[c + 1] - pt->red_start[c], m = pt->blk_start[c + 1] - pt->blk_start[c];
			uint32_t w = o_width(u);
			unsigned char *hit;

			okw &= pt->blk_roff[c] == roff;
			roff += (m * w + 31) / 32;
			if (c < 128)
				oku &= u == want[c];
			if (c >= 128 || !want[c])
				continue;
			wseen |= 1u << w;
			/* every key: found, and its slot holds its rank */
			hit = calloc(m, 1);
			for (k = 0; k < u; k++) {
				uint64_t pb, pe, j = pt->red_start[c] + k;
				uint32_t sl = 0;

				if (!idx_blk_find(pt, c, idx_red_key(pt, j), &pb, &pe, &sl) || sl >= m
						|| o_rank(pt, c, sl) != k || idx_blk_rank(pt, c, pt->blk_start[c] + sl) != j
						|| pe != pb + 1)
					okr = 0;
				else
					hit[sl] = 1;
			}
			for (k = 0; k < m; k++)
				if (!hit[k] && o_rank(pt, c, k) != 0)
					okp = 0;
			free(hit);
			/* the seed byte: the first attempt that peels these keys */
			for (k = 0; k < u; k++)
				keys[c][k] = idx_red_key(pt, pt->red_start[c] + k);
			if (bdz_build(&bw, keys[c], (uint32_t)u, c, &seed, slot, &att) != 0
					|| seed != pt->blk_seed[c])
				oks = 0;
		}
		okw &= pt->blk_roff[nc] == roff && pt->n_rank_words == roff;
		tap_ok(oku, "each block holds the unique neighborhoods it was made with (1 .. 4097)");
		tap_ok(wseen == 0x3fffu, "rank widths 0 .. 13 all present (seen mask %#x)", wseen);
		tap_ok(okw, "blk.roff: the running sum of each block's words, M slots at its width");
		tap_ok(okr, "every key's slot holds its rank, read bit by bit (and by idx_blk_rank)");
		tap_ok(okp, "phantom slots hold rank 0");
		tap_ok(oks, "blk.seed: the first BDZ attempt whose graph peels");
		bdz_work_free(&bw);
		free(slot);
	}
	/* an absent key is not found, whatever the block */
	ok = 1;
	for (i = 0; i < 2000; i++) {
		uint64_t pb, pe, q = rnd() & idx_mask2(L);

		c = (uint32_t)(rnd() % 128);
		if (want[c]) {
			for (k = 0; k < want[c]; k++)
				if (keys[c][k] == q)
					break;
			if (k < want[c])
				continue;
		}
		if (idx_blk_find(&x->part[0], c, q, &pb, &pe, NULL))
			ok = 0;
	}
	tap_ok(ok, "2000 absent neighborhoods not found");
	idx_close(x);
	unlink(p1);
	unlink(p2);
	free(p1);
	free(p2);
	for (c = 0; c < 128; c++)
		free(keys[c]);
	free(keys);
	idx_ref_free(r);
	return tap_done();
}
