/*
 * rec_cands.c - fuzz target: record streams decoded as candidates
 * (rec_stream.h).  The checked decoder (rec_cands_decode, then
 * rec_cands_next) and the lazy one (rec_cands_view, then
 * rec_cands_next_checked) must agree entry by entry; an accepted list,
 * encoded again, decodes to the same list.
 */
#include "rec_stream.h"

static int cand_eq(const rec_cand_t *x, const rec_cand_t *y)
{
	return x->part == y->part && x->seq_id == y->seq_id && x->pos == y->pos
		&& x->support == y->support && x->strand == y->strand;
}

static rec_cand_t *decode_all(const uint8_t *body, uint32_t len, uint32_t *n, int *ok)
{
	rec_cands_t v, w;
	rec_cand_iter_t it, jt;
	rec_cand_t c, d, *out;
	int rc1 = rec_cands_decode(body, len, &v), rc2 = rec_cands_view(body, len, &w), k;
	uint32_t i = 0;

	*ok = 0;
	if (rc2 != 0) {
		if (rc1 == 0)
			fuzz_fail("cands: the view refuses what decode accepts");
		return NULL;
	}
	rec_cands_first(&w, &jt);
	out = malloc(((size_t)w.n + 1) * sizeof *out);
	while ((k = rec_cands_next_checked(&jt, &d)) > 0)
		out[i++] = d;
	if ((k == 0) != (rc1 == 0))
		fuzz_fail("cands: decode says %d, the checked iteration %d", rc1, k);
	if (rc1 != 0) {
		free(out);
		return NULL;
	}
	if (i != v.n)
		fuzz_fail("cands: %u entries for a count of %u", i, v.n);
	rec_cands_first(&v, &it);
	for (i = 0; rec_cands_next(&it, &c); i++)
		if (i >= v.n || !cand_eq(&c, &out[i]))
			fuzz_fail("cands: the two decoders disagree at entry %u", i);
	*n = v.n;
	*ok = 1;
	return out;
}

static void check_record(const uint8_t *body, uint32_t len)
{
	rec_cands_t v;
	rec_cand_t *a, *b;
	uint32_t n, m;
	int ok;
	uint8_t *re;
	size_t sz, k;

	a = decode_all(body, len, &n, &ok);
	if (!ok)
		return;
	for (k = 0; k < n; k++)
		a[k].strand &= 1;
	rec_cands_decode(body, len, &v);
	sz = rec_cands_size(&v.read, n) + 8;   /* put_var32 stores 8 bytes */
	re = malloc(sz);
	sz = rec_cands_encode(re, &v.read, a, n);
	b = decode_all(re, (uint32_t)sz, &m, &ok);
	if (!ok || m != n)
		fuzz_fail("cands: an encoded list decodes to another");
	for (k = 0; k < n; k++)
		if (!cand_eq(&a[k], &b[k]))
			fuzz_fail("cands: an encoded list decodes to another (entry %zu)", k);
	free(a);
	free(b);
	free(re);
	if (rec_tsv_record(REC_KIND_CANDIDATES, body, len, fuzz_null) != 0)
		fuzz_fail("cands: a decoded body does not print");
}
