#!/bin/bash
# lanes.sh - a long fuzzing campaign on a many-core machine: every libFuzzer
# target of BIN runs in LANES processes that share one corpus per target,
# for SECONDS (counted once the corpus is unpacked); a process that stops (a crash, a leak, a hang)
# is restarted on the same corpus while time is left, its exit status and
# input kept.  Hangs are inputs over 1 s (-timeout=1), inputs at most 64 KB.
#
#   bash fuzz/lanes.sh SECONDS BIN CORPUS.tgz OUT [LANES]
#
# BIN holds the targets of `make fuzz-build` (build-fuzz/bin); CORPUS.tgz
# a tar of corpus/TARGET/ (build-fuzz's corpus); LANES defaults to the
# online processors over the number of targets; LANES_FOR="T:N ..." gives
# target T N lanes instead (e.g. the slower parsers more).  Written to OUT: exits.txt
# (one line a process: target, lane, run, exit status, seconds since the
# start, its user+system CPU seconds), logs.tgz
# (each process's last 30 lines: libFuzzer's final statistics),
# corpus-new.tgz (the inputs added), art.tgz (crash, leak and timeout
# inputs), and a summary on stdout: per target the CPU seconds (the processes'
# CPU seconds as measured, user+system), executions, coverage, corpus size and artifacts.
set -u
[ $# -ge 4 ] || { echo "usage: lanes.sh SECONDS BIN CORPUS.tgz OUT [LANES]" >&2; exit 2; }
LIM=$1 F=$(cd "$2" && pwd) CORP=$3 OUT=$4
NP=$(nproc); NT=$(ls "$F" | wc -l)
LANES=${5:-$(( NP / NT ))}; [ "$LANES" -ge 1 ] || LANES=1
W=$(mktemp -d); mkdir -p "$W/art" "$W/logs" "$OUT"
trap 'rm -rf "$W"' EXIT
echo "nproc $NP targets $NT lanes $LANES $(grep -m1 'model name' /proc/cpuinfo)"
tar xzf "$CORP" -C "$W" || exit 1
(cd "$W" && find corpus -type f | sort > before)
T0=$(date +%s); END=$(( T0 + LIM ))
: > "$W/exits"
lane() { # TARGET K
	local t=$1 k=$2 n=0 left
	mkdir -p "$W/corpus/$t"
	while :; do
		left=$(( END - $(date +%s) ))
		[ $left -lt 5 ] && break
		n=$((n + 1))
		ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 /usr/bin/time -f '%U %S' -o "$W/logs/$t.$k.$n.cpu" \
			"$F/$t" -max_total_time=$left -timeout=1 \
			-rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 -artifact_prefix="$W/art/$t-$k-$n-" \
			"$W/corpus/$t" > "$W/logs/$t.$k.$n.log" 2>&1
		echo "$t $k $n exit $? at $(( $(date +%s) - T0 )) cpu $(awk '{ print $1 + $2 }' "$W/logs/$t.$k.$n.cpu" | tail -1)" >> "$W/exits"
	done
}
for t in $(ls "$F"); do
	n=$LANES
	for kv in ${LANES_FOR:-}; do [ "${kv%%:*}" = "$t" ] && n=${kv#*:}; done
	k=1; while [ $k -le "$n" ]; do lane "$t" $k & k=$((k + 1)); done
done
wait
echo "[$(( $(date +%s) - T0 )) s] done"
awk '{ print $1, "exit", $5 }' "$W/exits" | sort | uniq -c
for t in $(ls "$F"); do
	runs=$(cat "$W/logs/$t".*.log 2>/dev/null | sed -n 's/^stat::number_of_executed_units: *//p' | awk '{ s += $1 } END { print s }')
	cov=$(cat "$W/logs/$t".*.log 2>/dev/null | grep -o 'cov: [0-9]*' | sort -t' ' -k2 -n | tail -1)
	cpu=$(awk -v t="$t" '$1 == t { s += $9 } END { printf "%.0f", s }' "$W/exits")
	echo "$t: cpu_s $cpu, runs $runs, $cov, corpus $(ls "$W/corpus/$t" | wc -l), artifacts $(ls "$W/art" | grep -c "^$t-")"
done
grep -l "ERROR\|Timeout\|runtime error\|LeakSanitizer" "$W"/logs/*.log 2>/dev/null
(cd "$W" && find corpus -type f | sort > after && comm -13 before after > new &&
	tar czf "$OUT/corpus-new.tgz" -T new && tar czf "$OUT/art.tgz" art)
for f in "$W"/logs/*.log; do [ -f "$f" ] || continue; tail -30 "$f" > "$f.tail"; done
(cd "$W/logs" && tar czf "$OUT/logs.tgz" --files-from=/dev/null $(ls | grep "\.tail$"))
cp "$W/exits" "$OUT/exits.txt"
echo "[$(( $(date +%s) - T0 )) s] end; artifacts: $(ls "$W/art" | wc -l)"
