/*
 * filt_io.c - seedfilt's top loop: reads in (FASTA/FASTQ, plain or gzip, or
 * a reads stream, told apart by their first bytes), batches filtered by a
 * pool of threads, candidates streamed out in input order, summary.
 *
 * Determinism: a batch is cut by read count only, every read is filtered
 * on its own (filt_read), and records are written in input order after the
 * whole batch is done, so the output does not depend on -t or -B.
 *
 * Native code (-d none): three batches; a reader thread fills one while the
 * pool filters the next (the workers encode its records too), and a writer
 * thread copies the records of the one before to the stream:
 *
 *     reader:  read 0 | read 1   | read 2   | read 3   | ...
 *     pool:           | filter 0 | filter 1 | filter 2 | ...
 *     writer:                    | write 0  | write 1  | ...
 *
 * OpenCL device: a batch goes through five stages: read, cut (the pool
 * cuts the patterns of every read), match (a device thread gathers them
 * and matches them on the device, partition by partition), finish (the
 * pool turns the positions into candidates and encodes the records) and
 * write.  One pool round cuts batch i+1 and finishes batch i-1 while the
 * device thread matches batch i, so the device and the host work at the
 * same time; five batch buffers, two sets of device results (devset_t),
 * batch i's in dv[i & 1]:
 *
 *     reader:  read 0 | read 1 | read 2  | read 3  | read 4  | ...
 *     pool:           | cut 0  | cut 1   | cut 2   | cut 3   | ...
 *                     |        |         | fin 0   | fin 1   | ...
 *     device:         |        | match 0 | match 1 | match 2 | ...
 *     writer:                                      | write 0 | ...
 *
 * Only the device thread calls filt_dev_match, one batch at a time; each
 * worker has a workspace of its own, the device thread needs none.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "filt.h"
#include "rec.h"
#include "rec_kinds.h"
#include "seqio.h"
#include "util.h"

/* ---- input: sniff the first bytes, hand the rest on ---------------------- */

typedef struct {
	int in_fd, out_fd;
	uint8_t pre[8];
	size_t pre_len;
	const char *name;
} fwd_t;

static int write_all(int fd, const void *buf, size_t n)
{
	const uint8_t *p = buf;

	while (n > 0) {
		ssize_t k = write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Thread: copy the sniffed prefix, then the rest of the input, into a pipe. */
static void *fwd_main(void *a)
{
	fwd_t *f = a;
	static __thread uint8_t buf[1 << 16];

	if (write_all(f->out_fd, f->pre, f->pre_len) == 0) {
		for (;;) {
			ssize_t k = read(f->in_fd, buf, sizeof buf);

			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0) {
				sp_die("cannot read '%s': %s", f->name, strerror(errno));
			}
			if (k == 0 || write_all(f->out_fd, buf, (size_t)k) < 0)
				break;
		}
	}
	close(f->out_fd);
	return NULL;
}

struct filt_in {
	seqio_reader_t *sq;
	rec_reader_t *rr;
	seq_rec_t rec;
	int fd, own_fd;
	pthread_t th;
	int th_started;
	fwd_t fwd;
	uint64_t next_id;
	const char *name;
};

filt_in_t *filt_in_open(const char *path)
{
	filt_in_t *in = sp_calloc(1, sizeof *in);
	int fd = 0, is_stream;
	size_t n = 0;
	uint8_t pre[8];

	in->name = path;
	if (strcmp(path, "-") != 0) {
		fd = open(path, O_RDONLY);
		if (fd < 0)
			sp_die("cannot open '%s': %s", path, strerror(errno));
		in->own_fd = 1;
	}
	in->fd = fd;
	while (n < REC_MAGIC_LEN) {
		ssize_t k = read(fd, pre + n, REC_MAGIC_LEN - n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			sp_die("cannot read '%s': %s", path, strerror(errno));
		if (k == 0)
			break;
		n += (size_t)k;
	}
	is_stream = n == REC_MAGIC_LEN && memcmp(pre, REC_MAGIC, REC_MAGIC_LEN) == 0;
	if (lseek(fd, 0, SEEK_SET) != 0) {
		int p[2];

		if (pipe(p) != 0)
			sp_die("cannot make a pipe: %s", strerror(errno));
		in->fwd.in_fd = fd;
		in->fwd.out_fd = p[1];
		memcpy(in->fwd.pre, pre, n);
		in->fwd.pre_len = n;
		in->fwd.name = path;
		if (pthread_create(&in->th, NULL, fwd_main, &in->fwd) != 0)
			sp_die("cannot start a thread: %s", strerror(errno));
		in->th_started = 1;
		fd = p[0];
	}
	if (is_stream) {
		int st;

		in->rr = rec_reader_fd(fd, path);
		st = rec_reader_start(in->rr, REC_KIND_READS);
		if (st != REC_OK)
			sp_die("%s", rec_errmsg(in->rr));
	} else {
		in->sq = seqio_open_fd_or_die(fd, path);
		seqio_rec_init(&in->rec);
	}
	in->fd = fd;
	return in;
}

const rec_prov_t *filt_in_prov(const filt_in_t *in)
{
	return in->rr ? rec_reader_prov(in->rr) : NULL;
}

/* One read of a batch: its strings live in the batch arena at these offsets. */
typedef struct {
	uint64_t id;
	size_t name, comment, seq, qual;    /* offsets into the arena */
	uint32_t name_len, comment_len, seq_len, has_qual;
	size_t enc_off, enc_len, enc_max;  /* its candidates record in enc[enc_w] */
	int enc_w;
	int pat_w;               /* device path: its patterns (cut stage) are */
	uint32_t n_pat;          /* pat[pat_w].p[pat_off .. pat_off + n_pat) */
	size_t pat_off;
} bread_t;

/* Encoded candidates records of one worker. */
typedef struct {
	uint8_t *buf;
	size_t used, cap;
} enc_t;

/* Patterns cut by one worker (device path). */
typedef struct {
	filt_pat_t *p;
	size_t n, cap;
} pbuf_t;

typedef struct {
	bread_t *r;
	size_t n, cap;
	char *arena;
	size_t used, acap;
	enc_t *enc;              /* per worker: the records it encoded */
	pbuf_t *pat;             /* per worker: the patterns it cut (device path) */
} batch_t;

static size_t arena_put(batch_t *b, const char *s, size_t n)
{
	size_t at = b->used;

	if (b->used + n + 1 > b->acap) {
		b->acap = (b->used + n + 1) * 2;
		b->arena = sp_realloc(b->arena, b->acap);
	}
	if (n)
		memcpy(b->arena + b->used, s, n);
	b->arena[b->used + n] = 0;
	b->used += n + 1;
	return at;
}

static void batch_add(batch_t *b, const rec_read_t *rd)
{
	bread_t *r;

	if (b->n == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 1024;
		b->r = sp_realloc(b->r, b->cap * sizeof *b->r);
	}
	r = &b->r[b->n++];
	memset(r, 0, sizeof *r);
	r->id = rd->id;
	r->name = arena_put(b, rd->name, rd->name_len);
	r->comment = arena_put(b, rd->comment, rd->comment_len);
	r->seq = arena_put(b, rd->seq, rd->seq_len);
	r->has_qual = rd->qual != NULL;
	r->qual = arena_put(b, rd->qual ? rd->qual : "", rd->qual ? rd->seq_len : 0);
	r->name_len = rd->name_len;
	r->comment_len = rd->comment_len;
	r->seq_len = rd->seq_len;
}

/* Fill B with up to MAX reads; returns the count (0 at the end). */
static size_t read_batch(filt_in_t *in, batch_t *b, size_t max)
{
	b->n = 0;
	b->used = 0;
	while (b->n < max) {
		rec_read_t rd;

		if (in->sq) {
			if (!seqio_read_or_die(in->sq, &in->rec))
				break;
			if (in->rec.seq_len > UINT32_MAX || in->rec.name_len > UINT32_MAX)
				sp_die("'%s': line %" PRIu64 ": read too long", in->name, in->rec.line);
			rec_read_from_seq(&rd, in->next_id++, &in->rec);
		} else {
			const uint8_t *body;
			uint32_t len;
			int st = rec_read(in->rr, &body, &len);

			if (st == 0)
				break;
			if (st < 0)
				sp_die("%s", rec_errmsg(in->rr));
			if (rec_read_decode(body, len, &rd) < 0) {
				rec_reader_bad_record(in->rr, NULL, "malformed reads record");
				sp_die("%s", rec_errmsg(in->rr));
			}
		}
		batch_add(b, &rd);
	}
	return b->n;
}

void filt_in_close(filt_in_t *in)
{
	if (!in)
		return;
	if (in->sq) {
		seqio_close(in->sq);
		seqio_rec_free(&in->rec);
	}
	if (in->rr)
		rec_reader_free(in->rr);
	if (in->th_started) {
		close(in->fd);  /* a blocked forwarder gets EPIPE and stops */
		pthread_join(in->th, NULL);
	}
	if (in->own_fd)
		close(in->fwd.in_fd ? in->fwd.in_fd : in->fd);
	free(in);
}

/* ---- filtering threads ------------------------------------------------- */

/*
 * Device results of one batch: its patterns in read order (those of read k
 * are pat[pstart[k] .. pstart[k+1])) and, per partition, the positions
 * count of each pattern, where its positions start in hits, the positions.
 */
typedef struct {
	filt_pat_t *pat;
	size_t n_pat, cap_pat;
	size_t *pstart;          /* n+1 */
	size_t cap_reads;
	uint32_t **pcnt;         /* [part][pattern] positions */
	uint64_t **hoff;         /* [part][pattern] first position in hits[part] */
	uint32_t **hits;         /* [part] positions */
	size_t *n_hits, *cap_hits;   /* [part] */
} devset_t;

typedef struct {
	const idx_t *x;
	const filt_run_t *run;
	batch_t *b;              /* the batch to filter (device path: finish), or NULL */
	const devset_t *dv;      /* device path: the device results of b */
	batch_t *cut;            /* device path: the batch to cut, or NULL */
	size_t next, next_cut;   /* first read of the next chunk of b, of cut */
	pthread_mutex_t lock;
	filt_stats_t st;
} pool_t;

typedef struct {
	pool_t *p;
	filt_ws_t *ws;
	int id;
	pthread_t th;
} worker_t;

#define CHUNK 16                 /* reads a worker takes at a time */

/* The read R of batch B as a rec_read_t (views into the arena). */
static void bread_view(const batch_t *b, const bread_t *r, rec_read_t *rd)
{
	rd->id = r->id;
	rd->name = b->arena + r->name;
	rd->comment = b->arena + r->comment;
	rd->seq = b->arena + r->seq;
	rd->qual = r->has_qual ? b->arena + r->qual : NULL;
	rd->name_len = r->name_len;
	rd->comment_len = r->comment_len;
	rd->seq_len = r->seq_len;
}

/*
 * Encode the candidates record of read R (candidates C, N of them) into
 * the worker's buffer E, so that the writer only copies it.  enc_max is
 * what rec_put_cands would reserve (it decides where blocks end).
 */
static void bread_encode(const batch_t *b, bread_t *r, enc_t *e, int w,
		const rec_cand_t *c, uint32_t n)
{
	rec_read_t rd;
	size_t max;

	bread_view(b, r, &rd);
	max = rec_cands_size(&rd, n);
	if (e->used + max > e->cap) {
		e->cap = (e->used + max) * 2;
		if (e->cap < (1 << 20))
			e->cap = 1 << 20;
		e->buf = sp_realloc(e->buf, e->cap);
	}
	r->enc_w = w;
	r->enc_off = e->used;
	r->enc_max = max;
	r->enc_len = rec_cands_encode(e->buf + e->used, &rd, c, n);
	e->used += r->enc_len;
}

/*
 * Cut stage (device path): the patterns of reads I..E-1 of B, into the
 * worker's pbuf; counts the reads and patterns in ST (the finish stage
 * does not cut them again).
 */
static void cut_chunk(worker_t *wk, batch_t *b, size_t i, size_t e, filt_stats_t *st)
{
	pbuf_t *pb = &b->pat[wk->id];

	for (; i < e; i++) {
		bread_t *r = &b->r[i];
		const filt_pat_t *pat;

		r->n_pat = filt_cut(wk->ws, b->arena + r->seq, r->seq_len, &pat, st);
		r->pat_w = wk->id;
		r->pat_off = pb->n;
		if (pb->n + r->n_pat > pb->cap) {
			pb->cap = (pb->n + r->n_pat) * 2 + 1024;
			pb->p = sp_realloc(pb->p, pb->cap * sizeof *pb->p);
		}
		if (r->n_pat)
			memcpy(pb->p + pb->n, pat, r->n_pat * sizeof *pat);
		pb->n += r->n_pat;
	}
}

/*
 * Filter reads I..E-1 of the pool's batch (device path: finish them with
 * the device results) and encode their records.
 */
static void filter_chunk(worker_t *wk, size_t i, size_t e, filt_stats_t *st)
{
	pool_t *p = wk->p;
	batch_t *b = p->b;
	const devset_t *dv = p->dv;
	const filt_run_t *run = p->run;

	for (; i < e; i++) {
		bread_t *r = &b->r[i];
		rec_cand_t *c;
		uint32_t n;

		if (!run->dev) {
			/* software pipeline over the chunk (filt_prefetch) */
			if (i + 2 < e)
				filt_prefetch(wk->ws, b->arena + r[2].seq, r[2].seq_len, 0);
			if (i + 1 < e)
				filt_prefetch(wk->ws, b->arena + r[1].seq, r[1].seq_len, 1);
			n = filt_read(wk->ws, b->arena + r->seq, r->seq_len, &c, st);
		} else {
			/* the patterns the cut stage made, in read order */
			size_t g0 = dv->pstart[i];
			const filt_pat_t *pat = dv->pat + g0;
			uint32_t np = (uint32_t)(dv->pstart[i + 1] - g0), part, j;

			filt_begin(wk->ws);
			for (part = 0; part < p->x->n_part; part++)
				for (j = 0; j < np; j++) {
					uint32_t k = dv->pcnt[part][g0 + j];

					if (run->o.method == FILT_FM) {
						filt_hits_fm(wk->ws, part, dv->hits[part] +
								dv->hoff[part][g0 + j], k / 4, &pat[j], st);
						continue;
					}
					st->matches += k;
					if (!run->o.count_only)
						filt_hits(wk->ws, part, dv->hits[part] + dv->hoff[part][g0 + j],
							k, &pat[j]);
				}
			n = filt_finish(wk->ws, &c, st);
		}
		if (run->guarantee >= 0) {
			filt_sens_t s;

			filt_sensitivity(p->x, &run->o, r->seq_len, &s);
			st->not_guaranteed += s.k_edit < run->guarantee;
		}
		bread_encode(b, r, &b->enc[wk->id], wk->id, c, n);
	}
}

/* A worker of one pool round: cut chunks of p->cut first, then filter chunks of p->b. */
static void *worker_main(void *a)
{
	worker_t *wk = a;
	pool_t *p = wk->p;
	filt_stats_t st;

	memset(&st, 0, sizeof st);
	while (p->cut) {
		size_t i = __atomic_fetch_add(&p->next_cut, CHUNK, __ATOMIC_RELAXED);

		if (i >= p->cut->n)
			break;
		cut_chunk(wk, p->cut, i, i + CHUNK < p->cut->n ? i + CHUNK : p->cut->n, &st);
	}
	while (p->b) {
		size_t i = __atomic_fetch_add(&p->next, CHUNK, __ATOMIC_RELAXED);

		if (i >= p->b->n)
			break;
		filter_chunk(wk, i, i + CHUNK < p->b->n ? i + CHUNK : p->b->n, &st);
	}
	pthread_mutex_lock(&p->lock);
	filt_stats_add(&p->st, &st);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Run one round of the worker pool (p->cut and p->b set by the caller). */
static void pool_round(pool_t *p, worker_t *wk, int nt)
{
	int i;

	p->next = 0;
	p->next_cut = 0;
	for (i = 1; i < nt; i++)
		if (pthread_create(&wk[i].th, NULL, worker_main, &wk[i]) != 0)
			sp_die("cannot start a thread: %s", strerror(errno));
	worker_main(&wk[0]);
	for (i = 1; i < nt; i++)
		pthread_join(wk[i].th, NULL);
}

/* Match stage: gather the patterns of batch B, match them on the device into DV. */
static void dev_batch(const idx_t *x, const filt_run_t *run, const batch_t *b, devset_t *dv)
{
	size_t k;
	uint32_t part;

	if (b->n + 1 > dv->cap_reads) {
		dv->cap_reads = b->n + 1;
		dv->pstart = sp_realloc(dv->pstart, dv->cap_reads * sizeof *dv->pstart);
	}
	dv->n_pat = 0;
	for (k = 0; k < b->n; k++) {
		const bread_t *r = &b->r[k];
		uint32_t np = r->n_pat;

		dv->pstart[k] = dv->n_pat;
		if (dv->n_pat + np > dv->cap_pat) {
			dv->cap_pat = (dv->n_pat + np) * 3 / 2 + 1024;
			dv->pat = sp_realloc(dv->pat, dv->cap_pat * sizeof *dv->pat);
		}
		if (np)
			memcpy(dv->pat + dv->n_pat, b->pat[r->pat_w].p + r->pat_off,
					np * sizeof *dv->pat);
		dv->n_pat += np;
	}
	dv->pstart[b->n] = dv->n_pat;
	for (part = 0; part < x->n_part; part++) {
		dv->pcnt[part] = sp_realloc(dv->pcnt[part], (dv->n_pat + 1) * sizeof **dv->pcnt);
		dv->hoff[part] = sp_realloc(dv->hoff[part], (dv->n_pat + 1) * sizeof **dv->hoff);
		dv->n_hits[part] = 0;
		if (filt_dev_match(run->dev, part, dv->pat, dv->n_pat, dv->pcnt[part],
					dv->hoff[part], &dv->hits[part], &dv->n_hits[part],
					&dv->cap_hits[part]) < 0)
			sp_die("the OpenCL device ran out of memory even for one pattern "
					"(try -d none)");
	}
}

/* The device thread: the match stage of one batch. */
typedef struct {
	const idx_t *x;
	const filt_run_t *run;
	const batch_t *b;
	devset_t *dv;
} devjob_t;

static void *dev_main(void *a)
{
	devjob_t *j = a;

	dev_batch(j->x, j->run, j->b, j->dv);
	return NULL;
}

static void devset_init(devset_t *dv, uint32_t n_part)
{
	memset(dv, 0, sizeof *dv);
	dv->pcnt = sp_calloc(n_part, sizeof *dv->pcnt);
	dv->hoff = sp_calloc(n_part, sizeof *dv->hoff);
	dv->hits = sp_calloc(n_part, sizeof *dv->hits);
	dv->n_hits = sp_calloc(n_part, sizeof *dv->n_hits);
	dv->cap_hits = sp_calloc(n_part, sizeof *dv->cap_hits);
}

static void devset_free(devset_t *dv, uint32_t n_part)
{
	uint32_t part;

	for (part = 0; part < n_part; part++) {
		free(dv->pcnt[part]);
		free(dv->hoff[part]);
		free(dv->hits[part]);
	}
	free(dv->pcnt);
	free(dv->hoff);
	free(dv->hits);
	free(dv->n_hits);
	free(dv->cap_hits);
	free(dv->pat);
	free(dv->pstart);
}

static void print_sens(const idx_t *x, const filt_run_t *run, uint32_t m)
{
	filt_sens_t s;

	filt_sensitivity(x, &run->o, m, &s);
	if (s.n_pat == 0) {
		sp_msg("sensitivity: reads of %u bases are shorter than a pattern "
				"(%u bases): no candidate is guaranteed", m, s.window);
		return;
	}
	sp_msg("sensitivity: reads of %u bases, seed span %u, q %u bases, step %u, "
			"e = %u%s (%s): %u patterns per strand; every occurrence with at most "
			"%d substitutions and at most %d edit operations yields a candidate",
			m, x->p.span, filt_qlen(x, run->o.method, run->o.e), run->o.step,
			run->o.e, run->o.any ? " anywhere in the pattern" : "",
			filt_method_name(run->o.method), s.n_pat, s.k_sub, s.k_edit);
}

/* The reader thread of the triple buffer: reads the next batch. */
typedef struct {
	filt_in_t *in;
	batch_t *b;
	size_t max, n;
	double secs;
} rdjob_t;

static void *reader_main(void *a)
{
	rdjob_t *j = a;
	double t0 = sp_now();

	j->n = read_batch(j->in, j->b, j->max);
	j->secs = sp_now() - t0;
	return NULL;
}

/* The writer thread: the records of one filtered batch, in input order. */
typedef struct {
	rec_writer_t *w;
	batch_t *b;
	double secs;
} wrjob_t;

static void *writer_main(void *a)
{
	wrjob_t *j = a;
	const batch_t *b = j->b;
	double t0 = sp_now();
	size_t k;

	for (k = 0; k < b->n; k++) {
		const bread_t *r = &b->r[k];

		memcpy(rec_begin(j->w, r->enc_max), b->enc[r->enc_w].buf + r->enc_off, r->enc_len);
		rec_commit(j->w, r->enc_len);
	}
	j->secs = sp_now() - t0;
	return NULL;
}

/* Notes on the first batch B: the -v sensitivity statement, the -E warning. */
static void first_batch(const idx_t *x, const filt_run_t *run, const batch_t *b, int said)
{
	if (!said && run->verbose)
		print_sens(x, run, b->r[0].seq_len);
	if (run->guarantee >= 0) {
		filt_sens_t s;

		filt_sensitivity(x, &run->o, b->r[0].seq_len, &s);
		if (s.k_edit < run->guarantee)
			sp_warn("-E %d: reads of %u bases are only guaranteed a candidate "
					"for up to %d edit operations (lower -s, or raise -e with -m bpr)",
					run->guarantee, b->r[0].seq_len, s.k_edit);
	}
}

/*
 * Stage times: read and write are the reader's and the writer's own
 * seconds; filter is the wall time of the pool rounds, each with the
 * device thread's matching beside it (device path: cut, match and finish,
 * overlapped), so reads / filter is the filtering throughput.
 */
void filt_run(const idx_t *x, const filt_run_t *run, filt_in_t *in, rec_writer_t *w,
		filt_stats_t *tot, filt_times_t *tm)
{
	int dev = run->dev != NULL;
	int nb = dev ? 5 : 3;            /* batch buffers */
	long ahead = dev ? 3 : 1;        /* batches the reader is ahead of the pool's filtering */
	batch_t *bb;
	pool_t p;
	worker_t *wk;
	int nt = run->n_threads < 1 ? 1 : run->n_threads, i, writing = 0, eof;
	int said = 0;
	devset_t dv[2];
	long f, n_read;                  /* batches read (none empty); batch k in bb[k % nb] */
	double t0;
	wrjob_t wjob;
	pthread_t wth;

	memset(&p, 0, sizeof p);
	memset(tot, 0, sizeof *tot);
	memset(tm, 0, sizeof *tm);
	pthread_mutex_init(&p.lock, NULL);
	p.x = x;
	p.run = run;
	wk = sp_calloc((size_t)nt, sizeof *wk);
	for (i = 0; i < nt; i++) {
		wk[i].p = &p;
		wk[i].id = i;
		wk[i].ws = filt_ws_new(x, &run->o);
	}
	bb = sp_calloc((size_t)nb, sizeof *bb);
	for (i = 0; i < nb; i++) {
		bb[i].enc = sp_calloc((size_t)nt, sizeof *bb[i].enc);
		if (dev)
			bb[i].pat = sp_calloc((size_t)nt, sizeof *bb[i].pat);
	}
	if (dev) {
		devset_init(&dv[0], x->n_part);
		devset_init(&dv[1], x->n_part);
	}
	if (run->verbose && run->sens_len > 0) {
		print_sens(x, run, run->sens_len);
		said = 1;
	}
	t0 = sp_now();
	n_read = read_batch(in, &bb[0], run->batch) > 0;
	tm->read += sp_now() - t0;
	eof = n_read == 0;
	if (n_read)
		first_batch(x, run, &bb[0], said);
	/*
	 * Step F: the pool filters (device path: finishes) batch F, the writer
	 * writes F-1 and the reader reads F+ahead; device path: the device
	 * thread matches F+1 and the pool cuts F+2 too.  A stage whose batch
	 * does not exist (before 0, past the end) is left out.
	 */
	for (f = n_read ? 1 - ahead : 0; f < n_read; f++) {
		batch_t *bf = f >= 0 ? &bb[f % nb] : NULL;
		long fd = f + 1, fc = f + 2;
		int dev_on = dev && fd >= 0 && fd < n_read;
		double t1;
		rdjob_t job;
		devjob_t djob;
		pthread_t rth, dth;

		if (!eof) {
			job.in = in;
			job.b = &bb[n_read % nb];
			job.max = run->batch;
			job.n = 0;
			job.secs = 0;
			if (pthread_create(&rth, NULL, reader_main, &job) != 0)
				sp_die("cannot start a thread: %s", strerror(errno));
		}
		t1 = sp_now();
		if (dev_on) {
			djob.x = x;
			djob.run = run;
			djob.b = &bb[fd % nb];
			djob.dv = &dv[fd & 1];
			if (pthread_create(&dth, NULL, dev_main, &djob) != 0)
				sp_die("cannot start a thread: %s", strerror(errno));
		}
		p.cut = dev && fc < n_read ? &bb[fc % nb] : NULL;
		p.b = bf;
		p.dv = f >= 0 ? &dv[f & 1] : NULL;
		for (i = 0; i < nt; i++) {
			if (p.cut)
				p.cut->pat[i].n = 0;
			if (bf)
				bf->enc[i].used = 0;
		}
		pool_round(&p, wk, nt);
		if (dev_on)
			pthread_join(dth, NULL);
		tm->filter += sp_now() - t1;
		filt_stats_add(tot, &p.st);
		memset(&p.st, 0, sizeof p.st);
		if (!eof) {
			pthread_join(rth, NULL);
			tm->read += job.secs;
			if (job.n > 0)
				n_read++;
			else
				eof = 1;
		}
		if (!bf)
			continue;
		if (writing) {
			pthread_join(wth, NULL);
			tm->write += wjob.secs;
		}
		wjob.w = w;
		wjob.b = bf;
		wjob.secs = 0;
		if (pthread_create(&wth, NULL, writer_main, &wjob) != 0)
			sp_die("cannot start a thread: %s", strerror(errno));
		writing = 1;
	}
	if (writing) {
		pthread_join(wth, NULL);
		tm->write += wjob.secs;
	}
	for (i = 0; i < nt; i++)
		filt_ws_free(wk[i].ws);
	free(wk);
	if (dev) {
		devset_free(&dv[0], x->n_part);
		devset_free(&dv[1], x->n_part);
	}
	for (i = 0; i < nb; i++) {
		int j;

		for (j = 0; j < nt; j++) {
			free(bb[i].enc[j].buf);
			if (dev)
				free(bb[i].pat[j].p);
		}
		free(bb[i].enc);
		free(bb[i].pat);
		free(bb[i].r);
		free(bb[i].arena);
	}
	free(bb);
	pthread_mutex_destroy(&p.lock);
}
