/*
 * strsort_opts.c - fuzz target: strsort's key definitions and option
 * values.  The input is NUL-separated strings: the first is a -S size
 * (ss_parse_size), the others are -k KEYDEFs (ss_parse_key) and also an
 * argument vector for the bare -k rewrite (ss_fix_bare_k).  The parsed keys
 * get the global flags of the last input byte (ss_finish_keys); ss_numcmp
 * must order the strings as a total preorder (antisymmetric, reflexive).
 */
#include <stdlib.h>
#include <string.h>

#include "strsort.h"

#include "fuzz.h"

#define MAXS 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *s[MAXS], *argv[MAXS + 2];
	int ns = 0, i, j, ok;
	ss_opts o;
	ss_key keys[MAXS];
	const char *why;

	memcpy(buf, data, size);
	buf[size] = 0;
	for (i = 0; ns < MAXS; ) {
		s[ns++] = buf + i;
		while ((size_t)i < size && buf[i])
			i++;
		if ((size_t)i >= size)
			break;
		i++;
	}
	(void)ss_parse_size(s[0], &ok);
	memset(&o, 0, sizeof o);
	o.keys = keys;
	for (i = 1; i < ns; i++)
		if (ss_parse_key(s[i], &keys[o.nkeys], &why) == 0)
			o.nkeys++;
		else if (!why || !*why)
			fuzz_fail("ss_parse_key refused '%s' without a reason", s[i]);
	if (size) {
		o.blanks = data[size - 1] & 1;
		o.numeric = data[size - 1] >> 1 & 1;
		o.reverse = data[size - 1] >> 2 & 1;
	}
	ss_finish_keys(&o);
	if (o.keys != keys)
		free(o.keys);
	for (i = 0; i < ns; i++)
		for (j = 0; j < ns; j++) {
			const uint8_t *a = (const uint8_t *)s[i], *b = (const uint8_t *)s[j];
			int x = ss_numcmp(a, a + strlen(s[i]), b, b + strlen(s[j]));
			int y = ss_numcmp(b, b + strlen(s[j]), a, a + strlen(s[i]));

			if ((x > 0) != (y < 0) || (x < 0) != (y > 0) || (i == j && x != 0))
				fuzz_fail("ss_numcmp is not antisymmetric on '%s', '%s'", s[i], s[j]);
		}
	argv[0] = "strsort";
	for (i = 0; i < ns; i++)
		argv[i + 1] = s[i];
	argv[ns + 1] = NULL;
	ss_fix_bare_k(ns + 1, argv);
	free(buf);
	return 0;
}
