/*
 * extend_mkcands.c - test driver for extend: a candidates stream made
 * without seedfilt.  For every read of READS (FASTA/FASTQ) it emits, on
 * both strands of every sequence of INDEX, the diagonals 0, STEP, 2 STEP,
 * ... (with STEP <= m + 2A the windows extend makes of them cover each
 * sequence whole, so extend then searches exhaustively).  Options:
 *
 *   extend_mkcands INDEX READS STEP [-n NAME] [-f FP] [-z] [-E] [-p R2 [-2]]
 *                  [-r SEED [-L N]] [-M STR | -U STR] [-X ID | -Y ID]
 *
 * -n writes NAME as the stream's index path, -f FP as its fingerprint
 * (error tests), -z leaves both out; -E writes a record with an empty body
 * (malformed) before the reads.  -p R2 makes a paired stream as seedfilt
 * writes one (mate flags, seedfilt.paired): mate 1 of each pair from
 * READS, mate 2 from R2; with -2 the mates 2 get no candidate at all, so
 * that each of their hits must come from mate rescue.  -r SEED: instead
 * of every STEP-th diagonal, for each read a random list (STEP ignored):
 * none for some reads, else runs of neighbouring diagonals (up to 3000, so
 * that merged windows are cut into pieces), diagonals at the first and
 * last bases of sequences, pairs whose windows touch for some bound (m +
 * 2A or one more apart), lone ones anywhere and repeats, on both
 * strands, in seedfilt's order for half the reads and shuffled for the
 * others.  -M STR: the reads of READS get the mate flags STR names, one
 * digit per read (0 single, 1 mate 1, 2 mate 2; reads past STR single),
 * in a paired stream; -U STR the same in a stream not marked paired: the
 * broken pairs of extend's error tests.  -X ID: the first read from the
 * ID-th (0 the first) with a candidate gets a malformed list, its last
 * byte's varint running past the body's end (the record and its count
 * intact).  -L N (with -r): the first N reads get long lists instead,
 * thousands of candidates (runs of 200 to 1500 diagonals 1 to 3 apart on
 * random sequences and strands, and lone ones) in seedfilt's order, every
 * 4th of them with its last two candidates of one strand swapped (the
 * order broken only near its end).  -Y ID as -X, but a byte in the middle
 * of the list gets its high bit (its varint runs into the next).  The
 * stream goes to stdout.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ext.h"
#include "idx.h"
#include "rec.h"
#include "rec_kinds.h"
#include "seqio.h"
#include "util.h"

/* Append C to *C (*NC of *CAP). */
static void push(const rec_cand_t *k, rec_cand_t **c, size_t *nc, size_t *cap)
{
	if (*nc == *cap) {
		*cap = *cap ? 2 * *cap : 1024;
		*c = sp_realloc(*c, *cap * sizeof **c);
	}
	(*c)[(*nc)++] = *k;
}

/* Every STEP-th diagonal of each sequence and strand of X, in C[0..*NC). */
static void every_diagonal(const idx_t *x, uint64_t step, rec_cand_t **c, size_t *nc, size_t *cap)
{
	uint32_t q, strand;
	uint64_t g;
	rec_cand_t k;

	*nc = 0;
	for (q = 0; q < x->n_seq; q++)
		for (strand = 0; strand < 2; strand++)
			for (g = x->off[q]; g < x->off[q] + x->len[q]; g += step)
				if (ext_cand_at(x, g, strand, &k) == 0)   /* none outside a part */
					push(&k, c, nc, cap);
}

/* The next number of the test's generator (xorshift64*). */
static uint64_t rnd(uint64_t *st)
{
	*st ^= *st >> 12;
	*st ^= *st << 25;
	*st ^= *st >> 27;
	return *st * 0x2545f4914f6cdd1dull;
}

/* Append the candidate of global position G on sequence Q, strand ST (none outside a part). */
static void add_cand(const idx_t *x, uint32_t q, uint64_t g, unsigned st, rec_cand_t **c,
		size_t *nc, size_t *cap)
{
	rec_cand_t k;

	if (ext_cand_at(x, g, st, &k) == 0 && k.seq_id == q)
		push(&k, c, nc, cap);
}

/* A random list of candidates (-r) for a read of M bases in C[0..*NC). */
static void random_cands(const idx_t *x, uint64_t m, uint64_t *st, rec_cand_t **c, size_t *nc,
		size_t *cap)
{
	uint64_t n, i, j, k;

	*nc = 0;
	if (rnd(st) % 8 == 0)
		return;
	n = 1 + rnd(st) % 12;
	for (i = 0; i < n; i++) {
		uint32_t q = (uint32_t)(rnd(st) % x->n_seq);
		unsigned strand = (unsigned)(rnd(st) & 1), kind = (unsigned)(rnd(st) % 6);
		uint64_t len = x->len[q], g;
		if (!len)
			continue;
		g = x->off[q] + rnd(st) % len;
		if (kind == 0) {         /* a run of neighbours, maybe long */
			k = rnd(st) % 4 ? 60 : 3000;   /* one call a statement: the same stream in any build */
			k = 1 + rnd(st) % k;
			for (j = 0; j < k; j++)
				add_cand(x, q, g + j, strand, c, nc, cap);
		} else if (kind == 1) {  /* at a sequence's first bases */
			add_cand(x, q, x->off[q] + rnd(st) % 4, strand, c, nc, cap);
		} else if (kind == 2) {  /* at its last bases */
			add_cand(x, q, x->off[q] + len - 1 - rnd(st) % (len < 4 ? len : 4), strand, c, nc,
					cap);
		} else if (kind == 5) {  /* two whose windows for some A touch or nearly */
			uint64_t a = rnd(st) % 8;
			add_cand(x, q, g, strand, c, nc, cap);
			add_cand(x, q, g + m + 2 * a + rnd(st) % 2, strand, c, nc, cap);
		} else {                 /* lone, maybe twice */
			add_cand(x, q, g, strand, c, nc, cap);
			if (kind == 4)
				add_cand(x, q, g, strand, c, nc, cap);
		}
	}
	if (rnd(st) & 1) {
		ext_cands_sort(*c, *nc);
	} else {
		for (i = *nc; i > 1; i--) {
			rec_cand_t t;
			j = rnd(st) % i;
			t = (*c)[i - 1];
			(*c)[i - 1] = (*c)[j];
			(*c)[j] = t;
		}
	}
}

/* A long list (-L) in C[0..*NC), with BRK its order broken near its end. */
static void long_cands(const idx_t *x, uint64_t *st, int brk, rec_cand_t **c, size_t *nc,
		size_t *cap)
{
	uint64_t i, j, k, runs = 3 + rnd(st) % 4;

	*nc = 0;
	for (i = 0; i < runs + 20; i++) {
		uint32_t q = (uint32_t)(rnd(st) % x->n_seq);
		unsigned strand = (unsigned)(rnd(st) & 1);
		uint64_t len = x->len[q], g;
		if (!len)
			continue;
		g = x->off[q] + rnd(st) % len;
		k = i < runs ? 200 + rnd(st) % 1300 : 1;   /* the runs, then lone ones */
		for (j = 0; j < k; j++, g += 1 + rnd(st) % 3)
			add_cand(x, q, g, strand, c, nc, cap);
	}
	ext_cands_sort(*c, *nc);
	for (i = *nc; brk && i-- > 1;)       /* the last two of the last one's strand, apart */
		if ((*c)[i - 1].strand == (*c)[*nc - 1].strand && (*c)[i - 1].pos != (*c)[*nc - 1].pos
				&& (*c)[i - 1].seq_id == (*c)[*nc - 1].seq_id) {
			rec_cand_t t = (*c)[i - 1];
			(*c)[i - 1] = (*c)[*nc - 1];
			(*c)[*nc - 1] = t;
			break;
		}
}

int main(int argc, char **argv)
{
	const char *name = NULL, *fp = NULL, *r2 = NULL, *mates = NULL;
	int i, none = 0, empty = 0, none2 = 0, mate = 0, paired = 0;
	uint64_t step, id = 0, seed = 0, bad = UINT64_MAX, n_long = 0;
	int mid = 0;
	idx_t *x;
	seqio_reader_t *in[2] = { NULL, NULL };
	seq_rec_t s;
	rec_prov_t prov;
	rec_writer_t *w;
	rec_cand_t *c = NULL;
	size_t nc = 0, cap = 0;
	char buf[32];

	sp_set_progname(argv[0]);
	if (argc < 4) {
		fprintf(stderr, "usage: extend_mkcands INDEX READS STEP [-n NAME] [-f FP] [-z] [-E] "
				"[-p R2 [-2]] [-r SEED [-L N]] [-M STR | -U STR] [-X ID | -Y ID]\n");
		return 2;
	}
	for (i = 4; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			name = argv[++i];
		else if (!strcmp(argv[i], "-f") && i + 1 < argc)
			fp = argv[++i];
		else if (!strcmp(argv[i], "-p") && i + 1 < argc)
			r2 = argv[++i];
		else if (!strcmp(argv[i], "-z"))
			none = 1;
		else if (!strcmp(argv[i], "-E"))
			empty = 1;
		else if (!strcmp(argv[i], "-2"))
			none2 = 1;
		else if ((!strcmp(argv[i], "-M") || !strcmp(argv[i], "-U")) && i + 1 < argc) {
			paired = argv[i][1] == 'M';
			mates = argv[++i];
		} else if ((!strcmp(argv[i], "-X") || !strcmp(argv[i], "-Y")) && i + 1 < argc) {
			mid = argv[i][1] == 'Y';
			bad = strtoull(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "-L") && i + 1 < argc)
			n_long = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "-r") && i + 1 < argc)
			seed = 2 * strtoull(argv[++i], NULL, 10) + 1;
		else
			return 2;
	}
	step = strtoull(argv[3], NULL, 10);
	if (!step || (none2 && !r2) || (mates && (r2 || strspn(mates, "012") != strlen(mates))))
		return 2;
	x = idx_open_or_die(argv[1], 0);
	rec_prov_init(&prov);
	rec_prov_add_pg(&prov, "extend_mkcands", SP_VERSION, argc, argv);
	if (!none) {
		rec_prov_set(&prov, REC_PROV_INDEX, name ? name : argv[1]);
		snprintf(buf, sizeof buf, "%016" PRIx64, x->fingerprint);
		rec_prov_set(&prov, REC_PROV_INDEX_FP, fp ? fp : buf);
	}
	if (r2 || paired)
		rec_prov_set(&prov, "seedfilt.paired", "files");
	w = rec_create_or_die("-", REC_KIND_CANDIDATES, &prov, 4096, 1);
	if (empty)
		rec_put(w, "", 0);
	in[0] = seqio_open_or_die(argv[2]);
	if (r2)
		in[1] = seqio_open_or_die(r2);
	seqio_rec_init(&s);
	while (seqio_read_or_die(in[mate], &s)) {
		rec_read_t rd;

		if (mate && none2)
			nc = 0;
		else if (seed && id < n_long)
			long_cands(x, &seed, id % 4 == 3, &c, &nc, &cap);
		else if (seed)
			random_cands(x, s.seq_len, &seed, &c, &nc, &cap);
		else
			every_diagonal(x, step, &c, &nc, &cap);
		rec_read_from_seq(&rd, id, &s);
		if (r2)
			rd.mate = (uint8_t)(mate + 1);
		else if (mates && id < strlen(mates))
			rd.mate = (uint8_t)(mates[id] - '0');
		id++;
		if (id > bad && nc) {    /* the last (middle) byte's varint made to run on */
			uint8_t *b = rec_begin(w, rec_cands_size(&rd, (uint32_t)nc));
			size_t h = rec_cands_encode(b, &rd, c, 0), len = rec_cands_encode(b, &rd, c,
					(uint32_t)nc), at = mid ? h + (len - h) / 2 : len - 1;
			while (at + 1 < len && b[at] & 0x80)
				at++;
			b[at] |= 0x80;
			rec_commit(w, len);
			bad = UINT64_MAX;
		} else {
			rec_put_cands(w, &rd, c, (uint32_t)nc);
		}
		if (r2)
			mate = !mate;
	}
	if (mate)
		sp_die("'%s' ends before '%s'", r2, argv[2]);
	rec_finish_or_die(w);
	seqio_close(in[0]);
	if (in[1])
		seqio_close(in[1]);
	seqio_rec_free(&s);
	free(c);
	rec_prov_free(&prov);
	idx_close(x);
	return 0;
}
