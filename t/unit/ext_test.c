/*
 * ext_test.c - unit tests of common/ext_*.c: reference windows with N runs
 * against the source sequences, MAPQ and CIGAR text, and ext_batch_run on
 * hand-made candidates (N in the reference and in the read, sequence
 * boundaries, both strands, merging of neighbouring diagonals).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ext.h"
#include "idx.h"
#include "seqio.h"
#include "tap.h"
#include "util.h"
#include "testutil.h"

static uint64_t rs = 88172645463325252ull;

static uint32_t rnd(void)
{
	return (uint32_t)tu_xorshift64(&rs);
}

#define NSEQ 3
static char *seqs[NSEQ];
static size_t lens[NSEQ];

static idx_t *make_index(char **path)
{
	idx_params_t p;
	idx_ref_t *r = idx_ref_init();
	idx_build_opt_t o = { 1, 0, 0, 0, NULL };
	char err[128], name[16];
	int fd, s;
	size_t i;

	*path = sp_strdup("/tmp/ext_test.XXXXXX");
	fd = mkstemp(*path);
	for (s = 0; s < NSEQ; s++) {
		lens[s] = 500 + rnd() % 1500;
		seqs[s] = sp_malloc(lens[s] + 1);
		for (i = 0; i < lens[s]; i++)
			seqs[s][i] = "ACGT"[rnd() % 4];
		for (i = 0; i < 4; i++) {      /* N runs, one at the start of sequence 1 */
			size_t b = (s == 1 && i == 0) ? 0 : rnd() % (lens[s] - 20), n = 1 + rnd() % 9;
			memset(seqs[s] + b, 'N', n);
		}
		if (s == 2)     /* E. coli 536, 1502877..1502936: two loci, one start */
			memcpy(seqs[s] + 100, "TGTGGTCACAGGATTATACAACTACTGATAAATATTCAACGTG"
					"CAAAGAGGATGAAGTTT", 60);
		seqs[s][lens[s]] = 0;
		snprintf(name, sizeof name, "c%d", s);
		idx_ref_add(r, name, seqs[s], lens[s]);
	}
	if (idx_params_init(&p, NULL, 4, 4, 0, err, sizeof err) != 0)
		sp_die("%s", err);
	p.structs = IDX_S_GENERAL;
	idx_build(r, &p, &o, fd, *path);
	close(fd);
	idx_ref_free(r);
	return idx_open_or_die(*path, 0);
}

/* One candidates body for READ (ASCII) with candidates C[0..N). */
static void add_read(ext_batch_t *b, uint64_t id, const char *name, const char *read,
		const rec_cand_t *c, uint32_t n)
{
	rec_read_t rd;
	uint8_t *body;
	size_t len;

	memset(&rd, 0, sizeof rd);
	rd.id = id;
	rd.name = name;
	rd.name_len = (uint32_t)strlen(name);
	rd.comment = "";
	rd.seq = read;
	rd.seq_len = (uint32_t)strlen(read);
	body = sp_malloc(rec_cands_size(&rd, n));
	len = rec_cands_encode(body, &rd, c, n);
	tap_ok(ext_batch_add(b, body, (uint32_t)len) == 0, "add read %s", name);
	free(body);
}

static rec_cand_t cand(const idx_t *x, uint32_t seq, uint64_t ofs, uint8_t strand)
{
	rec_cand_t c;

	memset(&c, 0, sizeof c);
	c.part = 0;
	c.seq_id = seq;
	c.pos = (uint32_t)(x->off[seq] + ofs - x->part[0].beg);
	c.strand = strand;
	c.support = 1;
	return c;
}

int main(void)
{
	char *path, buf[512], name[16];
	idx_t *x = make_index(&path);
	uint8_t w[2100];
	int i, ok = 1;
	ext_hit_t h;

	/* windows: ext_ref_ascii equals the source, N runs included */
	for (i = 0; i < 3000 && ok; i++) {
		int s = rnd() % NSEQ;
		size_t b = rnd() % lens[s], n = 1 + rnd() % (lens[s] - b);
		ext_ref_ascii(x, x->off[s] + b, n, w);
		ok = !memcmp(w, seqs[s] + b, n);
	}
	tap_ok(ok, "ext_ref_ascii equals the sequences (N runs included) on 3000 random ranges");
	ext_ref_ascii(x, x->off[1], 3, w);
	tap_ok(w[0] == 'N', "an N run at the start of a sequence");

	/* MAPQ and CIGAR text */
	tap_ok(ext_mapq(1, 0, 2, 0) == 60, "mapq unique = 60");
	tap_ok(ext_mapq(1, 1, 0, 1) == 20 && ext_mapq(1, 1, 1, 3) == 40 && ext_mapq(1, 1, 0, 5) == 60,
			"mapq 20 (d2 - d1), at most 60");
	tap_ok(ext_mapq(2, 0, 0, 0) == 0 && ext_mapq(3, 1, 0, 1) == 0 && ext_mapq(4, 0, 0, 0) == 0
			&& ext_mapq(10, 0, 0, 0) == 0 && ext_mapq(1000, 0, 0, 0) == 0,
			"mapq of repeated best loci: 0 (as bwa)");
	memset(&h, 0, sizeof h);
	h.n_cigar = 3;
	h.cigar[0] = 12u << 4 | 0;
	h.cigar[1] = 1u << 4 | 1;
	h.cigar[2] = 300u << 4 | 2;
	tap_ok(!strcmp(ext_cigar_str(&h, buf, sizeof buf), "12M1I300D"), "cigar text");
	h.n_cigar = 0;
	tap_ok(!strcmp(ext_cigar_str(&h, buf, sizeof buf), "*"), "no cigar: *");

	/* batches */
	{
		ext_batch_t *b = ext_batch_new();
		ext_opt_t o;
		ext_stats_t st;
		const ext_hit_t *hh;
		uint32_t n, k;
		char r1[64], r2[64], r3[64], r4[64], rc[64];
		rec_cand_t c[8];
		size_t g;

		memset(&o, 0, sizeof o);
		memset(&st, 0, sizeof st);
		o.max_a = 2;
		o.n_threads = 2;
		/* r1: 40 bases of c0 free of N; a planted substitution; 3 neighbouring diagonals */
		for (g = 100;; g++) {
			if (!memchr(seqs[0] + g, 'N', 40))
				break;
		}
		memcpy(r1, seqs[0] + g, 40);
		r1[40] = 0;
		r1[20] = r1[20] == 'A' ? 'C' : 'A';
		c[0] = cand(x, 0, g, 0);
		c[1] = cand(x, 0, g + 1, 0);
		c[2] = cand(x, 0, g - 2, 0);
		add_read(b, 0, "r1", r1, c, 3);
		/* r2: the same read reverse-complemented, on strand '-' */
		seqio_revcomp(rc, r1, 40);
		rc[40] = 0;
		memcpy(r2, rc, 41);
		c[0] = cand(x, 0, g, 1);
		add_read(b, 1, "r2", r2, c, 1);
		/* r3: over the boundary of c0 and c1: never aligned across */
		memcpy(r3, seqs[0] + lens[0] - 20, 20);
		memcpy(r3 + 20, "ACGTACGTACGTACGTACGT", 21);
		c[0] = cand(x, 0, lens[0] - 20, 0);
		add_read(b, 2, "r3", r3, c, 1);
		/* r4: a read with an N in it and the reference N run at the start of c1 */
		memcpy(r4, seqs[1], 30);
		r4[30] = 0;
		for (k = 0; k < 30; k++)
			if (r4[k] == 'N')
				r4[k] = 'A';
		r4[25] = 'N';
		c[0] = cand(x, 1, 0, 0);
		add_read(b, 3, "r4", r4, c, 1);
		tap_ok(ext_batch_reads(b) == 4 && ext_batch_cands(b) == 6, "batch counts");
		o.max_a = 15;
		tap_ok(ext_batch_run(b, x, &o, &st, buf, sizeof buf) == 0, "run");
		hh = ext_batch_hits(b, 0, &n);
		tap_ok(n >= 1 && hh[0].pos == g && hh[0].dist == 1 && hh[0].strand == 0,
				"r1: one locus from three diagonals, at its planted place, NM 1 (n %u)", n);
		snprintf(name, sizeof name, "20%c19", seqs[0][g + 20]);
		tap_ok(n >= 1 && !strcmp(ext_hit_md(b, &hh[0]), name), "r1: MD %s", name);
		for (k = 1, ok = 1; k < n; k++)
			ok &= hh[k].dist > hh[0].dist || hh[k].pos != hh[0].pos;
		tap_ok(ok, "r1: no duplicate of the best hit");
		hh = ext_batch_hits(b, 1, &n);
		tap_ok(n >= 1 && hh[0].pos == g && hh[0].dist == 1 && hh[0].strand == 1,
				"r2: reverse strand at the same place");
		hh = ext_batch_hits(b, 2, &n);
		for (k = 0, ok = 1; k < n; k++)
			ok &= hh[k].seq == 0 && hh[k].pos + 20 <= lens[0];
		tap_ok(ok, "r3: hits stay inside c0 (%u)", n);
		hh = ext_batch_hits(b, 3, &n);
		{
			int nref = 0;
			for (k = 0; k < 30; k++)
				nref += seqs[1][k] == 'N';
			tap_ok(n >= 1 && hh[0].pos == 0 && (int)hh[0].dist == nref + 1,
					"r4: reference N and read N each cost a mismatch (NM %u, want %d)",
					n ? hh[0].dist : 0, nref + 1);
		}
		tap_ok(st.reads == 4 && st.mapped + st.unmapped == 4, "stats");
		ext_batch_clear(b);
		o.max_a = 3;
		c[0] = cand(x, 2, 110, 0);
		add_read(b, 5, "two", "GGATTATACAGCTACTGATAAATATTCAACGTGCCAAAAG", c, 1);
		tap_ok(ext_batch_run(b, x, &o, &st, buf, sizeof buf) == 0, "run 2");
		hh = ext_batch_hits(b, 0, &n);
		tap_ok(n == 1 && hh[0].pos == 110 && hh[0].dist == 3
				&& !strcmp(ext_cigar_str(&hh[0], buf, sizeof buf), "40M"),
				"runs of ends split by a gap but one start: one hit, 40M before "
				"33M1I1M1I4M (%u, %s)", n, n ? ext_cigar_str(&hh[0], buf, sizeof buf) : "");
		ext_batch_clear(b);
		tap_ok(ext_batch_reads(b) == 0, "clear");
		c[0] = cand(x, 2, 0, 0);
		c[0].seq_id = 7;
		add_read(b, 9, "bad", r1, c, 1);
		tap_ok(ext_batch_run(b, x, &o, &st, buf, sizeof buf) < 0 && strstr(buf, "outside"),
				"a candidate outside the index is an error: %s", buf);
		tap_ok(ext_batch_add(b, (const uint8_t *)"xx", 2) < 0, "a malformed body is refused");
		{   /* a malformed list is found by ext_batch_run, whichever read holds it */
			static const char *const rs[] = { NULL, "" };
			int k;
			for (k = 0; k < 2; k++) {
				rec_read_t rd;
				uint8_t *body;
				size_t len;
				rec_cand_t cc[2];
				cc[0] = cand(x, 2, 0, 0);
				cc[1] = cand(x, 2, 50, 0);
				memset(&rd, 0, sizeof rd);
				rd.name = "mal";
				rd.name_len = 3;
				rd.comment = "";
				rd.seq = rs[k] ? rs[k] : r1;
				rd.seq_len = (uint32_t)strlen(rd.seq);
				body = sp_malloc(rec_cands_size(&rd, 2) + 8);
				len = rec_cands_encode(body, &rd, cc, 2);
				ext_batch_clear(b);
				/* the last entry's delta loses its final byte: 0x80 continues */
				body[len - 1] |= 0x80;
				tap_ok(ext_batch_add(b, body, (uint32_t)len) == 0, "a malformed list is added (%s read)",
						rs[k] ? "an empty" : "a");
				tap_ok(ext_batch_run(b, x, &o, &st, buf, sizeof buf) < 0
						&& strstr(buf, "malformed candidates record") && strstr(buf, "'mal'"),
						"and ext_batch_run names it: %s", buf);
				/* one byte too many after the last entry */
				len = rec_cands_encode(body, &rd, cc, 2);
				body[len++] = 0;
				ext_batch_clear(b);
				tap_ok(ext_batch_add(b, body, (uint32_t)len) == 0
						&& ext_batch_run(b, x, &o, &st, buf, sizeof buf) < 0
						&& strstr(buf, "malformed"), "bytes after the last entry are an error too");
				free(body);
			}
		}
		ext_batch_free(b);

		{   /* a thread's scratch (ext_batch_run_ws) serves batch after batch
		     * as a batch's own does: run another batch on it first */
			int gaps;
			for (gaps = 0; gaps < 2; gaps++) {
				ext_batch_t *b1 = ext_batch_new(), *b2 = ext_batch_new(), *b3 = ext_batch_new();
				ext_ws_t *ws = ext_ws_new();
				const ext_hit_t *h1, *h2;
				uint32_t n1, n2;
				o.max_a = 3;
				o.nogaps = !gaps;
				c[0] = cand(x, 0, g, 0);
				c[1] = cand(x, 0, g + 1, 1);
				add_read(b1, 0, "r1", r1, c, 2);
				add_read(b2, 0, "r1", r1, c, 2);
				/* the other batch: another read of the same length first */
				c[0] = cand(x, 0, g, 0);
				add_read(b3, 5, "other", "ACGTTGCAACGTTGCAACGTTGCAACGTTGCAACGTTGCA", c, 1);
				ok = ext_batch_run(b1, x, &o, &st, buf, sizeof buf) == 0
					&& ext_batch_run_ws(b3, ws, x, &o, &st, buf, sizeof buf) == 0
					&& ext_batch_run_ws(b2, ws, x, &o, &st, buf, sizeof buf) == 0;
				h1 = ext_batch_hits(b1, 0, &n1);
				h2 = ext_batch_hits(b2, 0, &n2);
				ok &= n1 >= 1 && n1 == n2;
				for (k = 0; ok && k < n1; k++)
					ok = h1[k].pos == h2[k].pos && h1[k].dist == h2[k].dist
						&& h1[k].n_cigar == h2[k].n_cigar
						&& !strcmp(ext_hit_md(b1, &h1[k]), ext_hit_md(b2, &h2[k]));
				tap_ok(ok, "a shared scratch gives the hits of a batch's own (%s, %u hits)",
						gaps ? "gaps" : "--no-gaps", n1);
				ext_ws_free(ws);
				ext_batch_free(b1);
				ext_batch_free(b2);
				ext_batch_free(b3);
			}
			o.nogaps = 0;
		}

		/* regressions found by UBSan: a record with an empty body as the
		 * first of a batch was copied into the arena before one was
		 * allocated (memcpy into NULL); a batch without any hit had no hits
		 * array, and each read's hits were NULL + 0 */
		b = ext_batch_new();
		tap_ok(ext_batch_add(b, (const uint8_t *)"", 0) < 0 && ext_batch_reads(b) == 0,
				"an empty body as the first record of a batch is refused");
		ext_batch_free(b);
		b = ext_batch_new();
		c[0] = cand(x, 2, 0, 0);
		add_read(b, 0, "none", "ACGTTGCAACGTTGCAACGTTGCAACGTTGCA", c, 1);
		add_read(b, 1, "nocand", "ACGTTGCAACGTTGCAACGTTGCAACGTTGCA", c, 0);
		o.max_a = 0;
		tap_ok(ext_batch_run(b, x, &o, &st, buf, sizeof buf) == 0, "a batch without hits runs");
		hh = ext_batch_hits(b, 0, &n);
		ok = n == 0 && hh != NULL;
		hh = ext_batch_hits(b, 1, &n);
		tap_ok(ok && n == 0 && hh != NULL, "its reads have no hits, in an array that exists");
		ext_batch_free(b);
	}
	for (i = 0; i < NSEQ; i++)
		free(seqs[i]);
	idx_close(x);
	unlink(path);
	free(path);
	return tap_done();
}
