/*
 * seqidx - build the seedpipe neighborhood index of a reference (general,
 * reduced, indexed-block (BDZ) structures and an FM-index), or inspect and
 * verify one.  Options and usage here; the work is in common/idx_make.c and
 * common/idx_*.c; see man/seqidx.1.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "filt.h"
#include "idx.h"
#include "idx_make.h"
#include "util.h"

static void usage(FILE *fp)
{
	fprintf(fp,
"Usage: seqidx [options] REF.fa[.gz] > REF.sx\n"
"       seqidx --info INDEX | --verify INDEX\n"
"\n"
"Build the seedpipe neighborhood index of the FASTA reference REF ('-' = stdin).\n"
"\n"
"Options:\n"
"  -u INT            contiguous seed length [from the genome size: floor(log4 n) - 2, in 4..12]\n"
"  -S SHAPE          spaced seed shape of '#' (kept) and '-' (skipped), e.g. ##-###\n"
"  -l INT            neighborhood length, 1..32 [16]\n"
"  -m LIST           structures: general,reduced,block,fm or all [general,reduced,block]\n"
"  -t INT            threads [%d]\n"
"  -o FILE           write the index to FILE (atomically) instead of stdout\n"
"  -p INT            partition size in bases [%llu]\n"
"  -M SIZE           memory budget: a larger partition is sorted in passes through\n"
"                    temporary files; bytes, or with K, M, G, T [half the physical memory]\n"
"  -T DIR            directory of those temporary files [$TMPDIR, else /tmp]\n"
"  -r INT            FM-index suffix array sampling rate [%d]\n"
"  -f                write the index even when stdout is a terminal\n"
"  -v                print the chosen parameters and progress\n"
"  -q                no progress and no warnings\n"
"  --info INDEX      print parameters, partitions, section sizes and fingerprint\n"
"  --verify INDEX    check every checksum of INDEX\n"
"  -h, --help        this help\n"
"  --version         print the version\n",
		sp_default_threads(SP_MAX_THREADS), (unsigned long long)IDX_PART_MAX, IDX_SA_RATE);
}

int main(int argc, char **argv)
{
	enum { OPT_INFO = 256, OPT_VERIFY, OPT_VERSION };
	static const struct option lopts[] = {
		{ "info", required_argument, NULL, OPT_INFO },
		{ "verify", required_argument, NULL, OPT_VERIFY },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 }
	};
	idx_make_opt_t o = { 0 };
	int c, structs = IDX_S_DEFAULT;
	idx_params_t p;
	char err[256];

	sp_set_progname(argv[0]);
	sp_quiet_sigpipe();
	o.n_threads = sp_default_threads(SP_MAX_THREADS);
	o.sa_rate = IDX_SA_RATE;
	o.part_limit = IDX_PART_MAX;
	while ((c = sp_getopt(argc, argv, "u:S:l:m:t:o:p:r:M:T:fvqh", lopts)) != -1) {
		switch (c) {
		case 'u': o.u = (int)sp_opt_int(optarg, "-u", 1, IDX_MAX_W); break;
		case 'S': o.shape = optarg; break;
		case 'l': o.l = (int)sp_opt_int(optarg, "-l", 1, IDX_MAX_L); break;
		case 'm':
			if ((structs = idx_parse_structs(optarg)) < 0)
				sp_usage_error("option -m: unknown structure list '%s'", optarg);
			break;
		case 't': o.n_threads = (int)sp_opt_int(optarg, "-t", 1, 256); break;
		case 'o': o.out = optarg; break;
		case 'p': o.part_limit = (uint64_t)sp_opt_int(optarg, "-p", 2, (long long)IDX_PART_MAX); break;
		case 'r': o.sa_rate = (uint32_t)sp_opt_int(optarg, "-r", 1, 1 << 20); break;
		case 'M':
			if (!(o.mem_limit = filt_parse_size(optarg)))
				sp_usage_error("option -M: '%s' is not a size (bytes, or with K, M, G, T)", optarg);
			break;
		case 'T': o.tmp_dir = optarg; break;
		case 'f': o.force = 1; break;
		case 'v': o.verbose = 1; break;
		case 'q': o.quiet = 1; break;
		case 'h': usage(stdout); sp_close_stdout(); return SP_EXIT_OK;
		case OPT_INFO: o.info = optarg; break;
		case OPT_VERIFY: o.verify = optarg; break;
		case OPT_VERSION: sp_print_version(); sp_close_stdout(); return SP_EXIT_OK;
		default: sp_usage_error("unknown option");
		}
	}
	o.structs = (uint32_t)structs;
	if (o.info || o.verify) {
		if (o.info && o.verify)
			sp_usage_error("--info and --verify exclude each other");
		if (optind != argc)
			sp_usage_error("--info and --verify take no other argument");
		return idx_make_or_die(&o);
	}
	if (o.shape && o.u)
		sp_usage_error("-u and -S cannot be used together");
	if (optind == argc)
		sp_usage_error("no reference given (REF.fa, or '-' for standard input)");
	if (optind + 1 != argc)
		sp_usage_error("too many arguments (one REF.fa)");
	o.in = argv[optind];
	/* check the shape and lengths now; the default u needs the genome size */
	if (idx_params_init(&p, o.shape, o.u, o.l, 0, err, sizeof err) != 0)
		sp_usage_error("%s", err);
	return idx_make_or_die(&o);
}
