/*
 * sp_md5.h - MD5 (RFC 1321), for strsort -R: GNU sort's random order is
 * the order of the MD5 digests of a 16-byte random seed followed by the
 * key, so the same --random-source gives the same order as GNU sort.
 */
#ifndef SP_MD5_H
#define SP_MD5_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
	uint32_t h[4];
	uint64_t len;      /* bytes so far */
	uint8_t blk[64];   /* the partial block */
} sp_md5;

void sp_md5_init(sp_md5 *m);
void sp_md5_update(sp_md5 *m, const void *p, size_t n);
/* the 16-byte digest, in the standard byte order */
void sp_md5_final(sp_md5 *m, uint8_t out[16]);

#endif
