/*
 * keysort.c - the CPU time of seedfilt's sort of a read's candidate keys
 * (filt_sort_keys, common/filt_reduce.c) against the C library's qsort on
 * the same keys, for key sets of the sizes reads have (issue 14: the sort
 * was a fifth to a quarter of seedfilt -d gpu's host samples).
 *
 *   keysort [-b BITS] [-k TOTAL] [-s SEED] [-r] [N ...]
 *
 * For each set size N (default 100 343 1000 2047 2048 10000 65536), TOTAL
 * keys (default 2e7) in sets of N, each key uniform below 2^BITS (28, the
 * width of a 70 Mbp reference's positions a strand); -r draws each set's
 * keys from 16 values (a read of a repeat: crowded keys).  Both sorts get
 * identical copies, each timed by the thread's CPU clock
 * (CLOCK_THREAD_CPUTIME_ID); every set is compared, and a difference is an
 * error (exit 1).  Prints, for each N: ns per key of filt_sort_keys and of
 * qsort, and qsort's time over filt_sort_keys's.
 *
 * Build (from the top directory, after make):
 *   cc -O2 -g -Icommon -Ikernels -Ibuild -o bin/keysort bench/keysort.c build/libseedpipe.a \
 *      -lOpenCL -lhts -lz -lxxhash -ldivsufsort -ldivsufsort64 -lm -lpthread
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "filt.h"

static uint64_t rng;

static uint64_t next(void)
{
	/* splitmix64 */
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return (a > b) - (a < b);
}

static void usage(void)
{
	fprintf(stderr, "usage: keysort [-b BITS] [-k TOTAL] [-s SEED] [-r] [N ...]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const size_t def[] = { 100, 343, 1000, 2047, 2048, 10000, 65536 };
	size_t total = 20000000, sizes[64], nsz = 0, z;
	int bits = 28, crowd = 0, c;

	rng = 1;
	while ((c = getopt(argc, argv, "b:k:s:r")) != -1) {
		switch (c) {
		case 'b': bits = atoi(optarg); break;
		case 'k': total = (size_t)strtod(optarg, NULL); break;
		case 's': rng = strtoull(optarg, NULL, 10); break;
		case 'r': crowd = 1; break;
		default: usage();
		}
	}
	if (bits < 1 || bits > 63 || total < 1)
		usage();
	for (; optind < argc && nsz < 64; optind++)
		if ((sizes[nsz++] = (size_t)strtoull(argv[optind], NULL, 10)) < 1)
			usage();
	if (!nsz)
		for (; nsz < sizeof def / sizeof def[0]; nsz++)
			sizes[nsz] = def[nsz];
	printf("# keysort: %zu keys a size, %d bits%s\n", total, bits, crowd ? ", 16 values a set" : "");
	printf("N\tsets\tfilt_sort_keys_ns_per_key\tqsort_ns_per_key\tqsort_over_filt\n");
	for (z = 0; z < nsz; z++) {
		size_t n = sizes[z], sets = (total + n - 1) / n, s, i;
		uint64_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b),
			*t = malloc(n * sizeof *t), max = (1ULL << bits) - 1, vals[16];
		double tf = 0, tq = 0, t0;

		if (!a || !b || !t) {
			fprintf(stderr, "keysort: out of memory\n");
			return 1;
		}
		for (s = 0; s < sets; s++) {
			uint64_t *r;

			for (i = 0; i < 16; i++)
				vals[i] = next() & max;
			for (i = 0; i < n; i++)
				a[i] = b[i] = crowd ? vals[next() & 15] : next() & max;
			t0 = cpu_s();
			r = filt_sort_keys(a, t, n, max);
			tf += cpu_s() - t0;
			t0 = cpu_s();
			qsort(b, n, sizeof *b, cmp_u64);
			tq += cpu_s() - t0;
			if (memcmp(r, b, n * sizeof *b)) {
				fprintf(stderr, "keysort: N %zu set %zu: filt_sort_keys differs from qsort\n", n, s);
				return 1;
			}
		}
		printf("%zu\t%zu\t%.2f\t%.2f\t%.2f\n", n, sets, 1e9 * tf / (double)(sets * n),
				1e9 * tq / (double)(sets * n), tq / tf);
		free(a);
		free(b);
		free(t);
	}
	return 0;
}
