/*
 * ext_ref.c - extend's view of the index: opened with only the sections
 * extend reads checked, the packed reference moved onto huge pages, and
 * reference ranges as ASCII (N inside the index's N runs).
 */
#include <pthread.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xxhash.h>

#include "ext.h"
#include "idx_priv.h"
#include "util.h"

/*
 * Give the packed reference memory of its own on huge pages where the
 * kernel has them (transparent huge pages on madvise): pass 1 fetches
 * tens of millions of windows all over it, and through the index's 4 KiB
 * file pages each fetch's prefetch first waited for a page walk.  The copy
 * lives as long as the process (extend keeps its index to the end); on
 * any failure the mapped pages serve as before.
 */
static void pack_hot(idx_t *x)
{
	const size_t huge = (size_t)2 << 20;
	size_t len = (size_t)((x->total + 3) / 4 + 16), cap = (len + huge - 1) / huge * huge;
	void *p;

	if (!x->pack || len < huge)
		return;
	p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
#ifdef MADV_HUGEPAGE
	madvise(p, cap, MADV_HUGEPAGE);
#endif
	memcpy(p, x->pack, len);
	if (x->mapped) {   /* the file's pages of it go (extend -M counts it once) */
		uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE), b = ((uintptr_t)x->pack + pg - 1) / pg * pg,
			e = ((uintptr_t)x->pack + len) / pg * pg;

		if (e > b)
			madvise((void *)b, e - b, MADV_DONTNEED);
	}
	x->pack = p;
}

idx_t *ext_idx_open(const char *path)
{
	static const char *const need[] = { "seq.names", "seq.len", "seq.off", "ref.pack",
		"ref.nrun", "part" };
	char *err = NULL;
	idx_t *x = idx_load(path, IDX_LOAD_NOVERIFY, &err);
	const idx_sec_t *s;
	uint64_t i;
	size_t k;

	if (!x) {
		/* the whole check names the fault as before (e.g. a checksum
		 * mismatch rather than what it broke); it dies */
		free(err);
		x = idx_open_or_die(path, 0);
		idx_close(x);
		sp_die("index '%s': cannot be loaded", path);
	}
	s = x->secs;
	for (i = 0; i < x->n_sections; i++) {
		if (s[i].part != IDX_PART_GLOBAL)
			continue;
		for (k = 0; k < sizeof need / sizeof need[0] && strcmp(s[i].name, need[k]); k++)
			;
		if (k < sizeof need / sizeof need[0] && XXH3_64bits_withSeed(s[i].data,
					(size_t)s[i].len, x->fingerprint) != s[i].xxh3)
			sp_die("index '%s': checksum mismatch in section '%s' (the index is damaged)",
					path, s[i].name);
	}
	pack_hot(x);
	return x;
}

/* The 4 ASCII bases of each packed byte (as a little-endian word), made once. */
static uint32_t ext_byte_ascii[256];
static pthread_once_t ext_byte_once = PTHREAD_ONCE_INIT;

static void ext_byte_init(void)
{
	static const char acgt[4] = { 'A', 'C', 'G', 'T' };
	unsigned b, k;

	for (b = 0; b < 256; b++) {
		uint8_t c[4];
		for (k = 0; k < 4; k++)
			c[k] = (uint8_t)acgt[(b >> (2 * k)) & 3];
		memcpy(&ext_byte_ascii[b], c, 4);
	}
}

void ext_ref_ascii(const idx_t *x, uint64_t g, uint64_t n, uint8_t *dst)
{
	static const uint8_t acgt[4] = { 'A', 'C', 'G', 'T' };
	uint64_t i = 0, lo = 0, hi = x->n_nrun;

	pthread_once(&ext_byte_once, ext_byte_init);
	for (; i < n && ((g + i) & 3); i++)
		dst[i] = acgt[(x->pack[(g + i) >> 2] >> (((g + i) & 3) * 2)) & 3];
	for (; i + 4 <= n; i += 4)
		memcpy(dst + i, &ext_byte_ascii[x->pack[(g + i) >> 2]], 4);
	for (; i < n; i++)
		dst[i] = acgt[(x->pack[(g + i) >> 2] >> (((g + i) & 3) * 2)) & 3];
	if (!x->n_nrun)
		return;
	/* first N run ending after g */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (x->nrun[2 * mid] + x->nrun[2 * mid + 1] <= g)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < x->n_nrun && x->nrun[2 * lo] < g + n; lo++) {
		uint64_t s = x->nrun[2 * lo], e = s + x->nrun[2 * lo + 1];
		if (s < g)
			s = g;
		if (e > g + n)
			e = g + n;
		for (i = s; i < e; i++)
			dst[i - g] = 'N';
	}
}
