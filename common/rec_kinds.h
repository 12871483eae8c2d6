/*
 * rec_kinds.h - record body layouts of each stream kind (reads, candidates,
 * hits, keys): encoders that write straight into a block (rec_begin),
 * zero-copy decoders into views, and the TSV form recview prints.
 *
 * All integers little-endian, read and written byte by byte (no struct
 * punning), no padding except where shown.  Offsets are from the start of
 * the record body (after the u32 body length of rec.h).
 *
 * reads body (24 + name_len + comment_len + seq_len [+ seq_len] bytes)
 *
 *    0        8           12            16        20      24
 *   +--------+-----------+-------------+---------+-------+------+---------+-----+------+
 *   | id u64 | name_len  | comment_len | seq_len | flags | name | comment | seq | qual |
 *   |        | u32       | u32         | u32     | u32   |      |         |     |      |
 *   +--------+-----------+-------------+---------+-------+------+---------+-----+------+
 *   id = 0-based number of the read in the input; flags bit 0
 *   (REC_READ_HAS_QUAL) = qual present (seq_len bytes, FASTQ ASCII); bit 1
 *   (REC_READ_MATE1) = mate 1 of a pair, bit 2 (REC_READ_MATE2) = mate 2,
 *   which must follow its mate 1 at once (not both bits); other bits 0.
 *   seq is ASCII ACGTN.  No NULs are stored.
 *
 * candidates body = a reads body, then
 *
 *   +-----------+--------------------------------------------------+
 *   | ncand u32 | ncand entries, each 2 to 20 bytes (LEB128 varints) |
 *   +-----------+--------------------------------------------------+
 *     entry:  tag = support << 2 | strand << 1 | reset   (varint)
 *             reset 1:  part (varint), seq_id (varint), pos (varint)
 *             reset 0:  pos - previous entry's pos (varint); part and
 *                       seq_id those of the previous entry
 *   strand 0 = forward, 1 = reverse complement; pos is in the part.  The
 *   first entry, and any whose part or seq_id changes or whose pos is below
 *   the previous one, has reset 1.  seedfilt writes a read's candidates
 *   sorted by (part, pos, strand), so most entries take 4 bytes (20 in
 *   format version 1, whose candidates streams this build refuses).
 *
 * hits body = a reads body, then
 *
 *   +----------+------------------------------------------------+
 *   | nhit u32 | nhit entries of 24 + cigar_len bytes:           |
 *   +----------+------------------------------------------------+
 *     entry: 0          4         12          16         18       19     20            24
 *           +----------+---------+-----------+----------+--------+------+-------------+-------+
 *           | seq_id   | pos u64 | score i32 | edit u16 | strand | mapq | cigar_len   | cigar |
 *           | u32      | 0-based |           |          | u8     | u8   | u32         | text  |
 *           +----------+---------+-----------+----------+--------+------+-------------+-------+
 *   pos is 0-based on the reference sequence seq_id; edit = edit distance;
 *   mapq 255 = not available; cigar is SAM CIGAR text (e.g. "3M1I96M").
 *   nhit = 0: the read is unmapped (it is still in the stream).
 *
 * pairs body (56 + qname_len + tname_len + cigar_len bytes): one global
 * alignment of a query against a target (extend --global)
 *
 *    0        8        16     20     24        28        32           36
 *   +--------+--------+------+------+---------+---------+------------+-------+
 *   | qid    | tid    | qlen | tlen | score   | matches | mismatches | ins   |
 *   | u64    | u64    | u32  | u32  | i32     | u32     | u32        | u32   |
 *   +--------+--------+------+------+---------+---------+------------+-------+
 *    40      44          48          52          56
 *   +-------+-----------+-----------+-----------+-------+-------+-------+
 *   | del   | qname_len | tname_len | cigar_len | qname | tname | cigar |
 *   | u32   | u32       | u32       | u32       |       |       | text  |
 *   +-------+-----------+-----------+-----------+-------+-------+-------+
 *   qid, tid = 0-based numbers of the sequences in their inputs; ins = query
 *   bases against no target base (CIGAR I), del = target bases against no
 *   query base (D); the columns are matches + mismatches + ins + del, the
 *   identity matches / columns (100% without columns); cigar uses = X I D.
 *
 * keys body
 *
 *   +-------------+-----+-----------------------------------+
 *   | key_len u32 | key | value (body_len - 4 - key_len)    |
 *   +-------------+-----+-----------------------------------+
 *   both arbitrary bytes.
 */
#ifndef SP_REC_KINDS_H
#define SP_REC_KINDS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rec.h"
#include "seqio.h"

#define REC_READ_FIXED 24
#define REC_READ_HAS_QUAL 1u
#define REC_READ_MATE1 2u        /* mate 1 of a pair: its mate 2 is the next record */
#define REC_READ_MATE2 4u        /* mate 2 of a pair: its mate 1 is the record before */
#define REC_CAND_MAX 20          /* bytes of one candidate entry at most */
#define REC_HIT_FIXED 24
#define REC_STRAND_FWD 0
#define REC_STRAND_REV 1
#define REC_MAPQ_NA 255

/** A read: views into a body (or into a seq_rec_t); strings not NUL-ended. */
typedef struct {
	uint64_t id;
	const char *name, *comment, *seq, *qual; /* qual NULL: none */
	uint32_t name_len, comment_len, seq_len;
	uint8_t mate;                     /* 0 a single read; 1 or 2: mate 1 or 2 of a pair */
} rec_read_t;

/** One candidate diagonal of a read. */
typedef struct {
	uint32_t part, seq_id, pos, support;
	uint8_t strand;
} rec_cand_t;

/**
 * qsort comparator of candidates in seedfilt's order: part, position,
 * strand (seq_id and support are not compared; 0: the same diagonal).
 */
static inline int rec_cand_cmp(const void *pa, const void *pb)
{
	const rec_cand_t *a = pa, *b = pb;

	if (a->part != b->part)
		return a->part < b->part ? -1 : 1;
	if (a->pos != b->pos)
		return a->pos < b->pos ? -1 : 1;
	return (int)a->strand - (int)b->strand;
}

/** View of a candidates body: the read and its encoded candidate list. */
typedef struct {
	rec_read_t read;
	uint32_t n;
	const uint8_t *list, *end;        /* the n entries, checked by rec_cands_decode */
} rec_cands_t;

/** Sequential reader of a decoded candidate list (rec_cands_first). */
typedef struct {
	const uint8_t *p, *end;
	uint32_t left;
	rec_cand_t c;
	int first;                        /* no entry read yet */
} rec_cand_iter_t;

/** One alignment of a read. */
typedef struct {
	uint32_t seq_id;
	uint64_t pos;
	int32_t score;
	uint16_t edit;
	uint8_t strand, mapq;
	const char *cigar;
	uint32_t cigar_len;
} rec_hit_t;

/** View of a hits body: the read, its hits, and an iteration cursor. */
typedef struct {
	rec_read_t read;
	uint32_t n;
	const uint8_t *list, *end, *cur;
} rec_hits_t;

/** One global alignment (views of the names and the CIGAR). */
typedef struct {
	uint64_t qid, tid;
	uint32_t qlen, tlen;
	int32_t score;
	uint32_t matches, mismatches, ins, del;
	const char *qname, *tname, *cigar;
	uint32_t qname_len, tname_len, cigar_len;
} rec_pair_t;

/** View of a keys body. */
typedef struct {
	const uint8_t *key, *val;
	uint32_t key_len, val_len;
} rec_key_t;

/* --- reads ------------------------------------------------------------- */

/** Fill RD as a view of S with number ID (S must outlive RD). */
void rec_read_from_seq(rec_read_t *rd, uint64_t id, const seq_rec_t *s);

/** Encoded size of the reads body of RD. */
size_t rec_read_size(const rec_read_t *rd);

/** Encode RD at DST (rec_read_size bytes); returns the bytes written. */
size_t rec_read_encode(uint8_t *dst, const rec_read_t *rd);

/**
 * Decode the read part at the start of BODY (LEN bytes) into RD; returns
 * the bytes it takes, or 0 if malformed.
 */
size_t rec_read_decode_prefix(const uint8_t *body, size_t len, rec_read_t *rd);

/** Decode a whole reads body; 0 or -1 if malformed. */
int rec_read_decode(const uint8_t *body, size_t len, rec_read_t *rd);

/** Append a reads record to W (encoded in place). */
void rec_put_read(rec_writer_t *w, const rec_read_t *rd);

/* --- candidates ---------------------------------------------------------- */

/** Bytes a candidates body of N candidates takes at most. */
size_t rec_cands_size(const rec_read_t *rd, uint32_t n);

/**
 * Encode a candidates body at DST (room for rec_cands_size bytes); returns
 * the bytes written.
 */
size_t rec_cands_encode(uint8_t *dst, const rec_read_t *rd,
		const rec_cand_t *c, uint32_t n);

/**
 * Decode a candidates body into V, checking that its N entries take exactly
 * the rest of the body (so iterating it cannot fail); 0 or -1 if malformed.
 */
int rec_cands_decode(const uint8_t *body, size_t len, rec_cands_t *v);

/** Start reading the candidates of V in order. */
void rec_cands_first(const rec_cands_t *v, rec_cand_iter_t *it);

/**
 * rec_cands_decode() without the check of the candidate list: the read,
 * the count and the list's bounds into V.  The list must then be read with
 * rec_cands_next_checked(), which does the check on the way (a reader that
 * goes through every list once decodes it once).  Returns 0, or -1 when
 * the read part or the count is malformed.
 */
int rec_cands_view(const uint8_t *body, size_t len, rec_cands_t *v);

/* (internal) the entry decoders, inline for extend's loop */
/* A varint of at most 32 bits (BITS 34 for a tag) at P < END into X; NULL if malformed. */
static inline const uint8_t *rec_var_get_(const uint8_t *p, const uint8_t *end, uint64_t *x,
		unsigned bits)
{
	uint64_t v = 0;
	unsigned sh = 0;

	if (p < end && *p < 0x80) {     /* one byte: most deltas and tags */
		*x = *p;
		return p + 1;
	}
	for (;;) {
		uint8_t b;

		if (p == end || sh >= bits)
			return NULL;
		b = *p++;
		v |= (uint64_t)(b & 0x7f) << sh;
		sh += 7;
		if (!(b & 0x80))
			break;
	}
	if (bits < 64 && v >> bits)
		return NULL;
	*x = v;
	return p;
}

/* One entry at P after PREV (NULL: the first) into C; the next entry, or NULL if malformed. */
static inline const uint8_t *rec_cand_get_(const uint8_t *p, const uint8_t *end, const rec_cand_t *prev,
		rec_cand_t *c)
{
	uint64_t tag, x, y, z;

	if (!(p = rec_var_get_(p, end, &tag, 34)))
		return NULL;
	c->support = (uint32_t)(tag >> 2);
	c->strand = (uint8_t)(tag >> 1 & 1);
	if (tag & 1) {
		if (!(p = rec_var_get_(p, end, &x, 32)) || !(p = rec_var_get_(p, end, &y, 32))
				|| !(p = rec_var_get_(p, end, &z, 32)))
			return NULL;
		c->part = (uint32_t)x;
		c->seq_id = (uint32_t)y;
		c->pos = (uint32_t)z;
		return p;
	}
	if (!prev || !(p = rec_var_get_(p, end, &x, 32)) || x > UINT32_MAX - prev->pos)
		return NULL;
	c->part = prev->part;
	c->seq_id = prev->seq_id;
	c->pos = prev->pos + (uint32_t)x;
	return p;
}

/** The next candidate into C: 1, or 0 after the last. */
static inline int rec_cands_next(rec_cand_iter_t *it, rec_cand_t *c)
{
	if (!it->left)
		return 0;
	/* rec_cands_decode checked the list (its first entry resets): this cannot fail */
	it->p = rec_cand_get_(it->p, it->end, &it->c, c);
	it->c = *c;
	it->left--;
	return 1;
}

/**
 * rec_cands_next() on a list that rec_cands_view() left unchecked: 1 with
 * the next candidate in C; 0 after the last, when the list ends exactly
 * there; -1 when an entry is malformed (the first must reset) or bytes are
 * left after the last.  After -1 every call returns -1.
 */
static inline __attribute__((always_inline)) int rec_cands_next_checked(rec_cand_iter_t *it,
		rec_cand_t *c)
{
	if (!it->p)
		return -1;
	if (!it->left)
		return it->p == it->end ? 0 : -1;
	it->p = rec_cand_get_(it->p, it->end, it->first ? NULL : &it->c, c);
	if (!it->p)
		return -1;
	it->first = 0;
	it->c = *c;
	it->left--;
	return 1;
}

/** Append a candidates record to W. */
void rec_put_cands(rec_writer_t *w, const rec_read_t *rd,
		const rec_cand_t *c, uint32_t n);

/* --- hits ---------------------------------------------------------------- */

/** Encoded size of a hits body. */
size_t rec_hits_size(const rec_read_t *rd, const rec_hit_t *h, uint32_t n);

/** Encode a hits body at DST; returns the bytes written. */
size_t rec_hits_encode(uint8_t *dst, const rec_read_t *rd,
		const rec_hit_t *h, uint32_t n);

/** Decode (and validate) a hits body into V, cursor at the first hit. */
int rec_hits_decode(const uint8_t *body, size_t len, rec_hits_t *v);

/** Next hit of V into H (cigar a view): 1, or 0 after the last. */
int rec_hits_next(rec_hits_t *v, rec_hit_t *h);

/** Append a hits record to W. */
void rec_put_hits(rec_writer_t *w, const rec_read_t *rd,
		const rec_hit_t *h, uint32_t n);

/* --- pairs --------------------------------------------------------------- */

#define REC_PAIR_FIXED 56

/** Encoded size of a pairs body. */
size_t rec_pair_size(const rec_pair_t *p);

/** Encode a pairs body at DST; returns the bytes written. */
size_t rec_pair_encode(uint8_t *dst, const rec_pair_t *p);

/** Decode (and check) a pairs body into P (views into BODY): 0 or -1. */
int rec_pair_decode(const uint8_t *body, size_t len, rec_pair_t *p);

/** Append a pairs record to W. */
void rec_put_pair(rec_writer_t *w, const rec_pair_t *p);

/**
 * The identity of P in hundredths of a percent, rounded half up (10000
 * without columns), as the TSV form prints it.
 */
uint32_t rec_pair_identity(const rec_pair_t *p);

/**
 * Print P as one TSV line (the pairs columns of rec_tsv_header), the form
 * both recview and extend --global write.
 */
void rec_pair_tsv(const rec_pair_t *p, FILE *out);

/**
 * The sort key of a pairs body into K (8 bytes): identity descending, then
 * score descending (strsort -B; equal keys keep their order, which extend
 * writes by query, then target).  0, or -1 if malformed.
 */
int rec_pair_sort_key(const uint8_t *body, size_t len, uint8_t *k);

/* --- keys ---------------------------------------------------------------- */

/** Encoded size of a keys body. */
size_t rec_key_size(size_t key_len, size_t val_len);

/** Encode a keys body at DST; returns the bytes written. */
size_t rec_key_encode(uint8_t *dst, const void *key, size_t key_len,
		const void *val, size_t val_len);

/** Decode a keys body; 0 or -1 if malformed. */
int rec_key_decode(const uint8_t *body, size_t len, rec_key_t *k);

/** Append a keys record to W. */
void rec_put_key(rec_writer_t *w, const void *key, size_t key_len,
		const void *val, size_t val_len);

/* --- text form ----------------------------------------------------------- */

/**
 * Print the TSV column header of KIND ("#id\tname\t...\n") to OUT.
 */
void rec_tsv_header(int kind, FILE *out);

/**
 * Print one record body of KIND as one TSV line.  Text fields are escaped
 * (\t \n \r \\ and other control bytes as \xHH); absent or empty fields
 * print as "*".  Returns 0, or -1 if the body is malformed (nothing
 * printed).
 *
 *   reads       id name comment seq qual
 *   candidates  id name comment seq qual ncand cands
 *               (cands = PART:SEQ:POS:STRAND:SUPPORT,... ; STRAND + or -)
 *   hits        id name comment seq qual nhit hits
 *               (hits = SEQ:POS:STRAND:EDIT:SCORE:MAPQ:CIGAR,...)
 *   keys        key value
 *   pairs       query target qlen tlen score identity matches columns edit cigar
 *               (identity in percent with two decimals, edit = mismatches +
 *               ins + del)
 */
int rec_tsv_record(int kind, const uint8_t *body, uint32_t len, FILE *out);

/** Check that BODY is a well-formed record of KIND: 0 or -1. */
int rec_kind_check(int kind, const uint8_t *body, uint32_t len);

#endif
