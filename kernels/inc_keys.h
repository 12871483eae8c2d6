/*
 * inc_keys.h - one read's candidate list decoded into the keys of extend's
 * device cut (strand << 63 | sequence << 40 | global position), shared by
 * the host (common/ext_win.c, ext_read_keys) and the kernel align_keys
 * (kernels/align.cl).
 *
 * The list is the stream's encoding: per entry a tag varint (bit 0: the
 * entry resets partition, sequence and position, which follow as three
 * varints; bit 1: the strand; the rest: support), else one varint, a delta
 * added to the position.  A reset is checked in full against the index
 * (partition PB[2d] .. PB[2d + 1], sequence SB[y] .. SE[y], global) and
 * bounds the deltas that follow (the end of what its partition and
 * sequence share); every key must also lie before REF_BASES.  The forward
 * strand's keys go first, from KEYS[0], the reverse strand's after them
 * (from KEYS[*NF]), each in the list's order: PASS 0 only counts the
 * forward ones into *NF, PASS 1 (with *NF set) writes the keys; PASS 2
 * (one pass, where KEYS has room for 2N) writes the reverse ones from
 * KEYS[N] instead, and sets *NF (the caller moves them behind the
 * forward ones).
 *
 * Returns KEYS_OK, KEYS_UNSORTED (a strand's keys not ascending: written
 * all the same), KEYS_MALFORMED, or KEYS_OUTSIDE with the entry's
 * partition, sequence and position in BAD[0..2].
 *
 * Written in the C subset shared by OpenCL C and C99 (kernels/inc_common.h).
 */
#ifndef SP_INC_KEYS_H
#define SP_INC_KEYS_H

#include "inc_common.h"

#define KEYS_OK 0
#define KEYS_UNSORTED 1
#define KEYS_MALFORMED 2
#define KEYS_OUTSIDE 3

/* A varint's most bits, in its place S (below: 0 a tag, else a number), and most bytes */
#define KEYS_BITS(s) ((s) ? 32u : 34u)
#define KEYS_VAR_MAX 5u

/* A varint of at most BITS bits (34: a tag) at LIST[*P], *P < END: 0, or -1 if malformed. */
SP_FN int sp_keys_var(SP_GLOBAL const uchar *list, uint *p, uint end, ulong *x, uint bits)
{
	ulong v = 0;
	uint sh = 0;
	uchar b;

	if (*p < end && list[*p] < 0x80) {   /* one byte: most tags and deltas */
		*x = list[(*p)++];
		return 0;
	}
	do {
		if (*p >= end || sh >= bits)
			return -1;
		b = list[(*p)++];
		v |= (ulong)(b & 0x7f) << sh;
		sh += 7;
	} while (b & 0x80);
	if (v >> bits)
		return -1;
	*x = v;
	return 0;
}

/* The N entries of LIST[P .. END) as keys (the comment above). */
SP_FN int sp_keys_read(SP_GLOBAL const uchar *list, uint p, uint end, uint n,
		SP_GLOBAL const ulong *pb, uint n_part, SP_GLOBAL const ulong *sb,
		SP_GLOBAL const ulong *se, uint n_seq, ulong ref_bases, SP_GLOBAL ulong *keys,
		uint *nf, int pass, uint *bad)
{
	ulong tag, d = 0, y = 0, z, g = 0, hi = 0, sk = 0, prev[2] = { 0, 0 }, k;
	uint i, pos = 0, f = 0, r = 0;
	int sorted = 1;

	for (i = 0; i < n; i++) {
		uint strand;
		if (sp_keys_var(list, &p, end, &tag, KEYS_BITS(0)))
			return KEYS_MALFORMED;
		strand = (uint)(tag >> 1 & 1);
		if (tag & 1) {
			ulong s1;
			if (sp_keys_var(list, &p, end, &d, KEYS_BITS(1))
					|| sp_keys_var(list, &p, end, &y, KEYS_BITS(1))
					|| sp_keys_var(list, &p, end, &z, KEYS_BITS(1)))
				return KEYS_MALFORMED;
			pos = (uint)z;
			if (d >= n_part || y >= n_seq)
				break;
			g = pb[2 * d] + z;
			s1 = se[y];
			if (g >= pb[2 * d + 1] || g < sb[y] || g >= s1)
				break;
			hi = pb[2 * d + 1] < s1 ? pb[2 * d + 1] : s1;
			sk = y << 40;
		} else {
			if (!i || sp_keys_var(list, &p, end, &z, KEYS_BITS(1))
					|| z > 0xffffffffu - pos)
				return KEYS_MALFORMED;
			pos += (uint)z;
			g += z;
			if (g >= hi)
				break;
		}
		if (g >= ref_bases)
			break;
		k = (ulong)strand << 63 | sk | g;
		sorted &= k >= prev[strand];
		prev[strand] = k;
		if (pass)
			keys[strand ? (pass == 1 ? *nf : n) + r++ : f++] = k;
		else
			f += !strand;
	}
	if (i < n) {
		bad[0] = (uint)d;
		bad[1] = (uint)y;
		bad[2] = pos;
		return KEYS_OUTSIDE;
	}
	if (p != end)
		return KEYS_MALFORMED;
	*nf = f;
	return sorted ? KEYS_OK : KEYS_UNSORTED;
}

/*
 * The parallel decoding (kernel align_keys_wg: a work-group a list, its
 * lanes on neighbouring bytes): a byte below 0x80 ends a varint, and a
 * varint's place in its entry is a state: 0 the tag, 1 .. 3 a reset's
 * partition, sequence and position, 4 a delta.  The state after a varint
 * of value X is a map of the five states (3 bits each: sp_keys_map), and
 * maps compose (sp_keys_then), so that a prefix scan of the maps gives
 * every varint's state from the list's first (0).  A varint in state 0
 * has at most 34 bits, the others 32 (sp_keys_var's BITS), and at most 5
 * bytes.  An entry ends with its state 3 or 4 varint; its position (POS:
 * the reset's, plus the deltas since; D, Y the reset's partition and
 * sequence) is checked by sp_keys_ok as sp_keys_read checks it, into *G.
 */
#define KEYS_MAP_ID 0x4688u     /* 0 1 2 3 4 */

SP_FN uint sp_keys_map(ulong x)
{
	return (x & 1u ? 1u : 4u) | 2u << 3 | 3u << 6;   /* 3 and 4: back to 0 */
}

SP_FN uint sp_keys_at(uint f, uint s)
{
	return f >> (3u * s) & 7u;
}

/* F, then G */
SP_FN uint sp_keys_then(uint f, uint g)
{
	return sp_keys_at(g, sp_keys_at(f, 0u)) | sp_keys_at(g, sp_keys_at(f, 1u)) << 3
		| sp_keys_at(g, sp_keys_at(f, 2u)) << 6 | sp_keys_at(g, sp_keys_at(f, 3u)) << 9
		| sp_keys_at(g, sp_keys_at(f, 4u)) << 12;
}

SP_FN int sp_keys_ok(ulong d, ulong y, ulong pos, SP_GLOBAL const ulong *pb, uint n_part,
		SP_GLOBAL const ulong *sb, SP_GLOBAL const ulong *se, uint n_seq, ulong ref_bases,
		ulong *g)
{
	if (d >= n_part || y >= n_seq || pos > 0xffffffffu)
		return 0;
	*g = pb[2 * d] + pos;
	return *g < pb[2 * d + 1] && *g >= sb[y] && *g < se[y] && *g < ref_bases;
}

#endif
