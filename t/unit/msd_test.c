/*
 * msd_test.c - every variant of the msd registry against a qsort oracle
 * (memcmp order, shorter prefix first, then input order) on random key sets
 * of many shapes: lengths 0..300, small and full byte alphabets with NUL,
 * many duplicates, long shared prefixes, and thread counts 1..4; the same
 * with packed prefixes (sp_msd_pack) where the alphabet allows, and sorting
 * from a shared prefix's depth (sp_msd_sort_ranges_at).  The packed loads
 * are checked against a scalar packer and unpacked back.
 */
#include <stdlib.h>
#include <string.h>

#include "msd.h"
#include "tap.h"
#include "testutil.h"

static const uint8_t *g_base;
static const uint64_t *g_off;
static const uint32_t *g_len;

static int oracle_cmp(const void *p, const void *q)
{
	uint32_t i = *(const uint32_t *)p, j = *(const uint32_t *)q;
	uint32_t m = g_len[i] < g_len[j] ? g_len[i] : g_len[j];
	int c = memcmp(g_base + g_off[i], g_base + g_off[j], m);

	if (c)
		return c;
	if (g_len[i] != g_len[j])
		return g_len[i] < g_len[j] ? -1 : 1;
	return i < j ? -1 : i > j;
}

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rnd(void)
{
	return tu_xorshift64(&rng_state);
}

enum { MODE_BYTES, MODE_PACKED, MODE_AT };

/*
 * One random key set: n keys, alphabet of sigma bytes from lo, lengths up
 * to maxlen, a shared prefix of plen bytes, duplicates when dup.  MODE_PACKED
 * packs the prefixes (returns 1 untested when the keys use over 16 bytes);
 * MODE_AT sorts the ranges from depth plen (all keys share plen bytes).
 */
static int run_case(const sp_msd_algo *al, size_t n, int sigma, int lo, int maxlen,
		int plen, int dup, int nthreads, int mode)
{
	uint64_t *off = malloc((n + 1) * sizeof *off);
	uint32_t *len = malloc((n + 1) * sizeof *len), *perm = malloc((n + 1) * sizeof *perm);
	size_t cap = n * (size_t)(maxlen + plen + 1) + SP_MSD_PACK_PAD + 1, pos = 0, i;
	uint8_t *base = malloc(cap);
	sp_msd_ent *a = malloc((n + 1) * sizeof *a);
	sp_msd_src src;
	sp_msd_pack pk;
	int ok = 1;

	for (i = 0; i < n; i++) {
		int l, k;

		if (dup && i > 0 && rnd() % 3 == 0) {
			size_t j = rnd() % i;

			off[i] = off[j];
			len[i] = len[j];
			continue;
		}
		l = plen + (int)(rnd() % (uint64_t)(maxlen + 1));
		off[i] = pos;
		len[i] = (uint32_t)l;
		for (k = 0; k < l; k++)
			base[pos + k] = k < plen ? (uint8_t)('a' + k % 3) : (uint8_t)(lo + (int)(rnd() % (uint64_t)sigma));
		pos += (size_t)l;
	}
	memset(base + pos, 0xff, SP_MSD_PACK_PAD); /* garbage past the end */
	src.base = base;
	src.off = off;
	src.pack = NULL;
	if (mode == MODE_PACKED) {
		uint64_t set[4] = { 0, 0, 0, 0 };

		for (i = 0; i < pos; i++)
			set[base[i] >> 6] |= (uint64_t)1 << (base[i] & 63);
		if (!sp_msd_pack_init(&pk, set)) {
			free(off);
			free(len);
			free(perm);
			free(base);
			free(a);
			return 1;
		}
		src.pack = &pk;
	}
	if (mode == MODE_AT) {
		for (i = 0; i < n; i++) {
			a[i].pfx = sp_msd_key(&src, base + off[i], len[i], (size_t)plen);
			a[i].idx = (uint32_t)i;
			a[i].len = len[i];
		}
		sp_msd_sort_ranges_at(a, n, &n, 1, &src, nthreads, (size_t)plen);
	} else {
		sp_msd_fill(a, n, &src, len, 0, nthreads);
		al->fn(a, n, &src, nthreads);
	}
	g_base = base;
	g_off = off;
	g_len = len;
	for (i = 0; i < n; i++)
		perm[i] = (uint32_t)i;
	qsort(perm, n, sizeof *perm, oracle_cmp);
	for (i = 0; i < n && ok; i++)
		if (a[i].idx != perm[i] || a[i].len != len[perm[i]])
			ok = 0;
	free(off);
	free(len);
	free(perm);
	free(base);
	free(a);
	return ok;
}

/* sp_msd_pack_load against a scalar packer, and sp_msd_pack_unload back */
static int pack_roundtrip(void)
{
	static const char *alpha[] = { "ACGT", "AC", "ACGNT", "acgtnACGTN", "\001\002\177\200\377",
		"0123456789abcdef", "x" };
	uint8_t key[200 + SP_MSD_PACK_PAD], out[64];
	int t, ok = 1;

	for (t = 0; t < 4000 && ok; t++) {
		const char *al = alpha[t % 7];
		size_t sigma = strlen(al), len = rnd() % 120, d = len ? rnd() % len : 0, i, m;
		uint64_t set[4] = { 0, 0, 0, 0 }, w, ref = 0;
		sp_msd_pack pk;

		for (i = 0; i < sigma; i++)
			set[(uint8_t)al[i] >> 6] |= (uint64_t)1 << ((uint8_t)al[i] & 63);
		if (!sp_msd_pack_init(&pk, set) || pk.sigma != (int)sigma)
			return 0;
		for (i = 0; i < len; i++)
			key[i] = (uint8_t)al[rnd() % sigma];
		for (; i < sizeof key; i++)
			key[i] = (uint8_t)rnd();   /* garbage past the end */
		if (len == 0)
			continue;
		m = len - d < (size_t)pk.step ? len - d : (size_t)pk.step;
		for (i = 0; i < m; i++)
			ref = ref << pk.per | pk.rank[key[d + i]];
		ref <<= pk.per * (pk.step - (int)m);
		w = sp_msd_pack_load(&pk, key, len, d);
		ok &= w == ref;
		sp_msd_pack_unload(&pk, w, m, out);
		ok &= memcmp(out, key + d, m) == 0;
	}
	return ok;
}

int main(void)
{
	const sp_msd_algo *al;
	static const size_t sizes[] = { 0, 1, 2, 5, 31, 32, 33, 100, 1000, 20000, 150000 };
	static const int shapes[][4] = {
		/* sigma, lo, maxlen, plen */
		{ 2, 'a', 12, 0 }, { 26, 'a', 30, 0 }, { 4, 'A', 40, 0 },
		{ 256, 0, 20, 0 }, { 3, 0, 10, 0 }, { 62, '0', 25, 20 },
		{ 2, 0, 300, 9 }, { 1, 'x', 17, 0 }, { 255, 1, 6, 0 },
	};
	size_t si, sh;

	(void)tap_skip;
	(void)tap_diag;
	for (al = sp_msd_algos; al->name; al++) {
		for (si = 0; si < sizeof sizes / sizeof *sizes; si++) {
			int all = 1;

			for (sh = 0; sh < sizeof shapes / sizeof *shapes; sh++) {
				int dup, nt;

				if (sizes[si] >= 150000 && shapes[sh][2] > 50)
					continue;
				for (dup = 0; dup < 2; dup++)
					for (nt = 1; nt <= 4; nt += 3)
						all &= run_case(al, sizes[si], shapes[sh][0], shapes[sh][1],
								shapes[sh][2], shapes[sh][3], dup, nt, MODE_BYTES);
			}
			tap_ok(all, "%s: %zu keys, all shapes, with and without duplicates", al->name, sizes[si]);
			all = 1;
			for (sh = 0; sh < sizeof shapes / sizeof *shapes; sh++) {
				int dup;

				if (sizes[si] >= 150000 && shapes[sh][2] > 50)
					continue;
				for (dup = 0; dup < 2; dup++)
					all &= run_case(al, sizes[si], shapes[sh][0], shapes[sh][1],
							shapes[sh][2], shapes[sh][3], dup, 1 + 3 * dup, MODE_PACKED);
			}
			tap_ok(all, "%s: %zu keys, packed prefixes of small alphabets", al->name, sizes[si]);
		}
	}
	{
		int all = 1;

		for (si = 0; si < sizeof sizes / sizeof *sizes; si++)
			for (sh = 0; sh < sizeof shapes / sizeof *shapes; sh++)
				if (shapes[sh][3] && !(sizes[si] >= 150000 && shapes[sh][2] > 50))
					all &= run_case(NULL, sizes[si], shapes[sh][0], shapes[sh][1],
							shapes[sh][2], shapes[sh][3], (int)(si & 1), 1 + 3 * (int)(sh & 1), MODE_AT);
		tap_ok(all, "sort_ranges_at from a shared prefix's depth");
	}
	tap_ok(pack_roundtrip(), "packed loads equal a scalar packer and unpack back");
	tap_ok(sp_msd_find("msd_par") == &sp_msd_algos[0], "msd_par is found and is the default");
	tap_ok(sp_msd_find("no-such") == NULL, "an unknown name is not found");
	return tap_done();
}
