/*
 * galign_tpl.h - the vector kernels of galign_simd.c, written once over the
 * GA_* / V_* macros and included once per instruction set (AVX2, AVX-512).
 * Not a header of its own: galign_simd.c defines the macros first.
 *
 * ga_lin: the linear-gap score pass of inc_galign.h (difference recurrence
 * on bytes) for one query against GA_VB targets, one target a byte lane.
 * The query is the row sequence, shared by the lanes; the targets are the
 * columns, transposed into TT (TT[j][lane], code 5 past a target's end).
 * GA_K columns are done per sweep down the rows, so each row's E vector is
 * loaded and stored once per GA_K columns; the profile of the sweep
 * (S' of each query code against each column's target bases) is built
 * first.  F of the last row, summed over each lane's own columns, gives the
 * score: H[m][n] = (m + n) g + sum_j F(m, j).
 *
 * ga_lin_pairs: the same pass for GA_VB unrelated pairs, each lane its own
 * query (rows) and target (columns), for pairs that share no query (a
 * list): the score of a cell is a compare of the lane's two codes, and the
 * rows past a lane's query pass F down unchanged (H[i][j] = H[i-1][j]), so
 * the last row still holds each lane's F(m, j).  GA_K2 columns a sweep.
 *
 * ga_edit: Myers' bit-vector pass with 64-bit lanes, one target a lane as
 * the pattern (its Peq in the lane), the query as the text (one column a
 * query base, the same for every lane), the top row charged (horizontal
 * input +1 into the first word).  The distance is m plus the vertical
 * deltas of the last column down to each target's last row.
 *
 * ga_fill: the banded fill of inc_galign.h for GA_VB / 4 pairs, 32-bit
 * lanes, each pair's band of W diagonals in its lane.  Cells left of column
 * 0 or right of column n are not masked: those left of column 0 only ever
 * take values far below any real score (their inputs all come from there or
 * from outside the band), so column 0 comes out as i g; those right of
 * column n are never read by a real cell.  The bits go to the lane layout
 * of sp_ga_bits_at(); the walk reads only cells with 1 <= j <= n.
 *
 * ga_fill16: ga_fill with 16-bit lanes (twice the pairs a vector) for groups
 * whose scores fit (galign.c checks): the additions saturate, so what lies
 * left of column 0 sinks to -32768 at worst and stays below every real
 * cell; each mask has 32 bits (2 a lane with AVX2, 1 with AVX-512).
 */

#define GA_K 8

/* Store four F vectors of the last row at columns K .. K + 3 of FL. */
#define GA_ST_F4(fl, k, fa, fb, fc, fd) do { \
	V_ST((fl) + (k) * GA_VB, fa); \
	V_ST((fl) + ((k) + 1) * GA_VB, fb); \
	V_ST((fl) + ((k) + 2) * GA_VB, fc); \
	V_ST((fl) + ((k) + 3) * GA_VB, fd); \
} while (0)

/*
 * Add the KK columns J0 .. of FL (the last row's F, a lane a byte) to each
 * lane's sum ACC, for the columns of the lane's own target (N).
 */
static inline void GA_FN(ga_sum_f)(const uint8_t *fl, uint32_t j0, uint32_t kk,
		const uint32_t *n, int nt, int64_t *acc)
{
	uint32_t k;
	int l;

	for (k = 0; k < kk; k++)
		for (l = 0; l < nt; l++)
			if (j0 + k < n[l])
				acc[l] += fl[(size_t)k * GA_VB + l];
}

static GA_TGT void GA_FN(ga_lin)(const galign_scores_t *sc, const uint8_t *q, uint32_t m,
		const uint8_t *const *t, const uint32_t *n, int nt, ga_scratch_t *s, int32_t *out)
{
	enum { L = GA_VB, K = GA_K };
	uint32_t nmax = 0, ncol, i, j0, k;
	int l;
	size_t len[4];
	uint8_t *part[4], *tt, *ev, *prof, *fl;
	int64_t acc[GA_VB];
	int sm = sc->match - 2 * sc->gap, sx = sc->mismatch - 2 * sc->gap;
	ga_v vsm, vsx;

	for (l = 0; l < nt; l++)
		if (n[l] > nmax)
			nmax = n[l];
	ncol = (nmax + K - 1) / K * K;
	len[0] = (size_t)ncol * L;
	len[1] = (size_t)m * L;
	len[2] = (size_t)5 * K * L;
	len[3] = (size_t)K * L;
	ga_scratch_parts(s, 4, len, part);
	tt = part[0], ev = part[1], prof = part[2], fl = part[3];
	memset(tt, 5, len[0]);
	for (l = 0; l < nt; l++)
		for (i = 0; i < n[l]; i++)
			tt[(size_t)i * L + l] = t[l][i];
	memset(ev, 0, (size_t)m * L);
	memset(acc, 0, sizeof acc);
	vsm = V_SET8(sm);
	vsx = V_SET8(sx > 0 ? sx : 0);
	for (k = 0; k < K; k++)
		V_ST(prof + (size_t)(4 * K + k) * L, vsx);
	for (j0 = 0; j0 < ncol; j0 += K) {
		ga_v f0, f1, f2, f3, f4, f5, f6, f7;

		for (k = 0; k < K; k++) {
			ga_v tv = V_LD(tt + (size_t)(j0 + k) * L);
			int c;

			for (c = 0; c < 4; c++)
				V_ST(prof + (size_t)(c * K + k) * L, V_SEL_EQ8(tv, V_SET8(c), vsm, vsx));
		}
		f0 = f1 = f2 = f3 = f4 = f5 = f6 = f7 = V_ZERO();
		for (i = 0; i < m; i++) {
			const uint8_t *p = prof + (size_t)q[i] * K * L;
			ga_v e = V_LD(ev + (size_t)i * L), z, en;

#define GA_STEP(fk, kk) \
			z = V_MAXU8(V_LD(p + (kk) * L), V_MAXU8(fk, e)); \
			en = V_SUB8(z, fk); \
			fk = V_SUB8(z, e); \
			e = en;
			GA_STEP(f0, 0) GA_STEP(f1, 1) GA_STEP(f2, 2) GA_STEP(f3, 3)
			GA_STEP(f4, 4) GA_STEP(f5, 5) GA_STEP(f6, 6) GA_STEP(f7, 7)
#undef GA_STEP
			V_ST(ev + (size_t)i * L, e);
		}
		GA_ST_F4(fl, 0, f0, f1, f2, f3);
		GA_ST_F4(fl, 4, f4, f5, f6, f7);
		GA_FN(ga_sum_f)(fl, j0, K, n, nt, acc);
	}
	for (l = 0; l < nt; l++)
		out[l] = sc->gap * (int32_t)(m + n[l]) + (int32_t)acc[l];
}

#define GA_K2 4

static GA_TGT void GA_FN(ga_lin_pairs)(const galign_scores_t *sc, const uint8_t *const *q,
		const uint32_t *m, const uint8_t *const *t, const uint32_t *n, int nt, ga_scratch_t *s,
		int32_t *out)
{
	enum { L = GA_VB, K = GA_K2 };
	uint32_t nmax = 0, mmax = 0, ncol, i, j0;
	int l;
	size_t len[5];
	uint8_t *part[5], *tt, *qq, *pm, *ev, *fl;
	int64_t acc[GA_VB];
	int sm = sc->match - 2 * sc->gap, sx = sc->mismatch - 2 * sc->gap;
	ga_v vsm, vsx;

	for (l = 0; l < nt; l++) {
		if (n[l] > nmax)
			nmax = n[l];
		if (m[l] > mmax)
			mmax = m[l];
	}
	ncol = (nmax + K - 1) / K * K;
	len[0] = (size_t)ncol * L;
	len[1] = len[2] = len[3] = (size_t)mmax * L;
	len[4] = (size_t)K * L;
	ga_scratch_parts(s, 5, len, part);
	tt = part[0], qq = part[1], pm = part[2], ev = part[3], fl = part[4];
	/* target codes: N 7 and past the end 5, query N 4: no N matches anything */
	memset(tt, 5, len[0]);
	memset(qq, 6, (size_t)mmax * L);
	memset(pm, 0xff, (size_t)mmax * L);
	for (l = 0; l < nt; l++) {
		for (i = 0; i < n[l]; i++)
			tt[(size_t)i * L + l] = t[l][i] < 4 ? t[l][i] : 7;
		for (i = 0; i < m[l]; i++) {
			qq[(size_t)i * L + l] = q[l][i] < 4 ? q[l][i] : 4;
			pm[(size_t)i * L + l] = 0;
		}
	}
	memset(ev, 0, (size_t)mmax * L);
	memset(acc, 0, sizeof acc);
	vsm = V_SET8(sm);
	vsx = V_SET8(sx > 0 ? sx : 0);
	for (j0 = 0; j0 < ncol; j0 += K) {
		ga_v t0 = V_LD(tt + (size_t)j0 * L), t1 = V_LD(tt + (size_t)(j0 + 1) * L);
		ga_v t2 = V_LD(tt + (size_t)(j0 + 2) * L), t3 = V_LD(tt + (size_t)(j0 + 3) * L);
		ga_v f0 = V_ZERO(), f1 = V_ZERO(), f2 = V_ZERO(), f3 = V_ZERO();

		for (i = 0; i < mmax; i++) {
			ga_v qv = V_LD(qq + (size_t)i * L), pv = V_LD(pm + (size_t)i * L);
			ga_v e = V_LD(ev + (size_t)i * L), z, en;

#define GA_STEP2(fk, tk) \
			z = V_MAXU8(V_SEL_EQ8(qv, tk, vsm, vsx), V_MAXU8(fk, e)); \
			en = V_SUB8(z, fk); \
			fk = V_SELM(pv, fk, V_SUB8(z, e)); \
			e = en;
			GA_STEP2(f0, t0) GA_STEP2(f1, t1) GA_STEP2(f2, t2) GA_STEP2(f3, t3)
#undef GA_STEP2
			V_ST(ev + (size_t)i * L, e);
		}
		GA_ST_F4(fl, 0, f0, f1, f2, f3);
		GA_FN(ga_sum_f)(fl, j0, K, n, nt, acc);
	}
	for (l = 0; l < nt; l++)
		out[l] = sc->gap * (int32_t)(m[l] + n[l]) + (int32_t)acc[l];
}

static GA_TGT void GA_FN(ga_edit)(const uint8_t *q, uint32_t m, const uint8_t *const *t,
		const uint32_t *n, int nt, ga_scratch_t *s, int32_t *out)
{
	enum { L = GA_VB / 8 };
	uint32_t nw = 0, j, w, r;
	int l;
	uint64_t *peq, *pvs, *mvs;
	ga_v ones = V_SET64(-1), one = V_SET64(1);

	for (l = 0; l < nt; l++)
		if ((n[l] + 63) / 64 > nw)
			nw = (n[l] + 63) / 64;
	if (nw == 0) {
		for (l = 0; l < nt; l++)
			out[l] = -(int32_t)m;
		return;
	}
	peq = ga_scratch(s, (size_t)7 * nw * L * 8);
	pvs = peq + (size_t)5 * nw * L;
	mvs = pvs + (size_t)nw * L;
	memset(peq, 0, (size_t)5 * nw * L * 8);
	for (l = 0; l < nt; l++)
		for (r = 0; r < n[l]; r++) {
			uint32_t c = t[l][r];
			if (c < 4)
				peq[((size_t)c * nw + r / 64) * L + l] |= (uint64_t)1 << (r & 63);
		}
	for (w = 0; w < nw; w++) {
		V_ST(pvs + (size_t)w * L, ones);
		V_ST(mvs + (size_t)w * L, V_ZERO());
	}
	for (j = 0; j < m; j++) {
		const uint64_t *pe = peq + (size_t)q[j] * nw * L;
		ga_v hp = one, hm = V_ZERO();

		for (w = 0; w < nw; w++) {
			ga_v eq = V_LD(pe + (size_t)w * L), pv = V_LD(pvs + (size_t)w * L);
			ga_v mv = V_LD(mvs + (size_t)w * L), xv, xh, ph, mh, hpo, hmo;

			xv = V_OR(eq, mv);
			eq = V_OR(eq, hm);
			xh = V_OR(V_XOR(V_ADD64(V_AND(eq, pv), pv), pv), eq);
			ph = V_OR(mv, V_ANDNOT(V_OR(xh, pv), ones));
			mh = V_AND(pv, xh);
			hpo = V_SRL64(ph, 63);
			hmo = V_SRL64(mh, 63);
			ph = V_OR(V_SLL64(ph, 1), hp);
			mh = V_OR(V_SLL64(mh, 1), hm);
			pv = V_OR(mh, V_ANDNOT(V_OR(xv, ph), ones));
			mv = V_AND(ph, xv);
			V_ST(pvs + (size_t)w * L, pv);
			V_ST(mvs + (size_t)w * L, mv);
			hp = hpo;
			hm = hmo;
		}
	}
	for (l = 0; l < nt; l++) {
		int64_t d = m;

		for (w = 0; w < (n[l] + 63) / 64; w++) {
			uint64_t mask = (w + 1) * 64 <= n[l] ? ~(uint64_t)0 : ((uint64_t)1 << (n[l] & 63)) - 1;
			d += __builtin_popcountll(pvs[(size_t)w * L + l] & mask);
			d -= __builtin_popcountll(mvs[(size_t)w * L + l] & mask);
		}
		out[l] = -(int32_t)d;
	}
}

/* ga_fill: 32-bit lanes */
#define GF_FN ga_fill
#define GF_T int32_t
#define GF_L (GA_VB / 4)
#define GF_MB (GA_VB / 32)
#define GF_NEG SP_GA_NEG
#define GF_SET V_SET32
#define GF_ADD V_ADD32
#define GF_MAX V_MAX32
#define GF_SEL_EQ V_SEL_EQ32
#define GF_EQMASK V_EQMASK32
#define GF_PUTMASK GA_PUTMASK
#include "galign_fill_tpl.h"

/* ga_fill16: 16-bit lanes, saturating, a 32-bit mask */
#define GF_FN ga_fill16
#define GF_T int16_t
#define GF_L (GA_VB / 2)
#define GF_MB 4
#define GF_NEG INT16_MIN
#define GF_SET V_SET16
#define GF_ADD V_ADDS16
#define GF_MAX V_MAX16
#define GF_SEL_EQ V_SEL_EQ16
#define GF_EQMASK V_EQMASK16
#define GF_PUTMASK(p, x) do { uint32_t x32_ = (x); memcpy((p), &x32_, 4); } while (0)
#include "galign_fill_tpl.h"
