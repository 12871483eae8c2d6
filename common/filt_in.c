/*
 * filt_in.c - seedfilt's input: FASTA or FASTQ (plain or gzip, seqio.c) or
 * a seedpipe reads stream, told apart by the first bytes, which are handed
 * on to the reader that takes the input (so a pipe works as a file does);
 * paired reads from two such inputs or one interleaved, checked pair by
 * pair.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "filt_priv.h"
#include "rec.h"
#include "rec_kinds.h"
#include "seqio.h"
#include "util.h"

struct filt_in {
	seqio_reader_t *sq;      /* FASTA, FASTQ */
	rec_reader_t *rr;        /* a reads stream */
	seq_rec_t rec;
	int fd, own_fd;
	uint64_t next_id;
	const char *name;
	int paired;              /* 0 single; 1 two inputs (mate 2 from in2); 2 interleaved */
	struct filt_in *in2;
	uint64_t n_rec;          /* reads returned (paired) */
	char *name1;             /* the last mate 1's name, without /1 or /2 */
	size_t name1_len, name1_cap;
	uint64_t line1;          /* ... and its line (FASTA, FASTQ) */
	rec_read_t *held;        /* filt_in_peek's and filt_in_sample's reads */
	char **held_buf;         /* (copies), returned next */
	size_t n_held, next_held;
	int ended;               /* the input ended while reads were held */
	const char **sseq;       /* filt_in_sample's views */
	uint32_t *slen;
};

filt_in_t *filt_in_open_or_die(const char *path)
{
	filt_in_t *in = sp_calloc(1, sizeof *in);
	int fd = 0;
	size_t n = 0;
	uint8_t pre[REC_MAGIC_LEN];

	in->name = path;
	if (strcmp(path, "-") != 0) {
		fd = open(path, O_RDONLY);
		if (fd < 0)
			sp_die("cannot open '%s': %s", path, strerror(errno));
		in->own_fd = 1;
	}
	in->fd = fd;
	while (n < REC_MAGIC_LEN) {
		ssize_t k = read(fd, pre + n, REC_MAGIC_LEN - n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			sp_die("cannot read '%s': %s", path, strerror(errno));
		if (k == 0)
			break;
		n += (size_t)k;
	}
	if (n == REC_MAGIC_LEN && memcmp(pre, REC_MAGIC, REC_MAGIC_LEN) == 0) {
		in->rr = rec_reader_fd(fd, path);
		if (rec_reader_start_past_magic(in->rr, REC_KIND_READS) != REC_OK)
			sp_die("%s", rec_errmsg(in->rr));
	} else {
		in->sq = seqio_open_fd_try(fd, path, pre, n);
		if (!in->sq)
			sp_die("%s", sp_errmsg());
		seqio_rec_init(&in->rec);
	}
	return in;
}

const rec_prov_t *filt_in_prov(const filt_in_t *in)
{
	return in->rr ? rec_reader_prov(in->rr) : NULL;
}

static int in_next(filt_in_t *in, rec_read_t *rd);

void filt_in_pair(filt_in_t *in, filt_in_t *mate2)
{
	in->paired = mate2 ? 1 : 2;
	in->in2 = mate2;
}

static char *copy(char *dst, const char *src, size_t n)
{
	if (n)
		memcpy(dst, src, n);
	return dst;
}

/* Hold one more read (a copy) for filt_in_next: 1, 0 at the end, -1. */
static int hold_one(filt_in_t *in)
{
	rec_read_t rd, *h;
	char *b;
	int st;

	if (in->ended)
		return 0;
	if ((st = in_next(in, &rd)) <= 0) {
		in->ended = st == 0;
		return st;
	}
	in->held = sp_realloc(in->held, (in->n_held + 1) * sizeof *in->held);
	in->held_buf = sp_realloc(in->held_buf, (in->n_held + 1) * sizeof *in->held_buf);
	b = sp_malloc((size_t)rd.name_len + rd.comment_len + 2 * (size_t)rd.seq_len + 4);
	h = &in->held[in->n_held];
	*h = rd;
	in->held_buf[in->n_held++] = b;
	h->name = copy(b, rd.name, rd.name_len);
	b += rd.name_len + 1;
	h->comment = copy(b, rd.comment, rd.comment_len);
	b += rd.comment_len + 1;
	h->seq = copy(b, rd.seq, rd.seq_len);
	b += rd.seq_len + 1;
	h->qual = rd.qual ? copy(b, rd.qual, rd.seq_len) : NULL;
	return 1;
}

int filt_in_peek(filt_in_t *in, uint32_t *len)
{
	int st;

	if (in->next_held == in->n_held && (st = hold_one(in)) <= 0)
		return st;
	*len = in->held[in->next_held].seq_len;
	return 1;
}

int filt_in_sample(filt_in_t *in, size_t n, const char *const **seq, const uint32_t **len)
{
	size_t i;

	while (in->n_held < n) {
		int st = hold_one(in);

		if (st < 0)
			return -1;
		if (st == 0)
			break;
	}
	in->sseq = sp_realloc(in->sseq, (in->n_held + 1) * sizeof *in->sseq);
	in->slen = sp_realloc(in->slen, (in->n_held + 1) * sizeof *in->slen);
	for (i = 0; i < in->n_held; i++) {
		in->sseq[i] = in->held[i].seq;
		in->slen[i] = in->held[i].seq_len;
	}
	*seq = in->sseq;
	*len = in->slen;
	return (int)in->n_held;
}

int filt_in_next(filt_in_t *in, rec_read_t *rd)
{
	if (in->next_held < in->n_held) {
		*rd = in->held[in->next_held++];
		return 1;
	}
	if (in->ended)
		return 0;
	return in_next(in, rd);
}

static int raw_next(filt_in_t *in, rec_read_t *rd)
{
	const uint8_t *body;
	uint32_t len;
	int st;

	if (in->sq) {
		if ((st = seqio_next(in->sq, &in->rec)) <= 0)
			return st;   /* 0 at the end, -1 after sp_fail */
		if (in->rec.seq_len > UINT32_MAX || in->rec.name_len > UINT32_MAX
				|| in->rec.comment_len > UINT32_MAX)   /* rec_read_from_seq would exit */
			return sp_fail("'%s': line %" PRIu64 ": read too long", in->name,
					in->rec.line);
		rec_read_from_seq(rd, in->next_id++, &in->rec);
		return 1;
	}
	st = rec_read(in->rr, &body, &len);
	if (st == 0)
		return 0;
	if (st < 0)
		return sp_fail("%s", rec_errmsg(in->rr));
	if (rec_read_decode(body, len, rd) < 0) {
		rec_reader_bad_record(in->rr, NULL, "malformed reads record");
		return sp_fail("%s", rec_errmsg(in->rr));
	}
	return 1;
}

/* The length of name N (L bytes) of mate MATE without a final "/MATE". */
static size_t base_len(const char *n, size_t l, int mate)
{
	return l >= 2 && n[l - 2] == '/' && n[l - 1] == '0' + mate ? l - 2 : l;
}

/* Where a read of input IN is: "pair P, line L of 'FILE'" (no line in a reads stream). */
static const char *where(const filt_in_t *in, uint64_t pair, uint64_t line, char *buf, size_t len)
{
	if (in->sq)
		snprintf(buf, len, "pair %" PRIu64 ", line %" PRIu64 " of '%s'", pair, line, in->name);
	else
		snprintf(buf, len, "pair %" PRIu64 " of '%s'", pair, in->name);
	return buf;
}

/* The next read, mate 1 and mate 2 in turn when paired, checked pair by pair. */
static int in_next(filt_in_t *in, rec_read_t *rd)
{
	filt_in_t *src = in->paired == 1 && in->n_rec % 2 ? in->in2 : in;
	int mate = in->n_rec % 2 ? 2 : 1, st;
	uint64_t pair = in->n_rec / 2 + 1;
	char w1[512], w2[512];
	size_t bl;

	if (!in->paired)
		return raw_next(in, rd);
	st = raw_next(src, rd);
	if (st < 0)
		return st;
	if (st == 0 && mate == 2) {
		if (in->paired == 2)
			return sp_fail("'%s': odd number of reads in an interleaved input: read '%.*s' "
					"(%s) has no mate 2", in->name, (int)in->name1_len, in->name1,
					where(in, pair, in->line1, w1, sizeof w1));
		return sp_fail("'%s' ends before '%s': read '%.*s' (%s) has no mate 2",
				in->in2->name, in->name, (int)in->name1_len, in->name1,
				where(in, pair, in->line1, w1, sizeof w1));
	}
	if (st == 0) {
		if (in->paired == 1 && (st = raw_next(in->in2, rd)) != 0)
			return st < 0 ? st : sp_fail("'%s' ends before '%s': read '%.*s' (%s) has no "
					"mate 1", in->name, in->in2->name, (int)rd->name_len, rd->name,
					where(in->in2, pair, in->in2->rec.line, w2, sizeof w2));
		return 0;
	}
	bl = base_len(rd->name, rd->name_len, mate);
	if (mate == 1) {
		if (in->name1_cap < bl + 1) {
			in->name1_cap = bl + 64;
			in->name1 = sp_realloc(in->name1, in->name1_cap);
		}
		memcpy(in->name1, rd->name, bl);
		in->name1_len = bl;
		in->line1 = in->rec.line;
	} else if (bl != in->name1_len || memcmp(rd->name, in->name1, bl)) {
		return sp_fail("the mates' names differ: '%.*s' (%s), '%.*s' (%s)",
				(int)in->name1_len, in->name1, where(in, pair, in->line1, w1, sizeof w1),
				(int)rd->name_len, rd->name, where(src, pair, src->rec.line, w2, sizeof w2));
	}
	rd->mate = (uint8_t)mate;
	rd->id = in->n_rec++;
	return 1;
}

void filt_in_close(filt_in_t *in)
{
	if (!in)
		return;
	filt_in_close(in->in2);
	free(in->name1);
	if (in->sq) {
		seqio_close(in->sq);
		seqio_rec_free(&in->rec);
	}
	if (in->rr)
		rec_reader_free(in->rr);
	for (size_t i = 0; i < in->n_held; i++)
		free(in->held_buf[i]);
	free(in->held);
	free(in->held_buf);
	free(in->sseq);
	free(in->slen);
	if (in->own_fd)
		close(in->fd);
	free(in);
}
