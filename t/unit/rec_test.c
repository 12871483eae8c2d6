/*
 * rec_test.c - unit tests of the record stream layer (common/rec.c) and
 * the body codecs (common/rec_kinds.c): random records of every kind round
 * trip across random block sizes (the in-memory records are the oracle),
 * through files and through a pipe fed in random small pieces; every error
 * class is produced and checked for its code and message.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#include "rec.h"
#include "rec_kinds.h"
#include "tap.h"
#include "util.h"
#include "testutil.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
	return tu_xorshift64(&rng);
}
static uint32_t rndn(uint32_t n) { return n ? (uint32_t)(rnd() % n) : 0; }

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* One random record of any kind, kept as plain owned fields. */
typedef struct {
	char name[40], comment[40], seq[400], qual[400];
	uint32_t nl, cl, sl;
	int has_qual;
	uint64_t id;
	uint32_t n;                 /* candidates or hits */
	rec_cand_t cand[40];
	rec_hit_t hit[20];
	char cigar[20][24];
	uint8_t key[64], val[300];
	uint32_t kl, vl;
	rec_pair_t pair;            /* names and CIGAR in name, comment, seq */
} trec_t;

static void rnd_text(char *s, uint32_t n, const char *alpha)
{
	size_t k = strlen(alpha);
	uint32_t i;

	for (i = 0; i < n; i++)
		s[i] = alpha[rndn((uint32_t)k)];
}

static void rnd_rec(trec_t *t, int kind, uint64_t id)
{
	uint32_t i;

	memset(t, 0, sizeof *t);
	t->id = id;
	t->nl = rndn(39);
	t->cl = rndn(4) ? 0 : rndn(39);
	t->sl = rndn(8) ? rndn(400) : 0;
	t->has_qual = (int)rndn(2);
	rnd_text(t->name, t->nl, "abcXYZ019_.:\t|");
	rnd_text(t->comment, t->cl, "ab c\t=\\");
	rnd_text(t->seq, t->sl, "ACGTN");
	rnd_text(t->qual, t->sl, "!#5ABI~");
	if (kind == REC_KIND_CANDIDATES) {
		t->n = rndn(41);
		/* small and extreme values, and runs in seedfilt's order (same
		 * part and sequence, pos not decreasing: the delta entries) */
		static const uint32_t edge[] = { 0, 1, 127, 128, 16383, 16384, UINT32_MAX - 1,
			UINT32_MAX };
		for (i = 0; i < t->n; i++) {
			rec_cand_t *c = &t->cand[i];
			uint32_t w = (uint32_t)rndn(4);

			c->part = w == 0 ? (uint32_t)rnd() : w == 1 ? edge[rndn(8)] : (uint32_t)rndn(3);
			c->seq_id = w == 0 ? (uint32_t)rnd() : w == 1 ? edge[rndn(8)] : (uint32_t)rndn(3);
			c->pos = w == 1 ? edge[rndn(8)] : (uint32_t)rnd();
			c->support = w == 1 ? edge[rndn(8)] : (uint32_t)rndn(w ? 40 : 1u << 31);
			c->strand = (uint8_t)rndn(2);
			if (i && rndn(2)) {
				uint32_t room = UINT32_MAX - t->cand[i - 1].pos;
				c->part = t->cand[i - 1].part;
				c->seq_id = t->cand[i - 1].seq_id;
				c->pos = t->cand[i - 1].pos + (rndn(3) == 0 ? room : rndn(3) == 0 ? 0
						: (uint32_t)(rnd() % ((uint64_t)room + 1) / (rndn(2) ? 1 : 4096)));
			}
		}
	} else if (kind == REC_KIND_HITS) {
		t->n = rndn(21);
		for (i = 0; i < t->n; i++) {
			rec_hit_t *h = &t->hit[i];

			h->seq_id = (uint32_t)rnd();
			h->pos = rnd();
			h->score = (int32_t)rnd();
			h->edit = (uint16_t)rnd();
			h->strand = (uint8_t)rndn(2);
			h->mapq = (uint8_t)rnd();
			h->cigar_len = rndn(24);
			rnd_text(t->cigar[i], h->cigar_len, "0123456789MIDS");
			h->cigar = t->cigar[i];
		}
	} else if (kind == REC_KIND_PAIRS) {
		rec_pair_t *p = &t->pair;

		p->qid = rnd();
		p->tid = rndn(2) ? rnd() : rndn(9);
		p->score = (int32_t)rnd();
		p->matches = rndn(4) ? rndn(2000) : (uint32_t)rnd() >> 2;
		p->mismatches = rndn(300);
		p->ins = rndn(3) ? rndn(50) : 0;
		p->del = rndn(3) ? rndn(50) : 0;
		p->qlen = p->matches + p->mismatches + p->ins;
		p->tlen = p->matches + p->mismatches + p->del;
		p->qname = t->name;
		p->qname_len = t->nl;
		p->tname = t->comment;
		p->tname_len = t->cl;
		rnd_text(t->seq, t->sl, "0123456789=XID");
		p->cigar = t->seq;
		p->cigar_len = t->sl;
	} else if (kind == REC_KIND_KEYS) {
		t->kl = rndn(65);
		t->vl = rndn(301);
		for (i = 0; i < t->kl; i++)
			t->key[i] = (uint8_t)rnd();
		for (i = 0; i < t->vl; i++)
			t->val[i] = (uint8_t)rnd();
	}
}

static void to_read(const trec_t *t, rec_read_t *rd)
{
	rd->id = t->id;
	rd->name = t->name;
	rd->name_len = t->nl;
	rd->comment = t->comment;
	rd->comment_len = t->cl;
	rd->seq = t->seq;
	rd->seq_len = t->sl;
	rd->qual = t->has_qual ? t->qual : NULL;
	rd->mate = (uint8_t)(t->id % 3);   /* single, mate 1, mate 2: every flag round trips */
}

static void put_rec(rec_writer_t *w, int kind, const trec_t *t)
{
	rec_read_t rd;

	to_read(t, &rd);
	switch (kind) {
	case REC_KIND_READS: rec_put_read(w, &rd); break;
	case REC_KIND_CANDIDATES: rec_put_cands(w, &rd, t->cand, t->n); break;
	case REC_KIND_HITS: rec_put_hits(w, &rd, t->hit, t->n); break;
	case REC_KIND_KEYS: rec_put_key(w, t->key, t->kl, t->val, t->vl); break;
	case REC_KIND_PAIRS: rec_put_pair(w, &t->pair); break;
	}
}

static int same_read(const trec_t *t, const rec_read_t *rd)
{
	return rd->id == t->id && rd->name_len == t->nl && rd->comment_len == t->cl &&
		rd->seq_len == t->sl && !memcmp(rd->name, t->name, t->nl) &&
		!memcmp(rd->comment, t->comment, t->cl) && !memcmp(rd->seq, t->seq, t->sl) &&
		(t->has_qual ? rd->qual && !memcmp(rd->qual, t->qual, t->sl) : !rd->qual);
}

static int same_rec(int kind, const trec_t *t, const uint8_t *body, uint32_t len)
{
	rec_read_t rd;
	rec_cands_t cv;
	rec_hits_t hv;
	rec_key_t kv;
	rec_cand_t c;
	rec_cand_iter_t ci;
	rec_hit_t h;
	uint32_t i;

	switch (kind) {
	case REC_KIND_READS:
		return rec_read_decode(body, len, &rd) == 0 && same_read(t, &rd);
	case REC_KIND_CANDIDATES:
		if (rec_cands_decode(body, len, &cv) < 0 || !same_read(t, &cv.read) || cv.n != t->n)
			return 0;
		rec_cands_first(&cv, &ci);
		for (i = 0; i < cv.n; i++) {
			if (!rec_cands_next(&ci, &c))
				return 0;
			if (c.part != t->cand[i].part || c.seq_id != t->cand[i].seq_id ||
					c.pos != t->cand[i].pos || c.support != t->cand[i].support ||
					c.strand != t->cand[i].strand)
				return 0;
		}
		return 1;
	case REC_KIND_HITS:
		if (rec_hits_decode(body, len, &hv) < 0 || !same_read(t, &hv.read) || hv.n != t->n)
			return 0;
		for (i = 0; rec_hits_next(&hv, &h); i++) {
			const rec_hit_t *e = &t->hit[i];

			if (i >= t->n || h.seq_id != e->seq_id || h.pos != e->pos ||
					h.score != e->score || h.edit != e->edit ||
					h.strand != e->strand || h.mapq != e->mapq ||
					h.cigar_len != e->cigar_len || memcmp(h.cigar, e->cigar, h.cigar_len))
				return 0;
		}
		return i == t->n;
	case REC_KIND_KEYS:
		return rec_key_decode(body, len, &kv) == 0 && kv.key_len == t->kl &&
			kv.val_len == t->vl && !memcmp(kv.key, t->key, t->kl) &&
			!memcmp(kv.val, t->val, t->vl);
	case REC_KIND_PAIRS: {
		rec_pair_t p;
		const rec_pair_t *e = &t->pair;

		return rec_pair_decode(body, len, &p) == 0 && p.qid == e->qid && p.tid == e->tid &&
			p.qlen == e->qlen && p.tlen == e->tlen && p.score == e->score &&
			p.matches == e->matches && p.mismatches == e->mismatches && p.ins == e->ins &&
			p.del == e->del && p.qname_len == e->qname_len && p.tname_len == e->tname_len &&
			p.cigar_len == e->cigar_len && !memcmp(p.qname, e->qname, e->qname_len) &&
			!memcmp(p.tname, e->tname, e->tname_len) && !memcmp(p.cigar, e->cigar, e->cigar_len);
	}
	}
	return 0;
}

/* Bytes of a finished stream, collected through a temporary file. */
typedef struct { uint8_t *p; size_t n; } bytes_t;

static bytes_t slurp_fd(int fd)
{
	bytes_t b = { NULL, 0 };
	off_t end = lseek(fd, 0, SEEK_END);

	b.n = (size_t)end;
	b.p = sp_malloc(b.n + 1);
	if (pread(fd, b.p, b.n, 0) != (ssize_t)b.n)
		sp_die("pread failed");
	close(fd);
	return b;
}

static int tmp_fd(void)
{
	FILE *f = tmpfile();
	int fd;

	if (!f)
		sp_die("tmpfile: %s", strerror(errno));
	fd = dup(fileno(f));
	fclose(f);
	return fd;
}

static int fd_of(const uint8_t *p, size_t n)
{
	int fd = tmp_fd();

	if (write(fd, p, n) != (ssize_t)n)
		sp_die("write failed");
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/* Write NREC random records of KIND; returns the stream bytes. */
static bytes_t make_stream(int kind, trec_t *recs, int nrec, size_t bsize,
		const rec_prov_t *prov)
{
	int fd = tmp_fd(), st, i;
	rec_writer_t *w = rec_writer_fd(fd, "tmp", kind, prov, bsize, 1, &st);

	for (i = 0; i < nrec; i++)
		put_rec(w, kind, &recs[i]);
	if (rec_writer_close(w, NULL, 0) != 0)
		sp_die("close failed");
	return slurp_fd(fd);
}

/* Read a stream from FD; compare with RECS; returns the final status. */
static int read_check(int fd, int want, int kind, const trec_t *recs, int nrec,
		int *nok, char *msg, size_t msz)
{
	rec_reader_t *r = rec_reader_fd(fd, "x.sp");
	const uint8_t *body;
	uint32_t len;
	int rc, i = 0;

	*nok = 0;
	rc = rec_reader_start(r, want);
	if (rc == REC_OK) {
		while ((rc = rec_read(r, &body, &len)) == 1) {
			if (i < nrec && same_rec(kind, &recs[i], body, len))
				(*nok)++;
			i++;
		}
		if (rc == 0)
			rc = i == nrec ? REC_END : -100;
	}
	if (msg)
		snprintf(msg, msz, "%s", rec_errmsg(r));
	rec_reader_free(r);
	return rc;
}

static int status_of(const uint8_t *p, size_t n, int want, char *msg, size_t msz)
{
	int nok, fd = fd_of(p, n);
	int rc = read_check(fd, want, REC_KIND_ANY, NULL, 0, &nok, msg, msz);

	close(fd);
	return rc == -100 ? REC_END : rc;
}

static void test_roundtrip(void)
{
	static trec_t recs[600];
	int kind, round;

	for (kind = 1; kind <= REC_KIND_MAX; kind++) {
		int all = 1;

		for (round = 0; round < 12; round++) {
			int nrec = (int)rndn(600), i, nok, fd, rc;
			size_t bsize = round == 0 ? 0 : REC_BLOCK_MIN + rndn(round < 6 ? 2000 : 70000);
			bytes_t b;

			for (i = 0; i < nrec; i++)
				rnd_rec(&recs[i], kind, (uint64_t)i);
			b = make_stream(kind, recs, nrec, bsize, NULL);
			fd = fd_of(b.p, b.n);
			rc = read_check(fd, kind, kind, recs, nrec, &nok, NULL, 0);
			close(fd);
			if (rc != REC_END || nok != nrec) {
				tap_diag("kind %d round %d bsize %zu: rc %d, %d of %d records equal",
						kind, round, bsize, rc, nok, nrec);
				all = 0;
			}
			free(b.p);
		}
		tap_ok(all, "%s records round trip across random block sizes", rec_kind_name(kind));
	}
}

/* A child writes the stream into a pipe in random small pieces. */
static void test_pipe(void)
{
	static trec_t recs[400];
	int p[2], i, nok, rc, st;
	bytes_t b;
	pid_t pid;

	for (i = 0; i < 400; i++)
		rnd_rec(&recs[i], REC_KIND_HITS, (uint64_t)i);
	b = make_stream(REC_KIND_HITS, recs, 400, 700, NULL);
	if (pipe(p) < 0)
		sp_die("pipe");
	pid = fork();
	if (pid == 0) {
		size_t off = 0;

		close(p[0]);
		while (off < b.n) {
			size_t k = 1 + rndn(300);

			if (k > b.n - off)
				k = b.n - off;
			if (write(p[1], b.p + off, k) != (ssize_t)k)
				_exit(1);
			off += k;
		}
		_exit(0);
	}
	close(p[1]);
	rc = read_check(p[0], REC_KIND_HITS, REC_KIND_HITS, recs, 400, &nok, NULL, 0);
	close(p[0]);
	waitpid(pid, &st, 0);
	tap_ok(rc == REC_END && nok == 400, "a stream fed through a pipe in small pieces reads back (rc %d, %d records)", rc, nok);
	free(b.p);
}

/* Blocks kept by the caller (two rec_block_t in turn) and rec_write_block. */
static void test_blocks(void)
{
	static trec_t recs[300];
	rec_block_t blk[2] = { { 0 }, { 0 } };
	int i, fd, st, rc, n = 0, ok = 1;
	bytes_t b;
	rec_reader_t *r;
	rec_writer_t *w;
	const uint8_t *body;
	uint32_t len;

	for (i = 0; i < 300; i++)
		rnd_rec(&recs[i], REC_KIND_CANDIDATES, (uint64_t)i);
	b = make_stream(REC_KIND_CANDIDATES, recs, 300, 3000, NULL);
	/* copy block by block with rec_write_block, alternating buffers */
	fd = fd_of(b.p, b.n);
	r = rec_reader_fd(fd, "b");
	rc = rec_reader_start(r, REC_KIND_CANDIDATES);
	w = rec_writer_fd(tmp_fd(), "c", REC_KIND_CANDIDATES, rec_reader_prov(r), 0, 1, &st);
	for (i = 0; rc == REC_OK && (rc = rec_read_block(r, &blk[i & 1])) == REC_OK; i++) {
		rec_block_t *k = &blk[i & 1];

		while (rec_block_next(k, &body, &len) == 1)
			ok &= same_rec(REC_KIND_CANDIDATES, &recs[n++], body, len);
		rec_write_block(w, k->payload, k->len, k->nrec);
	}
	tap_ok(rc == REC_END && ok && n == 300 && i > 10, "blocks kept by the caller read in turn (%d blocks)", i);
	close(fd);
	rec_reader_free(r);
	{
		uint64_t nb, nr;

		rec_writer_totals(w, &nb, &nr);
		tap_ok(nb == (uint64_t)i && nr == 300, "writer totals count whole blocks written");
	}
	tap_ok(rec_writer_close(w, NULL, 0) == 0, "a stream of whole blocks closes cleanly");
	rec_block_free(&blk[0]);
	rec_block_free(&blk[1]);
	/* concatenated streams read as one, with the provenance merged */
	{
		size_t n2 = 2 * b.n;
		uint8_t *cc = sp_malloc(n2);
		int nok;

		memcpy(cc, b.p, b.n);
		memcpy(cc + b.n, b.p, b.n);
		fd = fd_of(cc, n2);
		static trec_t twice[600];
		memcpy(twice, recs, sizeof recs);
		memcpy(twice + 300, recs, sizeof recs);
		rc = read_check(fd, REC_KIND_CANDIDATES, REC_KIND_CANDIDATES, twice, 600, &nok, NULL, 0);
		close(fd);
		tap_ok(rc == REC_END && nok == 600, "two concatenated streams read as one");
		free(cc);
	}
	free(b.p);
}

static void test_prov(void)
{
	rec_prov_t a, b, c;
	char *argv[] = { "seedfilt", "-x", "ref\nsx", NULL };
	const char *v;
	size_t i = 0, n;
	char *text;
	int ok;

	rec_prov_init(&a);
	rec_prov_init(&b);
	rec_prov_init(&c);
	rec_prov_add_pg(&a, "recview", "0.1", 2, (char *[]){ "recview", "-i" });
	rec_prov_set(&a, REC_PROV_INDEX, "old.sx");
	rec_prov_set(&a, REC_PROV_INDEX, "ref.sx");
	rec_prov_add(&a, "recview.source", "a=b.fq");
	tap_ok(a.n == 3 && strcmp(rec_prov_get(&a, "index"), "ref.sx") == 0,
			"rec_prov_set replaces, rec_prov_add appends");
	rec_prov_carry(&b, &a);
	rec_prov_carry(&b, &a);
	rec_prov_add_pg(&b, "seedfilt", "0.1", 3, argv);
	text = rec_prov_text(&b, &n);
	ok = rec_prov_parse(&c, text, n) == 0 && c.n == 4;
	v = rec_prov_next(&c, REC_PROV_PG, &i);
	ok = ok && v && strcmp(v, "recview\t0.1\trecview -i") == 0;
	v = rec_prov_next(&c, REC_PROV_PG, &i);
	ok = ok && v && strcmp(v, "seedfilt\t0.1\tseedfilt -x ref sx") == 0;
	ok = ok && !rec_prov_next(&c, REC_PROV_PG, &i);
	ok = ok && strcmp(rec_prov_get(&c, "recview.source"), "a=b.fq") == 0;
	tap_ok(ok, "provenance carried forward keeps one pg line per stage, in order");
	tap_ok(rec_prov_parse(&c, "novalue\n", 8) < 0 && rec_prov_parse(&c, "a=b", 3) < 0 &&
			rec_prov_parse(&c, "b d=1\n", 6) < 0, "malformed provenance text is refused");
	free(text);
	rec_prov_free(&a);
	rec_prov_free(&b);
	rec_prov_free(&c);
}

static void test_errors(void)
{
	static trec_t recs[200];
	char msg[700], want[64];
	bytes_t b;
	size_t cut, hlen, i;
	int ok, rc, nfail = 0, nchk = 0, npay = 0;
	uint8_t *m;

	rec_prov_t prov;

	rec_prov_init(&prov);
	rec_prov_add_pg(&prov, "t", "1", 2, (char *[]){ "t", "-x" });
	for (i = 0; i < 200; i++)
		rnd_rec(&recs[i], REC_KIND_READS, i);
	b = make_stream(REC_KIND_READS, recs, 200, 4096, &prov);
	rec_prov_free(&prov);
	hlen = 20 + (size_t)(b.p[12] | b.p[13] << 8) + 8;
	tap_ok(status_of(b.p, b.n, REC_KIND_READS, msg, sizeof msg) == REC_END, "the intact stream reads to a clean end");

	rc = status_of(b.p, 0, REC_KIND_ANY, msg, sizeof msg);
	tap_ok(rc == REC_E_TRUNCATED && strstr(msg, "empty input"), "empty input: truncated (%s)", msg);

	/* every cut point gives "truncated" */
	ok = 1;
	for (cut = 1; cut < b.n; cut += cut < hlen + 64 ? 1 : 1 + rndn(97)) {
		rc = status_of(b.p, cut, REC_KIND_ANY, msg, sizeof msg);
		if (rc != REC_E_TRUNCATED || !strstr(msg, "truncated") || !strstr(msg, "did the upstream tool fail?")) {
			tap_diag("cut at %zu: rc %d: %s", cut, rc, msg);
			ok = 0;
		}
	}
	for (cut = b.n - 40; cut < b.n; cut++)
		ok &= status_of(b.p, cut, REC_KIND_ANY, msg, sizeof msg) == REC_E_TRUNCATED;
	tap_ok(ok, "a stream cut anywhere is reported truncated");
	rc = status_of(b.p, b.n - REC_END_LEN, REC_KIND_ANY, msg, sizeof msg);
	tap_ok(rc == REC_E_TRUNCATED && strstr(msg, "no end block"), "a stream without its end block: %s", msg);

	/* every single-bit flip is detected; in a payload, as a checksum error */
	m = sp_malloc(b.n);
	ok = 1;
	for (i = 0; i < b.n; i += 1 + rndn(7)) {
		memcpy(m, b.p, b.n);
		m[i] ^= (uint8_t)(1u << rndn(8));
		rc = status_of(m, b.n, REC_KIND_READS, msg, sizeof msg);
		nchk++;
		if (rc >= 0) {
			tap_diag("flip at byte %zu not detected", i);
			ok = 0;
		}
		nfail += rc < 0;
	}
	tap_ok(ok, "every one of %d single-bit flips is detected", nchk);
	ok = 1;
	for (i = 0; i < 40; i++) {
		size_t at = hlen + REC_BLOCK_HDR + rndn(1000);

		memcpy(m, b.p, b.n);
		m[at] ^= 0x20;
		rc = status_of(m, b.n, REC_KIND_READS, msg, sizeof msg);
		if (rc != REC_E_CHECKSUM || !strstr(msg, "checksum mismatch in block 0")) {
			tap_diag("payload flip at %zu: rc %d: %s", at, rc, msg);
			ok = 0;
		}
		npay++;
	}
	tap_ok(ok, "a flipped payload byte is a checksum mismatch naming block and offset");
	memcpy(m, b.p, b.n);
	m[14] ^= 1; /* in the provenance length, caught by the header checksum or as truncation */
	rc = status_of(m, b.n, REC_KIND_ANY, msg, sizeof msg);
	tap_ok(rc < 0, "a damaged header is refused (%s)", rec_status_name(rc));
	memcpy(m, b.p, b.n);
	m[hlen - 9] ^= 1; /* last provenance byte */
	if (hlen < 40)
		tap_diag("no provenance in the test stream");
	rc = status_of(m, b.n, REC_KIND_ANY, msg, sizeof msg);
	tap_ok(rc == REC_E_CHECKSUM && strstr(msg, "header checksum"), "a damaged provenance is a header checksum mismatch");
	memcpy(m, b.p, b.n);
	m[16] = 1; /* reserved header field */
	rc = status_of(m, b.n, REC_KIND_ANY, msg, sizeof msg);
	tap_ok(rc == REC_E_CORRUPT && strstr(msg, "corrupt stream header"), "a non-zero reserved header field is corrupt");

	/* end block */
	memcpy(m, b.p, b.n);
	m[b.n - 30] ^= 1;
	rc = status_of(m, b.n, REC_KIND_ANY, msg, sizeof msg);
	tap_ok(rc == REC_E_CHECKSUM && strstr(msg, "end block checksum"), "a damaged end block: %s", msg);

	/* a whole block dropped: the end block's totals disagree */
	{
		size_t b0 = hlen, len0 = b.p[b0 + 4] | (size_t)b.p[b0 + 5] << 8 | (size_t)b.p[b0 + 6] << 16;
		size_t blen = REC_BLOCK_HDR + len0;

		memcpy(m, b.p, b0);
		memcpy(m + b0, b.p + b0 + blen, b.n - b0 - blen);
		rc = status_of(m, b.n - blen, REC_KIND_ANY, msg, sizeof msg);
		tap_ok(rc == REC_E_CORRUPT && strstr(msg, "blocks lost"), "a dropped block is caught by the end block: %s", msg);
	}

	/* trailing garbage */
	m = sp_realloc(m, b.n + 5);
	memcpy(m, b.p, b.n);
	memcpy(m + b.n, "junk\n", 5);
	rc = status_of(m, b.n + 5, REC_KIND_ANY, msg, sizeof msg);
	tap_ok(rc == REC_E_CORRUPT && strstr(msg, "after the end block"), "data after the end block: %s", msg);

	/* not a stream */
	{
		static const struct { const char *data, *says; } ns[] = {
			{ ">chr1\nACGT\n", "looks like FASTA, not a seedpipe stream" },
			{ "@r1\nACGT\n+\nIIII\n", "looks like FASTQ" },
			{ "@HD\tVN:1.6\n", "looks like SAM" },
			{ "\x1f\x8b\x08\0\0\0\0\0", "looks like gzip" },
			{ "hello world\n", "looks like text" },
			{ "\x89SPX\r\n\x1a\nxxxx", "another seedpipe file" },
		};
		ok = 1;
		for (i = 0; i < sizeof ns / sizeof ns[0]; i++) {
			rc = status_of((const uint8_t *)ns[i].data, strlen(ns[i].data) + (ns[i].data[0] == 0x1f ? 4 : 0),
					REC_KIND_READS, msg, sizeof msg);
			if (rc != REC_E_NOT_STREAM || !strstr(msg, ns[i].says)) {
				tap_diag("%s: rc %d: %s", ns[i].says, rc, msg);
				ok = 0;
			}
		}
		tap_ok(ok, "FASTA, FASTQ, SAM, gzip, text and other files are named, not streams");
		rc = status_of((const uint8_t *)"\x01\x02\x03\x04\x05\x06\x07\x08", 8, REC_KIND_ANY, msg, sizeof msg);
		tap_ok(rc == REC_E_NOT_STREAM && strstr(msg, "bad magic"), "binary junk: bad magic");
	}

	/* wrong kind, with the hint */
	rc = status_of(b.p, b.n, REC_KIND_CANDIDATES, msg, sizeof msg);
	tap_ok(rc == REC_E_KIND && strstr(msg, "expected candidates, got reads: did you forget seedfilt?"),
			"wrong kind: %s", msg);
	tap_ok(rec_kind_hint(REC_KIND_HITS, REC_KIND_CANDIDATES) && !rec_kind_hint(REC_KIND_KEYS, REC_KIND_HITS),
			"the hint table answers per (wanted, got)");

	/* version too new: rewrite the version and the header checksum */
	memcpy(m, b.p, b.n);
	m[8] = REC_VERSION + 1;
	{
		uint64_t x = XXH3_64bits(m, hlen - 8);

		for (i = 0; i < 8; i++)
			m[hlen - 8 + i] = (uint8_t)(x >> (8 * i));
	}
	rc = status_of(m, b.n, REC_KIND_ANY, msg, sizeof msg);
	snprintf(want, sizeof want, "version %d is newer", REC_VERSION + 1);
	tap_ok(rc == REC_E_VERSION && strstr(msg, want), "a newer format version: %s", msg);
	/* a candidates stream of format version 1 (20-byte entries) is refused */
	m[8] = 1;
	m[10] = REC_KIND_CANDIDATES;
	{
		uint64_t x = XXH3_64bits(m, hlen - 8);

		for (i = 0; i < 8; i++)
			m[hlen - 8 + i] = (uint8_t)(x >> (8 * i));
	}
	rc = status_of(m, b.n, REC_KIND_ANY, msg, sizeof msg);
	tap_ok(rc == REC_E_VERSION && strstr(msg, "candidates stream in format version 1")
			&& strstr(msg, "run seedfilt again"), "an old candidates stream: %s", msg);
	m[8] = 1;
	m[10] = 9; /* unknown kind with a valid checksum */
	{
		uint64_t x = XXH3_64bits(m, hlen - 8);

		for (i = 0; i < 8; i++)
			m[hlen - 8 + i] = (uint8_t)(x >> (8 * i));
	}
	rc = status_of(m, b.n, REC_KIND_ANY, msg, sizeof msg);
	tap_ok(rc == REC_E_VERSION && strstr(msg, "unknown stream kind 9"), "an unknown kind: %s", msg);
	free(m);
	free(b.p);

	/* distinct codes */
	tap_ok(REC_E_TRUNCATED != REC_E_CHECKSUM && REC_E_CHECKSUM != REC_E_NOT_STREAM &&
			REC_E_NOT_STREAM != REC_E_KIND && REC_E_KIND != REC_E_VERSION &&
			REC_E_VERSION != REC_E_CORRUPT && strcmp(rec_status_name(REC_E_TRUNCATED), "truncated") == 0,
			"error classes have distinct codes and names");
	(void)nfail;
	(void)npay;
}

static void test_writer_errors(void)
{
	char msg[200] = "";
	int st, fd, rc, master;
	rec_writer_t *w;
	char *slave;

	fd = open("/dev/full", O_WRONLY);
	if (fd < 0) {
		tap_skip("no /dev/full");
	} else {
		w = rec_writer_fd(fd, "/dev/full", REC_KIND_KEYS, NULL, 0, 1, &st);
		for (st = 0; st < 100000; st++)
			rec_put_key(w, "k", 1, "value", 5);
		rc = rec_writer_close(w, msg, sizeof msg);
		tap_ok(rc == -ENOSPC && strcmp(msg, "cannot write '/dev/full': No space left on device") == 0,
				"a full disk is reported: %s", msg);
		close(fd);
	}
	master = posix_openpt(O_RDWR | O_NOCTTY);
	if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0 || !(slave = ptsname(master)) ||
			(fd = open(slave, O_RDWR | O_NOCTTY)) < 0) {
		tap_skip("no pseudo-terminal");
		tap_skip("no pseudo-terminal");
	} else {
		w = rec_writer_fd(fd, "-", REC_KIND_READS, NULL, 0, 0, &st);
		tap_ok(!w && st == REC_E_TTY, "no binary stream to a terminal");
		w = rec_writer_fd(fd, "-", REC_KIND_READS, NULL, 0, 1, &st);
		tap_ok(w && st == REC_OK, "unless forced");
		if (w)
			rec_writer_close(w, NULL, 0);
		close(fd);
	}
	if (master >= 0)
		close(master);
}

/* Blocks with valid checksums whose record framing is wrong. */
static void test_bad_framing(void)
{
	static const struct { const char *p; size_t n; uint32_t nrec; } bad[] = {
		{ "\xff\xff\0\0abc", 7, 1 },        /* body overruns the block */
		{ "\x01\0\0\0a\x01\0\0\0b", 10, 1 }, /* more records than nrec */
		{ "\x06\0\0\0abcdef", 10, 2 },       /* fewer records than nrec */
		{ "\x01\0\0\0a\x01\0\0", 8, 2 },  /* a partial length */
	};
	char msg[700];
	size_t i;
	int ok = 1;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int fd = tmp_fd(), st, rc;
		rec_writer_t *w = rec_writer_fd(fd, "t", REC_KIND_KEYS, NULL, 0, 1, &st);
		bytes_t b;

		rec_write_block(w, bad[i].p, bad[i].n, bad[i].nrec);
		rec_writer_close(w, NULL, 0);
		b = slurp_fd(fd);
		rc = status_of(b.p, b.n, REC_KIND_KEYS, msg, sizeof msg);
		if (rc != REC_E_CORRUPT || !strstr(msg, "corrupt record framing in block 0")) {
			tap_diag("case %zu: rc %d: %s", i, rc, msg);
			ok = 0;
		}
		free(b.p);
	}
	tap_ok(ok, "record framing that disagrees with its block is corrupt");
}

/*
 * Random bodies (mostly garbage, some mutated valid ones) behind valid
 * checksums: the decoders and the TSV printer must agree on what is
 * malformed and never read outside the body (run under ASan by make asan).
 */
static void test_garbage_bodies(void)
{
	FILE *null = fopen("/dev/null", "w");
	uint8_t body[3000];
	int kind, i, ok = 1, nbad = 0, ngood = 0;

	for (kind = 1; kind <= REC_KIND_MAX; kind++) {
		for (i = 0; i < 3000; i++) {
			uint32_t n, j;
			trec_t t;
			rec_read_t rd;
			int c1, c2;
			uint8_t *heap;

			if (i & 1) {
				n = rndn(80);
				for (j = 0; j < n; j++)
					body[j] = (uint8_t)(rndn(4) ? rndn(3) : rnd());
			} else {
				rnd_rec(&t, kind, (uint64_t)i);
				to_read(&t, &rd);
				switch (kind) {
				case REC_KIND_READS: n = (uint32_t)rec_read_encode(body, &rd); break;
				case REC_KIND_CANDIDATES: n = (uint32_t)rec_cands_encode(body, &rd, t.cand, t.n); break;
				case REC_KIND_HITS: n = (uint32_t)rec_hits_encode(body, &rd, t.hit, t.n); break;
				case REC_KIND_PAIRS: n = (uint32_t)rec_pair_encode(body, &t.pair); break;
				default: n = (uint32_t)rec_key_encode(body, t.key, t.kl, t.val, t.vl); break;
				}
				for (j = rndn(3); j > 0 && n > 0; j--)
					body[rndn(n)] ^= (uint8_t)(1u << rndn(8));
			}
			/* an exact-size heap copy so ASan sees any overread */
			heap = sp_malloc(n);
			memcpy(heap, body, n);
			c1 = rec_kind_check(kind, heap, n);
			c2 = rec_tsv_record(kind, heap, n, null);
			ok &= c1 == c2;
			nbad += c1 < 0;
			ngood += c1 == 0;
			free(heap);
		}
	}
	fclose(null);
	tap_ok(ok && nbad > 1000 && ngood > 1000, "garbage bodies: decoders and printer agree (%d malformed, %d well-formed)", nbad, ngood);
}

/* A reader that went away (EPIPE, SIGPIPE ignored) ends the writer quietly
 * with status 0 in die mode. */
static void test_epipe(void)
{
	int p[2], e[2], st;
	char buf[256];
	ssize_t k;
	pid_t pid;

	if (pipe(p) < 0 || pipe(e) < 0)
		sp_die("pipe");
	pid = fork();
	if (pid == 0) {
		rec_writer_t *w;
		int i, s;

		signal(SIGPIPE, SIG_IGN);
		close(p[0]);
		close(e[0]);
		dup2(e[1], 2);
		w = rec_writer_fd(p[1], "-", REC_KIND_KEYS, NULL, 4096, 1, &s);
		rec_writer_set_die(w, 1);
		for (i = 0; i < 1000000; i++)
			rec_put_key(w, "key", 3, "value", 5);
		rec_writer_close(w, NULL, 0);
		_exit(7); /* not reached: the write fails first */
	}
	close(p[1]);
	close(e[1]);
	close(p[0]); /* the reader goes away at once */
	k = read(e[0], buf, sizeof buf - 1);
	close(e[0]);
	waitpid(pid, &st, 0);
	tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0 && k == 0,
			"EPIPE ends the writer quietly with status 0 (status %d, %zd bytes on stderr)", st, k);
}

/*
 * A writer out of die mode (one on a pipeline thread) keeps a misuse as its
 * first error instead of exiting: a commit longer than the room asked for,
 * a bad block length; later records write nothing.
 */
static void test_writer_kept_errors(void)
{
	char msg[256] = "";
	uint8_t *p;
	int st, rc;
	rec_writer_t *w = rec_writer_fd(tmp_fd(), "k", REC_KIND_KEYS, NULL, 0, 1, &st);

	rec_writer_set_die(w, 0);
	rec_put_key(w, "key", 3, "value", 5);
	tap_ok(rec_writer_error(w, msg, sizeof msg) == 0, "a writer out of die mode starts clean");
	p = rec_begin(w, 10);
	memset(p, 'x', 10);
	rec_commit(w, 20);
	rc = rec_writer_error(w, msg, sizeof msg);
	tap_ok(rc < 0 && strstr(msg, "rec_commit: record of 20 bytes exceeds the 10 reserved"),
			"a commit past its room is kept, not fatal (%d: %s)", rc, msg);
	rec_put_key(w, "key", 3, "value", 5);
	rec_write_block(w, "x", 0, 1);
	msg[0] = 0;
	rc = rec_writer_close(w, msg, sizeof msg);
	tap_ok(rc < 0 && strstr(msg, "rec_commit: record of 20 bytes"),
			"close returns the first error kept (%s)", msg);

	w = rec_writer_fd(tmp_fd(), "k", REC_KIND_KEYS, NULL, 0, 1, &st);
	rec_writer_set_die(w, 0);
	rec_write_block(w, "x", 0, 1);
	rc = rec_writer_close(w, msg, sizeof msg);
	tap_ok(rc < 0 && strstr(msg, "rec_write_block: bad payload length 0"),
			"a bad block length is kept, not fatal (%s)", msg);
}

/* The codecs refuse bodies whose lengths do not add up. */
static void test_malformed_bodies(void)
{
	uint8_t buf[2000];
	trec_t t;
	rec_read_t rd;
	size_t n;
	int kind, ok = 1;
	uint32_t cut;

	for (kind = 1; kind <= REC_KIND_MAX; kind++) {
		int r;

		for (r = 0; r < 30; r++) {
			rnd_rec(&t, kind, 7);
			to_read(&t, &rd);
			switch (kind) {
			case REC_KIND_READS: n = rec_read_encode(buf, &rd); break;
			case REC_KIND_CANDIDATES: n = rec_cands_encode(buf, &rd, t.cand, t.n); break;
			case REC_KIND_HITS: n = rec_hits_encode(buf, &rd, t.hit, t.n); break;
			case REC_KIND_PAIRS: n = rec_pair_encode(buf, &t.pair); break;
			default: n = rec_key_encode(buf, t.key, t.kl, t.val, t.vl); break;
			}
			ok &= rec_kind_check(kind, buf, (uint32_t)n) == 0;
			ok &= same_rec(kind, &t, buf, (uint32_t)n);
			/* any shorter body fails, except keys (value = the rest) and
			 * candidates/hits cut exactly at an entry boundary keep a
			 * consistent count only if n matches: they must fail too */
			if (kind != REC_KIND_KEYS) {
				for (cut = 0; cut < n; cut++)
					if (rec_kind_check(kind, buf, cut) == 0) {
						tap_diag("kind %d: body cut to %u of %zu accepted", kind, cut, n);
						ok = 0;
						break;
					}
			} else {
				ok &= rec_kind_check(kind, buf, 3) < 0 &&
					(t.kl == 0 || rec_kind_check(kind, buf, 3 + t.kl) < 0);
			}
		}
	}
	tap_ok(ok, "every codec decodes its encoding and refuses truncated bodies");
}

/* LEB128 of X at P (the format's varint, seedpipe-rec(5)). */
static uint8_t *ref_var(uint8_t *p, uint64_t x)
{
	do {
		*p++ = (uint8_t)((x & 0x7f) | (x >= 0x80 ? 0x80 : 0));
		x >>= 7;
	} while (x);
	return p;
}

/*
 * rec_cands_encode's bytes equal a plain encoder written from the format
 * (tag = support << 2 | strand << 1 | reset; a reset entry gives part,
 * sequence and position, the others the position's delta), on lists with
 * runs, resets, deltas and supports of every varint length; and the view
 * with the checked iterator (extend's path) gives back what decode does.
 */
static void test_cands_bytes(void)
{
	static const uint32_t big[] = { 0, 1, 0x7f, 0x80, 0x3fff, 0x4000, 0x1fffff, 0x200000,
		0xfffffff, 0x10000000, 0xffffffffu };
	uint8_t want[4096 + 64], got[4096 + 64], *q;
	rec_cand_t c[150];
	rec_read_t rd;
	int t, ok = 1, same = 1;

	memset(&rd, 0, sizeof rd);
	rd.name = "r";
	rd.name_len = 1;
	rd.comment = "";
	rd.seq = "ACGT";
	rd.seq_len = 4;
	for (t = 0; t < 2000 && ok; t++) {
		uint32_t n = rndn(150), i;
		size_t nw, ng, h = rec_read_size(&rd);
		rec_cands_t v;
		rec_cand_iter_t it;
		rec_cand_t d;
		for (i = 0; i < n; i++) {
			int run = i && rndn(4) != 0;
			c[i].part = run ? c[i - 1].part : rndn(3) ? rndn(3) : big[rndn(11)];
			c[i].seq_id = run ? c[i - 1].seq_id : rndn(3) ? rndn(5) : big[rndn(11)];
			if (run) {
				uint32_t room = 0xffffffffu - c[i - 1].pos, dl = rndn(2) ? rndn(300)
					: big[rndn(11)];
				c[i].pos = c[i - 1].pos + (dl < room ? dl : room);
			} else {
				c[i].pos = rndn(2) ? rndn(1000) : big[rndn(11)];
			}
			c[i].strand = (uint8_t)rndn(2);
			c[i].support = rndn(4) ? 1 + rndn(6) : big[rndn(11)] >> 2;
		}
		ng = rec_cands_encode(got, &rd, c, n);
		rec_read_encode(want, &rd);
		q = want + h;
		q[0] = (uint8_t)n;
		q[1] = (uint8_t)(n >> 8);
		q[2] = (uint8_t)(n >> 16);
		q[3] = (uint8_t)(n >> 24);
		q += 4;
		for (i = 0; i < n; i++) {
			int reset = i == 0 || c[i].part != c[i - 1].part || c[i].seq_id != c[i - 1].seq_id
				|| c[i].pos < c[i - 1].pos;
			q = ref_var(q, (uint64_t)c[i].support << 2 | (uint64_t)c[i].strand << 1
					| (uint64_t)reset);
			if (reset) {
				q = ref_var(q, c[i].part);
				q = ref_var(q, c[i].seq_id);
				q = ref_var(q, c[i].pos);
			} else {
				q = ref_var(q, c[i].pos - c[i - 1].pos);
			}
		}
		nw = (size_t)(q - want);
		if (ng != nw || memcmp(got, want, nw) != 0) {
			tap_diag("list %d of %u entries: %zu bytes encoded, %zu by the format", t, n, ng, nw);
			ok = 0;
		}
		/* the view and the checked iterator give the same list */
		if (rec_cands_view(got, ng, &v) < 0 || v.n != n) {
			same = 0;
			continue;
		}
		rec_cands_first(&v, &it);
		for (i = 0; i < n; i++)
			if (rec_cands_next_checked(&it, &d) != 1 || d.part != c[i].part
					|| d.seq_id != c[i].seq_id || d.pos != c[i].pos
					|| d.strand != c[i].strand || d.support != c[i].support)
				same = 0;
		same &= rec_cands_next_checked(&it, &d) == 0;
	}
	tap_ok(ok, "candidates: the encoder's bytes are the format's (2000 lists)");
	tap_ok(same, "candidates: view + checked iterator return every entry, then the end");
}

/*
 * rec_cand_cmp against a key built by hand (part, then pos, then strand, as
 * one integer): the sign of every comparison, and qsort's order of random
 * lists with many equal parts, positions and strands.
 */
static void test_cand_cmp(void)
{
	int ok = 1, t;

	for (t = 0; t < 300; t++) {
		uint32_t n = 1 + rndn(200), i;
		rec_cand_t *c = malloc(n * sizeof *c);
		uint64_t *key = malloc(n * sizeof *key);

		for (i = 0; i < n; i++) {
			c[i].part = t % 2 ? rndn(3) : (uint32_t)rnd() >> 1;   /* the key holds 31 bits */
			c[i].pos = t % 3 ? rndn(5) : (uint32_t)rnd();
			c[i].strand = (uint8_t)rndn(2);
			c[i].seq_id = (uint32_t)rnd();
			c[i].support = (uint32_t)rnd();
		}
		for (i = 0; i + 1 < n; i++) {
			uint64_t ka = (uint64_t)c[i].part << 33 | (uint64_t)c[i].pos << 1 | c[i].strand;
			uint64_t kb = (uint64_t)c[i + 1].part << 33 | (uint64_t)c[i + 1].pos << 1 | c[i + 1].strand;
			int r = rec_cand_cmp(&c[i], &c[i + 1]);

			if ((r < 0) != (ka < kb) || (r > 0) != (ka > kb))
				ok = 0;
		}
		for (i = 0; i < n; i++)
			key[i] = (uint64_t)c[i].part << 33 | (uint64_t)c[i].pos << 1 | c[i].strand;
		qsort(c, n, sizeof *c, rec_cand_cmp);
		qsort(key, n, sizeof *key, cmp_u64);
		for (i = 0; i < n; i++)
			if (key[i] != ((uint64_t)c[i].part << 33 | (uint64_t)c[i].pos << 1 | c[i].strand))
				ok = 0;
		free(c);
		free(key);
	}
	tap_ok(ok, "rec_cand_cmp: part, position, strand (signs and qsort order of 300 random lists)");
}

int main(void)
{
	sp_set_progname("rec_test");
	test_cand_cmp();
	test_roundtrip();
	test_pipe();
	test_blocks();
	test_writer_kept_errors();
	test_prov();
	test_errors();
	test_writer_errors();
	test_epipe();
	test_bad_framing();
	test_garbage_bodies();
	test_malformed_bodies();
	test_cands_bytes();
	return tap_done();
}
