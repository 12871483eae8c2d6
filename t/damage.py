#!/usr/bin/env python3
"""damage.py - read and patch fields of an index or a record stream, for the
tests that hand the tools damaged files (then t/unit/sp_resum.c makes every
checksum agree again).

  damage.py FILE sec NAME [PART]     payload offset and length of a section
  damage.py FILE get OFF FMT         values at OFF (struct format, little-endian)
  damage.py FILE put OFF FMT VAL...  write values at OFF
  damage.py FILE swap OFF1 OFF2 LEN  exchange two byte ranges
  damage.py FILE bwtswap PART        exchange the codes of two adjacent rows of
                                     different letters in one fm.occ block
                                     (neither the primary row): the counts
                                     stay right, the LF mapping gets a cycle
"""
import struct
import sys


def sections(b):
    off = 128
    while off + 64 <= len(b):
        name = b[off:off + 16].split(b"\0")[0].decode()
        part, _, n = struct.unpack("<IIQ", b[off + 16:off + 32])
        yield name, part, off + 64, n
        if name == "end":
            return
        off += 64 + (n + 63) // 64 * 64


def find(b, name, part):
    for nm, pt, off, n in sections(b):
        if nm == name and (part is None or pt == part):
            return off, n
    sys.exit("damage.py: no section %s" % name)


def main():
    path, cmd = sys.argv[1], sys.argv[2]
    b = bytearray(open(path, "rb").read())
    a = sys.argv[3:]
    if cmd == "sec":
        off, n = find(b, a[0], int(a[1]) if len(a) > 1 else None)
        print(off, n)
        return
    if cmd == "get":
        print(*struct.unpack_from("<" + a[1], b, int(a[0])))
        return
    if cmd == "put":
        # values wrap modulo 2^bits (shell arithmetic is signed 64-bit)
        fmts = a[1]
        vals = [int(v, 0) % (1 << (8 * struct.calcsize("<" + f))) for v, f in zip(a[2:], fmts)]
        struct.pack_into("<" + fmts, b, int(a[0]), *vals)
    elif cmd == "swap":
        o1, o2, n = int(a[0]), int(a[1]), int(a[2])
        b[o1:o1 + n], b[o2:o2 + n] = b[o2:o2 + n], b[o1:o1 + n]
    elif cmd == "bwtswap":
        part = int(a[0])
        moff, _ = find(b, "fm.meta", part)
        primary = struct.unpack_from("<Q", b, moff + 8)[0]
        ooff, olen = find(b, "fm.occ", part)
        n = struct.unpack_from("<Q", b, moff)[0]
        done = False
        for blk in range(olen // 32):
            w = struct.unpack_from("<QQ", b, ooff + 32 * blk + 16)
            for k in range(0, 62):
                r = 64 * blk + k
                if r + 1 > n or r == primary or r + 1 == primary or k == 31:
                    continue
                c1 = w[k // 32] >> (2 * (k % 32)) & 3
                c2 = w[(k + 1) // 32] >> (2 * ((k + 1) % 32)) & 3
                if c1 != c2:
                    x = list(w)
                    x[k // 32] ^= (c1 ^ c2) << (2 * (k % 32))
                    x[(k + 1) // 32] ^= (c1 ^ c2) << (2 * ((k + 1) % 32))
                    struct.pack_into("<QQ", b, ooff + 32 * blk + 16, *x)
                    done = True
                    break
            if done:
                break
        if not done:
            sys.exit("damage.py: no two adjacent rows to swap")
    else:
        sys.exit("damage.py: unknown command " + cmd)
    open(path, "wb").write(b)


main()
