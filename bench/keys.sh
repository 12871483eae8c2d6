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
#        SREPS [3] (strsort runs: the first writes a file in W for cmp, the rest > /dev/null),
#        GREPS [3] (GNU sort runs, the same way), CREPS [SREPS] (cat runs, whole-line keys,
#        > /dev/null), W [/tmp] (where the outputs go), PIN (a command prefix for both
#        tools, e.g. "taskset -c 0,1"), SORTMEM [8G] (GNU -S), BIN (a strsort binary
#        [strsort]), GCAP (cut GNU's first run at GCAP times strsort's first run, both
#        writing a file: a cut run is reported as ">LIMIT", with no cmp and no more GNU runs;
#        GREPS=0: no GNU sort), STOP_AT (epoch seconds: the keys left then are skipped)
# Every run is timed (wall from date +%s%N) under /usr/bin/time -f %M (peak RSS: the one
# process; strsort has no children); the medians are over all runs of a tool, so with
# SREPS = GREPS both have one run writing a file.  "file/file" is GNU's first run over
# strsort's first (both writing the same output to W); CPU s: median user + system seconds
# (a figure the machine's load disturbs less than wall time).  Runs alternate strsort, GNU, cat.

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

echo "| key | options | input MB | strsort s (median; runs) | GNU sort s (median; runs) | GNU/strsort | file/file | CPU s strsort / GNU | strsort peak RSS MB | RSS/input | GNU peak RSS MB | cat s | strsort/cat | identical | load |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
# tm FILE CMD...: run CMD (its stdout as given) under /usr/bin/time; "SECONDS RSS_KB CPU_S RC" in FILE
tm() {
	_f=$1; shift
	_t0=$(now)
	/usr/bin/time -f '%M %U %S' -o "$_f.m" "$@"
	_rc=$?
	_t1=$(now)
	echo "$(secs "$_t0" "$_t1") $(tail -1 "$_f.m" | awk '{ printf "%s %.2f", $1, $2 + $3 }') $_rc" > "$_f"
}
bin=${BIN:-strsort}
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
	if [ -n "${STOP_AT:-}" ] && [ "$(date +%s)" -ge "$STOP_AT" ]; then
		echo "| $k | skipped (time) |"
		continue
	fi
	opts=$(printf '%s ' "$@" | sed "s/$tab/TAB/; s|--random-source=[^ ]*|--random-source=FILE|; s/ $//")
	size=$(wc -c < "$f" | tr -d ' ')
	l0=$(load)
	o=$w/keys-o.$$
	st='' gt='' ct='' srss='' grss='' scpu='' gcpu='' gcut=0 same=-
	i=0
	while [ "$i" -lt "$sreps" ] || [ "$i" -lt "$greps" ] || { case $k in whole-*) [ "$i" -lt "$creps" ] ;; *) false ;; esac; }; do
		if [ "$i" -lt "$sreps" ]; then
			if [ "$i" = 0 ]; then
				tm "$o.t" $pin "$bin" -j "$threads" "$@" "$f" > "$o.s"
			else
				tm "$o.t" $pin "$bin" -j "$threads" "$@" "$f" > /dev/null
			fi
			read -r a b u r < "$o.t"
			[ "$r" = 0 ] || { echo "keys.sh: strsort failed on $k (status $r)" >&2; exit 1; }
			st="$st $a"
			srss="$srss $b"
			scpu="$scpu $u"
			[ "$i" = 0 ] && sfile=$a
		fi
		if [ "$i" -lt "$greps" ] && [ "$gcut" = 0 ]; then
			if [ "$i" = 0 ]; then
				if [ -n "${GCAP:-}" ]; then
					lim=$(awk -v a="$sfile" -v c="$GCAP" 'BEGIN { printf "%.1f", a * c < 0.2 ? 0.2 : a * c }')
					LC_ALL=C tm "$o.t" timeout "$lim" $pin sort -S "$mem" --parallel="$threads" "$@" "$f" > "$o.g"
				else
					LC_ALL=C tm "$o.t" $pin sort -S "$mem" --parallel="$threads" "$@" "$f" > "$o.g"
				fi
				read -r a b u r < "$o.t"
				if [ "$r" = 124 ]; then
					gcut=1
					gt=">$lim"
					same="- (GNU cut)"
				else
					[ "$r" = 0 ] || { echo "keys.sh: GNU sort failed on $k (status $r)" >&2; exit 1; }
					if cmp -s "$o.s" "$o.g"; then same=yes; else same=NO; fi
					gt="$a"
					grss="$b"
					gcpu="$u"
					gfile=$a
				fi
				rm -f "$o.s" "$o.g"
			else
				LC_ALL=C tm "$o.t" $pin sort -S "$mem" --parallel="$threads" "$@" "$f" > /dev/null
				read -r a b u r < "$o.t"
				gt="$gt $a"
				gcpu="$gcpu $u"
			fi
		fi
		case $k in whole-*)
			if [ "$i" -lt "$creps" ]; then
				tm "$o.t" $pin cat "$f" > /dev/null
				read -r a b u r < "$o.t"
				ct="$ct $a"
			fi ;;
		esac
		i=$((i + 1))
	done
	rm -f "$o.s" "$o.g"
	[ -n "$st" ] || { echo "keys.sh: SREPS must be 1 or more" >&2; exit 2; }
	sm=$(median $st)
	srm=$(median $srss)
	if [ "$greps" = 0 ]; then
		gc=- ratio=- ff=- grss=-
	elif [ "$gcut" = 1 ]; then
		gm=$gt gc="$gt (cut)" ratio=">$(awk -v a="$lim" -v b="$sm" 'BEGIN { printf "%.2f", a / b }')"
		ff=">$GCAP" grss=-
	else
		gm=$(median $gt)
		gc="$gm ($(echo $gt | tr ' ' ','))"
		ratio=$(awk -v a="$gm" -v b="$sm" 'BEGIN { printf "%.2f", a / b }')
		ff=$(awk -v a="$gfile" -v b="$sfile" 'BEGIN { printf "%.2f", a / b }')
		grss=$(awk -v m="$grss" 'BEGIN { printf "%.0f", m / 1024 }')
	fi
	cpu="$(median $scpu) / $( [ -n "$gcpu" ] && median $gcpu || echo -)"
	if [ -n "$ct" ]; then
		cm=$(median $ct)
		cc="$cm ($(echo $ct | tr ' ' ','))"
		cr=$(awk -v a="$sm" -v b="$cm" 'BEGIN { printf "%.2f", a / b }')
	else
		cc=- cr=-
	fi
	awk -v k="$k" -v o="$opts" -v mb="$size" -v sm="$sm" -v sr="$(echo $st | tr ' ' ',')" \
		-v gc="$gc" -v ratio="$ratio" -v ff="$ff" -v cpu="$cpu" -v srss="$srm" -v grss="$grss" \
		-v cc="$cc" -v cr="$cr" -v same="$same" -v l0="$l0" -v l1="$(load)" 'BEGIN {
		printf "| %s | `%s` | %.0f | %s (%s) | %s | %s | %s | %s | %.0f | %.2f | %s | %s | %s | %s | %s-%s |\n",
			k, o, mb / 1e6, sm, sr, gc, ratio, ff, cpu, srss / 1024, srss * 1024 / mb,
			grss, cc, cr, same, l0, l1 }'
done
rm -f "$rs" "$w/keys-o.$$"*
