/*
 * ext_win.c - the pass-1 windows of a read (the method is in ext.h): its
 * candidate diagonals clipped to their sequence, merged and cut into
 * pieces; with gaps, on the CPU, the windows of a read go through the
 * alignment prefilter (align_pre_read) and only those it lets through
 * become pairs; with --no-gaps, through a popcount bound on the packed
 * reference.  Also the reads as aligned and the windows' bases.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ext_priv.h"
#include "idx_priv.h"
#include "inc_keys.h"
#include "seqio.h"

#define EXT_LO 0x5555555555555555ull

/* Order of a read's spans: strand, sequence, start, end. */
static int span_cmp(const void *a, const void *b)
{
	const ext_span_t *x = a, *y = b;
	int r;

	if ((r = ext_cmp(x->strand, y->strand)) || (r = ext_cmp(x->seq, y->seq))
			|| (r = ext_cmp(x->beg, y->beg)))
		return r;
	return ext_cmp(x->end, y->end);
}

/* Append a window (and its pair) for read R; the bases are filled later. */
void ext_add_win(ext_batch_t *b, uint32_t r, uint8_t strand, uint32_t seq,
		uint64_t beg, uint32_t len, uint32_t end_lo, uint32_t end_hi)
{
	ext_win_t *w;
	align_pair_t *p;

	if (b->w->n_win == b->w->win_cap) {
		size_t c = b->w->win_cap ? b->w->win_cap * 2 : 4096;
		b->w->win = sp_realloc(b->w->win, c * sizeof(ext_win_t));
		b->w->pair = sp_realloc(b->w->pair, c * sizeof(align_pair_t));
		b->w->res = sp_realloc(b->w->res, c * sizeof(align_res_t));
		b->w->win_cap = c;
	}
	w = &b->w->win[b->w->n_win];
	p = &b->w->pair[b->w->n_win];
	w->read = r;
	w->seq = seq;
	w->strand = strand;
	w->beg = beg;
	w->len = len;
	memset(p, 0, sizeof *p);
	p->read_off = b->w->rseq_off[2 * r + strand];
	p->read_len = b->cv[r].read.seq_len;
	p->win_len = len;
	p->end_lo = end_lo;
	p->end_hi = end_hi;
	b->w->n_win++;
}

/* Fill the window bases of every window and set the pairs' offsets; returns the stride. */
size_t ext_fill_wins(ext_batch_t *b, const idx_t *x)
{
	size_t i, tot = 0, stride = 1;

	for (i = 0; i < b->w->n_win; i++) {
		tot += b->w->win[i].len;
		if (b->w->win[i].len > stride)
			stride = b->w->win[i].len;
	}
	grow(&b->w->wins, &b->w->wins_cap, tot ? tot : 1, 1);
	for (i = 0, tot = 0; i < b->w->n_win; i++) {
		b->w->pair[i].win_off = tot;
		ext_ref_ascii(x, b->w->win[i].beg, b->w->win[i].len, b->w->wins + tot);
		tot += b->w->win[i].len;
	}
	return stride;
}

/*
 * --no-gaps prefilter.  A read of m bases packed 2 bits a base, 32 a word
 * (base i at bits 2 (i mod 32) of word i / 32), hw = (m + 31) / 32 words,
 * followed by hw words
 * with bit 2 (i mod 32) set where base i is not ACGT:
 *
 *     pk[0 .. hw)            codes (N as A)
 *     pk[hw .. 2 hw)         N bits (low bit of each base's pair)
 *
 * REV packs the reverse complement of SEQ.  Only the (m + 31) / 32 words
 * of each half that ham_possible reads are written.
 */
static void ham_pack(const uint8_t *seq, uint32_t m, int rev, uint64_t *pk)
{
	uint32_t k, i, j;

	if (m > ALIGN_MAX_READ)
		m = ALIGN_MAX_READ;
	for (k = 0, i = 0; i < m; k++) {      /* only the words ham_possible reads */
		uint64_t code = 0, nb = 0;
		for (j = 0; j < 64 && i < m; j += 2, i++) {
			uint64_t c = sp_nt4_codes[seq[rev ? m - 1 - i : i]];
			if (rev)
				c = c > 3 ? 4 : 3 - c;
			code |= (c & 3) << j;
			nb |= (c >> 2) << j;
		}
		pk[k] = code;
		pk[(m + 31) / 32 + k] = nb;
	}
}

/* Bases G..G+31 of the packed reference, base G in the low bits (idx_ref_word). */
static inline uint64_t ref_word(const uint8_t *pack, uint64_t g)
{
	uint64_t v;
	unsigned sh = (unsigned)(g & 3) * 2;

	memcpy(&v, pack + (g >> 2), 8);
	if (sh)
		v = v >> sh | (uint64_t)pack[(g >> 2) + 8] << (64 - sh);
	return v;
}

/* Set bits of V, which has them at even positions only. */
static inline unsigned pop_even(uint64_t v)
{
	v = (v & 0x3333333333333333ull) + ((v >> 2) & 0x3333333333333333ull);
	v = (v + (v >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (unsigned)((v * 0x0101010101010101ull) >> 56);
}

/*
 * Whether some diagonal of the window [WB, WE) may hold the read (PK, M
 * bases) within A substitutions.  Counts mismatches against the packed
 * reference, where N reads as A: a lower bound of the true count (the core
 * counts N as a mismatch), so a window it rejects holds no hit.
 */
static int ham_possible(const idx_t *x, const uint64_t *pk, uint32_t m, uint64_t wb,
		uint64_t we, unsigned a)
{
	uint64_t d;
	uint32_t nw = (m + 31) / 32, k;

	for (d = wb; d + m <= we; d++) {
		unsigned mm = 0;
		for (k = 0; k < nw && mm <= a; k++) {
			uint32_t left = m - 32 * k;
			uint64_t mask = left >= 32 ? ~0ull : (1ull << (2 * left)) - 1;
			uint64_t v = ref_word(x->pack, d + 32 * (uint64_t)k) ^ pk[k];
			v = ((v | v >> 1) & EXT_LO) | pk[nw + k];
			mm += pop_even(v & mask);
		}
		if (mm <= a)
			return 1;
	}
	return 0;
}

/* Reads as aligned: each read forward and reverse-complemented. */
void ext_prep_reads(ext_batch_t *b, int hpk)
{
	size_t i, tot = 0;

	b->w->rseq_off = sp_realloc(b->w->rseq_off, (2 * b->n + 1) * sizeof(size_t));
	b->w->rseq_off_cap = 2 * b->n + 1;
	for (i = 0; i < b->n; i++) {
		b->w->rseq_off[2 * i] = tot;
		b->w->rseq_off[2 * i + 1] = tot + b->cv[i].read.seq_len;
		tot += 2 * (size_t)b->cv[i].read.seq_len;
	}
	b->w->rseq_off[2 * b->n] = tot;
	grow(&b->w->rseq, &b->w->rseq_cap, tot ? tot : 1, 1);
	for (i = 0; i < b->n; i++) {
		const rec_read_t *rd = &b->cv[i].read;
		memcpy(b->w->rseq + b->w->rseq_off[2 * i], rd->seq, rd->seq_len);
		seqio_revcomp((char *)b->w->rseq + b->w->rseq_off[2 * i + 1], rd->seq, rd->seq_len);
	}
	if (!hpk)
		return;
	/* packed when first needed (ham_read): most reads have windows on one strand */
	grow(&b->w->hpk_off, &b->w->hpk_off_cap, b->n ? b->n : 1, sizeof(size_t));
	for (i = 0, tot = 0; i < b->n; i++) {
		uint32_t m = b->cv[i].read.seq_len;
		b->w->hpk_off[i] = tot;
		tot += 4 * (size_t)(((m < ALIGN_MAX_READ ? m : ALIGN_MAX_READ) + 31) / 32);
	}
	grow(&b->w->hpk, &b->w->hpk_cap, tot ? tot : 1, sizeof(uint64_t));
	grow(&b->w->hpk_set, &b->w->hpk_set_cap, b->n ? b->n : 1, 1);
	memset(b->w->hpk_set, 0, b->n);
}


/* Read R's strand STRAND packed for ham_possible. */
static const uint64_t *ham_read(ext_batch_t *b, uint32_t r, unsigned strand)
{
	uint32_t m = b->cv[r].read.seq_len;
	uint64_t *pk = b->w->hpk + b->w->hpk_off[r] + 2 * (size_t)((m + 31) / 32) * strand;

	if (!(b->w->hpk_set[r] & (1u << strand))) {
		ham_pack((const uint8_t *)b->cv[r].read.seq, b->cv[r].read.seq_len, (int)strand, pk);
		b->w->hpk_set[r] |= (uint8_t)(1u << strand);
	}
	return pk;
}

/*
 * Ask for the reference bytes of read R's first candidates ahead of use:
 * the windows of one read are far from the last read's, so each would
 * otherwise wait for memory.
 */
void ext_prefetch_ref(const ext_batch_t *b, const idx_t *x, size_t r)
{
	const rec_cands_t *v = &b->cv[r];
	rec_cand_iter_t it;
	rec_cand_t c;
	uint32_t i;

	rec_cands_first(v, &it);
	for (i = 0; i < 4 && rec_cands_next_checked(&it, &c) > 0; i++) {
		if (c.part < x->n_part) {
			uint64_t g = x->part[c.part].beg + c.pos;
			if (g < x->total)
				__builtin_prefetch(x->pack + (g >> 2));
		}
	}
}


/* -1, with the message that read V's candidate list is malformed. */
int ext_bad_cands(const rec_cands_t *v, char *msg, size_t msg_len)
{
	snprintf(msg, msg_len, "read '%.*s': malformed candidates record", (int)v->read.name_len,
			v->read.name);
	return -1;
}

/*
 * N pass-1 windows of read R, strand ST, sequences SEQ[k], WIN_LEN bases
 * from OFF[k], through the prefilter: pairs are made of those with an end
 * within A, and of all when the vector pass does not take the shape; the
 * others are only counted.  A window in the packed reference reads N as A,
 * which only adds matches: where the prefilter finds no end, the ASCII
 * window has none either.
 */
static void pre_group(ext_batch_t *b, const idx_t *x, const ext_opt_t *o, uint32_t r,
		unsigned st, const uint64_t *off, const uint32_t *seq, size_t n, uint32_t win_len)
{
	size_t k;

	if (!b->w->pre)
		b->w->pre = align_pre_ws_new();
	grow(&b->w->pre_yes, &b->w->pre_yes_cap, n ? n : 1, 1);
	if (align_pre_read(b->w->pre, b->w->rseq + b->w->rseq_off[2 * r + st], b->cv[r].read.seq_len,
				x->pack, off, n, win_len, o->max_a, b->w->pre_yes) < 0)
		memset(b->w->pre_yes, 1, n);
	for (k = 0; k < n; k++) {
		if (b->w->pre_yes[k]) {
			ext_add_win(b, r, (uint8_t)st, seq[k], off[k], win_len, 0, 0);
		} else {
			b->w->pre_windows++;
			b->w->pre_bases += win_len;
		}
	}
}

/*
 * The other pass-1 windows of read R, B->pc[0..NPC) (of merged spans, or
 * clipped at a sequence end), through pre_group by strand and length.
 */
static void pre_windows(ext_batch_t *b, const idx_t *x, const ext_opt_t *o, uint32_t r,
		size_t npc)
{
	size_t i, j, k, q, nn;

	grow(&b->w->pc_off, &b->w->pc_off_cap, npc, sizeof(uint64_t));
	grow(&b->w->pc_seq, &b->w->pc_seq_cap, npc, sizeof(uint32_t));
	grow(&b->w->pc_done, &b->w->pc_done_cap, npc, 1);
	memset(b->w->pc_done, 0, npc);
	for (i = 0; i < npc; i = j) {
		unsigned st = b->w->pc[i].strand;
		for (j = i; j < npc && b->w->pc[j].strand == st; j++)
			;
		for (k = i; k < j; k++) {
			uint32_t len = b->w->pc[k].len;
			if (b->w->pc_done[k])
				continue;
			for (q = k, nn = 0; q < j; q++)
				if (b->w->pc[q].len == len) {
					b->w->pc_done[q] = 1;
					b->w->pc_off[nn] = b->w->pc[q].beg;
					b->w->pc_seq[nn++] = b->w->pc[q].seq;
				}
			pre_group(b, x, o, r, st, b->w->pc_off, b->w->pc_seq, nn, len);
		}
	}
}

int ext_cand_at(const idx_t *x, uint64_t g, unsigned strand, rec_cand_t *c)
{
	/* the last sequence starting at or before G */
	uint32_t lo = (uint32_t)sp_last_le(x->off, x->n_seq, sizeof *x->off, 0, g), p;

	if (!x->n_seq || g < x->off[lo] || g >= x->off[lo] + x->len[lo])
		return -1;
	for (p = 0; p < x->n_part; p++)
		if (x->part[p].beg <= g && g < x->part[p].end)
			break;
	if (p == x->n_part)
		return -1;
	memset(c, 0, sizeof *c);
	c->part = p;
	c->seq_id = lo;
	c->pos = (uint32_t)(g - x->part[p].beg);
	c->support = 1;
	c->strand = (uint8_t)strand;
	return 0;
}

void ext_cands_sort(rec_cand_t *c, size_t n)
{
	qsort(c, n, sizeof *c, rec_cand_cmp);
}

/* Whether candidate C lies in X (its part, its sequence, on a strand). */
static int cand_in(const idx_t *x, const rec_cand_t *c)
{
	return c->part < x->n_part && c->seq_id < x->n_seq && c->strand <= 1
		&& x->part[c->part].beg + c->pos < x->part[c->part].end
		&& x->part[c->part].beg + c->pos >= x->off[c->seq_id]
		&& x->part[c->part].beg + c->pos < x->off[c->seq_id] + x->len[c->seq_id];
}

/* -1, with the message that candidate C of read V lies outside the index. */
static int bad_cand(const rec_cands_t *v, const rec_cand_t *c, char *msg, size_t msg_len)
{
	snprintf(msg, msg_len, "read '%.*s': candidate %u:%u:%u lies outside "
			"the index (was the stream made with another index?)",
			(int)v->read.name_len, v->read.name, c->part, c->seq_id, c->pos);
	return -1;
}

static int key_cmp(const void *a, const void *b)
{
	return ext_cmp(*(const uint64_t *)a, *(const uint64_t *)b);
}

/*
 * The decoding and the check are kernels/inc_keys.h's, the kernel
 * align_keys's: an entry that resets (part, sequence, position) is checked
 * in full and gives the end of what its part and sequence share; an entry
 * by delta then only has to stay before that end (its position grows).
 * The forward strand's keys go first, the reverse ones after them:
 * seedfilt's order (part, position, strand) then leaves each strand's keys
 * in order, and the strand is the keys' top bit.
 */
int ext_read_keys(ext_batch_t *b, const idx_t *x, const align_dev_t *dev, uint32_t r,
		char *msg, size_t msg_len)
{
	const rec_cands_t *v = &b->cv[r];
	const uint64_t *pb, *se;
	size_t n0 = b->w->n_key;
	uint32_t nf = 0, bad[3], len = (uint32_t)(v->end - v->list);
	uint64_t *key;
	int rc;

	if ((size_t)(v->end - v->list) > UINT32_MAX)
		return ext_bad_cands(v, msg, msg_len);
	align_dev_tables(dev, &pb, &se);
	grow(&b->w->ckey, &b->w->ckey_cap, n0 + 2 * (size_t)v->n + 1, sizeof(uint64_t));
	key = b->w->ckey + n0;
	/* one pass, the reverse keys from KEY[N] and then moved behind the
	 * forward ones; the reference's end is align_dev_cut's check (its
	 * message) */
	rc = sp_keys_read(v->list, 0, len, v->n, pb, x->n_part, x->off, se, x->n_seq, UINT64_MAX,
			key, &nf, 2, bad);
	if ((rc == KEYS_OK || rc == KEYS_UNSORTED) && nf < v->n)
		memmove(key + nf, key + v->n, (v->n - nf) * sizeof *key);
	if (rc == KEYS_MALFORMED)
		return ext_bad_cands(v, msg, msg_len);
	if (rc == KEYS_OUTSIDE) {
		rec_cand_t c = { .part = bad[0], .seq_id = bad[1], .pos = bad[2] };
		return bad_cand(v, &c, msg, msg_len);
	}
	if (rc == KEYS_UNSORTED)
		qsort(key, v->n, sizeof *key, key_cmp);
	b->w->n_key = n0 + v->n;
	return 0;
}

/* Pass 1 windows of read R; -1 with a message on a candidate outside X. */
int ext_read_windows(ext_batch_t *b, const idx_t *x, const ext_opt_t *o, uint32_t r,
		char *msg, size_t msg_len)
{
	const rec_cands_t *v = &b->cv[r];
	uint64_t m = v->read.seq_len, a = o->max_a;
	uint32_t i, ns = 0;

	rec_cand_iter_t it;
	rec_cand_t c;
	uint32_t nr = 0;
	/* gapped, on the CPU: windows are first collected and put through the
	 * prefilter here, and only those it lets through become pairs */
	int pre = !o->nogaps && !o->ocl;
	size_t npc = 0, nsw[2] = { 0, 0 };
	uint64_t l0 = m + 2 * a;   /* the window of a lone candidate */

	/* one decoding pass: forward spans from 0 up, reverse ones from v->n - 1
	 * down, then put in order behind the forward ones (v->n spans in all:
	 * one read's 848,812 candidates took 2 x 24 bytes each, rounded up to a
	 * power of two, in every aligning thread); seedfilt's order (partition,
	 * position, strand) then usually leaves nothing to sort */
	if (v->n > b->w->span_cap) {
		b->w->span_cap = v->n + v->n / 8 + 64;
		b->w->span = sp_realloc(b->w->span, b->w->span_cap * sizeof(ext_span_t));
	}
	/* the lone windows (pre_group's) of both strands in one array: the
	 * spans are in strand order, and each gives at most one */
	if (pre && v->n > b->w->sw_cap) {
		b->w->sw_cap = v->n + v->n / 8 + 64;
		b->w->sw_off = sp_realloc(b->w->sw_off, b->w->sw_cap * sizeof(uint64_t));
		b->w->sw_seq = sp_realloc(b->w->sw_seq, b->w->sw_cap * sizeof(uint32_t));
	}
	rec_cands_first(v, &it);
	for (;;) {
		uint64_t g, sb, se;
		ext_span_t *sp;
		int rc = rec_cands_next_checked(&it, &c);

		if (rc == 0)
			break;
		if (rc < 0) {
			return ext_bad_cands(v, msg, msg_len);
		}

		if (!cand_in(x, &c))
			return bad_cand(v, &c, msg, msg_len);
		g = x->part[c.part].beg + c.pos;
		sb = x->off[c.seq_id];
		se = sb + x->len[c.seq_id];
		sp = c.strand ? &b->w->span[v->n - 1 - nr++] : &b->w->span[ns++];
		sp->beg = g >= sb + a ? g - a : sb;
		sp->end = g + m + a < se ? g + m + a : se;
		sp->seq = c.seq_id;
		sp->strand = c.strand;
	}
	for (i = 0; i < nr / 2; i++) {   /* the reverse ones back in decoding order */
		ext_span_t t = b->w->span[v->n - nr + i];
		b->w->span[v->n - nr + i] = b->w->span[v->n - 1 - i];
		b->w->span[v->n - 1 - i] = t;
	}
	if (nr && ns != v->n - nr)
		memmove(&b->w->span[ns], &b->w->span[v->n - nr], nr * sizeof(ext_span_t));
	ns += nr;
	for (i = 1; i < ns; i++) {      /* span_cmp's order, inline: usually already so */
		const ext_span_t *u = &b->w->span[i - 1], *w = &b->w->span[i];
		if (u->strand != w->strand ? u->strand > w->strand : u->seq != w->seq ? u->seq > w->seq
				: u->beg != w->beg ? u->beg > w->beg : u->end > w->end)
			break;
	}
	if (i < ns)
		qsort(b->w->span, ns, sizeof(ext_span_t), span_cmp);
	for (i = 0; i < ns;) {
		ext_span_t s;
		/* --no-gaps: ham_possible's first load of a span misses the cache
		 * (short reads: a few hundred candidates, at random places); ask
		 * for the bases of the span 8 ahead */
		if (o->nogaps && i + 8 < ns)
			__builtin_prefetch(x->pack + (b->w->span[i + 8].beg >> 2));
		s = b->w->span[i++];
		/* every end column is exact in some piece: pieces overlap by m - 1 + A */
		uint64_t cut = m - 1 + a < EXT_WIN / 2 ? EXT_WIN
			: 4 * (m + a) < ALIGN_MAX_WIN ? 4 * (m + a) : ALIGN_MAX_WIN;
		uint64_t p, step = cut - (m - 1 + a);

		/* scalars, not the struct: gcc compared (seq, strand) through a
		 * stack copy, a store-forwarding stall on every merged span */
		const uint32_t s_seq = s.seq;
		const unsigned s_strand = s.strand;
		uint64_t s_end = s.end;

		while (i < ns && b->w->span[i].beg <= s_end && b->w->span[i].seq == s_seq
				&& b->w->span[i].strand == s_strand) {
			if (b->w->span[i].end > s_end)
				s_end = b->w->span[i].end;
			i++;
		}
		s.end = s_end;
		if (m > a && s.end - s.beg + a < m)
			continue;       /* too short to hold the read within A */
		for (p = s.beg;; p += step) {
			uint64_t e = p + cut < s.end ? p + cut : s.end;
			if (pre && e - p == l0 && nsw[0] + nsw[1] < b->w->sw_cap) {
				b->w->sw_off[nsw[0] + nsw[1]] = p;
				b->w->sw_seq[nsw[0] + nsw[1]] = s_seq;
				nsw[s_strand]++;
			} else if (pre) {
				ext_win_t *w;
				grow(&b->w->pc, &b->w->pc_cap, npc + 1, sizeof(ext_win_t));
				w = &b->w->pc[npc++];
				w->read = r;
				w->seq = s.seq;
				w->strand = s.strand;
				w->beg = p;
				w->len = (uint32_t)(e - p);
			} else if (!o->nogaps || ham_possible(x, ham_read(b, r, s.strand), (uint32_t)m,
						p, e, o->max_a)) {
				ext_add_win(b, r, s.strand, s.seq, p, (uint32_t)(e - p), 0, 0);
			}
			if (e == s.end)
				break;
		}
	}
	if (pre) {
		unsigned st;
		for (st = 0; st < 2; st++)
			if (nsw[st])
				pre_group(b, x, o, r, st, b->w->sw_off + (st ? nsw[0] : 0),
						b->w->sw_seq + (st ? nsw[0] : 0), nsw[st], (uint32_t)l0);
		if (npc)
			pre_windows(b, x, o, r, npc);
	}
	return 0;
}

/* The bytes W's buffers take (their capacities; -M's accounting). */
size_t ext_ws_bytes(const ext_ws_t *w)
{
	if (!w)
		return 0;
	return w->rseq_cap + w->win_cap * (sizeof(ext_win_t) + sizeof(align_pair_t)
			+ sizeof(align_res_t)) + w->wins_cap + w->ends_cap + w->cends_cap
		+ w->span_cap * sizeof(ext_span_t) + w->endv_cap * sizeof(ext_end_t)
		+ w->hpk_cap * sizeof(uint64_t) + w->hpk_off_cap * sizeof(size_t) + w->hpk_set_cap
		+ w->dmap_cap * sizeof(size_t) + w->dpair_cap * sizeof(align_pair_t)
		+ w->dres_cap * sizeof(align_res_t) + w->dends_cap
		+ w->dwin_cap * sizeof(align_dwin_t) + w->ddist_cap * sizeof(int32_t)
		+ w->eoff_cap * sizeof(uint32_t) + w->wins2_cap + w->win_beg_cap * sizeof(size_t)
		+ w->hexact_cap + w->sw_cap * (sizeof(uint64_t) + sizeof(uint32_t))
		+ w->pc_cap * sizeof(ext_win_t) + w->pc_off_cap * sizeof(uint64_t)
		+ w->pc_seq_cap * sizeof(uint32_t) + w->pc_done_cap + w->pre_yes_cap
		+ w->ckey_cap * sizeof(uint64_t) + w->coff_cap * sizeof(uint32_t)
		+ w->loff_cap * sizeof(uint64_t) + w->lists_cap
		+ (w->dhit_cap + w->dhit2_cap) * sizeof(align_dhit_t) + w->dcnt_cap * sizeof(size_t)
		+ w->rseq_off_cap * sizeof(size_t);
}
