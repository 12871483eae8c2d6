/*
 * idx_load.c - load (mmap or read), check and query a seedpipe index; the
 * format is in idx.h and man/seedpipe-index.5.
 */
#include "idx_priv.h"
#include "sp_le.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "inc_bdz.h"
#include "inc_idx.h"
#include "sp_csum.h"
#include "util.h"

typedef idx_sec_t sec_t;

static char *fmt_err(const char *fmt, ...) SP_PRINTF(1, 2);

static char *fmt_err(const char *fmt, ...)
{
	va_list ap;
	char *s = sp_malloc(512);

	va_start(ap, fmt);
	vsnprintf(s, 512, fmt, ap);
	va_end(ap);
	return s;
}

/* "section 'NAME'" or "section 'NAME' of partition P". */
static const char *sec_label(const sec_t *s, char *buf, size_t n)
{
	if (s->part == IDX_PART_GLOBAL)
		snprintf(buf, n, "section '%s'", s->name);
	else
		snprintf(buf, n, "section '%s' of partition %u", s->name, s->part);
	return buf;
}

static int read_all(int fd, uint8_t **buf, size_t *len)
{
	size_t cap = 1 << 20, n = 0;
	uint8_t *b;

	if (posix_memalign((void **)&b, IDX_ALIGN, cap) != 0)
		sp_die("out of memory");
	for (;;) {
		ssize_t got;

		if (n == cap) {
			uint8_t *nb;

			if (posix_memalign((void **)&nb, IDX_ALIGN, cap * 2) != 0)
				sp_die("out of memory (%zu bytes)", cap * 2);
			memcpy(nb, b, n);
			free(b);
			b = nb;
			cap *= 2;
		}
		got = read(fd, b + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			free(b);
			return -1;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	*buf = b;
	*len = n;
	return 0;
}

/*
 * The sections by (name, partition): open addressing over section numbers
 * + 1 (0 = empty), so that finding a section, and refusing one that comes
 * twice, costs O(1) instead of a scan of the table (quadratic in a file of
 * many tiny sections).
 */
typedef struct {
	uint64_t *slot;
	uint64_t mask;             /* table size - 1 */
} sec_tab_t;

static uint64_t sec_hash(const char *name, uint32_t part)
{
	return XXH3_64bits_withSeed(name, strlen(name), part);
}

static const sec_t *find_sec(const sec_tab_t *t, const sec_t *s, const char *name, uint32_t part)
{
	uint64_t h;

	if (!t->slot)
		return NULL;
	for (h = sec_hash(name, part) & t->mask; t->slot[h]; h = (h + 1) & t->mask) {
		const sec_t *c = &s[t->slot[h] - 1];

		if (c->part == part && strcmp(c->name, name) == 0)
			return c;
	}
	return NULL;
}

/* Enter section I of S (not in the table yet); N sections are entered after it. */
static void tab_put(sec_tab_t *t, const sec_t *s, uint64_t i)
{
	uint64_t h, j;

	if (!t->slot || 2 * (i + 1) > t->mask + 1) {
		uint64_t size = t->slot ? 2 * (t->mask + 1) : 64;

		free(t->slot);
		t->slot = sp_calloc(size, sizeof *t->slot);
		t->mask = size - 1;
		for (j = 0; j < i; j++) {
			for (h = sec_hash(s[j].name, s[j].part) & t->mask; t->slot[h]; h = (h + 1) & t->mask)
				;
			t->slot[h] = j + 1;
		}
	}
	for (h = sec_hash(s[i].name, s[i].part) & t->mask; t->slot[h]; h = (h + 1) & t->mask)
		;
	t->slot[h] = i + 1;
}

/* Threads of the checks (idx_check.c): the cores, as many as the loader's caller may have. */
static int check_threads(void)
{
	return sp_default_threads(64);
}

static char *check_part(const idx_t *x, uint32_t i)
{
	char msg[512];

	return idx_check_part(x, i, check_threads(), msg, sizeof msg) ? fmt_err("%s", msg) : NULL;
}

/*
 * The partition table is a function of the sequence offsets, the partition
 * size and the window (idx_part_next, which the builder uses): replay it
 * here, one partition at a time, and compare.  Constant memory, whatever
 * the header claims; the caller checked part_limit >= 2 * win, which makes
 * every step advance.
 */
static char *check_partitions(const idx_t *x, uint32_t win)
{
	uint64_t cur = 0;
	uint32_t i = 0, np = 0;
	idx_prange_t r;

	while (idx_part_next(x->off, x->n_seq, x->p.part_limit, win, &i, &cur, &r)) {
		const idx_part_t *pt;

		if (np == x->n_part)
			return fmt_err("section 'part' holds %u partitions, the sequences make more", x->n_part);
		pt = &x->part[np];
		if (pt->beg != r.beg || pt->end != r.end || pt->first_seq != r.first_seq
				|| pt->end_seq != r.end_seq)
			return fmt_err("section 'part': partition %u is not the one the sequences and the partition size make", np);
		np++;
	}
	if (np != x->n_part)
		return fmt_err("section 'part' holds %u partitions, the sequences make %u", x->n_part, np);
	return NULL;
}

#define ALL_SECS IDX_SUMS_ALL   /* sums_bad: every section */

/*
 * Check the payload checksums of the sections of partition PART
 * (IDX_PART_GLOBAL: the global ones; ALL_SECS: all); 1 with a message in
 * *ERR (if not NULL) for the first mismatch, else 0.
 */
static int sums_bad(const idx_t *x, uint32_t part, char **err)
{
	int64_t i = idx_sums_first_bad(x, part, check_threads());
	char lab[96];

	if (i < 0)
		return 0;
	if (err)
		*err = fmt_err("checksum mismatch in %s (the index is damaged)",
			sec_label((const sec_t *)x->secs + i, lab, sizeof lab));
	return 1;
}

/*
 * The file bytes of each partition's sections (headers, payloads, padding):
 * the writer puts them one after the other, partition by partition, so each
 * partition is one range, [part_rng[2i], part_rng[2i] + part_rng[2i+1]).
 */
static void part_ranges(idx_t *x)
{
	const sec_t *s = x->secs;
	uint64_t i;

	x->part_rng = sp_calloc(2 * (size_t)(x->n_part ? x->n_part : 1), sizeof *x->part_rng);
	for (i = 0; i < x->n_sections; i++) {
		uint64_t b = s[i].off - IDX_SEC_HDR, e = s[i].off + (s[i].len + IDX_ALIGN - 1) / IDX_ALIGN * IDX_ALIGN;
		uint64_t *r;

		if (s[i].part == IDX_PART_GLOBAL)
			continue;
		r = &x->part_rng[2 * (size_t)s[i].part];
		if (r[1] == 0) {
			r[0] = b;
			r[1] = e - b;
			continue;
		}
		if (b < r[0]) {
			r[1] += r[0] - b;
			r[0] = b;
		}
		if (e > r[0] + r[1])
			r[1] = e - r[0];
	}
}

/* Parse the mapped/read image; NULL on success or a message. */
static char *parse_tab(idx_t *x, const uint8_t *b, size_t size, int verify, sec_tab_t *tab)
{
	uint32_t ver, hlen, i, win;
	uint64_t off = IDX_HDR_LEN, ns = 0, cap = 64, nc, kb;
	sec_t *secs;
	const sec_t *s;
	char lab[96], prev[96] = "the header";
	int ended = 0;
	const char *pn[20];
	int npn, k;

	if (size == 0)
		return fmt_err("empty file (not a seedpipe index)");
	if (size < 8 || memcmp(b, IDX_MAGIC, 8) != 0)
		return fmt_err("not a seedpipe index (bad magic)");
	if (size < IDX_HDR_LEN)
		return fmt_err("truncated in the header");
	ver = sp_ld32(b + 8);
	hlen = sp_ld32(b + 12);
	if (SP_SUM_BAD(sp_ld64(b + 120), XXH3_64bits(b, 120)))
		return fmt_err("header checksum mismatch (the index is damaged)");
	if (ver > IDX_VERSION)
		return fmt_err("format version %u is newer than this seedpipe reads (%d)", ver, IDX_VERSION);
	if (ver == 1 || ver == 2)
		return fmt_err("format version %u is no longer read: rebuild the index with this seqidx (it writes version %d)",
			ver, IDX_VERSION);
	if (ver == 0 || hlen != IDX_HDR_LEN)
		return fmt_err("bad header (version %u, length %u)", ver, hlen);
	x->fingerprint = sp_ld64(b + 16);
	if (idx_params_unpack(&x->p, b + 24, &x->n_seq, &x->n_part, &x->total, &x->n_nrun) != 0)
		return fmt_err("header parameters out of range");
	/* version 3 lacks the windows whose neighborhood runs past a sequence's
	 * end or into N (bpr misses reads flush with them); its FM-index alone
	 * is the same */
	if (ver == 3 && (x->p.structs & IDX_S_DEFAULT))
		return fmt_err("format version 3 is no longer read: its neighborhood structures lack the seeds near sequence ends and N runs (reads there can lose hits); rebuild the index with this seqidx (it writes version %d)",
			IDX_VERSION);
	/* version 4's indexed-block sections have one rank width and u32 seeds;
	 * its other structures are the same */
	if (ver == 4 && (x->p.structs & IDX_S_BLOCK))
		return fmt_err("format version 4 is no longer read: its indexed-block structure stores every rank at the largest block's width; rebuild the index with this seqidx (it writes version %d)",
			IDX_VERSION);
	win = x->p.span + x->p.l;
	if (x->p.part_limit < 2ULL * win || x->p.part_limit > IDX_PART_MAX
			|| ((x->p.structs & IDX_S_FM) && x->p.sa_rate > FM_MAX_RATE))
		return fmt_err("header parameters out of range");
	secs = sp_malloc(cap * sizeof *secs);
	x->secs = secs;
	while (!ended) {
		const uint8_t *h = b + off;
		sec_t *c;

		if (off + IDX_SEC_HDR > size)
			return fmt_err("truncated after %s (the end section is missing: was the index completely written?)", prev);
		if (ns == cap) {
			secs = sp_realloc(secs, (cap *= 2) * sizeof *secs);
			x->secs = secs;
		}
		c = &secs[ns];
		memcpy(c->name, h, 16);
		c->name[15] = 0;
		if (SP_SUM_BAD(sp_ld64(h + 56), XXH3_64bits(h, 56))) {
			size_t j;

			for (j = 0; c->name[j]; j++)
				if (c->name[j] < 32 || c->name[j] > 126)
					break;
			if (c->name[0] && !c->name[j])
				return fmt_err("damaged header of section '%s' at byte %llu", c->name, (unsigned long long)off);
			return fmt_err("damaged section header at byte %llu (after %s)", (unsigned long long)off, prev);
		}
		c->part = sp_ld32(h + 16);
		c->esize = sp_ld32(h + 20);
		c->len = sp_ld64(h + 24);
		c->xxh3 = sp_ld64(h + 32);
		c->off = off + IDX_SEC_HDR;
		c->data = b + c->off;
		sec_label(c, lab, sizeof lab);
		if (c->len > size || c->off + c->len > size)
			return fmt_err("truncated in %s", lab);
		if (c->part != IDX_PART_GLOBAL && c->part >= x->n_part)
			return fmt_err("%s: partition out of range", lab);
		if (find_sec(tab, secs, c->name, c->part))
			return fmt_err("%s appears twice", lab);
		tab_put(tab, secs, ns);
		off = c->off + (c->len + IDX_ALIGN - 1) / IDX_ALIGN * IDX_ALIGN;
		ns++;
		if (strcmp(c->name, "end") == 0) {
			if (c->len != 32 || SP_SUM_BAD(c->xxh3, XXH3_64bits_withSeed(c->data, 32, x->fingerprint))
					|| sp_ld64(c->data) != x->fingerprint || sp_ld64(c->data + 8) != ns
					|| sp_ld64(c->data + 16) != c->off - IDX_SEC_HDR
					|| memcmp(c->data + 24, IDX_END_MAGIC, 6) != 0)
				return fmt_err("section 'end' is damaged (or the index was not completely written)");
			if (off != size)
				return fmt_err("%llu bytes of garbage after the end section",
					(unsigned long long)(size - off));
			ended = 1;
		}
		snprintf(prev, sizeof prev, "%s", lab);
	}
	x->n_sections = ns;
	if (verify) {
		char *e = NULL;

		/* IDX_LOAD_PARTS: the partitions' payloads later, one at a time */
		if (sums_bad(x, verify == 2 ? IDX_PART_GLOBAL : ALL_SECS, &e))
			return e;
	}

	/* global sections */
#define NEED(var, nm, pt) do { \
		if (!((var) = find_sec(tab, secs, (nm), (pt)))) { \
			if ((pt) == IDX_PART_GLOBAL) return fmt_err("section '%s' is missing", (nm)); \
			return fmt_err("section '%s' of partition %u is missing", (nm), (unsigned)(pt)); } \
	} while (0)
#define SIZE(sp, want) do { if ((sp)->len != (uint64_t)(want)) \
		return fmt_err("%s has a bad size (%llu bytes, expected %llu)", \
			sec_label((sp), lab, sizeof lab), (unsigned long long)(sp)->len, \
			(unsigned long long)(want)); } while (0)
	/*
	 * Sizes first, against the file: nothing below is allocated or scanned
	 * from a count the file cannot hold.
	 */
	NEED(s, "seq.len", IDX_PART_GLOBAL);
	SIZE(s, (uint64_t)x->n_seq * 8);
	x->len = (const uint64_t *)s->data;
	NEED(s, "seq.off", IDX_PART_GLOBAL);
	SIZE(s, ((uint64_t)x->n_seq + 1) * 8);
	x->off = (const uint64_t *)s->data;
	NEED(s, "seq.names", IDX_PART_GLOBAL);
	{
		const char *p = (const char *)s->data, *e = p + s->len;

		if (s->len == 0 || p[s->len - 1] != 0)
			return fmt_err("section 'seq.names' is malformed");
		if (s->len < 2ULL * x->n_seq)
			return fmt_err("section 'seq.names' holds fewer than %u names", x->n_seq);
		x->names = sp_malloc((x->n_seq ? x->n_seq : 1) * sizeof *x->names);
		for (i = 0; i < x->n_seq; i++) {
			if (p >= e)
				return fmt_err("section 'seq.names' holds fewer than %u names", x->n_seq);
			if (!*p)
				return fmt_err("section 'seq.names': name %u is empty", i);
			x->names[i] = p;
			p += strlen(p) + 1;
		}
		if (p != e)
			return fmt_err("section 'seq.names' holds more than %u names", x->n_seq);
	}
	/* offsets non-decreasing from 0 to the total (no wrap modulo 2^64) */
	if (x->off[0] != 0 || x->off[x->n_seq] != x->total)
		return fmt_err("section 'seq.off' disagrees with the header");
	for (i = 0; i < x->n_seq; i++)
		if (x->off[i + 1] < x->off[i] || x->off[i + 1] - x->off[i] != x->len[i])
			return fmt_err("section 'seq.off' disagrees with 'seq.len'");
	NEED(s, "ref.pack", IDX_PART_GLOBAL);
	SIZE(s, x->total / 4 + (x->total % 4 != 0) + 16);
	x->pack = s->data;
	NEED(s, "ref.nrun", IDX_PART_GLOBAL);
	if (s->len % 16 != 0 || s->len / 16 != x->n_nrun)
		return fmt_err("%s has a bad size (%llu bytes, expected %llu runs of 16)",
			sec_label(s, lab, sizeof lab), (unsigned long long)s->len,
			(unsigned long long)x->n_nrun);
	x->nrun = (const uint64_t *)s->data;
	{
		uint64_t prev = 0, r;

		/* runs of N: in order, apart, inside the reference */
		for (r = 0; r < x->n_nrun; r++) {
			uint64_t st = x->nrun[2 * r], ln = x->nrun[2 * r + 1];

			if (ln == 0 || st < prev || st > x->total || ln > x->total - st)
				return fmt_err("section 'ref.nrun': run %llu is out of order or range",
					(unsigned long long)r);
			prev = st + ln;
		}
	}
	NEED(s, "part", IDX_PART_GLOBAL);
	SIZE(s, (uint64_t)x->n_part * 32);
	x->part = sp_calloc(x->n_part ? x->n_part : 1, sizeof *x->part);
	x->own_end = sp_calloc(x->n_part ? x->n_part : 1, sizeof *x->own_end);
	for (i = 0; i < x->n_part; i++) {
		idx_part_t *pt = &x->part[i];

		pt->beg = sp_ld64(s->data + 32 * i);
		pt->end = sp_ld64(s->data + 32 * i + 8);
		pt->first_seq = sp_ld32(s->data + 32 * i + 16);
		pt->end_seq = sp_ld32(s->data + 32 * i + 20);
		pt->n_occ = sp_ld64(s->data + 32 * i + 24);
		if (pt->beg >= pt->end || pt->end > x->total || pt->end - pt->beg > x->p.part_limit
				|| pt->end_seq > x->n_seq || pt->first_seq >= pt->end_seq
				|| pt->n_occ > pt->end - pt->beg)
			return fmt_err("section 'part': partition %u is out of range", i);
	}
	{
		char *e = check_partitions(x, win);

		if (e)
			return e;
	}
	for (i = 0; i < x->n_part; i++)
		x->own_end[i] = i + 1 < x->n_part && x->part[i + 1].beg < x->part[i].end
			? x->part[i + 1].beg : x->part[i].end;

	nc = 1ULL << (2 * x->p.w);
	kb = IDX_KEY_BYTES(x->p.l);
	npn = idx_part_sections(x->p.structs, pn, 20);
	for (i = 0; i < x->n_part; i++) {
		idx_part_t *pt = &x->part[i];
		const sec_t *q;

		for (k = 0; k < npn; k++)
			NEED(q, pn[k], i);
		if (x->p.structs & (IDX_S_GENERAL | IDX_S_REDUCED | IDX_S_BLOCK)) {
			NEED(q, "red.pos", i); SIZE(q, pt->n_occ * 4);
			pt->red_pos = (const uint32_t *)q->data;
			NEED(q, "red.start", i); SIZE(q, (nc + 1) * 4);
			pt->red_start = (const uint32_t *)q->data;
			pt->n_uniq = pt->red_start[nc];
			NEED(q, "red.nb", i); SIZE(q, pt->n_uniq * kb);
			if (kb == 4)
				pt->red_nb32 = (const uint32_t *)q->data;
			else
				pt->red_nb = (const uint64_t *)q->data;
			NEED(q, "red.grp", i); SIZE(q, (pt->n_uniq / 64 + 1) * 16);
			pt->red_grp = (const uint32_t *)q->data;
			NEED(q, "red.rep", i);
			if (q->len % 4 != 0)
				return fmt_err("%s has a bad size (%llu bytes, not a multiple of 4)",
					sec_label(q, lab, sizeof lab), (unsigned long long)q->len);
			pt->red_rep = (const uint32_t *)q->data;
			pt->n_rep = q->len / 4;
		}
		if (x->p.structs & IDX_S_BLOCK) {
			NEED(q, "blk.start", i); SIZE(q, (nc + 1) * 4);
			pt->blk_start = (const uint32_t *)q->data;
			pt->n_slots = pt->blk_start[nc];
			NEED(q, "blk.seed", i); SIZE(q, nc);
			pt->blk_seed = q->data;
			NEED(q, "blk.roff", i); SIZE(q, (nc + 1) * 4);
			pt->blk_roff = (const uint32_t *)q->data;
			pt->n_rank_words = pt->blk_roff[nc];
			NEED(q, "blk.g", i); SIZE(q, (pt->n_slots + 3) / 4);
			pt->blk_g = q->data;
			/* blk.roff is checked against red.start and blk.start before use
			 * (idx_check.c); its last entry sizes blk.rank, which must match */
			NEED(q, "blk.rank", i); SIZE(q, (pt->n_rank_words + 1) * 4);
			pt->blk_rank = (const uint32_t *)q->data;
		}
		if (x->p.structs & IDX_S_FM) {
			const sec_t *m, *o, *mk, *sa;

			NEED(m, "fm.meta", i); SIZE(m, FM_META_LEN);
			NEED(o, "fm.occ", i);
			NEED(mk, "fm.mark", i);
			NEED(sa, "fm.sa", i);
			if (fm_view(&pt->fm, m->data, o->data, o->len, (const uint64_t *)mk->data, mk->len,
					(const uint32_t *)sa->data, sa->len) != 0
					|| pt->fm.n != pt->end - pt->beg || pt->fm.sa_rate != x->p.sa_rate)
				return fmt_err("FM-index sections of partition %u are inconsistent", i);
		}
	}
	for (i = 0; i < ns; i++) {
		int known = 0;

		if (secs[i].part == IDX_PART_GLOBAL) {
			static const char *const g[] = { "seq.names", "seq.len", "seq.off", "ref.pack", "ref.nrun", "part", "end" };

			for (k = 0; k < 7; k++)
				known |= strcmp(secs[i].name, g[k]) == 0;
		} else {
			for (k = 0; k < npn; k++)
				known |= strcmp(secs[i].name, pn[k]) == 0;
		}
		if (!known)
			return fmt_err("unexpected %s", sec_label(&secs[i], lab, sizeof lab));
	}
#undef NEED
#undef SIZE
	part_ranges(x);
	if (verify == 1)
		for (i = 0; i < x->n_part; i++) {
			char *e = check_part(x, i);

			if (e)
				return e;
		}
	return NULL;
}

static char *parse(idx_t *x, const uint8_t *b, size_t size, int verify)
{
	sec_tab_t tab = { NULL, 0 };
	char *e = parse_tab(x, b, size, verify, &tab);

	free(tab.slot);
	return e;
}

int idx_check_deep(const idx_t *x, char **err)
{
	char why[160];
	uint32_t i;

	for (i = 0; i < x->n_part; i++)
		if ((x->p.structs & IDX_S_FM) && fm_check_walk(&x->part[i].fm, why, sizeof why) != 0) {
			if (err)
				*err = fmt_err("FM-index sections of partition %u are inconsistent: %s", i, why);
			return -1;
		}
	return 0;
}

int idx_verify(const idx_t *x, char **err)
{
	return sums_bad(x, ALL_SECS, err) ? -1 : 0;
}

/*
 * IDX_LOAD_PARTS: check the partitions one at a time (checksums, then
 * check_part), each dropped from memory after its check, so that the
 * check needs one partition's memory, not the index's.
 */
static char *check_parts_in_turn(idx_t *x, int verify)
{
	uint32_t i;

	for (i = 0; i < x->n_part; i++) {
		char *e = NULL;

		if (verify && (sums_bad(x, i, &e) || (e = check_part(x, i)) != NULL))
			return e;
		idx_part_drop(x, i);
	}
	return NULL;
}

uint64_t idx_part_bytes(const idx_t *x, uint32_t i)
{
	return i < x->n_part && x->part_rng ? x->part_rng[2 * (size_t)i + 1] : 0;
}

uint64_t idx_global_bytes(const idx_t *x)
{
	uint64_t n = x->map_len;
	uint32_t i;

	for (i = 0; i < x->n_part; i++)
		n -= idx_part_bytes(x, i);
	return n;
}

/* The whole pages of the mapping inside [P, P + LEN): [*b, *e); 0 when none (or not mapped). */
static int range_pages(const idx_t *x, const void *p, uint64_t len, uintptr_t *b, uintptr_t *e)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE), base = (uintptr_t)x->map, a = (uintptr_t)p;

	if (!x->mapped || !p || pg == 0 || pg == (uintptr_t)-1 || a < base || a + len > base + x->map_len)
		return 0;
	*b = (a + pg - 1) / pg * pg;
	*e = (a + (uintptr_t)len) / pg * pg;
	return *e > *b;
}

/* Partition I's range of the mapping: 0 when unknown. */
static int part_range(const idx_t *x, uint32_t i, const void **p, uint64_t *len)
{
	if (i >= x->n_part || !x->part_rng)
		return 0;
	*p = (const uint8_t *)x->map + x->part_rng[2 * (size_t)i];
	*len = x->part_rng[2 * (size_t)i + 1];
	return 1;
}

uint64_t idx_pages_load(const idx_t *x, const void *p, uint64_t len)
{
	volatile const uint8_t *q;
	uintptr_t b, e, pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uint64_t sum = 0;

	if (!range_pages(x, p, len, &b, &e))
		return 0;
#ifdef MADV_POPULATE_READ
	/* the page tables filled in one call, not a fault a page (Linux 5.14 on) */
	if (madvise((void *)b, e - b, MADV_POPULATE_READ) == 0)
		return e - b;
#endif
	madvise((void *)b, e - b, MADV_WILLNEED);
	for (q = (const uint8_t *)b; (uintptr_t)q < e; q += pg)
		sum += *q;
	return sum;
}

void idx_pages_drop(const idx_t *x, const void *p, uint64_t len)
{
	uintptr_t b, e;

	/* a private, never written file mapping: the pages are read again
	 * from the file when next touched */
	if (range_pages(x, p, len, &b, &e))
		madvise((void *)b, e - b, MADV_DONTNEED);
}

uint64_t idx_part_load(const idx_t *x, uint32_t i)
{
	const void *p;
	uint64_t len;

	return part_range(x, i, &p, &len) ? idx_pages_load(x, p, len) : 0;
}

void idx_part_drop(const idx_t *x, uint32_t i)
{
	const void *p;
	uint64_t len;

	if (part_range(x, i, &p, &len))
		idx_pages_drop(x, p, len);
}

void idx_part_view(const idx_t *x, uint32_t i, idx_t *v)
{
	*v = *x;
	v->n_part = 1;
	v->part = x->part + i;
	v->own_end = x->own_end + i;
	v->part_rng = x->part_rng ? x->part_rng + 2 * (size_t)i : NULL;
}

idx_t *idx_load(const char *path, int flags, char **err)
{
	idx_t *x = sp_calloc(1, sizeof *x);
	int fd = strcmp(path, "-") == 0 ? 0 : open(path, O_RDONLY);
	struct stat st;
	char *e;

	x->path = sp_strdup(path);
	if (fd < 0) {
		*err = fmt_err("%s", strerror(errno));
		idx_close(x);
		return NULL;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && !(flags & IDX_LOAD_READ) && st.st_size > 0) {
		x->map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (x->map == MAP_FAILED) {
			x->map = NULL;
		} else {
			x->map_len = (size_t)st.st_size;
			x->mapped = 1;
#ifdef MADV_HUGEPAGE
			/*
			 * seedfilt's lookups land all over hundreds of MB, and
			 * with 4 KiB pages most of them wait for a page walk.
			 * Pages read in from now on come in 2 MiB folios, which
			 * the kernel maps whole; a hint, no effect on pages
			 * already cached in small folios.
			 */
			madvise(x->map, x->map_len, MADV_HUGEPAGE);
#endif
		}
	}
	if (!x->map) {
		uint8_t *b;
		size_t n;

		if (read_all(fd, &b, &n) != 0) {
			*err = fmt_err("cannot read: %s", strerror(errno));
			if (fd)
				close(fd);
			idx_close(x);
			return NULL;
		}
		x->map = b;
		x->map_len = n;
	}
	if (fd)
		close(fd);
	e = parse(x, x->map, x->map_len, (flags & IDX_LOAD_NOVERIFY) ? 0 : (flags & IDX_LOAD_PARTS) ? 2 : 1);
	if (!e && (flags & IDX_LOAD_PARTS))
		e = check_parts_in_turn(x, !(flags & IDX_LOAD_NOVERIFY));
	if (e) {
		*err = e;
		idx_close(x);
		return NULL;
	}
	x->lazy = (flags & IDX_LOAD_PARTS) && x->mapped;
	return x;
}

idx_t *idx_open_or_die(const char *path, int flags)
{
	char *e = NULL;
	idx_t *x = idx_load(path, flags, &e);

	if (!x) {
		char msg[1024];

		snprintf(msg, sizeof msg, "%s", e);   /* freed before the exit (leak checkers) */
		free(e);
		sp_die("index '%s': %s", path, msg);
	}
	return x;
}

void idx_close(idx_t *x)
{
	if (!x)
		return;
	if (x->mapped)
		munmap(x->map, x->map_len);
	else
		free(x->map);
	free(x->names);
	free(x->part);
	free(x->own_end);
	free(x->part_rng);
	free(x->secs);
	free(x->path);
	free(x);
}

/* Bytes of the sections (all partitions) whose names start with one of PREFIXES. */
static uint64_t sec_bytes(const idx_t *x, const char *const *prefixes, int n)
{
	const sec_t *s = x->secs;
	uint64_t i, t = 0;
	int k;

	for (i = 0; i < x->n_sections; i++)
		for (k = 0; k < n; k++)
			if (s[i].part != IDX_PART_GLOBAL && strncmp(s[i].name, prefixes[k], strlen(prefixes[k])) == 0) {
				t += s[i].len;
				break;
			}
	return t;
}

/*
 * "bytes_per_base NAME TOTAL own OWN shared SHARED" for each structure: the
 * bytes of the sections it reads per base of the reference, its own ones
 * and those it shares with the others (red.pos: all three; the block
 * structure reads the reduced structure's keys and their positions too);
 * then "bytes_per_base_section NAME BYTES" for each partition section.
 */
static void print_per_base(const idx_t *x, FILE *fp)
{
	static const char *const red[] = { "red." }, *const blk[] = { "blk." }, *const fm[] = { "fm." };
	static const char *const all[] = { "red.", "blk.", "fm." };
	double n = x->total ? (double)x->total : 1;
	double r = (double)sec_bytes(x, red, 1) / n;
	uint32_t m = x->p.structs;

	/* format 3: the general and reduced structures are two searches of the
	 * same red.* sections, which the block structure reads too */
	if (m & IDX_S_GENERAL)
		fprintf(fp, "bytes_per_base\tgeneral\t%.2f\town 0.00\tshared %.2f\n", r, r);
	if (m & IDX_S_REDUCED)
		fprintf(fp, "bytes_per_base\treduced\t%.2f\town 0.00\tshared %.2f\n", r, r);
	if (m & IDX_S_BLOCK)
		fprintf(fp, "bytes_per_base\tblock\t%.2f\town %.2f\tshared %.2f\n",
			(double)sec_bytes(x, blk, 1) / n + r, (double)sec_bytes(x, blk, 1) / n, r);
	if (m & IDX_S_FM)
		fprintf(fp, "bytes_per_base\tfm\t%.2f\town %.2f\tshared 0.00\n",
			(double)sec_bytes(x, fm, 1) / n, (double)sec_bytes(x, fm, 1) / n);
	fprintf(fp, "bytes_per_base\tstructures\t%.2f\n", (double)sec_bytes(x, all, 3) / n);
	/* each section name of the partitions, all partitions together */
	{
		const char *pn[20];
		int np = idx_part_sections(m, pn, 20), k;

		for (k = 0; k < np; k++)
			fprintf(fp, "bytes_per_base_section\t%s\t%.3f\n", pn[k],
				(double)sec_bytes(x, pn + k, 1) / n);
	}
	fprintf(fp, "bytes_per_base\tfile\t%.2f\n", (double)x->map_len / n);
}

void idx_print_info(const idx_t *x, FILE *fp)
{
	const sec_t *s = x->secs;
	uint64_t i, tot = 0, n = 0, lg = 0, bits;
	char st[64];

	idx_structs_str(x->p.structs, st, sizeof st);
	fprintf(fp, "index\t%s\n", x->path);
	fprintf(fp, "format_version\t%d\n", IDX_VERSION);
	fprintf(fp, "fingerprint\t%016llx\n", (unsigned long long)x->fingerprint);
	fprintf(fp, "shape\t%s\nweight\t%u\nspan\t%u\nl\t%u\nh\t%u\n", x->p.shape, x->p.w, x->p.span, x->p.l, x->p.h);
	fprintf(fp, "structures\t%s\n", st);
	fprintf(fp, "key_bytes\t%d\n", IDX_KEY_BYTES(x->p.l));
	fprintf(fp, "sa_rate\t%u\npartition_limit\t%llu\n", x->p.sa_rate, (unsigned long long)x->p.part_limit);
	fprintf(fp, "sequences\t%u\nbases\t%llu\nn_runs\t%llu\npartitions\t%u\n", x->n_seq,
		(unsigned long long)x->total, (unsigned long long)x->n_nrun, x->n_part);
	for (i = 0; i < x->n_part; i++) {
		const idx_part_t *pt = &x->part[i];

		fprintf(fp, "partition\t%llu\t%llu\t%llu\tseed_positions=%llu\tunique_nb=%llu\tslots=%llu\n",
			(unsigned long long)i, (unsigned long long)pt->beg, (unsigned long long)pt->end,
			(unsigned long long)pt->n_occ, (unsigned long long)pt->n_uniq, (unsigned long long)pt->n_slots);
		n += pt->n_occ;
	}
	for (i = 0; i < x->n_sections; i++) {
		if (s[i].part == IDX_PART_GLOBAL)
			fprintf(fp, "section\t%s\t-\t%llu\n", s[i].name, (unsigned long long)s[i].len);
		else
			fprintf(fp, "section\t%s\t%u\t%llu\n", s[i].name, s[i].part, (unsigned long long)s[i].len);
		tot += s[i].len;
	}
	fprintf(fp, "payload_bytes\t%llu\nfile_bytes\t%llu\n", (unsigned long long)tot,
		(unsigned long long)x->map_len);
	print_per_base(x, fp);
	while ((1ULL << lg) < n)
		lg++;
	bits = n * (lg + 2ULL * x->p.l);
	fprintf(fp, "tran_formula_bytes\t%llu\t(n(ceil(log2 n) + 2l) bits, n = %llu seed positions)\n",
		(unsigned long long)(bits / 8), (unsigned long long)n);
}

/* ---- accessors ------------------------------------------------------------ */

uint32_t idx_seed_code(const idx_t *x, uint64_t g)
{
	uint64_t w = idx_ref_word(x->pack, g);
	uint32_t c = 0, i;

	for (i = 0; i < x->p.w; i++)
		c |= (uint32_t)((w >> (2 * x->p.shape_pos[i])) & 3) << (2 * i);
	return c;
}

uint64_t idx_nb_at(const idx_t *x, uint64_t g)
{
	return idx_ref_word(x->pack, g + x->p.span) & idx_mask2(x->p.l);
}

uint32_t idx_pos2seq(const idx_t *x, uint64_t g, uint64_t *ofs)
{
	/* last sequence with off <= g and a base at g (skip empty ones) */
	uint32_t lo = (uint32_t)sp_last_le(x->off, x->n_seq, sizeof *x->off, 0, g);

	while (lo + 1 < x->n_seq && x->off[lo + 1] <= g)
		lo++;
	if (ofs)
		*ofs = g - x->off[lo];
	return lo;
}

int idx_range_clean(const idx_t *x, uint64_t g, uint64_t len)
{
	uint32_t s;
	uint64_t lo = 0, hi = x->n_nrun;

	if (len == 0 || g + len > x->total)
		return 0;
	s = idx_pos2seq(x, g, NULL);
	if (g + len > x->off[s + 1])
		return 0;
	while (lo < hi) {  /* first N run ending after g */
		uint64_t mid = (lo + hi) / 2;

		if (x->nrun[2 * mid] + x->nrun[2 * mid + 1] <= g)
			lo = mid + 1;
		else
			hi = mid;
	}
	return !(lo < x->n_nrun && x->nrun[2 * lo] < g + len);
}

void idx_gen_block(const idx_part_t *pt, uint32_t code, uint64_t *beg, uint64_t *end)
{
	*beg = idx_nbpos(pt, pt->red_start[code]);
	*end = idx_nbpos(pt, pt->red_start[code + 1]);
}

uint64_t idx_gen_nb(const idx_t *x, const idx_part_t *pt, uint32_t code, uint64_t i)
{
	uint64_t beg, end;

	uint64_t g, a, lim;

	idx_gen_block(pt, code, &beg, &end);
	g = pt->beg + pt->red_pos[beg + i];
	/* bases past the end of the window's sequence read as A (format 4) */
	a = g + x->p.span;
	lim = x->off[idx_pos2seq(x, g, NULL) + 1];
	return idx_nb_at(x, g) & idx_mask2(lim >= a + x->p.l ? x->p.l : (uint32_t)(lim - a));
}

int idx_red_find(const idx_part_t *pt, uint32_t code, uint64_t q,
		uint64_t *pbeg, uint64_t *pend)
{
	uint64_t lo = pt->red_start[code], hi = pt->red_start[code + 1];

	while (lo < hi) {
		uint64_t mid = (lo + hi) / 2;

		if (idx_red_key(pt, mid) < q)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < pt->red_start[code + 1] && idx_red_key(pt, lo) == q) {
		*pbeg = idx_nbpos(pt, lo);
		*pend = idx_nbpos(pt, lo + 1);
		return 1;
	}
	return 0;
}

int idx_blk_find(const idx_part_t *pt, uint32_t code, uint64_t q,
		uint64_t *pbeg, uint64_t *pend, uint32_t *slot)
{
	uint64_t base = pt->blk_start[code];
	uint32_t m = pt->blk_start[code + 1] - (uint32_t)base, r, v[3], g[3], i, sl, j;
	bdz_hash_t h;

	if (m == 0)
		return 0;
	r = m / 3;
	h = bdz_hash(q, idx_blk_seed(pt, code));
	for (i = 0; i < 3; i++) {
		v[i] = bdz_vertex(h, r, i);
		g[i] = bdz_g_get(pt->blk_g[(base + v[i]) >> 2], (uint32_t)((base + v[i]) & 3));
	}
	sl = v[bdz_pick(g[0], g[1], g[2])];
	if (slot)
		*slot = sl;
	j = (uint32_t)idx_blk_rank(pt, code, base + sl);
	if (idx_red_key(pt, j) != q)
		return 0;
	*pbeg = idx_nbpos(pt, j);
	*pend = idx_nbpos(pt, j + 1);
	return 1;
}

uint64_t idx_fm_count(const idx_part_t *pt, const uint8_t *p, size_t m,
		uint64_t *lo, uint64_t *hi)
{
	return fm_backward(&pt->fm, p, m, lo, hi);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

size_t idx_fm_locate(const idx_t *x, uint32_t part, uint64_t lo, uint64_t hi,
		size_t m, uint32_t *out)
{
	const idx_part_t *pt = &x->part[part];
	uint64_t r;
	size_t k = 0;

	for (r = lo; r < hi; r++) {
		uint64_t p = fm_locate_row(&pt->fm, r), g = pt->beg + p;

		if (p != FM_NO_POS && p + m <= pt->fm.n && g < x->own_end[part] && idx_range_clean(x, g, m))
			out[k++] = (uint32_t)p;
	}
	qsort(out, k, sizeof *out, cmp_u32);
	return k;
}
