#!/bin/sh
# run.sh SECONDS TARGET... - run each libFuzzer target of build-fuzz/bin for
# SECONDS on its corpus (build-fuzz/corpus/TARGET, seeded once by seeds.sh)
# and print one line per target: runs, time, coverage, corpus, crashes.
# A crash, a leak or a hang (an input over 10 s) leaves its input in
# build-fuzz/artifacts/ and makes the exit status 1: minimise it, fix the
# cause, and add it to fuzz/regress/TARGET/ (replayed by make check).
set -u
t=$1
shift
dir=$(cd "$(dirname "$0")/.." && pwd)/build-fuzz
mkdir -p "$dir/artifacts" "$dir/logs"
if [ ! -d "$dir/corpus" ]; then
	sh "$(dirname "$0")/seeds.sh" "$dir/corpus.new" && mv "$dir/corpus.new" "$dir/corpus"
fi
rc=0
for f in "$@"; do
	mkdir -p "$dir/corpus/$f"
	regress=$(dirname "$0")/regress/$f
	ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
	"$dir/bin/$f" -max_total_time="$t" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
		-print_final_stats=1 -artifact_prefix="$dir/artifacts/$f-" \
		"$dir/corpus/$f" $( [ -d "$regress" ] && echo "$regress" ) >"$dir/logs/$f.log" 2>&1
	st=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/logs/$f.log")
	secs=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/logs/$f.log")
	cov=$(grep -o 'cov: [0-9]*' "$dir/logs/$f.log" | tail -1)
	printf '%-14s %8s runs %6s exec/s  %s  status %s\n' "$f" "${runs:-?}" "${secs:-?}" "${cov:-?}" "$st"
	if [ $st -ne 0 ]; then
		rc=1
		grep -m1 -A12 'ERROR\|fuzz:\|runtime error' "$dir/logs/$f.log" | sed 's/^/    /'
	fi
done
exit $rc
