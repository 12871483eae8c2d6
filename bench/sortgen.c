/*
 * sortgen.c - the strsort benchmark data sets (issue 6), written to stdout:
 *   rand   10M random alphanumeric lines of 8-32 characters
 *   rand1g the same, 49.9M lines (1 GiB), for the GPU timings
 *   dup    5M random 20-character keys, each twice, shuffled
 *   url    5M URL-like lines with long shared prefixes
 *   dna    20M random DNA 32-mers
 *   reads  1M random reads of 100 bp
 *   num    10M key<TAB>number lines: 8-char keys, signed integers and
 *          decimals of 1-10 digits (197 MB)
 *   human  10M key<TAB>size lines: 1-4 digits, maybe a fraction, a unit of
 *          none K M G T (157 MB)
 *   month  10M key<TAB>month<TAB>day lines, months in mixed case (157 MB)
 *   general 8M key<TAB>float lines in %g and %e forms, some inf/nan (160 MB)
 *   bed    4M BED-like lines: chrom, start, end, name, score 0-1000, strand (169 MB)
 *   mix    one line of every key type, TAB-separated, 200 MB (mix1g: 1 GiB):
 *          a word (mixed case, punctuation, blanks, a few nonprinting
 *          bytes: -f -d -i -R), a number (-n), a size (-h), a month (-M),
 *          a float (-g) and a version-like file name (-V)
 * Usage: sortgen KIND [SEED] [SCALE]   (SCALE divides the line counts)
 * Built by bench/sort.sh with cc; not part of the library.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t s = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return s;
}

static const char alnum[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
static const char *words[] = { "news", "sport", "tech", "music", "travel", "food", "science",
	"health", "books", "video", "games", "shop", "blog", "forum", "wiki", "docs" };

static void fill(char *p, int n, const char *alpha, int sigma)
{
	int i;

	for (i = 0; i < n; i++)
		p[i] = alpha[rnd() % (uint64_t)sigma];
}

int main(int argc, char **argv)
{
	const char *kind = argc > 1 ? argv[1] : "";
	long scale = argc > 3 ? atol(argv[3]) : 1;
	char buf[256];
	long i, n;

	if (argc > 2)
		s ^= (uint64_t)atoll(argv[2]) * 0x2545f4914f6cdd1dull;
	if (scale < 1)
		scale = 1;
	if (strcmp(kind, "rand") == 0 || strcmp(kind, "rand1g") == 0) {
		/* rand1g: 1 GiB of the same lines (21.5 bytes on average) */
		n = strcmp(kind, "rand") == 0 ? 10000000 : 49941480;
		for (n /= scale, i = 0; i < n; i++) {
			int l = 8 + (int)(rnd() % 25);

			fill(buf, l, alnum, 62);
			buf[l] = '\n';
			fwrite(buf, 1, (size_t)l + 1, stdout);
		}
	} else if (strcmp(kind, "dup") == 0) {
		long m = 5000000 / scale;
		char *keys = malloc((size_t)m * 20);
		uint32_t *perm = malloc((size_t)(2 * m) * sizeof *perm);

		for (i = 0; i < m; i++)
			fill(keys + i * 20, 20, alnum, 62);
		for (i = 0; i < 2 * m; i++)
			perm[i] = (uint32_t)(i % m);
		for (i = 2 * m - 1; i > 0; i--) {
			long j = (long)(rnd() % (uint64_t)(i + 1));
			uint32_t t = perm[i];

			perm[i] = perm[j];
			perm[j] = t;
		}
		for (i = 0; i < 2 * m; i++) {
			memcpy(buf, keys + (size_t)perm[i] * 20, 20);
			buf[20] = '\n';
			fwrite(buf, 1, 21, stdout);
		}
		free(keys);
		free(perm);
	} else if (strcmp(kind, "url") == 0) {
		for (n = 5000000 / scale, i = 0; i < n; i++) {
			char id[16];
			int l;

			fill(id, 6, alnum, 62);
			id[6] = '\0';
			l = snprintf(buf, sizeof buf, "http://www.example-%u.com/%s/%s/%04u/item-%s.html\n",
				(unsigned)(rnd() % 50), words[rnd() % 16], words[rnd() % 16],
				(unsigned)(rnd() % 2000), id);
			fwrite(buf, 1, (size_t)l, stdout);
		}
	} else if (strcmp(kind, "dna") == 0) {
		for (n = 20000000 / scale, i = 0; i < n; i++) {
			fill(buf, 32, "ACGT", 4);
			buf[32] = '\n';
			fwrite(buf, 1, 33, stdout);
		}
	} else if (strcmp(kind, "reads") == 0) {
		for (n = 1000000 / scale, i = 0; i < n; i++) {
			fill(buf, 100, "ACGT", 4);
			buf[100] = '\n';
			fwrite(buf, 1, 101, stdout);
		}
	} else if (strcmp(kind, "num") == 0 || strcmp(kind, "human") == 0 ||
			strcmp(kind, "month") == 0 || strcmp(kind, "general") == 0) {
		static const char *mon[] = { "Jan", "FEB", "mar", "Apr", "May", "jun", "Jul",
			"Aug", "SEP", "Oct", "Nov", "Dec" };
		int k = kind[0];

		n = (k == 'g' ? 8000000 : 10000000) / scale;
		for (i = 0; i < n; i++) {
			char key[9];
			int l;
			uint64_t r = rnd();

			fill(key, 8, alnum, 62);
			key[8] = '\0';
			if (k == 'n')
				l = r % 3 ? snprintf(buf, sizeof buf, "%s\t%s%llu\n", key, r % 5 ? "" : "-",
						(unsigned long long)(rnd() % 10000000000ull))
					: snprintf(buf, sizeof buf, "%s\t%llu.%llu\n", key,
						(unsigned long long)(rnd() % 100000), (unsigned long long)(rnd() % 1000));
			else if (k == 'h') {
				char unit[2] = { "KMGT "[r / 2 % 5], '\0' };

				if (unit[0] == ' ')
					unit[0] = '\0';
				l = r % 2 ? snprintf(buf, sizeof buf, "%s\t%llu%s\n", key,
						(unsigned long long)(rnd() % 10000), unit)
					: snprintf(buf, sizeof buf, "%s\t%llu.%llu%s\n", key,
						(unsigned long long)(rnd() % 10000), (unsigned long long)(rnd() % 10), unit);
			}
			else if (k == 'm')
				l = snprintf(buf, sizeof buf, "%s\t%s\t%u\n", key, mon[r % 12], (unsigned)(r / 12 % 31 + 1));
			else
				l = r % 1000 == 0 ? snprintf(buf, sizeof buf, "%s\t%s\n", key, r / 1000 % 2 ? "inf" : "nan")
					: snprintf(buf, sizeof buf, r % 2 ? "%s\t%g\n" : "%s\t%e\n", key,
						((double)(int64_t)rnd() / 9.2e18) * 1e6 / (double)(1 + rnd() % 100000));
			fwrite(buf, 1, (size_t)l, stdout);
		}
	} else if (strcmp(kind, "bed") == 0) {
		for (n = 4000000 / scale, i = 0; i < n; i++) {
			uint64_t r = rnd(), st = rnd() % 250000000;
			int l = snprintf(buf, sizeof buf, "chr%u\t%llu\t%llu\tread%ld\t%u\t%c\n",
				(unsigned)(r % 24 + 1), (unsigned long long)st,
				(unsigned long long)(st + 50 + r / 24 % 500), i, (unsigned)(r / 12000 % 1001),
				r & (1ull << 40) ? '+' : '-');

			fwrite(buf, 1, (size_t)l, stdout);
		}
	} else if (strcmp(kind, "mix") == 0 || strcmp(kind, "mix1g") == 0) {
		static const char wch[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .-,_\x01\xe9";
		static const char *mon[] = { "Jan", "FEB", "mar", "Apr", "May", "jun", "Jul",
			"Aug", "SEP", "Oct", "Nov", "Dec", "xyz" };
		static const char *pre[] = { "", "~rc1", "~beta2", "-p1", "a", "" };
		static const char *suf[] = { ".tar.gz", ".deb", "", ".tgz", ".so.1" };
		double want = (strcmp(kind, "mix") == 0 ? 2e8 : 1073741824.0) / (double)scale, done = 0;

		while (done < want) {
			char w[12];
			uint64_t r = rnd(), q = rnd();
			int l, wl = 6 + (int)(r % 6);

			fill(w, wl, wch, (int)sizeof wch - 1);
			w[wl] = '\0';
			l = snprintf(buf, sizeof buf, "%s\t%s%llu\t%llu%c\t%s\t%.6g\tlib%u-%u.%u.%u%s%s\n",
				w, r % 5 ? "" : "-", (unsigned long long)(q % 10000000000ull),
				(unsigned long long)(q / 7 % 1000), "KMGT "[r / 5 % 5],
				mon[r / 25 % 13], ((double)(int64_t)rnd() / 9.2e18) * 1e4,
				(unsigned)(r / 325 % 10), (unsigned)(r / 3250 % 3), (unsigned)(r / 9750 % 20),
				(unsigned)(q / 7000 % 30), pre[q / 210000 % 6], suf[q / 1260000 % 5]);
			fwrite(buf, 1, (size_t)l, stdout);
			done += l;
		}
	} else {
		fprintf(stderr, "usage: sortgen rand|rand1g|dup|url|dna|reads|num|human|month|general|bed|mix|mix1g [SEED] [SCALE]\n");
		return 2;
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		perror("sortgen: write");
		return 1;
	}
	return 0;
}
