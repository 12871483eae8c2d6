/*
 * pair_mkcands.c - a paired candidates stream with every diagonal (every
 * STEP-th of each sequence and strand) as a candidate, so that extend's
 * hits depend on it alone, not on seedfilt:
 *
 *   pair_mkcands INDEX R1 R2 STEP [-2]
 *
 * Mate 1 of each pair from R1, mate 2 from R2, as seedfilt writes a
 * paired stream (mate flags, seedfilt.paired); with -2 the mates 2 get no
 * candidate at all, so that each of their hits must come from mate rescue.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idx.h"
#include "rec.h"
#include "rec_kinds.h"
#include "seqio.h"
#include "util.h"

int main(int argc, char **argv)
{
	uint64_t step, id = 0;
	idx_t *x;
	seqio_reader_t *in[2];
	seq_rec_t s;
	rec_prov_t prov;
	rec_writer_t *w;
	rec_cand_t *c = NULL;
	size_t nc = 0, cap = 0;
	char buf[32];
	int none2 = argc == 6 && !strcmp(argv[5], "-2"), mate;

	sp_set_progname(argv[0]);
	if ((argc != 5 && !none2) || !(step = strtoull(argv[4], NULL, 10))) {
		fprintf(stderr, "usage: pair_mkcands INDEX R1 R2 STEP [-2]\n");
		return 2;
	}
	x = idx_open_or_die(argv[1], 0);
	rec_prov_init(&prov);
	rec_prov_add_pg(&prov, "pair_mkcands", SP_VERSION, argc, argv);
	rec_prov_set(&prov, REC_PROV_INDEX, argv[1]);
	snprintf(buf, sizeof buf, "%016" PRIx64, x->fingerprint);
	rec_prov_set(&prov, REC_PROV_INDEX_FP, buf);
	rec_prov_set(&prov, "seedfilt.paired", "files");
	w = rec_create_or_die("-", REC_KIND_CANDIDATES, &prov, 4096, 1);
	in[0] = seqio_open_or_die(argv[2]);
	in[1] = seqio_open_or_die(argv[3]);
	seqio_rec_init(&s);
	for (mate = 0; seqio_read_or_die(in[mate], &s); mate = !mate) {
		rec_read_t rd;
		uint32_t q, strand, p;

		nc = 0;
		for (q = 0; q < x->n_seq && !(mate && none2); q++) {
			for (strand = 0; strand < 2; strand++) {
				uint64_t g;
				for (g = x->off[q]; g < x->off[q] + x->len[q]; g += step) {
					for (p = 0; p < x->n_part; p++)
						if (x->part[p].beg <= g && g < x->part[p].end)
							break;
					if (p == x->n_part)
						continue;
					if (nc == cap) {
						cap = cap ? 2 * cap : 1024;
						c = sp_realloc(c, cap * sizeof *c);
					}
					memset(&c[nc], 0, sizeof *c);
					c[nc].part = p;
					c[nc].seq_id = q;
					c[nc].pos = (uint32_t)(g - x->part[p].beg);
					c[nc].support = 1;
					c[nc].strand = (uint8_t)strand;
					nc++;
				}
			}
		}
		rec_read_from_seq(&rd, id++, &s);
		rd.mate = (uint8_t)(mate + 1);
		rec_put_cands(w, &rd, c, (uint32_t)nc);
	}
	if (mate)
		sp_die("'%s' ends before '%s'", argv[3], argv[2]);
	rec_finish_or_die(w);
	seqio_close(in[0]);
	seqio_close(in[1]);
	seqio_rec_free(&s);
	free(c);
	rec_prov_free(&prov);
	idx_close(x);
	return 0;
}
