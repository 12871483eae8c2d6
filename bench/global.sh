#!/bin/sh
# global.sh - extend --global (batched global alignment) against parasail
# and edlib on a 16S-like family (bench/datasets.sh family16s: E. coli's 16S
# genes, mutated copies along a random tree, ~1535 bases each).
#
# Rows (bench/compare.sh, A = seedpipe, B = the peer, the same pairs):
#   global-score-N        the score pass over every pair (linear gaps SCORE),
#                         A: extend --global --identity 100 (the bound then
#                         leaves only pairs that could be identical to trace),
#                         B: parasail_nw --score-only (parasail's fastest
#                         vector NW, nw_striped_avx2_256_16 on AVX2); the
#                         cells per second of each go into the note
#   global-trace-N        the whole job: score pass, traceback of the pairs
#                         the bound lets through, pairs of >= IDENT % identity
#                         written; B: parasail_nw --identity IDENT (its score
#                         pass, then nw_trace_scan_16 on the same pairs); the
#                         outputs are checked identical first
#   global-edit-N         edit distance of every pair: A: extend --global
#                         --identity 100, B: edlib_nw (edlib's NW mode,
#                         distance only); the distances are checked identical
#   global-device-N       (DEV set) the device's score pass and the whole job,
#                         A only, its cells per second in the note
#
# Pairs: the all-against-all of the N sequences, or with SAMPLE = K every
# K-th of its pairs (extend gets them as a --pairs list, the peers as
# --sample K: the very same pairs), so that the peers' time stays bearable.
#
#   sh bench/global.sh        env: N [2000], SEED [1], SAMPLE [20], THREADS
#                             [nproc], SCORE [4,-5,-8], IDENT [90], REPS [3],
#                             WARM [1: untimed runs of each command first;
#                             with 0 the device's kernels are built once
#                             before the device rows instead, by extend alone],
#                             DEV [none: the native code; gpu on the GPU
#                             machine], FAMILY (a family16s file to use
#                             instead of building it), ROWS (which rows:
#                             score trace edit device [all; device only with
#                             DEV]), CHECK [1; 0 skips the identity checks
#                             against the peers], PARASAIL_FN (parasail_nw's
#                             score function [nw_striped_avx2_256_16, its
#                             fastest; in parasail 2.6 it gives wrong, lower
#                             scores on ~0.6% of family16s pairs, which can
#                             change what its bound prunes: then use
#                             nw_scan_avx2_256_16, slower and right]),
#                             BENCH_RESULTS, BENCH_TSV
#
# On the GPU machine (bench/gpu.sh, GPU_BENCH=global.sh): N=20000 DEV=gpu
# THREADS=16; the peers must be on PATH as parasail_nw and edlib_nw when
# there is no compiler or no -dev package there (build them here with
# `cc -O2 -o parasail_nw bench/parasail_nw.c -lparasail -lpthread` and
# `cc -O2 -o edlib_nw bench/edlib_nw.c -ledlib -lpthread` and pass them to
# bench/gpu-carry.sh), and FAMILY should point at a family16s file carried
# along (or ECOLI_GZ at the genome).  FULL=1 also times the device on the
# whole all-against-all (A only: 2e8 pairs at N = 20000).  A sensible split
# of the device time there (10 minutes a command): N=20000 SAMPLE=200 REPS=1
# (1e6 pairs, 2.4e12 cells) with ROWS=score, then ROWS="device" CHECK=0
# WARM=0, then ROWS=trace CHECK=0.  Measured there (H100, 16 threads):
# parasail_nw's whole job takes 54 s (36 s its score pass), extend's 10 s
# on the CPU and under 3 s with the device; so ROWS=device with WARM=0 is
# about 100 s, most of it parasail's.  Smaller samples measure mostly the
# device's start (a 2.4e11-cell sample is a tenth of a second at 4e12
# cells a second); SEEDPIPE_DEBUG=1 makes extend print each batch's kernel
# time, the kernels' cells per second over the whole run, and where the
# time went.

set -eu
. "$(dirname "$0")/lib.sh"

n=${N:-2000}
seed=${SEED:-1}
sample=${SAMPLE:-20}
threads=${THREADS:-$(nproc)}
score=${SCORE:-4,-5,-8}
ident=${IDENT:-90}
reps=${REPS:-3}
warm=${WARM:-1}
dev=${DEV:-none}
need_tool extend

fam=${FAMILY:-$(dataset family16s "$n" "$seed")}
[ -s "$fam" ] || bench_die "no family file '$fam'"
mkdir -p "$DATA"

# the peers: compiled here when possible, else from PATH (carried binaries)
peer() { # NAME SOURCE LIBS HEADER
	if [ -f "$4" ] && command -v "${CC:-cc}" > /dev/null; then
		bin=$DATA/.$1
		if [ ! -x "$bin" ] || [ -n "$(find "$HERE/$2" "$HERE/nw_harness.h" -newer "$bin")" ]; then
			${CC:-cc} -O2 -std=gnu11 -o "$bin.tmp$$" "$HERE/$2" $3 -lpthread \
				&& mv "$bin.tmp$$" "$bin" || bench_die "cannot compile bench/$2"
		fi
		echo "$bin"
	elif command -v "$1" > /dev/null; then
		command -v "$1"
	else
		bench_die "peer $1 not found (apt-get install $5, or carry a built $1 on PATH)"
	fi
}
pnw=$(peer parasail_nw parasail_nw.c -lparasail /usr/include/parasail.h libparasail-dev)
enw=$(peer edlib_nw edlib_nw.c -ledlib /usr/include/edlib.h libedlib-dev)
pfn=${PARASAIL_FN:+-a $PARASAIL_FN}

# the pairs as a list for extend (every SAMPLE-th of the all-against-all)
nseq=$(grep -c '^>' "$fam")
list=$DATA/global-pairs-$(basename "$fam" .fa)-k$sample.txt
if [ ! -s "$list" ]; then
	grep '^>' "$fam" | sed 's/^>//; s/[ 	].*//' |
		awk -v k="$sample" '{ name[NR - 1] = $1 } END {
			c = 0
			for (i = 0; i < NR; i++) for (j = i + 1; j < NR; j++)
				if (c++ % k == 0) print name[i] "\t" name[j] }' > "$list.tmp$$" &&
		mv "$list.tmp$$" "$list" || bench_die "cannot write $list"
fi
npairs=$(wc -l < "$list" | tr -d ' ')
tmp=$DATA/global-tmp.$$
trap 'rm -f "$tmp".*' EXIT

rows=${ROWS:-score trace edit device}
has_row() { case " $rows " in *" $1 "*) return 0 ;; esac; return 1; }
awk '/^>/ { if (n) print n "\t" l; n = substr($1, 2); l = 0; next } { l += length($0) }
	END { if (n) print n "\t" l }' "$fam" > "$tmp.len"
cells=$(awk -F'\t' 'NR == FNR { len[$1] = $2; next } { c += len[$1] * len[$2] } END { printf "%.0f", c }' \
	"$tmp.len" "$list")
spread=- ntraced=- nrep=-
if [ "${CHECK:-1}" = 1 ]; then
	# same outputs before any timing: query target score cigar
	extend --global -q -d none -t "$threads" --score "$score" --identity "$ident" --pairs "$list" "$fam" \
		> "$tmp.ext" || bench_die "extend --global failed"
	awk -F'\t' 'NR > 1 { print $1 "\t" $2 "\t" $5 "\t" $10 }' "$tmp.ext" > "$tmp.a"
	"$pnw" $pfn -t "$threads" --score "$score" --identity "$ident" --sample "$sample" "$fam" > "$tmp.b" \
		2> "$tmp.berr" || bench_die "parasail_nw failed"
	cmp -s "$tmp.a" "$tmp.b" || bench_die "extend and parasail differ (see $tmp.a, $tmp.b)"
	nrep=$(wc -l < "$tmp.a" | tr -d ' ')
	ntraced=$(awk '{ for (i = 1; i < NF; i++) if ($i == "traced") print $(i + 1) }' "$tmp.berr")
	extend --global -q -d none -t "$threads" --identity 0 --pairs "$list" "$fam" |
		awk -F'\t' 'NR > 1 { print $1 "\t" $2 "\t" (-$5) }' > "$tmp.ea"
	"$enw" -t "$threads" --sample "$sample" "$fam" > "$tmp.eb" 2> /dev/null || bench_die "edlib_nw failed"
	cmp -s "$tmp.ea" "$tmp.eb" || bench_die "extend and edlib distances differ"
	# the identity spread of the pairs (quartiles of the edit-mode identities)
	spread=$(extend --global -q -d none -t "$threads" --pairs "$list" "$fam" | awk -F'\t' 'NR > 1 { print $6 }' |
		sort -g | awk '{ v[NR] = $1 } END { printf "%s/%s/%s/%s/%s", v[1], v[int(NR / 4) + 1],
			v[int(NR / 2) + 1], v[int(3 * NR / 4) + 1], v[NR] }')
fi
echo "global: $nseq sequences, $npairs pairs (every ${sample}th), $cells cells; identity min/q1/median/q3/max (edit) $spread; $ntraced traced at $ident %, $nrep reported; outputs identical to parasail and edlib: $( [ "${CHECK:-1}" = 1 ] && echo yes || echo not checked)"

base="$nseq x ~1.5 kb 16S-like family (family16s seed $seed), $npairs pairs (every ${sample}th of all against all), $cells cells, $threads threads"
gcups() { # SECONDS: cells per second in G
	awk -v c="$cells" -v s="$1" 'BEGIN { printf "%.2f", c / s / 1e9 }'
}
# medians of the last row written for NAME: A s and B s columns
last_times() {
	awk -F'|' -v h="## $1" '$0 == h { f = 1; next } /^## / { f = 0 } f && /^\| 20/ { a = $7; b = $8 }
		END { gsub(/ /, "", a); gsub(/ /, "", b); print a, b }' "${BENCH_RESULTS:-$HERE/RESULTS.md}"
}

# one row: NAME NOTE A B, then what to print: A's label, B's label, a suffix
row() {
	compare -n "$1" -r "$reps" -w "$warm" -N "$2" -- "$3" "$4"
	set -- "$1" "$5" "$6" "${7:-}" $(last_times "$1")
	echo "$1: $2 $(gcups "$5") GCUPS, $3 $(gcups "$6") GCUPS$4"
}

has_row score && row "global-score-$nseq" "$base; score pass, --score $score" \
	"extend --global -q -d none -t $threads --score $score --identity 100 --pairs $list $fam > /dev/null" \
	"$pnw $pfn -t $threads --score $score --score-only --sample $sample $fam > /dev/null 2>&1" \
	extend parasail

has_row trace && row "global-trace-$nseq" "$base; --score $score --identity $ident: $ntraced traced back, $nrep reported; identity (edit) min/q1/median/q3/max $spread" \
	"extend --global -q -d none -t $threads --score $score --identity $ident --pairs $list $fam > /dev/null" \
	"$pnw $pfn -t $threads --score $score --identity $ident --sample $sample $fam > /dev/null 2>&1" \
	extend parasail " (whole job)"

has_row edit && row "global-edit-$nseq" "$base; edit distance, score pass (B: edlib NW mode, distance only)" \
	"extend --global -q -d none -t $threads --identity 100 --pairs $list $fam > /dev/null" \
	"$enw -t $threads --sample $sample $fam > /dev/null 2>&1" \
	extend edlib

if [ "$dev" != none ] && has_row device; then
	# the program cache filled (the first run on a machine builds the kernels)
	if [ "$warm" = 0 ]; then
		head -n 1000 "$list" > "$tmp.warm"
		extend --global -q -d "$dev" -t "$threads" --score "$score" --pairs "$tmp.warm" "$fam" \
			> /dev/null || bench_die "extend -d $dev failed"
	fi
	if [ "${CHECK:-1}" = 1 ]; then
		extend --global -q -d "$dev" -t "$threads" --score "$score" --identity "$ident" --pairs "$list" "$fam" \
			> "$tmp.dev" || bench_die "extend -d $dev failed"
		cmp -s "$tmp.dev" "$tmp.ext" || bench_die "the device's output differs from the CPU's"
	fi
	row "global-device-score-$nseq" "$base; device $dev, score pass, --score $score" \
		"extend --global -q -d $dev -t $threads --score $score --identity 100 --pairs $list $fam > /dev/null" \
		"$pnw $pfn -t $threads --score $score --score-only --sample $sample $fam > /dev/null 2>&1" \
		"extend -d $dev" parasail
	row "global-device-trace-$nseq" "$base; device $dev, --score $score --identity $ident, traceback on the CPU" \
		"extend --global -q -d $dev -t $threads --score $score --identity $ident --pairs $list $fam > /dev/null" \
		"$pnw $pfn -t $threads --score $score --identity $ident --sample $sample $fam > /dev/null 2>&1" \
		"extend -d $dev" parasail " (whole job)"
	if [ "${FULL:-0}" = 1 ]; then
		allc=$(awk '/^>/ { if (l) print l; l = 0; next } { l += length($0) } END { print l }' "$fam" |
			awk '{ s += $1; q += $1 * $1 } END { printf "%.0f", (s * s - q) / 2 }')
		compare -n "global-device-full-$nseq" -r 1 -N "$nseq sequences, all $((nseq * (nseq - 1) / 2)) pairs, $allc cells, device $dev, $threads threads, --score $score --identity $ident" -- \
			"extend --global -q -d $dev -t $threads --score $score --identity $ident $fam > /dev/null"
		set -- $(last_times "global-device-full-$nseq")
		echo "global-device-full-$nseq: $(awk -v c="$allc" -v s="$1" 'BEGIN { printf "%.2f", c / s / 1e9 }') GCUPS over the whole all-against-all"
	fi
fi
