/*
 * seqio_cat.c - test driver for common/seqio.c: read FASTA/FASTQ files (or
 * "-") with seqio and print each record as "name TAB comment TAB seq TAB
 * qual" (qual empty for FASTA).
 *
 *     seqio_cat [-s] [-A] FILE...
 *       -s  end with "# format=fasta|fastq|empty records=N mapped=K" per file
 *       -A  print FASTA (">name comment" and the sequence), like seqtk seq -A;
 *           used to time seqio against seqtk
 */
#include "seqio.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int c, summary = 0, fasta = 0, i;
	seq_rec_t rec;
	char *obuf = NULL;
	size_t ocap = 0;

	sp_set_progname("seqio_cat");
	sp_quiet_sigpipe();
	while ((c = getopt(argc, argv, "sA")) >= 0) {
		if (c == 's')
			summary = 1;
		else if (c == 'A')
			fasta = 1;
		else
			return SP_EXIT_USAGE;
	}
	if (optind == argc) {
		fprintf(stderr, "usage: seqio_cat [-s] [-A] FILE...\n");
		return SP_EXIT_USAGE;
	}
	seqio_rec_init(&rec);
	for (i = optind; i < argc; i++) {
		seqio_reader_t *r = seqio_open_or_die(argv[i]);
		uint64_t n = 0;
		int fq;

		while (seqio_read_or_die(r, &rec)) {
			n++;
			if (fasta) {
				/* one buffered write per record, as seqtk does */
				size_t need = rec.name_len + rec.comment_len + rec.seq_len + 4, k = 0;
				if (need > ocap)
					obuf = sp_realloc(obuf, ocap = need * 2);
				obuf[k++] = '>';
				memcpy(obuf + k, rec.name, rec.name_len);
				k += rec.name_len;
				if (rec.comment_len) {
					obuf[k++] = ' ';
					memcpy(obuf + k, rec.comment, rec.comment_len);
					k += rec.comment_len;
				}
				obuf[k++] = '\n';
				memcpy(obuf + k, rec.seq, rec.seq_len);
				k += rec.seq_len;
				obuf[k++] = '\n';
				fwrite(obuf, 1, k, stdout);
			} else {
				printf("%s\t%s\t%s\t%s\n", rec.name, rec.comment, rec.seq,
				       rec.qual && seqio_is_fastq(r) ? rec.qual : "");
			}
		}
		fq = seqio_is_fastq(r);
		if (summary)
			printf("# format=%s records=%llu mapped=%llu\n",
			       fq < 0 ? "empty" : fq ? "fastq" : "fasta",
			       (unsigned long long)n, (unsigned long long)seqio_n_mapped(r));
		seqio_close(r);
	}
	seqio_rec_free(&rec);
	free(obuf);
	sp_close_stdout();
	return 0;
}
