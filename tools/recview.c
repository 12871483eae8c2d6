/*
 * recview.c - view, check, make and concatenate seedpipe record streams.
 *
 *   recview [FILE...]            every record as one TSV line
 *   recview -c FILE...           verify checksums and framing, one summary line
 *   recview -i FASTA/FASTQ...    make a reads stream
 *   recview --cat STREAM...      decode and re-write streams of one kind as one
 *   recview --devices            list the OpenCL devices (common/ocl.c)
 *
 * The format and the codecs live in common/rec.c and common/rec_kinds.c.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl.h"
#include "rec.h"
#include "rec_kinds.h"
#include "seqio.h"
#include "util.h"

enum { MODE_VIEW, MODE_CHECK, MODE_IMPORT, MODE_CAT };
enum { OPT_CAT = 256, OPT_VERSION, OPT_DEVICES };

static void usage(FILE *fp)
{
	fprintf(fp,
"Usage: recview [options] [FILE...]\n"
"View, check, make and concatenate seedpipe record streams (FILE \"-\" or none:\n"
"standard input).\n"
"\n"
"Modes (default: print every record as tab-separated text):\n"
"  -c, --check         verify every checksum and the end block; print a summary\n"
"  -i, --import        read FASTA/FASTQ (plain or gzip) and write a reads stream\n"
"      --cat           decode streams of one kind and write them as one stream\n"
"Options:\n"
"  -k, --kind KIND     require streams of KIND (reads, candidates, hits, keys, pairs) [any]\n"
"  -H, --header        also print the provenance lines (\"##key=value\")\n"
"  -o, --output FILE   write to FILE [standard output]\n"
"  -b, --block-size N  payload bytes per written block, suffix K/M [%uK]\n"
"  -f, --force         write a binary stream even to a terminal\n"
"  -q, --quiet         no summary line from --check\n"
"      --devices       list the OpenCL devices (numbered P:D for -d) and exit\n"
"  -h, --help          print this help and exit\n"
"      --version       print the version and exit\n",
		REC_BLOCK_DEFAULT >> 10);
}

static size_t parse_size(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		goto bad;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (*end || v < REC_BLOCK_MIN || v > REC_MAX_PAYLOAD)
		goto bad;
	return (size_t)v;
bad:
	fprintf(stderr, "%s: bad block size '%s' (%u to %u bytes)\n", sp_progname, s,
			REC_BLOCK_MIN, REC_MAX_PAYLOAD);
	exit(SP_EXIT_USAGE);
}

static void die_bad_record(rec_reader_t *r, const char *kind)
{
	char what[64];

	snprintf(what, sizeof what, "malformed %s record", kind);
	rec_reader_bad_record(r, NULL, what);
	rec_die(r);
}

static void view(const char *path, int want, int with_prov, int *last_kind)
{
	rec_reader_t *r = rec_open(path, want);
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
	while (rec_next(r, &body, &len))
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

static void import(int n, char **paths, const char *out, size_t bsize,
		int force, int argc, char **argv)
{
	rec_prov_t prov;
	rec_writer_t *w;
	seq_rec_t s;
	rec_read_t rd;
	uint64_t id = 0;
	int i;

	rec_prov_init(&prov);
	rec_prov_add_pg(&prov, "recview", SP_VERSION, argc, argv);
	for (i = 0; i < n; i++)
		rec_prov_add(&prov, "recview.source", paths[i]);
	w = rec_create(out, REC_KIND_READS, &prov, bsize, force);
	seqio_rec_init(&s);
	for (i = 0; i < n; i++) {
		seqio_reader_t *in = seqio_open(paths[i]);

		while (seqio_read(in, &s)) {
			size_t sz;

			rec_read_from_seq(&rd, id++, &s);
			sz = rec_read_size(&rd);
			rec_read_encode(rec_begin(w, sz), &rd);
			rec_commit(w, sz);
		}
		seqio_close(in);
	}
	rec_finish(w);
	seqio_rec_free(&s);
	rec_prov_free(&prov);
}

static void cat(int n, char **paths, int want, const char *out, size_t bsize,
		int force, int argc, char **argv)
{
	rec_reader_t **r = sp_calloc((size_t)n, sizeof *r);
	rec_prov_t prov;
	rec_writer_t *w;
	const uint8_t *body;
	uint32_t len;
	int i, kind = 0;

	rec_prov_init(&prov);
	for (i = 0; i < n; i++) {
		r[i] = rec_open(paths[i], want);
		if (i == 0)
			kind = rec_reader_kind(r[0]);
		else if (rec_reader_kind(r[i]) != kind)
			sp_die("cannot mix stream kinds: '%s' holds %s, '%s' holds %s",
					paths[0], rec_kind_name(kind), paths[i],
					rec_kind_name(rec_reader_kind(r[i])));
		rec_prov_carry(&prov, rec_reader_prov(r[i]));
	}
	rec_prov_add_pg(&prov, "recview", SP_VERSION, argc, argv);
	w = rec_create(out, kind, &prov, bsize, force);
	for (i = 0; i < n; i++) {
		while (rec_next(r[i], &body, &len)) {
			if (rec_kind_check(kind, body, len) < 0)
				die_bad_record(r[i], rec_kind_name(kind));
			rec_put(w, body, len);
		}
		rec_reader_free(r[i]);
	}
	rec_finish(w);
	rec_prov_free(&prov);
	free(r);
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "check", no_argument, NULL, 'c' },
		{ "import", no_argument, NULL, 'i' },
		{ "cat", no_argument, NULL, OPT_CAT },
		{ "kind", required_argument, NULL, 'k' },
		{ "header", no_argument, NULL, 'H' },
		{ "output", required_argument, NULL, 'o' },
		{ "block-size", required_argument, NULL, 'b' },
		{ "force", no_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "devices", no_argument, NULL, OPT_DEVICES },
		{ NULL, 0, NULL, 0 }
	};
	int c, mode = MODE_VIEW, nmodes = 0, want = REC_KIND_ANY, with_prov = 0;
	int force = 0, quiet = 0, nin, i, rc = 0, last_kind = -1;
	const char *out = NULL;
	size_t bsize = REC_BLOCK_DEFAULT;
	char *dash[] = { "-" }, **in;

	sp_set_progname("recview");
	sp_quiet_sigpipe();
	while ((c = getopt_long(argc, argv, "cik:Ho:b:fqh", lopts, NULL)) != -1) {
		switch (c) {
		case 'c': mode = MODE_CHECK; nmodes++; break;
		case 'i': mode = MODE_IMPORT; nmodes++; break;
		case OPT_CAT: mode = MODE_CAT; nmodes++; break;
		case 'k':
			if ((want = rec_kind_parse(optarg)) < 0) {
				fprintf(stderr, "recview: unknown stream kind '%s' (reads, candidates, hits, keys, pairs)\n", optarg);
				return SP_EXIT_USAGE;
			}
			break;
		case 'H': with_prov = 1; break;
		case 'o': out = optarg; break;
		case 'b': bsize = parse_size(optarg); break;
		case 'f': force = 1; break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); return SP_EXIT_OK;
		case OPT_VERSION: printf("recview %s\n", SP_VERSION); return SP_EXIT_OK;
		case OPT_DEVICES:
			ocl_list_devices(stdout);
			sp_close_stdout();
			return SP_EXIT_OK;
		default: usage(stderr); return SP_EXIT_USAGE;
		}
	}
	if (nmodes > 1) {
		fprintf(stderr, "recview: -c, -i and --cat exclude each other\n");
		usage(stderr);
		return SP_EXIT_USAGE;
	}
	if (mode == MODE_IMPORT && want != REC_KIND_ANY && want != REC_KIND_READS) {
		fprintf(stderr, "recview: -i makes a reads stream, not %s\n", rec_kind_name(want));
		return SP_EXIT_USAGE;
	}
	nin = argc - optind;
	in = nin ? argv + optind : dash;
	if (!nin)
		nin = 1;

	switch (mode) {
	case MODE_IMPORT:
		import(nin, in, out ? out : "-", bsize, force, argc, argv);
		return SP_EXIT_OK;
	case MODE_CAT:
		cat(nin, in, want, out ? out : "-", bsize, force, argc, argv);
		return SP_EXIT_OK;
	}
	if (out && !freopen(out, "w", stdout))
		sp_die("cannot create '%s': %s", out, strerror(errno));
	for (i = 0; i < nin; i++) {
		if (mode == MODE_CHECK)
			rc |= check(in[i], want, quiet);
		else
			view(in[i], want, with_prov, &last_kind);
	}
	sp_close_stdout();
	return rc ? SP_EXIT_DATA : SP_EXIT_OK;
}
