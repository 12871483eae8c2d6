/*
 * strsort_ext.c - external runs (strsort_priv.h): each chunk of input is
 * sorted and written to a run file in -T; the runs are merged k-way with a
 * loser tree, at most SS_MERGE_WAYS at once (more take several passes
 * through new runs); ties go to the earlier run, so the result stays stable.
 * -m merges its sorted inputs with the same merge, streaming: each input is
 * read through a buffer of its own, never whole.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strsort_priv.h"
#include "util.h"

#define SS_MERGE_WAYS 64

/* a buffered line reader over a run file, or an input of -m */
typedef struct {
	int fd;
	const char *name;
	int input;             /* an input file: its last line may lack the delimiter */
	uint8_t *buf;
	size_t beg, end, cap;
	const uint8_t *line;   /* current line (with delimiter) */
	size_t len;
	int eof;
	uint8_t *key;          /* with encoded keys: the current line's (ss_enc_line) */
	size_t klen, kcap;
} run_in;

/* the keys are compared as their encodings (every case but one plain key) */
static int merge_encoded(const ss_opts *o)
{
	return !(o->nkeys == 1 && ss_key_plain(&o->keys[0]));
}

/* with encoded keys, encode the current line of r once, for every comparison */
static void ri_encode(const ss_opts *o, run_in *r)
{
	size_t need = 0;
	int i;

	for (i = 0; i < o->nkeys; i++)
		need += ss_enc_bound(&o->keys[i], r->len - 1, 1);
	if (need > r->kcap) {
		r->kcap = need * 2;
		r->key = sp_realloc(r->key, r->kcap);
	}
	r->klen = ss_enc_line(o, r->line, r->len - 1, r->key);
}

static int bytes_cmp(const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
	int c = memcmp(a, b, na < nb ? na : nb);

	return c ? c : na < nb ? -1 : na > nb;
}

static int ri_next(run_in *r, int delim)
{
	for (;;) {
		uint8_t *p = r->beg < r->end ? memchr(r->buf + r->beg, delim, r->end - r->beg) : NULL;
		ssize_t k;

		if (p) {
			r->line = r->buf + r->beg;
			r->len = (size_t)(p - r->line) + 1;
			r->beg += r->len;
			return 1;
		}
		if (r->eof) {
			if (r->beg == r->end)
				return 0;
			if (!r->input)
				return sp_fail("temporary file '%s' ends inside a line", r->name);
			/* an input's last line without its delimiter: add one */
			if (r->end == r->cap) {
				r->cap *= 2;
				r->buf = sp_realloc(r->buf, r->cap);
			}
			r->buf[r->end++] = (uint8_t)delim;
			continue;
		}
		if (r->beg > 0) {
			memmove(r->buf, r->buf + r->beg, r->end - r->beg);
			r->end -= r->beg;
			r->beg = 0;
		}
		if (r->end == r->cap) {
			r->cap *= 2;
			r->buf = sp_realloc(r->buf, r->cap);
		}
		k = read(r->fd, r->buf + r->end, r->cap - r->end);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return sp_fail(r->input ? "cannot read '%s': %s" : "cannot read temporary file '%s': %s",
				r->name, strerror(errno));
		}
		if (k == 0)
			r->eof = 1;
		r->end += (size_t)k;
	}
}

/* does run a's line come before run b's (b > a in run order on ties)? */
typedef struct {
	const ss_opts *o;
	run_in *in;
	int *tree;       /* loser tree: tree[0] winner, tree[1..k) losers */
	int k;
	int enc;         /* compare the encoded keys (run_in.key) */
} merger;

static int beats(const merger *m, int a, int b)
{
	const run_in *x = &m->in[a], *y = &m->in[b];
	int c;

	if (!x->line)
		return 0;
	if (!y->line)
		return 1;
	if (m->enc) {
		c = bytes_cmp(x->key, x->klen, y->key, y->klen);
		if (c == 0 && ss_last_resort(m->o)) {
			c = bytes_cmp(x->line, x->len - 1, y->line, y->len - 1);
			if (m->o->reverse)
				c = -c;
		}
	} else {
		c = ss_cmp_full(m->o, x->line, x->len - 1, y->line, y->len - 1);
	}
	return c < 0 || (c == 0 && a < b);
}

static int lt_build(merger *m, int node)
{
	int l, r;

	if (node >= m->k)
		return node - m->k;
	l = lt_build(m, 2 * node);
	r = lt_build(m, 2 * node + 1);
	if (beats(m, l, r)) {
		m->tree[node] = r;
		return l;
	}
	m->tree[node] = l;
	return r;
}

/* merge the files PATHS[0, k) (the runs, or with INPUT the inputs of -m,
 * "-" for stdin) into w; returns 0, or -1 */
static int merge_files(const ss_opts *o, char **paths, int k, int input, ss_writer *w)
{
	merger m;
	int i, rc = 0, delim = ss_delim(o);
	uint8_t *prev = NULL;
	size_t prev_len = 0, prev_cap = 0;
	int have_prev = 0;

	m.o = o;
	m.k = k;
	m.enc = merge_encoded(o);
	m.in = sp_calloc((size_t)k, sizeof *m.in);
	m.tree = sp_calloc((size_t)(2 * k), sizeof *m.tree);
	for (i = 0; i < k; i++) {
		run_in *r = &m.in[i];

		r->name = paths[i];
		r->input = input;
		r->fd = input && strcmp(r->name, "-") == 0 ? 0 : open(r->name, O_RDONLY);
		r->cap = 1u << 18;
		r->buf = sp_malloc(r->cap);
		if (r->fd < 0) {
			rc = sp_fail(input ? "cannot read '%s': %s" : "cannot read temporary file '%s': %s",
				r->name, strerror(errno));
			break;
		}
		if (ri_next(r, delim) < 0) {
			rc = -1;
			break;
		}
		if (m.enc && r->line)
			ri_encode(o, r);
	}
	if (rc == 0) {
		int win = lt_build(&m, 1);

		if (k == 1)
			win = 0;
		while (m.in[win].line) {
			run_in *r = &m.in[win];
			int node;

			/* -u: prev holds the last line written, or its encoded keys */
			if (o->unique && have_prev && (m.enc ?
					bytes_cmp(prev, prev_len, r->key, r->klen) == 0 :
					ss_cmp_lines(o, 0, prev, prev_len - 1, r->line, r->len - 1) == 0)) {
				/* a repeat of the last line written */
			} else {
				const uint8_t *keep = m.enc ? r->key : r->line;
				size_t kn = m.enc ? r->klen : r->len;

				if (ss_wr_put(w, r->line, r->len) < 0) {
					rc = -1;
					break;
				}
				if (o->unique) {
					if (kn > prev_cap || !prev) {
						/* (never NULL: memcpy and memcmp of 0 bytes too) */
						prev_cap = kn * 2 + 16;
						prev = sp_realloc(prev, prev_cap);
					}
					memcpy(prev, keep, kn);
					prev_len = kn;
					have_prev = 1;
				}
			}
			if (ri_next(r, delim) <= 0) {
				if (!r->eof) {
					rc = -1;
					break;
				}
				r->line = NULL;
			} else if (m.enc) {
				ri_encode(o, r);
			}
			/* replay from the leaf up */
			for (node = (win + k) / 2; node >= 1; node /= 2) {
				if (beats(&m, m.tree[node], win)) {
					int t = m.tree[node];

					m.tree[node] = win;
					win = t;
				}
			}
		}
	}
	for (i = 0; i < k; i++) {
		if (m.in[i].buf && m.in[i].fd > 0)
			close(m.in[i].fd);
		free(m.in[i].buf);
		free(m.in[i].key);
	}
	free(m.in);
	free(m.tree);
	free(prev);
	return rc;
}

/* a new run file: its descriptor (*t set), or -1 */
static int run_create(const ss_opts *o, temp_node **t)
{
	return ss_temp_create(ss_tmpdir(o), "strsort.", t);
}

/* close run T, written by FD, after writing it (R: 0, or -1 on failure) */
static int run_close(int fd, temp_node *t, int r)
{
	if (close(fd) != 0 && r == 0)
		r = sp_fail("cannot write '%s': %s", t->path, strerror(errno));
	return r;
}

int ss_runs_add(const ss_opts *o, ss_runs *r, const ss_chunk *c)
{
	temp_node *t;
	int fd = run_create(o, &t);

	if (fd < 0)
		return -1;
	r->tmp = sp_realloc(r->tmp, (r->n + 1) * sizeof *r->tmp);
	r->tmp[r->n++] = t;
	return run_close(fd, t, ss_emit_chunk(o, c, fd, t->path));
}

/* merge the runs RUNS[0, k) into w; returns 0, or -1 */
static int merge_runs(const ss_opts *o, temp_node **runs, int k, ss_writer *w)
{
	char **paths = sp_malloc((size_t)k * sizeof *paths);
	int i, rc;

	for (i = 0; i < k; i++)
		paths[i] = runs[i]->path;
	rc = merge_files(o, paths, k, 0, w);
	free(paths);
	return rc;
}

int ss_runs_merge(const ss_opts *o, ss_runs *r, ss_writer *w)
{
	/* merge runs SS_MERGE_WAYS at a time until one pass is left */
	while (r->n > SS_MERGE_WAYS) {
		size_t i, nn = 0;

		for (i = 0; i < r->n; i += SS_MERGE_WAYS) {
			int k = (int)(r->n - i < SS_MERGE_WAYS ? r->n - i : SS_MERGE_WAYS), j, rc;
			temp_node *t;
			ss_writer tw;
			int fd = run_create(o, &t);

			if (fd < 0)
				return -1;
			ss_wr_init(&tw, fd, t->path);
			rc = merge_runs(o, r->tmp + i, k, &tw) < 0 || ss_wr_flush(&tw) < 0 ? -1 : 0;
			ss_wr_free(&tw);
			if (run_close(fd, t, rc) < 0) {
				sp_tmp_remove(t);
				return -1;
			}
			for (j = 0; j < k; j++)
				sp_tmp_remove(r->tmp[i + (size_t)j]);
			r->tmp[nn++] = t;
		}
		r->n = nn;
	}
	if (merge_runs(o, r->tmp, (int)r->n, w) < 0)
		return -1;
	return ss_wr_flush(w);
}

void ss_runs_free(ss_runs *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		sp_tmp_remove(r->tmp[i]);
	free(r->tmp);
	r->tmp = NULL;
	r->n = 0;
}

int ss_merge_inputs(const ss_opts *o, char **files, int nfiles, ss_writer *w)
{
	ss_runs r = { NULL, 0 };
	int i, rc = 0;

	if (nfiles <= SS_MERGE_WAYS)
		return merge_files(o, files, nfiles, 1, w) < 0 ? -1 : ss_wr_flush(w);
	/* more inputs than one merge takes: merge them in groups into runs */
	for (i = 0; i < nfiles && rc == 0; i += SS_MERGE_WAYS) {
		int k = nfiles - i < SS_MERGE_WAYS ? nfiles - i : SS_MERGE_WAYS;
		temp_node *t;
		ss_writer tw;
		int fd = run_create(o, &t);

		if (fd < 0) {
			rc = -1;
			break;
		}
		r.tmp = sp_realloc(r.tmp, (r.n + 1) * sizeof *r.tmp);
		r.tmp[r.n++] = t;
		ss_wr_init(&tw, fd, t->path);
		rc = merge_files(o, files + i, k, 1, &tw) < 0 || ss_wr_flush(&tw) < 0 ? -1 : 0;
		ss_wr_free(&tw);
		rc = run_close(fd, t, rc);
	}
	if (rc == 0)
		rc = ss_runs_merge(o, &r, w);
	ss_runs_free(&r);
	return rc;
}
