/*
 * strsort_enc.c - keys as order-preserving bytes (strsort_priv.h): every key
 * type strsort orders is turned, once per line, into a byte string whose
 * bytewise order (memcmp, a proper prefix first) is the key's order in GNU
 * sort's C locale, so that the msd.h radix sort orders any key and several
 * keys compose into one string.
 *
 * Every encoding that a key may follow is prefix-free (no encoding is a
 * proper prefix of another), so concatenated keys compare key by key, and a
 * reversed key is its encoding with every byte complemented:
 *
 *   text (bytewise, with f d i)  the bytes, 0x00 written as 00 FF, then the
 *                                terminator 00 00 (left off on a last,
 *                                not reversed key)
 *   -n number                    zero: 80
 *                                x > 0: C0+L (L < 63) or FF L(4 bytes BE),
 *                                then digit pairs, then 00
 *                                x < 0: 3F-L (L < 63) or 00 ~L(4 bytes),
 *                                then complemented pairs, then FF
 *     (L: the integer digits after leading zeros; the digits of the
 *     integer and the fraction, trailing zeros dropped, are taken two at
 *     a time as 1 + 10*d1 + d2 (a lone last digit as d1 with d2 = 0): 1..100)
 *   -h human number              80 + the unit order (-8..8), then as -n
 *   -M month                     one byte, 0 (not a month) to 12
 *   -g general number            00: not a number; 01 + the bytes of a
 *                                NaN in memory; 02 -inf; 03 ~(exponent, mantissa)
 *                                of a negative; 04 zero; 05 exponent and
 *                                mantissa of a positive; 06 +inf
 *   -R random                    the MD5 digest of the 16-byte seed and the
 *                                key (GNU sort's), then the key as text
 *   -V version                   see enc_version
 *
 * -d, -f and -i apply before -R and -V (as in GNU sort).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sp_md5.h"
#include "strsort_priv.h"
#include "util.h"

/* blanks as GNU sort has them in the C locale: space, tab, newline */
static inline int is_blank(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

static inline const uint8_t *skip_blanks(const uint8_t *p, const uint8_t *lim)
{
	while (p < lim && is_blank(*p))
		++p;
	return p;
}

/*
 * Skip N fields from p: with a separator TAB, each field and the separator
 * after it (not after the last one with STOP_LAST); without one, each run
 * of blanks and the non-blanks after it.
 */
static inline const uint8_t *skip_fields(const uint8_t *p, const uint8_t *lim, size_t n,
		int tab, int stop_last)
{
	if (tab >= 0) {
		while (p < lim && n--) {
			while (p < lim && *p != tab)
				++p;
			if (p < lim && (n || !stop_last))
				++p;
		}
	} else {
		while (p < lim && n--) {
			p = skip_blanks(p, lim);
			while (p < lim && !is_blank(*p))
				++p;
		}
	}
	return p;
}

/* the first n bytes from p, or all up to lim */
static inline const uint8_t *advance(const uint8_t *p, const uint8_t *lim, size_t n)
{
	return (size_t)(lim - p) < n ? lim : p + n;
}

/* GNU sort's begfield and limfield */
void ss_key_span(const ss_key *k, int tab, const uint8_t *t, size_t len,
		const uint8_t **kb, const uint8_t **ke)
{
	const uint8_t *lim = t + len, *beg = t, *end = lim, *fs = t;
	size_t skipped = 0;   /* the fields before fs */

	if (k->sword != SS_NONE) {
		beg = fs = skip_fields(t, lim, k->sword, tab, 0);
		skipped = k->sword;
		if (k->skipsb)
			beg = skip_blanks(beg, lim);
		beg = advance(beg, lim, k->schar);
	} else if (k->skipsb) {
		beg = skip_blanks(t, lim);
	}
	if (k->eword != SS_NONE) {
		/* echar 0: the end of field eword */
		size_t ef = k->eword + (k->echar == 0);

		/* (from the start field on, when the end is not before it:
		 * skipping fields one call or two is the same) */
		if (ef < skipped) {
			fs = t;
			skipped = 0;
		}
		end = skip_fields(fs, lim, ef - skipped, tab, k->echar == 0);
		if (k->echar != 0) {
			if (k->skipeb)
				end = skip_blanks(end, lim);
			end = advance(end, lim, k->echar);
		}
	}
	*kb = beg;
	*ke = end < beg ? beg : end;
}

#define TSEP 0x80   /* GNU sort's thousands separator in the C locale (see strsort_keys.c) */
#define ISDIG(c) ((unsigned)(c) - '0' < 10)

int ss_key_plain(const ss_key *k)
{
	return !(k->numeric || k->human || k->month || k->general || k->version ||
		k->random || k->fold || k->dict || k->nonprint);
}

size_t ss_enc_bound(const ss_key *k, size_t len, size_t nlines)
{
	/* -V: two passes of at most 2.5 bytes a byte and 8 more (enc_version);
	 * -R: a digest and the escaped text; both also need LEN bytes of room
	 * at the end for the translated key (see ss_enc_key) */
	return (k->version && !k->random ? 6 : k->random ? 3 : 2) * len + 40 * nlines;
}

/* byte CH of a key with -d, -i and -f applied: the byte it becomes, or -1 where
 * -d / -i drop it */
static inline int key_byte(const ss_key *k, uint8_t ch)
{
	if (k->dict ? !(ch == ' ' || ch == '\t' || ch == '\n' || (ch >= '0' && ch <= '9') ||
				((ch | 0x20) >= 'a' && (ch | 0x20) <= 'z'))
			: k->nonprint && !(ch >= 0x20 && ch < 0x7F))
		return -1;
	return k->fold && ch >= 'a' && ch <= 'z' ? ch - 'a' + 'A' : ch;
}

/* the bytes of [b, e) with d, i and f applied, to out; returns the length */
static size_t translate(const ss_key *k, const uint8_t *b, const uint8_t *e, uint8_t *out)
{
	uint8_t *o = out;

	for (; b < e; b++) {
		int ch = key_byte(k, *b);

		if (ch >= 0)
			*o++ = (uint8_t)ch;
	}
	return (size_t)(o - out);
}

/* the text bytes of [b, e) with f, d, i and the 0x00 escape */
static size_t enc_text(const ss_key *k, const uint8_t *b, const uint8_t *e, int term, uint8_t *out)
{
	uint8_t *o = out;

	if (!(k->fold || k->dict || k->nonprint)) {
		for (; b < e; b++) {
			const uint8_t *z = memchr(b, 0, (size_t)(e - b));
			size_t n = (size_t)((z ? z : e) - b);

			memcpy(o, b, n);
			o += n;
			b += n;
			if (b == e)
				break;
			*o++ = 0;
			*o++ = 0xFF;
		}
	} else {
		for (; b < e; b++) {
			int ch = key_byte(k, *b);

			if (ch < 0)
				continue;
			*o++ = (uint8_t)ch;
			if (!ch)
				*o++ = 0xFF;
		}
	}
	if (term) {
		*o++ = 0;
		*o++ = 0;
	}
	return (size_t)(o - out);
}

/* the number at p (blanks skipped by the caller) as GNU sort -n reads it */
static size_t enc_number(const uint8_t *p, const uint8_t *e, uint8_t *out)
{
	int neg = p < e && *p == '-';
	const uint8_t *ib, *ie, *fb = NULL, *fe = NULL, *q;
	size_t L = 0, nd, i;
	uint8_t *o = out, d[2];
	int half = 0;

	p += neg;
	while (p < e && (*p == '0' || *p == TSEP))
		p++;
	/* the integer part: digits, a separator after a digit is skipped */
	ib = p;
	while (p < e && ISDIG(*p)) {
		L++;
		p++;
		while (p < e && *p == TSEP)
			p++;
	}
	ie = p;
	if (p < e && *p == '.') {
		fb = ++p;
		while (p < e && ISDIG(*p))
			p++;
		fe = p;
		while (fe > fb && fe[-1] == '0')
			fe--;
	}
	nd = L + (fb ? (size_t)(fe - fb) : 0);
	if (!L && fb) {
		/* no integer digits: the fraction's leading zeros count */
		if (fe == fb) {
			*o++ = 0x80;
			return 1;
		}
	} else if (!L) {
		*o++ = 0x80;
		return 1;
	}
	if (!fb || fe == fb) {
		/* an integer: drop its trailing zeros (L keeps the magnitude) */
		const uint8_t *z = ie;

		while (z > ib && (z[-1] == '0' || z[-1] == TSEP))
			z--;
		ie = z;
		fb = fe = NULL;
	}
	if (L < 63) {
		*o++ = (uint8_t)(neg ? 0x3F - L : 0xC0 + L);
	} else {
		uint32_t l = L > UINT32_MAX ? UINT32_MAX : (uint32_t)L;

		if (neg)
			l = ~l;
		*o++ = neg ? 0x00 : 0xFF;
		*o++ = (uint8_t)(l >> 24);
		*o++ = (uint8_t)(l >> 16);
		*o++ = (uint8_t)(l >> 8);
		*o++ = (uint8_t)l;
	}
	(void)nd;
	for (q = ib, i = 0; ; ) {
		uint8_t c;

		if (q < ie) {
			c = *q++;
			if (c == TSEP)
				continue;
		} else if (fb && q != fe) {
			if (q == ie)
				q = fb;
			if (q == fe)
				break;
			c = *q++;
		} else {
			break;
		}
		d[half++] = (uint8_t)(c - '0');
		if (half == 2) {
			uint8_t v = (uint8_t)(1 + 10 * d[0] + d[1]);

			*o++ = neg ? (uint8_t)(0xFF - v) : v;
			half = 0;
		}
		i++;
	}
	if (half) {
		uint8_t v = (uint8_t)(1 + 10 * d[0]);

		*o++ = neg ? (uint8_t)(0xFF - v) : v;
	}
	*o++ = neg ? 0xFF : 0x00;
	return (size_t)(o - out);
}

/* GNU sort -h's unit order of the number at p (coreutils 9.1: K k M G T P E Z Y) */
static int unit_order(const uint8_t *p, const uint8_t *e)
{
	int neg = p < e && *p == '-';
	uint8_t maxd = 0, ch;

	p += neg;
	/* no thousands separator here: GNU sort 9.1 does not skip 0x80 while
	 * it looks for the unit ("1\x801Z" has none: checked against it),
	 * though its -n and the number after the unit do */
	while (p < e && ISDIG(*p)) {
		if (*p > maxd)
			maxd = *p;
		p++;
	}
	ch = p < e ? *p++ : 0;
	if (ch == '.') {
		while (p < e && ISDIG(*p)) {
			if (*p > maxd)
				maxd = *p;
			p++;
		}
		ch = p < e ? *p : 0;
	}
	if (maxd > '0') {
		static const char units[] = "KMGTPEZY";
		const char *u = ch ? strchr(units, ch) : NULL;
		int ord = ch == 'k' ? 1 : u ? (int)(u - units) + 1 : 0;

		return neg ? -ord : ord;
	}
	return 0;
}

/* GNU sort -M: 1..12 for a month name after blanks, else 0 */
static int month_of(const uint8_t *p, const uint8_t *e)
{
	static const char names[12][4] = { "JAN", "FEB", "MAR", "APR", "MAY", "JUN",
		"JUL", "AUG", "SEP", "OCT", "NOV", "DEC" };
	int m, j;

	while (p < e && is_blank(*p))
		p++;
	if (e - p < 3)
		return 0;
	for (m = 0; m < 12; m++) {
		for (j = 0; j < 3; j++) {
			uint8_t ch = p[j];

			if (ch >= 'a' && ch <= 'z')
				ch = (uint8_t)(ch - 'a' + 'A');
			if (ch != (uint8_t)names[m][j])
				break;
		}
		if (j == 3)
			return m + 1;
	}
	return 0;
}

/* GNU sort -g: strtold of the key (cut at its end) */
static size_t enc_general(const uint8_t *b, const uint8_t *e, uint8_t *out)
{
	char sbuf[128], *s = sbuf, *end;
	size_t n = (size_t)(e - b), i;
	long double x, m;
	uint8_t *o = out;
	uint64_t mant;
	uint32_t ex;
	int exp2, neg;

	if (n >= sizeof sbuf)
		s = sp_malloc(n + 1);
	memcpy(s, b, n);
	s[n] = 0;
	x = strtold(s, &end);
	if (end == s) {
		*o++ = 0x00;
	} else if (isnan(x)) {
		/* NaNs by their bytes in memory, as GNU sort 9.1 (memcmp) */
		uint8_t t[sizeof x];

		memset(t, 0, sizeof t);
		memcpy(t, &x, sizeof x < 10 ? sizeof x : 10);
		*o++ = 0x01;
		memcpy(o, t, sizeof t);
		o += sizeof t;
	} else if (isinf(x)) {
		*o++ = x < 0 ? 0x02 : 0x06;
	} else if (x == 0) {
		*o++ = 0x04;
	} else {
		neg = x < 0;
		m = frexpl(neg ? -x : x, &exp2);   /* [0.5, 1) * 2^exp2 */
		mant = (uint64_t)ldexpl(m, 64);
		ex = (uint32_t)(exp2 + 0x40000000);
		if (neg) {
			ex = ~ex;
			mant = ~mant;
		}
		*o++ = neg ? 0x03 : 0x05;
		for (i = 0; i < 4; i++)
			*o++ = (uint8_t)(ex >> (24 - 8 * i));
		for (i = 0; i < 8; i++)
			*o++ = (uint8_t)(mant >> (56 - 8 * i));
	}
	if (s != sbuf)
		free(s);
	return (size_t)(o - out);
}

/*
 * -V: GNU's filenvercmp (coreutils 9.1) in the C locale as bytes.  Its
 * special cases first: "" < "." < ".." < other names starting with '.' <
 * the rest.  Then the name without its suffix (the longest run of
 * ".X[A-Za-z0-9~]*" at its end, X a letter or '~'), and the whole name to
 * break a tie: enc_version_pass of each, or for a name without a suffix 00
 * in place of the second pass.  (Such a name, tied on the first pass with
 * one that has a suffix, comes first in the second: it ends where the other
 * goes on with '.', and '.' orders after the end and after digits.)
 */
#define V_TILDE 0x01   /* '~', before everything, the end too */
#define V_END   0x02   /* the end of the name */
#define V_SEP   0x03   /* a run of non-digits ends: a number follows */

static inline int v_alpha(uint8_t c)
{
	return (uint8_t)((c | 0x20) - 'a') < 26;
}

/* a run's byte c (not a digit, not '~') as one byte: letters 4..55 in
 * byte order, then the other 193 bytes 56..248 in byte order */
static inline uint8_t v_code(uint8_t c)
{
	unsigned below = (c > '9' ? 10 : c > '0' ? c - '0' : 0) +
		(c > 'Z' ? 26 : c > 'A' ? c - 'A' : 0) + (c > 'z' ? 26 : c > 'a' ? c - 'a' : 0) +
		(c > '~');

	if (v_alpha(c))
		return (uint8_t)(c <= 'Z' ? 4 + c - 'A' : 30 + c - 'a');
	return (uint8_t)(56 + c - below);
}

/*
 * One verrevcmp pass over s[0..n): the name as runs of non-digits, each
 * followed by a number.  verrevcmp compares runs bytewise with '~' < the
 * end of a run < letters < other bytes (it compares a run that ends at a
 * digit and one at the end of the name alike), then numbers by value (no
 * digits: 0), and a name that ends as if it went on with empty runs and
 * zeros.  So: run bytes (V_TILDE, or v_code), V_SEP, the
 * number's digit count (one byte below 255, else FF and 4 bytes) and
 * digits without leading zeros; V_END after the last number.  Every run
 * after the first is not empty, so V_END meets only a run's first byte.
 */
static uint8_t *enc_version_pass(const uint8_t *s, size_t n, uint8_t *o)
{
	size_t i = 0, j, L;

	for (;;) {
		for (; i < n && !ISDIG(s[i]); i++) {
			uint8_t c = s[i];

			*o++ = c == '~' ? V_TILDE : v_code(c);
		}
		*o++ = V_SEP;
		while (i < n && s[i] == '0')
			i++;
		for (j = i; j < n && ISDIG(s[j]); j++)
			;
		L = j - i;
		if (L < 255) {
			*o++ = (uint8_t)L;
		} else {
			uint32_t l = L > UINT32_MAX ? UINT32_MAX : (uint32_t)L;

			*o++ = 0xFF;
			*o++ = (uint8_t)(l >> 24);
			*o++ = (uint8_t)(l >> 16);
			*o++ = (uint8_t)(l >> 8);
			*o++ = (uint8_t)l;
		}
		memcpy(o, s + i, L);
		o += L;
		i = j;
		if (i == n)
			break;
	}
	*o++ = V_END;
	return o;
}

/* the length of s[0..n) without its file suffix (filenvercmp's file_prefixlen) */
static size_t version_prefix(const uint8_t *s, size_t n)
{
	size_t i = 0, pl = 0;

	for (;;) {
		while (i + 1 < n && s[i] == '.' && (v_alpha(s[i + 1]) || s[i + 1] == '~'))
			for (i += 2; i < n && (v_alpha(s[i]) || ISDIG(s[i]) || s[i] == '~'); i++)
				;
		if (i == n)
			return pl;
		pl = ++i;
	}
}

static size_t enc_version(const uint8_t *s, size_t n, uint8_t *out)
{
	uint8_t *o = out;

	if (n == 0) {
		*o++ = 0x00;
	} else if (s[0] == '.' && n == 1) {
		*o++ = 0x01;
	} else if (s[0] == '.' && n == 2 && s[1] == '.') {
		*o++ = 0x02;
	} else {
		size_t p = version_prefix(s, n);

		*o++ = s[0] == '.' ? 0x03 : 0x04;
		o = enc_version_pass(s, p, o);
		if (p < n)
			o = enc_version_pass(s, n, o);
		else
			*o++ = 0x00;
	}
	return (size_t)(o - out);
}

/* -R: the digest of the seed and the text s[0..n), then the text */
static size_t enc_random(const ss_key *k, const uint8_t *s, size_t n, int term, uint8_t *out)
{
	static const ss_key plain;
	sp_md5 m;

	sp_md5_init(&m);
	sp_md5_update(&m, k->rseed, sizeof k->rseed);
	sp_md5_update(&m, s, n);
	sp_md5_final(&m, out);
	return 16 + enc_text(&plain, s, s + n, term, out + 16);
}

size_t ss_enc_key(const ss_key *k, const uint8_t *b, const uint8_t *e, int last, uint8_t *out)
{
	size_t n, i;

	if (k->random || k->version) {
		size_t len = (size_t)(e - b);
		const uint8_t *t = b;

		if (k->fold || k->dict || k->nonprint) {
			/* translated at the end of the room (the encoding, written
			 * from out on, stays below it: see ss_enc_bound) */
			uint8_t *w = out + ss_enc_bound(k, len, 1) - len;

			len = translate(k, b, e, w);
			t = w;
		}
		n = k->random ? enc_random(k, t, len, !last || k->reverse, out) : enc_version(t, len, out);
	} else if (k->numeric || k->human) {
		uint8_t *o = out;

		while (b < e && is_blank(*b))
			b++;
		if (k->human)
			*o++ = (uint8_t)(0x80 + unit_order(b, e));
		n = (size_t)(o - out) + enc_number(b, e, o);
	} else if (k->month) {
		out[0] = (uint8_t)month_of(b, e);
		n = 1;
	} else if (k->general) {
		n = enc_general(b, e, out);
	} else {
		n = enc_text(k, b, e, !last || k->reverse, out);
	}
	if (k->reverse)
		for (i = 0; i < n; i++)
			out[i] = (uint8_t)~out[i];
	return n;
}

size_t ss_enc_line(const ss_opts *o, const uint8_t *t, size_t len, uint8_t *out)
{
	size_t n = 0;
	int i;

	for (i = 0; i < o->nkeys; i++) {
		const uint8_t *kb, *ke;

		ss_key_span(&o->keys[i], o->tab, t, len, &kb, &ke);
		n += ss_enc_key(&o->keys[i], kb, ke, i == o->nkeys - 1, out + n);
	}
	return n;
}
