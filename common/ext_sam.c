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

void ext_sam_header(kstring_t *ks, const idx_t *x, const char *rg, const rec_prov_t *prov)
{
	uint32_t i;

	kputs("@HD\tVN:1.6\tSO:unsorted\n", ks);
	for (i = 0; i < x->n_seq; i++)
		ksprintf(ks, "@SQ\tSN:%s\tLN:%" PRIu64 "\n", x->names[i], x->len[i]);
	if (rg)
		kputs(rg, ks), kputc('\n', ks);
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

void ext_sam_rec_init(ext_sam_rec_t *e)
{
	memset(e, 0, sizeof *e);
	e->mapq = e->mq = -1;
	e->tid = e->mtid = -1;
	e->pos = e->mpos = -1;
}

const char *ext_sam_name(const rec_read_t *rd, size_t *len)
{
	size_t nl = rd->name_len;

	if (nl >= 2 && rd->name[nl - 2] == '/' && (rd->name[nl - 1] == '1' || rd->name[nl - 1] == '2'))
		nl -= 2;
	if (nl > 254)
		nl = 254;
	*len = nl;
	return rd->name_len ? rd->name : NULL;
}

void ext_xa_add(kstring_t *ks, const ext_hit_t *h, const char *rname)
{
	char cig[8 * ALIGN_MAX_CIGAR + 8];

	ksprintf(ks, "%s,%c%" PRIu64 ",%s,%u;", rname, h->strand == REC_STRAND_REV ? '-' : '+',
			h->pos + 1, ext_cigar_str(h, cig, sizeof cig), h->dist);
}

/* The integer of an i tag's text S (N bytes) as htslib prints it back: 0 or -1. */
static int tag_int(const char *s, size_t n)
{
	int64_t v = 0;
	size_t i = 0;
	int neg = n && s[0] == '-';

	i = (size_t)neg;
	if (i == n || n - i > 10 || (s[i] == '0' && n - i > 1) || (neg && s[i] == '0'))
		return -1;
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return neg ? (v <= 2147483648LL ? 0 : -1) : (v <= 4294967295LL ? 0 : -1);
}

int ext_comment_is_tags(const char *c, size_t n)
{
	static const char own[] = "NMMDASMCXARGXC";   /* the tags extend writes itself */
	char seen[64][2];
	size_t i = 0, ns = 0, k;

	if (!n)
		return 0;
	while (i <= n) {
		const char *f = c + i, *t = memchr(f, '\t', n - i);
		size_t fl = t ? (size_t)(t - f) : n - i;

		if (fl < 5 || !((f[0] >= 'A' && f[0] <= 'Z') || (f[0] >= 'a' && f[0] <= 'z'))
				|| !((f[1] >= 'A' && f[1] <= 'Z') || (f[1] >= 'a' && f[1] <= 'z')
					|| (f[1] >= '0' && f[1] <= '9')) || f[2] != ':' || f[4] != ':')
			return 0;
		for (k = 5; k < fl; k++)
			if ((uint8_t)f[k] < 32 || (uint8_t)f[k] > 126)
				return 0;
		for (k = 0; k + 1 < sizeof own; k += 2)
			if (f[0] == own[k] && f[1] == own[k + 1])
				return 0;
		for (k = 0; k < ns; k++)
			if (f[0] == seen[k][0] && f[1] == seen[k][1])
				return 0;
		if (ns == 64)
			return 0;
		seen[ns][0] = f[0];
		seen[ns++][1] = f[1];
		switch (f[3]) {
		case 'A': if (fl != 6) return 0; break;
		case 'i': if (tag_int(f + 5, fl - 5) < 0) return 0; break;
		case 'Z': break;
		default: return 0;
		}
		if (!t)
			break;
		i += fl + 1;
	}
	return 1;
}

void ext_sam_line(kstring_t *ks, const rec_read_t *rd, const ext_hit_t *h,
		const char *const *rnames, const char *md, const ext_sam_rec_t *e)
{
	ext_sam_rec_t e0;
	uint32_t m = rd->seq_len, i;
	int rev = h && h->strand == REC_STRAND_REV, secondary;
	unsigned flag;
	size_t nl, rl, ml = h ? strlen(md) : 0, xl, ol;
	const char *name, *rname = NULL, *mrname = NULL;
	int32_t tid;
	char *p;

	if (!e) {
		ext_sam_rec_init(&e0);
		e = &e0;
	}
	secondary = (e->flag & 256u) != 0;
	flag = (h ? 0u : 4u) | (rev ? 16u : 0u) | (e->flag & ~(4u | 16u));
	tid = h ? (int32_t)h->seq : e->tid;
	if (tid >= 0)
		rname = rnames[tid];
	if (e->mtid >= 0)
		mrname = e->mtid == tid ? "=" : rnames[e->mtid];
	name = ext_sam_name(rd, &nl);
	rl = (rname ? strlen(rname) : 0) + (mrname ? strlen(mrname) : 0);
	xl = (e->mc ? strlen(e->mc) : 0) + (e->xa ? strlen(e->xa) : 0) + (e->rg ? strlen(e->rg) : 0);
	ol = e->co ? e->co_len + 8 : 0;
	pthread_once(&ext_sam_once, ext_sam_init);
	if (ks_resize(ks, ks->l + nl + rl + ml + xl + ol + 2 * (size_t)m + 12 * ALIGN_MAX_CIGAR
				+ 240) < 0)
		sp_die("out of memory");
	p = ks->s + ks->l;
	if (!name) {
		p = sp_put_u64(p, rd->id);
	} else {
		size_t l0 = strnlen(name, nl);   /* bam_set1 copies up to a NUL, pads with NULs */
		p = put_str(p, name, l0);
		memset(p, 0, nl - l0);
		p += nl - l0;
	}
	*p++ = '\t';
	p = sp_put_u64(p, flag);
	*p++ = '\t';
	if (rname) {
		p = put_str(p, rname, strlen(rname));
		*p++ = '\t';
		p = sp_put_u64(p, (h ? (uint64_t)h->pos : (uint64_t)e->pos) + 1);
	} else {
		p = put_str(p, "*\t0", 3);
	}
	*p++ = '\t';
	p = sp_put_u64(p, h ? (e->mapq >= 0 ? (unsigned)e->mapq : h->mapq) : 0);
	*p++ = '\t';
	if (!h || !h->n_cigar)
		*p++ = '*';
	for (i = 0; h && i < h->n_cigar; i++) {
		p = sp_put_u64(p, h->cigar[i] >> 4);
		*p++ = "MIDNSHP=XB??????"[h->cigar[i] & 15];
	}
	*p++ = '\t';
	if (mrname) {
		p = put_str(p, mrname, strlen(mrname));
		*p++ = '\t';
		p = sp_put_u64(p, (uint64_t)e->mpos + 1);
	} else {
		p = put_str(p, "*\t0", 3);
	}
	*p++ = '\t';
	if (e->tlen < 0)
		*p++ = '-';
	p = sp_put_u64(p, e->tlen < 0 ? (uint64_t)-e->tlen : (uint64_t)e->tlen);
	*p++ = '\t';
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
	if (e->xa)
		p = put_str(p, "\tXA:Z:", 6), p = put_str(p, e->xa, strlen(e->xa));
	if (e->rg)
		p = put_str(p, "\tRG:Z:", 6), p = put_str(p, e->rg, strlen(e->rg));
	if (e->co && ext_comment_is_tags(e->co, e->co_len)) {
		*p++ = '\t';
		p = put_str(p, e->co, e->co_len);
	} else if (e->co) {
		p = put_str(p, "\tXC:Z:", 6);
		for (i = 0; i < e->co_len; i++)
			*p++ = e->co[i] == '\t' ? ' ' : e->co[i];
	}
	/* MQ and MC last, in the order samtools fixmate appends them */
	if (e->mq >= 0)
		p = put_str(p, "\tMQ:i:", 6), p = sp_put_u64(p, (unsigned)e->mq);
	if (e->mc)
		p = put_str(p, "\tMC:Z:", 6), p = put_str(p, e->mc, strlen(e->mc));
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

/* Append the tags of comment C (N bytes, ext_comment_is_tags) to B: 0 or -1. */
static int comment_tags(bam1_t *b, const char *c, size_t n)
{
	size_t i = 0;

	while (i < n) {
		const char *f = c + i, *t = memchr(f, '\t', n - i);
		size_t fl = t ? (size_t)(t - f) : n - i;
		char tag[2] = { f[0], f[1] }, *v;
		int r;

		if (f[3] == 'A') {
			r = bam_aux_append(b, tag, 'A', 1, (const uint8_t *)f + 5);
		} else if (f[3] == 'i') {
			r = bam_aux_update_int(b, tag, strtoll(f + 5, NULL, 10));
		} else {
			v = sp_malloc(fl - 4);
			memcpy(v, f + 5, fl - 5);
			v[fl - 5] = 0;
			r = bam_aux_append(b, tag, 'Z', (int)(fl - 4), (const uint8_t *)v);
			free(v);
		}
		if (r < 0)
			return -1;
		i += fl + 1;
	}
	return 0;
}

static int aux_z(bam1_t *b, const char *tag, const char *v)
{
	return bam_aux_append(b, tag, 'Z', (int)strlen(v) + 1, (const uint8_t *)v);
}

int ext_bam_record(ext_bam_t *f, const rec_read_t *rd, const ext_hit_t *h, const char *md,
		const ext_sam_rec_t *e)
{
	ext_sam_rec_t e0;
	uint32_t m = rd->seq_len, i;
	uint16_t flag = 0;
	const char *seq = rd->seq;
	char *qual = NULL;
	size_t nl;
	const char *name = ext_sam_name(rd, &nl);
	int rev = h && h->strand == REC_STRAND_REV;

	if (!e) {
		ext_sam_rec_init(&e0);
		e = &e0;
	}
	if (!f->b)
		f->b = bam_init1();
	if (f->qcap < (size_t)m + 32) {
		f->qcap = (size_t)m + 32;
		f->qbuf = sp_realloc(f->qbuf, f->qcap);
		f->sbuf = sp_realloc(f->sbuf, f->qcap);
		f->nbuf = sp_realloc(f->nbuf, f->qcap > 64 ? f->qcap : 64);
	}
	if (!name) {
		nl = (size_t)snprintf(f->nbuf, 64, "%" PRIu64, rd->id);
		name = f->nbuf;
	}
	flag = (uint16_t)(e->flag & ~(unsigned)(BAM_FUNMAP | BAM_FREVERSE));
	if (!h)
		flag |= BAM_FUNMAP;
	else if (rev)
		flag |= BAM_FREVERSE;
	if (flag & BAM_FSECONDARY)
		m = 0;          /* a secondary record stores no sequence (ext_sam_line) */
	if (rev) {
		seqio_revcomp(f->sbuf, rd->seq, m);
		seq = f->sbuf;
	}
	if (rd->qual && m) {
		qual = f->qbuf;
		for (i = 0; i < m; i++) {
			char q = rev ? rd->qual[m - 1 - i] : rd->qual[i];
			qual[i] = (char)(q >= 33 ? q - 33 : 0);
		}
	}
	if (bam_set1(f->b, nl, name, flag, h ? (int32_t)h->seq : e->tid,
			h ? (hts_pos_t)h->pos : e->tid >= 0 ? e->pos : -1,
			h ? (uint8_t)(e->mapq >= 0 ? e->mapq : h->mapq) : 0, h ? h->n_cigar : 0,
			h ? h->cigar : NULL, e->mtid, e->mtid >= 0 ? e->mpos : -1, e->tlen,
			m, seq, qual, 64 + 4 * (size_t)m) < 0)
		return sp_fail("cannot make the SAM record of read '%.*s'", (int)nl, name);
	if (h) {
		if (bam_aux_update_int(f->b, "NM", h->dist) < 0
				|| aux_z(f->b, "MD", md) < 0
				|| bam_aux_update_int(f->b, "AS", -(int64_t)h->dist) < 0)
			return sp_fail("cannot make the SAM tags of read '%.*s'", (int)nl, name);
	}
	if ((e->xa && aux_z(f->b, "XA", e->xa) < 0) || (e->rg && aux_z(f->b, "RG", e->rg) < 0))
		return sp_fail("cannot make the SAM tags of read '%.*s'", (int)nl, name);
	if (e->co && ext_comment_is_tags(e->co, e->co_len)) {
		if (comment_tags(f->b, e->co, e->co_len) < 0)
			return sp_fail("cannot make the SAM tags of read '%.*s'", (int)nl, name);
	} else if (e->co) {
		char *v = sp_malloc(e->co_len + 1);

		for (i = 0; i < e->co_len; i++)
			v[i] = e->co[i] == '\t' ? ' ' : e->co[i];
		v[e->co_len] = 0;
		i = (uint32_t)aux_z(f->b, "XC", v);
		free(v);
		if ((int)i < 0)
			return sp_fail("cannot make the SAM tags of read '%.*s'", (int)nl, name);
	}
	if ((e->mq >= 0 && bam_aux_update_int(f->b, "MQ", e->mq) < 0)
			|| (e->mc && aux_z(f->b, "MC", e->mc) < 0))
		return sp_fail("cannot make the SAM tags of read '%.*s'", (int)nl, name);
	return 0;
}

int ext_rg_parse(const char *arg, char **line, char **id, char *msg, size_t msg_len)
{
	size_t n = strlen(arg), i, o = 0;
	char *l = sp_malloc(n + 1), *f;

	for (i = 0; i < n; i++) {
		if (arg[i] == '\\' && arg[i + 1] == 't') {
			l[o++] = '\t';
			i++;
		} else if (arg[i] == '\\' && arg[i + 1] == '\\') {
			l[o++] = '\\';
			i++;
		} else {
			l[o++] = arg[i];
		}
	}
	l[o] = 0;
	*line = *id = NULL;
	if (strncmp(l, "@RG\t", 4)) {
		snprintf(msg, msg_len, "the read group line must start with '@RG\\t', e.g. "
				"'@RG\\tID:run1\\tSM:sample1'");
		free(l);
		return -1;
	}
	if (strchr(l, '\n') || strchr(l, '\r')) {
		snprintf(msg, msg_len, "the read group line holds a newline");
		free(l);
		return -1;
	}
	for (f = l + 3; f; f = strchr(f + 1, '\t'))
		if (!strncmp(f, "\tID:", 4) && f[4] && f[4] != '\t')
			break;
	if (!f) {
		snprintf(msg, msg_len, "the read group line has no ID field (\\tID:NAME)");
		free(l);
		return -1;
	}
	i = strcspn(f + 4, "\t");
	*id = sp_malloc(i + 1);
	memcpy(*id, f + 4, i);
	(*id)[i] = 0;
	*line = l;
	return 0;
}

int ext_sam_opt_parse(int c, const char *arg, ext_sam_opt_t *so, ext_ins_t *ins, char *msg,
		size_t msg_len)
{
	char *line, *id, why[200];

	switch (c) {
	case 'R':
		if (ext_rg_parse(arg, &line, &id, why, sizeof why) < 0) {
			snprintf(msg, msg_len, "option -R: %s", why);
			return -1;
		}
		ext_sam_opt_free(so);
		so->rg_line = line;
		so->rg_id = id;
		return 1;
	case 'C':
		so->comments = 1;
		return 1;
	case 'I':
		if (ext_ins_parse(arg, ins) < 0) {
			snprintf(msg, msg_len, "option -I: '%s' is not MEAN,SD or MIN,MAX (numbers "
					"of bases)", arg);
			return -1;
		}
		return 1;
	case EXT_OPT_SECONDARY:
		if (strcmp(arg, "tag") && strcmp(arg, "record")) {
			snprintf(msg, msg_len, "option --secondary: unknown mode '%s' (tag or record)",
					arg);
			return -1;
		}
		so->xa = !strcmp(arg, "tag");
		return 1;
	}
	return 0;
}

void ext_sam_opt_free(ext_sam_opt_t *so)
{
	free((char *)so->rg_line);
	free((char *)so->rg_id);
	so->rg_line = so->rg_id = NULL;
}
