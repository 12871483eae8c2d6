/*
 * filt_scheme_test.c - the schemes of seedfilt -E for short reads
 * (common/filt_scheme.c) against brute force:
 *   1. lossless: for every read length up to FILT_SCHEME_MAXLEN and bound
 *      E, every multiset of E edit slots (substitutions and insertions at
 *      positions, deletions in gaps) leaves a live pattern
 *      (filt_scheme_alive), and each pattern fits the read and the index
 *      (o + span + v <= m, v + e <= l, e = 0 only with x = v); a scheme
 *      with one pattern dropped must fail (the check can fail);
 *   2. the matcher: filt_scheme_match against a dynamic program of the
 *      anchored edit distance on random q, t (t often q edited a little),
 *      N bases in q included;
 *   3. the alive rule against alignments: a random read edited by E random
 *      operations into a reference stretch; the live pattern's window,
 *      taken from the edited read, must match its neighborhood there by
 *      filt_scheme_match (the seed exact, the tail within its e).
 */
#include <stdlib.h>
#include <string.h>

#include "filt.h"
#include "tap.h"

static uint64_t rng = 88172645463325252ull;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

static void mkidx(idx_t *x, uint32_t span, uint32_t l, uint64_t total)
{
	uint32_t i;

	memset(x, 0, sizeof *x);
	x->p.span = x->p.w = span;
	for (i = 0; i < span; i++) {
		x->p.shape[i] = '#';
		x->p.shape_pos[i] = i;
	}
	x->p.l = l;
	x->p.structs = IDX_S_GENERAL | IDX_S_REDUCED | IDX_S_BLOCK;
	x->total = total;
}

/* Multisets of K slots from [FROM, NS) added to CNT that kill every pattern. */
static uint64_t killers(const filt_scheme_t *s, uint32_t span, uint8_t *cnt, uint32_t from,
		uint32_t ns, uint32_t k)
{
	uint64_t n = 0;
	uint32_t j;

	if (k == 0)
		return !filt_scheme_alive(s, span, cnt);
	for (j = from; j < ns; j++) {
		cnt[j]++;
		n += killers(s, span, cnt, j, ns, k - 1);
		cnt[j]--;
	}
	return n;
}

static int fits(const filt_scheme_t *s, uint32_t span, uint32_t l)
{
	uint32_t i;

	for (i = 0; i < s->np; i++) {
		const filt_spat_t *p = &s->p[i];

		if (p->o + span + p->v > s->m || p->v + p->e > l || p->x > p->v ||
				(!p->e && p->x != p->v))
			return 0;
	}
	return s->np > 0;
}

static void lossless(uint32_t span, uint32_t l, uint64_t total, uint32_t mstep)
{
	idx_t x;
	uint32_t m, e, made = 0, bad = 0, unfit = 0;
	uint8_t cnt[2 * FILT_SCHEME_MAXLEN];

	mkidx(&x, span, l, total);
	memset(cnt, 0, sizeof cnt);
	for (e = 0; e <= 3; e++)
		for (m = 1; m <= FILT_SCHEME_MAXLEN; m++) {
			filt_scheme_t s;
			uint64_t k;

			if (m > 30 && m % mstep && m != 40)
				continue;

			if (!filt_scheme_make(&x, m, e, &s))
				continue;
			made++;
			if (!fits(&s, span, l) || s.m != m || s.edits != e) {
				unfit++;
				continue;
			}
			k = killers(&s, span, cnt, 0, 2 * m - 1, e);
			if (k) {
				char d[256];

				filt_scheme_str(&s, d, sizeof d);
				tap_diag("u=%u l=%u m=%u E=%u: %s: %llu killers", span, l, m, e, d,
						(unsigned long long)k);
				bad++;
			}
		}
	tap_ok(made > 0 && bad == 0 && unfit == 0,
			"u=%u l=%u: %u schemes (m <= %u, E <= 3) survive every multiset of E edit "
			"slots and fit (%u lossy, %u unfit)", span, l, made, FILT_SCHEME_MAXLEN,
			bad, unfit);
}

/* Every pattern dropped in turn from the H3 scheme leaves killers. */
static void needed(void)
{
	idx_t x;
	filt_scheme_t s, t;
	uint8_t cnt[2 * FILT_SCHEME_MAXLEN];
	uint32_t i, lossy = 0;

	mkidx(&x, 9, 16, 5000000);
	memset(cnt, 0, sizeof cnt);
	if (!filt_scheme_make(&x, 40, 3, &s)) {
		tap_ok(0, "the H3 scheme (40 bases, E = 3, u = 9, l = 16) exists");
		return;
	}
	for (i = 0; i < s.np; i++) {
		t = s;
		memmove(&t.p[i], &t.p[i + 1], (t.np - i - 1) * sizeof t.p[0]);
		t.np--;
		lossy += killers(&t, 9, cnt, 0, 79, 3) > 0;
	}
	tap_ok(s.np >= 2 && lossy == s.np, "H3 scheme: each of its %u patterns is needed "
			"(dropped, %u of them leave killers)", s.np, lossy);
}

/* Anchored edit distance of q[x..v) to a prefix of t[x..l), exact q[0..x). */
static uint32_t dp(const uint8_t *q, uint32_t x, uint32_t v, const uint8_t *t, uint32_t l)
{
	uint32_t D[40][40], i, j, best = 1000;

	for (i = 0; i < x; i++)
		if (q[i] > 3 || q[i] != t[i])
			return 1000;
	for (i = 0; i <= v - x; i++)
		for (j = 0; j <= l - x; j++) {
			if (!i || !j) {
				D[i][j] = i + j;
				continue;
			}
			D[i][j] = D[i - 1][j - 1] + (q[x + i - 1] > 3 || q[x + i - 1] != t[x + j - 1]);
			if (D[i - 1][j] + 1 < D[i][j])
				D[i][j] = D[i - 1][j] + 1;
			if (D[i][j - 1] + 1 < D[i][j])
				D[i][j] = D[i][j - 1] + 1;
		}
	for (j = 0; j <= l - x; j++)
		best = D[v - x][j] < best ? D[v - x][j] : best;
	return best;
}

static uint64_t pack(const uint8_t *b, uint32_t n, uint64_t *nm)
{
	uint64_t w = 0;
	uint32_t i;

	if (nm)
		*nm = 0;
	for (i = 0; i < n; i++) {
		w |= (uint64_t)(b[i] & 3) << (2 * i);
		if (nm && b[i] > 3)
			*nm |= 1ull << (2 * i);
	}
	return w;
}

static void matcher(void)
{
	uint32_t it, bad = 0, pos = 0, n = 0;

	for (it = 0; it < 400000; it++) {
		uint32_t l = 2 + rnd(31), e = rnd(4), v, x, i, j;
		uint8_t q[40], t[40];
		filt_spat_t p;
		uint64_t nm, qw, tw;
		int got, want;

		if (e >= l)
			e = l - 1;
		v = 1 + rnd(l - e);
		x = e ? rnd(v + 1) : v;
		if (x == v && e)
			e = 0;
		for (i = 0; i < l; i++)
			t[i] = (uint8_t)rnd(4);
		/* q: t edited by up to e + 1 operations, or random */
		if (rnd(4)) {
			uint32_t k = rnd(e + 2);

			memcpy(q, t, l);
			for (i = 0; i < k; i++) {
				uint32_t at = x + rnd(v - x + 1), op = rnd(3);

				if (at >= v)
					at = v ? v - 1 : 0;
				if (op == 0)
					q[at] = (uint8_t)rnd(4);
				else if (op == 1)   /* insertion into q */
					for (j = v - 1; j > at; j--)
						q[j] = q[j - 1];
				else   /* deletion from q */
					for (j = at; j + 1 < l; j++)
						q[j] = q[j + 1];
			}
		} else {
			for (i = 0; i < v; i++)
				q[i] = (uint8_t)rnd(4);
		}
		if (!rnd(8))
			q[rnd(v)] = 4;   /* an N */
		qw = pack(q, v, &nm);
		tw = pack(t, l, NULL);
		p.o = 0;
		p.x = (uint16_t)x;
		p.v = (uint16_t)v;
		p.e = (uint16_t)e;
		got = filt_scheme_match(qw, nm, &p, tw, l);
		want = dp(q, x, v, t, l) <= e;
		pos += (uint32_t)want;
		n++;
		if (got != want && bad++ < 5)
			tap_diag("l=%u v=%u x=%u e=%u: match %d, dynamic program %d", l, v, x, e,
					got, want);
	}
	tap_ok(bad == 0 && pos > n / 10 && pos < n - n / 10,
			"filt_scheme_match equals the anchored edit distance's dynamic program on "
			"%u random cases (%u within e, %u differ)", n, pos, bad);
}

/* filt_scheme_scan over blocks of random keys (many near q) = filt_scheme_match per key. */
static void scanner(void)
{
	uint32_t it, bad = 0, hits = 0, keys = 0;

	for (it = 0; it < 3000; it++) {
		uint32_t l = 2 + rnd(31), e = rnd(3), v, x, i, j, n = 1 + rnd(200), got;
		uint32_t k32[200], out[200], want[200], nw = 0;
		uint64_t k64[200], q = 0, nm = 0;
		filt_spat_t p;

		if (e >= l)
			e = l - 1;
		v = 1 + rnd(l - e);
		x = e ? rnd(v + 1) : v;
		if (x == v)
			e = 0;
		for (i = 0; i < v; i++)
			q |= (uint64_t)rnd(4) << (2 * i);
		if (!rnd(10))
			nm = 1ull << (2 * rnd(v));
		for (j = 0; j < n; j++) {
			uint64_t t = 0;

			for (i = 0; i < l; i++)
				t |= (uint64_t)rnd(4) << (2 * i);
			if (rnd(3)) {   /* q with a base or two changed, shifted by -1..1 */
				uint64_t w = q, mv = v >= 32 ? ~0ull : (1ull << (2 * v)) - 1;

				for (i = rnd(3); i > 0; i--)
					w ^= (uint64_t)(1 + rnd(3)) << (2 * rnd(v));
				i = rnd(3);
				w = i == 0 ? w : i == 1 ? w << 2 | rnd(4) : w >> 2;
				t = (t & ~mv) | (w & mv);
			}
			if (l < 32)
				t &= (1ull << (2 * l)) - 1;
			k64[j] = t;
			k32[j] = (uint32_t)t;
		}
		p.o = 0;
		p.x = (uint16_t)x;
		p.v = (uint16_t)v;
		p.e = (uint16_t)e;
		for (j = 0; j < n; j++)
			if (filt_scheme_match(q, nm, &p, k64[j], l))
				want[nw++] = j;
		got = (uint32_t)filt_scheme_scan(l <= 16 ? k32 : NULL, l <= 16 ? NULL : k64, n, q,
				nm, &p, l, out);
		keys += n;
		hits += nw;
		if (got != nw || memcmp(out, want, nw * sizeof *out)) {
			if (bad++ < 5)
				tap_diag("l=%u v=%u x=%u e=%u: scan %u keys, match %u", l, v, x, e, got, nw);
		}
	}
	tap_ok(bad == 0 && hits > keys / 20, "filt_scheme_scan equals filt_scheme_match key by "
			"key (%u keys, %u match, %u blocks differ)", keys, hits, bad);
}

/*
 * A read of m bases copied from REF[g..) with E random edits; the live
 * pattern's window must match the reference at its diagonal.  The read's
 * alignment is known: ref position of each read base (-1: inserted), and
 * the slot counts.
 */
static void alignments(uint32_t span, uint32_t l)
{
	idx_t x;
	uint32_t it, bad = 0, tried = 0, m, E;

	mkidx(&x, span, l, 5000000);
	for (it = 0; it < 20000; it++) {
		uint8_t ref[256], rd[FILT_SCHEME_MAXLEN], cnt[2 * FILT_SCHEME_MAXLEN];
		int32_t rp[FILT_SCHEME_MAXLEN];
		filt_scheme_t s;
		uint32_t i, j, k, g = 40, ops = 0;

		m = 20 + rnd(FILT_SCHEME_MAXLEN - 19);
		E = rnd(4);
		if (!filt_scheme_make(&x, m, E, &s))
			continue;
		for (i = 0; i < sizeof ref; i++)
			ref[i] = (uint8_t)rnd(4);
		memset(cnt, 0, sizeof cnt);
		/* walk the reference, emitting read bases with E edits at random */
		for (i = 0, j = g; i < m;) {
			uint32_t op = ops < E && rnd(m) < 2 * E ? 1 + rnd(3) : 0;

			if (op == 3 && i > 0) {   /* deletion before read base i */
				j++;
				cnt[2 * i - 1]++;
				ops++;
				continue;
			}
			if (op == 2) {   /* insertion: read base i from nowhere */
				rd[i] = (uint8_t)rnd(4);
				rp[i] = -1;
				cnt[2 * i]++;
				ops++;
				i++;
				continue;
			}
			rd[i] = ref[j];
			rp[i] = (int32_t)j;
			if (op == 1) {   /* substitution (or an N) */
				rd[i] = rnd(5) ? (uint8_t)((ref[j] + 1 + rnd(3)) & 3) : 4;
				cnt[2 * i]++;
				ops++;
			}
			i++;
			j++;
		}
		for (k = 0; k < s.np; k++) {
			const filt_spat_t *p = &s.p[k];
			uint64_t q, nm, t;
			int32_t sp;

			if (!filt_scheme_alive(&s, span, cnt))
				break;
			{
				filt_scheme_t one = s;

				one.np = 1;
				one.p[0] = *p;
				if (!filt_scheme_alive(&one, span, cnt))
					continue;
			}
			/* live: its seed is copied from ref at rp[o] */
			tried++;
			sp = rp[p->o];
			for (i = 0; i < span; i++)
				if (rp[p->o + i] != sp + (int32_t)i || rd[p->o + i] != ref[sp + i])
					break;
			q = pack(rd + p->o + span, p->v, &nm);
			t = pack(ref + sp + span, l, NULL);
			if (sp < 0 || i < span || !filt_scheme_match(q, nm, p, t, l)) {
				if (bad++ < 5)
					tap_diag("u=%u l=%u m=%u E=%u: live pattern %u (o %u) misses",
							span, l, m, E, k, p->o);
			}
			break;
		}
	}
	tap_ok(bad == 0 && tried > 1000, "u=%u l=%u: every live pattern of %u random "
			"alignments (m 20..%u, E <= 3) matches the reference at its seed "
			"(%u miss)", span, l, tried, FILT_SCHEME_MAXLEN, bad);
}

int main(void)
{
	lossless(9, 16, 5000000, 4);
	lossless(8, 9, 5000000, 3);
	lossless(5, 5, 100000, 5);
	lossless(11, 32, 100000000, 7);
	lossless(4, 12, 20000, 7);
	needed();
	matcher();
	scanner();
	alignments(9, 16);
	alignments(8, 9);
	alignments(12, 32);
	return tap_done();
}
