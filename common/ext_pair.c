/*
 * ext_pair.c - extend's paired-end reads: the insert size (given, or
 * estimated from the pairs whose mates have one best hit each), mate rescue
 * (a mate aligned by the core in the window its mate's hit implies), every
 * concordant pair of a batch's pairs, and the MAPQ of the first one (ext.h).
 *
 * A pair is reads 2k, 2k + 1 of a batch (mate 1 first: ext_run.c keeps
 * pairs whole).  The mates' hits are copied here, with the rescued ones and
 * their MD values, so the batch's own hits stay as ext_batch_run left them.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ext.h"
#include "ext_priv.h"
#include "seqio.h"
#include "util.h"

#define INS_DEFAULT_LO 1
#define INS_DEFAULT_HI 1000
#define INS_OBS_MAX 100000   /* an insert above this is no observation */

struct ext_pairs {
	size_t n_reads;
	size_t *beg;          /* per read: its first hit in hits (n_reads + 1) */
	size_t beg_cap;
	ext_hit_t *hits;
	size_t n_hit, hit_cap;
	char *md;
	size_t md_len, md_cap;
	size_t *cbeg;         /* per read (mate 1): its first concordant pair (n_reads + 1) */
	size_t cbeg_cap;
	ext_conc_t *conc;
	size_t n_conc, conc_cap;
	uint8_t *mq;          /* per read: the mate's MAPQ in the first concordant pair */
	size_t mq_cap;
	uint32_t *shown;      /* per read: its hits written besides its pairs' */
	size_t shown_cap;
	/* scratch: rescue, by mate (0: mate 1) */
	ext_hit_t *res[2];    /* the rescued hits of a pair's mate */
	size_t n_res[2], res_cap[2];
	char *rmd[2];         /* their MD values */
	size_t rmd_len[2], rmd_cap[2];
	char *rread, *rwin;
	uint8_t *rends;
	size_t rread_cap, rwin_cap, rends_cap;
	uint64_t *ws;
	size_t ws_cap;
	uint32_t *ord;        /* a mate's hits by (sequence, strand, position) */
	size_t ord_cap;
	const rec_read_t **rd; /* per read: the read (the source's) */
	size_t rd_cap;
};

/* ---- a batch as the source of pairs ----------------------------------------- */

typedef struct {
	const ext_batch_t *b;
	const idx_t *x;
} bsrc_t;

static const rec_read_t *b_read(const void *c, size_t i)
{
	return ext_batch_read(((const bsrc_t *)c)->b, i);
}

static const ext_hit_t *b_hits(const void *c, size_t i, uint32_t *n)
{
	return ext_batch_hits(((const bsrc_t *)c)->b, i, n);
}

static const char *b_md(const void *c, const ext_hit_t *h)
{
	return ext_hit_md(((const bsrc_t *)c)->b, h);
}

static const idx_t *b_ref(const void *c, uint32_t seq, uint32_t *local)
{
	*local = seq;
	return ((const bsrc_t *)c)->x;
}

static ext_pair_src_t batch_src(const bsrc_t *c)
{
	return (ext_pair_src_t){ .n_reads = ext_batch_reads(c->b), .ctx = c, .read = b_read,
		.hits = b_hits, .md = b_md, .ref = b_ref };
}

/* ---- insert size --------------------------------------------------------- */

int ext_ins_parse(const char *arg, ext_ins_t *ins)
{
	char *e1, *e2;
	double a = strtod(arg, &e1), b;

	if (e1 == arg || *e1 != ',')
		return -1;
	b = strtod(e1 + 1, &e2);
	if (e2 == e1 + 1 || *e2 || !(a >= 0) || !(b >= 0) || a > 1e9 || b > 1e9)
		return -1;
	memset(ins, 0, sizeof *ins);
	if (b < a) {
		double lo = a - 4 * b, hi = a + 4 * b;

		ins->how = EXT_INS_SD;
		ins->mean = a;
		ins->sd = b;
		ins->lo = lo < 1 ? 1 : (uint32_t)floor(lo);
		ins->hi = (uint32_t)ceil(hi);
	} else {
		if (b < 1)
			return -1;
		ins->how = EXT_INS_RANGE;
		ins->lo = a < 1 ? 1 : (uint32_t)a;
		ins->hi = (uint32_t)b;
		ins->mean = (a + b) / 2;
		ins->sd = -1;
	}
	return 0;
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* The hit of read I of S when it is its only one at its least distance, else NULL. */
static const ext_hit_t *unique_hit(const ext_pair_src_t *s, size_t i)
{
	uint32_t n;
	const ext_hit_t *h = s->hits(s->ctx, i, &n);

	return n && (n == 1 || h[1].dist > h[0].dist) ? h : NULL;
}

void ext_ins_estimate(ext_batch_t *const *bb, size_t nb, size_t max_pairs, ext_ins_t *ins)
{
	ext_pair_src_t *s = sp_malloc((nb ? nb : 1) * sizeof *s);
	bsrc_t *c = sp_malloc((nb ? nb : 1) * sizeof *c);
	size_t k;

	for (k = 0; k < nb; k++) {
		c[k] = (bsrc_t){ bb[k], NULL };
		s[k] = batch_src(&c[k]);
	}
	ext_ins_estimate_src(s, nb, max_pairs, ins);
	free(s);
	free(c);
}

void ext_ins_estimate_src(const ext_pair_src_t *ss, size_t nb, size_t max_pairs, ext_ins_t *ins)
{
	uint32_t *v = NULL;
	size_t n = 0, cap = 0, k, i, lo, hi, seen = 0;
	double sum = 0, sq = 0, q1, q3, iqr, mean, sd, elo, ehi;

	for (k = 0; k < nb; k++) {
		const ext_pair_src_t *b = &ss[k];

		for (i = 0; i + 1 < b->n_reads; i++) {
			const ext_hit_t *a, *c, *f, *r;
			uint64_t len;

			if (b->read(b->ctx, i)->mate != 1 || seen++ >= max_pairs)
				continue;
			a = unique_hit(b, i);
			c = unique_hit(b, i + 1);
			if (!a || !c || a->seq != c->seq || a->strand == c->strand)
				continue;
			f = a->strand == REC_STRAND_FWD ? a : c;
			r = f == a ? c : a;
			if (f->pos > r->end || (len = r->end - f->pos + 1) > INS_OBS_MAX)
				continue;
			if (n == cap) {
				cap = cap ? 2 * cap : 1024;
				v = sp_realloc(v, cap * sizeof *v);
			}
			v[n++] = (uint32_t)len;
		}
	}
	memset(ins, 0, sizeof *ins);
	ins->n_obs = n;
	if (n < EXT_INS_MIN_OBS) {
		ins->how = EXT_INS_DEFAULT;
		ins->lo = INS_DEFAULT_LO;
		ins->hi = INS_DEFAULT_HI;
		ins->mean = (INS_DEFAULT_LO + INS_DEFAULT_HI) / 2.0;
		ins->sd = -1;
		free(v);
		return;
	}
	qsort(v, n, sizeof *v, u32_cmp);
	q1 = v[n / 4];
	q3 = v[3 * n / 4];
	iqr = q3 - q1;
	for (i = 0, lo = n, hi = 0; i < n; i++) {
		if (v[i] < q1 - 2 * iqr || v[i] > q3 + 2 * iqr)
			continue;
		sum += v[i];
		sq += (double)v[i] * v[i];
		if (lo == n)
			lo = i;
		hi = i + 1;
	}
	mean = sum / (double)(hi - lo);
	sd = sqrt(fmax(0, sq / (double)(hi - lo) - mean * mean));
	ins->how = EXT_INS_EST;
	ins->mean = mean;
	ins->sd = sd;
	/* the wider of mean -+ 4 SD and the quartiles -+ 3 IQR: from SD alone,
	 * an SD estimated a little low (28.6 for mason's 30) cut true pairs of
	 * a normal library at 3.9 SD; the quartiles add about 0.7 SD each side */
	elo = fmin(mean - 4 * sd, q1 - 3 * iqr);
	ehi = fmax(mean + 4 * sd, q3 + 3 * iqr);
	ins->lo = elo < 1 ? 1 : (uint32_t)floor(elo);
	ins->hi = (uint32_t)ceil(ehi);
	free(v);
}

void ext_ins_describe(const ext_ins_t *ins, char *buf, size_t len)
{
	switch (ins->how) {
	case EXT_INS_SD:
		snprintf(buf, len, "insert size %u..%u (-I mean %.1f, sd %.1f)", ins->lo, ins->hi,
				ins->mean, ins->sd);
		break;
	case EXT_INS_RANGE:
		snprintf(buf, len, "insert size %u..%u (-I)", ins->lo, ins->hi);
		break;
	case EXT_INS_EST:
		snprintf(buf, len, "insert size %u..%u (estimated from %" PRIu64 " pairs of the "
				"first %d: mean %.1f, sd %.1f)", ins->lo, ins->hi, ins->n_obs,
				EXT_INS_PAIRS, ins->mean, ins->sd);
		break;
	default:
		snprintf(buf, len, "insert size %u..%u (too few pairs to estimate it: %" PRIu64
				" of %d; give -I)", ins->lo, ins->hi, ins->n_obs, EXT_INS_MIN_OBS);
	}
}

/* ---- pairs ---------------------------------------------------------------- */

ext_pairs_t *ext_pairs_new(void)
{
	return sp_calloc(1, sizeof(ext_pairs_t));
}

void ext_pairs_free(ext_pairs_t *p)
{
#define P(f) offsetof(ext_pairs_t, f)
	static const size_t own[] = {
		P(beg), P(hits), P(md), P(cbeg), P(conc), P(mq), P(shown), P(res[0]), P(res[1]), P(rmd[0]),
		P(rmd[1]), P(rread), P(rwin), P(rends), P(ws), P(ord), P(rd)
	};
#undef P

	ext_free_owned(p, own, sizeof own / sizeof *own);
}

int64_t ext_tlen(const ext_hit_t *a, const ext_hit_t *b)
{
	int64_t a5, b5;

	if (a->seq != b->seq)
		return 0;
	a5 = a->strand == REC_STRAND_REV ? (int64_t)a->end + 1 : (int64_t)a->pos;
	b5 = b->strand == REC_STRAND_REV ? (int64_t)b->end + 1 : (int64_t)b->pos;
	return b5 - a5;
}

/* Whether hits A and B (of the two mates) are a concordant pair under INS. */
static int concordant(const ext_hit_t *a, const ext_hit_t *b, const ext_ins_t *ins)
{
	const ext_hit_t *f, *r;
	uint64_t len;

	if (a->seq != b->seq || a->strand == b->strand)
		return 0;
	f = a->strand == REC_STRAND_FWD ? a : b;
	r = f == a ? b : a;
	if (f->pos > r->end)
		return 0;
	len = r->end - f->pos + 1;
	return len >= ins->lo && len <= ins->hi;
}

/* Whether a hit of LIST (N) or of mate W's rescued ones lies on S/STRAND with its end in [LO, HI]. */
static int known(const ext_pairs_t *p, int w, const ext_hit_t *list, uint32_t n, uint32_t s,
		uint8_t strand, uint64_t lo, uint64_t hi)
{
	uint32_t k;

	for (k = 0; k < n; k++)
		if (list[k].seq == s && list[k].strand == strand && list[k].end >= lo
				&& list[k].end <= hi)
			return 1;
	for (k = 0; k < p->n_res[w]; k++)
		if (p->res[w][k].seq == s && p->res[w][k].strand == strand && p->res[w][k].end >= lo
				&& p->res[w][k].end <= hi)
			return 1;
	return 0;
}

/* Whether hit A is better than B of the same first base (ext_batch_run's merge). */
static int better(const ext_hit_t *a, const ext_hit_t *b)
{
	if (a->dist != b->dist)
		return a->dist < b->dist;
	if (a->n_cigar != b->n_cigar)
		return a->n_cigar < b->n_cigar;
	return a->end < b->end;
}

/*
 * Loci whose alignments start at the same base are one (as ext_batch_run
 * merges them): 0 when H loses to a hit of LIST (N) or to a rescued hit of
 * mate W of its first base; else 1, after dropping a rescued hit H beats.
 */
static int same_start(ext_pairs_t *p, int w, const ext_hit_t *list, uint32_t n,
		const ext_hit_t *h)
{
	uint32_t k;

	for (k = 0; k < n; k++)
		if (list[k].seq == h->seq && list[k].strand == h->strand && list[k].pos == h->pos)
			return 0;
	for (k = 0; k < p->n_res[w]; k++) {
		ext_hit_t *r = &p->res[w][k];

		if (r->seq != h->seq || r->strand != h->strand || r->pos != h->pos)
			continue;
		if (!better(h, r))
			return 0;
		*r = p->res[w][--p->n_res[w]];   /* its MD stays unused in the scratch */
		return 1;
	}
	return 1;
}

/*
 * Mate rescue: align read RY (the mate of hit HX) by the core within its
 * bound in the window HX implies under INS, on the other strand; each locus
 * (run of end columns within the bound, at its best end) that is not a hit
 * of LIST (N) already and makes a concordant pair with HX is added to the
 * rescued hits of RY, mate W.
 */
static void rescue(ext_pairs_t *p, int w, const ext_pair_src_t *s, const ext_opt_t *o,
		const ext_ins_t *ins, const ext_hit_t *hx, const rec_read_t *ry, const ext_hit_t *list,
		uint32_t n)
{
	uint32_t m = ry->seq_len, a, k, k0, wl, ls;
	uint8_t strand = hx->strand == REC_STRAND_FWD ? REC_STRAND_REV : REC_STRAND_FWD;
	const idx_t *x = s->ref(s->ctx, hx->seq, &ls);   /* hx's sequence is its LS */
	int64_t slen = (int64_t)x->len[ls], wb, we;
	unsigned fl = o->nogaps ? ALIGN_NOGAPS : 0;
	align_res_t res;

	if (!m || m > ALIGN_MAX_READ)
		return;
	a = (uint32_t)ext_bound_at(o, m);
	if (hx->strand == REC_STRAND_FWD) {   /* the mate ends in [pos + lo - 1, pos + hi - 1] */
		wb = (int64_t)hx->pos + ins->lo - 1 - (m - 1) - a;
		we = (int64_t)hx->pos + ins->hi - 1;
	} else {                              /* the mate starts in [end + 1 - hi, end + 1 - lo] */
		wb = (int64_t)hx->end + 1 - ins->hi;
		we = (int64_t)hx->end + 1 - ins->lo + (m - 1) + a;
	}
	/* a margin so that a locus near the range is whole (its best end, as
	 * ext_batch_run finds it); a run that touches the margin's edge is dropped */
	wb -= m + 2 * a;
	we += m + 2 * a;
	if (wb < 0)
		wb = 0;
	if (we > slen - 1)
		we = slen - 1;
	if (we - wb + 1 > ALIGN_MAX_WIN) {   /* the part nearest the hit */
		if (hx->strand == REC_STRAND_FWD)
			we = wb + ALIGN_MAX_WIN - 1;
		else
			wb = we - ALIGN_MAX_WIN + 1;
	}
	if (we < wb || we - wb + 1 + a < m)
		return;
	wl = (uint32_t)(we - wb + 1);
	grow(&p->rread, &p->rread_cap, m, 1);
	grow(&p->rwin, &p->rwin_cap, wl, 1);
	grow(&p->rends, &p->rends_cap, wl, 1);
	if (strand == REC_STRAND_REV)
		seqio_revcomp(p->rread, ry->seq, m);
	else
		memcpy(p->rread, ry->seq, m);
	ext_ref_ascii(x, x->off[ls] + (uint64_t)wb, wl, (uint8_t *)p->rwin);
	align_one((const uint8_t *)p->rread, m, (const uint8_t *)p->rwin, 0, wl, a,
			fl | ALIGN_ENDS | ALIGN_NOCIGAR, 0, 0, NULL, p->rends, &res);
	if (res.dist < 0)
		return;
	if (!o->nogaps) {
		size_t need = align_ws_words(wl, m);

		grow(&p->ws, &p->ws_cap, need, sizeof(uint64_t));
	}
	for (k = 0; k < wl;) {
		uint32_t best, end;
		ext_hit_t h;
		size_t need;

		if (p->rends[k] > a) {
			k++;
			continue;
		}
		for (k0 = k, best = k; k < wl && p->rends[k] <= a && (k == k0 || !o->nogaps); k++)
			if (p->rends[k] < p->rends[best])
				best = k;
		end = k - 1;
		if ((k0 == 0 && wb > 0) || (end == wl - 1 && we < slen - 1))
			continue;   /* cut by the window: not whole */
		if (known(p, w, list, n, hx->seq, strand, (uint64_t)wb + k0, (uint64_t)wb + end))
			continue;
		align_one((const uint8_t *)p->rread, m, (const uint8_t *)p->rwin, 0, wl, a, fl,
				best, best, p->ws, NULL, &res);
		if (res.dist < 0 || (uint32_t)res.dist > a)
			continue;
		memset(&h, 0, sizeof h);
		h.seq = hx->seq;
		h.strand = strand;
		h.pos = (uint64_t)wb + res.start;
		h.end = (uint64_t)wb + res.end;
		h.dist = (uint32_t)res.dist;
		h.n_cigar = res.n_cigar;
		memcpy(h.cigar, res.cigar, res.n_cigar * sizeof h.cigar[0]);
		if (!concordant(hx, &h, ins) || !same_start(p, w, list, n, &h))
			continue;
		grow(&p->rmd[w], &p->rmd_cap[w], p->rmd_len[w] + 4 * (size_t)m + 64, 1);
		need = align_md_str(&res, (const uint8_t *)p->rread, (const uint8_t *)p->rwin, 0, 0,
				p->rmd[w] + p->rmd_len[w], p->rmd_cap[w] - p->rmd_len[w]);
		h.md_off = p->rmd_len[w];
		p->rmd_len[w] += need + 1;
		grow(&p->res[w], &p->res_cap[w], p->n_res[w] + 1, sizeof(ext_hit_t));
		p->res[w][p->n_res[w]++] = h;
	}
}

/* Whether hit H has a concordant partner among LIST (N) or mate W's rescued hits. */
static int has_partner(const ext_pairs_t *p, int w, const ext_hit_t *h, const ext_hit_t *list,
		uint32_t n, const ext_ins_t *ins)
{
	uint32_t k;

	for (k = 0; k < n; k++)
		if (concordant(h, &list[k], ins))
			return 1;
	for (k = 0; k < p->n_res[w]; k++)
		if (concordant(h, &p->res[w][k], ins))
			return 1;
	return 0;
}

/* Copy the N hits H (MD values from S, or RMD when not NULL) to the list being made. */
static void put_hits(ext_pairs_t *p, const ext_pair_src_t *s, const ext_hit_t *h, uint32_t n,
		const char *rmd)
{
	uint32_t k;

	grow(&p->hits, &p->hit_cap, p->n_hit + n, sizeof(ext_hit_t));
	for (k = 0; k < n; k++) {
		const char *md = rmd ? rmd + h[k].md_off : s->md(s->ctx, &h[k]);
		size_t l = strlen(md);
		ext_hit_t *d = &p->hits[p->n_hit++];

		*d = h[k];
		grow(&p->md, &p->md_cap, p->md_len + l + 1, 1);
		memcpy(p->md + p->md_len, md, l + 1);
		d->md_off = p->md_len;
		p->md_len += l + 1;
	}
}

/* Sort read R's list when rescue added to it, and give its hits the MAPQ ext_batch_run gives. */
static void finish_list(ext_pairs_t *p, size_t r)
{
	ext_hit_t *h = p->hits + p->beg[r];
	uint32_t n = (uint32_t)(p->beg[r + 1] - p->beg[r]), j, n1 = 0;

	if (n > 1)
		qsort(h, n, sizeof *h, ext_hit_cmp);
	for (j = 0; j < n && h[j].dist == h[0].dist; j++)
		n1++;
	for (j = 0; j < n; j++)
		h[j].mapq = j < n1 ? ext_mapq(n1, n1 < n, h[0].dist, n1 < n ? h[n1].dist : 0) : 0;
}

static int ord_cmp(const void *a, const void *b, void *ctx)
{
	const ext_hit_t *l = ctx, *x = l + *(const uint32_t *)a, *y = l + *(const uint32_t *)b;
	int r;

	if ((r = ext_cmp(x->seq, y->seq)) || (r = ext_cmp(x->strand, y->strand))
			|| (r = ext_cmp(x->pos, y->pos)))
		return r;
	return ext_cmp(*(const uint32_t *)a, *(const uint32_t *)b);
}

static int conc_cmp(const void *a, const void *b)
{
	const ext_conc_t *x = a, *y = b;
	int r;

	if ((r = ext_cmp(x->dist, y->dist)) || (r = ext_cmp(x->h1, y->h1)))
		return r;
	return ext_cmp(x->h2, y->h2);
}

/*
 * The concordant pairs of mate 1 R (hits L1, N1) and mate 2 (L2, N2): for
 * each hit of mate 1, the hits of mate 2 on the other strand of its
 * sequence in the position range the insert size allows (a binary search
 * in mate 2's hits ordered by sequence, strand and position).
 */
static void find_conc(ext_pairs_t *p, const ext_hit_t *l1, uint32_t n1, const ext_hit_t *l2,
		uint32_t n2, uint32_t m2, uint32_t a2, const ext_ins_t *ins)
{
	uint32_t i, k, *ord;

	grow(&p->ord, &p->ord_cap, n2 ? n2 : 1, sizeof(uint32_t));
	ord = p->ord;
	for (k = 0; k < n2; k++)
		ord[k] = k;
	qsort_r(ord, n2, sizeof *ord, ord_cmp, (void *)l2);
	for (i = 0; i < n1; i++) {
		const ext_hit_t *h = &l1[i];
		uint8_t want = h->strand == REC_STRAND_FWD ? REC_STRAND_REV : REC_STRAND_FWD;
		int64_t plo, phi;
		uint32_t lo = 0, hi = n2;

		if (h->strand == REC_STRAND_FWD) {    /* mate 2's end in pos + [lo - 1, hi - 1] */
			plo = (int64_t)h->pos + ins->lo - 1 - (int64_t)(m2 + a2);
			phi = (int64_t)h->pos + ins->hi - 1;
		} else {                              /* mate 2's pos in end + 1 - [hi, lo] */
			plo = (int64_t)h->end + 1 - ins->hi;
			phi = (int64_t)h->end + 1 - ins->lo;
		}
		while (lo < hi) {                     /* the first at (seq, want, >= plo) */
			uint32_t mid = (lo + hi) / 2;
			const ext_hit_t *g = &l2[ord[mid]];

			if (g->seq < h->seq || (g->seq == h->seq && (g->strand < want
						|| (g->strand == want && (int64_t)g->pos < plo))))
				lo = mid + 1;
			else
				hi = mid;
		}
		for (k = lo; k < n2; k++) {
			const ext_hit_t *g = &l2[ord[k]];

			if (g->seq != h->seq || g->strand != want || (int64_t)g->pos > phi)
				break;
			if (concordant(h, g, ins)) {
				grow(&p->conc, &p->conc_cap, p->n_conc + 1, sizeof(ext_conc_t));
				p->conc[p->n_conc++] = (ext_conc_t){ i, ord[k], h->dist + g->dist };
			}
		}
	}
}

/* MAPQ of mate W (0: mate 1) in the first of the N pairs C. */
static uint8_t pair_mapq(const ext_conc_t *c, uint32_t n, int w)
{
	uint32_t k, first = w ? c[0].h2 : c[0].h1, d2 = 0;
	int has_d2 = 0;

	for (k = 1; k < n; k++) {
		uint32_t h = w ? c[k].h2 : c[k].h1;

		if (h == first)
			continue;
		if (c[k].dist == c[0].dist)
			return 0;
		if (!has_d2 || c[k].dist < d2) {
			d2 = c[k].dist;
			has_d2 = 1;
		}
	}
	return ext_mapq(1, has_d2, c[0].dist, d2);
}

/*
 * The hits of a mate's list L (N) written besides its concordant pairs
 * (NC): all with --all; else none when it has pairs, the best K (-k) or
 * the best stratum (--best) when it has none.
 */
static uint32_t shown(const ext_opt_t *o, const ext_hit_t *l, uint32_t n, uint32_t nc)
{
	uint32_t k;

	if (o->mode == EXT_ALL)
		return n;
	if (nc)
		return 0;
	if (o->mode == EXT_BEST_K)
		return n < o->k ? n : o->k;
	for (k = 0; k < n && l[k].dist == l[0].dist; k++)
		;
	return k;
}

int ext_pairs_run(ext_pairs_t *p, const ext_batch_t *b, const idx_t *x, const ext_opt_t *o,
		const ext_ins_t *ins, ext_stats_t *st)
{
	bsrc_t c = { b, x };
	ext_pair_src_t s = batch_src(&c);

	return ext_pairs_run_src(p, &s, o, ins, st);
}

int ext_pairs_run_src(ext_pairs_t *p, const ext_pair_src_t *b, const ext_opt_t *o,
		const ext_ins_t *ins, ext_stats_t *st)
{
	size_t nr = b->n_reads, i;

	p->n_reads = nr;
	p->n_hit = p->md_len = p->n_conc = 0;
	grow(&p->rd, &p->rd_cap, nr + 1, sizeof(const rec_read_t *));
	for (i = 0; i < nr; i++)
		p->rd[i] = b->read(b->ctx, i);
	grow(&p->beg, &p->beg_cap, nr + 1, sizeof(size_t));
	grow(&p->cbeg, &p->cbeg_cap, nr + 1, sizeof(size_t));
	grow(&p->mq, &p->mq_cap, nr + 1, 1);
	grow(&p->shown, &p->shown_cap, nr + 1, sizeof(uint32_t));
	for (i = 0; i < nr; i++) {
		const rec_read_t *r1 = p->rd[i], *r2;
		const ext_hit_t *h1, *h2, *l1, *l2;
		uint32_t n1, n2, k, nc, keep, ln1, ln2;
		size_t c0;

		p->cbeg[i] = p->n_conc;
		p->beg[i] = p->n_hit;
		p->mq[i] = 0;
		if (r1->mate != 1 || i + 1 == nr) {   /* not paired: the batch's hits */
			h1 = b->hits(b->ctx, i, &n1);
			put_hits(p, b, h1, n1, NULL);
			p->shown[i] = n1;
			continue;
		}
		r2 = p->rd[i + 1];
		h1 = b->hits(b->ctx, i, &n1);
		h2 = b->hits(b->ctx, i + 1, &n2);
		st->pairs++;
		/* mate 2 in the windows of mate 1's hits, mate 1 in mate 2's */
		p->n_res[0] = p->n_res[1] = p->rmd_len[0] = p->rmd_len[1] = 0;
		for (k = 0; k < n1 && k < EXT_RESCUE_MAX; k++)
			if (!has_partner(p, 1, &h1[k], h2, n2, ins))
				rescue(p, 1, b, o, ins, &h1[k], r2, h2, n2);
		for (k = 0; k < n2 && k < EXT_RESCUE_MAX; k++)
			if (!has_partner(p, 0, &h2[k], h1, n1, ins))
				rescue(p, 0, b, o, ins, &h2[k], r1, h1, n1);
		st->rescued += p->n_res[0] + p->n_res[1];
		st->hits += p->n_res[0] + p->n_res[1];
		st->loci += p->n_res[0] + p->n_res[1];
		if (!n1 && p->n_res[0])   /* a mate mapped by rescue alone */
			st->mapped++, st->unmapped--;
		if (!n2 && p->n_res[1])
			st->mapped++, st->unmapped--;
		put_hits(p, b, h1, n1, NULL);
		put_hits(p, b, p->res[0], (uint32_t)p->n_res[0], p->rmd[0]);
		p->beg[i + 1] = p->n_hit;
		put_hits(p, b, h2, n2, NULL);
		put_hits(p, b, p->res[1], (uint32_t)p->n_res[1], p->rmd[1]);
		p->beg[i + 2] = p->n_hit;
		finish_list(p, i);
		finish_list(p, i + 1);
		l1 = p->hits + p->beg[i];
		ln1 = (uint32_t)(p->beg[i + 1] - p->beg[i]);
		l2 = p->hits + p->beg[i + 1];
		ln2 = (uint32_t)(p->beg[i + 2] - p->beg[i + 1]);
		c0 = p->n_conc;
		find_conc(p, l1, ln1, l2, ln2, r2->seq_len, (uint32_t)ext_bound_at(o, r2->seq_len),
				ins);
		nc = (uint32_t)(p->n_conc - c0);
		if (nc > 1)
			qsort(p->conc + c0, nc, sizeof(ext_conc_t), conc_cmp);
		keep = nc;
		if (o->mode == EXT_STRATUM)
			for (keep = 0; keep < nc && p->conc[c0 + keep].dist == p->conc[c0].dist; keep++)
				;
		else if (o->mode == EXT_BEST_K && keep > o->k)
			keep = o->k;
		if (nc) {
			p->mq[i] = pair_mapq(p->conc + c0, nc, 0);
			p->mq[i + 1] = pair_mapq(p->conc + c0, nc, 1);
			st->pairs_conc++;
		}
		p->n_conc = c0 + keep;
		st->conc += keep;
		p->shown[i] = shown(o, l1, ln1, nc);
		p->shown[i + 1] = shown(o, l2, ln2, nc);
		p->cbeg[i + 1] = p->n_conc;
		i++;
	}
	p->beg[nr] = p->n_hit;
	p->cbeg[nr] = p->n_conc;
	return 0;
}

size_t ext_pairs_reads(const ext_pairs_t *p)
{
	return p->n_reads;
}

const rec_read_t *ext_pairs_read(const ext_pairs_t *p, size_t i)
{
	return p->rd[i];
}

const ext_hit_t *ext_pairs_hits(const ext_pairs_t *p, size_t i, uint32_t *n)
{
	*n = (uint32_t)(p->beg[i + 1] - p->beg[i]);
	return p->hits + p->beg[i];
}

uint32_t ext_pairs_shown(const ext_pairs_t *p, size_t i)
{
	return p->shown[i];
}

const char *ext_pairs_md(const ext_pairs_t *p, const ext_hit_t *h)
{
	return p->md + h->md_off;
}

const ext_conc_t *ext_pairs_conc(const ext_pairs_t *p, size_t i, uint32_t *n)
{
	*n = (uint32_t)(p->cbeg[i + 1] - p->cbeg[i]);
	return p->conc + p->cbeg[i];
}

void ext_pairs_mapq(const ext_pairs_t *p, size_t i, uint8_t *q1, uint8_t *q2)
{
	*q1 = p->mq[i];
	*q2 = p->mq[i + 1];
}
