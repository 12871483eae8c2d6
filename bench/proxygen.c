/*
 * proxygen.c - a human-scale proxy reference built from real sequence.
 *
 *   proxygen [-s SCALE] [-r SEED] SRC.fa[.gz]... > proxy.fa
 *
 * Writes 24 sequences named chr1..chr22, chrX, chrY with GRCh38's primary
 * chromosome lengths (3.09 Gbp in all), times SCALE (default 1; e.g. 0.01
 * for a 31 Mbp test proxy).  The bases come from the source FASTA files
 * (the benchmarks use chrX 70 Mbp, a 117 Mbp contigs assembly, P. falciparum
 * and E. coli: about 215 Mbp of real sequence):
 *
 *  - the sources are first written once, unchanged, in order (so real
 *    sequence, with its own repeats and N runs, is part of the proxy);
 *  - the rest is filled with copies of source segments, each of a length
 *    drawn log-uniformly from 2 kb to 2 Mb, reverse-complemented half of the
 *    time, and mutated with a divergence d drawn uniformly from 3% to 30%:
 *    each base is changed with probability d, as a substitution (80%), an
 *    insertion of 1-3 random bases (10%) or a deletion of 1-3 bases (10%);
 *  - one copy in ten is instead an element of a fixed set of 2,000
 *    "families" (segments of 300 bp to 6 kb drawn once from the sources),
 *    mutated the same way: every family has on the order of a thousand
 *    copies at divergences from 3% to 30%, so repeat families of many
 *    depths exist (a source region copied once, a family copied a thousand
 *    times, the sources' own repeats inside both).
 *
 * What it does not model: satellite arrays and centromeres, segmental
 * duplications at human frequencies, the real repeat consensus sequences and
 * their age structure (divergence here is uniform per copy), GC isochores,
 * CpG depletion, and population variation.  Source N runs are copied like
 * bases (a mutated N stays N); no other N runs are added.
 *
 * Deterministic: the same sources, SCALE and SEED give the same bytes.
 *
 *   proxygen -P POOL SRC.fa[.gz]...
 *
 * writes the sources' bases instead (what the proxy is made from: every
 * source's bases in order, headers dropped, non-ACGT letters as N) in a
 * packed form that proxygen reads back as a source, plain or gzip: the
 * machines that get the sources carried in (bench/proxy.sh) take 2 bits a
 * base instead of FASTA.  Layout, little-endian: "PXPOOL1\n", u64 bases,
 * u64 runs of N, each run u64 start and u64 length, then the bases 4 a byte
 * (first base in the low bits; A C G T = 0 1 2 3, N stored as A).  A proxy
 * made from the pool is byte-identical to one made from the sources.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static const struct { const char *name; uint64_t len; } chroms[24] = {
	{ "chr1", 248956422 }, { "chr2", 242193529 }, { "chr3", 198295559 },
	{ "chr4", 190214555 }, { "chr5", 181538259 }, { "chr6", 170805979 },
	{ "chr7", 159345973 }, { "chr8", 145138636 }, { "chr9", 138394717 },
	{ "chr10", 133797422 }, { "chr11", 135086622 }, { "chr12", 133275309 },
	{ "chr13", 114364328 }, { "chr14", 107043718 }, { "chr15", 101991189 },
	{ "chr16", 90338345 }, { "chr17", 83257441 }, { "chr18", 80373285 },
	{ "chr19", 58617616 }, { "chr20", 64444167 }, { "chr21", 46709983 },
	{ "chr22", 50818468 }, { "chrX", 156040895 }, { "chrY", 57227415 },
};

#define NFAM 2000

static uint64_t rng_s;

static uint64_t rnd(void)
{
	/* splitmix64 */
	uint64_t z = (rng_s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double urand(void) { return (double)(rnd() >> 11) * (1.0 / 9007199254740992.0); }

static void die(const char *m, const char *s)
{
	fprintf(stderr, "proxygen: %s '%s'%s%s\n", m, s, errno ? ": " : "", errno ? strerror(errno) : "");
	exit(1);
}

/* ---- sources ---- */

static char *pool;
static uint64_t pool_n, pool_cap;
static const char acgt[4] = { 'A', 'C', 'G', 'T' };

static void pool_add(char c)
{
	if (pool_n == pool_cap) {
		pool_cap = pool_cap ? 2 * pool_cap : 1 << 24;
		pool = realloc(pool, pool_cap);
		if (!pool) {
			fprintf(stderr, "proxygen: out of memory\n");
			exit(1);
		}
	}
	pool[pool_n++] = c;
}

static const char pool_magic[8] = { 'P', 'X', 'P', 'O', 'O', 'L', '1', '\n' };

static uint64_t get_u64(gzFile f, const char *path)
{
	unsigned char b[8];
	uint64_t v = 0;
	int i;

	if (gzread(f, b, 8) != 8)
		die("truncated pool", path);
	for (i = 7; i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

/* The pool of a packed file (proxygen -P) appended to the pool. */
static void read_pool(gzFile f, const char *path)
{
	uint64_t n = get_u64(f, path), runs = get_u64(f, path), *rs, beg = pool_n, k, r;
	unsigned char buf[1 << 16];

	if (runs > n || !(rs = malloc(2 * runs * sizeof *rs + 1)))
		die("bad pool header in", path);
	for (r = 0; r < 2 * runs; r++)
		rs[r] = get_u64(f, path);
	for (k = 0; k < n; k += 4 * (uint64_t)sizeof buf) {
		uint64_t m = n - k < 4 * sizeof buf ? n - k : 4 * sizeof buf, j;
		int want = (int)((m + 3) / 4);

		if (gzread(f, buf, (unsigned)want) != want)
			die("truncated pool", path);
		for (j = 0; j < m; j++)
			pool_add(acgt[buf[j / 4] >> (2 * (j % 4)) & 3]);
	}
	for (r = 0; r < runs; r++) {
		if (rs[2 * r] > n || rs[2 * r + 1] > n - rs[2 * r])
			die("bad run of N in", path);
		memset(pool + beg + rs[2 * r], 'N', rs[2 * r + 1]);
	}
	free(rs);
}

static void read_fasta(const char *path)
{
	gzFile f = gzopen(path, "rb");
	char line[1 << 16];
	int in_hdr = 0;

	errno = 0;
	if (!f)
		die("cannot open", path);
	if (gzread(f, line, 8) == 8 && memcmp(line, pool_magic, 8) == 0) {
		read_pool(f, path);
		gzclose(f);
		return;
	}
	gzrewind(f);
	while (gzgets(f, line, sizeof line)) {
		size_t k = strlen(line), i;

		if (line[0] == '>' && !in_hdr) {
			in_hdr = line[k - 1] != '\n';
			continue;
		}
		if (in_hdr) {
			in_hdr = line[k - 1] != '\n';
			continue;
		}
		for (i = 0; i < k; i++) {
			int c = toupper((unsigned char)line[i]);

			if (c == 'A' || c == 'C' || c == 'G' || c == 'T')
				pool_add((char)c);
			else if (isalpha(c))
				pool_add('N');
		}
	}
	gzclose(f);
}

static void put_u64(FILE *o, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		putc((int)(v >> (8 * i) & 0xff), o);
}

/* proxygen -P: the pool, packed, to PATH (written to PATH.tmp, renamed). */
static int write_pool(const char *path)
{
	char tmp[4096];
	FILE *o;
	uint64_t k, runs = 0, r0;
	unsigned char b = 0;

	errno = 0;
	if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp || !(o = fopen(tmp, "wb")))
		die("cannot write", path);
	fwrite(pool_magic, 1, 8, o);
	put_u64(o, pool_n);
	for (k = 0; k < pool_n; k++)
		runs += pool[k] == 'N' && (k == 0 || pool[k - 1] != 'N');
	put_u64(o, runs);
	for (k = 0; k < pool_n; k = r0) {
		for (r0 = k; r0 < pool_n && pool[r0] != 'N'; r0++)
			;
		if (r0 == pool_n)
			break;
		for (k = r0; k < pool_n && pool[k] == 'N'; k++)
			;
		put_u64(o, r0);
		put_u64(o, k - r0);
		r0 = k;
	}
	for (k = 0; k < pool_n; k++) {
		int c = pool[k];

		b |= (unsigned char)((c == 'C' ? 1 : c == 'G' ? 2 : c == 'T' ? 3 : 0) << (2 * (k % 4)));
		if (k % 4 == 3 || k + 1 == pool_n) {
			putc(b, o);
			b = 0;
		}
	}
	errno = 0;
	if (fclose(o) != 0 || rename(tmp, path) != 0) {
		remove(tmp);
		die("cannot write", path);
	}
	fprintf(stderr, "proxygen: %s: %llu bases, %llu runs of N\n", path,
		(unsigned long long)pool_n, (unsigned long long)runs);
	return 0;
}

/* ---- output ---- */

static char obuf[61];
static int ocol;
static uint64_t left;   /* bases still to write in the current sequence */

static void put(char c)
{
	if (!left)
		return;
	obuf[ocol++] = c;
	left--;
	if (ocol == 60 || !left) {
		obuf[ocol] = '\n';
		fwrite(obuf, 1, (size_t)ocol + 1, stdout);
		ocol = 0;
	}
}

static char comp(char c)
{
	switch (c) {
	case 'A': return 'T';
	case 'C': return 'G';
	case 'G': return 'C';
	case 'T': return 'A';
	default: return 'N';
	}
}

/* A mutated copy of pool[beg, beg+len), reverse complement if RC. */
static void copy_mutated(uint64_t beg, uint64_t len, int rc, double d)
{
	uint64_t k;

	for (k = 0; k < len && left; k++) {
		char c = rc ? comp(pool[beg + len - 1 - k]) : pool[beg + k];

		if (urand() < d) {
			double x = urand();

			if (x < 0.8) {
				if (c != 'N')
					c = acgt[(((c == 'A' ? 0 : c == 'C' ? 1 : c == 'G' ? 2 : 3)) + 1 + (int)(rnd() % 3)) & 3];
			} else if (x < 0.9) {
				int n = 1 + (int)(rnd() % 3);

				while (n--)
					put(acgt[rnd() & 3]);
			} else {
				k += rnd() % 3;   /* this base and up to two more deleted */
				continue;
			}
		}
		put(c);
	}
}

int main(int argc, char **argv)
{
	double scale = 1.0;
	uint64_t seed = 1, fam_beg[NFAM], fam_len[NFAM], src_left;
	const char *pack = NULL;
	int i, c;

	while ((c = getopt(argc, argv, "s:r:P:")) != -1) {
		if (c == 's')
			scale = atof(optarg);
		else if (c == 'P')
			pack = optarg;
		else if (c == 'r')
			seed = strtoull(optarg, NULL, 10);
		else {
			fprintf(stderr, "usage: proxygen [-s SCALE] [-r SEED] SRC.fa[.gz]... > proxy.fa\n"
				"       proxygen -P POOL SRC.fa[.gz]...\n");
			return 2;
		}
	}
	if (optind == argc || !(scale > 0 && scale <= 1)) {
		fprintf(stderr, "usage: proxygen [-s SCALE (0,1]] [-r SEED] SRC.fa[.gz]... > proxy.fa\n");
		return 2;
	}
	for (i = optind; i < argc; i++)
		read_fasta(argv[i]);
	if (pack)
		return write_pool(pack);
	if (pool_n < 4000000) {
		fprintf(stderr, "proxygen: the sources hold %llu bases; at least 4 Mbp are needed\n",
			(unsigned long long)pool_n);
		return 1;
	}
	rng_s = seed;
	for (i = 0; i < NFAM; i++) {
		fam_len[i] = 300 + rnd() % 5701;
		fam_beg[i] = rnd() % (pool_n - fam_len[i]);
	}
	src_left = pool_n;
	for (i = 0; i < 24; i++) {
		uint64_t want = (uint64_t)((double)chroms[i].len * scale);

		if (want < 1000)
			want = 1000;
		printf(">%s proxy of %llu bp\n", chroms[i].name, (unsigned long long)want);
		left = want;
		ocol = 0;
		/* the sources once, unchanged, at the start of the first chromosomes */
		while (left && src_left) {
			uint64_t from = pool_n - src_left, n = src_left < left ? src_left : left, k;

			for (k = 0; k < n; k++)
				put(pool[from + k]);
			src_left -= n;
		}
		while (left) {
			double d = 0.03 + 0.27 * urand();

			if (rnd() % 10 == 0) {
				int f = (int)(rnd() % NFAM);

				copy_mutated(fam_beg[f], fam_len[f], (int)(rnd() & 1), d);
			} else {
				uint64_t len = (uint64_t)exp(log(2000.0) + urand() * (log(2e6) - log(2000.0)));

				if (len > pool_n)
					len = pool_n;
				copy_mutated(rnd() % (pool_n - len + 1), len, (int)(rnd() & 1), d);
			}
		}
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "proxygen: failed to write the results: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}
