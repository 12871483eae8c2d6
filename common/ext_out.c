/*
 * ext_out.c - extend's output: a SAM or BAM file (htslib) or a hits stream,
 * opened with its header, written a batch at a time in input order, and
 * ended either cleanly or, after a failure, so that it cannot pass for a
 * complete output.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <htslib/bgzf.h>
#include <htslib/hfile.h>
#include <htslib/sam.h>

#include "ext.h"
#include "util.h"

struct ext_out {
	int fmt;
	const char *path;
	samFile *sam;
	sam_hdr_t *hdr;
	const char **rnames;  /* of the SAM header, by sequence number */
	rec_writer_t *w;
	ext_bam_t bam;        /* the record being written (BAM) */
	ext_sam_opt_t so;     /* -R, -C, --secondary */
	rec_hit_t *rh;        /* a read's hits (hits stream) */
	size_t rh_cap;
	char *cig;            /* their CIGAR texts */
	size_t cig_cap;
};

/* Die unless FD of PATH may take BAM (not a terminal, unless FORCE). */
static void bam_tty_check(const char *path, int force)
{
	int fd, tty;

	if (force)
		return;
	fd = strcmp(path, "-") ? open(path, O_WRONLY | O_NOCTTY) : STDOUT_FILENO;
	tty = fd >= 0 && isatty(fd);
	if (fd >= 0 && fd != STDOUT_FILENO)
		close(fd);
	if (tty)
		sp_die("refusing to write BAM to a terminal (use -f to force, or redirect the output)");
}

ext_out_t *ext_out_open_or_die(const char *path, int fmt, const idx_t *x, const rec_prov_t *prov,
		int force, int n_threads, const ext_sam_opt_t *so)
{
	ext_out_t *o = sp_calloc(1, sizeof *o);
	kstring_t ks = { 0, 0, NULL };
	uint32_t i;

	o->fmt = fmt;
	o->path = path;
	if (so)
		o->so = *so;
	if (fmt == EXT_OUT_REC) {
		/* a write error is kept and reported at the end, on the main thread */
		o->w = rec_create_worker_or_die(path, REC_KIND_HITS, prov, 0, force);
		return o;
	}
	if (fmt == EXT_OUT_BAM)
		bam_tty_check(path, force);
	o->sam = sam_open(path, fmt == EXT_OUT_BAM ? "wb" : "w");
	if (!o->sam)
		sp_die("cannot create '%s': %s", path, strerror(errno));
	/* BGZF blocks compressed by a pool: the same blocks, the same bytes */
	if (fmt == EXT_OUT_BAM && n_threads > 1 && hts_set_threads(o->sam, n_threads) < 0)
		sp_die("cannot start the BAM compression threads");
	ext_sam_header(&ks, x, o->so.rg_line, prov);
	o->hdr = sam_hdr_parse(ks.l, ks.s);
	free(ks.s);
	if (!o->hdr)
		sp_die("cannot make the SAM header");
	if (sam_hdr_write(o->sam, o->hdr) < 0)
		sp_die("cannot write '%s'", path);
	if ((uint32_t)sam_hdr_nref(o->hdr) != x->n_seq)
		sp_die("cannot make the SAM header (%u sequences, %d in the header)", x->n_seq,
				sam_hdr_nref(o->hdr));
	o->rnames = sp_malloc((x->n_seq ? x->n_seq : 1) * sizeof(char *));
	for (i = 0; i < x->n_seq; i++)
		o->rnames[i] = sam_hdr_tid2name(o->hdr, (int)i);
	return o;
}

int ext_out_text(const ext_out_t *o)
{
	return o->fmt == EXT_OUT_SAM;
}

/*
 * A batch's BAM records, made by a formatting thread (ext_out_records) for
 * the write step: R[0..N) in order, their buffers kept for the next batch.
 */
struct ext_recs {
	ext_bam_t f;          /* ext_bam_record's scratch (its record is R[N]'s) */
	struct bam1_t **r;
	size_t n, cap;
};

/* Where records go: SAM text (KS), BAM records written to O's file (BAM),
 * or BAM records kept in RS (BAM, RS set). */
typedef struct {
	const ext_out_t *o;
	kstring_t *ks;        /* SAM */
	ext_bam_t *bam;       /* BAM */
	samFile *sam;
	ext_recs_t *rs;
	kstring_t xa, xa2;    /* scratch of a record's XA value */
	uint8_t *used;        /* scratch: hits of a mate in a concordant pair */
	size_t used_cap;
} emit_t;

/* Write the record of RD for hit H (NULL: unmapped) with what E adds, and the run's RG and -C. */
static int emit(emit_t *em, const rec_read_t *rd, const ext_hit_t *h, const char *md,
		ext_sam_rec_t *e)
{
	const ext_out_t *o = em->o;

	e->rg = o->so.rg_id;
	if (o->so.comments && rd->comment_len) {
		e->co = rd->comment;
		e->co_len = rd->comment_len;
	}
	if (em->ks) {
		ext_sam_line(em->ks, rd, h, o->rnames, md, e);
		return 0;
	}
	if (em->rs) {   /* made into the batch's next record, written later */
		ext_recs_t *rs = em->rs;
		int rc;
		if (rs->n == rs->cap) {
			size_t c = rs->cap ? 2 * rs->cap : 256;
			rs->r = sp_realloc(rs->r, c * sizeof *rs->r);
			memset(rs->r + rs->cap, 0, (c - rs->cap) * sizeof *rs->r);
			rs->cap = c;
		}
		if (!rs->r[rs->n] && !(rs->r[rs->n] = bam_init1()))
			return sp_fail("out of memory");
		em->bam->b = rs->r[rs->n];
		rc = ext_bam_record(em->bam, rd, h, md, e);
		em->bam->b = NULL;
		if (rc < 0)
			return -1;
		rs->n++;
		return 0;
	}
	if (ext_bam_record(em->bam, rd, h, md, e) < 0)
		return -1;
	if (sam_write1(em->sam, o->hdr, em->bam->b) < 0)
		return sp_fail("cannot write '%s'", o->path);
	return 0;
}

/*
 * Read I and its hits: of B, or of PR where B is NULL (extend --merge
 * gives pairs made of other sources than batches).
 */
static const rec_read_t *read_of(const ext_batch_t *b, const ext_pairs_t *pr, size_t i)
{
	return b ? ext_batch_read(b, i) : ext_pairs_read(pr, i);
}

static const ext_hit_t *hits_of(const ext_batch_t *b, const ext_pairs_t *pr, size_t i,
		uint32_t *n)
{
	return b ? ext_batch_hits(b, i, n) : ext_pairs_hits(pr, i, n);
}

static const char *md_of(const ext_batch_t *b, const ext_pairs_t *pr, const ext_hit_t *h)
{
	return b ? ext_hit_md(b, h) : ext_pairs_md(pr, h);
}

/* The records of single read I of B: its hits, the first primary, or the read unmapped. */
static int put_single(emit_t *em, const ext_batch_t *b, const ext_pairs_t *pr, size_t i)
{
	const rec_read_t *rd = read_of(b, pr, i);
	uint32_t n, j;
	const ext_hit_t *h = hits_of(b, pr, i, &n);
	ext_sam_rec_t e;

	ext_sam_rec_init(&e);
	if (!n)
		return emit(em, rd, NULL, NULL, &e);
	if (em->o->so.xa && n > 1) {
		em->xa.l = 0;
		for (j = 1; j < n; j++)
			ext_xa_add(&em->xa, &h[j], em->o->rnames[h[j].seq]);
		e.xa = em->xa.s;
		return emit(em, rd, &h[0], md_of(b, pr, &h[0]), &e);
	}
	for (j = 0; j < n; j++) {
		ext_sam_rec_init(&e);
		e.flag = j ? 256u : 0u;
		if (emit(em, rd, &h[j], md_of(b, pr, &h[j]), &e) < 0)
			return -1;
	}
	return 0;
}

/*
 * The record of mate W (0: mate 1) RD at hit H (NULL: unmapped) whose mate
 * is at MH (NULL: unmapped), with flag bits EXTRA, MAPQ (-1: the hit's),
 * the mate record's MAPQ MQ (its MQ tag when MH is mapped) and XA; an
 * unmapped mate is placed at its mate's position, and a mapped one points
 * there for its unmapped mate (as samtools fixmate sets them).
 */
static int mate_rec(emit_t *em, const ext_pairs_t *pr, const rec_read_t *rd, int w,
		const ext_hit_t *h, const ext_hit_t *mh, unsigned extra, int mapq, int mq,
		const char *xa)
{
	char mc[8 * ALIGN_MAX_CIGAR + 8];
	ext_sam_rec_t e;

	ext_sam_rec_init(&e);
	e.flag = 1u | (w ? 0x80u : 0x40u) | extra;
	e.mapq = mapq;
	e.xa = xa;
	if (mh) {
		e.mtid = (int32_t)mh->seq;
		e.mpos = (int64_t)mh->pos;
		if (mh->strand == REC_STRAND_REV)
			e.flag |= 0x20u;
		e.mc = ext_cigar_str(mh, mc, sizeof mc);
		e.mq = mq;
		if (h)
			e.tlen = ext_tlen(h, mh);
		else {
			e.tid = e.mtid;
			e.pos = e.mpos;
		}
	} else {
		e.flag |= 8u;
		if (h) {
			e.mtid = (int32_t)h->seq;
			e.mpos = (int64_t)h->pos;
			e.mc = "*";     /* as samtools fixmate writes it */
		}
	}
	return emit(em, rd, h, h ? ext_pairs_md(pr, h) : NULL, &e);
}

/* XA value of the N hits L marked in USED but P into KS; NULL when there is none. */
static const char *pair_xa(const ext_out_t *o, kstring_t *ks, const ext_hit_t *l, uint32_t n,
		const uint8_t *used, const ext_hit_t *p)
{
	uint32_t k;

	ks->l = 0;
	for (k = 0; k < n; k++)
		if (used[k] && &l[k] != p)
			ext_xa_add(ks, &l[k], o->rnames[l[k].seq]);
	return ks->l ? ks->s : NULL;
}

/* Mark in EM->used the hits of mate W (N) written: in the NC pairs C or among the first SHOWN. */
static void mark(emit_t *em, int w, uint32_t n, const ext_conc_t *c, uint32_t nc,
		uint32_t shown)
{
	uint32_t k;

	if (em->used_cap < 2 * (size_t)n + 2) {
		em->used_cap = 2 * (size_t)n + 2;
		em->used = sp_realloc(em->used, em->used_cap);
	}
	memset(em->used, 0, n);
	for (k = 0; k < nc; k++)
		em->used[w ? c[k].h2 : c[k].h1] = 1;
	for (k = 0; k < shown && k < n; k++)
		em->used[k] |= 2;
}

/*
 * The records of the pair whose mate 1 is read I: the first concordant
 * pair (or each mate's best hit) as the primary records of mate 1 and
 * mate 2, then every other concordant pair as two secondary records
 * pointing at each other, then each mate's hits in no concordant pair as
 * secondary records pointing at the other mate's primary one (or all those
 * in the XA tags of the primary records).
 */
static int put_pair(emit_t *em, const ext_batch_t *b, const ext_pairs_t *pr, size_t i)
{
	const rec_read_t *rd[2] = { read_of(b, pr, i), read_of(b, pr, i + 1) };
	const ext_hit_t *l[2], *prim[2];
	const ext_conc_t *c;
	uint32_t n[2], nc, k;
	uint8_t q[2];
	const char *xa[2] = { NULL, NULL };
	int w;

	l[0] = ext_pairs_hits(pr, i, &n[0]);
	l[1] = ext_pairs_hits(pr, i + 1, &n[1]);
	c = ext_pairs_conc(pr, i, &nc);
	if (nc) {
		prim[0] = &l[0][c[0].h1];
		prim[1] = &l[1][c[0].h2];
		ext_pairs_mapq(pr, i, &q[0], &q[1]);
	} else {
		for (w = 0; w < 2; w++) {
			prim[w] = n[w] ? &l[w][0] : NULL;
			q[w] = prim[w] ? prim[w]->mapq : 0;
		}
	}
	if (em->o->so.xa) {
		mark(em, 0, n[0], c, nc, ext_pairs_shown(pr, i));
		xa[0] = pair_xa(em->o, &em->xa, l[0], n[0], em->used, prim[0]);
		mark(em, 1, n[1], c, nc, ext_pairs_shown(pr, i + 1));
		xa[1] = pair_xa(em->o, &em->xa2, l[1], n[1], em->used, prim[1]);
	}
	for (w = 0; w < 2; w++)
		if (mate_rec(em, pr, rd[w], w, prim[w], prim[!w], nc ? 2u : 0u, q[w], q[!w],
					xa[w]) < 0)
			return -1;
	if (em->o->so.xa)
		return 0;
	for (k = 1; k < nc; k++)
		if (mate_rec(em, pr, rd[0], 0, &l[0][c[k].h1], &l[1][c[k].h2], 0x102u, 0, 0,
					NULL) < 0
				|| mate_rec(em, pr, rd[1], 1, &l[1][c[k].h2], &l[0][c[k].h1], 0x102u, 0,
					0, NULL) < 0)
			return -1;
	for (w = 0; w < 2; w++) {
		mark(em, w, n[w], c, nc, ext_pairs_shown(pr, i + (size_t)w));
		for (k = 0; k < n[w]; k++)
			if (em->used[k] == 2 && &l[w][k] != prim[w]
					&& mate_rec(em, pr, rd[w], w, &l[w][k], prim[!w], 0x100u, 0, q[!w],
						NULL) < 0)
				return -1;
	}
	return 0;
}

/* The records of every read of B (PR: its pairs, or NULL; B NULL: PR's reads). */
static int put_batch(emit_t *em, const ext_batch_t *b, const ext_pairs_t *pr)
{
	size_t i, nr = b ? ext_batch_reads(b) : ext_pairs_reads(pr);
	int rc = 0;

	for (i = 0; i < nr && rc == 0; i++) {
		if (pr && read_of(b, pr, i)->mate == 1 && i + 1 < nr)
			rc = put_pair(em, b, pr, i++);
		else
			rc = put_single(em, b, pr, i);
	}
	free(em->xa.s);
	free(em->xa2.s);
	free(em->used);
	return rc;
}

void ext_out_format(const ext_out_t *o, const ext_batch_t *b, const ext_pairs_t *pr,
		kstring_t *ks)
{
	emit_t em = { .o = o, .ks = ks };

	put_batch(&em, b, pr);   /* text cannot fail */
}

int ext_out_bam(const ext_out_t *o)
{
	return o->fmt == EXT_OUT_BAM;
}

int ext_out_records(const ext_out_t *o, const ext_batch_t *b, const ext_pairs_t *pr,
		ext_recs_t **rp)
{
	emit_t em = { .o = o };

	if (!*rp)
		*rp = sp_calloc(1, sizeof **rp);
	em.rs = *rp;
	em.bam = &em.rs->f;
	em.rs->n = 0;
	return put_batch(&em, b, pr);
}

int ext_out_write_records(ext_out_t *o, const ext_recs_t *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (sam_write1(o->sam, o->hdr, r->r[i]) < 0)
			return sp_fail("cannot write '%s'", o->path);
	return 0;
}

void ext_recs_free(ext_recs_t *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->cap; i++)
		if (r->r[i])
			bam_destroy1(r->r[i]);
	free(r->r);
	ext_bam_free(&r->f);
	free(r);
}

/* Read RD's N hits H into a hits stream. */
static void put_hits(ext_out_t *o, const rec_read_t *rd, const ext_hit_t *h, uint32_t n)
{
	size_t need = (size_t)n * 8 * ALIGN_MAX_CIGAR + 1, off = 0;
	uint32_t j;

	if (o->rh_cap < n) {
		o->rh_cap = n;
		o->rh = sp_realloc(o->rh, n * sizeof(rec_hit_t));
	}
	if (o->cig_cap < need) {
		o->cig_cap = need;
		o->cig = sp_realloc(o->cig, need);
	}
	for (j = 0; j < n; j++) {
		rec_hit_t *r = &o->rh[j];
		ext_cigar_str(&h[j], o->cig + off, 8 * ALIGN_MAX_CIGAR);
		r->seq_id = h[j].seq;
		r->pos = h[j].pos;
		r->score = -(int32_t)h[j].dist;
		r->edit = (uint16_t)h[j].dist;
		r->strand = h[j].strand;
		r->mapq = h[j].mapq;
		r->cigar = o->cig + off;
		r->cigar_len = (uint32_t)strlen(o->cig + off);
		off += r->cigar_len;
	}
	rec_put_hits(o->w, rd, o->rh, n);
}

int ext_out_write(ext_out_t *o, const ext_batch_t *b, const ext_pairs_t *pr, const kstring_t *txt)
{
	size_t i, nr;
	uint32_t n;

	if (o->fmt == EXT_OUT_SAM) {
		if (txt->l && hwrite(o->sam->fp.hfile, txt->s, txt->l) != (ssize_t)txt->l)
			return sp_fail("cannot write '%s'", o->path);
		return 0;
	}
	if (o->fmt == EXT_OUT_BAM) {
		emit_t em = { .o = o, .bam = &o->bam, .sam = o->sam };

		return put_batch(&em, b, pr);
	}
	/* a hits stream holds each read's loci as the alignment found them:
	 * a paired run's mates before pairing and rescue (extend --merge pairs
	 * them, over the loci of every partition, as a run of the whole would) */
	for (i = 0, nr = ext_batch_reads(b); i < nr; i++) {
		const rec_read_t *rd = ext_batch_read(b, i);
		const ext_hit_t *h = ext_batch_hits(b, i, &n);

		put_hits(o, rd, h, n);
	}
	return 0;
}

/* Free what O holds but its file. */
static void out_free(ext_out_t *o)
{
	ext_bam_free(&o->bam);
	free(o->rnames);
	free(o->rh);
	free(o->cig);
	free(o);
}

void ext_out_close_or_die(ext_out_t *o)
{
	if (o->w) {
		rec_finish_or_die(o->w);   /* "| head" is no error */
	} else {
		if (sam_close(o->sam) < 0)
			sp_die("cannot write '%s'", o->path);
		sam_hdr_destroy(o->hdr);
	}
	out_free(o);
}

/* An output ended by ext_out_fail, kept (reachable) until the process exits. */
static ext_out_t *ext_out_failed;

void ext_out_fail(ext_out_t *o, const char *msg)
{
	if (o->fmt == EXT_OUT_SAM) {
		/* a last line that is no SAM record (no tab): readers fail on it */
		kstring_t ks = { 0, 0, NULL };
		const char *c;

		ksprintf(&ks, "%s: error: ", sp_progname);
		for (c = msg; *c; c++)
			kputc(*c == '\t' || *c == '\n' ? ' ' : *c, &ks);
		kputs(" (the output is incomplete)\n", &ks);
		/* on a write error the message on stderr is all there is */
		if (hwrite(o->sam->fp.hfile, ks.s, ks.l) != (ssize_t)ks.l)
			ks.l = 0;
		free(ks.s);
		(void)sam_close(o->sam);
		sam_hdr_destroy(o->hdr);
		out_free(o);
		return;
	}
	if (o->fmt == EXT_OUT_BAM) {
		/* the blocks made so far, without the end-of-file marker block
		 * that closing the file would add (samtools quickcheck fails) */
		BGZF *z = o->sam->fp.bgzf;
		if (bgzf_flush(z) == 0 && hflush(z->fp) != 0)
			z->errcode |= BGZF_ERR_IO;
	} else {
		/* what was made so far, without the end block: readers of the
		 * stream report it truncated */
		rec_flush_block(o->w);
	}
	/* not closed (that would end it cleanly): the process exits next */
	ext_out_failed = o;
}
