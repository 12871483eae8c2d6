/*
 * md5_test.c - sp_md5 against the test suite of RFC 1321 (appendix A.5),
 * and fed in pieces of every size against the digest of the whole.
 */
#include <stdio.h>
#include <string.h>

#include "sp_md5.h"
#include "tap.h"

static void hex(const uint8_t d[16], char out[33])
{
	int i;

	for (i = 0; i < 16; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

static void digest(const void *p, size_t n, size_t piece, char out[33])
{
	const uint8_t *b = p;
	sp_md5 m;
	uint8_t d[16];
	size_t o;

	sp_md5_init(&m);
	for (o = 0; o < n; o += piece)
		sp_md5_update(&m, b + o, n - o < piece ? n - o : piece);
	sp_md5_final(&m, d);
	hex(d, out);
}

int main(void)
{
	static const char *suite[][2] = {
		{ "", "d41d8cd98f00b204e9800998ecf8427e" },
		{ "a", "0cc175b9c0f1b6a831c399e269772661" },
		{ "abc", "900150983cd24fb0d6963f7d28e17f72" },
		{ "message digest", "f96b697d7cb7938d525a2f31aaf161d0" },
		{ "abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b" },
		{ "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
			"d174ab98d277d9f5a5611c2c9f419d9f" },
		{ "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
			"57edf4a22be3c955ac49da2e2107b67a" },
	};
	uint8_t buf[300];
	char whole[33], part[33];
	size_t i, n, piece;
	int bad = 0;

	for (i = 0; i < sizeof suite / sizeof suite[0]; i++) {
		digest(suite[i][0], strlen(suite[i][0]), 1000, whole);
		tap_ok(strcmp(whole, suite[i][1]) == 0, "MD5(\"%s\") = %s", suite[i][0], whole);
	}
	for (i = 0; i < sizeof buf; i++)
		buf[i] = (uint8_t)(i * 131 + 7);
	for (n = 0; n <= sizeof buf; n += 7) {
		digest(buf, n, n + 1, whole);
		for (piece = 1; piece <= 70; piece++) {
			digest(buf, n, piece, part);
			bad += strcmp(whole, part) != 0;
		}
	}
	tap_ok(bad == 0, "a message fed in pieces of 1..70 bytes has the digest of the whole");
	return tap_done();
}
