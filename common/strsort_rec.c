/*
 * strsort_rec.c - strsort -B: sort the records of seedpipe streams by a
 * key made from each record (see ss_run_records in strsort.h) with the msd.h
 * radix sort, and write one stream of the same kind.
 *
 * The record bodies are copied into one arena as they are read (blocks are
 * reused by the reader); the keys go to a second arena:
 *
 *   keys    the key bytes
 *   hits    14 bytes: 0, seq_id u32 BE, pos u64 BE of the first hit, its
 *           strand u8, so byte order is (seq_id, pos, strand); an unmapped
 *           read (no hit) has the single key byte 1 and sorts last
 *   reads   the sequence
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "msd.h"
#include "rec.h"
#include "rec_kinds.h"
#include "strsort_priv.h"
#include "util.h"

typedef struct {
	uint8_t *buf;
	size_t len, cap;
} arena;

static size_t ar_put(arena *a, const void *p, size_t n)
{
	size_t at = a->len;

	if (a->len + n + SP_MSD_PAD > a->cap) {
		size_t nc = a->cap ? a->cap : (1u << 20);

		while (a->len + n + SP_MSD_PAD > nc)
			nc *= 2;
		a->buf = sp_realloc(a->buf, nc);
		a->cap = nc;
	}
	memcpy(a->buf + a->len, p, n);
	a->len += n;
	return at;
}

static void put_be(uint8_t *p, uint64_t v, int n)
{
	int i;

	for (i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

/* the key of one record into k (at most 14 bytes) or a view of the body */
static int make_key(int kind, const uint8_t *body, uint32_t len, uint8_t *k,
		const uint8_t **kp, size_t *kl)
{
	switch (kind) {
	case REC_KIND_KEYS: {
		rec_key_t v;

		if (rec_key_decode(body, len, &v) < 0)
			return -1;
		*kp = v.key;
		*kl = v.key_len;
		return 0;
	}
	case REC_KIND_HITS: {
		rec_hits_t v;
		rec_hit_t h;

		if (rec_hits_decode(body, len, &v) < 0)
			return -1;
		if (v.n == 0 || rec_hits_next(&v, &h) <= 0) {
			k[0] = 1;
			*kl = 1;
		} else {
			k[0] = 0;
			put_be(k + 1, h.seq_id, 4);
			put_be(k + 5, h.pos, 8);
			k[13] = h.strand;
			*kl = 14;
		}
		*kp = k;
		return 0;
	}
	case REC_KIND_READS: {
		rec_read_t rd;

		if (rec_read_decode_prefix(body, len, &rd) == 0)
			return -1;
		*kp = (const uint8_t *)rd.seq;
		*kl = rd.seq_len;
		return 0;
	}
	case REC_KIND_PAIRS:
		*kp = k;
		*kl = 8;
		return rec_pair_sort_key(body, len, k);
	}
	return -1;
}

/* the keys of the records: record i's at buf + off[i], len[i] bytes */
typedef struct {
	const uint8_t *buf;
	const uint64_t *off;
	const uint32_t *len;
} keyset;

static int key_eq(const void *ctx, uint32_t i, uint32_t j)
{
	const keyset *k = ctx;

	return k->len[i] == k->len[j] && memcmp(k->buf + k->off[i], k->buf + k->off[j], k->len[i]) == 0;
}

int ss_run_records(const ss_opts *o, char **files, int nfiles)
{
	static char *dash[] = { "-" };
	arena bodies = { NULL, 0, 0 }, keys = { NULL, 0, 0 };
	uint64_t *boff = NULL, *koff = NULL;
	uint32_t *klen = NULL, *order;
	size_t n = 0, m = 0, i;
	keyset ks;
	int kind = REC_KIND_ANY, f, rc = SP_EXIT_OK, fd;
	rec_prov_t prov;
	rec_writer_t *w;
	sp_msd_ent *e;
	temp_node *otmp = NULL;
	char msg[512];

	if (nfiles == 0) {
		files = dash;
		nfiles = 1;
	}
	rec_prov_init(&prov);
	for (f = 0; f < nfiles; f++) {
		rec_reader_t *r = rec_open_or_die(files[f], kind);
		const uint8_t *body;
		uint32_t len;

		if (kind == REC_KIND_ANY) {
			kind = rec_reader_kind(r);
			if (kind != REC_KIND_KEYS && kind != REC_KIND_HITS && kind != REC_KIND_READS
					&& kind != REC_KIND_PAIRS) {
				sp_msg("cannot sort a %s stream '%s' (kinds: keys, hits, reads, pairs)",
					rec_kind_name(kind), files[f]);
				rec_reader_free(r);
				rc = SP_EXIT_DATA;
				goto out;
			}
		}
		rec_prov_carry(&prov, rec_reader_prov(r));
		while (rec_next_or_die(r, &body, &len)) {
			uint8_t kb[16];
			const uint8_t *kp;
			size_t kl;

			if (make_key(kind, body, len, kb, &kp, &kl) < 0) {
				rec_reader_bad_record(r, NULL, "malformed record");
				rec_die(r);
			}
			if (n + 2 > m) {
				m = m ? 2 * m : 1024;
				boff = sp_realloc(boff, (m + 1) * sizeof *boff);
				koff = sp_realloc(koff, m * sizeof *koff);
				klen = sp_realloc(klen, m * sizeof *klen);
			}
			if (n >= UINT32_MAX - 1 || kl > UINT32_MAX)
				sp_die("too many records or too long a key for one sort");
			boff[n] = ar_put(&bodies, body, len);
			koff[n] = ar_put(&keys, kp, kl);
			klen[n] = (uint32_t)kl;
			n++;
		}
		rec_reader_free(r);
	}
	if (boff)
		boff[n] = bodies.len;
	if (!keys.buf)
		ar_put(&keys, "", 0);
	/* sort */
	{
		sp_msd_src src = { keys.buf, koff, NULL };

		e = sp_malloc((n + 1) * sizeof *e);
		sp_msd_fill(e, n, &src, klen, 0, o->nthreads);
		o->algo->fn(e, n, &src, o->nthreads);
		order = (uint32_t *)(void *)e;
		for (i = 0; i < n; i++)
			order[i] = e[i].idx;
	}
	ks.buf = keys.buf;
	ks.off = koff;
	ks.len = klen;
	if (o->reverse)
		ss_reverse_groups(order, n, key_eq, &ks);
	/* write */
	rec_prov_add_pg(&prov, "strsort", SP_VERSION, o->argc, o->argv);
	if (o->outfile) {
		int status;

		if ((fd = ss_open_output(o, &otmp)) < 0) {
			rc = ss_report();
			goto out_sorted;
		}
		w = rec_writer_fd(fd, o->outfile, kind, &prov, 0, 1, &status);
	} else {
		fd = 1;
		w = rec_create_or_die("-", kind, &prov, 0, 0);
	}
	rec_writer_set_die(w, o->outfile == NULL);
	for (i = 0; i < n; i++) {
		uint32_t x = order[i];

		if (o->unique && i > 0 && key_eq(&ks, order[i - 1], x))
			continue;
		rec_put(w, bodies.buf + boff[x], boff[x + 1] - boff[x]);
	}
	if (o->outfile) {
		int ok = rec_writer_close(w, msg, sizeof msg) == 0;

		if (!ok)
			sp_fail("%s", msg);
		rc = ss_end_output(o, fd, otmp, ok);
	} else {
		rec_finish_or_die(w);
	}
out_sorted:
	free(e);
out:
	rec_prov_free(&prov);
	free(bodies.buf);
	free(keys.buf);
	free(boff);
	free(koff);
	free(klen);
	return rc;
}
