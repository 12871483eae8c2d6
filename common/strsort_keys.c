/*
 * strsort_keys.c - strsort's keys (see strsort.h): POSIX -k KEYDEF parsing,
 * the global options applied to the keys as GNU sort does, a key's span in
 * a line (GNU sort's begfield/limfield), GNU sort's -n comparison in the C
 * locale, and the comparison of two lines on their keys.
 */
#include <stdint.h>
#include <string.h>

#include "strsort_priv.h"
#include "util.h"

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

void ss_key_span(const ss_key *k, int tab, const uint8_t *t, size_t len,
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

int ss_cmp_lines(const ss_opts *o, int k0, const uint8_t *a, size_t la,
		const uint8_t *b, size_t lb)
{
	int i;

	for (i = k0; i < o->nkeys; i++) {
		const ss_key *k = &o->keys[i];
		const uint8_t *ab, *ae, *bb, *be;
		int c;

		ss_key_span(k, o->tab, a, la, &ab, &ae);
		ss_key_span(k, o->tab, b, lb, &bb, &be);
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

int ss_key_is_whole(const ss_key *k)
{
	return k->sword == SS_NONE && k->eword == SS_NONE && !k->skipsb;
}
