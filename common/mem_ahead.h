/*
 * mem_ahead.h - seedfilt -m mem: the reads parsed ahead on a thread of
 * their own (mem_ahead.c), for mem_run.c's batches.
 */
#ifndef MEM_AHEAD_H
#define MEM_AHEAD_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "filt.h"
#include "rec.h"

/*
 * The input is parsed on a thread of its own from the start, while the
 * index loads and the device opens (0.3 s on chrX), into chunks of reads
 * that step 0 takes in turn: step 0 then only copies reads into its batch.
 * At most AHEAD_BYTES of parsed reads wait, so memory stays bounded.
 */
#define AHEAD_READS 4096          /* reads a chunk */
#define AHEAD_BYTES (32u << 20)   /* bytes of the chunks waiting at most (parsing is 4 times faster) */
/*
 * Until the index is loaded and the device open (mem_ahead_limit), the
 * parser may go further ahead: the CPU is idle then, and on 1M reads the
 * parse (0.2 s) otherwise bounded the pipeline after the device's open
 * (128 MiB raised the peak RSS at L 20 by 50-80 MB, above mummer's).
 */
#define AHEAD_OPEN_BYTES (64u << 20)

typedef struct {
	uint64_t id;
	size_t name, comment, seq, qual;        /* offsets into the chunk's bytes; qual SIZE_MAX: none */
	uint32_t name_len, comment_len, len;
} aread_t;

typedef struct achunk {
	struct achunk *next;
	aread_t *r;
	size_t n, taken;
	char *a;
	size_t len, cap;
} achunk_t;

typedef struct {
	filt_in_t *in;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	achunk_t *head, *tail;    /* chunks parsed, not yet taken */
	achunk_t *cur;            /* the consumer's chunk */
	size_t bytes;             /* bytes of the chunks waiting */
	size_t bytes_max;         /* (at most: the -v memory line) */
	size_t max_bytes;         /* AHEAD_(OPEN_)BYTES or $SEEDPIPE_MEM_AHEAD (tests: tiny chunks) */
	int fixed;                /* $SEEDPIPE_MEM_AHEAD: mem_ahead_limit leaves it */
	size_t per_chunk;         /* AHEAD_READS or $SEEDPIPE_MEM_AHEAD_READS (tests) */
	int eof, err, stop;
	char msg[512];            /* the parser's error */
	double t_parse;           /* the parser's seconds, waits left out */
} ahead_t;

/* Start the parser on IN (AHEAD_OPEN_BYTES, AHEAD_READS, or $SEEDPIPE_MEM_AHEAD(_READS)). */
void mem_ahead_start(ahead_t *a, filt_in_t *in);

/* At most MAX_BYTES parsed ahead from now on (not under $SEEDPIPE_MEM_AHEAD); a lower cap only makes the parser wait. */
void mem_ahead_limit(ahead_t *a, size_t max_bytes);

/* The next read into *RD (valid until the next call), 1; 0 at the end; -1 after sp_fail. */
int mem_ahead_next(ahead_t *a, rec_read_t *rd);

/* Stops the parser (at the end of the input, or early after a failure) and frees what is left. */
void mem_ahead_end(ahead_t *a);

#endif
