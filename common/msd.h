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
 * Variants (a registry as in rantala/string-sorting) are listed in msd.c;
 * sp_msd_find() looks one up by name, and the tests run every one of them.
 */
#ifndef SP_MSD_H
#define SP_MSD_H

#include <stddef.h>
#include <stdint.h>

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
typedef struct {
	const uint8_t *base;
	const uint64_t *off;
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
 * The default variant (msd_par) on an array already partitioned into nr
 * ranges, in order: range k is [ends[k-1], ends[k]) (ends[-1] = 0), every
 * key of a range ordered before every key of the next (e.g. by a first radix
 * pass made while the entries were filled).  Sorts each range; the scratch
 * memory is only as large as the largest range.
 */
void sp_msd_sort_ranges(sp_msd_ent *a, size_t n, const size_t *ends, size_t nr,
		const sp_msd_src *src, int nthreads);

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
 * Run fn(arg, tid) on nthreads threads (tid 0 is the caller) and wait for
 * all of them.
 */
void sp_par_run(int nthreads, void (*fn)(void *arg, int tid), void *arg);

#endif
