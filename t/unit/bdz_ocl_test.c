/*
 * bdz_ocl_test.c - the shared headers kernels/inc_bdz.h and inc_idx.h run
 * on an OpenCL device (a GPU, else PoCL's CPU device) give exactly the CPU
 * results: the BDZ slot and key compare of every stored neighborhood and of
 * absent ones (idx_blk_find), and the striped words that bpr's kernels
 * make of the reduced structure's keys (idx_stripe_keys) equal bpr_stripe's
 * and hold the keys (idx_stripe_get).  Skipped without a device.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpr.h"
#include "idx.h"
#include "inc_idx.h"
#include "ocl.h"
#include "tap.h"
#include "util.h"
#include "testutil.h"

/* t/unit/bdz_ocl_test.cl with the kernels/inc_*.h it includes, as the string
 * bdz_ocl_test_cl: the test needs no source tree at run time */
#include "t/bdz_ocl_test_cl.h"

static uint64_t rng = 0x2545f4914f6cdd1dULL;

static uint64_t rnd(void)
{
	return tu_xorshift64(&rng);
}

static cl_mem buf_in(ocl_ctx_t *ctx, const void *p, size_t n)
{
	cl_mem m = ocl_buffer(ctx, CL_MEM_READ_ONLY, n ? n : 8);

	if (n)
		ocl_write(ctx, m, 1, 0, n, p);
	return m;
}

/* Build an index of a random reference with seed SHAPE / U and length L, load it. */
static idx_t *make_index(const char *shape, int u, int l, char **path)
{
	idx_params_t p;
	idx_ref_t *r = idx_ref_init();
	idx_build_opt_t o = { 2, 0, 0, 0, NULL };
	char err[128], *seq, name[16];
	int fd, s;
	size_t i, n;

	*path = strdup("/tmp/bdz_ocl.XXXXXX");
	fd = mkstemp(*path);
	for (s = 0; s < 3; s++) {
		n = 3000 + rnd() % 5000;
		seq = malloc(n);
		for (i = 0; i < n; i++)
			seq[i] = rnd() % 50 ? "ACGT"[rnd() % 4] : 'N';
		if (s == 1)  /* a repeat */
			memcpy(seq + 2000, seq, 500);
		snprintf(name, sizeof name, "c%d", s);
		idx_ref_add(r, name, seq, n);
		free(seq);
	}
	if (idx_params_init(&p, shape, u, l, 0, err, sizeof err) != 0)
		sp_die("%s", err);
	p.structs = IDX_S_GENERAL | IDX_S_REDUCED | IDX_S_BLOCK;
	idx_build(r, &p, &o, fd, *path);
	close(fd);
	idx_ref_free(r);
	return idx_open_or_die(*path, 0);
}

static void run_case(ocl_ctx_t *ctx, cl_program prog, const char *shape, int u, int l)
{
	char *path;
	idx_t *x = make_index(shape, u, l, &path);
	const idx_part_t *pt = &x->part[0];
	uint64_t nc = 1ULL << (2 * x->p.w), c, nq = 0, cap = 1024, i;
	uint32_t *qc = malloc(cap * 4), *out;
	uint64_t *q = malloc(cap * 8);
	uint32_t kb = IDX_KEY_BYTES(x->p.l), nq32;
	cl_kernel k1 = ocl_kernel(prog, "blk_lookup"), k2 = ocl_kernel(prog, "stripe");
	cl_mem mstart, mseed, mg, mk32, mk64, mrank, mroff, mrstart, mqc, mq, mout, mw, mnb;
	int ok = 1, nfound = 0, nabsent = 0;

	for (c = 0; c < nc; c++) {
		uint64_t j, lo = pt->red_start[c], hi = pt->red_start[c + 1];

		for (j = lo; j < hi + 2; j++) {
			if (nq == cap) {
				cap *= 2;
				qc = realloc(qc, cap * 4);
				q = realloc(q, cap * 8);
			}
			qc[nq] = (uint32_t)c;
			q[nq++] = j < hi ? idx_red_key(pt, j) : rnd() & idx_mask2(x->p.l);
		}
	}
	mstart = buf_in(ctx, pt->blk_start, (nc + 1) * 4);
	mseed = buf_in(ctx, pt->blk_seed, nc);
	mg = buf_in(ctx, pt->blk_g, (pt->n_slots + 3) / 4);
	mk32 = buf_in(ctx, pt->red_nb32, kb == 4 ? pt->n_uniq * 4 : 0);
	mk64 = buf_in(ctx, pt->red_nb, kb == 8 ? pt->n_uniq * 8 : 0);
	mrank = buf_in(ctx, pt->blk_rank, (pt->n_rank_words + 1) * 4);
	mroff = buf_in(ctx, pt->blk_roff, (nc + 1) * 4);
	mrstart = buf_in(ctx, pt->red_start, (nc + 1) * 4);
	mqc = buf_in(ctx, qc, nq * 4);
	mq = buf_in(ctx, q, nq * 8);
	mout = ocl_buffer(ctx, CL_MEM_WRITE_ONLY, nq * 8);
	nq32 = (uint32_t)nq;
	ocl_arg(k1, 0, sizeof mstart, &mstart);
	ocl_arg(k1, 1, sizeof mseed, &mseed);
	ocl_arg(k1, 2, sizeof mg, &mg);
	ocl_arg(k1, 3, sizeof mk32, &mk32);
	ocl_arg(k1, 4, sizeof mk64, &mk64);
	ocl_arg(k1, 5, sizeof kb, &kb);
	ocl_arg(k1, 6, sizeof mqc, &mqc);
	ocl_arg(k1, 7, sizeof mq, &mq);
	ocl_arg(k1, 8, sizeof mout, &mout);
	ocl_arg(k1, 9, sizeof nq32, &nq32);
	ocl_arg(k1, 10, sizeof mrank, &mrank);
	ocl_arg(k1, 11, sizeof mroff, &mroff);
	ocl_arg(k1, 12, sizeof mrstart, &mrstart);
	ocl_run(ctx, k1, nq);
	out = malloc(nq * 8);
	ocl_read(ctx, mout, 1, 0, nq * 8, out);
	for (i = 0; i < nq && ok; i++) {
		uint64_t pb, pe;
		uint32_t slot = 0xffffffffu;
		int f = idx_blk_find(pt, qc[i], q[i], &pb, &pe, &slot);

		if ((uint32_t)f != out[2 * i + 1] || (pt->blk_start[qc[i] + 1] > pt->blk_start[qc[i]] && slot != out[2 * i]))
			ok = 0;
		if (f)
			nfound++;
		else
			nabsent++;
	}
	tap_ok(ok, "%s l=%d: BDZ lookup of %llu neighborhoods on the device equals the CPU (%d found, %d absent)",
		x->p.shape, l, (unsigned long long)nq, nfound, nabsent);

	/* striped words of the unique keys */
	{
		uint32_t h = x->p.h, l32 = x->p.l, nu = (uint32_t)pt->n_uniq, nw = (nu + h - 1) / h;
		uint64_t *wd = calloc(nw + 1, 8), *cw = calloc(nw + 1, 8), j;
		int ok2 = 1;

		mw = buf_in(ctx, pt->red_nb32 ? (const void *)pt->red_nb32 : (const void *)pt->red_nb,
			(uint64_t)nu * kb);
		mnb = ocl_buffer(ctx, CL_MEM_WRITE_ONLY, (nw + 1) * (uint64_t)8);
		ocl_arg(k2, 0, sizeof mw, kb == 4 ? &mw : &mstart);
		ocl_arg(k2, 1, sizeof mw, kb == 4 ? &mstart : &mw);
		ocl_arg(k2, 2, sizeof h, &h);
		ocl_arg(k2, 3, sizeof l32, &l32);
		ocl_arg(k2, 4, sizeof mnb, &mnb);
		ocl_arg(k2, 5, sizeof nu, &nu);
		if (nw) {
			ocl_run(ctx, k2, nw);
			ocl_read(ctx, mnb, 1, 0, (uint64_t)nw * 8, wd);
		}
		bpr_stripe(pt->red_nb32, pt->red_nb, nu, l32, cw);
		for (j = 0; j < nw && ok2; j++)
			if (wd[j] != cw[j])
				ok2 = 0;
		for (j = 0; j < (uint64_t)nw * h && ok2; j++)
			if (idx_stripe_get(cw[j / h], h, l32, (uint32_t)(j % h)) != (j < nu ? idx_red_key(pt, j) : 0))
				ok2 = 0;
		tap_ok(ok2, "%s l=%d: %u words striped on the device from %u keys equal bpr_stripe's and hold the keys",
			x->p.shape, l, nw, nu);
		free(wd);
		free(cw);
		ocl_release(mw);
		ocl_release(mnb);
	}
	ocl_release(mstart); ocl_release(mseed); ocl_release(mg); ocl_release(mk32);
	ocl_release(mk64); ocl_release(mrank); ocl_release(mroff); ocl_release(mrstart); ocl_release(mqc); ocl_release(mq); ocl_release(mout);
	clReleaseKernel(k1);
	clReleaseKernel(k2);
	free(qc); free(q); free(out);
	idx_close(x);
	unlink(path);
	free(path);
}

int main(void)
{
	ocl_ctx_t *ctx = NULL;
	char msg[256], dev[300];
	cl_program prog;

	sp_set_progname("bdz_ocl_test");
	if (ocl_open("gpu", 0, &ctx, msg, sizeof msg) != OCL_OPEN_OK || !ctx)
		if (ocl_open("cpu", 0, &ctx, msg, sizeof msg) != OCL_OPEN_OK || !ctx) {
			tap_skip("no OpenCL device");
			return tap_done();
		}
	ocl_describe(ctx, dev, sizeof dev);
	tap_diag("device %s", dev);
	prog = ocl_program_src(ctx, "bdz_ocl_test", bdz_ocl_test_cl, "");
	run_case(ctx, prog, NULL, 4, 16);
	run_case(ctx, prog, NULL, 5, 20);
	run_case(ctx, prog, "##-#-##", 0, 8);
	run_case(ctx, prog, NULL, 3, 32);
	ocl_close(ctx);
	return tap_done();
}
