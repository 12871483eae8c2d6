/*
 * mem_oracle.c - brute-force oracle for seedfilt -m mem (t6xxx tests): every
 * diagonal of every read strand against the text "seq1 $ seq2 $ ... seqN"
 * is walked letter by letter, and each run of at least L equal letters is
 * a maximal match.  Letters compare as MUMmer compares them: N matches N
 * (-n: N matches nothing), '$' matches nothing.  -mumreference keeps the
 * matches whose string occurs once in the text, -mum those that also occur
 * once in the read strand (both counted by naive search).  Order: by read
 * start, then by the text's suffix at the match (A < C < G < N < T < $ <
 * end), or by text position for -mum.  Output: MUMmer's lines
 * (mummer -b -c).  Shares no code with common/mem*.c.
 *
 * Usage: mem_oracle [-l L] [-maxmatch|-mumreference|-mum] [-b|-r|--forward]
 *                   [-n] [-F] REF.fa READS.fa
 *        mem_oracle -G SEED NSEQ LEN [LETTERS]  random reference over
 *                                         LETTERS [ACGT]: repeats (exact and
 *                                         mutated copies, a tandem run), N
 *                                         runs, a short sequence
 *        mem_oracle -R SEED N LEN REF.fa  reads: sampled from either strand
 *                                         with substitutions, some with N
 *                                         (single or runs), some random,
 *                                         some short, some empty
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

typedef struct { char *name; char *s; size_t n; } fa_t;

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		fprintf(stderr, "mem_oracle: out of memory\n");
		exit(2);
	}
	return p;
}

/* FASTA; names cut at blanks, letters other than ACGT read as N. */
static fa_t *read_fa(const char *path, size_t *nrec)
{
	FILE *fp = fopen(path, "r");
	char *line = NULL;
	size_t lcap = 0, n = 0, cap = 0;
	ssize_t len;
	fa_t *r = NULL;

	if (!fp) {
		perror(path);
		exit(2);
	}
	while ((len = getline(&line, &lcap, fp)) >= 0) {
		size_t l = strcspn(line, "\r\n"), i, k;

		line[l] = 0;
		if (line[0] == '>') {
			if (n == cap) {
				cap = cap ? cap * 2 : 16;
				r = xrealloc(r, cap * sizeof *r);
			}
			r[n].name = strdup(line + 1);
			r[n].name[strcspn(r[n].name, " \t")] = 0;
			r[n].s = calloc(1, 1);
			r[n].n = 0;
			n++;
			continue;
		}
		if (!n)
			continue;
		r[n - 1].s = xrealloc(r[n - 1].s, r[n - 1].n + l + 1);
		for (i = 0, k = r[n - 1].n; i < l; i++) {
			char c = line[i];

			if (c == ' ' || c == '\t')
				continue;
			if (c >= 'a' && c <= 'z')
				c = (char)(c - 32);
			if (c != 'A' && c != 'C' && c != 'G' && c != 'T')
				c = 'N';
			r[n - 1].s[k++] = c;
		}
		r[n - 1].n = k;
		r[n - 1].s[k] = 0;
	}
	free(line);
	fclose(fp);
	*nrec = n;
	return r;
}

typedef struct { size_t i, p, len; } mm_t;

static const char *text;
static size_t text_n;

static int rank_at(size_t p)
{
	if (p >= text_n)
		return 6;
	switch (text[p]) {
	case 'A': return 0;
	case 'C': return 1;
	case 'G': return 2;
	case 'N': return 3;
	case 'T': return 4;
	default: return 5;
	}
}

static int cmp_suffix(size_t a, size_t b)
{
	for (;; a++, b++) {
		int x = rank_at(a), y = rank_at(b);

		if (x != y)
			return x < y ? -1 : 1;
		if (x == 6)
			return 0;
	}
}

static int cmp_query(const void *va, const void *vb)
{
	const mm_t *a = va, *b = vb;

	if (a->i != b->i)
		return a->i < b->i ? -1 : 1;
	return cmp_suffix(a->p, b->p);
}

static int cmp_text(const void *va, const void *vb)
{
	const mm_t *a = va, *b = vb;

	return a->p < b->p ? -1 : a->p > b->p;
}

static size_t count_occ(const char *hay, size_t hn, const char *s, size_t n)
{
	size_t k, c = 0;

	for (k = 0; k + n <= hn; k++)
		c += memcmp(hay + k, s, n) == 0;
	return c;
}

static int eq(char a, char b, int acgt)
{
	return a == b && a != '$' && !(acgt && a == 'N');
}

/* Matches of strand Q (M letters) into *OUT; returns the count. */
static size_t find(const char *q, size_t m, size_t L, int mode, int acgt, mm_t **out, size_t *cap)
{
	size_t n = 0, k;
	long d;

	for (d = -(long)m + 1; d < (long)text_n; d++) {
		size_t i = d < 0 ? (size_t)-d : 0, run = 0;

		for (;; i++) {
			size_t p = (size_t)((long)i + d);
			int ok = i < m && p < text_n && eq(q[i], text[p], acgt);

			if (ok) {
				run++;
				continue;
			}
			if (run >= L) {
				if (n == *cap) {
					*cap = *cap ? 2 * *cap : 64;
					*out = xrealloc(*out, *cap * sizeof **out);
				}
				(*out)[n].i = i - run;
				(*out)[n].p = p - run;
				(*out)[n].len = run;
				n++;
			}
			run = 0;
			if (i >= m || p >= text_n)
				break;
		}
	}
	if (mode) {             /* unique in the text (and in the strand for -mum) */
		size_t o = 0;

		for (k = 0; k < n; k++) {
			const mm_t *x = &(*out)[k];

			if (count_occ(text, text_n, q + x->i, x->len) != 1)
				continue;
			if (mode == 2 && count_occ(q, m, q + x->i, x->len) != 1)
				continue;
			(*out)[o++] = *x;
		}
		n = o;
	}
	if (n)   /* *out may be NULL */
		qsort(*out, n, sizeof **out, mode == 2 ? cmp_text : cmp_query);
	return n;
}

static char comp(char c)
{
	return c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : c == 'T' ? 'A' : 'N';
}

/* ---- generators ------------------------------------------------------------- */

static uint64_t rs;
static const char *letters = "ACGT";

static size_t rnd(size_t n) { return (size_t)(tu_xorshift64(&rs) % n); }
static char rbase(void) { return letters[rnd(strlen(letters))]; }

static void gen_ref(size_t nseq, size_t len)
{
	size_t s, i, k;

	for (s = 0; s < nseq; s++) {
		size_t n = s + 1 == nseq && nseq > 1 ? 40 + rnd(40) : len / 2 + rnd(len);
		char *q = malloc(n + 1);

		for (i = 0; i < n; i++)
			q[i] = rbase();
		for (k = 0; k < 4 && n > 400; k++) {       /* copies, some mutated */
			size_t a = rnd(n - 200), b = rnd(n - 200), l = 50 + rnd(150), j;

			memmove(q + b, q + a, l);
			for (j = 0; j < k; j++)
				q[b + rnd(l)] = rbase();
		}
		if (n > 300) {                               /* a tandem run */
			size_t a = rnd(n - 120), per = 1 + rnd(4);

			for (i = per; i < 100; i++)
				q[a + i] = q[a + i - per];
		}
		for (k = 0; k < 3 && n > 100; k++) {       /* N runs */
			size_t a = rnd(n - 20), l = 1 + rnd(12);

			for (i = 0; i < l; i++)
				q[a + i] = 'N';
		}
		q[n] = 0;
		printf(">s%zu comment %zu\n", s, s);
		for (i = 0; i < n; i += 60)
			printf("%.60s\n", q + i);
		free(q);
	}
}

static void gen_reads(size_t nr, size_t len, const char *ref)
{
	size_t nref, r, i;
	fa_t *f = read_fa(ref, &nref);
	char *q = malloc(len + 1), *t = malloc(len + 1);

	for (r = 0; r < nr; r++) {
		size_t m = len, kind = rnd(20);
		const fa_t *s = &f[rnd(nref)];

		if (kind == 0)
			m = rnd(len / 2 + 1);
		if (kind == 1 || s->n < m) {
			for (i = 0; i < m; i++)
				q[i] = rbase();
		} else {
			size_t p = rnd(s->n - m + 1), e = rnd(4);

			memcpy(q, s->s + p, m);
			for (i = 0; m && i < e; i++)   /* m 0: an empty read */
				q[rnd(m)] = rbase();
		}
		if (kind == 2 && m > 5)
			q[rnd(m)] = 'N';
		if (kind == 3 && m > 10) {
			size_t a = rnd(m - 5);

			memset(q + a, 'N', 5);
		}
		q[m] = 0;
		if (rnd(2)) {
			for (i = 0; i < m; i++)
				t[i] = comp(q[m - 1 - i]);
			memcpy(q, t, m);
		}
		printf(">r%zu x\n%s\n", r, q);
	}
	free(q);
	free(t);
	for (r = 0; r < nref; r++) {
		free(f[r].name);
		free(f[r].s);
	}
	free(f);
}

int main(int argc, char **argv)
{
	size_t L = 20, nref, nq, k, cap = 0, wmax = 0, tot = 0;
	int mode = 0, strands = 3, acgt = 0, four = 0, a;
	fa_t *ref, *qs;
	mm_t *mm = NULL;
	size_t *start;
	char *rc = NULL;

	if ((argc == 5 || argc == 6) && strcmp(argv[1], "-G") == 0) {
		rs = strtoull(argv[2], NULL, 10) * 2654435761u + 1;
		if (argc == 6)
			letters = argv[5];
		gen_ref(strtoul(argv[3], NULL, 10), strtoul(argv[4], NULL, 10));
		return 0;
	}
	if (argc == 6 && strcmp(argv[1], "-R") == 0) {
		rs = strtoull(argv[2], NULL, 10) * 2654435761u + 7;
		gen_reads(strtoul(argv[3], NULL, 10), strtoul(argv[4], NULL, 10), argv[5]);
		return 0;
	}
	for (a = 1; a < argc - 2; a++) {
		if (strcmp(argv[a], "-l") == 0 && a + 1 < argc - 2)
			L = strtoul(argv[++a], NULL, 10);
		else if (strcmp(argv[a], "-maxmatch") == 0)
			mode = 0;
		else if (strcmp(argv[a], "-mumreference") == 0)
			mode = 1;
		else if (strcmp(argv[a], "-mum") == 0)
			mode = 2;
		else if (strcmp(argv[a], "-b") == 0)
			strands = 3;
		else if (strcmp(argv[a], "-r") == 0)
			strands = 2;
		else if (strcmp(argv[a], "--forward") == 0)
			strands = 1;
		else if (strcmp(argv[a], "-n") == 0)
			acgt = 1;
		else if (strcmp(argv[a], "-F") == 0)
			four = 1;
		else {
			fprintf(stderr, "mem_oracle: bad option '%s'\n", argv[a]);
			return 2;
		}
	}
	if (a != argc - 2) {
		fprintf(stderr, "usage: mem_oracle [options] REF.fa READS.fa\n");
		return 2;
	}
	ref = read_fa(argv[a], &nref);
	qs = read_fa(argv[a + 1], &nq);
	start = malloc((nref + 1) * sizeof *start);
	for (k = 0; k < nref; k++) {
		start[k] = tot;
		tot += ref[k].n + 1;
		if (strlen(ref[k].name) > wmax)
			wmax = strlen(ref[k].name);
	}
	start[nref] = tot;
	{
		char *t = malloc(tot + 1);

		for (k = 0; k < nref; k++) {
			memcpy(t + start[k], ref[k].s, ref[k].n);
			t[start[k] + ref[k].n] = '$';
		}
		text = t;
		text_n = tot ? tot - 1 : 0;   /* no separator after the last sequence */
	}
	for (k = 0; k < nq; k++) {
		int s;

		rc = xrealloc(rc, qs[k].n + 1);
		for (a = 0; a < (int)qs[k].n; a++)
			rc[a] = comp(qs[k].s[qs[k].n - 1 - (size_t)a]);
		for (s = 0; s < 2; s++) {
			size_t n, j;

			if (!(strands & (1 << s)))
				continue;
			printf("> %s%s\n", qs[k].name, s ? " Reverse" : "");
			n = find(s ? rc : qs[k].s, qs[k].n, L, mode, acgt, &mm, &cap);
			for (j = 0; j < n; j++) {
				size_t sq = 0, qp = s ? qs[k].n - mm[j].i : mm[j].i + 1;

				while (start[sq + 1] <= mm[j].p)
					sq++;
				if (nref > 1 || four)
					printf("  %-*s  %8zu  %8zu  %8zu\n", (int)wmax, ref[sq].name,
							mm[j].p - start[sq] + 1, qp, mm[j].len);
				else
					printf("%8zu  %8zu  %8zu\n", mm[j].p - start[sq] + 1, qp, mm[j].len);
			}
		}
	}
	return 0;
}
