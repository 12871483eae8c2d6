/*
 * extend - verify candidate diagonals by banded alignment and write the
 * hits: a candidates stream in (from seedfilt), SAM, BAM or a hits stream
 * out.  Options, usage and this stage's provenance are here; the run is
 * ext_run_or_die() (common/ext_run.c, the method in common/ext.h) and the
 * alignment core common/align*.c; see man/extend.1.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "align.h"
#include "ext.h"
#include "filt.h"
#include "rec.h"
#include "util.h"

#define DEF_A 3

enum { OUT_SAM, OUT_BAM, OUT_REC };

/* extend --global: tools/extend_global.c */
void extend_global_options(FILE *fp);
int extend_global_main(int argc, char **argv);
int extend_merge_main(int argc, char **argv);   /* extend --merge: tools/extend_merge.c */

static void usage(FILE *fp)
{
	fprintf(fp,
"Usage: extend [options] [CANDIDATES] > HITS\n"
"       extend --global [options] A.fa [B.fa] > PAIRS\n"
"\n"
"Align each read of a candidates stream (from seedfilt; '-' or no argument =\n"
"stdin) against the reference around its candidate diagonals within A edit\n"
"operations, and write every locus found once, at its best alignment, with\n"
"unmapped reads kept, in input order.\n"
"\n"
"Options:\n"
"  -e INT            edit operations allowed, A, 0..%d [the stream's seedfilt -E,\n"
"                    else %d]\n"
"  --strict          exit 1 when A exceeds what the filter guarantees for some\n"
"                    reads (always warned, even with -q)\n"
"  --no-gaps         substitutions only (Hamming distance)\n"
"  -O FORMAT         sam, bam or rec (a hits stream) [sam]\n"
"  -k INT            report the best INT hits of each read\n"
"  --all             report every hit (the default)\n"
"  --best            report the hits at the least distance only\n"
"  -x FILE           index (default: the one named by the stream, whose\n"
"                    fingerprint must match either way)\n"
"  -d DEVICE         auto, gpu, cpu, none (the native code) or P:D (auto: the\n"
"                    GPU or the native code, by a model measured once and\n"
"                    cached) [$SEEDPIPE_DEVICE, else auto]\n"
"  -t INT            threads [%d]\n"
"  -B INT            candidates per batch [%d with a device, else %d; smaller\n"
"                    if the batches in flight would not fit -M]\n"
"  -M SIZE           memory budget (K, M, G); extend holds the packed reference\n"
"                    only, never the index's partitions [half the physical memory]\n"
"  -I MEAN,SD|MIN,MAX  insert size of a concordant pair (paired-end streams):\n"
"                    MEAN -+ 4 SD, or MIN..MAX (the second number the smaller:\n"
"                    MEAN,SD) [estimated from the first 10000 pairs]\n"
"  -R STR            read group header line, e.g. '@RG\\tID:run1\\tSM:s1' (as bwa:\n"
"                    the line in the header, its ID in an RG tag of every record)\n"
"  -C                append each read's FASTQ comment to its records (as bwa -C:\n"
"                    SAM tags as they are, other text as an XC:Z tag)\n"
"  --secondary MODE  record (each other hit a secondary record) or tag (in the\n"
"                    XA tag of the primary record, as bwa and yara) [record]\n"
"  -o FILE           write the hits to FILE [-]\n"
"  -f                write a hits stream even to a terminal\n"
"  -q                no summary, no warnings\n"
"  -h, --help        this help\n"
"  --version         print the version\n"
"\n"
"  --global          global alignment of whole sequences instead (all against\n"
"                    all of A, A against B, or --pairs; extend --global --help),\n"
"                    with these options and -O tsv or rec, -d (auto: a GPU if\n"
"                    there is one), -t, -B (pairs a batch), -o, -f, -q:\n",
		ALIGN_MAX_A, DEF_A, sp_default_threads(SP_MAX_THREADS), EXT_BATCH_DEV, EXT_BATCH_CPU);
	extend_global_options(fp);
}

int main(int argc, char **argv)
{
	enum { OPT_VERSION = 256, OPT_NOGAPS, OPT_ALL, OPT_BEST, OPT_STRICT };
	static const struct option lopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "no-gaps", no_argument, NULL, OPT_NOGAPS },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "best", no_argument, NULL, OPT_BEST },
		{ "strict", no_argument, NULL, OPT_STRICT },
		{ "secondary", required_argument, NULL, EXT_OPT_SECONDARY },
		{ NULL, 0, NULL, 0 }
	};
	ext_cfg_t cfg;
	rec_prov_t prov;
	char num[32], msg[256];
	int c, a = DEF_A, rc;

	for (c = 1; c < argc && strcmp(argv[c], "--"); c++)   /* global alignment */
		if (!strcmp(argv[c], "--global"))
			return extend_global_main(argc, argv);
		else if (!strcmp(argv[c], "--merge"))
			return extend_merge_main(argc, argv);
	sp_set_progname(argv[0]);
	sp_quiet_sigpipe();
	memset(&cfg, 0, sizeof cfg);
	cfg.in_path = "-";
	cfg.out_path = "-";
	cfg.fmt = EXT_OUT_SAM;
	cfg.eo.mode = EXT_ALL;
	cfg.eo.n_threads = sp_default_threads(SP_MAX_THREADS);
	while ((c = sp_getopt(argc, argv, "e:O:k:x:d:t:B:M:I:R:Co:fqh", lopts)) != -1) {
		switch (ext_sam_opt_parse(c, optarg, &cfg.so, &cfg.ins, msg, sizeof msg)) {
		case 1: continue;
		case -1: sp_usage_error("%s", msg);
		}
		switch (c) {
		case 'e': a = (int)sp_opt_int(optarg, "-e", 0, ALIGN_MAX_A); cfg.a_set = 1; break;
		case OPT_STRICT: cfg.strict = 1; break;
		case OPT_NOGAPS: cfg.eo.nogaps = 1; break;
		case 'O':
			if (!strcmp(optarg, "sam"))
				cfg.fmt = EXT_OUT_SAM;
			else if (!strcmp(optarg, "bam"))
				cfg.fmt = EXT_OUT_BAM;
			else if (!strcmp(optarg, "rec"))
				cfg.fmt = EXT_OUT_REC;
			else
				sp_usage_error("option -O: unknown format '%s' (sam, bam or rec)",
						optarg);
			break;
		case 'k':
			cfg.eo.mode = EXT_BEST_K;
			cfg.eo.k = (uint32_t)sp_opt_int(optarg, "-k", 1, UINT32_MAX);
			break;
		case OPT_ALL: cfg.eo.mode = EXT_ALL; break;
		case OPT_BEST: cfg.eo.mode = EXT_STRATUM; break;
		case 'x': cfg.index = optarg; break;
		case 'd': cfg.device = optarg; break;
		case 't': cfg.eo.n_threads = (int)sp_opt_int(optarg, "-t", 1, 256); break;
		case 'B': cfg.batch = (size_t)sp_opt_int(optarg, "-B", 1, 1 << 24); break;
		case 'M':
			if (!(cfg.mem = filt_parse_size(optarg)))
				sp_usage_error("option -M: '%s' is not a size (bytes, or with K, M, G, T)", optarg);
			break;
		case 'o': cfg.out_path = optarg; break;
		case 'f': cfg.force = 1; break;
		case 'q': cfg.quiet = 1; break;
		case 'h': usage(stdout); sp_close_stdout(); return 0;
		case OPT_VERSION: sp_print_version(); sp_close_stdout(); return 0;
		default: sp_usage_error("unknown option");
		}
	}
	if (optind < argc)
		cfg.in_path = argv[optind++];
	if (optind < argc)
		sp_usage_error("too many arguments (one CANDIDATES file at most)");
	cfg.eo.max_a = (unsigned)a;

	/* this stage's provenance, after the input's in the output */
	rec_prov_init(&prov);
	rec_prov_add_pg(&prov, "extend", SP_VERSION, argc, argv);
	snprintf(num, sizeof num, "%d", a);
	rec_prov_set(&prov, "extend.e", num);
	rec_prov_set(&prov, "extend.gaps", cfg.eo.nogaps ? "no" : "yes");
	cfg.prov = &prov;

	rc = ext_run_or_die(&cfg);
	rec_prov_free(&prov);
	ext_sam_opt_free(&cfg.so);
	sp_close_stdout();
	return rc;
}
