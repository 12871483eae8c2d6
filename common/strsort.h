/*
 * strsort.h - sort(1)-compatible line sorting for the strsort tool: key
 * definitions (POSIX -k KEYDEF), GNU sort's -n comparison in the C locale,
 * reading, sorting (msd.h radix sort on the first key, a stable merge sort for
 * the rest), external runs with a loser-tree merge, check mode and output.
 *
 * The order is that of `LC_ALL=C sort -s` with the same options.
 * ss_run is the tool's entry; strsort_priv.h lists the layers behind it,
 * and strsort_ocl.c (the ss_dev_* functions below) is the device sort.
 */
#ifndef SP_STRSORT_H
#define SP_STRSORT_H

#include <stddef.h>
#include <stdint.h>

#include "msd.h"

#define SS_NONE ((size_t)-1)  /* sword: key starts at the line start; eword: ends at its end */

/* One -k KEYDEF, as GNU sort keeps it: fields and characters count from 0. */
typedef struct {
	size_t sword, schar;  /* start field and character (SS_NONE: the line start) */
	size_t eword, echar;  /* end field and character (echar 0: end of the field) */
	int skipsb, skipeb;   /* b on the start / end position */
	int numeric, reverse; /* n, r */
	int human, general;   /* h, g */
	int month, version;   /* M, V */
	int random;           /* R */
	uint8_t rseed[16];    /* R: the random seed (set by ss_run) */
	int fold, dict, nonprint; /* f, d, i */
} ss_key;

typedef struct {
	ss_key *keys;
	int nkeys;
	int tab;              /* -t separator byte, or -1: blank-separated fields */
	int reverse, unique, numeric, blanks, zero;
	int stable;           /* -s: no last-resort comparison of whole lines */
	ss_key gflags;        /* the global ordering options (-d -f -g -h -i -M -R -V) */
	const char *random_source; /* --random-source, or NULL: getrandom */
	const char *files0;   /* --files0-from: the input names, NUL-separated, in this file */
	int merge;            /* -m: the inputs are sorted, only merge them */
	int check;            /* 0, 1 (-c: report), 2 (-C: quiet) */
	size_t mem_limit;     /* -S in bytes; 0: no limit */
	const char *tmpdir;   /* -T */
	const char *outfile;  /* -o, or NULL for stdout */
	int nthreads;
	const sp_msd_algo *algo;
	int verbose;
	int no_pack;          /* --no-pack: no small-alphabet packing */
	int records;          /* -B: sort a seedpipe record stream by its key */
	const char *device;   /* -d, or NULL (see ss_dev_open) */
	int argc;             /* the command line, for the stream provenance */
	char **argv;
} ss_opts;

/**
 * Parse a KEYDEF "F[.C][OPTS][,F[.C][OPTS]]" into *k (OPTS: b d f g h i M n
 * R r V).
 * Returns 0, or -1 with *why set to the reason (a static string).
 */
int ss_parse_key(const char *s, ss_key *k, const char **why);

/**
 * Apply the global options to the keys as GNU sort does (a key with no
 * flags of its own inherits -b, -r and the ordering options; with no keys,
 * one key covering the whole line is made; o->keys is then allocated).
 * ss_run calls it.
 */
void ss_finish_keys(ss_opts *o);

/**
 * A -S SIZE (suffix b K M G T or %; none: K) in bytes; *ok 0 when it is
 * not one (negative, NaN, a bad suffix).
 */
size_t ss_parse_size(const char *s, int *ok);

/**
 * A bare -k (the last argument, or followed by an argument that cannot
 * begin a KEYDEF, or by an existing file that is not a KEYDEF) means
 * -k1,1: rewrite argv so before getopt sees it.
 */
void ss_fix_bare_k(int argc, char **argv);

/**
 * After ss_finish_keys: 1 when a key has ordering options that GNU sort
 * refuses together (two of -n -g -h -M and one of -V -R -d -i), with
 * OPTS set to them as GNU sort spells them ("-nV"); else 0.
 */
int ss_keys_incompatible(const ss_opts *o, char opts[16]);

/**
 * Compare two numbers as GNU sort -n does in the C locale: leading blanks,
 * optional '-', digits, optional '.' and fraction; anything else is 0.
 * The texts are [a, ae) and [b, be).  Returns <0, 0, >0.
 */
int ss_numcmp(const uint8_t *a, const uint8_t *ae, const uint8_t *b, const uint8_t *be);

/**
 * Sort the records of seedpipe streams files[0..nfiles) (all of one kind)
 * by their key: keys by key bytes, hits by the reference position of the
 * first hit (seq_id, pos, strand; unmapped reads last), reads by sequence;
 * equal keys keep the input order, -r and -u apply.  Writes one stream of
 * the same kind to o->outfile or stdout.  Returns the exit status.
 */
int ss_run_records(const ss_opts *o, char **files, int nfiles);

/**
 * The strsort tool's work, given its options: finish the keys, open the
 * device (o->device), and sort (or with o->check, check) the lines of
 * files[0..nfiles) ("-" is stdin; no files means stdin), or with o->records
 * the record streams, writing to o->outfile or stdout.  Returns the exit
 * status; errors are reported as "strsort: ..." (a reader of the output
 * that went away is not an error: status 0, quietly).
 */
int ss_run(ss_opts *o, char **files, int nfiles);

/**
 * Choose the device sort (strsort_ocl.c) from SPEC (-d; NULL: then
 * $SEEDPIPE_DEVICE, else "auto"): none, an explicit device (opening starts
 * now on a thread; absent: status 3 from ss_dev_wait), or auto (decided by
 * ss_dev_prepare from the input size and the threads).
 * With VERBOSE, says which device is used.  USE 0 only checks SPEC (for
 * modes that sort on the CPU).  Returns 0 (none or auto), 2 (explicit), or
 * -1 for a bad SPEC (a usage error).
 */
int ss_dev_open(const char *spec, int verbose, int use);

/**
 * Sort a[0..n) (prefixes at depth 0, entries in idx order within equal
 * prefixes, e.g. bucketed by ends[0..nr) as for sp_msd_sort_ranges, or
 * ends NULL) as the CPU sort would, with the device doing the prefix passes
 * and the CPU finishing the runs of equal prefixes.  BYTES is the input
 * size, for the auto choice.  Returns 1 when sorted, 0 when the caller must
 * sort on the CPU (no device, or it cannot hold a batch), or -1 when the
 * device failed (message in sp_errmsg(); a is then in no useful order).
 */
int ss_dev_sort(sp_msd_ent *a, size_t n, const size_t *ends, size_t nr,
		const sp_msd_src *src, size_t bytes, int nthreads);

/**
 * The input will be about BYTES, sorted with NTHREADS threads: with -d auto,
 * choose now by the measured model (ocl_auto.h): the GPU comes from the
 * cache of this system's OpenCL setup where it is known (OpenCL is then not
 * loaded), its calibration from the calibration cache (calibrating first
 * when none is cached); where the device path is predicted faster, start
 * opening it on a thread while the input is read.  Without a usable GPU the
 * sort stays on the CPU, silently.
 */
void ss_dev_prepare(size_t bytes, int nthreads);

/**
 * Wait for a device being opened.  Returns 0, or for a requested device that
 * cannot be used the exit status (3, or 1) with the message in sp_errmsg():
 * the run ends there, before any output.
 */
int ss_dev_wait(void);

/** 1 when the line sort is to use a device (an explicit -d, or -d auto's
 * choice made by ss_dev_prepare), without waiting for it. */
int ss_dev_requested(void);

/** Print the device statistics (with verbose) and close the device. */
void ss_dev_close(void);

#endif
