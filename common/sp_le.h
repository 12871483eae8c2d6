/*
 * sp_le.h - little-endian loads and stores for every on-disk and on-stream
 * format of the suite (record streams, the index, the kernel cache):
 * explicit byte order, no alignment assumptions, no type punning.
 */
#ifndef SP_LE_H
#define SP_LE_H

#include <stddef.h>
#include <stdint.h>

static inline uint16_t sp_ld16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t sp_ld32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t sp_ld64(const uint8_t *p)
{
	return (uint64_t)sp_ld32(p) | (uint64_t)sp_ld32(p + 4) << 32;
}
static inline void sp_st16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void sp_st32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}
static inline void sp_st64(uint8_t *p, uint64_t v) { sp_st32(p, (uint32_t)v); sp_st32(p + 4, (uint32_t)(v >> 32)); }

/*
 * A run of N little-endian u32 words at P that hold 32-bit members of a
 * struct S, the members given by a table of their offsetof()s, OFS: one
 * table writes a layout once for both the store and the load.
 */
static inline void sp_st32_fields(uint8_t *p, const void *s, const size_t *ofs, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		sp_st32(p + 4 * k, *(const uint32_t *)((const char *)s + ofs[k]));
}
static inline void sp_ld32_fields(void *s, const uint8_t *p, const size_t *ofs, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		*(uint32_t *)((char *)s + ofs[k]) = sp_ld32(p + 4 * k);
}

#endif
