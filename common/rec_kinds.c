/*
 * rec_kinds.c - body codecs of the stream kinds and their TSV form (layouts
 * drawn in rec_kinds.h).  Encoders write little-endian bytes with memcpy
 * for the strings; decoders check every length against the body before
 * handing out views.
 */
#include "rec_kinds.h"

#include <string.h>

#include "sp_le.h"
#include "util.h"

/* --- reads --------------------------------------------------------------- */

void rec_read_from_seq(rec_read_t *rd, uint64_t id, const seq_rec_t *s)
{
	if (s->name_len > UINT32_MAX || s->comment_len > UINT32_MAX || s->seq_len > UINT32_MAX)
		sp_die("read '%s' is too long for a reads stream", s->name);
	rd->id = id;
	rd->name = s->name;
	rd->name_len = (uint32_t)s->name_len;
	rd->comment = s->comment ? s->comment : "";
	rd->comment_len = s->comment ? (uint32_t)s->comment_len : 0;
	rd->seq = s->seq;
	rd->seq_len = (uint32_t)s->seq_len;
	rd->qual = s->qual;
	rd->mate = 0;
}

size_t rec_read_size(const rec_read_t *rd)
{
	return REC_READ_FIXED + (size_t)rd->name_len + rd->comment_len +
		(size_t)rd->seq_len * (rd->qual ? 2 : 1);
}

size_t rec_read_encode(uint8_t *dst, const rec_read_t *rd)
{
	uint8_t *p = dst + REC_READ_FIXED;

	sp_st64(dst, rd->id);
	sp_st32(dst + 8, rd->name_len);
	sp_st32(dst + 12, rd->comment_len);
	sp_st32(dst + 16, rd->seq_len);
	sp_st32(dst + 20, (rd->qual ? REC_READ_HAS_QUAL : 0) | (rd->mate == 1 ? REC_READ_MATE1 : 0)
			| (rd->mate == 2 ? REC_READ_MATE2 : 0));
	/* fields may be NULL when empty: memcpy(p, NULL, 0) is undefined */
	if (rd->name_len)
		memcpy(p, rd->name, rd->name_len);
	p += rd->name_len;
	if (rd->comment_len)
		memcpy(p, rd->comment, rd->comment_len);
	p += rd->comment_len;
	if (rd->seq_len)
		memcpy(p, rd->seq, rd->seq_len);
	p += rd->seq_len;
	if (rd->qual && rd->seq_len) {
		memcpy(p, rd->qual, rd->seq_len);
		p += rd->seq_len;
	}
	return (size_t)(p - dst);
}

size_t rec_read_decode_prefix(const uint8_t *body, size_t len, rec_read_t *rd)
{
	uint32_t flags;
	uint64_t need;
	const char *p;

	if (len < REC_READ_FIXED)
		return 0;
	rd->id = sp_ld64(body);
	rd->name_len = sp_ld32(body + 8);
	rd->comment_len = sp_ld32(body + 12);
	rd->seq_len = sp_ld32(body + 16);
	flags = sp_ld32(body + 20);
	if ((flags & ~(REC_READ_HAS_QUAL | REC_READ_MATE1 | REC_READ_MATE2))
			|| (flags & REC_READ_MATE1 && flags & REC_READ_MATE2))
		return 0;
	rd->mate = flags & REC_READ_MATE1 ? 1 : flags & REC_READ_MATE2 ? 2 : 0;
	need = (uint64_t)REC_READ_FIXED + rd->name_len + rd->comment_len +
		(uint64_t)rd->seq_len * (flags & REC_READ_HAS_QUAL ? 2 : 1);
	if (need > len)
		return 0;
	p = (const char *)body + REC_READ_FIXED;
	rd->name = p;
	p += rd->name_len;
	rd->comment = p;
	p += rd->comment_len;
	rd->seq = p;
	p += rd->seq_len;
	rd->qual = flags & REC_READ_HAS_QUAL ? p : NULL;
	return (size_t)need;
}

int rec_read_decode(const uint8_t *body, size_t len, rec_read_t *rd)
{
	size_t n = rec_read_decode_prefix(body, len, rd);

	return n && n == len ? 0 : -1;
}

void rec_put_read(rec_writer_t *w, const rec_read_t *rd)
{
	size_t n = rec_read_size(rd);

	rec_read_encode(rec_begin(w, n), rd);
	rec_commit(w, n);
}

/* --- candidates ---------------------------------------------------------- */

size_t rec_cands_size(const rec_read_t *rd, uint32_t n)
{
	return rec_read_size(rd) + 4 + (size_t)n * REC_CAND_MAX;
}

static inline uint8_t *put_var(uint8_t *p, uint64_t x)
{
	while (x >= 0x80) {
		*p++ = (uint8_t)(x | 0x80);
		x >>= 7;
	}
	*p++ = (uint8_t)x;
	return p;
}

/* LEB128 length of a u32 by the bit number of its highest set bit (of x | 1). */
static const uint8_t var_len[32] = {
	1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3,
	4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5
};

/*
 * put_var for X < 2^32 without a branch on its length: the 1 to 5 bytes
 * are made in a word and written with one 8-byte store, so P needs 8
 * bytes of room.
 */
static inline uint8_t *put_var32(uint8_t *p, uint32_t x32)
{
	uint64_t x = x32;
	uint64_t v = (x & 0x7f) | (x << 1 & 0x7f00) | (x << 2 & 0x7f0000)
		| (x << 3 & 0x7f000000) | (x << 4 & 0x7f00000000);
	uint32_t len = var_len[31 - __builtin_clz(x32 | 1)];

	v |= 0x8080808080ULL & ((1ULL << (8 * (len - 1))) - 1);   /* continuation bits */
	sp_st64(p, v);
	return p + len;
}

/*
 * The common entry (seedfilt's sorted lists): a one-byte tag and a delta.
 * The delta starts at most 5 bytes into its entry, so put_var32's 8-byte
 * store stays within the REC_CAND_MAX bytes reserved for the entry.
 */
size_t rec_cands_encode(uint8_t *dst, const rec_read_t *rd,
		const rec_cand_t *c, uint32_t n)
{
	uint8_t *p = dst + rec_read_encode(dst, rd);
	uint32_t i;

	sp_st32(p, n);
	p += 4;
	for (i = 0; i < n; i++) {
		int reset = i == 0 || c[i].part != c[i - 1].part || c[i].seq_id != c[i - 1].seq_id
			|| c[i].pos < c[i - 1].pos;
		uint64_t tag = (uint64_t)c[i].support << 2 | (uint64_t)(c[i].strand & 1) << 1
			| (uint64_t)reset;

		if (tag < 0x80)
			*p++ = (uint8_t)tag;
		else
			p = put_var(p, tag);
		if (reset) {
			p = put_var(p, c[i].part);
			p = put_var(p, c[i].seq_id);
			p = put_var(p, c[i].pos);
		} else {
			p = put_var32(p, c[i].pos - c[i - 1].pos);
		}
	}
	return (size_t)(p - dst);
}

int rec_cands_decode(const uint8_t *body, size_t len, rec_cands_t *v)
{
	rec_cand_iter_t it;
	rec_cand_t c;
	int rc;

	if (rec_cands_view(body, len, v) < 0)
		return -1;
	rec_cands_first(v, &it);
	while ((rc = rec_cands_next_checked(&it, &c)) > 0)
		;
	return rc;
}

void rec_cands_first(const rec_cands_t *v, rec_cand_iter_t *it)
{
	it->p = v->list;
	it->end = v->end;
	it->left = v->n;
	memset(&it->c, 0, sizeof it->c);
	it->first = 1;
}

int rec_cands_view(const uint8_t *body, size_t len, rec_cands_t *v)
{
	size_t k = rec_read_decode_prefix(body, len, &v->read);

	if (!k || len - k < 4)
		return -1;
	v->n = sp_ld32(body + k);
	v->list = body + k + 4;
	v->end = body + len;
	return v->n > (len - k - 4) / 2 ? -1 : 0;   /* an entry takes 2 bytes at least */
}

void rec_put_cands(rec_writer_t *w, const rec_read_t *rd,
		const rec_cand_t *c, uint32_t n)
{
	size_t sz = rec_cands_size(rd, n);

	rec_commit(w, rec_cands_encode(rec_begin(w, sz), rd, c, n));
}

/* --- hits ---------------------------------------------------------------- */

size_t rec_hits_size(const rec_read_t *rd, const rec_hit_t *h, uint32_t n)
{
	size_t s = rec_read_size(rd) + 4;
	uint32_t i;

	for (i = 0; i < n; i++)
		s += REC_HIT_FIXED + h[i].cigar_len;
	return s;
}

size_t rec_hits_encode(uint8_t *dst, const rec_read_t *rd,
		const rec_hit_t *h, uint32_t n)
{
	uint8_t *p = dst + rec_read_encode(dst, rd);
	uint32_t i;

	sp_st32(p, n);
	p += 4;
	for (i = 0; i < n; i++) {
		sp_st32(p, h[i].seq_id);
		sp_st64(p + 4, h[i].pos);
		sp_st32(p + 12, (uint32_t)h[i].score);
		sp_st16(p + 16, h[i].edit);
		p[18] = h[i].strand;
		p[19] = h[i].mapq;
		sp_st32(p + 20, h[i].cigar_len);
		memcpy(p + REC_HIT_FIXED, h[i].cigar, h[i].cigar_len);
		p += REC_HIT_FIXED + h[i].cigar_len;
	}
	return (size_t)(p - dst);
}

int rec_hits_decode(const uint8_t *body, size_t len, rec_hits_t *v)
{
	size_t k = rec_read_decode_prefix(body, len, &v->read);
	const uint8_t *p, *end = body + len;
	uint32_t i;

	if (!k || len - k < 4)
		return -1;
	v->n = sp_ld32(body + k);
	p = v->list = v->cur = body + k + 4;
	for (i = 0; i < v->n; i++) {
		uint32_t cl;

		if ((size_t)(end - p) < REC_HIT_FIXED)
			return -1;
		cl = sp_ld32(p + 20);
		if (cl > (size_t)(end - p) - REC_HIT_FIXED)
			return -1;
		p += REC_HIT_FIXED + cl;
	}
	if (p != end)
		return -1;
	v->end = end;
	return 0;
}

int rec_hits_next(rec_hits_t *v, rec_hit_t *h)
{
	const uint8_t *p = v->cur;

	if (p >= v->end)
		return 0;
	h->seq_id = sp_ld32(p);
	h->pos = sp_ld64(p + 4);
	h->score = (int32_t)sp_ld32(p + 12);
	h->edit = sp_ld16(p + 16);
	h->strand = p[18];
	h->mapq = p[19];
	h->cigar_len = sp_ld32(p + 20);
	h->cigar = (const char *)p + REC_HIT_FIXED;
	v->cur = p + REC_HIT_FIXED + h->cigar_len;
	return 1;
}

void rec_put_hits(rec_writer_t *w, const rec_read_t *rd,
		const rec_hit_t *h, uint32_t n)
{
	size_t sz = rec_hits_size(rd, h, n);

	rec_hits_encode(rec_begin(w, sz), rd, h, n);
	rec_commit(w, sz);
}

/* --- pairs --------------------------------------------------------------- */

size_t rec_pair_size(const rec_pair_t *p)
{
	return REC_PAIR_FIXED + (size_t)p->qname_len + p->tname_len + p->cigar_len;
}

/* the u32 words of a pair's fixed part, from byte 16 on (rec_kinds.h) */
static const size_t pair_words[] = {
	offsetof(rec_pair_t, qlen), offsetof(rec_pair_t, tlen), offsetof(rec_pair_t, score),
	offsetof(rec_pair_t, matches), offsetof(rec_pair_t, mismatches),
	offsetof(rec_pair_t, ins), offsetof(rec_pair_t, del), offsetof(rec_pair_t, qname_len),
	offsetof(rec_pair_t, tname_len), offsetof(rec_pair_t, cigar_len)
};
#define PAIR_N_WORDS (sizeof pair_words / sizeof *pair_words)
_Static_assert(16 + 4 * PAIR_N_WORDS == REC_PAIR_FIXED, "a pair's fixed part");

size_t rec_pair_encode(uint8_t *dst, const rec_pair_t *p)
{
	uint8_t *o = dst + REC_PAIR_FIXED;

	sp_st64(dst, p->qid);
	sp_st64(dst + 8, p->tid);
	sp_st32_fields(dst + 16, p, pair_words, PAIR_N_WORDS);
	if (p->qname_len)
		memcpy(o, p->qname, p->qname_len);
	o += p->qname_len;
	if (p->tname_len)
		memcpy(o, p->tname, p->tname_len);
	o += p->tname_len;
	if (p->cigar_len)
		memcpy(o, p->cigar, p->cigar_len);
	return REC_PAIR_FIXED + (size_t)p->qname_len + p->tname_len + p->cigar_len;
}

int rec_pair_decode(const uint8_t *body, size_t len, rec_pair_t *p)
{
	const char *c = (const char *)body + REC_PAIR_FIXED;

	if (len < REC_PAIR_FIXED)
		return -1;
	p->qid = sp_ld64(body);
	p->tid = sp_ld64(body + 8);
	sp_ld32_fields(p, body + 16, pair_words, PAIR_N_WORDS);
	if ((uint64_t)REC_PAIR_FIXED + p->qname_len + p->tname_len + p->cigar_len != len)
		return -1;
	/* the columns must add up to the lengths */
	if ((uint64_t)p->matches + p->mismatches + p->ins != p->qlen
			|| (uint64_t)p->matches + p->mismatches + p->del != p->tlen)
		return -1;
	p->qname = c;
	p->tname = c + p->qname_len;
	p->cigar = c + p->qname_len + p->tname_len;
	return 0;
}

void rec_put_pair(rec_writer_t *w, const rec_pair_t *p)
{
	size_t n = rec_pair_size(p);

	rec_pair_encode(rec_begin(w, n), p);
	rec_commit(w, n);
}

uint32_t rec_pair_identity(const rec_pair_t *p)
{
	uint64_t cols = (uint64_t)p->matches + p->mismatches + p->ins + p->del;

	return cols ? (uint32_t)(((uint64_t)p->matches * 20000 + cols) / (2 * cols)) : 10000;
}

/* --- keys ---------------------------------------------------------------- */

size_t rec_key_size(size_t key_len, size_t val_len)
{
	return 4 + key_len + val_len;
}

size_t rec_key_encode(uint8_t *dst, const void *key, size_t key_len,
		const void *val, size_t val_len)
{
	sp_st32(dst, (uint32_t)key_len);
	memcpy(dst + 4, key, key_len);
	memcpy(dst + 4 + key_len, val, val_len);
	return 4 + key_len + val_len;
}

int rec_key_decode(const uint8_t *body, size_t len, rec_key_t *k)
{
	if (len < 4)
		return -1;
	k->key_len = sp_ld32(body);
	if (k->key_len > len - 4)
		return -1;
	k->key = body + 4;
	k->val = body + 4 + k->key_len;
	k->val_len = (uint32_t)(len - 4 - k->key_len);
	return 0;
}

void rec_put_key(rec_writer_t *w, const void *key, size_t key_len,
		const void *val, size_t val_len)
{
	size_t n = rec_key_size(key_len, val_len);

	if (key_len > UINT32_MAX)
		sp_die("key of %zu bytes is too long", key_len);
	rec_key_encode(rec_begin(w, n), key, key_len, val, val_len);
	rec_commit(w, n);
}

/* --- text form ----------------------------------------------------------- */

void rec_tsv_header(int kind, FILE *out)
{
	switch (kind) {
	case REC_KIND_READS:
		fputs("#id\tname\tcomment\tseq\tqual\n", out);
		break;
	case REC_KIND_CANDIDATES:
		fputs("#id\tname\tcomment\tseq\tqual\tncand\tcands(part:seq:pos:strand:support)\n", out);
		break;
	case REC_KIND_HITS:
		fputs("#id\tname\tcomment\tseq\tqual\tnhit\thits(seq:pos:strand:edit:score:mapq:cigar)\n", out);
		break;
	case REC_KIND_KEYS:
		fputs("#key\tvalue\n", out);
		break;
	case REC_KIND_PAIRS:
		fputs("query\ttarget\tqlen\ttlen\tscore\tidentity\tmatches\tcolumns\tedit\tcigar\n", out);
		break;
	}
}

/* Escaped text field; "*" when empty. */
static void put_field(const char *s, size_t n, FILE *out)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, run = 0;

	if (n == 0) {
		putc_unlocked('*', out);
		return;
	}
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c != '\\' && c < 0x7f)
			continue;
		fwrite_unlocked(s + run, 1, i - run, out);
		run = i + 1;
		putc_unlocked('\\', out);
		switch (c) {
		case '\t': putc_unlocked('t', out); break;
		case '\n': putc_unlocked('n', out); break;
		case '\r': putc_unlocked('r', out); break;
		case '\\': putc_unlocked('\\', out); break;
		default:
			putc_unlocked('x', out);
			putc_unlocked(hex[c >> 4], out);
			putc_unlocked(hex[c & 15], out);
		}
	}
	fwrite_unlocked(s + run, 1, n - run, out);
}

static void put_read(const rec_read_t *rd, FILE *out)
{
	fprintf(out, "%llu\t", (unsigned long long)rd->id);
	put_field(rd->name, rd->name_len, out);
	putc_unlocked('\t', out);
	put_field(rd->comment, rd->comment_len, out);
	putc_unlocked('\t', out);
	put_field(rd->seq, rd->seq_len, out);
	putc_unlocked('\t', out);
	put_field(rd->qual ? rd->qual : "", rd->qual ? rd->seq_len : 0, out);
}

void rec_pair_tsv(const rec_pair_t *p, FILE *out)
{
	uint32_t id = rec_pair_identity(p);

	put_field(p->qname, p->qname_len, out);
	putc_unlocked('\t', out);
	put_field(p->tname, p->tname_len, out);
	fprintf(out, "\t%u\t%u\t%d\t%u.%02u\t%u\t%llu\t%llu\t", p->qlen, p->tlen, p->score,
			id / 100, id % 100, p->matches,
			(unsigned long long)p->matches + p->mismatches + p->ins + p->del,
			(unsigned long long)p->mismatches + p->ins + p->del);
	put_field(p->cigar, p->cigar_len, out);
	putc_unlocked('\n', out);
}

int rec_pair_sort_key(const uint8_t *body, size_t len, uint8_t *k)
{
	rec_pair_t p;
	uint64_t cols;
	uint32_t id, sc;

	if (rec_pair_decode(body, len, &p) < 0)
		return -1;
	cols = (uint64_t)p.matches + p.mismatches + p.ins + p.del;
	id = cols ? (uint32_t)((uint64_t)p.matches * 1000000 / cols) : 1000000;
	id = ~id;
	sc = ~((uint32_t)p.score ^ 0x80000000u);
	k[0] = (uint8_t)(id >> 24);
	k[1] = (uint8_t)(id >> 16);
	k[2] = (uint8_t)(id >> 8);
	k[3] = (uint8_t)id;
	k[4] = (uint8_t)(sc >> 24);
	k[5] = (uint8_t)(sc >> 16);
	k[6] = (uint8_t)(sc >> 8);
	k[7] = (uint8_t)sc;
	return 0;
}

int rec_tsv_record(int kind, const uint8_t *body, uint32_t len, FILE *out)
{
	rec_read_t rd;
	rec_cands_t cv;
	rec_hits_t hv;
	rec_key_t kv;
	rec_pair_t pv;
	rec_cand_t c;
	rec_cand_iter_t ci;
	rec_hit_t h;
	uint32_t i;

	switch (kind) {
	case REC_KIND_READS:
		if (rec_read_decode(body, len, &rd) < 0)
			return -1;
		put_read(&rd, out);
		break;
	case REC_KIND_CANDIDATES:
		if (rec_cands_decode(body, len, &cv) < 0)
			return -1;
		put_read(&cv.read, out);
		fprintf(out, "\t%u\t", cv.n);
		if (cv.n == 0)
			putc_unlocked('*', out);
		rec_cands_first(&cv, &ci);
		for (i = 0; rec_cands_next(&ci, &c); i++) {
			fprintf(out, "%s%u:%u:%u:%c:%u", i ? "," : "", c.part, c.seq_id,
					c.pos, c.strand ? '-' : '+', c.support);
		}
		break;
	case REC_KIND_HITS:
		if (rec_hits_decode(body, len, &hv) < 0)
			return -1;
		put_read(&hv.read, out);
		fprintf(out, "\t%u\t", hv.n);
		if (hv.n == 0)
			putc_unlocked('*', out);
		for (i = 0; rec_hits_next(&hv, &h); i++) {
			fprintf(out, "%s%u:%llu:%c:%u:%d:%u:", i ? "," : "", h.seq_id,
					(unsigned long long)h.pos, h.strand ? '-' : '+',
					h.edit, h.score, h.mapq);
			put_field(h.cigar, h.cigar_len, out);
		}
		break;
	case REC_KIND_KEYS:
		if (rec_key_decode(body, len, &kv) < 0)
			return -1;
		put_field((const char *)kv.key, kv.key_len, out);
		putc_unlocked('\t', out);
		put_field((const char *)kv.val, kv.val_len, out);
		break;
	case REC_KIND_PAIRS:
		if (rec_pair_decode(body, len, &pv) < 0)
			return -1;
		rec_pair_tsv(&pv, out);
		return 0;
	default:
		return -1;
	}
	putc_unlocked('\n', out);
	return 0;
}

int rec_kind_check(int kind, const uint8_t *body, uint32_t len)
{
	rec_read_t rd;
	rec_cands_t cv;
	rec_hits_t hv;
	rec_key_t kv;
	rec_pair_t pv;

	switch (kind) {
	case REC_KIND_READS: return rec_read_decode(body, len, &rd);
	case REC_KIND_CANDIDATES: return rec_cands_decode(body, len, &cv);
	case REC_KIND_HITS: return rec_hits_decode(body, len, &hv);
	case REC_KIND_KEYS: return rec_key_decode(body, len, &kv);
	case REC_KIND_PAIRS: return rec_pair_decode(body, len, &pv);
	}
	return -1;
}
