/*
 * idx_spill.c - the index builder's sequential writer and its section
 * sinks (idx_spill.h).
 */
#include "idx_spill.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "idx.h"
#include "sp_le.h"
#include "util.h"

int idx_wr_raw(idx_wr_t *w, const void *buf, size_t n)
{
	if (sp_write_all(w->fd, buf, n) != 0)
		return sp_fail("cannot write '%s': %s", w->name, strerror(errno));
	w->off += n;
	return 0;
}

/* The header of section NAME (payload LEN bytes, hash H), then nothing else. */
static int wr_head(idx_wr_t *w, const char *name, uint32_t part, uint32_t esize,
		uint64_t len, uint64_t h)
{
	uint8_t hd[IDX_SEC_HDR];

	memset(hd, 0, sizeof hd);
	memcpy(hd, name, strnlen(name, 15));
	sp_st32(hd + 16, part);
	sp_st32(hd + 20, esize);
	sp_st64(hd + 24, len);
	sp_st64(hd + 32, h);
	sp_st64(hd + 56, XXH3_64bits(hd, 56));
	return idx_wr_raw(w, hd, sizeof hd);
}

/* The zero padding after a payload of LEN bytes; counts the section. */
static int wr_pad(idx_wr_t *w, uint64_t len)
{
	uint8_t pad[IDX_ALIGN];

	memset(pad, 0, sizeof pad);
	if (len % IDX_ALIGN && idx_wr_raw(w, pad, IDX_ALIGN - len % IDX_ALIGN) != 0)
		return -1;
	w->n_sections++;
	return 0;
}

int idx_wr_section(idx_wr_t *w, const char *name, uint32_t part, uint32_t esize,
		const void *data, uint64_t len)
{
	if (wr_head(w, name, part, esize, len, XXH3_64bits_withSeed(data, (size_t)len, w->fp)) != 0
			|| (len && idx_wr_raw(w, data, (size_t)len) != 0))
		return -1;
	return wr_pad(w, len);
}

/* ---- sinks ------------------------------------------------------------------ */

int idx_sink_open(idx_sink_t *s, const char *dir, uint64_t seed)
{
	memset(s, 0, sizeof *s);
	s->fd = -1;
	s->dir = dir;
	s->st = XXH3_createState();
	if (!s->st)
		sp_die("out of memory (xxhash state)");
	XXH3_64bits_reset_withSeed(s->st, seed);
	if (dir) {
		char prefix[4096];

		snprintf(prefix, sizeof prefix, "%s/seqidx.", dir);
		s->fd = sp_tmp_create(prefix, &s->tmp);
		if (s->fd < 0)
			return -1;   /* sp_tmp_create's message names the file */
		s->cap = IDX_SINK_BUF;
		s->buf = sp_malloc(s->cap);
	}
	return 0;
}

/* A file sink's buffer to its file (an sp_flush_fn). */
static int sink_flush(void *ctx)
{
	idx_sink_t *s = ctx;

	if (s->len && sp_write_all(s->fd, s->buf, s->len) != 0)
		return sp_fail("cannot write the temporary file '%s' (seqidx -T %s): %s",
			s->tmp->path, s->dir, strerror(errno));
	s->len = 0;
	return 0;
}

int idx_sink_put(idx_sink_t *s, const void *p, size_t n)
{
	const uint8_t *q = p;

	XXH3_64bits_update(s->st, p, n);
	s->total += n;
	if (s->fd < 0) {
		if (s->len + n > s->cap) {
			s->cap = (s->len + n) + (s->len + n) / 2 + 64;
			s->buf = sp_realloc(s->buf, s->cap);
		}
		if (n)
			memcpy(s->buf + s->len, q, n);
		s->len += n;
		return 0;
	}
	return sp_buf_put(s->buf, s->cap, &s->len, q, n, sink_flush, s);
}

int idx_sink_adopt(idx_sink_t *s, void *buf, size_t n)
{
	int rc;

	if (s->fd < 0 && s->len == 0) {
		XXH3_64bits_update(s->st, buf, n);
		s->total = n;
		free(s->buf);
		s->buf = buf;
		s->len = s->cap = n;
		return 0;
	}
	rc = idx_sink_put(s, buf, n);
	free(buf);
	return rc;
}

long long idx_sink_read(idx_sink_t *s, uint64_t *off, void *buf, size_t n)
{
	uint64_t left = s->total - *off;
	size_t k = left < n ? (size_t)left : n, got = 0;

	if (k == 0)
		return 0;
	if (s->fd < 0) {
		memcpy(buf, s->buf + *off, k);
		*off += k;
		return (long long)k;
	}
	if (*off == 0 && sink_flush(s) != 0)
		return -1;
	while (got < k) {
		ssize_t r = pread(s->fd, (uint8_t *)buf + got, k - got, (off_t)(*off + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return sp_fail("cannot read the temporary file '%s' back: %s", s->tmp->path,
				r < 0 ? strerror(errno) : "it is shorter than written");
		got += (size_t)r;
	}
	*off += k;
	return (long long)k;
}

int idx_sink_write(idx_wr_t *w, idx_sink_t *s, const char *name, uint32_t part, uint32_t esize)
{
	uint64_t off = 0;

	if (wr_head(w, name, part, esize, s->total, XXH3_64bits_digest(s->st)) != 0)
		return -1;
	if (s->fd < 0) {
		if (s->total && idx_wr_raw(w, s->buf, s->len) != 0)
			return -1;
	} else {
		uint8_t *b = s->buf;   /* the write buffer serves as the read buffer */
		long long k;

		if (sink_flush(s) != 0)
			return -1;
		while ((k = idx_sink_read(s, &off, b, s->cap)) > 0)
			if (idx_wr_raw(w, b, (size_t)k) != 0)
				return -1;
		if (k < 0)
			return -1;
	}
	return wr_pad(w, s->total);
}

void idx_sink_free(idx_sink_t *s)
{
	if (s->st && s->fd >= 0)
		close(s->fd);
	sp_tmp_remove(s->tmp);
	if (s->st)
		XXH3_freeState(s->st);
	free(s->buf);
	memset(s, 0, sizeof *s);
	s->fd = -1;
}

/* ---- red.grp / red.rep as they come ------------------------------ */

static int grp_emit(idx_grp_t *g, idx_sink_t *grp)
{
	uint32_t e[4];

	e[0] = g->base;
	e[1] = g->xoff;
	e[2] = (uint32_t)g->fl;
	e[3] = (uint32_t)(g->fl >> 32);
	return idx_sink_put(grp, e, sizeof e);
}

/* Open the group of neighborhood g->j: its first position's extra, its first REP index. */
static void grp_open(idx_grp_t *g)
{
	g->base = (uint32_t)g->extra;
	g->xoff = (uint32_t)g->x;
	g->fl = 0;
	g->cum = 0;
}

int idx_grp_add(idx_grp_t *g, uint32_t c, idx_sink_t *grp, idx_sink_t *rep)
{
	uint32_t t = (uint32_t)(g->j & 63);

	if (t == 0)
		grp_open(g);
	if (c > 1) {
		g->fl |= 1ULL << t;
		g->cum += c - 1;
		if (idx_sink_put(rep, &g->cum, 4) != 0)
			return -1;
		g->x++;
	}
	g->extra += c - 1;
	g->j++;
	return t == 63 ? grp_emit(g, grp) : 0;
}

int idx_grp_end(idx_grp_t *g, idx_sink_t *grp)
{
	/* the groups cover j = 0 .. U: the one of j = U is open, or opens now */
	if ((g->j & 63) == 0)
		grp_open(g);
	return grp_emit(g, grp);
}
