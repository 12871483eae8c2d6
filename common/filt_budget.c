/*
 * filt_budget.c - seedfilt -M / -T: open the index whole when it fits the
 * memory budget, else with IDX_LOAD_PARTS and a plan of passes (the cost
 * model of filt_mplan.c), and say what was done.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "filt.h"
#include "util.h"

/* Model constants (assumed, not measured here): see filt_mplan.c. */
#define LOAD_BPS 1e9        /* beta: a partition read from disk at 1 GB/s */
#define PASS_S 1e-6         /* tau: one more pass costs a read 1 us */
#define WS_BYTES (1u << 20) /* a thread's workspace, about */
#define STORE_MAX (1u << 20)  /* a thread's candidates store in memory: at most, */
#define STORE_SHARE 64        /* and at most this share of the budget over the threads */
#define MAX_BATCH (1u << 22)
#define CANDS_BYTES (16 * (sizeof(rec_cand_t) + 12))   /* a read's candidates, counted */

uint64_t filt_parse_size(const char *s)
{
	char *end;
	double v = strtod(s, &end), mul = 1;

	if (end == s || !(v > 0))
		return 0;
	switch (*end) {
	case 'k': case 'K': mul = 1024.0; end++; break;
	case 'm': case 'M': mul = 1024.0 * 1024; end++; break;
	case 'g': case 'G': mul = 1024.0 * 1024 * 1024; end++; break;
	case 't': case 'T': mul = 1024.0 * 1024 * 1024 * 1024; end++; break;
	}
	if (*end == 'b' || *end == 'B')
		end++;
	v *= mul;
	return *end || v < 1 || v >= 1.8e19 ? 0 : (uint64_t)v;
}

void filt_size_str(char *s, size_t len, uint64_t v)
{
	if (v < (1ULL << 30))
		snprintf(s, len, "%.1f MiB", (double)v / 1048576.0);
	else
		snprintf(s, len, "%.2f GiB", (double)v / 1073741824.0);
}

uint64_t filt_default_mem(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);

	return pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz / 2 : 0;
}

/*
 * Bytes one buffered read takes: its bread_t and strings (name, comment,
 * sequence, qualities), its encoded record, 16 candidates between passes
 * (more spill to -T) and an entry per pass, times the batches in flight.
 */
static uint64_t per_read(uint32_t len, uint32_t n_part, int dev)
{
	uint64_t one = 256 + 4 * (uint64_t)len + CANDS_BYTES + 16 * (uint64_t)n_part;

	return one * (dev ? 5 : 3);
}

/* A thread's candidates store in memory under BO (filt_store_new). */
static uint64_t store_mem(const filt_run_t *run, const filt_budget_t *bo)
{
	uint64_t store = bo->mem / STORE_SHARE / (uint64_t)run->n_threads;

	store = store < 4096 ? 4096 : store > STORE_MAX ? STORE_MAX : store;
	if (getenv("SEEDPIPE_DEBUG_STORE"))   /* tests: spill early */
		store = filt_parse_size(getenv("SEEDPIPE_DEBUG_STORE"));
	return store;
}

int filt_budget_flags(const char *index, const filt_run_t *run, filt_budget_t *bo)
{
	uint32_t len;
	uint64_t ws;
	struct stat st;

	if (!bo->mem)
		bo->mem = filt_default_mem();
	if (!bo->read_len)
		bo->read_len = run->sens_len;
	len = bo->read_len ? bo->read_len : 150;
	ws = (uint64_t)run->n_threads * (WS_BYTES + store_mem(run, bo));
	/* fits whole (or is no file to map): loaded as without -M */
	bo->parts = !(!bo->mem || strcmp(index, "-") == 0 || stat(index, &st) != 0 ||
			!S_ISREG(st.st_mode) ||
			(uint64_t)st.st_size + ws + per_read(len, 1, bo->dev) * run->batch <= bo->mem);
	return bo->parts ? IDX_LOAD_PARTS : 0;
}

int filt_budget_plan(idx_t *x, filt_run_t *run, const filt_budget_t *bo)
{
	uint32_t len = bo->read_len ? bo->read_len : 150, i;
	uint64_t store = store_mem(run, bo);
	filt_mplan_in_t in;
	uint64_t *s;
	int r;

	memset(&run->mplan, 0, sizeof run->mplan);
	run->store = NULL;
	if (!bo->parts)
		return 0;
	for (i = 0; i < x->n_part; i++)   /* what the plan's and -d auto's calibrations read */
		idx_part_drop(x, i);
	s = sp_calloc(x->n_part ? x->n_part : 1, sizeof *s);
	for (i = 0; i < x->n_part; i++)
		s[i] = idx_part_bytes(x, i);
	memset(&in, 0, sizeof in);
	in.mem = bo->mem;
	in.resident = idx_global_bytes(x) + (uint64_t)run->n_threads * (WS_BYTES + store);
	in.per_read = per_read(len, x->n_part, bo->dev);
	in.max_batch = MAX_BATCH;
	in.fixed_batch = bo->batch_set ? run->batch : 0;
	in.load_bps = LOAD_BPS;
	/* on a device the host holds one partition at a time (uploaded, then
	 * dropped) and a pass costs a read nothing more: the planner then
	 * makes the largest batch beside the largest partition */
	in.pass_s = bo->dev ? 0 : PASS_S;
	r = filt_mplan(&in, s, x->n_part, &run->mplan);
	free(s);
	if (r < 0)
		return -1;
	run->batch = (size_t)run->mplan.batch;
	if (run->mplan.all_in) {
		x->lazy = 0;   /* it all stays */
	} else {
		run->store = filt_store_new(run->n_threads, (size_t)store, bo->tmp_dir);
		sp_malloc_bounded();   /* what a batch frees goes back before the next pass */
		/* the batch's records, gathered after the passes: what per_read
		 * counts for its candidates (they are written as they come) */
		run->gather_max = run->batch * CANDS_BYTES;
	}
	return 0;
}

void filt_budget_device(ocl_ctx_t *ocl, const filt_budget_t *bo)
{
	/* a CPU device's buffers are host memory: its partitions (all of
	 * them stay resident when they fit 60% of its memory) and batch
	 * buffers then count in -M, so its memory is the budget at most */
	if (ocl && bo->parts && bo->mem && (ocl->type & CL_DEVICE_TYPE_CPU)) {
		if (ocl->global_mem > bo->mem)
			ocl->global_mem = bo->mem;
		if (ocl->max_alloc > ocl->global_mem)
			ocl->max_alloc = ocl->global_mem;
	}
}

void filt_budget_report(const filt_run_t *run, const filt_budget_t *bo, uint64_t batches, int verbose)
{
	const filt_mplan_t *pl = &run->mplan;
	char m[32], split[200] = "";
	uint64_t rounds;

	if (!verbose && (!pl->n_groups || pl->all_in))
		return;   /* one pass: said only with -v */
	filt_size_str(m, sizeof m, bo->mem);
	if (verbose)
		sp_msg("peak RSS %" PRIu64 " KiB (-M leaves out the program itself: its code, libraries and runtimes)",
				sp_rss(1) / 1024);
	if (!pl->n_groups) {
		sp_msg("memory budget %s (-M): the index fits whole; 1 pass", m);
		return;
	}
	if (pl->all_in) {
		sp_msg("memory budget %s (-M): %s; 1 pass", m, pl->why);
		return;
	}
	rounds = run->store && filt_store_rounds(run->store) > batches ? filt_store_rounds(run->store) : batches;
	if (rounds > batches)
		snprintf(split, sizeof split, "; %" PRIu64 " rounds of passes, not %" PRIu64 ": a round takes "
				"the reads whose candidates fit the store's memory and half the free space of -T", rounds,
				batches);
	sp_msg("memory budget %s (-M): %s; %" PRIu64 " passes (%" PRIu64 " batch%s x %u)%s%s", m,
			pl->why, rounds * pl->n_groups, batches, batches == 1 ? "" : "es", pl->n_groups, split,
			run->dev ? "; on the device each partition is uploaded at most once per batch" : "");
	if (run->store && !run->dev)
		sp_msg("candidates between passes: %" PRIu64 " bytes spilled to the temporary directory",
				filt_store_spilled(run->store));
}
