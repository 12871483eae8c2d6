/*
 * idx_spill.h - the index builder's output (idx_build.c): the sequential
 * writer of the file's sections, and section sinks that collect a
 * section's payload piece by piece, in memory or in a temporary file
 * (seqidx -T), hashing it as it comes, so that a section made in several
 * passes (seqidx -M) is written once, header first, as the format wants.
 */
#ifndef SP_IDX_SPILL_H
#define SP_IDX_SPILL_H

#include <stddef.h>
#include <stdint.h>
#include <xxhash.h>

#include "sp_tmp.h"

/* The index file being written, sequentially (a pipe will do). */
typedef struct {
	int fd;
	const char *name;
	uint64_t off, fp, n_sections;   /* fp: the fingerprint, the sections' hash seed */
} idx_wr_t;

/** Write N bytes; 0, or -1 after sp_fail. */
int idx_wr_raw(idx_wr_t *w, const void *buf, size_t n);

/** One section (header, LEN payload bytes, zero padding); 0 or -1. */
int idx_wr_section(idx_wr_t *w, const char *name, uint32_t part, uint32_t esize,
		const void *data, uint64_t len);

/*
 * A section's payload: in memory (DIR NULL), or in a temporary file of
 * DIR (registered with sp_tmp, so removed on every exit path and fatal
 * signal) written through a buffer.  The hash is XXH3-64 seeded with the
 * fingerprint, as idx_wr_section's.
 */
typedef struct {
	XXH3_state_t *st;
	uint8_t *buf;            /* memory: the payload; file: the write buffer */
	size_t len, cap;
	uint64_t total;          /* bytes put */
	int fd;                  /* -1 in memory */
	sp_tmp_t *tmp;
	const char *dir;
} idx_sink_t;

/* Write buffer of a file sink (counted in seqidx -M's budget). */
#define IDX_SINK_BUF ((size_t)1 << 16)

/** Open an empty sink (DIR NULL: in memory); 0, or -1 after sp_fail. */
int idx_sink_open(idx_sink_t *s, const char *dir, uint64_t seed);

/** Append N bytes; 0 or -1. */
int idx_sink_put(idx_sink_t *s, const void *p, size_t n);

/**
 * Append the malloc'ed BUF of N bytes and free it (a sink in memory that
 * is still empty takes it over, without a copy); 0 or -1.
 */
int idx_sink_adopt(idx_sink_t *s, void *buf, size_t n);

/**
 * Read the payload back from the start, N bytes at a time into BUF (call
 * with *OFF = 0 first; returns the bytes read, 0 at the end, -1 on error).
 */
long long idx_sink_read(idx_sink_t *s, uint64_t *off, void *buf, size_t n);

/** Write the sink as section NAME of partition PART; 0 or -1. */
int idx_sink_write(idx_wr_t *w, idx_sink_t *s, const char *name, uint32_t part, uint32_t esize);

/** Free a sink and remove its temporary file (an unopened, zeroed one too). */
void idx_sink_free(idx_sink_t *s);

/*
 * red.grp and red.rep (kernels/inc_idx.h) made as the unique neighborhoods
 * come, in order: idx_grp_add for each (C = its positions), idx_grp_end
 * after the last; the groups go to GRP, the repeated counts to REP.
 */
typedef struct {
	uint64_t j, extra, x, fl;
	uint32_t base, xoff, cum;
} idx_grp_t;

int idx_grp_add(idx_grp_t *g, uint32_t c, idx_sink_t *grp, idx_sink_t *rep);
int idx_grp_end(idx_grp_t *g, idx_sink_t *grp);

#endif
