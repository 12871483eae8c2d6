/*
 * seqio.h - FASTA/FASTQ input (plain or gzip, from a file or a pipe) and
 * 2-bit packing helpers.
 *
 * Input rules: multi-line FASTA, lower case folded to upper case, IUPAC
 * ambiguity codes (and any other letter) mapped to N, CRLF line ends, empty
 * records kept (length 0), the name is the first word of the header line and
 * the rest (after the first run of blanks) is the comment.  Malformed input
 * is reported as "FILE:LINE: what is wrong": seqio_next returns -1 with it
 * in sp_errmsg() (any thread); the *_or_die forms (main thread) print it as
 * "TOOL: FILE:LINE: what is wrong" and exit 1.
 *
 * In detail (decisions where formats in the wild differ):
 * - the format is sniffed: gzip by its magic bytes (concatenated members and
 *   BGZF included; NUL padding after the last member ignored), then the
 *   first non-blank line must start with '>' (FASTA) or '@' (FASTQ); NUL or
 *   control bytes in the first KiB give "not FASTA or FASTQ (binary data)";
 * - sequence: ACGTN in either case -> upper case; any other letter and the
 *   gap characters '-' and '.' -> N, counted by seqio_n_mapped; any other
 *   byte (digits, '*', punctuation, control bytes) is an error "invalid
 *   character"; blanks (space, TAB) inside FASTA sequence lines and blank
 *   lines are ignored, inside FASTQ sequence they are an error;
 * - FASTQ is the 4-line form only: multi-line FASTQ is NOT supported (the
 *   line after the sequence must start with '+').  The '+' line may repeat
 *   the name or the whole header; qualities must have the sequence's length
 *   and lie in '!'..'~'; blank lines between records are ignored;
 * - blanks at the end of a header line are dropped; names may be empty; a
 *   NUL byte in a header line is an error "invalid character 0x00";
 * - truncated input (a FASTQ record cut short, gzip data cut short or
 *   corrupt, trailing garbage after gzip data) is an error reported after
 *   the records before it have been returned.
 *
 * Input is read by a second thread (read(2) and inflate) so that I/O and
 * decompression overlap parsing; nothing ever seeks, so pipes work.  The
 * environment variable SEEDPIPE_SEQIO_CHUNK (bytes) shrinks the buffers, for
 * tests only.
 */
#ifndef SP_SEQIO_H
#define SP_SEQIO_H

#include <stddef.h>
#include <stdint.h>

#include "inc_pack.h"

/** One sequence record.  Buffers are owned by the record and reused. */
typedef struct {
	char *name;       /* NUL-terminated, first word of the header line */
	char *comment;    /* NUL-terminated, "" when there is none */
	char *seq;        /* NUL-terminated, upper case ACGTN only */
	char *qual;       /* NUL-terminated FASTQ qualities, NULL for FASTA */
	size_t name_len, comment_len, seq_len, qual_len; /* qual_len 0 for FASTA */
	size_t name_cap, comment_cap, seq_cap, qual_cap; /* private */
	uint64_t line;    /* line number of the header line (1-based) */
} seq_rec_t;

typedef struct seqio_reader seqio_reader_t;

/**
 * Open PATH ("-" = stdin) for reading FASTA or FASTQ, plain or gzip (the
 * format is sniffed from the first bytes, not the file name).  Returns NULL
 * after sp_fail() ("cannot open 'PATH': reason", or FILE:LINE: what is
 * wrong with the first line).
 */
seqio_reader_t *seqio_open_try(const char *path);

/**
 * Like seqio_open_try but on an already open file descriptor; DISPLAY_NAME
 * is used in messages.  A caller that has already read the first N bytes PRE
 * of the input (to sniff its kind) passes them: they are read again before
 * FD (PRE may be NULL when N is 0).  seqio_close does not close FD.  Opening
 * waits only for the first non-blank byte of the input.
 */
seqio_reader_t *seqio_open_fd_try(int fd, const char *display_name, const void *pre, size_t n);

/** seqio_open_try and seqio_open_fd_try (no PRE) that print the message and exit 1. */
seqio_reader_t *seqio_open_or_die(const char *path);
seqio_reader_t *seqio_open_fd_or_die(int fd, const char *display_name);

/**
 * Read the next record into REC (which must have been zeroed once, or come
 * from seqio_rec_init).  Returns 1 on a record, 0 at the end of the input,
 * -1 after sp_fail("FILE:LINE: what is wrong") on malformed input or a read
 * error (reported after the records before it; every later call returns -1
 * again).  Any thread may call it (one thread at a time per reader).
 */
int seqio_next(seqio_reader_t *r, seq_rec_t *rec);

/** seqio_next that prints the message and exits 1 on an error (main thread). */
int seqio_read_or_die(seqio_reader_t *r, seq_rec_t *rec);

/** 1 if the input is FASTQ, 0 if FASTA, -1 if not known yet (empty input). */
int seqio_is_fastq(const seqio_reader_t *r);

/** Number of letters mapped to N so far (IUPAC codes and others). */
uint64_t seqio_n_mapped(const seqio_reader_t *r);

/**
 * Close the reader and free it; the input need not have been read to its
 * end (the reading thread is stopped, even while it waits on a pipe).
 */
void seqio_close(seqio_reader_t *r);

/** Zero a record before first use. */
void seqio_rec_init(seq_rec_t *rec);

/** Free the buffers of a record. */
void seqio_rec_free(seq_rec_t *rec);

/* --- 2-bit packing ------------------------------------------------------
 *
 * Code: A=0 C=1 G=2 T=3; complement is 3-x.  Packed layout: base i lives in
 * byte i/4 at bits 2*(i%4)..2*(i%4)+1 (first base in the low bits):
 *
 *     byte 0: [b3 b3 b2 b2 b1 b1 b0 b0]   (bit 7 .. bit 0)
 *
 * N has no 2-bit code: packing writes 0 (A) for it; callers keep N runs
 * separately (seqio_n_runs).
 */

/** 2-bit code of an ASCII base (A,C,G,T any case); 4 for anything else. */
#define seqio_nt4 sp_nt4_codes

/** Pack N bases of SEQ into DST (ceil(N/4) bytes written, N as A). */
void seqio_pack2(uint8_t *dst, const char *seq, size_t n);

/** Unpack N bases from SRC into DST as ACGT (no NUL added). */
void seqio_unpack2(char *dst, const uint8_t *src, size_t n);

/** Reverse complement of N ASCII bases (ACGTN) from SRC into DST (not in place). */
void seqio_revcomp(char *dst, const char *src, size_t n);

/** Reverse complement in 2-bit packed form: N bases from SRC into DST. */
void seqio_revcomp2(uint8_t *dst, const uint8_t *src, size_t n);

/** One run of N: [start, start+len). */
typedef struct { uint64_t start, len; } seqio_nrun_t;

/**
 * Find the runs of N in SEQ[0..n).  Returns the count; *runs is allocated
 * (caller frees) and holds them in order.
 */
size_t seqio_n_runs(const char *seq, size_t n, seqio_nrun_t **runs);

#endif
