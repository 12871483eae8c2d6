/*
 * strsort_priv.h - what strsort.c shares with strsort_rec.c: temporary
 * files and the -o output (written next to FILE, renamed at the end).
 */
#ifndef SP_STRSORT_PRIV_H
#define SP_STRSORT_PRIV_H

#include <signal.h>

#include "strsort.h"

/* A registered temporary file, removed at exit or on a signal while live. */
typedef struct temp_node {
	struct temp_node *next;
	volatile sig_atomic_t live;
	char path[];
} temp_node;

/**
 * Open the output: 1 (stdout) without -o; for a regular (or new) -o FILE a
 * temporary file next to it (*tmp set), else FILE itself.  Returns the
 * descriptor, or -1 after a message.
 */
int ss_open_output(const ss_opts *o, temp_node **tmp);

/**
 * Close the output opened by ss_open_output; when ok, rename the temporary
 * file over FILE, else remove it.  Returns 0, or -1 after a message.
 */
int ss_close_output(const ss_opts *o, int fd, temp_node *tmp, int ok);

#endif
