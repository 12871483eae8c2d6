/*
 * extend_global.c - extend --global (linked into extend): the options, the
 * usage and the provenance of the global alignment mode; the run is
 * galign_run_or_die() (common/galign_run.c, the method in common/galign.h
 * and kernels/inc_galign.h).  See man/extend.1, GLOBAL ALIGNMENT.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "galign.h"
#include "rec.h"
#include "util.h"

/* extend's usage prints these lines too (tools/extend.c) */
void extend_global_options(FILE *fp);
int extend_global_main(int argc, char **argv);

void extend_global_options(FILE *fp)
{
	fprintf(fp,
"  --score M,X,G     linear gap scores: match, mismatch, gap (e.g. 4,-5,-8)\n"
"                    [edit distance: 0,-1,-1, score = -distance]\n"
"  --identity P      report only pairs of at least P percent identity\n"
"                    (matches / alignment columns); the others are counted\n"
"  --pairs FILE      align the pairs of names in FILE (query, target a line;\n"
"                    queries from A, targets from B, or from A without B)\n"
"  --trace-device    trace back on the device as well [on the CPU]\n"
"  --no-prune        trace back every pair, then filter (for tests)\n");
}

static void usage(FILE *fp)
{
	fprintf(fp,
"Usage: extend --global [options] A.fa [B.fa] > PAIRS\n"
"\n"
"Global (Needleman-Wunsch) alignment of whole sequences: every pair of A once\n"
"(all against all), or every sequence of A against every sequence of B, or\n"
"the pairs of a list.  Each pair is scored first; only the pairs whose score\n"
"allows the identity asked for are traced back.  One line per reported pair:\n"
"query target qlen tlen score identity matches columns edit cigar.\n"
"\n"
"Options:\n");
	extend_global_options(fp);
	fprintf(fp,
"  -O FORMAT         tsv or rec (a pairs stream) [tsv]\n"
"  -d DEVICE         auto (a GPU if there is one), none, gpu, cpu or P:D\n"
"                    [$SEEDPIPE_DEVICE, else auto]\n"
"  -t INT            threads [%d]\n"
"  -B INT            pairs per batch [with a device a sixteenth of the\n"
"                    pairs, 65536 to %d, else %d]\n"
"  -o FILE           write to FILE [-]\n"
"  -f                write a pairs stream even to a terminal\n"
"  -q                no summary\n"
"  -h, --help        this help\n"
"  --version         print the version\n",
		sp_default_threads(SP_MAX_THREADS), GALIGN_BATCH_DEV, GALIGN_BATCH_CPU);
}

static void parse_scores(const char *arg, galign_scores_t *sc)
{
	const char *s = arg;
	char *e;
	long v[3];
	int i;

	for (i = 0; i < 3; i++) {
		errno = 0;
		v[i] = strtol(s, &e, 10);
		if (e == s || errno || (i < 2 ? *e != ',' : *e != 0))
			goto bad;
		s = e + 1;
	}
	sc->edit = 0;
	sc->match = (int)v[0];
	sc->mismatch = (int)v[1];
	sc->gap = (int)v[2];
	if (v[0] != sc->match || v[1] != sc->mismatch || v[2] != sc->gap || galign_check_scores(sc) < 0)
		sp_die_code(SP_EXIT_USAGE, "option --score: %s", sp_errmsg()[0] ? sp_errmsg() : "out of range");
	return;
bad:
	sp_die_code(SP_EXIT_USAGE, "option --score: '%s' is not MATCH,MISMATCH,GAP (e.g. 4,-5,-8)",
			arg);
}

/* P percent with up to 4 decimals into millionths. */
static uint32_t parse_identity(const char *s)
{
	uint64_t v = 0;
	int dec = -1;
	const char *p;

	for (p = s; *p; p++) {
		if (*p == '.' && dec < 0) {
			dec = 0;
			continue;
		}
		if (*p < '0' || *p > '9' || dec >= 4 || v > 1000000000)
			goto bad;
		v = v * 10 + (uint64_t)(*p - '0');
		if (dec >= 0)
			dec++;
	}
	if (p == s || (dec == 0 && p - s == 1))
		goto bad;
	for (dec = dec < 0 ? 0 : dec; dec < 4; dec++)
		v *= 10;
	if (v > 1000000)
		goto bad;
	return (uint32_t)v;
bad:
	sp_die_code(SP_EXIT_USAGE, "option --identity: '%s' is not a percentage in 0..100 "
			"(at most 4 decimals)", s);
}

int extend_global_main(int argc, char **argv)
{
	enum { OPT_GLOBAL = 256, OPT_SCORE, OPT_IDENT, OPT_PAIRS, OPT_TDEV, OPT_NOPRUNE, OPT_VERSION };
	static const struct option lopts[] = {
		{ "global", no_argument, NULL, OPT_GLOBAL },
		{ "score", required_argument, NULL, OPT_SCORE },
		{ "identity", required_argument, NULL, OPT_IDENT },
		{ "pairs", required_argument, NULL, OPT_PAIRS },
		{ "trace-device", no_argument, NULL, OPT_TDEV },
		{ "no-prune", no_argument, NULL, OPT_NOPRUNE },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 }
	};
	galign_cfg_t cfg;
	rec_prov_t prov;
	char msg[128];
	int c, rc;

	sp_set_progname(argv[0]);
	sp_quiet_sigpipe();
	memset(&cfg, 0, sizeof cfg);
	cfg.sc.edit = 1;
	cfg.prune = 1;
	cfg.n_threads = sp_default_threads(SP_MAX_THREADS);
	cfg.out_path = "-";
	cfg.ident_str = "0";
	optind = 1;
	while ((c = sp_getopt(argc, argv, "O:d:t:B:o:fqh", lopts)) != -1) {
		switch (c) {
		case OPT_GLOBAL: break;
		case OPT_SCORE: parse_scores(optarg, &cfg.sc); break;
		case OPT_IDENT: cfg.ident = parse_identity(optarg); cfg.ident_str = optarg; break;
		case OPT_PAIRS: cfg.pairs_path = optarg; break;
		case OPT_TDEV: cfg.trace_dev = 1; break;
		case OPT_NOPRUNE: cfg.prune = 0; break;
		case 'O':
			if (!strcmp(optarg, "tsv") || !strcmp(optarg, "rec")) {
				cfg.rec_out = optarg[0] == 'r';
				break;
			}
			sp_usage_error("option -O: unknown format '%s' (tsv or rec)", optarg);
		case 'd': cfg.device = optarg; break;
		case 't': cfg.n_threads = (int)sp_opt_int(optarg, "-t", 1, 1024); break;
		case 'B': cfg.batch = (size_t)sp_opt_int(optarg, "-B", 1, 1 << 26); break;
		case 'o': cfg.out_path = optarg; break;
		case 'f': cfg.force = 1; break;
		case 'q': cfg.quiet = 1; break;
		case 'h': usage(stdout); return 0;
		case OPT_VERSION: sp_print_version(); sp_close_stdout(); return 0;
		default: sp_usage_error("invalid option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc || argc - optind > 2) {
		sp_usage_error("%s", optind >= argc ? "no input (A.fa)"
				: "too many arguments (A.fa and B.fa at most)");
	}
	cfg.a_path = argv[optind];
	cfg.b_path = argc - optind == 2 ? argv[optind + 1] : NULL;

	/* this stage's provenance, for a pairs stream */
	rec_prov_init(&prov);
	if (cfg.rec_out) {
		rec_prov_add_pg(&prov, "extend", SP_VERSION, argc, argv);
		if (cfg.sc.edit)
			snprintf(msg, sizeof msg, "edit");
		else
			snprintf(msg, sizeof msg, "%d,%d,%d", cfg.sc.match, cfg.sc.mismatch, cfg.sc.gap);
		rec_prov_set(&prov, "extend.global.score", msg);
		rec_prov_set(&prov, "extend.global.identity", cfg.ident_str);
	}
	cfg.prov = &prov;
	rc = galign_run_or_die(&cfg);
	rec_prov_free(&prov);
	return rc;
}
