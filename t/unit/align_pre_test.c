/*
 * align_pre_test.c - unit tests of the alignment prefilter (common/align.c:
 * align_pre_batch and its use in align_batch), printing TAP.
 *
 *     align_pre_test            the TAP tests
 *     align_pre_test N SEED     only the batch tests, N pairs from SEED
 *
 * The oracle is the full (m+1) x (n+1) semi-global edit distance matrix
 * (D[0][j] = 0, D[i][0] = i, N matching nothing): a window has an end
 * within A when min D[m][j], j = 1..n, is at most A.  Every decision of
 * the scalar and the vector prefilter (where the CPU has it) is checked
 * against it, and align_batch's whole output (result records and end
 * bytes) with the prefilter is compared with the output without it
 * (ALIGN_PRE_OFF: the core alone), packed and ASCII, with and without a
 * CIGAR, with end ranges, with 1 and 3 threads.  Pairs are random or hold
 * the read with 0..A+2 random edits, with N in reads and windows, reads of
 * 1..1024 bases, windows from shorter than m - A to wider than the band,
 * A = 0..15, and runs of pairs sharing a read as extend makes them.
 */
#include "align.h"
#include "seqio.h"
#include "tap.h"
#include "util.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rng(void)
{
	return tu_xorshift64(&rng_state);
}

static int code(int c)
{
	return c == 'A' || c == 'a' ? 0 : c == 'C' || c == 'c' ? 1 : c == 'G' || c == 'g' ? 2
		: c == 'T' || c == 't' ? 3 : 4;
}

/* The oracle: whether min over j = 1..n of D[m][j] is at most A. */
static int oracle_yes(const uint8_t *r, int m, const uint8_t *t, int n, int a)
{
	int *prev = sp_malloc((size_t)(m + 1) * sizeof *prev), *cur = sp_malloc((size_t)(m + 1) * sizeof *cur);
	int i, j, yes = 0;

	for (i = 0; i <= m; i++)
		prev[i] = i;   /* column 0 */
	for (j = 1; j <= n; j++) {
		int *x;
		cur[0] = 0;
		for (i = 1; i <= m; i++) {
			int v = prev[i - 1] + (code(r[i - 1]) > 3 || code(r[i - 1]) != code(t[j - 1]));
			if (prev[i] + 1 < v)
				v = prev[i] + 1;
			if (cur[i - 1] + 1 < v)
				v = cur[i - 1] + 1;
			cur[i] = v;
		}
		if (cur[m] <= a)
			yes = 1;
		x = prev;
		prev = cur;
		cur = x;
	}
	free(prev);
	free(cur);
	return yes;
}

static const char *alphas[] = { "ACGT", "ACGT", "acgtACGT", "ACGTN", "AC", "A" };

static void rand_seq(uint8_t *s, int n, const char *alpha)
{
	int i, k = (int)strlen(alpha);

	for (i = 0; i < n; i++)
		s[i] = (uint8_t)alpha[rng() % (uint64_t)k];
}

/* A window of N bases (or thereabouts) for the read R (M bases), within A: random or planted. */
static int rand_window(uint8_t *t, int n, const uint8_t *r, int m, int a)
{
	int kind = (int)(rng() % 5), i, o = 0, e, ed, only_del = kind == 4;

	rand_seq(t, n, alphas[rng() % 2]);
	if (kind == 0 || n <= 0)
		return n;
	/* plant the read at a random place with 0..A+2 edits */
	ed = (int)(rng() % (uint64_t)(a + 3));
	o = n > m ? (int)(rng() % (uint64_t)(n - m + 1)) : 0;
	if (only_del) {   /* the read at the window's start, bases missing from the window */
		ed = a + (int)(rng() % 2);
		o = 0;
	}
	{
		uint8_t tmp[4 * 1024 + 64];
		int k = 0;
		for (i = 0; i < m && o + k < n; i++) {
			e = ed > 0 && rng() % (uint64_t)(m / (ed + 1) + 1) == 0;
			if (!e) {
				tmp[k++] = r[i];
				continue;
			}
			ed--;
			switch (only_del ? 1 : rng() % 3) {
			case 0:   /* substitution */
				tmp[k++] = (uint8_t)"ACGT"[rng() % 4];
				break;
			case 1:   /* read base deleted from the window */
				break;
			default:  /* extra window base */
				tmp[k++] = (uint8_t)"ACGT"[rng() % 4];
				tmp[k++] = r[i];
			}
		}
		for (i = 0; i < k && o + i < n; i++)
			t[o + i] = tmp[i];
	}
	if (kind == 3)   /* some N in the window */
		for (i = (int)(rng() % 4); i > 0; i--)
			t[rng() % (uint64_t)n] = 'N';
	return n;
}

/* A read length: mostly short, some > 64, > 128, up to 1024. */
static int rand_m(int max_m)
{
	switch (rng() % 6) {
	case 0: return 1 + (int)(rng() % 20);
	case 1: return 60 + (int)(rng() % 10);
	case 2: return 120 + (int)(rng() % 16);
	case 3: return 1 + (int)(rng() % (uint64_t)max_m);
	default: return 90 + (int)(rng() % 30);
	}
}

typedef struct {
	uint8_t *reads, *wins, *packed;
	align_pair_t *pairs;
	size_t n, rlen, wlen, stride;
	unsigned a;
	int *oracle;   /* ASCII windows' answers; packed ones' in oracle_pk */
	int *oracle_pk;
} batch_t;

/*
 * N pairs with A edits: runs of pairs share a read (a window shape mostly
 * n = m + 2A, as extend's candidates), windows ASCII and packed (N as A,
 * at any offset in a byte).
 */
static void make_batch(batch_t *b, size_t n, unsigned a, int max_m)
{
	size_t k = 0, rcap = n * (ALIGN_MAX_READ + 1), wcap = n * (ALIGN_MAX_READ + 200);
	uint8_t *ta = sp_malloc(ALIGN_MAX_READ + 200);

	memset(b, 0, sizeof *b);
	b->a = a;
	b->n = n;
	b->reads = sp_malloc(rcap);
	b->wins = sp_malloc(wcap);
	b->pairs = sp_malloc(n * sizeof *b->pairs);
	b->oracle = sp_malloc(n * sizeof *b->oracle);
	b->oracle_pk = sp_malloc(n * sizeof *b->oracle_pk);
	b->stride = 1;
	while (k < n) {
		int m = rand_m(max_m), run = 1 + (int)(rng() % 40), i;
		size_t roff = b->rlen;
		rand_seq(b->reads + roff, m, alphas[rng() % 6 == 0 ? 3 : (int)(rng() % 3)]);
		if (rng() % 4 == 0)   /* an N or two in the read */
			for (i = (int)(1 + rng() % 2); i > 0; i--)
				b->reads[roff + rng() % (uint64_t)m] = 'N';
		b->rlen += (size_t)m;
		for (i = 0; i < run && k < n; i++, k++) {
			int wn, j;
			switch (rng() % 8) {
			case 0:   /* short: near a sequence start, or too short */
				wn = (int)(rng() % (uint64_t)(m + 2 * a + 1));
				break;
			case 1:   /* any width up to past the band */
				wn = m + (int)(rng() % 80) - (int)a;
				break;
			case 2:   /* bands of about 32 and 64 diagonals */
				wn = m + (rng() % 2 ? 63 : 31) - 2 * (int)a + (int)(rng() % 4) - 1;
				break;
			default:
				wn = m + 2 * (int)a;
			}
			if (wn < 0)
				wn = 0;
			rand_window(b->wins + b->wlen, wn, b->reads + roff, m, (int)a);
			b->pairs[k].read_off = roff;
			b->pairs[k].read_len = (uint32_t)m;
			b->pairs[k].win_off = b->wlen;
			b->pairs[k].win_len = (uint32_t)wn;
			b->pairs[k].end_lo = 0;
			b->pairs[k].end_hi = 0;
			if (wn && rng() % 8 == 0) {   /* an end range, as a second locus */
				b->pairs[k].end_lo = (uint32_t)(rng() % (uint64_t)wn);
				b->pairs[k].end_hi = b->pairs[k].end_lo + (uint32_t)(rng() % 8);
			}
			b->oracle[k] = oracle_yes(b->reads + roff, m, b->wins + b->wlen, wn, (int)a);
			for (j = 0; j < wn; j++)
				ta[j] = code(b->wins[b->wlen + j]) > 3 ? 'A' : b->wins[b->wlen + j];
			b->oracle_pk[k] = oracle_yes(b->reads + roff, m, ta, wn, (int)a);
			b->wlen += (size_t)wn;
			if ((size_t)wn > b->stride)
				b->stride = (size_t)wn;
		}
	}
	/* packed: the windows' bases at the same offsets, after a random shift */
	{
		size_t sh = rng() % 4, i;
		b->packed = sp_malloc((b->wlen + sh + 3) / 4 + 1);
		memset(b->packed, 0, (b->wlen + sh + 3) / 4 + 1);
		for (i = 0; i < b->wlen; i++) {
			unsigned c = (unsigned)code(b->wins[i]) & 3u;   /* N as A */
			b->packed[(i + sh) / 4] |= (uint8_t)(c << (2 * ((i + sh) % 4)));
		}
		/* the packed pairs' offsets move by sh: kept in win_off via a copy at use */
		b->wlen = b->wlen * 16 + sh;   /* low 4 bits: the shift */
	}
	free(ta);
}

static void free_batch(batch_t *b)
{
	free(b->reads);
	free(b->wins);
	free(b->packed);
	free(b->pairs);
	free(b->oracle);
	free(b->oracle_pk);
}

/* The pairs for FLAGS: packed windows' offsets moved by the batch's shift. */
static align_pair_t *pairs_for(const batch_t *b, unsigned flags)
{
	align_pair_t *p = sp_malloc((b->n ? b->n : 1) * sizeof *p);
	size_t k;

	memcpy(p, b->pairs, b->n * sizeof *p);
	if (flags & ALIGN_PACKED)
		for (k = 0; k < b->n; k++)
			p[k].win_off += b->wlen & 15;
	return p;
}

static int have_simd;   /* whether ALIGN_PRE_SIMD runs here (AVX-512) */

static const char *mode_name(int mode)
{
	return mode == ALIGN_PRE_SCALAR ? "scalar" : mode == ALIGN_PRE_SIMD ? "AVX-512" : "default";
}

/* Decisions of MODE against the oracle; returns how many pairs it decided. */
static size_t check_decisions(const batch_t *b, unsigned flags, int mode, const char *what)
{
	align_pair_t *p = pairs_for(b, flags);
	uint8_t *yes = sp_malloc(b->n ? b->n : 1);
	const int *want = (flags & ALIGN_PACKED) ? b->oracle_pk : b->oracle;
	size_t k, bad = 0, decided = 0, n_yes = 0, n_no = 0;

	if (mode == ALIGN_PRE_SIMD && !have_simd) {
		tap_skip("no AVX-512 here");
		free(yes);
		free(p);
		return 0;
	}

	align_set_prefilter(mode);
	align_pre_batch(b->reads, (flags & ALIGN_PACKED) ? b->packed : b->wins, p, b->n, b->a,
			flags, yes);
	align_set_prefilter(ALIGN_PRE_AUTO);
	for (k = 0; k < b->n; k++) {
		uint32_t m = p[k].read_len, n = p[k].win_len;
		int eligible = (uint64_t)n + b->a < m || n - m + 2 * b->a + 1 <= 64;
		if (yes[k] == 2) {
			if (eligible && bad++ < 5)
				tap_diag("%s: pair %zu (m %u n %u A %u) not decided", what, k, m, n, b->a);
			continue;
		}
		decided++;
		n_yes += yes[k];
		n_no += !yes[k];
		if (yes[k] != want[k] && bad++ < 5)
			tap_diag("%s: pair %zu (m %u n %u A %u): prefilter %d, oracle %d", what, k, m, n,
					b->a, yes[k], want[k]);
	}
	tap_ok(bad == 0 && decided > b->n / 4 && (b->n < 200 || (n_yes && n_no)),
			"%s, %s: %zu decisions (%zu yes, %zu no) of %zu pairs equal the oracle", what,
			mode_name(mode), decided, n_yes, n_no, b->n);
	free(yes);
	free(p);
	return decided;
}

/* align_batch's output with MODE equals the core's alone (ALIGN_PRE_OFF). */
static void check_batch(const batch_t *b, unsigned flags, int mode, int threads, const char *what)
{
	align_pair_t *p = pairs_for(b, flags);
	const uint8_t *w = (flags & ALIGN_PACKED) ? b->packed : b->wins;
	size_t n = b->n ? b->n : 1;
	align_res_t *r0 = sp_malloc(n * sizeof *r0), *r1 = sp_malloc(n * sizeof *r1);
	uint8_t *e0 = sp_malloc(n * b->stride), *e1 = sp_malloc(n * b->stride);
	char msg[256];
	int rc;

	memset(r0, 0xa5, n * sizeof *r0);
	memset(r1, 0x5a, n * sizeof *r1);
	memset(e0, 0xa5, n * b->stride);
	memset(e1, 0x5a, n * b->stride);
	align_set_prefilter(ALIGN_PRE_OFF);
	rc = align_batch(b->reads, w, p, b->n, b->a, flags, 1, e0, b->stride, r0, msg, sizeof msg);
	align_set_prefilter(mode);
	rc |= align_batch(b->reads, w, p, b->n, b->a, flags, threads, e1, b->stride, r1, msg,
			sizeof msg);
	align_set_prefilter(ALIGN_PRE_AUTO);
	tap_ok(rc == 0 && memcmp(r0, r1, b->n * sizeof *r0) == 0
			&& memcmp(e0, e1, b->n * b->stride) == 0,
			"%s, %s: align_batch output equals the core's (%zu pairs, %d threads)", what,
			mode_name(mode), b->n, threads);
	free(r0);
	free(r1);
	free(e0);
	free(e1);
	free(p);
}

/*
 * ALIGN_ENDS_HITS (extend's pass 1): the same distances, and the same results
 * and ends rows for every pair with a hit; the rest of the others is not
 * looked at.
 */
static void check_ends_hits(const batch_t *b, unsigned flags, int mode, const char *what)
{
	align_pair_t *p = pairs_for(b, flags);
	const uint8_t *w = (flags & ALIGN_PACKED) ? b->packed : b->wins;
	size_t n = b->n ? b->n : 1, k, bad = 0, hits = 0;
	align_res_t *r0 = sp_malloc(n * sizeof *r0), *r1 = sp_malloc(n * sizeof *r1);
	uint8_t *e0 = sp_malloc(n * b->stride), *e1 = sp_malloc(n * b->stride);
	char msg[256];
	int rc;

	memset(e1, 0x5a, n * b->stride);
	memset(r1, 0x5a, n * sizeof *r1);
	align_set_prefilter(ALIGN_PRE_OFF);
	rc = align_batch(b->reads, w, p, b->n, b->a, flags, 1, e0, b->stride, r0, msg, sizeof msg);
	align_set_prefilter(mode);
	rc |= align_batch(b->reads, w, p, b->n, b->a, flags | ALIGN_ENDS_HITS, 2, e1, b->stride,
			r1, msg, sizeof msg);
	align_set_prefilter(ALIGN_PRE_AUTO);
	for (k = 0; k < b->n; k++) {
		if (r0[k].dist < 0) {
			bad += r1[k].dist != r0[k].dist;
			continue;
		}
		hits++;
		bad += memcmp(&r0[k], &r1[k], sizeof r0[k]) != 0;
		bad += memcmp(e0 + k * b->stride, e1 + k * b->stride, b->stride) != 0;
	}
	tap_ok(rc == 0 && bad == 0 && hits > 0,
			"%s, %s, ALIGN_ENDS_HITS: same distances; same results and ends of the %zu pairs with a hit",
			what, mode_name(mode), hits);
	free(r0);
	free(r1);
	free(e0);
	free(e1);
	free(p);
}

/* The prefilter must not run without ALIGN_ENDS or with ALIGN_NOGAPS. */
static void test_scope(const batch_t *b)
{
	uint8_t *yes = sp_malloc(b->n);
	size_t k, two = 0;

	align_pre_batch(b->reads, b->wins, b->pairs, b->n, b->a, ALIGN_NOCIGAR, yes);
	for (k = 0; k < b->n; k++)
		two += yes[k] == 2;
	align_pre_batch(b->reads, b->wins, b->pairs, b->n, b->a, ALIGN_ENDS | ALIGN_NOGAPS, yes);
	for (k = 0; k < b->n; k++)
		two += yes[k] == 2;
	tap_ok(two == 2 * b->n, "no decisions without ALIGN_ENDS or with ALIGN_NOGAPS");
	free(yes);
}

static void run_batch(size_t n, unsigned a, int max_m, int full)
{
	batch_t b;
	char what[96];
	static const unsigned fl[] = { ALIGN_ENDS | ALIGN_NOCIGAR | ALIGN_PACKED,
		ALIGN_ENDS | ALIGN_NOCIGAR, ALIGN_ENDS, ALIGN_ENDS | ALIGN_PACKED };
	int f;

	make_batch(&b, n, a, max_m);
	for (f = 0; f < (full ? 4 : 2); f++) {
		snprintf(what, sizeof what, "A %u, reads 1..%d, %s%s", a, max_m,
				(fl[f] & ALIGN_PACKED) ? "packed" : "ASCII",
				(fl[f] & ALIGN_NOCIGAR) ? "" : ", CIGAR");
		check_decisions(&b, fl[f], ALIGN_PRE_SCALAR, what);
		check_decisions(&b, fl[f], ALIGN_PRE_SIMD, what);
		check_batch(&b, fl[f], ALIGN_PRE_SCALAR, 1, what);
		check_batch(&b, fl[f], ALIGN_PRE_SIMD, f == 0 ? 3 : 1, what);
		check_batch(&b, fl[f], ALIGN_PRE_AUTO, 2, what);
		check_ends_hits(&b, fl[f], ALIGN_PRE_SIMD, what);
		check_ends_hits(&b, fl[f], ALIGN_PRE_OFF, what);
	}
	if (full)
		test_scope(&b);
	free_batch(&b);
}

/*
 * align_pre_read (extend's per-read prefilter on the packed reference):
 * for random reads and windows of one length cut from a packed reference
 * holding planted copies of the read, each decision equals the oracle's
 * (the reference has no N: packed N would read as A).  It must decline
 * (-1) exactly where the vector pass is off or the band is over 32.
 */
static void check_pre_read(unsigned a, int max_m, int reads)
{
	enum { REF = 6000 };
	uint8_t *ref = sp_malloc(REF + 64), *pk = sp_calloc((REF + 3) / 4 + 16, 1);
	uint8_t r[1024], *yes = sp_malloc(300);
	uint64_t *off = sp_malloc(300 * sizeof *off);
	align_pre_ws_t *ws = align_pre_ws_new();
	int t, bad = 0, declined_ok = 1, decided = 0, hits = 0;

	for (t = 0; t < reads; t++) {
		int m = 1 + (int)(rng() % (uint64_t)max_m), n, k, nw, rc, widen;
		rand_seq(r, m, "ACGT");
		rand_seq(ref, REF, "ACGT");
		/* planted copies with 0..A+2 edits (rand_window, without N) */
		int at[6];
		for (k = 0; k < 6; k++) {
			uint8_t w[1100 + 64];
			int o = (int)(rng() % (uint64_t)(REF - m - 2 * (int)a - 8)), len = m + 2 * (int)a, i;
			at[k] = o;
			rand_window(w, len, r, m, (int)a);
			for (i = 0; i < len; i++)
				ref[o + i] = w[i] == 'N' ? 'A' : w[i];
		}
		seqio_pack2(pk, (const char *)ref, REF);
		widen = (int)(rng() % 4) == 0 ? (int)(rng() % 40) : 0;   /* some bands over 32 */
		n = m + 2 * (int)a + widen - (int)(rng() % 3);
		if (n < 1 || n + 2 > REF)
			continue;
		nw = 1 + (int)(rng() % 280);
		for (k = 0; k < nw; k++) {   /* half of them on a planted copy, give or take */
			int64_t o = (int64_t)(rng() % (uint64_t)(REF - n));
			if (rng() % 2)
				o = at[rng() % 6] + (int64_t)(rng() % (2 * (uint64_t)a + 5)) - (int64_t)a - 2;
			off[k] = (uint64_t)(o < 0 ? 0 : o > REF - n ? REF - n : o);
		}
		rc = align_pre_read(ws, r, (uint32_t)m, pk, off, (size_t)nw, (uint32_t)n, a, yes);
		if (rc < 0) {
			if (have_simd && n - m + 2 * (int)a + 1 <= 32 && n + (int)a >= m)
				declined_ok = 0;
			continue;
		}
		if (!have_simd || n - m + 2 * (int)a + 1 > 32)
			declined_ok = 0;
		for (k = 0; k < nw; k++) {
			int want = oracle_yes(r, m, ref + off[k], n, (int)a);
			decided++;
			hits += want;
			if (yes[k] != want && bad++ < 3)
				tap_diag("A=%u m=%d n=%d window %d at %llu: prefilter %d, oracle %d", a, m, n,
						k, (unsigned long long)off[k], yes[k], want);
		}
	}
	tap_ok(bad == 0, "align_pre_read, A=%u, reads up to %d: %d decisions (%d with an end) equal the oracle",
			a, max_m, decided, hits);
	tap_ok(declined_ok, "align_pre_read, A=%u: declines exactly without the vector pass or past 32 diagonals", a);
	align_pre_ws_free(ws);
	free(ref);
	free(pk);
	free(yes);
	free(off);
}

int main(int argc, char **argv)
{
	unsigned a;

	sp_set_progname(argv[0]);
	{   /* a read against itself: decided (1) where the vector pass runs */
		align_pair_t p = { 0, 0, 4, 4, 0, 0 };
		uint8_t y = 2;
		align_set_prefilter(ALIGN_PRE_SIMD);
		align_pre_batch((const uint8_t *)"ACGT", (const uint8_t *)"ACGT", &p, 1, 0, ALIGN_ENDS, &y);
		align_set_prefilter(ALIGN_PRE_AUTO);
		have_simd = y == 1;
		tap_ok(y == 1 || y == 2, "one pair with the vector pass: %s", have_simd ? "decided"
				: "not run (no AVX-512)");
	}
	if (argc == 3) {
		rng_state = strtoull(argv[2], NULL, 10) * 2654435761u + 1;
		run_batch((size_t)atol(argv[1]), (unsigned)(rng() % 16), 300, 1);
		return tap_done();
	}
	for (a = 0; a <= ALIGN_MAX_A; a++)
		run_batch(a == 5 ? 3000 : 700, a, 200, a % 5 == 0);
	run_batch(300, 3, ALIGN_PRE_MAX_READ, 1);   /* longer reads skip the pass */
	run_batch(300, 15, ALIGN_PRE_MAX_READ, 0);
	run_batch(2000, 5, 150, 0);
	for (a = 0; a <= 8; a++)
		check_pre_read(a, a == 5 ? 150 : 110, a == 5 ? 60 : 25);
	check_pre_read(2, 1024, 6);
	return tap_done();
}
