/*
 * ext_batch.c - extend's batches (the method is in ext.h): the reads of a
 * batch copied in, pass 1 over their windows (ext_win.c), the loci of the
 * end positions within A, pass 2 tracing each locus back, and the hits of
 * each read in order with their MAPQ.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ext_priv.h"
#include "idx_priv.h"

ext_batch_t *ext_batch_new(void)
{
	return sp_calloc(1, sizeof(ext_batch_t));
}

void ext_batch_free(ext_batch_t *b)
{
#define B(f) offsetof(ext_batch_t, f)
	static const size_t own[] = {
		B(arena), B(cv), B(hit_beg), B(n_hits), B(hits), B(md)
	};
#undef B

	if (b)
		ext_ws_free(b->own);
	ext_free_owned(b, own, sizeof own / sizeof *own);
}

size_t ext_batch_bytes(const ext_batch_t *b)
{
	return b->arena_cap + b->cap * (sizeof(rec_cands_t) + sizeof(size_t) + sizeof(uint32_t))
		+ b->hit_cap * sizeof(ext_hit_t) + b->md_cap + ext_ws_bytes(b->own);
}

ext_ws_t *ext_ws_new(void)
{
	return sp_calloc(1, sizeof(ext_ws_t));
}

void ext_ws_free(ext_ws_t *w)
{
#define W(f) offsetof(ext_ws_t, f)
	static const size_t own[] = {
		W(rseq), W(rseq_off), W(win), W(pair), W(res), W(wins), W(ends), W(cends), W(span), W(endv), W(hpk),
		W(hpk_set), W(hpk_off), W(dmap), W(dpair), W(dres), W(dends), W(pc), W(pc_off), W(pc_seq),
		W(pc_done), W(pre_yes), W(hexact), W(ddist), W(wins2), W(dwin), W(eoff), W(win_beg),
		W(sw_off), W(sw_seq), W(ckey), W(coff), W(loff), W(lists),
		W(dhit), W(dhit2), W(dcnt)
	};
#undef W

	if (w)
		align_pre_ws_free(w->pre);
	ext_free_owned(w, own, sizeof own / sizeof *own);
}

void ext_batch_clear(ext_batch_t *b)
{
	b->n = 0;
	b->arena_len = 0;
	b->n_cands = 0;
	b->max_cands = 0;
	b->n_hit = 0;
	b->md_len = 0;
}

/* Move the pointers of V from a copy at OLD to one at NEW (the arena moved). */
static void rebase(rec_cands_t *v, uintptr_t old, uintptr_t new)
{
#define REBASE(p) do { if (p) (p) = (const void *)((uintptr_t)(p) - old + new); } while (0)
	REBASE(v->read.name);
	REBASE(v->read.comment);
	REBASE(v->read.seq);
	REBASE(v->read.qual);
	REBASE(v->list);
	REBASE(v->end);
#undef REBASE
}

int ext_batch_add(ext_batch_t *b, const uint8_t *body, uint32_t len)
{
	if (b->n == b->cap) {
		size_t c = b->cap ? b->cap * 2 : 1024;
		b->cv = sp_realloc(b->cv, c * sizeof(rec_cands_t));
		b->cap = c;
	}
	/* an arena even for an empty body (which the view then refuses): the
	 * copy and the view take a pointer into it */
	if (!b->arena || b->arena_len + len > b->arena_cap) {
		uintptr_t old = (uintptr_t)b->arena;
		size_t i;
		grow(&b->arena, &b->arena_cap, b->arena_len + (len ? len : 1), 1);
		for (i = 0; old != (uintptr_t)b->arena && i < b->n; i++)
			rebase(&b->cv[i], old, (uintptr_t)b->arena);
	}
	/* the copy is decoded: its views stay valid in the arena; the list is
	 * checked as ext_read_windows goes through it (one decoding pass) */
	memcpy(b->arena + b->arena_len, body, len);
	if (rec_cands_view(b->arena + b->arena_len, len, &b->cv[b->n]) < 0)
		return -1;
	b->arena_len += len;
	b->n_cands += b->cv[b->n].n;
	if (b->cv[b->n].n > b->max_cands)
		b->max_cands = b->cv[b->n].n;
	b->n++;
	return 0;
}

size_t ext_batch_reads(const ext_batch_t *b)
{
	return b->n;
}

uint64_t ext_batch_cands(const ext_batch_t *b)
{
	return b->n_cands;
}

uint64_t ext_batch_cands_max(const ext_batch_t *b)
{
	return b->max_cands;
}

const rec_read_t *ext_batch_read(const ext_batch_t *b, size_t i)
{
	return &b->cv[i].read;
}

const ext_hit_t *ext_batch_hits(const ext_batch_t *b, size_t i, uint32_t *n)
{
	*n = b->n_hits[i];
	return b->hits + b->hit_beg[i];
}

const char *ext_hit_md(const ext_batch_t *b, const ext_hit_t *h)
{
	return b->md + h->md_off;
}

uint8_t ext_mapq(uint32_t n1, int has_d2, uint32_t d1, uint32_t d2)
{
	if (n1 > 1)         /* several equally good loci: 0, as bwa */
		return 0;
	if (!has_d2)
		return EXT_MAPQ_UNIQUE;
	return (uint8_t)(20 * (d2 - d1) < EXT_MAPQ_UNIQUE ? 20 * (d2 - d1) : EXT_MAPQ_UNIQUE);
}

/* Order of the ends of a read: strand, sequence, end, distance, the exact first. */
static int end_cmp(const void *a, const void *b)
{
	const ext_end_t *x = a, *y = b;
	int r;

	if ((r = ext_cmp(x->strand, y->strand)) || (r = ext_cmp(x->seq, y->seq))
			|| (r = ext_cmp(x->e, y->e)) || (r = ext_cmp(x->d, y->d)))
		return r;
	return ext_cmp(y->exact, x->exact);
}

int ext_hit_cmp(const void *a, const void *b)
{
	const ext_hit_t *x = a, *y = b;
	int r;

	if ((r = ext_cmp(x->dist, y->dist)) || (r = ext_cmp(x->seq, y->seq))
			|| (r = ext_cmp(x->pos, y->pos)) || (r = ext_cmp(x->strand, y->strand))
			|| (r = ext_cmp(x->n_cigar, y->n_cigar)))
		return r;
	return memcmp(x->cigar, y->cigar, x->n_cigar * sizeof(uint32_t));
}

/* Order of the same-start merge: strand, sequence, position, distance, CIGAR runs, end. */
static int start_cmp(const void *a, const void *b)
{
	const ext_hit_t *x = a, *y = b;
	int r;

	if ((r = ext_cmp(x->strand, y->strand)) || (r = ext_cmp(x->seq, y->seq))
			|| (r = ext_cmp(x->pos, y->pos)) || (r = ext_cmp(x->dist, y->dist))
			|| (r = ext_cmp(x->n_cigar, y->n_cigar)))
		return r;
	return ext_cmp(x->end, y->end);
}

/* Run the core on N pairs PAIR of READS/WINS (WINS_LEN bytes) into RES and ENDS. */
static int run_pairs(ext_batch_t *b, const ext_opt_t *o, const uint8_t *wins, size_t wins_len,
		const align_pair_t *pair, size_t n, unsigned flags, uint8_t *ends, size_t stride,
		align_res_t *res, char *msg, size_t msg_len)
{
	if (!n)
		return 0;
	if (o->ocl) {
		size_t rlen = b->w->rseq_off[2 * b->n];
		cl_int err = align_batch_ocl(o->ocl, b->w->rseq, rlen ? rlen : 1, wins,
				wins_len ? wins_len : 1, pair, n, o->max_a, flags,
				ends, stride, res, msg, msg_len);
		return err == CL_SUCCESS ? 0 : -1;
	}
	return align_batch(b->w->rseq, wins, pair, n, o->max_a, flags, o->n_threads,
			ends, stride, res, msg, msg_len);
}

/* Run the core on the windows of B (ASCII, as ext_fill_wins made them). */
static int run_core(ext_batch_t *b, const ext_opt_t *o, unsigned flags, size_t stride,
		size_t wins_len, char *msg, size_t msg_len)
{
	uint8_t *ends = NULL;

	if (!b->w->n_win)
		return 0;
	if (flags & ALIGN_ENDS) {
		grow(&b->w->ends, &b->w->ends_cap, b->w->n_win * stride, 1);
		ends = b->w->ends;
	}
	return run_pairs(b, o, b->w->wins, wins_len, b->w->pair, b->w->n_win, flags, ends, stride,
			b->w->res, msg, msg_len);
}

/* Make B->dpair[ND] a copy of pair K of the batch, for run_mapped. */
static void map_pair(ext_batch_t *b, size_t nd, size_t k)
{
	grow(&b->w->dmap, &b->w->dmap_cap, nd + 1, sizeof(size_t));
	grow(&b->w->dpair, &b->w->dpair_cap, nd + 1, sizeof(align_pair_t));
	b->w->dmap[nd] = k;
	b->w->dpair[nd] = b->w->pair[k];
}

/*
 * Copy the windows [FROM, TO) that touch an N run (with ONLY_HIT, only those
 * with a pass-1 hit, ddist >= 0) from the reference in ASCII into B->w->wins,
 * their pairs through map_pair; returns their count, their bytes in *TOT.
 */
static size_t map_ascii_wins(ext_batch_t *b, const idx_t *x, size_t from, size_t to, int only_hit,
		size_t *tot)
{
	size_t i, nd = 0, t = 0;

	for (i = from; i < to; i++) {
		if ((only_hit && b->w->ddist[i] < 0)
				|| idx_range_clean(x, b->w->win[i].beg, b->w->win[i].len))
			continue;
		grow(&b->w->wins, &b->w->wins_cap, t + b->w->win[i].len, 1);
		map_pair(b, nd, i);
		b->w->dpair[nd++].win_off = t;
		ext_ref_ascii(x, b->w->win[i].beg, b->w->win[i].len, b->w->wins + t);
		t += b->w->win[i].len;
	}
	*tot = t;
	return nd;
}

/*
 * Run the core on the ND pairs B->dpair (of windows WINS, WINS_LEN bytes)
 * that map_pair took from the batch, and put each result in the place of
 * the pair it came from (with ALIGN_ENDS its ends row too, in ROWS, whose
 * first row is that of window FIRST).
 */
static int run_mapped(ext_batch_t *b, const ext_opt_t *o, const uint8_t *wins, size_t wins_len,
		size_t nd, unsigned flags, size_t stride, uint8_t *rows, size_t first, char *msg,
		size_t msg_len)
{
	size_t i;
	uint8_t *ends = NULL;

	if (!nd)
		return 0;
	grow(&b->w->dres, &b->w->dres_cap, nd, sizeof(align_res_t));
	if (flags & ALIGN_ENDS) {
		grow(&b->w->dends, &b->w->dends_cap, nd * stride, 1);
		ends = b->w->dends;
	}
	if (run_pairs(b, o, wins, wins_len, b->w->dpair, nd, flags, ends, stride, b->w->dres,
			msg, msg_len) < 0)
		return -1;
	for (i = 0; i < nd; i++) {
		b->w->res[b->w->dmap[i]] = b->w->dres[i];
		if (ends)
			memcpy(rows + (b->w->dmap[i] - first) * stride, ends + i * stride, stride);
	}
	return 0;
}

/* Pass 1 of all B's windows at once (the device of the old path: OCL, no DEV). */
static size_t run_pass1_whole(ext_batch_t *b, const idx_t *x, const ext_opt_t *o,
		unsigned flags, size_t stride, char *msg, size_t msg_len)
{
	size_t nd, tot = 0;

	grow(&b->w->ends, &b->w->ends_cap, b->w->n_win * stride, 1);
	if (run_pairs(b, o, x->pack, (x->total + 3) / 4, b->w->pair, b->w->n_win, flags | ALIGN_PACKED,
			b->w->ends, stride, b->w->res, msg, msg_len) < 0)
		return 0;
	/* the windows with N, again from ASCII */
	nd = map_ascii_wins(b, x, 0, b->w->n_win, 0, &tot);
	return run_mapped(b, o, b->w->wins, tot, nd, flags, stride, b->w->ends, 0, msg, msg_len) < 0
		? 0 : stride;
}

/*
 * Pass 1 straight from the 2-bit packed reference (no copy): each pair's
 * window offset is its global position.  The packed reference holds N as
 * A, so the windows touching an N run are aligned again from ASCII copies
 * and their results put in place.  Returns the stride, or 0 on error.
 *
 * On the CPU the windows go through in chunks whose ends rows take at most
 * EXT_P1_ROWS bytes (B->w->cends), and only the rows of windows with a hit
 * are kept, packed in B->w->ends at B->w->eoff[k] (rows_hit): a read with
 * 10^5 candidates made n_win x stride bytes of rows at once (67 MB for
 * P. falciparum's most repetitive read, in each aligning thread), of
 * which the loci read those of the few windows with a hit.
 */
static size_t run_pass1(ext_batch_t *b, const idx_t *x, const ext_opt_t *o, unsigned flags,
		char *msg, size_t msg_len)
{
	size_t i, i0, stride = 1, len = 0;

	for (i = 0; i < b->w->n_win; i++) {
		if (b->w->win[i].len > stride)
			stride = b->w->win[i].len;
		b->w->pair[i].win_off = b->w->win[i].beg;
	}
	if (o->ocl)
		return run_pass1_whole(b, x, o, flags, stride, msg, msg_len);
	size_t chunk = EXT_P1_ROWS / stride ? EXT_P1_ROWS / stride : 1;

	grow(&b->w->cends, &b->w->cends_cap, (b->w->n_win < chunk ? b->w->n_win : chunk) * stride, 1);
	grow(&b->w->eoff, &b->w->eoff_cap, b->w->n_win + 1, sizeof(uint32_t));
	for (i0 = 0; i0 < b->w->n_win; i0 += chunk) {
		size_t n = b->w->n_win - i0 < chunk ? b->w->n_win - i0 : chunk, nd, tot;

		if (run_pairs(b, o, x->pack, (x->total + 3) / 4, b->w->pair + i0, n,
					flags | ALIGN_PACKED, b->w->cends, stride, b->w->res + i0, msg,
					msg_len) < 0)
			return 0;
		/* the windows with N, again from ASCII */
		nd = map_ascii_wins(b, x, i0, i0 + n, 0, &tot);
		if (run_mapped(b, o, b->w->wins, tot, nd, flags, stride, b->w->cends, i0, msg,
					msg_len) < 0)
			return 0;
		/* the rows of the windows with a hit (the loci read no other) */
		for (i = i0; i < i0 + n; i++) {
			if (b->w->res[i].dist < 0)
				continue;
			if (len + b->w->win[i].len > UINT32_MAX) {
				snprintf(msg, msg_len, "pass 1: the ends rows of a batch's windows with a "
						"hit exceed 4 GiB: give a smaller -B");
				return 0;
			}
			grow(&b->w->ends, &b->w->ends_cap, len + b->w->win[i].len, 1);
			b->w->eoff[i] = (uint32_t)len;
			memcpy(b->w->ends + len, b->w->cends + (i - i0) * stride, b->w->win[i].len);
			len += b->w->win[i].len;
		}
	}
	b->w->rows_hit = 1;
	return stride;
}

/*
 * Pass 1 on the device (ext_batch_dev): the windows' distances and the
 * packed ends rows of those with a hit.  The windows touching an N run are
 * aligned again from ASCII copies, here on the CPU, but only those with a
 * hit: the packed reference reads N as A, which only adds matches, so a
 * window without an end within A there has none in ASCII either.  A
 * window's ASCII row (no longer than its packed one) goes in its place, its
 * distance in B->w->ddist (RES is not used: pass 1 of the device reads the
 * distances from DDIST).
 */
static int pass1_rows(ext_batch_t *b, const idx_t *x, const ext_opt_t *o, unsigned flags,
		char *msg, size_t msg_len)
{
	size_t i, tot, stride = b->w->stride, nd = map_ascii_wins(b, x, 0, b->w->n_win, 1, &tot);

	if (!nd)
		return 0;
	grow(&b->w->dres, &b->w->dres_cap, nd, sizeof(align_res_t));
	grow(&b->w->dends, &b->w->dends_cap, nd * stride, 1);
	if (align_batch(b->w->rseq, b->w->wins, b->w->dpair, nd, o->max_a, flags, 1, b->w->dends,
				stride, b->w->dres, msg, msg_len) < 0)
		return -1;
	for (i = 0; i < nd; i++) {
		size_t k = b->w->dmap[i];
		b->w->ddist[k] = b->w->dres[i].dist;
		if (b->w->dres[i].dist >= 0)
			memcpy(b->w->ends + b->w->eoff[k], b->w->dends + i * stride, b->w->win[k].len);
	}
	return 0;
}

/*
 * Mismatches of READ against WIN (M bases each; N matches nothing, as in
 * the core).  WIN is ext_ref_ascii's (A, C, G, T and N): eight bytes equal
 * to the read's and none of them N are eight matches, compared at once.
 */
static uint32_t ext_mismatches(const uint8_t *read, const uint8_t *win, uint32_t m)
{
	const uint64_t ones = 0x0101010101010101ull, ns = 0x4e * ones;
	uint32_t i = 0, mm = 0;

	for (;;) {
		uint32_t end = m;
		for (; i + 8 <= m; i += 8) {
			uint64_t r8, w8, v;
			memcpy(&r8, read + i, 8);
			memcpy(&w8, win + i, 8);
			v = w8 ^ ns;   /* a zero byte where WIN holds an N */
			if (r8 != w8 || ((v - ones) & ~v & 0x80 * ones)) {
				end = i + 8;
				break;
			}
		}
		for (; i < end; i++) {
			unsigned c = sp_nt4_codes[read[i]];
			mm += c > 3 || c != sp_nt4_codes[win[i]];
		}
		if (i >= m)
			return mm;
	}
}

/*
 * Pass 2 on the CPU: the windows (one per locus, ending at its best end e
 * with pass 1's distance d) go to the core, but for the ungapped ones.
 * When d is unclipped (hexact: the pass-2 window's D[m][e], since no
 * alignment within A that ends at e starts left of the pass-1 window) and
 * the diagonal ending at e has exactly d mismatches (U(i) over rows 1..i),
 * then D[i][e-m+i] = U(i) on every row (<= by the diagonal path, >= as
 * D[m][e] <= D[i][e-m+i] + U(m) - U(i)), so the core's traceback, which
 * tries M first, walks the diagonal: its result is m M from e - m + 1.
 * n_ends is not the core's there (extend reads no n_ends of pass 2).
 * pass2_plan makes those results and returns how many windows are left
 * for the core (B->dpair, B->dmap).
 */
static size_t pass2_plan(ext_batch_t *b)
{
	size_t k, nd = 0;

	for (k = 0; k < b->w->n_win; k++) {
		const align_pair_t *p = &b->w->pair[k];
		uint32_t m = p->read_len, n = p->win_len;
		if (b->w->hexact[k] && n >= m && ext_mismatches(b->w->rseq + p->read_off,
					b->w->wins + p->win_off + (n - m), m) == b->hits[k].dist) {
			align_res_t *r = &b->w->res[k];
			sp_align_clear(r, (int)b->hits[k].dist);
			r->start = n - m;
			r->end = n - 1;
			r->n_ends = 1;
			r->n_cigar = 1;
			r->cigar[0] = m << 4 | SP_CIGAR_M;
			continue;
		}
		map_pair(b, nd++, k);
	}
	return nd;
}

/*
 * Copy the windows of the ND pairs B->dpair into B->wins2, back to back,
 * and point the pairs there: the device gets those alone, not every
 * locus's window.  Returns their length.
 */
static size_t pass2_pack(ext_batch_t *b, size_t nd)
{
	size_t i, tot = 0;

	for (i = 0; i < nd; i++)
		tot += b->w->dpair[i].win_len;
	grow(&b->w->wins2, &b->w->wins2_cap, tot ? tot : 1, 1);
	for (i = 0, tot = 0; i < nd; i++) {
		align_pair_t *p = &b->w->dpair[i];
		memcpy(b->w->wins2 + tot, b->w->wins + p->win_off, p->win_len);
		p->win_off = tot;
		tot += p->win_len;
	}
	return tot;
}

/*
 * Pass 2's core on the ND pairs pass2_plan left (B->dpair): on O->dev when
 * given (align_dev_trace, the windows pass2_pack made, WINS_LEN bytes),
 * else as run_mapped (the windows of every locus); each result in its place.
 */
static int pass2_run(ext_batch_t *b, const ext_opt_t *o, size_t nd, size_t stride,
		size_t wins_len, char *msg, size_t msg_len)
{
	const uint8_t *wins = b->w->p2_packed ? b->w->wins2 : b->w->wins;
	size_t i;

	if (!o->dev)
		return run_mapped(b, o, wins, wins_len, nd, 0, stride, NULL, 0, msg, msg_len);
	if (!nd)
		return 0;
	grow(&b->w->dres, &b->w->dres_cap, nd, sizeof(align_res_t));
	if (align_dev_trace(o->dev, b->w->rseq, b->w->rseq_off[2 * b->n], wins,
				wins_len ? wins_len : 1, b->w->dpair, nd, o->max_a, b->w->dres, msg,
				msg_len) < 0)
		return -1;
	for (i = 0; i < nd; i++)
		b->w->res[b->w->dmap[i]] = b->w->dres[i];
	return 0;
}

static int dev_windows(ext_batch_t *b, const ext_opt_t *o, char *msg, size_t msg_len);

/* Check read I's candidate list, of a read that has no windows (empty or too long). */
static int check_list(const ext_batch_t *b, size_t i, char *msg, size_t msg_len)
{
	const rec_cands_t *v = &b->cv[i];
	rec_cand_iter_t it;
	rec_cand_t c;
	int rc;

	rec_cands_first(v, &it);
	while ((rc = rec_cands_next_checked(&it, &c)) > 0)
		;
	return rc < 0 ? ext_bad_cands(v, msg, msg_len) : 0;
}

/*
 * With the keys decoded on the device: read r's list as align_dev_cut
 * takes it (copied to B->w->lists, at B->w->loff: only the lists go up)
 * and its keys' place (B->w->coff); a read without windows has its list
 * checked here (on a bad one, prep_keys's message).
 */
static int prep_lists(ext_batch_t *b, char *msg, size_t msg_len)
{
	uint64_t at = 0;
	size_t i;

	grow(&b->w->coff, &b->w->coff_cap, b->n + 1, sizeof(uint32_t));
	grow(&b->w->loff, &b->w->loff_cap, 2 * b->n + 1, sizeof(uint64_t));
	grow(&b->w->lists, &b->w->lists_cap, b->arena_len + 1, 1);   /* the lists lie in the arena */
	b->w->n_key = 0;
	for (i = 0; i < b->n; i++) {
		const rec_cands_t *v = &b->cv[i];
		b->w->coff[i] = (uint32_t)b->w->n_key;
		if (v->read.seq_len == 0 || v->read.seq_len > ALIGN_MAX_READ) {
			if (check_list(b, i, msg, msg_len) < 0)
				return -1;
			b->w->loff[2 * i] = b->w->loff[2 * i + 1] = at;
			continue;
		}
		memcpy(b->w->lists + at, v->list, (size_t)(v->end - v->list));
		b->w->loff[2 * i] = at;
		b->w->loff[2 * i + 1] = at += (uint64_t)(v->end - v->list);
		b->w->n_key += v->n;
	}
	b->w->coff[b->n] = (uint32_t)b->w->n_key;
	return 0;
}

/* Read R's keys on the host for align_dev_cut (align_dlists_t's HOST): ext_read_keys's. */
typedef struct {
	ext_batch_t *b;
	const idx_t *x;
	align_dev_t *dev;
} host_keys_t;

static int host_keys(void *ctx, size_t r, uint64_t *keys, char *msg, size_t msg_len)
{
	host_keys_t *h = ctx;
	ext_ws_t *w = h->b->w;
	size_t n_key = w->n_key;
	int rc;

	w->n_key = 0;
	if ((rc = ext_read_keys(h->b, h->x, h->dev, (uint32_t)r, msg, msg_len)) == 0)
		memcpy(keys, w->ckey, h->b->cv[r].n * sizeof *keys);
	w->n_key = n_key;
	return rc;
}

/* With the windows cut on the device: B's candidates as keys (ext_read_keys), checked. */
static int prep_keys(ext_batch_t *b, const idx_t *x, align_dev_t *dev, char *msg, size_t msg_len)
{
	size_t i;

	grow(&b->w->coff, &b->w->coff_cap, b->n + 1, sizeof(uint32_t));
	b->w->n_key = 0;
	for (i = 0; i < b->n; i++) {
		b->w->coff[i] = (uint32_t)b->w->n_key;
		if (b->cv[i].read.seq_len == 0 || b->cv[i].read.seq_len > ALIGN_MAX_READ) {
			if (check_list(b, i, msg, msg_len) < 0)
				return -1;
		} else if (ext_read_keys(b, x, dev, (uint32_t)i, msg, msg_len) < 0) {
			return -1;
		}
	}
	b->w->coff[b->n] = (uint32_t)b->w->n_key;
	return 0;
}

/* The pass-1 windows of B (B->w the scratch): ext_batch_prep's work. */
static int batch_prep(ext_batch_t *b, const idx_t *x, const ext_opt_t *o, ext_stats_t *st,
		char *msg, size_t msg_len)
{
	size_t i, k, *win_beg;

	ext_prep_reads(b, o->nogaps);
	/* a hits array even for a batch without hits: each read's hits are
	 * found at an offset into it (ext_batch_hits) */
	grow(&b->hits, &b->hit_cap, 1, sizeof(ext_hit_t));
	b->hit_beg = sp_realloc(b->hit_beg, (b->n + 1) * sizeof(size_t));
	b->n_hits = sp_realloc(b->n_hits, (b->n + 1) * sizeof(uint32_t));
	grow(&b->w->win_beg, &b->w->win_beg_cap, b->n + 1, sizeof(size_t));
	win_beg = b->w->win_beg;
	b->w->packed_rows = 0;
	b->w->rows_hit = 0;
	b->w->cut = o->ocl && o->dev && o->dev_cut && b->n_cands < UINT32_MAX / 2;
	/* the keys decoded on the device (EXT_DEV_KEYS) or here:
	 * SEEDPIPE_ALIGN_DEV_KEYS and SEEDPIPE_ALIGN_HOST_KEYS choose */
	b->w->dkeys = b->w->cut && (getenv("SEEDPIPE_ALIGN_DEV_KEYS") ? 1
			: getenv("SEEDPIPE_ALIGN_HOST_KEYS") ? 0 : EXT_DEV_KEYS);
	if (b->w->dkeys && prep_lists(b, msg, msg_len) < 0) {
		/* the batch's first bad list, as the host's decoding finds it */
		prep_keys(b, x, o->dev, msg, msg_len);
		return -1;
	}
	if (b->w->cut && !b->w->dkeys)
		return prep_keys(b, x, o->dev, msg, msg_len);
	if (b->w->cut)
		return 0;

	/* pass 1: the end distances of every window */
	b->w->n_win = 0;
	b->w->pre_windows = b->w->pre_bases = 0;
	for (i = 0; i < b->n; i++) {
		win_beg[i] = b->w->n_win;
		if (i + 2 < b->n)
			ext_prefetch_ref(b, x, i + 2);
		if (b->cv[i].read.seq_len == 0 || b->cv[i].read.seq_len > ALIGN_MAX_READ) {
			/* no windows, but its list is checked all the same */
			if (check_list(b, i, msg, msg_len) < 0)
				return -1;
			continue;
		}
		if (ext_read_windows(b, x, o, (uint32_t)i, msg, msg_len) < 0)
			return -1;
	}
	win_beg[b->n] = b->w->n_win;
	st->windows += b->w->n_win + b->w->pre_windows;
	st->bases += b->w->pre_bases;
	for (k = 0; k < b->w->n_win; k++)
		st->bases += b->w->win[k].len;
	return o->ocl && o->dev ? dev_windows(b, o, msg, msg_len) : 0;
}

/*
 * B's pass-1 windows as the device takes them, checked (ext_batch_prep, on
 * a host thread: the device step only sends them).
 */
static int dev_windows(ext_batch_t *b, const ext_opt_t *o, char *msg, size_t msg_len)
{
	size_t i, n = b->w->n_win;

	grow(&b->w->dwin, &b->w->dwin_cap, n ? n : 1, sizeof(align_dwin_t));
	for (i = 0; i < n; i++) {
		const ext_win_t *w = &b->w->win[i];
		b->w->dwin[i].beg = w->beg;
		b->w->dwin[i].rs = 2 * w->read + w->strand;
		b->w->dwin[i].len = w->len;
	}
	grow(&b->w->ddist, &b->w->ddist_cap, n ? n : 1, sizeof(int32_t));
	grow(&b->w->eoff, &b->w->eoff_cap, n ? n : 1, sizeof(uint32_t));
	if (align_dev_check(o->dev, b->w->rseq_off[2 * b->n], b->w->rseq_off, b->n, b->w->dwin, n,
				o->max_a, &b->w->longest, &b->w->dstride, msg, msg_len) < 0)
		return -1;
	b->w->stride = b->w->dstride;
	return 0;
}

/* Pass 1 on the device (ext_batch_dev's work). */
static int batch_dev(ext_batch_t *b, const idx_t *x, const ext_opt_t *o, char *msg,
		size_t msg_len)
{
	host_keys_t h = { b, x, o->dev };
	align_dlists_t ls = { b->w->lists, b->w->loff, host_keys, &h };
	size_t len = 0;

	if (b->w->cut) {
		if (align_dev_cut(o->dev, b->w->rseq, b->w->rseq_off[2 * b->n], b->w->rseq_off, b->n,
					b->w->dkeys ? NULL : b->w->ckey, &ls, b->w->coff, o->max_a, EXT_WIN,
					b->w->cut_tot, &b->w->dhit,
					&b->w->dhit_cap, &b->w->n_dhit, &b->w->ends, &b->w->ends_cap, &len,
					msg, msg_len) < 0)
			return -1;
		b->w->packed_rows = 1;
		return 0;
	}

	if (align_dev_ends(o->dev, b->w->rseq, b->w->rseq_off[2 * b->n], b->w->rseq_off, b->n,
				b->w->dwin, b->w->n_win, o->max_a, o->nogaps ? ALIGN_NOGAPS : 0,
				b->w->longest, b->w->dstride, b->w->ddist, b->w->eoff, &b->w->ends,
				&b->w->ends_cap, &len, msg, msg_len) < 0)
		return -1;
	b->w->packed_rows = 1;
	return 0;
}

/*
 * Order of the windows of align_dev_cut: read, strand, sequence, first
 * base, as the host cuts them (the merged spans of a strand and sequence
 * are apart, and their pieces in order).
 */
static int dhit_cmp(const void *a, const void *b)
{
	const align_dhit_t *x = a, *y = b;
	int r;

	if ((r = ext_cmp(x->rs, y->rs)) || (r = ext_cmp(x->seq, y->seq)))
		return r;
	return ext_cmp(x->beg, y->beg);
}

/*
 * B's windows with a hit (align_dev_cut's order: as the device's work items
 * found them) in dhit_cmp's order: by read first, counted into place (a
 * batch holds some hundred reads and thousands of hits), then each read's
 * few by dhit_cmp, where they are not in order already.
 */
#define DHIT_READ(b, h) ((h)->rs >> 1 < (b)->n ? (h)->rs >> 1 : (b)->n)

static void dhit_sort(ext_batch_t *b)
{
	ext_ws_t *w = b->w;
	size_t i, n = w->n_dhit, *at;
	align_dhit_t *h = w->dhit, *t;

	grow(&w->dhit2, &w->dhit2_cap, n, sizeof *t);
	grow(&w->dcnt, &w->dcnt_cap, b->n + 2, sizeof *at);
	t = w->dhit2;
	at = w->dcnt;
	/* a hit of no read of B (none should be) last, where cut_windows leaves it */
	memset(at, 0, (b->n + 2) * sizeof *at);
	for (i = 0; i < n; i++)
		at[DHIT_READ(b, &h[i]) + 1]++;
	for (i = 0; i < b->n; i++)
		at[i + 1] += at[i];
	for (i = 0; i < n; i++)
		t[at[DHIT_READ(b, &h[i])]++] = h[i];
	/* AT[r] is now where read r's hits end */
	for (i = 0; i < b->n; i++) {
		size_t lo = i ? at[i - 1] : 0, hi = at[i], j;
		for (j = lo + 1; j < hi && dhit_cmp(&t[j - 1], &t[j]) < 0; j++)
			;
		if (j < hi)
			qsort(t + lo, hi - lo, sizeof *t, dhit_cmp);
	}
	w->dhit = t;          /* the two buffers change places */
	w->dhit2 = h;
	i = w->dhit_cap;
	w->dhit_cap = w->dhit2_cap;
	w->dhit2_cap = i;
}

/*
 * After align_dev_cut: the windows with a hit as B's pass-1 windows, each
 * read's in the order cut (the others were never on the host), their
 * distances and rows' offsets; the counts of every window into ST.
 */
static void cut_windows(ext_batch_t *b, ext_stats_t *st)
{
	size_t i, k = 0, n = b->w->n_dhit, stride = 1;
	const align_dhit_t *h;

	if (n > 1)
		dhit_sort(b);
	h = b->w->dhit;
	grow(&b->w->ddist, &b->w->ddist_cap, n + 1, sizeof(int32_t));
	grow(&b->w->eoff, &b->w->eoff_cap, n + 1, sizeof(uint32_t));
	b->w->n_win = 0;
	st->windows += b->w->cut_tot[0];
	st->bases += b->w->cut_tot[1];
	for (i = 0; i < b->n; i++) {
		b->w->win_beg[i] = b->w->n_win;
		for (; k < n && h[k].rs >> 1 == i; k++) {
			b->w->ddist[b->w->n_win] = h[k].dist;
			b->w->eoff[b->w->n_win] = h[k].eoff;
			ext_add_win(b, (uint32_t)i, (uint8_t)(h[k].rs & 1), h[k].seq, h[k].beg, h[k].len,
					0, 0);
			if (h[k].len > stride)
				stride = h[k].len;
		}
	}
	b->w->win_beg[b->n] = b->w->n_win;
	b->w->stride = stride;
}

/*
 * The loci of B after pass 1 and the windows of pass 2, with the results
 * of those that need no core (ext_batch_loci's work).
 */
static int batch_loci(ext_batch_t *b, const idx_t *x, const ext_opt_t *o, ext_stats_t *st,
		char *msg, size_t msg_len)
{
	unsigned base = o->nogaps ? ALIGN_NOGAPS : 0;
	size_t i, k, stride = b->w->stride, wins_len, n_loc;
	size_t *win_beg = b->w->win_beg;
	uint32_t a = o->max_a;

	if (b->w->cut) {
		cut_windows(b, st);
		stride = b->w->stride;
	}
	if (b->w->packed_rows && pass1_rows(b, x, o, base | ALIGN_ENDS | ALIGN_NOCIGAR
				| ALIGN_ENDS_HITS, msg, msg_len) < 0)
		return -1;

	/* loci: collected as hits holding the best end (pos = global end for now) */
	b->n_hit = 0;
	for (i = 0; i < b->n; i++) {
		size_t ne = 0, j;

		b->hit_beg[i] = b->n_hit;
		for (k = win_beg[i]; k < win_beg[i + 1]; k++) {
			const uint8_t *en = b->w->ends + (b->w->packed_rows || b->w->rows_hit
					? b->w->eoff[k] : k * stride);
			uint32_t c, c_exact;
			/* the device's distances are apart from RES: reading RES's
			 * 144-byte records for every window cost a cache miss each */
			if ((b->w->packed_rows ? b->w->ddist[k] : b->w->res[k].dist) < 0)
				continue;
			/* an end from column c_exact on has every alignment within A
			 * that ends there in the window (none starts before it) */
			c_exact = b->w->win[k].beg == x->off[b->w->win[k].seq] ? 0
				: (uint32_t)(b->cv[i].read.seq_len + a - 1);
			grow(&b->w->endv, &b->w->endv_cap, ne + b->w->win[k].len, sizeof(ext_end_t));
			for (c = 0; c < b->w->win[k].len; c++) {
				uint64_t e8;
				if (c + 8 <= b->w->win[k].len && (memcpy(&e8, en + c, 8), e8 == ~0ull)) {
					c += 7;         /* 8 columns without an end (ALIGN_END_NONE) */
					continue;
				}
				if (en[c] == ALIGN_END_NONE)
					continue;
				b->w->endv[ne].e = b->w->win[k].beg + c;
				b->w->endv[ne].seq = b->w->win[k].seq;
				b->w->endv[ne].strand = b->w->win[k].strand;
				b->w->endv[ne].d = en[c];
				b->w->endv[ne].exact = c >= c_exact;
				ne++;
			}
		}
		for (j = 1; j < ne && end_cmp(&b->w->endv[j - 1], &b->w->endv[j]) <= 0; j++)
			;
		if (j < ne)     /* windows in order leave them sorted but for overlaps */
			qsort(b->w->endv, ne, sizeof(ext_end_t), end_cmp);
		for (j = 0; j < ne;) {
			ext_end_t best = b->w->endv[j], last = b->w->endv[j];
			ext_hit_t *h;

			j++;
			while (j < ne && b->w->endv[j].strand == last.strand
					&& b->w->endv[j].seq == last.seq
					&& b->w->endv[j].e <= last.e + (o->nogaps ? 0 : 1)) {
				if (b->w->endv[j].e != last.e && b->w->endv[j].d < best.d)
					best = b->w->endv[j];
				last = b->w->endv[j];
				j++;
			}
			grow(&b->hits, &b->hit_cap, b->n_hit + 1, sizeof(ext_hit_t));
			grow(&b->w->hexact, &b->w->hexact_cap, b->n_hit + 1, 1);
			b->w->hexact[b->n_hit] = best.exact;
			h = &b->hits[b->n_hit++];
			h->end = 0;             /* the CIGAR is set with n_cigar in pass 2 */
			h->mapq = 0;
			h->n_cigar = 0;
			h->md_off = 0;
			h->seq = best.seq;
			h->strand = best.strand;
			h->pos = best.e;
			h->dist = best.d;
		}
		b->n_hits[i] = (uint32_t)(b->n_hit - b->hit_beg[i]);
	}
	b->hit_beg[b->n] = b->n_hit;
	n_loc = b->n_hit;
	st->loci += n_loc;

	/* pass 2: trace each locus back in a window ending at its best end */
	b->w->n_win = 0;
	for (i = 0; i < b->n; i++) {
		uint64_t m = b->cv[i].read.seq_len;
		for (k = b->hit_beg[i]; k < b->hit_beg[i] + b->n_hits[i]; k++) {
			const ext_hit_t *h = &b->hits[k];
			uint64_t sb = x->off[h->seq], e = h->pos, wb;
			if (o->nogaps)
				wb = e + 1 - m;
			else
				wb = e >= sb + m - 1 + a ? e + 1 - m - a : sb;
			ext_add_win(b, (uint32_t)i, h->strand, h->seq, wb, (uint32_t)(e + 1 - wb),
					(uint32_t)(e - wb), (uint32_t)(e - wb));
		}
	}
	stride = ext_fill_wins(b, x);
	wins_len = b->w->n_win ? b->w->pair[b->w->n_win - 1].win_off + b->w->win[b->w->n_win - 1].len : 0;
	b->w->p2_stride = stride;
	b->w->p2_wins_len = wins_len;
	b->w->p2_nd = 0;
	b->w->p2_packed = 0;
	if (o->nogaps) {
		/* the window is the hit's diagonal, whose exact count pass 1 gave:
		 * what the core would return for it, without running it */
		for (k = 0; k < b->w->n_win; k++) {
			align_res_t *r = &b->w->res[k];
			r->dist = (int)b->hits[k].dist;
			r->start = 0;
			r->end = b->w->win[k].len - 1;
			r->n_ends = 1;
			r->n_cigar = 1;
			r->cigar[0] = b->w->win[k].len << 4 | SP_CIGAR_M;
		}
	} else if (o->ocl && !o->dev) {
		if (run_core(b, o, base, stride, wins_len, msg, msg_len) < 0)
			return -1;
	} else {
		b->w->p2_nd = pass2_plan(b);
		if (b->w->packed_rows) {   /* for the device: only the windows it aligns */
			b->w->p2_wins_len = pass2_pack(b, b->w->p2_nd);
			b->w->p2_packed = 1;
		}
	}
	return 0;
}

/* The hits of B after pass 2: positions, CIGAR, MD; order, selection and MAPQ per read. */
static int batch_hits(ext_batch_t *b, const idx_t *x, const ext_opt_t *o, ext_stats_t *st)
{
	size_t i, k;

	/* hits: positions, CIGAR, MD; order, selection and MAPQ per read */
	for (k = 0; k < b->w->n_win; k++) {
		ext_hit_t *h = &b->hits[k];
		const align_res_t *r = &b->w->res[k];
		const ext_win_t *w = &b->w->win[k];
		uint32_t m = b->cv[w->read].read.seq_len;
		size_t need;

		if (r->dist < 0) {          /* cannot happen: pass 1 saw it within A */
			h->n_cigar = 0;
			h->dist = UINT32_MAX;
			continue;
		}
		h->dist = (uint32_t)r->dist;
		h->pos = w->beg + r->start - x->off[h->seq];
		h->end = w->beg + r->end - x->off[h->seq];
		h->n_cigar = r->n_cigar;
		memcpy(h->cigar, r->cigar, r->n_cigar * sizeof h->cigar[0]);
		grow(&b->md, &b->md_cap, b->md_len + 4 * (size_t)m + 64, 1);
		need = align_md_str(r, b->w->rseq + b->w->pair[k].read_off, b->w->wins, b->w->pair[k].win_off,
				0, b->md + b->md_len, b->md_cap - b->md_len);
		h->md_off = b->md_len;
		b->md_len += need + 1;
	}
	for (i = 0; i < b->n; i++) {
		ext_hit_t *h = b->hits + b->hit_beg[i];
		uint32_t n = b->n_hits[i], j, n1 = 0, keep, d2 = 0;
		int has_d2 = 0;

		/* loci traced back to the same first base are one: the least
		 * distance, then the fewest CIGAR runs, then the leftmost end */
		for (j = 1; j < n && start_cmp(&h[j - 1], &h[j]) <= 0; j++)
			;
		if (j < n)      /* loci come in end order: their starts usually too */
			qsort(h, n, sizeof(ext_hit_t), start_cmp);
		for (j = 0, keep = 0; j < n; j++)
			if (!keep || h[j].seq != h[keep - 1].seq || h[j].pos != h[keep - 1].pos
					|| h[j].strand != h[keep - 1].strand)
				h[keep++] = h[j];
		st->loci -= n - keep;
		n = keep;
		if (n > 1)
			qsort(h, n, sizeof(ext_hit_t), ext_hit_cmp);
		while (n && h[n - 1].dist == UINT32_MAX)
			n--;
		for (j = 0; j < n && h[j].dist == h[0].dist; j++)
			n1++;
		if (n1 < n) {
			has_d2 = 1;
			d2 = h[n1].dist;
		}
		keep = n;
		if (o->mode == EXT_STRATUM)
			keep = n1;
		else if (o->mode == EXT_BEST_K && keep > o->k)
			keep = o->k;
		for (j = 0; j < keep; j++)
			h[j].mapq = j < n1 ? ext_mapq(n1, has_d2, h[0].dist, d2) : 0;
		b->n_hits[i] = keep;
		st->hits += keep;
		if (keep)
			st->mapped++;
		else
			st->unmapped++;
		if (b->cv[i].read.seq_len > ALIGN_MAX_READ)
			st->too_long++;
		else if (o->guar && o->guar[b->cv[i].read.seq_len] < ext_bound_at(o,
					b->cv[i].read.seq_len)) {
			st->not_covered++;
			if (!st->not_covered_len || b->cv[i].read.seq_len < st->not_covered_len)
				st->not_covered_len = b->cv[i].read.seq_len;
		}
	}
	st->reads += b->n;
	st->cands += b->n_cands;
	return 0;
}

/* The loci, pass 2 and the hits of B after pass 1 (ext_batch_finish's work). */
static int batch_finish(ext_batch_t *b, const idx_t *x, const ext_opt_t *o, ext_stats_t *st,
		char *msg, size_t msg_len)
{
	if (batch_loci(b, x, o, st, msg, msg_len) < 0 || pass2_run(b, o, b->w->p2_nd,
				b->w->p2_stride, b->w->p2_wins_len, msg, msg_len) < 0)
		return -1;
	return batch_hits(b, x, o, st);
}

/* ext_batch_run_ws's work, with B->w the scratch. */
static int batch_run(ext_batch_t *b, const idx_t *x, const ext_opt_t *o, ext_stats_t *st,
		char *msg, size_t msg_len)
{
	unsigned base = o->nogaps ? ALIGN_NOGAPS : 0;

	if (batch_prep(b, x, o, st, msg, msg_len) < 0)
		return -1;
	if (o->ocl && o->dev)
		return batch_dev(b, x, o, msg, msg_len) < 0 ? -1 : batch_finish(b, x, o, st, msg, msg_len);
	/* only the ends of windows with a hit are read below */
	b->w->stride = run_pass1(b, x, o, base | ALIGN_ENDS | ALIGN_NOCIGAR
			| (o->ocl ? 0 : ALIGN_ENDS_HITS), msg, msg_len);
	if (!b->w->stride)
		return -1;
	return batch_finish(b, x, o, st, msg, msg_len);
}

int ext_batch_run_ws(ext_batch_t *b, ext_ws_t *w, const idx_t *x, const ext_opt_t *o,
		ext_stats_t *st, char *msg, size_t msg_len)
{
	int rc;

	b->w = w;
	rc = batch_run(b, x, o, st, msg, msg_len);
	b->w = NULL;    /* the scratch is the thread's again */
	return rc;
}

/* The parts of ext_batch_run called one by one (ext_batch_prep ... mkhits). */
enum { PART_PREP, PART_DEV, PART_LOCI, PART_TRACE, PART_HITS, PART_FINISH };

/* Part PART of B's run, on B's own scratch. */
static int batch_part(int part, ext_batch_t *b, const idx_t *x, const ext_opt_t *o,
		ext_stats_t *st, char *msg, size_t msg_len)
{
	int rc = 0;

	if (!b->own)
		b->own = ext_ws_new();
	b->w = b->own;
	switch (part) {
	case PART_PREP:
		rc = batch_prep(b, x, o, st, msg, msg_len);
		break;
	case PART_DEV:
		if (o->dev) {
			rc = batch_dev(b, x, o, msg, msg_len);
			break;
		}
		b->w->stride = run_pass1(b, x, o, (o->nogaps ? ALIGN_NOGAPS : 0) | ALIGN_ENDS
				| ALIGN_NOCIGAR | (o->ocl ? 0 : ALIGN_ENDS_HITS), msg, msg_len);
		rc = b->w->stride ? 0 : -1;
		break;
	case PART_LOCI:
		rc = batch_loci(b, x, o, st, msg, msg_len);
		break;
	case PART_TRACE:
		rc = pass2_run(b, o, b->w->p2_nd, b->w->p2_stride, b->w->p2_wins_len, msg, msg_len);
		b->w->p2_nd = 0;
		break;
	case PART_HITS:
		rc = batch_hits(b, x, o, st);
		break;
	default:
		rc = batch_finish(b, x, o, st, msg, msg_len);
	}
	b->w = NULL;
	return rc;
}

int ext_batch_prep(ext_batch_t *b, const idx_t *x, const ext_opt_t *o, ext_stats_t *st,
		char *msg, size_t msg_len)
{
	return batch_part(PART_PREP, b, x, o, st, msg, msg_len);
}

int ext_batch_dev(ext_batch_t *b, const idx_t *x, const ext_opt_t *o, char *msg, size_t msg_len)
{
	return batch_part(PART_DEV, b, x, o, NULL, msg, msg_len);
}

int ext_batch_loci(ext_batch_t *b, const idx_t *x, const ext_opt_t *o, ext_stats_t *st,
		char *msg, size_t msg_len)
{
	return batch_part(PART_LOCI, b, x, o, st, msg, msg_len);
}

int ext_batch_trace(ext_batch_t *b, const ext_opt_t *o, char *msg, size_t msg_len)
{
	return batch_part(PART_TRACE, b, NULL, o, NULL, msg, msg_len);
}

int ext_batch_mkhits(ext_batch_t *b, const idx_t *x, const ext_opt_t *o, ext_stats_t *st)
{
	char msg[8];

	return batch_part(PART_HITS, b, x, o, st, msg, sizeof msg);
}

int ext_batch_finish(ext_batch_t *b, const idx_t *x, const ext_opt_t *o, ext_stats_t *st,
		char *msg, size_t msg_len)
{
	return batch_part(PART_FINISH, b, x, o, st, msg, msg_len);
}

int ext_batch_run(ext_batch_t *b, const idx_t *x, const ext_opt_t *o, ext_stats_t *st,
		char *msg, size_t msg_len)
{
	if (!b->own)
		b->own = ext_ws_new();
	return ext_batch_run_ws(b, b->own, x, o, st, msg, msg_len);
}
