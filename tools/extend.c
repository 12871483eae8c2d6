/*
 * extend - verify candidate diagonals by banded alignment and write the
 * hits: a candidates stream in (from seedfilt), SAM, BAM or a hits stream
 * out.  The work is in common/ext.c and the alignment core in
 * common/align*.c; see man/extend.1.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <htslib/sam.h>

#include "align.h"
#include "ext.h"
#include "idx.h"
#include "ocl.h"
#include "rec.h"
#include "rec_kinds.h"
#include "seqio.h"
#include "util.h"

#define DEF_A 3
#define DEF_BATCH 65536        /* candidates (or reads) per batch */

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
"  -d DEVICE         auto, gpu, cpu, none or P:D [$SEEDPIPE_DEVICE, else auto]\n"
"  -t INT            threads [%d]\n"
"  -B INT            candidates per batch [%d]\n"
"  -o FILE           write the hits to FILE [-]\n"
"  -f                write a hits stream even to a terminal\n"
"  -q                no summary, no warnings\n"
"  -h, --help        this help\n"
"  --version         print the version\n",
		ALIGN_MAX_A, DEF_A, sp_default_threads(8), DEF_BATCH);
}

/* The output: one of a SAM/BAM file or a hits stream. */
typedef struct {
	int fmt;
	const char *path;
	samFile *sam;
	sam_hdr_t *hdr;
	bam1_t *b;
	rec_writer_t *w;
	rec_hit_t *rh;
	size_t rh_cap;
	char *cig;
	size_t cig_cap;
	char *qbuf, *sbuf, *nbuf;
	size_t qcap;
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

static void out_open(out_t *o, const idx_t *x, const rec_prov_t *prov, int force)
{
	kstring_t ks = { 0, 0, NULL };
	uint32_t i;

	if (o->fmt == OUT_REC) {
		o->w = rec_create(o->path, REC_KIND_HITS, prov, 0, force);
		return;
	}
	o->sam = sam_open(o->path, o->fmt == OUT_BAM ? "wb" : "w");
	if (!o->sam)
		sp_die("cannot create '%s': %s", o->path, strerror(errno));
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
	o->b = bam_init1();
}

static void out_close(out_t *o)
{
	if (o->w) {
		rec_finish(o->w);
	} else {
		bam_destroy1(o->b);
		if (sam_close(o->sam) < 0)
			sp_die("cannot write '%s'", o->path);
		sam_hdr_destroy(o->hdr);
	}
	free(o->rh);
	free(o->cig);
	free(o->qbuf);
	free(o->sbuf);
	free(o->nbuf);
}

/* One SAM/BAM record of read RD: hit H (NULL: unmapped), FLAG extra bits. */
static void put_sam(out_t *o, const ext_batch_t *bt, const rec_read_t *rd, const ext_hit_t *h,
		int secondary)
{
	uint32_t m = rd->seq_len, i;
	uint16_t flag = 0;
	const char *seq = rd->seq;
	char *qual = NULL;
	size_t nl = rd->name_len;
	const char *name = rd->name;

	if (o->qcap < (size_t)m + 32) {
		o->qcap = (size_t)m + 32;
		o->qbuf = sp_realloc(o->qbuf, o->qcap);
		o->sbuf = sp_realloc(o->sbuf, o->qcap);
		o->nbuf = sp_realloc(o->nbuf, o->qcap > 64 ? o->qcap : 64);
	}
	if (!nl) {
		nl = (size_t)snprintf(o->nbuf, 64, "%" PRIu64, rd->id);
		name = o->nbuf;
	} else if (nl > 254) {
		nl = 254;
	}
	if (!h)
		flag |= BAM_FUNMAP;
	else if (h->strand == REC_STRAND_REV)
		flag |= BAM_FREVERSE;
	if (secondary)
		flag |= BAM_FSECONDARY;
	if (h && h->strand == REC_STRAND_REV) {
		seqio_revcomp(o->sbuf, rd->seq, m);
		seq = o->sbuf;
	}
	if (rd->qual) {
		qual = o->qbuf;
		for (i = 0; i < m; i++) {
			char q = (h && h->strand == REC_STRAND_REV) ? rd->qual[m - 1 - i] : rd->qual[i];
			qual[i] = (char)(q >= 33 ? q - 33 : 0);
		}
	}
	if (bam_set1(o->b, nl, name, flag, h ? (int32_t)h->seq : -1, h ? (hts_pos_t)h->pos : -1,
			h ? h->mapq : 0, h ? h->n_cigar : 0, h ? h->cigar : NULL, -1, -1, 0,
			m, seq, qual, 64 + 4 * (size_t)m) < 0)
		sp_die("cannot make the SAM record of read '%.*s'", (int)nl, name);
	if (h) {
		const char *md = ext_hit_md(bt, h);
		if (bam_aux_update_int(o->b, "NM", h->dist) < 0
				|| bam_aux_append(o->b, "MD", 'Z', (int)strlen(md) + 1,
					(const uint8_t *)md) < 0
				|| bam_aux_update_int(o->b, "AS", -(int64_t)h->dist) < 0)
			sp_die("cannot make the SAM tags of read '%.*s'", (int)nl, name);
	}
	if (sam_write1(o->sam, o->hdr, o->b) < 0)
		sp_die("cannot write '%s'", o->path);
}

/* Write the reads of batch BT with their hits. */
static void out_batch(out_t *o, const ext_batch_t *bt)
{
	size_t i, nr = ext_batch_reads(bt);
	uint32_t n, j;

	for (i = 0; i < nr; i++) {
		const rec_read_t *rd = ext_batch_read(bt, i);
		const ext_hit_t *h = ext_batch_hits(bt, i, &n);

		if (o->fmt != OUT_REC) {
			if (!n)
				put_sam(o, bt, rd, NULL, 0);
			for (j = 0; j < n; j++)
				put_sam(o, bt, rd, &h[j], j > 0);
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
	int c, force = 0, quiet = 0, a = DEF_A;
	size_t batch = DEF_BATCH;
	ext_opt_t eo;
	ext_stats_t st;
	ext_batch_t *bt;
	out_t out;
	rec_reader_t *r;
	rec_prov_t prov;
	idx_t *x;
	ocl_ctx_t *ocl;
	const uint8_t *body;
	uint32_t len;
	char msg[512], fp[32], dev_desc[256] = "native C";
	double t0 = sp_now();

	sp_set_progname(argv[0]);
	sp_quiet_sigpipe();
	memset(&eo, 0, sizeof eo);
	memset(&st, 0, sizeof st);
	memset(&out, 0, sizeof out);
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

	/* device before the index: a missing GPU is reported at once (exit 3) */
	ocl = ocl_open_or_die(device, 0);
	eo.ocl = ocl;
	if (ocl)
		ocl_describe(ocl, dev_desc, sizeof dev_desc);

	r = rec_open(in_path, REC_KIND_CANDIDATES);
	sidx = rec_prov_get(rec_reader_prov(r), REC_PROV_INDEX);
	sfp = rec_prov_get(rec_reader_prov(r), REC_PROV_INDEX_FP);
	if (!index)
		index = sidx;
	if (!index || !*index)
		sp_die("the candidates stream names no index: give -x FILE");
	x = idx_open(index, 0);
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
	out_open(&out, x, &prov, force);

	bt = ext_batch_new();
	for (;;) {
		int more = rec_next(r, &body, &len);
		if (more) {
			if (ext_batch_add(bt, body, len) < 0) {
				rec_reader_bad_record(r, NULL, "malformed candidates record");
				rec_die(r);
			}
		}
		if (ext_batch_reads(bt) && (!more || ext_batch_cands(bt) >= batch
					|| ext_batch_reads(bt) >= batch)) {
			if (ext_batch_run(bt, x, &eo, &st, msg, sizeof msg) < 0)
				sp_die("%s", msg);
			out_batch(&out, bt);
			ext_batch_clear(bt);
		}
		if (!more)
			break;
	}
	out_close(&out);
	ext_batch_free(bt);
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
