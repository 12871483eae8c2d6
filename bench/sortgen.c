/*
 * sortgen.c - the strsort benchmark data sets (issue 6), written to stdout:
 *   rand   10M random alphanumeric lines of 8-32 characters
 *   rand1g the same, 49.9M lines (1 GiB), for the GPU timings
 *   dup    5M random 20-character keys, each twice, shuffled
 *   url    5M URL-like lines with long shared prefixes
 *   dna    20M random DNA 32-mers
 *   reads  1M random reads of 100 bp
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
	} else {
		fprintf(stderr, "usage: sortgen rand|rand1g|dup|url|dna|reads [SEED] [SCALE]\n");
		return 2;
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		perror("sortgen: write");
		return 1;
	}
	return 0;
}
