/* rec_keys.c - fuzz target: record streams decoded as keys (rec_stream.h). */
#include "rec_stream.h"

static void check_record(const uint8_t *body, uint32_t len)
{
	rec_key_t k;
	uint8_t *re;

	if (rec_key_decode(body, len, &k) != 0)
		return;
	if (rec_key_size(k.key_len, k.val_len) != len)
		fuzz_fail("keys: sizes do not add up");
	re = malloc(len);
	if (rec_key_encode(re, k.key, k.key_len, k.val, k.val_len) != len || memcmp(re, body, len) != 0)
		fuzz_fail("keys: encoding the decoded key gives other bytes");
	free(re);
	if (rec_tsv_record(REC_KIND_KEYS, body, len, fuzz_null) != 0)
		fuzz_fail("keys: a decoded body does not print");
}
