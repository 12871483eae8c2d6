/*
 * rrnafam.c - a 16S-like sequence family for bench/global.sh (built by
 * bench/datasets.sh family16s): the 16S rRNA genes of a genome's rRNA
 * operons, then mutated copies along a random tree.
 *
 *   rrnafam GENOME.fa N SEED > family.fa
 *
 * 1. The 16S genes: every occurrence, on either strand, of the universal
 *    primer site AGAGTTTGATCMTGGCTCAG (27F, M = A or C) followed 1300 to 1800
 *    bases later by the gene's conserved 3' end GGATCACCTCCTTA; the copy runs
 *    from the primer to that end (about 1535 bases; E. coli 536 has 7).
 * 2. The tree: the copies are the first members; each further member is a
 *    mutated copy of a member drawn uniformly among those made so far (a
 *    random recursive tree), with its own branch rate drawn uniformly in
 *    0.2 .. 1.8 % of its bases.  A mutation is a substitution (80 %), an
 *    insertion (10 %) or a deletion (10 %) of 1 to 3 bases (lengths 1, 2, 3
 *    with odds 4:2:1).
 * 3. The first N members are written, named fam16s_K, with their parent and
 *    branch rate in the comment.
 *
 * Pairwise identities then spread from about 70 % (members on distant
 * branches) to 100 % (the genome's own copies); bench/global.sh reports the
 * spread it measured.  The pseudo-random numbers are splitmix64 from SEED,
 * so a (GENOME, N, SEED) always gives the same file.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t st;

static uint64_t rnd(void)
{
	uint64_t z = (st += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t rndn(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

static char *read_genome(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *g = NULL, *line = NULL;
	size_t cap = 0, lcap = 0, n = 0;
	ssize_t k;

	if (!f) {
		fprintf(stderr, "rrnafam: cannot open '%s'\n", path);
		exit(1);
	}
	while ((k = getline(&line, &lcap, f)) > 0) {
		ssize_t i;

		if (line[0] == '>') {
			if (n && n + 1 > cap) {
				cap = 2 * (n + 1);
				g = realloc(g, cap);
			}
			if (n)
				g[n++] = 'N';   /* never inside a match */
			continue;
		}
		if (n + (size_t)k + 1 > cap) {
			cap = 2 * (n + (size_t)k + 1);
			g = realloc(g, cap);
		}
		for (i = 0; i < k; i++) {
			char c = line[i];
			if (c >= 'a' && c <= 'z')
				c = (char)(c - 32);
			if (c >= 'A' && c <= 'Z')
				g[n++] = c == 'A' || c == 'C' || c == 'G' || c == 'T' ? c : 'N';
		}
	}
	free(line);
	fclose(f);
	*len = n;
	return g;
}

static void revcomp(char *d, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char c = s[n - 1 - i];
		d[i] = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : c == 'T' ? 'A' : 'N';
	}
}

static int primer_at(const char *s)
{
	static const char p[] = "AGAGTTTGATCMTGGCTCAG";
	int i;

	for (i = 0; p[i]; i++)
		if (p[i] == 'M' ? s[i] != 'A' && s[i] != 'C' : s[i] != p[i])
			return 0;
	return 1;
}

typedef struct {
	char *s;
	uint32_t len, parent;
	double rate;
} member_t;

static member_t *fam;
static size_t nfam, capfam;

static void add(char *s, uint32_t len, uint32_t parent, double rate)
{
	if (nfam == capfam) {
		capfam = capfam ? 2 * capfam : 64;
		fam = realloc(fam, capfam * sizeof *fam);
	}
	fam[nfam].s = s;
	fam[nfam].len = len;
	fam[nfam].parent = parent;
	fam[nfam++].rate = rate;
}

/* the 16S copies of G (both strands) become the first members */
static void find_copies(const char *g, size_t n)
{
	static const char end[] = "GGATCACCTCCTTA";
	char *strand[2];
	size_t i, el = strlen(end);
	int s;

	strand[0] = (char *)g;
	strand[1] = malloc(n + 1);
	revcomp(strand[1], g, n);
	for (s = 0; s < 2; s++)
		for (i = 0; i + 1800 + el < n; i++) {
			char *e;
			size_t k;

			if (!primer_at(strand[s] + i))
				continue;
			e = memmem(strand[s] + i + 1300, 500, end, el);
			if (!e)
				continue;
			k = (size_t)(e - (strand[s] + i)) + el;
			add(strndup(strand[s] + i, k), (uint32_t)k, UINT32_MAX, 0);
		}
	free(strand[1]);
}

static char *mutate(const member_t *p, double rate, uint32_t *len)
{
	char *d = malloc((size_t)p->len * 2 + 16);
	uint32_t i, o = 0, thr = (uint32_t)(rate * 1e6);

	for (i = 0; i < p->len; i++) {
		if (rndn(1000000) < thr) {
			uint32_t kind = rndn(10), l = rndn(7), k;
			l = l < 4 ? 1 : l < 6 ? 2 : 3;
			if (kind < 8) {
				char c;
				do
					c = "ACGT"[rndn(4)];
				while (c == p->s[i]);
				d[o++] = c;
			} else if (kind == 8) {
				d[o++] = p->s[i];
				for (k = 0; k < l; k++)
					d[o++] = "ACGT"[rndn(4)];
			} else {
				i += l - 1;
			}
		} else {
			d[o++] = p->s[i];
		}
	}
	*len = o;
	return d;
}

int main(int argc, char **argv)
{
	size_t glen, want, k, i;
	char *g;

	if (argc != 4 || atol(argv[2]) < 1) {
		fprintf(stderr, "usage: rrnafam GENOME.fa N SEED > family.fa\n");
		return 2;
	}
	want = (size_t)atol(argv[2]);
	st = strtoull(argv[3], NULL, 10) * 0x2545f4914f6cdd1dull + 1;
	g = read_genome(argv[1], &glen);
	find_copies(g, glen);
	if (nfam == 0) {
		fprintf(stderr, "rrnafam: no 16S gene found in '%s'\n", argv[1]);
		return 1;
	}
	fprintf(stderr, "rrnafam: %zu 16S copies of %u..%u bases\n", nfam, fam[0].len,
			fam[nfam - 1].len);
	while (nfam < want) {
		uint32_t p = rndn((uint32_t)nfam), len;
		double rate = 0.002 + 0.016 * (double)rndn(1000001) / 1e6;
		char *s = mutate(&fam[p], rate, &len);
		add(s, len, p, rate);
	}
	for (k = 0; k < want; k++) {
		if (fam[k].parent == UINT32_MAX)
			printf(">fam16s_%zu copy of the genome's 16S gene\n", k);
		else
			printf(">fam16s_%zu parent=fam16s_%u rate=%.4f\n", k, fam[k].parent, fam[k].rate);
		for (i = 0; i < fam[k].len; i += 70)
			printf("%.*s\n", (int)(fam[k].len - i < 70 ? fam[k].len - i : 70), fam[k].s + i);
	}
	return 0;
}
