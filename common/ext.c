/*
 * ext.c - extend's batches: windows from candidate diagonals, the two
 * alignment passes and the loci (the method is described in ext.h).
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <htslib/hts.h>
#include <htslib/sam.h>
#include <xxhash.h>

#include "ext.h"
#include "idx_priv.h"
#include "seqio.h"
#include "util.h"

#define EXT_WIN 1024    /* merged windows are cut to this length (longer for long reads) */
#define EXT_LO 0x5555555555555555ull

/* A window of pass 1 or 2: which read and where. */
typedef struct {
	uint32_t read;
	uint32_t seq;
	uint8_t strand;
	uint64_t beg;        /* global position of the window's first base */
	uint32_t len;
} ext_win_t;

/* An end position within the bound (pass 1). */
typedef struct {
	uint64_t e;          /* global end position */
	uint32_t seq;
	uint8_t strand, d;
	uint8_t exact;       /* D is the unclipped value (ext_batch_run) */
} ext_end_t;

/* A candidate window before merging. */
typedef struct {
	uint64_t beg, end;
	uint32_t seq;
	uint8_t strand;
} ext_span_t;

struct ext_batch {
	/* input: copied bodies, and their views (moved with the arena) */
	uint8_t *arena;
	size_t arena_len, arena_cap;
	rec_cands_t *cv;
	size_t n, cap;
	uint64_t n_cands;
	/* reads as aligned: forward and reverse complement */
	uint8_t *rseq;
	size_t rseq_cap;
	size_t *rseq_off;     /* 2 per read */
	/* windows, pairs, results */
	ext_win_t *win;
	align_pair_t *pair;
	align_res_t *res;
	size_t n_win, win_cap;
	uint8_t *wins, *ends;
	size_t wins_cap, ends_cap;
	/* per read */
	size_t *hit_beg;      /* n + 1 */
	uint32_t *n_hits;
	ext_hit_t *hits;
	size_t n_hit, hit_cap;
	char *md;
	size_t md_len, md_cap;
	/* scratch */
	ext_span_t *span;
	size_t span_cap;
	ext_end_t *endv;
	size_t endv_cap;
	/* --no-gaps prefilter: each read's strands 2-bit packed, N bits */
	uint64_t *hpk;        /* 2 hw words per read and strand, hw = (m + 31) / 32 */
	size_t *hpk_off;      /* per read: its first word in hpk */
	uint8_t *hpk_set;     /* per read: bit s set when strand s is packed */
	size_t hpk_cap, hpk_off_cap, hpk_set_cap;
	/* pass-1 windows with N: again from ASCII */
	size_t *dmap;
	align_pair_t *dpair;
	align_res_t *dres;
	uint8_t *dends;
	size_t dmap_cap, dpair_cap, dres_cap, dends_cap;
	/* pass 2: per locus, whether its pass-1 distance is unclipped (ext_batch_run) */
	uint8_t *hexact;
	size_t hexact_cap;
	/* pass-1 windows of a read before the prefilter (read_windows): those
	 * of one candidate, m + 2A long, by strand (offset, sequence), others */
	uint64_t *sw_off[2];
	uint32_t *sw_seq[2];
	size_t sw_cap;
	ext_win_t *pc;
	size_t pc_cap;
	uint64_t *pc_off;     /* a group of pc: offsets, sequences; pc entries grouped */
	uint32_t *pc_seq;
	uint8_t *pc_done;
	size_t pc_off_cap, pc_seq_cap, pc_done_cap;
	uint8_t *pre_yes;     /* pre_group's decisions */
	size_t pre_yes_cap;
	align_pre_ws_t *pre;
	uint64_t pre_windows, pre_bases;   /* windows the prefilter turned away */
};

ext_batch_t *ext_batch_new(void)
{
	return sp_calloc(1, sizeof(ext_batch_t));
}

void ext_batch_free(ext_batch_t *b)
{
	if (!b)
		return;
	free(b->arena);
	free(b->cv);
	free(b->rseq);
	free(b->rseq_off);
	free(b->win);
	free(b->pair);
	free(b->res);
	free(b->wins);
	free(b->ends);
	free(b->hit_beg);
	free(b->n_hits);
	free(b->hits);
	free(b->md);
	free(b->span);
	free(b->endv);
	free(b->hpk);
	free(b->hpk_set);
	free(b->hpk_off);
	free(b->dmap);
	free(b->dpair);
	free(b->dres);
	free(b->dends);
	free(b->pc);
	free(b->pc_off);
	free(b->pc_seq);
	free(b->pc_done);
	free(b->pre_yes);
	free(b->hexact);
	free(b->sw_off[0]);
	free(b->sw_off[1]);
	free(b->sw_seq[0]);
	free(b->sw_seq[1]);
	align_pre_ws_free(b->pre);
	free(b);
}

void ext_batch_clear(ext_batch_t *b)
{
	b->n = 0;
	b->arena_len = 0;
	b->n_cands = 0;
	b->n_hit = 0;
	b->md_len = 0;
}

/* Grow *P (of *CAP elements of SIZE bytes) to hold at least N. */
static void grow(void *pp, size_t *cap, size_t n, size_t size)
{
	void **p = pp;

	if (n <= *cap)
		return;
	size_t c = *cap ? *cap : 64;
	while (c < n)
		c *= 2;
	*p = sp_realloc(*p, c * size);
	*cap = c;
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
	if (b->arena_len + len > b->arena_cap) {
		uintptr_t old = (uintptr_t)b->arena;
		size_t i;
		grow(&b->arena, &b->arena_cap, b->arena_len + len, 1);
		for (i = 0; old != (uintptr_t)b->arena && i < b->n; i++)
			rebase(&b->cv[i], old, (uintptr_t)b->arena);
	}
	/* the copy is decoded: its views stay valid in the arena; the list is
	 * checked as read_windows goes through it (one decoding pass) */
	memcpy(b->arena + b->arena_len, body, len);
	if (rec_cands_view(b->arena + b->arena_len, len, &b->cv[b->n]) < 0)
		return -1;
	b->arena_len += len;
	b->n_cands += b->cv[b->n].n;
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

uint8_t ext_mapq(uint32_t n1, int has_d2, uint32_t d1, uint32_t d2)
{
	if (n1 > 1)
		return (uint8_t)floor(-10.0 * log10(1.0 - 1.0 / n1) + 0.5);
	if (!has_d2)
		return EXT_MAPQ_UNIQUE;
	return (uint8_t)(20 * (d2 - d1) < EXT_MAPQ_UNIQUE ? 20 * (d2 - d1) : EXT_MAPQ_UNIQUE);
}

/*
 * Give the packed reference memory of its own on huge pages where the
 * kernel has them (transparent huge pages on madvise): pass 1 fetches
 * tens of millions of windows all over it, and through the index's 4 KiB
 * file pages each fetch's prefetch first waited for a page walk.  The copy
 * lives as long as the process (extend keeps its index to the end); on
 * any failure the mapped pages serve as before.
 */
static void pack_hot(idx_t *x)
{
	const size_t huge = (size_t)2 << 20;
	size_t len = (size_t)((x->total + 3) / 4 + 16), cap = (len + huge - 1) / huge * huge;
	void *p;

	if (!x->pack || len < huge)
		return;
	p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
#ifdef MADV_HUGEPAGE
	madvise(p, cap, MADV_HUGEPAGE);
#endif
	memcpy(p, x->pack, len);
	x->pack = p;
}

idx_t *ext_idx_open(const char *path)
{
	static const char *const need[] = { "seq.names", "seq.len", "seq.off", "ref.pack",
		"ref.nrun", "part" };
	char *err = NULL;
	idx_t *x = idx_load(path, IDX_LOAD_NOVERIFY, &err);
	const idx_sec_t *s;
	uint64_t i;
	size_t k;

	if (!x) {
		/* the whole check names the fault as before (e.g. a checksum
		 * mismatch rather than what it broke); it dies */
		free(err);
		x = idx_open_or_die(path, 0);
		idx_close(x);
		sp_die("index '%s': cannot be loaded", path);
	}
	s = x->secs;
	for (i = 0; i < x->n_sections; i++) {
		if (s[i].part != IDX_PART_GLOBAL)
			continue;
		for (k = 0; k < sizeof need / sizeof need[0] && strcmp(s[i].name, need[k]); k++)
			;
		if (k < sizeof need / sizeof need[0] && XXH3_64bits_withSeed(s[i].data,
					(size_t)s[i].len, x->fingerprint) != s[i].xxh3)
			sp_die("index '%s': checksum mismatch in section '%s' (the index is damaged)",
					path, s[i].name);
	}
	pack_hot(x);
	return x;
}

/* The 4 ASCII bases of each packed byte (as a little-endian word), made once. */
static uint32_t ext_byte_ascii[256];
static char ext_sam_base[256];     /* a read base as SAM writes it after BAM encoding */
static pthread_once_t ext_byte_once = PTHREAD_ONCE_INIT;

static void ext_byte_init(void)
{
	static const char acgt[4] = { 'A', 'C', 'G', 'T' };
	unsigned b, k;

	for (b = 0; b < 256; b++) {
		uint8_t c[4];
		for (k = 0; k < 4; k++)
			c[k] = (uint8_t)acgt[(b >> (2 * k)) & 3];
		memcpy(&ext_byte_ascii[b], c, 4);
		ext_sam_base[b] = seq_nt16_str[seq_nt16_table[b]];
	}
}

/* Write the decimal X at P; returns the end. */
static inline char *put_u64(char *p, uint64_t x)
{
	char num[24];
	int d = 0;

	do {
		num[d++] = (char)('0' + x % 10);
		x /= 10;
	} while (x);
	while (d)
		*p++ = num[--d];
	return p;
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

	pthread_once(&ext_byte_once, ext_byte_init);
	if (ks_resize(ks, ks->l + nl + rl + ml + 2 * (size_t)m + 12 * ALIGN_MAX_CIGAR + 160) < 0)
		sp_die("out of memory");
	p = ks->s + ks->l;
	if (!nl) {
		p = put_u64(p, rd->id);
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
	p = put_u64(p, flag);
	*p++ = '\t';
	if (h) {
		p = put_str(p, rname, rl);
		*p++ = '\t';
		p = put_u64(p, h->pos + 1);
		*p++ = '\t';
		p = put_u64(p, h->mapq);
		*p++ = '\t';
		if (!h->n_cigar)
			*p++ = '*';
		for (i = 0; i < h->n_cigar; i++) {
			p = put_u64(p, h->cigar[i] >> 4);
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
		p = put_u64(p, h->dist);
		p = put_str(p, "\tMD:Z:", 6);
		p = put_str(p, md, ml);
		p = put_str(p, "\tAS:i:", 6);
		if (h->dist)
			*p++ = '-';
		p = put_u64(p, h->dist);
	}
	*p++ = '\n';
	ks->l = (size_t)(p - ks->s);
	ks->s[ks->l] = 0;
}

void ext_ref_ascii(const idx_t *x, uint64_t g, uint64_t n, uint8_t *dst)
{
	static const uint8_t acgt[4] = { 'A', 'C', 'G', 'T' };
	uint64_t i = 0, lo = 0, hi = x->n_nrun;

	pthread_once(&ext_byte_once, ext_byte_init);
	for (; i < n && ((g + i) & 3); i++)
		dst[i] = acgt[(x->pack[(g + i) >> 2] >> (((g + i) & 3) * 2)) & 3];
	for (; i + 4 <= n; i += 4)
		memcpy(dst + i, &ext_byte_ascii[x->pack[(g + i) >> 2]], 4);
	for (; i < n; i++)
		dst[i] = acgt[(x->pack[(g + i) >> 2] >> (((g + i) & 3) * 2)) & 3];
	if (!x->n_nrun)
		return;
	/* first N run ending after g */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (x->nrun[2 * mid] + x->nrun[2 * mid + 1] <= g)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < x->n_nrun && x->nrun[2 * lo] < g + n; lo++) {
		uint64_t s = x->nrun[2 * lo], e = s + x->nrun[2 * lo + 1];
		if (s < g)
			s = g;
		if (e > g + n)
			e = g + n;
		for (i = s; i < e; i++)
			dst[i - g] = 'N';
	}
}

static int span_cmp(const void *a, const void *b)
{
	const ext_span_t *x = a, *y = b;

	if (x->strand != y->strand)
		return x->strand < y->strand ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	if (x->beg != y->beg)
		return x->beg < y->beg ? -1 : 1;
	return (x->end > y->end) - (x->end < y->end);
}

static int end_cmp(const void *a, const void *b)
{
	const ext_end_t *x = a, *y = b;

	if (x->strand != y->strand)
		return x->strand < y->strand ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	if (x->e != y->e)
		return x->e < y->e ? -1 : 1;
	if (x->d != y->d)
		return x->d < y->d ? -1 : 1;
	return (x->exact < y->exact) - (x->exact > y->exact);
}

static int hit_cmp(const void *a, const void *b)
{
	const ext_hit_t *x = a, *y = b;

	if (x->dist != y->dist)
		return x->dist < y->dist ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	if (x->strand != y->strand)
		return x->strand < y->strand ? -1 : 1;
	if (x->n_cigar != y->n_cigar)
		return x->n_cigar < y->n_cigar ? -1 : 1;
	return memcmp(x->cigar, y->cigar, x->n_cigar * sizeof(uint32_t));
}

/* Order of the same-start merge: strand, sequence, position, distance, CIGAR runs, end. */
static int start_cmp(const void *a, const void *b)
{
	const ext_hit_t *x = a, *y = b;

	if (x->strand != y->strand)
		return x->strand < y->strand ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	if (x->dist != y->dist)
		return x->dist < y->dist ? -1 : 1;
	if (x->n_cigar != y->n_cigar)
		return x->n_cigar < y->n_cigar ? -1 : 1;
	return (x->end > y->end) - (x->end < y->end);
}

/* Append a window (and its pair) for read R; the bases are filled later. */
static void add_win(ext_batch_t *b, uint32_t r, uint8_t strand, uint32_t seq,
		uint64_t beg, uint32_t len, uint32_t end_lo, uint32_t end_hi)
{
	ext_win_t *w;
	align_pair_t *p;

	if (b->n_win == b->win_cap) {
		size_t c = b->win_cap ? b->win_cap * 2 : 4096;
		b->win = sp_realloc(b->win, c * sizeof(ext_win_t));
		b->pair = sp_realloc(b->pair, c * sizeof(align_pair_t));
		b->res = sp_realloc(b->res, c * sizeof(align_res_t));
		b->win_cap = c;
	}
	w = &b->win[b->n_win];
	p = &b->pair[b->n_win];
	w->read = r;
	w->seq = seq;
	w->strand = strand;
	w->beg = beg;
	w->len = len;
	memset(p, 0, sizeof *p);
	p->read_off = b->rseq_off[2 * r + strand];
	p->read_len = b->cv[r].read.seq_len;
	p->win_len = len;
	p->end_lo = end_lo;
	p->end_hi = end_hi;
	b->n_win++;
}

/* Fill the window bases of every window and set the pairs' offsets; returns the stride. */
static size_t fill_wins(ext_batch_t *b, const idx_t *x)
{
	size_t i, tot = 0, stride = 1;

	for (i = 0; i < b->n_win; i++) {
		tot += b->win[i].len;
		if (b->win[i].len > stride)
			stride = b->win[i].len;
	}
	grow(&b->wins, &b->wins_cap, tot ? tot : 1, 1);
	for (i = 0, tot = 0; i < b->n_win; i++) {
		b->pair[i].win_off = tot;
		ext_ref_ascii(x, b->win[i].beg, b->win[i].len, b->wins + tot);
		tot += b->win[i].len;
	}
	return stride;
}

/* Run the core on N pairs PAIR of READS/WINS (WINS_LEN bytes) into RES and ENDS. */
static int run_pairs(ext_batch_t *b, const ext_opt_t *o, const uint8_t *wins, size_t wins_len,
		const align_pair_t *pair, size_t n, unsigned flags, uint8_t *ends, size_t stride,
		align_res_t *res, char *msg, size_t msg_len)
{
	if (!n)
		return 0;
	if (o->ocl) {
		size_t rlen = b->rseq_off[2 * b->n];
		cl_int err = align_batch_ocl(o->ocl, b->rseq, rlen ? rlen : 1, wins,
				wins_len ? wins_len : 1, pair, n, o->max_a, flags,
				ends, stride, res, msg, msg_len);
		return err == CL_SUCCESS ? 0 : -1;
	}
	return align_batch(b->rseq, wins, pair, n, o->max_a, flags, o->n_threads,
			ends, stride, res, msg, msg_len);
}

/* Run the core on the windows of B (ASCII, as fill_wins made them). */
static int run_core(ext_batch_t *b, const ext_opt_t *o, unsigned flags, size_t stride,
		size_t wins_len, char *msg, size_t msg_len)
{
	uint8_t *ends = NULL;

	if (!b->n_win)
		return 0;
	if (flags & ALIGN_ENDS) {
		grow(&b->ends, &b->ends_cap, b->n_win * stride, 1);
		ends = b->ends;
	}
	return run_pairs(b, o, b->wins, wins_len, b->pair, b->n_win, flags, ends, stride,
			b->res, msg, msg_len);
}

/* Make B->dpair[ND] a copy of pair K of the batch, for run_mapped. */
static void map_pair(ext_batch_t *b, size_t nd, size_t k)
{
	grow(&b->dmap, &b->dmap_cap, nd + 1, sizeof(size_t));
	grow(&b->dpair, &b->dpair_cap, nd + 1, sizeof(align_pair_t));
	b->dmap[nd] = k;
	b->dpair[nd] = b->pair[k];
}

/*
 * Run the core on the ND pairs B->dpair (of windows WINS, WINS_LEN bytes)
 * that map_pair took from the batch, and put each result (and with
 * ALIGN_ENDS its ends row) in the place of the pair it came from.
 */
static int run_mapped(ext_batch_t *b, const ext_opt_t *o, const uint8_t *wins, size_t wins_len,
		size_t nd, unsigned flags, size_t stride, char *msg, size_t msg_len)
{
	size_t i;
	uint8_t *ends = NULL;

	if (!nd)
		return 0;
	grow(&b->dres, &b->dres_cap, nd, sizeof(align_res_t));
	if (flags & ALIGN_ENDS) {
		grow(&b->dends, &b->dends_cap, nd * stride, 1);
		ends = b->dends;
	}
	if (run_pairs(b, o, wins, wins_len, b->dpair, nd, flags, ends, stride, b->dres,
			msg, msg_len) < 0)
		return -1;
	for (i = 0; i < nd; i++) {
		b->res[b->dmap[i]] = b->dres[i];
		if (ends)
			memcpy(b->ends + b->dmap[i] * stride, ends + i * stride, stride);
	}
	return 0;
}

/*
 * Pass 1 straight from the 2-bit packed reference (no copy): each pair's
 * window offset is its global position.  The packed reference holds N as
 * A, so the windows touching an N run are aligned again from ASCII copies
 * and their results put in place.  Returns the stride, or 0 on error.
 */
static size_t run_pass1(ext_batch_t *b, const idx_t *x, const ext_opt_t *o, unsigned flags,
		char *msg, size_t msg_len)
{
	size_t i, stride = 1, nd = 0, tot = 0;

	for (i = 0; i < b->n_win; i++) {
		if (b->win[i].len > stride)
			stride = b->win[i].len;
		b->pair[i].win_off = b->win[i].beg;
	}
	grow(&b->ends, &b->ends_cap, b->n_win * stride, 1);
	if (run_pairs(b, o, x->pack, (x->total + 3) / 4, b->pair, b->n_win, flags | ALIGN_PACKED,
			b->ends, stride, b->res, msg, msg_len) < 0)
		return 0;
	/* the windows with N, again from ASCII */
	for (i = 0; i < b->n_win; i++) {
		if (idx_range_clean(x, b->win[i].beg, b->win[i].len))
			continue;
		grow(&b->wins, &b->wins_cap, tot + b->win[i].len, 1);
		map_pair(b, nd, i);
		b->dpair[nd++].win_off = tot;
		ext_ref_ascii(x, b->win[i].beg, b->win[i].len, b->wins + tot);
		tot += b->win[i].len;
	}
	return run_mapped(b, o, b->wins, tot, nd, flags, stride, msg, msg_len) < 0 ? 0 : stride;
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
static void prep_reads(ext_batch_t *b, int hpk)
{
	size_t i, tot = 0;

	b->rseq_off = sp_realloc(b->rseq_off, (2 * b->n + 1) * sizeof(size_t));
	for (i = 0; i < b->n; i++) {
		b->rseq_off[2 * i] = tot;
		b->rseq_off[2 * i + 1] = tot + b->cv[i].read.seq_len;
		tot += 2 * (size_t)b->cv[i].read.seq_len;
	}
	b->rseq_off[2 * b->n] = tot;
	grow(&b->rseq, &b->rseq_cap, tot ? tot : 1, 1);
	for (i = 0; i < b->n; i++) {
		const rec_read_t *rd = &b->cv[i].read;
		memcpy(b->rseq + b->rseq_off[2 * i], rd->seq, rd->seq_len);
		seqio_revcomp((char *)b->rseq + b->rseq_off[2 * i + 1], rd->seq, rd->seq_len);
	}
	if (!hpk)
		return;
	/* packed when first needed (ham_read): most reads have windows on one strand */
	grow(&b->hpk_off, &b->hpk_off_cap, b->n ? b->n : 1, sizeof(size_t));
	for (i = 0, tot = 0; i < b->n; i++) {
		uint32_t m = b->cv[i].read.seq_len;
		b->hpk_off[i] = tot;
		tot += 4 * (size_t)(((m < ALIGN_MAX_READ ? m : ALIGN_MAX_READ) + 31) / 32);
	}
	grow(&b->hpk, &b->hpk_cap, tot ? tot : 1, sizeof(uint64_t));
	grow(&b->hpk_set, &b->hpk_set_cap, b->n ? b->n : 1, 1);
	memset(b->hpk_set, 0, b->n);
}

/* Read R's strand STRAND packed for ham_possible. */
static const uint64_t *ham_read(ext_batch_t *b, uint32_t r, unsigned strand)
{
	uint32_t m = b->cv[r].read.seq_len;
	uint64_t *pk = b->hpk + b->hpk_off[r] + 2 * (size_t)((m + 31) / 32) * strand;

	if (!(b->hpk_set[r] & (1u << strand))) {
		ham_pack((const uint8_t *)b->cv[r].read.seq, b->cv[r].read.seq_len, (int)strand, pk);
		b->hpk_set[r] |= (uint8_t)(1u << strand);
	}
	return pk;
}

/*
 * Ask for the reference bytes of read R's first candidates ahead of use:
 * the windows of one read are far from the last read's, so each would
 * otherwise wait for memory.
 */
static void prefetch_ref(const ext_batch_t *b, const idx_t *x, size_t r)
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
static int bad_cands(const rec_cands_t *v, char *msg, size_t msg_len)
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

	if (!b->pre)
		b->pre = align_pre_ws_new();
	grow(&b->pre_yes, &b->pre_yes_cap, n ? n : 1, 1);
	if (align_pre_read(b->pre, b->rseq + b->rseq_off[2 * r + st], b->cv[r].read.seq_len,
				x->pack, off, n, win_len, o->max_a, b->pre_yes) < 0)
		memset(b->pre_yes, 1, n);
	for (k = 0; k < n; k++) {
		if (b->pre_yes[k]) {
			add_win(b, r, (uint8_t)st, seq[k], off[k], win_len, 0, 0);
		} else {
			b->pre_windows++;
			b->pre_bases += win_len;
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

	grow(&b->pc_off, &b->pc_off_cap, npc, sizeof(uint64_t));
	grow(&b->pc_seq, &b->pc_seq_cap, npc, sizeof(uint32_t));
	grow(&b->pc_done, &b->pc_done_cap, npc, 1);
	memset(b->pc_done, 0, npc);
	for (i = 0; i < npc; i = j) {
		unsigned st = b->pc[i].strand;
		for (j = i; j < npc && b->pc[j].strand == st; j++)
			;
		for (k = i; k < j; k++) {
			uint32_t len = b->pc[k].len;
			if (b->pc_done[k])
				continue;
			for (q = k, nn = 0; q < j; q++)
				if (b->pc[q].len == len) {
					b->pc_done[q] = 1;
					b->pc_off[nn] = b->pc[q].beg;
					b->pc_seq[nn++] = b->pc[q].seq;
				}
			pre_group(b, x, o, r, st, b->pc_off, b->pc_seq, nn, len);
		}
	}
}

/* Pass 1 windows of read R; -1 with a message on a candidate outside X. */
static int read_windows(ext_batch_t *b, const idx_t *x, const ext_opt_t *o, uint32_t r,
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

	/* one decoding pass: forward spans from 0, reverse ones from v->n, then
	 * moved behind the forward ones; seedfilt's order (partition, position,
	 * strand) then usually leaves nothing to sort */
	grow(&b->span, &b->span_cap, 2 * (size_t)v->n + 1, sizeof(ext_span_t));
	if (pre && v->n > b->sw_cap) {
		unsigned st;
		b->sw_cap = v->n + v->n / 2;
		for (st = 0; st < 2; st++) {
			b->sw_off[st] = sp_realloc(b->sw_off[st], b->sw_cap * sizeof(uint64_t));
			b->sw_seq[st] = sp_realloc(b->sw_seq[st], b->sw_cap * sizeof(uint32_t));
		}
	}
	rec_cands_first(v, &it);
	for (;;) {
		uint64_t g, sb, se;
		ext_span_t *sp;
		int rc = rec_cands_next_checked(&it, &c);

		if (rc == 0)
			break;
		if (rc < 0) {
			return bad_cands(v, msg, msg_len);
		}

		if (c.part >= x->n_part || c.seq_id >= x->n_seq || c.strand > 1
				|| x->part[c.part].beg + c.pos >= x->part[c.part].end
				|| x->part[c.part].beg + c.pos < x->off[c.seq_id]
				|| x->part[c.part].beg + c.pos >= x->off[c.seq_id] + x->len[c.seq_id]) {
			snprintf(msg, msg_len, "read '%.*s': candidate %u:%u:%u lies outside "
					"the index (was the stream made with another index?)",
					(int)v->read.name_len, v->read.name, c.part, c.seq_id, c.pos);
			return -1;
		}
		g = x->part[c.part].beg + c.pos;
		sb = x->off[c.seq_id];
		se = sb + x->len[c.seq_id];
		sp = c.strand ? &b->span[v->n + nr++] : &b->span[ns++];
		sp->beg = g >= sb + a ? g - a : sb;
		sp->end = g + m + a < se ? g + m + a : se;
		sp->seq = c.seq_id;
		sp->strand = c.strand;
	}
	if (nr)
		memmove(&b->span[ns], &b->span[v->n], nr * sizeof(ext_span_t));
	ns += nr;
	for (i = 1; i < ns; i++) {      /* span_cmp's order, inline: usually already so */
		const ext_span_t *u = &b->span[i - 1], *w = &b->span[i];
		if (u->strand != w->strand ? u->strand > w->strand : u->seq != w->seq ? u->seq > w->seq
				: u->beg != w->beg ? u->beg > w->beg : u->end > w->end)
			break;
	}
	if (i < ns)
		qsort(b->span, ns, sizeof(ext_span_t), span_cmp);
	for (i = 0; i < ns;) {
		ext_span_t s = b->span[i++];
		/* every end column is exact in some piece: pieces overlap by m - 1 + A */
		uint64_t cut = m - 1 + a < EXT_WIN / 2 ? EXT_WIN
			: 4 * (m + a) < ALIGN_MAX_WIN ? 4 * (m + a) : ALIGN_MAX_WIN;
		uint64_t p, step = cut - (m - 1 + a);

		/* scalars, not the struct: gcc compared (seq, strand) through a
		 * stack copy, a store-forwarding stall on every merged span */
		const uint32_t s_seq = s.seq;
		const unsigned s_strand = s.strand;
		uint64_t s_end = s.end;

		while (i < ns && b->span[i].beg <= s_end && b->span[i].seq == s_seq
				&& b->span[i].strand == s_strand) {
			if (b->span[i].end > s_end)
				s_end = b->span[i].end;
			i++;
		}
		s.end = s_end;
		if (m > a && s.end - s.beg + a < m)
			continue;       /* too short to hold the read within A */
		for (p = s.beg;; p += step) {
			uint64_t e = p + cut < s.end ? p + cut : s.end;
			if (pre && e - p == l0 && nsw[s_strand] < b->sw_cap) {
				b->sw_off[s_strand][nsw[s_strand]] = p;
				b->sw_seq[s_strand][nsw[s_strand]++] = s_seq;
			} else if (pre) {
				ext_win_t *w;
				grow(&b->pc, &b->pc_cap, npc + 1, sizeof(ext_win_t));
				w = &b->pc[npc++];
				w->read = r;
				w->seq = s.seq;
				w->strand = s.strand;
				w->beg = p;
				w->len = (uint32_t)(e - p);
			} else if (!o->nogaps || ham_possible(x, ham_read(b, r, s.strand), (uint32_t)m,
						p, e, o->max_a)) {
				add_win(b, r, s.strand, s.seq, p, (uint32_t)(e - p), 0, 0);
			}
			if (e == s.end)
				break;
		}
	}
	if (pre) {
		unsigned st;
		for (st = 0; st < 2; st++)
			if (nsw[st])
				pre_group(b, x, o, r, st, b->sw_off[st], b->sw_seq[st], nsw[st], (uint32_t)l0);
		if (npc)
			pre_windows(b, x, o, r, npc);
	}
	return 0;
}

/* Mismatches of READ against WIN (M bases each; N matches nothing, as in the core). */
static uint32_t ext_mismatches(const uint8_t *read, const uint8_t *win, uint32_t m)
{
	uint32_t i, mm = 0;

	for (i = 0; i < m; i++) {
		unsigned c = sp_nt4_codes[read[i]];
		mm += c > 3 || c != sp_nt4_codes[win[i]];
	}
	return mm;
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
 */
static int run_pass2(ext_batch_t *b, const ext_opt_t *o, size_t stride, size_t wins_len,
		char *msg, size_t msg_len)
{
	size_t k, nd = 0;

	for (k = 0; k < b->n_win; k++) {
		const align_pair_t *p = &b->pair[k];
		uint32_t m = p->read_len, n = p->win_len;
		if (b->hexact[k] && n >= m && ext_mismatches(b->rseq + p->read_off,
					b->wins + p->win_off + (n - m), m) == b->hits[k].dist) {
			align_res_t *r = &b->res[k];
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
	return run_mapped(b, o, b->wins, wins_len, nd, 0, stride, msg, msg_len);
}

int ext_batch_run(ext_batch_t *b, const idx_t *x, const ext_opt_t *o, ext_stats_t *st,
		char *msg, size_t msg_len)
{
	unsigned base = o->nogaps ? ALIGN_NOGAPS : 0;
	size_t i, k, stride, wins_len, n_loc;
	size_t *win_beg;
	uint32_t a = o->max_a;

	prep_reads(b, o->nogaps);
	b->hit_beg = sp_realloc(b->hit_beg, (b->n + 1) * sizeof(size_t));
	b->n_hits = sp_realloc(b->n_hits, (b->n + 1) * sizeof(uint32_t));
	win_beg = sp_malloc((b->n + 1) * sizeof(size_t));

	/* pass 1: the end distances of every window */
	b->n_win = 0;
	b->pre_windows = b->pre_bases = 0;
	for (i = 0; i < b->n; i++) {
		win_beg[i] = b->n_win;
		if (i + 2 < b->n)
			prefetch_ref(b, x, i + 2);
		if (b->cv[i].read.seq_len == 0 || b->cv[i].read.seq_len > ALIGN_MAX_READ) {
			/* no windows, but its list is checked all the same */
			const rec_cands_t *v = &b->cv[i];
			rec_cand_iter_t it;
			rec_cand_t c;
			int rc;
			rec_cands_first(v, &it);
			while ((rc = rec_cands_next_checked(&it, &c)) > 0)
				;
			if (rc < 0) {
				free(win_beg);
				return bad_cands(v, msg, msg_len);
			}
			continue;
		}
		if (read_windows(b, x, o, (uint32_t)i, msg, msg_len) < 0) {
			free(win_beg);
			return -1;
		}
	}
	win_beg[b->n] = b->n_win;
	st->windows += b->n_win + b->pre_windows;
	st->bases += b->pre_bases;
	for (k = 0; k < b->n_win; k++)
		st->bases += b->win[k].len;
	/* only the ends of windows with a hit are read below */
	stride = run_pass1(b, x, o, base | ALIGN_ENDS | ALIGN_NOCIGAR | (o->ocl ? 0 : ALIGN_ENDS_HITS),
			msg, msg_len);
	if (!stride) {
		free(win_beg);
		return -1;
	}

	/* loci: collected as hits holding the best end (pos = global end for now) */
	b->n_hit = 0;
	for (i = 0; i < b->n; i++) {
		size_t ne = 0, j;

		b->hit_beg[i] = b->n_hit;
		for (k = win_beg[i]; k < win_beg[i + 1]; k++) {
			const uint8_t *en = b->ends + k * stride;
			uint32_t c, c_exact;
			if (b->res[k].dist < 0)
				continue;
			/* an end from column c_exact on has every alignment within A
			 * that ends there in the window (none starts before it) */
			c_exact = b->win[k].beg == x->off[b->win[k].seq] ? 0
				: (uint32_t)(b->cv[i].read.seq_len + a - 1);
			grow(&b->endv, &b->endv_cap, ne + b->win[k].len, sizeof(ext_end_t));
			for (c = 0; c < b->win[k].len; c++) {
				uint64_t e8;
				if (c + 8 <= b->win[k].len && (memcpy(&e8, en + c, 8), e8 == ~0ull)) {
					c += 7;         /* 8 columns without an end (ALIGN_END_NONE) */
					continue;
				}
				if (en[c] == ALIGN_END_NONE)
					continue;
				b->endv[ne].e = b->win[k].beg + c;
				b->endv[ne].seq = b->win[k].seq;
				b->endv[ne].strand = b->win[k].strand;
				b->endv[ne].d = en[c];
				b->endv[ne].exact = c >= c_exact;
				ne++;
			}
		}
		for (j = 1; j < ne && end_cmp(&b->endv[j - 1], &b->endv[j]) <= 0; j++)
			;
		if (j < ne)     /* windows in order leave them sorted but for overlaps */
			qsort(b->endv, ne, sizeof(ext_end_t), end_cmp);
		for (j = 0; j < ne;) {
			ext_end_t best = b->endv[j], last = b->endv[j];
			ext_hit_t *h;

			j++;
			while (j < ne && b->endv[j].strand == last.strand
					&& b->endv[j].seq == last.seq
					&& b->endv[j].e <= last.e + (o->nogaps ? 0 : 1)) {
				if (b->endv[j].e != last.e && b->endv[j].d < best.d)
					best = b->endv[j];
				last = b->endv[j];
				j++;
			}
			grow(&b->hits, &b->hit_cap, b->n_hit + 1, sizeof(ext_hit_t));
			grow(&b->hexact, &b->hexact_cap, b->n_hit + 1, 1);
			b->hexact[b->n_hit] = best.exact;
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
	free(win_beg);

	/* pass 2: trace each locus back in a window ending at its best end */
	b->n_win = 0;
	for (i = 0; i < b->n; i++) {
		uint64_t m = b->cv[i].read.seq_len;
		for (k = b->hit_beg[i]; k < b->hit_beg[i] + b->n_hits[i]; k++) {
			const ext_hit_t *h = &b->hits[k];
			uint64_t sb = x->off[h->seq], e = h->pos, wb;
			if (o->nogaps)
				wb = e + 1 - m;
			else
				wb = e >= sb + m - 1 + a ? e + 1 - m - a : sb;
			add_win(b, (uint32_t)i, h->strand, h->seq, wb, (uint32_t)(e + 1 - wb),
					(uint32_t)(e - wb), (uint32_t)(e - wb));
		}
	}
	stride = fill_wins(b, x);
	wins_len = b->n_win ? b->pair[b->n_win - 1].win_off + b->win[b->n_win - 1].len : 0;
	if (o->nogaps) {
		/* the window is the hit's diagonal, whose exact count pass 1 gave:
		 * what the core would return for it, without running it */
		for (k = 0; k < b->n_win; k++) {
			align_res_t *r = &b->res[k];
			r->dist = (int)b->hits[k].dist;
			r->start = 0;
			r->end = b->win[k].len - 1;
			r->n_ends = 1;
			r->n_cigar = 1;
			r->cigar[0] = b->win[k].len << 4 | SP_CIGAR_M;
		}
	} else if (o->ocl) {
		if (run_core(b, o, base, stride, wins_len, msg, msg_len) < 0)
			return -1;
	} else if (run_pass2(b, o, stride, wins_len, msg, msg_len) < 0) {
		return -1;
	}

	/* hits: positions, CIGAR, MD; order, selection and MAPQ per read */
	for (k = 0; k < b->n_win; k++) {
		ext_hit_t *h = &b->hits[k];
		const align_res_t *r = &b->res[k];
		const ext_win_t *w = &b->win[k];
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
		need = align_md_str(r, b->rseq + b->pair[k].read_off, b->wins, b->pair[k].win_off,
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
			qsort(h, n, sizeof(ext_hit_t), hit_cmp);
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
	}
	st->reads += b->n;
	st->cands += b->n_cands;
	return 0;
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

void ext_bam_record(ext_bam_t *f, const rec_read_t *rd, const ext_hit_t *h, const char *md,
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
		sp_die("cannot make the SAM record of read '%.*s'", (int)nl, name);
	if (h) {
		if (bam_aux_update_int(f->b, "NM", h->dist) < 0
				|| bam_aux_append(f->b, "MD", 'Z', (int)strlen(md) + 1,
					(const uint8_t *)md) < 0
				|| bam_aux_update_int(f->b, "AS", -(int64_t)h->dist) < 0)
			sp_die("cannot make the SAM tags of read '%.*s'", (int)nl, name);
	}
}
