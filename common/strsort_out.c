/*
 * strsort_out.c - strsort's temporary files and output (strsort_priv.h).
 *
 * Temporary files (the runs of an external sort, and the file that -o FILE
 * is written to before it is renamed over FILE) are sp_tmp files: removed
 * at exit and on every fatal signal (sp_tmp.h).
 *
 * A reader of the output that goes away (| head) must not leave runs
 * behind, and ends strsort with status 0, quietly (strsort(1)).  So SIGPIPE
 * is ignored during a run (sp_ignore_sigpipe): the write fails with EPIPE,
 * which is a failure like any other for the layers above, which stop and
 * remove their files; it is noted, and ss_report then ends the run with
 * status 0 and no message.  SIGPIPE sent by kill(1) is ignored too.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "strsort_priv.h"
#include "util.h"

/* ---- temporary files (sp_tmp.h) ----------------------------------------- */

int ss_temp_create(const char *dir, const char *prefix, temp_node **node)
{
	size_t n = strlen(dir) + strlen(prefix) + 2;
	char *p = sp_malloc(n);
	int fd;

	snprintf(p, n, "%s/%s", dir, prefix);
	fd = sp_tmp_create(p, node);
	free(p);
	if (fd < 0)
		return sp_fail("cannot create a temporary file in '%s': %s", dir, strerror(errno));
	return fd;
}

const char *ss_tmpdir(const ss_opts *o)
{
	const char *d = getenv("TMPDIR");

	return o->tmpdir ? o->tmpdir : d ? d : "/tmp";
}

/* ---- writing ---------------------------------------------------------------- */

static atomic_int gone;

int ss_write(int fd, const char *name, const void *p, size_t n)
{
	if (sp_write_all(fd, p, n) == 0)
		return 0;
	if (errno == EPIPE)
		atomic_store(&gone, 1);
	return sp_fail("cannot write '%s': %s", name, strerror(errno));
}

int ss_output_gone(void)
{
	return atomic_load(&gone);
}

void ss_wr_init(ss_writer *w, int fd, const char *name)
{
	w->fd = fd;
	w->name = name;
	w->cap = SS_OUTBUF;
	w->buf = sp_malloc(w->cap);
	w->len = 0;
	w->failed = 0;
}

int ss_wr_flush(ss_writer *w)
{
	if (w->len && !w->failed && ss_write(w->fd, w->name, w->buf, w->len) < 0)
		w->failed = 1;
	w->len = 0;
	return w->failed ? -1 : 0;
}

void ss_wr_free(ss_writer *w)
{
	free(w->buf);
	w->buf = NULL;
}

/* ---- the output --------------------------------------------------------------- */

int ss_open_output(const ss_opts *o, temp_node **tmp)
{
	struct stat st;
	int fd;

	*tmp = NULL;
	if (!o->outfile)
		return 1;
	if (stat(o->outfile, &st) == 0 && !S_ISREG(st.st_mode)) {
		fd = open(o->outfile, O_WRONLY | O_CREAT | O_TRUNC, 0666);
	} else {
		/* a temporary file next to a regular FILE */
		char *dir = sp_strdup(o->outfile), *s = strrchr(dir, '/');
		mode_t um = umask(0);

		umask(um);
		if (s)
			*(s == dir ? s + 1 : s) = '\0';
		fd = ss_temp_create(s ? dir : ".", ".strsort-out.", tmp);
		free(dir);
		if (fd >= 0)
			fchmod(fd, (stat(o->outfile, &st) == 0 ? st.st_mode : 0666 & ~um) & 07777);
		return fd;
	}
	if (fd < 0)
		return sp_fail("cannot create '%s': %s", o->outfile, strerror(errno));
	return fd;
}

int ss_close_output(const ss_opts *o, int fd, temp_node *tmp, int ok)
{
	int r = ok ? 0 : -1;

	if (!o->outfile)
		return r;
	if (close(fd) != 0 && r == 0)
		r = sp_fail("cannot write '%s': %s", o->outfile, strerror(errno));
	if (!tmp)
		return r;
	if (r == 0 && rename(tmp->path, o->outfile) != 0)
		r = sp_fail("cannot create '%s': %s", o->outfile, strerror(errno));
	if (r == 0)
		sp_tmp_keep(tmp);
	else
		sp_tmp_remove(tmp);
	return r;
}

int ss_report(void)
{
	if (ss_output_gone())
		return SP_EXIT_OK;
	sp_msg("%s", sp_errmsg());
	return SP_EXIT_DATA;
}

int ss_end_output(const ss_opts *o, int fd, temp_node *tmp, int ok)
{
	int rc = ok ? SP_EXIT_OK : ss_report();

	if (ss_close_output(o, fd, tmp, ok) < 0 && ok)
		rc = ss_report();
	return rc;
}
