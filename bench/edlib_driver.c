/*
 * edlib_driver.c - the peer of align_bench (t/unit/align_bench.c) for
 * bench/align.sh: edlib (libedlib-dev) on the same file of pairs
 * "READ<TAB>WINDOW", infix (HW) mode with the path (EDLIB_TASK_PATH), max
 * distance -e A [5], one thread; each alignment's CIGAR is made with
 * edlibAlignmentToCigar (standard M/I/D) as align_bench formats its own.
 * Prints the summary align_bench prints: "pairs hits sum_dist sum_end
 * cigar_hash seconds" (seconds: aligning and formatting only).  The
 * distance and the leftmost end agree with seedpipe's; the CIGAR hash can
 * differ where optimal alignments tie (edlib's tie-breaking differs).
 *
 *     cc -O2 -o edlib_driver bench/edlib_driver.c -ledlib
 */
#define _GNU_SOURCE
#include <edlib.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int a = 5, i;
	FILE *f;
	char *line = NULL, *tab, *cig, **rd = NULL, **wn = NULL, *s;
	int *rlen = NULL, *wlen = NULL;
	size_t cap = 0, n = 0, ncap = 0, k;
	ssize_t len;
	uint64_t hits = 0, sum_dist = 0, sum_end = 0, cx = 0;
	double t0, t;

	for (i = 1; i + 1 < argc && argv[i][0] == '-'; i += 2)
		if (!strcmp(argv[i], "-e"))
			a = atoi(argv[i + 1]);
	if (i + 1 != argc) {
		fprintf(stderr, "usage: edlib_driver [-e A] FILE\n");
		return 2;
	}
	if (!(f = fopen(argv[i], "r"))) {
		fprintf(stderr, "edlib_driver: cannot open '%s'\n", argv[i]);
		return 1;
	}
	while ((len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] == '\n')
			line[--len] = 0;
		if (!(tab = strchr(line, '\t'))) {
			fprintf(stderr, "edlib_driver: line %zu: no tab\n", n + 1);
			return 1;
		}
		if (n == ncap) {
			ncap = ncap ? ncap * 2 : 1024;
			rd = realloc(rd, ncap * sizeof *rd);
			wn = realloc(wn, ncap * sizeof *wn);
			rlen = realloc(rlen, ncap * sizeof *rlen);
			wlen = realloc(wlen, ncap * sizeof *wlen);
			if (!rd || !wn || !rlen || !wlen)
				return 1;
		}
		*tab = 0;
		rd[n] = strdup(line);
		wn[n] = strdup(tab + 1);
		rlen[n] = (int)(tab - line);
		wlen[n] = (int)(len - (tab - line) - 1);
		n++;
	}
	fclose(f);
	free(line);
	t0 = now();
	for (k = 0; k < n; k++) {
		EdlibAlignResult r = edlibAlign(rd[k], rlen[k], wn[k], wlen[k],
				edlibNewAlignConfig(a, EDLIB_MODE_HW, EDLIB_TASK_PATH, NULL, 0));
		if (r.status == EDLIB_STATUS_OK && r.editDistance >= 0) {
			hits++;
			sum_dist += (uint64_t)r.editDistance;
			sum_end += (uint64_t)r.endLocations[0];
			cig = edlibAlignmentToCigar(r.alignment, r.alignmentLength, EDLIB_CIGAR_STANDARD);
			for (s = cig; *s; s++)
				cx = cx * 31 + (uint8_t)*s;
			free(cig);
		}
		edlibFreeAlignResult(r);
	}
	t = now() - t0;
	printf("pairs %zu hits %llu sum_dist %llu sum_end %llu cigar_hash %016llx seconds %.3f"
			" pairs_per_s %.0f\n", n, (unsigned long long)hits, (unsigned long long)sum_dist,
			(unsigned long long)sum_end, (unsigned long long)cx, t, (double)n / t);
	for (k = 0; k < n; k++) {
		free(rd[k]);
		free(wn[k]);
	}
	free(rd);
	free(wn);
	free(rlen);
	free(wlen);
	return 0;
}
