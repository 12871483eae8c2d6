/*
 * align_test.c - unit tests of the alignment core (common/align.c,
 * kernels/inc_align.h, kernels/align.cl), printing TAP.
 *
 *     align_test            the TAP tests (device tests skip without OpenCL)
 *     align_test N SEED     only the oracle comparison, N random pairs
 *
 * Oracles, written plainly here: the full (m+1) x (n+1) semi-global edit
 * distance matrix (D[0][j] = 0, D[i][0] = i), its leftmost best end and a
 * traceback over the whole matrix with the documented preference (M, then
 * I, then D); a Hamming scan over every diagonal for --no-gaps.  Result
 * records are compared whole (memcmp), so the CIGAR, start and end must be
 * exactly the oracle's.  Independently, each CIGAR is checked to consume m
 * read bases and end-start+1 reference bases at a recomputed cost equal to
 * the distance.  The test device is $OCL_TEST_DEVICE, else a GPU, else a
 * CPU device (PoCL).
 */
#include "align.h"
#include "ocl.h"
#include "ocl_testdev.h"
#include "tap.h"
#include "util.h"
#include "testutil.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define BUF (ALIGN_MAX_READ * 3 + 64)
#define BUF_MD (ALIGN_MAX_READ * 4)

static uint64_t rng_state = 0x243F6A8885A308D3ull;

static uint64_t rng(void)
{
	return tu_xorshift64(&rng_state);
}

static int code(int c)
{
	return c == 'A' || c == 'a' ? 0 : c == 'C' || c == 'c' ? 1 : c == 'G' || c == 'g' ? 2
		: c == 'T' || c == 't' ? 3 : 4;
}

static int cost(int a, int b)
{
	return code(a) > 3 || code(a) != code(b);
}

/* --- oracles --------------------------------------------------------------- */

/* Full DP matrix D[i * (n+1) + j]. */
static void oracle_matrix(const uint8_t *r, int m, const uint8_t *t, int n, int *d)
{
	int i, j, w = n + 1;

	for (j = 0; j <= n; j++)
		d[j] = 0;
	for (i = 1; i <= m; i++) {
		d[i * w] = i;
		for (j = 1; j <= n; j++) {
			int v = d[(i - 1) * w + j - 1] + cost(r[i - 1], t[j - 1]);
			if (d[(i - 1) * w + j] + 1 < v)
				v = d[(i - 1) * w + j] + 1;
			if (d[i * w + j - 1] + 1 < v)
				v = d[i * w + j - 1] + 1;
			d[i * w + j] = v;
		}
	}
}

static void push_op(align_res_t *o, unsigned op)
{
	if (o->n_cigar && (o->cigar[o->n_cigar - 1] & 15u) == op)
		o->cigar[o->n_cigar - 1] += 16;
	else if (o->n_cigar < ALIGN_MAX_CIGAR)
		o->cigar[o->n_cigar++] = 16 | op;
	else
		o->n_cigar++;   /* overflow: will not match */
}

/* The expected record (and ends) for a gapped alignment. */
static void oracle_align(const uint8_t *r, int m, const uint8_t *t, int n, int a, unsigned flags,
		int lo, int hi, align_res_t *o, uint8_t *ends)
{
	int *d = sp_malloc((size_t)(m + 1) * (size_t)(n + 1) * sizeof *d);
	int i, j, w = n + 1, best = a + 1, bj = 0;
	unsigned k;

	memset(o, 0, sizeof *o);
	o->dist = ALIGN_NOHIT;
	oracle_matrix(r, m, t, n, d);
	for (j = 1; j <= n; j++) {
		int v = d[m * w + j];
		if (ends)
			ends[j - 1] = v <= a ? (uint8_t)v : ALIGN_END_NONE;
		if (v <= a)
			o->n_ends++;
		if (v < best && (hi == 0 || (j - 1 >= lo && j - 1 <= hi))) {
			best = v;
			bj = j;
		}
	}
	if (best > a) {
		o->n_ends = 0;
		free(d);
		return;
	}
	o->dist = best;
	o->end = (unsigned)bj - 1;
	if (!(flags & ALIGN_NOCIGAR)) {
		i = m;
		j = bj;
		while (i > 0) {
			int v = d[i * w + j];
			if (j > 0 && d[(i - 1) * w + j - 1] + cost(r[i - 1], t[j - 1]) == v) {
				push_op(o, SP_CIGAR_M);
				i--;
				j--;
			} else if (d[(i - 1) * w + j] + 1 == v) {
				push_op(o, SP_CIGAR_I);
				i--;
			} else {
				push_op(o, SP_CIGAR_D);
				j--;
			}
		}
		o->start = (unsigned)j;
		for (k = 0; k < o->n_cigar / 2; k++) {
			unsigned x = o->cigar[k];
			o->cigar[k] = o->cigar[o->n_cigar - 1 - k];
			o->cigar[o->n_cigar - 1 - k] = x;
		}
	}
	free(d);
}

/* The expected record for --no-gaps. */
static void oracle_hamming(const uint8_t *r, int m, const uint8_t *t, int n, int a, unsigned flags,
		int lo, int hi, align_res_t *o, uint8_t *ends)
{
	int s, i, best = a + 1, bs = 0;

	memset(o, 0, sizeof *o);
	o->dist = ALIGN_NOHIT;
	if (ends)
		memset(ends, ALIGN_END_NONE, (size_t)n);
	for (s = 0; s + m <= n; s++) {
		int mm = 0;
		for (i = 0; i < m; i++)
			mm += cost(r[i], t[s + i]);
		if (mm <= a) {
			o->n_ends++;
			if (ends)
				ends[s + m - 1] = (uint8_t)mm;
		}
		if (mm < best && (hi == 0 || (s + m - 1 >= lo && s + m - 1 <= hi))) {
			best = mm;
			bs = s;
		}
	}
	if (best > a) {
		o->n_ends = 0;
		return;
	}
	o->dist = best;
	o->start = (unsigned)bs;
	o->end = (unsigned)(bs + m - 1);
	if (!(flags & ALIGN_NOCIGAR)) {
		o->n_cigar = 1;
		o->cigar[0] = (unsigned)m << 4;
	}
}

/*
 * Is RES's CIGAR a valid alignment of R against T[start..end] whose cost is
 * the distance?  (Independent of the oracle's traceback.)
 */
static int cigar_valid(const align_res_t *res, const uint8_t *r, int m, const uint8_t *t, int n,
		int a, char *why, size_t len)
{
	int i = 0, j = (int)res->start, c = 0;
	unsigned k, l;

	if (res->n_cigar == 0 || res->n_cigar > (unsigned)(2 * a + 1)) {
		snprintf(why, len, "%u runs", res->n_cigar);
		return 0;
	}
	for (k = 0; k < res->n_cigar; k++) {
		unsigned op = res->cigar[k] & 15u, n_op = res->cigar[k] >> 4;
		if (n_op == 0 || op > 2 || (k && op == (res->cigar[k - 1] & 15u))) {
			snprintf(why, len, "bad run %u", k);
			return 0;
		}
		for (l = 0; l < n_op; l++) {
			if (op == SP_CIGAR_M) {
				if (i >= m || j >= n)
					break;
				c += cost(r[i++], t[j++]);
			} else if (op == SP_CIGAR_I) {
				if (i >= m)
					break;
				i++;
				c++;
			} else {
				if (j >= n)
					break;
				j++;
				c++;
			}
		}
	}
	if (i != m || j != (int)res->end + 1 || c != res->dist) {
		snprintf(why, len, "consumes %d of %d read bases, ends at %d (end %u), cost %d (dist %d)",
				i, m, j - 1, res->end, c, res->dist);
		return 0;
	}
	for (k = res->n_cigar; k < ALIGN_MAX_CIGAR; k++)
		if (res->cigar[k]) {
			snprintf(why, len, "unused CIGAR entry %u is not 0", k);
			return 0;
		}
	return 1;
}

/* Pack T[0..n) (N as A) into P at base offset SH, the first base in the low bits. */
static void naive_pack(uint8_t *p, size_t cap, const uint8_t *t, int n, int sh)
{
	int i;

	memset(p, 0, cap);
	for (i = 0; i < n; i++) {
		int c = code(t[i]) & 3;   /* 4 (N) -> 0 (A) */
		p[(i + sh) / 4] |= (uint8_t)(c << (2 * ((i + sh) % 4)));
	}
}

/* T with every non-ACGT base as A: what a packed window holds. */
static void n_to_a(uint8_t *dst, const uint8_t *t, int n)
{
	int i;

	for (i = 0; i < n; i++)
		dst[i] = code(t[i]) > 3 ? 'A' : t[i];
}

/*
 * Rebuild the reference T[start..end] from the read, the CIGAR and the MD
 * string as a SAM reader would, and check it, the count of edits and the
 * MD grammar [0-9]+(([A-Z]|\^[A-Z]+)[0-9]+)*.
 */
static int md_valid(const align_res_t *res, const uint8_t *r, const uint8_t *t, const char *md,
		char *why, size_t len)
{
	char ref[BUF_MD];
	const char *p = md;
	unsigned k, l, i = 0, o = 0, num = 0, edits = 0, x;
	int have_num = 0;

#define MD_NUM() do { \
		if (*p < '0' || *p > '9') { snprintf(why, len, "no number at '%.40s'", p); return 0; } \
		num = (unsigned)strtoul(p, (char **)&p, 10); \
		have_num = 1; \
	} while (0)
	MD_NUM();
	for (k = 0; k < res->n_cigar; k++) {
		unsigned op = res->cigar[k] & 15u;
		l = res->cigar[k] >> 4;
		if (op == SP_CIGAR_I) {
			i += l;
			edits += l;
			continue;
		}
		if (op == SP_CIGAR_D) {
			if (num != 0 || *p != '^') {
				snprintf(why, len, "deletion without ^ at '%.40s'", p);
				return 0;
			}
			p++;
			for (x = 0; x < l; x++) {
				if (*p < 'A' || *p > 'Z') {
					snprintf(why, len, "short deletion at '%.40s'", p);
					return 0;
				}
				ref[o++] = *p++;
				edits++;
			}
			MD_NUM();
			continue;
		}
		for (x = 0; x < l; x++) {
			if (!have_num || num == 0) {
				if (*p < 'A' || *p > 'Z') {
					snprintf(why, len, "no base at '%.40s'", p);
					return 0;
				}
				ref[o++] = *p++;
				edits++;
				i++;
				MD_NUM();
			} else {
				ref[o++] = (char)toupper(r[i++]);
				num--;
			}
		}
	}
	if (*p || num != 0) {
		snprintf(why, len, "MD left over '%.40s' (%u)", p, num);
		return 0;
	}
	for (x = 0; x < o; x++) {
		int want = code(t[res->start + x]) > 3 ? 'N' : toupper(t[res->start + x]);
		if (ref[x] != want) {
			snprintf(why, len, "rebuilt reference differs at %u: %c, window %c", x, ref[x], want);
			return 0;
		}
	}
	if (o != res->end - res->start + 1 || edits != (unsigned)res->dist) {
		snprintf(why, len, "%u reference bases, %u edits", o, edits);
		return 0;
	}
	return 1;
#undef MD_NUM
}

/* --- random pairs ---------------------------------------------------------- */

static void rand_seq(uint8_t *s, int n, const char *alpha)
{
	int i, k = (int)strlen(alpha);

	for (i = 0; i < n; i++)
		s[i] = (uint8_t)alpha[rng() % (uint64_t)k];
}

/* A random alphabet: mostly ACGT, sometimes 2 letters (many ties), sometimes N and lower case. */
static const char *rand_alpha(void)
{
	static const char *alphas[] = { "ACGT", "ACGT", "ACGT", "AC", "ACGTN", "acgtACGT", "ACGTACGTACGTN" };
	return alphas[rng() % (sizeof alphas / sizeof alphas[0])];
}

/*
 * Whether rand_pair plants up to 3A+3 edits: reads that mostly miss the
 * bound after a part of the window, where the alignment stops early.
 */
static int many_edits;

/*
 * Fill R (length *M) and T (length *N) with a random case: a window made
 * from the read with up to A+2 edits and random flanks, or a random window.
 */
static void rand_pair(uint8_t *r, int *m, uint8_t *t, int *n, int a, int max_m)
{
	const char *alpha = rand_alpha();
	int kind = (int)(rng() % 4), i, j, e, ne, fl, fr;

	*m = 1 + (int)(rng() % (uint64_t)max_m);
	rand_seq(r, *m, alpha);
	if (kind == 0) {   /* random window of the usual length */
		*n = *m + 2 * a;
		rand_seq(t, *n, alpha);
		return;
	}
	if (kind == 1) {   /* random window of any length */
		*n = (int)(rng() % (uint64_t)(*m + 2 * a + 10));
		rand_seq(t, *n, alpha);
		return;
	}
	/* read with edits (0..A+2, or 0..3A+3 with many_edits), flanks 0..A+2 either side */
	fl = (int)(rng() % (uint64_t)(a + 3));
	fr = (int)(rng() % (uint64_t)(a + 3));
	rand_seq(t, fl, alpha);
	j = fl;
	ne = (int)(rng() % (uint64_t)(many_edits ? 3 * a + 4 : a + 3));
	for (i = 0; i < *m; i++) {
		e = ne > 0 && rng() % (uint64_t)(*m) < (uint64_t)ne;
		if (!e) {
			t[j++] = r[i];
			continue;
		}
		ne--;
		switch (rng() % 3) {
		case 0:   /* substitution */
			t[j++] = (uint8_t)"ACGT"[rng() % 4];
			break;
		case 1:   /* deletion from the reference's view: read base skipped */
			break;
		default:  /* insertion of a reference base */
			t[j++] = (uint8_t)"ACGT"[rng() % 4];
			t[j++] = r[i];
			break;
		}
	}
	rand_seq(t + j, fr, alpha);
	*n = j + fr;
}

static int rand_a(void)
{
	return rng() % 8 == 0 ? (int)(rng() % (ALIGN_MAX_A + 1)) : (int)(rng() % 9);
}

/* --- tests ------------------------------------------------------------------- */


static void test_oracle(int n_pairs, int max_m, const char *what)
{
	uint8_t r[BUF], t[BUF], ends[BUF], oends[BUF];
	uint64_t *ws = sp_malloc(align_ws_words(BUF, ALIGN_MAX_READ) * sizeof *ws);
	align_res_t got, want, dist_only;
	int p, m, n, a, bad_dist = 0, bad_rec = 0, bad_cigar = 0, bad_ends = 0, bad_nocigar = 0, hits = 0;
	int bad_ham = 0, ham_hits = 0, bad_packed = 0, bad_md = 0, bad_range = 0, range_hits = 0;
	char md[BUF_MD];
	uint8_t pk[BUF / 4 + 8], ta[BUF], e2[BUF];
	align_res_t r2;
	char why[256];

	for (p = 0; p < n_pairs; p++) {
		a = rand_a();
		rand_pair(r, &m, t, &n, a, max_m);
		align_one(r, (uint32_t)m, t, 0, (uint32_t)n, (unsigned)a, ALIGN_ENDS, 0, 0, ws, ends, &got);
		oracle_align(r, m, t, n, a, 0, 0, 0, &want, oends);
		if (got.dist != want.dist || got.end != want.end) {
			if (bad_dist++ < 5)
				tap_diag("pair %d m=%d n=%d A=%d: dist %d end %u, oracle %d end %u", p, m, n,
						a, got.dist, got.end, want.dist, want.end);
		} else if (memcmp(&got, &want, sizeof got)) {
			if (bad_rec++ < 5) {
				char c1[512], c2[512];
				tap_diag("pair %d m=%d n=%d A=%d: %u %s, oracle %u %s", p, m, n, a, got.start,
						align_cigar_str(&got, c1, sizeof c1), want.start,
						align_cigar_str(&want, c2, sizeof c2));
			}
		}
		if (memcmp(ends, oends, (size_t)n) && bad_ends++ < 5)
			tap_diag("pair %d: ends differ", p);
		if (got.dist >= 0) {
			hits++;
			if (!cigar_valid(&got, r, m, t, n, a, why, sizeof why) && bad_cigar++ < 5)
				tap_diag("pair %d m=%d n=%d A=%d: invalid CIGAR: %s", p, m, n, a, why);
			if ((align_md_str(&got, r, t, 0, 0, md, sizeof md) >= sizeof md
					|| !md_valid(&got, r, t, md, why, sizeof why)) && bad_md++ < 5)
				tap_diag("pair %d m=%d n=%d A=%d: MD %s: %s", p, m, n, a, md, why);
		}
		align_one(r, (uint32_t)m, t, 0, (uint32_t)n, (unsigned)a, ALIGN_NOCIGAR, 0, 0, NULL, NULL,
				&dist_only);
		oracle_align(r, m, t, n, a, ALIGN_NOCIGAR, 0, 0, &want, NULL);
		if (memcmp(&dist_only, &want, sizeof want))
			bad_nocigar++;

		/* --no-gaps on the same pair */
		align_one(r, (uint32_t)m, t, 0, (uint32_t)n, (unsigned)a, ALIGN_NOGAPS | ALIGN_ENDS, 0, 0, ws,
				ends, &got);
		oracle_hamming(r, m, t, n, a, 0, 0, 0, &want, oends);
		if (got.dist >= 0)
			ham_hits++;
		if ((memcmp(&got, &want, sizeof got) || memcmp(ends, oends, (size_t)n)) && bad_ham++ < 5)
			tap_diag("pair %d m=%d n=%d A=%d: no-gaps dist %d start %u, oracle %d start %u", p,
					m, n, a, got.dist, got.start, want.dist, want.start);

		/* packed windows (N as A) at any offset in a byte, all modes (extend's first pass too) */
		{
			int sh = (int)(rng() % 13);
			unsigned fl = rng() % 3 == 0 ? ALIGN_NOGAPS : (rng() & 1) ? ALIGN_NOCIGAR : 0;
			n_to_a(ta, t, n);
			naive_pack(pk, sizeof pk, ta, n, sh);
			align_one(r, (uint32_t)m, pk, (uint64_t)sh, (uint32_t)n, (unsigned)a,
					fl | ALIGN_PACKED | ALIGN_ENDS, 0, 0, ws, e2, &r2);
			align_one(r, (uint32_t)m, ta, 0, (uint32_t)n, (unsigned)a, fl | ALIGN_ENDS, 0, 0, ws, ends,
					&got);
			if (fl & ALIGN_NOGAPS)
				oracle_hamming(r, m, ta, n, a, 0, 0, 0, &want, oends);
			else
				oracle_align(r, m, ta, n, a, fl, 0, 0, &want, oends);
			if ((memcmp(&r2, &got, sizeof got) || memcmp(&got, &want, sizeof got)
					|| memcmp(e2, oends, (size_t)n)) && bad_packed++ < 5)
				tap_diag("pair %d m=%d n=%d A=%d shift %d: packed dist %d, ASCII %d, oracle %d",
						p, m, n, a, sh, r2.dist, got.dist, want.dist);
		}

		/* the best end within a random range of window offsets */
		if (n > 1) {
			int lo = (int)(rng() % (uint64_t)n), hi = lo + (int)(rng() % (uint64_t)(n - lo));
			unsigned fl = (rng() & 1) ? ALIGN_NOGAPS : 0;
			if (hi == 0)
				hi = 1;
			align_one(r, (uint32_t)m, t, 0, (uint32_t)n, (unsigned)a, fl, (uint32_t)lo,
					(uint32_t)hi, ws, NULL, &got);
			if (fl)
				oracle_hamming(r, m, t, n, a, 0, lo, hi, &want, NULL);
			else
				oracle_align(r, m, t, n, a, 0, lo, hi, &want, NULL);
			if (memcmp(&got, &want, sizeof got) && bad_range++ < 5)
				tap_diag("pair %d m=%d n=%d A=%d ends %d..%d: dist %d %u-%u n_ends %u,"
						" oracle %d %u-%u n_ends %u", p, m, n, a, lo, hi, got.dist, got.start,
						got.end, got.n_ends, want.dist, want.start, want.end, want.n_ends);
			if (got.dist >= 0)
				range_hits++;
		}
	}
	tap_ok(bad_dist == 0, "%s: distance and end equal the DP oracle (%d pairs, %d hits)", what,
			n_pairs, hits);
	tap_ok(bad_rec == 0, "%s: start and CIGAR equal the oracle's traceback (M > I > D)", what);
	tap_ok(bad_cigar == 0, "%s: every CIGAR consumes the read and END-START+1 bases at cost dist",
			what);
	tap_ok(bad_ends == 0, "%s: every end position within A equals the oracle's", what);
	tap_ok(bad_nocigar == 0, "%s: distance-only mode agrees", what);
	tap_ok(bad_md == 0, "%s: MD tags rebuild the window from the read and CIGAR", what);
	tap_ok(bad_ham == 0, "%s: --no-gaps equals the Hamming oracle (%d hits)", what, ham_hits);
	tap_ok(bad_packed == 0, "%s: 2-bit packed windows at any bit offset equal the oracle", what);
	tap_ok(bad_range == 0, "%s: the best end within END_LO..END_HI equals the oracle's (%d hits)",
			what, range_hits);
	free(ws);
}

static void test_cases(void)
{
	static const struct {
		const char *r, *t;
		int a;
		unsigned flags;
		int dist;
		unsigned start, end;
		const char *cigar, *md;
	} cases[] = {
		{ "ACGT", "TTACGTTT", 0, 0, 0, 2, 5, "4M", "4" },
		{ "ACGT", "ACGAACGT", 1, 0, 0, 4, 7, "4M", "4" },       /* best beats leftmost 1 */
		{ "ACGT", "ACTT", 1, 0, 1, 0, 2, "2M1I1M", "3" },       /* leftmost end */
		{ "ACGTACGT", "ACGTCGT", 1, 0, 1, 0, 6, "4M1I3M", "7" }, /* read base I */
		{ "ACGTACGT", "ACGTTACGT", 1, 0, 1, 0, 8, "3M1D5M", "3^T5" }, /* D, shifted left */
		{ "ACGT", "GGGG", 2, 0, -1, 0, 0, "*", "*" },
		{ "ACGT", "GGGG", 3, 0, 3, 0, 0, "2I1M1I", "1" },       /* leftmost end, M > I */
		{ "NNNN", "NNNN", 4, 0, 4, 0, 0, "3I1M", "0N0" },       /* N matches nothing */
		{ "A", "", 3, 0, -1, 0, 0, "*", "*" },                  /* empty window */
		{ "ACGTACGT", "ACGTTACGT", 1, ALIGN_NOGAPS, -1, 0, 0, "*", "*" },
		{ "ACGTACGT", "TACGTACGA", 1, ALIGN_NOGAPS, 1, 1, 8, "8M", "7A0" },
		{ "AAAA", "AAAAAAAA", 0, 0, 0, 0, 3, "4M", "4" },       /* leftmost end */
	};
	uint64_t ws[4096];
	align_res_t res;
	char cig[256], md[256];
	size_t i, bad = 0;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		align_one((const uint8_t *)cases[i].r, (uint32_t)strlen(cases[i].r),
				(const uint8_t *)cases[i].t, 0, (uint32_t)strlen(cases[i].t), (unsigned)cases[i].a,
				cases[i].flags, 0, 0, ws, NULL, &res);
		align_cigar_str(&res, cig, sizeof cig);
		align_md_str(&res, (const uint8_t *)cases[i].r, (const uint8_t *)cases[i].t, 0, 0, md,
				sizeof md);
		if (res.dist != cases[i].dist || strcmp(cig, cases[i].cigar) || strcmp(md, cases[i].md)
				|| (res.dist >= 0 && (res.start != cases[i].start || res.end != cases[i].end))) {
			tap_diag("%s vs %s A=%d: dist %d %u-%u %s MD %s, want %d %u-%u %s MD %s", cases[i].r,
					cases[i].t, cases[i].a, res.dist, res.start, res.end, cig, md, cases[i].dist,
					cases[i].start, cases[i].end, cases[i].cigar, cases[i].md);
			bad++;
		}
	}
	tap_ok(bad == 0, "%zu hand-made cases (ties, N, empty window, --no-gaps, MD)", i);
}

static void test_limits(void)
{
	align_pair_t p = { 0, 0, 100, 110, 0, 0 };
	uint8_t r[ALIGN_MAX_READ + 1], t[ALIGN_MAX_WIN + 1];
	uint64_t *ws = sp_malloc(align_ws_words(ALIGN_MAX_WIN + 1, ALIGN_MAX_READ + 1) * sizeof *ws);
	align_res_t res;
	char msg[256], want[64];
	uint32_t m;

	tap_ok(align_check(&p, 1, ALIGN_MAX_A, 0, 0, msg, sizeof msg) == 0, "A = %d is accepted",
			ALIGN_MAX_A);
	tap_ok(align_check(&p, 1, ALIGN_MAX_A + 1, 0, 0, msg, sizeof msg) < 0
			&& strstr(msg, "at most 15"), "A = 16 is refused (%s)", msg);
	p.read_len = ALIGN_MAX_READ + 1;
	snprintf(want, sizeof want, "%d bases", ALIGN_MAX_READ + 1);
	tap_ok(align_check(&p, 1, 5, 0, 0, msg, sizeof msg) < 0 && strstr(msg, want),
			"a read of %d bases is refused (%s)", ALIGN_MAX_READ + 1, msg);
	p.read_len = 0;
	tap_ok(align_check(&p, 1, 5, 0, 0, msg, sizeof msg) < 0, "an empty read is refused (%s)", msg);
	p.read_len = 10;
	p.win_len = ALIGN_MAX_WIN + 1;
	snprintf(want, sizeof want, "%d bases", ALIGN_MAX_WIN + 1);
	tap_ok(align_check(&p, 1, 5, 0, 0, msg, sizeof msg) < 0 && strstr(msg, want),
			"a window of %d bases is refused (%s)", ALIGN_MAX_WIN + 1, msg);
	p.win_len = 50;
	tap_ok(align_check(&p, 1, 5, ALIGN_ENDS, 49, msg, sizeof msg) < 0
			&& align_check(&p, 1, 5, ALIGN_ENDS, 50, msg, sizeof msg) == 0,
			"the ends stride must hold the window");
	tap_ok(align_batch(r, t, &p, 1, 16, 0, 1, NULL, 0, &res, msg, sizeof msg) < 0,
			"align_batch refuses a batch beyond the limits");
	tap_ok(align_batch(r, t, &p, 1, 5, ALIGN_ENDS, 1, NULL, 100, &res, msg, sizeof msg) < 0
			&& strstr(msg, "without a buffer"), "align_batch: ends without a buffer refused (%s)", msg);
	rand_seq(r, ALIGN_MAX_READ + 1, "ACGT");
	rand_seq(t, ALIGN_MAX_WIN + 1, "ACGT");
	memcpy(t + 100, r, ALIGN_MAX_READ);
	align_one(r, ALIGN_MAX_READ + 1, t, 0, 300, 5, 0, 0, 0, ws, NULL, &res);
	tap_ok(res.dist == ALIGN_INVALID, "align_one: a read of %d bases gives ALIGN_INVALID",
			ALIGN_MAX_READ + 1);
	for (m = 256; m <= ALIGN_MAX_READ; m += m == 256 ? 1 : ALIGN_MAX_READ - 257) {
		align_one(r, m, t, 0, ALIGN_MAX_READ + 200, 5, 0, 0, 0, ws, NULL, &res);
		tap_ok(res.dist == 0 && res.start == 100 && res.end == 100 + m - 1 && res.n_cigar == 1
				&& res.cigar[0] == (m << 4), "a read of %u bases aligns (%u words)", m,
				(m + 63) / 64);
	}
	free(ws);
}

/* A batch of random pairs in shared buffers. */
typedef struct {
	uint8_t *reads, *wins;
	uint8_t *wins_a, *packed;   /* wins with N as A: ASCII, and 2-bit packed */
	size_t reads_len, wins_len;
	align_pair_t *pairs;
	size_t n;
	int a;
} batch_t;

static void make_batch(batch_t *b, size_t n, int a, int max_m)
{
	size_t k;
	int m, w;

	b->reads = sp_malloc(n * ALIGN_MAX_READ);
	b->wins = sp_malloc(n * BUF);
	b->pairs = sp_malloc(n * sizeof *b->pairs);
	b->reads_len = b->wins_len = 0;
	b->n = n;
	b->a = a;
	for (k = 0; k < n; k++) {
		/* every 7th pair reuses an earlier read, as candidates of one read do */
		if (k % 7 == 6) {
			b->pairs[k] = b->pairs[k - 1];
			b->pairs[k].win_off = b->wins_len;
			memcpy(b->wins + b->wins_len, b->wins + b->pairs[k - 1].win_off, b->pairs[k].win_len);
			b->wins[b->wins_len] = 'A';
			b->wins_len += b->pairs[k].win_len;
			continue;
		}
		rand_pair(b->reads + b->reads_len, &m, b->wins + b->wins_len, &w, a, max_m);
		b->pairs[k].read_off = b->reads_len;
		b->pairs[k].win_off = b->wins_len;
		b->pairs[k].read_len = (uint32_t)m;
		b->pairs[k].win_len = (uint32_t)w;
		b->pairs[k].end_lo = b->pairs[k].end_hi = 0;
		if (k % 3 == 1 && w > 1) {   /* a third: the best end within a range */
			b->pairs[k].end_lo = (uint32_t)(rng() % (uint64_t)w);
			b->pairs[k].end_hi = b->pairs[k].end_lo + 1
				+ (uint32_t)(rng() % (uint64_t)(w - b->pairs[k].end_lo));
		}
		b->reads_len += (size_t)m;
		b->wins_len += (size_t)w;
	}
	b->wins_a = sp_malloc(b->wins_len + 1);
	b->packed = sp_malloc(b->wins_len / 4 + 1);
	n_to_a(b->wins_a, b->wins, (int)b->wins_len);
	naive_pack(b->packed, b->wins_len / 4 + 1, b->wins_a, (int)b->wins_len, 0);
}

/* The windows for FLAGS: packed with ALIGN_PACKED, else ASCII (N as A with N_AS_A). */
static const uint8_t *wins_for(const batch_t *b, unsigned flags, int n_as_a, size_t *len)
{
	if (flags & ALIGN_PACKED) {
		*len = b->wins_len / 4 + 1;
		return b->packed;
	}
	*len = b->wins_len;
	return n_as_a ? b->wins_a : b->wins;
}

static void free_batch(batch_t *b)
{
	free(b->reads);
	free(b->wins);
	free(b->wins_a);
	free(b->packed);
	free(b->pairs);
}

static void test_threads(const batch_t *b)
{
	static const unsigned flag_sets[] = { 0, ALIGN_ENDS, ALIGN_NOGAPS | ALIGN_ENDS, ALIGN_NOCIGAR,
		ALIGN_PACKED | ALIGN_ENDS, ALIGN_PACKED | ALIGN_NOGAPS,
		ALIGN_PACKED | ALIGN_NOCIGAR | ALIGN_ENDS };
	size_t stride = BUF, n = b->n, k, fi, bad_t = 0, bad_one = 0, bad_packed = 0, wl;
	align_res_t *r1 = sp_malloc(n * sizeof *r1), *r2 = sp_malloc(n * sizeof *r2), one;
	uint8_t *e1 = sp_calloc(n, stride), *e2 = sp_calloc(n, stride);
	uint64_t *ws = sp_malloc(align_ws_words(BUF, ALIGN_MAX_READ) * sizeof *ws);
	const uint8_t *wins;
	char msg[256];
	int t;

	for (fi = 0; fi < sizeof flag_sets / sizeof flag_sets[0]; fi++) {
		unsigned fl = flag_sets[fi];
		wins = wins_for(b, fl, 0, &wl);
		memset(r1, 0xA5, n * sizeof *r1);
		if (align_batch(b->reads, wins, b->pairs, n, (unsigned)b->a, fl, 1, e1, stride, r1,
				msg, sizeof msg) < 0)
			tap_diag("align_batch: %s", msg);
		for (k = 0; k < n; k++) {
			const align_pair_t *p = &b->pairs[k];
			align_one(b->reads + p->read_off, p->read_len, wins, p->win_off, p->win_len,
					(unsigned)b->a, fl, p->end_lo, p->end_hi, ws, e2, &one);
			if (memcmp(&one, &r1[k], sizeof one)
					|| ((fl & ALIGN_ENDS) && memcmp(e2, e1 + k * stride, p->win_len)))
				bad_one++;
		}
		for (t = 2; t <= 5; t += 3) {
			memset(r2, 0x5A, n * sizeof *r2);
			memset(e2, 0, n * stride);
			align_batch(b->reads, wins, b->pairs, n, (unsigned)b->a, fl, t, e2, stride, r2,
					msg, sizeof msg);
			if (memcmp(r1, r2, n * sizeof *r1) || ((fl & ALIGN_ENDS) && memcmp(e1, e2, n * stride)))
				bad_t++;
		}
		if (fl & ALIGN_PACKED) {   /* the same as ASCII windows with N as A */
			align_batch(b->reads, b->wins_a, b->pairs, n, (unsigned)b->a, fl & ~ALIGN_PACKED, 2,
					e2, stride, r2, msg, sizeof msg);
			if (memcmp(r1, r2, n * sizeof *r1) || ((fl & ALIGN_ENDS) && memcmp(e1, e2, n * stride)))
				bad_packed++;
		}
	}
	tap_ok(bad_one == 0, "align_batch equals align_one pair by pair (%zu pairs, %zu flag sets)", n,
			fi);
	tap_ok(bad_t == 0, "align_batch: results independent of -t (1, 2, 5 threads)");
	tap_ok(bad_packed == 0, "align_batch: packed windows give the results of ASCII ones");
	free(r1);
	free(r2);
	free(e1);
	free(e2);
	free(ws);
}

static ocl_ctx_t *open_test_device(void)
{
	static const char *const specs[] = { "gpu", "cpu", "0:0" };

	return tu_open_device(specs, sizeof specs / sizeof specs[0], 0);
}

static void test_ocl(const batch_t *b)
{
	static const unsigned flag_sets[] = { 0, ALIGN_ENDS, ALIGN_NOGAPS | ALIGN_ENDS, ALIGN_NOCIGAR,
		ALIGN_NOGAPS, ALIGN_PACKED | ALIGN_ENDS, ALIGN_PACKED | ALIGN_NOGAPS,
		ALIGN_PACKED | ALIGN_NOCIGAR | ALIGN_ENDS };
	size_t stride = BUF, n = b->n, fi, wl;
	const uint8_t *wins;
	align_res_t *r1 = sp_malloc(n * sizeof *r1), *r2 = sp_malloc(n * sizeof *r2);
	uint8_t *e1 = sp_calloc(n, stride), *e2 = sp_calloc(n, stride);
	ocl_ctx_t *c = open_test_device();
	char msg[256];
	cl_int err;

	if (!c) {
		tap_skip("no OpenCL device: device tests");
		goto out;
	}
	tap_diag("device: %s", c->name);
	for (fi = 0; fi < sizeof flag_sets / sizeof flag_sets[0]; fi++) {
		unsigned fl = flag_sets[fi];
		wins = wins_for(b, fl, 0, &wl);
		align_batch(b->reads, wins, b->pairs, n, (unsigned)b->a, fl, 2, e1, stride, r1, msg,
				sizeof msg);
		memset(r2, 0xA5, n * sizeof *r2);
		memset(e2, 0x11, n * stride);
		err = align_batch_ocl(c, b->reads, b->reads_len, wins, wl, b->pairs, n,
				(unsigned)b->a, fl, e2, stride, r2, msg, sizeof msg);
		if (err != CL_SUCCESS)
			tap_diag("align_batch_ocl: %s", msg);
		tap_ok(err == CL_SUCCESS && !memcmp(r1, r2, n * sizeof *r1)
				&& (!(fl & ALIGN_ENDS) || !memcmp(e1, e2, n * stride)),
				"OpenCL results byte-identical to the CPU (%zu pairs, A=%d, flags %u)", n, b->a, fl);
	}
	err = align_batch_ocl(c, b->reads, b->reads_len, b->wins, b->wins_len, b->pairs, n,
			ALIGN_MAX_A + 1, 0, NULL, 0, r2, msg, sizeof msg);
	tap_ok(err == CL_INVALID_VALUE && strstr(msg, "at most 15"), "OpenCL: A = 16 refused (%s)", msg);
	err = align_batch_ocl(c, b->reads, b->reads_len, b->packed, b->wins_len / 4 - 1, b->pairs, n,
			(unsigned)b->a, ALIGN_PACKED, NULL, 0, r2, msg, sizeof msg);
	tap_ok(err == CL_INVALID_VALUE && strstr(msg, "outside"),
			"OpenCL: a window past the end of its buffer is refused (%s)", msg);
	ocl_close(c);

	/* a tiny device: the workspace is split over many kernel runs (4 MiB:
	 * the workspace of one pair of a 2048-base read is about 2 MiB) */
	setenv("SEEDPIPE_DEVICE_MEM", "4M", 1);
	c = open_test_device();
	unsetenv("SEEDPIPE_DEVICE_MEM");
	if (c) {
		align_batch(b->reads, b->wins, b->pairs, n, (unsigned)b->a, 0, 1, NULL, 0, r1, msg,
				sizeof msg);
		memset(r2, 0, n * sizeof *r2);
		err = align_batch_ocl(c, b->reads, b->reads_len, b->wins, b->wins_len, b->pairs, n,
				(unsigned)b->a, 0, NULL, 0, r2, msg, sizeof msg);
		tap_ok(err == CL_SUCCESS && !memcmp(r1, r2, n * sizeof *r1),
				"OpenCL with 4 MiB of device memory: many runs, same results");
		ocl_close(c);
	}
out:
	free(r1);
	free(r2);
	free(e1);
	free(e2);
}

/* align_md_str as first written (snprintf per item): the reference for the faster one. */
static size_t md_plain(const align_res_t *res, const uint8_t *read, const uint8_t *win,
		unsigned packed, char *buf, size_t len)
{
	static const char bases[] = "ACGTN";
	unsigned op, l, k, run = 0;
	uint64_t j = res->dist >= 0 ? res->start : 0;
	size_t o = 0, i = 0;
	int r;

#define MD_PUT(...) do { \
		r = snprintf(o < len ? buf + o : NULL, o < len ? len - o : 0, __VA_ARGS__); \
		o += (size_t)(r > 0 ? r : 0); \
	} while (0)
	if (res->dist < 0 || res->n_cigar == 0) {
		MD_PUT("*");
		return o;
	}
	for (k = 0; k < res->n_cigar && k < ALIGN_MAX_CIGAR; k++) {
		op = res->cigar[k] & 15u;
		l = res->cigar[k] >> 4;
		if (op == SP_CIGAR_I) {
			i += l;
		} else if (op == SP_CIGAR_D) {
			MD_PUT("%u^", run);
			for (; l > 0; l--)
				MD_PUT("%c", bases[sp_align_wcode(win, j++, packed)]);
			run = 0;
		} else {
			for (; l > 0; l--, i++, j++) {
				unsigned c = sp_align_wcode(win, j, packed);
				if (c < 4 && c == sp_align_code(read[i])) {
					run++;
				} else {
					MD_PUT("%u%c", run, bases[c]);
					run = 0;
				}
			}
		}
	}
	MD_PUT("%u", run);
#undef MD_PUT
	return o;
}

/*
 * align_md_str against md_plain: long matching runs broken by N, lower
 * case, junk bytes and mismatches, on the read and the window, and every
 * buffer length from 0 to past the need (truncation as snprintf's).
 */
static void test_md_fast(void)
{
	static const char junk[] = "ACGTacgtNnX*.\001\377";
	uint8_t r[ALIGN_MAX_READ], t[ALIGN_MAX_WIN];
	char want[BUF_MD], got[BUF_MD];
	int p, bad = 0, n_long = 0;
	uint64_t *ws = sp_malloc(align_ws_words(256 + 10, 256) * sizeof *ws);

	for (p = 0; p < 3000; p++) {
		uint32_t m = 1 + (uint32_t)(rng() % 256), n = m + 10, i, a = 8;
		size_t lw, lg, len;
		align_res_t res;

		for (i = 0; i < n; i++)
			t[i] = rng() % 30 ? "ACGT"[rng() % 4] : (uint8_t)junk[rng() % (sizeof junk - 1)];
		for (i = 0; i < m; i++) {
			r[i] = t[5 + i];
			if (rng() % 40 == 0)
				r[i] = (uint8_t)junk[rng() % (sizeof junk - 1)];
			else if (rng() % 20 == 0)
				r[i] = (uint8_t)tolower(r[i]);
		}
		align_one(r, m, t, 0, n, a, 0, 0, 0, ws, NULL, &res);
		if (res.dist < 0)
			continue;
		n_long += res.dist < 3 && m > 100;
		lw = md_plain(&res, r, t, 0, want, sizeof want);
		for (len = 0; len <= lw + 2 && len <= sizeof got; len += (len < 20 || len + 20 > lw) ? 1 : 7) {
			memset(got, 'z', sizeof got);
			memset(want, 'z', sizeof want);
			md_plain(&res, r, t, 0, want, len);
			lg = align_md_str(&res, r, t, 0, 0, got, len);
			if ((lg != lw || memcmp(got, want, len)) && bad++ < 3)
				tap_diag("pair %d m=%u len %zu: MD %zu bytes, want %zu", p, m, len, lg, lw);
		}
	}
	free(ws);
	tap_ok(bad == 0 && n_long > 50, "MD text equals the plain snprintf version, cut or not (%d long)",
			n_long);
}

int main(int argc, char **argv)
{
	batch_t b;

	sp_set_progname(argv[0]);
	if (argc == 3) {
		rng_state = strtoull(argv[2], NULL, 10) * 2654435761u + 1;
		test_oracle(atoi(argv[1]), 200, "random");
		return tap_done();
	}
	tap_ok(sizeof(align_res_t) == 144 && sizeof(align_pair_t) == 32, "record sizes 144 and 32");
	test_cases();
	test_md_fast();
	test_limits();
	test_oracle(6000, 200, "reads of 1..200");
	test_oracle(600, 256, "reads of 1..256");
	test_oracle(150, ALIGN_MAX_READ, "reads of 1..1024");
	test_oracle(3000, 20, "reads of 1..20");
	many_edits = 1;
	test_oracle(4000, 200, "reads of 1..200 with up to 3A+3 edits (early stop)");
	test_oracle(300, 700, "reads of 1..700 with up to 3A+3 edits (early stop)");
	many_edits = 0;
	make_batch(&b, 3000, 5, 200);
	test_threads(&b);
	test_ocl(&b);
	free_batch(&b);
	many_edits = 1;   /* most pairs stop early */
	make_batch(&b, 1500, 12, 200);
	test_threads(&b);
	test_ocl(&b);
	free_batch(&b);
	many_edits = 0;
	make_batch(&b, 300, 9, ALIGN_MAX_READ);   /* long reads: the 16-word program */
	test_threads(&b);
	test_ocl(&b);
	free_batch(&b);
	return tap_done();
}
