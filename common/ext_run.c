/*
 * ext_run.c - extend's run (ext_run_or_die): the device, the candidates
 * stream and its index, the provenance, and the pipeline of batches
 * (read -> align -> format -> write, the output in input order) that
 * turns the candidates into the output.
 *
 * On the CPU a batch is EXT_PARTS_CPU parts of -B candidates (or reads),
 * aligned and formatted whole by one thread: the align and format steps are
 * parallel steps (sp_pipeline_par, -t threads in them at once, one more for
 * the read and write steps), and the read and write steps take the batches
 * in input order.  2 * threads + 2 batches are in flight, so that the read
 * step runs ahead while every thread aligns and the write step waits for a
 * slow batch without holding up the threads.  ChrX reads have about 280
 * candidates each, so a part of 4096 candidates is some 15 reads and about
 * a millisecond of one thread's work: the serial read and write steps must
 * keep up with 16 threads at that rate.  The pipeline keeps a thread on the
 * read step while it may read ahead (no hand-over to another thread per
 * batch, as with 2c6cb0d's main thread reading), and the parts make the
 * batches eight times fewer.  (On the H100 machine, 16 threads, extend alone
 * on the chrX 200k candidates took 1.56 s with one part and one pipeline
 * thread per batch, handing each step over to the next batch's thread,
 * against 2c6cb0d's 1.09 s for the same CPU time.)  Many small batches
 * streaming through, with no barrier, keep the threads busy where batches
 * of many parts, each aligned in parallel and waited for, did not: a part
 * with a repeat-rich read ends long after the others, and with seedfilt's
 * threads on the same cores (seedfilt | extend) a thread waited for may not
 * even be running.  The scratch of the alignment is each aligning thread's
 * (ext_ws_t, from a free list), not the batch's.
 *
 * With a device a batch is EXT_BATCH_DEV candidates, one part, and its
 * alignment is spread over steps so that the host threads work on other
 * batches while the device aligns one:
 *
 *     read      (ordered)   candidates into the batch
 *     align     (parallel)  the candidate lists copied together, to be
 *                           decoded on the device (ext_batch_prep;
 *                           SEEDPIPE_ALIGN_HOST_KEYS: decoded here into
 *                           8-byte keys; SEEDPIPE_EXT_HOST_CUT, --no-gaps
 *                           or a reference too large for a key: pass-1
 *                           windows cut here)
 *     dev       (parallel)  pass 1 on the device (ext_batch_dev): the keys
 *                           (or lists, decoded there, a list out of order
 *                           or malformed by this thread; or windows) up,
 *                           the windows cut there, only the hit windows,
 *                           their distances and ends rows back
 *     loci      (parallel)  the loci, pass 2's windows, the exact diagonals
 *     trace     (parallel)  pass 2's core on the device (ext_batch_trace)
 *     finish    (parallel)  hits, MD, MAPQ (ext_batch_mkhits), pairs
 *     format    (parallel)  SAM text or BAM records
 *     write     (ordered)
 *
 * The device steps enter the OpenCL platform through align_dev_* only,
 * which takes up to three batches at once, each on a command queue and
 * buffers of its own (align.h), so that one batch's transfers overlap
 * another's kernels.  (SEEDPIPE_EXT_OLD_DEVICE: the former path, the whole
 * alignment of a batch in the ordered align step through align_batch_ocl,
 * three batches in flight.)  Steps may run on pipeline threads rather than
 * the main thread: what once made device batches run on the main thread
 * was an exit on a bad input while another thread was inside the OpenCL
 * platform (PoCL with its LLVM), which could abort in the platform's
 * destructors.  Now no step exits: an error is returned (sp_fail), the
 * pipeline stops handing out work and waits for every step to end, and only
 * then does the main thread end the output and exit, with no thread inside
 * OpenCL.  The device is opened before the pipeline and closed after it, on
 * the main thread.  With SEEDPIPE_DEBUG the seconds of each step (summed
 * over its threads) and the device's counters go to stderr at the end.
 *
 * -d auto from a pipe whose model wants the device past some size
 * (ext_dev_auto's switch_at): the native pipeline's read step ends once
 * that many bytes of input came; every batch read is written; if the input
 * goes on, the device is opened and a second pipeline (device batches) takes
 * the rest, the output in order across both (to_device).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ext.h"
#include "ext_guar.h"
#include "filt.h"
#include "ocl_auto.h"
#include "sp_thread.h"
#include "util.h"

/* -M (budget(), below) */
#define EXT_CAND_BYTES 1024
#define EXT_WS_CAND 64        /* scratch a candidate at first (58 to 114 measured) */
#define EXT_WS_MIN (1 << 20)  /* scratch a thread keeps at least (4,096 windows: 852 KB) */


enum { STEP_READ, STEP_ALIGN, STEP_DEV, STEP_LOCI, STEP_TRACE, STEP_FINISH, STEP_FORMAT,
	STEP_WRITE, N_STEPS };

typedef struct run run_t;

/* A batch of the pipeline: its parts of -B candidates, their counters and SAM text. */
typedef struct job {
	ext_batch_t **b;
	ext_pairs_t **pr;     /* each part's pairs (paired streams) */
	ext_stats_t *st;
	kstring_t *txt;
	ext_recs_t **recs;    /* each part's BAM records (BAM output) */
	size_t n;             /* parts in use */
	int aligned;          /* aligned already (the batch of the insert size estimate) */
	double t[N_STEPS];    /* seconds in each step (SEEDPIPE_DEBUG's stage times) */
	struct job *next;     /* on the free list */
} job_t;

/* An aligning thread's scratch, on the free list between batches. */
typedef struct ws_node {
	ext_ws_t *ws;
	struct ws_node *next;
} ws_node_t;

struct run {
	rec_reader_t *r;
	idx_t *x;
	ext_opt_t eo;         /* of a batch: one thread, the device */
	ext_opt_t heo;        /* EO on the host (no device): ext_batch_finish */
	ext_out_t *out;
	size_t batch;         /* candidates (or reads) of a part */
	size_t parts;         /* parts of a batch */
	int eof;              /* the reader reached the end (read step only) */
	uint64_t stop_at;     /* -d auto from a pipe: input bytes after which the read step
	                       * ends the (native) pipeline, the device taking the rest */
	ext_auto_t au;        /* -d auto: the device considered */
	const char *in_path;
	int paired;           /* the stream holds pairs (seedfilt.paired) */
	int want2;            /* the last read was a mate 1 (read step only) */
	ext_ins_t ins;        /* the insert size of concordant pairs */
	job_t *first;         /* read and aligned before the pipeline, its first batches */
	ext_opt_t peo;        /* the pairs' options: -k, --best select pairs (the batch: all) */
	ext_stats_t st;       /* totals (write step only) */
	double t[N_STEPS];    /* step seconds, summed (write step only) */
	pthread_mutex_t lock; /* the free lists */
	job_t *free;
	ws_node_t *free_ws;
	char budget[384];     /* -M: the summary's line on memory, or "" */
	/* -M on the CPU (ws_gate): scratch kept per thread, the pool of scratch
	 * beyond it that the aligning threads reserve from, the reserved part,
	 * a part's buffers kept between batches; the largest estimate and the
	 * largest scratch measured after a batch */
	int gate;
	uint64_t mem, ws_keep, ws_pool, ws_resv, part_keep, est_max, ws_max, ws_over;
	uint64_t ws_cand;      /* scratch a candidate: EXT_WS_CAND, or the most measured */
	uint64_t res, per;     /* the reference; bytes a candidate of a part, all batches */
	size_t batch0;        /* -B or its default */
	int cpu, nt;
	pthread_cond_t ws_cond;
};

/* A batch off the free list, or a new one. */
static job_t *job_get(run_t *p)
{
	job_t *j;
	size_t i;

	pthread_mutex_lock(&p->lock);
	j = p->free;
	if (j)
		p->free = j->next;
	pthread_mutex_unlock(&p->lock);
	if (j)
		return j;
	j = sp_calloc(1, sizeof *j);
	j->b = sp_malloc(p->parts * sizeof *j->b);
	j->st = sp_malloc(p->parts * sizeof *j->st);
	j->txt = sp_calloc(p->parts, sizeof *j->txt);
	j->pr = sp_calloc(p->parts, sizeof *j->pr);
	j->recs = sp_calloc(p->parts, sizeof *j->recs);
	for (i = 0; i < p->parts; i++) {
		j->b[i] = ext_batch_new();
		if (p->paired)
			j->pr[i] = ext_pairs_new();
	}
	return j;
}

/* Put batch J back on the free list (its buffers are kept, under -M those
 * of a part up to P->part_keep bytes: a read with 10^5 candidates left
 * every part it had passed through megabytes larger). */
static void job_put(run_t *p, job_t *j)
{
	size_t i;

	for (i = 0; p->gate && i < p->parts; i++)
		if (ext_batch_bytes(j->b[i]) + j->txt[i].m > p->part_keep) {
			ext_batch_free(j->b[i]);
			j->b[i] = ext_batch_new();
			free(j->txt[i].s);
			memset(&j->txt[i], 0, sizeof j->txt[i]);
		}
	pthread_mutex_lock(&p->lock);
	j->next = p->free;
	p->free = j;
	pthread_mutex_unlock(&p->lock);
}

static void job_drop(void *ctx, void *data)
{
	job_put(ctx, data);
}

/* Check that read RD comes where it may in the stream: pairs whole, mate 1 first. */
static int check_mate(run_t *p, const rec_read_t *rd)
{
	const char *what = NULL;

	if (!p->paired && rd->mate)
		what = "is a mate of a pair, but the stream is not paired (no seedfilt.paired in "
			"its provenance)";
	else if (p->paired && rd->mate == 1 && p->want2)
		what = "is a mate 1 that follows a mate 1: a mate 2 is missing";
	else if (p->paired && rd->mate == 2 && !p->want2)
		what = "is a mate 2 without its mate 1 before it";
	else if (p->paired && !rd->mate)
		what = "is a single read in a paired stream";
	p->want2 = rd->mate == 1;
	if (what)
		return sp_fail("'%s': read '%.*s' (number %" PRIu64 ") %s", p->in_path,
				(int)rd->name_len, rd->name, rd->id, what);
	return 0;
}

/* Read step: fill batch J's parts; 1 when the input has ended. */
static int read_batch(run_t *p, job_t *j)
{
	const uint8_t *body;
	uint32_t len;
	int rc = 1;

	j->n = 0;
	j->aligned = 0;
	while (j->n < p->parts && rc > 0) {
		ext_batch_t *b = j->b[j->n];

		ext_batch_clear(b);
		memset(&j->st[j->n], 0, sizeof j->st[0]);
		j->txt[j->n].l = 0;
		while ((rc = rec_read(p->r, &body, &len)) > 0) {
			if (ext_batch_add(b, body, len) < 0) {
				rec_reader_bad_record(p->r, NULL, "malformed candidates record");
				return sp_fail("%s", rec_errmsg(p->r));
			}
			if (check_mate(p, ext_batch_read(b, ext_batch_reads(b) - 1)) < 0)
				return -1;
			/* a pair stays in one part */
			if ((ext_batch_cands(b) >= p->batch || ext_batch_reads(b) >= p->batch)
					&& !p->want2)
				break;
		}
		if (rc < 0)
			return sp_fail("%s", rec_errmsg(p->r));
		if (rc == 0 && p->want2 && ext_batch_reads(b)) {   /* the mate 1 is b's last read */
			const rec_read_t *rd = ext_batch_read(b, ext_batch_reads(b) - 1);

			return sp_fail("'%s': the stream ends after read '%.*s' (number %" PRIu64
					"), a mate 1, without its mate 2", p->in_path,
					(int)rd->name_len, rd->name, rd->id);
		}
		if (rc == 0 && p->want2)
			return sp_fail("'%s': the stream ends after a mate 1, without its mate 2",
					p->in_path);
		if (ext_batch_reads(b))
			j->n++;
	}
	if (rc == 0)
		p->eof = 1;
	return j->n ? 0 : 1;
}

/*
 * -M on the CPU: the scratch that batch J's alignment is estimated to take
 * beyond the P->ws_keep bytes a thread keeps, EXT_WS_CAND bytes for each
 * candidate of its largest part, reserved from P->ws_pool: the thread waits
 * while other threads' reservations leave too little, and a batch that
 * alone needs more than the pool (a read with too many candidates for the
 * budget) is an error naming the budget it needs.  Returns the bytes
 * reserved, or UINT64_MAX after sp_fail.
 */
static const char *human(char *b, size_t n, uint64_t v);
static uint64_t least_mem(const run_t *p, uint64_t est);

static uint64_t ws_reserve(run_t *p, job_t *j, uint64_t *cands)
{
	uint64_t est = 0, more, c;
	size_t i, big = 0;

	for (i = 0; i < j->n; i++)
		if ((c = p->ws_cand * ext_batch_cands(j->b[i])) > est) {
			est = c;
			big = i;
		}
	*cands = est / p->ws_cand;
	more = est > p->ws_keep ? est - p->ws_keep : 0;
	if (more > p->ws_pool) {
		char he[32], hm[32];
		const rec_read_t *rd = ext_batch_read(j->b[big], 0);

		sp_fail("-M: a memory budget of %s is too small for the reads from '%.*s' on (a "
				"part of %" PRIu64 " candidates, %" PRIu64 " of one read): aligning it takes "
				"about %s of scratch (give at least -M %lluK)", human(hm, sizeof hm, p->mem),
				(int)rd->name_len, rd->name, ext_batch_cands(j->b[big]),
				ext_batch_cands_max(j->b[big]), human(he, sizeof he, est),
				(unsigned long long)(least_mem(p, est) / 1024 + 1));
		return UINT64_MAX;
	}
	pthread_mutex_lock(&p->lock);
	while (more && p->ws_resv && p->ws_resv + more > p->ws_pool)
		pthread_cond_wait(&p->ws_cond, &p->lock);
	p->ws_resv += more;
	if (est > p->est_max)
		p->est_max = est;
	pthread_mutex_unlock(&p->lock);
	return more;
}

/* Align step: batch J with a scratch off the free list (or a new one). */
static int align_job(run_t *p, job_t *j)
{
	char msg[512];
	ws_node_t *n;
	size_t i;
	int r = 0;
	uint64_t more = 0, cands = 0;

	if (j->aligned)
		return 0;
	if (p->eo.dev) {   /* the device's batch: in three steps (prep, dev, finish) */
		for (i = 0; i < j->n && r == 0; i++)
			r = ext_batch_prep(j->b[i], p->x, &p->eo, &j->st[i], msg, sizeof msg);
		return r < 0 ? sp_fail("%s", msg) : 0;
	}
	if (p->gate && (more = ws_reserve(p, j, &cands)) == UINT64_MAX)
		return -1;
	pthread_mutex_lock(&p->lock);
	n = p->free_ws;
	if (n)
		p->free_ws = n->next;
	pthread_mutex_unlock(&p->lock);
	if (!n) {
		n = sp_malloc(sizeof *n);
		n->ws = ext_ws_new();
	} else if (more) {   /* a large batch starts from empty scratch: what it */
		ext_ws_free(n->ws);   /* takes is its own (the estimate learns from it) */
		n->ws = ext_ws_new();
	}
	for (i = 0; i < j->n && r == 0; i++)
		r = ext_batch_run_ws(j->b[i], n->ws, p->x, &p->eo, &j->st[i], msg, sizeof msg);
	if (p->gate) {
		uint64_t used = ext_ws_bytes(n->ws);

		if (used > p->ws_keep) {   /* back to the kept size: the rest to the pool */
			ext_ws_free(n->ws);
			n->ws = ext_ws_new();
		}
		pthread_mutex_lock(&p->lock);
		p->ws_resv -= more;
		if (used > p->ws_max)
			p->ws_max = used;
		if (used > p->ws_keep && used > p->ws_over * (more + p->ws_keep) / 1000)
			p->ws_over = 1000 * used / (more + p->ws_keep);   /* per mille of the estimate */
		if (used > p->ws_keep && cands && used / cands > p->ws_cand)
			p->ws_cand = used / cands;   /* the estimate learns from the large batches */
		pthread_cond_broadcast(&p->ws_cond);
		pthread_mutex_unlock(&p->lock);
	}
	pthread_mutex_lock(&p->lock);
	n->next = p->free_ws;
	p->free_ws = n;
	pthread_mutex_unlock(&p->lock);
	return r < 0 ? sp_fail("%s", msg) : 0;
}

/* Device step: pass 1 of batch J's parts (align_dev_ends runs up to three at once). */
static int dev_job(run_t *p, job_t *j)
{
	char msg[512];
	size_t i;

	if (j->aligned || !p->eo.dev)
		return 0;
	for (i = 0; i < j->n; i++)
		if (ext_batch_dev(j->b[i], p->x, &p->eo, msg, sizeof msg) < 0)
			return sp_fail("%s", msg);
	return 0;
}

/* Loci step: batch J's loci and pass-2 windows (host). */
static int loci_job(run_t *p, job_t *j)
{
	char msg[512];
	size_t i;

	for (i = 0; i < j->n && !j->aligned && p->eo.dev; i++)
		if (ext_batch_loci(j->b[i], p->x, &p->heo, &j->st[i], msg, sizeof msg) < 0)
			return sp_fail("%s", msg);
	return 0;
}

/* Trace step: batch J's pass-2 core on the device. */
static int trace_job(run_t *p, job_t *j)
{
	char msg[512];
	size_t i;

	for (i = 0; i < j->n && !j->aligned && p->eo.dev; i++)
		if (ext_batch_trace(j->b[i], &p->eo, msg, sizeof msg) < 0)
			return sp_fail("%s", msg);
	return 0;
}

/* Finish step: batch J's hits (host), then its pairs. */
static int finish_job(run_t *p, job_t *j)
{
	size_t i;
	int r = 0;

	for (i = 0; i < j->n && r == 0 && !j->aligned && p->eo.dev; i++)
		r = ext_batch_mkhits(j->b[i], p->x, &p->heo, &j->st[i]);
	if (r < 0)
		return -1;
	j->aligned = 1;
	for (i = 0; i < j->n && r == 0 && p->paired && p->ins.how != EXT_INS_NONE; i++)
		r = ext_pairs_run(j->pr[i], j->b[i], p->x, &p->peo, &p->ins, &j->st[i]);
	return r < 0 ? -1 : 0;
}

/* Write step: batch J's parts in order, and their counters. */
static int write_batch(run_t *p, job_t *j)
{
	size_t i;

	for (i = 0; i < N_STEPS; i++)
		p->t[i] += j->t[i];
	for (i = 0; i < j->n; i++) {
		const ext_stats_t *s = &j->st[i];

		if (ext_out_bam(p->out) ? ext_out_write_records(p->out, j->recs[i]) < 0
				: ext_out_write(p->out, j->b[i], j->pr[i], &j->txt[i]) < 0)
			return -1;
		p->st.reads += s->reads;
		p->st.cands += s->cands;
		p->st.windows += s->windows;
		p->st.bases += s->bases;
		p->st.loci += s->loci;
		p->st.hits += s->hits;
		p->st.mapped += s->mapped;
		p->st.unmapped += s->unmapped;
		p->st.too_long += s->too_long;
		p->st.not_covered += s->not_covered;
		p->st.pairs += s->pairs;
		p->st.pairs_conc += s->pairs_conc;
		p->st.conc += s->conc;
		p->st.rescued += s->rescued;
		if (s->not_covered_len && (!p->st.not_covered_len ||
					s->not_covered_len < p->st.not_covered_len))
			p->st.not_covered_len = s->not_covered_len;
	}
	return 0;
}

static int step(void *ctx, int s, void **data)
{
	run_t *p = ctx;
	job_t *j = *data;
	double t0 = sp_now();
	size_t i;
	int rc;

	switch (s) {
	case STEP_READ:
		if (p->first) {
			*data = p->first;
			p->first = p->first->next;
			return 0;
		}
		if (p->eof)
			return 1;
		if (p->stop_at) {
			uint64_t bytes;

			rec_reader_totals(p->r, NULL, NULL, NULL, &bytes);
			if (bytes >= p->stop_at)
				return 1;
		}
		j = job_get(p);
		memset(j->t, 0, sizeof j->t);
		rc = read_batch(p, j);
		if (rc != 0) {
			job_put(p, j);
			return rc;
		}
		j->t[s] += sp_now() - t0;
		*data = j;
		return 0;
	case STEP_ALIGN:
		rc = align_job(p, j);
		break;
	case STEP_DEV:
		rc = dev_job(p, j);
		break;
	case STEP_LOCI:
		rc = loci_job(p, j);
		break;
	case STEP_TRACE:
		rc = trace_job(p, j);
		break;
	case STEP_FINISH:
		rc = finish_job(p, j);
		break;
	case STEP_FORMAT:   /* SAM text or BAM records, the batches in parallel */
		for (i = 0, rc = 0; i < j->n && rc == 0; i++)
			if (ext_out_text(p->out))
				ext_out_format(p->out, j->b[i], j->pr[i], &j->txt[i]);
			else if (ext_out_bam(p->out))
				rc = ext_out_records(p->out, j->b[i], j->pr[i], &j->recs[i]);
		break;
	default:
		j->t[s] += sp_now() - t0;
		rc = write_batch(p, j);
		job_put(p, j);
		*data = NULL;
		return rc;
	}
	j->t[s] += sp_now() - t0;
	return rc;
}

/* SEEDPIPE_DEBUG: where the time went (seconds summed over the threads of a step). */
static void stage_times(const run_t *p)
{
	align_dev_stats_t d;

	sp_msg("stages (thread seconds): read %.3f, windows (prep or, native, the whole "
			"alignment) %.3f, device pass 1 %.3f, loci %.3f, device pass 2 %.3f, hits %.3f,"
			" format %.3f, write (before the last batch's write) %.3f", p->t[STEP_READ],
			p->t[STEP_ALIGN], p->t[STEP_DEV], p->t[STEP_LOCI], p->t[STEP_TRACE],
			p->t[STEP_FINISH], p->t[STEP_FORMAT], p->t[STEP_WRITE]);
	if (!p->eo.dev)
		return;
	align_dev_stats(p->eo.dev, &d);
	sp_msg("device (%s, %d at once): reference up once %.3f s; %" PRIu64 " calls, %" PRIu64
			" kernel runs, %"
			PRIu64 " pairs, %" PRIu64 " with a hit; %.1f MB up, %.1f MB down; submit %.3f s,"
			" wait for the distances %.3f s, rows down %.3f s", d.score_first ? "score first, "
			"then the hits' rows" : "one kernel, every row", d.slots, d.t_ref, d.calls, d.runs,
			d.pairs, d.hits, d.up_bytes / 1e6, d.down_bytes / 1e6, d.t_submit, d.t_wait,
			d.t_down);
	sp_msg("device slots: held %.3f s in all (%d slots), waited for %.3f s", d.t_held,
			d.slots, d.t_slot_wait);
	if (d.k_runs)
		sp_msg("device kernels (SEEDPIPE_ALIGN_PROFILE, device seconds summed over %" PRIu64
				" runs): keys %.3f (work-groups %.3f), cut %.3f, score %.3f, rows %.3f, ends"
				" %.3f, pass 2 %.3f; %.3f s from the first kernel's start to the last one's"
				" end", d.k_runs, d.k_keys + d.k_keys_wg, d.k_keys_wg, d.k_cut, d.k_score, d.k_rows, d.k_ends, d.k_trace, d.k_span);
	if (d.c_calls)
		sp_msg("device cut the windows: %" PRIu64 " calls, %" PRIu64 " candidates, %"
				PRIu64 " cut again for room; %.1f MB up (reads, candidates); %" PRIu64
				" reads' keys decoded on the host, %" PRIu64 " lists by work-groups; %.3f s"
				" until the window counts were back", d.c_calls, d.c_cands, d.c_again,
				d.c_up_bytes / 1e6, d.c_host_reads, d.c_wg_reads, d.c_t_cut);
	sp_msg("device pass 2: %" PRIu64 " calls, %" PRIu64 " loci traced back; %.1f MB up, %.1f MB"
			" down; submit %.3f s, wait for the results %.3f s", d.t_calls, d.t_pairs,
			d.t_up_bytes / 1e6, d.t_down_bytes / 1e6, d.t_t_submit, d.t_t_wait);
}

/*
 * The pipeline's threads beyond -t with the device: one per slot of the
 * device (align_dev_stats), which a thread holds while it waits for the
 * device (SEEDPIPE_EXT_DEV_THREADS: another number, for measurements).
 */
static int dev_waiters(const run_t *p)
{
	const char *e = getenv("SEEDPIPE_EXT_DEV_THREADS");
	align_dev_stats_t d;

	if (!p->eo.dev)
		return 0;
	if (e && atoi(e) >= 0 && atoi(e) <= 64)
		return atoi(e);
	align_dev_stats(p->eo.dev, &d);
	return d.slots;
}

/*
 * The index of the stream of R, with the stream's fingerprint: C->index
 * when given (-x); else the path the stream records (absolute since
 * seedfilt records it so; relative to here in older streams), then a file
 * of the same name next to the candidates file.  A path that is absent,
 * or an index of another fingerprint, is noted and the next one tried;
 * when none fits the message lists every path tried and points to -x.
 */
static idx_t *open_index(const ext_cfg_t *c, rec_reader_t *r)
{
	const rec_prov_t *up = rec_reader_prov(r);
	const char *sidx = rec_prov_get(up, REC_PROV_INDEX), *sfp = rec_prov_get(up, REC_PROV_INDEX_FP);
	char fp[32], *try[2] = { NULL, NULL }, tried[2048] = "";
	idx_t *x = NULL;
	int i, n = 0;

	if (c->index) {
		x = ext_idx_open(c->index);
		snprintf(fp, sizeof fp, "%016" PRIx64, x->fingerprint);
		if (!sfp)
			sp_die("the candidates stream holds no index fingerprint: it cannot be "
					"checked against index '%s'", c->index);
		if (strcmp(sfp, fp))
			sp_die("index '%s' has fingerprint %s but the candidates were made with "
					"index '%s' of fingerprint %s", c->index, fp, sidx ? sidx : "?", sfp);
		return x;
	}
	if (!sidx || !*sidx)
		sp_die("the candidates stream names no index: give -x FILE");
	if (!sfp)
		sp_die("the candidates stream holds no index fingerprint: it cannot be checked "
				"against index '%s'", sidx);
	try[n++] = sp_strdup(sidx);
	if (strcmp(c->in_path, "-")) {
		const char *base = strrchr(sidx, '/'), *dir = strrchr(c->in_path, '/');
		size_t dn = dir ? (size_t)(dir - c->in_path) + 1 : 0;
		char *p;

		base = base ? base + 1 : sidx;
		p = sp_malloc(dn + strlen(base) + 1);
		memcpy(p, c->in_path, dn);
		strcpy(p + dn, base);
		if (strcmp(p, sidx))
			try[n++] = p;
		else
			free(p);
	}
	for (i = 0; i < n && !x; i++) {
		struct stat st;
		size_t k = strlen(tried);

		if (stat(try[i], &st) != 0) {
			snprintf(tried + k, sizeof tried - k, "%s'%s' (%s)", k ? ", " : "", try[i],
					strerror(errno));
			continue;
		}
		x = ext_idx_open(try[i]);
		snprintf(fp, sizeof fp, "%016" PRIx64, x->fingerprint);
		if (strcmp(sfp, fp)) {
			snprintf(tried + k, sizeof tried - k, "%s'%s' (fingerprint %s, not %s)",
					k ? ", " : "", try[i], fp, sfp);
			idx_close(x);
			x = NULL;
		} else if (i > 0 && !c->quiet) {
			sp_warn("index %s: using '%s', next to the candidates", tried, try[i]);
		}
	}
	for (i = 0; i < n; i++)
		free(try[i]);
	if (!x)
		sp_die("cannot find the index of the candidates: tried %s; give it with -x FILE",
				tried);
	return x;
}

/* The output's provenance: the input's, then this stage's lines OWN. */
static void make_prov(rec_prov_t *p, const rec_prov_t *up, const rec_prov_t *own)
{
	size_t i;

	rec_prov_init(p);
	rec_prov_carry(p, up);
	for (i = 0; own && i < own->n; i++) {
		if (!strcmp(own->key[i], REC_PROV_PG))
			rec_prov_add(p, own->key[i], own->val[i]);
		else
			rec_prov_set(p, own->key[i], own->val[i]);
	}
}

/*
 * -M: extend reads only the index's global sections (names, offsets, the
 * packed reference, which ext_idx_open moves onto pages of its own); the
 * partitions' structures are never touched, so whatever the index's size
 * one pass suffices.  Beside the reference the budget holds:
 *
 *   the batches in flight: NB of PARTS parts of P->batch candidates, at
 *   EXT_CAND_BYTES each (a candidate's share of its read's record, text,
 *   hits and SAM text, with a read of one candidate); at most half of what
 *   is left over the reference (P->batch made smaller to fit), and on the
 *   CPU a part's buffers shrink back to that share when it is written;
 *
 *   on the CPU, the aligning threads' scratch (ext_ws_t: windows, ends
 *   rows, spans): each thread keeps up to P->ws_keep bytes, and a batch
 *   estimated (EXT_WS_CAND bytes a candidate of its largest part, then
 *   the most measured on the run's batches over ws_keep) to need more
 *   reserves the excess from the pool, the rest of the budget, waiting
 *   while other threads hold it (ws_reserve); the scratch goes back to
 *   ws_keep after the batch.  A read's scratch grows with its candidates
 *   (P. falciparum: one read has 848,812; 62 to 78 bytes of scratch a
 *   candidate measured on its largest reads, 114 on a pure tandem repeat,
 *   whose first large batches took 1.8 times their estimate), so a budget
 *   too small for one read's work is found when that read comes: an error
 *   naming the budget it needs (exit 1).
 *
 * With a device the batches are the device's (EXT_CAND_BYTES a candidate
 * for all, scratch included).  Not counted: the program itself (its code
 * and libraries, the index's global tables outside the packed reference,
 * ~4 MB), the SAM/BAM writer's buffers (htslib's, a few blocks), the
 * threads' stacks.
 */
/* V bytes as "12.3 KiB" / "MiB" / "GiB" into B. */
static const char *human(char *b, size_t n, uint64_t v)
{
	if (v < (1 << 20))
		snprintf(b, n, "%.1f KiB", (double)v / 1024);
	else if (v < (1ULL << 30))
		snprintf(b, n, "%.1f MiB", (double)v / 1048576.0);
	else
		snprintf(b, n, "%.2f GiB", (double)v / 1073741824.0);
	return b;
}

/*
 * The shares of budget MEM (its run P: reference, PER bytes a candidate of
 * a part, P->batch0 the batch wanted): the batch, and on the CPU the
 * scratch a thread keeps and the pool.  0 when MEM holds no batch of one
 * candidate (or no EXT_WS_MIN of pool on the CPU).
 */
static int shares(const run_t *p, uint64_t mem, size_t *batch, uint64_t *keep, uint64_t *pool)
{
	uint64_t room, w;

	if (mem <= p->res)
		return 0;
	room = (p->cpu ? (mem - p->res) / 4 : mem - p->res) / p->per;
	*batch = room < p->batch0 ? (size_t)room : p->batch0;
	if (!*batch)
		return 0;
	if (!p->cpu)
		return 1;
	w = mem - p->res - p->per * *batch;
	*keep = w / (4 * (uint64_t)p->nt) > EXT_WS_MIN ? w / (4 * (uint64_t)p->nt) : EXT_WS_MIN;
	if (w < (p->nt + 1) * *keep)
		return 0;
	*pool = w - p->nt * *keep;
	return *pool >= EXT_WS_MIN;
}

/* The least budget (bytes) whose shares hold, and with EST > 0 whose pool holds EST beside a thread's share. */
static uint64_t least_mem(const run_t *p, uint64_t est)
{
	uint64_t lo = p->res, hi = p->res + (1ULL << 20), keep, pool;
	size_t batch;

	while (!shares(p, hi, &batch, &keep, &pool) || (est > keep && est - keep > pool))
		hi *= 2;
	while (hi - lo > 1024) {   /* shares() and pool grow with the budget */
		uint64_t mid = lo + (hi - lo) / 2;

		if (shares(p, mid, &batch, &keep, &pool) && !(est > keep && est - keep > pool))
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

static void budget(const ext_cfg_t *c, run_t *p, size_t nb, int cpu, int nt)
{
	uint64_t mem = c->mem;
	char hm[32], hr[32], hk[32], hw[32];

	if (!mem)
		mem = filt_default_mem();
	if (!mem)
		return;
	p->res = idx_global_bytes(p->x);
	p->per = (uint64_t)nb * p->parts * EXT_CAND_BYTES;
	p->batch0 = p->batch;
	p->cpu = cpu;
	p->nt = nt;
	p->mem = mem;
	if (!shares(p, mem, &p->batch, &p->ws_keep, &p->ws_pool))
		sp_die("-M: a memory budget of %s is too small: the reference takes %s, and %zu "
				"batches in flight of one candidate%s need more (give at least -M %lluK)",
				human(hm, sizeof hm, mem), human(hr, sizeof hr, p->res), nb,
				cpu ? " with the threads' scratch" : "",
				(unsigned long long)(least_mem(p, 0) / 1024 + 1));
	if (cpu) {
		p->gate = 1;
		p->ws_cand = EXT_WS_CAND;
		p->part_keep = (uint64_t)p->batch * EXT_CAND_BYTES;
		sp_malloc_bounded();   /* what a batch frees goes back to the system */
	}
	if (c->mem)
		snprintf(p->budget, sizeof p->budget, "memory budget %s (-M): the reference "
				"%s (the index's partition structures are not read: 1 pass); %zu "
				"batches in flight of %zu candidates%s%s%s%s%s%s", human(hm, sizeof hm, mem),
				human(hr, sizeof hr, p->res), nb, p->batch,
				p->batch < p->batch0 ? " (made smaller to fit)" : "",
				cpu ? "; the threads' scratch " : "", cpu ? human(hk, sizeof hk, p->ws_keep) : "",
				cpu ? " each, and a pool of " : "", cpu ? human(hw, sizeof hw, p->ws_pool) : "",
				cpu ? " for larger batches" : "");
}

static void summary(const ext_cfg_t *c, const run_t *p, unsigned a, const char *dev,
		double t0)
{
	const ext_stats_t *st = &p->st;
	char ins[256];

	if (p->paired && p->ins.how != EXT_INS_NONE) {   /* not with -O rec */
		ext_ins_describe(&p->ins, ins, sizeof ins);
		sp_msg("%" PRIu64 " pairs, %" PRIu64 " with a concordant pair (%" PRIu64
				" concordant pairs reported), %" PRIu64 " hits by mate rescue; %s",
				st->pairs, st->pairs_conc, st->conc, st->rescued, ins);
	}
	sp_msg("%" PRIu64 " reads, %" PRIu64 " candidates (%" PRIu64 " windows aligned, %" PRIu64
			" bases), %" PRIu64 " verified hits (loci), %" PRIu64 " reported, %" PRIu64
			" mapped, %" PRIu64 " unmapped", st->reads, st->cands, st->windows, st->bases,
			st->loci, st->hits, st->mapped, st->unmapped);
	sp_msg("-e %u%s, %s, %d threads, %.2f s", a, c->eo.nogaps ? " --no-gaps" : "",
			dev, c->eo.n_threads, sp_now() - t0);
	if (*p->budget)
		sp_msg("%s", p->budget);
	if (*p->budget && p->gate)
		sp_msg("-M: the largest batch's scratch estimated %.1f MiB, the largest measured "
				"%.1f MiB; over its thread's share, at most %.0f%% of its estimate (%" PRIu64
				" bytes a candidate at the end)", (double)p->est_max / 1048576.0,
				(double)p->ws_max / 1048576.0, (double)p->ws_over / 10, p->ws_cand);
}

/*
 * The insert size from the first EXT_INS_PAIRS pairs (whatever -B and the
 * threads): the batches that hold them are read and aligned now, and go
 * first into the pipeline, which pairs them and does not align them again.
 */
static void first_batches(run_t *p)
{
	job_t **tail = &p->first;
	ext_batch_t **bs = NULL;
	size_t nb = 0, pairs = 0, i;

	while (pairs < EXT_INS_PAIRS && !p->eof) {
		job_t *j = job_get(p);
		int rc = read_batch(p, j);

		if (rc < 0 || (rc == 0 && (align_job(p, j) < 0 || dev_job(p, j) < 0
						|| loci_job(p, j) < 0 || trace_job(p, j) < 0
						|| finish_job(p, j) < 0))) {
			char msg[SP_ERRMSG_MAX];

			snprintf(msg, sizeof msg, "%s", sp_errmsg());
			job_put(p, j);   /* the run's again (reachable at the exit below) */
			ext_out_fail(p->out, msg);
			sp_die("%s", msg);
		}
		if (rc) {
			job_put(p, j);
			break;
		}
		j->next = NULL;
		*tail = j;
		tail = &j->next;
		bs = sp_realloc(bs, (nb + j->n) * sizeof *bs);
		for (i = 0; i < j->n; i++) {
			bs[nb++] = j->b[i];
			pairs += ext_batch_reads(j->b[i]) / 2;
		}
	}
	ext_ins_estimate(bs, nb, EXT_INS_PAIRS, &p->ins);
	free(bs);
}

/* The pipeline over the rest of P's stream (with the device when OCL); dies on an error. */
static void run_pipeline(run_t *p, int ocl, int nt)
{
	sp_pipe pipe = { .nsteps = N_STEPS, .nbatches = ocl && !p->eo.dev ? 3 : 2 * nt + 2,
		.step = step, .drop = job_drop, .ctx = p };
	unsigned par;

	/* the device step is ordered: it alone enters the platform (with the
	 * old device path, the whole alignment in the align step does) */
	par = 1u << STEP_LOCI | 1u << STEP_TRACE | 1u << STEP_FINISH | 1u << STEP_FORMAT;
	if (!ocl)
		par |= 1u << STEP_ALIGN | 1u << STEP_DEV;
	else if (p->eo.dev)   /* align_dev_ends takes up to three batches at once */
		par |= 1u << STEP_ALIGN | 1u << STEP_DEV;
	/* with the device, threads wait in its steps (a batch in each of its
	 * slots, more waiting for a slot): as many more keep -t threads on the host */
	if (sp_pipeline_par(&pipe, par, nt + dev_waiters(p)) < 0) {
		char msg[SP_ERRMSG_MAX];

		snprintf(msg, sizeof msg, "%s", sp_errmsg());
		ext_out_fail(p->out, msg);
		sp_die("%s", msg);
	}
}

/* The batches on the free list freed (their parts: P->parts). */
static void free_jobs(run_t *p)
{
	size_t i;

	while (p->free) {
		job_t *j = p->free;

		p->free = j->next;
		for (i = 0; i < p->parts; i++) {
			ext_batch_free(j->b[i]);
			ext_pairs_free(j->pr[i]);
			free(j->txt[i].s);
			ext_recs_free(j->recs[i]);
		}
		free(j->b);
		free(j->pr);
		free(j->st);
		free(j->txt);
		free(j->recs);
		free(j);
	}
}

/*
 * -d auto: open the device chosen into *OCL (0), or -1 (warned: the native
 * code).  A device known from the cache (P->au.known) must be the one named
 * there, else the cache entry goes and the next run probes again.
 */
static int auto_open(run_t *p, ocl_ctx_t **ocl)
{
	char msg[512];

	*ocl = NULL;
	if (ocl_open(ocl_auto_spec(), 0, ocl, msg, sizeof msg) != OCL_OPEN_OK || !*ocl) {
		if (p->au.known)
			ocl_auto_forget();
		sp_warn("-d auto: the device chosen does not open (%s): native code", msg);
		ocl_close(*ocl);
		*ocl = NULL;
		return -1;
	}
	if (p->au.known && (strcmp((*ocl)->name, p->au.name)
				|| strcmp((*ocl)->driver_version, p->au.driver))) {
		ocl_auto_forget();
		sp_warn("-d auto: the cached device '%s' (driver %s) is now '%s': native code "
				"(the next run probes again)", p->au.name, p->au.driver, (*ocl)->name);
		ocl_close(*ocl);
		*ocl = NULL;
		return -1;
	}
	return 0;
}

/*
 * -d auto from a pipe: P->stop_at bytes came and the input goes on, so by
 * the model the device is the faster path for the rest (ext_dev_auto): the
 * native pipeline has written every batch so far; open the device (*OCL) and
 * run the rest on it.  A device that does not open: the native code goes on.
 */
static void to_device(const ext_cfg_t *c, run_t *p, ocl_ctx_t **ocl, int nt)
{
	char msg[512];
	uint64_t bytes;

	rec_reader_totals(p->r, NULL, NULL, NULL, &bytes);
	p->stop_at = 0;
	if (auto_open(p, ocl) < 0) {
		run_pipeline(p, 0, nt);
		return;
	}
	if (!getenv("SEEDPIPE_EXT_OLD_DEVICE") && ext_dev_setup(*ocl, p->x, &p->eo, msg,
				sizeof msg) < 0) {
		sp_warn("-d auto: the device does not open (%s): native code", msg);
		ocl_close(*ocl);
		*ocl = NULL;
		p->eo.ocl = NULL;
		p->eo.dev = NULL;
		run_pipeline(p, 0, nt);
		return;
	}
	if (!c->quiet)
		sp_msg("-d auto: %" PRIu64 " bytes of input came and it goes on: the device for "
				"the rest", bytes);
	free_jobs(p);   /* of EXT_PARTS_CPU parts */
	p->eo.ocl = *ocl;
	p->peo.ocl = *ocl;
	p->peo.dev = p->eo.dev;
	p->peo.dev_cut = p->eo.dev_cut;
	p->batch = c->batch ? c->batch : EXT_BATCH_DEV;
	p->parts = 1;
	p->gate = 0;   /* the native phase's scratch gate: the device's batches are budgeted anew */
	budget(c, p, p->eo.dev ? 2 * (size_t)nt + 2 : 3, 0, nt);
	run_pipeline(p, 1, nt);
}

int ext_run_or_die(const ext_cfg_t *c)
{
	const char *device = c->device;
	char dev_desc[256] = "native C";
	double t0 = sp_now();
	ocl_ctx_t *ocl;
	rec_prov_t prov;
	run_t p;
	int nt;
	const char *bound;
	char num[32];
	int16_t *guar;
	filt_opt_t fo;
	int auto_dev;

	/* the device before the index: a missing GPU is reported at once (exit
	 * 3); auto is chosen once the index and the bound are known, by the
	 * measured model (ext_dev_auto) */
	if (!device)
		device = getenv("SEEDPIPE_DEVICE");
	auto_dev = !device || !*device || !strcmp(device, "auto");
	ocl = auto_dev ? NULL : ocl_open_or_die(device, 0);

	memset(&p, 0, sizeof p);
	p.r = rec_open_or_die(c->in_path, REC_KIND_CANDIDATES);
	p.x = open_index(c, p.r);
	p.in_path = c->in_path;
	p.paired = rec_prov_get(rec_reader_prov(p.r), "seedfilt.paired") != NULL;
	make_prov(&prov, rec_reader_prov(p.r), c->prov);
	p.eo = c->eo;
	if (!c->a_set && (bound = rec_prov_get(rec_reader_prov(p.r), "seedfilt.E")) &&
	    !strchr(bound, '%')) {   /* the stream's -E: the bound stated once */
		unsigned long a = strtoul(bound, NULL, 10);

		if (a > ALIGN_MAX_A)
			sp_die("the stream's bound -E %s exceeds the %d edit operations extend "
					"aligns: give -e", bound, ALIGN_MAX_A);
		p.eo.max_a = (unsigned)a;
		snprintf(num, sizeof num, "%lu", a);
		rec_prov_set(&prov, "extend.e", num);
	} else if (!c->a_set && bound) {   /* P%: checked per read, up to -e's default */
		p.eo.bound_pct = (uint32_t)strtoul(bound, NULL, 10);
		snprintf(num, sizeof num, "%u", p.eo.bound_pct);
		rec_prov_set(&prov, "extend.bound_pct", num);   /* for extend --merge's pairing */
	}
	p.eo.guar = guar = ext_guar_table(rec_reader_prov(p.r), p.x, c->eo.nogaps, &fo);
	if (auto_dev) {
		char why[1024];
		const char *spec = ext_dev_auto(p.x, &p.eo, c->eo.n_threads < 1 ? 1
				: c->eo.n_threads, c->batch, c->in_path, why, sizeof why, &p.au);

		/* said where a device was there to consider */
		if (!c->quiet && strcmp(why, "native code: no OpenCL GPU"))
			sp_msg("-d auto: %s", why);
		if (strcmp(spec, "none") && auto_open(&p, &ocl) < 0)
			ocl = NULL;
		p.stop_at = p.au.switch_at > 0 ? (uint64_t)p.au.switch_at + 1 : 0;
	}
	p.out = ext_out_open_or_die(c->out_path, c->fmt, p.x, &prov, c->force, c->eo.n_threads,
			&c->so);
	p.eo.n_threads = 1;   /* a batch is one thread's (the device ignores it) */
	p.eo.ocl = ocl;
	if (ocl && !getenv("SEEDPIPE_EXT_OLD_DEVICE")) {
		char msg[512];

		if (ext_dev_setup(ocl, p.x, &p.eo, msg, sizeof msg) < 0) {
			ext_out_fail(p.out, msg);
			sp_die("%s", msg);
		}
	}
	p.heo = p.eo;
	p.heo.ocl = NULL;
	p.heo.dev = NULL;
	p.batch = c->batch ? c->batch : ocl ? EXT_BATCH_DEV : EXT_BATCH_CPU;
	p.parts = ocl ? 1 : EXT_PARTS_CPU;
	nt = c->eo.n_threads < 1 ? 1 : c->eo.n_threads;
	budget(c, &p, ocl && !p.eo.dev ? 3 : 2 * (size_t)nt + 2, !ocl, nt);   /* the batches in flight */
	pthread_mutex_init(&p.lock, NULL);
	pthread_cond_init(&p.ws_cond, NULL);

	p.ins = c->ins;
	p.peo = p.eo;
	if (p.paired)
		p.eo.mode = EXT_ALL;   /* a mate's hits all, for its pairs */
	if (c->fmt == EXT_OUT_REC)    /* a hits stream: every mate's loci, unpaired */
		p.ins.how = EXT_INS_NONE;   /* (extend --merge pairs them) */
	else if (p.paired && p.ins.how == EXT_INS_NONE)
		first_batches(&p);
	run_pipeline(&p, ocl != NULL, nt);
	if (p.stop_at && !p.eof)
		to_device(c, &p, &ocl, nt);
	free_jobs(&p);
	while (p.free_ws) {
		ws_node_t *n = p.free_ws;

		p.free_ws = n->next;
		ext_ws_free(n->ws);
		free(n);
	}
	pthread_mutex_destroy(&p.lock);
	pthread_cond_destroy(&p.ws_cond);
	if (getenv("SEEDPIPE_DEBUG"))
		stage_times(&p);
	align_dev_free(p.eo.dev);
	if (ocl)
		ocl_describe(ocl, dev_desc, sizeof dev_desc);
	ext_out_close_or_die(p.out);
	rec_reader_free(p.r);
	if (p.st.too_long)   /* even with -q: those reads are not aligned */
		sp_warn("%" PRIu64 " reads longer than %d bases were left unmapped", p.st.too_long,
				ALIGN_MAX_READ);
	if (p.st.not_covered)
		ext_not_covered(&p.eo, p.x, &p.st, &fo, &prov);
	if (!c->quiet)
		summary(c, &p, p.eo.max_a, dev_desc, t0);
	free(guar);
	rec_prov_free(&prov);
	ocl_close(ocl);
	idx_close(p.x);
	return c->strict && p.st.not_covered ? SP_EXIT_DATA : 0;
}
