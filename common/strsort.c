/*
 * strsort.c - line sorting for the strsort tool (see strsort.h).
 *
 * Flow: input files are read into one contiguous arena (every line ends
 * with the delimiter; one is added after a file's unterminated last line;
 * a single regular file sorted in memory is mapped instead, see rd_map),
 * line starts are found with memchr in parallel slices, the span of the
 * first key of every line is computed once, and the lines are ordered by
 * the msd.h radix sort on 16-byte entries (8 cached key bytes, index,
 * length).  The strings never move.  Two shapes are found from a sample
 * and confirmed by the scan that counts the lines (else the plain entries
 * are made): keys of at most 16 distinct bytes get packed prefixes (msd.h,
 * sp_msd_pack; DNA 32-mers are then ordered by the entries alone and
 * written back from them), and a prefix that every key shares is skipped
 * (the entries cache the bytes after it).  A reversed first key reverses the order
 * of the groups of equal keys (keeping each group in input order, as a
 * stable sort must); further keys are a stable merge sort inside the groups;
 * a numeric first key is a stable merge sort of the whole.  Output gathers
 * lines into large blocks written with write(2).
 *
 * With -S, input is read in chunks of at most a third of it; each chunk is
 * sorted and written to a run file in -T, and the runs are merged (k-way,
 * loser tree, at most SS_MERGE_WAYS at once; ties go to the earlier run so
 * the result stays stable).  Temporary files are registered in a list that
 * ss_cleanup_temps() (called at exit and from the SIGINT/SIGTERM handler)
 * removes.  -o FILE is written to a temporary file next to FILE and renamed
 * over it at the end, so a failed write (ENOSPC) leaves FILE, which may be
 * an input, as it was.
 */
#include "strsort.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "strsort_priv.h"
#include "util.h"

#define SS_MERGE_WAYS 64
#define SS_OUTBUF (4u << 20)
#define SS_READ_STEP (16u << 20)
/* readable bytes after the arena's last line: SP_MSD_PAD for the radix
 * loads, and whole 16-byte vectors for the packed loads (sp_msd_pack) */
#define SS_PAD 64

/* ---- keys ------------------------------------------------------------- */

static const char *parse_count(const char *s, size_t *v)
{
	size_t x = 0;

	if (*s < '0' || *s > '9')
		return NULL;
	for (; *s >= '0' && *s <= '9'; s++) {
		size_t d = (size_t)(*s - '0');

		x = x > (SIZE_MAX - d) / 10 ? SIZE_MAX : x * 10 + d;
	}
	*v = x;
	return s;
}

static const char *parse_flags(const char *s, ss_key *k, int start, const char **why)
{
	for (; *s; s++) {
		switch (*s) {
		case 'b':
			if (start)
				k->skipsb = 1;
			else
				k->skipeb = 1;
			break;
		case 'n':
			k->numeric = 1;
			break;
		case 'r':
			k->reverse = 1;
			break;
		case ',':
		case '.':
			return s;
		default:
			if (strchr("dfghiMRV", *s)) {
				*why = "unsupported ordering option (only b, n and r are)";
				return NULL;
			}
			return s;
		}
	}
	return s;
}

int ss_parse_key(const char *s, ss_key *k, const char **why)
{
	memset(k, 0, sizeof *k);
	if (!(s = parse_count(s, &k->sword))) {
		*why = "invalid number at field start";
		return -1;
	}
	if (k->sword-- == 0) {
		*why = "field number is zero";
		return -1;
	}
	if (*s == '.') {
		if (!(s = parse_count(s + 1, &k->schar))) {
			*why = "invalid number after '.'";
			return -1;
		}
		if (k->schar-- == 0) {
			*why = "character offset is zero";
			return -1;
		}
	}
	if (!(k->sword || k->schar))
		k->sword = SS_NONE;
	if (!(s = parse_flags(s, k, 1, why)))
		return -1;
	if (*s != ',') {
		k->eword = SS_NONE;
		k->echar = 0;
	} else {
		if (!(s = parse_count(s + 1, &k->eword))) {
			*why = "invalid number after ','";
			return -1;
		}
		if (k->eword-- == 0) {
			*why = "field number is zero";
			return -1;
		}
		if (*s == '.' && !(s = parse_count(s + 1, &k->echar))) {
			*why = "invalid number after '.'";
			return -1;
		}
		if (!(s = parse_flags(s, k, 0, why)))
			return -1;
	}
	if (*s) {
		*why = "stray character in field spec";
		return -1;
	}
	return 0;
}

void ss_finish_keys(ss_opts *o)
{
	int i;

	for (i = 0; i < o->nkeys; i++) {
		ss_key *k = &o->keys[i];

		if (!(k->skipsb || k->skipeb || k->numeric) && !k->reverse) {
			k->skipsb = k->skipeb = o->blanks;
			k->numeric = o->numeric;
			k->reverse = o->reverse;
		}
	}
	if (o->nkeys == 0) {
		/* the whole line as one key, with the global flags */
		o->keys = sp_calloc(1, sizeof *o->keys);
		o->nkeys = 1;
		o->keys[0].sword = o->keys[0].eword = SS_NONE;
		o->keys[0].skipsb = o->keys[0].skipeb = o->blanks;
		o->keys[0].numeric = o->numeric;
		o->keys[0].reverse = o->reverse;
	}
}

/* blanks as GNU sort has them in the C locale: space, tab, newline */
static inline int is_blank(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

/* the key span [*kb, *ke) of line [t, t+len) (GNU sort's begfield/limfield) */
static void key_span(const ss_key *k, int tab, const uint8_t *t, size_t len,
		const uint8_t **kb, const uint8_t **ke)
{
	const uint8_t *ptr, *lim = t + len, *beg, *end;

	/* begfield */
	ptr = t;
	if (k->sword != SS_NONE) {
		size_t sword = k->sword;

		if (tab >= 0) {
			while (ptr < lim && sword--) {
				while (ptr < lim && *ptr != tab)
					++ptr;
				if (ptr < lim)
					++ptr;
			}
		} else {
			while (ptr < lim && sword--) {
				while (ptr < lim && is_blank(*ptr))
					++ptr;
				while (ptr < lim && !is_blank(*ptr))
					++ptr;
			}
		}
		if (k->skipsb)
			while (ptr < lim && is_blank(*ptr))
				++ptr;
		ptr = (size_t)(lim - ptr) < k->schar ? lim : ptr + k->schar;
	} else if (k->skipsb) {
		while (ptr < lim && is_blank(*ptr))
			++ptr;
	}
	beg = ptr;
	/* limfield */
	if (k->eword == SS_NONE) {
		end = lim;
	} else {
		size_t eword = k->eword, echar = k->echar;

		ptr = t;
		if (echar == 0)
			eword++;
		if (tab >= 0) {
			while (ptr < lim && eword--) {
				while (ptr < lim && *ptr != tab)
					++ptr;
				if (ptr < lim && (eword || echar))
					++ptr;
			}
		} else {
			while (ptr < lim && eword--) {
				while (ptr < lim && is_blank(*ptr))
					++ptr;
				while (ptr < lim && !is_blank(*ptr))
					++ptr;
			}
		}
		if (echar != 0) {
			if (k->skipeb)
				while (ptr < lim && is_blank(*ptr))
					++ptr;
			ptr = (size_t)(lim - ptr) < echar ? lim : ptr + echar;
		}
		end = ptr;
	}
	if (end < beg)
		end = beg;
	*kb = beg;
	*ke = end;
}

/*
 * ---- numbers: gnulib strnumcmp-in.h as GNU sort runs it in the C locale.
 * The C locale has no thousands separator, and sort then passes NON_CHAR
 * (CHAR_MAX + 1 = 128), so byte 0x80 acts as one: "1\x80000" is 1000 to
 * GNU sort -n, and strsort matches it byte for byte.
 */
#define TSEP 0x80

#define NC(p, e) ((p) < (e) ? *(p) : 0)
#define ISDIG(c) ((unsigned)(c) - '0' < 10)

static int fraccmp(const uint8_t *a, const uint8_t *ae, const uint8_t *b, const uint8_t *be)
{
	if (NC(a, ae) == '.' && NC(b, be) == '.') {
		for (;;) {
			uint8_t ca, cb;

			++a;
			++b;
			ca = NC(a, ae);
			cb = NC(b, be);
			if (ca != cb)
				break;
			if (!ISDIG(ca))
				return 0;
		}
		if (ISDIG(NC(a, ae)) && ISDIG(NC(b, be)))
			return (int)NC(a, ae) - (int)NC(b, be);
		if (ISDIG(NC(a, ae)))
			goto a_trailing_nonzero;
		if (ISDIG(NC(b, be)))
			goto b_trailing_nonzero;
		return 0;
	} else if (NC(a, ae) == '.') {
		a++;
a_trailing_nonzero:
		while (NC(a, ae) == '0')
			a++;
		return ISDIG(NC(a, ae));
	} else if (NC(b, be) == '.') {
		b++;
b_trailing_nonzero:
		while (NC(b, be) == '0')
			b++;
		return -ISDIG(NC(b, be));
	}
	return 0;
}

int ss_numcmp(const uint8_t *a, const uint8_t *ae, const uint8_t *b, const uint8_t *be)
{
	uint8_t ta, tb;
	size_t la, lb;
	int tmp;

	while (a < ae && is_blank(*a))
		a++;
	while (b < be && is_blank(*b))
		b++;
	ta = NC(a, ae);
	tb = NC(b, be);
	if (ta == '-') {
		do
			ta = (++a, NC(a, ae));
		while (ta == '0' || ta == TSEP);
		if (tb != '-') {
			if (ta == '.')
				do
					ta = (++a, NC(a, ae));
				while (ta == '0');
			if (ISDIG(ta))
				return -1;
			while (tb == '0' || tb == TSEP)
				tb = (++b, NC(b, be));
			if (tb == '.')
				do
					tb = (++b, NC(b, be));
				while (tb == '0');
			return -ISDIG(tb);
		}
		do
			tb = (++b, NC(b, be));
		while (tb == '0' || tb == TSEP);
		while (ta == tb && ISDIG(ta)) {
			do
				ta = (++a, NC(a, ae));
			while (ta == TSEP);
			do
				tb = (++b, NC(b, be));
			while (tb == TSEP);
		}
		if ((ta == '.' && !ISDIG(tb)) || (tb == '.' && !ISDIG(ta)))
			return fraccmp(b, be, a, ae);
		tmp = (int)tb - (int)ta;
		for (la = 0; ISDIG(ta); ++la)
			do
				ta = (++a, NC(a, ae));
			while (ta == TSEP);
		for (lb = 0; ISDIG(tb); ++lb)
			do
				tb = (++b, NC(b, be));
			while (tb == TSEP);
		if (la != lb)
			return la < lb ? 1 : -1;
		if (!la)
			return 0;
		return tmp;
	} else if (tb == '-') {
		do
			tb = (++b, NC(b, be));
		while (tb == '0' || tb == TSEP);
		if (tb == '.')
			do
				tb = (++b, NC(b, be));
			while (tb == '0');
		if (ISDIG(tb))
			return 1;
		while (ta == '0' || ta == TSEP)
			ta = (++a, NC(a, ae));
		if (ta == '.')
			do
				ta = (++a, NC(a, ae));
			while (ta == '0');
		return ISDIG(ta);
	}
	while (ta == '0' || ta == TSEP)
		ta = (++a, NC(a, ae));
	while (tb == '0' || tb == TSEP)
		tb = (++b, NC(b, be));
	while (ta == tb && ISDIG(ta)) {
		do
			ta = (++a, NC(a, ae));
		while (ta == TSEP);
		do
			tb = (++b, NC(b, be));
		while (tb == TSEP);
	}
	if ((ta == '.' && !ISDIG(tb)) || (tb == '.' && !ISDIG(ta)))
		return fraccmp(a, ae, b, be);
	tmp = (int)ta - (int)tb;
	for (la = 0; ISDIG(ta); ++la)
		do
			ta = (++a, NC(a, ae));
		while (ta == TSEP);
	for (lb = 0; ISDIG(tb); ++lb)
		do
			tb = (++b, NC(b, be));
		while (tb == TSEP);
	if (la != lb)
		return la < lb ? -1 : 1;
	if (!la)
		return 0;
	return tmp;
}

/* compare lines a and b (without delimiters) on keys [k0, nkeys) */
static int cmp_lines(const ss_opts *o, int k0, const uint8_t *a, size_t la,
		const uint8_t *b, size_t lb)
{
	int i;

	for (i = k0; i < o->nkeys; i++) {
		const ss_key *k = &o->keys[i];
		const uint8_t *ab, *ae, *bb, *be;
		int c;

		key_span(k, o->tab, a, la, &ab, &ae);
		key_span(k, o->tab, b, lb, &bb, &be);
		if (k->numeric) {
			c = ss_numcmp(ab, ae, bb, be);
		} else {
			size_t na = (size_t)(ae - ab), nb = (size_t)(be - bb);

			c = memcmp(ab, bb, na < nb ? na : nb);
			if (!c)
				c = na < nb ? -1 : na > nb;
		}
		if (c)
			return k->reverse ? (c < 0 ? 1 : -1) : c;
	}
	return 0;
}

/* ---- temporary files ---------------------------------------------------- */

static temp_node *_Atomic temps;

void ss_cleanup_temps(void)
{
	temp_node *t;

	for (t = atomic_load(&temps); t; t = t->next) {
		if (t->live) {
			t->live = 0;
			unlink(t->path);
		}
	}
}

static void on_signal(int sig)
{
	ss_cleanup_temps();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install_cleanup(void)
{
	static int done;
	struct sigaction sa;
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	size_t i;

	if (done)
		return;
	done = 1;
	atexit(ss_cleanup_temps);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof sigs / sizeof *sigs; i++) {
		struct sigaction old;

		/* keep a signal ignored if it was (nohup, background jobs) */
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		sigaction(sigs[i], &sa, NULL);
	}
}

/* make a temporary file "DIR/PREFIXXXXXXX" registered for removal */
static int temp_create(const char *dir, const char *prefix, temp_node **node)
{
	size_t n = strlen(dir) + strlen(prefix) + 16;
	temp_node *t = sp_malloc(sizeof *t + n);
	sigset_t all, old;
	int fd;

	install_cleanup();
	snprintf(t->path, n, "%s/%sXXXXXX", dir, prefix);
	t->live = 0;
	/* no signal between the file's creation and its registration */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	fd = mkstemp(t->path);
	if (fd >= 0) {
		t->live = 1;
		t->next = atomic_load(&temps);
		atomic_store(&temps, t);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (fd < 0) {
		int e = errno;

		sp_msg("cannot create a temporary file in '%s': %s", dir, strerror(e));
		free(t);
		return -1;
	}
	*node = t;
	return fd;
}

static void temp_remove(temp_node *t)
{
	if (t && t->live) {
		t->live = 0;
		unlink(t->path);
	}
}

/* ---- output ----------------------------------------------------------- */

typedef struct {
	int fd;
	const char *name;   /* for messages */
	uint8_t *buf;
	size_t len, cap;
	int failed;
} writer;

static void wr_init(writer *w, int fd, const char *name)
{
	w->fd = fd;
	w->name = name;
	w->cap = SS_OUTBUF;
	w->buf = sp_malloc(w->cap);
	w->len = 0;
	w->failed = 0;
}

static int wr_raw(writer *w, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t r = write(w->fd, p, n > (1u << 30) ? (1u << 30) : n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EPIPE) {
				ss_cleanup_temps();
				exit(SP_EXIT_OK);
			}
			sp_msg("cannot write '%s': %s", w->name, strerror(errno));
			w->failed = 1;
			return -1;
		}
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static int wr_flush(writer *w)
{
	int r = 0;

	if (w->len && !w->failed)
		r = wr_raw(w, w->buf, w->len);
	w->len = 0;
	return w->failed ? -1 : r;
}

static inline int wr_put(writer *w, const uint8_t *p, size_t n)
{
	if (w->len + n > w->cap) {
		if (wr_flush(w) < 0)
			return -1;
		if (n > w->cap)
			return wr_raw(w, p, n);
	}
	memcpy(w->buf + w->len, p, n);
	w->len += n;
	return 0;
}

static void wr_free(writer *w)
{
	free(w->buf);
	w->buf = NULL;
}

/* ---- input ------------------------------------------------------------ */

typedef struct {
	uint8_t *buf;          /* the arena; SS_PAD readable bytes after len */
	size_t len, cap;
	uint64_t *loff;        /* n + 1 line starts; loff[n] = len */
	size_t n;
	uint64_t *koff;        /* first-key starts (== loff for whole lines) */
	uint32_t *klen;        /* first-key lengths (NULL when the key is the line) */
	sp_msd_ent *ents;      /* radix sort entries, then the order in place */
	uint32_t *order;       /* sorted line numbers (in ents, or its own array) */
	int direct;            /* one radix-sorted key, arena < 4 GiB: an entry's
	                        * idx is its key's offset, and there is no loff */
	int keyw;              /* the first key is the whole line */
	size_t *ends;          /* direct entries scattered by their first 16 key
	                        * bits: the 65536 bucket ends, or NULL */
	int packed;            /* direct entries cache packed prefixes (pk) */
	sp_msd_pack pk;
	size_t depth0;         /* direct entries: every key starts with the same
	                        * depth0 bytes, and prefixes are cached from there */
	int unpack;            /* packed whole lines: a line no longer than a
	                        * prefix is written from its entry */
} chunk;

typedef struct {
	char **files;
	int nfiles, cur;       /* cur: the file being read */
	int fd;                /* -1: none open */
	const char *name;
	int any, last;         /* the open file gave bytes; its last byte */
	int done;
	int delim;
	int nthreads;          /* for reading a large regular file in parallel */
	size_t size;           /* st_size of the open file if regular, else 0 */
	size_t want;           /* the chunk size (-S), or 0: all input at once */
} reader;

/* grow the arena: anonymous memory with huge pages, grown by mremap */
static void ch_reserve(chunk *c, size_t extra)
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

static void ch_free_buf(chunk *c)
{
	if (c->buf)
		munmap(c->buf, c->cap);
	c->buf = NULL;
	c->cap = c->len = 0;
}

static int rd_map(reader *r, chunk *c);

static int rd_open_next(reader *r, chunk *c)
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
		sp_msg("cannot read '%s': %s", r->name, strerror(errno));
		return -1;
	}
	r->any = 0;
	r->last = r->delim;
	r->size = 0;
	if (fstat(r->fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && c) {
		r->size = (size_t)st.st_size;
		/* a lone regular file read whole (no -S): map it */
		if (!r->want && r->nfiles == 1 && rd_map(r, c))
			return 0;
		ch_reserve(c, (size_t)st.st_size + 1);
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
static int rd_map(reader *r, chunk *c)
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
	return 1;
}

/* reading slices of a regular file in parallel with pread */
typedef struct {
	int fd, nthreads, err;
	uint8_t *dst;
	off_t at;
	size_t n, got[64];
} pread_ctx;

static void pread_worker(void *arg, int tid)
{
	pread_ctx *p = arg;
	size_t lo = p->n * (size_t)tid / (size_t)p->nthreads;
	size_t hi = p->n * (size_t)(tid + 1) / (size_t)p->nthreads, k = lo;

	while (k < hi) {
		ssize_t r = pread(p->fd, p->dst + k, hi - k, p->at + (off_t)k);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			p->err = errno;
			break;
		}
		if (r == 0)
			break;
		k += (size_t)r;
	}
	p->got[tid] = k - lo;
}

/*
 * Read the whole of a large regular file with nthreads threads (the copy
 * and the page faults of a fresh arena are the cost; both spread).  Returns
 * the bytes appended to c, whole slices from the start only, with the file
 * offset moved past them; the caller reads on to the end as usual.
 */
static ssize_t rd_parallel(reader *r, chunk *c)
{
	pread_ctx p;
	off_t at = lseek(r->fd, 0, SEEK_CUR);
	size_t total = 0;
	int t;

	if (at < 0 || (size_t)at >= r->size)
		return 0;
	memset(&p, 0, sizeof p);
	p.fd = r->fd;
	p.nthreads = r->nthreads > 64 ? 64 : r->nthreads;
	p.at = at;
	p.n = r->size - (size_t)at;
	ch_reserve(c, p.n + 1);
	p.dst = c->buf + c->len;
	sp_par_run(p.nthreads, pread_worker, &p);
	if (p.err) {
		sp_msg("cannot read '%s': %s", r->name, strerror(p.err));
		return -1;
	}
	for (t = 0; t < p.nthreads; t++) {
		size_t lo = p.n * (size_t)t / (size_t)p.nthreads;
		size_t hi = p.n * (size_t)(t + 1) / (size_t)p.nthreads;

		total += p.got[t];
		if (p.got[t] < hi - lo)
			break;
	}
	if (lseek(r->fd, at + (off_t)total, SEEK_SET) < 0)
		return 0;
	if (total) {
		r->any = 1;
		r->last = c->buf[c->len + total - 1];
		c->len += total;
	}
	return (ssize_t)total;
}

/*
 * Append input to c until it holds at least want bytes (0: all of it) and a
 * delimiter past its first bytes (so a chunk always has a whole line), or the
 * input ends.  Returns -1 on a read error.
 */
static int rd_fill(reader *r, chunk *c, size_t want)
{
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
		ch_reserve(c, step);
		if (!want)
			step = c->cap - c->len - SS_PAD;
		k = read(r->fd, c->buf + c->len, step);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			sp_msg("cannot read '%s': %s", r->name, strerror(errno));
			return -1;
		}
		if (k == 0) {
			if (r->fd != 0)
				close(r->fd);
			r->fd = -1;
			if (r->any && r->last != r->delim) {
				ch_reserve(c, 1);
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

/* ---- line splitting (parallel slices) --------------------------------- */

#if defined(__SSE2__)
#include <emmintrin.h>

/* bit i set where p[i] == d, for 64 bytes at p */
static inline uint64_t delim_mask64(const uint8_t *p, __m128i d)
{
	uint64_t m0 = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)p), d));
	uint64_t m1 = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + 16)), d));
	uint64_t m2 = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + 32)), d));
	uint64_t m3 = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + 48)), d));

	return m0 | m1 << 16 | m2 << 32 | m3 << 48;
}
#define HAVE_MASK64 1
#endif

typedef struct {
	chunk *c;
	int delim, nthreads, whole, direct, bucket;
	size_t lo[65], cnt[65];
	uint32_t *hist;        /* nthreads x 65536 counters, then slots (bucket) */
	const ss_opts *o;
	sp_msd_src src;        /* how entries cache keys (src.pack: packed) */
	int check;             /* the count pass checks the packing's alphabet */
	uint8_t member[256];   /* the alphabet and the delimiter */
	int bad[64];           /* a slice has a byte outside the alphabet */
	int hshift;            /* bucket = prefix >> hshift (16 or 8 top bits) */
	size_t lcp;            /* the bytes every key shares (the bucket pass checks) */
	const uint8_t *lcp_ref;
} split_ctx;

/* the top 16 bits of the prefix of key [p, p+len) (for the bucket pass) */
static inline uint64_t key_top16(const split_ctx *s, const uint8_t *p, size_t len)
{
	const sp_msd_pack *pk = s->src.pack;
	size_t i, m;
	uint64_t w = 0;

	if (!pk)
		return sp_msd_load(p, len, s->lcp) >> 48;
	m = (size_t)(16 / pk->per);
	for (i = 0; i < m; i++)
		w = w << pk->per | (i < len ? pk->rank[p[i]] : 0);
	return w;
}

#ifdef HAVE_MASK64
/* bit i set where p[i] is in the alphabet or the delimiter, for 64 bytes */
static inline uint64_t member_mask64(const sp_msd_pack *pk, const uint8_t *p, __m128i d)
{
	uint64_t m = 0;
	int q, j;

	for (q = 0; q < 4; q++) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * q));
		__m128i e = _mm_cmpeq_epi8(v, d);

		for (j = 0; j < pk->sigma; j++)
			e = _mm_or_si128(e, _mm_cmpeq_epi8(v, _mm_set1_epi8((char)pk->sym[j])));
		m |= (uint64_t)(uint32_t)_mm_movemask_epi8(e) << (16 * q);
	}
	return m;
}
#endif

/*
 * The alphabet of a sample of c (the start and blocks spread over it) minus
 * the delimiter, as a packing; 0 when it has more than 16 bytes.
 */
static int sample_alphabet(const chunk *c, int delim, sp_msd_pack *pk)
{
	uint64_t set[4] = { 0, 0, 0, 0 };
	size_t i, b, first = c->len < (64u << 10) ? c->len : (32u << 10);

	for (i = 0; i < first; i++)
		set[c->buf[i] >> 6] |= (uint64_t)1 << (c->buf[i] & 63);
	if (first < c->len) {
		for (b = 1; b <= 32; b++) {
			size_t at = (c->len - 1024) / 32 * b;

			for (i = at; i < at + 1024; i++)
				set[c->buf[i] >> 6] |= (uint64_t)1 << (c->buf[i] & 63);
		}
	}
	set[delim >> 6] &= ~((uint64_t)1 << (delim & 63));
	return sp_msd_pack_init(pk, set);
}

static inline void key_of(const split_ctx *s, size_t start, size_t end, size_t *kb, size_t *kl);

/*
 * The prefix shared by the keys of the first lines (up to 4096), when it is
 * at least 8 bytes: s->lcp and s->lcp_ref (the first key) are set.  Radix
 * passes over a prefix every key shares do nothing but reload the next 8
 * bytes; the bucket pass checks that the whole input shares it.
 */
static void sample_lcp(split_ctx *s)
{
	const chunk *c = s->c;
	size_t pos = 0, lines = 0, lcp = SIZE_MAX, kb0 = 0;

	s->lcp = 0;
	while (pos < c->len && lines < 4096) {
		const uint8_t *q = memchr(c->buf + pos, s->delim, c->len - pos);
		size_t end = q ? (size_t)(q - c->buf) : c->len, kb, kl, i;

		key_of(s, pos, end, &kb, &kl);
		if (lines++ == 0) {
			kb0 = kb;
			lcp = kl;
		} else {
			if (kl < lcp)
				lcp = kl;
			for (i = 0; i < lcp && c->buf[kb + i] == c->buf[kb0 + i]; i++)
				;
			lcp = i;
		}
		if (lcp < 8)
			return;
		pos = end + 1;
	}
	if (lines < 2 || lcp == SIZE_MAX)
		return;
	s->lcp = lcp;
	s->lcp_ref = c->buf + kb0;
}

/* the first key of line [start, end) as an offset and a length */
static inline void key_of(const split_ctx *s, size_t start, size_t end, size_t *kb, size_t *kl)
{
	const uint8_t *b, *e;

	if (s->c->keyw) {
		*kb = start;
		*kl = end - start;
		return;
	}
	key_span(&s->o->keys[0], s->o->tab, s->c->buf + start, end - start, &b, &e);
	*kb = (size_t)(b - s->c->buf);
	*kl = (size_t)(e - b);
}

/* direct mode: the entry of line [start, end) */
static inline void put_direct(const split_ctx *s, sp_msd_ent *e, size_t start, size_t end)
{
	size_t kb, kl;

	key_of(s, start, end, &kb, &kl);
	if (kl > UINT32_MAX)
		sp_die("a key of %zu bytes is longer than the %u bytes supported", kl, UINT32_MAX);
	e->pfx = sp_msd_key(&s->src, s->c->buf + kb, kl, s->lcp);
	e->idx = (uint32_t)kb;
	e->len = (uint32_t)kl;
}

/* record line k = [start, end) (end: its delimiter) */
static inline void put_line(const split_ctx *s, size_t k, size_t start, size_t end)
{
	chunk *c = s->c;

	if (s->direct) {
		put_direct(s, &c->ents[k], start, end);
		return;
	}
	c->loff[k] = start;
	if (s->whole) {
		size_t len = end - start;

		if (len > UINT32_MAX)
			sp_die("a line of %zu bytes is longer than the %u bytes supported", len, UINT32_MAX);
		c->ents[k].pfx = sp_msd_load(c->buf + start, len, 0);
		c->ents[k].idx = (uint32_t)k;
		c->ents[k].len = (uint32_t)len;
	}
}

enum { SCAN_COUNT, SCAN_HIST, SCAN_FILL, SCAN_SCATTER };

/*
 * One line [start, end) of slice tid: count it, count its first 16 key bits
 * (the first radix pass, made while the line is in cache), or put its entry
 * at its line number or, scattering, at its bucket's next slot.
 */
static inline void scan_one(split_ctx *s, int tid, int mode, size_t *k, size_t start, size_t end)
{
	switch (mode) {
	case SCAN_COUNT:
		(*k)++;
		break;
	case SCAN_HIST: {
		size_t kb, kl;

		(*k)++;
		key_of(s, start, end, &kb, &kl);
		if (s->lcp && (kl < s->lcp || memcmp(s->c->buf + kb, s->lcp_ref, s->lcp) != 0))
			s->bad[tid] = 1;
		s->hist[(size_t)tid << 16 | (key_top16(s, s->c->buf + kb, kl) >> (s->hshift - 48))]++;
		break;
	}
	case SCAN_FILL:
		put_line(s, (*k)++, start, end);
		break;
	case SCAN_SCATTER: {
		sp_msd_ent t;

		put_direct(s, &t, start, end);
		s->c->ents[s->hist[(size_t)tid << 16 | (t.pfx >> s->hshift)]++] = t;
		break;
	}
	}
}

static inline void scan_slice(split_ctx *s, int tid, int mode)
{
	const uint8_t *b = s->c->buf;
	size_t pos = s->lo[tid], hi = s->lo[tid + 1], start = pos, k = 0;
	int check = s->check && (mode == SCAN_COUNT || mode == SCAN_HIST);
	uint64_t bad = 0;

	if (mode == SCAN_FILL)
		k = s->cnt[tid];
#ifdef HAVE_MASK64
	{
		__m128i d = _mm_set1_epi8((char)s->delim);

		for (; hi - pos >= 64; pos += 64) {
			uint64_t m = delim_mask64(b + pos, d);

			if (check)
				bad |= ~member_mask64(s->src.pack, b + pos, d);
			if (mode == SCAN_COUNT) {
				k += (size_t)__builtin_popcountll(m);
				continue;
			}
			while (m) {
				size_t end = pos + (size_t)__builtin_ctzll(m);

				scan_one(s, tid, mode, &k, start, end);
				start = end + 1;
				m &= m - 1;
			}
		}
		if (mode == SCAN_COUNT)
			start = pos;
	}
#endif
	if (check) {
		size_t i;

		for (i = pos; i < hi; i++)
			bad |= !s->member[b[i]];
		s->bad[tid] = bad != 0;
	}
	while (pos < hi) {
		const uint8_t *q = memchr(b + pos, s->delim, hi - pos);
		size_t end;

		if (!q)
			break;
		end = (size_t)(q - b);
		scan_one(s, tid, mode, &k, start, end);
		start = pos = end + 1;
	}
	if (mode == SCAN_COUNT || mode == SCAN_HIST)
		s->cnt[tid] = k;
}

static void split_count(void *arg, int tid)
{
	split_ctx *s = arg;

	scan_slice(s, tid, s->bucket ? SCAN_HIST : SCAN_COUNT);
}

static void split_fill(void *arg, int tid)
{
	split_ctx *s = arg;

	scan_slice(s, tid, s->bucket ? SCAN_SCATTER : SCAN_FILL);
}

static int key_is_whole(const ss_key *k)
{
	return k->sword == SS_NONE && k->eword == SS_NONE && !k->skipsb;
}

static void key_fill(void *arg, int tid)
{
	split_ctx *s = arg;
	chunk *c = s->c;
	const ss_key *k = &s->o->keys[0];
	size_t i, lo = c->n * (size_t)tid / (size_t)s->nthreads;
	size_t hi = c->n * (size_t)(tid + 1) / (size_t)s->nthreads;

	for (i = lo; i < hi; i++) {
		const uint8_t *t = c->buf + c->loff[i], *kb, *ke;
		size_t len = c->loff[i + 1] - c->loff[i] - 1;

		key_span(k, s->o->tab, t, len, &kb, &ke);
		c->koff[i] = (uint64_t)(kb - c->buf);
		if ((size_t)(ke - kb) > UINT32_MAX)
			sp_die("a key of %zu bytes is longer than the %u bytes supported",
				(size_t)(ke - kb), UINT32_MAX);
		c->klen[i] = (uint32_t)(ke - kb);
	}
}

/*
 * Find the lines of c.  For a radix-sorted first key, fill c->ents too:
 * directly while scanning when the key is the whole line (the bytes are in
 * cache then), else from the key spans in c->koff / c->klen.
 */
static void split_lines(const ss_opts *o, chunk *c)
{
	split_ctx s;
	int t, nt = o->nthreads < 1 ? 1 : o->nthreads > 64 ? 64 : o->nthreads;
	size_t n;
	const ss_key *k = &o->keys[0];

	if (c->len < (1u << 20))
		nt = 1;
	s.c = c;
	s.delim = o->zero ? 0 : '\n';
	s.nthreads = nt;
	s.o = o;
	s.whole = key_is_whole(k) && !k->numeric && !o->check;
	c->keyw = key_is_whole(k);
	s.direct = c->direct = !k->numeric && !o->check && o->nkeys == 1 && c->len < UINT32_MAX;
	s.src.base = c->buf;
	s.src.off = NULL;
	s.src.pack = NULL;
	s.check = 0;
	c->packed = 0;
	/* a small alphabet (at most 16 bytes in every key, e.g. DNA): packed
	 * prefixes, if the count pass finds no other byte */
	if (s.direct && !o->no_pack && sample_alphabet(c, s.delim, &c->pk)) {
		int j;

		memset(s.member, 0, sizeof s.member);
		for (j = 0; j < c->pk.sigma; j++)
			s.member[c->pk.sym[j]] = 1;
		s.member[s.delim] = 1;
		s.src.pack = &c->pk;
		s.check = 1;
	}
	/* the first radix pass during the scan: only for the default sort */
	s.bucket = s.direct && o->algo == &sp_msd_algos[0] && c->len >= (1u << 20);
	s.hist = s.bucket ? sp_calloc((size_t)nt << 16, sizeof *s.hist) : NULL;
	s.lo[0] = 0;
	for (t = 1; t < nt; t++) {
		size_t p = c->len * (size_t)t / (size_t)nt;
		const uint8_t *q;

		if (p < s.lo[t - 1])
			p = s.lo[t - 1];
		q = p < c->len ? memchr(c->buf + p, s.delim, c->len - p) : NULL;
		s.lo[t] = q ? (size_t)(q - c->buf) + 1 : c->len;
	}
	s.lo[nt] = c->len;
	/* a prefix shared by all keys (byte prefixes, the bucket pass, CPU) */
	s.lcp = 0;
	if (s.bucket && !s.src.pack && !ss_dev_requested())
		sample_lcp(&s);
	memset(s.bad, 0, sizeof s.bad);
	/* packed prefixes: 8-bit buckets (a 16-bit digit of DNA spreads over
	 * all 65536 buckets, and scattering to that many streams misses the
	 * caches and the TLB on every store; measured 0.35 s against 1 s of
	 * CPU on 20M 32-mers) */
	s.hshift = s.src.pack ? 56 : 48;
	sp_par_run(nt, split_count, &s);
	if (s.lcp) {
		for (t = 0; t < nt && !s.bad[t]; t++)
			;
		if (t < nt) {
			/* a key without the sampled prefix: from depth 0 */
			s.lcp = 0;
			memset(s.hist, 0, ((size_t)nt << 16) * sizeof *s.hist);
			sp_par_run(nt, split_count, &s);
		}
	}
	c->depth0 = s.lcp;
	if (o->verbose && s.lcp)
		sp_msg("every key starts with the same %zu bytes: skipped", s.lcp);
	if (s.check) {
		for (t = 0; t < nt && !s.bad[t]; t++)
			;
		s.check = 0;
		if (t < nt) {
			/* a byte outside the sampled alphabet: byte prefixes */
			s.src.pack = NULL;
			s.hshift = 48;
			if (s.bucket) {
				memset(s.hist, 0, ((size_t)nt << 16) * sizeof *s.hist);
				sp_par_run(nt, split_count, &s);
			}
		} else {
			c->packed = 1;
			if (o->verbose)
				sp_msg("keys of %d byte values: %d characters packed per prefix",
					c->pk.sigma, c->pk.step);
		}
	}
	for (n = 0, t = 0; t < nt; t++) {
		size_t m = s.cnt[t];

		s.cnt[t] = n;
		n += m;
	}
	if (s.bucket) {
		/* bucket-major, thread-minor slots keep the scatter in input order;
		 * a shorter bucket (8 bits) is the last of the 16-bit ones it
		 * covers (the others are empty), so ends[] always has 65536 */
		size_t d, j, pos = 0, sub = (size_t)1 << (s.hshift - 48);

		c->ends = sp_malloc(((size_t)1 << 16) * sizeof *c->ends);
		for (d = 0; d < ((size_t)1 << (64 - s.hshift)); d++) {
			for (j = 0; j + 1 < sub; j++)
				c->ends[d * sub + j] = pos;
			for (t = 0; t < nt; t++) {
				uint32_t v = s.hist[(size_t)t << 16 | d];

				s.hist[(size_t)t << 16 | d] = (uint32_t)pos;
				pos += v;
			}
			c->ends[d * sub + sub - 1] = pos;
		}
	}
	if (n > UINT32_MAX - 1)
		sp_die("more than %u lines in memory; use -S to sort in runs", UINT32_MAX - 1);
	c->n = n;
	if (!s.direct)
		c->loff = sp_big_alloc((n + 2) * sizeof *c->loff);
	if (!k->numeric && !o->check)
		c->ents = sp_big_alloc((n + 1) * sizeof *c->ents);
	sp_par_run(nt, split_fill, &s);
	free(s.hist);
	if (s.direct)
		return;
	c->loff[n] = c->len;
	if (key_is_whole(k)) {
		c->koff = c->loff;
		return;
	}
	/* the spans of the first key */
	s.nthreads = n < (1u << 16) ? 1 : nt;
	c->koff = sp_big_alloc((n + 1) * sizeof *c->koff);
	c->klen = sp_big_alloc((n + 1) * sizeof *c->klen);
	sp_par_run(s.nthreads, key_fill, &s);
	if (c->ents) {
		sp_msd_src src = { c->buf, c->koff, NULL };

		sp_msd_fill(c->ents, n, &src, c->klen, 0, o->nthreads);
	}
}

/* ---- sorting ---------------------------------------------------------- */

typedef struct {
	const ss_opts *o;
	const chunk *c;
	int k0;
} msort_ctx;

static inline int cmp_idx(const msort_ctx *m, uint32_t i, uint32_t j)
{
	const chunk *c = m->c;

	return cmp_lines(m->o, m->k0, c->buf + c->loff[i], c->loff[i + 1] - c->loff[i] - 1,
		c->buf + c->loff[j], c->loff[j + 1] - c->loff[j] - 1);
}

/* stable merge sort of a[0..n) with scratch t */
static void msort(const msort_ctx *m, uint32_t *a, uint32_t *t, size_t n)
{
	size_t h, i, j, k;

	if (n <= 16) {
		for (i = 1; i < n; i++) {
			uint32_t x = a[i];

			for (j = i; j > 0 && cmp_idx(m, a[j - 1], x) > 0; j--)
				a[j] = a[j - 1];
			a[j] = x;
		}
		return;
	}
	h = n / 2;
	msort(m, a, t, h);
	msort(m, a + h, t, n - h);
	if (cmp_idx(m, a[h - 1], a[h]) <= 0)
		return;
	memcpy(t, a, h * sizeof *a);
	i = 0;
	j = h;
	k = 0;
	while (i < h && j < n)
		a[k++] = cmp_idx(m, a[j], t[i]) < 0 ? a[j++] : t[i++];
	while (i < h)
		a[k++] = t[i++];
}

static inline int key0_eq(const chunk *c, uint32_t i, uint32_t j)
{
	size_t li, lj;

	if (c->klen) {
		li = c->klen[i];
		lj = c->klen[j];
	} else {
		li = c->loff[i + 1] - c->loff[i];
		lj = c->loff[j + 1] - c->loff[j];
	}
	return li == lj && memcmp(c->buf + c->koff[i], c->buf + c->koff[j], li) == 0;
}

/* direct mode: the lines of two entries are equal */
static inline int ent_line_eq(const chunk *c, const sp_msd_ent *x, const sp_msd_ent *y)
{
	return x->len == y->len && x->pfx == y->pfx &&
		memcmp(c->buf + x->idx, c->buf + y->idx, x->len) == 0;
}

static void reverse_u32(uint32_t *a, size_t n)
{
	size_t i;

	for (i = 0; i < n / 2; i++) {
		uint32_t x = a[i];

		a[i] = a[n - 1 - i];
		a[n - 1 - i] = x;
	}
}

/* order the lines of c into c->order */
static void sort_chunk(const ss_opts *o, chunk *c)
{
	size_t n = c->n, i, j;
	const ss_key *k = &o->keys[0];
	msort_ctx m = { o, c, 0 };

	ss_dev_wait();
	if (c->direct) {
		sp_msd_ent *e = c->ents;
		sp_msd_src src = { c->buf, NULL, c->packed ? &c->pk : NULL };

		/* (the device path keeps the prefixes too, but is not relied on) */
		c->unpack = c->packed && c->keyw && !ss_dev_requested();
		if (ss_dev_sort(e, n, c->ends, c->ends ? (size_t)1 << 16 : 0, &src, c->len, o->nthreads))
			;
		else if (c->ends)
			sp_msd_sort_ranges_at(e, n, c->ends, (size_t)1 << 16, &src, o->nthreads, c->depth0);
		else
			o->algo->fn(e, n, &src, o->nthreads);
		if (k->reverse) {
			for (i = 0; i < n / 2; i++) {
				sp_msd_ent x = e[i];

				e[i] = e[n - 1 - i];
				e[n - 1 - i] = x;
			}
			for (i = 0; i < n; i = j) {
				for (j = i + 1; j < n && ent_line_eq(c, &e[i], &e[j]); j++)
					;
				for (size_t q = 0; q < (j - i) / 2; q++) {
					sp_msd_ent x = e[i + q];

					e[i + q] = e[j - 1 - q];
					e[j - 1 - q] = x;
				}
			}
		}
		return;
	}
	if (k->numeric) {
		uint32_t *t;

		c->order = sp_big_alloc((n + 1) * sizeof *c->order);
		for (i = 0; i < n; i++)
			c->order[i] = (uint32_t)i;
		t = sp_malloc((n / 2 + 1) * sizeof *t);
		msort(&m, c->order, t, n);
		free(t);
		return;
	}
	{
		sp_msd_ent *e = c->ents;
		sp_msd_src src = { c->buf, c->koff, NULL };

		if (!ss_dev_sort(e, n, NULL, 0, &src, c->len, o->nthreads))
			o->algo->fn(e, n, &src, o->nthreads);
		/* compact the entries into line numbers in place */
		c->order = (uint32_t *)(void *)e;
		for (i = 0; i < n; i++)
			c->order[i] = e[i].idx;
	}
	if (k->reverse) {
		reverse_u32(c->order, n);
		for (i = 0; i < n; i = j) {
			for (j = i + 1; j < n && key0_eq(c, c->order[i], c->order[j]); j++)
				;
			if (j - i > 1)
				reverse_u32(c->order + i, j - i);
		}
	}
	if (o->nkeys > 1) {
		uint32_t *t = NULL;
		size_t tcap = 0;

		m.k0 = 1;
		for (i = 0; i < n; i = j) {
			for (j = i + 1; j < n && key0_eq(c, c->order[i], c->order[j]); j++)
				;
			if (j - i > 1) {
				if ((j - i) / 2 + 1 > tcap) {
					tcap = (j - i) / 2 + 1;
					t = sp_realloc(t, tcap * sizeof *t);
				}
				msort(&m, c->order + i, t, j - i);
			}
		}
		free(t);
	}
}

/*
 * Writing packed keys back as text (a whole line no longer than a prefix
 * is written from its entry, without reading the input again).  With SSE2
 * the packed bytes are spread so that each output byte holds its own
 * character's bit field in place (mask M), and a byte's rank is counted
 * by comparing that field with each rank's field (T[j]); the character is
 * sym[0] plus the steps D[j] = sym[j] - sym[j-1] of the ranks reached.
 */
typedef struct {
	const sp_msd_pack *pk;
#ifdef HAVE_MASK64
	__m128i m, t[16], d[16], base;
#endif
} unpacker;

static void unpacker_init(unpacker *u, const sp_msd_pack *pk)
{
	u->pk = pk;
#ifdef HAVE_MASK64
	{
		uint8_t m[16], t[16];
		int i, j;

		for (j = 0; j < 16; j++) {
			for (i = 0; i < 16; i++) {
				int sh = pk->per == 2 ? 6 - 2 * (i & 3) : 4 - 4 * (i & 1);

				m[i] = (uint8_t)(((1 << pk->per) - 1) << sh);
				t[i] = (uint8_t)(j << sh);
			}
			u->t[j] = _mm_loadu_si128((const __m128i *)(const void *)t);
			u->d[j] = _mm_set1_epi8((char)(j && j < pk->sigma ? pk->sym[j] - pk->sym[j - 1] : 0));
		}
		u->m = _mm_loadu_si128((const __m128i *)(const void *)m);
		u->base = _mm_set1_epi8((char)pk->sym[0]);
	}
#endif
}

#ifdef HAVE_MASK64
/* 16 characters from their bit fields in place (each byte masked) */
static inline __m128i unpack16(const unpacker *u, __m128i f)
{
	__m128i out = u->base;
	int j;

	for (j = 1; j < u->pk->sigma; j++) {
		__m128i ge = _mm_cmpeq_epi8(_mm_max_epu8(f, u->t[j]), f);

		out = _mm_add_epi8(out, _mm_and_si128(ge, u->d[j]));
	}
	return out;
}
#endif

/* the pk->step characters of prefix w to out (which holds pk->step bytes) */
static inline void unpack_line(const unpacker *u, uint64_t w, uint8_t *out)
{
#ifdef HAVE_MASK64
	__m128i v = _mm_cvtsi64_si128((long long)__builtin_bswap64(w));
	__m128i lo = _mm_unpacklo_epi8(v, v);

	if (u->pk->per == 2) {
		_mm_storeu_si128((__m128i *)(void *)out,
			unpack16(u, _mm_and_si128(_mm_unpacklo_epi8(lo, lo), u->m)));
		_mm_storeu_si128((__m128i *)(void *)(out + 16),
			unpack16(u, _mm_and_si128(_mm_unpackhi_epi8(lo, lo), u->m)));
	} else {
		_mm_storeu_si128((__m128i *)(void *)out, unpack16(u, _mm_and_si128(lo, u->m)));
	}
#else
	sp_msd_pack_unload_all(u->pk, w, out);
#endif
}

/* write the lines of c in order (dropping repeats with -u) */
typedef struct {
	const ss_opts *o;
	const chunk *c;
	int fd;
	const char *name;
	int delim;
	size_t block, nblocks;
	atomic_size_t next;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t turn;
	int failed;
} emit_ctx;

static void emit_worker(void *arg, int tid)
{
	emit_ctx *e = arg;
	const chunk *c = e->c;
	const uint32_t *ord = c->order;
	const uint64_t *lo = c->loff;
	const uint8_t *base = c->buf;
	size_t cap = SS_OUTBUF, n = c->n;
	uint8_t *buf = sp_malloc(cap);
	writer w;

	(void)tid;
	w.fd = e->fd;
	w.name = e->name;
	w.failed = 0;
	for (;;) {
		size_t b = atomic_fetch_add(&e->next, 1), i, hi, len = 0;

		if (b >= e->nblocks)
			break;
		i = b * e->block;
		hi = i + e->block < n ? i + e->block : n;
		if (c->direct) {
			const sp_msd_ent *en = c->ents;
			size_t step = c->unpack ? (size_t)c->pk.step : 0;
			unpacker up;

			memset(&up, 0, sizeof up);
			if (step)
				unpacker_init(&up, &c->pk);
			for (; i < hi; i++) {
				const uint8_t *ls = base + en[i].idx;
				size_t l = (size_t)en[i].len + 1;

				if (e->o->unique && i > 0 && ent_line_eq(c, &en[i - 1], &en[i]))
					continue;
				if (step && en[i].len <= step) {
					/* the entry holds the whole line: no random read */
					if (len + step + 1 > cap) {
						while (len + step + 1 > cap)
							cap *= 2;
						buf = sp_realloc(buf, cap);
					}
					unpack_line(&up, en[i].pfx, buf + len);
					buf[len + l - 1] = (uint8_t)e->delim;
					len += l;
					continue;
				}
				if (i + 16 < n) {
					/* both ends: a line often spans two cache lines */
					__builtin_prefetch(base + en[i + 16].idx);
					__builtin_prefetch(base + en[i + 16].idx + en[i + 16].len);
				}
				if (!c->keyw) {
					/* the line around the key: back to the delimiter before
					 * it, on to the one after it */
					const uint8_t *p = en[i].idx ? memrchr(base, e->delim, en[i].idx) : NULL;
					const uint8_t *q = memchr(ls + en[i].len, e->delim,
						c->len - en[i].idx - en[i].len);

					ls = p ? p + 1 : base;
					l = (size_t)(q - ls) + 1;
				}
				if (len + l > cap) {
					while (len + l > cap)
						cap *= 2;
					buf = sp_realloc(buf, cap);
				}
				memcpy(buf + len, ls, l);
				len += l;
			}
		}
		for (; i < hi; i++) {
			uint32_t x = ord[i];
			size_t l;

			if (i + 24 < n)
				__builtin_prefetch(&lo[ord[i + 24]]);
			if (i + 12 < n)
				__builtin_prefetch(base + lo[ord[i + 12]]);
			l = lo[x + 1] - lo[x];
			if (e->o->unique && i > 0) {
				uint32_t p = ord[i - 1];

				/* equal keys are an equivalence: comparing with the line
				 * before is comparing with the last one written */
				if (cmp_lines(e->o, 0, base + lo[p], lo[p + 1] - lo[p] - 1,
						base + lo[x], l - 1) == 0)
					continue;
			}
			if (len + l > cap) {
				while (len + l > cap)
					cap *= 2;
				buf = sp_realloc(buf, cap);
			}
			memcpy(buf + len, base + lo[x], l);
			len += l;
		}
		pthread_mutex_lock(&e->mu);
		while (e->turn != b && !e->failed)
			pthread_cond_wait(&e->cv, &e->mu);
		pthread_mutex_unlock(&e->mu);
		if (!e->failed && len && wr_raw(&w, buf, len) < 0) {
			pthread_mutex_lock(&e->mu);
			e->failed = 1;
			pthread_mutex_unlock(&e->mu);
		}
		pthread_mutex_lock(&e->mu);
		e->turn = b + 1;
		pthread_cond_broadcast(&e->cv);
		pthread_mutex_unlock(&e->mu);
		if (e->failed)
			break;
	}
	pthread_mutex_lock(&e->mu);
	pthread_cond_broadcast(&e->cv);
	pthread_mutex_unlock(&e->mu);
	free(buf);
}

/* write the sorted lines of c to fd with o->nthreads gathering threads */
static int emit_chunk(const ss_opts *o, const chunk *c, int fd, const char *name)
{
	emit_ctx e;
	size_t avg = c->n ? c->len / c->n + 1 : 1;
	int nt = o->nthreads < 1 ? 1 : o->nthreads;

	memset(&e, 0, sizeof e);
	e.o = o;
	e.c = c;
	e.fd = fd;
	e.name = name;
	e.delim = o->zero ? 0 : '\n';
	e.block = SS_OUTBUF / 2 / avg;
	if (e.block < 256)
		e.block = 256;
	e.nblocks = (c->n + e.block - 1) / e.block;
	if (e.nblocks < 2)
		nt = 1;
	atomic_store(&e.next, 0);
	pthread_mutex_init(&e.mu, NULL);
	pthread_cond_init(&e.cv, NULL);
	sp_par_run(nt, emit_worker, &e);
	pthread_mutex_destroy(&e.mu);
	pthread_cond_destroy(&e.cv);
	return e.failed ? -1 : 0;
}

static void ch_free_index(chunk *c)
{
	size_t n = c->n;

	if (c->koff != c->loff)
		sp_big_free(c->koff, (n + 1) * sizeof *c->koff);
	if (c->loff)
		sp_big_free(c->loff, (n + 2) * sizeof *c->loff);
	if (c->klen)
		sp_big_free(c->klen, (n + 1) * sizeof *c->klen);
	if (c->order && c->order != (uint32_t *)(void *)c->ents)
		sp_big_free(c->order, (n + 1) * sizeof *c->order);
	if (c->ents)
		sp_big_free(c->ents, (n + 1) * sizeof *c->ents);
	free(c->ends);
	c->ends = NULL;
	c->loff = c->koff = NULL;
	c->klen = c->order = NULL;
	c->ents = NULL;
	c->n = 0;
}

/* ---- runs and the merge ----------------------------------------------- */

typedef struct {
	temp_node *tmp;
} run;

/* a buffered line reader over a run file */
typedef struct {
	int fd;
	const char *name;
	uint8_t *buf;
	size_t beg, end, cap;
	const uint8_t *line;   /* current line (with delimiter) */
	size_t len;
	int eof;
} run_in;

static int ri_next(run_in *r, int delim)
{
	for (;;) {
		uint8_t *p = r->beg < r->end ? memchr(r->buf + r->beg, delim, r->end - r->beg) : NULL;
		ssize_t k;

		if (p) {
			r->line = r->buf + r->beg;
			r->len = (size_t)(p - r->line) + 1;
			r->beg += r->len;
			return 1;
		}
		if (r->eof) {
			if (r->beg < r->end) {
				sp_msg("temporary file '%s' ends inside a line", r->name);
				return -1;
			}
			return 0;
		}
		if (r->beg > 0) {
			memmove(r->buf, r->buf + r->beg, r->end - r->beg);
			r->end -= r->beg;
			r->beg = 0;
		}
		if (r->end == r->cap) {
			r->cap *= 2;
			r->buf = sp_realloc(r->buf, r->cap);
		}
		k = read(r->fd, r->buf + r->end, r->cap - r->end);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			sp_msg("cannot read temporary file '%s': %s", r->name, strerror(errno));
			return -1;
		}
		if (k == 0)
			r->eof = 1;
		r->end += (size_t)k;
	}
}

/* does run a's line come before run b's (b > a in run order on ties)? */
typedef struct {
	const ss_opts *o;
	run_in *in;
	int *tree;       /* loser tree: tree[0] winner, tree[1..k) losers */
	int k;
} merger;

static int beats(const merger *m, int a, int b)
{
	const run_in *x = &m->in[a], *y = &m->in[b];
	int c;

	if (!x->line)
		return 0;
	if (!y->line)
		return 1;
	c = cmp_lines(m->o, 0, x->line, x->len - 1, y->line, y->len - 1);
	return c < 0 || (c == 0 && a < b);
}

static int lt_build(merger *m, int node)
{
	int l, r;

	if (node >= m->k)
		return node - m->k;
	l = lt_build(m, 2 * node);
	r = lt_build(m, 2 * node + 1);
	if (beats(m, l, r)) {
		m->tree[node] = r;
		return l;
	}
	m->tree[node] = l;
	return r;
}

/* merge the runs [0, k) into w; returns -1 on error */
static int merge_runs(const ss_opts *o, run *runs, int k, writer *w)
{
	merger m;
	int i, rc = 0, delim = o->zero ? 0 : '\n';
	uint8_t *prev = NULL;
	size_t prev_len = 0, prev_cap = 0;
	int have_prev = 0;

	m.o = o;
	m.k = k;
	m.in = sp_calloc((size_t)k, sizeof *m.in);
	m.tree = sp_calloc((size_t)(2 * k), sizeof *m.tree);
	for (i = 0; i < k; i++) {
		run_in *r = &m.in[i];

		r->name = runs[i].tmp->path;
		r->fd = open(r->name, O_RDONLY);
		r->cap = 1u << 18;
		r->buf = sp_malloc(r->cap);
		if (r->fd < 0) {
			sp_msg("cannot read temporary file '%s': %s", r->name, strerror(errno));
			rc = -1;
			continue;
		}
		if (ri_next(r, delim) < 0)
			rc = -1;
	}
	if (rc == 0) {
		int win = lt_build(&m, 1);

		if (k == 1)
			win = 0;
		while (m.in[win].line) {
			run_in *r = &m.in[win];
			int node;

			if (o->unique && have_prev &&
			    cmp_lines(o, 0, prev, prev_len - 1, r->line, r->len - 1) == 0) {
				/* a repeat of the last line written */
			} else {
				if (wr_put(w, r->line, r->len) < 0) {
					rc = -1;
					break;
				}
				if (o->unique) {
					if (r->len > prev_cap) {
						prev_cap = r->len * 2;
						prev = sp_realloc(prev, prev_cap);
					}
					memcpy(prev, r->line, r->len);
					prev_len = r->len;
					have_prev = 1;
				}
			}
			if (ri_next(r, delim) <= 0) {
				if (!r->eof) {
					rc = -1;
					break;
				}
				r->line = NULL;
			}
			/* replay from the leaf up */
			for (node = (win + k) / 2; node >= 1; node /= 2) {
				if (beats(&m, m.tree[node], win)) {
					int t = m.tree[node];

					m.tree[node] = win;
					win = t;
				}
			}
		}
	}
	for (i = 0; i < k; i++) {
		if (m.in[i].fd >= 0)
			close(m.in[i].fd);
		free(m.in[i].buf);
	}
	free(m.in);
	free(m.tree);
	free(prev);
	return rc;
}

static int write_run(const ss_opts *o, const chunk *c, run *r)
{
	const char *dir = o->tmpdir ? o->tmpdir : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	int fd, rc;

	r->tmp = NULL;
	if ((fd = temp_create(dir, "strsort.", &r->tmp)) < 0)
		return -1;
	rc = emit_chunk(o, c, fd, r->tmp->path);
	if (close(fd) != 0 && rc == 0) {
		sp_msg("cannot write '%s': %s", r->tmp->path, strerror(errno));
		rc = -1;
	}
	return rc;
}

/* ---- check mode ------------------------------------------------------- */

static int check_chunk(const ss_opts *o, const chunk *c, const char *name)
{
	size_t i;

	for (i = 1; i < c->n; i++) {
		const uint8_t *a = c->buf + c->loff[i - 1], *b = c->buf + c->loff[i];
		size_t la = c->loff[i] - c->loff[i - 1] - 1, lb = c->loff[i + 1] - c->loff[i] - 1;
		int x = cmp_lines(o, 0, a, la, b, lb);

		if (x > 0 || (o->unique && x == 0)) {
			if (o->check == 1) {
				char pre[256];
				int k = snprintf(pre, sizeof pre, "%s: %s:%zu: disorder: ",
					sp_progname, name, i + 1);

				fflush(stdout);
				fwrite(pre, 1, (size_t)k, stderr);
				fwrite(b, 1, lb, stderr);
				fputc('\n', stderr);
			}
			return SP_EXIT_DATA;
		}
	}
	return SP_EXIT_OK;
}

/* process CPU seconds (for -v) */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int run_lines(const ss_opts *o, char **files, int nfiles);

/* ---- the driver ------------------------------------------------------- */

/* open the output: a temporary file next to a regular -o FILE */
int ss_open_output(const ss_opts *o, temp_node **tmp)
{
	struct stat st;
	int fd;

	*tmp = NULL;
	if (!o->outfile)
		return 1;
	if (stat(o->outfile, &st) == 0 && !S_ISREG(st.st_mode)) {
		fd = open(o->outfile, O_WRONLY | O_CREAT | O_TRUNC, 0666);
	} else {
		char *dir = sp_strdup(o->outfile), *s = strrchr(dir, '/');
		mode_t um = umask(0);

		umask(um);
		if (s)
			*(s == dir ? s + 1 : s) = '\0';
		fd = temp_create(s ? dir : ".", ".strsort-out.", tmp);
		free(dir);
		if (fd >= 0)
			fchmod(fd, (stat(o->outfile, &st) == 0 ? st.st_mode : 0666 & ~um) & 07777);
		return fd;
	}
	if (fd < 0)
		sp_msg("cannot create '%s': %s", o->outfile, strerror(errno));
	return fd;
}

int ss_close_output(const ss_opts *o, int fd, temp_node *tmp, int ok)
{
	if (!o->outfile)
		return ok ? 0 : -1;
	if (close(fd) != 0 && ok) {
		sp_msg("cannot write '%s': %s", o->outfile, strerror(errno));
		ok = 0;
	}
	if (!tmp)
		return ok ? 0 : -1;
	if (ok && rename(tmp->path, o->outfile) != 0) {
		sp_msg("cannot create '%s': %s", o->outfile, strerror(errno));
		ok = 0;
	}
	if (ok)
		tmp->live = 0;
	else
		temp_remove(tmp);
	return ok ? 0 : -1;
}

int ss_run(const ss_opts *o, char **files, int nfiles)
{
	if (o->records)
		return ss_run_records(o, files, nfiles);
	return run_lines(o, files, nfiles);
}

static int run_lines(const ss_opts *o, char **files, int nfiles)
{
	static char *dash[] = { "-" };
	reader rd;
	chunk c;
	run *runs = NULL;
	size_t nruns = 0, want = 0;
	int rc = SP_EXIT_OK, fd;
	temp_node *otmp = NULL;
	writer w;
	double t_start = sp_now();

	if (nfiles == 0) {
		files = dash;
		nfiles = 1;
	}
	memset(&rd, 0, sizeof rd);
	memset(&c, 0, sizeof c);
	rd.files = files;
	rd.nfiles = nfiles;
	rd.fd = -1;
	rd.delim = o->zero ? 0 : '\n';
	rd.nthreads = o->nthreads;
	if (o->check) {
		if (nfiles > 1) {
			sp_msg("extra operand '%s' not allowed with -c", files[1]);
			return SP_EXIT_USAGE;
		}
		if (rd_fill(&rd, &c, 0) < 0) {
			rc = SP_EXIT_DATA;
			goto out;
		}
		split_lines(o, &c);
		rc = check_chunk(o, &c, files[0]);
		ch_free_index(&c);
		ch_free_buf(&c);
		return rc;
	}
	if (o->mem_limit)
		want = o->mem_limit / 3 ? o->mem_limit / 3 : 1;
	rd.want = want;
	{
		/* with -d auto, a GPU for large input is opened while reading */
		size_t total = 0;
		struct stat st;
		int i;

		for (i = 0; i < nfiles; i++)
			if ((strcmp(files[i], "-") == 0 ? fstat(0, &st) : stat(files[i], &st)) == 0 &&
					S_ISREG(st.st_mode))
				total += (size_t)st.st_size;
		ss_dev_prepare(want && want < total ? want : total, o->nthreads);
	}
	for (;;) {
		size_t carry = 0;
		uint8_t *rest = NULL;

		if (rd_fill(&rd, &c, want) < 0) {
			rc = SP_EXIT_DATA;
			goto out;
		}
		if (!rd.done) {
			/* cut after the last whole line; the rest starts the next chunk */
			uint8_t *p = c.len ? memrchr(c.buf, rd.delim, c.len) : NULL;
			size_t cut = p ? (size_t)(p - c.buf) + 1 : 0;

			carry = c.len - cut;
			if (carry) {
				rest = sp_malloc(carry);
				memcpy(rest, c.buf + cut, carry);
			}
			c.len = cut;
		}
		if (rd.done && nruns == 0)
			break;  /* it all fits: sort in memory */
		if (c.len) {
			split_lines(o, &c);
			sort_chunk(o, &c);
			runs = sp_realloc(runs, (nruns + 1) * sizeof *runs);
			if (write_run(o, &c, &runs[nruns]) < 0) {
				nruns++;
				free(rest);
				rc = SP_EXIT_DATA;
				goto out;
			}
			nruns++;
			ch_free_index(&c);
		}
		c.len = 0;
		if (carry) {
			ch_reserve(&c, carry);
			memcpy(c.buf, rest, carry);
			c.len = carry;
			free(rest);
		}
		if (rd.done && c.len == 0)
			break;
		if (o->verbose)
			sp_msg("run %zu written", nruns);
	}
	if (nruns == 0) {
		double t0 = sp_now(), t1, t2, t3, c1, c2;

		split_lines(o, &c);
		t1 = sp_now();
		c1 = cpu_now();
		sort_chunk(o, &c);
		t2 = sp_now();
		c2 = cpu_now();
		if ((fd = ss_open_output(o, &otmp)) < 0) {
			rc = SP_EXIT_DATA;
			goto out;
		}
		if (emit_chunk(o, &c, fd, o->outfile ? o->outfile : "standard output") < 0)
			rc = SP_EXIT_DATA;
		t3 = sp_now();
		if (o->verbose)
			sp_msg("%zu lines, %zu bytes: read %.3f s, split %.3f s, sort %.3f s "
				"(cpu %.3f s), write %.3f s", c.n, c.len, t0 - t_start, t1 - t0,
				t2 - t1, c2 - c1, t3 - t2);
		if (ss_close_output(o, fd, otmp, rc == SP_EXIT_OK) < 0)
			rc = SP_EXIT_DATA;
		goto out;
	}
	ch_free_buf(&c);
	/* merge runs SS_MERGE_WAYS at a time until one pass is left */
	while (nruns > SS_MERGE_WAYS) {
		size_t i, nn = 0;

		for (i = 0; i < nruns; i += SS_MERGE_WAYS) {
			int k = (int)(nruns - i < SS_MERGE_WAYS ? nruns - i : SS_MERGE_WAYS), j;
			run nr;
			const char *dir = o->tmpdir ? o->tmpdir : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
			int tfd = temp_create(dir, "strsort.", &nr.tmp);

			if (tfd < 0) {
				rc = SP_EXIT_DATA;
				goto out;
			}
			wr_init(&w, tfd, nr.tmp->path);
			if (merge_runs(o, runs + i, k, &w) < 0 || wr_flush(&w) < 0)
				rc = SP_EXIT_DATA;
			wr_free(&w);
			if (close(tfd) != 0 && rc == SP_EXIT_OK) {
				sp_msg("cannot write '%s': %s", nr.tmp->path, strerror(errno));
				rc = SP_EXIT_DATA;
			}
			if (rc != SP_EXIT_OK) {
				temp_remove(nr.tmp);
				goto out;
			}
			for (j = 0; j < k; j++)
				temp_remove(runs[i + (size_t)j].tmp);
			runs[nn++] = nr;
		}
		nruns = nn;
	}
	if ((fd = ss_open_output(o, &otmp)) < 0) {
		rc = SP_EXIT_DATA;
		goto out;
	}
	wr_init(&w, fd, o->outfile ? o->outfile : "standard output");
	if (merge_runs(o, runs, (int)nruns, &w) < 0 || wr_flush(&w) < 0)
		rc = SP_EXIT_DATA;
	wr_free(&w);
	if (ss_close_output(o, fd, otmp, rc == SP_EXIT_OK) < 0)
		rc = SP_EXIT_DATA;
out:
	{
		size_t i;

		for (i = 0; i < nruns; i++)
			temp_remove(runs[i].tmp);
	}
	free(runs);
	ch_free_index(&c);
	ch_free_buf(&c);
	return rc;
}
