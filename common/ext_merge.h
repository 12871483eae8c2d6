/*
 * ext_merge.h - extend --merge: join the hits streams that one read chunk
 * gave against each partition of a reference (each partition a contiguous
 * group of whole sequences, indexed on its own) into what extend writes for
 * the same reads against the whole reference.
 *
 * Why it can: a window never crosses a sequence's end and loci are made
 * per read, strand and sequence, so the loci a partition's run reports are
 * exactly the loci of the whole run on that partition's sequences.  What
 * depends on all loci of a read is redone here: the order (distance,
 * sequence, position, strand, CIGAR, with sequences numbered over the
 * partitions in the order given), the primary (the first), the -k / --best
 * selection and the MAPQ (ext_mapq over every locus).  The partition runs
 * must therefore report every locus (extend --all, the default).
 *
 * Paired-end streams hold each mate's loci before pairing: the merge pairs
 * them (ext_pairs_run_src over the merged loci, rescue in the partition
 * that holds a hit's sequence) after estimating the insert size from the
 * first EXT_INS_PAIRS pairs as extend does, unless -I gives it.
 *
 * What the hits stream lacks is the MD tag: it is made again from the
 * partition's packed reference (ext_idx_open reads only the names, lengths,
 * packed bases and N runs, not the search structures), with the CIGAR, the
 * read and align_md_str(), as extend makes it.
 */
#ifndef SP_EXT_MERGE_H
#define SP_EXT_MERGE_H

#include <stdint.h>

#include "ext.h"
#include "rec.h"

/** What extend --merge is asked to do. */
typedef struct {
	char *const *in;          /* N_IN hits streams, one per partition, in reference order */
	int n_in;
	char *const *index;       /* N_IN index paths (-x), or NULL: each stream's own */
	const char *out_path;     /* "-": stdout */
	int fmt;                  /* EXT_OUT_SAM or EXT_OUT_BAM */
	int mode;                 /* EXT_ALL, EXT_BEST_K, EXT_STRATUM */
	uint32_t k;               /* with EXT_BEST_K */
	int force, quiet;         /* BAM to a terminal; no summary */
	int n_threads;            /* BAM compression threads */
	const rec_prov_t *prov;   /* this stage's provenance lines */
	ext_sam_opt_t so;         /* -R, -C, --secondary, as extend's */
	ext_ins_t ins;            /* -I (paired-end streams), or how EXT_INS_NONE: estimated */
} ext_merge_cfg_t;

/**
 * Sort the N hits H of one read (sequence numbers global) as extend does
 * (distance, sequence, position, strand, CIGAR), keep those MODE and K ask
 * for and set their MAPQ from all N (ext_mapq).  Returns how many are kept
 * (the first ones of H).
 */
uint32_t ext_merge_select(ext_hit_t *h, uint32_t n, int mode, uint32_t k);

/**
 * Run extend --merge as C asks: read the streams in step (the same reads
 * in the same order in each, else an error naming the read), write every
 * read once with its merged hits, and a summary on stderr unless quiet.
 * Returns 0; dies on any error (exit 1) after ending the output so that it
 * cannot pass for complete.  On the main thread.
 */
int ext_merge_or_die(const ext_merge_cfg_t *c);

#endif
