/*
 * idx_make.c - seqidx's work (idx_make.h): the reference in, the index out
 * (FILE.tmp.XXXXXX renamed at the end, or straight to a stream), --info and
 * --verify.
 */
#include "idx_make.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "idx.h"
#include "seqio.h"
#include "sp_tmp.h"
#include "util.h"

static sp_tmp_t *tmp;        /* FILE.tmp.XXXXXX while writing, removed on failure */

/* --info or --verify. */
static int inspect(const idx_make_opt_t *o)
{
	idx_t *x = idx_open_or_die(o->info ? o->info : o->verify, 0);
	char *e = NULL;

	if (o->verify && idx_check_deep(x, &e) != 0) {
		char msg[1024];

		/* freed before the exit: nothing left for a leak checker to find,
		 * whatever registers the compiler kept the pointers in */
		snprintf(msg, sizeof msg, "%s", e);
		free(e);
		idx_close(x);
		sp_die("index '%s': %s", o->verify, msg);
	}
	if (o->info)
		idx_print_info(x, stdout);
	else
		printf("%s: ok (%llu sections, fingerprint %016llx)\n", o->verify,
			(unsigned long long)x->n_sections, (unsigned long long)x->fingerprint);
	idx_close(x);
	sp_close_stdout();
	return SP_EXIT_OK;
}

/* The reference of O->in. */
static idx_ref_t *read_ref(const idx_make_opt_t *o)
{
	idx_ref_t *ref = idx_ref_init();
	seqio_reader_t *rd = seqio_open_or_die(o->in);
	seq_rec_t rec;
	uint64_t n_empty = 0;
	char *first_empty = NULL;

	seqio_rec_init(&rec);
	while (seqio_read_or_die(rd, &rec)) {
		/* an empty record would be an @SQ with LN:0, which SAM forbids */
		if (rec.seq_len == 0) {
			if (!n_empty++)
				first_empty = sp_strdup(rec.name ? rec.name : "");
			continue;
		}
		sp_or_die(idx_ref_add(ref, rec.name, rec.seq, rec.seq_len));
	}
	if (n_empty && !o->quiet)
		sp_warn("%llu empty sequences in '%s' (the first '%s') were left out of the index",
				(unsigned long long)n_empty, o->in, first_empty);
	free(first_empty);
	if (seqio_n_mapped(rd) && !o->quiet)
		sp_warn("%llu letters other than A, C, G, T and N (IUPAC codes...) in '%s' were indexed as N",
			(unsigned long long)seqio_n_mapped(rd), o->in);
	if (seqio_is_fastq(rd) == 1)
		sp_die("'%s' is FASTQ: seqidx indexes a FASTA reference", o->in);
	seqio_rec_free(&rec);
	seqio_close(rd);
	if (idx_ref_n_seq(ref) == 0)
		sp_die("no sequence in '%s'", o->in);
	return ref;
}

/* The output: FILE.tmp.XXXXXX renamed at the end, or straight to a non-regular file. */
static int open_out(const char *out)
{
	struct stat st;
	char *prefix;
	size_t n;
	int fd;

	if (!out)
		return 1;
	if (stat(out, &st) == 0 && !S_ISREG(st.st_mode)) {
		if ((fd = open(out, O_WRONLY)) < 0)
			sp_die("cannot open '%s' for writing: %s", out, strerror(errno));
		return fd;
	}
	n = strlen(out) + 6;
	prefix = sp_malloc(n);
	snprintf(prefix, n, "%s.tmp.", out);
	fd = sp_tmp_create(prefix, &tmp);
	if (fd < 0)
		sp_die("cannot create '%s' (temporary file '%sXXXXXX'): %s", out, prefix, strerror(errno));
	free(prefix);
	return fd;
}

static void close_out(const char *out, int fd)
{
	if (tmp) {
		mode_t um = umask(0);

		umask(um);
		if (fchmod(fd, 0666 & ~um) != 0 || fsync(fd) != 0 || close(fd) != 0)
			sp_die("cannot write '%s': %s", out, strerror(errno));
		if (rename(tmp->path, out) != 0)
			sp_die("cannot rename '%s' to '%s': %s", tmp->path, out, strerror(errno));
		sp_tmp_keep(tmp);
		tmp = NULL;
	} else if (out) {
		if (close(fd) != 0)
			sp_die("cannot write '%s': %s", out, strerror(errno));
	}
}

int idx_make_or_die(const idx_make_opt_t *o)
{
	idx_params_t p;
	idx_build_opt_t bo;
	idx_ref_t *ref;
	char err[256], sbuf[64];
	double t0 = sp_now();
	int fd;

	if (o->info || o->verify)
		return inspect(o);
	if (!o->out && isatty(1) && !o->force)
		sp_die("refusing to write a binary index to a terminal (use -o FILE, a redirection or -f)");
	sp_malloc_bounded();   /* freed pass arrays go back: -M holds */
	ref = read_ref(o);
	if (idx_params_init(&p, o->shape, o->u, o->l, idx_ref_total(ref), err, sizeof err) != 0)
		sp_die("%s", err);
	p.structs = o->structs;
	p.sa_rate = o->sa_rate;
	p.part_limit = o->part_limit;
	if (o->verbose && !o->quiet) {
		idx_structs_str(p.structs, sbuf, sizeof sbuf);
		sp_msg("reference '%s': %u sequences, %llu bases", o->in, idx_ref_n_seq(ref),
			(unsigned long long)idx_ref_total(ref));
		sp_msg("seed %s: weight %u, span %u%s; neighborhood l=%u (%u per 64-bit word)",
			p.shape, p.w, p.span, o->shape || o->u ? "" : " (default for this genome size)", p.l, p.h);
		sp_msg("structures %s; threads %d; partition size %llu; FM SA rate %u",
			sbuf, o->n_threads, (unsigned long long)p.part_limit, p.sa_rate);
	}
	memset(&bo, 0, sizeof bo);
	bo.mem_limit = o->mem_limit;
	if (!bo.mem_limit) {   /* half the physical memory */
		long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);

		bo.mem_limit = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz / 2 : 0;
	}
	bo.tmp_dir = o->tmp_dir ? o->tmp_dir : getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	if (o->verbose && !o->quiet)
		sp_msg("memory budget %.1f MiB (-M); temporary files, if passes need them, in '%s' (-T)",
			(double)bo.mem_limit / 1048576.0, bo.tmp_dir);
	fd = open_out(o->out);
	bo.n_threads = o->n_threads;
	bo.progress = !o->quiet && (o->verbose || isatty(2));
	bo.warn = !o->quiet;
	sp_or_die(idx_build(ref, &p, &bo, fd, o->out ? o->out : "standard output"));
	idx_ref_free(ref);
	close_out(o->out, fd);
	if (o->verbose && !o->quiet)
		sp_msg("done in %.1f s; peak RSS %llu KiB", sp_now() - t0,
			(unsigned long long)(sp_rss(1) / 1024));
	sp_close_stdout();
	return SP_EXIT_OK;
}
