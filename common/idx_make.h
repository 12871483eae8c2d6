/*
 * idx_make.h - what seqidx does (man/seqidx.1): read a FASTA reference and
 * write its index to a file (atomically) or a stream, or print or verify an
 * index.  tools/seqidx.c parses the options into an idx_make_opt_t and makes
 * one call.
 */
#ifndef SP_IDX_MAKE_H
#define SP_IDX_MAKE_H

#include <stdint.h>

typedef struct {
	const char *info;        /* print this index's parameters and sections */
	const char *verify;      /* check every checksum of this index */
	const char *in;          /* else: the reference to index ("-": stdin) */
	const char *out;         /* the index file (NULL: standard output) */
	const char *shape;       /* seed shape, or NULL for a contiguous seed of u */
	int u, l;                /* 0: the defaults (idx_params_init) */
	uint32_t structs;        /* IDX_S_* */
	uint32_t sa_rate;
	uint64_t part_limit;
	int n_threads;
	uint64_t mem_limit;      /* -M: most bytes the build holds (0: half the physical memory) */
	const char *tmp_dir;     /* -T: temporary files (NULL: $TMPDIR, else /tmp) */
	int force;               /* write to a terminal */
	int verbose, quiet;
} idx_make_opt_t;

/**
 * Do what O asks; returns the exit status.  Errors print "TOOL: message"
 * and exit 1 (main thread only); a partly written output file is removed.
 */
int idx_make_or_die(const idx_make_opt_t *o);

#endif
