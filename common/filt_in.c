/*
 * filt_in.c - seedfilt's input: FASTA or FASTQ (plain or gzip, seqio.c) or
 * a seedpipe reads stream, told apart by the first bytes, which are handed
 * on to the reader that takes the input (so a pipe works as a file does).
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
	rec_read_t held;         /* filt_in_peek's read, returned next */
	int n_held;              /* 1 while held; -1: the input ended */
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

int filt_in_peek(filt_in_t *in, uint32_t *len)
{
	int st;

	if (!in->n_held) {
		st = in_next(in, &in->held);
		if (st < 0)
			return st;
		in->n_held = st ? 1 : -1;
	}
	if (in->n_held < 0)
		return 0;
	*len = in->held.seq_len;
	return 1;
}

int filt_in_next(filt_in_t *in, rec_read_t *rd)
{
	if (in->n_held > 0) {
		*rd = in->held;
		in->n_held = 0;
		return 1;
	}
	if (in->n_held < 0)
		return 0;
	return in_next(in, rd);
}

static int in_next(filt_in_t *in, rec_read_t *rd)
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

void filt_in_close(filt_in_t *in)
{
	if (!in)
		return;
	if (in->sq) {
		seqio_close(in->sq);
		seqio_rec_free(&in->rec);
	}
	if (in->rr)
		rec_reader_free(in->rr);
	if (in->own_fd)
		close(in->fd);
	free(in);
}
