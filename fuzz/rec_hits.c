/* rec_hits.c - fuzz target: record streams decoded as hits (rec_stream.h). */
#include "rec_stream.h"

static void check_record(const uint8_t *body, uint32_t len)
{
	rec_hits_t v;
	rec_hit_t *h;
	uint32_t i = 0;
	uint8_t *re;
	size_t n;

	if (rec_hits_decode(body, len, &v) != 0)
		return;
	/* every hit takes REC_HIT_FIXED bytes at least */
	h = malloc(((size_t)v.n + 1) * sizeof *h);
	while (rec_hits_next(&v, &h[i])) {
		if (i == v.n)
			fuzz_fail("hits: more hits than the count");
		if (h[i].cigar < (const char *)body || h[i].cigar + h[i].cigar_len > (const char *)body + len)
			fuzz_fail("hits: a cigar outside the body");
		i++;
	}
	if (i != v.n)
		fuzz_fail("hits: %u hits for a count of %u", i, v.n);
	n = rec_hits_size(&v.read, h, v.n);
	if (n != len)
		fuzz_fail("hits: size %zu of a %u-byte body", n, len);
	re = malloc(n);
	if (rec_hits_encode(re, &v.read, h, v.n) != n || memcmp(re, body, n) != 0)
		fuzz_fail("hits: encoding the decoded hits gives other bytes");
	free(re);
	free(h);
	if (rec_tsv_record(REC_KIND_HITS, body, len, fuzz_null) != 0)
		fuzz_fail("hits: a decoded body does not print");
}
