/*
 * idx.h - the seedpipe neighborhood index (seqidx): reference, partitions,
 * the general / reduced / indexed-block structures of Tran 2012 ch. 2-4 and
 * an FM-index, the file format (normative text: man/seedpipe-index.5), the
 * builder and the loader.
 *
 * File layout (all integers little-endian, every section 64-byte aligned):
 *
 *   file header (128 bytes)
 *   +--------+---------+---------+-------------+---------------------+---------+
 *   | magic  | version | hdr_len | fingerprint | parameters          | hdr_xxh3|
 *   | 8      | u32     | u32=128 | u64         | bytes 24..119       | u64     |
 *   +--------+---------+---------+-------------+---------------------+---------+
 *   magic = 89 53 50 58 0d 0a 1a 0a ("\x89SPX\r\n\x1a\n"); parameters:
 *     24 u32 w (seed weight)    28 u32 span        32 u32 l       36 u32 h
 *     40 u32 structures mask    44 u32 sa_rate     48 u64 part_limit
 *     56 u32 n_seq              60 u32 n_part      64 u64 total bases
 *     72 char shape[32]         104 u64 n_nrun     112 u64 reserved (0)
 *   hdr_xxh3 = XXH3-64 (seed 0) of bytes 0..119.
 *   fingerprint = XXH3-64 (seed 0) of bytes 24..111 followed by the payloads
 *   of seq.names, seq.len, ref.pack and ref.nrun: it names the reference and
 *   the parameters, whatever the structures.
 *
 *   section (64-byte header, payload, zero padding to a multiple of 64)
 *   +----------+------+-----------+-----------+-------------+----------+----------+
 *   | name[16] | part | elem_size | length    | xxh3        | reserved | hdr_xxh3 |
 *   | NUL-pad  | u32  | u32       | u64 bytes | u64         | 16 bytes | u64      |
 *   +----------+------+-----------+-----------+-------------+----------+----------+
 *   xxh3 = XXH3-64 of the payload seeded with the fingerprint (a section
 *   spliced in from another index is caught); hdr_xxh3 = XXH3-64 (seed 0) of
 *   the 56 bytes before it; part = partition number, 0xffffffff for global
 *   sections.
 *
 *   Order: seq.names seq.len seq.off ref.pack ref.nrun part, then for each
 *   partition the sections of its structures (red.*, blk.*, fm.*),
 *   then the end section "end" whose 32-byte payload is
 *   | fingerprint u64 | n_sections u64 | bytes before "end" u64 | "SPXEND\0" |.
 *   The end section is written last: a file without it (truncated, or left by
 *   a failed run) is refused.
 *
 * Format 4 (and 5) store the seed positions and the neighborhoods once
 * for all the neighborhood structures.  A seed position is a start whose
 * seed span lies in one sequence, free of N; its neighborhood (the next l
 * bases) may run past the sequence's end or into N, bases read as A there
 * (format 3, the same layout, lacked these windows: a bpr pattern, whose q
 * is shorter than l, of a read flush with a sequence end found nothing; a
 * format 3 file is refused unless it holds the FM-index alone).  The windows of a partition are in
 * one order, by seed code, then neighborhood, then position (red.pos); the
 * sorted unique neighborhoods of each SeedBlock (red.nb, from red.start)
 * name runs of red.pos (the first position of unique neighborhood j:
 * idx_nbpos).  The three structures are ways to search these:
 *
 *   general  mflBPR scans the unique keys of a SeedBlock, striped into
 *            words on the fly (bpr_scan_keys), and a matching key j
 *            stands for its positions red.pos[nbpos(j) .. nbpos(j+1));
 *            so occurrence i of SeedBlock c is red.pos[nbpos(red.start[c])
 *            + i], in the order format 2's striped words kept;
 *   reduced  binary search of red.nb within the SeedBlock;
 *   block    slot s of block c holds the rank r of its key within the
 *            block, in W_c bits, W_c the bits of the block's unique count
 *            - 1 (idx_blk_rank_at), and red.nb[red.start[c] + r] is the
 *            key it is compared with.
 *
 * Sections (G general, R reduced, B block):
 *
 *   red.start red.nb red.grp red.rep red.pos     G, R or B (shared)
 *   blk.start blk.seed blk.roff blk.g blk.rank   B
 *
 * Format 5 (this one): blk.seed holds a byte per SeedBlock, the BDZ attempt
 * a whose seed bdz_seed(code, a) (kernels/inc_bdz.h) made the block's
 * graph acyclic; blk.roff (4^w + 1 u32) names the word of blk.rank where
 * each block's ranks begin (each block's at its own width, from a word
 * boundary).  Format 4 stored a u32 seed per block and every rank at the
 * largest block's width (16 bits a slot on a human-like reference, where
 * 94% of the slots need 6 at most): it is refused, rebuild the index.
 *
 * The first position of each unique neighborhood is kept in a compact
 * form, red.grp and red.rep (about 0.25 bytes per neighborhood plus 4 per
 * repeated one: idx_nbpos_get in kernels/inc_idx.h).  Versions 1 and 2
 * (the general structure's striped words gen.start, gen.wstart, gen.nb, a
 * second copy of the neighborhoods) are refused: rebuild the index.
 *
 * Where format 3's bytes go (E. coli, w = 9, l = 16; bytes per base):
 * red.pos 4.0, red.nb 3.9 (4 bytes per unique neighborhood when l <= 16, 8
 * above), blk.rank 1.5, three start lists of 4^w u32 0.21 each, blk.g 0.3,
 * red.grp + red.rep 0.3, the packed reference 0.25: about 10.9 in all
 * (format 2: 15.4, format 1: 32).  Format 5's per-block rank widths bring
 * blk.rank to about 0.9 there (measured: bench/RESULTS.md, idx7-format5-size).
 *
 * Positions in the structures are u32 offsets from the partition's first base
 * (global coordinate = part.beg + pos).  Seed code of the bases s[0..w-1] at
 * the '#' of the shape: sum s[i] * 4^i.  Neighborhood: kernels/inc_idx.h.
 *
 * Limits: global coordinates, sequence lengths and offsets are u64, so a
 * reference may hold more than 2^32 bases (t2052 maps reads beyond 2^32 in
 * a 4.4 Gbase index of 7 partitions); a partition holds at most
 * IDX_PART_MAX bases (u32 positions and slots; seqidx -p refuses more);
 * n_seq < 2^32 - 1 (idx_ref_add refuses more); a candidate names its
 * partition in 31 bits (seedfilt's keys).  The partitions are in the file
 * one after the other (idx_part_bytes), so seedfilt -M can bring in one
 * group at a time (IDX_LOAD_PARTS, idx_part_load, idx_part_drop).
 */
#ifndef SP_IDX_H
#define SP_IDX_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fm.h"
#include "inc_bdz.h"
#include "inc_idx.h"

#define IDX_MAGIC "\x89SPX\r\n\x1a\n"
#define IDX_VERSION 5         /* 1, 2 (gen.* sections), 3 (no seeds near ends) and 4 (one
                               * rank width, u32 seeds) refused */
#define IDX_HDR_LEN 128
#define IDX_SEC_HDR 64
#define IDX_ALIGN 64
#define IDX_END_MAGIC "SPXEND"
#define IDX_PART_GLOBAL 0xffffffffu
#define IDX_MAX_W 13            /* start lists have 4^w+1 entries */
#define IDX_MAX_SPAN 32
#define IDX_MAX_L 32
#define IDX_PART_MAX 3000000000ULL  /* keeps u32 positions and slots */
#define IDX_SA_RATE 32          /* default FM SA sampling rate */

/* Structures (bits of the structures mask). */
enum {
	IDX_S_GENERAL = 1,
	IDX_S_REDUCED = 2,
	IDX_S_BLOCK = 4,   /* uses the red.* sections too (as all three do) */
	IDX_S_FM = 8
};
#define IDX_S_DEFAULT (IDX_S_GENERAL | IDX_S_REDUCED | IDX_S_BLOCK)

/** Build parameters (stored in the header). */
typedef struct {
	uint32_t w;            /* seed weight: number of '#' in the shape */
	uint32_t span;         /* shape length */
	uint32_t l;            /* neighborhood length, 1..32 */
	uint32_t h;            /* neighborhoods per 64-bit word = 32 / l */
	uint32_t structs;      /* IDX_S_* */
	uint32_t sa_rate;      /* FM: SA sampled at text positions = 0 mod sa_rate */
	uint64_t part_limit;   /* most bases in one partition */
	char shape[IDX_MAX_SPAN + 1];  /* '#' and '-' */
	uint32_t shape_pos[IDX_MAX_SPAN]; /* offsets of the '#', w of them */
} idx_params_t;

/** One partition: global range [beg, end) of the concatenated reference. */
typedef struct {
	uint64_t beg, end;
	uint32_t first_seq, end_seq;  /* sequences overlapping it: [first, end) */
	uint64_t n_occ;               /* seed positions (windows) */
	/* shared by the general, reduced and block structures (idx.h, format 3) */
	const uint32_t *red_pos;      /* n_occ positions by (code, nb, position) */
	const uint32_t *red_start;    /* 4^w+1: index of each block's first unique nb */
	const uint64_t *red_nb;       /* n_uniq sorted unique neighborhoods per block (l > 16) */
	const uint32_t *red_nb32;     /* the same as u32 when l <= 16 (red_nb is NULL) */
	const uint32_t *red_grp;      /* n_uniq/64+1 groups of 16 bytes: idx_nbpos */
	const uint32_t *red_rep;      /* n_rep: repeated nbs' extra counts (inc_idx.h) */
	uint64_t n_uniq, n_rep;
	/* indexed-block structure (BDZ) */
	const uint32_t *blk_start;    /* 4^w+1: first slot of each block (M = 3r) */
	const uint8_t *blk_seed;      /* 4^w: each block's BDZ attempt (seed: bdz_seed) */
	const uint32_t *blk_roff;     /* 4^w+1: first word of each block's ranks in blk_rank */
	const uint8_t *blk_g;         /* 2 bits per slot (inc_bdz.h) */
	const uint32_t *blk_rank;     /* ranks in the block (idx_blk_rank_at), + a spare word */
	uint64_t n_rank_words;        /* blk_roff[4^w]: words of blk_rank before the spare one */
	uint64_t n_slots;
	/* FM-index */
	fm_t fm;
} idx_part_t;

/** A loaded (or built) index.  All arrays point into one mapping or buffer. */
typedef struct {
	idx_params_t p;
	uint64_t fingerprint;
	uint32_t n_seq, n_part;
	uint64_t total;               /* bases in all sequences */
	const char **names;           /* n_seq names */
	const uint64_t *len;          /* n_seq lengths */
	const uint64_t *off;          /* n_seq+1 global offsets */
	const uint8_t *pack;          /* 2-bit packed reference, N as A (seqio.h) */
	uint64_t n_nrun;
	const uint64_t *nrun;         /* 2*n_nrun: start, length (global) */
	idx_part_t *part;
	/* private */
	void *map; size_t map_len; int mapped;
	char *path;
	uint64_t n_sections;
	void *secs;                   /* section table */
	uint64_t *own_end;            /* per partition: FM hits owned end */
	uint64_t *part_rng;           /* per partition: file offset, bytes of its sections */
	int lazy;                     /* IDX_LOAD_PARTS, mapped: a partition's user lets its
	                               * pages go after use (idx_part_drop) */
} idx_t;

/* Bytes of one neighborhood key in red.nb: 4 when l <= 16, else 8. */
#define IDX_KEY_BYTES(l) ((l) <= 16 ? 4 : 8)

/** Unique neighborhood J of the reduced structure (either width). */
static inline uint64_t idx_red_key(const idx_part_t *pt, uint64_t j)
{
	return pt->red_nb32 ? pt->red_nb32[j] : pt->red_nb[j];
}

/**
 * First position index (in red_pos) of unique neighborhood J, 0 <= J <= n_uniq
 * (nbpos[n_uniq] = n_occ): the compact red.grp / red.rep (kernels/inc_idx.h).
 */
static inline uint64_t idx_nbpos(const idx_part_t *pt, uint64_t j)
{
	return idx_nbpos_get(pt->red_grp, pt->red_rep, j);
}

/** Index in red_nb of the key of slot S (partition-wide) of SeedBlock CODE. */
static inline uint64_t idx_blk_rank(const idx_part_t *pt, uint32_t code, uint64_t s)
{
	return pt->red_start[code] + idx_blk_rank_at(pt->blk_rank, pt->blk_roff, pt->red_start,
		code, (uint32_t)(s - pt->blk_start[code]));
}

/** The 32-bit BDZ hash seed of SeedBlock CODE (inc_bdz.h). */
static inline uint32_t idx_blk_seed(const idx_part_t *pt, uint32_t code)
{
	return bdz_seed(code, pt->blk_seed[code]);
}

/** Key held by slot S (partition-wide slot number) of SeedBlock CODE of the indexed-block structure. */
static inline uint64_t idx_blk_key(const idx_part_t *pt, uint32_t code, uint64_t s)
{
	return idx_red_key(pt, idx_blk_rank(pt, code, s));
}

/* ---- parameters -------------------------------------------------------- */

/**
 * Fill P from a shape (NULL: contiguous seed of weight U) and neighborhood
 * length L; U <= 0 or L <= 0 pick the defaults for a genome of GENOME_LEN
 * bases (idx_default_u, 16).  Returns 0, or -1 with a message in ERR.
 */
int idx_params_init(idx_params_t *p, const char *shape, int u, int l,
		uint64_t genome_len, char *err, size_t errlen);

/** Default seed weight for a genome of N bases: clamp(floor(log4 N) - 2, 4, 12). */
int idx_default_u(uint64_t n);

/** Parse "general,reduced,block,fm" (or "all") into an IDX_S_* mask; -1 if bad. */
int idx_parse_structs(const char *s);

/** Write the names of the structures of MASK, comma-separated, into BUF. */
void idx_structs_str(uint32_t mask, char *buf, size_t len);

/* ---- reference --------------------------------------------------------- */

typedef struct idx_ref idx_ref_t;

/** An empty reference. */
idx_ref_t *idx_ref_init(void);

/**
 * Append a sequence (ACGTN, any case).  Returns 0, or -1 after sp_fail() on
 * a duplicate or empty name or a letter other than ACGTN.
 */
int idx_ref_add(idx_ref_t *r, const char *name, const char *seq, size_t len);

/** Number of sequences and of bases so far. */
uint32_t idx_ref_n_seq(const idx_ref_t *r);
uint64_t idx_ref_total(const idx_ref_t *r);

/** Free a reference. */
void idx_ref_free(idx_ref_t *r);

/* ---- builder ----------------------------------------------------------- */

/** Builder options. */
typedef struct {
	int n_threads;        /* >= 1 */
	int progress;         /* stage messages on stderr */
	int warn;             /* warn about short sequences */
	uint64_t mem_limit;   /* most bytes the build holds (0: no limit): seqidx -M */
	const char *tmp_dir;  /* temporary files of a build in passes: seqidx -T */
} idx_build_opt_t;

/**
 * Build every structure of P for reference R and write the index to the file
 * descriptor FD (any kind: regular file, pipe); OUT_NAME is used in
 * messages.  Memory: the reference plus one partition's structures at a
 * time; with a MEM_LIMIT a partition too large for it is sorted in passes
 * over ranges of seed codes, the sections collected in temporary files of
 * TMP_DIR, and a limit too small for one pass is an error (-1).
 * Returns 0, or -1 after sp_fail() on a write error or on data errors (no
 * seed position in the reference); the file is then incomplete (no end
 * section).  Output is identical for any n_threads.
 */
int idx_build(idx_ref_t *r, const idx_params_t *p, const idx_build_opt_t *opt,
		int fd, const char *out_name);

/* ---- loader ------------------------------------------------------------ */

enum {
	IDX_LOAD_NOVERIFY = 1,  /* skip the payload checksums (headers still checked) */
	IDX_LOAD_READ = 2,      /* read into memory even when mmap is possible */
	IDX_LOAD_PARTS = 4      /* check the partitions one at a time and leave them
	                           out of memory (idx_part_load) */
};

/**
 * Load the index at PATH ("-" = stdin): mmap when it is a regular file,
 * otherwise read.  Checks the magic, version, every section header, the
 * section set, the end section, the global sections against their
 * invariants (sizes against the file before anything is allocated from a
 * count, offsets non-decreasing up to the total, N runs in order and in
 * range, the partition table equal to the one the offsets make) and, unless
 * IDX_LOAD_NOVERIFY, every payload checksum and every partition's
 * structures against theirs (starts monotone up to the counts, positions
 * window starts inside the partition, keys sorted per SeedBlock, indexes in
 * range, the FM counts, marks and samples: fm_check).  With
 * IDX_LOAD_NOVERIFY the partition structures are unchecked and must not be
 * used.  Returns NULL with a malloc'ed message in *ERR (naming the section
 * at fault) on failure.
 */
idx_t *idx_load(const char *path, int flags, char **err);

/** idx_load that dies with "TOOL: index 'PATH': message" on failure. */
idx_t *idx_open_or_die(const char *path, int flags);

/** Check every payload checksum; 0, or -1 with a malloc'ed message in *ERR. */
int idx_verify(const idx_t *x, char **err);

/**
 * The checks too slow for every load (seqidx --verify), on an index loaded
 * without IDX_LOAD_NOVERIFY: each FM-index's LF mapping walked through all
 * its rows (fm_check_walk), which proves that locating any row ends.
 * 0, or -1 with a malloc'ed message in *ERR.
 */
int idx_check_deep(const idx_t *x, char **err);

/* ---- partitions in turn (seedfilt -M) --------------------------------------
 * A mapped index loaded with IDX_LOAD_PARTS holds only its global sections
 * in memory (idx_global_bytes); a partition's structures are brought in by
 * idx_part_load and given back by idx_part_drop (the pages stay mapped: a
 * dropped partition still reads correctly, from the file again).  An index
 * read into memory (stdin) keeps everything; both calls then do nothing. */

/** Bytes of the file that partition I's sections take (0 if unknown). */
uint64_t idx_part_bytes(const idx_t *x, uint32_t i);

/** Bytes of the file outside every partition's sections. */
uint64_t idx_global_bytes(const idx_t *x);

/** Read partition I's pages into memory now (returns a checksum of nothing in particular). */
uint64_t idx_part_load(const idx_t *x, uint32_t i);

/** Let partition I's pages go (MADV_DONTNEED). */
void idx_part_drop(const idx_t *x, uint32_t i);

/**
 * The same for the whole pages of the mapping inside [P, P + LEN) (one
 * structure of a partition: seedfilt -m mem brings in only the FM-index);
 * nothing when X is not mapped or the range lies outside its mapping.
 */
uint64_t idx_pages_load(const idx_t *x, const void *p, uint64_t len);
void idx_pages_drop(const idx_t *x, const void *p, uint64_t len);

/**
 * A shallow copy of X, into *V, that holds partition I alone (partition 0
 * of V; its records name partition 0): timing a run on one partition of an
 * index loaded in parts (seedfilt -d auto under -M).  V shares X's arrays:
 * it is never closed, and must not outlive X.
 */
void idx_part_view(const idx_t *x, uint32_t i, idx_t *v);

/** Unmap or free an index. */
void idx_close(idx_t *x);

/** Print parameters, sections and sizes, fingerprint (for seqidx --info). */
void idx_print_info(const idx_t *x, FILE *fp);

/* ---- accessors --------------------------------------------------------- */

/** Seed code and neighborhood of the window at global position G (no checks). */
uint32_t idx_seed_code(const idx_t *x, uint64_t g);
uint64_t idx_nb_at(const idx_t *x, uint64_t g);

/** Bases G..G+31 of the packed reference PACK, base G in the low bits. */
uint64_t idx_ref_word(const uint8_t *pack, uint64_t g);

/** 1 if [G, G+LEN) lies in one sequence and holds no N. */
int idx_range_clean(const idx_t *x, uint64_t g, uint64_t len);

/** Sequence holding global position G (binary search); *OFS = offset in it. */
uint32_t idx_pos2seq(const idx_t *x, uint64_t g, uint64_t *ofs);

/**
 * General structure: occurrences [*beg, *end) of seed CODE (occurrence i is
 * the window red_pos[i]); neighborhood i of the block (i from 0), read from
 * the packed reference at its window.
 */
void idx_gen_block(const idx_part_t *pt, uint32_t code, uint64_t *beg, uint64_t *end);
uint64_t idx_gen_nb(const idx_t *x, const idx_part_t *pt, uint32_t code, uint64_t i);

/**
 * Reduced structure: binary search of Q in SeedBlock(CODE); returns 1 and the
 * position range [*pbeg, *pend) of red_pos if found, else 0.
 */
int idx_red_find(const idx_part_t *pt, uint32_t code, uint64_t q,
		uint64_t *pbeg, uint64_t *pend);

/**
 * Indexed-block structure: BDZ lookup of Q in SeedBlock(CODE) (hash, three g
 * values, one key compare); same result as idx_red_find.  *SLOT (if not NULL)
 * gets the slot within the block the key hashed to.
 */
int idx_blk_find(const idx_part_t *pt, uint32_t code, uint64_t q,
		uint64_t *pbeg, uint64_t *pend, uint32_t *slot);

/**
 * FM-index of partition PT: backward search of the M codes (0..3) of P; the
 * BWT rows are [*lo, *hi).  Returns the number of rows, which counts matches
 * over N (stored as A) or across sequences too: see idx_fm_locate.
 */
uint64_t idx_fm_count(const idx_part_t *pt, const uint8_t *p, size_t m,
		uint64_t *lo, uint64_t *hi);

/**
 * Positions (partition offsets, ascending) of rows [LO, HI) for a pattern of
 * length M, keeping only matches within one sequence, free of N and owned by
 * this partition (a split sequence's overlap belongs to the later
 * partition).  OUT must hold HI - LO entries; returns how many were kept.
 */
size_t idx_fm_locate(const idx_t *x, uint32_t part, uint64_t lo, uint64_t hi,
		size_t m, uint32_t *out);

#endif
