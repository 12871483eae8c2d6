/*
 * strsort_priv.h - the layers of the line sort, one file each, lowest first.
 * A file calls only the layers listed above it, never one below:
 *
 *   strsort_enc.c    keys as order-preserving bytes (every key type)
 *   strsort_keys.c   keys: KEYDEF parsing, key spans, -n, comparing lines
 *   strsort_opts.c   the tool's -S sizes and bare -k (strsort.h)
 *   strsort_out.c    temporary files (removed at exit and on fatal signals),
 *                    the output writer, -o FILE through a temporary file
 *   strsort_read.c   the input arena and the reader (chunks for -S)
 *   strsort_split.c  finding the lines of a chunk and its radix entries
 *   strsort_win.c    ordering lines by their encoded keys (windows of them)
 *   strsort_sort.c   ordering a chunk; check mode
 *   strsort_emit.c   writing a sorted chunk (gather in parallel, write in order)
 *   strsort_ext.c    external runs: writing them, the loser-tree merge
 *   strsort_rec.c    -B: record streams (sorted in memory, from ss_run)
 *   strsort.c        ss_run: the dispatcher over all of the above
 *
 * strsort_ocl.c (the device sort, strsort.h) and msd.c sit below them all.
 * A function here that can fail (and every one a worker thread runs) returns
 * -1 after sp_fail() and prints no error; the drivers (strsort.c, and
 * strsort_rec.c for -B) report it once, with ss_report.
 */
#ifndef SP_STRSORT_PRIV_H
#define SP_STRSORT_PRIV_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "msd.h"
#include "sp_tmp.h"
#include "strsort.h"

#define SS_OUTBUF (4u << 20)
/* readable bytes after the arena's last line: SP_MSD_PAD for the radix
 * loads, and whole 16-byte vectors for the packed loads (sp_msd_pack) */
#define SS_PAD 64

/* the process's CPU seconds so far (for -v) */
static inline double ss_cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* the line delimiter of o */
static inline int ss_delim(const ss_opts *o)
{
	return o->zero ? 0 : '\n';
}

/* ---- strsort_enc.c ------------------------------------------------------- */

/* the key span [*kb, *ke) of line [t, t+len) (GNU sort's begfield/limfield) */
void ss_key_span(const ss_key *k, int tab, const uint8_t *t, size_t len,
		const uint8_t **kb, const uint8_t **ke);

/* the key is compared bytewise, with no transformation (b may be set) */
int ss_key_plain(const ss_key *k);

/* room for the encodings of key k on NLINES lines of LEN bytes in all
 * (ss_enc_key needs ss_enc_bound(k, e - b, 1) bytes) */
size_t ss_enc_bound(const ss_key *k, size_t len, size_t nlines);

/*
 * Write the order-preserving encoding of key k's text [b, e) to out
 * (ss_enc_bound(k, e - b, 1) bytes of room); LAST: no key is appended after it.
 * Returns its length.
 */
size_t ss_enc_key(const ss_key *k, const uint8_t *b, const uint8_t *e, int last, uint8_t *out);

/* every key of line [t, t+len), encoded and concatenated (room: the sum
 * of ss_enc_bound(key, len, 1)); returns the length */
size_t ss_enc_line(const ss_opts *o, const uint8_t *t, size_t len, uint8_t *out);

/* ---- strsort_keys.c ------------------------------------------------------ */


/* compare lines a and b (without delimiters) on keys [k0, o->nkeys) */
int ss_cmp_lines(const ss_opts *o, int k0, const uint8_t *a, size_t la,
		const uint8_t *b, size_t lb);

/* compare lines a and b as the sort orders them: the keys, then (without
 * -s or -u) the whole lines bytewise, reversed by -r */
int ss_cmp_full(const ss_opts *o, const uint8_t *a, size_t la, const uint8_t *b, size_t lb);

/* ties of all keys are ordered by the whole lines (no -s, no -u) */
static inline int ss_last_resort(const ss_opts *o)
{
	return !o->stable && !o->unique;
}

/* the key is the whole line, compared bytewise from its first byte */
int ss_key_is_whole(const ss_key *k);

/* ---- strsort_out.c ------------------------------------------------------- */

/* A registered temporary file, removed at exit or on a signal while live. */
typedef sp_tmp_t temp_node;

/**
 * Make a temporary file "DIR/PREFIXXXXXXX", registered for removal at exit
 * and on every fatal signal.  Returns the descriptor (*node set), or -1.
 */
int ss_temp_create(const char *dir, const char *prefix, temp_node **node);


/** The directory of the temporary runs: -T, else $TMPDIR, else /tmp. */
const char *ss_tmpdir(const ss_opts *o);

/**
 * Write N bytes of P to FD (NAME for the message).  Returns 0, or -1; a
 * reader that went away (EPIPE) is noted for ss_output_gone.
 */
int ss_write(int fd, const char *name, const void *p, size_t n);

/** 1 once a write has found the reader of the output gone (EPIPE). */
int ss_output_gone(void);

/** A buffered writer (one thread). */
typedef struct {
	int fd;
	const char *name;   /* for messages */
	uint8_t *buf;
	size_t len, cap;
	int failed;
} ss_writer;

void ss_wr_init(ss_writer *w, int fd, const char *name);
int ss_wr_flush(ss_writer *w);
void ss_wr_free(ss_writer *w);

static inline int ss_wr_put(ss_writer *w, const uint8_t *p, size_t n)
{
	if (w->len + n > w->cap) {
		if (ss_wr_flush(w) < 0)
			return -1;
		if (n > w->cap) {
			if (ss_write(w->fd, w->name, p, n) < 0) {
				w->failed = 1;
				return -1;
			}
			return 0;
		}
	}
	memcpy(w->buf + w->len, p, n);
	w->len += n;
	return 0;
}

/**
 * Open the output: 1 (stdout) without -o; for a regular (or new) -o FILE a
 * temporary file next to it (*tmp set), else FILE itself.  Returns the
 * descriptor, or -1.
 */
int ss_open_output(const ss_opts *o, temp_node **tmp);

/**
 * Close the output opened by ss_open_output; when ok, rename the temporary
 * file over FILE, else remove it.  Returns 0, or -1 (a new error only when
 * OK was set).
 */
int ss_close_output(const ss_opts *o, int fd, temp_node *tmp, int ok);

/**
 * The exit status of a failure whose message is in sp_errmsg(): 1 after
 * printing it, or 0, quietly, when the reader of the output went away.
 */
int ss_report(void);

/**
 * End the output: ss_close_output, and the exit status (OK: everything was
 * written; else the failure is in sp_errmsg() and is reported).
 */
int ss_end_output(const ss_opts *o, int fd, temp_node *tmp, int ok);

/* ---- strsort_read.c ------------------------------------------------------ */

/* A chunk of input (the arena) and the index the later layers make of it. */
typedef struct {
	uint8_t *buf;          /* the arena; SS_PAD readable bytes after len */
	size_t len, cap;
	uint64_t *loff;        /* n + 1 line starts; loff[n] = len */
	size_t n;
	uint64_t *koff;        /* first-key starts (== loff for whole lines) */
	uint32_t *klen;        /* first-key lengths (NULL when the key is the line) */
	sp_msd_ent *ents;      /* radix sort entries, then the order in place */
	uint32_t *order;       /* sorted line numbers (in ents, or its own array) */
	int direct;            /* one radix-sorted key, arena < 4 GiB: an entry's
	                        * idx is its key's offset, and there is no loff */
	int keyw;              /* the first key is the whole line */
	size_t *ends;          /* direct entries scattered by their first 16 key
	                        * bits: the 65536 bucket ends, or NULL */
	int packed;            /* direct entries cache packed prefixes (pk) */
	sp_msd_pack pk;
	size_t depth0;         /* direct entries: every key starts with the same
	                        * depth0 bytes, and prefixes are cached from there */
	int unpack;            /* packed whole lines: a line no longer than a
	                        * prefix is written from its entry */
	int enc;               /* the keys are encoded (strsort_win.c) */
	uint64_t *tie;         /* encoded, sorted: bit i set when order[i] has
	                        * the keys of order[i - 1] (-u, last resort) */
	double prof[8];        /* -v: the split's steps (seconds): setup,
	                        * count pass, offsets and allocation, fill pass;
	                        * then the process CPU seconds of each */
} ss_chunk;

/* direct mode: the lines of two entries are equal */
static inline int ss_ent_line_eq(const ss_chunk *c, const sp_msd_ent *x, const sp_msd_ent *y)
{
	return x->len == y->len && x->pfx == y->pfx &&
		memcmp(c->buf + x->idx, c->buf + y->idx, x->len) == 0;
}

typedef struct {
	char **files;
	int nfiles, cur;       /* cur: the file being read */
	int fd;                /* -1: none open */
	const char *name;
	int any, last;         /* the open file gave bytes; its last byte */
	int done;
	int delim;
	int nthreads;          /* for reading a large regular file in parallel */
	size_t size;           /* st_size of the open file if regular, else 0 */
	size_t want;           /* the chunk size (-S), or 0: all input at once */
	int verbose;           /* -v: say how a large file was read */
} ss_reader;

/* Start reading files[0..nfiles) for o, in chunks of WANT bytes (0: all). */
void ss_rd_init(ss_reader *r, const ss_opts *o, char **files, int nfiles, size_t want);

/*
 * Append input to c until it holds at least r->want bytes (0: all of it)
 * and a delimiter past its first bytes (so a chunk always has a whole
 * line), or the input ends (r->done).  Returns 0, or -1.
 */
int ss_rd_fill(ss_reader *r, ss_chunk *c);

/* Room for EXTRA more bytes (and SS_PAD) in the arena. */
void ss_ch_reserve(ss_chunk *c, size_t extra);

/* Free the arena. */
void ss_ch_free_buf(ss_chunk *c);

/* ---- strsort_split.c ----------------------------------------------------- */

/*
 * Find the lines of c.  For a radix-sorted first key, fill c->ents too.
 * Returns 0, or -1.
 */
int ss_split_lines(const ss_opts *o, ss_chunk *c);

/* Free the index made by ss_split_lines and ss_sort_chunk (not the arena). */
void ss_ch_free_index(ss_chunk *c);

/* ---- strsort_win.c ------------------------------------------------------- */

/*
 * Order the lines of c (split, c->enc) by the encodings of all their keys
 * into c->order, stably, with c->tie.  Returns 0, or -1.
 */
int ss_win_sort(const ss_opts *o, ss_chunk *c);

/* ---- strsort_sort.c ------------------------------------------------------ */

/* Order the lines of c (split) into c->ents (direct) or c->order.
 * Returns 0, or -1. */
int ss_sort_chunk(const ss_opts *o, ss_chunk *c);

/* Reverse a[0..n), then each run of equal neighbours (EQ) back, so that
 * equal keys stay in input order (a reversed stable sort). */
void ss_reverse_groups(uint32_t *a, size_t n, int (*eq)(const void *ctx, uint32_t i, uint32_t j),
		const void *ctx);

/* Check mode: whether the lines of c are in order; the exit status
 * (1 after reporting the first disorder of NAME with -c). */
int ss_check_chunk(const ss_opts *o, const ss_chunk *c, const char *name);

/* ---- strsort_emit.c ------------------------------------------------------ */

/* Write the sorted lines of c to fd (NAME for messages), dropping repeats
 * with -u.  Returns 0, or -1. */
int ss_emit_chunk(const ss_opts *o, const ss_chunk *c, int fd, const char *name);

/* ---- strsort_ext.c ------------------------------------------------------- */

/* The sorted runs on disk, in input order. */
typedef struct {
	temp_node **tmp;
	size_t n;
} ss_runs;

/* Write the sorted chunk c as a new run.  Returns 0, or -1. */
int ss_runs_add(const ss_opts *o, ss_runs *r, const ss_chunk *c);

/* Merge the runs into w (several passes through new runs when there are
 * more than the merge takes at once).  Returns 0, or -1. */
int ss_runs_merge(const ss_opts *o, ss_runs *r, ss_writer *w);

/* -m: merge the sorted inputs files[0..nfiles) ("-": stdin) into w,
 * streaming (in groups through runs when there are more than a merge
 * takes).  Returns 0, or -1. */
int ss_merge_inputs(const ss_opts *o, char **files, int nfiles, ss_writer *w);

/* Remove the runs left and free r. */
void ss_runs_free(ss_runs *r);

#endif
