/*
 * schbath.c - benchmark read generator (not part of the seedpipe library).
 *
 *   schbath REF.fa N LEN SUBS SEED > reads.fq   Schbath-style H_SUBS reads
 *   schbath -r N LEN SEED > reads.fq            uniformly random reads
 *
 * Schbath-style sets (as in Tran 2012, after Schbath et al.): N reads of LEN
 * bases, each copied from a start position drawn uniformly among the windows
 * of the reference that lie inside one sequence and contain only A/C/G/T;
 * each read's strand is a fair coin (reverse complement for '-'); then
 * exactly SUBS distinct read positions are replaced by one of the three other
 * bases, uniformly.  The read name records the truth:
 *
 *   @r<i>_<seq>_<pos>_<strand> subs=<p1>,<p2>,...
 *
 * pos is the 1-based leftmost reference position (as in SAM), strand + or -,
 * subs the 0-based positions in the read as printed.  Qualities are all 'I'.
 *
 * The -r form writes N reads of LEN uniformly random bases with random
 * qualities ('#'..'J'), for I/O benchmarks.  Both forms are deterministic for
 * a given SEED (xoshiro256** seeded by splitmix64).
 *
 * Exit status: 0 ok, 1 data error, 2 usage error.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#define SB_PROG "schbath"

static void sb_die(int code, const char *fmt, const char *arg)
{
	fprintf(stderr, SB_PROG ": ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(code);
}

static uint64_t sb_s[4];

/* splitmix64 step, used only to seed xoshiro256** */
static uint64_t sb_splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* sb_seed - seed the generator from one 64-bit value */
static void sb_seed(uint64_t seed)
{
	for (int i = 0; i < 4; ++i)
		sb_s[i] = sb_splitmix(&seed);
}

static inline uint64_t sb_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* sb_next - next 64 random bits (xoshiro256**) */
static uint64_t sb_next(void)
{
	uint64_t r = sb_rotl(sb_s[1] * 5, 7) * 9, t = sb_s[1] << 17;
	sb_s[2] ^= sb_s[0];
	sb_s[3] ^= sb_s[1];
	sb_s[1] ^= sb_s[2];
	sb_s[0] ^= sb_s[3];
	sb_s[2] ^= t;
	sb_s[3] = sb_rotl(sb_s[3], 45);
	return r;
}

/* sb_below - uniform integer in [0, n), n > 0, without modulo bias */
static uint64_t sb_below(uint64_t n)
{
	uint64_t lim = -n % n, x;
	do x = sb_next(); while (x < lim);
	return x % n;
}

static uint64_t sb_num(const char *s, const char *what)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-')
		sb_die(2, "%s must be a non-negative integer", what);
	return v;
}

/* Reference: all sequences concatenated, upper case, one 'N' between them. */
typedef struct {
	char *seq;
	uint64_t len, cap;
	char **names;
	uint64_t *starts; /* offset of each sequence in seq */
	int n, m;
} sb_ref_t;

static void sb_ref_push(sb_ref_t *r, int c)
{
	if (r->len == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 1 << 20;
		if (!(r->seq = realloc(r->seq, r->cap)))
			sb_die(1, "%s", "out of memory");
	}
	r->seq[r->len++] = c;
}

static void sb_ref_load(sb_ref_t *r, const char *fn)
{
	FILE *fp = strcmp(fn, "-") ? fopen(fn, "r") : stdin;
	char *line = NULL;
	size_t cap = 0;
	ssize_t l;
	if (!fp) {
		fprintf(stderr, SB_PROG ": cannot open '%s': %s\n", fn, strerror(errno));
		exit(1);
	}
	memset(r, 0, sizeof(*r));
	while ((l = getline(&line, &cap, fp)) >= 0) {
		if (line[0] == '>') {
			char *p = line + 1;
			p[strcspn(p, " \t\r\n")] = 0;
			if (r->n == r->m) {
				r->m = r->m ? r->m * 2 : 16;
				r->names = realloc(r->names, r->m * sizeof(*r->names));
				r->starts = realloc(r->starts, r->m * sizeof(*r->starts));
				if (!r->names || !r->starts)
					sb_die(1, "%s", "out of memory");
			}
			if (r->n)
				sb_ref_push(r, 'N');
			r->names[r->n] = strdup(p);
			r->starts[r->n++] = r->len;
			continue;
		}
		if (!r->n)
			sb_die(1, "'%s' is not FASTA (no '>' header first)", fn);
		for (ssize_t i = 0; i < l; ++i) {
			int c = line[i] & ~0x20; /* upper case */
			if (line[i] == '\n' || line[i] == '\r' || line[i] == ' ')
				continue;
			sb_ref_push(r, c == 'A' || c == 'C' || c == 'G' || c == 'T' ? c : 'N');
		}
	}
	if (ferror(fp))
		sb_die(1, "error reading '%s'", fn);
	free(line);
	if (fp != stdin)
		fclose(fp);
	if (!r->n)
		sb_die(1, "'%s' holds no sequence", fn);
}

/* sb_seq_of - index of the sequence holding offset x (binary search) */
static int sb_seq_of(const sb_ref_t *r, uint64_t x)
{
	int lo = 0, hi = r->n - 1;
	while (lo < hi) {
		int mid = (lo + hi + 1) / 2;
		if (r->starts[mid] <= x)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

static int sb_comp(int c)
{
	return c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : 'A';
}

static void sb_schbath(const char *fn, uint64_t n, uint64_t len, uint64_t subs, uint64_t seed)
{
	static const char acgt[] = "ACGT";
	sb_ref_t r;
	uint64_t nvalid = 0, run = 0;
	char *read, *qual;
	uint64_t *pos;
	if (len == 0)
		sb_die(2, "%s", "LEN must be at least 1");
	if (subs > len)
		sb_die(2, "%s", "SUBS must not exceed LEN");
	sb_ref_load(&r, fn);
	for (uint64_t i = 0; i < r.len; ++i) { /* count clean windows */
		run = r.seq[i] == 'N' ? 0 : run + 1;
		nvalid += run >= len;
	}
	if (nvalid == 0 && n > 0)
		sb_die(1, "'%s' has no window of LEN bases without N", fn);
	read = malloc(len + 1);
	qual = malloc(len + 1);
	pos = malloc((subs + 1) * sizeof(*pos));
	if (!read || !qual || !pos)
		sb_die(1, "%s", "out of memory");
	memset(qual, 'I', len);
	qual[len] = read[len] = 0;
	sb_seed(seed);
	for (uint64_t i = 0; i < n; ++i) {
		uint64_t p, k;
		int rc, sid;
		for (;;) { /* rejection: uniform over clean windows */
			p = sb_below(r.len - len + 1);
			if (!memchr(r.seq + p, 'N', len))
				break;
		}
		rc = sb_next() >> 63;
		if (rc)
			for (k = 0; k < len; ++k)
				read[k] = sb_comp(r.seq[p + len - 1 - k]);
		else
			memcpy(read, r.seq + p, len);
		/* SUBS distinct positions: Floyd's sampling, then sort for printing */
		for (k = 0; k < subs; ++k) {
			uint64_t j = len - subs + k, t = sb_below(j + 1), q;
			for (q = 0; q < k && pos[q] != t; ++q)
				;
			pos[k] = q < k ? j : t;
		}
		for (k = 1; k < subs; ++k) /* insertion sort, subs is small */
			for (uint64_t q = k; q > 0 && pos[q - 1] > pos[q]; --q) {
				uint64_t t = pos[q];
				pos[q] = pos[q - 1];
				pos[q - 1] = t;
			}
		for (k = 0; k < subs; ++k) {
			int old = read[pos[k]], c;
			do c = acgt[sb_next() >> 62]; while (c == old);
			read[pos[k]] = c;
		}
		sid = sb_seq_of(&r, p);
		printf("@r%llu_%s_%llu_%c subs=", (unsigned long long)i, r.names[sid],
		       (unsigned long long)(p - r.starts[sid] + 1), rc ? '-' : '+');
		for (k = 0; k < subs; ++k)
			printf(k ? ",%llu" : "%llu", (unsigned long long)pos[k]);
		printf("\n%s\n+\n%s\n", read, qual);
	}
	free(read);
	free(qual);
	free(pos);
	for (int i = 0; i < r.n; ++i)
		free(r.names[i]);
	free(r.names);
	free(r.starts);
	free(r.seq);
}

static void sb_random(uint64_t n, uint64_t len, uint64_t seed)
{
	static const char acgt[] = "ACGT";
	char *read = malloc(len + 1), *qual = malloc(len + 1);
	if (!read || !qual)
		sb_die(1, "%s", "out of memory");
	read[len] = qual[len] = 0;
	sb_seed(seed);
	for (uint64_t i = 0; i < n; ++i) {
		for (uint64_t k = 0; k < len; k += 32) { /* 2 bits per base */
			uint64_t x = sb_next();
			for (uint64_t j = k; j < len && j < k + 32; ++j, x >>= 2)
				read[j] = acgt[x & 3];
		}
		for (uint64_t k = 0; k < len; ++k)
			qual[k] = '#' + sb_below(40);
		printf("@rand%llu\n%s\n+\n%s\n", (unsigned long long)i, read, qual);
	}
	free(read);
	free(qual);
}

static void sb_usage(FILE *fp)
{
	fprintf(fp,
		"Usage: " SB_PROG " REF.fa N LEN SUBS SEED > reads.fq   (Schbath-style reads)\n"
		"       " SB_PROG " -r N LEN SEED > reads.fq            (random reads)\n"
		"Names: @r<i>_<seq>_<1-based pos>_<strand> subs=<0-based read positions>\n");
}

int main(int argc, char *argv[])
{
	static char buf[1 << 20];
	setvbuf(stdout, buf, _IOFBF, sizeof(buf));
	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		sb_usage(stdout);
		return 0;
	}
	if (argc == 5 && !strcmp(argv[1], "-r")) {
		sb_random(sb_num(argv[2], "N"), sb_num(argv[3], "LEN"), sb_num(argv[4], "SEED"));
	} else if (argc == 6) {
		sb_schbath(argv[1], sb_num(argv[2], "N"), sb_num(argv[3], "LEN"),
			   sb_num(argv[4], "SUBS"), sb_num(argv[5], "SEED"));
	} else {
		sb_usage(stderr);
		return 2;
	}
	if (fflush(stdout) || ferror(stdout))
		sb_die(1, "%s", "failed to write the reads");
	return 0;
}
