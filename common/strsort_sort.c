/*
 * strsort_sort.c - ordering a chunk (strsort_priv.h), and check mode.
 *
 * One bytewise key is ordered by the msd.h radix sort (or by the device,
 * strsort_ocl.c) on the lines themselves; the strings never move.  A
 * reversed key reverses the order of the groups of equal keys (keeping each
 * group in input order, as a stable sort must).  Every other key set is
 * ordered by its encoded strings (strsort_win.c).  Lines equal on every key
 * are then ordered by their whole bytes (GNU sort's last resort) unless -s
 * or -u.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sp_thread.h"
#include "strsort_priv.h"
#include "util.h"

/* (not for encoded keys: see c->tie) */
static inline int key0_eq(const ss_chunk *c, uint32_t i, uint32_t j)
{
	size_t li, lj;

	if (c->klen) {
		li = c->klen[i];
		lj = c->klen[j];
	} else {
		li = c->loff[i + 1] - c->loff[i];
		lj = c->loff[j + 1] - c->loff[j];
	}
	return li == lj && memcmp(c->buf + c->koff[i], c->buf + c->koff[j], li) == 0;
}

/* reverse a[0..n) of type T */
#define DEFINE_REVERSE(name, T) \
	static void name(T *a, size_t n) \
	{ \
		size_t i; \
		for (i = 0; i < n / 2; i++) { \
			T x = a[i]; \
			a[i] = a[n - 1 - i]; \
			a[n - 1 - i] = x; \
		} \
	}
DEFINE_REVERSE(reverse_u32, uint32_t)
DEFINE_REVERSE(reverse_ents, sp_msd_ent)

void ss_reverse_groups(uint32_t *a, size_t n, int (*eq)(const void *ctx, uint32_t i, uint32_t j),
		const void *ctx)
{
	size_t i, j;

	reverse_u32(a, n);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && eq(ctx, a[i], a[j]); j++)
			;
		if (j - i > 1)
			reverse_u32(a + i, j - i);
	}
}

static int key0_eq_fn(const void *c, uint32_t i, uint32_t j)
{
	return key0_eq(c, i, j);
}

/* lines order[i] and order[j] are equal on every key */
static int keys_eq(const ss_opts *o, const ss_chunk *c, uint32_t i, uint32_t j)
{
	if (o->nkeys == 1 && c->ents)
		return key0_eq(c, i, j);
	return ss_cmp_lines(o, 0, c->buf + c->loff[i], c->loff[i + 1] - c->loff[i] - 1,
		c->buf + c->loff[j], c->loff[j + 1] - c->loff[j] - 1) == 0;
}

/*
 * GNU sort's last-resort comparison: lines equal on every key are ordered
 * by their whole bytes (reversed by -r), each group radix sorted by itself.
 * TIE, when not NULL, has bit i set when order[i] has the keys of
 * order[i - 1] (found on the sorted entries, see ent_ties); else such a
 * bitmap is made here by comparing the keys of neighbours.  The groups are
 * sorted in parallel: the lines are cut into pieces (LR_PIECE lines), and a
 * piece sorts the groups that start in it (to their ends, past the piece); a
 * group of LR_BIG lines or more waits for the end and is sorted with every
 * thread.
 */
#define LR_BIG 65536
#define LR_PIECE 65536

typedef struct {
	const ss_opts *o;
	ss_chunk *c;
	uint64_t *tie;
	size_t n, piece, bigsz;     /* lines, lines a piece, a big group */
	struct lr_scratch {
		sp_msd_ent *e;
		size_t cap;
		char pad[64 - sizeof(sp_msd_ent *) - sizeof(size_t)];
	} *scr;                     /* a scratch a thread */
	size_t *big;                /* starts of groups of LR_BIG lines or more */
	size_t nbig, bigcap;
	pthread_mutex_t mu;
} lr_ctx;

static inline int tie_at(const uint64_t *tie, size_t i)
{
	return tie[i >> 6] >> (i & 63) & 1;
}

/* the end of the group that starts at i (i + 1 when it is a single line) */
static size_t group_end(const uint64_t *tie, size_t i, size_t n)
{
	size_t j = i + 1;

	while (j < n) {
		uint64_t w = ~tie[j >> 6] >> (j & 63);

		if (w) {
			j += (size_t)__builtin_ctzll(w);
			break;
		}
		j = (j | 63) + 1;
	}
	return j < n ? j : n;
}

/* sort the group order[i, j) by the whole lines with NT threads */
static void lr_sort(const lr_ctx *l, size_t i, size_t j, struct lr_scratch *s, int nt)
{
	ss_chunk *c = l->c;
	uint32_t *ord = c->order;
	sp_msd_src src = { c->buf, c->loff, NULL };
	size_t g;

	if (j - i > s->cap) {
		sp_big_free(s->e, s->cap * sizeof *s->e);
		s->cap = j - i < 1024 ? 1024 : 2 * (j - i);
		s->e = sp_big_alloc(s->cap * sizeof *s->e);
	}
	for (g = 0; g < j - i; g++) {
		uint32_t x = ord[i + g];
		size_t len = c->loff[x + 1] - c->loff[x] - 1;

		if (g + 8 < j - i)
			__builtin_prefetch(c->buf + c->loff[ord[i + g + 8]]);
		s->e[g].pfx = sp_msd_load(c->buf + c->loff[x], len, 0);
		s->e[g].idx = x;
		s->e[g].len = (uint32_t)len;
	}
	l->o->algo->fn(s->e, j - i, &src, nt);
	for (g = 0; g < j - i; g++)
		ord[i + g] = s->e[l->o->reverse ? j - i - 1 - g : g].idx;
}

/* the tie bits of the 64 lines of word w, from the keys */
static int lr_tie_word(void *ctx, size_t w, int tid)
{
	lr_ctx *l = ctx;
	const uint32_t *ord = l->c->order;
	size_t i = w * 64, hi = i + 64 < l->n ? i + 64 : l->n;
	uint64_t bits = 0;

	(void)tid;
	for (i = i ? i : 1; i < hi; i++)
		if (keys_eq(l->o, l->c, ord[i - 1], ord[i]))
			bits |= (uint64_t)1 << (i & 63);
	l->tie[w] = bits;
	return 0;
}

/* piece p: the groups that start in it */
static int lr_piece(void *ctx, size_t p, int tid)
{
	lr_ctx *l = ctx;
	size_t i = p * l->piece, hi = i + l->piece < l->n ? i + l->piece : l->n, j;

	/* a group running into the piece belongs to the piece before */
	if (i < hi && tie_at(l->tie, i))
		i = group_end(l->tie, i, l->n);
	for (; i < hi; i = j) {
		j = group_end(l->tie, i, l->n);
		if (j - i < 2)
			continue;
		if (j - i >= l->bigsz) {
			pthread_mutex_lock(&l->mu);
			if (l->nbig == l->bigcap) {
				l->bigcap = l->bigcap ? 2 * l->bigcap : 16;
				l->big = sp_realloc(l->big, l->bigcap * sizeof *l->big);
			}
			l->big[l->nbig++] = i;
			pthread_mutex_unlock(&l->mu);
			continue;
		}
		lr_sort(l, i, j, &l->scr[tid], 1);
	}
	return 0;
}

static int last_resort(const ss_opts *o, ss_chunk *c, uint64_t *tie)
{
	lr_ctx l;
	int nt = o->nthreads < 1 ? 1 : o->nthreads, t, r;
	size_t b;
	const char *env = getenv("SEEDPIPE_STRSORT_LR");

	memset(&l, 0, sizeof l);
	l.o = o;
	l.c = c;
	l.n = c->n;
	l.tie = tie;
	l.piece = LR_PIECE;
	l.bigsz = LR_BIG;
	if (env && *env) {
		/* (for the tests: "PIECE,BIG", lines a piece and a big group) */
		char *end;
		size_t v = (size_t)strtoull(env, &end, 10);

		l.piece = v ? v : 1;
		if (*end == ',' && strtoull(end + 1, NULL, 10) >= 2)
			l.bigsz = (size_t)strtoull(end + 1, NULL, 10);
	}
	if (!tie) {
		l.tie = sp_malloc((l.n / 64 + 1) * sizeof *l.tie);
		if (sp_for(nt, l.n / 64 + 1, 256, lr_tie_word, &l) < 0) {
			free(l.tie);
			return -1;
		}
	}
	l.scr = sp_calloc((size_t)nt, sizeof *l.scr);
	pthread_mutex_init(&l.mu, NULL);
	r = sp_for(nt, (l.n + l.piece - 1) / l.piece, 1, lr_piece, &l);
	pthread_mutex_destroy(&l.mu);
	/* the big groups, in order, each with every thread */
	for (b = 0; r == 0 && b < l.nbig; b++) {
		size_t i = l.big[b];

		lr_sort(&l, i, group_end(l.tie, i, l.n), &l.scr[0], nt);
	}
	for (t = 0; t < nt; t++)
		sp_big_free(l.scr[t].e, l.scr[t].cap * sizeof *l.scr[t].e);
	free(l.scr);
	free(l.big);
	if (!tie)
		free(l.tie);
	return r;
}

int ss_sort_chunk(const ss_opts *o, ss_chunk *c)
{
	size_t n = c->n, i, j;
	const ss_key *k = &o->keys[0];

	if (c->direct) {
		sp_msd_ent *e = c->ents;
		sp_msd_src src = { c->buf, NULL, c->packed ? &c->pk : NULL };
		int d;

		/* (the device path keeps the prefixes too, but is not relied on) */
		c->unpack = c->packed && c->keyw && !ss_dev_requested();
		/* (prefixes past a shared start, depth0, are the CPU's: the split
		 * skips them only when no device was requested yet, i.e. when -d
		 * auto chose one after it) */
		d = c->depth0 ? 0 : ss_dev_sort(e, n, c->ends, c->ends ? (size_t)1 << 16 : 0, &src,
				c->len, o->nthreads);
		if (d < 0)
			return -1;
		if (d)
			;
		else if (c->ends)
			sp_msd_sort_ranges_at(e, n, c->ends, (size_t)1 << 16, &src, o->nthreads, c->depth0);
		else
			o->algo->fn(e, n, &src, o->nthreads);
		if (k->reverse) {
			/* as ss_reverse_groups, on the entries */
			reverse_ents(e, n);
			for (i = 0; i < n; i = j) {
				for (j = i + 1; j < n && ss_ent_line_eq(c, &e[i], &e[j]); j++)
					;
				reverse_ents(e + i, j - i);
			}
		}
		return 0;
	}
	if (c->enc) {
		/* every key in one encoded string: reversed ones complemented */
		if (ss_win_sort(o, c) < 0)
			return -1;
	} else {
		sp_msd_ent *e = c->ents;
		sp_msd_src src = { c->buf, c->koff, NULL };
		int d = ss_dev_sort(e, n, NULL, 0, &src, c->len, o->nthreads);

		if (d < 0)
			return -1;
		if (!d)
			o->algo->fn(e, n, &src, o->nthreads);
		/* compact the entries into line numbers in place */
		c->order = (uint32_t *)(void *)e;
		for (i = 0; i < n; i++)
			c->order[i] = e[i].idx;
		/* (one key: two or more are encoded) */
		if (k->reverse)
			ss_reverse_groups(c->order, n, key0_eq_fn, c);
	}
	if (ss_last_resort(o) && !(o->nkeys == 1 && ss_key_plain(k) && c->keyw))
		return last_resort(o, c, c->tie);
	return 0;
}

/* check mode: the first disorder of the lines of c */
int ss_check_chunk(const ss_opts *o, const ss_chunk *c, const char *name)
{
	size_t i;

	for (i = 1; i < c->n; i++) {
		const uint8_t *a = c->buf + c->loff[i - 1], *b = c->buf + c->loff[i];
		size_t la = c->loff[i] - c->loff[i - 1] - 1, lb = c->loff[i + 1] - c->loff[i] - 1;
		int x = ss_cmp_full(o, a, la, b, lb);

		if (x > 0 || (o->unique && x == 0)) {
			if (o->check == 1) {
				char pre[256];
				int k = snprintf(pre, sizeof pre, "%s: %s:%zu: disorder: ",
					sp_progname, name, i + 1);

				fflush(stdout);
				fwrite(pre, 1, (size_t)k, stderr);
				fwrite(b, 1, lb, stderr);
				fputc('\n', stderr);
			}
			return SP_EXIT_DATA;
		}
	}
	return SP_EXIT_OK;
}
