# lib.sh - shared helpers for the benchmark scripts (sourced, not run).
#
#   . "$(dirname "$0")/lib.sh"
#
# Sets ROOT (the repository), HERE (bench/), DATA (bench/data or $BENCH_DATA),
# BIN (seedpipe's programs: $BIN, default ROOT/bin) and puts BIN first on PATH.
# need_peer CMD PACKAGE   fail with the Debian package to install if CMD is missing
# need_tool NAME          fail if seedpipe's NAME is not built in BIN
# dataset ARGS...         sh bench/datasets.sh ARGS..., prints the path
# compare ARGS...         sh bench/compare.sh ARGS...
# map_setup NAME          what the scripts that map against razers3 share
#                         (h3.sh, map.sh): THREADS [2], REPS [3], RAZERS3,
#                         results (BENCH_RESULTS, else bench/RESULTS.md),
#                         work (DATA/NAME, made), and seqidx, seedfilt,
#                         extend and razers3 checked
# die MSG                 bench_die

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
DATA=${BENCH_DATA:-$HERE/data}
BIN=${BIN:-$ROOT/bin}
case $BIN in /*) ;; *) BIN=$ROOT/$BIN ;; esac
PATH=$BIN:$PATH
export BENCH_DATA="$DATA" BIN PATH

bench_name=$(basename "$0" .sh)
bench_die() { echo "bench/$bench_name: $*" >&2; exit 1; }
need_peer() {
	command -v "$1" > /dev/null 2>&1 || [ -x "$1" ] \
		|| bench_die "peer '$1' not found (apt-get install $2, or sh bench/deps.sh)"
}
need_tool() {
	[ -x "$BIN/$1" ] || bench_die "seedpipe's $1 not found in $BIN (run make, or set BIN=build-x/bin)"
}
dataset() { sh "$HERE/datasets.sh" "$@" || bench_die "cannot build data set: $*"; }
compare() { sh "$HERE/compare.sh" "$@" || bench_die "benchmark failed: $*"; }
# fsize FILE: size in bytes
fsize() { wc -c < "$1" | tr -d ' '; }
die() { bench_die "$*"; }
map_setup() {
	THREADS=${THREADS:-2}
	REPS=${REPS:-3}
	RAZERS3=${RAZERS3:-/usr/lib/seqan/bin/razers3}
	results=${BENCH_RESULTS:-$HERE/RESULTS.md}
	work=$DATA/$1
	need_tool seqidx; need_tool seedfilt; need_tool extend
	need_peer "$RAZERS3" seqan-apps
	mkdir -p "$work"
}
