/*
 * msd.h - MSD radix sort of strings on cached 8-byte key prefixes
 * (Drozd 2014, ch. 4; Karkkainen & Rantala, "Engineering radix sort for
 * strings"), the engine of strsort.
 *
 * The strings are never moved: the sort permutes an array of 16-byte
 * entries, each carrying the next 8 key bytes big-endian (so one integer
 * comparison compares 8 characters), the string's index and its length.
 *
 *   sp_msd_ent (16 bytes)
 *   +---------------------------------+----------------+----------------+
 *   | pfx: key bytes [d, d+8), BE     | idx (u32)      | len (u32)      |
 *   | byte d in bits 63..56, bytes    | string number  | key length in  |
 *   | past the key end are 0          | (input order)  | bytes          |
 *   +---------------------------------+----------------+----------------+
 *
 * The order is bytewise (memcmp, a proper prefix first), and equal keys stay
 * in idx order, so a sort of entries made in input order is stable.  Two keys
 * with equal prefixes at depth d are told apart by length when either ends
 * before d+8 (zero padding equals real NUL bytes, so NUL-containing keys
 * sort correctly); otherwise the prefixes at d+8 are loaded and sorting goes
 * on.
 *
 * With a packed source (sp_msd_pack below) the prefix caches more than 8
 * characters of a small alphabet; all variants handle both.
 *
 * Variants (a registry as in rantala/string-sorting) are listed in msd.c;
 * sp_msd_find() looks one up by name, and the tests run every one of them.
 */
#ifndef SP_MSD_H
#define SP_MSD_H

#include <stddef.h>
#include <stdint.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Bytes that must be readable (any value) after the end of every key. */
#define SP_MSD_PAD 8

typedef struct {
	uint64_t pfx;   /* key bytes [depth, depth+8), big-endian, zero padded */
	uint32_t idx;   /* string number; ties are broken by it */
	uint32_t len;   /* key length in bytes */
} sp_msd_ent;

/*
 * Where the keys live: key i starts at base + off[i].  With off NULL, an
 * entry's idx is itself the byte offset of its key from base (keys stored
 * in input order then still break ties by input order, and no offset table
 * is needed).
 */
/*
 * A small alphabet packed into the cached prefix (whole-input packing, when
 * every key byte is one of at most 16 values, e.g. DNA).  Each character is
 * replaced by its rank in the alphabet (a monotone map, so the order is
 * kept) and the ranks fill the prefix from the top, per bits each: a prefix
 * then holds step = 64 / per characters, and "depth" counts characters.
 *
 *   per = 2 (sigma <= 4, step 32): the 32-mer ACGTACGT... is one prefix
 *   +--+--+--+--+--+--+-- ... --+--+
 *   |c0|c1|c2|c3|c4|c5|   ...   |c31|   c0 = rank of key byte d in bits 63..62
 *   +--+--+--+--+--+--+-- ... --+--+   characters past the key end are 0
 *
 * Rank 0 and the zero padding look alike, which is harmless: keys with
 * equal prefixes are told apart by length when either ends within the
 * prefix, exactly as with the byte prefixes.  Reading a packed prefix reads
 * SP_MSD_PACK_PAD bytes from the depth on (past the key end: any value).
 */
#define SP_MSD_PACK_PAD 32

typedef struct {
	uint8_t rank[256];   /* a byte's rank in the alphabet */
	uint8_t sym[16];     /* rank -> byte, ascending */
	int sigma;           /* alphabet size, 1..16 */
	int per, step;       /* bits per character (2 or 4), characters per prefix */
} sp_msd_pack;

typedef struct {
	const uint8_t *base;
	const uint64_t *off;
	const sp_msd_pack *pack;   /* NULL: byte prefixes */
} sp_msd_src;

/** A sort function: sort a[0..n) (prefixes at depth 0) with up to nthreads threads. */
typedef void (*sp_msd_fn)(sp_msd_ent *a, size_t n, const sp_msd_src *src, int nthreads);

typedef struct {
	const char *name;
	sp_msd_fn fn;
	const char *desc;
} sp_msd_algo;

/** The registry, ended by an entry with a NULL name; entry 0 is the default. */
extern const sp_msd_algo sp_msd_algos[];

/** The variant called name, or NULL. */
const sp_msd_algo *sp_msd_find(const char *name);

/**
 * The 8 key bytes from depth d of a key of length len at s, big-endian,
 * zero past the key end; s must be readable SP_MSD_PAD bytes past its end.
 */
static inline uint64_t sp_msd_load(const uint8_t *s, size_t len, size_t d)
{
	uint64_t w;
	size_t rem;

	if (d >= len)
		return 0;
	rem = len - d;
	__builtin_memcpy(&w, s + d, 8);
	w = __builtin_bswap64(w);
	if (rem < 8)
		w &= ~(uint64_t)0 << (8 * (8 - rem));
	return w;
}

/**
 * Make the packing of the alphabet set[] (bit c of set[c >> 6] for byte c);
 * returns 0 when it has more than 16 bytes (then no packing applies).
 */
int sp_msd_pack_init(sp_msd_pack *p, const uint64_t set[4]);

/*
 * The packed prefix of characters [d, d + p->step) of a key of length len
 * at s (d < len); s + d must be readable for SP_MSD_PACK_PAD bytes.  Every
 * key byte must be in the alphabet.  Ranks are counted with SSE2 compares
 * against the alphabet, then folded into bit fields:
 */
/* 8 ranks (bytes, first character in the lowest) to 16 bits, first on top */
static inline uint64_t sp_msd_fold2(uint64_t x)
{
	x = __builtin_bswap64(x);
	x = (x | x >> 6) & 0x000F000F000F000Full;
	x = (x | x >> 12) & 0x000000FF000000FFull;
	return (x | x >> 24) & 0xFFFF;
}

/* 8 ranks to 32 bits */
static inline uint64_t sp_msd_fold4(uint64_t x)
{
	x = __builtin_bswap64(x);
	x = (x | x >> 4) & 0x00FF00FF00FF00FFull;
	x = (x | x >> 8) & 0x0000FFFF0000FFFFull;
	return (x | x >> 16) & 0xFFFFFFFFull;
}

#if defined(__SSE2__)

/* the ranks of 16 bytes at s: how many alphabet bytes above the lowest are <= each */
static inline __m128i sp_msd_ranks16(const sp_msd_pack *p, const uint8_t *s)
{
	const __m128i flip = _mm_set1_epi8((char)0x80);
	__m128i c = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)s), flip);
	__m128i r = _mm_setzero_si128();
	int j;

	/* unsigned c >= sym[j] as signed (c ^ 0x80) > ((sym[j] - 1) ^ 0x80) */
	for (j = 1; j < p->sigma; j++)
		r = _mm_sub_epi8(r, _mm_cmpgt_epi8(c, _mm_set1_epi8((char)((p->sym[j] - 1) ^ 0x80))));
	return r;
}

static inline uint64_t sp_msd_lo64(__m128i v)
{
	return (uint64_t)_mm_cvtsi128_si64(v);
}

static inline uint64_t sp_msd_hi64(__m128i v)
{
	return (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(v, v));
}
#endif

static inline uint64_t sp_msd_pack_load(const sp_msd_pack *p, const uint8_t *s, size_t len, size_t d)
{
	size_t rem = len - d;
	uint64_t w;

	s += d;
#if defined(__SSE2__)
	if (p->per == 2) {
		__m128i r0 = sp_msd_ranks16(p, s);

		w = sp_msd_fold2(sp_msd_lo64(r0)) << 48 | sp_msd_fold2(sp_msd_hi64(r0)) << 32;
		if (rem > 16) {
			__m128i r1 = sp_msd_ranks16(p, s + 16);

			w |= sp_msd_fold2(sp_msd_lo64(r1)) << 16 | sp_msd_fold2(sp_msd_hi64(r1));
		}
	} else {
		__m128i r0 = sp_msd_ranks16(p, s);

		w = sp_msd_fold4(sp_msd_lo64(r0)) << 32 | sp_msd_fold4(sp_msd_hi64(r0));
	}
#else
	{
		size_t i, m = rem < (size_t)p->step ? rem : (size_t)p->step;

		for (w = 0, i = 0; i < m; i++)
			w = w << p->per | p->rank[s[i]];
		if (m < (size_t)p->step)
			w <<= p->per * (p->step - (int)m);
		return w;
	}
#endif
	if (rem < (size_t)p->step)
		w &= ~(uint64_t)0 << (64 - p->per * (int)rem);
	return w;
}

/** Characters per cached prefix: 8 bytes, or the packing's step. */
static inline size_t sp_msd_step(const sp_msd_src *src)
{
	return src->pack ? (size_t)src->pack->step : 8;
}

/** The prefix at depth d of a key of length len at s, as src caches it. */
static inline uint64_t sp_msd_key(const sp_msd_src *src, const uint8_t *s, size_t len, size_t d)
{
	if (src->pack)
		return d >= len ? 0 : sp_msd_pack_load(src->pack, s, len, d);
	return sp_msd_load(s, len, d);
}

/**
 * Write the key of length len <= p->step whose packed prefix at depth 0 is
 * w to out (len bytes).
 */
void sp_msd_pack_unload(const sp_msd_pack *p, uint64_t w, size_t len, uint8_t *out);

/* 8 ranks from 16 bits (per 2) or 32 bits (per 4), first on top, to bytes,
 * first in the lowest: fold2 / fold4 backwards */
static inline uint64_t sp_msd_unfold(uint64_t h, int per)
{
	if (per == 2) {
		h = (h | h << 24) & 0x000000FF000000FFull;
		h = (h | h << 12) & 0x000F000F000F000Full;
		h = (h | h << 6) & 0x0303030303030303ull;
	} else {
		h = (h | h << 16) & 0x0000FFFF0000FFFFull;
		h = (h | h << 8) & 0x00FF00FF00FF00FFull;
		h = (h | h << 4) & 0x0F0F0F0F0F0F0F0Full;
	}
	return __builtin_bswap64(h);
}

/* rank bytes to alphabet bytes: sym[0] plus the steps sym[j] - sym[j-1]
 * of every j <= rank (a byte r >= j sets bit 7 of r + 0x80 - j) */
static inline uint64_t sp_msd_ranks_to_syms(const sp_msd_pack *p, uint64_t r)
{
	const uint64_t ones = 0x0101010101010101ull;
	uint64_t out = ones * p->sym[0];
	int j;

	for (j = 1; j < p->sigma; j++)
		out += ((r + ones * (uint64_t)(0x80 - j)) >> 7 & ones) * (uint64_t)(p->sym[j] - p->sym[j - 1]);
	return out;
}

/**
 * Write the p->step characters of packed prefix w (at depth 0) to out,
 * which must hold p->step bytes; a key of length len <= p->step is the
 * first len of them.  Branch-free word operations, for the output of
 * packed keys without reading the input again.
 */
static inline void sp_msd_pack_unload_all(const sp_msd_pack *p, uint64_t w, uint8_t *out)
{
	int k, chunk = 8 * p->per;   /* bits of 8 characters */

	for (k = 0; k < p->step; k += 8, w <<= chunk) {
		uint64_t b = sp_msd_ranks_to_syms(p, sp_msd_unfold(w >> (64 - chunk), p->per));

		__builtin_memcpy(out + k, &b, 8);
	}
}

/**
 * The default variant (msd_par) on an array already partitioned into nr
 * ranges, in order: range k is [ends[k-1], ends[k]) (ends[-1] = 0), every
 * key of a range ordered before every key of the next (e.g. by a first radix
 * pass made while the entries were filled).  Sorts each range; the scratch
 * memory is only as large as the largest range.
 */
void sp_msd_sort_ranges(sp_msd_ent *a, size_t n, const size_t *ends, size_t nr,
		const sp_msd_src *src, int nthreads);

/**
 * sp_msd_sort_ranges on prefixes at depth: every key is at least depth
 * long and all agree on their first depth characters (e.g. a prefix shared
 * by the whole input, skipped when the entries were filled).
 */
void sp_msd_sort_ranges_at(sp_msd_ent *a, size_t n, const size_t *ends, size_t nr,
		const sp_msd_src *src, int nthreads, size_t depth);

/**
 * Fill a[i] = { prefix at depth 0, i + idx0, len[i] } for i in [0, n) from
 * keys base + off[i] of lengths len[i], with nthreads threads.
 */
void sp_msd_fill(sp_msd_ent *a, size_t n, const sp_msd_src *src, const uint32_t *len,
		uint32_t idx0, int nthreads);

/**
 * Compare two entries as the sort orders them (key bytes from depth, then
 * length, then idx); both prefixes must be at depth.  Returns <0, 0, >0.
 */
int sp_msd_cmp(const sp_msd_ent *x, const sp_msd_ent *y, size_t depth, const sp_msd_src *src);

/**
 * Allocate n bytes for a large array (anonymous memory asking for transparent
 * huge pages, which saves most page faults and TLB misses of the radix
 * passes); dies when out of memory.  Free with sp_big_free(p, n).
 */
void *sp_big_alloc(size_t n);

/** Free memory from sp_big_alloc (n as allocated; NULL is ignored). */
void sp_big_free(void *p, size_t n);

/**
 * The bits where the prefixes of a[0..n) differ from a[0]'s (the OR of
 * their XORs), with nthreads threads.
 */
uint64_t sp_msd_diff(const sp_msd_ent *a, size_t n, int nthreads);

#endif
