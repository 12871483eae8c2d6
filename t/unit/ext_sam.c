/*
 * ext_sam.c - ext_sam_line() against htslib: random reads (names empty,
 * long, with odd bytes; bases in any case, N, IUPAC and junk; qualities
 * below '!', above '~' or none) and random hits (both strands, secondary,
 * CIGARs with I and D, MAPQ, NM up to 300) are written by ext_sam_line and
 * by ext_bam_record (the BAM record of extend -O bam: bam_set1 and the tag
 * calls) + sam_format1, and the lines must be equal byte for byte.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <htslib/sam.h>

#include "ext.h"
#include "seqio.h"
#include "tap.h"
#include "util.h"
#include "testutil.h"

static uint64_t rs = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	return (uint32_t)tu_xorshift64(&rs);
}

/* The line htslib writes for the record extend -O bam makes (the reference). */
static void ref_line(sam_hdr_t *hdr, ext_bam_t *f, const rec_read_t *rd, const ext_hit_t *h,
		const char *md, int secondary, kstring_t *out)
{
	ext_bam_record(f, rd, h, md, secondary);
	out->l = 0;
	if (sam_format1(hdr, f->b, out) < 0)
		sp_die("sam_format1 failed");
	kputc('\n', out);
}

int main(void)
{
	static const char alpha[] = "ACGTacgtNnRYKM=*.-X\001\377";
	const char *hdr_txt = "@HD\tVN:1.6\tSO:unsorted\n@SQ\tSN:chr1\tLN:100000\n"
		"@SQ\tSN:c|2\tLN:5000\n@SQ\tSN:third\tLN:3000000000\n";
	sam_hdr_t *hdr = sam_hdr_parse(strlen(hdr_txt), hdr_txt);
	ext_bam_t f = { 0 };
	kstring_t want = { 0, 0, NULL }, got = { 0, 0, NULL };
	char name[400], seq[300], qual[300], md[64];
	int t, bad = 0, n_mapped = 0, n_rev = 0, n_noq = 0;

	for (t = 0; t < 20000; t++) {
		rec_read_t rd;
		ext_hit_t h;
		uint32_t m = t % 97 == 0 ? 0 : 1 + rnd() % 256, i, nl, left, k;
		int mapped = m && rnd() % 4 != 0, secondary = mapped && rnd() % 3 == 0;

		memset(&rd, 0, sizeof rd);
		memset(&h, 0, sizeof h);
		nl = rnd() % 8 == 0 ? 0 : rnd() % 16 == 0 ? 255 + rnd() % 100 : 1 + rnd() % 40;
		for (i = 0; i < nl; i++)
			name[i] = (char)(rnd() % 50 == 0 ? rnd() % 256 : 'a' + rnd() % 26);
		for (i = 0; i < m; i++)
			seq[i] = rnd() % 8 ? "ACGT"[rnd() % 4] : alpha[rnd() % (sizeof alpha - 1)];
		for (i = 0; i < m; i++)
			qual[i] = (char)(rnd() % 10 ? 33 + rnd() % 60 : rnd() % 256);
		rd.id = ((uint64_t)rnd() << 32) | rnd();
		rd.name = name;
		rd.name_len = nl;
		rd.seq = seq;
		rd.seq_len = m;
		rd.qual = rnd() % 5 == 0 ? NULL : qual;
		n_noq += !rd.qual;
		if (mapped) {
			h.seq = rnd() % 3;
			h.pos = h.seq == 2 ? ((uint64_t)rnd() << 1) : rnd() % 5000;
			h.strand = rnd() % 2;
			h.mapq = (uint8_t)(rnd() % 5 ? rnd() % 61 : 255);
			h.dist = rnd() % 10 == 0 ? 128 + rnd() % 200 : rnd() % 16;
			/* a CIGAR of M, I and D runs that consumes exactly m read bases */
			for (left = m, k = 0; left && k + 2 < ALIGN_MAX_CIGAR;) {
				uint32_t op = k % 2 ? (rnd() % 2 ? SP_CIGAR_I : SP_CIGAR_D) : SP_CIGAR_M;
				uint32_t l = 1 + rnd() % (left < 30 ? left : 30);
				if (op == SP_CIGAR_D) {
					h.cigar[k++] = l << 4 | op;
					continue;
				}
				h.cigar[k++] = l << 4 | op;
				left -= l;
			}
			if (left)
				h.cigar[k++] = left << 4 | SP_CIGAR_M;
			h.n_cigar = k;
			snprintf(md, sizeof md, "%u%c%u^AC%u", rnd() % 50, "ACGTN"[rnd() % 5], rnd() % 9,
					rnd() % 30);
			n_mapped++;
			n_rev += h.strand == REC_STRAND_REV;
		}
		ref_line(hdr, &f, &rd, mapped ? &h : NULL, md, secondary, &want);
		got.l = 0;
		ext_sam_line(&got, &rd, mapped ? &h : NULL, mapped ? sam_hdr_tid2name(hdr, (int)h.seq)
				: NULL, md, secondary);
		if (got.l != want.l || memcmp(got.s, want.s, got.l)) {
			if (bad++ < 3) {
				size_t c = 0;
				while (c < got.l && c < want.l && got.s[c] == want.s[c])
					c++;
				tap_diag("record %d: lengths %zu (want) %zu (got), first difference "
						"at byte %zu: want %d, got %d (name %u bytes, seq %u)", t, want.l, got.l, c,
						c < want.l ? (uint8_t)want.s[c] : -1,
						c < got.l ? (uint8_t)got.s[c] : -1, nl, m);
			}
		}
	}
	tap_ok(bad == 0, "20000 random records: ext_sam_line equals htslib (%d differ)", bad);
	tap_ok(n_mapped > 10000 && n_rev > 4000 && n_noq > 2000,
			"the records cover mapped (%d), reverse (%d) and quality-less (%d) reads",
			n_mapped, n_rev, n_noq);
	/* appending: two lines after a prefix */
	{
		rec_read_t rd;
		memset(&rd, 0, sizeof rd);
		rd.name = "r1";
		rd.name_len = 2;
		rd.seq = "ACGT";
		rd.seq_len = 4;
		got.l = 0;
		kputs("x", &got);
		ext_sam_line(&got, &rd, NULL, NULL, NULL, 0);
		ext_sam_line(&got, &rd, NULL, NULL, NULL, 0);
		tap_ok(!strcmp(got.s, "xr1\t4\t*\t0\t0\t*\t*\t0\t0\tACGT\t*\nr1\t4\t*\t0\t0\t*\t*\t0\t0\tACGT\t*\n"),
				"lines are appended to the text");
	}
	free(want.s);
	free(got.s);
	ext_bam_free(&f);
	sam_hdr_destroy(hdr);
	return tap_done();
}
