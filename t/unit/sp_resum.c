/*
 * sp_resum - rewrite every checksum of a record stream or an index in place,
 * so that a test can damage a file's contents and still hand the tools a
 * file whose checksums all agree (what a fuzzer finds with checksums off,
 * or a bug in a writer, looks like that).
 *
 *   sp_resum [-t] FILE
 *
 * A record stream: the header, block and end block checksums of every
 * member; with -t the end block totals are also set to what the blocks hold.
 * An index: the header, every section payload and section header, and the
 * end section's count and offset.  Lengths are followed as stored; a length
 * that runs past the end of the file stops the walk there.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "idx.h"
#include "rec.h"
#include "sp_le.h"

static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = NULL;
	size_t cap = 0, k;

	if (!f) {
		perror(path);
		exit(2);
	}
	*n = 0;
	do {
		if (*n == cap) {
			cap = cap ? 2 * cap : 1 << 16;
			b = realloc(b, cap);
			if (!b)
				exit(2);
		}
		k = fread(b + *n, 1, cap - *n, f);
		*n += k;
	} while (k > 0);
	fclose(f);
	return b;
}

static void resum_rec(uint8_t *b, size_t n, int totals)
{
	size_t off = 0;

	while (off + REC_HDR_FIXED <= n && memcmp(b + off, REC_MAGIC, REC_MAGIC_LEN) == 0) {
		uint32_t plen = sp_ld32(b + off + 12);
		uint64_t nb = 0, nr = 0, np = 0;

		if (off + REC_HDR_FIXED + (uint64_t)plen + 8 > n)
			return;
		sp_st64(b + off + REC_HDR_FIXED + plen, XXH3_64bits(b + off, REC_HDR_FIXED + (size_t)plen));
		off += REC_HDR_FIXED + (size_t)plen + 8;
		while (off + REC_BLOCK_HDR <= n && memcmp(b + off, REC_BLOCK_TAG, 4) == 0) {
			uint32_t len = sp_ld32(b + off + 4), nrec = sp_ld32(b + off + 8);

			if (off + REC_BLOCK_HDR + (uint64_t)len > n)
				return;
			sp_st64(b + off + 16, XXH3_64bits_withSeed(b + off + REC_BLOCK_HDR, len,
					(uint64_t)len << 32 | nrec));
			nb++;
			nr += nrec;
			np += len;
			off += REC_BLOCK_HDR + (size_t)len;
		}
		if (off + REC_END_LEN > n || memcmp(b + off, REC_END_TAG, 4) != 0)
			return;
		if (totals) {
			sp_st64(b + off + 8, nb);
			sp_st64(b + off + 16, nr);
			sp_st64(b + off + 24, np);
		}
		sp_st64(b + off + 32, XXH3_64bits(b + off, 32));
		off += REC_END_LEN;
	}
}

static void resum_idx(uint8_t *b, size_t n)
{
	uint64_t fp, off = IDX_HDR_LEN, ns = 0;

	if (n < IDX_HDR_LEN)
		return;
	sp_st64(b + 120, XXH3_64bits(b, 120));
	fp = sp_ld64(b + 16);
	while (off + IDX_SEC_HDR <= n) {
		uint8_t *h = b + off;
		uint64_t len = sp_ld64(h + 24), pay = off + IDX_SEC_HDR;

		if (len > n || pay + len > n)
			return;
		ns++;
		if (strncmp((const char *)h, "end", 16) == 0 && len == 32) {
			sp_st64(b + pay, fp);
			sp_st64(b + pay + 8, ns);
			sp_st64(b + pay + 16, off);
		}
		sp_st64(h + 32, XXH3_64bits_withSeed(b + pay, (size_t)len, fp));
		sp_st64(h + 56, XXH3_64bits(h, 56));
		off = pay + (len + IDX_ALIGN - 1) / IDX_ALIGN * IDX_ALIGN;
	}
}

int main(int argc, char **argv)
{
	int totals = argc == 3 && strcmp(argv[1], "-t") == 0;
	const char *path = argv[argc - 1];
	uint8_t *b;
	size_t n;
	FILE *f;

	if (argc != 2 + totals) {
		fprintf(stderr, "usage: sp_resum [-t] FILE\n");
		return 2;
	}
	b = slurp(path, &n);
	if (n >= 8 && memcmp(b, REC_MAGIC, REC_MAGIC_LEN) == 0)
		resum_rec(b, n, totals);
	else if (n >= 8 && memcmp(b, IDX_MAGIC, 8) == 0)
		resum_idx(b, n);
	else {
		fprintf(stderr, "sp_resum: %s: neither a record stream nor an index\n", path);
		return 1;
	}
	f = fopen(path, "wb");
	if (!f || fwrite(b, 1, n, f) != n || fclose(f) != 0) {
		perror(path);
		return 2;
	}
	free(b);
	return 0;
}
