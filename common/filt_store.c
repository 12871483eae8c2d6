/*
 * filt_store.c - seedfilt -M: the candidates of a batch's reads kept from
 * pass to pass (filt.h).  Each thread appends to its own stream; a stream
 * holds its newest MEM bytes in memory and writes each full buffer to one
 * temporary file of -T at a place reserved by an atomic add, so reads from
 * any thread (pread) find a byte at a computable place:
 *
 *   stream bytes [j*MEM, (j+1)*MEM) with j < flushed  ->  file at seg[j]
 *   stream bytes [flushed*MEM, used)                   ->  buf
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "filt.h"
#include "sp_tmp.h"
#include "util.h"

typedef struct {
	SP_LINE_ALIGNED uint8_t *buf;
	size_t used;              /* bytes in buf */
	uint64_t *seg;            /* file offset of each flushed buffer */
	size_t n_seg, cap_seg;
} stream_t;

struct filt_store {
	int nt;
	size_t mem;
	const char *dir, *dir_used;
	int fd;
	sp_tmp_t *tmp;
	uint64_t file_len;        /* reserved by atomic add */
	uint64_t spilled;
	uint64_t rounds;          /* resets: rounds of passes */
	stream_t *st;
};

filt_store_t *filt_store_new(int nt, size_t mem, const char *tmp_dir)
{
	filt_store_t *s = sp_calloc(1, sizeof *s);
	int t;

	s->nt = nt;
	s->mem = mem < sizeof(rec_cand_t) ? sizeof(rec_cand_t) : mem / sizeof(rec_cand_t) * sizeof(rec_cand_t);
	s->dir = tmp_dir;
	s->fd = -1;
	s->st = sp_calloc_lines((size_t)nt, sizeof *s->st);
	for (t = 0; t < nt; t++)
		s->st[t].buf = sp_malloc(s->mem);
	return s;
}

void filt_store_reset(filt_store_t *s)
{
	int t;

	for (t = 0; t < s->nt; t++) {
		s->st[t].used = 0;
		s->st[t].n_seg = 0;
	}
	s->file_len = 0;
	s->rounds++;
}

uint64_t filt_store_rounds(const filt_store_t *s)
{
	return s->rounds;
}

/* The directory of the temporary file: -T, else $TMPDIR, else /tmp. */
static const char *store_dir(const filt_store_t *s)
{
	const char *d = s->dir;

	if (!d || !*d)
		d = getenv("TMPDIR");
	return d && *d ? d : "/tmp";
}

/* The temporary file, made on the first spill (one thread at a time: under the caller's lock). */
static int open_file(filt_store_t *s)
{
	const char *d = store_dir(s);
	char pre[4096];

	if (s->fd >= 0)
		return 0;
	s->dir_used = d;
	snprintf(pre, sizeof pre, "%s/seedfilt.", d);
	s->fd = sp_tmp_create(pre, &s->tmp);
	if (s->fd < 0)
		return sp_fail("cannot create the temporary file '%sXXXXXX' (seedfilt -T %s): %s", pre, d,
				strerror(errno));
	return 0;
}

static pthread_mutex_t open_mu = PTHREAD_MUTEX_INITIALIZER;

/* Write stream T's full buffer to the file. */
static int flush(filt_store_t *s, stream_t *st)
{
	uint64_t at;
	size_t done = 0;

	pthread_mutex_lock(&open_mu);
	if (open_file(s) < 0) {
		pthread_mutex_unlock(&open_mu);
		return -1;
	}
	pthread_mutex_unlock(&open_mu);
	at = __atomic_fetch_add(&s->file_len, s->mem, __ATOMIC_RELAXED);
	while (done < s->mem) {
		ssize_t w = pwrite(s->fd, st->buf + done, s->mem - done, (off_t)(at + done));

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return sp_fail("cannot write the temporary file '%s' (seedfilt -T %s): %s", s->tmp->path,
					s->dir_used, w < 0 ? strerror(errno) : "no space left");
		done += (size_t)w;
	}
	__atomic_fetch_add(&s->spilled, s->mem, __ATOMIC_RELAXED);
	if (st->n_seg == st->cap_seg) {
		st->cap_seg = st->cap_seg ? 2 * st->cap_seg : 16;
		st->seg = sp_realloc(st->seg, st->cap_seg * sizeof *st->seg);
	}
	st->seg[st->n_seg++] = at;
	st->used = 0;
	return 0;
}

/* flush() as an sp_flush_fn: the store and one of its streams. */
typedef struct {
	filt_store_t *s;
	stream_t *st;
} flush_arg_t;

static int flush_full(void *ctx)
{
	flush_arg_t *a = ctx;

	return flush(a->s, a->st);
}

int filt_store_put(filt_store_t *s, int tid, const rec_cand_t *c, uint32_t n, uint64_t *off)
{
	stream_t *st = &s->st[tid];
	flush_arg_t a = { s, st };

	*off = (uint64_t)st->n_seg * s->mem + st->used;
	return sp_buf_put(st->buf, s->mem, &st->used, c, (size_t)n * sizeof *c, flush_full, &a);
}

int filt_store_get(filt_store_t *s, int tid, uint64_t off, uint32_t n, rec_cand_t *out)
{
	const stream_t *st = &s->st[tid];
	uint8_t *p = (uint8_t *)out;
	size_t len = (size_t)n * sizeof *out;

	while (len) {
		uint64_t j = off / s->mem, in = off % s->mem;
		size_t k = s->mem - in < len ? (size_t)(s->mem - in) : len;

		if (j < st->n_seg) {
			size_t done = 0;

			while (done < k) {
				ssize_t r = pread(s->fd, p + done, k - done, (off_t)(st->seg[j] + in + done));

				if (r < 0 && errno == EINTR)
					continue;
				if (r <= 0)
					return sp_fail("cannot read the temporary file '%s': %s", s->tmp->path,
							r < 0 ? strerror(errno) : "truncated");
				done += (size_t)r;
			}
		} else {
			memcpy(p, st->buf + in, k);
		}
		p += k;
		off += k;
		len -= k;
	}
	return 0;
}

uint64_t filt_store_spilled(const filt_store_t *s)
{
	return s->spilled;
}

uint64_t filt_store_bytes(const filt_store_t *s)
{
	uint64_t n = 0;
	int t;

	for (t = 0; t < s->nt; t++)
		n += (uint64_t)s->st[t].n_seg * s->mem + s->st[t].used;
	return n;
}

uint64_t filt_store_room(const filt_store_t *s)
{
	const char *d = store_dir(s), *e = getenv("SEEDPIPE_DEBUG_TMP_ROOM");
	uint64_t mem = (uint64_t)s->nt * s->mem, room;
	struct statvfs v;
	struct stat st;

	if (e && *e)   /* tests: a small file system (bytes) */
		return mem + strtoull(e, NULL, 10);
	if (statvfs(d, &v) != 0)
		return UINT64_MAX;   /* unknown: a write error will say so */
	room = (uint64_t)v.f_bavail * v.f_frsize / 2;
	/* the file is reused from its start: what it holds is room too */
	if (s->fd >= 0 && fstat(s->fd, &st) == 0)
		room += (uint64_t)st.st_blocks * 512;
	return mem + room;
}

void filt_store_free(filt_store_t *s)
{
	int t;

	if (!s)
		return;
	for (t = 0; t < s->nt; t++) {
		free(s->st[t].buf);
		free(s->st[t].seg);
	}
	free(s->st);
	if (s->fd >= 0) {
		close(s->fd);
		sp_tmp_remove(s->tmp);
	}
	free(s);
}
