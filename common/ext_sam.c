/*
 * ext_sam.c - extend's SAM and BAM formatting: the header (@HD, @SQ, the
 * @PG chain of the provenance), a hit's CIGAR text, a read's SAM line made
 * directly as text, and its BAM record made with htslib (the reference the
 * text is tested against).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <htslib/hts.h>
#include <htslib/sam.h>

#include "ext.h"
#include "seqio.h"
#include "util.h"

/* Append the @PG lines of PROV (oldest first), chained by PP, unique IDs. */
static void pg_lines(kstring_t *ks, const rec_prov_t *prov)
{
	size_t it = 0, n = 0, i;
	const char *v;
	char **ids = NULL;

	while ((v = rec_prov_next(prov, REC_PROV_PG, &it))) {
		const char *t1 = strchr(v, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
		char id[128], tool[96];
		size_t tl = t1 ? (size_t)(t1 - v) : strlen(v);
		int dup = 0;

		if (tl >= sizeof tool)
			tl = sizeof tool - 1;
		memcpy(tool, v, tl);
		tool[tl] = 0;
		snprintf(id, sizeof id, "%s", tool[0] ? tool : "pg");
		for (;;) {
			for (i = 0; i < n && strcmp(ids[i], id); i++)
				;
			if (i == n)
				break;
			snprintf(id, sizeof id, "%s.%d", tool[0] ? tool : "pg", ++dup);
		}
		ksprintf(ks, "@PG\tID:%s\tPN:%s", id, tool);
		if (t1)
			kputs("\tVN:", ks), kputsn(t1 + 1, t2 ? (size_t)(t2 - t1 - 1) : strlen(t1 + 1), ks);
		if (n)
			ksprintf(ks, "\tPP:%s", ids[n - 1]);
		if (t2) {
			kputs("\tCL:", ks);
			for (const char *c = t2 + 1; *c; c++)
				kputc(*c == '\t' ? ' ' : *c, ks);
		}
		kputc('\n', ks);
		ids = sp_realloc(ids, (n + 1) * sizeof(char *));
		ids[n++] = sp_strdup(id);
	}
	for (i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
}

void ext_sam_header(kstring_t *ks, const idx_t *x, const rec_prov_t *prov)
{
	uint32_t i;

	kputs("@HD\tVN:1.6\tSO:unsorted\n", ks);
	for (i = 0; i < x->n_seq; i++)
		ksprintf(ks, "@SQ\tSN:%s\tLN:%" PRIu64 "\n", x->names[i], x->len[i]);
	pg_lines(ks, prov);
}

char *ext_cigar_str(const ext_hit_t *h, char *buf, size_t len)
{
	size_t o = 0;
	uint32_t i;

	if (!h->n_cigar) {
		snprintf(buf, len, "*");
		return buf;
	}
	buf[0] = 0;
	for (i = 0; i < h->n_cigar && o < len; i++) {
		int w = snprintf(buf + o, len - o, "%u%c", h->cigar[i] >> 4, "MID"[h->cigar[i] & 3]);
		if (w < 0)
			break;
		o += (size_t)w;
	}
	return buf;
}

/* A read base as SAM writes it after BAM encoding, made once. */
static char ext_sam_base[256];
static pthread_once_t ext_sam_once = PTHREAD_ONCE_INIT;

static void ext_sam_init(void)
{
	unsigned b;

	for (b = 0; b < 256; b++)
		ext_sam_base[b] = seq_nt16_str[seq_nt16_table[b]];
}

static inline char *put_str(char *p, const char *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

void ext_sam_line(kstring_t *ks, const rec_read_t *rd, const ext_hit_t *h, const char *rname,
		const char *md, int secondary)
{
	uint32_t m = rd->seq_len, i;
	int rev = h && h->strand == REC_STRAND_REV;
	unsigned flag = (h ? 0u : 4u) | (rev ? 16u : 0u) | (secondary ? 256u : 0u);
	size_t nl = rd->name_len, rl = h ? strlen(rname) : 0, ml = h ? strlen(md) : 0;
	char *p;

	pthread_once(&ext_sam_once, ext_sam_init);
	if (ks_resize(ks, ks->l + nl + rl + ml + 2 * (size_t)m + 12 * ALIGN_MAX_CIGAR + 160) < 0)
		sp_die("out of memory");
	p = ks->s + ks->l;
	if (!nl) {
		p = sp_put_u64(p, rd->id);
	} else {
		size_t l0;
		if (nl > 254)
			nl = 254;
		l0 = strnlen(rd->name, nl);   /* bam_set1 copies up to a NUL, pads with NULs */
		p = put_str(p, rd->name, l0);
		memset(p, 0, nl - l0);
		p += nl - l0;
	}
	*p++ = '\t';
	p = sp_put_u64(p, flag);
	*p++ = '\t';
	if (h) {
		p = put_str(p, rname, rl);
		*p++ = '\t';
		p = sp_put_u64(p, h->pos + 1);
		*p++ = '\t';
		p = sp_put_u64(p, h->mapq);
		*p++ = '\t';
		if (!h->n_cigar)
			*p++ = '*';
		for (i = 0; i < h->n_cigar; i++) {
			p = sp_put_u64(p, h->cigar[i] >> 4);
			*p++ = "MIDNSHP=XB??????"[h->cigar[i] & 15];
		}
	} else {
		p = put_str(p, "*\t0\t0\t*", 7);
	}
	p = put_str(p, "\t*\t0\t0\t", 7);
	if (!m || secondary) {          /* a secondary record stores no sequence (as razers3) */
		*p++ = '*';
	} else if (rev) {
		for (i = 0; i < m; i++)
			*p++ = ext_sam_base[sp_comp_ascii((uint8_t)rd->seq[m - 1 - i])];
	} else {
		for (i = 0; i < m; i++)
			*p++ = ext_sam_base[(uint8_t)rd->seq[i]];
	}
	*p++ = '\t';
	if (!m || !rd->qual || secondary) {
		*p++ = '*';
	} else {
		for (i = 0; i < m; i++) {
			char q = rev ? rd->qual[m - 1 - i] : rd->qual[i];
			*p++ = (char)((uint8_t)(q >= 33 ? q - 33 : 0) + 33);
		}
	}
	if (h) {
		p = put_str(p, "\tNM:i:", 6);
		p = sp_put_u64(p, h->dist);
		p = put_str(p, "\tMD:Z:", 6);
		p = put_str(p, md, ml);
		p = put_str(p, "\tAS:i:", 6);
		if (h->dist)
			*p++ = '-';
		p = sp_put_u64(p, h->dist);
	}
	*p++ = '\n';
	ks->l = (size_t)(p - ks->s);
	ks->s[ks->l] = 0;
}

/* ---- BAM records (extend -O bam; the reference of ext_sam_line) ---------- */

void ext_bam_free(ext_bam_t *f)
{
	if (f->b)
		bam_destroy1(f->b);
	free(f->qbuf);
	free(f->sbuf);
	free(f->nbuf);
}

int ext_bam_record(ext_bam_t *f, const rec_read_t *rd, const ext_hit_t *h, const char *md,
		int secondary)
{
	uint32_t m = rd->seq_len, i;
	uint16_t flag = 0;
	const char *seq = rd->seq;
	char *qual = NULL;
	size_t nl = rd->name_len;
	const char *name = rd->name;

	if (!f->b)
		f->b = bam_init1();
	if (f->qcap < (size_t)m + 32) {
		f->qcap = (size_t)m + 32;
		f->qbuf = sp_realloc(f->qbuf, f->qcap);
		f->sbuf = sp_realloc(f->sbuf, f->qcap);
		f->nbuf = sp_realloc(f->nbuf, f->qcap > 64 ? f->qcap : 64);
	}
	if (!nl) {
		nl = (size_t)snprintf(f->nbuf, 64, "%" PRIu64, rd->id);
		name = f->nbuf;
	} else if (nl > 254) {
		nl = 254;
	}
	if (!h)
		flag |= BAM_FUNMAP;
	else if (h->strand == REC_STRAND_REV)
		flag |= BAM_FREVERSE;
	if (secondary)
		flag |= BAM_FSECONDARY;
	if (secondary)
		m = 0;          /* a secondary record stores no sequence (ext_sam_line) */
	if (h && h->strand == REC_STRAND_REV) {
		seqio_revcomp(f->sbuf, rd->seq, m);
		seq = f->sbuf;
	}
	if (rd->qual && m) {
		qual = f->qbuf;
		for (i = 0; i < m; i++) {
			char q = (h && h->strand == REC_STRAND_REV) ? rd->qual[m - 1 - i] : rd->qual[i];
			qual[i] = (char)(q >= 33 ? q - 33 : 0);
		}
	}
	if (bam_set1(f->b, nl, name, flag, h ? (int32_t)h->seq : -1, h ? (hts_pos_t)h->pos : -1,
			h ? h->mapq : 0, h ? h->n_cigar : 0, h ? h->cigar : NULL, -1, -1, 0,
			m, seq, qual, 64 + 4 * (size_t)m) < 0)
		return sp_fail("cannot make the SAM record of read '%.*s'", (int)nl, name);
	if (h) {
		if (bam_aux_update_int(f->b, "NM", h->dist) < 0
				|| bam_aux_append(f->b, "MD", 'Z', (int)strlen(md) + 1,
					(const uint8_t *)md) < 0
				|| bam_aux_update_int(f->b, "AS", -(int64_t)h->dist) < 0)
			return sp_fail("cannot make the SAM tags of read '%.*s'", (int)nl, name);
	}
	return 0;
}
