/*
 * rec.c - seedpipe record streams: provenance, the block reader and the
 * block writer (layout in rec.h and man/seedpipe-rec.5).
 *
 * The reader never seeks: it reads one block's payload together with the
 * next block's header in one read loop into the block buffer, so a block is
 * verified with one XXH3 pass and records are handed out as views into it.
 * The writer builds the block header in front of the payload in one buffer,
 * so a block leaves in one write(2).
 */
#include "rec.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "sp_csum.h"
#include "sp_le.h"
#include "util.h"


static uint64_t block_seed(uint32_t len, uint32_t nrec) { return (uint64_t)len << 32 | nrec; }

/* --- names and hints ------------------------------------------------------ */

static const char *const kind_names[] = { "any", "reads", "candidates", "hits", "keys", "pairs" };

const char *rec_kind_name(int kind)
{
	return kind >= 0 && kind <= REC_KIND_MAX ? kind_names[kind] : "unknown";
}

int rec_kind_parse(const char *name)
{
	int k;

	for (k = 1; k <= REC_KIND_MAX; k++)
		if (strcmp(name, kind_names[k]) == 0)
			return k;
	return -1;
}

const char *rec_status_name(int status)
{
	switch (status) {
	case REC_OK: return "ok";
	case REC_END: return "end of stream";
	case REC_E_TRUNCATED: return "truncated";
	case REC_E_CHECKSUM: return "checksum mismatch";
	case REC_E_NOT_STREAM: return "not a stream";
	case REC_E_KIND: return "wrong kind";
	case REC_E_VERSION: return "version too new";
	case REC_E_CORRUPT: return "corrupt";
	case REC_E_IO: return "i/o error";
	case REC_E_TTY: return "terminal";
	}
	return "unknown status";
}

/* What a user most likely left out of the pipe when WANT was expected and
 * GOT arrived.  One row per (want, got). */
static const struct { int want, got; const char *hint; } rec_kind_hints[] = {
	{ REC_KIND_CANDIDATES, REC_KIND_READS, "did you forget seedfilt?" },
	{ REC_KIND_HITS, REC_KIND_READS, "did you forget seedfilt and extend?" },
	{ REC_KIND_HITS, REC_KIND_CANDIDATES, "did you forget extend?" },
	{ REC_KIND_READS, REC_KIND_CANDIDATES, "this stream was already filtered: give it to extend" },
	{ REC_KIND_CANDIDATES, REC_KIND_HITS, "this stream was already extended" },
	{ REC_KIND_READS, REC_KIND_HITS, "this stream holds alignments, not reads" },
	{ REC_KIND_KEYS, REC_KIND_READS, "strsort sorts keys streams" },
};

const char *rec_kind_hint(int want, int got)
{
	size_t i;

	for (i = 0; i < sizeof rec_kind_hints / sizeof rec_kind_hints[0]; i++)
		if (rec_kind_hints[i].want == want && rec_kind_hints[i].got == got)
			return rec_kind_hints[i].hint;
	return NULL;
}

/* --- provenance ----------------------------------------------------------- */

void rec_prov_init(rec_prov_t *p)
{
	memset(p, 0, sizeof *p);
}

/*
 * The lookup index of a provenance list (p->idx), made by rec_prov_carry and
 * kept up to date by rec_prov_add, so that carrying N lines costs O(N) and
 * not a scan of the destination per line: open addressing over line numbers
 * (+1; 0 = empty).  A "pg" line is entered under its key and value (carried
 * pg lines are compared whole), any other line under its key alone.
 */
typedef struct {
	size_t *slot;
	size_t mask, n;           /* table size - 1, entries */
} prov_idx_t;

static int is_pg(const char *key) { return strcmp(key, REC_PROV_PG) == 0; }

static uint64_t line_hash(const char *key, const char *val)
{
	return is_pg(key) ? XXH3_64bits_withSeed(val, strlen(val), 1)
		: XXH3_64bits(key, strlen(key));
}

/* Does line J of P match KEY (and VAL for a pg line)? */
static int line_match(const rec_prov_t *p, size_t j, const char *key, const char *val)
{
	return strcmp(p->key[j], key) == 0 && (!is_pg(key) || strcmp(p->val[j], val) == 0);
}

/* Index of the line of P matching KEY (VAL for pg), or (size_t)-1. */
static size_t idx_find(const rec_prov_t *p, const char *key, const char *val)
{
	const prov_idx_t *t = p->idx;
	size_t h = (size_t)line_hash(key, val) & t->mask;

	for (; t->slot[h]; h = (h + 1) & t->mask)
		if (line_match(p, t->slot[h] - 1, key, val))
			return t->slot[h] - 1;
	return (size_t)-1;
}

static void idx_put(rec_prov_t *p, size_t j);

static void idx_grow(rec_prov_t *p, size_t want)
{
	prov_idx_t *t = p->idx;
	size_t size = 16, j;

	while (size < 2 * want)
		size *= 2;
	free(t->slot);
	t->slot = sp_calloc(size, sizeof *t->slot);
	t->mask = size - 1;
	t->n = 0;
	for (j = 0; j < p->n; j++)
		idx_put(p, j);
}

/* Enter line J (the first line of a key or pg value only). */
static void idx_put(rec_prov_t *p, size_t j)
{
	prov_idx_t *t = p->idx;
	size_t h;

	if (2 * (t->n + 1) > t->mask + 1) {
		idx_grow(p, p->n + 1);
		return;              /* the rebuild entered every line up to n */
	}
	h = (size_t)line_hash(p->key[j], p->val[j]) & t->mask;
	for (; t->slot[h]; h = (h + 1) & t->mask)
		if (line_match(p, t->slot[h] - 1, p->key[j], p->val[j]))
			return;          /* an earlier line already stands for it */
	t->slot[h] = j + 1;
	t->n++;
}

static void idx_drop(rec_prov_t *p)
{
	prov_idx_t *t = p->idx;

	if (t) {
		free(t->slot);
		free(t);
		p->idx = NULL;
	}
}

void rec_prov_free(rec_prov_t *p)
{
	size_t i;

	idx_drop(p);
	for (i = 0; i < p->n; i++) {
		free(p->key[i]);
		free(p->val[i]);
	}
	free(p->key);
	free(p->val);
	memset(p, 0, sizeof *p);
}

static int key_ok(const char *key)
{
	const char *s;

	if (!*key)
		return 0;
	for (s = key; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
				(*s >= '0' && *s <= '9') || *s == '_' || *s == '.' || *s == '-'))
			return 0;
	return 1;
}

static char *dup_value(const char *v)
{
	char *s = sp_strdup(v), *t;

	for (t = s; *t; t++)
		if (*t == '\n' || *t == '\r')
			*t = ' ';
	return s;
}

/* Append a line whose strings KEY and VAL (checked) P now owns. */
static void prov_push(rec_prov_t *p, char *key, char *val)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 8;
		p->key = sp_realloc(p->key, p->cap * sizeof *p->key);
		p->val = sp_realloc(p->val, p->cap * sizeof *p->val);
	}
	p->key[p->n] = key;
	p->val[p->n] = val;
	p->n++;
	if (p->idx)
		idx_put(p, p->n - 1);
}

void rec_prov_add(rec_prov_t *p, const char *key, const char *value)
{
	if (!key_ok(key))
		sp_die("bad provenance key '%s'", key);
	prov_push(p, sp_strdup(key), dup_value(value));
}

void rec_prov_set(rec_prov_t *p, const char *key, const char *value)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (strcmp(p->key[i], key) == 0) {
			free(p->val[i]);
			p->val[i] = dup_value(value);
			if (is_pg(key))
				idx_drop(p);   /* a pg line is indexed by its value */
			return;
		}
	rec_prov_add(p, key, value);
}

const char *rec_prov_get(const rec_prov_t *p, const char *key)
{
	size_t i = 0;

	return rec_prov_next(p, key, &i);
}

const char *rec_prov_next(const rec_prov_t *p, const char *key, size_t *i)
{
	for (; *i < p->n; (*i)++)
		if (strcmp(p->key[*i], key) == 0)
			return p->val[(*i)++];
	return NULL;
}

void rec_prov_add_pg(rec_prov_t *p, const char *tool, const char *version,
		int argc, char **argv)
{
	char *cmd = sp_join_argv(argc, argv);
	size_t n = strlen(tool) + strlen(version) + strlen(cmd) + 3;
	char *v = sp_malloc(n);

	snprintf(v, n, "%s\t%s\t%s", tool, version, cmd);
	rec_prov_add(p, REC_PROV_PG, v);
	free(v);
	free(cmd);
}

void rec_prov_carry(rec_prov_t *dst, const rec_prov_t *src)
{
	size_t i;

	if (!dst->idx) {
		dst->idx = sp_calloc(1, sizeof(prov_idx_t));
		idx_grow(dst, dst->n + src->n);
	}
	for (i = 0; i < src->n; i++)
		if (idx_find(dst, src->key[i], src->val[i]) == (size_t)-1)
			rec_prov_add(dst, src->key[i], src->val[i]);
}

char *rec_prov_text(const rec_prov_t *p, size_t *len)
{
	size_t i, n = 1, k = 0;
	char *s;

	for (i = 0; i < p->n; i++)
		n += strlen(p->key[i]) + strlen(p->val[i]) + 2;
	s = sp_malloc(n);
	for (i = 0; i < p->n; i++)
		k += (size_t)sprintf(s + k, "%s=%s\n", p->key[i], p->val[i]);
	s[k] = '\0';
	*len = k;
	return s;
}

int rec_prov_parse(rec_prov_t *p, const char *text, size_t len)
{
	const char *s = text, *end = text + len;

	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *eq;
		char *key, *val, *k;

		if (!nl)
			return -1;
		eq = memchr(s, '=', (size_t)(nl - s));
		if (!eq || memchr(s, '\0', (size_t)(nl - s)))
			return -1;
		key = sp_malloc((size_t)(eq - s) + 1);
		memcpy(key, s, (size_t)(eq - s));
		key[eq - s] = '\0';
		if (!key_ok(key)) {
			free(key);
			return -1;
		}
		val = sp_malloc((size_t)(nl - eq));
		memcpy(val, eq + 1, (size_t)(nl - eq - 1));
		val[nl - eq - 1] = '\0';
		for (k = val; (k = strchr(k, '\r')); )   /* as rec_prov_add does */
			*k = ' ';
		prov_push(p, key, val);
		s = nl + 1;
	}
	return 0;
}

/* --- reader --------------------------------------------------------------- */

struct rec_reader {
	int fd, own_fd;
	char *name;               /* as shown in messages */
	int kind, version;
	rec_prov_t prov;
	uint8_t hdr[REC_BLOCK_HDR]; /* the next block header, read ahead */
	size_t hdr_have;          /* bytes of it already read */
	uint64_t off;             /* input bytes consumed (offset of hdr[0]) */
	uint64_t nblocks, nrec, payload;        /* totals over all members */
	uint64_t m_nblocks, m_nrec, m_payload;  /* totals of this member */
	rec_block_t blk;          /* for rec_read */
	int blk_valid, done, err;
	char msg[640];
};

/*
 * Grow a pipe to hold a whole block: with the default 64 KiB a 1 MiB block
 * costs 16 wake-ups of each side.  Not a pipe, or not Linux: nothing.
 */
static void grow_pipe(int fd)
{
#ifdef F_SETPIPE_SZ
	int cur = fcntl(fd, F_GETPIPE_SZ);

	if (cur > 0 && cur < (int)REC_BLOCK_DEFAULT)
		(void)fcntl(fd, F_SETPIPE_SZ, (int)REC_BLOCK_DEFAULT);
#else
	(void)fd;
#endif
}

static char *display_name(const char *path, const char *std)
{
	char *s;

	if (strcmp(path, "-") == 0)
		return sp_strdup(std);
	s = sp_malloc(strlen(path) + 3);
	sprintf(s, "'%s'", path);
	return s;
}

rec_reader_t *rec_reader_fd(int fd, const char *name)
{
	rec_reader_t *r = sp_calloc(1, sizeof *r);

	r->fd = fd;
	r->name = display_name(name, "standard input");
	grow_pipe(fd);
	rec_prov_init(&r->prov);
	return r;
}

rec_reader_t *rec_reader_path(const char *path)
{
	rec_reader_t *r;
	int fd = strcmp(path, "-") == 0 ? 0 : open(path, O_RDONLY);

	if (fd < 0)
		return NULL;
	r = rec_reader_fd(fd, path);
	r->own_fd = fd != 0;
	return r;
}

void rec_reader_free(rec_reader_t *r)
{
	if (!r)
		return;
	if (r->own_fd)
		close(r->fd);
	rec_prov_free(&r->prov);
	rec_block_free(&r->blk);
	free(r->name);
	free(r);
}

SP_PRINTF(3, 4)
static int fail(rec_reader_t *r, int code, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(r->msg, sizeof r->msg, "%s: ", r->name);

	if (n < 0 || (size_t)n >= sizeof r->msg)
		n = 0;
	va_start(ap, fmt);
	vsnprintf(r->msg + n, sizeof r->msg - (size_t)n, fmt, ap);
	va_end(ap);
	r->err = code;
	return code;
}

const char *rec_errmsg(const rec_reader_t *r)
{
	return r->msg;
}

/* Read up to N bytes; fewer only at end of input.  -1 on a read error. */
static ssize_t readn(int fd, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = read(fd, (char *)buf + got, n - got);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

/*
 * Read up to N bytes into *BUF, which holds *CAP bytes and grows (realloc,
 * doubling from READ_STEP) only as the input delivers them: a length field
 * read from the input never makes the reader allocate more than about
 * twice what the input really holds.  Returns the bytes read, fewer than N
 * only at the end of input, or -1 on a read error.
 */
#define READ_STEP ((size_t)1 << 16)

static ssize_t read_grow(int fd, uint8_t **buf, size_t *cap, size_t n)
{
	size_t got = 0;

	for (;;) {
		size_t room = *cap < n ? *cap : n;
		ssize_t k;

		if (got == room) {
			size_t c;

			if (got == n)
				return (ssize_t)got;
			c = *cap < READ_STEP ? READ_STEP : 2 * *cap;
			if (c > n)
				c = n;
			*buf = sp_realloc(*buf, c);
			*cap = c;
			room = c;
		}
		if ((k = readn(fd, *buf + got, room - got)) < 0)
			return -1;
		got += (size_t)k;
		if (got < room)
			return (ssize_t)got;   /* end of input */
	}
}

static int io_fail(rec_reader_t *r)
{
	return fail(r, REC_E_IO, "read error: %s", strerror(errno));
}

/* Name the format of a non-stream input from its first bytes. */
static const char *sniff(const uint8_t *b, size_t n)
{
	size_t i;

	if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b)
		return "gzip-compressed data (FASTA/FASTQ .gz or BAM?)";
	if (n >= 1 && b[0] == '>')
		return "FASTA";
	if (n >= 4 && b[0] == '@' && (memcmp(b, "@HD\t", 4) == 0 ||
			memcmp(b, "@SQ\t", 4) == 0 || memcmp(b, "@PG\t", 4) == 0))
		return "SAM";
	if (n >= 1 && b[0] == '@')
		return "FASTQ";
	if (n >= 3 && b[0] == 0x89 && b[1] == 'S' && b[2] == 'P')
		return "another seedpipe file (an index?)";
	if (n >= 4 && memcmp(b, "BAM\1", 4) == 0)
		return "BAM";
	for (i = 0; i < n; i++)
		if (b[i] < 0x20 && b[i] != '\t' && b[i] != '\n' && b[i] != '\r')
			return NULL;
	return "text";
}

/* Parse a member header whose magic is already consumed (r->off counts it). */
static int read_header(rec_reader_t *r, int want, int first)
{
	uint8_t fix[REC_HDR_FIXED], sum[8];
	uint32_t plen;
	unsigned ver, kind;
	uint8_t *h = NULL;
	size_t hcap = 0;
	ssize_t k;
	XXH3_state_t *st;
	uint64_t x;

	memcpy(fix, REC_MAGIC, REC_MAGIC_LEN);
	if ((k = readn(r->fd, fix + REC_MAGIC_LEN, REC_HDR_FIXED - REC_MAGIC_LEN)) < 0)
		return io_fail(r);
	if (k < REC_HDR_FIXED - REC_MAGIC_LEN)
		return fail(r, REC_E_TRUNCATED, "input truncated in the stream header (did the upstream tool fail?)");
	ver = sp_ld16(fix + 8);
	kind = sp_ld16(fix + 10);
	plen = sp_ld32(fix + 12);
	if (ver > REC_VERSION)
		return fail(r, REC_E_VERSION, "stream format version %u is newer than this seedpipe understands (%d): upgrade seedpipe", ver, REC_VERSION);
	if (ver == 0)
		return fail(r, REC_E_CORRUPT, "corrupt stream header (format version 0)");
	if (plen > REC_MAX_PROV || sp_ld32(fix + 16) != 0)
		return fail(r, REC_E_CORRUPT, "corrupt stream header (provenance of %u bytes, reserved %u)",
				plen, sp_ld32(fix + 16));
	if ((k = read_grow(r->fd, &h, &hcap, (size_t)plen + 8)) < 0) {
		free(h);
		return io_fail(r);
	}
	if (k < (ssize_t)plen + 8) {
		free(h);
		return fail(r, REC_E_TRUNCATED, "input truncated in the stream header (did the upstream tool fail?)");
	}
	memcpy(sum, h + plen, 8);
	st = XXH3_createState();
	XXH3_64bits_reset(st);
	XXH3_64bits_update(st, fix, sizeof fix);
	XXH3_64bits_update(st, h, plen);
	x = XXH3_64bits_digest(st);
	XXH3_freeState(st);
	if (SP_SUM_BAD(x, sp_ld64(sum))) {
		free(h);
		return fail(r, REC_E_CHECKSUM, "stream header checksum mismatch at byte %llu",
				(unsigned long long)(r->off - REC_MAGIC_LEN));
	}
	r->off += REC_HDR_FIXED - REC_MAGIC_LEN + (uint64_t)plen + 8;
	if (kind == 0 || kind > REC_KIND_MAX) {
		free(h);
		return fail(r, REC_E_VERSION, "unknown stream kind %u (made by a newer seedpipe?)", kind);
	}
	if (kind == REC_KIND_CANDIDATES && ver < 2) {
		free(h);
		return fail(r, REC_E_VERSION, "candidates stream in format version %u, which this seedpipe no longer reads (it writes %d): run seedfilt again", ver, REC_VERSION);
	}
	if (first) {
		if (rec_prov_parse(&r->prov, (char *)h, plen) < 0) {
			free(h);
			return fail(r, REC_E_CORRUPT, "corrupt provenance block in the stream header");
		}
		r->kind = (int)kind;
		r->version = (int)ver;
	} else {
		rec_prov_t p;

		rec_prov_init(&p);
		if (rec_prov_parse(&p, (char *)h, plen) < 0) {
			free(h);
			rec_prov_free(&p);
			return fail(r, REC_E_CORRUPT, "corrupt provenance block in a concatenated stream header");
		}
		rec_prov_carry(&r->prov, &p);
		rec_prov_free(&p);
		if ((int)kind != r->kind) {
			free(h);
			return fail(r, REC_E_KIND, "a %s stream is concatenated to a %s stream at byte %llu",
					rec_kind_name((int)kind), rec_kind_name(r->kind),
					(unsigned long long)(r->off - REC_HDR_FIXED - plen - 8));
		}
	}
	free(h);
	if (want != REC_KIND_ANY && (int)kind != want) {
		const char *hint = rec_kind_hint(want, (int)kind);

		return fail(r, REC_E_KIND, "expected %s, got %s%s%s", rec_kind_name(want),
				rec_kind_name((int)kind), hint ? ": " : "", hint ? hint : "");
	}
	r->m_nblocks = r->m_nrec = r->m_payload = 0;
	return REC_OK;
}

int rec_reader_start(rec_reader_t *r, int want)
{
	uint8_t m[REC_MAGIC_LEN];
	ssize_t k = readn(r->fd, m, REC_MAGIC_LEN);
	const char *what;

	if (k < 0)
		return io_fail(r);
	if (k == 0)
		return fail(r, REC_E_TRUNCATED, "empty input, not a seedpipe stream (did the upstream tool fail?)");
	if (k == REC_MAGIC_LEN && memcmp(m, REC_MAGIC, REC_MAGIC_LEN) == 0) {
		r->off = REC_MAGIC_LEN;
		return read_header(r, want, 1);
	}
	if (memcmp(m, REC_MAGIC, (size_t)k) == 0)
		return fail(r, REC_E_TRUNCATED, "input truncated in the stream header (did the upstream tool fail?)");
	what = sniff(m, (size_t)k);
	if (what)
		return fail(r, REC_E_NOT_STREAM, "looks like %s, not a seedpipe stream", what);
	return fail(r, REC_E_NOT_STREAM, "not a seedpipe stream (bad magic number)");
}

int rec_reader_start_past_magic(rec_reader_t *r, int want)
{
	r->off = REC_MAGIC_LEN;
	return read_header(r, want, 1);
}

int rec_reader_kind(const rec_reader_t *r) { return r->kind; }
int rec_reader_version(const rec_reader_t *r) { return r->version; }
const rec_prov_t *rec_reader_prov(const rec_reader_t *r) { return &r->prov; }

void rec_reader_totals(const rec_reader_t *r, uint64_t *nblocks,
		uint64_t *nrec, uint64_t *payload, uint64_t *bytes)
{
	if (nblocks) *nblocks = r->nblocks;
	if (nrec) *nrec = r->nrec;
	if (payload) *payload = r->payload;
	if (bytes) *bytes = r->off;
}

void rec_block_free(rec_block_t *b)
{
	free(b->buf);
	memset(b, 0, sizeof *b);
}

static int truncated_between(rec_reader_t *r)
{
	if (r->m_nblocks == 0 && r->hdr_have == 0)
		return fail(r, REC_E_TRUNCATED, "input truncated after the stream header at byte %llu: no end block (did the upstream tool fail?)",
				(unsigned long long)r->off);
	return fail(r, REC_E_TRUNCATED, "input truncated after block %llu at byte %llu: no end block (did the upstream tool fail?)",
			(unsigned long long)r->nblocks, (unsigned long long)(r->off + r->hdr_have));
}

/* The end block: its first 24 bytes are in r->hdr. */
static int read_end(rec_reader_t *r)
{
	uint8_t e[REC_END_LEN], m[REC_MAGIC_LEN];
	ssize_t k;
	uint64_t nb, nr, np;

	memcpy(e, r->hdr, REC_BLOCK_HDR);
	if ((k = readn(r->fd, e + REC_BLOCK_HDR, REC_END_LEN - REC_BLOCK_HDR)) < 0)
		return io_fail(r);
	if (k < REC_END_LEN - REC_BLOCK_HDR)
		return fail(r, REC_E_TRUNCATED, "input truncated in the end block at byte %llu (did the upstream tool fail?)",
				(unsigned long long)r->off);
	if (SP_SUM_BAD(XXH3_64bits(e, 32), sp_ld64(e + 32)))
		return fail(r, REC_E_CHECKSUM, "end block checksum mismatch at byte %llu",
				(unsigned long long)r->off);
	nb = sp_ld64(e + 8);
	nr = sp_ld64(e + 16);
	np = sp_ld64(e + 24);
	if (sp_ld32(e + 4) != 0)
		return fail(r, REC_E_CORRUPT, "corrupt end block at byte %llu", (unsigned long long)r->off);
	if (nb != r->m_nblocks || nr != r->m_nrec || np != r->m_payload)
		return fail(r, REC_E_CORRUPT, "end block at byte %llu counts %llu blocks, %llu records, %llu bytes but the stream held %llu, %llu, %llu (blocks lost?)",
				(unsigned long long)r->off, (unsigned long long)nb,
				(unsigned long long)nr, (unsigned long long)np,
				(unsigned long long)r->m_nblocks, (unsigned long long)r->m_nrec,
				(unsigned long long)r->m_payload);
	r->off += REC_END_LEN;
	r->hdr_have = 0;
	/* the end of input, or another whole stream (cat a.sp b.sp) */
	if ((k = readn(r->fd, m, REC_MAGIC_LEN)) < 0)
		return io_fail(r);
	if (k == 0) {
		r->done = 1;
		return REC_END;
	}
	if (k == REC_MAGIC_LEN && memcmp(m, REC_MAGIC, REC_MAGIC_LEN) == 0) {
		int rc;

		r->off += REC_MAGIC_LEN;
		rc = read_header(r, REC_KIND_ANY, 0);
		return rc == REC_OK ? 2 : rc; /* 2: go on reading blocks */
	}
	return fail(r, REC_E_CORRUPT, "unexpected data after the end block at byte %llu", (unsigned long long)r->off);
}

int rec_read_block(rec_reader_t *r, rec_block_t *b)
{
	uint32_t len, nrec;
	size_t need;
	ssize_t k;

	if (r->err)
		return r->err;
	if (r->done)
		return REC_END;
	for (;;) {
		if (r->hdr_have < REC_BLOCK_HDR) {
			if ((k = readn(r->fd, r->hdr + r->hdr_have, REC_BLOCK_HDR - r->hdr_have)) < 0)
				return io_fail(r);
			if (r->hdr_have + (size_t)k < REC_BLOCK_HDR) {
				if (r->hdr_have + (size_t)k >= 4 && memcmp(r->hdr, REC_END_TAG, 4) == 0)
					return fail(r, REC_E_TRUNCATED, "input truncated in the end block at byte %llu (did the upstream tool fail?)",
							(unsigned long long)r->off);
				r->hdr_have += (size_t)k;
				return truncated_between(r);
			}
			r->hdr_have = REC_BLOCK_HDR;
		}
		if (memcmp(r->hdr, REC_END_TAG, 4) == 0) {
			int rc = read_end(r);

			if (rc == 2)
				continue;
			return rc;
		}
		break;
	}
	if (memcmp(r->hdr, REC_BLOCK_TAG, 4) != 0)
		return fail(r, REC_E_CORRUPT, "corrupt stream: no block tag at byte %llu (block %llu)",
				(unsigned long long)r->off, (unsigned long long)r->nblocks);
	len = sp_ld32(r->hdr + 4);
	nrec = sp_ld32(r->hdr + 8);
	if (len == 0 || len > REC_MAX_PAYLOAD || nrec == 0 || nrec > len / 4 || sp_ld32(r->hdr + 12) != 0)
		return fail(r, REC_E_CORRUPT, "corrupt header of block %llu at byte %llu",
				(unsigned long long)r->nblocks, (unsigned long long)r->off);
	/* the payload and the next block's header; the buffer grows as they
	 * arrive, so a damaged length costs no more memory than the input */
	need = (size_t)len + REC_BLOCK_HDR;
	if ((k = read_grow(r->fd, &b->buf, &b->cap, need)) < 0)
		return io_fail(r);
	if ((size_t)k < len)
		return fail(r, REC_E_TRUNCATED, "input truncated in block %llu at byte %llu (did the upstream tool fail?)",
				(unsigned long long)r->nblocks, (unsigned long long)(r->off + REC_BLOCK_HDR + (uint64_t)k));
	if (SP_SUM_BAD(XXH3_64bits_withSeed(b->buf, len, block_seed(len, nrec)), sp_ld64(r->hdr + 16)))
		return fail(r, REC_E_CHECKSUM, "checksum mismatch in block %llu (payload at bytes %llu..%llu)",
				(unsigned long long)r->nblocks,
				(unsigned long long)(r->off + REC_BLOCK_HDR),
				(unsigned long long)(r->off + REC_BLOCK_HDR + len - 1));
	b->payload = b->buf;
	b->len = len;
	b->nrec = nrec;
	b->index = r->nblocks;
	b->offset = r->off;
	b->pos = b->irec = 0;
	r->off += need;
	r->nblocks++;
	r->m_nblocks++;
	r->nrec += nrec;
	r->m_nrec += nrec;
	r->payload += len;
	r->m_payload += len;
	/* the bytes read past the payload are the next block's header */
	r->hdr_have = (size_t)k - len;
	memcpy(r->hdr, b->buf + len, r->hdr_have);
	r->off -= REC_BLOCK_HDR - r->hdr_have;
	return REC_OK;
}

int rec_block_next(rec_block_t *b, const uint8_t **body, uint32_t *len)
{
	uint32_t n;

	if (b->pos == b->len)
		return b->irec == b->nrec ? 0 : REC_E_CORRUPT;
	if (b->len - b->pos < 4 || b->irec == b->nrec)
		return REC_E_CORRUPT;
	n = sp_ld32(b->payload + b->pos);
	if (n > b->len - b->pos - 4)
		return REC_E_CORRUPT;
	*body = b->payload + b->pos + 4;
	*len = n;
	b->last = b->pos;
	b->pos += 4 + n;
	b->irec++;
	return 1;
}

int rec_reader_bad_record(rec_reader_t *r, const rec_block_t *b, const char *what)
{
	if (!b)
		b = &r->blk;
	return fail(r, REC_E_CORRUPT, "%s in block %llu (record %u, byte %llu)", what,
			(unsigned long long)b->index, b->irec ? b->irec - 1 : 0,
			(unsigned long long)(b->offset + REC_BLOCK_HDR + b->last));
}

int rec_read(rec_reader_t *r, const uint8_t **body, uint32_t *len)
{
	int rc;

	for (;;) {
		if (r->blk_valid) {
			rc = rec_block_next(&r->blk, body, len);
			if (rc == 1)
				return 1;
			if (rc < 0) {
				r->blk.last = r->blk.pos;
				r->blk.irec++;
				return rec_reader_bad_record(r, &r->blk, "corrupt record framing");
			}
			r->blk_valid = 0;
		}
		rc = rec_read_block(r, &r->blk);
		if (rc == REC_END)
			return 0;
		if (rc < 0)
			return rc;
		r->blk_valid = 1;
	}
}

void rec_die(const rec_reader_t *r)
{
	sp_die("%s", r->msg);
}

rec_reader_t *rec_open_or_die(const char *path, int want)
{
	rec_reader_t *r = rec_reader_path(path);

	if (!r)
		sp_die("cannot open '%s': %s", path, strerror(errno));
	if (rec_reader_start(r, want) != REC_OK)
		rec_die(r);
	return r;
}

int rec_next_or_die(rec_reader_t *r, const uint8_t **body, uint32_t *len)
{
	int rc = rec_read(r, body, len);

	if (rc < 0)
		rec_die(r);
	return rc;
}

int rec_next_block_or_die(rec_reader_t *r, rec_block_t *b)
{
	int rc = rec_read_block(r, b);

	if (rc < 0)
		rec_die(r);
	return rc == REC_OK;
}

/* --- writer --------------------------------------------------------------- */

struct rec_writer {
	int fd, own_fd, die, err;  /* err: errno of the first write error */
	char emsg[160];            /* the first error that is no errno's, if any */
	char *name;
	int kind;
	rec_prov_t prov;
	int hdr_done;
	uint8_t *buf;              /* [block header][payload] */
	size_t cap, len, block_size, max;
	uint32_t nrec;
	uint64_t nblocks, tot_nrec, tot_payload;
};

rec_writer_t *rec_writer_fd(int fd, const char *name, int kind,
		const rec_prov_t *prov, size_t block_size, int force, int *status)
{
	rec_writer_t *w;

	if (!force && isatty(fd)) {
		if (status)
			*status = REC_E_TTY;
		return NULL;
	}
	w = sp_calloc(1, sizeof *w);
	w->fd = fd;
	w->name = display_name(name, "standard output");
	grow_pipe(fd);
	w->kind = kind;
	rec_prov_init(&w->prov);
	if (prov)
		rec_prov_carry(&w->prov, prov);
	if (block_size == 0)
		block_size = REC_BLOCK_DEFAULT;
	if (block_size < REC_BLOCK_MIN)
		block_size = REC_BLOCK_MIN;
	if (block_size > REC_MAX_PAYLOAD)
		block_size = REC_MAX_PAYLOAD;
	w->block_size = block_size;
	w->cap = REC_BLOCK_HDR + block_size + 64;
	w->buf = sp_malloc(w->cap);
	if (status)
		*status = REC_OK;
	return w;
}

void rec_writer_set_die(rec_writer_t *w, int die)
{
	w->die = die;
}

/* The message of error E of W. */
static void write_errmsg(const rec_writer_t *w, int e, char *msg, size_t msg_size)
{
	if (w->emsg[0])
		snprintf(msg, msg_size, "%s", w->emsg);
	else if (strcmp(w->name, "standard output") == 0)
		snprintf(msg, msg_size, "cannot write to standard output: %s", strerror(e));
	else
		snprintf(msg, msg_size, "cannot write %s: %s", w->name, strerror(e));
}

static void write_error(rec_writer_t *w, int e)
{
	if (!w->err)
		w->err = e;
	if (!w->die)
		return;
	if (e == EPIPE)
		exit(SP_EXIT_OK);
	{
		char msg[512];

		write_errmsg(w, e, msg, sizeof msg);
		sp_die("%s", msg);
	}
}

/*
 * An error that is no write's (a record too large, a call out of order):
 * dies in die mode (the main thread), else is kept as the first error (a
 * writer on a pipeline thread must not exit), and every later write does
 * nothing.
 */
static void SP_PRINTF(2, 3) writer_fail(rec_writer_t *w, const char *fmt, ...)
{
	va_list ap;

	if (!w->err) {
		va_start(ap, fmt);
		vsnprintf(w->emsg, sizeof w->emsg, fmt, ap);
		va_end(ap);
		w->err = EINVAL;
	}
	if (w->die) {
		char msg[512];

		write_errmsg(w, w->err, msg, sizeof msg);
		sp_die("%s", msg);
	}
}

static void write_all(rec_writer_t *w, const void *buf, size_t n)
{
	if (!w->err && sp_write_all(w->fd, buf, n) != 0)
		write_error(w, errno);
}

static void write_header(rec_writer_t *w)
{
	size_t plen, n;
	char *text = rec_prov_text(&w->prov, &plen);
	uint8_t *h;

	w->hdr_done = 1;
	if (plen > REC_MAX_PROV) {
		free(text);
		writer_fail(w, "provenance too large (%zu bytes)", plen);
		return;
	}
	n = REC_HDR_FIXED + plen + 8;
	h = sp_malloc(n);
	memcpy(h, REC_MAGIC, REC_MAGIC_LEN);
	sp_st16(h + 8, REC_VERSION);
	sp_st16(h + 10, (uint16_t)w->kind);
	sp_st32(h + 12, (uint32_t)plen);
	sp_st32(h + 16, 0);
	memcpy(h + REC_HDR_FIXED, text, plen);
	sp_st64(h + REC_HDR_FIXED + plen, XXH3_64bits(h, REC_HDR_FIXED + plen));
	write_all(w, h, n);
	free(h);
	free(text);
}

static void block_header(uint8_t *h, const uint8_t *payload, uint32_t len, uint32_t nrec)
{
	memcpy(h, REC_BLOCK_TAG, 4);
	sp_st32(h + 4, len);
	sp_st32(h + 8, nrec);
	sp_st32(h + 12, 0);
	sp_st64(h + 16, XXH3_64bits_withSeed(payload, len, block_seed(len, nrec)));
}

void rec_flush_block(rec_writer_t *w)
{
	if (!w->hdr_done)
		write_header(w);
	if (w->nrec == 0)
		return;
	block_header(w->buf, w->buf + REC_BLOCK_HDR, (uint32_t)w->len, w->nrec);
	write_all(w, w->buf, REC_BLOCK_HDR + w->len);
	w->nblocks++;
	w->tot_nrec += w->nrec;
	w->tot_payload += w->len;
	w->len = 0;
	w->nrec = 0;
}

uint8_t *rec_begin(rec_writer_t *w, size_t max)
{
	size_t need;

	if (max > REC_MAX_PAYLOAD - 4)   /* kept: the room below is scratch */
		writer_fail(w, "record of %zu bytes is too large for a stream block", max);
	need = 4 + max;
	if (w->len > 0 && (w->len + need > w->block_size || w->nrec == UINT32_MAX))
		rec_flush_block(w);
	if (w->err) { /* non-die mode after an error: keep memory bounded */
		w->len = 0;
		w->nrec = 0;
	}
	if (REC_BLOCK_HDR + w->len + need > w->cap) {
		w->cap = REC_BLOCK_HDR + w->len + need + (need >> 2);
		w->buf = sp_realloc(w->buf, w->cap);
	}
	w->max = max;
	return w->buf + REC_BLOCK_HDR + w->len + 4;
}

void rec_commit(rec_writer_t *w, size_t len)
{
	if (len > w->max) {
		writer_fail(w, "rec_commit: record of %zu bytes exceeds the %zu reserved", len,
				w->max);
		return;
	}
	if (w->err) {   /* after an error: rec_begin's room is scratch */
		w->max = 0;
		return;
	}
	sp_st32(w->buf + REC_BLOCK_HDR + w->len, (uint32_t)len);
	w->len += 4 + len;
	w->nrec++;
	w->max = 0;
}

void rec_put(rec_writer_t *w, const void *body, size_t len)
{
	memcpy(rec_begin(w, len), body, len);
	rec_commit(w, len);
}

void rec_write_block(rec_writer_t *w, const void *payload, size_t len, uint32_t nrec)
{
	uint8_t h[REC_BLOCK_HDR];

	rec_flush_block(w);
	if (nrec == 0)
		return;
	if (len == 0 || len > REC_MAX_PAYLOAD) {
		writer_fail(w, "rec_write_block: bad payload length %zu", len);
		return;
	}
	block_header(h, payload, (uint32_t)len, nrec);
	write_all(w, h, sizeof h);
	write_all(w, payload, len);
	w->nblocks++;
	w->tot_nrec += nrec;
	w->tot_payload += len;
}

void rec_writer_totals(const rec_writer_t *w, uint64_t *nblocks, uint64_t *nrec)
{
	if (nblocks) *nblocks = w->nblocks + (w->nrec > 0);
	if (nrec) *nrec = w->tot_nrec + w->nrec;
}

int rec_writer_close(rec_writer_t *w, char *msg, size_t msg_size)
{
	uint8_t e[REC_END_LEN];
	int rc;

	rec_flush_block(w);
	memcpy(e, REC_END_TAG, 4);
	sp_st32(e + 4, 0);
	sp_st64(e + 8, w->nblocks);
	sp_st64(e + 16, w->tot_nrec);
	sp_st64(e + 24, w->tot_payload);
	sp_st64(e + 32, XXH3_64bits(e, 32));
	write_all(w, e, sizeof e);
	if (w->own_fd && close(w->fd) < 0)
		write_error(w, errno);
	rc = w->err ? -w->err : 0;
	if (rc && msg && msg_size)
		write_errmsg(w, w->err, msg, msg_size);
	rec_prov_free(&w->prov);
	free(w->buf);
	free(w->name);
	free(w);
	return rc;
}

rec_writer_t *rec_create_or_die(const char *path, int kind, const rec_prov_t *prov,
		size_t block_size, int force)
{
	int fd, st;
	rec_writer_t *w;

	if (strcmp(path, "-") == 0) {
		fd = 1;
	} else {
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
		if (fd < 0)
			sp_die("cannot create '%s': %s", path, strerror(errno));
	}
	w = rec_writer_fd(fd, path, kind, prov, block_size, force, &st);
	if (!w)
		sp_die("refusing to write a binary stream to a terminal (use -f to force, or redirect the output)");
	w->own_fd = fd != 1;
	w->die = 1;
	return w;
}

int rec_writer_error(const rec_writer_t *w, char *msg, size_t msg_size)
{
	if (w->err && msg && msg_size)
		write_errmsg(w, w->err, msg, msg_size);
	return w->err ? -w->err : 0;
}

void rec_finish_or_die(rec_writer_t *w)
{
	char msg[512];
	int rc;

	w->die = 1;
	rc = rec_writer_close(w, msg, sizeof msg);   /* an error kept before */
	if (rc == -EPIPE)
		exit(SP_EXIT_OK);
	if (rc < 0)
		sp_die("%s", msg);
}
