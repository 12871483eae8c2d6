/*
 * mem_budget.c - seedfilt -m mem -M: the index opened whole when it fits
 * the memory budget beside the batches, else mapped with IDX_LOAD_PARTS and
 * searched in passes over groups of partitions (the FM-index of one group
 * in memory at a time); the plan and its summary line.  See mem.h and
 * man/seedfilt.1 (MEMORY BUDGET).
 */
#include "mem.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "filt.h"
#include "mem_priv.h"
#include "util.h"

/*
 * Model constants (estimates, not measurements; the -v memory line shows
 * what a run held):
 *   WS_BYTES  a thread's scratch of stages 1 and 2 (its caches, sort keys)
 *   PB_DEF    a batch in flight at the default sizes: its reads, its text
 *             (16 MB, 32 MB with a device) and, in passes, its raw matches
 *   PB_MIN    the least a batch in flight may have (a few hundred reads)
 *   PB_ONE    the least a batch may have for the FM-index to stay whole
 */
#define WS_BYTES (2u << 20)
#define PB_DEF_CPU (64u << 20)
#define PB_DEF_DEV (128u << 20)
#define PB_MIN (1u << 20)
#define PB_ONE (8u << 20)     /* a batch in flight when the FM-index stays whole, at least */

uint64_t mem_part_bytes(const idx_t *x, uint32_t i)
{
	const fm_t *f = &x->part[i].fm;

	return f->n_blocks * (FM_OCC_BLOCK + 16) + f->n_samples * 4;
}

/* Partition I's FM-index arrays brought in (LOAD) or let go; nothing unless X->lazy. */
static void part_fm(const idx_t *x, uint32_t i, int load)
{
	const fm_t *f = &x->part[i].fm;
	const void *p[3] = { f->occ, f->mark, f->sa };
	uint64_t len[3] = { f->n_blocks * FM_OCC_BLOCK, f->n_blocks * 16, f->n_samples * 4 };
	int k;

	for (k = 0; x->lazy && k < 3; k++) {
		if (load)
			idx_pages_load(x, p[k], len[k]);
		else
			idx_pages_drop(x, p[k], len[k]);
	}
}

void mem_part_load(const idx_t *x, uint32_t i) { part_fm(x, i, 1); }
void mem_part_drop(const idx_t *x, uint32_t i) { part_fm(x, i, 0); }

static uint64_t pb_def(int dev)
{
	return dev ? PB_DEF_DEV : PB_DEF_CPU;
}

int mem_budget_flags(const char *index, int nthreads, int dev, int nb, mem_budget_t *b)
{
	struct stat st;

	if (!b->mem)
		b->mem = filt_default_mem();
	b->parts = b->mem && strcmp(index, "-") != 0 && stat(index, &st) == 0 && S_ISREG(st.st_mode)
		&& (uint64_t)st.st_size + (uint64_t)nthreads * WS_BYTES + (uint64_t)(nb + 1) * pb_def(dev)
		> b->mem;
	return b->parts ? IDX_LOAD_PARTS : 0;
}

int mem_budget_plan(idx_t *x, const mem_idx_t *mi, int nthreads, int dev, int nb, mem_budget_t *b)
{
	uint64_t fixed, fmax = 0, ftot = 0, room, cap, g = 0, least;
	uint32_t i;
	char s1[32], s2[32];

	b->n_groups = 0;
	b->per_batch = 0;
	b->why[0] = 0;
	if (!b->parts)
		return 0;
	nb++;   /* the reads parsed ahead count as a batch */
	/* the CPU path's threads: in passes, those of the search and of stage 2 at once */
	fixed = idx_global_bytes(x) + (uint64_t)nthreads * WS_BYTES * (dev ? 1 : 2);
	for (i = 0; i < x->n_part; i++) {
		uint64_t f = mem_part_bytes(x, i);

		fixed += mi->jump_len[i] + (uint64_t)mi->fm[i].nshal * 4;
		ftot += f;
		if (f > fmax)
			fmax = f;
	}
	for (i = 0; i < mi->n_cut; i++)
		fixed += mi->cut[i].x1 - mi->cut[i].x0 + 3;
	fixed += mi->n_nrun_b * 4;
	b->fixed = fixed;
	if (dev == MEM_BUD_HOSTDEV_ALL)   /* a CPU device's copies are host memory */
		fmax = ftot;
	else if (dev == MEM_BUD_HOSTDEV)
		fmax *= 2;
	least = fixed + fmax + (uint64_t)nb * PB_MIN;
	if (least > b->mem) {
		filt_size_str(s1, sizeof s1, b->mem);
		filt_size_str(s2, sizeof s2, least);
		return sp_fail("%s is too small for this index with -m mem: its global sections, K-mer "
				"tables and the threads' scratch (%.1f MiB), %s (%.1f MiB) and %d batches of reads in flight need %s at least (an index built "
				"with smaller partitions, seqidx -p, needs less)", s1, fixed / 1048576.0, dev == MEM_BUD_HOSTDEV_ALL ? "the partitions on the "
				"CPU device" : dev == MEM_BUD_HOSTDEV ? "its largest partition's FM-index, mapped and "
				"on the CPU device" : "its largest partition's FM-index", fmax / 1048576.0, nb, s2);
	}
	room = b->mem - fixed;
	if (dev) {
		/* the device holds the partitions: the host maps one at a time to upload it */
		b->group_max = fmax;
		b->per_batch = (room - fmax) / (uint64_t)nb;
		if (b->per_batch > pb_def(1))
			b->per_batch = pb_def(1);
		snprintf(b->why, sizeof b->why, "the device holds the partitions%s; the host maps one "
				"at a time to upload it", dev == MEM_BUD_GPU ? "" : " (in host memory: a CPU device)");
		return 0;
	}
	if (ftot + (uint64_t)nb * PB_ONE <= room) {   /* one pass: it all stays */
		x->lazy = 0;
		b->group_max = ftot;
		b->per_batch = (room - ftot) / (uint64_t)nb;
		if (b->per_batch > pb_def(0))
			b->per_batch = pb_def(0);
		snprintf(b->why, sizeof b->why, "the FM-index (%.1f MiB) fits beside the batches "
				"(%.1f MiB each)", ftot / 1048576.0, b->per_batch / 1048576.0);
		return 0;
	}
	/*
	 * Passes: each batch brings every group in once, so the page-ins cost
	 * batches x the FM-index whatever the groups, and the fewest batches
	 * (the largest) are best: groups as small as the largest partition, the
	 * rest of the room to the batches.
	 */
	cap = fmax;
	b->gbeg = sp_malloc(((size_t)x->n_part + 1) * sizeof *b->gbeg);
	b->group_max = 0;
	for (i = 0; i < x->n_part; i++) {
		uint64_t f = mem_part_bytes(x, i);

		if (!b->n_groups || g + f > cap) {   /* a new group */
			b->gbeg[b->n_groups++] = i;
			g = 0;
		}
		g += f;
		if (g > b->group_max)
			b->group_max = g;
	}
	b->gbeg[b->n_groups] = x->n_part;
	b->per_batch = (room - b->group_max) / (uint64_t)nb;
	if (b->per_batch > pb_def(0))
		b->per_batch = pb_def(0);
	if (b->n_groups == 1) {   /* one partition: it stays, beside batches below PB_ONE */
		free(b->gbeg);
		b->gbeg = NULL;
		b->n_groups = 0;
		x->lazy = 0;
		snprintf(b->why, sizeof b->why, "the FM-index (%.1f MiB) fits beside small batches "
				"(%.1f MiB each)", ftot / 1048576.0, b->per_batch / 1048576.0);
		return 0;
	}
	snprintf(b->why, sizeof b->why, "the FM-index (%.1f MiB in %u partitions) in %u groups of "
			"%.1f MiB at most, one in memory at a time", ftot / 1048576.0, x->n_part,
			b->n_groups, b->group_max / 1048576.0);
	return 0;
}

void mem_budget_free(mem_budget_t *b)
{
	free(b->gbeg);
	b->gbeg = NULL;
}

void mem_budget_report(const mem_budget_t *b, uint64_t batches, int verbose)
{
	char m[32];

	if (!b->parts ? !verbose : (!verbose && b->n_groups < 2))
		return;
	filt_size_str(m, sizeof m, b->mem);
	if (!b->parts)
		sp_msg("memory budget %s (-M): the index fits whole; 1 pass", m);
	else if (b->n_groups < 2)
		sp_msg("memory budget %s (-M): %s; 1 pass", m, b->why);
	else
		sp_msg("memory budget %s (-M): %s; %" PRIu64 " passes (%" PRIu64 " batch%s x %u groups)",
				m, b->why, batches * b->n_groups, batches, batches == 1 ? "" : "es", b->n_groups);
}
