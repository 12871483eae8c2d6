/*
 * idx_load.c - fuzz target: the index loader.  The input is an index file
 * (checksums are not compared in the fuzzing build, so a mutated file
 * reaches the structure checks).  An index the loader accepts is then used
 * the way seedfilt and extend use it - lookups in every structure, FM
 * searches and locates, position and range queries - so that any invariant
 * the loader fails to check shows up as an access outside the file
 * (AddressSanitizer) or an endless loop (the time limit).  After the deep
 * check (idx_check_deep) every FM row must locate to a position.
 */
#include <string.h>

#include "fuzz.h"
#include "idx.h"

static void use_part(const idx_t *x, uint32_t part)
{
	const idx_part_t *pt = &x->part[part];
	uint64_t nc = 1ULL << (2 * x->p.w), k, lo, hi, b, e;
	uint32_t out[64];
	uint8_t pat[64];

	for (k = 0; k < 512 && k < nc; k++) {
		uint32_t code = (uint32_t)((k * 2654435761u) % nc), slot;

		if (pt->red_start) {
			idx_gen_block(pt, code, &b, &e);
			if (b > e || e > pt->n_occ)
				fuzz_fail("gen block [%llu, %llu) of %llu", (unsigned long long)b,
					(unsigned long long)e, (unsigned long long)pt->n_occ);
			if (e > b)
				(void)idx_gen_nb(x, pt, code, e - b - 1);
		}
		if (pt->red_start) {
			uint64_t q = pt->red_start[code] < pt->red_start[code + 1]
				? idx_red_key(pt, pt->red_start[code]) : k;

			if (idx_red_find(pt, code, q, &b, &e) && (b >= e || e > pt->n_occ))
				fuzz_fail("red range");
			if (pt->blk_start && idx_blk_find(pt, code, q, &b, &e, &slot) && (b >= e || e > pt->n_occ))
				fuzz_fail("blk range");
		}
	}
	if (pt->fm.n) {
		/* patterns from the reference itself, so that some are found */
		uint64_t len = pt->end - pt->beg, g, m;

		for (k = 0; k < 16; k++) {
			size_t W = x->p.span + x->p.l, n;

			g = len > W ? pt->beg + (k * 7919) % (len - W) : pt->beg;
			m = W < len ? W : len;
			for (n = 0; n < m; n++)
				pat[n] = (uint8_t)(idx_ref_word(x->pack, g + n) & 3);
			idx_fm_count(pt, pat, m, &lo, &hi);
			if (lo > hi || hi > pt->fm.n + 1)
				fuzz_fail("fm rows [%llu, %llu) of %llu", (unsigned long long)lo,
					(unsigned long long)hi, (unsigned long long)pt->fm.n + 1);
			if (hi - lo > 64)
				hi = lo + 64;
			n = idx_fm_locate(x, part, lo, hi, m, out);
			for (; n > 0; n--)
				if (out[n - 1] + m > len)
					fuzz_fail("fm position past the partition");
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = fuzz_memfd(data, size);
	char path[64], *err = NULL;
	idx_t *x;
	uint32_t i;

	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	x = idx_load(path, size & 1 ? IDX_LOAD_READ : 0, &err);
	if (!x) {
		free(err);
		close(fd);
		return 0;
	}
	for (i = 0; i < x->n_seq && i < 64; i++) {
		uint64_t ofs;

		if (x->len[i] && idx_pos2seq(x, x->off[i], &ofs) > i)
			fuzz_fail("pos2seq");
		(void)idx_range_clean(x, x->off[i], x->len[i]);
	}
	for (i = 0; i < x->n_part && i < 8; i++)
		use_part(x, i);
	if (idx_check_deep(x, &err) == 0) {
		for (i = 0; i < x->n_part && i < 4; i++) {
			const fm_t *fm = &x->part[i].fm;
			uint64_t r;

			for (r = 0; fm->n && r <= fm->n && r < 4096; r++)
				if (fm_locate_row(fm, r) > fm->n)
					fuzz_fail("a checked FM row %llu does not locate", (unsigned long long)r);
		}
	} else {
		free(err);
	}
	idx_close(x);
	close(fd);
	return 0;
}
