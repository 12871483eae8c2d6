/*
 * recview.c - view, check, make and concatenate seedpipe record streams.
 *
 *   recview [FILE...]            every record as one TSV line
 *   recview -c FILE...           verify checksums and framing, one summary line
 *   recview -i FASTA/FASTQ...    make a reads stream
 *   recview --cat STREAM...      decode and re-write streams of one kind as one
 *   recview --devices            list the OpenCL devices (common/ocl.c)
 *
 * Options and usage here; the modes are in common/rec_view.c, the format
 * and the codecs in common/rec.c and common/rec_kinds.c.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec.h"
#include "rec_kinds.h"
#include "rec_view.h"
#include "util.h"

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
	sp_usage_error("bad block size '%s' (%u to %u bytes)", s, REC_BLOCK_MIN,
			REC_MAX_PAYLOAD);
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
	rec_view_opt_t o = { REC_VIEW_TEXT, REC_KIND_ANY, 0, 0, 0, NULL, REC_BLOCK_DEFAULT, 0, NULL, NULL };
	rec_prov_t prov;
	char *dash[] = { "-" };
	int c, nmodes = 0, rc;

	sp_set_progname("recview");
	sp_quiet_sigpipe();
	while ((c = sp_getopt(argc, argv, "cik:Ho:b:fqh", lopts)) != -1) {
		switch (c) {
		case 'c': o.mode = REC_VIEW_CHECK; nmodes++; break;
		case 'i': o.mode = REC_VIEW_IMPORT; nmodes++; break;
		case OPT_CAT: o.mode = REC_VIEW_CAT; nmodes++; break;
		case 'k':
			if ((o.want = rec_kind_parse(optarg)) < 0)
				sp_usage_error("unknown stream kind '%s' (reads, candidates, hits, "
						"keys, pairs)", optarg);
			break;
		case 'H': o.with_prov = 1; break;
		case 'o': o.out = optarg; break;
		case 'b': o.block_size = parse_size(optarg); break;
		case 'f': o.force = 1; break;
		case 'q': o.quiet = 1; break;
		case 'h': usage(stdout); sp_close_stdout(); return SP_EXIT_OK;
		case OPT_VERSION: sp_print_version(); sp_close_stdout(); return SP_EXIT_OK;
		case OPT_DEVICES: o.mode = REC_VIEW_DEVICES; return rec_view_or_die(&o);
		default: sp_usage_error("unknown option");
		}
	}
	if (nmodes > 1)
		sp_usage_error("-c, -i and --cat exclude each other");
	if (o.mode == REC_VIEW_IMPORT && o.want != REC_KIND_ANY && o.want != REC_KIND_READS)
		sp_usage_error("-i makes a reads stream, not %s", rec_kind_name(o.want));
	o.n_in = argc - optind;
	o.in = o.n_in ? argv + optind : dash;
	if (!o.n_in)
		o.n_in = 1;
	/* provenance: this stage's "pg" line */
	rec_prov_init(&prov);
	rec_prov_add_pg(&prov, "recview", SP_VERSION, argc, argv);
	o.prov = &prov;
	rc = rec_view_or_die(&o);
	rec_prov_free(&prov);
	return rc;
}
