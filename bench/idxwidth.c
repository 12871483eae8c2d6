/*
 * idxwidth.c - where an index's indexed-block bytes go, and what per-block
 * rank widths would make of them (issue 13's 12 bytes per base).
 *
 *   idxwidth INDEX.sx
 *
 * Reads red.start and blk.start of every partition (the index mapped, no
 * checksums) and prints, per base of the reference: blk.rank as stored
 * (format 5: each block's slots at the bits of its unique count - 1, from a
 * 32-bit word), what format 4 stored (W bits a slot, W from the
 * partition's largest SeedBlock), blk.rank if each block's slots were
 * packed without the word alignment, the
 * bytes of one more u32 a seed code (a list of per-block offsets), the
 * start lists' share (4^w+1 u32 each, per partition), the slots of the
 * blocks of at most 4 neighborhoods, and the slots by rank width.
 *
 * Build (from the top directory, after make):
 *   cc -O2 -Icommon -Ikernels -o bin/idxwidth bench/idxwidth.c build/common/idx_*.o \
 *      build/common/fm.o build/common/util.o build/common/bdz.o build/common/seqio.o \
 *      build/common/sp_thread.o build/common/sp_tmp.o -lhts -lz -lxxhash \
 *      -ldivsufsort -ldivsufsort64 -lm -lpthread
 */
#include <stdio.h>
#include <stdlib.h>

#include "idx.h"

static unsigned bits(uint64_t v)
{
	unsigned b = 0;

	while (b < 64 && (1ull << b) <= v)
		b++;
	return b;
}

int main(int argc, char **argv)
{
	char *err = NULL;
	idx_t *x;
	uint64_t now = 0, packed = 0, aligned = 0, nonempty = 0, small = 0, sl_small = 0, slots = 0;
	uint64_t hist[65] = { 0 }, nc, c, uniq = 0, f4 = 0;
	double n;
	uint32_t i;

	if (argc != 2) {
		fprintf(stderr, "usage: idxwidth INDEX.sx\n");
		return 2;
	}
	x = idx_load(argv[1], IDX_LOAD_NOVERIFY, &err);
	if (!x) {
		fprintf(stderr, "idxwidth: index '%s': %s\n", argv[1], err);
		return 1;
	}
	if (!(x->p.structs & IDX_S_BLOCK)) {
		fprintf(stderr, "idxwidth: index '%s' has no block structure\n", argv[1]);
		return 1;
	}
	nc = 1ull << (2 * x->p.w);
	n = x->total ? (double)x->total : 1;
	for (i = 0; i < x->n_part; i++) {
		const idx_part_t *pt = &x->part[i];
		uint64_t maxu = 0;

		uniq += pt->n_uniq;
		now += (pt->n_rank_words + 1) * 4;
		for (c = 0; c < nc; c++) {
			uint64_t u = pt->red_start[c + 1] - pt->red_start[c];
			uint64_t m = pt->blk_start[c + 1] - pt->blk_start[c];
			unsigned w = u ? bits(u - 1) : 0;

			if (u > maxu)
				maxu = u;
			if (!u)
				continue;
			nonempty++;
			hist[w] += m;
			slots += m;
			packed += m * w;
			aligned += (m * w + 31) / 32 * 32;
			if (u <= 4) {
				small++;
				sl_small += m;
			}
		}
		f4 += ((pt->n_slots * (maxu ? bits(maxu - 1) : 0) + 31) / 32 + 1) * 4;
	}
	printf("index\t%s\nbases\t%llu\npartitions\t%u\nweight\t%u\n", argv[1],
		(unsigned long long)x->total, x->n_part, x->p.w);
	printf("blk.rank_stored\t%.3f\n", (double)now / n);
	printf("blk.rank_format4_one_width\t%.3f\n", (double)f4 / n);
	printf("blk.rank_per_block_packed\t%.3f\n", (double)packed / 8 / n);
	printf("blk.rank_per_block_word_aligned\t%.3f\n", (double)aligned / 8 / n);
	printf("one_u32_list_per_partition\t%.3f\n", (double)(nc + 1) * 4 * x->n_part / n);
	printf("slots_per_unique_nb\t%.3f\n", uniq ? (double)slots / (double)uniq : 0);
	printf("nonempty_blocks\t%llu of %llu\n", (unsigned long long)nonempty,
		(unsigned long long)(nc * x->n_part));
	printf("blocks_of_at_most_4_nb\t%llu\t%llu slots of %llu\n", (unsigned long long)small,
		(unsigned long long)sl_small, (unsigned long long)slots);
	for (i = 0; i <= 64; i++)
		if (hist[i])
			printf("rank_width\t%u\t%.1f%% of slots\n", i, 100.0 * (double)hist[i] / (double)slots);
	idx_close(x);
	return 0;
}
