/*
 * seqio_gz.c - fuzz target: FASTA/FASTQ text gzipped by the harness, so
 * that mutations of the text reach the parser through inflate
 * (seqio_common.h).  Byte 0 picks the chunk size; byte 1 the container:
 * bits 0-1 how many members the text is cut into (1-4, as BGZF and
 * concatenated files have), bit 2 NUL padding after the last member,
 * bit 3 garbage after it, bits 4-7 a cut of the last 0-15 bytes (a
 * truncated file).
 */
#include <zlib.h>

#include "seqio_common.h"

/* gzip SRC[0..n) as one member appended to OUT (at *len, room cap). */
static void gz_member(const uint8_t *src, size_t n, uint8_t *out, size_t *len, size_t cap)
{
	z_stream z;

	memset(&z, 0, sizeof z);
	if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		fuzz_fail("deflateInit2");
	z.next_in = (Bytef *)src;
	z.avail_in = (uInt)n;
	z.next_out = out + *len;
	z.avail_out = (uInt)(cap - *len);
	if (deflate(&z, Z_FINISH) != Z_STREAM_END)
		fuzz_fail("deflate");
	*len = cap - z.avail_out;
	deflateEnd(&z);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n, cap, len = 0, i, parts, at = 0, cut;
	uint8_t *out;
	unsigned ctl;

	if (size < 2)
		return 0;
	ctl = data[1];
	data += 2;
	n = size - 2;
	parts = (ctl & 3) + 1;
	cap = 2 * n + 64 * parts + 64;
	out = malloc(cap);
	for (i = 0; i < parts; i++) {
		size_t end = i + 1 == parts ? n : n * (i + 1) / parts;

		gz_member(data + at, end - at, out, &len, cap - 16);
		at = end;
	}
	if (ctl & 4) {
		memset(out + len, 0, 7);
		len += 7;
	}
	if (ctl & 8)
		out[len++] = 'x';
	cut = ctl >> 4;
	len -= cut < len ? cut : 0;
	run_reader(out, len, data[-2]);
	free(out);
	return 0;
}
