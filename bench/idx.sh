#!/bin/sh
# idx.sh - seqidx index build against the peers' index builders:
#   E. coli 536 (4.9 Mbp): seqidx (general,reduced,block) vs `bwa index`,
#                          and vs `bowtie-build --threads 2`;
#   human chrX, first 70 Mbp: seqidx -m all (every structure, FM included)
#                          vs `bwa index`, and vs `yara_indexer` when present.
# seqidx runs with -t 2.  Each index is built once first (it warms the page
# cache) to read its section sizes with seqidx --info; the note of each row
# sets them against Tran's formula n(ceil(log2 n) + 2l) bits.
#
#   sh bench/idx.sh            env: BIN, REPS [3] (E. coli), REPS_CHRX [1]

set -eu
. "$(dirname "$0")/lib.sh"

need_tool seqidx
need_peer bwa bwa
need_peer bowtie-build bowtie
reps=${REPS:-3}
reps_x=${REPS_CHRX:-1}
work=$DATA/idx-bench
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

ecoli=$(dataset ecoli)
chrx=$(dataset chrx)

# sizes INDEX: one line, MB per group of sections and bytes per base per
# structure (format 3: general and reduced both read the red.* sections,
# the block structure adds blk.*), against Tran's formula
sizes() {
	seqidx --info "$1" | awk -F '\t' '
		$1 == "file_bytes" { fb = $2 }
		$1 == "tran_formula_bytes" { tb = $2 }
		$1 == "section" && $2 ~ /^red\./ { rb += $4 }
		$1 == "section" && $2 ~ /^blk\./ { bb += $4 }
		$1 == "section" && $2 ~ /^fm\./ { fmb += $4 }
		$1 == "section" && ($2 ~ /^seq\./ || $2 ~ /^ref\./) { sb += $4 }
		$1 == "bytes_per_base" && NF >= 3 { bpb = bpb sprintf(" %s %.2f", $2, $3) }
		END {
			printf "index %.0f MB = reference %.1f + red.* (general, reduced) %.1f + blk.* %.1f + fm %.1f; bytes/base:%s; Tran n(log n + 2l) = %.1f MB, red.*/formula %.2f",
				fb / 1e6, sb / 1e6, rb / 1e6, bb / 1e6, fmb / 1e6, bpb, tb / 1e6, tb ? rb / tb : 0
		}'
}

seqidx -q -t 2 -o "$work/ecoli.sx" "$ecoli"
se=$(sizes "$work/ecoli.sx")
echo "idx: ecoli: $se"
compare -n idx-ecoli-bwa -r "$reps" -w 1 -b "$ecoli" \
	-N "E. coli 536, 4.9 Mbp; seqidx -t 2 general,reduced,block; $se" -- \
	"seqidx -q -t 2 -o '$work/ecoli.sx' '$ecoli'" \
	"bwa index -p '$work/ecoli.bwa' '$ecoli' 2>/dev/null"
compare -n idx-ecoli-bowtie -r "$reps" -w 1 -b "$ecoli" \
	-N "E. coli 536, 4.9 Mbp; seqidx -t 2 general,reduced,block; bowtie-build --threads 2" -- \
	"seqidx -q -t 2 -o '$work/ecoli.sx' '$ecoli'" \
	"bowtie-build -q --threads 2 '$ecoli' '$work/ecoli.bt' > /dev/null"

seqidx -q -t 2 -m all -o "$work/chrx.sx" "$chrx"
sx=$(sizes "$work/chrx.sx")
echo "idx: chrx: $sx"
compare -n idx-chrx-all-bwa -r "$reps_x" -w 0 -b "$chrx" \
	-N "GRCh37 chrX first 70 Mbp; seqidx -t 2 -m all (general,reduced,block,fm); $sx" -- \
	"seqidx -q -t 2 -m all -o '$work/chrx.sx' '$chrx'" \
	"bwa index -p '$work/chrx.bwa' '$chrx' 2>/dev/null"
if command -v yara_indexer > /dev/null 2>&1; then
	compare -n idx-chrx-all-yara -r "$reps_x" -w 0 -b "$chrx" \
		-N "GRCh37 chrX first 70 Mbp; seqidx -t 2 -m all; yara_indexer (its default, SA construction on disk in $work)" -- \
		"seqidx -q -t 2 -m all -o '$work/chrx.sx' '$chrx'" \
		"yara_indexer -td '$work' -o '$work/chrx.yara' '$chrx' > /dev/null"
fi
