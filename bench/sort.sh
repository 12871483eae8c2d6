#!/bin/sh
# sort.sh - strsort against GNU sort (LC_ALL=C sort -S 8G --parallel=2) and
# the I/O floor (cat) on the issue-6 data sets, made by bench/sortgen.c:
#   sort-rand   10M random alphanumeric lines of 8-32 chars (210 MB)
#   sort-dup    5M random 20-char keys, each twice, shuffled (210 MB)
#   sort-url    5M URL-like lines with long shared prefixes (297 MB)
#   sort-dna    20M random DNA 32-mers (660 MB)
#   sort-reads  1M random reads of 100 bp (101 MB)
# plus sort-rand-k1 (-k1,1 on sort-rand), and the key sets (rows
# sort-SET-KEY, sortgen's num, human, month, general and bed data):
#   sort-num-n        -t TAB -k2,2n       sort-human-h   -t TAB -k2,2h
#   sort-month-M      -t TAB -k2,2M       sort-general-g -t TAB -k2,2g
#   sort-bed-k5nr-k1  -t TAB -k5,5nr -k1,1 (BED: by score, descending, then chrom)
# and on sortgen's mix data (200 MB, a column per key type, TAB-separated):
#   sort-mix (whole lines), sort-mix-n -k2,2n, sort-mix-h -k3,3h,
#   sort-mix-M -k4,4M, sort-mix-g -k5,5g, sort-mix-V -k6,6V,
#   sort-mix-R -k1,1R (--random-source: 16 fixed bytes), sort-mix-f -k1,1f,
#   sort-mix-d -k1,1d, sort-mix-i -k1,1i
# (the key sets run only when named: sh bench/sort.sh num-n human-h ...)
# and with GPU=1 (the GPU machine):
#   sort-rand1g 49.9M lines of the sort-rand kind (1 GiB), default set then
# where strsort runs with --device gpu, rows are named sort-SET-gpu, and each set
# also gets sort-SET-gpu-vs-cpu (B = strsort --device none).  Before timing, strsort's output is
# checked to be byte-identical to `LC_ALL=C sort` (both without -s: GNU's
# last-resort comparison orders lines with equal keys).  Output goes to
# /dev/null in the timed runs (both tools write it all: neither can tell).
#
#   sh bench/sort.sh [SET...]   env: BIN, REPS [3], THREADS [2], SORT_SCALE [1]
#                               (divides the line counts), SORT_NOTE (added to
#                               each row's note, e.g. "taskset -c 0,1"),
#                               GPU [0] (1: strsort --device gpu, e.g. GPU=1 THREADS=16),
#                               GPU_DEVICE [gpu] (the --device of GPU=1; cpu to try it),
#                               BENCH_DATA, BENCH_RESULTS, BENCH_TSV

set -eu
. "$(dirname "$0")/lib.sh"

need_tool strsort
need_peer sort coreutils
reps=${REPS:-3}
threads=${THREADS:-2}
scale=${SORT_SCALE:-1}
gpu=${GPU:-0}
if [ "$gpu" = 1 ]; then
	sets=${*:-rand1g}
	dev="--device ${GPU_DEVICE:-gpu}"
	sfx=-gpu
else
	sets=${*:-rand dup url dna reads rand-k1}
	dev=''
	sfx=''
fi

mkdir -p "$DATA"
gen=$DATA/sortgen
if [ ! -x "$gen" ] || [ "$HERE/sortgen.c" -nt "$gen" ]; then
	${CC:-cc} -O2 -o "$gen.tmp$$" "$HERE/sortgen.c" && mv "$gen.tmp$$" "$gen" \
		|| bench_die "cannot build $gen"
fi

# data KIND: the data set's path, made once
data() {
	f=$DATA/sort-$1-s$scale.txt
	if [ ! -s "$f" ]; then
		echo "bench/sort: building $f" >&2
		"$gen" "$1" 1 "$scale" > "$f.tmp$$" && mv "$f.tmp$$" "$f" || { rm -f "$f.tmp$$"; bench_die "cannot build $f"; }
	fi
	echo "$f"
}

# (opt is evaluated by a shell: a tab separator is quoted in it)
tab="'$(printf '\t')'"
for s in $sets; do
	case $s in
	rand-k1) kind=rand; opt='-k1,1' ;;
	rand|rand1g|dup|url|dna|reads) kind=$s; opt='' ;;
	num-n) kind=num; opt="-t$tab -k2,2n" ;;
	human-h) kind=human; opt="-t$tab -k2,2h" ;;
	month-M) kind=month; opt="-t$tab -k2,2M" ;;
	general-g) kind=general; opt="-t$tab -k2,2g" ;;
	bed-k5nr-k1) kind=bed; opt="-t$tab -k5,5nr -k1,1" ;;
	mix) kind=mix; opt='' ;;
	mix-n) kind=mix; opt="-t$tab -k2,2n" ;;
	mix-h) kind=mix; opt="-t$tab -k3,3h" ;;
	mix-M) kind=mix; opt="-t$tab -k4,4M" ;;
	mix-g) kind=mix; opt="-t$tab -k5,5g" ;;
	mix-V) kind=mix; opt="-t$tab -k6,6V" ;;
	mix-R) kind=mix; printf 0123456789abcdef > "$DATA/sort-rs16"; opt="-t$tab -k1,1R --random-source=$DATA/sort-rs16" ;;
	mix-f) kind=mix; opt="-t$tab -k1,1f" ;;
	mix-d) kind=mix; opt="-t$tab -k1,1d" ;;
	mix-i) kind=mix; opt="-t$tab -k1,1i" ;;
	*) bench_die "unknown data set '$s'" ;;
	esac
	f=$(data "$kind")
	size=$(fsize "$f")
	lines=$(wc -l < "$f" | tr -d ' ')
	# time only a correct sort
	eval "strsort -j $threads $dev $opt $f" > "$DATA/sort.out.$$" \
		|| { rm -f "$DATA/sort.out.$$"; bench_die "strsort failed on $f"; }
	if ! eval "LC_ALL=C sort -S 8G $opt $f" | cmp -s - "$DATA/sort.out.$$"; then
		rm -f "$DATA/sort.out.$$"
		bench_die "strsort $opt $f differs from LC_ALL=C sort"
	fi
	rm -f "$DATA/sort.out.$$"
	compare -n "sort-$s$sfx" -r "$reps" -w 1 -b "$size" \
		-N "$lines lines ($kind), $threads threads${dev:+, $dev}; B = GNU sort${SORT_NOTE:+; $SORT_NOTE}" -- \
		"strsort -j $threads $dev $opt $f > /dev/null" \
		"LC_ALL=C sort -S 8G --parallel=$threads $opt $f > /dev/null"
	case $s in rand|rand1g|dup|url|dna|reads|mix) vs_cat=1 ;; *) vs_cat=0 ;; esac
	if [ "$vs_cat" = 1 ]; then
		compare -n "sort-$s$sfx-vs-cat" -r "$reps" -w 1 -b "$size" \
			-N "$lines lines ($kind)${dev:+, $dev}; B = cat, the I/O floor (ratio < 1: strsort is slower than cat)${SORT_NOTE:+; $SORT_NOTE}" -- \
			"strsort -j $threads $dev $opt $f > /dev/null" \
			"cat $f > /dev/null"
	fi
	if [ -n "$dev" ]; then
		compare -n "sort-$s$sfx-vs-cpu" -r "$reps" -w 1 -b "$size" \
			-N "$lines lines ($kind), $threads threads; B = strsort --device none (the CPU path)${SORT_NOTE:+; $SORT_NOTE}" -- \
			"strsort -j $threads $dev $opt $f > /dev/null" \
			"strsort -j $threads --device none $opt $f > /dev/null"
	fi
done
