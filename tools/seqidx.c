/*
 * seqidx - build the seedpipe neighborhood index of a reference (general,
 * reduced, indexed-block (BDZ) structures and an FM-index), or inspect and
 * verify one.  The work is in common/idx_*.c; see man/seqidx.1.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "idx.h"
#include "seqio.h"
#include "util.h"

static char *tmp_path;      /* FILE.tmp.XXXXXX while writing, removed on failure */
static int tmp_done;

static void cleanup_tmp(void)
{
	if (tmp_path && !tmp_done)
		unlink(tmp_path);
}

/* A fatal signal: remove the temporary file (unlink is async-signal-safe),
 * then die of the signal as if not caught. */
static void on_fatal_signal(int sig)
{
	cleanup_tmp();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Every signal whose default action ends the process and that can be caught
 * without hiding a crash from a debugger or a sanitizer (SIGKILL cannot). */
static void catch_fatal_signals(void)
{
	static const int sigs[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGALRM,
		SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF };
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_fatal_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		struct sigaction old;

		/* a signal ignored by the parent (nohup) stays ignored */
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
	}
}

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
"  -r INT            FM-index suffix array sampling rate [%d]\n"
"  -f                write the index even when stdout is a terminal\n"
"  -v                print the chosen parameters and progress\n"
"  -q                no progress and no warnings\n"
"  --info INDEX      print parameters, partitions, section sizes and fingerprint\n"
"  --verify INDEX    check every checksum and structure invariant of INDEX\n"
"  -h, --help        this help\n"
"  --version         print the version\n",
		sp_default_threads(8), (unsigned long long)IDX_PART_MAX, IDX_SA_RATE);
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
	const char *shape = NULL, *out = NULL, *info = NULL, *verify = NULL, *in;
	int c, u = 0, l = 0, structs = IDX_S_DEFAULT, nt = sp_default_threads(8), force = 0;
	int verbose = 0, quiet = 0, rate = IDX_SA_RATE, fd = 1;
	unsigned long long plimit = IDX_PART_MAX;
	idx_params_t p;
	idx_build_opt_t bo;
	idx_ref_t *ref;
	seqio_reader_t *rd;
	seq_rec_t rec;
	char err[256], sbuf[64];
	double t0 = sp_now();

	sp_set_progname(argv[0]);
	sp_quiet_sigpipe();
	while ((c = getopt_long(argc, argv, "u:S:l:m:t:o:p:r:fvqh", lopts, NULL)) != -1) {
		switch (c) {
		case 'u': u = (int)sp_opt_int(optarg, "-u", 1, IDX_MAX_W, usage); break;
		case 'S': shape = optarg; break;
		case 'l': l = (int)sp_opt_int(optarg, "-l", 1, IDX_MAX_L, usage); break;
		case 'm':
			if ((structs = idx_parse_structs(optarg)) < 0) {
				fprintf(stderr, "%s: option -m: unknown structure list '%s'\n", sp_progname, optarg);
				usage(stderr);
				return SP_EXIT_USAGE;
			}
			break;
		case 't': nt = (int)sp_opt_int(optarg, "-t", 1, 256, usage); break;
		case 'o': out = optarg; break;
		case 'p': plimit = (unsigned long long)sp_opt_int(optarg, "-p", 2, (long long)IDX_PART_MAX, usage); break;
		case 'r': rate = (int)sp_opt_int(optarg, "-r", 1, 1 << 20, usage); break;
		case 'f': force = 1; break;
		case 'v': verbose = 1; break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); sp_close_stdout(); return SP_EXIT_OK;
		case OPT_INFO: info = optarg; break;
		case OPT_VERIFY: verify = optarg; break;
		case OPT_VERSION: printf("seqidx (seedpipe) %s\n", SP_VERSION); sp_close_stdout(); return SP_EXIT_OK;
		default: usage(stderr); return SP_EXIT_USAGE;
		}
	}
	if (info || verify) {
		idx_t *x;
		char *e = NULL;

		if (optind != argc || (info && verify)) {
			usage(stderr);
			return SP_EXIT_USAGE;
		}
		x = idx_open(info ? info : verify, 0);
		if (verify && idx_check_deep(x, &e) != 0)
			sp_die("index '%s': %s", verify, e);
		if (info)
			idx_print_info(x, stdout);
		else
			printf("%s: ok (%llu sections, fingerprint %016llx)\n", verify,
				(unsigned long long)x->n_sections, (unsigned long long)x->fingerprint);
		idx_close(x);
		sp_close_stdout();
		return SP_EXIT_OK;
	}
	if (optind + 1 != argc || (shape && u)) {
		if (shape && u)
			fprintf(stderr, "%s: -u and -S cannot be used together\n", sp_progname);
		usage(stderr);
		return SP_EXIT_USAGE;
	}
	in = argv[optind];
	/* check the shape and lengths now; the default u needs the genome size */
	if (idx_params_init(&p, shape, u, l, 0, err, sizeof err) != 0) {
		fprintf(stderr, "%s: %s\n", sp_progname, err);
		usage(stderr);
		return SP_EXIT_USAGE;
	}
	if (!out && isatty(1) && !force)
		sp_die("refusing to write a binary index to a terminal (use -o FILE, a redirection or -f)");

	/* the reference */
	ref = idx_ref_init();
	rd = seqio_open(in);
	seqio_rec_init(&rec);
	while (seqio_read(rd, &rec))
		idx_ref_add(ref, rec.name, rec.seq, rec.seq_len);
	if (seqio_n_mapped(rd) && !quiet)
		sp_warn("%llu letters other than A, C, G, T and N (IUPAC codes...) in '%s' were indexed as N",
			(unsigned long long)seqio_n_mapped(rd), in);
	if (seqio_is_fastq(rd) == 1)
		sp_die("'%s' is FASTQ: seqidx indexes a FASTA reference", in);
	seqio_rec_free(&rec);
	seqio_close(rd);
	if (idx_ref_n_seq(ref) == 0)
		sp_die("no sequence in '%s'", in);

	if (idx_params_init(&p, shape, u, l, idx_ref_total(ref), err, sizeof err) != 0)
		sp_die("%s", err);
	p.structs = (uint32_t)structs;
	p.sa_rate = (uint32_t)rate;
	p.part_limit = plimit;
	if (verbose && !quiet) {
		idx_structs_str(p.structs, sbuf, sizeof sbuf);
		sp_msg("reference '%s': %u sequences, %llu bases", in, idx_ref_n_seq(ref),
			(unsigned long long)idx_ref_total(ref));
		sp_msg("seed %s: weight %u, span %u%s; neighborhood l=%u (%u per 64-bit word)",
			p.shape, p.w, p.span, shape || u ? "" : " (default for this genome size)", p.l, p.h);
		sp_msg("structures %s; threads %d; partition size %llu; FM SA rate %u",
			sbuf, nt, (unsigned long long)p.part_limit, p.sa_rate);
	}

	/* the output: FILE.tmp.XXXXXX renamed at the end, or straight to a non-regular file */
	if (out) {
		struct stat st;

		if (stat(out, &st) == 0 && !S_ISREG(st.st_mode)) {
			if ((fd = open(out, O_WRONLY)) < 0)
				sp_die("cannot open '%s' for writing: %s", out, strerror(errno));
		} else {
			size_t n = strlen(out) + 16;
			char *t = sp_malloc(n);

			snprintf(t, n, "%s.tmp.XXXXXX", out);
			tmp_path = t;
			catch_fatal_signals();
			if ((fd = mkstemp(tmp_path)) < 0)
				sp_die("cannot create '%s' (temporary file '%s'): %s", out, tmp_path, strerror(errno));
			atexit(cleanup_tmp);
		}
	}
	memset(&bo, 0, sizeof bo);
	bo.n_threads = nt;
	bo.progress = !quiet && (verbose || isatty(2));
	bo.warn = !quiet;
	idx_build(ref, &p, &bo, fd, out ? out : "standard output");
	idx_ref_free(ref);
	if (tmp_path) {
		mode_t um = umask(0);

		umask(um);
		if (fchmod(fd, 0666 & ~um) != 0 || fsync(fd) != 0 || close(fd) != 0)
			sp_die("cannot write '%s': %s", out, strerror(errno));
		if (rename(tmp_path, out) != 0)
			sp_die("cannot rename '%s' to '%s': %s", tmp_path, out, strerror(errno));
		tmp_done = 1;
		free(tmp_path);
		tmp_path = NULL;
	} else if (out) {
		if (close(fd) != 0)
			sp_die("cannot write '%s': %s", out, strerror(errno));
	}
	if (verbose && !quiet)
		sp_msg("done in %.1f s", sp_now() - t0);
	sp_close_stdout();
	return SP_EXIT_OK;
}
