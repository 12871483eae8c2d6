/*
 * align_bench.c - the alignment core on a file of pairs, for bench/align.sh
 * (not a TAP test; built with the unit tests so that it links the library).
 *
 *     align_bench --gen N LEN A SEED > pairs.txt
 *         N pairs "READ<TAB>WINDOW": a random genome, reads of LEN bases
 *         sampled from it with 0..A random edits (substitutions, insertions,
 *         deletions), the window the read's true position -A .. +LEN+A
 *     align_bench [-e A] [-t N] [-g] [-c] [-p] [-w] [-d DEVICE] pairs.txt
 *         align every pair (one align_batch, -t threads, or align_batch_ocl
 *         on the OpenCL DEVICE), format each CIGAR as SAM text, and print
 *         "pairs hits sum_dist sum_end cigar_hash seconds": the summary
 *         bench/edlib_driver prints too (-g: --no-gaps; -c: distance only,
 *         no CIGAR; -p: the windows 2-bit packed first, as a reference is;
 *         -w: the result buffer's pages touched before timing, as when a
 *         buffer is reused from batch to batch)
 *
 * seconds is the time spent aligning and formatting, without reading input.
 */
#include "align.h"
#include "seqio.h"
#include "util.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rng(void)
{
	return tu_xorshift64(&rng_state);
}

static int gen(long n, int len, int a, uint64_t seed)
{
	size_t glen = 4000000, i, pos;
	char *g = sp_malloc(glen), *r = sp_malloc((size_t)len * 2 + 1);
	long k;
	int j, e, ne, x;

	rng_state = seed * 0x9E3779B97F4A7C15ull + 1;
	for (i = 0; i < glen; i++)
		g[i] = "ACGT"[rng() & 3];
	for (k = 0; k < n; k++) {
		pos = (size_t)a + rng() % (glen - (size_t)len * 2 - (size_t)a * 2);
		ne = (int)(rng() % (uint64_t)(a + 1));
		/* read: genome from pos with NE edits, LEN bases */
		for (i = pos, j = 0; j < len; ) {
			e = ne > 0 && rng() % (uint64_t)len < (uint64_t)ne;
			if (!e) {
				r[j++] = g[i++];
				continue;
			}
			ne--;
			x = (int)(rng() % 3);
			if (x == 0) {          /* substitution */
				r[j++] = "ACGT"[(strchr("ACGT", g[i]) - "ACGT" + 1 + (int)(rng() % 3)) & 3];
				i++;
			} else if (x == 1) {   /* read base not in the genome */
				r[j++] = "ACGT"[rng() & 3];
			} else {               /* genome base not in the read */
				i++;
			}
		}
		fwrite(r, 1, (size_t)len, stdout);
		putchar('\t');
		fwrite(g + pos - (size_t)a, 1, (size_t)len + 2 * (size_t)a, stdout);
		putchar('\n');
	}
	free(g);
	free(r);
	sp_close_stdout();
	return 0;
}

int main(int argc, char **argv)
{
	const char *device = NULL;
	int a = 5, nt = 1, opt, warm = 0;
	unsigned flags = 0;
	FILE *f;
	char *line = NULL, *tab, cig[512], msg[256];
	size_t cap = 0, n = 0, cap_pairs = 0, rl = 0, rcap = 0, wl = 0, wcap = 0, k;
	ssize_t len;
	uint8_t *reads = NULL, *wins = NULL;
	align_pair_t *pairs = NULL;
	align_res_t *res;
	uint64_t hits = 0, sum_dist = 0, sum_end = 0, cx = 0;
	ocl_ctx_t *ctx = NULL;
	double t0, t;

	sp_set_progname(argv[0]);
	if (argc == 6 && !strcmp(argv[1], "--gen"))
		return gen(atol(argv[2]), atoi(argv[3]), atoi(argv[4]), strtoull(argv[5], NULL, 10));
	while ((opt = getopt(argc, argv, "e:t:gcpwd:")) != -1) {
		switch (opt) {
		case 'p': flags |= ALIGN_PACKED; break;
		case 'w': warm = 1; break;
		case 'e': a = atoi(optarg); break;
		case 't': nt = atoi(optarg); break;
		case 'g': flags |= ALIGN_NOGAPS; break;
		case 'c': flags |= ALIGN_NOCIGAR; break;
		case 'd': device = optarg; break;
		default:
			fprintf(stderr, "usage: align_bench [-e A] [-t N] [-g] [-c] [-p] [-w] [-d DEVICE] FILE\n"
					"       align_bench --gen N LEN A SEED\n");
			return 2;
		}
	}
	if (optind + 1 != argc)
		sp_die("expected one file of pairs");
	if (!(f = fopen(argv[optind], "r")))
		sp_die("cannot open '%s'", argv[optind]);
	while ((len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] == '\n')
			line[--len] = 0;
		if (!(tab = strchr(line, '\t')))
			sp_die("line %zu: no tab", n + 1);
		if (n == cap_pairs) {
			cap_pairs = cap_pairs ? cap_pairs * 2 : 1024;
			pairs = sp_realloc(pairs, cap_pairs * sizeof *pairs);
		}
		while (rl + (size_t)len > rcap) {
			rcap = rcap ? rcap * 2 : 1 << 20;
			reads = sp_realloc(reads, rcap);
		}
		while (wl + (size_t)len > wcap) {
			wcap = wcap ? wcap * 2 : 1 << 20;
			wins = sp_realloc(wins, wcap);
		}
		memset(&pairs[n], 0, sizeof pairs[n]);
		pairs[n].read_off = rl;
		pairs[n].read_len = (uint32_t)(tab - line);
		memcpy(reads + rl, line, (size_t)(tab - line));
		rl += (size_t)(tab - line);
		pairs[n].win_off = wl;
		pairs[n].win_len = (uint32_t)(len - (tab - line) - 1);
		memcpy(wins + wl, tab + 1, pairs[n].win_len);
		wl += pairs[n].win_len;
		n++;
	}
	fclose(f);
	free(line);
	if (flags & ALIGN_PACKED) {   /* the windows 2-bit packed, offsets unchanged (bases) */
		uint8_t *pk = sp_malloc(wl / 4 + 1);
		seqio_pack2(pk, (const char *)wins, wl);
		free(wins);
		wins = pk;
		wl = wl / 4 + 1;
	}
	if (device) {
		ctx = ocl_open_or_die(device, OCL_VERBOSE);
		if (ctx)
			ocl_program(ctx, "align", NULL);   /* build before timing */
	}
	res = sp_malloc((n ? n : 1) * sizeof *res);
	if (warm)   /* pages of the output touched before timing, as in a reused buffer */
		memset(res, 0, (n ? n : 1) * sizeof *res);
	t0 = sp_now();
	if (ctx) {
		if (align_batch_ocl(ctx, reads, rl, wins, wl, pairs, n, (unsigned)a, flags, NULL, 0, res,
				msg, sizeof msg) != CL_SUCCESS)
			sp_die("%s", msg);
	} else if (align_batch(reads, wins, pairs, n, (unsigned)a, flags, nt, NULL, 0, res, msg,
			sizeof msg) < 0) {
		sp_die("%s", msg);
	}
	for (k = 0; k < n; k++) {
		const char *s;
		if (res[k].dist < 0)
			continue;
		hits++;
		sum_dist += (uint64_t)res[k].dist;
		sum_end += res[k].end;
		if (!(flags & ALIGN_NOCIGAR))
			for (s = align_cigar_str(&res[k], cig, sizeof cig); *s; s++)
				cx = cx * 31 + (uint8_t)*s;
	}
	t = sp_now() - t0;
	printf("pairs %zu hits %llu sum_dist %llu sum_end %llu cigar_hash %016llx seconds %.3f"
			" pairs_per_s %.0f\n", n, (unsigned long long)hits, (unsigned long long)sum_dist,
			(unsigned long long)sum_end, (unsigned long long)cx, t, (double)n / t);
	ocl_close(ctx);
	free(res);
	free(reads);
	free(wins);
	free(pairs);
	return 0;
}
