/*
 * memfin.c - the CPU time of -m mem's stage 2 (mem_finish) and of the text
 * lines (mem_fmt_mummer) alone, on one thread, for two builds to compare
 * (issue 19: the device path at L 20 is bound by the host's stage 2).
 *
 *   memfin INDEX.sx READS.fa L [REPS]
 *
 * Stage 1 (mem_find_fm, every partition) runs once per strand, its matches
 * kept; then stage 2 runs REPS times (3) over all strands and stage 3's
 * text once more, each timed by the thread's CPU clock
 * (CLOCK_THREAD_CPUTIME_ID: a shared machine's other work does not count,
 * its caches still do).  Prints the raw matches, the MEMs, ns per raw match
 * of each pass of stage 2, the format's, and a checksum of the MEMs (g, i,
 * len in output order) and of the text: two builds must print the same.
 * -maxmatch, both strands; the reads' N as seedfilt takes them.
 *
 * Build (from the top directory, after make):
 *   cc -O2 -g -Icommon -Ikernels -Ibuild -o bin/memfin bench/memfin.c build/libseedpipe.a \
 *      -lOpenCL -lhts -lz -lxxhash -ldivsufsort -ldivsufsort64 -lm -lpthread
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "idx.h"
#include "mem.h"
#include "seqio.h"
#include "util.h"

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* FNV-1a over N bytes, continued from H. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--)
		h = (h ^ *c++) * 0x100000001b3ULL;
	return h;
}

typedef struct {
	char *seq;                 /* the strand */
	uint32_t m;
	size_t raw0, nraw;         /* its raw matches in the array of all */
	char *name;
	int rev;
} strand_t;

int main(int argc, char **argv)
{
	mem_opt_t o;
	mem_idx_t *mi;
	mem_scratch_t *s;
	idx_t *x;
	char *err = NULL, msg[256];
	seqio_reader_t *rd;
	seq_rec_t rec;
	strand_t *sv = NULL;
	size_t ns = 0, cap = 0, k, nmem = 0;
	mem_rawvec_t all = { NULL, 0, 0 }, tmp = { NULL, 0, 0 };
	mem_raw_t *work;
	mem_vec_t out = { NULL, 0, 0 };
	mem_buf_t txt = { NULL, 0, 0 };
	mem_stats_t st;
	int reps, r;
	uint64_t h = 0xcbf29ce484222325ULL, ht = h;
	double t0;

	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: memfin INDEX.sx READS.fa L [REPS]\n");
		return 2;
	}
	reps = argc > 4 ? atoi(argv[4]) : 3;
	if (!(x = idx_load(argv[1], IDX_LOAD_NOVERIFY, &err))) {
		fprintf(stderr, "memfin: %s: %s\n", argv[1], err);
		return 1;
	}
	memset(&o, 0, sizeof o);
	o.L = (uint32_t)atoi(argv[3]);
	o.mode = MEM_MAXMATCH;
	o.strands = MEM_FWD | MEM_REV;
	if (mem_check(x, msg, sizeof msg) < 0 || !(mi = mem_idx_new(x, &o, 1, msg, sizeof msg))) {
		fprintf(stderr, "memfin: %s\n", msg);
		return 1;
	}
	s = mem_scratch_new();
	memset(&st, 0, sizeof st);
	rd = seqio_open_or_die(argv[2]);
	seqio_rec_init(&rec);
	while (seqio_read_or_die(rd, &rec) > 0) {
		int rv;

		for (rv = 0; rv < 2; rv++) {
			strand_t *q;
			uint32_t p;

			if (ns == cap) {
				cap = cap ? 2 * cap : 1024;
				sv = sp_realloc(sv, cap * sizeof *sv);
			}
			q = &sv[ns++];
			q->m = (uint32_t)rec.seq_len;
			q->seq = sp_malloc(rec.seq_len + 1);
			if (rv)
				seqio_revcomp(q->seq, rec.seq, rec.seq_len);
			else
				memcpy(q->seq, rec.seq, rec.seq_len);
			q->seq[rec.seq_len] = 0;
			q->name = sp_strdup(rec.name);
			q->rev = rv;
			q->raw0 = all.n;
			tmp.n = 0;
			if (q->m >= o.L) {
				uint32_t *w = sp_malloc(mem_words_len(q->m) * sizeof *w);
				mem_strand_t ms = { q->seq, w, q->m };

				mem_pack(w, q->seq, q->m);
				for (p = 0; p < x->n_part; p++)
					mem_find_fm(mi, p, &ms, &tmp, &st, s);
				free(w);
			}
			if (all.n + tmp.n > all.cap) {
				all.cap = 2 * (all.n + tmp.n);
				all.a = sp_realloc(all.a, all.cap * sizeof *all.a);
			}
			if (tmp.n)
				memcpy(all.a + all.n, tmp.a, tmp.n * sizeof *tmp.a);
			all.n += tmp.n;
			q->nraw = tmp.n;
		}
	}
	seqio_close(rd);
	work = sp_malloc((all.n ? all.n : 1) * sizeof *work);
	printf("strands %zu raw %zu\n", ns, all.n);
	for (r = 0; r < reps; r++) {
		double t = 0;

		nmem = 0;
		memcpy(work, all.a, all.n * sizeof *work);   /* mem_finish may reorder them */
		for (k = 0; k < ns; k++) {
			mem_strand_t ms = { sv[k].seq, NULL, sv[k].m };
			size_t n;

			t0 = cpu_now();
			n = mem_finish(mi, &ms, work + sv[k].raw0, sv[k].nraw, &out, s);
			t += cpu_now() - t0;
			nmem += n;
			if (r == 0) {
				size_t j;

				for (j = 0; j < n; j++) {
					h = fnv(h, &out.a[j].g, sizeof out.a[j].g);
					h = fnv(h, &out.a[j].i, sizeof out.a[j].i);
					h = fnv(h, &out.a[j].len, sizeof out.a[j].len);
				}
			}
		}
		printf("stage2 pass %d: %.3f s, %.1f ns/raw, mems %zu\n", r + 1, t,
				all.n ? 1e9 * t / (double)all.n : 0.0, nmem);
	}
	{
		double tf = 0, tf2 = 0;

		memcpy(work, all.a, all.n * sizeof *work);
		for (k = 0; k < ns; k++) {
			mem_strand_t ms = { sv[k].seq, NULL, sv[k].m };
			size_t n = mem_finish(mi, &ms, work + sv[k].raw0, sv[k].nraw, &out, s);

			txt.n = 0;
			t0 = cpu_now();
			mem_fmt_mummer(mi, &txt, sv[k].name, strlen(sv[k].name), sv[k].rev, sv[k].m,
					out.a, n, 0);
			tf += cpu_now() - t0;
			t0 = cpu_now();
			ht = fnv(ht, txt.a, txt.n);
			tf2 += cpu_now() - t0;
		}
		printf("format: %.3f s, %.1f ns/mem\n", tf, nmem ? 1e9 * tf / (double)nmem : 0.0);
	}
	printf("checksum mems %016llx text %016llx\n", (unsigned long long)h, (unsigned long long)ht);
	for (k = 0; k < ns; k++) {
		free(sv[k].seq);
		free(sv[k].name);
	}
	free(sv);
	free(all.a);
	free(tmp.a);
	free(work);
	free(out.a);
	free(txt.a);
	mem_scratch_free(s);
	mem_idx_free(mi);
	idx_close(x);
	return 0;
}
