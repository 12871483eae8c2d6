/*
 * galign_fill_tpl.h - ga_fill and ga_fill16 of galign_tpl.h (see there),
 * written once over the lane type: included by galign_tpl.h once per lane
 * width, with GF_FN (the name), GF_T (a lane's type), GF_L (lanes), GF_MB
 * (bytes of a mask), GF_NEG (the value left of column 0) and the vector
 * operations GF_SET, GF_ADD, GF_MAX, GF_SEL_EQ, GF_EQMASK, GF_PUTMASK
 * defined; it undefines them.
 */

#define GF_NAME(f) GA_FN(f)   /* GF_FN expanded before GA_FN pastes */

static GA_TGT void GF_NAME(GF_FN)(const galign_scores_t *sc, const uint8_t *const *q,
		const uint32_t *m, const uint8_t *const *t, const uint32_t *n, const int *dlo,
		uint32_t w, int np, ga_scratch_t *s, uint8_t *bits, int32_t *hmn)
{
	enum { L = GF_L, MB = GF_MB };   /* lanes, bytes of a mask */
	int ma = sc->edit ? 0 : sc->match, mi = sc->edit ? -1 : sc->mismatch;
	int g = sc->edit ? -1 : sc->gap, l;
	uint32_t mmax = 0, i, k, u, nu;
	GF_T *qq, *tt, *row;
	ga_v vg = GF_SET(g), vma = GF_SET(ma), vmi = GF_SET(mi), vneg = GF_SET(GF_NEG);

	for (l = 0; l < np; l++)
		if (m[l] > mmax)
			mmax = m[l];
	nu = mmax + w + 1;
	qq = ga_scratch(s, ((size_t)mmax + (size_t)nu + w + 1) * L * sizeof(GF_T) + 64);
	tt = qq + (size_t)mmax * L;
	row = tt + (size_t)nu * L;
	for (l = 0; l < L; l++) {
		for (i = 0; i < mmax; i++)
			qq[(size_t)i * L + l] = (GF_T)(l < np && i < m[l] ? (q[l][i] < 4 ? q[l][i] : 4) : 6);
		for (u = 0; u < nu; u++) {
			int64_t x = l < np ? (int64_t)u + dlo[l] - 1 : -1;
			tt[(size_t)u * L + l] = (GF_T)(x >= 0 && x < (int64_t)n[l] ? (t[l][x] < 4 ? t[l][x] : 5) : 7);
		}
		for (k = 0; k <= w; k++) {
			int64_t j = l < np ? (int64_t)dlo[l] + k : -1;
			row[(size_t)k * L + l] = (GF_T)(k < w && j >= 0 && j <= (int64_t)n[l] ? g * (int32_t)j
					: GF_NEG);
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
			ga_v a = GF_ADD(diag, GF_SEL_EQ(qv, tc, vma, vmi));
			ga_v v = GF_ADD(top, vg), z = GF_ADD(left, vg);
			ga_v h = GF_MAX(a, GF_MAX(v, z));
			uint32_t md = GF_EQMASK(h, a), mv = GF_EQMASK(h, v), mz = GF_EQMASK(h, z);

			GF_PUTMASK(b, md);
			GF_PUTMASK(b + MB, mv);
			GF_PUTMASK(b + 2 * MB, mz);
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

#undef GF_NAME
#undef GF_FN
#undef GF_T
#undef GF_L
#undef GF_MB
#undef GF_NEG
#undef GF_SET
#undef GF_ADD
#undef GF_MAX
#undef GF_SEL_EQ
#undef GF_EQMASK
#undef GF_PUTMASK
