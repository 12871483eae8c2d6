#!/bin/sh
# plot.sh - chart of the latest ratio (peer time / seedpipe time) of each
# headline benchmark in bench/results.tsv -> bench/ratios.png (for the README):
# one horizontal bar per benchmark and machine (the latest row of the H100
# machine, 16 cores, and of a 2-core machine, each in its colour), grouped
# by tool, on a log scale from 1 (as fast as the peer) out to the ratio.
#
#   sh bench/plot.sh [TSV [PNG]]
#
# TSV defaults to $BENCH_TSV or bench/results.tsv; PNG to $BENCH_PNG or
# ratios.png in the directory of TSV.
#
# Headline: a benchmark against a peer tool.  Left out: rows without a peer
# (ratio "-"), against cat (the I/O floor), GPU against CPU, before/after
# rows of one change (arch-*), single-key sort variants (sort-mix-X,
# sort-*-kN*) and the 2,000-sequence device rows.  Bars right of 1 mean
# seedpipe is faster.  Needs gnuplot (apt-get install gnuplot-nox).

set -eu

here=$(cd "$(dirname "$0")" && pwd)
tsv=${1:-${BENCH_TSV:-$here/results.tsv}}
png=${2:-${BENCH_PNG:-$(dirname "$tsv")/ratios.png}}

die() { echo "plot: $*" >&2; exit 1; }
command -v gnuplot > /dev/null || die "gnuplot not found (apt-get install gnuplot-nox)"
[ -r "$tsv" ] || die "cannot read '$tsv' (run a benchmark first)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/plot.XXXXXX") || die "cannot create a temporary directory"
trap 'rm -rf "$tmp"' EXIT

# Latest row per (name, machine): tool TAB name TAB machine class TAB ratio,
# ordered by tool, then name.  Machine class: "H100" (the device machine, 16
# cores) or "2 cores" (a 2-core machine, or the device with both commands
# pinned to 2 CPUs, as its note says).
awk -F'\t' '
	NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
	{
		n = $col["name"]; r = $col["ratio"]; m = $col["machine"]
		if (r == "-" || r == "" || r + 0 <= 0) next
		if (n ~ /-vs-cat$|-vs-cpu$|^arch-|^sort-mix-[A-Za-z]$|-k[0-9][A-Za-z]$|^global-device/) next
		if (m ~ /, 2 cpu/ || $col["note"] ~ /pinned to CPUs [0-9]+,[0-9]+[^,0-9]/) c = "2 cores"
		else if (m ~ /, 16 cpu/) c = "H100"; else next
		t = n ~ /^idx-/ ? "seqidx" : n ~ /^(filt|mem)-/ ? "seedfilt" : \
		    n ~ /^(map|h3)-/ ? "seedfilt | extend" : n ~ /^(align|global)-/ ? "extend" : \
		    n ~ /^sort-/ ? "strsort" : n ~ /^(fastq|stream)-/ ? "recview" : "other"
		k = t "\t" n "\t" c
		if (!(k in rat)) key[++nk] = k
		rat[k] = r
	}
	END { for (i = 1; i <= nk; ++i) printf "%s\t%s\n", key[i], rat[key[i]] }
' "$tsv" | LC_ALL=C sort -t "$(printf '\t')" -k1,1 -k2,2 -k3,3 > "$tmp/rows"

if [ ! -s "$tmp/rows" ]; then
	echo "plot: no headline benchmark with a peer in '$tsv', nothing to plot" >&2
	exit 0
fi

# y from the top down, a heading above each tool's bars.  bars: y, ratio,
# class (0 H100, 1 two cores), name; heads: y and the tool
awk -F'\t' -v heads="$tmp/heads" -v height="$tmp/height" '
	{
		if ($1 != last) { y -= 1.5; printf "%s\t%s\n", y, $1 > heads; last = $1; y -= 0.3 }
		y -= 1
		printf "%s\t%s\t%d\t%s\n", y, $4, $3 == "H100" ? 0 : 1, $2
	}
	END { print -y > height }
' "$tmp/rows" > "$tmp/bars"
n=$(wc -l < "$tmp/bars")
h=$(awk '{ printf "%d", $1 * 16 + 150 }' "$tmp/height")
ymin=$(awk '{ print -$1 - 0.8 }' "$tmp/height")
xmax=$(awk -F'\t' 'BEGIN { m = 2 } $2 + 0 > m { m = $2 + 0 } END { print m * 2.5 }' "$tmp/bars")
xmin=$(awk -F'\t' 'BEGIN { m = 0.5 } $2 + 0 < m { m = $2 + 0 } END { print m / 1.6 }' "$tmp/bars")

if gnuplot -e 'set terminal pngcairo' > /dev/null 2>&1; then
	term="pngcairo size 1000,$h font \"sans,10\""
else
	term="png size 1000,$h"
fi

# the tool headings, in the left margin
awk -F'\t' '{ printf "set label \"%s\" at graph -0.33, first %s left font \",11\" front\n", $2, $1 }' \
	"$tmp/heads" > "$tmp/labels.gp"

cat > "$tmp/plot.gp" <<EOF
set terminal $term
set output "$png.tmp"
set title "seedpipe against its peers: median peer time / median seedpipe time, latest row of each benchmark\n(right of the dashed line at 1: seedpipe is faster)" noenhanced
set datafile separator "\t"
set logscale x
set xrange [$xmin:$xmax]
set yrange [$ymin:0]
set xtics (0.25, 0.5, 1, 2, 4, 8, 16, 32, 64) nomirror
set format x "%gx"
set ytics scale 0 nomirror
set grid xtics
set xlabel "times faster than the peer (log scale)"
set lmargin 36
set bmargin 7
set key below box
set style fill solid 0.85 border -1
set arrow from 1, graph 0 to 1, graph 1 nohead front dashtype 2 lw 2 lc rgb "#c00000"
load "$tmp/labels.gp"
plot "$tmp/bars" using (\$3 == 0 ? \$2 : 1/0):1:(\$2 < 1 ? \$2 : 1):(\$2 < 1 ? 1 : \$2):(\$1 - 0.38):(\$1 + 0.38):ytic(4) \\
         with boxxyerror lc rgb "#3070b0" title "H100 machine, 16 cores", \\
     "" using (\$3 == 1 ? \$2 : 1/0):1:(\$2 < 1 ? \$2 : 1):(\$2 < 1 ? 1 : \$2):(\$1 - 0.38):(\$1 + 0.38):ytic(4) \\
         with boxxyerror lc rgb "#e08020" title "2 cores (a 2-core machine, or the H100 machine pinned to 2)", \\
     "" using (\$2 < 1 ? 1.06 : \$2 * 1.06):1:(sprintf("%.2fx", \$2)) with labels left font ",9" notitle
EOF
gnuplot "$tmp/plot.gp" > "$tmp/log" 2>&1 || { cat "$tmp/log" >&2; die "gnuplot failed"; }
mv "$png.tmp" "$png"
echo "plot: wrote $png ($n bars)"
