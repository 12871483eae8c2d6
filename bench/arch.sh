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
#   arch-filt-rps      the same reads and index, methods ph, bs and bpr: the
#                      filter stage's seconds (seedfilt -v, filt.sh's filt-rps),
#                      the median of REPS runs of each, interleaved
#   arch-map-chrx200k  seedfilt -m bpr -e 1 -s 14 | extend -e 5, 200k mason
#                      100-bp chrX reads (map.sh's chrx design)
#   arch-sort-rand     strsort on sortgen's 10M random lines (sort.sh's rand)
#
# ratio = before / after (above 1: the change made it faster).  Every
# workload first checks that both give the same output (provenance aside:
# it names the programs' paths) and stops if not; its row's note says so.
# Each side builds its own index with its own seqidx (2c6cb0d writes index
# format 1, later trees format 2), so the candidates and SAM made with them
# are compared, and seqidx-chrx compares the index files only with
# IDX_CMP=1 (both sides of one format).
# Environment: OLD_BIN (required), BIN, THREADS [2], REPS [3], WARM (untimed
# runs of each first) [1], FILT_METHODS (filt-rps's) [ph bs bpr], IDX_CMP [0],
# MAP_READS
# (the map workload's reads instead of mason's, e.g. where mason is absent),
# FILT_READS (filt-ecoli's and filt-rps's reads), COMMIT (the commit the
# rows name as A), SORTGEN (a built bench/sortgen.c, e.g. where there is no
# compiler), BENCH_DATA, BENCH_RESULTS, BENCH_TSV.
set -eu
. "$(dirname "$0")/lib.sh"

[ -n "${OLD_BIN:-}" ] || bench_die "set OLD_BIN to the programs built before the change"
case $OLD_BIN in /*) ;; *) OLD_BIN=$ROOT/$OLD_BIN ;; esac
for t in seqidx seedfilt extend strsort; do
	need_tool $t
	[ -x "$OLD_BIN/$t" ] || bench_die "'$OLD_BIN/$t' not found"
done
reps=${REPS:-3}
warm=${WARM:-1}
th=${THREADS:-2}
work=$DATA/arch
mkdir -p "$work"
new=$BIN
old=$OLD_BIN
commit=${COMMIT:-$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)}

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
	note="index formats differ (not compared; map-chrx200k compares what they give)"
	if [ "${IDX_CMP:-0}" = 1 ]; then
		"$new/seqidx" -q -t "$th" -u 12 -l 15 -o "$work/new.sx" "$ref"
		"$old/seqidx" -q -t "$th" -u 12 -l 15 -o "$work/old.sx" "$ref"
		same "$work/new.sx" "$work/old.sx" "seqidx chrx"
		rm -f "$work/old.sx"
		note="index files identical"
	fi
	compare -n arch-seqidx-chrx -r "$reps" -w "$warm" -b "$ref" \
		-N "before/after: A = $commit, B = $old; $note; $th threads" -- \
		"$new/seqidx -q -t $th -u 12 -l 15 -o $work/a.sx $ref" \
		"$old/seqidx -q -t $th -u 12 -l 15 -o $work/b.sx $ref"
	rm -f "$work/a.sx" "$work/b.sx" "$work/new.sx"
}

# side_index NAME ARGS...: index NAME-new.sx and NAME-old.sx of $ref, each
# built by its side's seqidx with ARGS; sets ixn and ixo
side_index() {
	n=$1
	shift
	ixn=$work/$n-new.sx
	ixo=$work/$n-old.sx
	[ -s "$ixn" ] || "$new/seqidx" -q -t "$th" "$@" -o "$ixn" "$ref"
	[ -s "$ixo" ] || "$old/seqidx" -q -t "$th" "$@" -o "$ixo" "$ref"
}

# filt_data: the E. coli reads and indexes of filt-ecoli and filt-rps
filt_data() {
	ref=$(dataset ecoli)
	reads=${FILT_READS:-$(dataset schbath ecoli 1000000 40 1 1)}
	side_index ecoli
}

filt_ecoli() {
	filt_data
	"$new/seedfilt" -q -t "$th" -d none -x "$ixn" -m ph -e 1 "$reads" > "$work/new.sp"
	"$old/seedfilt" -q -t "$th" -d none -x "$ixo" -m ph -e 1 "$reads" > "$work/old.sp"
	same_stream "$work/new.sp" "$work/old.sp" "seedfilt ecoli"
	rm -f "$work/new.sp" "$work/old.sp"
	compare -n arch-filt-ecoli -r "$reps" -w "$warm" \
		-N "before/after: A = $commit, B = $old; candidate records identical (provenance aside); each its own index; $th threads, native" -- \
		"$new/seedfilt -q -t $th -d none -x $ixn -m ph -e 1 -o /dev/null $reads" \
		"$old/seedfilt -q -t $th -d none -x $ixo -m ph -e 1 -o /dev/null $reads"
}

# filter_secs BIN INDEX METHOD: the filter stage's seconds of one seedfilt -v run
filter_secs() {
	err=$("$1/seedfilt" -v -t "$th" -d none -x "$2" -m "$3" -e 1 -o /dev/null "$reads" 2>&1) \
		|| { echo "$err" >&2; bench_die "seedfilt failed"; }
	fs=$(echo "$err" | sed -n 's/.*SeedBlocks searched in \([0-9.]*\) s:.*/\1/p' | head -1)
	[ -n "$fs" ] || { echo "$err" >&2; bench_die "cannot parse seedfilt's summary"; }
	echo "$fs"
}

# median: of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

filt_rps() {
	filt_data
	results=${BENCH_RESULTS:-$HERE/RESULTS.md}
	if ! grep -qxF "## arch-filt-rps" "$results" 2>/dev/null; then
		printf '\n## arch-filt-rps\n\n%s\n\n%s\n%s\n' \
			"Before/after (bench/arch.sh): seedfilt's filter stage alone (seedfilt -v, as filt-rps), native code, 40-bp E. coli reads with 1 substitution (1M unless FILT_READS), e = 1, the default index; the median of reps runs of each, interleaved; ratio = B s / A s." \
			"| date | machine | commit | A | B | method | reads | A filter s | B filter s | ratio B/A | A reads/s | B reads/s | reps | note |" \
			"|---|---|---|---|---|---|---|---|---|---|---|---|---|---|" >> "$results"
	fi
	nr=$(($(wc -l < "$reads") / 4))
	mach="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) cpu"
	for m in ${FILT_METHODS:-ph bs bpr}; do
		"$new/seedfilt" -q -t "$th" -d none -x "$ixn" -m $m -e 1 "$reads" > "$work/new.sp"
		"$old/seedfilt" -q -t "$th" -d none -x "$ixo" -m $m -e 1 "$reads" > "$work/old.sp"
		same_stream "$work/new.sp" "$work/old.sp" "seedfilt ecoli -m $m"
		rm -f "$work/new.sp" "$work/old.sp" "$work/a.fs" "$work/b.fs"
		i=0
		while [ $i -lt "$reps" ]; do
			filter_secs "$new" "$ixn" $m >> "$work/a.fs"
			filter_secs "$old" "$ixo" $m >> "$work/b.fs"
			i=$((i + 1))
		done
		a=$(median < "$work/a.fs")
		b=$(median < "$work/b.fs")
		row=$(awk -v a="$a" -v b="$b" -v n="$nr" 'BEGIN { printf "%.3f | %.3f | %.2f | %.4g | %.4g", a, b, b / a, n / a, n / b }')
		printf '| %s | %s | %s | `%s` | `%s` | %s | %s | %s | %s | candidate records identical (provenance aside); each its own index; %s threads; load %s |\n' \
			"$(date -u +%Y-%m-%dT%H:%MZ)" "$mach" "$commit" "$new/seedfilt" "$old/seedfilt" $m "$nr" \
			"$row" "$reps" "$th" "$(cut -d' ' -f1 /proc/loadavg)" > "$work/row"
		awk -v row="$(cat "$work/row")" '
			$0 == "## arch-filt-rps" { in_sec = 1 }
			in_sec && /^\|/ { seen = 1 }
			in_sec && seen && !/^\|/ { print row; in_sec = 0; done = 1 }
			{ print }
			END { if (in_sec && !done) print row }' "$results" > "$results.tmp$$" &&
			mv "$results.tmp$$" "$results"
		echo "arch-filt-rps $m: A $a s, B $b s"
		rm -f "$work/a.fs" "$work/b.fs" "$work/row"
	done
}

map_chrx() {
	ref=$(dataset chrx)
	reads=${MAP_READS:-$(dataset mason chrx 200000 100 1)}
	side_index chrx-u12l15 -u 12 -l 15 -m general
	for v in new old; do
		eval b=\$$v
		ix=$ixn
		[ $v = new ] || ix=$ixo
		"$b/seedfilt" -q -t "$th" -x "$ix" -m bpr -e 1 -s 14 "$reads" |
			"$b/extend" -q -t "$th" -e 5 -o "$work/$v.sam"
	done
	same_sam "$work/new.sam" "$work/old.sam" "map chrx"
	rm -f "$work/new.sam" "$work/old.sam"
	compare -n arch-map-chrx200k -r "$reps" -w "$warm" \
		-N "before/after: A = $commit, B = $old; SAM identical but for @PG CL; each its own index; $th threads" -- \
		"$new/seedfilt -q -t $th -x $ixn -m bpr -e 1 -s 14 $reads | $new/extend -q -t $th -e 5 -o /dev/null" \
		"$old/seedfilt -q -t $th -x $ixo -m bpr -e 1 -s 14 $reads | $old/extend -q -t $th -e 5 -o /dev/null"
}

sort_rand() {
	gen=${SORTGEN:-$DATA/sortgen}
	if [ -z "${SORTGEN:-}" ] && { [ ! -x "$gen" ] || [ "$HERE/sortgen.c" -nt "$gen" ]; }; then
		${CC:-cc} -O2 -o "$gen.tmp$$" "$HERE/sortgen.c" && mv "$gen.tmp$$" "$gen" \
			|| bench_die "cannot compile sortgen.c"
	fi
	in=$work/sort-rand.txt
	[ -s "$in" ] || "$gen" rand > "$in"
	"$new/strsort" -j "$th" < "$in" > "$work/new.txt"
	"$old/strsort" -j "$th" < "$in" > "$work/old.txt"
	same "$work/new.txt" "$work/old.txt" "strsort rand"
	rm -f "$work/new.txt" "$work/old.txt"
	compare -n arch-sort-rand -r "$reps" -w "$warm" -b "$in" \
		-N "before/after: A = $commit, B = $old; output identical; $th threads" -- \
		"$new/strsort -j $th < $in > /dev/null" "$old/strsort -j $th < $in > /dev/null"
}

for w in ${*:-seqidx-chrx filt-ecoli filt-rps map-chrx200k sort-rand}; do
	case $w in
	seqidx-chrx) seqidx_chrx ;;
	filt-ecoli) filt_ecoli ;;
	filt-rps) filt_rps ;;
	map-chrx200k) map_chrx ;;
	sort-rand) sort_rand ;;
	*) bench_die "unknown workload '$w' (seqidx-chrx filt-ecoli filt-rps map-chrx200k sort-rand)" ;;
	esac
done
