/*
 * ext_merge.c - extend --merge (see ext_merge.h): the hits streams of one
 * read chunk against each partition of a reference, read in step, joined
 * read by read into the SAM or BAM output of one extend run against the
 * whole reference.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <htslib/bgzf.h>
#include <htslib/hfile.h>
#include <htslib/sam.h>

#include "align.h"
#include "ext_merge.h"
#include "seqio.h"
#include "util.h"

#define MERGE_TXT_FLUSH (1u << 20)    /* SAM text written in pieces of about this */

/* One input: a partition's hits stream and its index. */
typedef struct {
	const char *path;
	rec_reader_t *r;
	idx_t *x;
	uint32_t base;        /* number of its first sequence in the whole reference */
	rec_hits_t v;         /* the current read's record */
} part_t;

/* The output. */
typedef struct {
	const char *path;
	int fmt;
	samFile *sam;
	sam_hdr_t *hdr;
	kstring_t txt;        /* SAM text not written yet */
	ext_bam_t bam;
	const char **rnames;   /* the merged sequence names, by merged number */
} out_t;

static int ucmp(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

/* extend's order of a read's hits: distance, sequence, position, strand, CIGAR. */
static int hit_cmp(const void *a, const void *b)
{
	const ext_hit_t *x = a, *y = b;
	int r;

	if ((r = ucmp(x->dist, y->dist)) || (r = ucmp(x->seq, y->seq)) || (r = ucmp(x->pos, y->pos))
			|| (r = ucmp(x->strand, y->strand)) || (r = ucmp(x->n_cigar, y->n_cigar)))
		return r;
	return memcmp(x->cigar, y->cigar, x->n_cigar * sizeof(uint32_t));
}

uint32_t ext_merge_select(ext_hit_t *h, uint32_t n, int mode, uint32_t k)
{
	uint32_t j, n1 = 0, keep = n, d2 = 0;
	int has_d2 = 0;

	if (n > 1)
		qsort(h, n, sizeof *h, hit_cmp);
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

/* ---- output ------------------------------------------------------------------ */

static void open_out(const ext_merge_cfg_t *c, const part_t *p, const rec_prov_t *prov, out_t *o)
{
	kstring_t ks = { 0, 0, NULL };
	idx_t view;
	const char **names;
	uint64_t *len;
	uint32_t n = 0, i;
	int k;

	memset(o, 0, sizeof *o);
	o->path = c->out_path;
	o->fmt = c->fmt;
	if (o->fmt == EXT_OUT_BAM && !c->force) {
		int fd = strcmp(o->path, "-") ? open(o->path, O_WRONLY | O_NOCTTY) : STDOUT_FILENO;
		int tty = fd >= 0 && isatty(fd);

		if (fd >= 0 && fd != STDOUT_FILENO)
			close(fd);
		if (tty)
			sp_die("refusing to write BAM to a terminal (use -f to force, or redirect the output)");
	}
	/* the whole reference: the partitions' sequences in the order given */
	for (k = 0; k < c->n_in; k++)
		n += p[k].x->n_seq;
	names = sp_malloc((n ? n : 1) * sizeof *names);
	len = sp_malloc((n ? n : 1) * sizeof *len);
	for (k = 0, n = 0; k < c->n_in; k++)
		for (i = 0; i < p[k].x->n_seq; i++, n++) {
			names[n] = p[k].x->names[i];
			len[n] = p[k].x->len[i];
		}
	memset(&view, 0, sizeof view);
	view.n_seq = n;
	view.names = names;
	view.len = len;
	ext_sam_header(&ks, &view, NULL, prov);
	o->rnames = names;
	free(len);
	o->sam = sam_open(o->path, o->fmt == EXT_OUT_BAM ? "wb" : "w");
	if (!o->sam)
		sp_die("cannot create '%s': %s", o->path, strerror(errno));
	if (o->fmt == EXT_OUT_BAM && c->n_threads > 1 && hts_set_threads(o->sam, c->n_threads) < 0)
		sp_die("cannot start the BAM compression threads");
	o->hdr = sam_hdr_parse(ks.l, ks.s);
	free(ks.s);
	if (!o->hdr)
		sp_die("cannot make the SAM header");
	if ((uint32_t)sam_hdr_nref(o->hdr) != n)
		sp_die("the partitions' indexes hold %u sequences but only %d distinct names: "
				"is a sequence in two partitions?", n, sam_hdr_nref(o->hdr));
	if (sam_hdr_write(o->sam, o->hdr) < 0)
		sp_die("cannot write '%s'", o->path);
}

static int flush_txt(out_t *o)
{
	if (o->txt.l && hwrite(o->sam->fp.hfile, o->txt.s, o->txt.l) != (ssize_t)o->txt.l)
		return -1;
	o->txt.l = 0;
	return 0;
}

/* The output after an error: SAM gets a last line that is no record, BAM no end-of-file block. */
static SP_NORETURN void out_die(out_t *o, const char *fmt, ...) SP_PRINTF(2, 3);
static void out_die(out_t *o, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (o->sam && o->fmt == EXT_OUT_SAM) {
		char *c;
		(void)flush_txt(o);
		for (c = msg; *c; c++)
			if (*c == '\t' || *c == '\n')
				*c = ' ';
		ksprintf(&o->txt, "%s: error: %s (the output is incomplete)\n", sp_progname, msg);
		(void)flush_txt(o);
		if (hflush(o->sam->fp.hfile) != 0)
			msg[sizeof msg - 1] = 0;    /* the message on stderr is all there is */
	} else if (o->sam) {
		BGZF *z = o->sam->fp.bgzf;
		if (bgzf_flush(z) == 0 && hflush(z->fp) != 0)
			z->errcode |= BGZF_ERR_IO;
	}
	sp_die("%s", msg);
}

/* ---- the run --------------------------------------------------------------------- */

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

int ext_merge_or_die(const ext_merge_cfg_t *c)
{
	part_t *p = sp_calloc((size_t)c->n_in, sizeof *p);
	ext_hit_t *h = NULL;
	size_t hcap = 0;
	char *md = NULL, *rs = NULL;
	uint8_t *win = NULL;
	size_t md_cap = 0, rs_cap = 0, win_cap = 0;
	uint64_t nread = 0, nmapped = 0, nhits = 0, nloci = 0;
	rec_prov_t prov;
	out_t o;
	size_t i;
	int k;

	if (c->n_in < 1)
		sp_die("no hits streams to merge");
	for (k = 0; k < c->n_in; k++) {
		open_part(c, k, &p[k]);
		if (k)
			p[k].base = p[k - 1].base + p[k - 1].x->n_seq;
		if (k && p[k].base < p[k - 1].base)
			sp_die("too many sequences in the partitions");
	}
	same_bound(p, c->n_in);
	/* provenance: every input's, then this stage's lines */
	rec_prov_init(&prov);
	for (k = 0; k < c->n_in; k++)
		rec_prov_carry(&prov, rec_reader_prov(p[k].r));
	for (i = 0; c->prov && i < c->prov->n; i++) {
		if (!strcmp(c->prov->key[i], REC_PROV_PG))
			rec_prov_add(&prov, c->prov->key[i], c->prov->val[i]);
		else
			rec_prov_set(&prov, c->prov->key[i], c->prov->val[i]);
	}
	open_out(c, p, &prov, &o);

	for (;;) {
		const uint8_t *body;
		uint32_t len, n = 0, keep, j;
		int got = 0;
		size_t need;
		const rec_read_t *rd;

		for (k = 0; k < c->n_in; k++) {
			int rc = rec_read(p[k].r, &body, &len);

			if (rc < 0)
				out_die(&o, "%s", rec_errmsg(p[k].r));
			if (k && rc != got)
				out_die(&o, "'%s' ends after %" PRIu64 " reads but '%s' holds more: were "
						"they made from the same reads?", rc ? p[0].path : p[k].path,
						nread, rc ? p[k].path : p[0].path);
			got = rc;
			if (rc && rec_hits_decode(body, len, &p[k].v) < 0) {
				rec_reader_bad_record(p[k].r, NULL, "hits record");
				out_die(&o, "%s", rec_errmsg(p[k].r));
			}
		}
		if (!got)
			break;
		rd = &p[0].v.read;
		for (k = 1; k < c->n_in; k++) {
			const rec_read_t *b = &p[k].v.read;
			if (b->id != rd->id || b->name_len != rd->name_len || b->seq_len != rd->seq_len
					|| memcmp(b->name, rd->name, rd->name_len)
					|| memcmp(b->seq, rd->seq, rd->seq_len))
				out_die(&o, "'%s' and '%s' differ at read %" PRIu64 " ('%.*s' and '%.*s'): "
						"were they made from the same reads?", p[0].path, p[k].path,
						nread + 1, (int)(rd->name_len > 200 ? 200 : rd->name_len),
						rd->name, (int)(b->name_len > 200 ? 200 : b->name_len), b->name);
		}
		/* every partition's hits, numbered over the whole reference */
		for (k = 0; k < c->n_in; k++) {
			rec_hit_t rh;

			if (hcap < (size_t)n + p[k].v.n) {
				hcap = ((size_t)n + p[k].v.n) * 2;
				h = sp_realloc(h, hcap * sizeof *h);
			}
			while (rec_hits_next(&p[k].v, &rh) == 1) {
				ext_hit_t *e = &h[n];

				if (rh.seq_id >= p[k].x->n_seq || parse_cigar(rh.cigar, rh.cigar_len,
							rd->seq_len, e) < 0 || rh.pos >= p[k].x->len[rh.seq_id]
						|| e->end > p[k].x->len[rh.seq_id] - rh.pos
						|| rh.strand > REC_STRAND_REV)
					out_die(&o, "'%s': read '%.*s' has a hit outside its index (sequence "
							"%u, position %" PRIu64 ", CIGAR '%.*s')", p[k].path,
							(int)(rd->name_len > 200 ? 200 : rd->name_len), rd->name,
							rh.seq_id, rh.pos, (int)(rh.cigar_len > 64 ? 64 : rh.cigar_len),
							rh.cigar);
				e->seq = p[k].base + rh.seq_id;
				e->pos = rh.pos;
				e->end = rh.pos + e->end - 1;
				e->dist = rh.edit;
				e->strand = rh.strand;
				e->mapq = 0;
				e->md_off = 0;
				n++;
			}
		}
		nloci += n;
		keep = ext_merge_select(h, n, c->mode, c->k);
		/* the MD strings of the hits kept, from the partitions' references */
		if (rs_cap < 2 * (size_t)rd->seq_len + 1) {
			rs_cap = 2 * (size_t)rd->seq_len + 1;
			rs = sp_realloc(rs, rs_cap);
		}
		if (keep) {
			memcpy(rs, rd->seq, rd->seq_len);
			seqio_revcomp(rs + rd->seq_len, rd->seq, rd->seq_len);
		}
		for (j = 0, need = 0; j < keep; j++) {
			const part_t *q = part_of(p, c->n_in, h[j].seq);
			uint32_t ls = h[j].seq - q->base;
			uint64_t span = h[j].end - h[j].pos + 1;
			align_res_t res;

			/* MD: a number and a base per read base at most, and the deleted bases */
			if (md_cap < need + 4 * ((size_t)rd->seq_len + span) + 64) {
				md_cap = 2 * (need + 4 * ((size_t)rd->seq_len + span) + 64);
				md = sp_realloc(md, md_cap);
			}
			if (win_cap < span) {
				win_cap = span * 2;
				win = sp_realloc(win, win_cap);
			}
			ext_ref_ascii(q->x, q->x->off[ls] + h[j].pos, span, win);
			memset(&res, 0, sizeof res);
			res.dist = (int)h[j].dist;
			res.start = 0;
			res.end = (uint32_t)span - 1;
			res.n_cigar = h[j].n_cigar;
			memcpy(res.cigar, h[j].cigar, h[j].n_cigar * sizeof h[j].cigar[0]);
			h[j].md_off = need;
			need += align_md_str(&res, (const uint8_t *)rs
					+ (h[j].strand == REC_STRAND_REV ? rd->seq_len : 0), win, 0, 0,
					md + need, md_cap - need) + 1;
		}
		/* the records: as extend writes them */
		for (j = 0; j < (keep ? keep : 1); j++) {
			const ext_hit_t *e = keep ? &h[j] : NULL;
			ext_sam_rec_t rec;

			ext_sam_rec_init(&rec);
			if (j > 0)
				rec.flag |= 0x100;
			if (o.fmt == EXT_OUT_SAM) {
				ext_sam_line(&o.txt, rd, e, o.rnames, e ? md + e->md_off : NULL, &rec);
			} else if (ext_bam_record(&o.bam, rd, e, e ? md + e->md_off : NULL, &rec) < 0
					|| sam_write1(o.sam, o.hdr, o.bam.b) < 0) {
				out_die(&o, "cannot write '%s'", o.path);
			}
		}
		if (o.txt.l >= MERGE_TXT_FLUSH && flush_txt(&o) < 0)
			out_die(&o, "cannot write '%s': %s", o.path, strerror(errno));
		nread++;
		nhits += keep;
		nmapped += keep > 0;
	}
	if (flush_txt(&o) < 0)
		out_die(&o, "cannot write '%s': %s", o.path, strerror(errno));
	if (sam_close(o.sam) < 0)
		sp_die("cannot write '%s'", o.path);
	if (!c->quiet)
		fprintf(stderr, "%s: merged %d partition%s: %" PRIu64 " reads, %" PRIu64 " mapped, %"
				PRIu64 " unmapped; %" PRIu64 " loci, %" PRIu64 " hits reported\n",
				sp_progname, c->n_in, c->n_in > 1 ? "s" : "", nread, nmapped,
				nread - nmapped, nloci, nhits);
	sam_hdr_destroy(o.hdr);
	free(o.rnames);
	ext_bam_free(&o.bam);
	free(o.txt.s);
	for (k = 0; k < c->n_in; k++) {
		rec_reader_free(p[k].r);
		idx_close(p[k].x);
	}
	free(p);
	free(h);
	free(md);
	free(rs);
	free(win);
	rec_prov_free(&prov);
	return 0;
}
