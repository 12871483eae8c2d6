/*
 * rec_view.c - recview's modes over record streams (rec_view.h): text view,
 * check, import from FASTA/FASTQ, concatenation.  The format and the codecs
 * live in rec.c and rec_kinds.c.
 */
#include "rec_view.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl.h"
#include "rec_kinds.h"
#include "seqio.h"
#include "util.h"

static void die_bad_record(rec_reader_t *r, const char *kind)
{
	char what[64];

	snprintf(what, sizeof what, "malformed %s record", kind);
	rec_reader_bad_record(r, NULL, what);
	rec_die(r);
}

/*
 * Open PATH as a stream; FASTA or FASTQ (plain or gzip) is refused with
 * the command that imports it.
 */
static rec_reader_t *open_view(const char *path, int want)
{
	rec_reader_t *r = rec_reader_path(path);
	const char *m;

	if (!r)
		sp_die("cannot open '%s': %s", path, strerror(errno));
	if (rec_reader_start(r, want) == REC_OK)
		return r;
	m = rec_errmsg(r);
	if (strstr(m, "looks like FAST") || strstr(m, "looks like gzip"))
		sp_die("%s: to import FASTA or FASTQ, run 'recview -i %s'", m, path);
	rec_die(r);
	return NULL;
}

static void view(const char *path, int want, int with_prov, int *last_kind)
{
	rec_reader_t *r = open_view(path, want);
	int kind = rec_reader_kind(r);
	const uint8_t *body;
	uint32_t len;

	if (with_prov) {
		const rec_prov_t *p = rec_reader_prov(r);
		size_t i;

		printf("##kind=%s\n##version=%d\n", rec_kind_name(kind), rec_reader_version(r));
		for (i = 0; i < p->n; i++)
			printf("##%s=%s\n", p->key[i], p->val[i]);
	}
	if (with_prov || kind != *last_kind)
		rec_tsv_header(kind, stdout);
	*last_kind = kind;
	while (rec_next_or_die(r, &body, &len))
		if (rec_tsv_record(kind, body, len, stdout) < 0)
			die_bad_record(r, rec_kind_name(kind));
	rec_reader_free(r);
}

static int check(const char *path, int want, int quiet)
{
	rec_reader_t *r = rec_reader_path(path);
	rec_block_t b = { 0 };
	uint64_t nb, nr, np, bytes;
	const uint8_t *body;
	uint32_t len;
	int rc, kind;

	if (!r) {
		sp_msg("cannot open '%s': %s", path, strerror(errno));
		return 1;
	}
	if ((rc = rec_reader_start(r, want)) != REC_OK)
		goto fail;
	kind = rec_reader_kind(r);
	while ((rc = rec_read_block(r, &b)) == REC_OK) {
		while ((rc = rec_block_next(&b, &body, &len)) == 1)
			if (rec_kind_check(kind, body, len) < 0) {
				rc = rec_reader_bad_record(r, &b, "malformed record");
				goto fail;
			}
		if (rc < 0) {
			b.last = b.pos;
			b.irec++;
			rc = rec_reader_bad_record(r, &b, "corrupt record framing");
			goto fail;
		}
	}
	if (rc != REC_END)
		goto fail;
	rec_reader_totals(r, &nb, &nr, &np, &bytes);
	if (!quiet)
		printf("%s: ok, %s, %llu blocks, %llu records, %llu bytes\n",
				strcmp(path, "-") ? path : "-", rec_kind_name(kind),
				(unsigned long long)nb, (unsigned long long)nr,
				(unsigned long long)bytes);
	rec_block_free(&b);
	rec_reader_free(r);
	return 0;
fail:
	sp_msg("%s", rec_errmsg(r));
	rec_block_free(&b);
	rec_reader_free(r);
	return 1;
}

/* Append every line of SRC to DST, in order. */
static void prov_append(rec_prov_t *dst, const rec_prov_t *src)
{
	size_t i;

	for (i = 0; src && i < src->n; i++)
		rec_prov_add(dst, src->key[i], src->val[i]);
}

static void import(const rec_view_opt_t *o)
{
	rec_prov_t prov;
	rec_writer_t *w;
	seq_rec_t s;
	rec_read_t rd;
	uint64_t id = 0;
	int i;

	rec_prov_init(&prov);
	prov_append(&prov, o->prov);
	for (i = 0; i < o->n_in; i++)
		rec_prov_add(&prov, "recview.source", o->in[i]);
	w = rec_create_or_die(o->out ? o->out : "-", REC_KIND_READS, &prov, o->block_size, o->force);
	seqio_rec_init(&s);
	for (i = 0; i < o->n_in; i++) {
		seqio_reader_t *in = seqio_open_or_die(o->in[i]);

		while (seqio_read_or_die(in, &s)) {
			size_t sz;

			rec_read_from_seq(&rd, id++, &s);
			sz = rec_read_size(&rd);
			rec_read_encode(rec_begin(w, sz), &rd);
			rec_commit(w, sz);
		}
		seqio_close(in);
	}
	rec_finish_or_die(w);
	seqio_rec_free(&s);
	rec_prov_free(&prov);
}

static void cat(const rec_view_opt_t *o)
{
	rec_reader_t **r = sp_calloc((size_t)o->n_in, sizeof *r);
	rec_prov_t prov;
	rec_writer_t *w;
	const uint8_t *body;
	uint32_t len;
	int i, kind = 0;

	rec_prov_init(&prov);
	for (i = 0; i < o->n_in; i++) {
		r[i] = rec_open_or_die(o->in[i], o->want);
		if (i == 0)
			kind = rec_reader_kind(r[0]);
		else if (rec_reader_kind(r[i]) != kind)
			sp_die("cannot mix stream kinds: '%s' holds %s, '%s' holds %s",
					o->in[0], rec_kind_name(kind), o->in[i],
					rec_kind_name(rec_reader_kind(r[i])));
		rec_prov_carry(&prov, rec_reader_prov(r[i]));
	}
	prov_append(&prov, o->prov);
	w = rec_create_or_die(o->out ? o->out : "-", kind, &prov, o->block_size, o->force);
	for (i = 0; i < o->n_in; i++) {
		while (rec_next_or_die(r[i], &body, &len)) {
			if (rec_kind_check(kind, body, len) < 0)
				die_bad_record(r[i], rec_kind_name(kind));
			rec_put(w, body, len);
		}
		rec_reader_free(r[i]);
	}
	rec_finish_or_die(w);
	rec_prov_free(&prov);
	free(r);
}

int rec_view_or_die(const rec_view_opt_t *o)
{
	int i, rc = 0, last_kind = -1;

	switch (o->mode) {
	case REC_VIEW_DEVICES:
		printf("#device\ttype\tplatform\tname\tglobal_mem\tmax_alloc\tcompute_units"
				"\tdriver\n");
		ocl_list_devices(stdout);
		sp_close_stdout();
		return SP_EXIT_OK;
	case REC_VIEW_IMPORT:
		import(o);
		return SP_EXIT_OK;
	case REC_VIEW_CAT:
		cat(o);
		return SP_EXIT_OK;
	}
	if (o->out && !freopen(o->out, "w", stdout))
		sp_die("cannot create '%s': %s", o->out, strerror(errno));
	for (i = 0; i < o->n_in; i++) {
		if (o->mode == REC_VIEW_CHECK)
			rc |= check(o->in[i], o->want, o->quiet);
		else
			view(o->in[i], o->want, o->with_prov, &last_kind);
	}
	sp_close_stdout();
	return rc ? SP_EXIT_DATA : SP_EXIT_OK;
}
