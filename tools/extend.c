/*
 * extend - verify candidate diagonals by banded alignment and write the
 * hits: a candidates stream in (from seedfilt), SAM, BAM or a hits stream
 * out.  The work is in common/ext.c and the alignment core in
 * common/align*.c; see man/extend.1.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <htslib/hfile.h>
#include <htslib/sam.h>

#include "align.h"
#include "ext.h"
#include "galign.h"
#include "idx.h"
#include "ocl.h"
#include "rec.h"
#include "rec_kinds.h"
#include "seqio.h"
#include "util.h"

#define DEF_A 3
#define DEF_BATCH 65536        /* candidates (or reads) per batch on a device */
#define DEF_BATCH_CPU 4096     /* ... and on the CPU, where batches are spread over threads */

enum { OUT_SAM, OUT_BAM, OUT_REC };

static void usage(FILE *fp)
{
	fprintf(fp,
"Usage: extend [options] [CANDIDATES] > HITS\n"
"\n"
"Align each read of a candidates stream (from seedfilt; '-' or no argument =\n"
"stdin) against the reference around its candidate diagonals within A edit\n"
"operations, and write every locus found once, at its best alignment, with\n"
"unmapped reads kept, in input order.\n"
"\n"
"Options:\n"
"  -e INT            edit operations allowed, A, 0..%d [%d]\n"
"  --no-gaps         substitutions only (Hamming distance)\n"
"  -O FORMAT         sam, bam or rec (a hits stream) [sam]\n"
"  -k INT            report the best INT hits of each read\n"
"  --all             report every hit (the default)\n"
"  --best            report the hits at the least distance only\n"
"  -x FILE           index (default: the one named by the stream, whose\n"
"                    fingerprint must match either way)\n"
"  -d DEVICE         auto or none (the native code), gpu, cpu or P:D\n"
"                    [$SEEDPIPE_DEVICE, else auto]\n"
"  -t INT            threads [%d]\n"
"  -B INT            candidates per batch [%d with a device, else %d]\n"
"  -o FILE           write the hits to FILE [-]\n"
"  -f                write a hits stream even to a terminal\n"
"  -q                no summary, no warnings\n"
"  -h, --help        this help\n"
"  --version         print the version\n",
		ALIGN_MAX_A, DEF_A, sp_default_threads(8), DEF_BATCH, DEF_BATCH_CPU);
}

/* The output: one of a SAM/BAM file or a hits stream. */
typedef struct {
	int fmt;
	const char *path;
	samFile *sam;
	sam_hdr_t *hdr;
	rec_writer_t *w;
	rec_hit_t *rh;
	size_t rh_cap;
	char *cig;
	size_t cig_cap;
} out_t;


/* Append the @PG lines of PROV (oldest first), chained by PP, unique IDs. */
static void pg_lines(kstring_t *ks, const rec_prov_t *prov)
{
	size_t it = 0, n = 0, i;
	const char *v;
	char **ids = NULL;

	while ((v = rec_prov_next(prov, REC_PROV_PG, &it))) {
		const char *t1 = strchr(v, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
		char id[128], tool[96];
		size_t tl = t1 ? (size_t)(t1 - v) : strlen(v);
		int dup = 0;

		if (tl >= sizeof tool)
			tl = sizeof tool - 1;
		memcpy(tool, v, tl);
		tool[tl] = 0;
		snprintf(id, sizeof id, "%s", tool[0] ? tool : "pg");
		for (;;) {
			for (i = 0; i < n && strcmp(ids[i], id); i++)
				;
			if (i == n)
				break;
			snprintf(id, sizeof id, "%s.%d", tool[0] ? tool : "pg", ++dup);
		}
		ksprintf(ks, "@PG\tID:%s\tPN:%s", id, tool);
		if (t1)
			kputs("\tVN:", ks), kputsn(t1 + 1, t2 ? (size_t)(t2 - t1 - 1) : strlen(t1 + 1), ks);
		if (n)
			ksprintf(ks, "\tPP:%s", ids[n - 1]);
		if (t2) {
			kputs("\tCL:", ks);
			for (const char *c = t2 + 1; *c; c++)
				kputc(*c == '\t' ? ' ' : *c, ks);
		}
		kputc('\n', ks);
		ids = sp_realloc(ids, (n + 1) * sizeof(char *));
		ids[n++] = sp_strdup(id);
	}
	for (i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
}

static void out_open(out_t *o, const idx_t *x, const rec_prov_t *prov, int force,
		int n_threads)
{
	kstring_t ks = { 0, 0, NULL };
	uint32_t i;

	if (o->fmt == OUT_REC) {
		o->w = rec_create(o->path, REC_KIND_HITS, prov, 0, force);
		return;
	}
	if (o->fmt == OUT_BAM && !force) {
		int fd = strcmp(o->path, "-") ? open(o->path, O_WRONLY | O_NOCTTY) : STDOUT_FILENO;
		int tty = fd >= 0 && isatty(fd);

		if (fd >= 0 && fd != STDOUT_FILENO)
			close(fd);
		if (tty)
			sp_die("refusing to write BAM to a terminal (use -f to force, or redirect "
					"the output)");
	}
	o->sam = sam_open(o->path, o->fmt == OUT_BAM ? "wb" : "w");
	if (!o->sam)
		sp_die("cannot create '%s': %s", o->path, strerror(errno));
	/* BGZF blocks compressed by a pool: the same blocks, the same bytes */
	if (o->fmt == OUT_BAM && n_threads > 1 && hts_set_threads(o->sam, n_threads) < 0)
		sp_die("cannot start the BAM compression threads");
	kputs("@HD\tVN:1.6\tSO:unsorted\n", &ks);
	for (i = 0; i < x->n_seq; i++)
		ksprintf(&ks, "@SQ\tSN:%s\tLN:%" PRIu64 "\n", x->names[i], x->len[i]);
	pg_lines(&ks, prov);
	o->hdr = sam_hdr_parse(ks.l, ks.s);
	free(ks.s);
	if (!o->hdr)
		sp_die("cannot make the SAM header");
	if (sam_hdr_write(o->sam, o->hdr) < 0)
		sp_die("cannot write '%s'", o->path);
}

static void out_close(out_t *o)
{
	if (o->w) {
		rec_finish(o->w);
	} else {
		if (sam_close(o->sam) < 0)
			sp_die("cannot write '%s'", o->path);
		sam_hdr_destroy(o->hdr);
	}
	free(o->rh);
	free(o->cig);
}

/*
 * The SAM text of the reads of batch BT with their hits, appended to KS
 * (one line each, as sam_write1 writes them); RNAMES names the sequences.
 */
static void sam_text(const char *const *rnames, const ext_batch_t *bt, kstring_t *ks)
{
	size_t i, nr = ext_batch_reads(bt);
	uint32_t n, j;

	for (i = 0; i < nr; i++) {
		const rec_read_t *rd = ext_batch_read(bt, i);
		const ext_hit_t *h = ext_batch_hits(bt, i, &n);

		if (!n)
			ext_sam_line(ks, rd, NULL, NULL, NULL, 0);
		for (j = 0; j < n; j++)
			ext_sam_line(ks, rd, &h[j], rnames[h[j].seq], ext_hit_md(bt, &h[j]), j > 0);
	}
}

/* Write the reads of batch BT with their hits (BAM or a hits stream). */
static void out_batch(out_t *o, ext_bam_t *f, const ext_batch_t *bt)
{
	size_t i, nr = ext_batch_reads(bt);
	uint32_t n, j;

	for (i = 0; i < nr; i++) {
		const rec_read_t *rd = ext_batch_read(bt, i);
		const ext_hit_t *h = ext_batch_hits(bt, i, &n);

		if (o->fmt != OUT_REC) {
			for (j = 0; j < (n ? n : 1); j++) {
				ext_bam_record(f, rd, n ? &h[j] : NULL, n ? ext_hit_md(bt, &h[j]) : NULL, j > 0);
				if (sam_write1(o->sam, o->hdr, f->b) < 0)
					sp_die("cannot write '%s'", o->path);
			}
			continue;
		}
		if (o->rh_cap < n) {
			o->rh_cap = n;
			o->rh = sp_realloc(o->rh, n * sizeof(rec_hit_t));
		}
		{
			size_t need = (size_t)n * 8 * ALIGN_MAX_CIGAR + 1, off = 0;
			if (o->cig_cap < need) {
				o->cig_cap = need;
				o->cig = sp_realloc(o->cig, need);
			}
			for (j = 0; j < n; j++) {
				rec_hit_t *r = &o->rh[j];
				ext_cigar_str(&h[j], o->cig + off, 8 * ALIGN_MAX_CIGAR);
				r->seq_id = h[j].seq;
				r->pos = h[j].pos;
				r->score = -(int32_t)h[j].dist;
				r->edit = (uint16_t)h[j].dist;
				r->strand = h[j].strand;
				r->mapq = h[j].mapq;
				r->cigar = o->cig + off;
				r->cigar_len = (uint32_t)strlen(o->cig + off);
				off += r->cigar_len;
			}
		}
		rec_put_hits(o->w, rd, o->rh, n);
	}
}

/*
 * The work is pipelined: the main thread reads batches and writes the
 * results in input order while the workers verify batches (and make their
 * SAM text), each batch whole on one worker:
 *
 *     slots (a ring):  [written][.. in flight ..][free]
 *                       ^ tail    ^ take (next to run)  ^ head (next to fill)
 *
 * There is one worker per thread on the CPU, with small batches.  With a
 * device the main thread runs each (large) batch itself between reading
 * and writing, as the device aligns a batch at once: an exit on a bad
 * input while another thread is in the OpenCL platform (PoCL with its
 * LLVM) could abort in the platform's destructors.  For the same reason
 * the device is not looked for in the background.
 */
typedef struct {
	ext_batch_t *bt;
	ext_stats_t st;
	kstring_t txt;       /* SAM text (OUT_SAM) */
	int done, rc;
	char msg[512];
} slot_t;

typedef struct {
	pthread_mutex_t lock;
	pthread_cond_t work, done;
	slot_t *slot;
	size_t n_slot, head, take, tail;
	int quit;
	const idx_t *x;
	ext_opt_t eo;        /* of one batch */
	const out_t *out;
	const char **rnames;  /* of the SAM header, by sequence number */
} pool_t;

/* Verify the batch of slot S (and make its SAM text). */
static void slot_run(pool_t *p, slot_t *s)
{
	s->rc = ext_batch_run(s->bt, p->x, &p->eo, &s->st, s->msg, sizeof s->msg);
	if (s->rc == 0 && p->out->fmt == OUT_SAM)
		sam_text(p->rnames, s->bt, &s->txt);
}

static void *pool_worker(void *arg)
{
	pool_t *p = arg;

	for (;;) {
		slot_t *s;

		pthread_mutex_lock(&p->lock);
		while (p->take == p->head && !p->quit)
			pthread_cond_wait(&p->work, &p->lock);
		if (p->take == p->head) {
			pthread_mutex_unlock(&p->lock);
			break;
		}
		s = &p->slot[p->take++ % p->n_slot];
		pthread_mutex_unlock(&p->lock);
		slot_run(p, s);
		pthread_mutex_lock(&p->lock);
		s->done = 1;
		pthread_cond_broadcast(&p->done);
		pthread_mutex_unlock(&p->lock);
	}
	return NULL;
}

/* Wait for the oldest batch in flight, write it and free its slot. */
static void pool_write(pool_t *p, out_t *o, ext_bam_t *f, ext_stats_t *st)
{
	slot_t *s = &p->slot[p->tail % p->n_slot];

	pthread_mutex_lock(&p->lock);
	while (!s->done)
		pthread_cond_wait(&p->done, &p->lock);
	pthread_mutex_unlock(&p->lock);
	if (s->rc < 0)
		sp_die("%s", s->msg);
	if (o->fmt == OUT_SAM) {
		if (s->txt.l && hwrite(o->sam->fp.hfile, s->txt.s, s->txt.l) != (ssize_t)s->txt.l)
			sp_die("cannot write '%s'", o->path);
	} else {
		out_batch(o, f, s->bt);
	}
	st->reads += s->st.reads;
	st->cands += s->st.cands;
	st->windows += s->st.windows;
	st->bases += s->st.bases;
	st->loci += s->st.loci;
	st->hits += s->st.hits;
	st->mapped += s->st.mapped;
	st->unmapped += s->st.unmapped;
	st->too_long += s->st.too_long;
	p->tail++;
}

int main(int argc, char **argv)
{
	enum { OPT_VERSION = 256, OPT_NOGAPS, OPT_ALL, OPT_BEST };
	static const struct option lopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "no-gaps", no_argument, NULL, OPT_NOGAPS },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "best", no_argument, NULL, OPT_BEST },
		{ NULL, 0, NULL, 0 }
	};
	const char *index = NULL, *in_path = "-", *device = NULL, *sfp, *sidx;
	int c, force = 0, quiet = 0, a = DEF_A, more, n_work, t;
	size_t batch = 0, i;
	ext_opt_t eo;
	ext_stats_t st;
	out_t out;
	ext_bam_t fmt;
	pool_t pool;
	pthread_t *tid;
	rec_reader_t *r;
	rec_prov_t prov;
	idx_t *x;
	ocl_ctx_t *ocl;
	const uint8_t *body;
	uint32_t len;
	char msg[512], fp[32], dev_desc[256] = "native C";
	double t0 = sp_now();

	for (c = 1; c < argc && strcmp(argv[c], "--"); c++)   /* global alignment: galign_cli.c */
		if (!strcmp(argv[c], "--global"))
			return galign_main(argc, argv);
	sp_set_progname(argv[0]);
	sp_quiet_sigpipe();
	memset(&eo, 0, sizeof eo);
	memset(&st, 0, sizeof st);
	memset(&out, 0, sizeof out);
	memset(&fmt, 0, sizeof fmt);
	out.fmt = OUT_SAM;
	out.path = "-";
	eo.mode = EXT_ALL;
	eo.n_threads = sp_default_threads(8);
	while ((c = getopt_long(argc, argv, "e:O:k:x:d:t:B:o:fqh", lopts, NULL)) != -1) {
		switch (c) {
		case 'e': a = (int)sp_opt_int(optarg, "-e", 0, 1 << 20, usage); break;
		case OPT_NOGAPS: eo.nogaps = 1; break;
		case 'O':
			if (!strcmp(optarg, "sam"))
				out.fmt = OUT_SAM;
			else if (!strcmp(optarg, "bam"))
				out.fmt = OUT_BAM;
			else if (!strcmp(optarg, "rec"))
				out.fmt = OUT_REC;
			else {
				fprintf(stderr, "%s: option -O: unknown format '%s' (sam, bam or rec)\n",
						sp_progname, optarg);
				usage(stderr);
				return SP_EXIT_USAGE;
			}
			break;
		case 'k':
			eo.mode = EXT_BEST_K;
			eo.k = (uint32_t)sp_opt_int(optarg, "-k", 1, UINT32_MAX, usage);
			break;
		case OPT_ALL: eo.mode = EXT_ALL; break;
		case OPT_BEST: eo.mode = EXT_STRATUM; break;
		case 'x': index = optarg; break;
		case 'd': device = optarg; break;
		case 't': eo.n_threads = (int)sp_opt_int(optarg, "-t", 1, 256, usage); break;
		case 'B': batch = (size_t)sp_opt_int(optarg, "-B", 1, 1 << 24, usage); break;
		case 'o': out.path = optarg; break;
		case 'f': force = 1; break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); return 0;
		case OPT_VERSION: printf("extend %s\n", SP_VERSION); return 0;
		default: usage(stderr); return SP_EXIT_USAGE;
		}
	}
	if (optind < argc)
		in_path = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "%s: too many arguments (one CANDIDATES file at most)\n",
				sp_progname);
		usage(stderr);
		return SP_EXIT_USAGE;
	}
	if (a > ALIGN_MAX_A)
		sp_die("-e %d: at most %d edit operations fit the alignment core's band", a,
				ALIGN_MAX_A);
	eo.max_a = (unsigned)a;

	/* device before the index: a missing GPU is reported at once (exit 3).
	 * auto is the native code here: on chrX candidates it was several times
	 * faster than an H200 (bench/RESULTS.md, extend-chrx1m-gpu-vs-cpu) */
	if (!device)
		device = getenv("SEEDPIPE_DEVICE");
	if (!device || !*device || !strcmp(device, "auto"))
		device = "none";
	ocl = ocl_open_or_die(device, 0);
	if (!batch)
		batch = ocl ? DEF_BATCH : DEF_BATCH_CPU;

	r = rec_open(in_path, REC_KIND_CANDIDATES);
	sidx = rec_prov_get(rec_reader_prov(r), REC_PROV_INDEX);
	sfp = rec_prov_get(rec_reader_prov(r), REC_PROV_INDEX_FP);
	if (!index)
		index = sidx;
	if (!index || !*index)
		sp_die("the candidates stream names no index: give -x FILE");
	x = ext_idx_open(index);
	snprintf(fp, sizeof fp, "%016" PRIx64, x->fingerprint);
	if (!sfp)
		sp_die("the candidates stream holds no index fingerprint: it cannot be checked "
				"against index '%s'", index);
	if (strcmp(sfp, fp))
		sp_die("index '%s' has fingerprint %s but the candidates were made with index "
				"'%s' of fingerprint %s", index, fp, sidx ? sidx : "?", sfp);

	rec_prov_init(&prov);
	rec_prov_carry(&prov, rec_reader_prov(r));
	rec_prov_add_pg(&prov, "extend", SP_VERSION, argc, argv);
	snprintf(msg, sizeof msg, "%d", a);
	rec_prov_set(&prov, "extend.e", msg);
	rec_prov_set(&prov, "extend.gaps", eo.nogaps ? "no" : "yes");
	out_open(&out, x, &prov, force, eo.n_threads);

	/* the pool: one worker per thread, none with a device */
	memset(&pool, 0, sizeof pool);
	n_work = ocl ? 0 : eo.n_threads;
	pool.n_slot = 2 * (size_t)n_work + 2;
	pool.slot = sp_calloc(pool.n_slot, sizeof(slot_t));
	for (i = 0; i < pool.n_slot; i++)
		pool.slot[i].bt = ext_batch_new();
	pool.x = x;
	pool.eo = eo;
	pool.eo.n_threads = 1;   /* the device ignores it */
	pool.eo.ocl = ocl;
	pool.out = &out;
	if (out.fmt == OUT_SAM) {
		if ((uint32_t)sam_hdr_nref(out.hdr) != x->n_seq)
			sp_die("cannot make the SAM header (%u sequences, %d in the header)",
					x->n_seq, sam_hdr_nref(out.hdr));
		pool.rnames = sp_malloc((x->n_seq ? x->n_seq : 1) * sizeof(char *));
		for (i = 0; i < x->n_seq; i++)
			pool.rnames[i] = sam_hdr_tid2name(out.hdr, (int)i);
	}
	pthread_mutex_init(&pool.lock, NULL);
	pthread_cond_init(&pool.work, NULL);
	pthread_cond_init(&pool.done, NULL);
	tid = sp_malloc((n_work ? (size_t)n_work : 1) * sizeof *tid);
	for (t = 0; t < n_work; t++)
		if (pthread_create(&tid[t], NULL, pool_worker, &pool) != 0)
			sp_die("cannot start a thread");
	do {
		slot_t *s;

		if (pool.head - pool.tail == pool.n_slot)
			pool_write(&pool, &out, &fmt, &st);
		s = &pool.slot[pool.head % pool.n_slot];
		ext_batch_clear(s->bt);
		memset(&s->st, 0, sizeof s->st);
		s->txt.l = 0;
		s->done = 0;
		s->rc = 0;
		while ((more = rec_next(r, &body, &len))) {
			if (ext_batch_add(s->bt, body, len) < 0) {
				rec_reader_bad_record(r, NULL, "malformed candidates record");
				rec_die(r);
			}
			if (ext_batch_cands(s->bt) >= batch || ext_batch_reads(s->bt) >= batch)
				break;
		}
		if (!ext_batch_reads(s->bt))
			break;
		if (!n_work) {
			slot_run(&pool, s);
			s->done = 1;
			pool.head++;
			pool_write(&pool, &out, &fmt, &st);
			continue;
		}
		pthread_mutex_lock(&pool.lock);
		pool.head++;
		pthread_cond_signal(&pool.work);
		pthread_mutex_unlock(&pool.lock);
	} while (more);
	while (pool.tail < pool.head)
		pool_write(&pool, &out, &fmt, &st);
	pthread_mutex_lock(&pool.lock);
	pool.quit = 1;
	pthread_cond_broadcast(&pool.work);
	pthread_mutex_unlock(&pool.lock);
	for (t = 0; t < n_work; t++)
		pthread_join(tid[t], NULL);
	free(tid);
	for (i = 0; i < pool.n_slot; i++) {
		ext_batch_free(pool.slot[i].bt);
		free(pool.slot[i].txt.s);
	}
	free(pool.slot);
	free(pool.rnames);
	pthread_mutex_destroy(&pool.lock);
	pthread_cond_destroy(&pool.work);
	pthread_cond_destroy(&pool.done);
	if (ocl)
		ocl_describe(ocl, dev_desc, sizeof dev_desc);
	out_close(&out);
	ext_bam_free(&fmt);
	rec_reader_free(r);
	if (!quiet) {
		if (st.too_long)
			sp_warn("%" PRIu64 " reads longer than %d bases were left unmapped",
					st.too_long, ALIGN_MAX_READ);
		sp_msg("%" PRIu64 " reads, %" PRIu64 " candidates (%" PRIu64 " windows aligned, %" PRIu64
				" bases), %" PRIu64 " verified hits (loci), %" PRIu64 " reported, %"
				PRIu64 " mapped, %" PRIu64 " unmapped",
				st.reads, st.cands, st.windows, st.bases, st.loci, st.hits,
				st.mapped, st.unmapped);
		sp_msg("-e %d%s, %s, %d threads, %.2f s", a, eo.nogaps ? " --no-gaps" : "",
				dev_desc, eo.n_threads, sp_now() - t0);
	}
	rec_prov_free(&prov);
	ocl_close(ocl);
	idx_close(x);
	sp_close_stdout();
	return 0;
}
