/*
 * ext_oracle.c - brute-force oracle for extend's hits: full dynamic
 * programming of every read (and its reverse complement) against every
 * whole reference sequence, no band, no bit vectors, no windows.
 *
 *   ext_oracle REF.fa READS A [-g]
 *
 * A is an edit count, or P% for P percent of each read's length, rounded
 * down (seedfilt -E P%, extend's bound from the stream).
 *
 * Edit mode: D[i][j] = least edits of read[0..i) against a suffix of
 * ref[0..j) (semi-global); the end positions j with D[m][j] <= A form
 * maximal runs (Rabema's loci), each reported at its least D, leftmost,
 * traced back choosing a diagonal move, then an insertion, then a deletion;
 * of loci traced back to the same first base only the least distance,
 * then the fewest CIGAR runs, then the leftmost end, is kept.
 * -g (no gaps): every diagonal with at most A mismatches.  N (and any
 * non-ACGT base) mismatches everything.  One line per hit, as the test
 * extracts from SAM:
 *
 *   NAME  STRAND(0|16)  SEQNAME  POS(1-based)  NM  CIGAR  MD
 *
 * and "NAME\t*" for a read without hits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seqio.h"
#include "util.h"

static int mis(char a, char b)
{
	return a != b || !strchr("ACGT", a);
}

/* Append the CIGAR op C (count 1) to the run-length list, built backwards. */
static void push(char *ops, int *n, char c)
{
	ops[(*n)++] = c;
}

static void emit(const char *name, int strand, const char *sname, const char *ref,
		long start, const char *rd, const char *ops, int nops, int dist)
{
	char cig[4096], md[4096];
	int i, co = 0, mo = 0, run = 0, k, rp = 0;
	long tp = start;
	char last = 0;
	int cnt = 0;

	/* ops are in forward order here */
	for (i = 0; i < nops; i++) {
		if (ops[i] != last && cnt) {
			co += sprintf(cig + co, "%d%c", cnt, last);
			cnt = 0;
		}
		last = ops[i];
		cnt++;
	}
	if (cnt)
		co += sprintf(cig + co, "%d%c", cnt, last);
	for (i = 0; i < nops;) {
		if (ops[i] == 'M') {
			char rb = ref[tp];
			if (!mis(rd[rp], rb)) {
				run++;
			} else {
				mo += sprintf(md + mo, "%d%c", run, strchr("ACGT", rb) ? rb : 'N');
				run = 0;
			}
			rp++;
			tp++;
			i++;
		} else if (ops[i] == 'I') {
			rp++;
			i++;
		} else {
			mo += sprintf(md + mo, "%d^", run);
			run = 0;
			for (k = i; k < nops && ops[k] == 'D'; k++) {
				char rb = ref[tp++];
				md[mo++] = strchr("ACGT", rb) ? rb : 'N';
			}
			i = k;
		}
	}
	mo += sprintf(md + mo, "%d", run);
	printf("%s\t%d\t%s\t%ld\t%d\t%s\t%s\n", name, strand ? 16 : 0, sname, start + 1, dist, cig, md);
}

int main(int argc, char **argv)
{
	seqio_reader_t *in;
	seq_rec_t s;
	char **names = NULL, **seqs = NULL;
	size_t *lens = NULL, nseq = 0, q;
	int a, a0, pct, nogaps;
	int *D = NULL;
	size_t dcap = 0, nloc = 0, loc_cap = 0;
	struct { long start, end; int d, nops, runs; char *ops; } *loc = NULL;

	sp_set_progname(argv[0]);
	if (argc < 4)
		return 2;
	a0 = atoi(argv[3]);
	pct = strchr(argv[3], '%') != NULL;
	nogaps = argc > 4 && !strcmp(argv[4], "-g");
	in = seqio_open_or_die(argv[1]);
	seqio_rec_init(&s);
	while (seqio_read_or_die(in, &s)) {
		names = sp_realloc(names, (nseq + 1) * sizeof(char *));
		seqs = sp_realloc(seqs, (nseq + 1) * sizeof(char *));
		lens = sp_realloc(lens, (nseq + 1) * sizeof(size_t));
		names[nseq] = sp_strdup(s.name);
		seqs[nseq] = sp_strdup(s.seq);
		lens[nseq] = s.seq_len;
		nseq++;
	}
	seqio_close(in);
	in = seqio_open_or_die(argv[2]);
	while (seqio_read_or_die(in, &s)) {
		long m = (long)s.seq_len, hits = 0;
		char *rc, *ops;
		int strand;

		a = pct ? (int)((long)a0 * m / 100) : a0;
		rc = sp_malloc(m + 1);
		ops = sp_malloc(2 * m + 2 * a + 8);

		seqio_revcomp(rc, s.seq, m);
		rc[m] = 0;
		for (strand = 0; strand < 2; strand++) {
			const char *rd = strand ? rc : s.seq;
			for (q = 0; q < nseq; q++) {
				long n = (long)lens[q], i, j;
				const char *t = seqs[q];
				if (nogaps) {
					for (j = 0; j + m <= n; j++) {
						int mm = 0;
						for (i = 0; i < m; i++)
							mm += mis(rd[i], t[j + i]);
						if (mm <= a) {
							int k;
							for (k = 0; k < m; k++)
								ops[k] = 'M';
							emit(s.name, strand, names[q], t, j, rd, ops, (int)m, mm);
							hits++;
						}
					}
					continue;
				}
				if ((size_t)(m + 1) * (n + 1) > dcap) {
					dcap = (size_t)(m + 1) * (n + 1);
					D = sp_realloc(D, dcap * sizeof(int));
				}
#define DD(i, j) D[(size_t)(i) * (n + 1) + (j)]
				for (j = 0; j <= n; j++)
					DD(0, j) = 0;
				for (i = 1; i <= m; i++) {
					DD(i, 0) = (int)i;
					for (j = 1; j <= n; j++) {
						int v = DD(i - 1, j - 1) + mis(rd[i - 1], t[j - 1]);
						if (DD(i - 1, j) + 1 < v)
							v = DD(i - 1, j) + 1;
						if (DD(i, j - 1) + 1 < v)
							v = DD(i, j - 1) + 1;
						DD(i, j) = v;
					}
				}
				nloc = 0;
				for (j = 1; j <= n;) {
					long bj, k;
					int bd, nops = 0;
					if (DD(m, j) > a) {
						j++;
						continue;
					}
					bj = j;
					bd = DD(m, j);
					for (; j <= n && DD(m, j) <= a; j++)
						if (DD(m, j) < bd) {
							bd = DD(m, j);
							bj = j;
						}
					/* traceback from (m, bj): M, then I, then D */
					i = m;
					k = bj;
					while (i > 0) {
						int v = DD(i, k);
						if (k > 0 && DD(i - 1, k - 1) + mis(rd[i - 1], t[k - 1]) == v) {
							push(ops, &nops, 'M');
							i--;
							k--;
						} else if (DD(i - 1, k) + 1 == v) {
							push(ops, &nops, 'I');
							i--;
						} else {
							push(ops, &nops, 'D');
							k--;
						}
					}
					for (i = 0; i < nops / 2; i++) {
						char c = ops[i];
						ops[i] = ops[nops - 1 - i];
						ops[nops - 1 - i] = c;
					}
					if (nloc == loc_cap) {
						loc_cap = loc_cap ? 2 * loc_cap : 64;
						loc = sp_realloc(loc, loc_cap * sizeof *loc);
					}
					loc[nloc].start = k;
					loc[nloc].end = bj;
					loc[nloc].d = bd;
					loc[nloc].nops = nops;
					loc[nloc].ops = sp_malloc(nops + 1);
					memcpy(loc[nloc].ops, ops, nops);
					loc[nloc].runs = 0;
					for (i = 0; i < nops; i++)
						loc[nloc].runs += i == 0 || ops[i] != ops[i - 1];
					nloc++;
				}
				for (i = 0; i < (long)nloc; i++) {
					size_t l2;
					int dup = 0;
					for (l2 = 0; l2 < nloc; l2++)
						if (loc[l2].start == loc[i].start && (loc[l2].d < loc[i].d
								|| (loc[l2].d == loc[i].d && (loc[l2].runs < loc[i].runs
								|| (loc[l2].runs == loc[i].runs
								&& loc[l2].end < loc[i].end)))))
							dup = 1;
					if (!dup) {
						emit(s.name, strand, names[q], t, loc[i].start, rd, loc[i].ops,
								loc[i].nops, loc[i].d);
						hits++;
					}
				}
				for (i = 0; i < (long)nloc; i++)
					free(loc[i].ops);
			}
		}
		if (!hits)
			printf("%s\t*\n", s.name);
		free(rc);
		free(ops);
	}
	seqio_close(in);
	seqio_rec_free(&s);
	for (q = 0; q < nseq; q++) {
		free(names[q]);
		free(seqs[q]);
	}
	free(names);
	free(seqs);
	free(lens);
	free(D);
	free(loc);
	return 0;
}
