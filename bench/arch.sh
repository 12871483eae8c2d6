#!/bin/sh
# arch.sh - before/after rows for a change that must not alter output or
# speed (the architecture refactor): the programs of BIN (A, after) against
# those of OLD_BIN (B, before), interleaved in one run, on the four headline
# workloads; the outputs are compared byte for byte first.
#
#   OLD_BIN=DIR sh bench/arch.sh [WORKLOAD...]
#
#   arch-seqidx-chrx   seqidx -u 12 -l 15 (general, reduced, block) of chrX 70 Mbp
#   arch-filt-ecoli    seedfilt -m ph -e 1 on 1M 40-bp E. coli reads (default index)
#   arch-map-chrx200k  seedfilt -m bpr -e 1 -s 14 | extend -e 5, 200k mason
#                      100-bp chrX reads (map.sh's chrx design)
#   arch-sort-rand     strsort on sortgen's 10M random lines (sort.sh's rand)
#
# ratio = before / after (above 1: the change made it faster).
# Environment: OLD_BIN (required), BIN, THREADS [2], REPS [3], MAP_READS
# (the map workload's reads instead of mason's, e.g. where mason is absent),
# BENCH_DATA, BENCH_RESULTS, BENCH_TSV.
set -eu
. "$(dirname "$0")/lib.sh"

[ -n "${OLD_BIN:-}" ] || bench_die "set OLD_BIN to the programs built before the change"
case $OLD_BIN in /*) ;; *) OLD_BIN=$ROOT/$OLD_BIN ;; esac
for t in seqidx seedfilt extend strsort; do
	need_tool $t
	[ -x "$OLD_BIN/$t" ] || bench_die "'$OLD_BIN/$t' not found"
done
reps=${REPS:-3}
th=${THREADS:-2}
work=$DATA/arch
mkdir -p "$work"
new=$BIN
old=$OLD_BIN
commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)

# same FILE_A FILE_B WHAT: outputs must be identical
same() { cmp -s "$1" "$2" || bench_die "$3: output differs between $new and $old"; }
# same_sam / same_stream: identical but for the provenance, which names the
# programs' paths (@PG CL, ##pg)
same_sam() {
	grep -v '^@PG' "$1" > "$1.body"; grep -v '^@PG' "$2" > "$2.body"
	same "$1.body" "$2.body" "$3"; rm -f "$1.body" "$2.body"
}
same_stream() {
	"$new/recview" "$1" > "$1.txt"; "$new/recview" "$2" > "$2.txt"
	same "$1.txt" "$2.txt" "$3"; rm -f "$1.txt" "$2.txt"
}

seqidx_chrx() {
	ref=$(dataset chrx)
	"$new/seqidx" -q -t "$th" -u 12 -l 15 -o "$work/new.sx" "$ref"
	"$old/seqidx" -q -t "$th" -u 12 -l 15 -o "$work/old.sx" "$ref"
	same "$work/new.sx" "$work/old.sx" "seqidx chrx"
	rm -f "$work/old.sx"
	compare -n arch-seqidx-chrx -r "$reps" -w 1 -b "$ref" \
		-N "before/after: A = $commit, B = $old; index files identical; $th threads" -- \
		"$new/seqidx -q -t $th -u 12 -l 15 -o $work/a.sx $ref" \
		"$old/seqidx -q -t $th -u 12 -l 15 -o $work/b.sx $ref"
	rm -f "$work/a.sx" "$work/b.sx" "$work/new.sx"
}

filt_ecoli() {
	ref=$(dataset ecoli)
	reads=${FILT_READS:-$(dataset schbath ecoli 1000000 40 1 1)}
	ix=$work/ecoli.sx
	[ -s "$ix" ] || "$new/seqidx" -q -t "$th" -o "$ix" "$ref"
	"$new/seedfilt" -q -t "$th" -d none -x "$ix" -m ph -e 1 "$reads" > "$work/new.sp"
	"$old/seedfilt" -q -t "$th" -d none -x "$ix" -m ph -e 1 "$reads" > "$work/old.sp"
	same_stream "$work/new.sp" "$work/old.sp" "seedfilt ecoli"
	rm -f "$work/new.sp" "$work/old.sp"
	compare -n arch-filt-ecoli -r "$reps" -w 1 \
		-N "before/after: A = $commit, B = $old; candidate records identical (provenance aside); $th threads, native" -- \
		"$new/seedfilt -q -t $th -d none -x $ix -m ph -e 1 -o /dev/null $reads" \
		"$old/seedfilt -q -t $th -d none -x $ix -m ph -e 1 -o /dev/null $reads"
}

map_chrx() {
	ref=$(dataset chrx)
	reads=${MAP_READS:-$(dataset mason chrx 200000 100 1)}
	ix=$work/chrx-u12l15.sx
	[ -s "$ix" ] || "$new/seqidx" -q -t "$th" -u 12 -l 15 -m general -o "$ix" "$ref"
	for v in new old; do
		eval b=\$$v
		"$b/seedfilt" -q -t "$th" -x "$ix" -m bpr -e 1 -s 14 "$reads" |
			"$b/extend" -q -t "$th" -e 5 -o "$work/$v.sam"
	done
	same_sam "$work/new.sam" "$work/old.sam" "map chrx"
	rm -f "$work/new.sam" "$work/old.sam"
	compare -n arch-map-chrx200k -r "$reps" -w 1 \
		-N "before/after: A = $commit, B = $old; SAM identical but for @PG CL; $th threads" -- \
		"$new/seedfilt -q -t $th -x $ix -m bpr -e 1 -s 14 $reads | $new/extend -q -t $th -e 5 -o /dev/null" \
		"$old/seedfilt -q -t $th -x $ix -m bpr -e 1 -s 14 $reads | $old/extend -q -t $th -e 5 -o /dev/null"
}

sort_rand() {
	gen=$DATA/sortgen
	if [ ! -x "$gen" ] || [ "$HERE/sortgen.c" -nt "$gen" ]; then
		${CC:-cc} -O2 -o "$gen.tmp$$" "$HERE/sortgen.c" && mv "$gen.tmp$$" "$gen" \
			|| bench_die "cannot compile sortgen.c"
	fi
	in=$work/sort-rand.txt
	[ -s "$in" ] || "$gen" rand > "$in"
	"$new/strsort" -j "$th" < "$in" > "$work/new.txt"
	"$old/strsort" -j "$th" < "$in" > "$work/old.txt"
	same "$work/new.txt" "$work/old.txt" "strsort rand"
	rm -f "$work/new.txt" "$work/old.txt"
	compare -n arch-sort-rand -r "$reps" -w 1 -b "$in" \
		-N "before/after: A = $commit, B = $old; output identical; $th threads" -- \
		"$new/strsort -j $th < $in > /dev/null" "$old/strsort -j $th < $in > /dev/null"
}

for w in ${*:-seqidx-chrx filt-ecoli map-chrx200k sort-rand}; do
	case $w in
	seqidx-chrx) seqidx_chrx ;;
	filt-ecoli) filt_ecoli ;;
	map-chrx200k) map_chrx ;;
	sort-rand) sort_rand ;;
	*) bench_die "unknown workload '$w' (seqidx-chrx filt-ecoli map-chrx200k sort-rand)" ;;
	esac
done
