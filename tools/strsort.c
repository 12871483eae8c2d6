/*
 * strsort.c - sort lines as `LC_ALL=C sort` does, every key encoded to
 * bytes for a parallel MSD radix sort (common/msd.c), with external runs for
 * input larger than -S (common/strsort*.c).  This file holds only main, usage and the options;
 * ss_run does the work.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "msd.h"
#include "strsort.h"
#include "util.h"

/* the -d default: $SEEDPIPE_DEVICE, else auto */
static const char *dev_default(void)
{
	const char *s = getenv("SEEDPIPE_DEVICE");

	return s && *s ? s : "auto";
}

static void usage(FILE *fp)
{
	fprintf(fp,
"Usage: strsort [options] [FILE...]\n"
"Sort lines as LC_ALL=C sort does (keys, GNU's options) and write them to\n"
"standard output.\n"
"With no FILE, or when FILE is -, read standard input.\n"
"\n"
"Options:\n"
"  -k KEYDEF      sort by a key F[.C][OPTS][,F[.C][OPTS]] (OPTS: b d f g h i M\n"
"                 n R r V); may be repeated; -k not followed by a KEYDEF is -k1,1\n"
"                 [whole line]\n"
"  -t SEP         field separator byte [blank to non-blank transitions]\n"
"  -b             ignore leading blanks in keys\n"
"  -d             dictionary order: only blanks, letters and digits count\n"
"  -f             fold lower case to upper case\n"
"  -g             compare keys as general numbers (strtold)\n"
"  -h             compare keys as human numbers (2K, 1G; GNU sort -h)\n"
"  -i             ignore bytes that are not printable\n"
"  -M             compare keys as month names (JAN < ... < DEC)\n"
"  -m             merge inputs that are already sorted\n"
"  -n             compare keys as numbers (GNU sort -n, C locale)\n"
"  -r             reverse the order\n"
"  -R             random order by a keyed hash of the keys (equal keys together)\n"
"  --random-source FILE  take the hash's key from FILE [getrandom]\n"
"  -V             compare keys as version numbers (GNU sort -V)\n"
"  --files0-from F  read the input names from F, each ended by a NUL\n"
"  --batch-size N   accepted for GNU sort (inputs are merged 64 at once)\n"
"  -u             output only the first of lines with equal keys\n"
"  -s             stable sort: no last-resort comparison of whole lines\n"
"  -z             lines end with NUL, not newline\n"
"  -o FILE        write to FILE (may be an input) [standard output]\n"
"  -S SIZE        memory for in-memory sorting; larger input is sorted in runs\n"
"                 (suffix b K M G T or %%; no suffix: K) [no limit]\n"
"  -T DIR         directory for temporary runs [$TMPDIR or /tmp]\n"
"  -j THREADS     threads [%d]\n"
"  -c             check that the input is sorted; report the first disorder\n"
"  -C             like -c, silently\n"
"  --device DEVICE  OpenCL device for the prefix passes: auto (a GPU where its\n"
"                 calibration predicts it faster, else the native code), none,\n"
"                 cpu, gpu or P:D [%s]\n"
"  -B             sort a seedpipe record stream by its key (keys: key, hits:\n"
"                 first hit position, reads: sequence); with -r -u -o -j only\n"
"  -v             report progress on stderr\n"
"  --algorithm NAME  use sort variant NAME [%s]\n"
"  --list-algorithms list the sort variants and exit\n"
"  --no-pack      cache key bytes even when the keys use at most 16 byte\n"
"                 values [packed then]\n"
"  --help         show this help and exit\n"
"  --version      show the version and exit\n",
		sp_default_threads(64), dev_default(), sp_msd_algos[0].name);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 5 },
		{ "version", no_argument, NULL, 1 },
		{ "algorithm", required_argument, NULL, 2 },
		{ "list-algorithms", no_argument, NULL, 3 },
		{ "no-pack", no_argument, NULL, 4 },
		{ "key", required_argument, NULL, 'k' },
		{ "field-separator", required_argument, NULL, 't' },
		{ "ignore-leading-blanks", no_argument, NULL, 'b' },
		{ "dictionary-order", no_argument, NULL, 'd' },
		{ "ignore-case", no_argument, NULL, 'f' },
		{ "general-numeric-sort", no_argument, NULL, 'g' },
		{ "human-numeric-sort", no_argument, NULL, 'h' },
		{ "ignore-nonprinting", no_argument, NULL, 'i' },
		{ "month-sort", no_argument, NULL, 'M' },
		{ "random-sort", no_argument, NULL, 'R' },
		{ "random-source", required_argument, NULL, 9 },
		{ "files0-from", required_argument, NULL, 10 },
		{ "batch-size", required_argument, NULL, 11 },
		{ "version-sort", no_argument, NULL, 'V' },
		{ "numeric-sort", no_argument, NULL, 'n' },
		{ "reverse", no_argument, NULL, 'r' },
		{ "unique", no_argument, NULL, 'u' },
		{ "stable", no_argument, NULL, 's' },
		{ "zero-terminated", no_argument, NULL, 'z' },
		{ "output", required_argument, NULL, 'o' },
		{ "buffer-size", required_argument, NULL, 'S' },
		{ "temporary-directory", required_argument, NULL, 'T' },
		{ "parallel", required_argument, NULL, 'j' },
		{ "check", optional_argument, NULL, 6 },
		{ "merge", no_argument, NULL, 'm' },
		{ "sort", required_argument, NULL, 7 },
		{ "device", required_argument, NULL, 8 },
		{ "records", no_argument, NULL, 'B' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 }
	};
	ss_opts o;
	int c, rc;

	sp_set_progname(argv[0]);
	/* (ss_run ignores SIGPIPE: a reader that goes away ends it with status 0) */
	memset(&o, 0, sizeof o);
	o.tab = -1;
	o.nthreads = sp_default_threads(64);
	o.algo = &sp_msd_algos[0];
	ss_fix_bare_k(argc, argv);
	while ((c = sp_getopt(argc, argv, "k:t:bdfghiMnRrVuszmo:S:T:j:cCBv", longopts)) != -1) {
		switch (c) {
		case 'k': {
			ss_key k;
			const char *why;

			if (ss_parse_key(optarg, &k, &why) < 0)
				sp_usage_error("invalid key '%s': %s", optarg, why);
			o.keys = sp_realloc(o.keys, (size_t)(o.nkeys + 1) * sizeof *o.keys);
			o.keys[o.nkeys++] = k;
			break;
		}
		case 't':
			if (optarg[0] == '\0')
				sp_usage_error("empty field separator");
			if (strcmp(optarg, "\\0") == 0)
				o.tab = 0;
			else if (optarg[1] != '\0')
				sp_usage_error("field separator '%s' is not one byte", optarg);
			else
				o.tab = (unsigned char)optarg[0];
			break;
		case 'b': o.blanks = 1; break;
		case 'd': o.gflags.dict = 1; break;
		case 'f': o.gflags.fold = 1; break;
		case 'g': o.gflags.general = 1; break;
		case 'h': o.gflags.human = 1; break;
		case 'i': o.gflags.nonprint = 1; break;
		case 'M': o.gflags.month = 1; break;
		case 'm': o.merge = 1; break;
		case 'n': o.numeric = 1; break;
		case 'R': o.gflags.random = 1; break;
		case 'V': o.gflags.version = 1; break;
		case 9: o.random_source = optarg; break;
		case 10: o.files0 = optarg; break;
		case 11: {
			/* the inputs merged at once: any count of 2 or more gives the same output */
			char *end;
			long v = strtol(optarg, &end, 10);

			if (*end || end == optarg || v < 2)
				sp_die_code(SP_EXIT_USAGE, "invalid --batch-size argument '%s'", optarg);
			break;
		}
		case 'r': o.reverse = 1; break;
		case 'u': o.unique = 1; break;
		case 's': o.stable = 1; break;
		case 'z': o.zero = 1; break;
		case 'o': o.outfile = optarg; break;
		case 'S': {
			int ok;

			o.mem_limit = ss_parse_size(optarg, &ok);
			if (!ok)
				sp_usage_error("invalid size '%s' for -S", optarg);
			if (o.mem_limit == 0)
				o.mem_limit = 1;
			break;
		}
		case 'T': o.tmpdir = optarg; break;
		case 'j': {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (*end || v < 1 || v > 64)
				sp_usage_error("invalid thread count '%s' for -j (1 to 64)", optarg);
			o.nthreads = (int)v;
			break;
		}
		case 'c': o.check = 1; break;
		case 'C': o.check = 2; break;
		case 8: o.device = optarg; break;
		case 'B': o.records = 1; break;
		case 'v': o.verbose = 1; break;
		case 5: usage(stdout); sp_close_stdout(); return SP_EXIT_OK;
		case 6:
			if (!optarg || strcmp(optarg, "diagnose-first") == 0)
				o.check = 1;
			else if (strcmp(optarg, "quiet") == 0 || strcmp(optarg, "silent") == 0)
				o.check = 2;
			else
				sp_usage_error("invalid argument '%s' for --check", optarg);
			break;
		case 7:
			if (strcmp(optarg, "numeric") == 0)
				o.numeric = 1;
			else if (strcmp(optarg, "general-numeric") == 0)
				o.gflags.general = 1;
			else if (strcmp(optarg, "human-numeric") == 0)
				o.gflags.human = 1;
			else if (strcmp(optarg, "month") == 0)
				o.gflags.month = 1;
			else if (strcmp(optarg, "random") == 0)
				o.gflags.random = 1;
			else if (strcmp(optarg, "version") == 0)
				o.gflags.version = 1;
			else
				sp_usage_error("invalid argument '%s' for --sort", optarg);
			break;
		case 1: sp_print_version(); sp_close_stdout(); return SP_EXIT_OK;
		case 2:
			if (!(o.algo = sp_msd_find(optarg)))
				sp_usage_error("unknown algorithm '%s' (see --list-algorithms)", optarg);
			break;
		case 3: {
			const sp_msd_algo *a;

			for (a = sp_msd_algos; a->name; a++)
				printf("%-10s %s\n", a->name, a->desc);
			sp_close_stdout();
			return SP_EXIT_OK;
		}
		case 4: o.no_pack = 1; break;
		default:
			sp_usage_error("unknown option");
		}
	}
	if (o.records && (o.nkeys || o.tab >= 0 || o.numeric || o.blanks || o.zero ||
			o.check || o.mem_limit))
		sp_usage_error("-B takes only -r, -u, -o, -j and -d");
	/* the command line, for the provenance of -B's stream */
	o.argc = argc;
	o.argv = argv;
	rc = ss_run(&o, argv + optind, argc - optind);
	if (rc == SP_EXIT_OK && !o.outfile && !o.check)
		sp_close_stdout();
	free(o.keys);
	return rc;
}
