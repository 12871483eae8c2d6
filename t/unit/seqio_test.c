/*
 * seqio_test.c - TAP unit test of common/seqio.c and kernels/inc_pack.h
 * against brute-force oracles on random inputs.
 *
 * Reader: random records (names, blank-separated comments with spaces and
 * tabs, random case, IUPAC and gap letters, empty records, random FASTA line
 * widths, LF or CRLF, blank lines, a missing final LF) are written as FASTA
 * and as FASTQ, plain, gzip (zlib gzopen, sometimes several members) and
 * BGZF (htslib), read back through a path and through a pipe with random
 * buffer sizes (SEEDPIPE_SEQIO_CHUNK) and compared with the records expected
 * from the rules in seqio.h, computed here independently; also through
 * seqio_open_fd_try after the test has read the first bytes itself.
 *
 * Packing: seqio_pack2/unpack2/revcomp/revcomp2/n_runs and the inc_pack.h
 * primitives against naive per-base code for random lengths 0..300.
 */
#define _POSIX_C_SOURCE 200809L
#include "seqio.h"
#include "util.h"
#include "inc_pack.h"
#include "tap.h"
#include "testutil.h"

#include <htslib/bgzf.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static uint64_t rng_s = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	return tu_xorshift64(&rng_s);
}

static size_t rndn(size_t n)
{
	return n ? (size_t)(rnd() % n) : 0;
}

/* growable string */
typedef struct { char *s; size_t l, m; } str_t;

static void sput(str_t *a, const char *p, size_t n)
{
	if (a->l + n + 1 > a->m) {
		a->m = (a->l + n + 1) * 2;
		a->s = sp_realloc(a->s, a->m);
	}
	memcpy(a->s + a->l, p, n);
	a->l += n;
	a->s[a->l] = 0;
}

static void sputc(str_t *a, char c)
{
	sput(a, &c, 1);
}

static void sputs(str_t *a, const char *p)
{
	sput(a, p, strlen(p));
}

typedef struct {
	char *name, *comment, *seq, *qual;  /* expected values */
	char *raw_header, *raw_seq;         /* what goes into the file */
	uint64_t n_mapped;
	uint64_t line;                      /* line of the header, set by format_recs */
} exp_rec_t;

static const char name_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_:|.-/#=";
static const char seq_chars[] = "ACGTacgtNnACGTacgtRYKMSWBDHVrykmswbdhvUuXx-.";

static char *rnd_word(size_t maxlen, size_t minlen)
{
	size_t n = minlen + rndn(maxlen - minlen + 1), i;
	char *w = sp_malloc(n + 1);

	for (i = 0; i < n; i++)
		w[i] = name_chars[rndn(sizeof name_chars - 1)];
	w[n] = 0;
	return w;
}

static void rnd_blanks(str_t *a)
{
	size_t n = 1 + rndn(3), i;

	for (i = 0; i < n; i++)
		sputc(a, rndn(2) ? ' ' : '\t');
}

/* Expected mapping of one sequence letter, by the rules of seqio.h. */
static char oracle_base(char c, uint64_t *mapped)
{
	switch (c) {
	case 'A': case 'a': return 'A';
	case 'C': case 'c': return 'C';
	case 'G': case 'g': return 'G';
	case 'T': case 't': return 'T';
	case 'N': case 'n': return 'N';
	}
	++*mapped;
	return 'N';
}

static exp_rec_t rnd_rec(int iupac)
{
	exp_rec_t e;
	str_t h = {0}, c = {0}, s = {0};
	size_t n, i, nw;
	int long_seq = rndn(50) == 0;

	memset(&e, 0, sizeof e);
	e.name = rnd_word(12, rndn(20) ? 1 : 0);
	sputs(&h, e.name);
	nw = rndn(3) ? rndn(4) : 0;
	for (i = 0; i < nw; i++) {
		char *w = rnd_word(8, 1);
		if (i == 0)
			rnd_blanks(&h);
		else {
			size_t k = c.l;
			rnd_blanks(&c);
			sput(&h, c.s + k, c.l - k);
		}
		sputs(&c, w);
		sputs(&h, w);
		free(w);
	}
	if (rndn(5) == 0)
		rnd_blanks(&h);   /* trailing blanks are dropped */
	e.raw_header = h.s ? h.s : sp_strdup("");
	e.comment = c.s ? c.s : sp_strdup("");

	n = rndn(8) == 0 ? 0 : long_seq ? rndn(5000) : rndn(300);
	e.raw_seq = sp_malloc(n + 1);
	for (i = 0; i < n; i++) {
		char ch = iupac ? seq_chars[rndn(sizeof seq_chars - 1)] : "ACGTacgt"[rndn(8)];
		e.raw_seq[i] = ch;
		sputc(&s, oracle_base(ch, &e.n_mapped));
	}
	e.raw_seq[n] = 0;
	e.seq = s.s ? s.s : sp_strdup("");
	e.qual = sp_malloc(n + 1);
	for (i = 0; i < n; i++)
		e.qual[i] = (char)(33 + rndn(94));
	e.qual[n] = 0;
	return e;
}

static void free_recs(exp_rec_t *e, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(e[i].name);
		free(e[i].comment);
		free(e[i].seq);
		free(e[i].qual);
		free(e[i].raw_header);
		free(e[i].raw_seq);
	}
	free(e);
}

static void eol(str_t *a, int crlf)
{
	if (crlf == 2 ? (int)rndn(2) : crlf)
		sputc(a, '\r');
	sputc(a, '\n');
}

/* Write the records as text; crlf: 0 LF, 1 CRLF, 2 mixed. */
static str_t format_recs(exp_rec_t *e, size_t n, int fastq, int crlf)
{
	str_t a = {0};
	size_t i, j, k, counted = 0;
	uint64_t lines = 1;

	sput(&a, "", 0);
	if (rndn(4) == 0)
		for (k = rndn(3) + 1; k > 0; k--) {
			if (rndn(2))
				sputs(&a, " \t");
			eol(&a, crlf);
		}
	for (i = 0; i < n; i++) {
		exp_rec_t *r = &e[i];
		size_t len = strlen(r->raw_seq);
		for (; counted < a.l; counted++)
			lines += a.s[counted] == '\n';
		r->line = lines;
		sputc(&a, fastq ? '@' : '>');
		sputs(&a, r->raw_header);
		eol(&a, crlf);
		if (fastq) {
			sputs(&a, r->raw_seq);
			eol(&a, crlf);
			sputc(&a, '+');
			switch (rndn(3)) {
			case 1: sputs(&a, r->name); break;
			case 2: sputs(&a, r->raw_header); break;
			}
			eol(&a, crlf);
			sputs(&a, r->qual);
			if (i + 1 < n || rndn(2))
				eol(&a, crlf);
			if (i + 1 < n && rndn(10) == 0)
				eol(&a, crlf);   /* a blank line between records */
		} else {
			size_t w = rndn(3) == 0 ? len + 1 : 1 + rndn(80);
			for (j = 0; j < len; j += w) {
				size_t m = len - j < w ? len - j : w;
				if (rndn(30) == 0)
					sputc(&a, ' ');   /* blanks in FASTA sequence are ignored */
				sput(&a, r->raw_seq + j, m);
				if (rndn(30) == 0)
					sputc(&a, '\t');
				if (j + m < len || i + 1 < n || rndn(2))
					eol(&a, crlf);
				if (rndn(40) == 0)
					eol(&a, crlf);   /* blank lines are ignored */
			}
		}
	}
	return a;
}

/* Write TEXT to PATH as: 0 plain, 1 gzip, 2 gzip in several members, 3 BGZF. */
static void write_file(const char *path, const str_t *t, int how)
{
	if (how == 0) {
		FILE *fp = fopen(path, "wb");
		if (!fp || fwrite(t->s, 1, t->l, fp) != t->l || fclose(fp) != 0)
			sp_die("cannot write '%s'", path);
	} else if (how == 1 || how == 2) {
		size_t off = 0;
		int parts = how == 1 ? 1 : 2 + (int)rndn(3), p;
		for (p = 0; p < parts; p++) {
			size_t end = p + 1 == parts ? t->l : off + rndn(t->l - off + 1);
			char mode[4] = { p == 0 ? 'w' : 'a', 'b', (char)('1' + rndn(9)), 0 };
			gzFile gz = gzopen(path, mode);
			if (!gz)
				sp_die("cannot write '%s'", path);
			if (end > off && gzwrite(gz, t->s + off, (unsigned)(end - off)) != (int)(end - off))
				sp_die("gzwrite failed");
			if (gzclose(gz) != Z_OK)
				sp_die("gzclose failed");
			off = end;
		}
	} else {
		BGZF *fp = bgzf_open(path, "w");
		if (!fp || bgzf_write(fp, t->s, t->l) != (ssize_t)t->l || bgzf_close(fp) != 0)
			sp_die("cannot write '%s' (bgzf)", path);
	}
}

typedef struct {
	int fd;
	const char *data;
	size_t len;
} feeder_t;

/* Write a file's bytes into a pipe in random small pieces. */
static void *feeder(void *arg)
{
	feeder_t *f = arg;
	size_t off = 0;
	uint64_t x = f->len | 1;   /* own generator: rnd() belongs to the main thread */

	while (off < f->len) {
		size_t n;
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		n = 1 + (size_t)(x % 4096);
		ssize_t k;
		if (n > f->len - off)
			n = f->len - off;
		k = write(f->fd, f->data + off, n);
		if (k <= 0)
			break;
		off += (size_t)k;
	}
	close(f->fd);
	return NULL;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	str_t a = {0};
	char buf[65536];
	size_t k;

	if (!fp)
		sp_die("cannot read '%s'", path);
	sput(&a, "", 0);
	while ((k = fread(buf, 1, sizeof buf, fp)) > 0)
		sput(&a, buf, k);
	fclose(fp);
	*len = a.l;
	return a.s;
}

/* Read with seqio (from the path, or through a pipe) and compare. */
static int check_read(const char *path, int via_pipe, const exp_rec_t *e, size_t n, int fastq,
                      char *why, size_t why_len)
{
	seqio_reader_t *r;
	seq_rec_t rec;
	size_t i;
	uint64_t mapped = 0;
	int ok = 1;
	pthread_t th;
	feeder_t f;
	char *data = NULL;
	int pre_fd = -1;

	if (via_pipe == 2) {
		/* the caller read a few bytes first: seqio_open_fd_try with them */
		unsigned char pre[64];
		size_t k = rndn(sizeof pre + 1);
		ssize_t got;
		pre_fd = open(path, O_RDONLY);
		if (pre_fd < 0 || (got = read(pre_fd, pre, k)) < 0)
			sp_die("cannot read '%s'", path);
		if (!(r = seqio_open_fd_try(pre_fd, path, pre, (size_t)got)))
			sp_or_die(-1);
	} else if (via_pipe) {
		int pfd[2];
		if (pipe(pfd) != 0)
			sp_die("pipe failed");
		data = slurp(path, &f.len);
		f.data = data;
		f.fd = pfd[1];
		pthread_create(&th, NULL, feeder, &f);
		r = seqio_open_fd_or_die(pfd[0], "pipe");
	} else {
		r = seqio_open_or_die(path);
	}
	seqio_rec_init(&rec);
	snprintf(why, why_len, "ok");
	for (i = 0; i < n && ok; i++) {
		mapped += e[i].n_mapped;
		if (!seqio_read_or_die(r, &rec)) {
			snprintf(why, why_len, "record %zu missing", i);
			ok = 0;
		} else if (strcmp(rec.name, e[i].name) || rec.name_len != strlen(e[i].name)) {
			snprintf(why, why_len, "record %zu name '%s' != '%s'", i, rec.name, e[i].name);
			ok = 0;
		} else if (strcmp(rec.comment, e[i].comment) || rec.comment_len != strlen(e[i].comment)) {
			snprintf(why, why_len, "record %zu comment '%s' != '%s'", i, rec.comment, e[i].comment);
			ok = 0;
		} else if (strcmp(rec.seq, e[i].seq) || rec.seq_len != strlen(e[i].seq)) {
			snprintf(why, why_len, "record %zu (%s) seq differs", i, e[i].name);
			ok = 0;
		} else if (fastq && (!rec.qual || strcmp(rec.qual, e[i].qual) || rec.qual_len != rec.seq_len)) {
			snprintf(why, why_len, "record %zu (%s) qual differs", i, e[i].name);
			ok = 0;
		} else if (e[i].line && rec.line != e[i].line) {
			snprintf(why, why_len, "record %zu (%s) line %llu != %llu", i, e[i].name,
			         (unsigned long long)rec.line, (unsigned long long)e[i].line);
			ok = 0;
		} else if (!fastq && (rec.qual_len != 0 || rec.qual)) {
			snprintf(why, why_len, "record %zu has qualities in FASTA", i);
			ok = 0;
		}
	}
	if (ok && seqio_read_or_die(r, &rec)) {
		snprintf(why, why_len, "extra record '%s'", rec.name);
		ok = 0;
	}
	if (ok && seqio_is_fastq(r) != (n ? fastq : -1)) {
		snprintf(why, why_len, "is_fastq %d", seqio_is_fastq(r));
		ok = 0;
	}
	if (ok && seqio_n_mapped(r) != mapped) {
		snprintf(why, why_len, "n_mapped %llu != %llu", (unsigned long long)seqio_n_mapped(r),
		         (unsigned long long)mapped);
		ok = 0;
	}
	seqio_close(r);   /* also when the input was not read to its end */
	seqio_rec_free(&rec);
	if (via_pipe == 1) {
		pthread_join(th, NULL);
		free(data);
	}
	if (pre_fd >= 0)
		close(pre_fd);
	return ok;
}

static void test_reader(const char *dir)
{
	static const char *how_name[] = { "plain", "gzip", "gzip members", "bgzf" };
	char path[4096], why[512];
	int trial;
	static const char *chunks[] = { "1", "2", "3", "7", "64", "1000", "65536", NULL };

	for (trial = 0; trial < 64; trial++) {
		size_t n = trial == 0 ? 0 : rndn(trial < 8 ? 4 : 60), i;
		exp_rec_t *e = sp_calloc(n + 1, sizeof *e);
		int fastq = trial & 1, crlf = (int)rndn(3), how = (trial >> 1) & 3;
		int via_pipe = (int)rndn(3);   /* 0 path, 1 pipe, 2 fd with a prefix read */
		const char *chunk = trial < 56 ? chunks[rndn(7)] : NULL;
		str_t t;
		int ok;

		for (i = 0; i < n; i++)
			e[i] = rnd_rec(trial % 5 != 0);
		t = format_recs(e, n, fastq, crlf);
		snprintf(path, sizeof path, "%s/in%d", dir, trial);
		write_file(path, &t, how);
		if (chunk)
			setenv("SEEDPIPE_SEQIO_CHUNK", chunk, 1);
		else
			unsetenv("SEEDPIPE_SEQIO_CHUNK");
		ok = check_read(path, via_pipe, e, n, fastq, why, sizeof why);
		tap_ok(ok, "reader trial %d: %zu %s records, %s, %s, %s, chunk %s: %s", trial, n,
		       fastq ? "FASTQ" : "FASTA", how_name[how], crlf == 0 ? "LF" : crlf == 1 ? "CRLF" : "mixed",
		       via_pipe == 1 ? "pipe" : via_pipe ? "fd+prefix" : "path", chunk ? chunk : "default", why);
		unlink(path);
		free(t.s);
		free_recs(e, n);
	}
	unsetenv("SEEDPIPE_SEQIO_CHUNK");
}

/* A FASTA record with one 3 MB line and a FASTQ file over several chunks. */
static void test_big(const char *dir)
{
	char path[4096], why[512];
	exp_rec_t *e = sp_calloc(3, sizeof *e);
	size_t n = 3000000, i;
	str_t t = {0};
	int how;

	for (i = 0; i < 3; i++)
		e[i] = rnd_rec(1);
	free(e[1].raw_seq);
	free(e[1].seq);
	e[1].raw_seq = sp_malloc(n + 1);
	e[1].seq = sp_malloc(n + 1);
	e[1].n_mapped = 0;
	for (i = 0; i < n; i++) {
		e[1].raw_seq[i] = seq_chars[rndn(sizeof seq_chars - 1)];
		e[1].seq[i] = oracle_base(e[1].raw_seq[i], &e[1].n_mapped);
	}
	e[1].raw_seq[n] = e[1].seq[n] = 0;
	for (i = 0; i < 3; i++) {
		sputc(&t, '>');
		sputs(&t, e[i].raw_header);
		sputc(&t, '\n');
		sputs(&t, e[i].raw_seq);
		sputc(&t, '\n');
	}
	for (how = 0; how < 2; how++) {
		snprintf(path, sizeof path, "%s/big%d", dir, how);
		write_file(path, &t, how);
		tap_ok(check_read(path, 0, e, 3, 0, why, sizeof why),
		       "3 MB single-line FASTA sequence, %s: %s", how ? "gzip" : "plain", why);
		unlink(path);
	}
	free(t.s);
	free_recs(e, 3);

	/* many FASTQ records crossing the default 1 MiB chunks */
	n = 30000;
	e = sp_calloc(n, sizeof *e);
	for (i = 0; i < n; i++)
		e[i] = rnd_rec(1);
	t = format_recs(e, n, 1, 0);
	for (how = 0; how < 4; how++) {
		int pipe_it;
		snprintf(path, sizeof path, "%s/bigq%d", dir, how);
		write_file(path, &t, how);
		for (pipe_it = 0; pipe_it < 2; pipe_it++)
			tap_ok(check_read(path, pipe_it, e, n, 1, why, sizeof why),
			       "%zu FASTQ records (%zu bytes), writer %d, %s: %s", n, t.l, how,
			       pipe_it ? "pipe" : "path", why);
		unlink(path);
	}
	free(t.s);
	free_recs(e, n);
}

/*
 * A record is delivered as soon as the pipe holds it (no waiting for a full
 * buffer: this would hang otherwise), and closing a reader early, with the
 * producer blocked on the pipe, returns.
 */
static void test_early_close(int gz)
{
	int pfd[2];
	seqio_reader_t *r;
	seq_rec_t rec;
	const char *txt = ">a\nACGT\n>b\nAC";
	unsigned char buf[256];
	size_t n = strlen(txt);
	int got;

	if (pipe(pfd) != 0)
		sp_die("pipe failed");
	if (gz) {   /* one complete gzip member, then silence */
		z_stream z;
		memset(&z, 0, sizeof z);
		if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
			sp_die("deflateInit2 failed");
		z.next_in = (Bytef *)txt;
		z.avail_in = (uInt)n;
		z.next_out = buf;
		z.avail_out = sizeof buf;
		if (deflate(&z, Z_FINISH) != Z_STREAM_END)
			sp_die("deflate failed");
		n = sizeof buf - z.avail_out;
		deflateEnd(&z);
		txt = (const char *)buf;
	}
	if (write(pfd[1], txt, n) != (ssize_t)n)
		sp_die("write failed");
	r = seqio_open_fd_or_die(pfd[0], "pipe");
	seqio_rec_init(&rec);
	got = seqio_read_or_die(r, &rec);
	tap_ok(got == 1 && strcmp(rec.name, "a") == 0 && strcmp(rec.seq, "ACGT") == 0,
	       "%s: first record of an unfinished pipe", gz ? "gzip" : "plain");
	seqio_close(r);   /* writer end still open: the producer sits in read(2) */
	tap_ok(1, "%s: seqio_close returns while the producer waits on a pipe", gz ? "gzip" : "plain");
	seqio_rec_free(&rec);
	close(pfd[0]);
	close(pfd[1]);
}

/* ---------- errors returned, not fatal ---------- */

typedef struct {
	const char *path;
	int n_ok, first_err, again;
	char msg[256];
} err_job_t;

/* Read a malformed file with seqio_next on a thread of its own. */
static void *err_reader(void *a)
{
	err_job_t *j = a;
	seqio_reader_t *r = seqio_open_try(j->path);
	seq_rec_t rec;
	int got;

	if (!r) {
		j->first_err = -2;
		snprintf(j->msg, sizeof j->msg, "%s", sp_errmsg());
		return NULL;
	}
	seqio_rec_init(&rec);
	while ((got = seqio_next(r, &rec)) == 1)
		j->n_ok++;
	j->first_err = got;
	snprintf(j->msg, sizeof j->msg, "%s", sp_errmsg());
	j->again = seqio_next(r, &rec);
	seqio_rec_free(&rec);
	seqio_close(r);
	return NULL;
}

static void err_case(const char *dir, const char *name, const char *text, int want_ok,
		int want_err, const char *want_msg)
{
	char path[256], msg[300];
	err_job_t j;
	pthread_t th;
	FILE *fp;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (text) {
		if (!(fp = fopen(path, "w")) || fputs(text, fp) < 0 || fclose(fp) != 0)
			sp_die("cannot write '%s'", path);
	}
	memset(&j, 0, sizeof j);
	j.path = path;
	if (pthread_create(&th, NULL, err_reader, &j) != 0)
		sp_die("cannot start a thread");
	pthread_join(th, NULL);
	snprintf(msg, sizeof msg, want_msg, path);
	tap_ok(j.n_ok == want_ok && j.first_err == want_err && strcmp(j.msg, msg) == 0
			&& (want_err == -2 || j.again == -1),
		"%s: %d records, then %d with '%s' (got %d, %d, '%s', then %d)", name, want_ok,
		want_err, msg, j.n_ok, j.first_err, j.msg, j.again);
	if (text)
		unlink(path);
}

/*
 * seqio_next reports malformed input as -1 with "FILE:LINE: what" in the
 * calling thread's error slot, after the records before it, and keeps
 * returning -1; seqio_open_try returns NULL with the message.  Run on
 * threads other than main: nothing exits.
 */
static void test_errors(const char *dir)
{
	err_case(dir, "q.fq", "@r1\nACGT\n+\nIIII\n@r2\nACGT\n+\nIII\n", 1, -1,
		"%s:8: quality length 3 differs from sequence length 4 in 'r2'");
	err_case(dir, "c.fa", ">a\nACGT\n>b\nAC*GT\n>c\nAA\n", 1, -1,
		"%s:4: invalid character '*' in the sequence of 'b'");
	err_case(dir, "t.fq", "@r1\nACGT\n+\nIIII\n@r2\nAC\n", 1, -1,
		"%s:7: truncated FASTQ record 'r2': no '+' line");
	err_case(dir, "v.fq", "@r1\nACGT\n+\nII I\n", 0, -1,
		"%s:4: invalid character 0x20 in the qualities of 'r1'");
	err_case(dir, "bin.fa", ">a\nAC\001GT\n", 0, -1,
		"%s:2: not FASTA or FASTQ (binary data)");
	err_case(dir, "ctl.fa", "\001\002\003", 0, -2,
		"%s:1: not FASTA or FASTQ (binary data)");
	err_case(dir, "txt.fa", "\n\nhello world\n", 0, -2,
		"%s:3: not FASTA or FASTQ (a record must start with '>' or '@')");
	err_case(dir, "none.fa", NULL, 0, -2,
		"cannot open '%s': No such file or directory");
}

/* ---------- packing ---------- */

static int naive_code(unsigned char c)
{
	const char *p = strchr("ACGT", c >= 'a' && c <= 'z' ? c - 32 : c);
	return c && p ? (int)(p - "ACGT") : 4;
}

static void test_pack(void)
{
	int c, bad_nt4 = 0, bad_comp = 0, bad_rcb = 0, trial;
	int bad_pack = 0, bad_unpack = 0, bad_rc = 0, bad_rc2 = 0, bad_rc2_inplace = 0, bad_runs = 0, bad_pack4 = 0;

	for (c = 0; c < 256; c++) {
		int code = naive_code((unsigned char)c);
		unsigned char comp = code < 4 ? (unsigned char)"TGCA"[code] : 'N';
		int k, rc = 0;
		if ((int)sp_nt4((uchar)c) != code || seqio_nt4[c] != code)
			bad_nt4++;
		if (sp_comp_ascii((uchar)c) != comp)
			bad_comp++;
		for (k = 0; k < 4; k++)   /* base k of the result = complement of base 3-k */
			rc |= (3 - (c >> (2 * (3 - k)) & 3)) << (2 * k);
		if (sp_revcomp_byte((uchar)c) != rc)
			bad_rcb++;
	}
	tap_ok(!bad_nt4, "sp_nt4 and seqio_nt4 on all 256 bytes");
	tap_ok(!bad_comp, "sp_comp_ascii on all 256 bytes");
	tap_ok(!bad_rcb, "sp_revcomp_byte on all 256 bytes");
	for (trial = 0; trial < 20000; trial++) {
		unsigned char q[4];
		int k, want = 0;
		for (k = 0; k < 4; k++) {
			q[k] = (unsigned char)rndn(256);
			if (rndn(2))
				q[k] = (unsigned char)"ACGTacgtN"[rndn(9)];
			want |= (naive_code(q[k]) & 3) * (naive_code(q[k]) < 4) << (2 * k);
		}
		if (sp_pack4(q[0], q[1], q[2], q[3]) != want)
			bad_pack4++;
	}
	tap_ok(!bad_pack4, "sp_pack4 on random bytes");

	for (trial = 0; trial < 3000; trial++) {
		size_t n = rndn(301), nb = (n + 3) / 4, i;
		char *s = sp_malloc(n + 1), *sa = sp_malloc(n + 1), *u = sp_malloc(n + 1), *rc = sp_malloc(n + 1);
		char *rca = sp_malloc(n + 1);
		uint8_t *p = sp_calloc(nb + 1, 1), *want = sp_calloc(nb + 1, 1), *p2 = sp_calloc(nb + 1, 1);
		uint8_t *rcp = sp_calloc(nb + 1, 1), *rcw = sp_calloc(nb + 1, 1);
		seqio_nrun_t *runs;
		size_t nr, k;

		for (i = 0; i < n; i++) {
			s[i] = rndn(8) == 0 ? 'N' : "ACGT"[rndn(4)];
			if (rndn(3) == 0 && s[i] == 'N')   /* long N runs too */
				while (i + 1 < n && rndn(10))
					s[++i] = 'N';
		}
		s[n] = 0;
		/* naive pack */
		for (i = 0; i < n; i++) {
			int code = naive_code((unsigned char)s[i]);
			sa[i] = code < 4 ? s[i] : 'A';
			want[i / 4] |= (uint8_t)((code < 4 ? code : 0) << (2 * (i % 4)));
		}
		memset(p, 0xAA, nb + 1);
		seqio_pack2(p, s, n);
		if (memcmp(p, want, nb) || p[nb] != 0xAA)
			bad_pack++;
		seqio_unpack2(u, p, n);
		if (memcmp(u, sa, n))
			bad_unpack++;
		for (i = 0; i < n; i++) {
			int code = naive_code((unsigned char)s[n - 1 - i]);
			rc[i] = code < 4 ? "TGCA"[code] : 'N';
			rca[i] = code < 4 ? "TGCA"[code] : 'T';   /* N packed as A, complemented */
		}
		seqio_revcomp(u, s, n);
		if (memcmp(u, rc, n))
			bad_rc++;
		seqio_pack2(rcw, rca, n);
		memcpy(p2, p, nb);
		if (nb && (n & 3))
			p2[nb - 1] |= (uint8_t)(rnd() << (2 * (n & 3)));   /* junk in the padding */
		memset(rcp, 0x55, nb + 1);
		seqio_revcomp2(rcp, p2, n);
		if (memcmp(rcp, rcw, nb) || rcp[nb] != 0x55)
			bad_rc2++;
		seqio_revcomp2(p2, p2, n);
		if (memcmp(p2, rcw, nb))
			bad_rc2_inplace++;
		/* N runs */
		nr = seqio_n_runs(s, n, &runs);
		{
			size_t j = 0;
			int okr = 1;
			for (i = 0; i < n && okr;) {
				if (s[i] != 'N') {
					i++;
					continue;
				}
				for (k = i; k < n && s[k] == 'N'; k++)
					;
				if (j >= nr || runs[j].start != i || runs[j].len != k - i)
					okr = 0;
				j++;
				i = k;
			}
			if (!okr || j != nr)
				bad_runs++;
		}
		free(runs);
		free(s); free(sa); free(u); free(rc); free(rca);
		free(p); free(want); free(p2); free(rcp); free(rcw);
	}
	tap_ok(!bad_pack, "seqio_pack2 equals naive packing (3000 random lengths 0..300)");
	tap_ok(!bad_unpack, "seqio_unpack2 inverts seqio_pack2 (N as A)");
	tap_ok(!bad_rc, "seqio_revcomp equals naive reverse complement");
	tap_ok(!bad_rc2, "seqio_revcomp2 equals packing the naive reverse complement");
	tap_ok(!bad_rc2_inplace, "seqio_revcomp2 in place");
	tap_ok(!bad_runs, "seqio_n_runs equals a naive scan");
}

int main(void)
{
	char dir[] = "seqio_test.XXXXXX";   /* in the trash directory */
	const char *seed = getenv("SEQIO_TEST_SEED");

	sp_set_progname("seqio_test");
	(void)tap_skip;   /* tap.h is header-only; nothing here is skipped */
	if (seed)
		rng_s = strtoull(seed, NULL, 0) | 1;
	tap_diag("seed %llu (set SEQIO_TEST_SEED to repeat)", (unsigned long long)rng_s);
	if (!mkdtemp(dir))
		sp_die("cannot make a temporary directory");
	test_pack();
	test_reader(dir);
	test_big(dir);
	test_early_close(0);
	test_early_close(1);
	test_errors(dir);
	rmdir(dir);
	return tap_done();
}
