#!/bin/sh
# align.sh - extend's alignment core against edlib: alignments per second
# with a CIGAR, one thread each, on the same pairs.  Pairs: ALIGN_PAIRS
# (1,000,000) reads of 100 bp sampled from a random 4 Mbp genome with 0..5
# random edits (substitutions, insertions, deletions), each against its true
# window -5 .. +105 (t/unit/align_bench.c --gen).
#
#   A: build/t/align_bench -e 5 -t 1 PAIRS     align_batch(), CIGAR as SAM text
#   B: edlib_driver -e 5 PAIRS                 edlibAlign HW mode, EDLIB_TASK_PATH,
#                                              edlibAlignmentToCigar
#
# Both read the whole file first (the same parsing work, in the timed wall
# time); each also prints its own alignment-only rate, which goes into the
# note.  Before timing, both must agree on the number of hits, the sum of
# the distances and the sum of the (leftmost) end positions.
#
#   sh bench/align.sh      env: BUILD [build] (where t/align_bench is), REPS [5],
#                          ALIGN_PAIRS [1000000], BENCH_RESULTS, BENCH_TSV

set -eu
. "$(dirname "$0")/lib.sh"

BUILD=${BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
n=${ALIGN_PAIRS:-1000000}
reps=${REPS:-5}
drv=$BUILD/t/align_bench
[ -x "$drv" ] || bench_die "$drv not built (run make, or set BUILD=build-x)"
[ -f /usr/include/edlib.h ] || bench_die "peer edlib not found (apt-get install libedlib-dev)"

mkdir -p "$DATA"
edlib=$DATA/.edlib_driver
if [ ! -x "$edlib" ] || [ -n "$(find "$HERE/edlib_driver.c" -newer "$edlib")" ]; then
	${CC:-cc} -O2 -std=c11 -Wall -Wextra -o "$edlib.tmp$$" "$HERE/edlib_driver.c" -ledlib \
		&& mv "$edlib.tmp$$" "$edlib" || bench_die "cannot compile bench/edlib_driver.c"
fi
pairs=$DATA/align-pairs-${n}x100-e5-s1.txt
if [ ! -s "$pairs" ]; then
	"$drv" --gen "$n" 100 5 1 > "$pairs.tmp$$" && mv "$pairs.tmp$$" "$pairs" \
		|| bench_die "cannot write $pairs"
fi

# the same distances and leftmost ends from both, before any timing
a=$("$drv" -e 5 -t 1 "$pairs") || bench_die "align_bench failed"
b=$("$edlib" -e 5 "$pairs") || bench_die "edlib_driver failed"
sa=$(echo "$a" | awk '{ print $2, $4, $6, $8 }')
sb=$(echo "$b" | awk '{ print $2, $4, $6, $8 }')
[ "$sa" = "$sb" ] || bench_die "results differ: seedpipe '$sa', edlib '$sb'"
ra=$(echo "$a" | awk '{ print $14 }')
rb=$(echo "$b" | awk '{ print $14 }')
echo "align: pairs hits sum_dist sum_end: $sa (both); alignment only: seedpipe $ra/s, edlib $rb/s"

compare -n align-cigar -r "$reps" -w 1 -N "$n pairs, 100 bp vs window +-5, <=5 edits, CIGAR, 1 thread; alignment-only rate seedpipe $ra/s, edlib $rb/s" -- \
	"$drv -e 5 -t 1 $pairs > /dev/null" "$edlib -e 5 $pairs > /dev/null"
