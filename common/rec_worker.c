/*
 * rec_worker.c - a record writer written on pipeline threads (rec.h):
 * made on the main thread in non-die mode, checked by the step that
 * writes, and ended on the main thread after the run, where the first
 * error (the writer's or the run's) is reported once.
 */
#include "rec.h"


#include "util.h"

rec_writer_t *rec_create_worker_or_die(const char *path, int kind, const rec_prov_t *prov,
		size_t block_size, int force)
{
	rec_writer_t *w = rec_create_or_die(path, kind, prov, block_size, force);

	rec_writer_set_die(w, 0);
	return w;
}

int rec_writer_check(const rec_writer_t *w)
{
	char msg[512];

	if (rec_writer_error(w, msg, sizeof msg) < 0)
		return sp_fail("%s", msg);
	return 0;
}

void rec_end_or_die(rec_writer_t *w, int rc)
{
	if (rc < 0 && rec_writer_error(w, NULL, 0) == 0)
		sp_die("%s", sp_errmsg());   /* not the writer's: the stream stays unended */
	rec_finish_or_die(w);   /* its error (quietly on a closed pipe), or the end */
}
