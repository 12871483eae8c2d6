#!/usr/bin/env python3
"""sprof-report.py PROF [BIN...]: the functions of a bench/sprof.c profile.

PROF's program counters are mapped to their file and offset by its "map"
lines; those in a file named like one of BIN (the same build as profiled,
found by its base name) are named by addr2line, the rest by file alone.
Prints the share of the samples per function, the largest first."""
import collections, os, subprocess, sys

prof, bins = sys.argv[1], {os.path.basename(b): b for b in sys.argv[2:]}
pcs, maps, total = [], [], 0
for line in open(prof):
    f = line.split()
    if f[0] == 'pc':
        pcs.append((int(f[1], 16), int(f[2])))
    elif f[0] == 'map':
        maps.append((int(f[1], 16), int(f[2], 16), int(f[3], 16), f[4]))
    elif line.startswith('# samples'):
        total = int(f[2])
by_file = collections.defaultdict(list)
for pc, n in pcs:
    for a, b, off, path in maps:
        if a <= pc < b:
            by_file[path].append((pc - a + off, n))
            break
    else:
        by_file['?'].append((pc, n))
agg = collections.Counter()
for path, lst in by_file.items():
    b = bins.get(os.path.basename(path))
    if not b:
        agg[os.path.basename(path)] += sum(n for _, n in lst)
        continue
    # a PIE's file offsets are its addresses (the text segment's offset = vaddr here)
    out = subprocess.run(['addr2line', '-f', '-e', b] + ['%x' % o for o, _ in lst],
                         capture_output=True, text=True).stdout.split('\n')
    for i, (_, n) in enumerate(lst):
        agg[os.path.basename(path) + ':' + out[2 * i]] += n
s = sum(agg.values()) or 1
print('# %d samples (%d in the table)' % (total, s))
for k, n in agg.most_common(40):
    print('%6.2f%% %8d %s' % (100.0 * n / s, n, k))
