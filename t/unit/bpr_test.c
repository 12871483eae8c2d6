/*
 * bpr_test.c - mflBPR (kernels/inc_bpr.h) against dynamic programming: for
 * random patterns and striped words of every neighborhood length and error
 * count, the slots bpr_word reports are exactly those whose substring edit
 * distance to the pattern is at most e; bpr_scan agrees on whole blocks,
 * and its AVX-512 path (bpr_scan_simd) gives exactly the plain C output
 * (bpr_scan_scalar) for every l, e and block length, and follows
 * SEEDPIPE_NO_SIMD.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpr.h"
#include "seqio.h"
#include "tap.h"
#include "testutil.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	return tu_xorshift64(&rng);
}

/* A random word of L bases, often close to Q (so matches are frequent). */
static uint64_t near_word(uint64_t q, uint32_t v, uint32_t l)
{
	uint64_t t = rnd() & idx_mask2(l);
	uint32_t sh, k, i;

	if (rnd() % 3 == 0)
		return t;
	sh = (uint32_t)(rnd() % (l - v + 1));
	t &= ~(idx_mask2(v) << (2 * sh));
	t |= (q & idx_mask2(v)) << (2 * sh);
	k = (uint32_t)(rnd() % 4);
	for (i = 0; i < k; i++) {
		uint32_t p = (uint32_t)(rnd() % l), op = (uint32_t)(rnd() % 3);

		if (op == 0) {      /* substitution */
			t ^= (uint64_t)(1 + rnd() % 3) << (2 * p);
		} else if (op == 1) { /* delete base p, shift the rest down */
			uint64_t lo = t & idx_mask2(p), hi = p + 1 < l ? t >> (2 * (p + 1)) : 0;

			t = (lo | hi << (2 * p) | (rnd() & 3) << (2 * (l - 1))) & idx_mask2(l);
		} else {            /* insert a base at p */
			uint64_t lo = t & idx_mask2(p), hi = t >> (2 * p);

			t = (lo | (rnd() & 3) << (2 * p) | (p + 1 < 32 ? hi << (2 * (p + 1)) : 0)) & idx_mask2(l);
		}
	}
	return t;
}

/*
 * A random block of N neighborhoods of length L for pattern Q (V bases)
 * into WORDS (ceil(n/h) words): the indices whose DP distance is at most E
 * go to WANT (returns their count).  The unused slots of the last word get
 * garbage (Q and random bases), as do the bits above 2hl when JUNK is set
 * (both must be ignored).
 */
static uint64_t *last_keys;   /* make_block's neighborhoods, for the key scans */
static int same(const uint32_t *a, const uint32_t *b, size_t m);

static size_t make_block(uint64_t *words, uint64_t n, uint64_t q, uint32_t v,
		uint32_t l, uint32_t e, int junk, uint32_t *want)
{
	uint32_t h = idx_stripe_h(l);
	uint64_t nw = (n + h - 1) / h, i;
	size_t m = 0;

	memset(words, 0, nw * sizeof(*words));
	for (i = 0; i < n; i++) {
		uint64_t t = near_word(q, v, l);

		words[i / h] = idx_stripe_put(words[i / h], h, l, (uint32_t)(i % h), t);
		if (last_keys)
			last_keys[i] = t;
		if (bpr_dp_dist(q, v, t, l) <= e)
			want[m++] = (uint32_t)i;
	}
	if (n % h)
		for (i = n % h; i < h; i++)
			words[n / h] = idx_stripe_put(words[n / h], h, l, (uint32_t)i,
					rnd() & 1 ? q : rnd() & idx_mask2(l));
	if (junk && 2 * h * l < 64)
		for (i = 0; i < nw; i++)
			words[i] |= rnd() << (2 * h * l);
	return m;
}

/*
 * The keys KEYS[0..n) (length L) as the reduced structure stores them (u32
 * when l <= 16): bpr_stripe's words hold them, with zero unused slots, and
 * bpr_scan_keys gives WANT (M entries).  Buffers of exactly n keys.
 */
static uint32_t keys_simd_ran, keys_h2;   /* blocks bpr_scan_keys_simd took, of h = 2 */

static int keys_cmp(const bpr_pat_t *bp, const uint64_t *keys, uint64_t n, uint32_t l,
		const uint32_t *want, size_t m)
{
	uint32_t h = idx_stripe_h(l), *k32 = NULL, *got = malloc((n ? n : 1) * sizeof *got);
	uint64_t nw = (n + h - 1) / h, i, *wd = malloc((nw ? nw : 1) * sizeof *wd);
	size_t mk;
	int ok = 1;

	if (l <= 16) {
		k32 = malloc((n ? n : 1) * sizeof *k32);
		for (i = 0; i < n; i++)
			k32[i] = (uint32_t)keys[i];
	}
	bpr_stripe(k32, k32 ? NULL : keys, n, l, wd);
	for (i = 0; i < nw * h; i++)
		if (idx_stripe_get(wd[i / h], h, l, (uint32_t)(i % h)) != (i < n ? keys[i] : 0))
			ok = 0;
	if (2 * h * l < 64)
		for (i = 0; i < nw; i++)
			if (wd[i] >> (2 * h * l))
				ok = 0;
	mk = bpr_scan_keys(bp, k32, k32 ? NULL : keys, n, got);
	if (mk != m || !same(got, want, m))
		ok = 0;
	if (k32) {   /* the AVX-512 scan of the keys themselves, h = 2 */
		int64_t ms;

		keys_h2 += h == 2;
		memset(got, 0xff, (n ? n : 1) * sizeof *got);
		ms = bpr_scan_keys_simd(bp, k32, n, got);
		if (ms >= 0) {
			keys_simd_ran++;
			if ((size_t)ms != m || !same(got, want, m))
				ok = 0;
		} else if (h == 2 && bpr_scan_simd(bp, NULL, 0, NULL) >= 0) {
			ok = 0;   /* declined where the word scan runs */
		}
	}
	free(k32);
	free(got);
	free(wd);
	return ok;
}

/* Whether the M entries of A and B are the same. */
static int same(const uint32_t *a, const uint32_t *b, size_t m)
{
	return m == 0 || memcmp(a, b, m * sizeof(*a)) == 0;
}

/*
 * For L and E: random blocks of every length N = 0..NMAX (all partial
 * words, all partial groups of 16 words), patterns of v = l - e and
 * shorter: the plain C scan equals DP, and the AVX-512 scan (where it runs)
 * and bpr_scan equal the plain C scan.  Buffers are exactly N entries /
 * ceil(N/h) words (for ASan).  *SIMD_RAN counts the blocks the AVX-512 scan
 * took.
 */
static int scan_cmp(uint32_t l, uint32_t e, uint64_t nmax, uint32_t *simd_ran)
{
	uint32_t h = idx_stripe_h(l), bad = 0;
	uint64_t n;
	static bpr_pat_t bp;

	for (n = 0; n <= nmax; n++) {
		uint32_t v = n % 4 == 3 && l - e > 1 ? 1 + (uint32_t)(rnd() % (l - e)) : l - e;
		uint64_t q = rnd() & idx_mask2(v), nw = (n + h - 1) / h;
		uint64_t *words = malloc((nw ? nw : 1) * sizeof(*words));
		uint32_t *want = malloc((n ? n : 1) * sizeof(*want));
		uint32_t *got = malloc((n ? n : 1) * sizeof(*got));
		uint32_t *ref = malloc((n ? n : 1) * sizeof(*ref));
		size_t nwant, m, mref;
		int64_t ms;

		last_keys = malloc((n ? n : 1) * sizeof *last_keys);
		if (!words || !want || !got || !ref || !last_keys)
			abort();
		nwant = make_block(words, n, q, v, l, e, (int)(n & 1), want);
		bpr_pat_init(&bp, q, v, l, e);
		if (!keys_cmp(&bp, last_keys, n, l, want, nwant) && bad++ < 3)
			tap_diag("keys l=%u e=%u v=%u n=%llu: bpr_stripe or bpr_scan_keys differ", l, e, v,
					(unsigned long long)n);
		free(last_keys);
		last_keys = NULL;
		mref = bpr_scan_scalar(&bp, words, n, ref);
		if ((mref != nwant || !same(ref, want, mref)) && bad++ < 3)
			tap_diag("scalar l=%u e=%u v=%u n=%llu: %zu hits, DP %zu", l, e, v,
					(unsigned long long)n, mref, nwant);
		ms = bpr_scan_simd(&bp, words, n, got);
		if (ms >= 0) {
			++*simd_ran;
			if (((size_t)ms != mref || !same(got, ref, mref)) && bad++ < 3)
				tap_diag("simd l=%u e=%u v=%u n=%llu: %lld hits, scalar %zu", l, e, v,
						(unsigned long long)n, (long long)ms, mref);
		} else if (h <= 4 && bpr_simd_on() && bad++ < 3) {
			tap_diag("simd refused l=%u though bpr_simd_on", l);
		}
		m = bpr_scan(&bp, words, n, got);
		if ((m != mref || !same(got, ref, mref)) && bad++ < 3)
			tap_diag("bpr_scan l=%u e=%u n=%llu: %zu hits, scalar %zu", l, e,
					(unsigned long long)n, m, mref);
		/* Ns in q (seedfilt's bpr_pat_init_n): slices cleared in every entry */
		if (n % 5 == 1 && e < v) {
			uint32_t keep = ~bpr_rep((uint32_t)rnd() & bpr_low(v), v, h), i;

			for (i = 0; i < BPR_GROUP * bp.ng; i++)
				bp.tab[i] &= keep;
			mref = bpr_scan_scalar(&bp, words, n, ref);
			ms = bpr_scan_simd(&bp, words, n, got);
			if (ms >= 0 && ((size_t)ms != mref || !same(got, ref, mref)) && bad++ < 3)
				tap_diag("simd with N l=%u e=%u n=%llu: %lld hits, scalar %zu", l, e,
						(unsigned long long)n, (long long)ms, mref);
		}
		free(words);
		free(want);
		free(got);
		free(ref);
	}
	return bad == 0;
}

/*
 * bpr_simd_on in a child with SEEDPIPE_NO_SIMD set (the choice is read
 * once, so in a fresh process): returns its answer, or -1.
 */
static int simd_on_without(void)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		setenv("SEEDPIPE_NO_SIMD", "1", 1);
		_exit(bpr_simd_on());
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

int main(void)
{
	uint32_t l, e;
	static bpr_pat_t bp;
	int bad_total = 0;

	/* before anything caches the choice */
	tap_ok(simd_on_without() == 0, "SEEDPIPE_NO_SIMD turns the AVX-512 scan off");

	/* the example of the thesis, figure 3.3: q = ATC, e = 1 */
	{
		uint64_t q = 0 | 3 << 2 | 1 << 4, w = 0;
		const char *t[4] = { "ATCG", "GGAC", "AGCG", "AGTC" };
		int r, j;

		for (r = 0; r < 4; r++) {
			uint64_t x = 0;

			for (j = 0; j < 4; j++)
				x |= (uint64_t)seqio_nt4[(unsigned char)t[r][j]] << (2 * j);
			w = idx_stripe_put(w, 8, 4, (uint32_t)r, x);
		}
		bpr_pat_init(&bp, q, 3, 4, 1);
		tap_ok(bpr_word(w, 8, 4, 3, 1, bp.tab) == 0xf,
				"thesis figure 3.3: all four words match ATC with 1 error");
		bpr_pat_init(&bp, q, 3, 4, 0);
		tap_ok(bpr_word(w, 8, 4, 3, 0, bp.tab) == 0x1,
				"thesis figure 3.3: only ATCG holds ATC exactly");
	}
	{
		/* bpr_pat_init's tables against bpr_bmask and bpr_tab_entry, q
		 * with bits above its v bases set too */
		uint32_t bad = 0, it;

		for (it = 0; it < 20000; it++) {
			uint32_t ll = 1 + (uint32_t)(rnd() % 32), v = 1 + (uint32_t)(rnd() % ll);
			uint32_t h = idx_stripe_h(ll), g, x, c, b[4];
			uint64_t q = rnd() << 32 ^ rnd();

			bpr_pat_init(&bp, q, v, ll, 0);
			for (c = 0; c < 4; c++)
				b[c] = bpr_bmask(q, v, c);
			if (bp.h != h || bp.ng != bpr_ngroups(h) || bp.v != v || bp.l != ll)
				bad++;
			for (g = 0; g < bp.ng; g++) {
				uint32_t k = h - 4 * g < 4 ? h - 4 * g : 4;

				for (x = 0; x < 1u << (2 * k); x++)
					if (bp.tab[BPR_GROUP * g + x] !=
							bpr_tab_entry(b[0], b[1], b[2], b[3], v, h, g, x) && bad++ < 3)
						tap_diag("bpr_pat_init l=%u v=%u q=%llx: entry %u of group %u",
								ll, v, (unsigned long long)q, x, g);
			}
		}
		tap_ok(bad == 0, "bpr_pat_init's block masks equal bpr_tab_entry (20,000 random q, v, l)");
	}
	for (l = 1; l <= 32; l++) {
		uint32_t h = idx_stripe_h(l);

		for (e = 0; e < l && e <= 6; e++) {
			uint32_t v = l - e, it, bad = 0, nmatch = 0, nslot = 0;

			for (it = 0; it < 300; it++) {
				uint64_t q = rnd() & idx_mask2(v), w = 0, t[32];
				uint32_t r, got, want = 0;

				for (r = 0; r < h; r++) {
					t[r] = near_word(q, v, l);
					w = idx_stripe_put(w, h, l, r, t[r]);
					want |= (uint32_t)(bpr_dp_dist(q, v, t[r], l) <= e) << r;
				}
				bpr_pat_init(&bp, q, v, l, e);
				got = bpr_word(w, h, l, v, e, bp.tab);
				if (got != want && bad++ < 3)
					tap_diag("l=%u e=%u q=%llx w=%llx got %x want %x", l, e,
							(unsigned long long)q, (unsigned long long)w, got, want);
				got = bpr_word_q(w, h, l, v, e, q);
				if (got != want && bad++ < 3)
					tap_diag("bpr_word_q l=%u e=%u got %x want %x", l, e, got, want);
				nmatch += (uint32_t)__builtin_popcount(want);
				nslot += h;
			}
			/* shorter patterns than l - e too */
			for (it = 0; it < 100 && v > 1; it++) {
				uint32_t vv = 1 + (uint32_t)(rnd() % v), r, got, want = 0;
				uint64_t q = rnd() & idx_mask2(vv), w = 0;

				for (r = 0; r < h; r++) {
					uint64_t t = near_word(q, vv, l);

					w = idx_stripe_put(w, h, l, r, t);
					want |= (uint32_t)(bpr_dp_dist(q, vv, t, l) <= e) << r;
				}
				bpr_pat_init(&bp, q, vv, l, e);
				got = bpr_word(w, h, l, vv, e, bp.tab);
				if (got != want && bad++ < 3)
					tap_diag("l=%u e=%u v=%u got %x want %x", l, e, vv, got, want);
			}
			bad_total += bad != 0;
			tap_ok(bad == 0, "l=%u h=%u e=%u: bpr_word (table and masks) equals DP (%u of %u slots match)",
					l, h, e, nmatch, nslot);
		}
	}
	/* bpr_scan on whole blocks with a partial last word */
	{
		uint32_t it, bad = 0;

		for (it = 0; it < 200; it++) {
			uint32_t ll = 1 + (uint32_t)(rnd() % 32), hh = idx_stripe_h(ll);
			uint32_t ee = (uint32_t)(rnd() % (ll < 4 ? ll : 4)), v = ll - ee;
			uint64_t n = rnd() % 70, i, q = rnd() & idx_mask2(v);
			uint64_t words[80] = { 0 };
			uint32_t out[80], want[80];
			size_t m, nw = 0;

			for (i = 0; i < n; i++) {
				uint64_t t = near_word(q, v, ll);

				words[i / hh] = idx_stripe_put(words[i / hh], hh, ll, (uint32_t)(i % hh), t);
				if (bpr_dp_dist(q, v, t, ll) <= ee)
					want[nw++] = (uint32_t)i;
			}
			/* garbage in the unused slots of the last word must be ignored */
			if (n % hh)
				for (i = n % hh; i < hh; i++)
					words[n / hh] = idx_stripe_put(words[n / hh], hh, ll,
							(uint32_t)i, q);
			bpr_pat_init(&bp, q, v, ll, ee);
			m = bpr_scan(&bp, words, n, out);
			if (m != nw) {
				bad++;
				continue;
			}
			for (i = 0; i < m; i++)
				bad += out[i] != want[i];
		}
		tap_ok(bad == 0, "bpr_scan equals DP on 200 random blocks");
	}
	/* the AVX-512 scan against the plain C scan and DP, all l, e, tails */
	{
		static bpr_pat_t b2;
		int64_t r;

		bpr_pat_init(&b2, 0, 1, 15, 0);
		r = bpr_scan_simd(&b2, NULL, 0, NULL);
		tap_diag("AVX-512 bpr scan %s; bpr_scan uses it: %s",
				r >= 0 ? "available" : "not available", bpr_simd_on() ? "yes" : "no");
		tap_ok(!getenv("SEEDPIPE_NO_SIMD") || !bpr_simd_on(),
				"bpr_simd_on is off when SEEDPIPE_NO_SIMD is set");
		tap_ok(!bpr_simd_on() || r == 0, "bpr_simd_on implies bpr_scan_simd runs");
		bpr_pat_init(&b2, 0, 1, 6, 0);
		tap_ok(bpr_scan_simd(&b2, NULL, 0, NULL) == -1,
				"bpr_scan_simd declines h = 5 (l = 6)");
		for (l = 1; l <= 32; l++) {
			uint32_t es[] = { 0, 1, 2, 3, 4, 7, 12, 31 }, i;

			for (i = 0; i < sizeof(es) / sizeof(es[0]) && es[i] < l; i++) {
				uint32_t ran = 0, ok = scan_cmp(l, es[i], 100, &ran);

				if (idx_stripe_h(l) <= 4 && r < 0) {
					tap_ok(ok, "l=%u e=%u: bpr_scan_scalar and bpr_scan equal DP, n = 0..100",
							l, es[i]);
					tap_skip("no AVX-512 on this CPU");
				} else {
					tap_ok(ok && ran == (idx_stripe_h(l) <= 4 ? 101u : 0u),
							"l=%u e=%u: bpr_scan_simd (%s), bpr_scan_scalar, bpr_scan equal DP, n = 0..100",
							l, es[i], ran ? "ran" : "declined, h > 4");
				}
			}
		}
	}
	{
		/* SeedBlocks longer than bpr_scan_keys's chunk of striped words */
		uint32_t ls[] = { 16, 12, 9, 4, 20 }, i;
		uint64_t ns[] = { 511, 512, 513, 1500, 9000 };

		for (i = 0; i < sizeof ls / sizeof ls[0]; i++) {
			uint32_t l = ls[i], e = 1, v = l - e, bad = 0, k;

			for (k = 0; k < sizeof ns / sizeof ns[0]; k++) {
				uint64_t n = ns[k], q = rnd() & idx_mask2(v), nw = (n + idx_stripe_h(l) - 1) / idx_stripe_h(l);
				uint64_t *words = malloc(nw * sizeof *words);
				uint32_t *want = malloc(n * sizeof *want);
				size_t nwant;
				static bpr_pat_t bp;

				last_keys = malloc(n * sizeof *last_keys);
				nwant = make_block(words, n, q, v, l, e, 0, want);
				bpr_pat_init(&bp, q, v, l, e);
				if (!keys_cmp(&bp, last_keys, n, l, want, nwant))
					bad++;
				free(last_keys);
				last_keys = NULL;
				free(words);
				free(want);
			}
			tap_ok(bad == 0, "l=%u: bpr_scan_keys over 511..9000 keys (several chunks) equals DP", l);
		}
	}
	{
		static bpr_pat_t b2;

		bpr_pat_init(&b2, 0, 1, 16, 0);
		if (bpr_scan_simd(&b2, NULL, 0, NULL) < 0)
			tap_skip("no AVX-512 on this CPU: bpr_scan_keys_simd not run");
		else
			tap_ok(keys_h2 > 0 && keys_simd_ran == keys_h2,
					"bpr_scan_keys_simd took all %u blocks of h = 2 (and equalled DP above)",
					keys_h2);
		bpr_pat_init(&b2, 0, 1, 15, 0);
		tap_ok(bpr_scan_keys_simd(&b2, NULL, 0, NULL) <= 0, "bpr_scan_keys_simd runs or declines l = 15");
		bpr_pat_init(&b2, 0, 1, 10, 0);
		tap_ok(bpr_scan_keys_simd(&b2, NULL, 0, NULL) == -1, "bpr_scan_keys_simd declines h = 3 (l = 10)");
	}
	(void)bad_total;
	return tap_done();
}
