#!/bin/sh
# compare.sh - time seedpipe's command against a peer's, side by side.
#
#   sh bench/compare.sh -n NAME [-r REPS] [-b BYTES] [-N NOTE] [-w WARM] -- 'CMD_A' ['CMD_B']
#
# A is seedpipe's command, B the peer's.  They run interleaved, A B A B ...,
# REPS times each (after WARM untimed warm-up runs of each), every run through
# `sh -c` under /usr/bin/time.  The medians of wall seconds and peak RSS are
# reported; ratio = median(B) / median(A), i.e. how many times faster seedpipe
# is.  With -b BYTES (or -b FILE: that file's size), A's throughput in MB/s
# (10^6 bytes) is reported too.  Without CMD_B only A is timed (ratio "-").
#
# One row is appended to the markdown table under "## NAME" in bench/RESULTS.md
# ($BENCH_RESULTS) and one line to bench/results.tsv ($BENCH_TSV).
#
# Wall time is taken with date +%s%N around /usr/bin/time (ms resolution);
# peak RSS is GNU time's %M, the largest single process of the command (for a
# pipeline: its largest stage, not the sum).  A command's stdout goes to
# /dev/null unless it redirects it itself; its stderr is kept and shown if it
# fails.  The 1-minute load average before the runs goes with the row (a busy
# machine explains noise).  Any failing run stops everything with exit 1 and writes no row.

set -u

prog=compare
die() { echo "$prog: $*" >&2; exit 1; }
usage() {
	cat <<EOF
Usage: sh bench/compare.sh -n NAME [options] -- 'CMD_A' ['CMD_B']

Times CMD_A (seedpipe) against CMD_B (peer), interleaved, through sh -c.

Options:
  -n NAME    benchmark name: the RESULTS.md heading and the plot label (required)
  -r REPS    timed runs of each command [5]
  -w WARM    untimed warm-up runs of each command first [0]
  -b BYTES   input size for A's throughput (an integer, or a file to take the size of)
  -N NOTE    free-text note stored with the row (data set, threads, ...)
  -h         this help

Environment: BENCH_RESULTS [bench/RESULTS.md], BENCH_TSV [bench/results.tsv]
EOF
}

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
results=${BENCH_RESULTS:-$here/RESULTS.md}
tsv=${BENCH_TSV:-$here/results.tsv}

name='' reps=5 warm=0 bytes='' note=''
while getopts n:r:w:b:N:h opt; do
	case $opt in
	n) name=$OPTARG ;;
	r) reps=$OPTARG ;;
	w) warm=$OPTARG ;;
	b) bytes=$OPTARG ;;
	N) note=$OPTARG ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ "${1-}" = "--" ] && shift
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "$prog: expected 'CMD_A' ['CMD_B'] after --" >&2
	usage >&2; exit 2
fi
cmd_a=$1
cmd_b=${2-}
[ -n "$name" ] || { echo "$prog: -n NAME is required" >&2; usage >&2; exit 2; }
case $name in *[!A-Za-z0-9_.+-]*)
	echo "$prog: NAME '$name' may use only letters, digits and _ . + -" >&2; exit 2 ;;
esac
case $reps in ''|*[!0-9]*|0) echo "$prog: -r wants a positive integer, not '$reps'" >&2; exit 2 ;; esac
case $warm in ''|*[!0-9]*) echo "$prog: -w wants an integer, not '$warm'" >&2; exit 2 ;; esac
if [ -n "$bytes" ]; then
	case $bytes in
	*[!0-9]*)
		[ -f "$bytes" ] || { echo "$prog: -b wants a byte count or a file, not '$bytes'" >&2; exit 2; }
		bytes=$(wc -c < "$bytes" | tr -d ' ') ;;
	esac
fi
[ -x /usr/bin/time ] || die "GNU time not found at /usr/bin/time (apt-get install time)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/compare.XXXXXX") || die "cannot create a temporary directory"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
# The 1-minute load average before the runs: a busy machine explains noise.
load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo -)

# run_one LABEL CMD: one timed run; appends "wall rss_kb cpu" to $tmp/LABEL.
run_one() {
	t0=$(date +%s%N)
	/usr/bin/time -f '%M %U %S' -o "$tmp/time" sh -c "$2" > /dev/null 2> "$tmp/err"
	rc=$?
	t1=$(date +%s%N)
	if [ $rc -ne 0 ]; then
		echo "$prog: $name: command $1 failed (exit $rc): $2" >&2
		tail -n 20 "$tmp/err" | sed 's/^/  | /' >&2
		exit 1
	fi
	# GNU time prints "Command exited with non-zero status" or signal lines first.
	tail -n 1 "$tmp/time" | awk -v ns=$((t1 - t0)) '{ printf "%.3f %d %.2f\n", ns / 1e9, $1, $2 + $3 }' >> "$tmp/$1"
}

i=0
while [ $i -lt "$warm" ]; do
	run_one warmA "$cmd_a"
	[ -n "$cmd_b" ] && run_one warmB "$cmd_b"
	i=$((i + 1))
done
i=0
while [ $i -lt "$reps" ]; do
	run_one A "$cmd_a"
	[ -n "$cmd_b" ] && run_one B "$cmd_b"
	i=$((i + 1))
done

# median FILE COLUMN
median() {
	awk -v c="$2" '{ print $c }' "$1" | sort -g | awk '
		{ v[NR] = $1 }
		END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.3f\n", m }'
}

med_a=$(median "$tmp/A" 1)
rss_a=$(median "$tmp/A" 2 | awk '{ printf "%.1f", $1 / 1024 }')
cpu_a=$(median "$tmp/A" 3)
all_a=$(awk '{ printf "%s%s", sep, $1; sep = "," }' "$tmp/A")
if [ -n "$cmd_b" ]; then
	med_b=$(median "$tmp/B" 1)
	rss_b=$(median "$tmp/B" 2 | awk '{ printf "%.1f", $1 / 1024 }')
	cpu_b=$(median "$tmp/B" 3)
	all_b=$(awk '{ printf "%s%s", sep, $1; sep = "," }' "$tmp/B")
	ratio=$(awk -v a="$med_a" -v b="$med_b" 'BEGIN { if (a > 0) printf "%.2f", b / a; else print "-" }')
else
	med_b=- rss_b=- cpu_b=- all_b=- ratio=-
fi
if [ -n "$bytes" ]; then
	mbps=$(awk -v n="$bytes" -v a="$med_a" 'BEGIN { if (a > 0) printf "%.1f", n / 1e6 / a; else print "-" }')
else
	bytes=- mbps=-
fi

# The machine, without the host name.
cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null)
[ -n "$cpu" ] || cpu=$(uname -m)
mem=$(awk '/^MemTotal:/ { printf "%.0f", $2 / 1048576 }' /proc/meminfo 2>/dev/null)
machine="$cpu, $(nproc) cpu, ${mem:-?} GiB"
if commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null); then
	git -C "$root" diff --quiet HEAD -- 2>/dev/null || commit="$commit-dirty"
else
	commit=-
fi
date=$(date -u +%Y-%m-%dT%H:%MZ)

# Human-readable line.
{
	printf '%s: A %s s' "$name" "$med_a"
	[ -n "$cmd_b" ] && printf ', B %s s, ratio B/A %sx' "$med_b" "$ratio"
	printf ' (median of %s); peak RSS A %s MB' "$reps" "$rss_a"
	[ -n "$cmd_b" ] && printf ', B %s MB' "$rss_b"
	[ "$mbps" != - ] && printf '; A %s MB/s' "$mbps"
	printf '\n'
}

# One markdown cell: a code span with pipes escaped (GFM table rule).
md_code() { printf '%s' "$1" | tr '\n\t`' "  '" | sed 's/|/\\|/g; s/^/`/; s/$/`/'; }
md_text() { printf '%s' "$1" | tr '\n\t' '  ' | sed 's/|/\\|/g'; }
tsv_field() { printf '%s' "$1" | tr '\n\t' '  '; }

row="| $date | $(md_text "$machine") | $commit | $(md_code "$cmd_a") | $([ -n "$cmd_b" ] && md_code "$cmd_b" || printf -) | $med_a | $med_b | $ratio | $rss_a / $rss_b | $mbps | $reps | $(md_text "${note:+$note; }load $load") |"
head1='| date | machine | commit | A (seedpipe) | B (peer) | A s | B s | ratio B/A | peak RSS A / B MB | A MB/s | reps | note |'
head2='|---|---|---|---|---|---|---|---|---|---|---|---|'

# Serialise writers (the lock file is never removed: removing it would race).
lock=${TMPDIR:-/tmp}/seedpipe-bench.lock
exec 9>> "$lock" || die "cannot create '$lock'"
command -v flock > /dev/null 2>&1 && flock 9

[ -f "$results" ] || printf '# seedpipe benchmark results\n\nAppended by bench/compare.sh; see bench/README.md. ratio = median B / median A (how many times faster seedpipe is).\n' > "$results" \
	|| die "cannot write '$results'"
if grep -qxF "## $name" "$results"; then
	# Insert after the last table line of this section.
	H="## $name" ROW="$row" HEAD1="$head1" HEAD2="$head2" awk '
		BEGIN { h = ENVIRON["H"]; row = ENVIRON["ROW"]; head1 = ENVIRON["HEAD1"]; head2 = ENVIRON["HEAD2"] }
		function flush() { if (ins && !done) { print row; done = 1 } }
		$0 == h { sec = 1; print; next }
		sec && /^\|/ { ins = 1; print; next }
		sec && ins && !/^\|/ { flush(); sec = 0 }
		sec && /^## / { if (!ins) { print head1; print head2; ins = 1 } flush(); sec = 0 }
		{ print }
		END { if (sec && !ins) { print head1; print head2; ins = 1 } flush() }
	' "$results" > "$tmp/results" && cat "$tmp/results" > "$results" \
		|| die "cannot update '$results'"
else
	printf '\n## %s\n\n%s\n%s\n%s\n' "$name" "$head1" "$head2" "$row" >> "$results" || die "cannot write '$results'"
fi

if [ ! -s "$tsv" ]; then
	printf 'date\tname\tmachine\tcommit\treps\tcmd_a\tcmd_b\tmed_a_s\tmed_b_s\tratio\trss_a_mb\trss_b_mb\tbytes\ta_mb_s\tcpu_a_s\tcpu_b_s\truns_a\truns_b\tnote\tload\n' > "$tsv" \
		|| die "cannot write '$tsv'"
fi
printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
	"$date" "$name" "$(tsv_field "$machine")" "$commit" "$reps" "$(tsv_field "$cmd_a")" \
	"$(tsv_field "${cmd_b:--}")" "$med_a" "$med_b" "$ratio" "$rss_a" "$rss_b" "$bytes" "$mbps" \
	"$cpu_a" "$cpu_b" "$all_a" "$all_b" "$(tsv_field "${note:--}")" "$load" >> "$tsv" || die "cannot write '$tsv'"
exit 0
