/*
 * seqio_common.h - the body of the FASTA/FASTQ fuzz targets (seqio.c:
 * the input as it comes, plain or gzip; seqio_gz.c: the input gzipped by
 * the harness).  The first input byte picks the reader's chunk size
 * (SEEDPIPE_SEQIO_CHUNK, 1 byte to 1 MiB) so that buffer boundaries fall
 * everywhere.  Every record returned must follow the format's rules
 * (seqio.h): upper-case ACGTN, no blank in the name, qualities as long as
 * the sequence and in '!'..'~' for FASTQ, none for FASTA.
 */
#include <string.h>

#include "fuzz.h"
#include "seqio.h"

static void check_rec(const seqio_reader_t *r, const seq_rec_t *rec)
{
	size_t i;

	if (strlen(rec->name) != rec->name_len || strlen(rec->seq) != rec->seq_len
			|| strlen(rec->comment) != rec->comment_len)
		fuzz_fail("seqio: a length disagrees with its string");
	for (i = 0; i < rec->name_len; i++)
		if (rec->name[i] == ' ' || rec->name[i] == '\t')
			fuzz_fail("seqio: a blank in a name");
	for (i = 0; i < rec->seq_len; i++)
		if (!strchr("ACGTN", rec->seq[i]) || !rec->seq[i])
			fuzz_fail("seqio: '%c' in a sequence", rec->seq[i]);
	if (seqio_is_fastq(r) == 1) {
		if (!rec->qual || rec->qual_len != rec->seq_len || strlen(rec->qual) != rec->qual_len)
			fuzz_fail("seqio: qualities of another length");
		for (i = 0; i < rec->qual_len; i++)
			if (rec->qual[i] < '!' || rec->qual[i] > '~')
				fuzz_fail("seqio: quality byte %d", rec->qual[i]);
	} else if (rec->qual) {
		fuzz_fail("seqio: qualities in FASTA");
	}
}

static void run_reader(const uint8_t *data, size_t size, unsigned sel)
{
	static const char *const chunk[] = { "1", "2", "3", "7", "16", "61", "4096", "1048576" };
	seqio_reader_t *r;
	seq_rec_t rec;
	int fd = fuzz_memfd(data, size);

	setenv("SEEDPIPE_SEQIO_CHUNK", chunk[sel % 8], 1);
	seqio_rec_init(&rec);
	r = seqio_open_fd_try(fd, "fuzz", NULL, 0);
	if (!r) {
		seqio_rec_free(&rec);
		close(fd);
		return;
	}
	/* seqio_next: 1 a record, 0 the end, -1 an error (the reader's message) */
	while (seqio_next(r, &rec) > 0)
		check_rec(r, &rec);
	seqio_close(r);
	seqio_rec_free(&rec);
	close(fd);
}
