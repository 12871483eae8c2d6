#!/bin/sh
# demo.sh - run seedpipe on the bundled example (examples/): lambda phage and
# 1,000 of its reads.  Every step is a real run of the tools in bin/.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$top/bin}
PATH=$BIN:$PATH
out=${DEMO_OUT:-$top/build/demo}
mkdir -p "$out"
ex=$top/examples

step() { printf '\n== %s\n$ %s\n' "$1" "$2"; sh -c "$2"; }

step "OpenCL devices seen by seedpipe (none is fine: the C code runs)" \
	"recview --devices"
step "reads (FASTQ.gz) into a checksummed reads stream" \
	"recview -i '$ex/reads.fq.gz' -o '$out/reads.rec'"
step "verify every block checksum and the end block" \
	"recview -c '$out/reads.rec'"
step "the first records as TSV" \
	"recview '$out/reads.rec' | head -4 | cut -c1-120"
if [ -x "$BIN/seqidx" ]; then
	step "neighborhood index of lambda phage" \
		"seqidx -o '$out/lambda.sx' '$ex/lambda.fa.gz'"
	step "what the index holds" \
		"seqidx --info '$out/lambda.sx' | head -12"
fi
if [ -x "$BIN/seedfilt" ] && [ -x "$BIN/extend" ]; then
	step "map the reads: candidates by neighborhood filtering, then banded alignment within 3 edits" \
		"seedfilt -x '$out/lambda.sx' -e 1 < '$ex/reads.fq.gz' | extend -e 3 > '$out/hits.sam'"
	step "the SAM output" \
		"grep '^@' '$out/hits.sam' | cut -c1-100 && grep -v '^@' '$out/hits.sam' | head -3 | cut -f1-9"
	step "every read is in the output once, mapped or unmapped (flag 4)" \
		"grep -v '^@' '$out/hits.sam' | awk '\$2 < 256 { n++; if (int(\$2 / 4) % 2) u++ } END { print n \" reads, \" n - u \" mapped, \" u \" unmapped\" }'"
fi
if [ -x "$BIN/strsort" ]; then
	step "read sequences sorted with strsort (MSD radix), compared with sort(1)" \
		"recview '$out/reads.rec' | grep -v '^#' | cut -f4 > '$out/seqs.txt' &&
		 strsort '$out/seqs.txt' > '$out/seqs.sorted' &&
		 LC_ALL=C sort -s '$out/seqs.txt' | cmp - '$out/seqs.sorted' && echo 'identical to LC_ALL=C sort' &&
		 head -3 '$out/seqs.sorted' | cut -c1-60"
fi
printf '\ndemo: done (outputs in %s)\n' "$out"
