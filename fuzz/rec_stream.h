/*
 * rec_stream.h - the body of the record-stream fuzz targets (rec_reads.c,
 * rec_cands.c, rec_hits.c, rec_keys.c): the input is a whole stream (any
 * kind in the header; members may be concatenated), read block by block
 * and record by record; every record is decoded as the target's kind
 * FUZZ_KIND and checked against the encoder, and printed as TSV.  The
 * provenance is checked too: its text parses back to the same text, and
 * carrying it is idempotent.
 */
#include <string.h>

#include "fuzz.h"
#include "rec.h"
#include "rec_kinds.h"

static FILE *fuzz_null;

static void check_prov(const rec_prov_t *p)
{
	rec_prov_t q, c;
	size_t l1, l2, n;
	char *t1 = rec_prov_text(p, &l1), *t2;

	rec_prov_init(&q);
	if (rec_prov_parse(&q, t1, l1) != 0)
		fuzz_fail("provenance text does not parse back");
	t2 = rec_prov_text(&q, &l2);
	if (l1 != l2 || memcmp(t1, t2, l1) != 0)
		fuzz_fail("provenance text changes when parsed again");
	rec_prov_init(&c);
	rec_prov_carry(&c, p);
	n = c.n;
	rec_prov_carry(&c, p);
	rec_prov_carry(&c, &q);
	if (c.n != n || n > p->n)
		fuzz_fail("carrying the provenance twice adds lines");
	free(t1);
	free(t2);
	rec_prov_free(&q);
	rec_prov_free(&c);
}

static void check_record(const uint8_t *body, uint32_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = fuzz_memfd(data, size);
	rec_reader_t *r = rec_reader_fd(fd, "fuzz");
	rec_block_t b;
	int rc;

	if (!fuzz_null && !(fuzz_null = fopen("/dev/null", "w")))
		fuzz_fail("cannot open /dev/null");
	memset(&b, 0, sizeof b);
	if (rec_reader_start(r, REC_KIND_ANY) == REC_OK) {
		check_prov(rec_reader_prov(r));
		while ((rc = rec_read_block(r, &b)) == REC_OK) {
			const uint8_t *body;
			uint32_t len;

			if (b.len == 0 || b.nrec == 0 || b.nrec > b.len / 4)
				fuzz_fail("a block of %u bytes, %u records was accepted", b.len, b.nrec);
			while (rec_block_next(&b, &body, &len) == 1) {
				if (body < b.payload || body + len > b.payload + b.len)
					fuzz_fail("a record outside its block");
				check_record(body, len);
			}
		}
		if (rc == REC_END)
			check_prov(rec_reader_prov(r));
	}
	rec_block_free(&b);
	rec_reader_free(r);
	close(fd);
	return 0;
}
