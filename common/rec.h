/*
 * rec.h - seedpipe record streams: the binary framing of the pipes between
 * tools (shared/DESIGN.md section 3, spec in man/seedpipe-rec.5).
 *
 * Stream = header, blocks, end block; everything little-endian.
 *
 *   header   magic "\x89SPR\r\n\x1a\n" (8) | version u16 | kind u16 |
 *            prov_len u32 | provenance text (prov_len bytes, UTF-8,
 *            "key=value\n" lines) | xxh3-64 of all preceding header bytes u64
 *   block    tag "SPB1" (4) | payload_len u32 | nrec u32 | reserved u32 |
 *            xxh3-64(payload, seed = payload_len<<32 | nrec) u64 | payload
 *   end      tag "SPE1" (4) | 0 u32 | nblocks u32 | reserved u32 |
 *            total records u64 | xxh3-64 of the previous 24 bytes u64
 *
 * (H1 may refine the layout; the man page is the normative text.)
 *
 * A payload is a sequence of records; each record is u32 body length + body,
 * so any reader can step over records of any kind.  The body layout of each
 * kind is fixed by rec_kinds (reads, candidates, hits, keys).
 */
#ifndef SP_REC_H
#define SP_REC_H
#include <stddef.h>
#include <stdint.h>
#endif
