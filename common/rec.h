/*
 * rec.h - seedpipe record streams: the binary framing of the pipes between
 * tools (the normative text is man/seedpipe-rec.5).
 *
 * A stream is a header, any number of blocks, and an end block.  All
 * integers are little-endian; nothing is ever sought, so pipes work.
 *
 *   header (28 + prov_len bytes)
 *    0        8         10       12         16         20           20+P
 *   +--------+---------+--------+----------+----------+------------+----------+
 *   | magic  | version | kind   | prov_len | reserved | provenance | hdr_xxh3 |
 *   | 8      | u16     | u16    | u32 = P  | u32 = 0  | P bytes    | u64      |
 *   +--------+---------+--------+----------+----------+------------+----------+
 *   magic = 89 53 50 52 0d 0a 1a 0a ("\x89SPR\r\n\x1a\n", PNG-style: a
 *   high-bit byte, CR LF, ^Z and LF catch every text-mode mangling);
 *   hdr_xxh3 = XXH3-64 (seed 0) of every preceding header byte.
 *   The provenance is "key=value\n" lines (see rec_prov_* below).
 *
 *   block (24 + payload_len bytes)
 *   +--------+-------------+--------+----------+---------+-------------+
 *   | "SPB1" | payload_len | nrec   | reserved | xxh3    | payload     |
 *   | 4      | u32         | u32    | u32 (0)  | u64     | payload_len |
 *   +--------+-------------+--------+----------+---------+-------------+
 *   xxh3 = XXH3-64 of the payload with seed (payload_len << 32 | nrec), so
 *   a damaged length or count is caught as well as a damaged payload.
 *   payload_len is 1 .. REC_MAX_PAYLOAD; a block holds at least one record.
 *
 *   end block (40 bytes)
 *   +--------+----------+---------+---------+---------------+----------+
 *   | "SPE1" | reserved | nblocks | nrec    | payload bytes | xxh3     |
 *   | 4      | u32 (0)  | u64     | u64     | u64           | u64      |
 *   +--------+----------+---------+---------+---------------+----------+
 *   xxh3 = XXH3-64 (seed 0) of the 32 bytes before it; the totals must
 *   equal what the reader counted.
 *
 *   payload = records, each   | body_len u32 | body (body_len bytes) |
 *   so any reader can step over records of any kind; the body layout of
 *   each kind is in rec_kinds.h.
 *
 * After an end block the input may end, or another whole stream of the
 * same kind may follow (as `cat a.sp b.sp` makes); anything else is an error.
 *
 * Two styles of API: functions returning a status (REC_OK, REC_END, or a
 * negative REC_E_* code with a message in rec_errmsg()), for any thread, and
 * "or die" conveniences (rec_open_or_die, rec_next_or_die,
 * rec_create_or_die, rec_finish_or_die) for the main thread, that print
 * "TOOL: message" and exit 1 (exit 0, quietly, on EPIPE when writing).  A
 * writer made by rec_create_or_die dies on a write error in every call that
 * writes (rec_put, rec_commit...); one made by rec_writer_fd and set to
 * non-die mode keeps the first error for rec_writer_close.  Whatever the
 * mode, a record larger than a block can hold, or a rec_commit beyond its
 * rec_begin, is a bug and exits.
 *
 * A filter stage (e.g. extend reading candidates, writing hits):
 *
 *     rec_reader_t *r = rec_open_or_die(in, REC_KIND_CANDIDATES);
 *     rec_prov_t prov;
 *     rec_prov_init(&prov);
 *     rec_prov_carry(&prov, rec_reader_prov(r));     (upstream pg lines)
 *     rec_prov_add_pg(&prov, "extend", SP_VERSION, argc, argv);
 *     rec_writer_t *w = rec_create_or_die(out, REC_KIND_HITS, &prov, 0, force);
 *     while (rec_next_or_die(r, &body, &len)) {
 *         if (rec_cands_decode(body, len, &cv) < 0) {   (rec_kinds.h)
 *             rec_reader_bad_record(r, NULL, "malformed candidates record");
 *             rec_die(r);
 *         }
 *         ... rec_put_hits(w, &cv.read, hits, nhits);
 *     }
 *     rec_finish_or_die(w);
 *
 * The writer copies the provenance when it is made, so add every line
 * first.  A GPU batch: rec_next_block_or_die() for one block of records, or
 * rec_begin/rec_commit plus rec_flush_block() to end a block at a batch.
 */
#ifndef SP_REC_H
#define SP_REC_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define REC_MAGIC "\x89SPR\r\n\x1a\n"
#define REC_MAGIC_LEN 8
#define REC_HDR_FIXED 20              /* header bytes before the provenance */
#define REC_VERSION 2                 /* newest format version written/read (2: compact candidates) */
#define REC_BLOCK_TAG "SPB1"
#define REC_END_TAG "SPE1"
#define REC_BLOCK_HDR 24              /* bytes before a block's payload */
#define REC_END_LEN 40                /* bytes of an end block */
#define REC_BLOCK_DEFAULT (1u << 20)  /* default payload size: 1 MiB */
#define REC_BLOCK_MIN 64u             /* smallest block size accepted */
#define REC_MAX_PAYLOAD (1u << 30)    /* a larger length means corruption */
#define REC_MAX_PROV (1u << 24)       /* same, for the provenance block */

/* Stream kinds (u16 on the wire; never renumber). */
enum {
	REC_KIND_ANY = 0,         /* as a wanted kind: accept any */
	REC_KIND_READS = 1,
	REC_KIND_CANDIDATES = 2,
	REC_KIND_HITS = 3,
	REC_KIND_KEYS = 4,
	REC_KIND_PAIRS = 5,       /* global alignments of sequence pairs (extend --global) */
	REC_KIND_MAX = 5
};

/* Status codes.  Errors are negative and distinct per class. */
enum {
	REC_OK = 0,               /* a record/block/header was read */
	REC_END = 1,              /* clean end of stream (end block verified) */
	REC_E_TRUNCATED = -1,     /* input ended before the end block */
	REC_E_CHECKSUM = -2,      /* a header, block or end block xxh3 mismatch */
	REC_E_NOT_STREAM = -3,    /* bad magic: not a seedpipe record stream */
	REC_E_KIND = -4,          /* a stream of another kind than wanted */
	REC_E_VERSION = -5,       /* format version newer than this build */
	REC_E_CORRUPT = -6,       /* framing breaks a rule (bad tag, lengths) */
	REC_E_IO = -7,            /* read(2)/write(2) failed; see errno text */
	REC_E_TTY = -8            /* refusing to write binary to a terminal */
};

/** Name of a status code ("truncated", "checksum mismatch", ...). */
const char *rec_status_name(int status);

/** Name of a kind ("reads", ...), "unknown" for others. */
const char *rec_kind_name(int kind);

/** Kind number of NAME ("reads", "candidates", "hits", "keys", "pairs"), -1 if none. */
int rec_kind_parse(const char *name);

/**
 * Hint for a wrong-kind error: what the user probably forgot when WANT was
 * expected and GOT came ("did you forget seedfilt?"), or NULL.  The table
 * lives in rec.c (rec_kind_hints).
 */
const char *rec_kind_hint(int want, int got);

/* --- provenance ------------------------------------------------------------
 *
 * An ordered list of key=value lines.  Keys are [A-Za-z0-9_.-]+; values
 * hold no newline (rec_prov_add replaces newlines with spaces).  Well-known
 * keys: "pg" (one per pipeline stage, oldest first, value
 * "TOOL\tVERSION\tCMDLINE"), "index" (index path), "index_fp" (index
 * fingerprint, 16 hex digits); tools add their parameters as "TOOL.NAME".
 */
#define REC_PROV_PG "pg"
#define REC_PROV_INDEX "index"
#define REC_PROV_INDEX_FP "index_fp"

typedef struct {
	size_t n, cap;
	char **key, **val;        /* n owned strings each */
	void *idx;                /* private: lookup index (rec_prov_carry) */
} rec_prov_t;

/** Zero a provenance list before use. */
void rec_prov_init(rec_prov_t *p);

/** Free the strings of a provenance list (it is then empty and reusable). */
void rec_prov_free(rec_prov_t *p);

/** Append KEY=VALUE (duplicates kept: used for "pg").  Dies on a bad key. */
void rec_prov_add(rec_prov_t *p, const char *key, const char *value);

/** Set KEY to VALUE, replacing the first line with that key or appending. */
void rec_prov_set(rec_prov_t *p, const char *key, const char *value);

/** Value of the first line with KEY, or NULL. */
const char *rec_prov_get(const rec_prov_t *p, const char *key);

/**
 * Value of the next line with KEY after line *I (start with *I = 0); NULL
 * when there is none.  Iterates over repeated keys such as "pg".
 */
const char *rec_prov_next(const rec_prov_t *p, const char *key, size_t *i);

/**
 * Append this stage's "pg" line: "TOOL\tVERSION\tARGV joined by spaces".
 */
void rec_prov_add_pg(rec_prov_t *p, const char *tool, const char *version,
		int argc, char **argv);

/**
 * Carry the upstream provenance forward: append every "pg" line of SRC
 * (skipping lines DST already holds) and set each other key of SRC that
 * DST does not have yet.  Call before adding this stage's own lines.
 */
void rec_prov_carry(rec_prov_t *dst, const rec_prov_t *src);

/** Serialise to "key=value\n" text; *len gets its length; caller frees. */
char *rec_prov_text(const rec_prov_t *p, size_t *len);

/** Parse "key=value\n" text into P (appending); -1 on a malformed line. */
int rec_prov_parse(rec_prov_t *p, const char *text, size_t len);

/* --- reader ------------------------------------------------------------- */

/**
 * One block as read: BUF is owned and reused; PAYLOAD points into it.
 * A block may be kept (e.g. handed to a thread) while the reader fills
 * another rec_block_t.
 */
typedef struct {
	uint8_t *buf;             /* owned */
	size_t cap;
	const uint8_t *payload;   /* the verified payload */
	uint32_t len, nrec;       /* payload length, record count */
	uint64_t index;           /* block number in the stream, 0-based */
	uint64_t offset;          /* byte offset of the block in the input */
	uint32_t pos, irec;       /* cursor of rec_block_next */
	uint32_t last;            /* payload offset of the last record returned */
} rec_block_t;

typedef struct rec_reader rec_reader_t;

/**
 * Make a reader on an open descriptor (no I/O yet).  NAME is used in
 * messages ("-" shows as standard input).  The descriptor is not closed by
 * rec_reader_free.
 */
rec_reader_t *rec_reader_fd(int fd, const char *name);

/**
 * Open PATH ("-" = stdin) for reading; NULL with errno set on failure
 * (then nothing is allocated).
 */
rec_reader_t *rec_reader_path(const char *path);

/**
 * Read and check the header.  WANT is a kind or REC_KIND_ANY.  Returns
 * REC_OK or a REC_E_* code (message in rec_errmsg).
 */
int rec_reader_start(rec_reader_t *r, int want);

/**
 * rec_reader_start for a caller that has read the REC_MAGIC_LEN bytes of
 * the magic number from the descriptor itself (to tell a stream from other
 * input) and found REC_MAGIC: reads and checks the rest of the header.
 */
int rec_reader_start_past_magic(rec_reader_t *r, int want);

/** Kind, format version and provenance of a started stream. */
int rec_reader_kind(const rec_reader_t *r);
int rec_reader_version(const rec_reader_t *r);
const rec_prov_t *rec_reader_prov(const rec_reader_t *r);

/**
 * Read the next block into B (verifying its checksum).  Returns REC_OK,
 * REC_END after a verified end block and clean end of input, or REC_E_*.
 * B must be zeroed before its first use and freed with rec_block_free.
 */
int rec_read_block(rec_reader_t *r, rec_block_t *b);

/**
 * Next record of a block: *BODY and *LEN view the body inside the block.
 * Returns 1, 0 when the block is exhausted (after checking the record
 * count), or REC_E_CORRUPT.  Use rec_reader_block_error for the message.
 */
int rec_block_next(rec_block_t *b, const uint8_t **body, uint32_t *len);

/** Free the buffer of a block. */
void rec_block_free(rec_block_t *b);

/**
 * Next record of the stream (reading blocks as needed into the reader's own
 * block): 1 and a view of the body (valid until the next call), 0 at the
 * clean end, or a negative REC_E_* code.
 */
int rec_read(rec_reader_t *r, const uint8_t **body, uint32_t *len);

/** Totals so far: blocks, records, payload bytes, input bytes. */
void rec_reader_totals(const rec_reader_t *r, uint64_t *nblocks,
		uint64_t *nrec, uint64_t *payload, uint64_t *bytes);

/** The message of the last error ("'x.sp': input truncated ..."). */
const char *rec_errmsg(const rec_reader_t *r);

/**
 * Record a malformed-record error found by a body decoder in the record
 * last returned from block B (NULL: the reader's own block, as used by
 * rec_read and rec_next_or_die); the message names WHAT, the block, the record
 * and its byte offset.  Returns REC_E_CORRUPT.
 */
int rec_reader_bad_record(rec_reader_t *r, const rec_block_t *b,
		const char *what);

/** Free a reader (closes the descriptor if rec_reader_path opened it). */
void rec_reader_free(rec_reader_t *r);

/* "or die" conveniences: print "TOOL: message" and exit 1 on any error. */

/** Open and start PATH wanting kind WANT. */
rec_reader_t *rec_open_or_die(const char *path, int want);

/** rec_read that dies on error: 1 with a record, 0 at the clean end. */
int rec_next_or_die(rec_reader_t *r, const uint8_t **body, uint32_t *len);

/** rec_read_block that dies on error: 1 with a block, 0 at the clean end. */
int rec_next_block_or_die(rec_reader_t *r, rec_block_t *b);

/** Die with the message of R's last error. */
SP_NORETURN void rec_die(const rec_reader_t *r);

/* --- writer ------------------------------------------------------------- */

typedef struct rec_writer rec_writer_t;

/**
 * Make a writer of kind KIND on descriptor FD (NAME for messages, "-" shows
 * as standard output), with provenance PROV (copied; may be NULL) and
 * blocks of about BLOCK_SIZE payload bytes (0 = REC_BLOCK_DEFAULT).  If FD
 * is a terminal and FORCE is 0, returns NULL with *STATUS = REC_E_TTY.
 * Nothing is written until the first record or rec_writer_close.
 */
rec_writer_t *rec_writer_fd(int fd, const char *name, int kind,
		const rec_prov_t *prov, size_t block_size, int force, int *status);

/**
 * Error mode: with DIE set (the default for rec_create_or_die) a write error
 * prints "TOOL: cannot write 'FILE': reason" and exits 1, or exits 0
 * quietly on EPIPE; otherwise (a writer used on a worker thread) the first
 * error is kept and every later call does nothing, and rec_writer_error and
 * rec_writer_close return it.  The same holds for a record too large for a
 * block, provenance too large and a bad rec_commit or rec_write_block
 * length: they exit only in DIE mode.
 */
void rec_writer_set_die(rec_writer_t *w, int die);

/**
 * Room for a record body of at most MAX bytes in the current block
 * (starting a new block if needed); write the body there, then call
 * rec_commit with its real length.  Zero-copy encoding.
 */
uint8_t *rec_begin(rec_writer_t *w, size_t max);

/** Finish the record begun by rec_begin with LEN (<= MAX) body bytes. */
void rec_commit(rec_writer_t *w, size_t len);

/** Append a record body (a copy). */
void rec_put(rec_writer_t *w, const void *body, size_t len);

/** Write the current block now (a GPU batch boundary); no-op if empty. */
void rec_flush_block(rec_writer_t *w);

/**
 * Write a whole prepared payload (NREC records, framed) as one block, after
 * flushing the current one.
 */
void rec_write_block(rec_writer_t *w, const void *payload, size_t len,
		uint32_t nrec);

/**
 * Write the last block and the end block, close the descriptor if
 * rec_create_or_die opened it, and free W.  Returns 0 or the negative errno of the
 * first write error (in non-die mode); the message ("cannot write ...") is
 * then put in MSG if it is not NULL (MSG_SIZE bytes).
 */
int rec_writer_close(rec_writer_t *w, char *msg, size_t msg_size);

/** Records and blocks written so far. */
void rec_writer_totals(const rec_writer_t *w, uint64_t *nblocks,
		uint64_t *nrec);

/**
 * Create a writer on PATH ("-" = stdout, else created/truncated), dying
 * with "TOOL: cannot create 'PATH': reason" or, for a terminal without
 * FORCE, "TOOL: refusing to write a binary stream to a terminal (use -f to
 * force, or redirect the output)".
 */
rec_writer_t *rec_create_or_die(const char *path, int kind, const rec_prov_t *prov,
		size_t block_size, int force);

/**
 * The error W keeps (non-die mode): 0, or -errno with its message ("cannot
 * write ...") in MSG when MSG is not NULL.  Code on a worker thread checks
 * it after writing and returns the error instead of exiting.
 */
int rec_writer_error(const rec_writer_t *w, char *msg, size_t msg_size);

/**
 * rec_writer_close that dies on error, an error kept earlier included (exit
 * 0 quietly on EPIPE).
 */
void rec_finish_or_die(rec_writer_t *w);

/* --- a writer written on pipeline threads (rec_worker.c) ------------------ */

/**
 * rec_create_or_die (main thread) for a writer that worker threads write:
 * in non-die mode, so that a write error is kept, never an exit.
 */
rec_writer_t *rec_create_worker_or_die(const char *path, int kind, const rec_prov_t *prov,
		size_t block_size, int force);

/**
 * On a worker thread, after writing to W: 0, or -1 after sp_fail() with the
 * error W keeps ("cannot write ...").
 */
int rec_writer_check(const rec_writer_t *w);

/**
 * On the main thread, after the run that wrote W returned RC (0, or -1
 * with its message in sp_errmsg()): ends W, or dies with the first error:
 * W's (exit 0 quietly on a closed pipe, as rec_finish_or_die) or else the
 * run's, leaving the stream without its end block.
 */
void rec_end_or_die(rec_writer_t *w, int rc);

#endif
