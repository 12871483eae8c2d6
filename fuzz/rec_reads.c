/* rec_reads.c - fuzz target: record streams decoded as reads (rec_stream.h). */
#include "rec_stream.h"

static void check_record(const uint8_t *body, uint32_t len)
{
	rec_read_t rd;
	uint8_t *re;

	if (rec_read_decode(body, len, &rd) != 0)
		return;
	if (rec_read_size(&rd) != len)
		fuzz_fail("reads: size %zu of a %u-byte body", rec_read_size(&rd), len);
	re = malloc(len);
	if (rec_read_encode(re, &rd) != len || memcmp(re, body, len) != 0)
		fuzz_fail("reads: encoding the decoded read gives other bytes");
	free(re);
	if (rec_tsv_record(REC_KIND_READS, body, len, fuzz_null) != 0)
		fuzz_fail("reads: a decoded body does not print");
}
