/*
 * ext_merge.c - extend --merge (see ext_merge.h): the hits streams of one
 * read chunk against each partition of a reference, read in step, joined
 * read by read into the SAM or BAM output of one extend run against the
 * whole reference.
 */
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#include <htslib/sam.h>

#include "align.h"
#include "ext_merge.h"
#include "seqio.h"
#include "util.h"

/* One input: a partition's hits stream and its index. */
typedef struct {
	const char *path;
	rec_reader_t *r;
	idx_t *x;
	uint32_t base;        /* number of its first sequence in the whole reference */
	rec_hits_t v;         /* the current read's record */
} part_t;

uint32_t ext_merge_select(ext_hit_t *h, uint32_t n, int mode, uint32_t k)
{
	uint32_t j, n1 = 0, keep = n, d2 = 0;
	int has_d2 = 0;

	if (n > 1)
		qsort(h, n, sizeof *h, ext_hit_cmp);
	for (j = 0; j < n && h[j].dist == h[0].dist; j++)
		n1++;
	if (n1 < n) {
		has_d2 = 1;
		d2 = h[n1].dist;
	}
	if (mode == EXT_STRATUM)
		keep = n1;
	else if (mode == EXT_BEST_K && keep > k)
		keep = k;
	for (j = 0; j < keep; j++)
		h[j].mapq = j < n1 ? ext_mapq(n1, has_d2, h[0].dist, d2) : 0;
	return keep;
}

/* ---- inputs ---------------------------------------------------------------- */

/*
 * The reporting mode of the last extend command in provenance PROV, from
 * its command line (-k, --best, --all and their abbreviations, in order).
 */
static int stream_mode(const rec_prov_t *prov)
{
	const char *v, *last = NULL, *t;
	size_t it = 0;
	int mode = EXT_ALL, skip = 0;

	while ((v = rec_prov_next(prov, REC_PROV_PG, &it)))
		if (!strncmp(v, "extend\t", 7))
			last = v;
	if (!last || !(t = strchr(last + 7, '\t')))
		return mode;
	for (t++; *t;) {
		const char *e = t + strcspn(t, " ");
		size_t n = (size_t)(e - t);

		if (skip) {
			skip = 0;
		} else if (n == 2 && !strncmp(t, "--", 2)) {
			break;
		} else if (n > 2 && !strncmp(t, "--", 2)) {
			if (n >= 3 && n <= 6 && !strncmp(t, "--best", n))
				mode = EXT_STRATUM;
			else if (n >= 3 && n <= 5 && !strncmp(t, "--all", n))
				mode = EXT_ALL;
		} else if (n > 1 && t[0] == '-') {
			size_t i;
			/* a cluster of short options; one taking an argument ends it */
			for (i = 1; i < n; i++) {
				if (t[i] == 'k')
					mode = EXT_BEST_K;
				if (strchr("eOkxdtBo", t[i])) {
					skip = i + 1 == n;
					break;
				}
			}
		}
		t = *e ? e + 1 : e;
	}
	return mode;
}

/* Open input I of C into P (the stream, its index, checked against each other). */
static void open_part(const ext_merge_cfg_t *c, int i, part_t *p)
{
	const rec_prov_t *up;
	const char *ipath, *sfp;
	char fp[32];

	p->path = c->in[i];
	p->r = rec_open_or_die(p->path, REC_KIND_HITS);
	up = rec_reader_prov(p->r);
	if (stream_mode(up) != EXT_ALL)
		sp_die("'%s': made by extend with -k or --best; the merge needs every locus of "
				"each partition (extend --all, the default) and selects itself", p->path);
	ipath = c->index ? c->index[i] : rec_prov_get(up, REC_PROV_INDEX);
	sfp = rec_prov_get(up, REC_PROV_INDEX_FP);
	if (!ipath || !*ipath)
		sp_die("'%s': the hits stream names no index: give -x FILE", p->path);
	if (!sfp)
		sp_die("'%s': the hits stream holds no index fingerprint: it cannot be checked "
				"against index '%s'", p->path, ipath);
	p->x = ext_idx_open(ipath);
	snprintf(fp, sizeof fp, "%016" PRIx64, p->x->fingerprint);
	if (strcmp(fp, sfp))
		sp_die("'%s': made with the index of fingerprint %s, but index '%s' has "
				"fingerprint %s", p->path, sfp, ipath, fp);
}

/* Die unless the streams were made with the same bound (extend.e, extend.gaps). */
static void same_bound(const part_t *p, int n)
{
	static const char *const keys[] = { "extend.e", "extend.gaps" };
	int i, k;

	for (i = 1; i < n; i++)
		for (k = 0; k < 2; k++) {
			const char *a = rec_prov_get(rec_reader_prov(p[0].r), keys[k]);
			const char *b = rec_prov_get(rec_reader_prov(p[i].r), keys[k]);
			if ((a || b) && (!a || !b || strcmp(a, b)))
				sp_die("'%s' and '%s' were made with different %s (%s and %s)",
						p[0].path, p[i].path, keys[k], a ? a : "none", b ? b : "none");
		}
	for (i = 1; i < n; i++)
		if (p[i].x->fingerprint == p[0].x->fingerprint)
			sp_die("'%s' and '%s' were made with the same index: give each partition once",
					p[0].path, p[i].path);
}

/*
 * CIGAR text S (LEN bytes) of a hit into H (M, I, D runs); -1 if malformed
 * or not of a read of M bases.  H->end gets the reference bases it spans.
 */
static int parse_cigar(const char *s, uint32_t len, uint32_t m, ext_hit_t *h)
{
	uint32_t i = 0, q = 0;
	uint64_t span = 0;

	h->n_cigar = 0;
	while (i < len) {
		uint64_t l = 0;
		const char *op;

		if (s[i] < '0' || s[i] > '9')
			return -1;
		while (i < len && s[i] >= '0' && s[i] <= '9' && l <= UINT32_MAX / 16)
			l = l * 10 + (uint64_t)(s[i++] - '0');
		if (i == len || !l || l >= 1u << 28 || !(op = strchr("MID", s[i])) || !*op
				|| h->n_cigar == ALIGN_MAX_CIGAR)
			return -1;
		h->cigar[h->n_cigar++] = (uint32_t)l << 4 | (uint32_t)(op - "MID");
		if (*op != 'D')
			q += (uint32_t)l;
		if (*op != 'I')
			span += l;
		i++;
	}
	if (q != m || !span)
		return -1;
	h->end = span;
	return 0;
}

/* The partition of global sequence SEQ. */
static const part_t *part_of(const part_t *p, int n, uint32_t seq)
{
	int lo = 0, hi = n - 1;

	while (lo < hi) {
		int mid = (lo + hi + 1) / 2;
		if (p[mid].base <= seq)
			lo = mid;
		else
			hi = mid - 1;
	}
	return &p[lo];
}

/* ---- the reads being merged ------------------------------------------------ */

/* One read: its record (partition 0's, copied) and its hits over all partitions. */
typedef struct {
	uint8_t *body;
	uint32_t len, cap;
	rec_read_t rd;        /* views into body */
	size_t h0;            /* its first hit in the buffer's hits */
	uint32_t n;           /* its hits (the ones kept) */
} mread_t;

/* The run. */
typedef struct {
	const ext_merge_cfg_t *c;
	part_t *p;
	int n_in;
	int paired;
	mread_t *r;           /* the reads of the buffer */
	size_t n_r, r_cap;
	ext_hit_t *h;         /* their hits */
	size_t n_h, h_cap;
	char *md;             /* their MD values */
	size_t md_len, md_cap;
	char *rs;             /* scratch: a read and its reverse complement */
	size_t rs_cap;
	uint8_t *win;         /* scratch: a hit's reference bases */
	size_t win_cap;
	ext_out_t *o;
	uint64_t nread, nmapped, nhits, nloci, eof;
} merge_t;

static const rec_read_t *m_read(const void *c, size_t i)
{
	return &((const merge_t *)c)->r[i].rd;
}

static const ext_hit_t *m_hits(const void *c, size_t i, uint32_t *n)
{
	const merge_t *m = c;

	*n = m->r[i].n;
	return m->h + m->r[i].h0;
}

static const char *m_md(const void *c, const ext_hit_t *h)
{
	return ((const merge_t *)c)->md + h->md_off;
}

static const idx_t *m_ref(const void *c, uint32_t seq, uint32_t *local)
{
	const merge_t *m = c;
	const part_t *q = part_of(m->p, m->n_in, seq);

	*local = seq - q->base;
	return q->x;
}

static ext_pair_src_t m_src(const merge_t *m)
{
	return (ext_pair_src_t){ .n_reads = m->n_r, .ctx = m, .read = m_read, .hits = m_hits,
		.md = m_md, .ref = m_ref };
}

/* End the output so that it cannot pass for complete, and die with the message. */
static SP_NORETURN void merge_die(merge_t *m, const char *fmt, ...) SP_PRINTF(2, 3);
static void merge_die(merge_t *m, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (m->o)
		ext_out_fail(m->o, msg);
	sp_die("%s", msg);
}

/* The MD value of hit H of read RD (RS: the read, then its reverse complement) into m->md. */
static void put_md(merge_t *m, const rec_read_t *rd, ext_hit_t *h)
{
	const part_t *q = part_of(m->p, m->n_in, h->seq);
	uint32_t ls = h->seq - q->base;
	uint64_t span = h->end - h->pos + 1;
	size_t need = 4 * ((size_t)rd->seq_len + span) + 64;
	align_res_t res;

	if (m->md_cap < m->md_len + need) {
		m->md_cap = 2 * (m->md_len + need);
		m->md = sp_realloc(m->md, m->md_cap);
	}
	if (m->win_cap < span) {
		m->win_cap = span * 2;
		m->win = sp_realloc(m->win, m->win_cap);
	}
	ext_ref_ascii(q->x, q->x->off[ls] + h->pos, span, m->win);
	memset(&res, 0, sizeof res);
	res.dist = (int)h->dist;
	res.start = 0;
	res.end = (uint32_t)span - 1;
	res.n_cigar = h->n_cigar;
	memcpy(res.cigar, h->cigar, h->n_cigar * sizeof h->cigar[0]);
	h->md_off = m->md_len;
	m->md_len += align_md_str(&res, (const uint8_t *)m->rs
			+ (h->strand == REC_STRAND_REV ? rd->seq_len : 0), m->win, 0, 0,
			m->md + m->md_len, m->md_cap - m->md_len) + 1;
}

/*
 * The next read of every stream into the buffer (0 at the end of all):
 * the same read in each, its hits numbered over the whole reference and
 * sorted; a single read's selected (-k, --best) with their MAPQ, a mate's
 * all (pairing selects).  Their MD values made.
 */
static int load_read(merge_t *m)
{
	const ext_merge_cfg_t *c = m->c;
	const rec_read_t *rd;
	mread_t *r;
	uint32_t n = 0, keep, j;
	int got = 0, k;

	for (k = 0; k < m->n_in; k++) {
		const uint8_t *body;
		uint32_t len;
		int rc = rec_read(m->p[k].r, &body, &len);

		if (rc < 0)
			merge_die(m, "%s", rec_errmsg(m->p[k].r));
		if (k && rc != got)
			merge_die(m, "'%s' ends after %" PRIu64 " reads but '%s' holds more: were "
					"they made from the same reads?", rc ? m->p[0].path : m->p[k].path,
					m->nread, rc ? m->p[k].path : m->p[0].path);
		got = rc;
		if (!rc)
			continue;
		if (!k) {   /* partition 0's record, kept: the read's views point into it */
			if (m->n_r == m->r_cap) {
				m->r_cap = m->r_cap ? 2 * m->r_cap : 256;
				m->r = sp_realloc(m->r, m->r_cap * sizeof *m->r);
				memset(m->r + m->n_r, 0, (m->r_cap - m->n_r) * sizeof *m->r);
			}
			r = &m->r[m->n_r];
			if (r->cap < len) {
				r->cap = len;
				r->body = sp_realloc(r->body, len);
			}
			memcpy(r->body, body, len);
			r->len = len;
			body = r->body;
		}
		if (rec_hits_decode(body, len, &m->p[k].v) < 0) {
			rec_reader_bad_record(m->p[k].r, NULL, "hits record");
			merge_die(m, "%s", rec_errmsg(m->p[k].r));
		}
	}
	if (!got)
		return 0;
	r = &m->r[m->n_r];
	r->rd = m->p[0].v.read;
	rd = &r->rd;
	for (k = 1; k < m->n_in; k++) {
		const rec_read_t *b = &m->p[k].v.read;
		if (b->id != rd->id || b->name_len != rd->name_len || b->seq_len != rd->seq_len
				|| b->mate != rd->mate || memcmp(b->name, rd->name, rd->name_len)
				|| memcmp(b->seq, rd->seq, rd->seq_len))
			merge_die(m, "'%s' and '%s' differ at read %" PRIu64 " ('%.*s' and '%.*s'): "
					"were they made from the same reads?", m->p[0].path, m->p[k].path,
					m->nread + 1, (int)(rd->name_len > 200 ? 200 : rd->name_len),
					rd->name, (int)(b->name_len > 200 ? 200 : b->name_len), b->name);
	}
	if (m->paired && rd->mate != (m->n_r % 2 ? 2 : 1))
		merge_die(m, "'%s': read %" PRIu64 " ('%.*s') is not the mate the pairs of a "
				"paired-end stream put there", m->p[0].path, m->nread + 1,
				(int)(rd->name_len > 200 ? 200 : rd->name_len), rd->name);
	/* every partition's hits, numbered over the whole reference */
	r->h0 = m->n_h;
	for (k = 0; k < m->n_in; k++) {
		part_t *q = &m->p[k];
		rec_hit_t rh;

		if (m->h_cap < m->n_h + n + q->v.n) {
			m->h_cap = (m->n_h + n + q->v.n) * 2;
			m->h = sp_realloc(m->h, m->h_cap * sizeof *m->h);
		}
		while (rec_hits_next(&q->v, &rh) == 1) {
			ext_hit_t *e = &m->h[m->n_h + n];

			if (rh.seq_id >= q->x->n_seq || parse_cigar(rh.cigar, rh.cigar_len,
						rd->seq_len, e) < 0 || rh.pos >= q->x->len[rh.seq_id]
					|| e->end > q->x->len[rh.seq_id] - rh.pos
					|| rh.strand > REC_STRAND_REV)
				merge_die(m, "'%s': read '%.*s' has a hit outside its index (sequence "
						"%u, position %" PRIu64 ", CIGAR '%.*s')", q->path,
						(int)(rd->name_len > 200 ? 200 : rd->name_len), rd->name,
						rh.seq_id, rh.pos, (int)(rh.cigar_len > 64 ? 64 : rh.cigar_len),
						rh.cigar);
			e->seq = q->base + rh.seq_id;
			e->pos = rh.pos;
			e->end = rh.pos + e->end - 1;
			e->dist = rh.edit;
			e->strand = rh.strand;
			e->mapq = 0;
			e->md_off = 0;
			n++;
		}
	}
	m->nloci += n;
	/* a mate's hits all (pairing selects, as extend's paired run) */
	keep = ext_merge_select(m->h + m->n_h, n, m->paired ? EXT_ALL : c->mode, c->k);
	if (m->rs_cap < 2 * (size_t)rd->seq_len + 1) {
		m->rs_cap = 2 * (size_t)rd->seq_len + 1;
		m->rs = sp_realloc(m->rs, m->rs_cap);
	}
	if (keep) {
		memcpy(m->rs, rd->seq, rd->seq_len);
		seqio_revcomp(m->rs + rd->seq_len, rd->seq, rd->seq_len);
	}
	for (j = 0; j < keep; j++)
		put_md(m, rd, &m->h[m->n_h + j]);
	r->n = keep;
	m->n_h += keep;
	m->n_r++;
	m->nread++;
	return 1;
}

/* Pair (paired streams) and write the reads of the buffer; empty it. */
static void flush_reads(merge_t *m, ext_pairs_t *pr, const ext_opt_t *po,
		const ext_ins_t *ins, ext_stats_t *st, kstring_t *txt)
{
	ext_pair_src_t s = m_src(m);
	size_t i;

	if (!m->n_r)
		return;
	ext_pairs_run_src(pr, &s, po, ins, st);
	for (i = 0; i < m->n_r; i++) {
		uint32_t n;

		ext_pairs_hits(pr, i, &n);
		m->nmapped += n > 0;
		m->nhits += n;
	}
	txt->l = 0;
	if (ext_out_text(m->o))
		ext_out_format(m->o, NULL, pr, txt);
	if (ext_out_write(m->o, NULL, pr, txt) < 0)
		merge_die(m, "%s", sp_errmsg());
	m->n_r = m->n_h = m->md_len = 0;
}

#define MERGE_BATCH 8192    /* reads paired and written at a time */

/* The pairing options of the partitions' runs: their bound (the streams' provenance) and C's selection. */
static void pair_opts(const merge_t *m, ext_opt_t *o)
{
	const rec_prov_t *up = rec_reader_prov(m->p[0].r);
	const char *e = rec_prov_get(up, "extend.e"), *g = rec_prov_get(up, "extend.gaps");
	const char *pct = rec_prov_get(up, "extend.bound_pct");

	memset(o, 0, sizeof *o);
	o->max_a = e ? (unsigned)strtoul(e, NULL, 10) : 3;
	if (o->max_a > ALIGN_MAX_A)
		sp_die("'%s': extend.e %s exceeds %d", m->p[0].path, e, ALIGN_MAX_A);
	o->nogaps = g && !strcmp(g, "no");
	o->bound_pct = pct ? (uint32_t)strtoul(pct, NULL, 10) : 0;
	o->mode = m->c->mode;
	o->k = m->c->k;
	o->n_threads = 1;
}

int ext_merge_or_die(const ext_merge_cfg_t *c)
{
	merge_t m;
	ext_pairs_t *pr = ext_pairs_new();
	ext_opt_t po;
	ext_ins_t ins = c->ins;
	ext_stats_t st;
	kstring_t txt = { 0, 0, NULL };
	rec_prov_t prov;
	const char **names;
	uint64_t *len;
	idx_t view;
	uint32_t nseq = 0, i;
	size_t j;
	int k;

	if (c->n_in < 1)
		sp_die("no hits streams to merge");
	memset(&m, 0, sizeof m);
	memset(&st, 0, sizeof st);
	m.c = c;
	m.n_in = c->n_in;
	m.p = sp_calloc((size_t)c->n_in, sizeof *m.p);
	for (k = 0; k < c->n_in; k++) {
		part_t *q = &m.p[k];
		int pk;

		open_part(c, k, q);
		if (k)
			q->base = m.p[k - 1].base + m.p[k - 1].x->n_seq;
		if (k && q->base < m.p[k - 1].base)
			sp_die("too many sequences in the partitions");
		pk = rec_prov_get(rec_reader_prov(q->r), "seedfilt.paired") != NULL;
		if (k && pk != m.paired)
			sp_die("'%s' holds %s reads but '%s' %s", m.p[0].path,
					m.paired ? "paired-end" : "single-end", q->path,
					pk ? "paired-end ones" : "single-end ones");
		m.paired = pk;
	}
	same_bound(m.p, c->n_in);
	pair_opts(&m, &po);
	/* provenance: every input's, then this stage's lines */
	rec_prov_init(&prov);
	for (k = 0; k < c->n_in; k++)
		rec_prov_carry(&prov, rec_reader_prov(m.p[k].r));
	for (j = 0; c->prov && j < c->prov->n; j++) {
		if (!strcmp(c->prov->key[j], REC_PROV_PG))
			rec_prov_add(&prov, c->prov->key[j], c->prov->val[j]);
		else
			rec_prov_set(&prov, c->prov->key[j], c->prov->val[j]);
	}
	/* the whole reference: the partitions' sequences in the order given */
	for (k = 0; k < c->n_in; k++)
		nseq += m.p[k].x->n_seq;
	names = sp_malloc((nseq ? nseq : 1) * sizeof *names);
	len = sp_malloc((nseq ? nseq : 1) * sizeof *len);
	for (k = 0, nseq = 0; k < c->n_in; k++)
		for (i = 0; i < m.p[k].x->n_seq; i++, nseq++) {
			names[nseq] = m.p[k].x->names[i];
			len[nseq] = m.p[k].x->len[i];
		}
	memset(&view, 0, sizeof view);
	view.n_seq = nseq;
	view.names = names;
	view.len = len;
	{   /* a sequence name in two partitions: the header would hold it once */
		kstring_t ks = { 0, 0, NULL };
		sam_hdr_t *h;

		ext_sam_header(&ks, &view, NULL, &prov);
		h = sam_hdr_parse(ks.l, ks.s);
		if (!h || (uint32_t)sam_hdr_nref(h) != nseq)
			sp_die("the partitions' indexes hold %u sequences but only %d distinct names: "
					"is a sequence in two partitions?", nseq, h ? sam_hdr_nref(h) : 0);
		sam_hdr_destroy(h);
		free(ks.s);
	}
	m.o = ext_out_open_or_die(c->out_path, c->fmt, &view, &prov, c->force, c->n_threads,
			&c->so);

	/* the insert size, as extend's paired run: from the first pairs, or -I */
	if (m.paired && ins.how == EXT_INS_NONE) {
		ext_pair_src_t s;

		while (m.n_r < 2 * (size_t)EXT_INS_PAIRS && load_read(&m))
			;
		s = m_src(&m);
		ext_ins_estimate_src(&s, 1, EXT_INS_PAIRS, &ins);
	}
	for (;;) {
		int more = 1;

		while (m.n_r < MERGE_BATCH && (more = load_read(&m)))
			;
		if (more && m.paired && m.n_r % 2)   /* pairs whole */
			more = load_read(&m);
		flush_reads(&m, pr, &po, &ins, &st, &txt);
		if (!more)
			break;
	}
	ext_out_close_or_die(m.o);
	if (!c->quiet) {
		if (m.paired) {
			char d[256];

			ext_ins_describe(&ins, d, sizeof d);
			fprintf(stderr, "%s: %" PRIu64 " pairs, %" PRIu64 " with a concordant pair (%"
					PRIu64 " concordant pairs reported), %" PRIu64 " hits by mate "
					"rescue; %s\n", sp_progname, st.pairs, st.pairs_conc, st.conc,
					st.rescued, d);
		}
		fprintf(stderr, "%s: merged %d partition%s: %" PRIu64 " reads, %" PRIu64 " mapped, %"
				PRIu64 " unmapped; %" PRIu64 " loci, %" PRIu64 " hits reported\n",
				sp_progname, c->n_in, c->n_in > 1 ? "s" : "", m.nread, m.nmapped,
				m.nread - m.nmapped, m.nloci, m.nhits);
	}
	for (k = 0; k < c->n_in; k++) {
		rec_reader_free(m.p[k].r);
		idx_close(m.p[k].x);
	}
	for (j = 0; j < m.r_cap; j++)
		free(m.r[j].body);
	free(m.r);
	free(m.h);
	free(m.md);
	free(m.rs);
	free(m.win);
	free(m.p);
	free(names);
	free(len);
	free(txt.s);
	ext_pairs_free(pr);
	rec_prov_free(&prov);
	return 0;
}
