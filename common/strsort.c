/*
 * strsort.c - line sorting for the strsort tool: ss_run, the dispatcher over
 * the layers listed in strsort_priv.h.
 *
 * Input that fits (no -S, or less than a third of it) is read into one
 * arena, its lines split, sorted and written.  With -S, input is read in
 * chunks of at most a third of it; each chunk is sorted and written to a run
 * file in -T, and the runs are merged (strsort_ext.c).  -o FILE is written
 * to a temporary file next to FILE and renamed over it at the end, so a
 * failed write (ENOSPC) leaves FILE, which may be an input, as it was.
 * Every failure below is reported here once (ss_report); a reader of the
 * output that went away ends the run quietly with status 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sp_tmp.h"
#include "strsort_priv.h"
#include "util.h"

/* minor page faults so far (for -v) */
static long minor_faults(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_minflt : -1;
}

/* -c / -C: the exit status */
static int check_lines(const ss_opts *o, char **files, int nfiles)
{
	ss_reader rd;
	ss_chunk c;
	int rc;

	if (nfiles > 1) {
		sp_msg("extra operand '%s' not allowed with -c", files[1]);
		return SP_EXIT_USAGE;
	}
	memset(&c, 0, sizeof c);
	ss_rd_init(&rd, o, files, nfiles, 0);
	if (ss_rd_fill(&rd, &c) < 0 || ss_split_lines(o, &c) < 0)
		rc = ss_report();
	else
		rc = ss_check_chunk(o, &c, files[0]);
	ss_ch_free_index(&c);
	ss_ch_free_buf(&c);
	return rc;
}

/* with -d auto, a GPU for large input is opened while reading */
static void prepare_device(const ss_opts *o, char **files, int nfiles, size_t want)
{
	size_t total = 0;
	struct stat st;
	int i;

	for (i = 0; i < nfiles; i++)
		if ((strcmp(files[i], "-") == 0 ? fstat(0, &st) : stat(files[i], &st)) == 0 &&
				S_ISREG(st.st_mode))
			total += (size_t)st.st_size;
	ss_dev_prepare(want && want < total ? want : total, o->nthreads);
}

/* sort the split chunk c; 0, or the exit status of a failure (reported) */
static int sort_chunk(const ss_opts *o, ss_chunk *c)
{
	int rc;

	/* a requested device that cannot be used ends the run here */
	if ((rc = ss_dev_wait()) != 0) {
		sp_msg("%s", sp_errmsg());
		return rc;
	}
	return ss_sort_chunk(o, c) < 0 ? ss_report() : 0;
}

/*
 * Read chunks of WANT bytes into c, writing each but the last as a run,
 * while there is more input than a chunk; at the end c holds the input
 * left (all of it when it fits).  Returns 0, or the exit status.
 */
static int make_runs(const ss_opts *o, ss_reader *rd, ss_chunk *c, ss_runs *runs)
{
	int rc;

	for (;;) {
		size_t carry = 0;
		uint8_t *rest = NULL;

		if (ss_rd_fill(rd, c) < 0)
			return ss_report();
		if (!rd->done) {
			/* cut after the last whole line; the rest starts the next chunk */
			uint8_t *p = c->len ? memrchr(c->buf, rd->delim, c->len) : NULL;
			size_t cut = p ? (size_t)(p - c->buf) + 1 : 0;

			carry = c->len - cut;
			if (carry) {
				rest = sp_malloc(carry);
				memcpy(rest, c->buf + cut, carry);
			}
			c->len = cut;
		}
		if (rd->done && runs->n == 0)
			return 0;  /* it all fits: sort in memory */
		if (c->len) {
			rc = ss_split_lines(o, c) < 0 ? ss_report() : sort_chunk(o, c);
			if (rc == 0 && ss_runs_add(o, runs, c) < 0)
				rc = ss_report();
			if (rc != 0) {
				free(rest);
				return rc;
			}
			ss_ch_free_index(c);
		}
		c->len = 0;
		if (carry) {
			ss_ch_reserve(c, carry);
			memcpy(c->buf, rest, carry);
			c->len = carry;
			free(rest);
		}
		if (rd->done && c->len == 0)
			return 0;
		if (o->verbose)
			sp_msg("run %zu written", runs->n);
	}
}

/* sort c in memory and write it to the output */
static int sort_in_memory(const ss_opts *o, ss_chunk *c, double t_start, double c_start)
{
	double t0 = sp_now(), t1, t2, t3, c0 = ss_cpu_now(), c1, c2, c3;
	temp_node *otmp;
	int rc, fd, ok;

	if (ss_split_lines(o, c) < 0)
		return ss_report();
	t1 = sp_now();
	c1 = ss_cpu_now();
	if ((rc = sort_chunk(o, c)) != 0)
		return rc;
	t2 = sp_now();
	c2 = ss_cpu_now();
	if ((fd = ss_open_output(o, &otmp)) < 0)
		return ss_report();
	ok = ss_emit_chunk(o, c, fd, o->outfile ? o->outfile : "standard output") == 0;
	t3 = sp_now();
	c3 = ss_cpu_now();
	if (o->verbose && ok) {
		sp_msg("%zu lines, %zu bytes: read %.3f s, split %.3f s, sort %.3f s, "
			"write %.3f s (cpu %.3f, %.3f, %.3f, %.3f s)", c->n, c->len,
			t0 - t_start, t1 - t0, t2 - t1, t3 - t2, c0 - c_start, c1 - c0,
			c2 - c1, c3 - c2);
		sp_msg("split: setup %.3f s, count %.3f s, slots %.3f s, fill %.3f s "
			"(cpu %.3f, %.3f, %.3f, %.3f s); minor faults %ld", c->prof[0],
			c->prof[1], c->prof[2], c->prof[3], c->prof[4], c->prof[5],
			c->prof[6], c->prof[7], minor_faults());
	}
	return ss_end_output(o, fd, otmp, ok);
}

/* merge into the output: the sorted runs RUNS, or (-m, RUNS null) the sorted inputs */
static int merge_out(const ss_opts *o, ss_runs *runs, char **files, int nfiles)
{
	temp_node *otmp;
	ss_writer w;
	int fd, ok;

	if ((fd = ss_open_output(o, &otmp)) < 0)
		return ss_report();
	ss_wr_init(&w, fd, o->outfile ? o->outfile : "standard output");
	ok = (runs ? ss_runs_merge(o, runs, &w) : ss_merge_inputs(o, files, nfiles, &w)) == 0;
	ss_wr_free(&w);
	return ss_end_output(o, fd, otmp, ok);
}

static int run_lines(const ss_opts *o, char **files, int nfiles)
{
	ss_reader rd;
	ss_chunk c;
	ss_runs runs = { NULL, 0 };
	size_t want = 0;
	int rc;
	double t_start = sp_now(), c_start = ss_cpu_now(), t_free;

	if (o->check)
		return check_lines(o, files, nfiles);
	if (o->merge)
		return merge_out(o, NULL, files, nfiles);
	if (o->mem_limit)
		want = o->mem_limit / 3 ? o->mem_limit / 3 : 1;
	memset(&c, 0, sizeof c);
	ss_rd_init(&rd, o, files, nfiles, want);
	prepare_device(o, files, nfiles, want);
	rc = make_runs(o, &rd, &c, &runs);
	if (rc == 0 && runs.n == 0) {
		rc = sort_in_memory(o, &c, t_start, c_start);
	} else if (rc == 0) {
		ss_ch_free_buf(&c);
		rc = merge_out(o, &runs, NULL, 0);
	}
	ss_runs_free(&runs);
	t_free = sp_now();
	ss_ch_free_index(&c);
	ss_ch_free_buf(&c);
	if (o->verbose)
		sp_msg("freed in %.3f s; %.3f s in all", sp_now() - t_free, sp_now() - t_start);
	return rc;
}

/*
 * -R: the 16-byte seed, as GNU sort takes it: the first 16 bytes of
 * --random-source FILE, else from getrandom.  Returns 0, or -1.
 */
static int random_seed(const ss_opts *o, uint8_t seed[16])
{
	size_t got = 0;
	int fd;

	if (!o->random_source) {
		while (got < 16) {
			ssize_t k = getrandom(seed + got, 16 - got, 0);

			if (k < 0 && errno != EINTR)
				return sp_fail("cannot get random bytes: %s", strerror(errno));
			got += k > 0 ? (size_t)k : 0;
		}
		return 0;
	}
	if ((fd = open(o->random_source, O_RDONLY)) < 0)
		return sp_fail("cannot open random source '%s': %s", o->random_source, strerror(errno));
	while (got < 16) {
		ssize_t k = read(fd, seed + got, 16 - got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (k == 0)
				sp_fail("random source '%s': end of file", o->random_source);
			else
				sp_fail("cannot read random source '%s': %s", o->random_source, strerror(errno));
			close(fd);
			return -1;
		}
		got += (size_t)k;
	}
	close(fd);
	return 0;
}

/* some key orders randomly */
static int any_random(const ss_opts *o)
{
	int i;

	for (i = 0; i < o->nkeys; i++)
		if (o->keys[i].random)
			return 1;
	return o->gflags.random;
}

/*
 * --files0-from FILE: the input names, each ended by a NUL (the last may
 * lack it), into *names (one allocation, *buf, holds them).  Returns their
 * count, or -1 (the message printed).
 */
static int read_files0(const char *path, char ***names, char **buf)
{
	int fd = strcmp(path, "-") == 0 ? 0 : open(path, O_RDONLY);
	size_t len = 0, cap = 4096, i, start;
	int n = 0;

	*names = NULL;
	*buf = NULL;
	if (fd < 0) {
		sp_msg("cannot open '%s' for reading: %s", path, strerror(errno));
		return -1;
	}
	*buf = sp_malloc(cap);
	for (;;) {
		ssize_t k;

		if (len + 1 >= cap)
			*buf = sp_realloc(*buf, cap *= 2);
		k = read(fd, *buf + len, cap - len - 1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			sp_msg("cannot read '%s': %s", path, strerror(errno));
			if (fd)
				close(fd);
			return -1;
		}
		if (k == 0)
			break;
		len += (size_t)k;
	}
	if (fd)
		close(fd);
	if (len && (*buf)[len - 1] != 0)
		(*buf)[len++] = 0;
	for (i = start = 0; i < len; i++) {
		if ((*buf)[i])
			continue;
		if (i == start) {
			sp_msg("%s:%d: invalid zero-length file name", path, n + 1);
			return -1;
		}
		if (fd == 0 && strcmp(*buf + start, "-") == 0) {
			sp_msg("when reading file names from standard input, no file name of '-' allowed");
			return -1;
		}
		*names = sp_realloc(*names, (size_t)(n + 1) * sizeof **names);
		(*names)[n++] = *buf + start;
		start = i + 1;
	}
	if (n == 0) {
		sp_msg("no input from '%s'", path);
		return -1;
	}
	return n;
}

/* ss_run on the input names known */
static int run(ss_opts *o, char **files, int nfiles)
{
	char bad[16];
	int rc;

	sp_ignore_sigpipe();
	sp_tmp_init();   /* before -d auto's OpenCL probe (sp_tmp.h) */
	if (any_random(o) && random_seed(o, o->gflags.rseed) < 0) {
		sp_msg("%s", sp_errmsg());
		return SP_EXIT_DATA;
	}
	ss_finish_keys(o);
	if (ss_keys_incompatible(o, bad)) {
		sp_msg("options '%s' are incompatible", bad);
		return SP_EXIT_USAGE;
	}
	/* the device sorts only radix-sorted text keys; -B and -c use none */
	if (ss_dev_open(o->device, o->verbose, !o->records && !o->check) < 0) {
		sp_msg("%s", sp_errmsg());
		return SP_EXIT_USAGE;
	}
	rc = o->records ? ss_run_records(o, files, nfiles) : run_lines(o, files, nfiles);
	ss_dev_close();
	return rc;
}

int ss_run(ss_opts *o, char **files, int nfiles)
{
	static char *dash[] = { "-" };
	char **names = NULL, *nbuf = NULL;
	int rc;

	if (o->files0) {
		if (nfiles) {
			sp_msg("extra operand '%s'; file operands cannot be combined with --files0-from",
				files[0]);
			return SP_EXIT_USAGE;
		}
		if ((nfiles = read_files0(o->files0, &names, &nbuf)) < 0) {
			free(names);
			free(nbuf);
			return SP_EXIT_DATA;
		}
		files = names;
	}
	if (nfiles == 0) {
		files = dash;
		nfiles = 1;
	}
	rc = run(o, files, nfiles);
	free(names);
	free(nbuf);
	return rc;
}
