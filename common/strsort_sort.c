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
#include <stdlib.h>
#include <string.h>

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
 * order[i - 1] (found on the sorted entries, see ent_ties); else the keys
 * are compared here.
 */
static void last_resort(const ss_opts *o, ss_chunk *c, const uint64_t *tie)
{
	size_t n = c->n, i, j, g, cap = 0;
	sp_msd_ent *e = NULL;
	sp_msd_src src = { c->buf, c->loff, NULL };
	uint32_t *ord = c->order;

	for (i = 0; i < n; i = j) {
		if (tie)
			for (j = i + 1; j < n && (tie[j >> 6] >> (j & 63) & 1); j++)
				;
		else
			for (j = i + 1; j < n && keys_eq(o, c, ord[i], ord[j]); j++)
				;
		if (j - i < 2)
			continue;
		if (j - i > cap) {
			sp_big_free(e, cap * sizeof *e);
			cap = j - i < 1024 ? 1024 : 2 * (j - i);
			e = sp_big_alloc(cap * sizeof *e);
		}
		for (g = 0; g < j - i; g++) {
			uint32_t x = ord[i + g];
			size_t len = c->loff[x + 1] - c->loff[x] - 1;

			e[g].pfx = sp_msd_load(c->buf + c->loff[x], len, 0);
			e[g].idx = x;
			e[g].len = (uint32_t)len;
		}
		o->algo->fn(e, j - i, &src, j - i >= 65536 ? o->nthreads : 1);
		for (g = 0; g < j - i; g++)
			ord[i + g] = e[o->reverse ? j - i - 1 - g : g].idx;
	}
	sp_big_free(e, cap * sizeof *e);
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
		d = ss_dev_sort(e, n, c->ends, c->ends ? (size_t)1 << 16 : 0, &src, c->len, o->nthreads);
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
		last_resort(o, c, c->tie);
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
