/*
 * filt_ocl_match.c - seedfilt's OpenCL backend, its matching: the patterns
 * of a batch of reads matched by the bpr, bs, ph or fm kernels in slices
 * sized from device memory, with a count pass before the write pass so that
 * no output can overflow.  The host turns the positions into candidates with
 * the CPU code (filt_hits, filt_finish), so both backends write the same
 * bytes.
 *
 * Units (unit = one pattern whose SeedBlock is not empty) are made on the
 * device from the batch's patterns (gather_dev: pat_items, pat_compact in
 * filt.cl), in pattern order, and used there when one slice takes them
 * all; for seeds of weight <= FILT_SORT_W the host makes them instead
 * (gather_units), in seed-code order (sort_by_code: the work groups of
 * neighbouring units then share a SeedBlock in the caches), and sends them
 * in slices:
 *
 *   bpr (items = chunks of the striped words of a unit's unique keys, at
 *   most FILT_MAX_ITEMS; the kernels stripe red.nb as they read it):
 *   host: ucode[], uq[], unm[] (N positions of q), cpre[] (first item of
 *         each unit) -> device; usum[] = 0
 *   count kernel (work groups of d->wg; block-mask tables in local memory):
 *                 cnt[item], usum[unit] += count (atomics per group),
 *                 gsum[work group] (skipped with -N)
 *   group_scan: gbase[work group]                     -> host: usum
 *   write kernel: chunks with cnt > 0 scanned again, out[gbase + local
 *                 scan..]; out -> host
 *   The program is built for the run's e, h, l, v (-DBPR_E=..: unrolled).
 *
 *   fm (one item per unit, at most FILT_MAX_ITEMS):
 *   host: ucode[], uq[], cpre[] -> device
 *   count kernel: cnt[item]; unit_sum: usum[unit]     -> host: totals, bases
 *   (output buffer grown to the total; a failed allocation halves the slice)
 *   bases -> device; unit_scan: off[item]; write kernel: out[off[item]..]
 *   out -> host
 *
 *   bs, ph (items = the canonical words of each unit's Hamming ball, up to
 *   FILT_MAX_DEGEN of them: a whole batch is one slice):
 *   host: ucode[], uq[] -> device; usum[] = 0
 *   count kernel: usum[unit] += count (atomics, matching items only),
 *                 gsum[work group] (skipped with -N)
 *   group_scan: gbase[work group]                     -> host: usum
 *   write kernel: lookups again, out[gbase + local scan..]; out -> host
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "filt_ocl_priv.h"
#include "inc_filt.h"
#include "sp_thread.h"
#include "util.h"

#define GATHER_MIN 65536            /* patterns below which one thread gathers */
#define FILT_PREFETCH 16            /* patterns ahead whose block start is prefetched */
#define FILT_SORT_W 8               /* units go in seed-code order for seeds of weight <= 8 */
#define FILT_MAX_ITEMS (1u << 22)   /* items per launch (bpr, fm: a count each) */
#define FILT_MAX_DEGEN (1u << 27)   /* bs, ph: no per-item array */
#define FILT_DEV_NOMEM "the OpenCL device ran out of memory even for one pattern (try -d none)"

/* Grow device buffer *B to at least N bytes (content lost); 0 or -1. */
static int grow(filt_dev_t *d, cl_mem *b, size_t *cap, size_t n, cl_mem_flags fl)
{
	cl_int err;

	if (n <= *cap && *b)
		return 0;
	ocl_release(*b);
	*b = NULL;
	*cap = 0;
	n = n < 64 ? 64 : n + n / 4;
	*b = ocl_buffer_try(d->ocl, fl, n, &err);
	if (!*b)
		return -1;
	*cap = n;
	return 0;
}

static cl_mem buf_or_dummy(filt_dev_t *d, const dpart_t *p, int i)
{
	return p->b[i] ? p->b[i] : d->dummy;
}

/* Set the arguments shared by both kernels of a method; returns the next index. */
static cl_uint set_args(filt_dev_t *d, cl_kernel k, const dpart_t *p, uint32_t n_items,
		uint32_t n_units, int write)
{
	cl_uint a = 0;
	uint32_t ph = d->o.method == FILT_PH, e = d->o.e, l = d->x->p.l, any = d->o.any != 0;

	filt_dev_arg(d, k, a++, sizeof n_items, &n_items);
	if (d->o.method == FILT_FM) {
		const fm_t *fm = &d->x->part[p - d->part].fm;
		cl_ulong v64[6];
		uint32_t span = d->x->p.span;
		int i;

		v64[0] = fm->primary;
		v64[1] = fm->n;
		for (i = 0; i < 4; i++)
			v64[2 + i] = fm->C[i];
		filt_dev_arg(d, k, a++, sizeof(cl_mem), &d->ucode);
		filt_dev_arg(d, k, a++, sizeof(cl_mem), &d->uq);
		filt_dev_arg(d, k, a++, sizeof(cl_mem), &p->b[B_OCC]);
		for (i = 0; i < 6; i++)
			filt_dev_arg(d, k, a++, sizeof v64[i], &v64[i]);
		filt_dev_arg(d, k, a++, sizeof span, &span);
		filt_dev_arg(d, k, a++, sizeof d->shape, &d->shape);
		filt_dev_arg(d, k, a++, sizeof l, &l);
		filt_dev_arg(d, k, a++, sizeof e, &e);
		filt_dev_arg(d, k, a++, sizeof any, &any);
		return a;
	}
	if (d->o.method == FILT_BPR) {
		cl_mem nb32 = d->is32 ? p->b[B_RNB] : d->dummy, nb64 = d->is32 ? d->dummy : p->b[B_RNB];

		filt_dev_arg(d, k, a++, sizeof n_units, &n_units);
		filt_dev_arg(d, k, a++, sizeof(cl_mem), &d->cpre);
		filt_dev_arg(d, k, a++, sizeof(cl_mem), &d->ucode);
		filt_dev_arg(d, k, a++, sizeof(cl_mem), &d->uq);
		filt_dev_arg(d, k, a++, sizeof(cl_mem), &d->unm);
		filt_dev_arg(d, k, a++, sizeof(cl_mem), &p->b[B_RSTART]);
		filt_dev_arg(d, k, a++, sizeof(cl_mem), &nb32);
		filt_dev_arg(d, k, a++, sizeof(cl_mem), &nb64);
		filt_dev_arg(d, k, a++, sizeof(cl_mem), &p->b[B_NBPOS]);
		if (write)
			filt_dev_arg(d, k, a++, sizeof(cl_mem), &p->b[B_RPOS]);
		filt_dev_arg(d, k, a++, sizeof d->h, &d->h);
		filt_dev_arg(d, k, a++, sizeof l, &l);
		filt_dev_arg(d, k, a++, sizeof d->v, &d->v);
		filt_dev_arg(d, k, a++, sizeof e, &e);
	} else {
		cl_mem m;

		filt_dev_arg(d, k, a++, sizeof d->n_grid, &d->n_grid);
		filt_dev_arg(d, k, a++, sizeof d->gmul, &d->gmul);
		filt_dev_arg(d, k, a++, sizeof d->gsh, &d->gsh);
		filt_dev_arg(d, k, a++, sizeof d->cshift, &d->cshift);
		filt_dev_arg(d, k, a++, sizeof(cl_mem), &d->lpos);
		filt_dev_arg(d, k, a++, sizeof(cl_mem), &d->ucode);
		filt_dev_arg(d, k, a++, sizeof(cl_mem), &d->uq);
		m = buf_or_dummy(d, p, B_RSTART);
		filt_dev_arg(d, k, a++, sizeof(cl_mem), &m);
		m = d->is32 ? buf_or_dummy(d, p, B_RNB) : d->dummy;
		filt_dev_arg(d, k, a++, sizeof(cl_mem), &m);
		m = d->is32 ? d->dummy : buf_or_dummy(d, p, B_RNB);
		filt_dev_arg(d, k, a++, sizeof(cl_mem), &m);
		filt_dev_arg(d, k, a++, sizeof d->is32, &d->is32);
		filt_dev_arg(d, k, a++, sizeof ph, &ph);
		m = buf_or_dummy(d, p, B_BSTART);
		filt_dev_arg(d, k, a++, sizeof(cl_mem), &m);
		m = buf_or_dummy(d, p, B_BSEED);
		filt_dev_arg(d, k, a++, sizeof(cl_mem), &m);
		m = buf_or_dummy(d, p, B_BGF);
		filt_dev_arg(d, k, a++, sizeof(cl_mem), &m);
		m = buf_or_dummy(d, p, B_BREC);
		filt_dev_arg(d, k, a++, sizeof(cl_mem), &m);
		m = buf_or_dummy(d, p, B_NBPOS);
		filt_dev_arg(d, k, a++, sizeof(cl_mem), &m);
		if (write)
			filt_dev_arg(d, k, a++, sizeof(cl_mem), &p->b[B_RPOS]);
	}
	return a;
}

/* The kind of unit of filt_unit_items (inc_filt.h): 0 fm, 1 bpr, 2 bs and ph. */
static uint32_t unit_kind(const filt_dev_t *d)
{
	return d->o.method == FILT_FM ? 0 : d->o.method == FILT_BPR ? 1 : 2;
}

/* Items of unit with seed CODE in partition PT (0: no unit). */
static uint64_t unit_items(const filt_dev_t *d, const idx_part_t *pt, uint32_t code)
{
	uint32_t kind = unit_kind(d);
	uint64_t nk = kind == 1 || (kind == 2 && !d->cshift) ?
		pt->red_start[code + 1] - pt->red_start[code] : 0;

	return filt_unit_items(kind, nk, d->h, d->n_grid, d->cshift != 0);
}

/*
 * Host scratch for a slice of NU units, 2 NU + 2 entries: [0, NU] for
 * inputs that a non-blocking write sends (bpr's chunk prefix), [NU + 1,
 * 2 NU + 1] for the unit sums read back.  Grown only here, before either
 * part is used in the slice.
 */
static uint32_t *host_scratch(filt_dev_t *d, size_t nu)
{
	if (d->h_cap_items < 2 * nu + 2) {
		d->h_cap_items = 3 * nu + 2;
		d->h_cnt = sp_realloc(d->h_cnt, d->h_cap_items * sizeof *d->h_cnt);
	}
	return d->h_cnt;
}

/* Append the TOT positions of the last write pass (d->out) to *HITS. */
static void append_out(filt_dev_t *d, uint64_t tot, uint32_t **hits, size_t *n_hits,
		size_t *cap_hits)
{
	if (*n_hits + tot > *cap_hits) {
		*cap_hits = (*n_hits + tot) * 3 / 2 + 1024;
		*hits = sp_realloc(*hits, *cap_hits * sizeof **hits);
	}
	filt_dev_d2h(d, d->out, tot * 4, *hits + *n_hits);
	*n_hits += tot;
}

/*
 * The passes that bpr, bs and ph share, over the NI items of the NU units
 * from U0 whose own inputs are on the device: the count pass adds up the
 * units' counts (one atomic per unit and work group) and the groups'
 * (skipped with -N), group_scan makes the groups' output offsets, the write
 * pass stores the positions.  bpr's kernels also take the items' counts
 * (d->cnt: its write pass rescans only the chunks that have some).
 * Returns 0, or -1 when a device buffer could not be had.
 */
static int run_grouped(filt_dev_t *d, const dpart_t *p, size_t u0, size_t nu, size_t ni,
		uint32_t *ucnt, uint32_t **hits, size_t *n_hits, size_t *cap_hits)
{
	size_t ng = (ni + d->wg - 1) / d->wg, u;
	uint32_t n_items = (uint32_t)ni, n_units = (uint32_t)nu, ng32 = (uint32_t)ng;
	uint32_t want = !d->o.count_only, bpr = d->o.method == FILT_BPR, *usum;
	uint64_t tot = 0;
	cl_mem gs;
	cl_uint a;

	if (grow(d, &d->usum, &d->cap_usum, nu * 4, CL_MEM_READ_WRITE) < 0 ||
			(want && (grow(d, &d->gsum, &d->cap_gsum, ng * 4, CL_MEM_READ_WRITE) < 0 ||
				grow(d, &d->off, &d->cap_off, ng * 4, CL_MEM_READ_WRITE) < 0)))
		return -1;
	usum = host_scratch(d, nu) + nu + 1;
	filt_dev_zero(d, d->usum, nu * 4);
	gs = want ? d->gsum : d->dummy;
	a = set_args(d, d->k_count, p, n_items, n_units, 0);
	if (bpr)
		filt_dev_arg(d, d->k_count, a++, sizeof(cl_mem), &d->cnt);
	filt_dev_arg(d, d->k_count, a++, sizeof(cl_mem), &d->usum);
	filt_dev_arg(d, d->k_count, a++, sizeof(cl_mem), &gs);
	filt_dev_arg(d, d->k_count, a, sizeof want, &want);
	if (filt_dev_run_wg(d, d->k_count, ni, d->wg, P_COUNT) != CL_SUCCESS)
		return -1;
	if (want) {
		filt_dev_arg(d, d->k_gscan, 0, sizeof ng32, &ng32);
		filt_dev_arg(d, d->k_gscan, 1, sizeof(cl_mem), &d->gsum);
		filt_dev_arg(d, d->k_gscan, 2, sizeof(cl_mem), &d->off);
		if (filt_dev_run_wg(d, d->k_gscan, d->wg, d->wg, P_SCAN) != CL_SUCCESS)
			return -1;
	}
	filt_dev_d2h(d, d->usum, nu * 4, usum);   /* also waits for the kernels */
	for (u = 0; u < nu; u++) {
		ucnt[u0 + u] = usum[u];
		tot += usum[u];
	}
	if (tot == 0 || !want)
		return 0;
	if (tot >= UINT32_MAX / 2)
		return -1;   /* halve: offsets are u32 */
	if (grow(d, &d->out, &d->cap_out, tot * 4, CL_MEM_WRITE_ONLY) < 0)
		return -1;
	a = set_args(d, d->k_write, p, n_items, n_units, 1);
	if (bpr)
		filt_dev_arg(d, d->k_write, a++, sizeof(cl_mem), &d->cnt);
	filt_dev_arg(d, d->k_write, a++, sizeof(cl_mem), &d->off);
	filt_dev_arg(d, d->k_write, a, sizeof(cl_mem), &d->out);
	if (filt_dev_run_wg(d, d->k_write, ni, d->wg, P_WRITE) != CL_SUCCESS)
		return -1;
	append_out(d, tot, hits, n_hits, cap_hits);
	return 0;
}

/*
 * The inputs of units [U0, U1) to the device: seed codes and q; with NM
 * bpr's N positions, with CPRE the units' item prefix relative to the slice
 * (from host_scratch: a non-blocking write sends it).  Counts the slice of
 * NI items for the profile.  0, or -1 when a device buffer could not be had.
 */
static int send_units(filt_dev_t *d, size_t u0, size_t u1, size_t ni, int nm, int cpre)
{
	size_t nu = u1 - u0, u;
	uint32_t *rel;

	/* read-write: gather_dev's kernel makes them */
	if (grow(d, &d->ucode, &d->cap_ucode, nu * 4, CL_MEM_READ_WRITE) < 0 ||
			grow(d, &d->uq, &d->cap_uq, nu * 8, CL_MEM_READ_WRITE) < 0 ||
			(nm && grow(d, &d->unm, &d->cap_unm, nu * 4, CL_MEM_READ_WRITE) < 0) ||
			(cpre && grow(d, &d->cpre, &d->cap_cpre, (nu + 1) * 4, CL_MEM_READ_WRITE) < 0))
		return -1;
	filt_dev_prof_slice(d, nu, ni);
	if (d->dev_units)   /* gather_dev made them there, the whole match one slice */
		return 0;
	filt_dev_h2d(d, d->ucode, 0, nu * 4, d->h_code + u0);
	filt_dev_h2d(d, d->uq, 0, nu * 8, d->h_q + u0);
	if (nm)
		filt_dev_h2d(d, d->unm, 0, nu * 4, d->h_nm + u0);
	if (cpre) {
		rel = host_scratch(d, nu);
		for (u = u0; u <= u1; u++)
			rel[u - u0] = d->h_cpre[u] - d->h_cpre[u0];
		filt_dev_h2d(d, d->cpre, 0, (nu + 1) * 4, rel);
	}
	return 0;
}

/*
 * run_slice for bs and ph: units [U0, U1) are items U0 * n_grid ..
 * (degen_count, degen_write in filt.cl: the write pass redoes the lookups).
 */
static int run_slice_degen(filt_dev_t *d, const dpart_t *p, size_t u0, size_t u1,
		uint32_t *ucnt, uint32_t **hits, size_t *n_hits, size_t *cap_hits)
{
	size_t nu = u1 - u0, ni = nu * d->n_grid;

	if (ni == 0)
		return 0;
	if (send_units(d, u0, u1, ni, 0, 0) < 0)
		return -1;
	return run_grouped(d, p, u0, nu, ni, ucnt, hits, n_hits, cap_hits);
}

/*
 * run_slice for bpr: units [U0, U1) with their chunks (items prefix
 * h_cpre; bpr_count, bpr_write in filt.cl).
 */
static int run_slice_bpr(filt_dev_t *d, const dpart_t *p, size_t u0, size_t u1,
		uint32_t *ucnt, uint32_t **hits, size_t *n_hits, size_t *cap_hits)
{
	size_t nu = u1 - u0, ni = d->h_cpre[u1] - d->h_cpre[u0];

	if (ni == 0)
		return 0;
	if (grow(d, &d->cnt, &d->cap_cnt, ni * 4, CL_MEM_READ_WRITE) < 0 ||
			send_units(d, u0, u1, ni, 1, 1) < 0)
		return -1;
	return run_grouped(d, p, u0, nu, ni, ucnt, hits, n_hits, cap_hits);
}

/*
 * run_slice for fm: units [U0, U1) of the host arrays (items prefix h_cpre) on partition
 * P: appends the positions of each unit to HITS and its count to UCNT.
 * Returns 0, or -1 when a device buffer could not be had (halve and retry).
 */
static int run_slice_fm(filt_dev_t *d, const dpart_t *p, size_t u0, size_t u1,
		uint32_t *ucnt, uint32_t **hits, size_t *n_hits, size_t *cap_hits)
{
	size_t nu = u1 - u0, ni = d->h_cpre[u1] - d->h_cpre[u0], u;
	uint64_t tot = 0;
	uint32_t n_items = (uint32_t)ni, n_units = (uint32_t)nu, *usum;
	cl_uint a;

	if (ni == 0)
		return 0;
	if (grow(d, &d->usum, &d->cap_usum, nu * 4, CL_MEM_READ_WRITE) < 0 ||
			grow(d, &d->cnt, &d->cap_cnt, (ni + 1) * 4, CL_MEM_READ_WRITE) < 0 ||
			send_units(d, u0, u1, ni, 0, 1) < 0)
		return -1;
	usum = host_scratch(d, nu) + nu + 1;   /* nu: per-unit totals, then bases */
	a = set_args(d, d->k_count, p, n_items, n_units, 0);
	filt_dev_arg(d, d->k_count, a, sizeof(cl_mem), &d->cnt);
	if (filt_dev_run(d, d->k_count, ni, P_COUNT) != CL_SUCCESS)
		return -1;
	filt_dev_arg(d, d->k_sum, 0, sizeof n_units, &n_units);
	filt_dev_arg(d, d->k_sum, 1, sizeof(cl_mem), &d->cpre);
	filt_dev_arg(d, d->k_sum, 2, sizeof(cl_mem), &d->cnt);
	filt_dev_arg(d, d->k_sum, 3, sizeof(cl_mem), &d->usum);
	if (filt_dev_run(d, d->k_sum, nu, P_SUM) != CL_SUCCESS)
		return -1;
	filt_dev_d2h(d, d->usum, nu * 4, usum);   /* also waits for the writes */
	for (u = 0; u < nu; u++) {
		uint32_t c = usum[u];

		ucnt[u0 + u] = c;
		usum[u] = (uint32_t)tot;     /* now the unit's base */
		tot += c;
	}
	if (tot == 0)
		return 0;   /* fm needs its ranges even with -N: the host locates them */
	if (tot >= UINT32_MAX / 2)
		return -1;   /* halve: offsets are u32 */
	if (grow(d, &d->off, &d->cap_off, (ni + 1) * 4, CL_MEM_READ_WRITE) < 0 ||
			grow(d, &d->ubase, &d->cap_ubase, nu * 4, CL_MEM_READ_ONLY) < 0 ||
			grow(d, &d->out, &d->cap_out, tot * 4, CL_MEM_WRITE_ONLY) < 0)
		return -1;
	filt_dev_h2d(d, d->ubase, 0, nu * 4, usum);
	filt_dev_arg(d, d->k_scan, 0, sizeof n_units, &n_units);
	filt_dev_arg(d, d->k_scan, 1, sizeof(cl_mem), &d->cpre);
	filt_dev_arg(d, d->k_scan, 2, sizeof(cl_mem), &d->cnt);
	filt_dev_arg(d, d->k_scan, 3, sizeof(cl_mem), &d->ubase);
	filt_dev_arg(d, d->k_scan, 4, sizeof(cl_mem), &d->off);
	if (filt_dev_run(d, d->k_scan, nu, P_SCAN) != CL_SUCCESS)
		return -1;
	{
		cl_ulong off0 = 0;

		a = set_args(d, d->k_write, p, n_items, n_units, 1);
		filt_dev_arg(d, d->k_write, a++, sizeof(cl_mem), &d->off);
		filt_dev_arg(d, d->k_write, a++, sizeof off0, &off0);
		filt_dev_arg(d, d->k_write, a, sizeof(cl_mem), &d->out);
	}
	if (filt_dev_run(d, d->k_write, ni, P_WRITE) != CL_SUCCESS)
		return -1;
	append_out(d, tot, hits, n_hits, cap_hits);
	return 0;
}

/* Unit U of the host arrays: pattern P, its items ending at item C. */
static void unit_fill(filt_dev_t *d, size_t u, const filt_pat_t *p, uint64_t c)
{
	d->h_code[u] = p->code;
	d->h_q[u] = d->cshift ? p->code | p->q << d->cshift : p->q;
	d->h_nm[u] = p->nmask;
	d->h_cpre[u + 1] = (uint32_t)c;
}

/*
 * Order the N units (pattern indices IDX, seed codes CODE) by seed code,
 * stable, with one counting pass over the NC codes; TMP holds N entries.
 */
static void sort_by_code(size_t *idx, const uint32_t *code, size_t *tmp, size_t n, size_t nc)
{
	size_t *cnt = sp_calloc(nc + 1, sizeof *cnt), i, sum = 0;

	for (i = 0; i < n; i++)
		cnt[code[i]]++;
	for (i = 0; i < nc; i++) {
		size_t c = cnt[i];

		cnt[i] = sum;
		sum += c;
	}
	for (i = 0; i < n; i++)
		tmp[cnt[code[i]]++] = idx[i];
	memcpy(idx, tmp, n * sizeof *idx);
	free(cnt);
}

/*
 * gather_units: the units of the patterns (those whose SeedBlock is not
 * empty), in pattern order, by up to GATHER_T threads for a large batch
 * (sp_for over as many pieces of the patterns).  Pass 1 finds each
 * pattern's items (a random read of the block starts: the host's main cost
 * here) and counts a piece's units and items; pass 2 writes the piece's
 * units from its offsets on.
 */
typedef struct {
	filt_dev_t *d;
	const idx_part_t *pt;
	const filt_pat_t *pat;
	uint32_t *pcnt;
	uint64_t *hoff, h0;
	size_t *unit_pat;
	size_t np, npiece;
	size_t nu[GATHER_T], u0[GATHER_T];    /* per piece: its units, the first one's index */
	uint64_t ni[GATHER_T], i0[GATHER_T];  /* its items, the first one's */
} gather_t;

/* Pass 1 of piece T: items, counts and offsets of its patterns. */
static int gather_count(void *ctx, size_t t, int tid)
{
	gather_t *g = ctx;
	filt_dev_t *d = g->d;
	const uint32_t *st = d->o.method == FILT_FM || (d->cshift && d->o.method != FILT_BPR)
		? NULL : g->pt->red_start;
	size_t a = g->np * t / g->npiece, b = g->np * (t + 1) / g->npiece, i;

	(void)tid;
	g->nu[t] = 0;
	g->ni[t] = 0;
	for (i = a; i < b; i++) {
		uint64_t it;

		if (st && i + FILT_PREFETCH < b)   /* else a cache miss a pattern */
			__builtin_prefetch(&st[g->pat[i + FILT_PREFETCH].code]);
		it = unit_items(d, g->pt, g->pat[i].code);
		d->h_items[i] = it > UINT32_MAX ? UINT32_MAX : (uint32_t)it;
		g->pcnt[i] = 0;
		g->hoff[i] = g->h0;
		g->nu[t] += it != 0;
		g->ni[t] += it;
	}
	return 0;
}

/* Pass 2 of piece T: its units into the host arrays, from its offsets on. */
static int gather_fill(void *ctx, size_t t, int tid)
{
	gather_t *g = ctx;
	filt_dev_t *d = g->d;
	size_t a = g->np * t / g->npiece, b = g->np * (t + 1) / g->npiece, i, u = g->u0[t];
	uint64_t c = g->i0[t];

	(void)tid;
	for (i = a; i < b; i++) {
		if (!d->h_items[i])
			continue;
		g->unit_pat[u] = i;
		c += d->h_items[i];
		unit_fill(d, u++, &g->pat[i], c);
	}
	return 0;
}

/*
 * The units of the NP patterns PAT into d's host arrays and UNIT_PAT;
 * returns their number, or -1 after sp_fail when they have too many items.
 */
static int64_t gather_units(filt_dev_t *d, const idx_part_t *pt, const filt_pat_t *pat,
		size_t np, uint32_t *pcnt, uint64_t *hoff, uint64_t h0, size_t *unit_pat)
{
	gather_t g;
	int nt = np < GATHER_MIN ? 1 : d->n_threads < GATHER_T ? d->n_threads : GATHER_T;
	size_t nu = 0, t;
	uint64_t ni = 0;

	memset(&g, 0, sizeof g);
	g.d = d;
	g.pt = pt;
	g.pat = pat;
	g.pcnt = pcnt;
	g.hoff = hoff;
	g.h0 = h0;
	g.unit_pat = unit_pat;
	g.np = np;
	g.npiece = (size_t)nt;
	if (sp_for(nt, g.npiece, 1, gather_count, &g) < 0)
		return -1;
	for (t = 0; t < g.npiece; t++) {   /* each piece's first unit and item */
		g.u0[t] = nu;
		g.i0[t] = ni;
		nu += g.nu[t];
		ni += g.ni[t];
	}
	if (ni > UINT32_MAX / 2)
		return sp_fail("too many matching items in one batch (use a smaller -B)");
	if (sp_for(nt, g.npiece, 1, gather_fill, &g) < 0)
		return -1;
	return (int64_t)nu;
}

/* the patterns go up as they are: filt.cl reads them as its dpat_t */
_Static_assert(sizeof(filt_pat_t) == 40 && offsetof(filt_pat_t, code) == 16 &&
		offsetof(filt_pat_t, nmask) == 28, "filt_pat_t is not dpat_t of filt.cl");

/*
 * gather_dev: the units of the NP patterns PAT in partition PART made on
 * the device (pat_items, pat_compact in filt.cl) into ucode, uq, unm, cpre
 * and upat there, in pattern order; the host reads a few sums per work
 * group and the units' patterns (h_upat32), never the index.  Returns the
 * units and their items in *NI; -1 after sp_fail when the batch has too
 * many items, -2 when a device buffer could not be had (the host gathers
 * then; a failed call is in d->err).
 */
static int64_t gather_dev(filt_dev_t *d, uint32_t part, const filt_pat_t *pat, size_t np,
		uint64_t *ni)
{
	size_t l = d->gwg, ng = (np + l - 1) / l, g;
	uint32_t np32 = (uint32_t)np, kind = unit_kind(d), any = d->cshift != 0, *gs;
	uint64_t nu = 0;
	cl_mem rs = kind == 0 || (kind == 2 && any) ? d->dummy : d->part[part].b[B_RSTART];
	cl_uint a = 0;

	if (grow(d, &d->dpat, &d->cap_dpat, np * sizeof *pat, CL_MEM_READ_ONLY) < 0 ||
			grow(d, &d->pitems, &d->cap_pitems, np * 4, CL_MEM_READ_WRITE) < 0 ||
			grow(d, &d->gsum2, &d->cap_gsum2, ng * 8, CL_MEM_READ_WRITE) < 0 ||
			grow(d, &d->upat, &d->cap_upat, np * 4, CL_MEM_READ_WRITE) < 0 ||
			grow(d, &d->ucode, &d->cap_ucode, np * 4, CL_MEM_READ_WRITE) < 0 ||
			grow(d, &d->uq, &d->cap_uq, np * 8, CL_MEM_READ_WRITE) < 0 ||
			grow(d, &d->unm, &d->cap_unm, np * 4, CL_MEM_READ_WRITE) < 0 ||
			grow(d, &d->cpre, &d->cap_cpre, (np + 1) * 4, CL_MEM_READ_WRITE) < 0)
		return -2;
	if (d->h_cap_gs < 2 * ng) {
		d->h_cap_gs = 3 * ng;
		d->h_gs = sp_realloc(d->h_gs, d->h_cap_gs * sizeof *d->h_gs);
	}
	if (d->h_cap_upat32 < np) {
		d->h_cap_upat32 = np + np / 2;
		d->h_upat32 = sp_realloc(d->h_upat32, d->h_cap_upat32 * sizeof *d->h_upat32);
	}
	gs = d->h_gs;
	filt_dev_h2d(d, d->dpat, 0, np * sizeof *pat, pat);
	filt_dev_arg(d, d->k_pitems, a++, sizeof np32, &np32);
	filt_dev_arg(d, d->k_pitems, a++, sizeof kind, &kind);
	filt_dev_arg(d, d->k_pitems, a++, sizeof d->h, &d->h);
	filt_dev_arg(d, d->k_pitems, a++, sizeof d->n_grid, &d->n_grid);
	filt_dev_arg(d, d->k_pitems, a++, sizeof any, &any);
	filt_dev_arg(d, d->k_pitems, a++, sizeof(cl_mem), &d->dpat);
	filt_dev_arg(d, d->k_pitems, a++, sizeof(cl_mem), &rs);
	filt_dev_arg(d, d->k_pitems, a++, sizeof(cl_mem), &d->pitems);
	filt_dev_arg(d, d->k_pitems, a, sizeof(cl_mem), &d->gsum2);
	if (filt_dev_run_wg(d, d->k_pitems, np, l, P_GATHER) != CL_SUCCESS)
		return -2;
	filt_dev_d2h(d, d->gsum2, ng * 8, gs);
	for (*ni = 0, g = 0; g < ng; g++) {   /* the groups' bases */
		uint32_t ti = gs[2 * g], tu = gs[2 * g + 1];

		gs[2 * g] = (uint32_t)*ni;
		gs[2 * g + 1] = (uint32_t)nu;
		*ni += ti;
		nu += tu;
		if (*ni > UINT32_MAX / 2)
			return sp_fail("too many matching items in one batch (use a smaller -B)");
	}
	filt_dev_h2d(d, d->gsum2, 0, ng * 8, gs);
	a = 0;
	filt_dev_arg(d, d->k_pcompact, a++, sizeof np32, &np32);
	filt_dev_arg(d, d->k_pcompact, a++, sizeof d->cshift, &d->cshift);
	filt_dev_arg(d, d->k_pcompact, a++, sizeof(cl_mem), &d->dpat);
	filt_dev_arg(d, d->k_pcompact, a++, sizeof(cl_mem), &d->pitems);
	filt_dev_arg(d, d->k_pcompact, a++, sizeof(cl_mem), &d->gsum2);
	filt_dev_arg(d, d->k_pcompact, a++, sizeof(cl_mem), &d->ucode);
	filt_dev_arg(d, d->k_pcompact, a++, sizeof(cl_mem), &d->uq);
	filt_dev_arg(d, d->k_pcompact, a++, sizeof(cl_mem), &d->unm);
	filt_dev_arg(d, d->k_pcompact, a++, sizeof(cl_mem), &d->upat);
	filt_dev_arg(d, d->k_pcompact, a, sizeof(cl_mem), &d->cpre);
	if (filt_dev_run_wg(d, d->k_pcompact, np, l, P_GATHER) != CL_SUCCESS)
		return -2;
	filt_dev_d2h(d, d->upat, nu * 4, d->h_upat32);
	return d->err != CL_SUCCESS ? -2 : (int64_t)nu;
}

/* The NU units that gather_dev left on the device to the host arrays, for slices of them. */
static void units_to_host(filt_dev_t *d, size_t nu)
{
	filt_dev_d2h(d, d->ucode, nu * 4, d->h_code);
	filt_dev_d2h(d, d->uq, nu * 8, d->h_q);
	filt_dev_d2h(d, d->unm, nu * 4, d->h_nm);
	filt_dev_d2h(d, d->cpre, (nu + 1) * 4, d->h_cpre);
}

/* sp_fail with D's kept error, else with WHY; -1. */
static int dev_fail(const filt_dev_t *d, const char *why)
{
	if (d->err != CL_SUCCESS)
		return sp_fail("%s failed: %s (%d)", d->err_call, ocl_strerror(d->err), (int)d->err);
	return sp_fail("%s", why);
}

int filt_dev_match(filt_dev_t *d, uint32_t part, const filt_pat_t *pat, size_t np,
		uint32_t *pcnt, uint64_t *hoff, uint32_t **hits, size_t *n_hits, size_t *cap_hits)
{
	const idx_part_t *pt = &d->x->part[part];
	size_t nu, i, u0, *unit_pat, *tmp, h0 = *n_hits;
	uint64_t ni = 0;
	int64_t nu_or_err;
	uint32_t *ucnt;
	double t0 = d->prof ? sp_now() : 0;
	int degen = d->o.method == FILT_BS || d->o.method == FILT_PH;
	int sort = d->x->p.w <= FILT_SORT_W;
	uint32_t max_items = degen ? FILT_MAX_DEGEN : FILT_MAX_ITEMS;

	if (filt_dev_upload(d, part) < 0)
		return dev_fail(d, FILT_DEV_NOMEM);
	if (np > d->h_cap_units || !d->h_cpre) {   /* a first batch of no pattern, too */
		d->h_cap_units = np + np / 2 + 1;
		d->h_code = sp_realloc(d->h_code, d->h_cap_units * sizeof *d->h_code);
		d->h_q = sp_realloc(d->h_q, d->h_cap_units * sizeof *d->h_q);
		d->h_nm = sp_realloc(d->h_nm, d->h_cap_units * sizeof *d->h_nm);
		d->h_cpre = sp_realloc(d->h_cpre, (d->h_cap_units + 1) * sizeof *d->h_cpre);
		d->h_items = sp_realloc(d->h_items, (d->h_cap_units + 1) * sizeof *d->h_items);
		d->h_ucnt = sp_realloc(d->h_ucnt, (d->h_cap_units + 1) * sizeof *d->h_ucnt);
		d->h_upat = sp_realloc(d->h_upat, (d->h_cap_units + 1) * sizeof *d->h_upat);
	}
	unit_pat = d->h_upat;
	ucnt = d->h_ucnt;   /* every unit's is set by its slice */
	d->h_cpre[0] = 0;
	/*
	 * The units made on the device (gather_dev) unless they go in seed-code
	 * order (below) or SEEDPIPE_FILT_GATHER says otherwise: the whole match
	 * is then one slice, its units used where they are, when it has at
	 * most max_items items and the device holds them; else they come to
	 * the host arrays for the slices below.
	 */
	if (d->gwg && np && (d->gather == 2 || (d->gather == 0 && !sort))) {
		nu_or_err = gather_dev(d, part, pat, np, &ni);
		if (nu_or_err == -1)
			return -1;
		if (nu_or_err == -2 && d->err != CL_SUCCESS)
			return dev_fail(d, FILT_DEV_NOMEM);
	} else {
		nu_or_err = -2;
	}
	if (nu_or_err >= 0) {
		int r;

		nu = (size_t)nu_or_err;
		for (i = 0; i < np; i++) {
			pcnt[i] = 0;
			hoff[i] = h0;
		}
		for (i = 0; i < nu; i++)
			unit_pat[i] = d->h_upat32[i];
		if (d->prof) {
			d->prof->n_calls++;
			d->prof->t_prep += sp_now() - t0;
		}
		if (nu == 0)
			goto done;
		d->h_cpre[nu] = (uint32_t)ni;   /* run_slice_* take a slice's items from its ends */
		if (ni <= max_items) {
			d->dev_units = 1;
			r = (degen ? run_slice_degen : d->o.method == FILT_BPR ? run_slice_bpr :
					run_slice_fm)(d, &d->part[part], 0, nu, ucnt, hits, n_hits, cap_hits);
			d->dev_units = 0;
			if (r == 0)
				goto done;
			if (d->err != CL_SUCCESS)
				return dev_fail(d, FILT_DEV_NOMEM);
		}
		units_to_host(d, nu);   /* for the slices below */
		if (d->err != CL_SUCCESS)
			return dev_fail(d, FILT_DEV_NOMEM);
		goto slices;
	}
	nu_or_err = gather_units(d, pt, pat, np, pcnt, hoff, h0, unit_pat);
	if (nu_or_err < 0)
		return -1;
	nu = (size_t)nu_or_err;
	/*
	 * Units in seed-code order when the seed weight is at most FILT_SORT_W
	 * (at most 4^8 codes: large SeedBlocks): the work items of neighbouring
	 * units then read the same SeedBlock (and, for ph, the same part of g),
	 * which the device's caches keep.  With more codes the blocks are small
	 * and the sort would cost the host more than it saves.  The positions
	 * come back in unit order, so HOFF says where each pattern's start.
	 */
	if (sort) {
		uint64_t c = 0;

		tmp = sp_malloc((nu + 1) * sizeof *tmp);
		sort_by_code(unit_pat, d->h_code, tmp, nu, (size_t)1 << (2 * d->x->p.w));
		free(tmp);
		for (i = 0; i < nu; i++) {
			c += d->h_items[unit_pat[i]];
			unit_fill(d, i, &pat[unit_pat[i]], c);
		}
	}
	if (d->prof) {
		d->prof->n_calls++;
		d->prof->t_prep += sp_now() - t0;
	}
slices:
	/* slices of at most max_items items (a unit alone may be more) */
	for (u0 = 0; u0 < nu;) {
		size_t u1 = u0 + 1;

		while (u1 < nu && d->h_cpre[u1 + 1] - d->h_cpre[u0] <= max_items)
			u1++;
		while ((degen ? run_slice_degen : d->o.method == FILT_BPR ? run_slice_bpr :
					run_slice_fm)(d, &d->part[part], u0, u1, ucnt, hits, n_hits,
					cap_hits) < 0) {
			if (d->err != CL_SUCCESS || u1 - u0 == 1)
				return dev_fail(d, FILT_DEV_NOMEM);
			u1 = u0 + (u1 - u0) / 2;
		}
		u0 = u1;
	}
	if (d->err != CL_SUCCESS)
		return dev_fail(d, FILT_DEV_NOMEM);
done:
	for (i = 0; i < nu; i++) {
		pcnt[unit_pat[i]] = ucnt[i];
		hoff[unit_pat[i]] = h0;
		h0 += ucnt[i];
	}
	if (d->prof)
		d->prof->t_match += sp_now() - t0;
	return 0;
}

