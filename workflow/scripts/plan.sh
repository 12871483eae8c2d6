#!/bin/sh
# plan.sh INDEX READS OUT [SEEDFILT_OPTIONS] - pin the filter's settings for
# every job of the workflow (see workflow/Snakefile): with a bound (-E) and
# no method, seedfilt chooses -m, -e and -s from the index and the first
# read; that choice is made here once, on INDEX (partition 0) and the first
# read of READS (plain or gzip), and OUT gets the options with it appended
# ("-E 5% -m bpr -e 1 -s 15").  Options that name a method, or make no
# choice, are written as they are.  OUT is written atomically.
set -eu
idx=$1 reads=$2 out=$3
shift 3
opts=$*

pinned=$opts
case " $opts " in
*" -m "*|*" -m"[a-z]*) ;;
*)
	# the first record only: seedfilt peeks at the first read's length
	first=$(gzip -cdf "$reads" 2>/dev/null | awk 'NR == 1 { fq = /^@/ } fq && NR <= 4 { print; next } !fq && (NR == 1 || !/^>/) { print; next } { exit }')
	if [ -n "$first" ]; then
		# shellcheck disable=SC2086
		choice=$(printf '%s\n' "$first" | seedfilt -v -N -d none $opts -x "$idx" - 2>&1 >/dev/null |
			sed -n 's/.*: using \(-m [a-z]* -e [0-9]* -s [0-9]*\( -a\)*\)$/\1/p' | head -n 1)
		[ -z "$choice" ] || pinned="$opts $choice"
	fi
	;;
esac
printf '%s\n' "$pinned" >"$out.tmp"
mv "$out.tmp" "$out"
echo "plan.sh: seedfilt $pinned" >&2
