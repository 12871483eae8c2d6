/*
 * seedfilt_mem.c - seedfilt -m mem: options and usage (maximal exact
 * matches, MUMmer's mummer -maxmatch; man/seedfilt.1); the run is
 * mem_run() in common/mem_run.c.
 */
#include "seedfilt_mem.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filt.h"
#include "mem.h"
#include "util.h"

#define DEF_L MEM_DEF_L
#define DEF_BATCH MEM_DEF_BATCH
#define DEF_BATCH_DEV MEM_DEF_BATCH_DEV

int mem_wanted(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return 0;
		if (strcmp(argv[i], "-mmem") == 0
				|| (strcmp(argv[i], "-m") == 0 && i + 1 < argc && strcmp(argv[i + 1], "mem") == 0))
			return 1;
	}
	return 0;
}

static void usage(FILE *fp)
{
	fprintf(fp,
"Usage: seedfilt -m mem [options] [READS] > MATCHES\n"
"\n"
"Every maximal exact match of at least L bases between each read (FASTA/\n"
"FASTQ, plain or gzip, or a reads stream; '-' or no argument = stdin), its\n"
"reverse complement and the reference, from the FM-index of the index\n"
"(seqidx -m fm): MUMmer's mummer -maxmatch, as a candidates stream for\n"
"extend or as MUMmer's text (-O mummer: the lines of mummer -b -c).\n"
"\n"
"Options:\n"
"  -x FILE           index made by seqidx with the FM-index [$SEEDPIPE_INDEX]\n"
"  -L INT, -l INT    shortest match [%d]\n"
"  -O FORMAT         cands (a candidates stream: one candidate per diagonal\n"
"                    with matches, support = their summed length) or mummer\n"
"                    (text) [cands]\n"
"  -maxmatch         every maximal match (the default)\n"
"  -mumreference     only matches unique in the reference (-mumcand too)\n"
"  -mum              only matches unique in the reference and in the read\n"
"  -b                both strands (the default)\n"
"  -r                the reverse complement only\n"
"  --forward         the forward strand only\n"
"  -c                accepted for mummer's -c: reverse-strand query positions\n"
"                    are always given on the forward strand\n"
"  -F                the reference name column even for one sequence\n"
"  -n                N matches nothing (by default N matches N, as in mummer)\n"
"  -w INT            search window, 1..L (tuning; the output does not change)\n"
"                    [from the reference length]\n"
"  -d DEVICE         auto, gpu, cpu, none or P:D [$SEEDPIPE_DEVICE, else auto]\n"
"  -t INT            threads [%d]\n"
"  -B INT            reads per batch [%d; %d with a device or in passes]\n"
"  -M SIZE           memory budget (K, M, G, T): an index larger is searched\n"
"                    in passes over groups of its partitions [half the memory]\n"
"  -o FILE           write to FILE [-]\n"
"  -f                write a candidates stream even to a terminal\n"
"  -v                say which device is used and the search parameters\n"
"  -q                no summary\n"
"  -h, --help        this help\n",
		DEF_L, sp_default_threads(SP_MAX_THREADS), DEF_BATCH, DEF_BATCH_DEV);
}

int mem_main(int argc, char **argv)
{
	enum { O_HELP = 256, O_VERSION, O_MAXMATCH, O_MUM, O_MUMREF, O_FORWARD };
	static const struct option lopts[] = {
		{ "help", no_argument, NULL, O_HELP },
		{ "version", no_argument, NULL, O_VERSION },
		{ "maxmatch", no_argument, NULL, O_MAXMATCH },
		{ "mum", no_argument, NULL, O_MUM },
		{ "mumreference", no_argument, NULL, O_MUMREF },
		{ "mumcand", no_argument, NULL, O_MUMREF },
		{ "forward", no_argument, NULL, O_FORWARD },
		{ NULL, 0, NULL, 0 }
	};
	const char *index = getenv("SEEDPIPE_INDEX"), *out = "-", *in_path = "-", *device = NULL;
	int c, force = 0, quiet = 0, verbose = 0;
	mem_cli_t cl;
	mem_opt_t *o = &cl.o;

	memset(&cl, 0, sizeof cl);
	o->L = DEF_L;
	o->mode = MEM_MAXMATCH;
	o->strands = MEM_FWD | MEM_REV;
	cl.nthreads = sp_default_threads(SP_MAX_THREADS);
	opterr = 0;   /* the one-line usage error below says it */
	while ((c = getopt_long_only(argc, argv, "x:m:L:l:O:brcFnw:d:t:B:M:o:fvqh", lopts, NULL)) != -1) {
		switch (c) {
		case 'x': index = optarg; break;
		case 'm':
			if (strcmp(optarg, "mem") != 0)
				sp_usage_error("option -m: -m mem takes no other method ('%s')", optarg);
			break;
		case 'L': case 'l': o->L = (uint32_t)sp_opt_int(optarg, c == 'L' ? "-L" : "-l", 1, 1 << 30); break;
		case 'O':
			if (strcmp(optarg, "mummer") == 0)
				cl.mummer = 1;
			else if (strcmp(optarg, "cands") == 0)
				cl.mummer = 0;
			else {
				sp_usage_error("option -O: unknown format '%s' (cands or mummer)", optarg);
			}
			break;
		case O_MAXMATCH: o->mode = MEM_MAXMATCH; break;
		case O_MUM: o->mode = MEM_MUM; break;
		case O_MUMREF: o->mode = MEM_MUMREF; break;
		case 'b': o->strands = MEM_FWD | MEM_REV; break;
		case 'r': o->strands = MEM_REV; break;
		case O_FORWARD: o->strands = MEM_FWD; break;
		case 'c': break;
		case 'F': cl.four = 1; break;
		case 'n': o->acgt = 1; break;
		case 'w': o->w = (uint32_t)sp_opt_int(optarg, "-w", 1, 1 << 30); break;
		case 'd': device = optarg; break;
		case 't': cl.nthreads = (int)sp_opt_int(optarg, "-t", 1, 256); break;
		case 'B': cl.batch = (size_t)sp_opt_int(optarg, "-B", 1, 1 << 24); break;
		case 'M':
			if (!(cl.mem = filt_parse_size(optarg)))
				sp_usage_error("option -M: '%s' is not a size (bytes, or with K, M, G, T)", optarg);
			break;
		case 'o': out = optarg; break;
		case 'f': force = 1; break;
		case 'v': verbose = 1; break;
		case 'q': quiet = 1; break;
		case 'h': case O_HELP: usage(stdout); return 0;
		case O_VERSION: sp_print_version(); sp_close_stdout(); return 0;
		default: sp_usage_error("invalid option or missing argument: '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		in_path = argv[optind++];
	if (optind < argc) {
		sp_usage_error("too many arguments (one READS file at most)");
	}
	if (!index || !*index) {
		sp_usage_error("no index: give -x FILE or set SEEDPIPE_INDEX");
	}
	cl.index = index;
	cl.out = out;
	cl.in_path = in_path;
	cl.device = device;
	cl.force = force;
	cl.quiet = quiet;
	cl.verbose = verbose;
	cl.argc = argc;
	cl.argv = argv;
	return mem_run(&cl);
}
