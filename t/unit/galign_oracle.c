/*
 * galign_oracle.c - what extend --global must print, computed the slow way
 * (galign_oracle.h: the full DP matrix and the tie rule), for the t70xx
 * tests; and a generator of test families.
 *
 *   galign_oracle [--score M,X,G] [--identity P] [--pairs FILE] A.fa [B.fa]
 *       the TSV of extend --global with the same arguments (all against
 *       all of A, A against B, or the pairs of FILE)
 *   galign_oracle --gen N LEN MUT SEED
 *       a FASTA family: a random root of LEN bases, then N - 1 copies, each
 *       of a random earlier one with MUT percent of its bases changed
 *       (substitutions, insertions, deletions of 1 to 3 bases), now and then
 *       a random sequence, an N, or an empty sequence
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "galign_oracle.h"
#include "rec_kinds.h"
#include "seqio.h"
#include "testutil.h"
#include "util.h"

typedef struct {
	size_t n;
	char **name;
	uint8_t **code;
	uint32_t *len;
} set_t;

static void load(set_t *s, const char *path)
{
	seqio_reader_t *r = seqio_open_or_die(path);
	seq_rec_t rec;
	size_t i;

	memset(s, 0, sizeof *s);
	seqio_rec_init(&rec);
	while (seqio_read_or_die(r, &rec)) {
		s->name = realloc(s->name, (s->n + 1) * sizeof *s->name);
		s->code = realloc(s->code, (s->n + 1) * sizeof *s->code);
		s->len = realloc(s->len, (s->n + 1) * sizeof *s->len);
		s->name[s->n] = strdup(rec.name);
		s->code[s->n] = malloc(rec.seq_len + 1);
		for (i = 0; i < rec.seq_len; i++) {
			char c = rec.seq[i];
			s->code[s->n][i] = c == 'A' ? 0 : c == 'C' ? 1 : c == 'G' ? 2 : c == 'T' ? 3 : 4;
		}
		s->len[s->n++] = (uint32_t)rec.seq_len;
	}
	seqio_rec_free(&rec);
	seqio_close(r);
}

static void unload(set_t *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		free(s->name[i]);
		free(s->code[i]);
	}
	free(s->name);
	free(s->code);
	free(s->len);
}

static long find(const set_t *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->name[i], name))
			return (long)i;
	fprintf(stderr, "galign_oracle: no sequence '%s'\n", name);
	exit(1);
}

static int ma = 0, mi = -1, g = -1;
static uint64_t ident;   /* millionths */

static void one(const set_t *a, size_t qi, const set_t *b, size_t ti)
{
	oracle_t o;
	rec_pair_t p;
	uint64_t cols;

	oracle(a->code[qi], a->len[qi], b->code[ti], b->len[ti], ma, mi, g, &o);
	cols = (uint64_t)o.matches + o.mismatches + o.ins + o.del;
	if ((uint64_t)o.matches * 1000000 >= ident * cols) {
		p.qid = qi;
		p.tid = ti;
		p.qlen = a->len[qi];
		p.tlen = b->len[ti];
		p.score = o.score;
		p.matches = o.matches;
		p.mismatches = o.mismatches;
		p.ins = o.ins;
		p.del = o.del;
		p.qname = a->name[qi];
		p.qname_len = (uint32_t)strlen(a->name[qi]);
		p.tname = b->name[ti];
		p.tname_len = (uint32_t)strlen(b->name[ti]);
		p.cigar = o.cigar;
		p.cigar_len = (uint32_t)strlen(o.cigar);
		rec_pair_tsv(&p, stdout);
	}
	oracle_free(&o);
}

static void gen(int n, int len, int mut, uint64_t seed)
{
	uint8_t **s = malloc((size_t)n * sizeof *s);
	int *l = malloc((size_t)n * sizeof *l), k, i;
	uint64_t st = seed * 2654435761u + 12345;

#define R(x) ((int)(tu_xorshift64(&st) % (uint64_t)(x)))
	for (k = 0; k < n; k++) {
		int src = k ? R(k) : -1, kind = R(40), o = 0;

		s[k] = malloc((size_t)len * 3 + 8);
		if (k == 0 || kind == 0) {
			for (o = 0; o < (k ? 1 + R(len * 2) : len); o++)
				s[k][o] = (uint8_t)R(4);
		} else if (kind == 1) {
			o = 0;
		} else {
			for (i = 0; i < l[src] && o < len * 3; i++) {
				if (R(100) < mut) {
					int e = R(3), c;
					if (e == 0)
						s[k][o++] = (uint8_t)R(4);
					else if (e == 1)
						i += R(3);
					else
						for (c = 1 + R(3), s[k][o++] = s[src][i]; c > 0 && o < len * 3; c--)
							s[k][o++] = (uint8_t)R(4);
				} else {
					s[k][o++] = R(300) ? s[src][i] : 4;
				}
			}
		}
		l[k] = o;
		printf(">s%d src=%d\n", k, src);
		for (i = 0; i < o; i++)
			putchar("ACGTN"[s[k][i]]);
		putchar('\n');
	}
#undef R
	for (k = 0; k < n; k++)
		free(s[k]);
	free(s);
	free(l);
}

int main(int argc, char **argv)
{
	const char *pairs = NULL;
	set_t a, b;
	int i = 1, two;
	size_t q, t;

	sp_set_progname(argv[0]);
	if (argc == 6 && !strcmp(argv[1], "--gen")) {
		gen(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), strtoull(argv[5], NULL, 10));
		return 0;
	}
	for (; i + 1 < argc && argv[i][0] == '-' && argv[i][1] == '-'; i += 2) {
		if (!strcmp(argv[i], "--score")) {
			if (sscanf(argv[i + 1], "%d,%d,%d", &ma, &mi, &g) != 3)
				return 2;
		} else if (!strcmp(argv[i], "--identity")) {
			ident = (uint64_t)(atof(argv[i + 1]) * 10000 + 0.5);
		} else if (!strcmp(argv[i], "--pairs")) {
			pairs = argv[i + 1];
		} else {
			fprintf(stderr, "usage: galign_oracle [--score M,X,G] [--identity P] [--pairs F] "
					"A.fa [B.fa] | --gen N LEN MUT SEED\n");
			return 2;
		}
	}
	if (i >= argc)
		return 2;
	load(&a, argv[i]);
	two = i + 1 < argc;
	if (two)
		load(&b, argv[i + 1]);
	rec_tsv_header(REC_KIND_PAIRS, stdout);
	if (pairs) {
		FILE *f = fopen(pairs, "r");
		char line[600], qn[256], tn[256];

		if (!f)
			return 1;
		while (fgets(line, sizeof line, f))
			if (line[0] != '#' && sscanf(line, "%255s %255s", qn, tn) == 2)
				one(&a, (size_t)find(&a, qn), two ? &b : &a, (size_t)find(two ? &b : &a, tn));
		fclose(f);
	} else if (two) {
		for (q = 0; q < a.n; q++)
			for (t = 0; t < b.n; t++)
				one(&a, q, &b, t);
	} else {
		for (q = 0; q < a.n; q++)
			for (t = q + 1; t < a.n; t++)
				one(&a, q, &a, t);
	}
	unload(&a);
	if (two)
		unload(&b);
	return 0;
}
