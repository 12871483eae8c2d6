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
		const char *md, const ext_sam_rec_t *e, kstring_t *out)
{
	if (ext_bam_record(f, rd, h, md, e) < 0)
		sp_die("ext_bam_record failed: %s", sp_errmsg());
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
	char name[400], seq[300], qual[300], md[64], mc[64], xa[200], co[100];
	static const char *const cos[] = { "BC:Z:ACGT", "1:N:0:ATCACG", "XY:i:-5\tZZ:A:q",
		"XY:i:007", "NM:i:3", "ab:Z:x y\tab:Z:z", "XY:i:4294967295", "XY:i:4294967296",
		"XY:f:1.5", "Q:Z:x", "XY:Z:" };
	const char *rnames[3];
	int t, bad = 0, n_mapped = 0, n_rev = 0, n_noq = 0, n_mate = 0, n_co = 0, n_tags = 0;

	for (t = 0; t < 3; t++)
		rnames[t] = sam_hdr_tid2name(hdr, t);
	for (t = 0; t < 20000; t++) {
		rec_read_t rd;
		ext_hit_t h;
		uint32_t m = t % 97 == 0 ? 0 : 1 + rnd() % 256, i, nl, left, k;
		int mapped = m && rnd() % 4 != 0, secondary = mapped && rnd() % 3 == 0;
		ext_sam_rec_t e;

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
		ext_sam_rec_init(&e);
		e.flag = secondary ? 256u : 0u;
		if (rnd() % 2) {        /* a mate, its fields and tags */
			e.flag |= 1u | (rnd() % 2 ? 0x40u : 0x80u) | (rnd() % 2 ? 0x20u : 0)
				| (rnd() % 3 ? 0 : 2u) | (rnd() % 4 ? 0 : 8u);
			e.mtid = rnd() % 4 ? (int32_t)(rnd() % 3) : -1;
			e.mpos = e.mtid >= 0 ? (int64_t)(rnd() % 5000) : -1;
			e.tlen = rnd() % 3 ? (int64_t)(rnd() % 2000) - 1000 : 0;
			if (!mapped && e.mtid >= 0 && rnd() % 2) {
				e.tid = e.mtid;
				e.pos = e.mpos;
			}
			if (rnd() % 2) {
				snprintf(mc, sizeof mc, "%uM%uI%uM", 1 + rnd() % 90, 1 + rnd() % 3, 1 + rnd() % 9);
				e.mc = mc;
			}
			if (mapped && rnd() % 3 == 0)
				e.mapq = (int)(rnd() % 61);
			n_mate++;
		}
		if (rnd() % 4 == 0) {
			snprintf(xa, sizeof xa, "chr1,+%u,%uM,%u;c|2,-%u,3M1D4M,1;", rnd() % 9999 + 1,
					rnd() % 99 + 1, rnd() % 5, rnd() % 99 + 1);
			e.xa = xa;
		}
		if (rnd() % 4 == 0)
			e.rg = rnd() % 2 ? "run1" : "g\xc3\xa9";
		if (rnd() % 3 == 0) {
			const char *c = cos[rnd() % (sizeof cos / sizeof cos[0])];
			snprintf(co, sizeof co, "%s", c);
			e.co = co;
			e.co_len = strlen(co);
			n_co++;
			n_tags += ext_comment_is_tags(co, e.co_len);
		}
		ref_line(hdr, &f, &rd, mapped ? &h : NULL, md, &e, &want);
		got.l = 0;
		ext_sam_line(&got, &rd, mapped ? &h : NULL, rnames, md, &e);
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
	tap_ok(n_mapped > 10000 && n_rev > 4000 && n_noq > 2000 && n_mate > 8000 && n_co > 5000
			&& n_tags > 1000 && n_tags < n_co - 1000,
			"the records cover mapped (%d), reverse (%d), quality-less (%d) reads, mates (%d), "
			"comments (%d, %d of them tags)", n_mapped, n_rev, n_noq, n_mate, n_co, n_tags);
	{
		static const struct { const char *c; int ok; } ct[] = {
			{ "BC:Z:ACGT", 1 }, { "BC:Z:ACGT\tXY:i:-3\tab:A:c", 1 }, { "1:N:0:ATCACG", 0 },
			{ "XY:i:007", 0 }, { "XY:i:-2147483648", 1 }, { "XY:i:-2147483649", 0 },
			{ "NM:i:1", 0 }, { "RG:Z:x", 0 }, { "ab:Z:x\tab:Z:y", 0 }, { "XY:f:1.5", 0 },
			{ "XY:A:ab", 0 }, { "XY:Z:", 1 }, { "XY:Z:a\t", 0 }, { "", 0 }
		};
		int ok = 1;
		for (t = 0; t < (int)(sizeof ct / sizeof ct[0]); t++)
			if (ext_comment_is_tags(ct[t].c, strlen(ct[t].c)) != ct[t].ok) {
				tap_diag("comment '%s': %d", ct[t].c, !ct[t].ok);
				ok = 0;
			}
		tap_ok(ok, "comments that are SAM tags (A, i, Z; no duplicate, none extend writes)");
	}
	{
		rec_read_t rd;
		size_t l;
		const char *nm;
		memset(&rd, 0, sizeof rd);
		rd.name = "frag/1";
		rd.name_len = 6;
		nm = ext_sam_name(&rd, &l);
		tap_ok(l == 4 && !memcmp(nm, "frag", 4), "/1 is dropped from names");
		rd.name = "frag/2";
		nm = ext_sam_name(&rd, &l);
		rd.name = "frag/3";
		tap_ok(l == 4 && (nm = ext_sam_name(&rd, &l)) && l == 6, "/2 too, /3 is kept");
	}
	/* the options extend and extend --merge share */
	{
		ext_sam_opt_t so;
		ext_ins_t ins;
		char m[256];
		int r1, r2, r3;
		memset(&so, 0, sizeof so);
		memset(&ins, 0, sizeof ins);
		r1 = ext_sam_opt_parse('R', "@RG\\tID:a\\tSM:s", &so, &ins, m, sizeof m);
		r2 = ext_sam_opt_parse('R', "@RG\\tSM:s\\tID:b", &so, &ins, m, sizeof m);
		tap_ok(r1 == 1 && r2 == 1 && !strcmp(so.rg_id, "b") &&
				!strcmp(so.rg_line, "@RG\tSM:s\tID:b"), "-R: the last one counts");
		r1 = ext_sam_opt_parse('R', "@RG\\tSM:s", &so, &ins, m, sizeof m);
		tap_ok(r1 == -1 && !strcmp(m, "option -R: the read group line has no ID field "
				"(\\tID:NAME)") && !strcmp(so.rg_id, "b"), "-R without an ID: %s", m);
		r1 = ext_sam_opt_parse(EXT_OPT_SECONDARY, "tag", &so, &ins, m, sizeof m);
		r2 = so.xa;
		r3 = ext_sam_opt_parse(EXT_OPT_SECONDARY, "records", &so, &ins, m, sizeof m);
		tap_ok(r1 == 1 && r2 == 1 && r3 == -1 && !strcmp(m, "option --secondary: unknown "
				"mode 'records' (tag or record)"), "--secondary tag, not records");
		r1 = ext_sam_opt_parse(EXT_OPT_SECONDARY, "record", &so, &ins, m, sizeof m);
		tap_ok(r1 == 1 && so.xa == 0, "--secondary record");
		r1 = ext_sam_opt_parse('I', "300,30", &so, &ins, m, sizeof m);
		r2 = ext_sam_opt_parse('I', "300", &so, &ins, m, sizeof m);
		tap_ok(r1 == 1 && ins.lo == 180 && ins.hi == 420 && r2 == -1 &&
				strstr(m, "option -I: '300'"), "-I 300,30, not 300 (%u..%u)", ins.lo, ins.hi);
		r1 = ext_sam_opt_parse('C', NULL, &so, &ins, m, sizeof m);
		r2 = ext_sam_opt_parse('k', "3", &so, &ins, m, sizeof m);
		r3 = ext_sam_opt_parse('q', NULL, &so, &ins, m, sizeof m);
		tap_ok(r1 == 1 && so.comments && r2 == 0 && r3 == 0, "-C; other options are not its");
		ext_sam_opt_free(&so);
		tap_ok(!so.rg_line && !so.rg_id, "freed");
	}
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
		ext_sam_line(&got, &rd, NULL, NULL, NULL, NULL);
		ext_sam_line(&got, &rd, NULL, NULL, NULL, NULL);
		tap_ok(!strcmp(got.s, "xr1\t4\t*\t0\t0\t*\t*\t0\t0\tACGT\t*\nr1\t4\t*\t0\t0\t*\t*\t0\t0\tACGT\t*\n"),
				"lines are appended to the text");
	}
	free(want.s);
	free(got.s);
	ext_bam_free(&f);
	sam_hdr_destroy(hdr);
	return tap_done();
}
