/*
 * galign_oracle.h - the plain dynamic-programming oracle of the global
 * alignment tests (header only): the full (m+1) x (n+1) matrix of
 * H[i][j] = max(H[i-1][j-1] + s, H[i-1][j] + g, H[i][j-1] + g) with end gaps
 * charged, and the traceback by the tie rule documented in extend(1)
 * (parasail's NW traceback): from (m, n) in state H the diagonal if it
 * gives H, else a vertical gap if it does, else a horizontal one; a gap is
 * extended while extending it gives H at the next cell.  Codes A 0 C 1 G 2
 * T 3, anything else 4, which matches nothing.
 */
#ifndef SP_GALIGN_ORACLE_H
#define SP_GALIGN_ORACLE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
	int score;
	uint32_t matches, mismatches, ins, del;
	char *cigar;                 /* malloc'ed: free with oracle_free */
} oracle_t;

static inline void oracle(const uint8_t *q, uint32_t m, const uint8_t *t, uint32_t n, int ma, int mi,
		int g, oracle_t *o)
{
	int64_t *h = malloc(sizeof *h * (m + 1) * (n + 1));
	char *ops = malloc(m + n + 1);
	uint32_t i, j, k = 0;
	int st = 0, c;
	size_t w = 0, cap = ((size_t)m + n) * 11 + 2;

#define H(a, b) h[(size_t)(a) * (n + 1) + (b)]
	for (i = 0; i <= m; i++)
		for (j = 0; j <= n; j++) {
			int64_t best;
			if (i == 0 && j == 0) {
				H(i, j) = 0;
				continue;
			}
			best = INT64_MIN / 2;
			if (i && j) {
				int s = q[i - 1] == t[j - 1] && q[i - 1] < 4 ? ma : mi;
				if (H(i - 1, j - 1) + s > best)
					best = H(i - 1, j - 1) + s;
			}
			if (i && H(i - 1, j) + g > best)
				best = H(i - 1, j) + g;
			if (j && H(i, j - 1) + g > best)
				best = H(i, j - 1) + g;
			H(i, j) = best;
		}
	o->cigar = malloc(cap);
	o->score = (int)H(m, n);
	o->matches = o->mismatches = o->ins = o->del = 0;
	i = m;
	j = n;
	while (i > 0 || j > 0) {
		if (i == 0) {
			ops[k++] = 'D';
			j--;
			continue;
		}
		if (j == 0) {
			ops[k++] = 'I';
			i--;
			continue;
		}
		if (st == 0) {
			int eq = q[i - 1] == t[j - 1] && q[i - 1] < 4;
			if (H(i, j) == H(i - 1, j - 1) + (eq ? ma : mi)) {
				ops[k++] = eq ? '=' : 'X';
				i--;
				j--;
				continue;
			}
			st = H(i, j) == H(i - 1, j) + g ? 1 : 2;
		}
		if (st == 1) {
			ops[k++] = 'I';
			i--;
			if (!(i >= 1 && H(i, j) == H(i - 1, j) + g))
				st = 0;
		} else {
			ops[k++] = 'D';
			j--;
			if (!(j >= 1 && H(i, j) == H(i, j - 1) + g))
				st = 0;
		}
	}
	for (c = (int)k - 1; c >= 0;) {
		int e = c;
		while (e >= 0 && ops[e] == ops[c])
			e--;
		w += (size_t)snprintf(o->cigar + w, cap - w, "%d%c", c - e, ops[c]);
		switch (ops[c]) {
		case '=': o->matches += (uint32_t)(c - e); break;
		case 'X': o->mismatches += (uint32_t)(c - e); break;
		case 'I': o->ins += (uint32_t)(c - e); break;
		default: o->del += (uint32_t)(c - e); break;
		}
		c = e;
	}
	o->cigar[w] = 0;
#undef H
	free(h);
	free(ops);
}

static inline void oracle_free(oracle_t *o)
{
	free(o->cigar);
	o->cigar = NULL;
}

#endif
