#!/bin/sh
# h3.sh - issue 15's goal: Schbath's H3 case (N 40-bp E. coli 536 reads with
# exactly 3 substitutions) mapped by the one-bound pipeline
#
#     seedfilt -E 3 | extend --no-gaps          (the setting chosen per read
#                                                length by seedfilt's plan)
#
# against razers3 -i 92 -ng -m 100000, THREADS threads each, on each index
# of INDEXES (NAME:SEQIDX_OPTIONS, ';'-separated; the default index, and
# those the README recommends for 40-bp reads and 3 edit operations).
#
#   sh bench/h3.sh [N] [SEED]
#
# For each index: the two commands are timed with bench/compare.sh (row
# "h3-NAME"; the index is built beforehand and not timed, its build time
# goes in the note), then the hit sets they wrote are compared (read,
# strand, 1-based position of every mapped record: identical or not, and
# the differences).
# Last, the mission's line `seedfilt -e 1 | extend -e 3 --no-gaps` on the
# default index: its hits against razers3's and the warning it gives.  The
# comparison goes to bench/RESULTS.md under "## h3-hits" (replacing the
# previous one).  SAM is read with awk (no samtools needed: the GPU machine
# has none).
#
# Environment: BIN [bin], THREADS [2], REPS [3], WARM [1], PIN (CPUs for
# taskset -c: both commands pinned to the same cores, e.g. 0,1) [none], RAZERS3
# [/usr/lib/seqan/bin/razers3], BENCH_DATA, BENCH_RESULTS, BENCH_TSV,
# INDEXES [default:;ph10:-u 5 -l 5;bpr8:-u 8 -l 9 -m general].

set -eu

. "$(dirname "$0")/lib.sh"
here=$HERE root=$ROOT
map_setup h3
WARM=${WARM:-1}
PIN=${PIN:-}
INDEXES=${INDEXES:-default:;ph10:-u 5 -l 5;bpr8:-u 8 -l 9 -m general}

n=${1:-200000}
seed=${2:-1}
ref=$(sh "$here/datasets.sh" ecoli)
reads=$(sh "$here/datasets.sh" schbath ecoli "$n" 40 3 "$seed")

# keys SAM: "name strand pos" of every mapped record, sorted, unique
keys() {
	awk -F'\t' '!/^@/ && int($2 / 4) % 2 == 0 { print $1, int($2 / 16) % 2, $4 }' "$1" |
		LC_ALL=C sort -u
}

b=$work/razers3.sam
nb=
report=$work/report.md
: >"$report"
# compare_hits LABEL SAM: a table row of the hits of SAM against razers3's
compare_hits() {
	keys "$2" >"$work/a.k"
	na=$(wc -l <"$work/a.k")
	both=$(LC_ALL=C comm -12 "$work/a.k" "$work/b.k" | wc -l)
	same=no
	[ "$na" = "$nb" ] && [ "$both" = "$nb" ] && same=yes
	printf '| %s | %s | %s | %s | %s | %s |\n' "$1" "$na" "$nb" "$((na - both))" \
		"$((nb - both))" "$same" >>"$report"
	echo "h3.sh: $1: seedpipe $na hits, razers3 $nb, only seedpipe $((na - both)), only razers3 $((nb - both)), identical: $same" >&2
}

printf '| pipeline | hits (read, strand, position) | razers3 -ng hits | only seedpipe | only razers3 | identical |\n|---|---|---|---|---|---|\n' >>"$report"
IFS=';'
set -f
for d in $INDEXES; do
	unset IFS
	name=${d%%:*} ixargs=${d#*:}
	ix=$work/ecoli-$name.sx
	t0=$(date +%s%N)
	seqidx -q -t "$THREADS" $ixargs -o "$ix" "$ref" || die "seqidx $ixargs failed"
	tix=$(( ($(date +%s%N) - t0) / 1000000 ))
	a=$work/$name.sam
	cmd_a="seedfilt -q -t $THREADS -x $ix -E 3 $reads | extend -q -t $THREADS --no-gaps -o $a"
	cmd_b="$RAZERS3 -tc $THREADS -i 92 -ng -m 100000 -o $b $ref $reads"
	plan=$(head -n 4 "$reads" | seedfilt -v -x "$ix" -E 3 -o /dev/null 2>&1 |
		sed -n 's/^seedfilt: -E: reads of 40 bases: using //p')
	pin= pnote=
	[ -n "$PIN" ] && pin="taskset -c $PIN " pnote="; both pinned to CPUs $PIN (taskset)"
	# the timed runs write both outputs, compared below
	sh "$here/compare.sh" -n "h3-$name" -r "$REPS" -w "$WARM" \
		-N "$n H3 reads (40 bp, 3 substitutions), $THREADS threads each$pnote; index seqidx ${ixargs:-(default)} prebuilt in $tix ms, not timed; seedfilt -E 3 chose: $plan" \
		-- "${pin}sh -c '$cmd_a'" "$pin$cmd_b >/dev/null"
	if [ -z "$nb" ]; then
		keys "$b" >"$work/b.k"
		nb=$(wc -l <"$work/b.k")
	fi
	compare_hits "\`seqidx ${ixargs:-(default)}\`; seedfilt -E 3 (plan: $plan) \\| extend --no-gaps" "$a"
	IFS=';'
done
unset IFS
set +f

# the mission's own line on the default index
ix=$work/ecoli-default.sx
[ -f "$ix" ] || seqidx -q -t "$THREADS" -o "$ix" "$ref"
a=$work/mission.sam
warn=$(seedfilt -q -t "$THREADS" -x "$ix" -e 1 "$reads" |
	extend -q -t "$THREADS" -e 3 --no-gaps -o "$a" 2>&1 >/dev/null) || die "mission line failed"
compare_hits "\`seedfilt -e 1 \| extend -e 3 --no-gaps\` (default index)" "$a"

if [ -f "$results" ]; then
	awk '$0 == "## h3-hits" { skip = 1; next } skip && /^## / { skip = 0 } !skip' \
		"$results" >"$results.tmp$$" && mv "$results.tmp$$" "$results"
fi
{
	printf '\n## h3-hits\n\n'
	printf '%s, %s H3 reads (%s), %s threads, commit %s, %s\n\n' \
		"$(date -u +%Y-%m-%dT%H:%MZ)" "$n" "$(basename "$reads")" "$THREADS" \
		"$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo "${COMMIT:--}")" \
		"$(uname -n)"
	cat "$report"
	printf '\nThe mission line warns (even with -q): %s\n' "${warn:-(nothing)}"
} >>"$results"
