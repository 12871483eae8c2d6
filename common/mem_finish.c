/*
 * mem_finish.c - maximal exact matches, stages 2 and 3 (mem.h): the true
 * matches from the FM-MEMs (letters, N, sequence ends, partition cuts),
 * -mum / -mumreference, MUMmer's order; the text lines and the candidates.
 */
#include "mem_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Index of the first N run of X that ends after G (the search of mem_priv.h over all runs). */
static uint64_t nrun_after(const idx_t *x, uint64_t g)
{
	return mem_nrun_search(x, g, 0, x->n_nrun);
}

/* Reference letter at G (ACGTN); *RUN is a cursor: the first N run ending after a position <= G. */
static char ref_at(const idx_t *x, uint64_t g, uint64_t *run)
{
	while (*run < x->n_nrun && x->nrun[2 * *run] + x->nrun[2 * *run + 1] <= g)
		(*run)++;
	if (*run < x->n_nrun && x->nrun[2 * *run] <= g)
		return 'N';
	return "ACGT"[mem_ref_word(x->pack, g) & 3];
}

/* Letters A (read) and B (reference) match. */
static inline int eqc(const mem_opt_t *o, char a, char b)
{
	return a == b && !(o->acgt && a == 'N');
}

/* Sequence of position G with G < off[s+1] (G inside it); empty sequences skipped. */
static inline uint32_t seq_of(const idx_t *x, uint64_t g)
{
	return x->n_seq == 1 ? 0 : idx_pos2seq(x, g, NULL);
}

/*
 * Whether read letter QC matches the reference at G.  FM_MAX: the FM-MEM
 * ended there on a mismatch of the partition text (N read as A in both),
 * so two letters that are not N differ: the reference is read only for its
 * N runs.
 */
static int ext_match(const mem_idx_t *mi, char qc, uint64_t g, int fm_max)
{
	const idx_t *x = mi->x;
	uint64_t run = mem_nrun_after(mi, g);

	if (run < x->n_nrun && x->nrun[2 * run] <= g)
		return eqc(&mi->o, qc, 'N');
	if (qc == 'N' || fm_max)
		return 0;
	return qc == "ACGT"[mem_ref_word(x->pack, g) & 3];
}

/*
 * Keep the match [A, B) at G of strand ST, found in partition PART, if it
 * is long enough, maximal in the whole reference and owned by PART.  LMAX,
 * RMAX: the FM-MEM ended on a mismatch there (ext_match).
 */
static void keep_piece(const mem_idx_t *mi, const mem_strand_t *st, uint32_t part,
		uint32_t a, uint32_t b, uint64_t g, uint32_t sq, int lmax, int rmax, const uint64_t *tail,
		mem_vec_t *out)
{
	const idx_t *x = mi->x;
	uint64_t len = b - a;
	mem_t m;

	if (len < mi->o.L || g >= x->own_end[part])
		return;
	if (a > 0 && g > x->off[sq] && ext_match(mi, st->seq[a - 1], g - 1, lmax))
		return;
	if (b < st->m && g + len < x->off[sq + 1] && ext_match(mi, st->seq[b], g + len, rmax))
		return;
	m.g = g;
	m.i = a;
	m.len = (uint32_t)len;
	m.tail = tail ? *tail : 0;
	m.tail_ok = tail != NULL;
	VEC_PUSH(out, m);
}

/* The first of read runs N of S that ends after A. */
static size_t read_nrun_after(const mem_scratch_t *s, uint32_t a)
{
	size_t lo = 0, hi = s->n_nrun;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->nrun[2 * mid + 1] <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether read runs N of S hold a base in [A, B). */
static int read_has_n(const mem_scratch_t *s, uint32_t a, uint32_t b)
{
	size_t lo = read_nrun_after(s, a);

	return lo < s->n_nrun && s->nrun[2 * lo] < b;
}

/*
 * Whether read letter QC matches the reference letter next to a clean
 * FM-MEM (fm_max: ext_match's), REF_N: that letter is in an N run.
 */
static inline int ext_match_n(const mem_opt_t *o, char qc, uint64_t g, const uint8_t *pack,
		int ref_n, int fm_max)
{
	if (ref_n)
		return eqc(o, qc, 'N');
	if (qc == 'N' || fm_max)
		return 0;
	return qc == "ACGT"[mem_ref_word(pack, g) & 3];
}

/*
 * Cut FM-MEM R into the true matches it holds (letters compared, sequence
 * ends).  Most hold no N and no sequence end (the fast path, keep_piece's
 * tests inlined): the one N-run lookup at G0 gives the letters on both
 * sides too, the run before it ending at G0 or the run at G0 + LEN.
 */
static void split_raw(const mem_idx_t *mi, const mem_strand_t *st, const mem_raw_t *r,
		mem_vec_t *out, const mem_scratch_t *s)
{
	const idx_t *x = mi->x;
	const idx_part_t *pt = &x->part[r->part];
	uint64_t g0 = pt->beg + r->p, run = mem_nrun_after(mi, g0);
	uint64_t nb = run < x->n_nrun ? x->nrun[2 * run] : UINT64_MAX;   /* the next run's start */
	uint32_t sq = seq_of(x, g0), j, a, e;
	int lmax = r->p > 0, rmax = r->p + (uint64_t)r->len < pt->fm.n;
	size_t rn;
	uint64_t ge = g0 + r->len, send = x->off[sq + 1];

	if (ge <= send && nb >= ge && !read_has_n(s, r->i, r->i + r->len)) {
		uint32_t b = r->i + r->len;
		mem_t m;

		if (r->len < mi->o.L || g0 >= x->own_end[r->part])
			return;
		if (r->i > 0 && g0 > x->off[sq] && ext_match_n(&mi->o, st->seq[r->i - 1], g0 - 1,
				x->pack, run > 0 && x->nrun[2 * run - 2] + x->nrun[2 * run - 1] == g0, lmax))
			return;
		if (b < st->m && ge < send && ext_match_n(&mi->o, st->seq[b], ge, x->pack, nb == ge, rmax))
			return;
		/* the tail holds the true letters when no N and no sequence end lie there */
		m.g = g0;
		m.i = r->i;
		m.len = r->len;
		m.tail_ok = r->p + (uint64_t)r->len + 32 <= pt->fm.n && ge + 32 <= send && nb >= ge + 32;
		m.tail = m.tail_ok ? r->tail : 0;
		VEC_PUSH(out, m);
		return;
	}
	/*
	 * Stretches of letters alike: in each, the reference is in an N run or
	 * not, the read too, in one sequence.  Letters that are not N match
	 * (an FM-MEM: the partition text holds the reference's letters but N);
	 * N matches N but with -n; N and a letter never.
	 */
	rn = read_nrun_after(s, r->i);
	for (j = 0, a = 0; j < r->len; j = e) {
		uint64_t g = g0 + j, q = (uint64_t)r->i + j, e1;
		int ref_n, read_n;

		if (g == send) {        /* next sequence (skip empty ones) */
			if (j > a)
				keep_piece(mi, st, r->part, r->i + a, r->i + j, g0 + a, sq,
						a == 0 && lmax, 0, NULL, out);
			a = j;
			sq = seq_of(x, g);
			send = x->off[sq + 1];
		}
		while (run < x->n_nrun && x->nrun[2 * run] + x->nrun[2 * run + 1] <= g)
			run++;
		while (rn < s->n_nrun && s->nrun[2 * rn + 1] <= q)
			rn++;
		ref_n = run < x->n_nrun && x->nrun[2 * run] <= g;
		read_n = rn < s->n_nrun && s->nrun[2 * rn] <= q;
		e1 = send - g0;
		if (run < x->n_nrun) {
			uint64_t t = ref_n ? x->nrun[2 * run] + x->nrun[2 * run + 1] : x->nrun[2 * run];

			if (t - g0 < e1)
				e1 = t - g0;
		}
		if (rn < s->n_nrun) {
			uint64_t t = read_n ? s->nrun[2 * rn + 1] : s->nrun[2 * rn];

			if (t - r->i < e1)
				e1 = t - r->i;
		}
		e = e1 < r->len ? (uint32_t)e1 : r->len;
		if (ref_n != read_n || (ref_n && mi->o.acgt)) {     /* none of them matches */
			if (j > a)
				keep_piece(mi, st, r->part, r->i + a, r->i + j, g0 + a, sq,
						a == 0 && lmax, 0, NULL, out);
			a = e;
		}
	}
	if (r->len > a)
		keep_piece(mi, st, r->part, r->i + a, r->i + r->len, g0 + a, sq, a == 0 && lmax, rmax,
				NULL, out);
}

/* Matches that cover a partition cut (in neither partition's text): compared directly. */
static void cut_matches(const mem_idx_t *mi, const mem_strand_t *st, mem_vec_t *out)
{
	const idx_t *x = mi->x;
	uint32_t c;

	for (c = 0; c < mi->n_cut; c++) {
		const mem_cut_t *ct = &mi->cut[c];
		uint64_t wl = ct->x1 - ct->x0 + 1;
		uint32_t a, sq;

		if (st->m < wl || (mi->o.acgt && memchr(ct->ref, 'N', wl)))
			continue;
		sq = seq_of(x, ct->x0);
		for (a = 0; a + wl <= st->m; a++) {
			uint64_t gl = ct->x0, gr = ct->x1 + 1, run;
			uint32_t al = a, ar = (uint32_t)(a + wl);
			mem_t m;

			if (st->seq[a] != ct->ref[0] || memcmp(st->seq + a, ct->ref, wl) != 0)
				continue;
			if (mi->o.acgt && memchr(st->seq + a, 'N', wl))
				continue;
			while (al > 0 && gl > x->off[sq]) {
				run = nrun_after(x, gl - 1);
				if (!eqc(&mi->o, st->seq[al - 1], ref_at(x, gl - 1, &run)))
					break;
				al--;
				gl--;
			}
			run = nrun_after(x, gr);
			while (ar < st->m && gr < x->off[sq + 1] && eqc(&mi->o, st->seq[ar], ref_at(x, gr, &run)))
				ar++, gr++;
			if (ar - al < mi->o.L)
				continue;
			m.g = gl;
			m.i = al;
			m.len = ar - al;
			m.tail = 0;
			m.tail_ok = 0;
			VEC_PUSH(out, m);
		}
	}
}

/* A position in the text "seq1 $ seq2 $ ... seqN" for the suffix order. */
typedef struct {
	uint64_t pos, run;
	uint32_t seq;
} suf_t;

/* Letters at P that hold neither N nor a sequence end, 0 if P is at one. */
static uint64_t suf_clean(const idx_t *x, const suf_t *p)
{
	uint64_t e = x->off[p->seq + 1];

	if (p->run < x->n_nrun && x->nrun[2 * p->run] < e) {
		if (x->nrun[2 * p->run] <= p->pos)
			return 0;
		e = x->nrun[2 * p->run];
	}
	return e - p->pos;
}

/* Rank of the letter at P: A C G N T $ end = 0..6. */
static int suf_rank(const idx_t *x, const suf_t *p)
{
	static const int code_rank[4] = { 0, 1, 2, 4 };

	if (p->pos == x->off[p->seq + 1])
		return p->seq + 1 == x->n_seq ? 6 : 5;
	if (p->run < x->n_nrun && x->nrun[2 * p->run] <= p->pos)
		return 3;
	return code_rank[mem_ref_word(x->pack, p->pos) & 3];
}

static void suf_move(const idx_t *x, suf_t *p, uint64_t d)
{
	p->pos += d;
	while (p->run < x->n_nrun && x->nrun[2 * p->run] + x->nrun[2 * p->run + 1] <= p->pos)
		p->run++;
}

static void suf_init(const mem_idx_t *mi, suf_t *p, uint64_t g, uint64_t skip)
{
	p->seq = seq_of(mi->x, g);
	p->pos = g + skip;
	p->run = mem_nrun_after(mi, p->pos);
}

/* Order of the suffixes at A and B, which agree on their first SKIP letters. */
static int suf_cmp(const mem_idx_t *mi, uint64_t a, uint64_t b, uint64_t skip)
{
	const idx_t *x = mi->x;
	suf_t p, q;

	suf_init(mi, &p, a, skip);
	suf_init(mi, &q, b, skip);
	for (;;) {
		uint64_t cp = suf_clean(x, &p), cq = suf_clean(x, &q);

		if (cp && cq) {         /* the clean letters of both, 32 at a time */
			uint64_t n = cp < cq ? cp : cq, o, wp, wq, d;

			for (o = 0; o < n; o += 32) {
				wp = mem_ref_word(x->pack, p.pos + o);
				wq = mem_ref_word(x->pack, q.pos + o);
				d = wp ^ wq;
				if (n - o < 32)
					d &= (1ULL << (2 * (n - o))) - 1;
				if (d) {
					unsigned sh = (unsigned)__builtin_ctzll(d) & ~1u;

					return ((wp >> sh) & 3) < ((wq >> sh) & 3) ? -1 : 1;
				}
			}
			suf_move(x, &p, n);
			suf_move(x, &q, n);
		} else {
			int rp = suf_rank(x, &p), rq = suf_rank(x, &q);

			if (rp != rq)
				return rp < rq ? -1 : 1;
			if (rp == 6)
				return 0;
			if (rp == 5) {
				p.seq++;
				q.seq++;
				p.run = mem_nrun_after(mi, p.pos);
				q.run = mem_nrun_after(mi, q.pos);
			} else {        /* N in both: skip the shorter rest of run */
				uint64_t ep = x->nrun[2 * p.run] + x->nrun[2 * p.run + 1];
				uint64_t eq = x->nrun[2 * q.run] + x->nrun[2 * q.run + 1], n;

				if (ep > x->off[p.seq + 1])
					ep = x->off[p.seq + 1];
				if (eq > x->off[q.seq + 1])
					eq = x->off[q.seq + 1];
				n = ep - p.pos < eq - q.pos ? ep - p.pos : eq - q.pos;
				suf_move(x, &p, n);
				suf_move(x, &q, n);
			}
		}
	}
}

/*
 * MUMmer's order of the matches of one query start: their reference
 * suffixes, which agree on the letters of the shortest match of that start
 * (its length: the group's offset).  Each match gets a key: the ranks of
 * the KEY_LETTERS letters from the offset on (3 bits each, the first
 * highest).  A match's letters are the read's up to its length, then its
 * tail's (stage 1 kept them), and only beyond those the reference's: the
 * suffixes are compared there (suf_cmp) only where the keys and the known
 * letters tie.
 */
#define KEY_LETTERS 21

typedef struct skey {
	uint64_t key;
	uint32_t i, k;             /* query start, index of the match */
} skey_t;

typedef struct {
	const mem_idx_t *mi;
	const mem_t *m;
	const char *seq;           /* the strand */
	const uint32_t *qmin;      /* the group offsets */
} skey_ctx_t;

/* Rank (suf_rank's) of a letter of the read: A C G T, anything else N. */
static const uint8_t read_rank[256] = {
	['A'] = 0, ['C'] = 1, ['G'] = 2, ['T'] = 4,
};

static inline int is_acgt(char c)
{
	return c == 'A' || c == 'C' || c == 'G' || c == 'T';
}

/* Rank of letter D of match M's reference suffix from what the read and the tail tell, -1: not known. */
static inline int known_letter(const mem_t *m, const char *seq, uint32_t d)
{
	static const int code_rank[4] = { 0, 1, 2, 4 };

	if (d < m->len)
		return is_acgt(seq[m->i + d]) ? read_rank[(unsigned char)seq[m->i + d]] : 3;
	if (m->tail_ok && d - m->len < 32)
		return code_rank[(m->tail >> (2 * (d - m->len))) & 3];
	return -1;
}

/* The key of the suffix at G from G + SKIP on (no sequence end before G + SKIP), from the reference. */
static uint64_t suf_key(const mem_idx_t *mi, uint64_t g, uint64_t skip)
{
	const idx_t *x = mi->x;
	static const uint64_t code_rank[4] = { 0, 1, 2, 4 };
	uint64_t key = 0, w;
	suf_t p;
	int j;

	suf_init(mi, &p, g, skip);
	if (suf_clean(x, &p) >= KEY_LETTERS) {
		w = mem_ref_word(x->pack, p.pos);
		for (j = 0; j < KEY_LETTERS; j++, w >>= 2)
			key = key << 3 | code_rank[w & 3];
		return key;
	}
	for (j = 0; j < KEY_LETTERS; j++) {
		int r = suf_rank(x, &p);

		key = key << 3 | (uint64_t)r;
		if (r == 6)
			return key << 3 * (KEY_LETTERS - 1 - j);
		if (r == 5) {           /* "$": the next sequence's letters follow */
			p.seq++;
			p.run = mem_nrun_after(mi, p.pos);
		} else {
			suf_move(x, &p, 1);
		}
	}
	return key;
}

/* The key of match M from SKIP on: from the read and the tail when they hold it. */
static uint64_t mem_key(const mem_idx_t *mi, const mem_t *m, const char *seq, uint32_t skip)
{
	uint64_t key = 0;
	int j;

	if (!m->tail_ok)
		return suf_key(mi, m->g, skip);
	for (j = 0; j < KEY_LETTERS; j++)       /* skip <= len: always known */
		key = key << 3 | (uint64_t)known_letter(m, seq, skip + (uint32_t)j);
	return key;
}

static int cmp_skey(const void *va, const void *vb, void *vc)
{
	const skey_t *a = va, *b = vb;
	const skey_ctx_t *c = vc;
	const mem_t *ma, *mb;
	uint32_t lo, d;

	if (a->i != b->i)
		return a->i < b->i ? -1 : 1;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	ma = &c->m[a->k];
	mb = &c->m[b->k];
	if (ma->g == mb->g)
		return 0;
	/* equal up to the shorter's length and over the key: go on with the known letters */
	lo = ma->len < mb->len ? ma->len : mb->len;
	d = c->qmin[a->i] + KEY_LETTERS;
	for (d = d > lo ? d : lo;; d++) {
		int la = known_letter(ma, c->seq, d), lb = known_letter(mb, c->seq, d);

		if (la < 0 || lb < 0)
			break;
		if (la != lb)
			return la < lb ? -1 : 1;
	}
	return suf_cmp(c->mi, ma->g, mb->g, lo);
}

/* Sort the N matches M of strand ST in MUMmer's -maxmatch order. */
static void sort_query(const mem_idx_t *mi, mem_vec_t *v, const mem_strand_t *st, mem_scratch_t *s)
{
	mem_t *m = v->a;
	size_t n = v->n, k;
	uint32_t i, qlen = st->m;
	const idx_t *x = mi->x;
	skey_ctx_t c = { mi, m, st->seq, NULL };

	if (qlen > s->cap_q) {
		s->cap_q = qlen;
		s->qmin = sp_realloc(s->qmin, qlen * sizeof *s->qmin);
		s->qcnt = sp_realloc(s->qcnt, qlen * sizeof *s->qcnt);
	}
	if (n > s->cap_key) {
		s->cap_key = n + n / 2;
		s->key = sp_realloc(s->key, s->cap_key * sizeof *s->key);
	}
	c.qmin = s->qmin;
	for (i = 0; i < qlen; i++) {
		s->qmin[i] = UINT32_MAX;
		s->qcnt[i] = 0;
	}
	for (k = 0; k < n; k++) {
		i = m[k].i;
		s->qcnt[i]++;
		if (m[k].len < s->qmin[i])
			s->qmin[i] = m[k].len;
	}
	for (k = 0; k < n; k++)         /* the reference letters that the keys need, overlapped */
		if (s->qcnt[m[k].i] > 1 && !m[k].tail_ok)
			__builtin_prefetch(x->pack + ((m[k].g + s->qmin[m[k].i]) >> 2));
	for (k = 0; k < n; k++) {
		i = m[k].i;
		s->key[k].i = i;
		s->key[k].k = (uint32_t)k;
		s->key[k].key = s->qcnt[i] > 1 ? mem_key(mi, &m[k], st->seq, s->qmin[i]) : 0;
	}
	qsort_r(s->key, n, sizeof *s->key, cmp_skey, &c);
	s->tmp.n = 0;
	for (k = 0; k < n; k++)
		VEC_PUSH(&s->tmp, m[s->key[k].k]);
	{
		mem_vec_t t = *v;

		*v = s->tmp;
		s->tmp = t;
	}
}

/*
 * Whether match A comes before match B (same query start) in MUMmer's
 * order from the letters the read and the tails tell: 1 or 0, or -1 when
 * those run out (*SKIP: the letters the two suffixes agree on; suf_cmp
 * decides).
 */
static int before_known(const mem_t *a, const mem_t *b, const char *seq, uint32_t *skip)
{
	uint32_t d = a->len < b->len ? a->len : b->len, e = a->len < b->len ? b->len : a->len;
	uint64_t ta, tb, diff;
	uint32_t left;
	unsigned sh;

	for (; d < e; d++) {    /* one from the read, the other from its tail */
		int la = known_letter(a, seq, d), lb = known_letter(b, seq, d);

		if (la < 0 || lb < 0) {
			*skip = d;
			return -1;
		}
		if (la != lb)
			return la < lb;
	}
	left = 32 - (e - (a->len < b->len ? a->len : b->len));
	*skip = d;
	if (!a->tail_ok || !b->tail_ok || left == 0)
		return -1;
	/* both from their tails now (LEFT letters in each): codes in A C G T order, the ranks' */
	ta = a->tail >> 2 * (d - a->len);
	tb = b->tail >> 2 * (d - b->len);
	diff = ta ^ tb;
	if (left < 32)
		diff &= (1ULL << 2 * left) - 1;
	if (!diff) {
		*skip = d + left;
		return -1;
	}
	sh = (unsigned)__builtin_ctzll(diff) & ~1u;
	return ((ta >> sh) & 3) < ((tb >> sh) & 3);
}

/* Sort the N matches M of one query start (N > 1) by their reference suffixes (sort_query's way). */
static void sort_group(const mem_idx_t *mi, mem_t *m, size_t n, const mem_strand_t *st, mem_scratch_t *s)
{
	uint32_t i = m[0].i, qmin = UINT32_MAX;
	skey_ctx_t c = { mi, m, st->seq, s->qmin };
	size_t k;

	for (k = 0; k < n; k++)
		if (m[k].len < qmin)
			qmin = m[k].len;
	s->qmin[i] = qmin;
	if (n > s->cap_key) {
		s->cap_key = n + n / 2;
		s->key = sp_realloc(s->key, s->cap_key * sizeof *s->key);
	}
	for (k = 0; k < n; k++) {
		s->key[k].i = i;
		s->key[k].k = (uint32_t)k;
		s->key[k].key = mem_key(mi, &m[k], st->seq, qmin);
	}
	qsort_r(s->key, n, sizeof *s->key, cmp_skey, &c);
	s->tmp.n = 0;
	for (k = 0; k < n; k++)
		VEC_PUSH(&s->tmp, m[s->key[k].k]);
	memcpy(m, s->tmp.a, n * sizeof *m);
}

/*
 * MUMmer's -maxmatch order (sort_query's) by a shorter way: stage 1 gives
 * the matches of one query start in the order of their BWT rows, which is
 * the order of their suffixes in the partition's text.  So the matches are
 * put in query start order (a stable counting sort) and each pair of
 * neighbours of one start is checked with the letters that the read and
 * the tails tell (the reference where those run out: repeats longer than
 * a tail); only a start where a pair is out of order (N, sequence ends,
 * two partitions) is sorted in full.
 */
static void order_query(const mem_idx_t *mi, mem_vec_t *v, const mem_strand_t *st, mem_scratch_t *s)
{
	const idx_t *x = mi->x;
	mem_t *m = v->a;
	size_t n = v->n, k, a, b, nu, u;
	uint32_t i, qlen = st->m, sum;

	if (qlen > s->cap_q) {
		s->cap_q = qlen;
		s->qmin = sp_realloc(s->qmin, qlen * sizeof *s->qmin);
		s->qcnt = sp_realloc(s->qcnt, qlen * sizeof *s->qcnt);
	}
	for (k = 1; k < n && m[k - 1].i <= m[k].i; k++)
		;
	if (k < n) {            /* not yet in query start order: count, then place */
		memset(s->qcnt, 0, qlen * sizeof *s->qcnt);
		for (k = 0; k < n; k = b) {     /* by runs of one start: no chain through qcnt */
			for (b = k + 1; b < n && m[b].i == m[k].i; b++)
				;
			s->qcnt[m[k].i] += (uint32_t)(b - k);
		}
		for (i = 0, sum = 0; i < qlen; i++) {
			uint32_t c = s->qcnt[i];

			s->qcnt[i] = sum;
			sum += c;
		}
		if (n > s->tmp.cap) {
			s->tmp.cap = n + n / 2;
			s->tmp.a = sp_realloc(s->tmp.a, s->tmp.cap * sizeof *s->tmp.a);
		}
		for (k = 0; k < n; k = b) {
			mem_t *d = s->tmp.a + s->qcnt[m[k].i];

			for (b = k; b < n && m[b].i == m[k].i; b++)
				*d++ = m[b];
			s->qcnt[m[k].i] += (uint32_t)(b - k);
		}
		s->tmp.n = n;
		{
			mem_vec_t t = *v;

			*v = s->tmp;
			s->tmp = t;
		}
		m = v->a;
	}
	/*
	 * Each pair of neighbours from the letters known; the pairs that need
	 * the reference (suf_cmp) are noted and their first reference words
	 * fetched ahead, so that their cache misses overlap; then each start
	 * whose pairs are not all in order is sorted in full.
	 */
	if (n > s->cap_und) {
		s->cap_und = n + n / 2;
		s->und = sp_realloc(s->und, s->cap_und * sizeof *s->und);
	}
	nu = 0;
	for (k = 1; k < n; k++) {
		uint32_t skip;
		int v;

		if (m[k].i != m[k - 1].i)
			continue;
		v = before_known(&m[k - 1], &m[k], st->seq, &skip);
		if (v < 0) {
			__builtin_prefetch(x->pack + ((m[k - 1].g + skip) >> 2));
			__builtin_prefetch(x->pack + ((m[k].g + skip) >> 2));
			s->und[nu].k = (uint32_t)k;
			s->und[nu].skip = skip;
			nu++;
		} else if (!v) {
			s->und[nu].k = (uint32_t)k;
			s->und[nu].skip = UINT32_MAX;     /* out of order */
			nu++;
		}
	}
	for (u = 0, a = 0; a < n; a = b) {
		int ok = 1;

		for (b = a + 1; b < n && m[b].i == m[a].i; b++)
			;
		for (; u < nu && s->und[u].k < b; u++)
			if (ok && (s->und[u].skip == UINT32_MAX || suf_cmp(mi, m[s->und[u].k - 1].g,
					m[s->und[u].k].g, s->und[u].skip) >= 0))
				ok = 0;
		if (!ok)
			sort_group(mi, m + a, b - a, st, s);
	}
}

static int cmp_ref(const void *va, const void *vb)
{
	const mem_t *a = va, *b = vb;

	if (a->g != b->g)
		return a->g < b->g ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

/* By start, then longest first (for the containment sweep). */
static int cmp_span(const void *va, const void *vb)
{
	const mem_t *a = va, *b = vb;

	if (a->i != b->i)
		return a->i < b->i ? -1 : 1;
	if (a->len != b->len)
		return a->len > b->len ? -1 : 1;
	return a->g < b->g ? -1 : a->g > b->g;
}

/*
 * -mumreference: keep the matches whose string occurs once in the
 * reference, i.e. that no other match holds (every occurrence of a string
 * of L letters or more lies in exactly one match); -mum: and once in the
 * query strand.
 */
static size_t unique_filter(const mem_idx_t *mi, const mem_strand_t *st, mem_t *m, size_t n)
{
	size_t k, out = 0;
	uint64_t maxend = 0;
	int any = 0;

	if (n == 0)   /* m may be NULL */
		return 0;
	qsort(m, n, sizeof *m, cmp_span);
	for (k = 0; k < n; k++) {
		uint64_t end = (uint64_t)m[k].i + m[k].len;
		int dom = (any && maxend >= end)
			|| (k + 1 < n && m[k + 1].i == m[k].i && m[k + 1].len == m[k].len);

		if (!any || end > maxend)
			maxend = end;
		any = 1;
		if (dom)
			continue;
		if (mi->o.mode == MEM_MUM) {
			const char *q = st->seq, *hit, *p = q;
			size_t cnt = 0;

			while (cnt < 2 && (hit = memmem(p, st->m - (size_t)(p - q), q + m[k].i, m[k].len))) {
				cnt++;
				p = hit + 1;
			}
			if (cnt != 1)
				continue;
		}
		m[out++] = m[k];
	}
	return out;
}

#define RAW_AHEAD 32    /* FM-MEMs: 16 cache lines */

size_t mem_finish(const mem_idx_t *mi, const mem_strand_t *st, mem_raw_t *raw, size_t nraw,
		mem_vec_t *out, mem_scratch_t *s)
{
	size_t k;
	uint32_t i;

	out->n = 0;
	s->n_nrun = 0;
	{       /* most reads hold no N: memchr finds the first */
		const char *n1 = memchr(st->seq, 'N', st->m);

		i = n1 ? (uint32_t)(n1 - st->seq) : st->m;
	}
	for (; i < st->m; i++) {
		if (st->seq[i] != 'N')
			continue;
		if (s->n_nrun && s->nrun[2 * s->n_nrun - 1] == i) {
			s->nrun[2 * s->n_nrun - 1] = i + 1;
			continue;
		}
		if (s->n_nrun == s->cap_nrun) {
			s->cap_nrun = s->cap_nrun ? 2 * s->cap_nrun : 16;
			s->nrun = sp_realloc(s->nrun, 2 * s->cap_nrun * sizeof *s->nrun);
		}
		s->nrun[2 * s->n_nrun] = i;
		s->nrun[2 * s->n_nrun + 1] = i + 1;
		s->n_nrun++;
	}
	for (k = 0; k < nraw; k++) {
		if (k + RAW_AHEAD < nraw)     /* read once, from memory mostly (the device's): fetched ahead */
			__builtin_prefetch(&raw[k + RAW_AHEAD]);
		if (raw[k].len)     /* the device leaves the slots of short matches empty */
			split_raw(mi, st, &raw[k], out, s);
	}
	cut_matches(mi, st, out);
	if (mi->o.mode != MEM_MAXMATCH)
		out->n = unique_filter(mi, st, out->a, out->n);
	if (out->n == 0)   /* out->a may still be NULL: nothing to sort */
		return 0;
	if (mi->o.mode == MEM_MUM)
		qsort(out->a, out->n, sizeof *out->a, cmp_ref);
	else if (mi->o.mode == MEM_MAXMATCH && !mi->full_sort)
		order_query(mi, out, st, s);
	else
		sort_query(mi, out, st, s);
	return out->n;
}

/* ---- stage 3 ---------------------------------------------------------------- */

static void buf_need(mem_buf_t *b, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = b->n + n > 2 * b->cap ? b->n + n + 256 : 2 * b->cap;
		b->a = sp_realloc(b->a, b->cap);
	}
}

/* Right-align V in a field of at least W characters at P; returns the length (put_u64's slow path). */
static __attribute__((noinline)) size_t put_u64_any(char *p, uint64_t v, int w)
{
	char t[24];
	int n = 0, k;

	do {
		t[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (k = 0; k < w - n; k++)
		p[k] = ' ';
	for (k = 0; k < n; k++)
		p[(w > n ? w - n : 0) + k] = t[n - 1 - k];
	return (size_t)(w > n ? w : n);
}

/*
 * Right-align V in a field of at least 8 characters at P; returns the length.
 * V < 10^8 (every line but those of references beyond 100 Mbases): the
 * digits of the two halves of V in the 16-bit, then 8-bit lanes of one word
 * (quotients by multiplication: V / 100 as V * 5243 >> 19 for V < 10^4,
 * V / 10 as V * 103 >> 10 for V < 100), the leading zeros made blanks,
 * stored at once: no division, no branch on the digits (checked against
 * the digit-pair loop it replaced for every V < 10^8).  Inlined: a line's
 * three fields are independent work the core overlaps.
 */
static inline __attribute__((always_inline)) size_t put_u64(char *p, uint64_t v)
{
	if (v < 100000000) {
		uint64_t hi = v / 10000, x = hi | (v - hi * 10000) << 32, q, t, m;
		unsigned lead;

		q = (x * 5243 >> 19) & 0x0000007F0000007FULL;
		x = q | (x - q * 100) << 16;
		t = (x * 103 >> 10) & 0x000F000F000F000FULL;
		x = t | (x - t * 10) << 8;               /* byte k: digit k, the first lowest */
		lead = x ? (unsigned)__builtin_ctzll(x) / 8 : 7;
		if (lead > 7)
			lead = 7;
		m = lead ? ~0ULL >> (64 - 8 * lead) : 0;
		sp_st64((uint8_t *)p, x + 0x3030303030303030ULL - (0x1010101010101010ULL & m));   /* '0' - 16 = ' ' */
		return 8;
	}
	return put_u64_any(p, v, 8);
}

void mem_fmt_init(mem_idx_t *mi)
{
	uint32_t v;

	for (v = 0; v < MEM_NUM8; v++) {
		char f[8];

		put_u64(f, v);
		mi->num8[v] = sp_ld64((const uint8_t *)f);
	}
}

/* put_u64 of V, from the table when V is small (a line's query start and length mostly are). */
static inline __attribute__((always_inline)) size_t put_u64_small(const mem_idx_t *mi, char *p,
		uint64_t v)
{
	if (v < MEM_NUM8) {
		sp_st64((uint8_t *)p, mi->num8[v]);
		return 8;
	}
	return put_u64(p, v);
}

/*
 * The lines of N matches: room for them all made at once (a line is at most
 * the name's column, three fields of up to 20 digits and 5 separators), the
 * sequence of each found only when there are several.
 */
void mem_fmt_mummer(const mem_idx_t *mi, mem_buf_t *b, const char *name, size_t name_len,
		int rev, uint32_t len, const mem_t *m, size_t n, int four)
{
	const idx_t *x = mi->x;
	int named = four || x->n_seq > 1, many = x->n_seq > 1;
	size_t k, line_max = (named ? (size_t)mi->name_w + 4 : 0) + 3 * 20 + 5;
	uint64_t qbase = rev ? (uint64_t)len : 1;
	char *p;

	buf_need(b, name_len + 12 + n * line_max);
	p = b->a + b->n;
	*p++ = '>';
	*p++ = ' ';
	memcpy(p, name, name_len);
	p += name_len;
	if (rev) {
		memcpy(p, " Reverse", 8);
		p += 8;
	}
	*p++ = '\n';
	for (k = 0; k < n; k++) {
		uint32_t sq = many ? seq_of(x, m[k].g) : 0;
		uint64_t qp = rev ? qbase - m[k].i : qbase + m[k].i;

		if (named) {
			size_t l = strlen(x->names[sq]);

			p[0] = p[1] = ' ';
			memcpy(p + 2, x->names[sq], l);
			memset(p + 2 + l, ' ', (size_t)mi->name_w - l + 2);
			p += 2 + mi->name_w + 2;
		}
		p += put_u64(p, m[k].g - x->off[sq] + 1);
		*p++ = ' ';
		*p++ = ' ';
		p += put_u64_small(mi, p, qp);
		*p++ = ' ';
		*p++ = ' ';
		p += put_u64_small(mi, p, m[k].len);
		*p++ = '\n';
	}
	b->n = (size_t)(p - b->a);
}

/* The partition that owns global position D (the last one starting at or before it). */
static uint32_t owner(const idx_t *x, uint64_t d)
{
	return (uint32_t)sp_last_le(x->part, x->n_part, sizeof *x->part, offsetof(idx_part_t, beg), d);
}

uint32_t mem_cands(const mem_idx_t *mi, const mem_t *mf, size_t nf, const mem_t *mr, size_t nr,
		rec_cand_t **out, size_t *cap)
{
	const idx_t *x = mi->x;
	size_t k, n = nf + nr, o = 0;

	if (n > *cap) {
		*cap = n + n / 2;
		*out = sp_realloc(*out, *cap * sizeof **out);
	}
	for (k = 0; k < n; k++) {
		const mem_t *m = k < nf ? &mf[k] : &mr[k - nf];
		uint32_t sq = seq_of(x, m->g), p;
		uint64_t d = m->g - m->i;
		rec_cand_t *c = &(*out)[k];

		if (m->g < x->off[sq] + m->i)
			d = x->off[sq];
		p = owner(x, d);
		c->part = p;
		c->pos = (uint32_t)(d - x->part[p].beg);
		c->seq_id = sq;
		c->strand = k < nf ? REC_STRAND_FWD : REC_STRAND_REV;
		c->support = m->len;
	}
	if (n == 0)     /* *out may still be NULL */
		return 0;
	qsort(*out, n, sizeof **out, rec_cand_cmp);
	for (k = 0; k < n; k++) {
		if (o && rec_cand_cmp(&(*out)[o - 1], &(*out)[k]) == 0) {
			uint64_t s = (uint64_t)(*out)[o - 1].support + (*out)[k].support;

			(*out)[o - 1].support = s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
		} else {
			(*out)[o++] = (*out)[k];
		}
	}
	return (uint32_t)o;
}
