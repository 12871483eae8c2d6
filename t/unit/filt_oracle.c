/*
 * filt_oracle.c - brute-force oracle for seedfilt (t2xxx tests): scan every
 * seed occurrence of the reference for every pattern of every read and
 * compare the neighborhood directly, by dynamic programming (bpr: substring
 * edit distance of the l - e first bases of q) or by Hamming distance (bs,
 * ph, fm).  An N matches no base (one error); a pattern is skipped when
 * its seed holds one (bpr: in its span; bs, ph, fm without -a: in a '#'
 * position, where an error kills it).
 * Shares no code with common/filt*.c, bpr.c or degen.c.
 *
 * Usage: filt_oracle -S SHAPE -l L -e E -s STEP -M bpr|ham [-A]
 *                    [-P BEG-END,BEG-END,...] REF.fa READS.fa
 *        (-A: seedfilt -a, the E substitutions anywhere in the window: the
 *        '#' positions of the seed and q compared together by Hamming
 *        distance, '-' positions ignored)
 *        filt_oracle -G SEED NSEQ LEN          random reference with N runs
 *        filt_oracle -R SEED N LEN REF.fa       reads: sampled with errors,
 *                                               both strands, some with N,
 *                                               some random, some short
 *        filt_oracle -K SEED N LEN K s|e REF.fa reads with exactly K
 *                    substitutions (s) or K edit operations (e), named
 *                    rI:SEQ:POS:STRAND (the true occurrence)
 * Output: one line per candidate, sorted:
 *     READ_INDEX \t SEQ_ID \t GLOBAL_DIAGONAL \t +|- \t SUPPORT
 * Diagonal = window position - pattern offset, clamped to the start of the
 * window's sequence and of its partition (-P, as seqidx --info prints).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

typedef struct { char *name; char *s; size_t n; } fa_t;

static fa_t *read_fa(const char *path, size_t *nrec)
{
	FILE *fp = fopen(path, "r");
	char line[1 << 16];
	fa_t *r = NULL;
	size_t n = 0, cap = 0;

	if (!fp) {
		perror(path);
		exit(2);
	}
	while (fgets(line, sizeof line, fp)) {
		size_t l = strcspn(line, "\r\n"), i;

		line[l] = 0;
		if (line[0] == '>') {
			if (n == cap) {
				cap = cap ? cap * 2 : 16;
				r = realloc(r, cap * sizeof *r);
			}
			r[n].name = strdup(line + 1);
			r[n].s = calloc(1, 1);
			r[n].n = 0;
			n++;
			continue;
		}
		if (!n)
			continue;
		r[n - 1].s = realloc(r[n - 1].s, r[n - 1].n + l + 1);
		for (i = 0; i < l; i++) {
			char c = line[i] & ~0x20;

			r[n - 1].s[r[n - 1].n++] = c == 'A' || c == 'C' || c == 'G' || c == 'T' ? c : 'N';
		}
		r[n - 1].s[r[n - 1].n] = 0;
	}
	fclose(fp);
	*nrec = n;
	return r;
}

static void free_fa(fa_t *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(r[i].name);
		free(r[i].s);
	}
	free(r);
}

static char comp(char c)
{
	return c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : c == 'T' ? 'A' : 'N';
}

/* min over substrings of t (length l) of the edit distance to q (length v) */
static int sub_dist(const char *q, int v, const char *t, int l)
{
	int d[40][40], i, j, best = 1 << 20;

	for (i = 0; i <= v; i++)
		d[i][0] = i;
	for (j = 0; j <= l; j++)
		d[0][j] = 0;
	for (j = 1; j <= l; j++)
		for (i = 1; i <= v; i++) {
			int a = d[i - 1][j - 1] + (q[i - 1] != t[j - 1]);
			int b = d[i - 1][j] + 1, c = d[i][j - 1] + 1;

			d[i][j] = a < b ? (a < c ? a : c) : (b < c ? b : c);
		}
	for (j = 0; j <= l; j++)
		if (d[v][j] < best)
			best = d[v][j];
	return best;
}

typedef struct { long read, seq, diag; int strand; long sup; } cand_t;

static uint64_t rng;

static uint64_t rnd(void);

/*
 * Reads of LEN bases with exactly K errors: substitutions only, or a mix
 * of substitutions, insertions and deletions (EDITS); the error positions
 * are random, or evenly spread, or packed at the start or the end (the
 * shapes that hurt a q-gram filter most).
 */
static int gen_k(uint64_t seed, int n, int len, int k, int edits, const char *path)
{
	size_t nref, s;
	fa_t *ref = read_fa(path, &nref);
	int r;

	rng = seed * 0x9e3779b97f4a7c15ULL + 3;
	for (r = 0; r < n; r++) {
		char buf[8192], t[8192];
		int m, j, placed = 0, pos_at[64], shape = r % 4, strand = (int)(rnd() & 1);
		long p;
		fa_t *f;

		do {
			s = rnd() % nref;
			f = &ref[s];
		} while (f->n < (size_t)len + (size_t)k + 8);
		/* an N-free stretch */
		for (;;) {
			p = (long)(rnd() % (f->n - (size_t)len - (size_t)k - 4));
			for (j = 0; j < len + k && f->s[p + j] != 'N'; j++)
				;
			if (j == len + k)
				break;
		}
		memcpy(buf, f->s + p, (size_t)(len + k));
		m = len + k;
		for (j = 0; j < k; j++) {
			int at;

			if (shape == 0)
				at = (int)(rnd() % (uint64_t)len);
			else if (shape == 1)
				at = (int)((long)(j + 1) * len / (k + 1));
			else if (shape == 2)
				at = j * 2;
			else
				at = len - 1 - j * 2;
			if (at < 0)
				at = 0;
			if (at >= len)
				at = len - 1;
			pos_at[placed++] = at;
		}
		/* apply from the right so earlier positions stay valid */
		for (j = placed - 1; j >= 0; j--) {
			int at = pos_at[j], op = edits ? (int)(rnd() % 3) : 0;

			if (op == 0) {
				buf[at] = "ACGT"[(strchr("ACGT", buf[at]) - "ACGT" + 1 + (int)(rnd() % 3)) & 3];
			} else if (op == 1) {
				memmove(buf + at, buf + at + 1, (size_t)(m - at - 1));
				m--;
			} else {
				memmove(buf + at + 1, buf + at, (size_t)(m - at - 1));
				buf[at] = "ACGT"[rnd() & 3];
			}
		}
		if (strand) {
			for (j = 0; j < len; j++)
				t[j] = comp(buf[len - 1 - j]);
			memcpy(buf, t, (size_t)len);
		}
		buf[len] = 0;
		printf(">r%d:%zu:%ld:%c\n%s\n", r, s, p, strand ? '-' : '+', buf);
	}
	free_fa(ref, nref);
	return 0;
}

static uint64_t rnd(void)
{
	return tu_xorshift64(&rng);
}

static int gen_ref(uint64_t seed, int nseq, long len)
{
	int s;

	rng = seed * 0x9e3779b97f4a7c15ULL + 1;
	for (s = 0; s < nseq; s++) {
		long n = len / 2 + (long)(rnd() % (uint64_t)len), i, col = 0;

		printf(">s%d\n", s);
		for (i = 0; i < n; i++) {
			/* N runs, and a low-complexity stretch now and then */
			if (rnd() % 700 == 0) {
				long k = 1 + (long)(rnd() % 12);

				for (; k > 0 && i < n; k--, i++) {
					putchar('N');
					if (++col == 60) { putchar('\n'); col = 0; }
				}
				if (i >= n)
					break;
			}
			putchar("ACGT"[(i / 7) % 97 == 3 ? (i & 1) : rnd() & 3]);
			if (++col == 60) { putchar('\n'); col = 0; }
		}
		if (col)
			putchar('\n');
	}
	return 0;
}

static int gen_reads(uint64_t seed, int n, int len, const char *path)
{
	size_t nref;
	fa_t *ref = read_fa(path, &nref);
	int r;

	rng = seed * 0x2545f4914f6cdd1dULL + 7;
	for (r = 0; r < n; r++) {
		int kind = (int)(rnd() % 10), m = len, k, j;
		char buf[4096];
		fa_t *f = &ref[rnd() % nref];
		long p;

		if (kind == 0)
			m = 1 + (int)(rnd() % 20);          /* short */
		if ((size_t)m + 8 > f->n || kind == 1) { /* random */
			for (j = 0; j < m; j++)
				buf[j] = "ACGT"[rnd() & 3];
		} else {
			p = (long)(rnd() % (f->n - (size_t)m - 4));
			memcpy(buf, f->s + p, (size_t)m + 4);
			for (k = (int)(rnd() % 4); k > 0; k--) {
				int op = (int)(rnd() % 3), at = (int)(rnd() % (uint64_t)m);

				if (op == 0)
					buf[at] = "ACGT"[rnd() & 3];
				else if (op == 1)
					memmove(buf + at, buf + at + 1, (size_t)(m + 3 - at));
				else {
					memmove(buf + at + 1, buf + at, (size_t)(m + 3 - at));
					buf[at] = "ACGT"[rnd() & 3];
				}
			}
			if (kind == 2)
				buf[rnd() % (uint64_t)m] = 'N';
			if (rnd() & 1) {
				char t[4096];

				for (j = 0; j < m; j++)
					t[j] = comp(buf[m - 1 - j]);
				memcpy(buf, t, (size_t)m);
			}
		}
		buf[m] = 0;
		if (kind == 3)
			for (j = 0; j < m; j++)
				buf[j] = (char)(buf[j] | 0x20);   /* lower case */
		printf(">r%d\n%s\n", r, buf);
	}
	free_fa(ref, nref);
	return 0;
}

static int cmp_cand(const void *pa, const void *pb)
{
	const cand_t *a = pa, *b = pb;

	if (a->read != b->read) return a->read < b->read ? -1 : 1;
	if (a->seq != b->seq) return a->seq < b->seq ? -1 : 1;
	if (a->diag != b->diag) return a->diag < b->diag ? -1 : 1;
	return a->strand - b->strand;
}

int main(int argc, char **argv)
{
	const char *shape = NULL, *parts = NULL;
	int l = 16, e = 1, step = 1, bpr = 0, any = 0, c, span, v;
	size_t nref, nrd, i, ncand = 0, cap = 0;
	long *pbeg = NULL, *pend = NULL, np = 0, *off;
	fa_t *ref, *rd;
	cand_t *cd = NULL;
	char *g;
	long total = 0;

	if (argc == 5 && strcmp(argv[1], "-G") == 0)
		return gen_ref(strtoull(argv[2], NULL, 10), atoi(argv[3]), atol(argv[4]));
	if (argc == 8 && strcmp(argv[1], "-K") == 0)
		return gen_k(strtoull(argv[2], NULL, 10), atoi(argv[3]), atoi(argv[4]),
				atoi(argv[5]), argv[6][0] == 'e', argv[7]);
	if (argc == 6 && strcmp(argv[1], "-R") == 0)
		return gen_reads(strtoull(argv[2], NULL, 10), atoi(argv[3]), atoi(argv[4]), argv[5]);
	while ((c = getopt(argc, argv, "S:l:e:s:M:P:A")) != -1) {
		switch (c) {
		case 'S': shape = optarg; break;
		case 'l': l = atoi(optarg); break;
		case 'e': e = atoi(optarg); break;
		case 's': step = atoi(optarg); break;
		case 'M': bpr = strcmp(optarg, "bpr") == 0; break;
		case 'P': parts = optarg; break;
		case 'A': any = 1; break;
		default: return 2;
		}
	}
	if (!shape || optind + 2 != argc) {
		fprintf(stderr, "usage: filt_oracle -S SHAPE -l L -e E -s STEP -M bpr|ham "
				"[-P BEG-END,...] REF.fa READS.fa\n");
		return 2;
	}
	span = (int)strlen(shape);
	v = bpr ? l - e : l;
	ref = read_fa(argv[optind], &nref);
	rd = read_fa(argv[optind + 1], &nrd);
	off = calloc(nref + 1, sizeof *off);
	for (i = 0; i < nref; i++)
		off[i + 1] = off[i] + (long)ref[i].n;
	total = off[nref];
	g = malloc((size_t)total + 1);
	for (i = 0; i < nref; i++)
		memcpy(g + off[i], ref[i].s, ref[i].n);
	if (parts) {
		const char *p = parts;

		while (*p) {
			pbeg = realloc(pbeg, (size_t)(np + 1) * sizeof *pbeg);
			pend = realloc(pend, (size_t)(np + 1) * sizeof *pend);
			pbeg[np] = strtol(p, (char **)&p, 10);
			p++;
			pend[np] = strtol(p, (char **)&p, 10);
			np++;
			if (*p == ',')
				p++;
		}
	} else {
		pbeg = malloc(sizeof *pbeg);
		pend = malloc(sizeof *pend);
		pbeg[0] = 0;
		pend[0] = total;
		np = 1;
	}
	for (i = 0; i < nrd; i++) {
		char *s[2];
		size_t n = rd[i].n, k;
		int strand;

		s[0] = rd[i].s;
		s[1] = malloc(n + 1);
		for (k = 0; k < n; k++)
			s[1][k] = comp(s[0][n - 1 - k]);
		for (strand = 0; strand < 2; strand++) {
			long o;

			for (o = 0; o + span + v <= (long)n; o += step) {
				const char *pt = s[strand] + o;
				long sq, gg;
				int j, bad = 0;

				/* an N matches no base (t holds no N): bpr skips a pattern
				 * with N in its seed span, bs, ph and fm (-a aside) one with
				 * N in the seed's '#' positions, where an error kills it; an
				 * N elsewhere is one mismatch */
				for (j = 0; j < span && !(any && !bpr); j++)
					bad |= pt[j] == 'N' && (bpr || shape[j] == '#');
				if (bad)
					continue;
				for (sq = 0; sq < (long)nref; sq++) {
					for (gg = off[sq]; gg + span <= off[sq + 1]; gg++) {
						const char *t = g + gg;
						char nb[64];
						long pp, st, diag;
						int ok = 1, d = 0;

						/* a window (bpr): the seed span in the sequence,
						 * free of N; its neighborhood's bases past the
						 * sequence's end or on N read as A */
						for (j = 0; j < span && ok; j++)
							ok = t[j] != 'N';
						/* bs, ph and fm: whole windows only (their
						 * patterns are: the others hold no read's) */
						for (j = span; j < span + l && ok && !bpr; j++)
							ok = gg + j < off[sq + 1] && t[j] != 'N';
						for (j = 0; j < l; j++)
							nb[j] = gg + span + j >= off[sq + 1] || t[span + j] == 'N'
								? 'A' : t[span + j];
						for (j = 0; j < span && ok; j++) {
							if (shape[j] == '-' || t[j] == pt[j])
								continue;
							if (any)
								d++;   /* counted with q's below */
							else
								ok = 0;
						}
						if (!ok)
							continue;
						if (bpr) {
							d = sub_dist(pt + span, v, nb, l);
						} else {
							for (j = 0; j < l; j++)
								d += nb[j] != pt[span + j];
						}
						if (d > e)
							continue;
						/* the window's partition: the first whose starts
						 * it is among, those before the next partition's
						 * beginning (where the next one cuts the sequence
						 * with an overlap) */
						for (pp = 0; pp < np; pp++)
							if (gg >= pbeg[pp] && gg + span <= pend[pp]
									&& (pp + 1 == np || pbeg[pp + 1] >= pend[pp]
										|| gg < pbeg[pp + 1]))
								break;
						if (pp == np) {
							fprintf(stderr, "filt_oracle: window %ld in no partition\n", gg);
							return 1;
						}
						st = off[sq] > pbeg[pp] ? off[sq] : pbeg[pp];
						diag = gg - o >= st ? gg - o : st;
						if (ncand == cap) {
							cap = cap ? cap * 2 : 1024;
							cd = realloc(cd, cap * sizeof *cd);
						}
						cd[ncand].read = (long)i;
						cd[ncand].seq = sq;
						cd[ncand].diag = diag;
						cd[ncand].strand = strand;
						cd[ncand].sup = 1;
						ncand++;
					}
				}
			}
		}
		free(s[1]);
	}
	qsort(cd, ncand, sizeof *cd, cmp_cand);
	for (i = 0; i < ncand;) {
		size_t k = i + 1;

		while (k < ncand && cmp_cand(&cd[i], &cd[k]) == 0)
			k++;
		printf("%ld\t%ld\t%ld\t%c\t%zu\n", cd[i].read, cd[i].seq, cd[i].diag,
				cd[i].strand ? '-' : '+', k - i);
		i = k;
	}
	free_fa(ref, nref);
	free_fa(rd, nrd);
	free(off);
	free(g);
	free(cd);
	free(pbeg);
	free(pend);
	return 0;
}
