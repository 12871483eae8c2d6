/*
 * strsort_keys.c - strsort's keys (see strsort.h): POSIX -k KEYDEF parsing,
 * the global options applied to the keys as GNU sort does, a key's span in
 * a line (GNU sort's begfield/limfield), GNU sort's -n comparison in the C
 * locale, and the comparison of two lines on their keys.
 */
#include <stdint.h>
#include <stdlib.h>
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

static const char *parse_flags(const char *s, ss_key *k, int start)
{
	for (; *s; s++) {
		switch (*s) {
		case 'b':
			if (start)
				k->skipsb = 1;
			else
				k->skipeb = 1;
			break;
		case 'd': k->dict = 1; break;
		case 'f': k->fold = 1; break;
		case 'g': k->general = 1; break;
		case 'h': k->human = 1; break;
		case 'i': k->nonprint = 1; break;
		case 'M': k->month = 1; break;
		case 'n': k->numeric = 1; break;
		case 'r': k->reverse = 1; break;
		case 'R': k->random = 1; break;
		case 'V': k->version = 1; break;
		default:
			return s;
		}
	}
	return s;
}

/* the ordering options of k (the ones GNU sort lets a key override) */
static int has_order(const ss_key *k)
{
	return k->numeric || k->human || k->general || k->month || k->version ||
		k->random || k->fold || k->dict || k->nonprint;
}

/* copy the ordering options of g into k */
static void set_order(ss_key *k, const ss_key *g, int numeric)
{
	k->numeric = numeric;
	k->human = g->human;
	k->general = g->general;
	k->month = g->month;
	k->version = g->version;
	k->random = g->random;
	k->fold = g->fold;
	k->dict = g->dict;
	k->nonprint = g->nonprint;
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
	if (!(s = parse_flags(s, k, 1)))
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
		if (!(s = parse_flags(s, k, 0)))
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

		if (!(k->skipsb || k->skipeb || has_order(k) || k->reverse)) {
			k->skipsb = k->skipeb = o->blanks;
			set_order(k, &o->gflags, o->numeric);
			k->reverse = o->reverse;
		}
		memcpy(k->rseed, o->gflags.rseed, sizeof k->rseed);
	}
	if (o->nkeys == 0) {
		/* the whole line as one key, with the global flags */
		o->keys = sp_calloc(1, sizeof *o->keys);
		o->nkeys = 1;
		o->keys[0].sword = o->keys[0].eword = SS_NONE;
		o->keys[0].skipsb = o->keys[0].skipeb = o->blanks;
		set_order(&o->keys[0], &o->gflags, o->numeric);
		o->keys[0].reverse = o->reverse;
		memcpy(o->keys[0].rseed, o->gflags.rseed, sizeof o->keys[0].rseed);
	}
}

int ss_keys_incompatible(const ss_opts *o, char opts[16])
{
	int i;

	for (i = 0; i < o->nkeys; i++) {
		const ss_key *k = &o->keys[i];
		char *p = opts;

		if (k->numeric + k->general + k->human + k->month +
				(k->version || k->random || k->dict || k->nonprint) <= 1)
			continue;
		/* GNU sort's spelling: the ordering flags in its order */
		*p++ = '-';
		if (k->dict)
			*p++ = 'd';
		if (k->fold)
			*p++ = 'f';
		if (k->general)
			*p++ = 'g';
		if (k->human)
			*p++ = 'h';
		if (k->nonprint && !k->dict)
			*p++ = 'i';
		if (k->month)
			*p++ = 'M';
		if (k->numeric)
			*p++ = 'n';
		if (k->random)
			*p++ = 'R';
		if (k->version)
			*p++ = 'V';
		*p = 0;
		return 1;
	}
	return 0;
}

/* blanks as GNU sort has them in the C locale: space, tab, newline */
static inline int is_blank(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

/*
 * ---- numbers, ordered as GNU sort -n orders them in the C locale: leading
 * blanks, an optional '-', an integer part and an optional fraction; "-0",
 * "0.00" and "" are all zero.  The C locale has no thousands separator, and
 * GNU sort then passes NON_CHAR (CHAR_MAX + 1 = 128), so byte 0x80 acts as
 * one in the integer part: "1\x80000" is 1000 to GNU sort -n, and to
 * strsort.
 */
#define TSEP 0x80

#define ISDIG(c) ((unsigned)(c) - '0' < 10)

/* the byte at p, or 0 at the end e */
static inline uint8_t at(const uint8_t *p, const uint8_t *e)
{
	return p < e ? *p : 0;
}

/* the next byte of an integer part: separators after a digit are skipped */
static inline uint8_t next_int(const uint8_t **p, const uint8_t *e)
{
	while (++*p < e && **p == TSEP)
		;
	return at(*p, e);
}

/* skip the leading zeros (and separators) of an integer part */
static inline const uint8_t *skip_zeros(const uint8_t *p, const uint8_t *e)
{
	while (p < e && (*p == '0' || *p == TSEP))
		p++;
	return p;
}

/* 1 when a digit follows the zeros at p (a nonzero rest of a fraction) */
static int rest_nonzero(const uint8_t *p, const uint8_t *e)
{
	while (at(p, e) == '0')
		p++;
	return ISDIG(at(p, e));
}

/* 1 when the number at p (leading zeros skipped) is not zero */
static int nonzero(const uint8_t *p, const uint8_t *e)
{
	return at(p, e) == '.' ? rest_nonzero(p + 1, e) : ISDIG(at(p, e));
}

/* compare the fractions at a and b (each at a '.' or not a fraction) */
static int fraccmp(const uint8_t *a, const uint8_t *ae, const uint8_t *b, const uint8_t *be)
{
	int fa = at(a, ae) == '.', fb = at(b, be) == '.';
	uint8_t ca, cb;

	if (!(fa && fb))
		return (fa ? rest_nonzero(a + 1, ae) : 0) - (fb ? rest_nonzero(b + 1, be) : 0);
	do {
		ca = at(++a, ae);
		cb = at(++b, be);
	} while (ca == cb && ISDIG(ca));
	if (ISDIG(ca) && ISDIG(cb))
		return (int)ca - (int)cb;
	/* one fraction goes on, or neither: whether it is more than zeros */
	return rest_nonzero(a, ae) - rest_nonzero(b, be);
}

/* compare the magnitudes at a and b (leading zeros skipped) */
static int magcmp(const uint8_t *a, const uint8_t *ae, const uint8_t *b, const uint8_t *be)
{
	uint8_t ta = at(a, ae), tb = at(b, be);
	size_t la, lb;
	int tmp;

	while (ta == tb && ISDIG(ta)) {
		ta = next_int(&a, ae);
		tb = next_int(&b, be);
	}
	if ((ta == '.' && !ISDIG(tb)) || (tb == '.' && !ISDIG(ta)))
		return fraccmp(a, ae, b, be);
	/* the first differing digits decide between integer parts of one length */
	tmp = (int)ta - (int)tb;
	for (la = 0; ISDIG(ta); ++la)
		ta = next_int(&a, ae);
	for (lb = 0; ISDIG(tb); ++lb)
		tb = next_int(&b, be);
	if (la != lb)
		return la < lb ? -1 : 1;
	return la ? tmp : 0;
}

int ss_numcmp(const uint8_t *a, const uint8_t *ae, const uint8_t *b, const uint8_t *be)
{
	int na, nb;

	while (a < ae && is_blank(*a))
		a++;
	while (b < be && is_blank(*b))
		b++;
	na = at(a, ae) == '-';
	nb = at(b, be) == '-';
	a = skip_zeros(a + na, ae);
	b = skip_zeros(b + nb, be);
	if (na && nb)
		return magcmp(b, be, a, ae);
	if (na)   /* -x < y unless both are zero */
		return nonzero(a, ae) ? -1 : -nonzero(b, be);
	if (nb)
		return nonzero(b, be) ? 1 : nonzero(a, ae);
	return magcmp(a, ae, b, be);
}

static int bytecmp(const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
	int c = memcmp(a, b, na < nb ? na : nb);

	return c ? c : na < nb ? -1 : na > nb;
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
		if (ss_key_plain(k)) {
			c = bytecmp(ab, (size_t)(ae - ab), bb, (size_t)(be - bb));
			if (c && k->reverse)
				c = c < 0 ? 1 : -1;
		} else {
			/* the encodings order as the keys (a reversed one complemented) */
			uint8_t sx[512], sy[512], *x = sx, *y = sy;
			size_t bx = ss_enc_bound(k, (size_t)(ae - ab), 1);
			size_t by = ss_enc_bound(k, (size_t)(be - bb), 1);
			size_t nx, ny;

			if (bx > sizeof sx)
				x = sp_malloc(bx);
			if (by > sizeof sy)
				y = sp_malloc(by);
			nx = ss_enc_key(k, ab, ae, 0, x);
			ny = ss_enc_key(k, bb, be, 0, y);
			c = bytecmp(x, nx, y, ny);
			if (x != sx)
				free(x);
			if (y != sy)
				free(y);
		}
		if (c)
			return c;
	}
	return 0;
}

int ss_cmp_full(const ss_opts *o, const uint8_t *a, size_t la, const uint8_t *b, size_t lb)
{
	int c = ss_cmp_lines(o, 0, a, la, b, lb);

	if (c || !ss_last_resort(o))
		return c;
	c = bytecmp(a, la, b, lb);
	return o->reverse ? -c : c;
}

int ss_key_is_whole(const ss_key *k)
{
	return k->sword == SS_NONE && k->eword == SS_NONE && !k->skipsb;
}
