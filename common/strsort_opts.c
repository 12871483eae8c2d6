/*
 * strsort_opts.c - the strsort tool's option values that need more than
 * getopt (strsort.h): -S sizes and the bare -k.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strsort.h"

size_t ss_parse_size(const char *s, int *ok)
{
	char *end;
	double v = strtod(s, &end);
	double mul = 1024;

	*ok = 0;
	if (end == s || !(v >= 0))   /* negative or NaN */
		return 0;
	switch (*end) {
	case '\0': mul = 1024; break;
	case 'b': mul = 1; end++; break;
	case 'k': case 'K': mul = 1024; end++; break;
	case 'm': case 'M': mul = 1024.0 * 1024; end++; break;
	case 'g': case 'G': mul = 1024.0 * 1024 * 1024; end++; break;
	case 't': case 'T': mul = 1024.0 * 1024 * 1024 * 1024; end++; break;
	case '%': {
		long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);

		mul = (double)pages * (double)psz / 100.0;
		end++;
		break;
	}
	default: return 0;
	}
	if (*end)
		return 0;
	*ok = 1;
	v *= mul;
	return v >= 1.8e19 ? SIZE_MAX : (size_t)v;
}

void ss_fix_bare_k(int argc, char **argv)
{
	static char k11[] = "-k1,1";
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *p;

		if (strcmp(a, "--") == 0)
			break;
		if (a[0] != '-' || a[1] == '\0')
			continue;
		if (a[1] == '-') {
			if (!strchr(a, '=') && (strcmp(a, "--algorithm") == 0 || strcmp(a, "--key") == 0 ||
					strcmp(a, "--field-separator") == 0 || strcmp(a, "--output") == 0 ||
					strcmp(a, "--buffer-size") == 0 || strcmp(a, "--parallel") == 0 ||
					strcmp(a, "--temporary-directory") == 0 || strcmp(a, "--sort") == 0 ||
					strcmp(a, "--random-source") == 0 || strcmp(a, "--device") == 0 ||
					strcmp(a, "--files0-from") == 0 || strcmp(a, "--batch-size") == 0))
				i++;
			continue;
		}
		for (p = a + 1; *p; p++) {
			if (strchr("toSTj", *p)) {
				if (!p[1])
					i++;    /* the next argument is the value */
				break;
			}
			if (*p == 'k') {
				if (!p[1]) {
					ss_key k;
					const char *why;

					/* no argument, one that cannot begin a KEYDEF, or an
					 * existing file that is not a KEYDEF (-k 2024.tsv):
					 * a bare -k, then an operand */
					if (i + 1 >= argc || argv[i + 1][0] < '0' || argv[i + 1][0] > '9' ||
					    (ss_parse_key(argv[i + 1], &k, &why) < 0 && access(argv[i + 1], F_OK) == 0)) {
						if (p == a + 1)
							argv[i] = k11;
						else
							break; /* e.g. -rk FILE: leave it to getopt */
					} else {
						i++;
					}
				}
				break;
			}
		}
	}
}
