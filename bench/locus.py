#!/usr/bin/env python3
"""locus.py - is a peer's hit in a locus we report?  (bench/map.sh)

    python3 locus.py A REF.fa READS.fq OURS.e PEER.e

OURS.e and PEER.e hold "name strand start end" lines (1-based, strand 1 =
reverse), PEER.e only the peer's hits that overlap none of ours.  For each,
the read (reverse-complemented on strand 1) is aligned semi-globally (free
start, edit distance, N matching nothing) over the reference around the
hit and our hits of that read and strand, giving D[m][j] for every end j.
As in Rabema (and issue 5), a locus is a maximal run of neighbouring ends
with D <= A.  Prints how many of the peer's hits end outside every run that
holds the end of one of our hits: hits truly lost.  A full DP, independent
of extend's code.  A one-sequence reference only (else it prints -).
"""
import sys

a = int(sys.argv[1])
ref = {}
name = None
with open(sys.argv[2]) as f:
    parts = []
    for line in f:
        if line.startswith('>'):
            if name is not None:
                ref[name] = ''.join(parts)
            name, parts = line[1:].split()[0], []
        else:
            parts.append(line.strip().upper())
    if name is not None:
        ref[name] = ''.join(parts)
peer = [l.split() for l in open(sys.argv[5]) if l.strip()]
want = {p[0] for p in peer}
reads = {}
with open(sys.argv[3]) as f:
    while True:
        h = f.readline()
        if not h:
            break
        s = f.readline().strip().upper()
        f.readline()
        f.readline()
        n = h[1:].split()[0]
        if n in want:
            reads[n] = s
ours = {}
for l in open(sys.argv[4]):
    n, st, b, e = l.split()
    if n in want:
        ours.setdefault((n, st), []).append(int(e))
comp = {'A': 'T', 'C': 'G', 'G': 'C', 'T': 'A'}
if len(ref) != 1:       # the .e lines do not name the sequence
    print('-')
    sys.exit(0)
seq = next(iter(ref.values()))


def runs(read, t, lo):
    m = len(read)
    prev = list(range(m + 1))
    out, cur = [], None
    for j, c in enumerate(t):
        row = [0] * (m + 1)
        for i in range(1, m + 1):
            r = read[i - 1]
            v = prev[i - 1] + (0 if r == c and r in 'ACGT' else 1)
            row[i] = min(v, prev[i] + 1, row[i - 1] + 1)
        prev = row
        pos = lo + j
        if row[m] <= a:
            if cur and cur[1] == pos - 1:
                cur[1] = pos
            else:
                cur = [pos, pos]
                out.append(cur)
    return out


lost = 0
for n, st, b, e in peer:
    read = reads[n]
    if st == '1':
        read = ''.join(comp.get(c, 'N') for c in reversed(read))
    mine = ours.get((n, st), [])
    e = int(e)
    near = [x for x in mine if abs(x - e) < 2000]
    lo = max(1, min([e] + near) - len(read) - a - 2)
    hi = max([e] + near) + 2
    rs = runs(read, seq[lo - 1:hi], lo)
    if not any(r[0] <= e <= r[1] and any(r[0] <= x <= r[1] for x in near) for r in rs):
        lost += 1
print(lost)
