#!/bin/sh
# gpu-merge.sh DIR - append the benchmark rows a bench/gpu.sh run left in DIR
# (RESULTS-gpu.md, results-gpu.tsv) to bench/RESULTS.md and bench/results.tsv,
# each row under its benchmark's heading, as compare.sh would have written them.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dir=$1
[ -f "$dir/results-gpu.tsv" ] && grep -v '^date	' "$dir/results-gpu.tsv" >> "$here/results.tsv"
[ -f "$dir/RESULTS-gpu.md" ] || exit 0
python3 - "$dir/RESULTS-gpu.md" "$here/RESULTS.md" <<'PY'
import sys
src, dst = sys.argv[1], sys.argv[2]
rows = {}
name = None
for line in open(src):
    if line.startswith('## '):
        name = line[3:].strip()
    elif name and line.startswith('| 20'):
        rows.setdefault(name, []).append(line)
text = open(dst).read()
for name, rs in rows.items():
    head = '## ' + name + '\n'
    if head in text:
        i = text.index(head)
        j = text.find('\n## ', i + len(head))
        j = len(text) if j < 0 else j + 1
        block = text[i:j].rstrip('\n') + '\n' + ''.join(rs) + '\n'
        text = text[:i] + block + text[j:]
    else:
        hdr = open(src).read()
        k = hdr.index(head)
        table = hdr[k:hdr.find('| 20', k)]
        text = text.rstrip('\n') + '\n\n' + table + ''.join(rs)
open(dst, 'w').write(text)
PY
