/*
 * rec_view.h - what recview does with record streams: print them as text,
 * check them, make a reads stream from FASTA/FASTQ, concatenate streams of
 * one kind (man/recview.1).  tools/recview.c parses the options into a
 * rec_view_opt_t and makes one call.
 */
#ifndef SP_REC_VIEW_H
#define SP_REC_VIEW_H

#include <stddef.h>

#include "rec.h"

enum { REC_VIEW_TEXT, REC_VIEW_CHECK, REC_VIEW_IMPORT, REC_VIEW_CAT, REC_VIEW_DEVICES };

typedef struct {
	int mode;                 /* REC_VIEW_* */
	int want;                 /* REC_KIND_* the inputs must hold (REC_KIND_ANY) */
	int with_prov;            /* text: print the provenance lines too */
	int force;                /* write a binary stream to a terminal */
	int quiet;                /* check: no summary lines */
	const char *out;          /* NULL: standard output */
	size_t block_size;        /* payload bytes per written block */
	int n_in;                 /* inputs ("-": standard input), at least one */
	char **in;
	const rec_prov_t *prov;   /* import, cat: this stage's own lines ("pg") */
} rec_view_opt_t;

/**
 * Run recview's mode O->mode on the inputs; returns the exit status (check:
 * 1 when an input is damaged, the others told on stderr).  Other errors
 * print "TOOL: message" and exit (main thread only).
 */
int rec_view_or_die(const rec_view_opt_t *o);

#endif
