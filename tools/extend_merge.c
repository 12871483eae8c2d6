/*
 * extend_merge.c - extend --merge (linked into extend): the options, the
 * usage and the provenance of the merge of per-partition hits streams; the
 * run is ext_merge_or_die() (common/ext_merge.c, the method in
 * common/ext_merge.h).  See man/extend.1, MERGING PARTITIONS.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ext_merge.h"
#include "rec.h"
#include "util.h"

/* tools/extend.c calls this when --merge is given */
int extend_merge_main(int argc, char **argv);

static void usage(FILE *fp)
{
	fprintf(fp,
"Usage: extend --merge [options] HITS1 HITS2 ... > OUT\n"
"\n"
"Join the hits streams (extend -O rec, every locus: the default --all) of one\n"
"set of reads against each partition of a reference, given in the order of\n"
"the reference's sequences, into what extend writes for those reads against\n"
"the whole reference: every read once, in input order, its loci of all\n"
"partitions ordered, selected (-k, --best) and given MAPQ as one run would,\n"
"the @SQ lines of the partitions in the order given.  Each stream's index\n"
"(the one it names, or -x) gives the sequence names and the MD tags.\n"
"Paired-end streams are paired here, over the loci of every partition, as\n"
"extend pairs them: the insert size (-I, else estimated from the first\n"
"pairs), mate rescue in each partition's reference, every concordant pair.\n"
"\n"
"Options:\n"
"  -x FILE           the index of the next stream, once per stream, in order\n"
"                    [the index each stream names]\n"
"  -O FORMAT         sam or bam [sam]\n"
"  -k INT            report the best INT hits of each read\n"
"  --all             report every hit (the default)\n"
"  --best            report the hits at the least distance only\n"
"  -I MEAN,SD|MIN,MAX  insert size of a concordant pair [estimated]\n"
"  -R STR            read group header line, e.g. '@RG\\tID:run1\\tSM:s1'\n"
"  -C                append each read's FASTQ comment to its records\n"
"  --secondary MODE  a read's other hits as 'record's or in an XA 'tag' [record]\n"
"  -t INT            BAM compression threads [%d]\n"
"  -o FILE           write to FILE [-]\n"
"  -f                write BAM even to a terminal\n"
"  -q                no summary\n"
"  -h, --help        this help\n"
"  --version         print the version\n",
		sp_default_threads(SP_MAX_THREADS));
}

int extend_merge_main(int argc, char **argv)
{
	enum { OPT_VERSION = 256, OPT_ALL, OPT_BEST, OPT_MERGE };
	static const struct option lopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "best", no_argument, NULL, OPT_BEST },
		{ "merge", no_argument, NULL, OPT_MERGE },
		{ "secondary", required_argument, NULL, EXT_OPT_SECONDARY },
		{ NULL, 0, NULL, 0 }
	};
	ext_merge_cfg_t cfg;
	rec_prov_t prov;
	char **idx = sp_calloc((size_t)argc, sizeof *idx);
	char msg[256];
	int c, n_idx = 0, rc;

	sp_set_progname(argv[0]);
	sp_quiet_sigpipe();
	memset(&cfg, 0, sizeof cfg);
	cfg.out_path = "-";
	cfg.fmt = EXT_OUT_SAM;
	cfg.mode = EXT_ALL;
	cfg.n_threads = sp_default_threads(SP_MAX_THREADS);
	cfg.ins.how = EXT_INS_NONE;
	while ((c = sp_getopt(argc, argv, "x:O:k:t:o:I:R:Cfqh", lopts)) != -1) {
		switch (ext_sam_opt_parse(c, optarg, &cfg.so, &cfg.ins, msg, sizeof msg)) {
		case 1: continue;
		case -1: sp_usage_error("%s", msg);
		}
		switch (c) {
		case OPT_MERGE: break;
		case 'x': idx[n_idx++] = optarg; break;
		case 'O':
			if (!strcmp(optarg, "sam"))
				cfg.fmt = EXT_OUT_SAM;
			else if (!strcmp(optarg, "bam"))
				cfg.fmt = EXT_OUT_BAM;
			else
				sp_usage_error("option -O: unknown format '%s' (sam or bam with --merge)",
						optarg);
			break;
		case 'k':
			cfg.mode = EXT_BEST_K;
			cfg.k = (uint32_t)sp_opt_int(optarg, "-k", 1, UINT32_MAX);
			break;
		case OPT_ALL: cfg.mode = EXT_ALL; break;
		case OPT_BEST: cfg.mode = EXT_STRATUM; break;
		case 't': cfg.n_threads = (int)sp_opt_int(optarg, "-t", 1, 256); break;
		case 'o': cfg.out_path = optarg; break;
		case 'f': cfg.force = 1; break;
		case 'q': cfg.quiet = 1; break;
		case 'h': usage(stdout); sp_close_stdout(); free(idx); return 0;
		case OPT_VERSION: sp_print_version(); sp_close_stdout(); free(idx); return 0;
		default: sp_usage_error("unknown option");
		}
	}
	if (optind == argc)
		sp_usage_error("--merge needs the hits streams to merge, one per partition");
	cfg.in = argv + optind;
	cfg.n_in = argc - optind;
	if (n_idx && n_idx != cfg.n_in)
		sp_usage_error("%d -x options for %d hits streams (one per stream, or none)",
				n_idx, cfg.n_in);
	cfg.index = n_idx ? idx : NULL;

	rec_prov_init(&prov);
	rec_prov_add_pg(&prov, "extend", SP_VERSION, argc, argv);
	rec_prov_set(&prov, "extend.merge", "yes");
	cfg.prov = &prov;
	rc = ext_merge_or_die(&cfg);
	rec_prov_free(&prov);
	free(idx);
	ext_sam_opt_free(&cfg.so);
	sp_close_stdout();
	return rc;
}
