#!/bin/sh
# keys.sh - issue 17's table: strsort against GNU sort (LC_ALL=C) for every key type at one
# thread count, with peak RSS over the input and a byte-identity check; whole lines also
# against cat.  Prints one markdown row a key (no RESULTS.md edit: paste the rows by hand).
#
#   sh bench/keys.sh [KEY...]
#   KEY: whole-rand whole-mix k1 n h M g V f d i R  (default: all of them)
#     whole-rand  whole lines of RAND (sortgen rand/rand1g)
#     whole-mix   whole lines of MIX (sortgen mix/mix1g, a TAB-separated column per key type)
#     k1 -t TAB -k1,1   n -k2,2n   h -k3,3h   M -k4,4M   g -k5,5g   V -k6,6V
#     f -k1,1f   d -k1,1d   i -k1,1i   R -k1,1R --random-source (16 fixed bytes)   (all on MIX)
#   env: MIX, RAND (the inputs; required for the keys that use them), THREADS [2],
#        SREPS [3] (timed strsort runs, > /dev/null, after an untimed check run that writes
#        a file for cmp and gives the peak RSS), GREPS [3] (GNU sort runs; the first writes its
#        output to a file for cmp, the rest > /dev/null; the median is reported),
#        CREPS [SREPS] (cat runs, whole-line keys), W [/tmp] (where the outputs go),
#        PIN (a command prefix for both tools, e.g. "taskset -c 0,1"), SORTMEM [8G] (GNU -S)
# Runs alternate strsort, GNU sort, cat.  Wall times from date +%s%N; peak RSS from
# /usr/bin/time -f %M (the one process: strsort has no children).

set -u
threads=${THREADS:-2}
sreps=${SREPS:-3}
greps=${GREPS:-3}
creps=${CREPS:-$sreps}
w=${W:-/tmp}
pin=${PIN:-}
mem=${SORTMEM:-8G}
keys=${*:-whole-rand whole-mix k1 n h M g V f d i R}
tab=$(printf '\t')
rs=$w/keys-rs16.$$
printf 0123456789abcdef > "$rs"

now() { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%s", v[int((NR + 1) / 2)] }'; }
load() { cut -d' ' -f1 /proc/loadavg; }

echo "| key | options | input MB | strsort s (median; runs) | GNU sort s (median; runs) | GNU/strsort | strsort peak RSS MB | RSS/input | GNU peak RSS MB | cat s | strsort/cat | identical | load |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for k in $keys; do
	f=$MIX
	case $k in
	whole-rand) f=$RAND; set -- ;;
	whole-mix) set -- ;;
	k1) set -- -t "$tab" -k1,1 ;;
	n) set -- -t "$tab" -k2,2n ;;
	h) set -- -t "$tab" -k3,3h ;;
	M) set -- -t "$tab" -k4,4M ;;
	g) set -- -t "$tab" -k5,5g ;;
	V) set -- -t "$tab" -k6,6V ;;
	f) set -- -t "$tab" -k1,1f ;;
	d) set -- -t "$tab" -k1,1d ;;
	i) set -- -t "$tab" -k1,1i ;;
	R) set -- -t "$tab" -k1,1R --random-source="$rs" ;;
	*) echo "keys.sh: unknown key '$k'" >&2; exit 2 ;;
	esac
	opts=$(printf '%s ' "$@" | sed "s/$tab/TAB/; s|--random-source=[^ ]*|--random-source=FILE|; s/ $//")
	size=$(wc -c < "$f" | tr -d ' ')
	l0=$(load)
	# the check runs: outputs to files, peak RSS
	/usr/bin/time -f %M -o "$w/keys-srss.$$" $pin strsort -j "$threads" "$@" "$f" > "$w/keys-s.$$" \
		|| { echo "keys.sh: strsort failed on $k" >&2; exit 1; }
	t0=$(now)
	LC_ALL=C /usr/bin/time -f %M -o "$w/keys-grss.$$" $pin sort -S "$mem" --parallel="$threads" "$@" "$f" > "$w/keys-g.$$"
	t1=$(now)
	gt=$(secs "$t0" "$t1")
	if cmp -s "$w/keys-s.$$" "$w/keys-g.$$"; then same=yes; else same=NO; fi
	rm -f "$w/keys-s.$$" "$w/keys-g.$$"
	st='' ct=''
	i=0
	while [ "$i" -lt "$sreps" ] || [ "$i" -lt "$greps" ] || { case $k in whole-*) [ "$i" -lt "$creps" ] ;; *) false ;; esac; }; do
		if [ "$i" -lt "$sreps" ]; then
			t0=$(now); $pin strsort -j "$threads" "$@" "$f" > /dev/null; t1=$(now)
			st="$st $(secs "$t0" "$t1")"
		fi
		if [ "$i" -gt 0 ] && [ "$i" -lt "$greps" ]; then
			t0=$(now); LC_ALL=C $pin sort -S "$mem" --parallel="$threads" "$@" "$f" > /dev/null; t1=$(now)
			gt="$gt $(secs "$t0" "$t1")"
		fi
		case $k in whole-*)
			if [ "$i" -lt "$creps" ]; then
				t0=$(now); $pin cat "$f" > /dev/null; t1=$(now)
				ct="$ct $(secs "$t0" "$t1")"
			fi ;;
		esac
		i=$((i + 1))
	done
	sm=$(median $st)
	gm=$(median $gt)
	srss=$(cat "$w/keys-srss.$$")
	grss=$(cat "$w/keys-grss.$$")
	if [ -n "$ct" ]; then
		cm=$(median $ct)
		cc="$cm ($(echo $ct | tr ' ' ','))"
		cr=$(awk -v a="$sm" -v b="$cm" 'BEGIN { printf "%.2f", a / b }')
	else
		cc=- cr=-
	fi
	awk -v k="$k" -v o="$opts" -v mb="$size" -v sm="$sm" -v sr="$(echo $st | tr ' ' ',')" \
		-v gm="$gm" -v gr="$(echo $gt | tr ' ' ',')" -v srss="$srss" -v grss="$grss" \
		-v cc="$cc" -v cr="$cr" -v same="$same" -v l0="$l0" -v l1="$(load)" 'BEGIN {
		printf "| %s | `%s` | %.0f | %s (%s) | %s (%s) | %.2f | %.0f | %.2f | %.0f | %s | %s | %s | %s-%s |\n",
			k, o, mb / 1e6, sm, sr, gm, gr, gm / sm, srss / 1024, srss * 1024 / mb,
			grss / 1024, cc, cr, same, l0, l1 }'
done
rm -f "$rs" "$w/keys-srss.$$" "$w/keys-grss.$$"
