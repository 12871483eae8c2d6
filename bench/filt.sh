#!/bin/sh
# filt.sh - seedfilt benchmarks (issue 4).
#
#   sh bench/filt.sh nps   [REF]   neighborhoods per second of bpr, bs, ph (Tran's
#                                  Table 5.2 / Fig. 5.9): u = 4, l = 4, 8, 16,
#                                  e = 0..2 (bpr also 3), the matching stage
#                                  alone (seedfilt -N), one row per setting in
#                                  bench/RESULTS.md under "## filt-nps"
#   sh bench/filt.sh reads [REF]   reads per second of the filter stage for 40 bp
#                                  reads with e = 1 ("## filt-rps"), and of the
#                                  whole command (bench/compare.sh, A only)
#   sh bench/filt.sh all           both, on ecoli and chrx
#
# REF: ecoli or chrx (GRCh37 chrX, first 70 Mbp) [chrx]; Tran used the first
# 100 Mbp of chr1.  Environment: BIN (the seedpipe programs) [bin], DEV (the
# seedfilt -d device: none = the native C code, gpu, cpu = PoCL) [none],
# METHODS (of nps) [bpr bs ph], THREADS [2], NQ (query reads for nps) [2000; use 500000 or more for a GPU,
# whose fixed costs per batch are large], BATCH (seedfilt -B, reads per
# batch) [seedfilt's default], NREADS (for reads/s) [1000000], READS (a reads
# file to use instead of generating NREADS; skips compare.sh).
# SEEDPIPE_PROFILE=1 in the environment makes each OpenCL run print the
# device time of each kind of command and the host's matching time.
#
# nps = neighborhoods in the SeedBlocks of the patterns / filter seconds, as
# the thesis counts it (section 5.1: for bs and ph it measures the index
# information processed, not the words compared).  The filter seconds are
# seedfilt's own "filter" stage: cutting patterns, matching, transfers, and
# (without -N) positions, diagonals, sort.  Index loading is not in it.

set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
BIN=${BIN:-$root/bin}
DEV=${DEV:-none}
THREADS=${THREADS:-2}
NQ=${NQ:-2000}
METHODS=${METHODS:-bpr bs ph}
BATCH=${BATCH:-}
bopt=${BATCH:+-B $BATCH}
NREADS=${NREADS:-1000000}
results=${BENCH_RESULTS:-$here/RESULTS.md}
data=${BENCH_DATA:-$here/data}
ixdir=$data/filt-bench
PATH=$BIN:$PATH
export PATH

die() { echo "filt.sh: $*" >&2; exit 1; }
# ref_of REF: a FASTA path, or a data set name of datasets.sh
ref_of() { if [ -r "$1" ]; then echo "$1"; else sh "$here/datasets.sh" "$1"; fi; }
mkdir -p "$ixdir"

# add_row SECTION ROW: insert ROW after the last table line of "## SECTION"
# (other benchmarks append their own sections after it)
add_row() {
	awk -v sec="## $1" -v row="$2" '
		$0 == sec { in_sec = 1 }
		in_sec && /^\|/ { seen = 1 }
		in_sec && seen && !/^\|/ { print row; in_sec = 0; done = 1 }
		{ print }
		END { if (in_sec && !done) print row }' "$results" > "$results.tmp$$" &&
	mv "$results.tmp$$" "$results"
}

machine() {
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1 | sed 's/ [0-9]*-Core.*//; s/(R)//g; s/(TM)//g')
	echo "$cpu, $(nproc) cpu"
}

# index REF L: build (once) the u = 4 index of REF with neighborhood length L
index() {
	ix=$ixdir/$(basename "$1" .fa)-u4-l$2.sx
	if [ ! -s "$ix" ]; then
		echo "filt.sh: building $ix" >&2
		seqidx -q -t "$THREADS" -u 4 -l "$2" -m general,reduced,block -o "$ix" "$1" || die "seqidx failed"
	fi
	echo "$ix"
}

# Tran's GTX 480 range for method M (Table 5.2, nps)
thesis() {
	case $1 in bpr) echo "1e7-1e10" ;; bs) echo "1e10-1e12" ;; ph) echo "1e11-1e12" ;; esac
}

nps_header() {
	if ! grep -q '^## filt-nps$' "$results" 2>/dev/null; then
		{
			echo
			echo "## filt-nps"
			echo
			echo "Neighborhoods per second of seedfilt's matching stage (\`seedfilt -N\`; nps = neighborhoods in the SeedBlocks of the patterns / filter seconds, Tran 2012 section 5.1), u = 4 on the reference below, next to the thesis's GTX 480 range (Table 5.2). Written by bench/filt.sh."
			echo
			echo "| date | machine | device | reference | method | l | e | patterns | neighborhoods | matches | filter s | nps | thesis GPU nps |"
			echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
		} >> "$results"
	fi
}

nps() {
	ref=$(ref_of "${1:-chrx}")
	tag=$(basename "$ref" .fa)
	nps_header
	date=$(date -u +%Y-%m-%dT%H:%MZ)
	mach=$(machine)
	for l in 4 8 16; do
		ix=$(index "$ref" $l)
		q=$(sh "$here/datasets.sh" schbath "$ref" "$NQ" $((4 + l)) 0 7)
		for m in $METHODS; do
			for e in 0 1 2 3; do
				[ $e -eq 3 ] && [ $m != bpr ] && continue
				[ $m = bpr ] && [ $e -ge $l ] && continue
				# shellcheck disable=SC2086
				err=$(seedfilt -v -N -x "$ix" -m $m -e $e -t "$THREADS" $bopt -d "$DEV" "$q" 2>&1 >/dev/null) ||
					{ echo "$err" >&2; die "seedfilt failed"; }
				dev=$(echo "$err" | sed -n 's/.*step [0-9]*, \(.*\), [0-9]* threads;.*/\1/p' | sed 's/ (.*//')
				pat=$(echo "$err" | sed -n 's/.*), \([0-9]*\) patterns (.*/\1/p' | head -1)
				mat=$(echo "$err" | sed -n 's/.* \([0-9]*\) matches, .*/\1/p' | head -1)
				nbs=$(echo "$err" | sed -n 's/^seedfilt: \([0-9]*\) neighborhoods in the SeedBlocks.*/\1/p' | head -1)
				fs=$(echo "$err" | sed -n 's/.*SeedBlocks searched in \([0-9.]*\) s:.*/\1/p' | head -1)
				[ -n "$pat" ] && [ -n "$nbs" ] && [ -n "$fs" ] || { echo "$err" >&2; die "cannot parse the summary"; }
				rate=$(awk -v n="$nbs" -v t="$fs" 'BEGIN { printf "%.3g", (t > 0 ? n / t : 0) }')
				printf '%s\tl=%s\te=%s\t%s nps\t(%s patterns, %s s)\n' $m $l $e "$rate" "$pat" "$fs"
				echo "$err" | grep 'profile:' >&2 || true
				add_row filt-nps "| $date | $mach | $dev, $THREADS threads${BATCH:+, -B $BATCH} | $tag | $m | $l | $e | $pat | $nbs | $mat | $fs | $rate | $(thesis $m) |"
			done
		done
	done
}

rps_header() {
	if ! grep -q '^## filt-rps$' "$results" 2>/dev/null; then
		{
			echo
			echo "## filt-rps"
			echo
			echo "Reads per second of seedfilt's filter stage alone (patterns, matching, positions, diagonals, sort; not reading, writing or loading the index: seedfilt -v), 40 bp reads with 1 substitution, e = 1, the index's default u. Written by bench/filt.sh."
			echo
			echo "| date | machine | device | reference | index | method | reads | patterns | matches | candidates | filter s | reads/s |"
			echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
		} >> "$results"
	fi
}

reads() {
	ref=$(ref_of "${1:-chrx}")
	tag=$(basename "$ref" .fa)
	ix=$ixdir/$tag-default.sx
	[ -s "$ix" ] || seqidx -q -t "$THREADS" -m general,reduced,block -o "$ix" "$ref" || die "seqidx failed"
	rd=${READS:-$(sh "$here/datasets.sh" schbath "$ref" "$NREADS" 40 1 3)}
	rps_header
	date=$(date -u +%Y-%m-%dT%H:%MZ)
	mach=$(machine)
	u=$(seqidx --info "$ix" | awk '$1 == "weight" { print $2 }')
	l=$(seqidx --info "$ix" | awk '$1 == "l" { print $2 }')
	for m in ph bs bpr; do
		err=$(seedfilt -v -x "$ix" -m $m -e 1 -t "$THREADS" -d "$DEV" "$rd" 2>&1 >/dev/null) ||
			{ echo "$err" >&2; die "seedfilt failed"; }
		dev=$(echo "$err" | sed -n 's/.*step [0-9]*, \(.*\), [0-9]* threads;.*/\1/p' | sed 's/ (.*//')
		nr=$(echo "$err" | sed -n 's/^seedfilt: \([0-9]*\) reads (.*/\1/p' | head -1)
		pat=$(echo "$err" | sed -n 's/.*), \([0-9]*\) patterns (.*/\1/p' | head -1)
		mat=$(echo "$err" | sed -n 's/.* \([0-9]*\) matches, .*/\1/p' | head -1)
		cand=$(echo "$err" | sed -n 's/.* \([0-9]*\) candidates$/\1/p' | head -1)
		fs=$(echo "$err" | sed -n 's/.*SeedBlocks searched in \([0-9.]*\) s:.*/\1/p' | head -1)
		[ -n "$nr" ] && [ -n "$fs" ] || { echo "$err" >&2; die "cannot parse the summary"; }
		rate=$(awk -v n="$nr" -v t="$fs" 'BEGIN { printf "%.4g", (t > 0 ? n / t : 0) }')
		printf '%s\t%s\t%s reads/s\t(%s)\n' "$tag" $m "$rate" "$dev"
		add_row filt-rps "| $date | $mach | $dev, $THREADS threads | $tag | u=$u l=$l | $m | $nr | $pat | $mat | $cand | $fs | $rate |"
	done
	if [ -x /usr/bin/time ] && [ -z "${READS:-}" ]; then
		for m in ph bs bpr; do
			sh "$here/compare.sh" -n "filt-reads-$tag" -r 3 -w 1 -b "$rd" \
				-N "$NREADS x 40 bp reads with 1 substitution, e = 1, method $m, -d $DEV, -t $THREADS; whole command with index loading; reads/s = $NREADS / A s" \
				-- "seedfilt -q -x '$ix' -m $m -e 1 -t $THREADS -d $DEV '$rd' > /dev/null"
		done
	fi
}

case ${1:-all} in
nps) nps "${2:-chrx}" ;;
reads) reads "${2:-chrx}" ;;
all) nps chrx; reads ecoli; reads chrx ;;
*) echo "usage: sh bench/filt.sh [nps|reads|all] [ecoli|chrx]" >&2; exit 2 ;;
esac
