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

static GA_TGT void GA_FN(ga_lin)(const galign_scores_t *sc, const uint8_t *q, uint32_t m,
		const uint8_t *const *t, const uint32_t *n, int nt, ga_scratch_t *s, int32_t *out)
{
	enum { L = GA_VB, K = GA_K };
	uint32_t nmax = 0, ncol, i, j0, k;
	int l;
	size_t off_e, off_p, off_f, tot;
	uint8_t *base, *tt, *ev, *prof, *fl;
	int64_t acc[GA_VB];
	int sm = sc->match - 2 * sc->gap, sx = sc->mismatch - 2 * sc->gap;
	ga_v vsm, vsx;

	for (l = 0; l < nt; l++)
		if (n[l] > nmax)
			nmax = n[l];
	ncol = (nmax + K - 1) / K * K;
	off_e = (size_t)ncol * L;
	off_p = off_e + (size_t)m * L;
	off_f = off_p + (size_t)5 * K * L;
	tot = off_f + (size_t)K * L;
	base = ga_scratch(s, tot);
	tt = base;
	ev = base + off_e;
	prof = base + off_p;
	fl = base + off_f;
	memset(tt, 5, off_e);
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
		V_ST(fl + 0 * L, f0);
		V_ST(fl + 1 * L, f1);
		V_ST(fl + 2 * L, f2);
		V_ST(fl + 3 * L, f3);
		V_ST(fl + 4 * L, f4);
		V_ST(fl + 5 * L, f5);
		V_ST(fl + 6 * L, f6);
		V_ST(fl + 7 * L, f7);
		for (k = 0; k < K; k++)
			for (l = 0; l < nt; l++)
				if (j0 + k < n[l])
					acc[l] += fl[(size_t)k * L + l];
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
	uint32_t nmax = 0, mmax = 0, ncol, i, j0, k;
	int l;
	size_t off_q, off_p, off_e, off_f, tot;
	uint8_t *base, *tt, *qq, *pm, *ev, *fl;
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
	off_q = (size_t)ncol * L;
	off_p = off_q + (size_t)mmax * L;
	off_e = off_p + (size_t)mmax * L;
	off_f = off_e + (size_t)mmax * L;
	tot = off_f + (size_t)K * L;
	base = ga_scratch(s, tot);
	tt = base;
	qq = base + off_q;
	pm = base + off_p;
	ev = base + off_e;
	fl = base + off_f;
	/* target codes: N 7 and past the end 5, query N 4: no N matches anything */
	memset(tt, 5, off_q);
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
		V_ST(fl + 0 * L, f0);
		V_ST(fl + 1 * L, f1);
		V_ST(fl + 2 * L, f2);
		V_ST(fl + 3 * L, f3);
		for (k = 0; k < K; k++)
			for (l = 0; l < nt; l++)
				if (j0 + k < n[l])
					acc[l] += fl[(size_t)k * L + l];
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

static GA_TGT void GA_FN(ga_fill)(const galign_scores_t *sc, const uint8_t *const *q,
		const uint32_t *m, const uint8_t *const *t, const uint32_t *n, const int *dlo,
		uint32_t w, int np, ga_scratch_t *s, uint8_t *bits, int32_t *hmn)
{
	enum { L = GA_VB / 4, MB = GA_VB / 32 };   /* lanes, bytes of a mask */
	int ma = sc->edit ? 0 : sc->match, mi = sc->edit ? -1 : sc->mismatch;
	int g = sc->edit ? -1 : sc->gap, l;
	uint32_t mmax = 0, i, k, u, nu;
	int32_t *qq, *tt, *row;
	ga_v vg = V_SET32(g), vma = V_SET32(ma), vmi = V_SET32(mi), vneg = V_SET32(SP_GA_NEG);

	for (l = 0; l < np; l++)
		if (m[l] > mmax)
			mmax = m[l];
	nu = mmax + w + 1;
	qq = ga_scratch(s, ((size_t)mmax + (size_t)nu + w + 1) * L * 4 + 64);
	tt = qq + (size_t)mmax * L;
	row = tt + (size_t)nu * L;
	for (l = 0; l < L; l++) {
		for (i = 0; i < mmax; i++)
			qq[(size_t)i * L + l] = l < np && i < m[l] ? (q[l][i] < 4 ? q[l][i] : 4) : 6;
		for (u = 0; u < nu; u++) {
			int64_t x = l < np ? (int64_t)u + dlo[l] - 1 : -1;
			tt[(size_t)u * L + l] = x >= 0 && x < (int64_t)n[l] ? (t[l][x] < 4 ? t[l][x] : 5) : 7;
		}
		for (k = 0; k <= w; k++) {
			int64_t j = l < np ? (int64_t)dlo[l] + k : -1;
			row[(size_t)k * L + l] = k < w && j >= 0 && j <= (int64_t)n[l] ? g * (int32_t)j : SP_GA_NEG;
		}
	}
	for (l = 0; l < np; l++)
		if (m[l] == 0) {
			int64_t kk = (int64_t)n[l] - dlo[l];
			hmn[l] = kk >= 0 && kk < w ? row[(size_t)kk * L + l] : SP_GA_NEG;
		}
	for (i = 1; i <= mmax; i++) {
		ga_v qv = V_LD(qq + (size_t)(i - 1) * L), left = vneg, diag = V_LD(row);
		uint8_t *b = bits + (size_t)(i - 1) * w * 3 * MB;

		for (k = 0; k < w; k++) {
			ga_v top = V_LD(row + (size_t)(k + 1) * L), tc = V_LD(tt + (size_t)(i + k) * L);
			ga_v a = V_ADD32(diag, V_SEL_EQ32(qv, tc, vma, vmi));
			ga_v v = V_ADD32(top, vg), z = V_ADD32(left, vg);
			ga_v h = V_MAX32(a, V_MAX32(v, z));
			unsigned md = V_EQMASK32(h, a), mv = V_EQMASK32(h, v), mz = V_EQMASK32(h, z);

			GA_PUTMASK(b, md);
			GA_PUTMASK(b + MB, mv);
			GA_PUTMASK(b + 2 * MB, mz);
			b += 3 * MB;
			V_ST(row + (size_t)k * L, h);
			left = h;
			diag = top;
		}
		for (l = 0; l < np; l++)
			if (m[l] == i) {
				int64_t kk = (int64_t)n[l] - (int64_t)m[l] - dlo[l];
				hmn[l] = kk >= 0 && kk < w ? row[(size_t)kk * L + l] : SP_GA_NEG;
			}
	}
}

static GA_TGT void GA_FN(ga_fill16)(const galign_scores_t *sc, const uint8_t *const *q,
		const uint32_t *m, const uint8_t *const *t, const uint32_t *n, const int *dlo,
		uint32_t w, int np, ga_scratch_t *s, uint8_t *bits, int32_t *hmn)
{
	enum { L = GA_VB / 2, MB = 4 };   /* lanes, bytes of a mask */
	int ma = sc->edit ? 0 : sc->match, mi = sc->edit ? -1 : sc->mismatch;
	int g = sc->edit ? -1 : sc->gap, l;
	uint32_t mmax = 0, i, k, u, nu;
	int16_t *qq, *tt, *row;
	ga_v vg = V_SET16(g), vma = V_SET16(ma), vmi = V_SET16(mi), vneg = V_SET16(INT16_MIN);

	for (l = 0; l < np; l++)
		if (m[l] > mmax)
			mmax = m[l];
	nu = mmax + w + 1;
	qq = ga_scratch(s, ((size_t)mmax + (size_t)nu + w + 1) * L * 2 + 64);
	tt = qq + (size_t)mmax * L;
	row = tt + (size_t)nu * L;
	for (l = 0; l < L; l++) {
		for (i = 0; i < mmax; i++)
			qq[(size_t)i * L + l] = (int16_t)(l < np && i < m[l] ? (q[l][i] < 4 ? q[l][i] : 4) : 6);
		for (u = 0; u < nu; u++) {
			int64_t x = l < np ? (int64_t)u + dlo[l] - 1 : -1;
			tt[(size_t)u * L + l] = (int16_t)(x >= 0 && x < (int64_t)n[l] ? (t[l][x] < 4 ? t[l][x] : 5) : 7);
		}
		for (k = 0; k <= w; k++) {
			int64_t j = l < np ? (int64_t)dlo[l] + k : -1;
			row[(size_t)k * L + l] = (int16_t)(k < w && j >= 0 && j <= (int64_t)n[l] ? g * (int32_t)j
					: INT16_MIN);
		}
	}
	for (l = 0; l < np; l++)
		if (m[l] == 0) {
			int64_t kk = (int64_t)n[l] - dlo[l];
			hmn[l] = kk >= 0 && kk < w ? row[(size_t)kk * L + l] : SP_GA_NEG;
		}
	for (i = 1; i <= mmax; i++) {
		ga_v qv = V_LD(qq + (size_t)(i - 1) * L), left = vneg, diag = V_LD(row);
		uint8_t *b = bits + (size_t)(i - 1) * w * 3 * MB;

		for (k = 0; k < w; k++) {
			ga_v top = V_LD(row + (size_t)(k + 1) * L), tc = V_LD(tt + (size_t)(i + k) * L);
			ga_v a = V_ADDS16(diag, V_SEL_EQ16(qv, tc, vma, vmi));
			ga_v v = V_ADDS16(top, vg), z = V_ADDS16(left, vg);
			ga_v h = V_MAX16(a, V_MAX16(v, z));
			uint32_t md = V_EQMASK16(h, a), mv = V_EQMASK16(h, v), mz = V_EQMASK16(h, z);

			memcpy(b, &md, 4);
			memcpy(b + MB, &mv, 4);
			memcpy(b + 2 * MB, &mz, 4);
			b += 3 * MB;
			V_ST(row + (size_t)k * L, h);
			left = h;
			diag = top;
		}
		for (l = 0; l < np; l++)
			if (m[l] == i) {
				int64_t kk = (int64_t)n[l] - (int64_t)m[l] - dlo[l];
				hmn[l] = kk >= 0 && kk < w ? row[(size_t)kk * L + l] : SP_GA_NEG;
			}
	}
}
