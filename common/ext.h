/*
 * ext.h - extend's work: verify the candidate diagonals of a batch of reads
 * against the reference with the alignment core (align.h) and turn the end
 * positions within the bound into loci, each reported once at its best
 * alignment (man/extend.1 describes the tool).
 *
 * Two passes over a batch, each run by the one alignment core (align.h) on
 * the CPU or the device (align_dev_ends, align_dev_trace), so the CPU and
 * the device give the same bytes:
 *
 *  1. windows: candidate diagonal g of a read of m bases gives the window
 *     [g - A, g + m + A) of its sequence (clipped at the sequence's ends,
 *     never across); the windows of one read, strand and sequence that
 *     overlap or touch are merged, and a merged window longer than 1024
 *     bases (for reads with m - 1 + A >= 512: 4 (m + A), at most
 *     ALIGN_MAX_WIN) is cut into pieces overlapping by m - 1 + A bases (so
 *     every end column is exact in some piece).  Aligned with ALIGN_ENDS
 *     and without CIGAR, straight from the 2-bit packed reference (the
 *     windows touching an N run again from ASCII copies): the distance of
 *     the read at every end column.  With --no-gaps a window is first
 *     tested with 64-bit XOR and popcount against the packed reference (a
 *     lower bound of the mismatches, N counting as A) and dropped when no
 *     diagonal can be within A; the core sees only the rest, on the CPU
 *     and the device alike.
 *
 *  2. loci: the end positions within A of a read, strand and sequence (the
 *     least distance over the windows holding each) are grouped into
 *     maximal runs of neighbouring positions, Rabema's loci; a locus is
 *     reported at its best end (least distance, leftmost).  With --no-gaps
 *     no indel can shift a hit, so every diagonal within A is a hit of its
 *     own (as razers3 -ng reports them), and its alignment is known from
 *     pass 1 (CIGAR mM at the diagonal, NM its exact mismatch count): only
 *     the MD string is made from the reference, the core is not run again.  Each locus is traced back in the
 *     window [e - m + 1 - A, e] ending at its best end e (every start an
 *     alignment within A can have), which gives the CIGAR, the position
 *     and the MD string.  Loci whose alignments start at the same base
 *     (one place, its runs of ends split by a gap, e.g. "40M" and
 *     "33M1I1M1I4M") are one: the least distance is kept, then the
 *     fewest CIGAR runs, then the leftmost end.
 *
 *     ends of one read/strand/sequence:   . . 3 2 2 3 . . . . 3 1 . .
 *     loci (runs):                            [-------]       [---]
 *     reported at:                              ^ (2, leftmost)  ^ (1)
 *
 * Reference N bases are written into the windows as N, which the core
 * counts as a mismatch against any read base.
 *
 * The run (ext_run_or_die): a pipeline of batches (on the CPU of 8 parts of
 * -B candidates), with a bounded number of them in flight:
 *
 *     read      candidates records into a batch, in input order
 *     align     the batch, whole on one thread (a parallel step: N threads
 *               align N batches at once)
 *     format    its SAM text (also parallel)
 *     write     the text, or the BAM records or hits stream, in input order
 *
 * With a device a batch is large and aligned at once, an ordered step.  An error
 * on any step (a truncated or malformed input, a write error) stops the
 * run; the output written so far is then ended so that it cannot pass for
 * complete (ext_out_fail), and the tool exits 1 with the message.
 *
 * Files, each calling only those below it:
 *
 *     ext_run.c     the run: device, input, index, provenance, pipeline
 *     ext_out.c     the output: SAM, BAM or hits stream, batch by batch
 *     ext_sam.c     SAM header, SAM text lines, BAM records, CIGAR text
 *     ext_batch.c   a batch: its reads, passes 1 and 2, loci, hits, MAPQ
 *     ext_win.c     a read's pass-1 windows (and the --no-gaps bound)
 *     ext_ref.c     the index as extend opens it; reference ranges as ASCII
 */
#ifndef SP_EXT_H
#define SP_EXT_H

#include <stddef.h>
#include <stdint.h>

#include <htslib/kstring.h>

#include "align.h"
#include "idx.h"
#include "ocl.h"
#include "rec_kinds.h"

/* Which hits of a read are reported. */
enum {
	EXT_ALL = 0,    /* every locus (--all) */
	EXT_BEST_K,     /* the best K (-k) */
	EXT_STRATUM     /* every locus at the least distance (--best) */
};

#define EXT_MAPQ_UNIQUE 60   /* MAPQ of a hit with no other locus */

/** Options of a run. */
typedef struct {
	unsigned max_a;      /* A, at most ALIGN_MAX_A */
	int nogaps;          /* substitutions only */
	int mode;            /* EXT_ALL, EXT_BEST_K, EXT_STRATUM */
	uint32_t k;          /* with EXT_BEST_K */
	int n_threads;       /* CPU threads of the alignment */
	ocl_ctx_t *ocl;      /* device, or NULL for the CPU */
	align_dev_t *dev;    /* with OCL: pass 1 on the device, its reference
	                      * resident (ext_batch_prep/dev/finish); NULL:
	                      * both passes through align_batch_ocl */
	int dev_cut;         /* with DEV: pass 1's windows cut on the device from the
	                      * candidates (align_dev_cut; gapped only) */
	const int16_t *guar; /* per read length 0..ALIGN_MAX_READ: the edits (with
	                      * nogaps substitutions) the filter guarantees, or NULL */
	uint32_t bound_pct;  /* with guar: check P% of each read's length (at most
	                      * max_a) instead of max_a (the stream's -E P%, no -e) */
} ext_opt_t;

/** One reported hit (a locus at its best alignment). */
typedef struct {
	uint32_t seq;        /* sequence number in the index */
	uint64_t pos;        /* 0-based first reference base in the sequence */
	uint64_t end;        /* 0-based last reference base */
	uint32_t dist;       /* edit distance (NM) */
	uint8_t strand;      /* REC_STRAND_FWD / REC_STRAND_REV */
	uint8_t mapq;
	uint32_t n_cigar;    /* BAM-encoded CIGAR: len << 4 | op (M 0, I 1, D 2) */
	uint32_t cigar[ALIGN_MAX_CIGAR];
	size_t md_off;       /* MD value in the batch's text arena */
} ext_hit_t;

/** The edit operations the filter must guarantee for a read of M bases. */
static inline int ext_bound_at(const ext_opt_t *o, uint32_t m)
{
	uint64_t p = (uint64_t)o->bound_pct * m / 100;

	return o->bound_pct && p < o->max_a ? (int)p : (int)o->max_a;
}

/** Counters of a run. */
typedef struct {
	uint64_t reads, cands, windows, bases;  /* input; pass-1 windows and bases */
	uint64_t loci;        /* verified hits: loci within A */
	uint64_t hits;        /* hits reported */
	uint64_t mapped, unmapped, too_long;
	uint64_t not_covered; /* reads whose A exceeds what the filter guarantees */
	uint64_t pairs, pairs_conc, conc;   /* pairs; with a concordant pair; concordant pairs */
	uint64_t rescued;     /* hits that mate rescue added */
	uint32_t not_covered_len;   /* the shortest of them (0: none) */
} ext_stats_t;

typedef struct ext_batch ext_batch_t;

/** An empty batch (buffers are kept from batch to batch). */
ext_batch_t *ext_batch_new(void);

/** Free a batch. */
void ext_batch_free(ext_batch_t *b);

/** Forget the reads of B (keep the buffers). */
void ext_batch_clear(ext_batch_t *b);

/**
 * Add a candidates record body (copied) to B; -1 if its read part is
 * malformed (then nothing is added).  A malformed candidate list is found
 * by ext_batch_run, which reads each list once.
 */
int ext_batch_add(ext_batch_t *b, const uint8_t *body, uint32_t len);

/** Reads and candidates in B. */
size_t ext_batch_reads(const ext_batch_t *b);
uint64_t ext_batch_cands(const ext_batch_t *b);

/** The candidates of B's read with the most. */
uint64_t ext_batch_cands_max(const ext_batch_t *b);

/**
 * Align every candidate of B against index X with options O and find each
 * read's hits (sorted: distance, sequence, position, strand; the first is
 * the primary), with MAPQ: for the hits at the least distance d1 of a read
 * with n1 loci at d1, 60 if n1 = 1 and there is no other locus,
 * min(60, 20 (d2 - d1)) if n1 = 1 and the next distance is d2,
 * 0 if n1 > 1 (as bwa: samtools view -q 1 drops such reads); 0 for every
 * other hit.  Adds to ST.
 * Returns 0, or -1 with a message in MSG (a candidate outside the index, a
 * device error).
 */
int ext_batch_run(ext_batch_t *b, const idx_t *x, const ext_opt_t *o, ext_stats_t *st,
		char *msg, size_t msg_len);

/**
 * The scratch of ext_batch_run: made and read during a run only, so one
 * thread's serves every batch it aligns (a batch without it keeps its own).
 */
typedef struct ext_ws ext_ws_t;

/** Empty scratch (its buffers grow as runs need them). */
ext_ws_t *ext_ws_new(void);

/** Free scratch W (NULL is fine). */
void ext_ws_free(ext_ws_t *w);

/** Bytes the buffers of W (0 for NULL), and of B, take: their capacities (-M). */
size_t ext_ws_bytes(const ext_ws_t *w);
size_t ext_batch_bytes(const ext_batch_t *b);

/*
 * ext_batch_run() in three parts, for a pipeline that keeps the device busy
 * with one batch while host threads work on others: ext_batch_prep (the
 * pass-1 windows, host, or with O->dev_cut the candidates as keys for the
 * device to cut them), ext_batch_dev (pass 1 on O->dev, the only part
 * that enters OpenCL), ext_batch_finish (the loci, pass 2 and the hits, on
 * the host: O->ocl is not used).  B keeps its own scratch from prep to
 * finish.  Each returns 0, or -1 with a message in MSG; the output is
 * ext_batch_run()'s.
 */
int ext_batch_prep(ext_batch_t *b, const idx_t *x, const ext_opt_t *o, ext_stats_t *st,
		char *msg, size_t msg_len);
int ext_batch_dev(ext_batch_t *b, const idx_t *x, const ext_opt_t *o, char *msg, size_t msg_len);
int ext_batch_finish(ext_batch_t *b, const idx_t *x, const ext_opt_t *o, ext_stats_t *st,
		char *msg, size_t msg_len);

/*
 * ext_batch_finish() in three parts, so that pass 2's core runs on the
 * device too: ext_batch_loci (the loci and pass 2's windows, host),
 * ext_batch_trace (the core on the windows that need it: on O->dev when
 * given, else the CPU), ext_batch_mkhits (host).
 */
int ext_batch_loci(ext_batch_t *b, const idx_t *x, const ext_opt_t *o, ext_stats_t *st,
		char *msg, size_t msg_len);
int ext_batch_trace(ext_batch_t *b, const ext_opt_t *o, char *msg, size_t msg_len);
int ext_batch_mkhits(ext_batch_t *b, const idx_t *x, const ext_opt_t *o, ext_stats_t *st);

/** ext_batch_run() with the scratch W, which no other run may use meanwhile. */
int ext_batch_run_ws(ext_batch_t *b, ext_ws_t *w, const idx_t *x, const ext_opt_t *o,
		ext_stats_t *st, char *msg, size_t msg_len);

/** Read I of B (a view valid until the batch is cleared). */
const rec_read_t *ext_batch_read(const ext_batch_t *b, size_t i);

/** Hits of read I after ext_batch_run: *N of them. */
const ext_hit_t *ext_batch_hits(const ext_batch_t *b, size_t i, uint32_t *n);

/** The MD value (NUL-terminated) of hit H of B. */
const char *ext_hit_md(const ext_batch_t *b, const ext_hit_t *h);

/** SAM CIGAR text of H into BUF (LEN bytes; 8 per run is enough); returns BUF. */
char *ext_cigar_str(const ext_hit_t *h, char *buf, size_t len);

/*
 * What a SAM record carries besides its read and hit (ext_sam_line and
 * ext_bam_record); zeroed, with mtid and tid -1, it is a single read's
 * primary record (ext_sam_rec_init).
 */
typedef struct {
	unsigned flag;       /* bits besides 0x4 and 0x10 (set from the hit):
	                      * 0x1 0x2 0x8 0x20 0x40 0x80 0x100 */
	int mapq;            /* -1: the hit's */
	int32_t tid;         /* an unmapped record placed at its mate: its sequence, else -1 */
	int64_t pos;         /* ... and 0-based position */
	int32_t mtid;        /* the mate's sequence (RNEXT), -1: none */
	int64_t mpos;        /* the mate's 0-based position (PNEXT - 1) */
	int64_t tlen;        /* TLEN */
	int mq;              /* MQ tag value (the mate's MAPQ), -1: none */
	const char *mc;      /* MC tag value (the mate's CIGAR) or NULL */
	const char *xa;      /* XA tag value or NULL */
	const char *rg;      /* RG tag value (read group ID) or NULL */
	const char *co;      /* the FASTQ comment (-C) or NULL */
	size_t co_len;
} ext_sam_rec_t;

/** E as a single read's primary record (no mate, no tags). */
void ext_sam_rec_init(ext_sam_rec_t *e);

/**
 * The name of RD as SAM writes it, in *LEN bytes: cut at 254 bytes, a
 * final "/1" or "/2" dropped (as bwa); NULL when RD has no name (the
 * read's number is written instead).
 */
const char *ext_sam_name(const rec_read_t *rd, size_t *len);

/**
 * Whether comment C (N bytes) is SAM tags, tab-separated TG:TYPE:VALUE
 * fields of type A, i (an integer of -2^31..2^32-1 as htslib prints it)
 * or Z; -C appends those as they are, any other comment as one XC:Z tag
 * (tabs as spaces).
 */
int ext_comment_is_tags(const char *c, size_t n);

/**
 * Append to KS the SAM line (with its newline) of read RD for hit H (NULL:
 * unmapped) of MD value MD, with the sequence names RNAMES and what E adds
 * (NULL: a single read's primary record; flag 0x100: secondary, SEQ and
 * QUAL "*"): the text htslib's sam_format1() writes for the record that
 * ext_bam_record() makes of the same fields (name as ext_sam_name, the
 * read's number when it has none; the read reverse-complemented on the
 * reverse strand; qualities below '!' written as '!'; tags NM, MD, AS, MC,
 * XA, RG, then the comment), without building that record.
 */
void ext_sam_line(kstring_t *ks, const rec_read_t *rd, const ext_hit_t *h,
		const char *const *rnames, const char *md, const ext_sam_rec_t *e);

/** Scratch of one thread that makes BAM records (zero it before the first use). */
typedef struct {
	struct bam1_t *b;
	char *qbuf, *sbuf, *nbuf;
	size_t qcap;
} ext_bam_t;

/**
 * Make in F->b the SAM/BAM record of read RD for hit H (NULL: unmapped) of
 * MD value MD with what E adds (NULL: as ext_sam_line): bam_set1() and the
 * tag calls.  Returns 0, or -1 after sp_fail() on an htslib failure.
 */
int ext_bam_record(ext_bam_t *f, const rec_read_t *rd, const ext_hit_t *h, const char *md,
		const ext_sam_rec_t *e);

/** Free the scratch of ext_bam_record. */
void ext_bam_free(ext_bam_t *f);

/**
 * Append to KS the SAM header of a run against index X: @HD, an @SQ line
 * for each sequence, the read group line RG (NULL: none, else "@RG\t..."
 * with real tabs), and the @PG lines of the "pg" lines of PROV (oldest
 * first, chained by PP, IDs made unique).
 */
void ext_sam_header(kstring_t *ks, const idx_t *x, const char *rg, const rec_prov_t *prov);

/**
 * Append to KS the XA tag value entry of hit H ("RNAME,+POS,CIGAR,NM;", as
 * bwa writes it: POS 1-based, the sign the strand).
 */
void ext_xa_add(kstring_t *ks, const ext_hit_t *h, const char *rname);

/** MAPQ for the hits at the best distance: see ext_batch_run. */
uint8_t ext_mapq(uint32_t n1, int has_d2, uint32_t d1, uint32_t d2);

/** extend's order of a read's hits (qsort): distance, sequence, position, strand, CIGAR. */
int ext_hit_cmp(const void *a, const void *b);

/**
 * Open the index at PATH for extend, which needs only the sequence names
 * and lengths, the packed reference and its N runs: the checksums of
 * those sections are verified, the search structures are not read.
 * Dies with "TOOL: index 'PATH': message" on failure (as idx_open_or_die).
 */
idx_t *ext_idx_open(const char *path);

/**
 * The N reference bases at global position G of X as ASCII (A, C, G, T, and
 * N inside the index's N runs) into DST.
 */
void ext_ref_ascii(const idx_t *x, uint64_t g, uint64_t n, uint8_t *dst);

/**
 * The candidate of X at global position G on STRAND (support 1) into C, as
 * a candidates record holds one: 0, or -1 where G lies in no sequence or
 * no partition.  (extend's calibration stream and the tests' streams.)
 */
int ext_cand_at(const idx_t *x, uint64_t g, unsigned strand, rec_cand_t *c);

/** C[0..N) in seedfilt's order of a record's candidates: part, position, strand. */
void ext_cands_sort(rec_cand_t *c, size_t n);

/* ---- pairs (ext_pair.c) ------------------------------------------------- */

#define EXT_RESCUE_MAX 64     /* hits of a mate in whose window its mate is searched */
#define EXT_INS_MIN_OBS 10    /* unique pairs an estimate of the insert size needs */

enum { EXT_INS_NONE, EXT_INS_SD, EXT_INS_RANGE, EXT_INS_EST, EXT_INS_DEFAULT };

/** The insert size (TLEN) of a concordant pair: given (-I) or estimated. */
typedef struct {
	int how;             /* EXT_INS_*: given as MEAN,SD or MIN,MAX, estimated, the
	                      * default (too few pairs to estimate) */
	uint32_t lo, hi;     /* bounds, inclusive */
	double mean, sd;     /* the distribution (given or estimated) */
	uint64_t n_obs;      /* pairs of the estimate */
} ext_ins_t;

/**
 * Parse -I's ARG: "MEAN,SD" when the second number is below the first
 * (bounds MEAN -+ 4 SD), else "MIN,MAX".  0, or -1 if malformed.
 */
int ext_ins_parse(const char *arg, ext_ins_t *ins);

#define EXT_INS_PAIRS 10000     /* pairs (the first of a stream) the estimate looks at */

/**
 * Estimate the insert size from the first MAX_PAIRS pairs of the NB
 * batches B (after ext_batch_run):
 * the pairs whose mates each have one hit at their least distance, on one
 * sequence in FR orientation; their inserts between the quartiles -+ 2
 * IQR give the mean and SD, the bounds the wider of mean -+ 4 SD and the
 * quartiles -+ 3 IQR (at least 1).  With
 * fewer than EXT_INS_MIN_OBS such pairs: 1..1000 (EXT_INS_DEFAULT).
 */
void ext_ins_estimate(ext_batch_t *const *b, size_t nb, size_t max_pairs, ext_ins_t *ins);

/**
 * What pairing reads, a batch's or another's (extend --merge): N_READS
 * reads (a pair is reads 2k, 2k + 1, mate 1 first), each with its hits
 * sorted as ext_batch_run sorts them and their MD values; REF gives the
 * index that holds sequence SEQ of the hits and its number there (*LOCAL),
 * for mate rescue.  The reads must outlive the pairs made of them.
 */
typedef struct {
	size_t n_reads;
	const void *ctx;
	const rec_read_t *(*read)(const void *ctx, size_t i);
	const ext_hit_t *(*hits)(const void *ctx, size_t i, uint32_t *n);
	const char *(*md)(const void *ctx, const ext_hit_t *h);
	const idx_t *(*ref)(const void *ctx, uint32_t seq, uint32_t *local);
} ext_pair_src_t;

/** ext_ins_estimate over the NS sources S in order (the reads of each, not their ref). */
void ext_ins_estimate_src(const ext_pair_src_t *s, size_t ns, size_t max_pairs, ext_ins_t *ins);

/** INS as the summary states it. */
void ext_ins_describe(const ext_ins_t *ins, char *buf, size_t len);

/** A concordant pair: hit H1 of mate 1 and H2 of mate 2, their summed distance. */
typedef struct {
	uint32_t h1, h2, dist;
} ext_conc_t;

typedef struct ext_pairs ext_pairs_t;

/** Empty pairs of a batch (buffers kept from batch to batch). */
ext_pairs_t *ext_pairs_new(void);

/** Free P (NULL is fine). */
void ext_pairs_free(ext_pairs_t *p);

/**
 * Pair the mates of batch B (after ext_batch_run; pairs are reads 2k and
 * 2k + 1, mate 1 first) with insert size INS: each mate's hits, with those
 * that mate rescue adds (the mate aligned by the core, within its bound, in
 * the window a hit of the other mate implies when that hit has no
 * concordant partner: at most EXT_RESCUE_MAX hits a mate), sorted as
 * ext_batch_run sorts them (B must be run with EXT_ALL: O's mode selects
 * pairs here); every concordant pair (opposite strands of one
 * sequence, the forward mate's first base at most the reverse mate's last,
 * insert = reverse last - forward first + 1 within INS), sorted by summed
 * distance, then mate 1's hit, then mate 2's (O's --best and -k select
 * from them); the MAPQ of the first pair's mates.  Adds to ST.  Returns 0.
 */
int ext_pairs_run(ext_pairs_t *p, const ext_batch_t *b, const idx_t *x, const ext_opt_t *o,
		const ext_ins_t *ins, ext_stats_t *st);

/** ext_pairs_run on source S (ext_pair_src_t) instead of a batch and its index. */
int ext_pairs_run_src(ext_pairs_t *p, const ext_pair_src_t *s, const ext_opt_t *o,
		const ext_ins_t *ins, ext_stats_t *st);

/** The reads of P (those of its last ext_pairs_run), and read I. */
size_t ext_pairs_reads(const ext_pairs_t *p);
const rec_read_t *ext_pairs_read(const ext_pairs_t *p, size_t i);

/** The hits of read I (a mate) after ext_pairs_run: *N of them. */
const ext_hit_t *ext_pairs_hits(const ext_pairs_t *p, size_t i, uint32_t *n);

/**
 * How many of read I's hits (the first ones) are written besides those of
 * its concordant pairs: every one with --all; with -k or --best none when
 * the pair has a concordant pair, else the best K or the best stratum.
 */
uint32_t ext_pairs_shown(const ext_pairs_t *p, size_t i);

/** The MD value of hit H of P. */
const char *ext_pairs_md(const ext_pairs_t *p, const ext_hit_t *h);

/** The concordant pairs of the pair whose mate 1 is read I: *N of them. */
const ext_conc_t *ext_pairs_conc(const ext_pairs_t *p, size_t i, uint32_t *n);

/**
 * The MAPQ of each mate of the first concordant pair of mate 1 I: 0 when
 * the pairs at the least summed distance d1 put the mate at more than one
 * locus, else as ext_mapq for one locus with d2 the least summed distance
 * of a pair that puts it elsewhere.
 */
void ext_pairs_mapq(const ext_pairs_t *p, size_t i, uint8_t *q1, uint8_t *q2);

/**
 * TLEN of the record of hit A whose mate is at hit B (as samtools fixmate
 * computes it): B's 5' end minus A's, a reverse hit's 5' end one past its
 * last base; 0 on different sequences.
 */
int64_t ext_tlen(const ext_hit_t *a, const ext_hit_t *b);

/* ---- the output (ext_out.c) --------------------------------------------- */

enum { EXT_OUT_SAM, EXT_OUT_BAM, EXT_OUT_REC };

/** The SAM conventions of a run (-R, -C, --secondary). */
typedef struct {
	const char *rg_line;  /* the @RG header line (real tabs), or NULL */
	const char *rg_id;    /* its ID, the RG tag of every record */
	int comments;         /* -C: append each read's FASTQ comment */
	int xa;               /* --secondary tag: a read's other hits in the XA tag of
	                       * its primary record, not as records */
} ext_sam_opt_t;

/**
 * Parse ARG, -R's read group line in bwa's syntax ("@RG\tID:x\tSM:y",
 * with "\t" for tabs, or real tabs), into *LINE (allocated, real tabs)
 * and *ID (allocated): 0, or -1 with the reason in MSG (it must start with
 * "@RG\t" and hold an ID field, no newline).
 */
int ext_rg_parse(const char *arg, char **line, char **id, char *msg, size_t msg_len);

/* the long-option code of --secondary in the option tables of extend and
 * extend --merge (for ext_sam_opt_parse) */
#define EXT_OPT_SECONDARY 0x1000

/**
 * One of the SAM-convention options extend and extend --merge share, option
 * C ('R', 'C', 'I' or EXT_OPT_SECONDARY) with argument ARG, into *SO and
 * *INS: 1 when C is one of them, 0 when it is not (nothing done), -1 with
 * the usage error in MSG ("option -R: ...").  -R's line and ID are
 * allocated (a second -R frees the first's); ext_sam_opt_free frees them.
 */
int ext_sam_opt_parse(int c, const char *arg, ext_sam_opt_t *so, ext_ins_t *ins, char *msg,
		size_t msg_len);

/** Free what ext_sam_opt_parse allocated in *SO. */
void ext_sam_opt_free(ext_sam_opt_t *so);

typedef struct ext_out ext_out_t;

/**
 * Create PATH ("-": stdout) as a SAM or BAM file or a hits stream (FMT) and
 * write its header: the SAM header of index X and provenance PROV
 * (ext_sam_header), or PROV itself.  Binary output to a terminal is refused
 * without FORCE.  BAM is compressed on N_THREADS threads.  Dies on error.
 */
ext_out_t *ext_out_open_or_die(const char *path, int fmt, const idx_t *x, const rec_prov_t *prov,
		int force, int n_threads, const ext_sam_opt_t *so);

/** Whether batches are formatted to text first (ext_out_format): SAM. */
int ext_out_text(const ext_out_t *o);

/**
 * Append the SAM lines of the reads of batch B with their hits to KS (one
 * line each, as sam_write1 writes them); with PR (after ext_pairs_run on
 * B) the pairs as pairs; B NULL: the reads of PR, with PR's hits.  Reads O
 * only: threads may format batches at once.
 */
void ext_out_format(const ext_out_t *o, const ext_batch_t *b, const ext_pairs_t *pr,
		kstring_t *ks);

/** A batch's BAM records, made ahead of the write step (ext_out_records). */
typedef struct ext_recs ext_recs_t;

/** Whether batches' BAM records are made first (ext_out_records): BAM. */
int ext_out_bam(const ext_out_t *o);

/**
 * Make the BAM records of batch B (with its pairs PR, or NULL; B NULL: the
 * reads of PR) into *R (made on first use, its buffers kept for the next
 * batch), as ext_out_write would write them.  Reads O only: threads may
 * make the records of batches at once.  Returns 0, or -1 after sp_fail().
 */
int ext_out_records(const ext_out_t *o, const ext_batch_t *b, const ext_pairs_t *pr,
		ext_recs_t **r);

/** Write records R (ext_out_records), one batch at a time in input order: 0, or -1 after sp_fail(). */
int ext_out_write_records(ext_out_t *o, const ext_recs_t *r);

/** Free records R (NULL: nothing). */
void ext_recs_free(ext_recs_t *r);

/**
 * Write the reads of batch B (with its pairs PR, or NULL) with their hits:
 * TXT (from ext_out_format) for SAM, else their BAM records or hits
 * records (the batch's hits: a paired run's mates before pairing and
 * rescue, which extend --merge does over all partitions).  B may be NULL
 * for SAM and BAM: PR's reads (ext_pairs_run_src), as ext_out_format.
 * One batch at a time, in input order.  Returns 0, or -1 after sp_fail().
 */
int ext_out_write(ext_out_t *o, const ext_batch_t *b, const ext_pairs_t *pr, const kstring_t *txt);

/** End the output cleanly (BAM end-of-file block, end block) and free O; dies on error. */
void ext_out_close_or_die(ext_out_t *o);

/**
 * End the output after a failure (message MSG) so that it cannot pass for
 * complete: SAM gets a last line "TOOL: error: MSG (the output is
 * incomplete)", which is no SAM record; BAM ends without its end-of-file
 * marker block; a hits stream without its end block.  The caller exits next.
 */
void ext_out_fail(ext_out_t *o, const char *msg);

/* ---- the run (ext_run.c) --------------------------------------------------- */

/* candidates (or reads) per batch on a device: each device call has a fixed
 * cost (transfers, waits); on the H100 machine, 1M chrX reads, 16 threads,
 * 1M a batch took 1.61 s against 1.99 s with 256 Ki and 1.71 s with 512 Ki */
#define EXT_BATCH_DEV 1048576
#define EXT_BATCH_CPU 4096    /* ... and on the CPU */
/* With a device the candidate lists are decoded into keys there (1) or on
 * the host (0), unless SEEDPIPE_ALIGN_DEV_KEYS or SEEDPIPE_ALIGN_HOST_KEYS
 * says: on the H100, 1M chrX reads, medians 2.35 s against 2.65 s and 2.67
 * s against 3.12 s with the host's decoding (bench/RESULTS.md,
 * ext19-keys-parallel) */
#define EXT_DEV_KEYS 1
#ifndef EXT_PARTS_CPU
#define EXT_PARTS_CPU 8       /* parts of -B candidates in a CPU batch */
#endif

/** What extend is asked to do. */
typedef struct {
	const char *in_path;      /* candidates stream, "-": stdin */
	const char *index;        /* or NULL: the one the stream names */
	const char *out_path;     /* "-": stdout */
	int fmt;                  /* EXT_OUT_* */
	int force, quiet;         /* binary output to a terminal; no summary */
	const char *device;       /* or NULL: $SEEDPIPE_DEVICE, else the native code */
	size_t batch;             /* candidates per (sub-)batch, 0: the default */
	uint64_t mem;             /* -M: memory budget, bytes (0: half the physical memory, unsaid) */
	ext_opt_t eo;             /* max_a, nogaps, mode, k, n_threads (ocl unused) */
	int a_set;                /* -e given; else the stream's seedfilt.E, else 3 */
	int strict;               /* --strict: exit 1 when some read is not covered */
	const rec_prov_t *prov;   /* this stage's provenance lines, added after the input's */
	ext_sam_opt_t so;         /* -R, -C, --secondary */
	ext_ins_t ins;            /* -I (how EXT_INS_NONE: estimate it) */
} ext_cfg_t;

/**
 * Put index X's packed reference on device OCL for the options EO: EO's
 * ocl, dev and dev_cut set (the windows cut on the device where the run
 * allows).  0, or -1 with a message in MSG (nothing left on the device).
 */
int ext_dev_setup(ocl_ctx_t *ocl, const idx_t *x, ext_opt_t *eo, char *msg, size_t msg_len);

/**
 * -d auto for a run of options EO on NT threads, -B BATCH (0: the
 * default), over the candidates file
 * IN_PATH ("-": a pipe) of index X: "none" or the device spec to open, by
 * the measured model of ocl_auto.h (calibrated once and cached); WHY says
 * what was chosen and why.  The device considered comes from ocl_auto_peek
 * (known from the cache of this system's OpenCL setup: OpenCL not loaded
 * for a run that stays native); A->known says so, and A->name and
 * A->driver are what the device opened must be (else ocl_auto_forget).  An
 * input of unknown size (a pipe) where the device costs less per byte:
 * "none" with A->switch_at the bytes where the model's two lines cross (the
 * native code first; the device for the rest once that much has come,
 * ext_run.c); else A->switch_at is 0.
 */
typedef struct {
	double switch_at;
	int known;
	char name[256], driver[256];
} ext_auto_t;

const char *ext_dev_auto(const idx_t *x, const ext_opt_t *eo, int nt, size_t batch,
		const char *in_path, char *why, size_t why_len, ext_auto_t *a);

/**
 * Run extend as C asks: open the device, the candidates stream and its
 * index (whose fingerprint must match), write every read with its hits,
 * and the summary on stderr unless quiet.  Returns 0; dies on any error
 * (exit 1, or 3 for a missing device), after ending the output as
 * ext_out_fail does.  On the main thread.
 */
int ext_run_or_die(const ext_cfg_t *c);

#endif
