/*
 * strsort_read.c - strsort's input (strsort_priv.h): files are read into one
 * contiguous arena, every line ending with the delimiter (one is added after
 * a file's unterminated last line).  A single regular file sorted in memory
 * is mapped instead (rd_map), a large one otherwise read by several threads
 * (rd_parallel); with -S the input comes in chunks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sp_thread.h"
#include "strsort_priv.h"
#include "util.h"

#define SS_READ_STEP (16u << 20)
#define SS_READ_PIECE (4u << 20)

/* grow the arena: anonymous memory with huge pages, grown by mremap */
void ss_ch_reserve(ss_chunk *c, size_t extra)
{
	size_t need = c->len + extra + SS_PAD;

	if (need > c->cap) {
		size_t nc = c->cap ? c->cap : (1u << 22);
		void *p;

		while (nc < need)
			nc = nc + nc / 2;
		nc = (nc + (1u << 21) - 1) & ~(size_t)((1u << 21) - 1);
		if (!c->buf) {
			p = mmap(NULL, nc, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		} else {
			p = mremap(c->buf, c->cap, nc, MREMAP_MAYMOVE);
		}
		if (p == MAP_FAILED)
			sp_die("out of memory (%zu bytes)", nc);
#ifdef MADV_HUGEPAGE
		madvise(p, nc, MADV_HUGEPAGE);
#endif
		c->buf = p;
		c->cap = nc;
	}
}

void ss_ch_free_buf(ss_chunk *c)
{
	if (c->buf)
		munmap(c->buf, c->cap);
	c->buf = NULL;
	c->cap = c->len = 0;
}

static int rd_map(ss_reader *r, ss_chunk *c);

/*
 * Map a lone file (no copy, no fresh memory), or read it into huge pages
 * with many threads.  Measured on the H200 machine's 16 cores, 1 GiB of
 * random lines, -j 16 (-v): the copy took 0.04 s and gained a little more
 * back: split 0.177 s against 0.203 s, write 0.19 s against 0.22 s (the
 * random reads of the emit: huge pages against the mapping's 4 KiB ones, a
 * TLB miss a line), free 0.006 s against 0.02 s.  With few threads the
 * copy's CPU time (0.5 s a GiB) counts for more: mapped below
 * SS_READ_THREADS.
 * SEEDPIPE_STRSORT_MAP=1 maps, =0 reads (for tests and benchmarks).
 */
#define SS_READ_THREADS 8

static int map_wanted(int nthreads)
{
	const char *e = getenv("SEEDPIPE_STRSORT_MAP");

	if (e && strcmp(e, "0") == 0)
		return 0;
	if (e && strcmp(e, "1") == 0)
		return 1;
	return nthreads < SS_READ_THREADS;
}

static int rd_open_next(ss_reader *r, ss_chunk *c)
{
	struct stat st;

	if (r->cur >= r->nfiles) {
		r->done = 1;
		return 0;
	}
	r->name = r->files[r->cur];
	if (strcmp(r->name, "-") == 0) {
		r->fd = 0;
	} else if ((r->fd = open(r->name, O_RDONLY)) < 0) {
		return sp_fail("cannot read '%s': %s", r->name, strerror(errno));
	}
	r->any = 0;
	r->last = r->delim;
	r->size = 0;
	if (fstat(r->fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && c) {
		r->size = (size_t)st.st_size;
		/* a lone regular file read whole (no -S): map it */
		if (!r->want && r->nfiles == 1 && map_wanted(r->nthreads) && rd_map(r, c))
			return 0;
		ss_ch_reserve(c, (size_t)st.st_size + 1);
	}
#ifdef POSIX_FADV_SEQUENTIAL
	posix_fadvise(r->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
	return 0;
}

/*
 * The whole input is one regular file: map it (private, so the one byte a
 * missing last delimiter needs can be written) instead of copying it.  The
 * pages are the page cache's: nothing is copied and no fresh memory is
 * zeroed (on a virtual machine, first-touch faults of fresh memory cost
 * more than the sort).  The mapping sits in an anonymous reservation that
 * supplies the SS_PAD bytes past the end.  Returns 1 when mapped.
 */
static int rd_map(ss_reader *r, ss_chunk *c)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), size = r->size, cap;
	uint8_t *p;

	/* (a descriptor not at its start, e.g. a shared stdin, is read as usual) */
	if (c->buf || c->len || size == 0 || size > SIZE_MAX / 2 || lseek(r->fd, 0, SEEK_CUR) != 0)
		return 0;
	cap = (size + 1 + SS_PAD + pg - 1) / pg * pg;
	p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 0;
	if (mmap(p, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, r->fd, 0) == MAP_FAILED) {
		munmap(p, cap);
		return 0;
	}
#ifdef MADV_WILLNEED
	madvise(p, size, MADV_WILLNEED);
#endif
	c->buf = p;
	c->cap = cap;
	c->len = size;
	/* all read: the end of input, as in rd_fill */
	if (p[size - 1] != r->delim)
		c->buf[c->len++] = (uint8_t)r->delim;
	if (r->fd != 0)
		close(r->fd);
	r->fd = -1;
	r->any = 1;
	r->cur++;
	r->done = 1;
	if (r->verbose)
		sp_msg("'%s' mapped (%zu bytes)", r->name, size);
	return 1;
}

/* reading a regular file in parallel with pread, SS_READ_PIECE bytes a piece */
typedef struct {
	int fd;
	const char *name;
	uint8_t *dst;
	off_t at;
	size_t n, *got;
} pread_ctx;

/* bytes [lo, hi) of piece I */
static void piece(const pread_ctx *p, size_t i, size_t *lo, size_t *hi)
{
	*lo = i * SS_READ_PIECE;
	*hi = p->n - *lo < SS_READ_PIECE ? p->n : *lo + SS_READ_PIECE;
}

static int pread_piece(void *arg, size_t i, int tid)
{
	pread_ctx *p = arg;
	size_t lo, hi, k;

	(void)tid;
	piece(p, i, &lo, &hi);
	for (k = lo; k < hi;) {
		ssize_t r = pread(p->fd, p->dst + k, hi - k, p->at + (off_t)k);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return sp_fail("cannot read '%s': %s", p->name, strerror(errno));
		if (r == 0)
			break;
		k += (size_t)r;
	}
	p->got[i] = k - lo;
	return 0;
}

/*
 * Read the whole of a large regular file with nthreads threads (the copy
 * and the page faults of a fresh arena are the cost; both spread).  Returns
 * the bytes appended to c, whole pieces from the start only, with the file
 * offset moved past them; the caller reads on to the end as usual.  -1 on
 * a read error.
 */
static ssize_t rd_parallel(ss_reader *r, ss_chunk *c)
{
	pread_ctx p;
	off_t at = lseek(r->fd, 0, SEEK_CUR);
	size_t total = 0, np, i, lo, hi;

	if (at < 0 || (size_t)at >= r->size)
		return 0;
	memset(&p, 0, sizeof p);
	p.fd = r->fd;
	p.name = r->name;
	p.at = at;
	p.n = r->size - (size_t)at;
	np = (p.n + SS_READ_PIECE - 1) / SS_READ_PIECE;
	p.got = sp_calloc(np, sizeof *p.got);
	ss_ch_reserve(c, p.n + 1);
	p.dst = c->buf + c->len;
	if (sp_for(r->nthreads, np, 1, pread_piece, &p) < 0) {
		free(p.got);
		return -1;
	}
	for (i = 0; i < np; i++) {
		piece(&p, i, &lo, &hi);
		total += p.got[i];
		if (p.got[i] < hi - lo)
			break;
	}
	free(p.got);
	if (r->verbose)
		sp_msg("'%s' read in %zu pieces by %d threads (%zu bytes)", r->name, np,
			r->nthreads, total);
	if (lseek(r->fd, at + (off_t)total, SEEK_SET) < 0)
		return 0;
	if (total) {
		r->any = 1;
		r->last = c->buf[c->len + total - 1];
		c->len += total;
	}
	return (ssize_t)total;
}

void ss_rd_init(ss_reader *r, const ss_opts *o, char **files, int nfiles, size_t want)
{
	memset(r, 0, sizeof *r);
	r->files = files;
	r->nfiles = nfiles;
	r->fd = -1;
	r->delim = ss_delim(o);
	r->nthreads = o->nthreads < 1 ? 1 : o->nthreads;
	r->want = want;
	r->verbose = o->verbose;
}

int ss_rd_fill(ss_reader *r, ss_chunk *c)
{
	size_t want = r->want;
	int seen = 0;

	for (;;) {
		ssize_t k;
		size_t step;

		if (r->done)
			return 0;
		if (want && c->len >= want && seen)
			return 0;
		if (r->fd < 0) {
			if (rd_open_next(r, c) < 0)
				return -1;
			if (r->fd >= 0 && !want && r->nthreads > 1 && r->size >= (8u << 20) &&
			    rd_parallel(r, c) < 0)
				return -1;
			continue;
		}
		step = SS_READ_STEP;
		if (want)
			step = c->len < want ? (want - c->len < step ? want - c->len : step) : (1u << 16);
		ss_ch_reserve(c, step);
		if (!want)
			step = c->cap - c->len - SS_PAD;
		k = read(r->fd, c->buf + c->len, step);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return sp_fail("cannot read '%s': %s", r->name, strerror(errno));
		}
		if (k == 0) {
			if (r->fd != 0)
				close(r->fd);
			r->fd = -1;
			if (r->any && r->last != r->delim) {
				ss_ch_reserve(c, 1);
				c->buf[c->len++] = (uint8_t)r->delim;
			}
			seen |= r->any;
			r->cur++;
			if (r->cur >= r->nfiles)
				r->done = 1;
			continue;
		}
		if (want && !seen && memchr(c->buf + c->len, r->delim, (size_t)k))
			seen = 1;
		r->any = 1;
		r->last = c->buf[c->len + (size_t)k - 1];
		c->len += (size_t)k;
	}
}
