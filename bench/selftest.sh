#!/bin/sh
# selftest.sh - check the benchmark machinery itself (compare.sh, plot.sh,
# schbath.c) against known answers, writing only to a scratch directory.
# Not a benchmark: run-all.sh skips it.  Prints TAP.
#
#   sh bench/selftest.sh

here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-selftest.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
export BENCH_RESULTS=$tmp/R.md BENCH_TSV=$tmp/r.tsv BENCH_DATA=$tmp/data
n=0 bad=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; bad=$((bad + 1)); fi; }
cmp_() { sh "$here/compare.sh" "$@"; }

cmp_ -n sleepy -r 3 -b 1000000 -N 'a | b' -- 'sleep 0.1' 'sleep 0.3' > "$tmp/out" 2>&1
ok $? "compare.sh runs two commands"
ratio=$(awk -F'\t' 'NR == 2 { print $10 }' "$tmp/r.tsv")
awk -v r="$ratio" 'BEGIN { exit !(r > 2.5 && r < 3.5) }'
ok $? "ratio of sleep 0.3 / sleep 0.1 is about 3 (got $ratio)"
mbps=$(awk -F'\t' 'NR == 2 { print $14 }' "$tmp/r.tsv")
awk -v r="$mbps" 'BEGIN { exit !(r > 8 && r < 10.5) }'
ok $? "throughput of 1 MB in 0.1 s is about 10 MB/s (got $mbps)"
grep -q '^| .* | `sleep 0.1` | `sleep 0.3` | .* | a \\| b; load [0-9.]* |$' "$tmp/R.md"
ok $? "RESULTS.md row holds the commands and the escaped note"

cmp_ -n other -r 1 -- 'true' > /dev/null 2>&1 && cmp_ -n sleepy -r 1 -- 'true' 'true' > /dev/null 2>&1
ok $? "single-command mode and a second row"
awk '/^## /{ s = $2 } /^\| 20/{ print s }' "$tmp/R.md" | tr '\n' ' ' > "$tmp/order"
[ "$(cat "$tmp/order")" = "sleepy sleepy other " ]
ok $? "rows land under their own heading (got: $(cat "$tmp/order"))"
[ "$(awk -F'\t' '$2 == "other" { print $7, $10 }' "$tmp/r.tsv")" = "- -" ]
ok $? "single-command row has no B and ratio -"

cp "$tmp/R.md" "$tmp/R.before"
cmp_ -n sleepy -r 1 -- 'true' 'echo oops >&2; exit 3' > "$tmp/out" 2>&1
[ $? = 1 ] && grep -q 'command B failed (exit 3)' "$tmp/out" && grep -q oops "$tmp/out" && cmp -s "$tmp/R.md" "$tmp/R.before"
ok $? "a failing command exits 1, shows its stderr, writes no row"
cmp_ -r 1 -- true > /dev/null 2>&1; [ $? = 2 ]
ok $? "missing -n is a usage error (exit 2)"
cmp_ -n x -r 0 -- true > /dev/null 2>&1; [ $? = 2 ]
ok $? "-r 0 is a usage error (exit 2)"

if command -v gnuplot > /dev/null 2>&1; then
	sh "$here/plot.sh" "$tmp/r.tsv" "$tmp/p.png" > /dev/null 2>&1 && [ "$(head -c 4 "$tmp/p.png" | od -An -c | tr -d ' ')" = '211PNG' ]
	ok $? "plot.sh writes a PNG"
fi

fa=$tmp/ref.fa
printf '>s1 x\nACGTACGGTTCAGNNNNNACGTTGCAAGT\n>s2\nacgtgcatgcaNTTGACGTACGTAGGCTAACG\n' > "$fa"
ref=$(awk '/^>/ { printf "%s", (NR > 1 ? "N" : ""); next } { printf "%s", toupper($0) }' "$fa")
fq=$(sh "$here/datasets.sh" schbath "$fa" 2000 8 2 7 2> /dev/null)
ok $? "datasets.sh schbath builds reads"
# Oracle: each read equals its named window (reverse-complemented on -),
# except at exactly the named positions.
awk -v ref="$ref" '
	function rc(s,  i, o, c) { o = ""; for (i = length(s); i > 0; --i) { c = substr(s, i, 1); o = o (c == "A" ? "T" : c == "C" ? "G" : c == "G" ? "C" : "A") } return o }
	NR % 4 == 1 { split(substr($1, 2), f, "_"); split(substr($2, 6), p, ","); name = $1 }
	NR % 4 == 2 {
		off = (f[2] == "s1" ? 0 : 30) + f[3]
		w = substr(ref, off, 8); if (f[4] == "-") w = rc(w)
		if (w ~ /N/) { print "# window with N: " name; bad++ }
		d = ""; for (i = 1; i <= 8; ++i) if (substr(w, i, 1) != substr($0, i, 1)) d = d (d == "" ? "" : ",") (i - 1)
		if (d != p[1] "," p[2]) { print "# mismatch " name " " d; bad++ }
		strand[f[4]]++
	}
	END { if (strand["+"] < 900 || strand["-"] < 900) bad++; exit bad > 0 }' "$fq"
ok $? "schbath reads match their named origin with exactly 2 substitutions"
again=$("$BENCH_DATA/.schbath" "$fa" 2000 8 2 7 | cksum)
[ "$again" = "$(cksum < "$fq")" ]
ok $? "schbath is deterministic for a seed"

echo "1..$n"
[ $bad = 0 ]
