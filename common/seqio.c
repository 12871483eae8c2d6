/*
 * seqio.c - FASTA/FASTQ reader (plain or gzip, file or pipe) and 2-bit
 * packing helpers.
 *
 * Reading is split over two threads so that input and decompression overlap
 * parsing:
 *
 *     producer thread: read(2) 1 MiB at a time -> [inflate] -> chunk ring
 *     calling thread:  chunk ring -> line buffer -> memchr line scan -> records
 *
 * The ring holds SEQIO_NCHUNK chunks of SEQIO_CHUNK bytes; the producer never
 * seeks, so pipes work.  gzip is recognised by its magic bytes (1f 8b), not by
 * the file name; concatenated members (and so BGZF) are read to the end, NUL
 * padding after the last member is ignored, anything else after it is an
 * error.  Input errors found by the producer (truncated gzip, corrupt data,
 * read errors) are reported by the parser once the data before them has been
 * consumed, so records before the damage are still delivered.
 *
 * Rules of the text formats (see also seqio.h):
 * - the first KiB must not hold NUL or control bytes other than TAB, LF, VT,
 *   FF, CR, and the first non-blank line must start with '>' or '@'
 *   ("not FASTA or FASTQ"); the first record decides the format;
 * - FASTA sequence may span any number of lines; blank lines and blanks
 *   (space, TAB) inside sequence lines are ignored;
 * - FASTQ is the 4-line form only (multi-line FASTQ is NOT supported: the
 *   line after the sequence must start with '+'); the '+' line may repeat the
 *   header (the whole header or just the name); the quality line must have
 *   the length of the sequence and hold only '!'..'~'; blank lines between
 *   records are ignored;
 * - sequence letters: ACGTN in either case are folded to upper case; every
 *   other letter (IUPAC codes, U, X ...) and the gap characters '-' and '.'
 *   become N and are counted (seqio_n_mapped); any other byte (digits, '*',
 *   punctuation, control bytes, and blanks inside FASTQ sequence) is an
 *   error "invalid character";
 * - a header "NAME COMMENT": NAME is up to the first blank, COMMENT starts
 *   after the run of blanks; blanks at the end of the header are dropped;
 * - CR before LF is dropped everywhere; the last line need not end in LF.
 */
#define _POSIX_C_SOURCE 200809L
#include "seqio.h"
#include "util.h"
#include "inc_pack.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define SEQIO_CHUNK (1u << 20)   /* bytes per ring chunk and per raw read */
/* SEEDPIPE_SEQIO_CHUNK=BYTES overrides it (tests use tiny chunks to put
 * buffer boundaries everywhere) */
#define SEQIO_NCHUNK 4           /* chunks in the ring */
#define SEQIO_SNIFF 1024         /* bytes checked for binary data */

/*
 * Sequence byte tables, filled once.  seq_map: the output letter (upper
 * ACGTN, 'N' for other letters and '-' '.'), 0 for bytes that are not
 * sequence.  seq_slow: 0 for ACGTNacgtn (the fast path), 1 for everything
 * else, so a line is mapped in one branch-free pass and only rechecked when
 * some byte needs attention.
 */
static uint8_t seq_map[256], seq_slow[256];
static pthread_once_t seq_once = PTHREAD_ONCE_INIT;

static void seq_tables_init(void)
{
	int c;

	for (c = 0; c < 256; c++) {
		seq_slow[c] = 1;
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '-' || c == '.')
			seq_map[c] = 'N';
	}
	for (c = 0; c < 5; c++) {
		unsigned char u = (unsigned char)"ACGTN"[c];
		seq_map[u] = seq_map[u + 32] = u;
		seq_slow[u] = seq_slow[u + 32] = 0;
	}
}

/*
 * 16-byte vectors (GCC/Clang vector extension, SSE2/NEON or plain code when
 * the target has neither) for the hot loops; a portable scalar path follows
 * each vector loop.
 */
#if defined(__GNUC__)
#define SEQIO_VEC 1
typedef unsigned char seqio_v16 __attribute__((vector_size(16)));
typedef signed char seqio_m16 __attribute__((vector_size(16)));

static inline seqio_v16 v16_load(const void *p)
{
	seqio_v16 v;
	memcpy(&v, p, 16);
	return v;
}

static inline void v16_store(void *p, seqio_v16 v)
{
	memcpy(p, &v, 16);
}

static inline int m16_all(seqio_m16 m)
{
	uint64_t a[2];
	memcpy(a, &m, 16);
	return (a[0] & a[1]) == ~(uint64_t)0;
}

static inline int m16_none(seqio_m16 m)
{
	uint64_t a[2];
	memcpy(a, &m, 16);
	return (a[0] | a[1]) == 0;
}
#else
#define SEQIO_VEC 0
#endif

typedef struct {
	char *data;
	size_t len;
} seqio_chunk_t;

struct seqio_reader {
	char *fn;                /* display name */
	int fd, own_fd, is_gz;
	size_t chunk;            /* chunk size in bytes */
	int fastq;               /* 1, 0, -1 unknown (empty input) */
	uint64_t n_mapped;

	/* parse side */
	char *buf;               /* text being parsed: [pos, end) */
	size_t pos, end, cap, scanned;
	int eof;
	int failed;              /* a parse or read error ended the input: msg */
	char msg[SP_ERRMSG_MAX];
	uint64_t line;           /* lines consumed so far */
	size_t sniffed;          /* bytes checked for binary data */
	uint64_t sniff_line;     /* LFs among them */

	/* producer side */
	pthread_t th;
	int th_started;
	pthread_mutex_t mu;
	pthread_cond_t can_put, can_get;
	seqio_chunk_t ch[SEQIO_NCHUNK];
	int head, count, done, stop;
	size_t cur_off;          /* bytes of ch[head] already consumed */
	char err[256];           /* producer error, "" if none */
	unsigned char *pre;      /* sniffed raw bytes, handed to the producer */
	size_t pre_len, pre_off;
	unsigned char *raw;      /* raw input buffer of the producer (gzip) */
	z_stream z;              /* in the reader so that close can free it */
	int z_init;
};

/* ---------- producer ---------------------------------------------------- */

/* read(2) that serves the sniffed prefix first; -1 on error (errno set). */
static ssize_t raw_read(seqio_reader_t *r, void *dst, size_t n)
{
	ssize_t k;
	int old;

	if (r->pre_off < r->pre_len) {
		size_t m = r->pre_len - r->pre_off;
		if (m > n)
			m = n;
		memcpy(dst, r->pre + r->pre_off, m);
		r->pre_off += m;
		return (ssize_t)m;
	}
	/* the only place the producer may be cancelled (seqio_close on a pipe) */
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
	do {
		k = read(r->fd, dst, n);
	} while (k < 0 && errno == EINTR);
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	return k;
}

/* Wait for a free chunk; returns its index or -1 when asked to stop. */
static int prod_get_slot(seqio_reader_t *r)
{
	int idx;

	pthread_mutex_lock(&r->mu);
	while (r->count == SEQIO_NCHUNK && !r->stop)
		pthread_cond_wait(&r->can_put, &r->mu);
	idx = r->stop ? -1 : (r->head + r->count) % SEQIO_NCHUNK;
	pthread_mutex_unlock(&r->mu);
	return idx;
}

static void prod_publish(seqio_reader_t *r, int idx, size_t len)
{
	if (len == 0)
		return;
	pthread_mutex_lock(&r->mu);
	r->ch[idx].len = len;
	r->count++;
	pthread_cond_signal(&r->can_get);
	pthread_mutex_unlock(&r->mu);
}

static void prod_finish(seqio_reader_t *r, const char *err)
{
	pthread_mutex_lock(&r->mu);
	if (err)
		snprintf(r->err, sizeof r->err, "%s", err);
	r->done = 1;
	pthread_cond_signal(&r->can_get);
	pthread_mutex_unlock(&r->mu);
}

static void prod_plain(seqio_reader_t *r)
{
	char msg[200];

	for (;;) {
		int idx = prod_get_slot(r);
		size_t len = 0;
		ssize_t k;

		if (idx < 0)
			return;
		/* one read(2) per chunk: a pipe delivers what it has, at once */
		if ((k = raw_read(r, r->ch[idx].data, r->chunk)) > 0)
			len = (size_t)k;
		prod_publish(r, idx, len);
		if (k < 0) {
			snprintf(msg, sizeof msg, "read error: %s", strerror(errno));
			prod_finish(r, msg);
			return;
		}
		if (k == 0) {
			prod_finish(r, NULL);
			return;
		}
	}
}

/* One read(2) into the inflate input; 0, or -1 with the reason in MSG. */
static int gz_refill(seqio_reader_t *r, int *in_eof, char *msg, size_t msg_len)
{
	ssize_t k = raw_read(r, r->raw, r->chunk);

	if (k < 0) {
		snprintf(msg, msg_len, "read error: %s", strerror(errno));
		return -1;
	}
	*in_eof = k == 0;
	r->z.next_in = r->raw;
	r->z.avail_in = (uInt)k;
	return 0;
}

static void prod_gzip(seqio_reader_t *r)
{
	z_stream *zp = &r->z;
	char msg[200];
	int in_eof = 0, ret, idx = -1;
	size_t len = 0;
	const char *err = NULL;

	if (inflateInit2(zp, 15 + 16) != Z_OK) {
		prod_finish(r, "cannot initialise zlib");
		return;
	}
	r->z_init = 1;
	r->raw = sp_malloc(r->chunk);
	for (;;) {
		if (idx < 0) {
			if ((idx = prod_get_slot(r)) < 0)
				break;
			len = 0;
		}
		if (zp->avail_in == 0 && !in_eof) {
			if (len > 0) {
				/* hand over what we have before read(2) may block on a pipe */
				prod_publish(r, idx, len);
				idx = -1;
				continue;
			}
			if (gz_refill(r, &in_eof, msg, sizeof msg) != 0) {
				err = msg;
				break;
			}
		}
		zp->next_out = (Bytef *)r->ch[idx].data + len;
		zp->avail_out = (uInt)(r->chunk - len);
		ret = inflate(zp, Z_NO_FLUSH);
		len = r->chunk - zp->avail_out;
		if (ret == Z_STREAM_END) {
			/* end of one member: skip NUL padding, then another member or EOF */
			int skipped = 0;
			for (;;) {
				while (zp->avail_in > 0 && *zp->next_in == 0)
					zp->next_in++, zp->avail_in--, skipped = 1;
				if (zp->avail_in > 0 || in_eof)
					break;
				if (idx >= 0 && len > 0) {   /* as above: publish before blocking */
					prod_publish(r, idx, len);
					idx = -1;
					len = 0;
				}
				if (gz_refill(r, &in_eof, msg, sizeof msg) != 0) {
					err = msg;
					break;
				}
			}
			if (err)
				break;
			if (zp->avail_in == 0)
				break;   /* clean end */
			if (skipped || *zp->next_in != 0x1f) {
				err = "trailing garbage after gzip data";
				break;
			}
			inflateReset(zp);
		} else if (ret == Z_BUF_ERROR || (ret == Z_OK && zp->avail_in == 0 && in_eof && zp->avail_out > 0)) {
			if (zp->avail_in == 0 && in_eof) {
				err = "unexpected end of gzip data (truncated file?)";
				break;
			}
		} else if (ret != Z_OK) {
			snprintf(msg, sizeof msg, "corrupt gzip data (zlib: %s)",
			         zp->msg ? zp->msg : ret == Z_MEM_ERROR ? "out of memory" : "error");
			err = msg;
			break;
		}
		if (idx >= 0 && len == r->chunk) {
			prod_publish(r, idx, len);
			idx = -1;
		}
	}
	if (idx >= 0)
		prod_publish(r, idx, len);
	inflateEnd(zp);
	r->z_init = 0;
	prod_finish(r, err);
}

static void *prod_main(void *arg)
{
	seqio_reader_t *r = arg;
	int old;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	if (r->is_gz)
		prod_gzip(r);
	else
		prod_plain(r);
	return NULL;
}

/* ---------- consumer: line buffer ---------------------------------------- */

/*
 * Keep "FILE:LINE: message" and end the input here: the reader then acts as
 * at the end of its text, and seqio_next returns -1 with the message.  Only
 * the first error of a reader is kept.
 */
SP_PRINTF(3, 4)
static void parse_fail(seqio_reader_t *r, uint64_t line, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (r->failed)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	snprintf(r->msg, sizeof r->msg, "%s:%llu: %s", r->fn, (unsigned long long)line, buf);
	r->failed = 1;
	r->eof = 1;
	r->pos = r->end;
	r->scanned = 0;
}

/*
 * Copy up to CAP bytes of the current chunk to DST; 0 at the end of the
 * input; a producer error is reported here, after the data before it.
 */
static size_t src_read(seqio_reader_t *r, char *dst, size_t cap)
{
	seqio_chunk_t *c;
	size_t n;

	pthread_mutex_lock(&r->mu);
	while (r->count == 0 && !r->done)
		pthread_cond_wait(&r->can_get, &r->mu);
	if (r->count == 0) {
		pthread_mutex_unlock(&r->mu);
		if (r->err[0])
			parse_fail(r, r->line + 1, "%s", r->err);
		return 0;
	}
	pthread_mutex_unlock(&r->mu);
	c = &r->ch[r->head];
	n = c->len - r->cur_off;
	if (n > cap)
		n = cap;
	memcpy(dst, c->data + r->cur_off, n);
	r->cur_off += n;
	if (r->cur_off == c->len) {
		pthread_mutex_lock(&r->mu);
		r->head = (r->head + 1) % SEQIO_NCHUNK;
		r->count--;
		r->cur_off = 0;
		pthread_cond_signal(&r->can_put);
		pthread_mutex_unlock(&r->mu);
	}
	return n;
}

/*
 * Binary data check over the first SEQIO_SNIFF bytes of the text, done as
 * they arrive so that opening a slow pipe waits for one line only.
 */
static void sniff_binary(seqio_reader_t *r, const char *p, size_t n)
{
	size_t i;

	if (n > SEQIO_SNIFF - r->sniffed)
		n = SEQIO_SNIFF - r->sniffed;
	r->sniffed += n;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		if (c == '\n')
			r->sniff_line++;
		else if ((c < 32 && (c < '\t' || c > '\r')) || c == 127) {
			parse_fail(r, r->sniff_line + 1, "not FASTA or FASTQ (binary data)");
			return;
		}
	}
}

/* Move the unread text to the front and read more; sets eof at the end. */
static void fill(seqio_reader_t *r)
{
	size_t n;

	if (r->failed) {
		r->eof = 1;
		return;
	}
	if (r->pos > 0) {
		memmove(r->buf, r->buf + r->pos, r->end - r->pos);
		r->end -= r->pos;
		r->pos = 0;
	}
	if (r->end == r->cap) {
		r->cap *= 2;
		r->buf = sp_realloc(r->buf, r->cap);
	}
	n = src_read(r, r->buf + r->end, r->cap - r->end);
	if (n == 0)
		r->eof = 1;
	if (r->sniffed < SEQIO_SNIFF)
		sniff_binary(r, r->buf + r->end, n);
	if (!r->failed)
		r->end += n;
}

/* First byte of the next line, or -1 at the end of the input. */
static inline int peek(seqio_reader_t *r)
{
	while (r->pos == r->end) {
		if (r->eof)
			return -1;
		fill(r);
	}
	return (unsigned char)r->buf[r->pos];
}

/*
 * Next line without its LF (and CR), valid until the next call; NULL at the
 * end of the input.
 */
static char *next_line(seqio_reader_t *r, size_t *len)
{
	for (;;) {
		char *p = r->buf + r->pos, *nl;
		size_t avail = r->end - r->pos, l;

		nl = memchr(p + r->scanned, '\n', avail - r->scanned);
		if (nl || (r->eof && avail > 0)) {
			l = nl ? (size_t)(nl - p) : avail;
			r->pos += nl ? l + 1 : l;
			r->scanned = 0;
			r->line++;
			if (l > 0 && p[l - 1] == '\r')
				l--;
			*len = l;
			return p;
		}
		if (r->eof)
			return NULL;
		r->scanned = avail;
		fill(r);
	}
}

static int is_blank_line(const char *p, size_t l)
{
	size_t i;

	for (i = 0; i < l; i++)
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
			return 0;
	return 1;
}

/* ---------- open / close -------------------------------------------------- */

seqio_reader_t *seqio_open_fd_try(int fd, const char *display_name, const void *pre, size_t n)
{
	seqio_reader_t *r;
	size_t i;
	const char *env;

	pthread_once(&seq_once, seq_tables_init);
	r = sp_calloc(1, sizeof *r);
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->can_put, NULL);
	pthread_cond_init(&r->can_get, NULL);
	r->fn = sp_strdup(display_name);
	r->fd = fd;
	r->fastq = -1;
	r->pre = sp_malloc(n > 2 ? n : 2);
	if (n)
		memcpy(r->pre, pre, n);
	r->pre_len = n;
	while (r->pre_len < 2) {
		ssize_t k = read(fd, r->pre + r->pre_len, 2 - r->pre_len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			sp_fail("cannot read '%s': %s", display_name, strerror(errno));
			seqio_close(r);
			return NULL;
		}
		if (k == 0)
			break;
		r->pre_len += (size_t)k;
	}
	r->is_gz = r->pre_len >= 2 && r->pre[0] == 0x1f && r->pre[1] == 0x8b;
	r->chunk = SEQIO_CHUNK;
	if ((env = getenv("SEEDPIPE_SEQIO_CHUNK")) && atol(env) > 0 && atol(env) < (1L << 30))
		r->chunk = (size_t)atol(env);
	for (i = 0; i < SEQIO_NCHUNK; i++)
		r->ch[i].data = sp_malloc(r->chunk);
	r->cap = 2 * r->chunk;
	r->buf = sp_malloc(r->cap);
	if (pthread_create(&r->th, NULL, prod_main, r) != 0) {
		sp_fail("cannot start a reader thread for '%s'", display_name);
		seqio_close(r);
		return NULL;
	}
	r->th_started = 1;

	/* the first non-blank line decides (fill checks the first KiB) */
	for (;;) {
		int c = peek(r);
		char *p;
		size_t l;

		if (c == '>' || c == '@') {
			r->fastq = c == '@';
			break;
		}
		if (c < 0)
			break;
		p = next_line(r, &l);
		if (p && !is_blank_line(p, l))
			parse_fail(r, r->line, "not FASTA or FASTQ (a record must start with '>' or '@')");
	}
	if (r->failed) {
		sp_fail("%s", r->msg);
		seqio_close(r);
		return NULL;
	}
	return r;
}

seqio_reader_t *seqio_open_try(const char *path)
{
	seqio_reader_t *r;
	int fd;

	if (strcmp(path, "-") == 0)
		return seqio_open_fd_try(0, "-", NULL, 0);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		sp_fail("cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	r = seqio_open_fd_try(fd, path, NULL, 0);
	if (r)
		r->own_fd = 1;
	else
		close(fd);
	return r;
}

seqio_reader_t *seqio_open_or_die(const char *path)
{
	seqio_reader_t *r = seqio_open_try(path);

	if (!r)
		sp_or_die(-1);
	return r;
}

seqio_reader_t *seqio_open_fd_or_die(int fd, const char *display_name)
{
	seqio_reader_t *r = seqio_open_fd_try(fd, display_name, NULL, 0);

	if (!r)
		sp_or_die(-1);
	return r;
}

void seqio_close(seqio_reader_t *r)
{
	int i;

	if (!r)
		return;
	if (r->th_started) {
		pthread_mutex_lock(&r->mu);
		r->stop = 1;
		pthread_cond_broadcast(&r->can_put);
		pthread_mutex_unlock(&r->mu);
		pthread_cancel(r->th);   /* acts only inside read(2) */
		pthread_join(r->th, NULL);
	}
	if (r->z_init)   /* the producer was cancelled in read(2) */
		inflateEnd(&r->z);
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->can_put);
	pthread_cond_destroy(&r->can_get);
	if (r->own_fd)
		close(r->fd);
	for (i = 0; i < SEQIO_NCHUNK; i++)
		free(r->ch[i].data);
	free(r->raw);
	free(r->pre);
	free(r->buf);
	free(r->fn);
	free(r);
}

int seqio_is_fastq(const seqio_reader_t *r)
{
	return r->fastq;
}

uint64_t seqio_n_mapped(const seqio_reader_t *r)
{
	return r->n_mapped;
}

/* ---------- records -------------------------------------------------------- */

void seqio_rec_init(seq_rec_t *rec)
{
	memset(rec, 0, sizeof *rec);
}

void seqio_rec_free(seq_rec_t *rec)
{
	free(rec->name);
	free(rec->comment);
	free(rec->seq);
	free(rec->qual);
	seqio_rec_init(rec);
}

static inline void grow(char **p, size_t *cap, size_t need)
{
	if (need > *cap || !*p) {
		size_t c = *cap ? *cap : 64;
		while (c < need)
			c += c >> 1;
		*p = sp_realloc(*p, c);
		*cap = c;
	}
}

/* Split header text P[0..l) (after '>' or '@') into name and comment. */
static void set_header(seq_rec_t *rec, const char *p, size_t l)
{
	size_t i = 0, j;

	while (l > 0 && (p[l - 1] == ' ' || p[l - 1] == '\t'))
		l--;
	while (i < l && p[i] != ' ' && p[i] != '\t')
		i++;
	grow(&rec->name, &rec->name_cap, i + 1);
	memcpy(rec->name, p, i);
	rec->name[i] = 0;
	rec->name_len = i;
	for (j = i; j < l && (p[j] == ' ' || p[j] == '\t'); j++)
		;
	grow(&rec->comment, &rec->comment_cap, l - j + 1);
	memcpy(rec->comment, p + j, l - j);
	rec->comment[l - j] = 0;
	rec->comment_len = l - j;
}

/*
 * A NUL in a header line (past the first KiB, which the binary check
 * covers) would cut the name or comment short as a C string while its
 * length counts on: refused like the NULs elsewhere.  Returns -1 after
 * parse_fail.
 */
static int check_header(seqio_reader_t *r, const char *p, size_t l)
{
	if (memchr(p, '\0', l)) {
		parse_fail(r, r->line, "invalid character 0x00 in a header line");
		return -1;
	}
	return 0;
}

static void bad_char(seqio_reader_t *r, const seq_rec_t *rec, unsigned char c, const char *what)
{
	if (c > 32 && c < 127)
		parse_fail(r, r->line, "invalid character '%c' in the %s of '%s'", c, what, rec->name);
	else
		parse_fail(r, r->line, "invalid character 0x%02x in the %s of '%s'", c, what, rec->name);
}

/*
 * Map sequence line P[0..l) to upper-case ACGTN at OUT; returns the number
 * of bases written.  Blanks are skipped in FASTA and an error in FASTQ.
 */
static size_t map_line(seqio_reader_t *r, const seq_rec_t *rec, char *out, const char *p, size_t l)
{
	const unsigned char *s = (const unsigned char *)p;
	unsigned acc = 0;
	size_t i = 0, k;

#if SEQIO_VEC
	/* 16 bytes at a time while they are all ACGTN in either case */
	for (; i + 16 <= l; i += 16) {
		seqio_v16 u = v16_load(s + i) & (unsigned char)0xDF;
		seqio_m16 ok = (u == 'A') | (u == 'C') | (u == 'G') | (u == 'T') | (u == 'N');
		if (!m16_all(ok))
			break;
		v16_store(out + i, u);
	}
#endif
	for (k = i; k < l; k++) {
		out[k] = (char)seq_map[s[k]];
		acc |= seq_slow[s[k]];
	}
	if (!acc)
		return l;
	for (k = i; i < l; i++) {   /* s[0..i) was clean, so k == i here */
		unsigned char c = s[i], m = seq_map[c];
		if (m) {
			out[k++] = (char)m;
			if (seq_slow[c])
				r->n_mapped++;
		} else if ((c == ' ' || c == '\t') && !r->fastq) {
			continue;
		} else {
			bad_char(r, rec, c, "sequence");
			break;
		}
	}
	return k;
}

/* Copy quality line P[0..l) to OUT; nonzero if a byte is outside '!'..'~'. */
static int copy_qual(char *out, const char *p, size_t l)
{
	const unsigned char *s = (const unsigned char *)p;
	unsigned bad = 0;
	size_t i = 0;

#if SEQIO_VEC
	seqio_m16 vb = { 0 };
	for (; i + 16 <= l; i += 16) {
		seqio_v16 v = v16_load(s + i);
		vb |= (v < 33) | (v > 126);
		v16_store(out + i, v);
	}
	bad = !m16_none(vb);
#endif
	for (; i < l; i++) {
		out[i] = (char)s[i];
		bad |= (unsigned)(s[i] - 33u) > 93u;
	}
	return bad != 0;
}

static int read_fasta(seqio_reader_t *r, seq_rec_t *rec)
{
	char *p;
	size_t l;
	int c;

	while ((c = peek(r)) >= 0 && c != '>') {
		/* only reached after blank lines at the start (checked at open) */
		p = next_line(r, &l);
		if (p && !is_blank_line(p, l))
			parse_fail(r, r->line, "expected '>' at the start of a FASTA record");
	}
	if (c < 0 || !(p = next_line(r, &l)))   /* no line: an error in it */
		return 0;
	rec->line = r->line;
	if (check_header(r, p, l) < 0)
		return 0;
	set_header(rec, p + 1, l - 1);
	rec->seq_len = 0;
	rec->qual_len = 0;
	if (rec->qual) {   /* a record reused from a FASTQ reader */
		free(rec->qual);
		rec->qual = NULL;
		rec->qual_cap = 0;
	}
	grow(&rec->seq, &rec->seq_cap, 1);
	while ((c = peek(r)) >= 0 && c != '>') {
		/*
		 * One sequence line, taken in pieces as the text arrives, so that a
		 * chromosome on one line never has to fit in the line buffer.  A CR
		 * at the end of a piece waits for the next byte (CR LF is a line end).
		 */
		r->line++;
		for (;;) {
			char *nl;
			size_t avail = r->end - r->pos;
			int last;

			p = r->buf + r->pos;
			nl = memchr(p, '\n', avail);
			last = nl || r->eof;
			l = nl ? (size_t)(nl - p) : avail;
			r->pos += nl ? l + 1 : l;
			if (l > 0 && p[l - 1] == '\r') {
				l--;
				if (!last)
					r->pos--;
			}
			grow(&rec->seq, &rec->seq_cap, rec->seq_len + l + 1);
			rec->seq_len += map_line(r, rec, rec->seq + rec->seq_len, p, l);
			if (last)
				break;
			fill(r);
		}
	}
	rec->seq[rec->seq_len] = 0;
	return 1;
}

static int read_fastq(seqio_reader_t *r, seq_rec_t *rec)
{
	char *p;
	size_t l, i;

	do {
		if (!(p = next_line(r, &l)))
			return 0;
	} while (is_blank_line(p, l));
	if (p[0] != '@') {
		parse_fail(r, r->line, "expected '@' at the start of a FASTQ record");
		return 0;
	}
	rec->line = r->line;
	if (check_header(r, p, l) < 0)
		return 0;
	set_header(rec, p + 1, l - 1);

	if (!(p = next_line(r, &l))) {
		parse_fail(r, r->line + 1, "truncated FASTQ record '%s': no sequence line", rec->name);
		return 0;
	}
	grow(&rec->seq, &rec->seq_cap, l + 1);
	rec->seq_len = map_line(r, rec, rec->seq, p, l);
	rec->seq[rec->seq_len] = 0;
	if (r->failed)
		return 0;

	if (!(p = next_line(r, &l))) {
		parse_fail(r, r->line + 1, "truncated FASTQ record '%s': no '+' line", rec->name);
		return 0;
	}
	if (l == 0 || p[0] != '+') {
		parse_fail(r, r->line, "expected a '+' line after the sequence of '%s' "
		          "(multi-line FASTQ is not supported)", rec->name);
		return 0;
	}
	if (l > 1) {
		const char *h = p + 1;
		size_t hl = l - 1;
		while (hl > 0 && (h[hl - 1] == ' ' || h[hl - 1] == '\t'))
			hl--;
		size_t j = rec->name_len;
		int same = hl == j && memcmp(h, rec->name, j) == 0;
		if (!same && hl > j && memcmp(h, rec->name, j) == 0 && (h[j] == ' ' || h[j] == '\t')) {
			while (j < hl && (h[j] == ' ' || h[j] == '\t'))
				j++;
			same = hl - j == rec->comment_len && memcmp(h + j, rec->comment, hl - j) == 0;
		}
		if (!same) {
			parse_fail(r, r->line, "the '+' line does not repeat the name of '%s'", rec->name);
			return 0;
		}
	}

	p = next_line(r, &l);
	if (!p) {
		if (rec->seq_len > 0) {
			parse_fail(r, r->line + 1, "truncated FASTQ record '%s': no quality line", rec->name);
			return 0;
		}
		l = 0;
	}
	if (l != rec->seq_len) {
		parse_fail(r, r->line, "quality length %zu differs from sequence length %zu in '%s'",
		          l, rec->seq_len, rec->name);
		return 0;
	}
	grow(&rec->qual, &rec->qual_cap, l + 1);
	rec->qual[l] = 0;
	rec->qual_len = l;
	if (copy_qual(rec->qual, p, l))
		for (i = 0; i < l; i++)
			if ((unsigned char)p[i] < 33 || (unsigned char)p[i] > 126) {
				bad_char(r, rec, (unsigned char)p[i], "qualities");
				return 0;
			}
	return 1;
}

int seqio_next(seqio_reader_t *r, seq_rec_t *rec)
{
	int got = 0;

	if (r->fastq >= 0 && !r->failed)
		got = r->fastq ? read_fastq(r, rec) : read_fasta(r, rec);
	if (r->failed)
		return sp_fail("%s", r->msg);
	return got;
}

int seqio_read_or_die(seqio_reader_t *r, seq_rec_t *rec)
{
	int got = seqio_next(r, rec);

	sp_or_die(got);
	return got;
}

/* ---------- 2-bit packing --------------------------------------------------- */

void seqio_pack2(uint8_t *dst, const char *seq, size_t n)
{
	const unsigned char *s = (const unsigned char *)seq;
	size_t i, nf = n / 4;

	for (i = 0; i < nf; i++, s += 4)
		dst[i] = sp_pack4(s[0], s[1], s[2], s[3]);
	if (n & 3) {
		size_t rem = n & 3;
		dst[nf] = sp_pack4(s[0], rem > 1 ? s[1] : 'A', rem > 2 ? s[2] : 'A', 'A');
	}
}

/* unpack_tab[b]: the 4 letters packed in byte b, first base first */
#define UNP_CH(x) (char)(65 + ((x) == 1) * 2 + ((x) == 2) * 6 + ((x) == 3) * 19)
#define UNP_E(b) { UNP_CH((b) & 3), UNP_CH((b) >> 2 & 3), UNP_CH((b) >> 4 & 3), UNP_CH((b) >> 6 & 3) }
#define UNP_E4(b) UNP_E(b), UNP_E((b) + 1), UNP_E((b) + 2), UNP_E((b) + 3)
#define UNP_E16(b) UNP_E4(b), UNP_E4((b) + 4), UNP_E4((b) + 8), UNP_E4((b) + 12)
#define UNP_E64(b) UNP_E16(b), UNP_E16((b) + 16), UNP_E16((b) + 32), UNP_E16((b) + 48)
static const char unpack_tab[256][4] = { UNP_E64(0), UNP_E64(64), UNP_E64(128), UNP_E64(192) };

void seqio_unpack2(char *dst, const uint8_t *src, size_t n)
{
	size_t i, nf = n / 4;

	for (i = 0; i < nf; i++, dst += 4)
		memcpy(dst, unpack_tab[src[i]], 4);
	for (i = 0; i < (n & 3); i++)
		dst[i] = "ACGT"[src[nf] >> (2 * i) & 3];
}

void seqio_revcomp(char *dst, const char *src, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		dst[i] = (char)sp_comp_ascii((unsigned char)src[n - 1 - i]);
}

/*
 * Reverse the bytes and reverse-complement each (sp_revcomp_byte); the
 * 4*nb-n padding bases of the last source byte then lead the result and are
 * shifted out.  Works in place as well.
 */
void seqio_revcomp2(uint8_t *dst, const uint8_t *src, size_t n)
{
	size_t nb = (n + 3) / 4, j, pad = 4 * nb - n;

	if (nb == 0)
		return;
	if (dst == src) {
		for (j = 0; j < nb / 2; j++) {
			uint8_t a = dst[j], b = dst[nb - 1 - j];
			dst[j] = sp_revcomp_byte(b);
			dst[nb - 1 - j] = sp_revcomp_byte(a);
		}
		if (nb & 1)
			dst[nb / 2] = sp_revcomp_byte(dst[nb / 2]);
	} else {
		for (j = 0; j < nb; j++)
			dst[j] = sp_revcomp_byte(src[nb - 1 - j]);
	}
	if (pad) {
		unsigned sh = (unsigned)(2 * pad);
		for (j = 0; j + 1 < nb; j++)
			dst[j] = (uint8_t)(dst[j] >> sh | dst[j + 1] << (8 - sh));
		dst[nb - 1] = (uint8_t)(dst[nb - 1] >> sh);
	}
}

size_t seqio_n_runs(const char *seq, size_t n, seqio_nrun_t **runs)
{
	size_t i = 0, k = 0, m = 0;
	seqio_nrun_t *a = NULL;

	while (i < n) {
		size_t s;
#if SEQIO_VEC
		/* skip 16 ACGT at a time: most of a genome */
		while (i + 16 <= n) {
			seqio_v16 u = v16_load(seq + i) & (unsigned char)0xDF;
			if (!m16_all((u == 'A') | (u == 'C') | (u == 'G') | (u == 'T')))
				break;
			i += 16;
		}
		if (i >= n)
			break;
#endif
		if (seqio_nt4[(unsigned char)seq[i]] < 4) {
			i++;
			continue;
		}
		for (s = i; i < n && seqio_nt4[(unsigned char)seq[i]] == 4; i++)
			;
		if (k == m) {
			m = m ? 2 * m : 16;
			a = sp_realloc(a, m * sizeof *a);
		}
		a[k].start = s;
		a[k].len = i - s;
		k++;
	}
	*runs = a;
	return k;
}
