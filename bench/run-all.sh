#!/bin/sh
# run-all.sh - run every benchmark script in bench/ (make bench), then plot.
# The helpers (compare, plot, datasets, deps, lib, run-all, selftest) are not benchmarks.
# A failing benchmark is reported and the others still run; exit 1 if any failed.
#
#   sh bench/run-all.sh [NAME...]      only bench/NAME.sh when names are given

here=$(cd "$(dirname "$0")" && pwd)
failed=
if [ $# -gt 0 ]; then
	scripts=
	for n in "$@"; do scripts="$scripts $here/${n%.sh}.sh"; done
else
	scripts=$(ls "$here"/*.sh)
fi
for s in $scripts; do
	case $(basename "$s") in
	compare.sh|plot.sh|datasets.sh|deps.sh|lib.sh|run-all.sh|selftest.sh|gpu.sh|gpu-carry.sh|gpu-merge.sh) continue ;;
	esac
	[ -f "$s" ] || { echo "run-all: no benchmark '$s'" >&2; failed="$failed $s"; continue; }
	echo "== $(basename "$s")"
	sh "$s" || { echo "run-all: $(basename "$s") failed" >&2; failed="$failed $(basename "$s")"; }
done
sh "$here/plot.sh" || failed="$failed plot.sh"
if [ -n "$failed" ]; then
	echo "run-all: failed:$failed" >&2
	exit 1
fi
