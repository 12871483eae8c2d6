/*
 * idx_priv.h - internals shared by idx_fmt.c, idx_ref.c, idx_build.c and
 * idx_load.c (not for the tools).
 */
#ifndef SP_IDX_PRIV_H
#define SP_IDX_PRIV_H

#include <stdint.h>

#include "idx.h"

/* The reference being built: names, lengths, 2-bit packed bases, N runs. */
struct idx_ref {
	uint32_t n_seq, cap_seq;
	char **names;
	uint64_t *len;
	uint64_t *off;          /* n_seq+1 */
	uint8_t *pack;          /* 2-bit, N as A, 16 zero bytes of slack */
	uint64_t total, pack_cap;
	uint64_t *nrun;         /* start, length pairs (global) */
	uint64_t n_nrun, nrun_cap;
	uint32_t *hash;         /* open addressing over names: index+1, 0 empty */
	uint32_t hash_cap;
};

/* One section of a loaded index (idx_t.secs). */
typedef struct {
	char name[16];
	uint32_t part, esize;
	uint64_t len, xxh3, off;   /* off: payload offset in the file */
	const uint8_t *data;
} idx_sec_t;

/* The arrays of the structures are written and viewed in place (u32/u64
 * payloads, idx.h): the format is little-endian, and so must the host be.
 * Single fields go through sp_le.h. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "seedpipe index I/O assumes a little-endian host"
#endif

/* Serialise the 88 parameter bytes (header bytes 24..111) of P. */
void idx_params_pack(const idx_params_t *p, uint32_t n_seq, uint32_t n_part,
		uint64_t total, uint64_t n_nrun, uint8_t *out88);

/* Parse header bytes 24..111; 0, or -1 if a value is out of range. */
int idx_params_unpack(idx_params_t *p, const uint8_t *in88, uint32_t *n_seq,
		uint32_t *n_part, uint64_t *total, uint64_t *n_nrun);

/* Partition boundaries for N sequences with offsets OFF (N+1) and window span L. */
typedef struct { uint64_t beg, end; uint32_t first_seq, end_seq; } idx_prange_t;

/*
 * The partitioning, one partition at a time (idx_partition, and the loader,
 * which replays it to check an index's partition table in constant memory):
 * the partition that starts at sequence *I, base *CUR, into *PR, with *I
 * and *CUR moved past it; 0 when no sequence is left.  Partitions hold up to
 * LIMIT bases of whole sequences; a sequence alone too long is cut, the
 * pieces overlapping by WIN-1 bases (LIMIT >= 2 * WIN makes every step
 * advance); empty sequences start no partition.
 */
static inline int idx_part_next(const uint64_t *off, uint32_t n, uint64_t limit, uint32_t win,
		uint32_t *i, uint64_t *cur, idx_prange_t *pr)
{
	while (*i < n) {
		uint64_t beg = *cur, end = *cur;
		uint32_t first = *i;

		while (*i < n && off[*i + 1] - beg <= limit) {
			end = off[*i + 1];
			(*i)++;
		}
		if (end == beg && *i > first) {   /* only empty sequences */
			*cur = end;
			continue;
		}
		if (end == beg) {                 /* sequence *i alone is too long */
			end = beg + limit;
			*cur = end - (win - 1);
		} else {
			*cur = end;
		}
		pr->beg = beg;
		pr->end = end;
		pr->first_seq = first;
		pr->end_seq = *i < n && off[*i] < end ? *i + 1 : *i;
		return 1;
	}
	return 0;
}

uint32_t idx_partition(const uint64_t *off, uint32_t n, uint64_t limit, uint32_t win,
		idx_prange_t **out);

/* Names of the per-partition sections of structure mask S, in file order. */
int idx_part_sections(uint32_t s, const char **names, int max);

/* idx_sums_first_bad: every section, whatever its partition. */
#define IDX_SUMS_ALL 0xfffffffeu

/*
 * The payload checksums of the sections of partition PART (IDX_PART_GLOBAL:
 * the global ones; IDX_SUMS_ALL: all), hashed on NTHREADS threads: the
 * number of the first section (in file order) whose checksum is wrong, or
 * -1 (idx_check.c).
 */
int64_t idx_sums_first_bad(const idx_t *x, uint32_t part, int nthreads);

/*
 * The internal consistency of partition I's arrays (every index a lookup
 * follows within its section, every SeedBlock's keys sorted, the FM-index's
 * counts and samples), checked on NTHREADS threads: 0, or -1 with the first
 * defect in MSG (N bytes), the one a single pass in order would find first
 * (idx_check.c).  The sections' sizes were checked when the index was parsed.
 */
int idx_check_part(const idx_t *x, uint32_t i, int nthreads, char *msg, size_t n);

#endif
