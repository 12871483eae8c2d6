/*
 * sp_md5.c - MD5 as RFC 1321 specifies it (see sp_md5.h).
 */
#include <string.h>

#include "sp_le.h"
#include "sp_md5.h"

/* the per-step shift amounts, four per round */
static const uint8_t shifts[16] = { 7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21 };

/* T[i] = floor(2^32 * |sin(i + 1)|) */
static const uint32_t T[64] = {
	0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
	0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
	0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
	0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
	0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
	0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
	0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
	0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
};

static inline uint32_t rol(uint32_t x, int s)
{
	return x << s | x >> (32 - s);
}

static void block(uint32_t h[4], const uint8_t *p)
{
	uint32_t x[16], a = h[0], b = h[1], c = h[2], d = h[3];
	int i;

	for (i = 0; i < 16; i++)
		x[i] = sp_ld32(p + 4 * i);
	for (i = 0; i < 64; i++) {
		uint32_t f, t;
		int g;

		switch (i >> 4) {
		case 0: f = (b & c) | (~b & d); g = i; break;
		case 1: f = (d & b) | (~d & c); g = (5 * i + 1) & 15; break;
		case 2: f = b ^ c ^ d; g = (3 * i + 5) & 15; break;
		default: f = c ^ (b | ~d); g = (7 * i) & 15; break;
		}
		t = d;
		d = c;
		c = b;
		b = b + rol(a + f + T[i] + x[g], shifts[(i >> 4) * 4 + (i & 3)]);
		a = t;
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
}

void sp_md5_init(sp_md5 *m)
{
	m->h[0] = 0x67452301;
	m->h[1] = 0xefcdab89;
	m->h[2] = 0x98badcfe;
	m->h[3] = 0x10325476;
	m->len = 0;
}

void sp_md5_update(sp_md5 *m, const void *data, size_t n)
{
	const uint8_t *p = data;
	size_t have = (size_t)(m->len & 63);

	m->len += n;
	if (have) {
		size_t k = 64 - have < n ? 64 - have : n;

		memcpy(m->blk + have, p, k);
		p += k;
		n -= k;
		if (have + k < 64)
			return;
		block(m->h, m->blk);
	}
	for (; n >= 64; p += 64, n -= 64)
		block(m->h, p);
	memcpy(m->blk, p, n);
}

void sp_md5_final(sp_md5 *m, uint8_t out[16])
{
	size_t have = (size_t)(m->len & 63);
	uint64_t bits = m->len * 8;
	int i;

	m->blk[have++] = 0x80;
	if (have > 56) {
		memset(m->blk + have, 0, 64 - have);
		block(m->h, m->blk);
		have = 0;
	}
	memset(m->blk + have, 0, 56 - have);
	sp_st64(m->blk + 56, bits);
	block(m->h, m->blk);
	for (i = 0; i < 4; i++)
		sp_st32(out + 4 * i, m->h[i]);
}
