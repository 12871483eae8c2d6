/*
 * idx_build.c - build the index structures of each partition and write the
 * index file sequentially (format in idx.h and man/seedpipe-index.5).
 *
 * Per partition: the seed positions (windows) are sorted by seed code with a
 * two-pass radix sort (threads over position ranges, offsets taken in thread
 * order, so the result is in position order whatever the thread count), then
 * the general structure's striped words, the reduced structure (per block
 * sort of (neighborhood, position)) and the BDZ tables are derived in turn;
 * each is written and freed before the next that does not need it.  The
 * FM-index (libdivsufsort, single-threaded) is built by one more thread
 * beside all this when -t > 1.  Peak memory: about 28 bytes per seed
 * position plus the FM build (5.5 bytes per base), see man/seqidx.1.
 */
#include "idx_priv.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "bdz.h"
#include "inc_bdz.h"
#include "inc_idx.h"
#include "util.h"

/* ---- sequential writer --------------------------------------------------- */

/*
 * Sections go out in order through one writer thread, so that checksumming
 * and write(2) overlap the building of the next structure.  A queued buffer
 * is read by the writer until wr_sync(); one queued with OWN is freed by the
 * writer once written.
 */
typedef struct wjob {
	struct wjob *next;
	char name[16];
	uint32_t part, esize;
	const void *data;
	uint64_t len;
	int own;
} wjob_t;

typedef struct {
	int fd;
	const char *name;
	uint64_t off, fp, n_sections;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	wjob_t *head, *tail;
	int busy, stop, started;
} wr_t;

static void wr_raw(wr_t *w, const void *buf, size_t n)
{
	const uint8_t *p = buf;

	while (n) {
		size_t k = n > (1u << 30) ? (1u << 30) : n;
		ssize_t got = write(w->fd, p, k);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			sp_die("cannot write '%s': %s", w->name, got < 0 ? strerror(errno) : "short write");
		p += got;
		n -= (size_t)got;
		w->off += (uint64_t)got;
	}
}

static void wr_now(wr_t *w, const char *name, uint32_t part, uint32_t esize,
		const void *data, uint64_t len)
{
	uint8_t h[IDX_SEC_HDR], pad[IDX_ALIGN];

	memset(h, 0, sizeof h);
	memcpy(h, name, strnlen(name, 15));
	idx_wr32(h + 16, part);
	idx_wr32(h + 20, esize);
	idx_wr64(h + 24, len);
	idx_wr64(h + 32, XXH3_64bits_withSeed(data, (size_t)len, w->fp));
	idx_wr64(h + 56, XXH3_64bits(h, 56));
	wr_raw(w, h, sizeof h);
	if (len)
		wr_raw(w, data, (size_t)len);
	memset(pad, 0, sizeof pad);
	if (len % IDX_ALIGN)
		wr_raw(w, pad, IDX_ALIGN - len % IDX_ALIGN);
	w->n_sections++;
}

static void *wr_main(void *a)
{
	wr_t *w = a;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		wjob_t *j;

		while (!w->head && !w->stop)
			pthread_cond_wait(&w->cv, &w->mu);
		if (!w->head)
			break;
		j = w->head;
		w->busy = 1;
		pthread_mutex_unlock(&w->mu);
		wr_now(w, j->name, j->part, j->esize, j->data, j->len);
		if (j->own)
			free((void *)j->data);
		pthread_mutex_lock(&w->mu);
		w->head = j->next;
		if (!w->head)
			w->tail = NULL;
		w->busy = 0;
		free(j);
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

static void wr_start(wr_t *w)
{
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	if (pthread_create(&w->th, NULL, wr_main, w) != 0)
		sp_die("cannot start a thread: %s", strerror(errno));
	w->started = 1;
}

/* Queue a section (in file order); OWN: the writer frees DATA when written. */
static void wr_section_q(wr_t *w, const char *name, uint32_t part, uint32_t esize,
		const void *data, uint64_t len, int own)
{
	wjob_t *j = sp_calloc(1, sizeof *j);

	memcpy(j->name, name, strnlen(name, 15));
	j->part = part;
	j->esize = esize;
	j->data = data;
	j->len = len;
	j->own = own;
	pthread_mutex_lock(&w->mu);
	if (w->tail)
		w->tail->next = j;
	else
		w->head = j;
	w->tail = j;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

/* Wait until every queued section is written. */
static void wr_sync(wr_t *w)
{
	pthread_mutex_lock(&w->mu);
	while (w->head)
		pthread_cond_wait(&w->cv, &w->mu);
	pthread_mutex_unlock(&w->mu);
}

/* Write a section now (after the queued ones). */
static void wr_section(wr_t *w, const char *name, uint32_t part, uint32_t esize,
		const void *data, uint64_t len)
{
	wr_section_q(w, name, part, esize, data, len, 0);
	wr_sync(w);
}

static void wr_stop(wr_t *w)
{
	wr_sync(w);
	pthread_mutex_lock(&w->mu);
	w->stop = 1;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->th, NULL);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
}

/* ---- threads ------------------------------------------------------------- */

typedef void (*job_fn)(void *ctx, int tid, int nt);

typedef struct {
	job_fn f;
	void *ctx;
	int tid, nt;
} job_arg_t;

static void *job_main(void *a)
{
	job_arg_t *j = a;

	j->f(j->ctx, j->tid, j->nt);
	return NULL;
}

/* Run F(CTX, tid, NT) for tid = 0..NT-1, tid 0 in this thread. */
static void run_jobs(int nt, job_fn f, void *ctx)
{
	pthread_t th[256];
	job_arg_t a[256];
	int i;

	if (nt > 256)
		nt = 256;
	for (i = 0; i < nt; i++) {
		a[i].f = f; a[i].ctx = ctx; a[i].tid = i; a[i].nt = nt;
	}
	for (i = 1; i < nt; i++)
		if (pthread_create(&th[i], NULL, job_main, &a[i]) != 0)
			sp_die("cannot start a thread: %s", strerror(errno));
	job_main(&a[0]);
	for (i = 1; i < nt; i++)
		pthread_join(th[i], NULL);
}

/* ---- windows ------------------------------------------------------------- */

/* A run of window starts [a, a+n) (global coordinates). */
typedef struct {
	uint64_t a, n, cum;  /* cum: windows in earlier runs */
} wrun_t;

typedef struct {
	wrun_t *run;
	size_t n_run, cap;
	uint64_t total;
} wins_t;

static void wins_add(wins_t *ws, uint64_t x, uint64_t y, uint32_t win)
{
	if (y < x + win)
		return;
	if (ws->n_run == ws->cap) {
		ws->cap = ws->cap ? ws->cap * 2 : 64;
		ws->run = sp_realloc(ws->run, ws->cap * sizeof *ws->run);
	}
	ws->run[ws->n_run].a = x;
	ws->run[ws->n_run].n = y - x - win + 1;
	ws->run[ws->n_run].cum = ws->total;
	ws->total += y - x - win + 1;
	ws->n_run++;
}

/* Every window of WIN bases inside partition PR, within one sequence, free of N. */
static void part_windows(const idx_ref_t *r, const idx_prange_t *pr, uint32_t win, wins_t *ws)
{
	uint32_t s;
	uint64_t lo = 0, hi = r->n_nrun;

	memset(ws, 0, sizeof *ws);
	/* first N run ending after pr->beg */
	while (lo < hi) {
		uint64_t mid = (lo + hi) / 2;

		if (r->nrun[2 * mid] + r->nrun[2 * mid + 1] <= pr->beg)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (s = pr->first_seq; s < pr->end_seq; s++) {
		uint64_t x = r->off[s] > pr->beg ? r->off[s] : pr->beg;
		uint64_t y = r->off[s + 1] < pr->end ? r->off[s + 1] : pr->end;
		uint64_t cur = x;

		while (lo < r->n_nrun && r->nrun[2 * lo] < y) {
			uint64_t st = r->nrun[2 * lo], en = st + r->nrun[2 * lo + 1];

			if (en > cur) {
				if (st > cur)
					wins_add(ws, cur, st, win);
				cur = en;
			}
			if (en > y)
				break;  /* the run goes on past this sequence's part */
			lo++;
		}
		if (cur < y)
			wins_add(ws, cur, y, win);
	}
}

/* Index of the run holding window number K. */
static size_t wins_find(const wins_t *ws, uint64_t k)
{
	size_t lo = 0, hi = ws->n_run;

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (ws->run[mid].cum <= k)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* ---- per-window values ----------------------------------------------------- */

uint64_t idx_ref_word(const uint8_t *pack, uint64_t g)
{
	uint64_t x;
	unsigned sh = (unsigned)(g & 3) * 2;

	memcpy(&x, pack + (g >> 2), 8);
	if (sh)
		x = x >> sh | (uint64_t)pack[(g >> 2) + 8] << (64 - sh);
	return x;
}

static inline uint32_t seed_code(const idx_params_t *p, const uint8_t *pack, uint64_t g)
{
	uint64_t x = idx_ref_word(pack, g);
	uint32_t c = 0, i;

	if (p->w == p->span)
		return (uint32_t)(x & idx_mask2(p->w));
	for (i = 0; i < p->w; i++)
		c |= (uint32_t)((x >> (2 * p->shape_pos[i])) & 3) << (2 * i);
	return c;
}

static inline uint64_t nb_at(const idx_params_t *p, const uint8_t *pack, uint64_t g)
{
	return idx_ref_word(pack, g + p->span) & idx_mask2(p->l);
}

typedef struct tup tup_t;

/* ---- build context ------------------------------------------------------------ */

typedef struct {
	const idx_ref_t *r;
	const idx_params_t *p;
	const idx_prange_t *pr;
	wins_t ws;
	uint64_t n_codes;        /* 4^w */
	uint32_t **cnt;          /* per thread counts / offsets of top buckets */
	uint32_t tshift;         /* code >> tshift = top bucket */
	uint64_t n_top;
	uint32_t *top_off;       /* n_top+1 */
	tup_t *tup;
	uint32_t *gen_start, *gen_wstart, *gen_pos;
	uint64_t *gen_nb;
	/* reduced */
	uint32_t *ucount;        /* per block unique count, becomes red_start */
	uint64_t *red_nb;
	uint32_t *red_nbpos, *red_pos;
	uint64_t n_uniq;
	/* block */
	uint32_t *blk_start, *blk_seed, *blk_rank;
	uint8_t *blk_nb;          /* kb bytes per slot */
	uint32_t kb;              /* key bytes: IDX_KEY_BYTES(l) */
	uint8_t *blk_g;
	uint64_t n_slots, attempts_total;
	uint32_t part_no;
	pthread_mutex_t lock;
} bctx_t;

/* Codes [*c0, *c1) of thread TID: balanced by the prefix array START. */
static void code_range(const uint32_t *start, uint64_t n_codes, int tid, int nt,
		uint64_t *c0, uint64_t *c1)
{
	uint64_t tot = start[n_codes], i;

	for (i = 0; i < 2; i++) {
		uint64_t want = tot * (uint64_t)(tid + (int)i) / (uint64_t)nt, lo = 0, hi = n_codes;

		if (tid + (int)i == nt) {
			*c1 = n_codes;
			break;
		}
		while (lo < hi) {  /* first code whose start >= want */
			uint64_t mid = (lo + hi) / 2;

			if (start[mid] < want)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (i == 0)
			*c0 = lo;
		else
			*c1 = lo;
	}
}

/*
 * Sorting the seed positions by code: two stable counting-sort passes, so
 * that every pass touches few buckets at once (cache friendly).  Pass 1:
 * threads over window ranges write (nb, pos, code) tuples into 256 buckets
 * by the top 8 bits of the code (offsets in thread order keep position
 * order); pass 2: threads over buckets sort each by the low bits straight
 * into gen_pos / red_nb and fill gen_start.
 */
struct tup {
	uint64_t nb;
	uint32_t pos, code;
};

static void job_count(void *vc, int tid, int nt)
{
	bctx_t *b = vc;
	uint64_t k0 = b->ws.total * (uint64_t)tid / (uint64_t)nt;
	uint64_t k1 = b->ws.total * (uint64_t)(tid + 1) / (uint64_t)nt, k = k0;
	uint32_t *cnt = b->cnt[tid], sh = b->tshift;
	size_t ri;

	if (k0 >= k1)
		return;
	for (ri = wins_find(&b->ws, k0); k < k1; ri++) {
		const wrun_t *wr = &b->ws.run[ri];
		uint64_t g = wr->a + (k - wr->cum), gend = wr->a + wr->n;

		if (gend - g > k1 - k)
			gend = g + (k1 - k);
		k += gend - g;
		for (; g < gend; g++)
			cnt[seed_code(b->p, b->r->pack, g) >> sh]++;
	}
}

static void job_scatter(void *vc, int tid, int nt)
{
	bctx_t *b = vc;
	uint64_t k0 = b->ws.total * (uint64_t)tid / (uint64_t)nt;
	uint64_t k1 = b->ws.total * (uint64_t)(tid + 1) / (uint64_t)nt, k = k0;
	uint32_t *off = b->cnt[tid], sh = b->tshift;
	size_t ri;

	if (k0 >= k1)
		return;
	for (ri = wins_find(&b->ws, k0); k < k1; ri++) {
		const wrun_t *wr = &b->ws.run[ri];
		uint64_t g = wr->a + (k - wr->cum), gend = wr->a + wr->n;

		if (gend - g > k1 - k)
			gend = g + (k1 - k);
		k += gend - g;
		for (; g < gend; g++) {
			uint32_t c = seed_code(b->p, b->r->pack, g);
			tup_t *t = &b->tup[off[c >> sh]++];

			t->code = c;
			t->pos = (uint32_t)(g - b->pr->beg);
			t->nb = nb_at(b->p, b->r->pack, g);
		}
	}
}

static void job_sort2(void *vc, int tid, int nt)
{
	bctx_t *b = vc;
	uint64_t t0, t1, t, nlow = 1ULL << b->tshift, i;
	uint32_t *cnt = sp_malloc(nlow * sizeof *cnt), mask = (uint32_t)(nlow - 1);

	code_range(b->top_off, b->n_top, tid, nt, &t0, &t1);
	for (t = t0; t < t1; t++) {
		uint64_t s = b->top_off[t], e = b->top_off[t + 1], acc = s;

		memset(cnt, 0, nlow * sizeof *cnt);
		for (i = s; i < e; i++)
			cnt[b->tup[i].code & mask]++;
		for (i = 0; i < nlow; i++) {
			uint32_t x = cnt[i];

			b->gen_start[(t << b->tshift) + i] = (uint32_t)acc;
			cnt[i] = (uint32_t)acc;
			acc += x;
		}
		for (i = s; i < e; i++) {
			const tup_t *tp = &b->tup[i];
			uint32_t o = cnt[tp->code & mask]++;

			b->gen_pos[o] = tp->pos;
			b->red_nb[o] = tp->nb;
		}
	}
	free(cnt);
}

static void job_gen_words(void *vc, int tid, int nt)
{
	bctx_t *b = vc;
	uint64_t c0, c1, c;
	uint32_t h = b->p->h, l = b->p->l;

	code_range(b->gen_start, b->n_codes, tid, nt, &c0, &c1);
	for (c = c0; c < c1; c++) {
		uint64_t i, n = b->gen_start[c + 1] - b->gen_start[c];
		const uint32_t *pos = b->gen_pos + b->gen_start[c];
		uint64_t *wd = b->gen_nb + b->gen_wstart[c];

		const uint64_t *nb = b->red_nb + b->gen_start[c];

		(void)pos;
		if (h == 1) {
			memcpy(wd, nb, n * sizeof *nb);
		} else if (h == 2) {
			for (i = 0; i < n; i++) {
				uint64_t x = nb[i];

				/* base j from bits 2j to bits 4j (+2 for the odd slot) */
				x = (x | x << 16) & 0x0000FFFF0000FFFFULL;
				x = (x | x << 8) & 0x00FF00FF00FF00FFULL;
				x = (x | x << 4) & 0x0F0F0F0F0F0F0F0FULL;
				x = (x | x << 2) & 0x3333333333333333ULL;
				wd[i / 2] = (i & 1 ? wd[i / 2] : 0) | x << (2 * (i & 1));
			}
		} else {
			for (i = 0; i < n; i++)
				wd[i / h] = idx_stripe_put(i % h ? wd[i / h] : 0, h, l, (uint32_t)(i % h), nb[i]);
		}
	}
}

typedef struct {
	uint64_t nb;
	uint32_t pos;
} nbpos_t;

/* Stable sort of A[0..n) by nb: insertion sort of runs of 16, then bottom-up merges through T. */
static void sort_small(nbpos_t *a, nbpos_t *t, uint64_t n)
{
	uint64_t i, j, w;
	nbpos_t *src = a, *dst = t;

	for (i = 0; i < n; i += 16) {
		uint64_t e = i + 16 < n ? i + 16 : n, k;

		for (k = i + 1; k < e; k++) {
			nbpos_t x = a[k];

			for (j = k; j > i && a[j - 1].nb > x.nb; j--)
				a[j] = a[j - 1];
			a[j] = x;
		}
	}
	for (w = 16; w < n; w *= 2) {
		for (i = 0; i < n; i += 2 * w) {
			uint64_t m = i + w < n ? i + w : n, e = i + 2 * w < n ? i + 2 * w : n, p = i, q = m, o = i;

			while (p < m && q < e)
				dst[o++] = src[q].nb < src[p].nb ? src[q++] : src[p++];
			while (p < m)
				dst[o++] = src[p++];
			while (q < e)
				dst[o++] = src[q++];
		}
		{
			nbpos_t *x = src;

			src = dst;
			dst = x;
		}
	}
	if (src != a)
		memcpy(a, src, n * sizeof *a);
}

/* Stable LSD radix sort of *A[0..n) by nb, ND digits of 8 bits; may swap *A and *T. */
static void sort_radix(nbpos_t **a, nbpos_t **t, uint64_t n, unsigned nd)
{
	unsigned d, k;
	uint64_t i;
	uint32_t cnt[256];

	for (d = 0; d < nd; d++) {
		unsigned sh = 8 * d;
		uint32_t acc = 0;
		nbpos_t *s = *a, *o = *t;

		memset(cnt, 0, sizeof cnt);
		for (i = 0; i < n; i++)
			cnt[(s[i].nb >> sh) & 255]++;
		if (cnt[(s[0].nb >> sh) & 255] == n)
			continue;  /* one digit value: the pass would move nothing */
		for (k = 0; k < 256; k++) {
			uint32_t c2 = cnt[k];

			cnt[k] = acc;
			acc += c2;
		}
		for (i = 0; i < n; i++)
			o[cnt[(s[i].nb >> sh) & 255]++] = s[i];
		*a = o;
		*t = s;
	}
}

static void job_reduce(void *vc, int tid, int nt)
{
	bctx_t *b = vc;
	uint64_t c0, c1, c, cap = 0;
	nbpos_t *sc = NULL, *tmp = NULL;

	code_range(b->gen_start, b->n_codes, tid, nt, &c0, &c1);
	for (c = c0; c < c1; c++) {
		uint64_t s = b->gen_start[c], n = b->gen_start[c + 1] - s, i, u = 0;

		if (n > cap) {
			free(sc);
			free(tmp);
			cap = n * 2;
			sc = sp_malloc(cap * sizeof *sc);
			tmp = sp_malloc(cap * sizeof *tmp);
		}
		for (i = 0; i < n; i++) {
			sc[i].pos = b->gen_pos[s + i];
			sc[i].nb = b->red_nb[s + i];
		}
		/* stable sorts by nb: ties stay in position order */
		if (n < 1024)
			sort_small(sc, tmp, n);
		else
			sort_radix(&sc, &tmp, n, (2 * b->p->l + 7) / 8);
		for (i = 0; i < n; i++) {
			b->red_pos[s + i] = sc[i].pos;
			if (i == 0 || sc[i].nb != sc[i - 1].nb) {
				b->red_nb[s + u] = sc[i].nb;
				b->red_nbpos[s + u] = (uint32_t)(s + i);
				u++;
			}
		}
		b->ucount[c] = (uint32_t)u;
	}
	free(sc);
	free(tmp);
}

static void job_block(void *vc, int tid, int nt)
{
	bctx_t *b = vc;
	uint64_t c0, c1, c, att = 0;
	bdz_work_t w;
	uint32_t *slot = NULL, cap = 0;
	uint64_t *kbuf = NULL;

	memset(&w, 0, sizeof w);
	code_range(b->ucount, b->n_codes, tid, nt, &c0, &c1);
	for (c = c0; c < c1; c++) {
		uint32_t s = b->ucount[c], n = b->ucount[c + 1] - s, base = b->blk_start[c];
		uint32_t m = b->blk_start[c + 1] - base, seed = 0, a = 0, k;
		const uint64_t *keys;

		if (n == 0) {
			b->blk_seed[c] = 0;
			continue;
		}
		if (n > cap) {
			free(slot);
			free(kbuf);
			cap = n * 2;
			slot = sp_malloc(cap * sizeof *slot);
			kbuf = sp_malloc(cap * sizeof *kbuf);
		}
		if (b->kb == 4) {
			/* red_nb was narrowed to u32 in place */
			for (k = 0; k < n; k++) {
				uint32_t x;

				memcpy(&x, (const uint8_t *)b->red_nb + 4 * ((uint64_t)s + k), 4);
				kbuf[k] = x;
			}
			keys = kbuf;
		} else {
			keys = b->red_nb + s;
		}
		if (bdz_build(&w, keys, n, (uint32_t)c, &seed, slot, &a) != 0)
			sp_die("cannot build the perfect hash of seed block %llu (%u neighborhoods) after %u attempts",
				(unsigned long long)c, n, a);
		att += a;
		b->blk_seed[c] = seed;
		/* phantom slots: the first (smallest) neighborhood, as in the thesis */
		if (b->kb == 4) {
			uint32_t *nb32 = (uint32_t *)b->blk_nb + base;

			for (k = 0; k < m; k++)
				nb32[k] = (uint32_t)keys[0];
			for (k = 0; k < n; k++)
				nb32[slot[k]] = (uint32_t)keys[k];
		} else {
			uint64_t *nb64 = (uint64_t *)b->blk_nb + base;

			for (k = 0; k < m; k++)
				nb64[k] = keys[0];
			for (k = 0; k < n; k++)
				nb64[slot[k]] = keys[k];
		}
		for (k = 0; k < m; k++)
			b->blk_rank[base + k] = s;
		for (k = 0; k < n; k++)
			b->blk_rank[base + slot[k]] = s + k;
		/*
		 * g, 4 vertices a byte (initialised to 0xff, all 3): bytes wholly
		 * inside this block are stored, the two shared with neighbouring
		 * blocks (maybe another thread's) are ANDed in atomically.
		 */
		{
			uint64_t g0 = base, g1 = (uint64_t)base + m, by;

			for (by = g0 >> 2; by <= (g1 - 1) >> 2; by++) {
				uint8_t val = 0xff;
				uint64_t gv = by << 2, e = gv + 4;

				for (; gv < e; gv++)
					if (gv >= g0 && gv < g1)
						val = (uint8_t)((val & ~(3u << (2 * (gv & 3))))
							| (uint32_t)w.g[gv - g0] << (2 * (gv & 3)));
				if ((by << 2) >= g0 && (by << 2) + 4 <= g1)
					b->blk_g[by] = val;
				else
					__atomic_fetch_and(&b->blk_g[by], val, __ATOMIC_RELAXED);
			}
		}
	}
	free(slot);
	free(kbuf);
	bdz_work_free(&w);
	pthread_mutex_lock(&b->lock);
	b->attempts_total += att;
	pthread_mutex_unlock(&b->lock);
}

/* ---- driver -------------------------------------------------------------- */

static void progress(const idx_build_opt_t *o, double t0, const char *fmt, ...) SP_PRINTF(3, 4);

static void progress(const idx_build_opt_t *o, double t0, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (!o->progress)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	sp_msg("[%.1fs] %s", sp_now() - t0, buf);
}

int idx_part_sections(uint32_t s, const char **names, int max)
{
	static const char *const all[] = {
		"gen.start", "gen.wstart", "gen.nb", "gen.pos",
		"red.start", "red.nb", "red.nbpos", "red.pos",
		"blk.start", "blk.seed", "blk.g", "blk.nb", "blk.rank",
		"fm.meta", "fm.occ", "fm.mark", "fm.sa"
	};
	int n = 0, i;

	for (i = 0; i < 17; i++) {
		int bit = i < 4 ? IDX_S_GENERAL : i < 8 ? IDX_S_REDUCED : i < 13 ? IDX_S_BLOCK : IDX_S_FM;

		if ((s & (uint32_t)bit) && n < max)
			names[n++] = all[i];
	}
	return n;
}

typedef struct {
	const uint8_t *pack;
	uint64_t beg, n;
	uint32_t rate;
	int rc;
	fm_build_t fb;
} fmjob_t;

static void *fm_thread(void *a)
{
	fmjob_t *j = a;

	j->rc = fm_build(j->pack, j->beg, j->n, j->rate, &j->fb);
	return NULL;
}

static void build_part(bctx_t *b, const idx_build_opt_t *o, wr_t *w, double t0)
{
	const idx_params_t *p = b->p;
	uint64_t nc = b->n_codes, c, nocc = b->ws.total;
	int nt = o->n_threads < 1 ? 1 : o->n_threads, t;
	uint32_t pn = b->part_no;

	/* the suffix array (one thread in libdivsufsort) runs beside the rest */
	fmjob_t fj;
	pthread_t fth;
	int fm_bg = (p->structs & IDX_S_FM) && nt > 1;

	memset(&fj, 0, sizeof fj);
	fj.pack = b->r->pack;
	fj.beg = b->pr->beg;
	fj.n = b->pr->end - b->pr->beg;
	fj.rate = p->sa_rate;
	if (fm_bg && pthread_create(&fth, NULL, fm_thread, &fj) != 0)
		sp_die("cannot start a thread: %s", strerror(errno));

	if (!(p->structs & (IDX_S_GENERAL | IDX_S_REDUCED | IDX_S_BLOCK)))
		goto fm_only;
	/* radix sort of the seed positions by seed code (two passes) */
	progress(o, t0, "partition %u: %llu seed positions", pn, (unsigned long long)nocc);
	b->tshift = 2 * p->w > 8 ? 2 * p->w - 8 : 0;
	b->n_top = nc >> b->tshift;
	b->cnt = sp_malloc((size_t)nt * sizeof *b->cnt);
	for (t = 0; t < nt; t++)
		b->cnt[t] = sp_calloc(b->n_top, sizeof **b->cnt);
	run_jobs(nt, job_count, b);
	b->top_off = sp_malloc((b->n_top + 1) * sizeof *b->top_off);
	{
		uint64_t acc = 0;

		for (c = 0; c < b->n_top; c++) {
			b->top_off[c] = (uint32_t)acc;
			for (t = 0; t < nt; t++) {
				uint32_t x = b->cnt[t][c];

				b->cnt[t][c] = (uint32_t)acc;
				acc += x;
			}
		}
		b->top_off[b->n_top] = (uint32_t)acc;
	}
	b->tup = sp_malloc((nocc ? nocc : 1) * sizeof *b->tup);
	run_jobs(nt, job_scatter, b);
	for (t = 0; t < nt; t++)
		free(b->cnt[t]);
	free(b->cnt);
	b->cnt = NULL;
	b->gen_start = sp_malloc((nc + 1) * sizeof *b->gen_start);
	b->gen_pos = sp_malloc((nocc ? nocc : 1) * sizeof *b->gen_pos);
	/* neighborhoods in occurrence order; the reduced structure compacts them in place */
	b->red_nb = sp_malloc((nocc ? nocc : 1) * sizeof *b->red_nb);
	run_jobs(nt, job_sort2, b);
	b->gen_start[nc] = (uint32_t)nocc;
	free(b->tup);
	free(b->top_off);
	b->tup = NULL;
	b->top_off = NULL;
	progress(o, t0, "partition %u: seed positions sorted by seed", pn);

	if (p->structs & IDX_S_GENERAL) {
		uint64_t acc = 0;

		b->gen_wstart = sp_malloc((nc + 1) * sizeof *b->gen_wstart);
		for (c = 0; c < nc; c++) {
			b->gen_wstart[c] = (uint32_t)acc;
			acc += (b->gen_start[c + 1] - b->gen_start[c] + p->h - 1) / p->h;
		}
		b->gen_wstart[nc] = (uint32_t)acc;
		b->gen_nb = sp_calloc(acc ? acc : 1, sizeof *b->gen_nb);
		run_jobs(nt, job_gen_words, b);
		progress(o, t0, "partition %u: general structure built, writing", pn);
		wr_section_q(w, "gen.start", pn, 4, b->gen_start, (nc + 1) * 4, 0);
		wr_section_q(w, "gen.wstart", pn, 4, b->gen_wstart, (nc + 1) * 4, 1);
		wr_section_q(w, "gen.nb", pn, 8, b->gen_nb, acc * 8, 1);
		wr_section_q(w, "gen.pos", pn, 4, b->gen_pos, nocc * 4, 0);
		b->gen_wstart = NULL;
		b->gen_nb = NULL;
	}
	if (p->structs & (IDX_S_REDUCED | IDX_S_BLOCK)) {
		uint64_t acc = 0;

		b->ucount = sp_malloc((nc + 1) * sizeof *b->ucount);
		b->red_nbpos = sp_malloc((nocc + 1) * sizeof *b->red_nbpos);
		b->red_pos = sp_malloc((nocc ? nocc : 1) * sizeof *b->red_pos);
		run_jobs(nt, job_reduce, b);
		/* compact the unique neighborhoods to the front, block by block */
		for (c = 0; c < nc; c++) {
			uint32_t u = b->ucount[c], s = b->gen_start[c];

			if (acc != s) {
				memmove(b->red_nb + acc, b->red_nb + s, (size_t)u * sizeof *b->red_nb);
				memmove(b->red_nbpos + acc, b->red_nbpos + s, (size_t)u * sizeof *b->red_nbpos);
			}
			b->ucount[c] = (uint32_t)acc;
			acc += u;
		}
		b->ucount[nc] = (uint32_t)acc;
		b->red_nbpos[acc] = (uint32_t)nocc;
		b->n_uniq = acc;
		progress(o, t0, "partition %u: reduced structure built (%llu unique neighborhoods), writing",
			pn, (unsigned long long)acc);
		wr_section_q(w, "red.start", pn, 4, b->ucount, (nc + 1) * 4, 0);
		if (b->kb == 4) {
			/* narrow the keys to u32 in place (l <= 16): byte 4j is below 8j */
			uint64_t j;

			for (j = 0; j < acc; j++) {
				uint32_t x = (uint32_t)b->red_nb[j];

				memcpy((uint8_t *)b->red_nb + 4 * j, &x, 4);
			}
		}
		wr_section_q(w, "red.nb", pn, b->kb, b->red_nb, acc * b->kb, 0);
		wr_section_q(w, "red.nbpos", pn, 4, b->red_nbpos, (acc + 1) * 4, 1);
		wr_section_q(w, "red.pos", pn, 4, b->red_pos, nocc * 4, 1);
		b->red_nbpos = b->red_pos = NULL;
	}
	wr_sync(w);  /* the writer may still read gen_pos / gen_start */
	free(b->gen_pos);
	free(b->gen_start);
	b->gen_pos = b->gen_start = NULL;
	if (p->structs & IDX_S_BLOCK) {
		uint64_t acc = 0;

		b->blk_start = sp_malloc((nc + 1) * sizeof *b->blk_start);
		for (c = 0; c < nc; c++) {
			b->blk_start[c] = (uint32_t)acc;
			acc += 3ULL * bdz_part_size(b->ucount[c + 1] - b->ucount[c]);
			if (acc > UINT32_MAX)
				sp_die("partition %u has too many hash slots: lower the partition size", pn);
		}
		b->blk_start[nc] = (uint32_t)acc;
		b->n_slots = acc;
		b->blk_seed = sp_malloc(nc * sizeof *b->blk_seed);
		b->blk_nb = sp_malloc((acc ? acc : 1) * b->kb);
		b->blk_rank = sp_malloc((acc ? acc : 1) * sizeof *b->blk_rank);
		b->blk_g = sp_malloc((acc + 3) / 4 + 1);
		memset(b->blk_g, 0xff, (acc + 3) / 4 + 1);
		b->attempts_total = 0;
		pthread_mutex_init(&b->lock, NULL);
		run_jobs(nt, job_block, b);
		pthread_mutex_destroy(&b->lock);
		progress(o, t0, "partition %u: indexed-block structure built (%llu slots, %llu graphs tried), writing",
			pn, (unsigned long long)acc, (unsigned long long)b->attempts_total);
		wr_section_q(w, "blk.start", pn, 4, b->blk_start, (nc + 1) * 4, 1);
		wr_section_q(w, "blk.seed", pn, 4, b->blk_seed, nc * 4, 1);
		wr_section_q(w, "blk.g", pn, 1, b->blk_g, (acc + 3) / 4, 1);
		wr_section_q(w, "blk.nb", pn, b->kb, b->blk_nb, acc * b->kb, 1);
		wr_section_q(w, "blk.rank", pn, 4, b->blk_rank, acc * 4, 1);
		b->blk_start = b->blk_seed = b->blk_rank = NULL;
		b->blk_nb = NULL;
		b->blk_g = NULL;
	}
	wr_sync(w);  /* ... and ucount / red_nb */
	free(b->ucount);
	free(b->red_nb);
	b->ucount = NULL;
	b->red_nb = NULL;
fm_only:
	if (p->structs & IDX_S_FM) {
		fm_build_t *fb = &fj.fb;

		progress(o, t0, "partition %u: suffix array of %llu bases", pn, (unsigned long long)fj.n);
		if (fm_bg)
			pthread_join(fth, NULL);
		else
			fm_thread(&fj);
		if (fj.rc != 0)
			sp_die("cannot build the suffix array of partition %u (libdivsufsort failed)", pn);
		progress(o, t0, "partition %u: FM-index built, writing", pn);
		{
			uint8_t *meta = sp_malloc(FM_META_LEN);

			memcpy(meta, fb->meta, FM_META_LEN);
			wr_section_q(w, "fm.meta", pn, 8, meta, FM_META_LEN, 1);
		}
		wr_section_q(w, "fm.occ", pn, 1, fb->occ, fb->occ_len, 1);
		wr_section_q(w, "fm.mark", pn, 8, fb->mark, fb->mark_len, 1);
		wr_section_q(w, "fm.sa", pn, 4, fb->sa, fb->sa_len, 1);
		fb->occ = NULL;
		fb->mark = NULL;
		fb->sa = NULL;
	}
}

void idx_build(idx_ref_t *r, const idx_params_t *p, const idx_build_opt_t *o,
		int fd, const char *out_name)
{
	wr_t w;
	idx_prange_t *pr;
	uint32_t np, i, win = p->span + p->l, n_short = 0;
	uint64_t total_w = 0;
	uint8_t hdr[IDX_HDR_LEN], params[88], *part_rec;
	XXH3_state_t *st;
	char *names_blob;
	size_t names_len = 0, k;
	wins_t *ws;
	double t0 = sp_now();

	if (r->n_seq == 0)
		sp_die("no sequence in the input");
	if (p->part_limit < 2ULL * win)
		sp_die("partition size %llu is below twice the seed span plus neighborhood (%u)",
			(unsigned long long)p->part_limit, 2 * win);
	for (i = 0; i < r->n_seq; i++) {
		if (r->len[i] >= win)
			continue;
		if (o->warn && n_short < 5)
			sp_warn("sequence '%s' (%llu bases) is shorter than a seed and its neighborhood (%u bases): not indexed",
				r->names[i], (unsigned long long)r->len[i], win);
		n_short++;
	}
	if (o->warn && n_short > 5)
		sp_warn("%u sequences in all are shorter than %u bases and not indexed", n_short, win);
	np = idx_partition(r->off, r->n_seq, p->part_limit, win, &pr);
	ws = sp_calloc(np, sizeof *ws);
	for (i = 0; i < np; i++) {
		part_windows(r, &pr[i], win, &ws[i]);
		if (ws[i].total > UINT32_MAX)
			sp_die("partition %u has too many seed positions", i);
		total_w += ws[i].total;
	}
	if (total_w == 0)
		sp_die("no seed position in the reference: no sequence holds %u bases (seed span %u + neighborhood %u) free of N",
			win, p->span, p->l);

	/* fingerprint: parameters and reference */
	for (i = 0; i < r->n_seq; i++)
		names_len += strlen(r->names[i]) + 1;
	names_blob = sp_malloc(names_len + 1);
	for (i = 0, k = 0; i < r->n_seq; i++) {
		size_t n = strlen(r->names[i]) + 1;

		memcpy(names_blob + k, r->names[i], n);
		k += n;
	}
	idx_params_pack(p, r->n_seq, np, r->total, r->n_nrun, params);
	st = XXH3_createState();
	if (!st)
		sp_die("out of memory");
	XXH3_64bits_reset(st);
	XXH3_64bits_update(st, params, sizeof params);
	XXH3_64bits_update(st, names_blob, names_len);
	XXH3_64bits_update(st, r->len, (size_t)r->n_seq * 8);
	XXH3_64bits_update(st, r->pack, (size_t)((r->total + 3) / 4));
	XXH3_64bits_update(st, r->nrun, (size_t)r->n_nrun * 16);
	memset(&w, 0, sizeof w);
	w.fd = fd;
	w.name = out_name;
	w.fp = XXH3_64bits_digest(st);
	XXH3_freeState(st);
	wr_start(&w);

	memset(hdr, 0, sizeof hdr);
	memcpy(hdr, IDX_MAGIC, 8);
	idx_wr32(hdr + 8, IDX_VERSION);
	idx_wr32(hdr + 12, IDX_HDR_LEN);
	idx_wr64(hdr + 16, w.fp);
	memcpy(hdr + 24, params, sizeof params);
	idx_wr64(hdr + 120, XXH3_64bits(hdr, 120));
	wr_raw(&w, hdr, sizeof hdr);

	wr_section(&w, "seq.names", IDX_PART_GLOBAL, 1, names_blob, names_len);
	free(names_blob);
	wr_section(&w, "seq.len", IDX_PART_GLOBAL, 8, r->len, (uint64_t)r->n_seq * 8);
	wr_section(&w, "seq.off", IDX_PART_GLOBAL, 8, r->off, ((uint64_t)r->n_seq + 1) * 8);
	/* 16 bytes of zero slack so 64-bit loads at any base stay in the payload */
	wr_section(&w, "ref.pack", IDX_PART_GLOBAL, 1, r->pack, (r->total + 3) / 4 + 16);
	wr_section(&w, "ref.nrun", IDX_PART_GLOBAL, 8, r->nrun, r->n_nrun * 16);
	part_rec = sp_calloc(np, 32);
	for (i = 0; i < np; i++) {
		idx_wr64(part_rec + 32 * i, pr[i].beg);
		idx_wr64(part_rec + 32 * i + 8, pr[i].end);
		idx_wr32(part_rec + 32 * i + 16, pr[i].first_seq);
		idx_wr32(part_rec + 32 * i + 20, pr[i].end_seq);
		idx_wr64(part_rec + 32 * i + 24, ws[i].total);
	}
	wr_section(&w, "part", IDX_PART_GLOBAL, 32, part_rec, (uint64_t)np * 32);
	free(part_rec);
	progress(o, t0, "%u sequences, %llu bases, %u partition%s; seed %s (weight %u), l=%u",
		r->n_seq, (unsigned long long)r->total, np, np > 1 ? "s" : "", p->shape, p->w, p->l);

	for (i = 0; i < np; i++) {
		bctx_t b;

		memset(&b, 0, sizeof b);
		b.r = r;
		b.p = p;
		b.pr = &pr[i];
		b.ws = ws[i];
		b.n_codes = 1ULL << (2 * p->w);
		b.part_no = i;
		b.kb = IDX_KEY_BYTES(p->l);
		build_part(&b, o, &w, t0);
		free(ws[i].run);
	}
	{
		uint8_t end[32];
		uint64_t before;

		wr_sync(&w);
		before = w.off;

		idx_wr64(end, w.fp);
		idx_wr64(end + 8, w.n_sections + 1);
		idx_wr64(end + 16, before);
		memset(end + 24, 0, 8);
		memcpy(end + 24, IDX_END_MAGIC, 6);
		wr_section(&w, "end", IDX_PART_GLOBAL, 1, end, sizeof end);
	}
	wr_stop(&w);
	progress(o, t0, "done: %llu bytes", (unsigned long long)w.off);
	free(ws);
	free(pr);
}
