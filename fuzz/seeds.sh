#!/bin/sh
# seeds.sh DIR - write a seed corpus for every fuzz target into DIR/NAME/,
# made from the test data with the freshly built tools (bin/).  Small files:
# the fuzzer grows them.
set -eu
out=$1
src=$(cd "$(dirname "$0")/.." && pwd)
bin=$src/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
mkdir -p "$out/seqio" "$out/seqio_gz" "$out/rec_reads" "$out/rec_cands" "$out/rec_hits" \
	"$out/rec_keys" "$out/idx_load" "$out/strsort_opts"

# a small genome with an N run and two sequences, reads from it
awk 'BEGIN { srand(1); for (s = 0; s < 2; s++) { printf ">chr%d comment %d\n", s, s;
	for (i = 0; i < 700; i++) { printf "%s", (s == 1 && i > 300 && i < 320) ? "N" : substr("ACGT", int(rand() * 4) + 1, 1);
		if (i % 60 == 59) print "" } print "" } }' >ref.fa
awk '/^>/ { next } { s = s $0 } END { srand(2); for (i = 0; i < 12; i++) { p = int(rand() * 600);
	printf "@r%d x\n%s\n+\n%s\n", i, substr(s, p + 1, 40), "IIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIII" } }' ref.fa >reads.fq
awk 'NR % 4 == 1 { printf ">%s\n", substr($0, 2) } NR % 4 == 2 { print }' reads.fq >reads.fa

# text: the chunk byte first (seqio_common.h)
for f in ref.fa reads.fq reads.fa; do
	{ printf '\007'; cat $f; } >"$out/seqio/$f"
	{ printf '\003\000'; cat $f; } >"$out/seqio_gz/$f"
done
{ printf '\006'; gzip -c reads.fq; } >"$out/seqio/reads.fq.gz"
{ printf '\005'; printf '>a b\r\nAC-GT.nRY\r\n\r\n>\n\n>c\nAC GT\n'; } >"$out/seqio/odd.fa"
{ printf '\004'; printf '@a b\nACGTN\n+a b\nIIII#\n\n@c\n\n+\n\n'; } >"$out/seqio/odd.fq"
{ printf '\001\017'; cat reads.fq; } >"$out/seqio_gz/multi.fq"

# streams of each kind, small blocks, concatenated members
"$bin"/seqidx -q -u 4 -l 8 -m all -o all.sx ref.fa
"$bin"/recview -i -b 100 reads.fq >"$out/rec_reads/reads.sp"
cat "$out/rec_reads/reads.sp" "$out/rec_reads/reads.sp" >"$out/rec_reads/cat.sp"
"$bin"/seedfilt -q -x all.sx reads.fq >"$out/rec_cands/cands.sp"
"$bin"/extend -q -x all.sx -e 3 -O rec "$out/rec_cands/cands.sp" >"$out/rec_hits/hits.sp"
for k in reads cands hits; do cp "$out/rec_$k/"*.sp "$out/rec_keys/" 2>/dev/null || true; done
python3 - "$out/rec_keys/keys.sp" <<'PY'
import struct, sys
prov = b"pg=t\tv\tcmd\nk=v\n"
recs = [struct.pack("<I", len(k)) + k + v for k, v in [(b"key", b"val"), (b"", b"x"), (b"kk", b"")]]
pay = b"".join(struct.pack("<I", len(r)) + r for r in recs)
h = b"\x89SPR\r\n\x1a\n" + struct.pack("<HHII", 2, 4, len(prov), 0) + prov + b"\0" * 8
blk = b"SPB1" + struct.pack("<III", len(pay), len(recs), 0) + b"\0" * 8 + pay
end = b"SPE1" + struct.pack("<IQQQ", 0, 1, len(recs), len(pay)) + b"\0" * 8
open(sys.argv[1], "wb").write(h + blk + end)
PY

# indexes: every structure, FM alone with a large rate, long keys, partitions
cp all.sx "$out/idx_load/all.sx"
"$bin"/seqidx -q -u 4 -l 8 -m fm -r 7 -o "$out/idx_load/fm.sx" ref.fa
"$bin"/seqidx -q -u 4 -l 20 -m reduced,block -o "$out/idx_load/l20.sx" ref.fa
"$bin"/seqidx -q -u 4 -l 6 -p 200 -m all -o "$out/idx_load/parts.sx" ref.fa

# strsort: -S size, then KEYDEFs, NUL-separated
printf '10M\0002,3\0001.2n,1.5r\0-k\0003b\0' >"$out/strsort_opts/a"
printf '50%%\000-1.5e3\000  -0012.50\0001,1\000\001' >"$out/strsort_opts/b"
