/*
 * seedfilt - seed and neighborhood filtering of reads against a seqidx
 * index (Tran 2012 ch. 3-6): reads in, a candidates stream out.  The work
 * is in common/filt*.c, common/bpr.c, common/degen.c; see man/seedfilt.1.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpr.h"
#include "filt.h"
#include "idx.h"
#include "ocl.h"
#include "rec.h"
#include "seedfilt_mem.h"
#include "seedfilt_plan.h"
#include "seedfilt_prov.h"
#include "sp_tmp.h"
#include "util.h"

#define DEF_E 1
#define DEF_STEP 1
#define DEF_BATCH 16384
#define DEF_BOUND "5%"   /* with no -E, -e or -m: as razers3 -i 95, yara -e 5 */

static void usage(FILE *fp)
{
	fprintf(fp,
"Usage: seedfilt [options] [READS] > CANDIDATES\n"
"       seedfilt [options] READS_1 READS_2 > CANDIDATES   (paired-end)\n"
"\n"
"Cut each read (FASTA/FASTQ, plain or gzip, or a reads stream; '-' or no\n"
"argument = stdin) and its reverse complement into seed + neighborhood\n"
"patterns, match them against the index, and write the candidate diagonals\n"
"of every read, in input order, as a candidates stream.  Two inputs are the\n"
"mates 1 and 2 of paired-end reads, kept as pairs in the stream.\n"
"\n"
"Options:\n"
"  -x FILE           index made by seqidx [$SEEDPIPE_INDEX]\n"
"  -e INT            errors allowed in the neighborhood, f_e [%d]\n"
"  -a                the -e errors (substitutions) may fall anywhere in the\n"
"                    pattern, seed included (bs, ph, fm; not bpr) [off]\n"
"  -m METHOD         bpr, bs, ph, fm or auto [auto: ph, bs, fm, bpr (with -a:\n"
"                    bs, ph, fm), the first the index holds that accepts -e];\n"
"                    mem: maximal exact matches (seedfilt -m mem --help)\n"
"  -s INT            step delta between the patterns of a read [%d]\n"
"  -c INT            keep at most INT candidates per read, those with the most\n"
"                    support (counted in the summary); 0 = all [0]\n"
"  -N                count the matches but make no candidates (benchmarks: the\n"
"                    matching stage alone)\n"
"  -E A|P%%          the pipeline's error bound: A edit operations or P%% of each\n"
"                    read's length; with -m auto, for each read length the\n"
"                    cheapest method, -e and -s that guarantee it (cost model\n"
"                    measured on the first reads); count the reads not covered\n"
"                    [%s without -e and -m, else off]\n"
"  -L INT            read length of -v and of the device's setting [first read]\n"
"  --interleaved     READS holds pairs: mate 1, mate 2, mate 1, ...\n"
"  -1 FILE -2 FILE   READS_1 and READS_2 as options (as bowtie2 takes them)\n"
"  -d DEVICE         auto, gpu, cpu, none or P:D [$SEEDPIPE_DEVICE, else auto]\n"
"  -t INT            threads [%d]\n"
"  -B INT            reads per batch [%d; with -M as the budget allows]\n"
"  -M SIZE           memory budget (K, M, G): an index larger is mapped in\n"
"                    passes over groups of partitions [half the physical memory]\n"
"  -T DIR            temporary files of the passes [$TMPDIR, /tmp]\n"
"  -o FILE           write the stream to FILE [-]\n"
"  -f                write the stream even to a terminal\n"
"  -v                state the sensitivity and the device on stderr\n"
"  -q                no summary, no warnings\n"
"  -h, --help        this help\n"
"  --version         print the version\n",
		DEF_E, DEF_STEP, DEF_BOUND, sp_default_threads(SP_MAX_THREADS), DEF_BATCH);
}

int main(int argc, char **argv)
{
	enum { OPT_VERSION = 256, OPT_INTERLEAVED };
	static const struct option lopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "interleaved", no_argument, NULL, OPT_INTERLEAVED },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 }
	};
	const char *index = getenv("SEEDPIPE_INDEX"), *out = "-", *in_path = "-";
	const char *device = NULL, *in2_path = NULL;
	int interleaved = 0, opt12 = 0;
	int c, method = FILT_AUTO, force = 0, quiet = 0, e_set = 0, s_set = 0;
	filt_run_t run;
	filt_stats_t st;
	filt_times_t tm;
	idx_t *x;
	ocl_ctx_t *ocl;
	filt_in_t *in;
	rec_prov_t prov;
	rec_writer_t *w;
	char msg[1536], dev_desc[256] = "native C", bstr[16] = "";
	char costs[FILT_PLAN_MAXPAIRS * 24];
	filt_plan_t plan;
	filt_budget_t bo = { 0, NULL, 0, 0, 0, 0 };
	double t0 = sp_now(), t_load, t_dev, t_run, t_end;
	int auto_dev;

	sp_set_progname(argv[0]);
	sp_quiet_sigpipe();
	sp_tmp_init();   /* before any OpenCL platform loads (sp_tmp.h) */
	if (mem_wanted(argc, argv))     /* maximal exact matches: tools/seedfilt_mem.c */
		return mem_main(argc, argv);
	memset(&run, 0, sizeof run);
	run.o.e = DEF_E;
	run.o.step = DEF_STEP;
	run.n_threads = sp_default_threads(SP_MAX_THREADS);
	run.batch = DEF_BATCH;
	while ((c = sp_getopt(argc, argv, "x:e:am:s:c:NE:L:d:t:B:M:T:o:fvqh1:2:", lopts)) != -1) {
		switch (c) {
		case 'x': index = optarg; break;
		case 'e': run.o.e = (uint32_t)sp_opt_int(optarg, "-e", 0, BPR_MAX_E); e_set = 1; break;
		case 'a': run.o.any = 1; break;
		case 'm':
			if ((method = filt_method_parse(optarg)) < 0)
				sp_usage_error("option -m: unknown method '%s' (bpr, bs, ph, fm or auto)",
						optarg);
			break;
		case 's': run.o.step = (uint32_t)sp_opt_int(optarg, "-s", 1, 1 << 20); s_set = 1; break;
		case 'c': run.o.cap = (uint32_t)sp_opt_int(optarg, "-c", 0, UINT32_MAX); break;
		case 'N': run.o.count_only = 1; break;
		case 'E':
			if (filt_bound_parse(optarg, &run.bound) < 0)
				sp_usage_error("option -E: '%s' is not an edit count (0..1000) or "
						"a percentage of the read length (0%%..100%%)", optarg);
			break;
		case 'L': run.sens_len = (uint32_t)sp_opt_int(optarg, "-L", 1, UINT32_MAX); break;
		case 'd': device = optarg; break;
		case 't': run.n_threads = (int)sp_opt_int(optarg, "-t", 1, 256); break;
		case 'B': run.batch = (size_t)sp_opt_int(optarg, "-B", 1, 1 << 24); bo.batch_set = 1; break;
		case 'M':
			if (!(bo.mem = filt_parse_size(optarg)))
				sp_usage_error("option -M: '%s' is not a size (bytes, or with K, M, G, T)", optarg);
			break;
		case 'T': bo.tmp_dir = optarg; break;
		case 'o': out = optarg; break;
		case 'f': force = 1; break;
		case 'v': run.verbose = 1; break;
		case OPT_INTERLEAVED: interleaved = 1; break;
		case '1': in_path = optarg; opt12 |= 1; break;
		case '2': in2_path = optarg; opt12 |= 2; break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); sp_close_stdout(); return 0;
		case OPT_VERSION: sp_print_version(); sp_close_stdout(); return 0;
		default: sp_usage_error("unknown option");
		}
	}
	if (opt12 && (opt12 != 3 || optind < argc))
		sp_usage_error("-1 and -2 go together, without READS arguments");
	if (!opt12 && optind < argc)
		in_path = argv[optind++];
	if (!opt12 && optind < argc)
		in2_path = argv[optind++];
	if (optind < argc)
		sp_usage_error("too many arguments (two READS files at most)");
	if (in2_path && interleaved)
		sp_usage_error("--interleaved takes one READS file, not two");
	if (in2_path && !strcmp(in_path, "-") && !strcmp(in2_path, "-"))
		sp_usage_error("both mates' files are stdin: give at least one of them a name");
	if (!index || !*index)
		sp_usage_error("no index: give -x FILE or set SEEDPIPE_INDEX");
	if (quiet)
		run.verbose = 0;

	/* the device opens while the index loads (a missing GPU is reported at
	 * once, exit 3); auto is chosen once the index and the method are known;
	 * an index larger than -M is loaded a partition at a time */
	if (!device && (device = getenv("SEEDPIPE_DEVICE")) && !*device)
		device = NULL;
	auto_dev = !device || !strcmp(device, "auto");
	bo.dev = !device || strcmp(device, "none") != 0;   /* maybe */
	x = filt_open_or_die(index, auto_dev ? NULL : device, run.verbose ? OCL_VERBOSE : 0,
			filt_budget_flags(index, &run, &bo), &ocl);
	t_load = sp_now() - t0;
	in = filt_in_open_or_die(in_path);
	if (in2_path || interleaved)
		filt_in_pair(in, in2_path ? filt_in_open_or_die(in2_path) : NULL);
	/* no bound, no -e, no method: lossless for 5% of the read length */
	if (!run.bound.set && !e_set && method == FILT_AUTO)
		filt_bound_parse(DEF_BOUND, &run.bound);
	filt_bound_str(&run.bound, bstr, sizeof bstr);
	if (method == FILT_AUTO && run.bound.set)   /* a setting per read length */
		method = plan_or_die(x, in, &run, &plan, e_set, s_set, costs, sizeof costs);
	if (method == FILT_AUTO) {
		method = filt_auto(x, run.o.e, run.bound.set && run.o.e > 0 && !run.o.any,
				run.o.any);
		if (method < 0)
			method = filt_auto(x, run.o.e, 0, run.o.any);
		if (method < 0)
			sp_die_code(SP_EXIT_USAGE, "-e %u%s: no method of index '%s' accepts it",
					run.o.e, run.o.any ? " -a" : "", index);
	}
	run.o.method = method;
	if (filt_check(x, method, run.o.e, run.o.any, msg, sizeof msg) < 0)
		sp_die_code(SP_EXIT_USAGE, "%s", msg);

	t_dev = sp_now();
	if (auto_dev) {   /* the measured model (ocl_auto.h) */
		uint32_t len = 0;

		sp_or_die(filt_in_peek(in, &len));
		auto_dev = !plan_host_only(&run, len);   /* a scheme: no kernel */
	}
	if (auto_dev) {
		uint32_t len = 0;

		sp_or_die(filt_in_peek(in, &len));
		ocl = filt_dev_auto(x, &run, in_path, in2_path, len, 0, msg, sizeof msg);
		if (run.verbose)
			sp_msg("-d auto: %s", msg);
		if (run.verbose && ocl) {
			ocl_describe(ocl, dev_desc, sizeof dev_desc);
			sp_msg("using OpenCL device %s", dev_desc);
		}
	}
	if (ocl) {
		filt_budget_device(ocl, &bo);
		run.dev = filt_dev_new(ocl, x, &run.o, msg, sizeof msg);
		if (run.dev) {
			filt_dev_set_threads(run.dev, run.n_threads);
			ocl_describe(ocl, dev_desc, sizeof dev_desc);
		} else {
			if (!quiet)
				sp_warn("%s: filtering with the native C code", msg);
			ocl_close(ocl);
			ocl = NULL;
		}
	}

	t_dev = sp_now() - t_dev;
	bo.dev = run.dev != NULL;
	if (filt_budget_plan(x, &run, &bo) < 0)   /* -M: batch size and passes */
		sp_die("-M: %s", sp_errmsg());
	seedfilt_prov(&prov, in, argc, argv, index, x, method, &run, bstr,
			interleaved ? "interleaved" : in2_path ? "files" : NULL, costs);
	w = rec_create_worker_or_die(out, REC_KIND_CANDIDATES, &prov, 0, force);
	t_run = sp_now();
	rec_end_or_die(w, filt_run(x, &run, in, w, &st, &tm));
	filt_in_close(in);
	t_run = sp_now() - t_run;

	if (run.plan && st.not_guaranteed && !quiet)   /* extend warns even with -q */
		plan_warn(x, &plan, bstr, st.not_guaranteed, st.reads);
	else if (run.bound.set && st.not_guaranteed && !quiet)
		sp_warn("-E %s: %" PRIu64 " of %" PRIu64 " reads are not guaranteed a candidate "
				"for every occurrence within the bound", bstr, st.not_guaranteed, st.reads);
	if (!quiet) {
		char kept[64] = "";

		if (st.kept_n)   /* bpr: an N in q is a mismatch, not a reason to skip */
			snprintf(kept, sizeof kept, ", %" PRIu64 " with N in q kept", st.kept_n);
		sp_msg("%" PRIu64 " reads (%" PRIu64 " shorter than a pattern, %" PRIu64
				" without candidates), %" PRIu64 " patterns (%" PRIu64
				" skipped over N%s), %" PRIu64 " matches, %" PRIu64 " candidates",
				st.reads, st.short_reads, st.no_cand, st.patterns, st.skipped_n,
				kept, st.matches, st.cands);
		if (run.o.cap)
			sp_msg("cap -c %u: %" PRIu64 " reads capped, %" PRIu64
					" candidates dropped", run.o.cap, st.capped_reads,
					st.capped_dropped);

		sp_msg("method %s, e = %u%s, step %u, %s, %d threads; time: index %.2f s, "
				"read %.2f s, filter %.2f s, write %.2f s",
				filt_method_name(method), run.o.e,
				run.o.any ? " anywhere (-a)" : "", run.o.step, dev_desc,
				run.n_threads, t_load, tm.read, tm.filter, tm.write);
		filt_budget_report(&run, &bo, tm.batches, run.verbose);   /* passes: always said */
		if (run.verbose && tm.filter > 0)
			sp_msg("%" PRIu64 " neighborhoods in the SeedBlocks searched in %.6f s: "
					"%.4g per second; %.4g reads per second", st.nbs, tm.filter,
					st.nbs / tm.filter, st.reads / tm.filter);
	}
	rec_prov_free(&prov);
	if (run.plan)
		filt_plan_free(&plan);
	t_end = sp_now();
	filt_dev_free(run.dev);
	filt_store_free(run.store);
	filt_mplan_free(&run.mplan);
	ocl_close(ocl);
	idx_close(x);
	if (run.verbose)   /* where the wall time goes, device or not */
		sp_msg("stages: index and device open %.3f s, device choice and setup %.3f s, run %.3f s "
				"(steps: cut %.3f s, match %.3f s, finish %.3f s), release %.3f s, "
				"total %.3f s", t_load, t_dev, t_run, tm.cut, tm.match,
				tm.finish, sp_now() - t_end, sp_now() - t0);
	sp_close_stdout();
	return 0;
}
