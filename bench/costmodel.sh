#!/bin/sh
# costmodel.sh - the data behind seedfilt's cost model (common/filt_plan.c,
# man/seedfilt.1 CHOOSING A SETTING): for settings on several indexes, the
# model's prediction (patterns times the measured cost per pattern of the
# setting's (method, e) pair, as seedfilt -E -v states it) against the user
# CPU seconds of `seedfilt -t 1 | extend -t 1` on the same reads.
#
#   sh bench/costmodel.sh [N] [LEN] [SUBS]
#
# Reads: N (20000) Schbath reads of LEN (40) bases from E. coli with SUBS (3)
# substitutions.  Prints a TSV table on stdout: index, setting, patterns,
# candidates, model seconds, measured seconds (seedfilt + extend user CPU,
# median of REPS [3], less the same pipeline on no reads: loading the index).  The coefficients are fitted by eye to such tables;
# a loaded machine inflates the measured column (say so with the numbers).
# Environment: BIN [bin], REPS [3], BENCH_DATA.

set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
BIN=${BIN:-$root/bin}
REPS=${REPS:-3}
data=${BENCH_DATA:-$here/data}
work=$data/costmodel
PATH=$BIN:$PATH
export PATH
mkdir -p "$work"

n=${1:-20000}
len=${2:-40}
subs=${3:-3}
ref=$(sh "$here/datasets.sh" ecoli)
reads=$(sh "$here/datasets.sh" schbath ecoli "$n" "$len" "$subs" 1)

# user CPU seconds of the command $1 (sh -c), median of REPS
cpu() {
	i=0
	while [ $i -lt "$REPS" ]; do
		/usr/bin/time -f '%U' -o "$work/t" sh -c "$1" 2>/dev/null
		cat "$work/t"
		i=$((i + 1))
	done | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

printf 'index\tsetting\tpatterns\tcandidates\tmodel_s\tmeasured_s\tload_s\n'
for d in "default:" "u5l5:-u 5 -l 5" "u8l9:-u 8 -l 9 -m general" "u10l10:-u 10 -l 10"; do
	name=${d%%:*} ixargs=${d#*:}
	ix=$work/ecoli-$name.sx
	[ -f "$ix" ] || seqidx -q -t 2 $ixargs -o "$ix" "$ref"
	costs=$(head -n 1024 "$reads" | seedfilt -v -x "$ix" -E "$subs" -o /dev/null 2>&1 |
		sed -n 's/^seedfilt: -E: measured cost per pattern (microseconds, model): //p')
	for s in "-m bpr -e 1 -s 8" "-m bpr -e 2 -s 9" "-m bpr -e 12 -s 9" "-m ph -e 0 -s 10" \
			"-m ph -e 1 -s 20" "-m bs -e 1 -s 20" "-m ph -e 2 -s 20"; do
		seedfilt -v -t 1 -x "$ix" $s "$reads" -o "$work/c.sp" 2>"$work/v" || continue
		pat=$(sed -n 's/.* reads (.*), \([0-9]*\) patterns (.*/\1/p' "$work/v")
		cand=$(sed -n 's/.* \([0-9]*\) candidates$/\1/p' "$work/v")
		pair=$(echo "$s" | awk '{ print $2 "/" $4 }')
		c=$(echo "$costs" | tr ',' '\n' | sed -n "s|^$pair:||p")
		[ -n "$c" ] || continue
		meas=$(cpu "seedfilt -q -t 1 -x $ix $s $reads | extend -q -t 1 -e $subs -o /dev/null")
		load=$(cpu "seedfilt -q -t 1 -x $ix $s </dev/null | extend -q -t 1 -e $subs -o /dev/null")
		printf '%s\t%s\t%s\t%s\t%.3f\t%.3f\t%s\n' "$name" "$s" "$pat" "$cand" \
			"$(echo "$pat * $c / 1000000" | bc -l)" "$(echo "$meas - $load" | bc -l)" "$load"
	done
done
