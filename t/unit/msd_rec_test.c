/*
 * msd_rec_test.c - strsort -B (sort a record stream by its key) against an
 * oracle: random keys and hits streams are written with the rec API, sorted
 * by $SEEDPIPE_BIN/strsort -B with -r / -u combinations, read back, and the
 * order of the records (keys: the value holds the input number; hits: the
 * read id) compared with a stable qsort of the same keys.  Also: the output
 * is a valid stream of the same kind carrying the input provenance.
 */
#include <stdlib.h>
#include <string.h>

#include "rec.h"
#include "rec_kinds.h"
#include "tap.h"
#include "testutil.h"

#define N 3000

static uint64_t st = 0x12345678abcdefull;

static uint64_t rnd(void)
{
	return tu_xorshift64(&st);
}

typedef struct {
	uint8_t key[16];
	size_t len;
	uint32_t idx;
} item;

static int item_cmp(const void *p, const void *q)
{
	const item *a = p, *b = q;
	size_t m = a->len < b->len ? a->len : b->len;
	int c = memcmp(a->key, b->key, m);

	if (c)
		return c;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int item_eq(const item *a, const item *b)
{
	return a->len == b->len && memcmp(a->key, b->key, a->len) == 0;
}

static void be(uint8_t *p, uint64_t v, int n)
{
	int i;

	for (i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

/* write a stream of kind into path, filling it[] with the expected keys */
static void make_stream(const char *path, int kind, item *it)
{
	rec_prov_t prov;
	rec_writer_t *w;
	uint32_t i;
	static const uint8_t alpha[] = { 0, 1, 'a', 'b', 0x80, 0xff };

	rec_prov_init(&prov);
	rec_prov_add(&prov, "test.origin", "msd_rec_test");
	w = rec_create_or_die(path, kind, &prov, 4096, 1);
	for (i = 0; i < N; i++) {
		char val[16];

		it[i].idx = i;
		if (kind == REC_KIND_KEYS) {
			size_t k, l = (size_t)(rnd() % 6);

			for (k = 0; k < l; k++)
				it[i].key[k] = alpha[rnd() % sizeof alpha];
			it[i].len = l;
			snprintf(val, sizeof val, "%u", i);
			rec_put_key(w, it[i].key, l, val, strlen(val));
		} else {
			rec_read_t rd;
			rec_hit_t h[2];
			uint32_t nh = (uint32_t)(rnd() % 3), k;

			memset(&rd, 0, sizeof rd);
			rd.id = i;
			rd.name = "r";
			rd.name_len = 1;
			rd.comment = "";
			rd.seq = "ACGT";
			rd.seq_len = 4;
			for (k = 0; k < nh; k++) {
				memset(&h[k], 0, sizeof h[k]);
				h[k].seq_id = (uint32_t)(rnd() % 3);
				h[k].pos = rnd() % 40 + (rnd() % 2 ? (uint64_t)1 << 33 : 0);
				h[k].strand = (uint8_t)(rnd() % 2);
				h[k].mapq = 255;
				h[k].cigar = "4M";
				h[k].cigar_len = 2;
			}
			rec_put_hits(w, &rd, h, nh);
			if (nh == 0) {
				it[i].key[0] = 1;
				it[i].len = 1;
			} else {
				it[i].key[0] = 0;
				be(it[i].key + 1, h[0].seq_id, 4);
				be(it[i].key + 5, h[0].pos, 8);
				it[i].key[13] = h[0].strand;
				it[i].len = 14;
			}
		}
	}
	rec_finish_or_die(w);
	rec_prov_free(&prov);
}

/* the record numbers of a sorted stream, in order; returns the count */
static size_t read_order(const char *path, int kind, uint32_t *got, int *prov_ok)
{
	rec_reader_t *r = rec_open_or_die(path, kind);
	const uint8_t *body;
	uint32_t len;
	size_t n = 0;

	*prov_ok = rec_prov_get(rec_reader_prov(r), "test.origin") != NULL;
	while (rec_next_or_die(r, &body, &len) && n < N) {
		if (kind == REC_KIND_KEYS) {
			rec_key_t k;
			char buf[16];

			if (rec_key_decode(body, len, &k) < 0 || k.val_len >= sizeof buf)
				break;
			memcpy(buf, k.val, k.val_len);
			buf[k.val_len] = '\0';
			got[n++] = (uint32_t)strtoul(buf, NULL, 10);
		} else {
			rec_read_t rd;

			if (rec_read_decode_prefix(body, len, &rd) == 0)
				break;
			got[n++] = (uint32_t)rd.id;
		}
	}
	rec_reader_free(r);
	return n;
}

int main(void)
{
	static const char *opts[] = { "", "-r", "-u", "-r -u" };
	static const int kinds[] = { REC_KIND_KEYS, REC_KIND_HITS };
	const char *bin = getenv("SEEDPIPE_BIN");
	static item it[N], ex[N];
	static uint32_t got[N], want[N];
	size_t o, k;
	char cmd[1024];

	(void)tap_diag;
	(void)tap_skip;
	if (!bin)
		bin = "../bin";
	for (k = 0; k < 2; k++) {
		make_stream("in.sp", kinds[k], it);
		for (o = 0; o < 4; o++) {
			int rev = strchr(opts[o], 'r') != NULL, uniq = strchr(opts[o], 'u') != NULL;
			size_t i, j, nw = 0, ng;
			int prov_ok, rc;

			memcpy(ex, it, sizeof ex);
			qsort(ex, N, sizeof *ex, item_cmp);
			if (rev) {
				/* reverse the groups of equal keys, each kept in input order */
				for (i = 0; i < N / 2; i++) {
					item t = ex[i];

					ex[i] = ex[N - 1 - i];
					ex[N - 1 - i] = t;
				}
				for (i = 0; i < N; i = j) {
					for (j = i + 1; j < N && item_eq(&ex[i], &ex[j]); j++)
						;
					for (ng = 0; ng < (j - i) / 2; ng++) {
						item t = ex[i + ng];

						ex[i + ng] = ex[j - 1 - ng];
						ex[j - 1 - ng] = t;
					}
				}
			}
			for (i = 0; i < N; i++)
				if (!uniq || i == 0 || !item_eq(&ex[i - 1], &ex[i]))
					want[nw++] = ex[i].idx;
			snprintf(cmd, sizeof cmd, "'%s/strsort' -B -j 2 %s in.sp > out.sp", bin, opts[o]);
			rc = system(cmd);
			if (rc != 0) {
				tap_ok(0, "%s %s: strsort ran (status %d)", rec_kind_name(kinds[k]), opts[o], rc);
				continue;
			}
			ng = read_order("out.sp", kinds[k], got, &prov_ok);
			tap_ok(ng == nw && memcmp(got, want, nw * sizeof *got) == 0,
				"%s stream, strsort -B %s: records in the oracle's order (%zu of %zu)",
				rec_kind_name(kinds[k]), opts[o], ng, nw);
			tap_ok(prov_ok, "%s %s: the input provenance is carried", rec_kind_name(kinds[k]), opts[o]);
		}
	}
	return tap_done();
}
