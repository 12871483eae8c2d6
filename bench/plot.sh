#!/bin/sh
# plot.sh - bar chart of the latest ratio (peer time / seedpipe time) of each
# benchmark in bench/results.tsv -> bench/ratios.png (for the README).
#
#   sh bench/plot.sh [TSV [PNG]]
#
# TSV defaults to $BENCH_TSV or bench/results.tsv; PNG to $BENCH_PNG or
# ratios.png in the directory of TSV.
#
# Benchmarks without a peer (ratio "-") are left out.  Bars above the line at
# 1 mean seedpipe is faster.  Needs gnuplot (apt-get install gnuplot-nox).

set -eu

here=$(cd "$(dirname "$0")" && pwd)
tsv=${1:-${BENCH_TSV:-$here/results.tsv}}
png=${2:-${BENCH_PNG:-$(dirname "$tsv")/ratios.png}}

die() { echo "plot: $*" >&2; exit 1; }
command -v gnuplot > /dev/null || die "gnuplot not found (apt-get install gnuplot-nox)"
[ -r "$tsv" ] || die "cannot read '$tsv' (run a benchmark first)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/plot.XXXXXX") || die "cannot create a temporary directory"
trap 'rm -rf "$tmp"' EXIT

# Latest row per name (file order is time order), in order of first appearance.
awk -F'\t' '
	NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
	$col["ratio"] != "-" && $col["ratio"] != "" {
		n = $col["name"]
		if (!(n in r)) order[++k] = n
		r[n] = $col["ratio"]
	}
	END { for (i = 1; i <= k; ++i) printf "%s\t%s\n", order[i], r[order[i]] }
' "$tsv" > "$tmp/ratios"

if [ ! -s "$tmp/ratios" ]; then
	echo "plot: no benchmark with a peer in '$tsv', nothing to plot" >&2
	exit 0
fi

if gnuplot -e 'set terminal pngcairo' > /dev/null 2>&1; then
	term='pngcairo size 900,480 font "sans,10"'
else
	term='png size 900,480'
fi
n=$(wc -l < "$tmp/ratios")

gnuplot > "$tmp/log" 2>&1 <<EOF || { cat "$tmp/log" >&2; die "gnuplot failed"; }
set terminal $term
set output "$png.tmp"
set title "seedpipe vs peers: median peer time / median seedpipe time (higher is better)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.8
set datafile separator "\t"
set ylabel "times faster than the peer"
stats "$tmp/ratios" using 2 nooutput
set yrange [0:(STATS_max > 1 ? STATS_max : 1) * 1.15]
set xrange [-0.6:$n - 0.4]
set xtics rotate by -30 noenhanced
set grid ytics
set key off
set arrow from graph 0, first 1 to graph 1, first 1 nohead front dashtype 2 lw 2 lc rgb "#c00000"
plot "$tmp/ratios" using 2:xtic(1) lc rgb "#3070b0", \
     "" using 0:2:(sprintf("%.2fx", \$2)) with labels offset 0,0.7 notitle
EOF
mv "$png.tmp" "$png"
echo "plot: wrote $png ($n benchmarks)"
