#!/bin/sh
# map.sh - the whole mapper (seedfilt | extend) against RazerS 3 and Yara (issue 5).
#
#   sh bench/map.sh DESIGN [N] [SEED]
#
# Designs (each with filter parameters that `seedfilt -v` states lossless
# for the error bound; N reads, SEED for the simulator):
#   h3      Schbath et al.'s H3 as MAROSE used it: N (200000) reads of 40 bp
#           from E. coli 536 with exactly 3 substitutions, half reverse-
#           complemented; seqidx -u 10 -l 10; seedfilt -a -e 1 -s 20 (two
#           disjoint 20-base patterns per strand, one error anywhere in each:
#           lossless for 3 substitutions); extend -e 3 --no-gaps;
#           against razers3 -i 92 -ng -m 100000
#   h0      the same with exact reads: seedfilt -e 0 -s 20, extend -e 0,
#           razers3 -i 100 -ng
#   h3g     H3 with indels allowed: seqidx -u 5 -l 5, seedfilt -e 0 -s 10
#           (four disjoint 10-mers per strand: lossless for 3 edit
#           operations), extend -e 3, against razers3 -i 92
#   mason   N (200000) Illumina reads of 100 bp simulated by mason_simulator
#           from E. coli; seqidx -u 10 -l 6, seedfilt -e 0 -s 16 (six
#           disjoint 16-mers per strand: lossless for 5 edit operations),
#           extend -e 5, against razers3 -i 95 -m 100000 and yara_mapper -e 5
#   chrx    the same on human chrX, first 70 Mbp, where repeats dominate:
#           seqidx -u 12 -l 15, seedfilt -m bpr -e 1 -s 14 (six chained
#           patterns: a 12-base exact seed, then 14 bases within 1 edit
#           operation; lossless for 5 edit operations, see seedfilt(1)
#           SENSITIVITY, with far fewer repeat candidates than exact 16-mers)
#   all     h3, h0, h3g and mason (chrx takes minutes: razers3 alone ~2 min)
#
# For each design the hit sets are compared (every read, every location:
# read name, strand, 1-based position) and summarised in bench/RESULTS.md
# under "## map-NAME-hits" (hits of each tool, common, only seedpipe, only
# razers3, and how many razers3 hits had none of ours within the error bound
# A positions -- the same locus shifted by an indel -- and of those, how many
# had no seedfilt candidate nearby, i.e. were lost by the filter; and of
# razers3's hits that overlap none of ours, how many end outside every
# Rabema locus -- maximal run of ends within A, by a full DP in
# bench/locus.py -- that holds one of our hits: the hits truly lost); then the
# pipeline is timed against razers3 with bench/compare.sh ("## map-NAME"),
# against yara_mapper where the design names it ("## map-NAME-yara"; its
# index is built beforehand and not timed, like ours), and extend alone on
# the stored candidates ("## map-NAME-extend").
# ONCE=1 (for long runs, e.g. the GPU machine's 1M reads) times each command
# once, cold, and takes the hits from those runs; no yara or extend-alone rows.
# Environment: BIN (the seedpipe programs) [bin], THREADS [2], REPS [3],
# RAZERS3, YARA_MAPPER, YARA_INDEXER [/usr/lib/seqan/bin/...], BENCH_DATA,
# BENCH_RESULTS.

set -eu

. "$(dirname "$0")/lib.sh"
here=$HERE root=$ROOT
map_setup map
ONCE=${ONCE:-0}
YARA_MAPPER=${YARA_MAPPER:-/usr/lib/seqan/bin/yara_mapper}
YARA_INDEXER=${YARA_INDEXER:-/usr/lib/seqan/bin/yara_indexer}
need_peer samtools samtools

# keys SAM: "name strand pos" of every mapped record, sorted, unique
keys() { cut -d' ' -f1-3 "$1" | LC_ALL=C sort -u; }

# ends SAM: "name strand pos end" of every mapped record (end: last reference
# base, from the CIGAR), sorted, unique
ends() {
	samtools view -F 4 "$1" | awk -F'\t' '{ c = $6; span = 0
		while (match(c, /^[0-9]+[MIDNSHP=X]/)) { k = substr(c, RLENGTH, 1); v = substr(c, 1, RLENGTH - 1) + 0
			if (k ~ /[MDN=X]/) span += v; c = substr(c, RLENGTH + 1) }
		print $1, int($2 / 16) % 2, $4, $4 + span - 1 }' | LC_ALL=C sort -u
}

# near TOL A B: how many records of B (ends) have a record of A with the same
# read and strand whose first or last reference base is within TOL: the same
# locus, perhaps shifted by an indel (a gap at one end moves the start only)
near() {
	awk -v t="$1" 'NR == FNR { s[$1 " " $2 " " $3] = 1; e[$1 " " $2 " " $4] = 1; next }
		{ hit = 0; for (d = -t; d <= t; d++) if (($1 " " $2 " " ($3 + d)) in s || ($1 " " $2 " " ($4 + d)) in e) hit = 1; n += hit }
		END { print n + 0 }' "$2" "$3"
}

# design NAME REF READS SEQIDX_ARGS SEEDFILT_ARGS EXTEND_ARGS RAZERS3_ARGS TOL [YARA_ARGS]
design() {
	name=$1 ref=$2 reads=$3 ixargs=$4 fargs=$5 eargs=$6 rargs=$7 tol=$8 yargs=${9:-}
	n=$(awk 'END { print NR / 4 }' "$reads")
	ix=$work/$(basename "${ref%.fa}")$(echo "$ixargs" | tr -d ' -').sx
	[ -f "$ix" ] || seqidx -q -t "$THREADS" $ixargs -o "$ix" "$ref"
	a=$work/$name.seedpipe.sam b=$work/$name.razers3.sam c=$work/$name.cands.sp
	sens=$(head -n 4 "$reads" | seedfilt -v -x "$ix" $fargs -o /dev/null 2>&1 |
		sed -n 's/^seedfilt: sensitivity: //p')
	cmd_a="seedfilt -q -t $THREADS -x $ix $fargs $reads | extend -q -t $THREADS $eargs -o $a"
	cmd_b="$RAZERS3 -tc $THREADS $rargs -m 100000 -o $b $ref $reads"
	if [ "$ONCE" = 1 ]; then   # one timed run of each makes the outputs too
		sh "$here/compare.sh" -n "map-$name" -r 1 -w 0 \
			-N "$n reads ($(basename "$reads")), $THREADS threads; filter: $sens" -- "$cmd_a" "$cmd_b >/dev/null"
	else
		sh -c "$cmd_a" || die "seedpipe failed"
		sh -c "$cmd_b >/dev/null" || die "razers3 failed"
	fi
	[ "$ONCE" = 1 ] || seedfilt -q -t "$THREADS" -x "$ix" $fargs "$reads" >"$c"
	ends "$a" >"$work/$name.a.e"
	ends "$b" >"$work/$name.b.e"
	keys "$work/$name.a.e" >"$work/$name.a.k"
	keys "$work/$name.b.e" >"$work/$name.b.k"
	na=$(wc -l <"$work/$name.a.k") nb=$(wc -l <"$work/$name.b.k")
	both=$(LC_ALL=C comm -12 "$work/$name.a.k" "$work/$name.b.k" | wc -l)
	LC_ALL=C comm -13 "$work/$name.a.k" "$work/$name.b.k" >"$work/$name.onlyb.k"
	only_a=$((na - both)) only_b=$((nb - both))
	near_b=$(near "$tol" "$work/$name.a.e" "$work/$name.b.e")
	near_a=$(near "$tol" "$work/$name.b.e" "$work/$name.a.e")
	# razers3's hits that overlap none of ours (same read and strand): in a
	# tandem repeat razers3 reports shifted copies of one locus that Rabema
	# (and extend) count once; those overlap ours.  What overlaps nothing is
	# lost -- and how many of those reads have an N
	lost=$(awk 'NR == FNR { k = $1 " " $2; iv[k] = iv[k] " " $3 ":" $4; next }
		{ k = $1 " " $2; n = split(iv[k], a, " "); hit = 0
		  for (i = 1; i <= n; i++) { split(a[i], b, ":"); if (b[1] <= $4 && $3 <= b[2]) hit = 1 }
		  if (!hit) print }' "$work/$name.a.e" "$work/$name.b.e")
	n_lost=$(printf '%s' "$lost" | grep -c . || true)
	n_lost_n=0 n_lost_dp=0
	if [ "$n_lost" -gt 0 ]; then
		n_lost_n=$(printf '%s\n' "$lost" | awk 'NR == FNR { l[$1]++; next }
			FNR % 4 == 1 { r = substr($1, 2) } FNR % 4 == 2 && (r in l) && /N/ { n += l[r] }
			END { print n + 0 }' - "$reads")
	fi
	# razers3's hits with none of ours within TOL: how many end outside
	# every Rabema locus (maximal run of ends within the bound, by a full
	# DP) that holds one of our hits -- the hits truly lost
	if [ "$near_b" -lt "$nb" ]; then
		awk -v t="$tol" 'NR == FNR { s[$1 " " $2 " " $3] = 1; e[$1 " " $2 " " $4] = 1; next }
			{ hit = 0; for (d = -t; d <= t; d++) if (($1 " " $2 " " ($3 + d)) in s || ($1 " " $2 " " ($4 + d)) in e) hit = 1
			  if (!hit) print }' "$work/$name.a.e" "$work/$name.b.e" >"$work/$name.far.e"
		n_lost_dp=$(python3 "$here/locus.py" "$tol" "$ref" "$reads" "$work/$name.a.e" \
			"$work/$name.far.e") || n_lost_dp=-
	fi
	# razers3's hits with none of ours near: was there a seedfilt candidate?
	nocand=0
	[ "$ONCE" = 1 ] && nocand=-    # the candidate keys of 1M reads do not fit awk
	if [ "$near_b" -lt "$nb" ] && [ "$ONCE" != 1 ]; then
		recview "$c" | awk -F'\t' 'NR > 1 { n = split($7, c, ",");
			for (i = 1; i <= n; i++) { split(c[i], f, ":"); print $2, (f[4] == "-"), f[3] + 1 } }' |
			LC_ALL=C sort -u >"$work/$name.cand.k"
		nocand=$(awk -v t="$tol" 'NR == FNR { c[$0] = 1; next }
			{ hit = 0; for (d = -t; d <= t; d++) if (($1 " " $2 " " ($3 + d)) in c) hit = 1; if (!hit) n++ }
			END { print n + 0 }' "$work/$name.cand.k" "$work/$name.onlyb.k")
		rm -f "$work/$name.cand.k"
	fi
	reads_a=$(samtools view -c -F 256 "$a")
	mapped_a=$(samtools view -c -F 260 "$a") mapped_b=$(samtools view -F 4 "$b" | cut -f1 | sort -u | wc -l)
	# the hits table replaces the previous one of this design
	if [ -f "$results" ]; then
		awk -v h="## map-$name-hits" '$0 == h { skip = 1; next } skip && /^## / { skip = 0 }
			!skip' "$results" >"$results.tmp$$" && mv "$results.tmp$$" "$results"
	fi
	{
		printf '\n## map-%s-hits\n\n' "$name"
		printf '%s, %s reads (%s), commit %s\n\n' "$(date -u +%Y-%m-%dT%H:%MZ)" "$n" \
			"$(basename "$reads")" "$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo -)"
		printf 'seedfilt states: %s\n\n' "$sens"
		printf '| | seedpipe | razers3 |\n|---|---|---|\n'
		printf '| command | `%s` | `%s` |\n' "$cmd_a" "$cmd_b"
		printf '| hits (read, strand, position) | %s | %s |\n' "$na" "$nb"
		printf '| reads mapped | %s | %s |\n' "$mapped_a" "$mapped_b"
		printf '| hits in common | %s | %s |\n' "$both" "$both"
		printf '| hits only here | %s | %s |\n' "$only_a" "$only_b"
		printf '| hits with a hit of the other whose first or last base is within %s | %s | %s |\n' "$tol" "$near_a" "$near_b"
		printf '| of razers3 hits with none of ours within %s: no seedfilt candidate either | | %s |\n' "$tol" "$nocand"
		printf '| hits overlapping none of the other'"'"'s (same read and strand) | | %s (%s in reads with an N) |\n' "$n_lost" "$n_lost_n"
		printf '| of razers3 hits with none of ours within %s: ending outside every locus (maximal run of ends within %s, full DP: bench/locus.py) that holds one of ours, i.e. lost | | %s |\n' "$tol" "$tol" "$n_lost_dp"
		printf '\nRecords checked: %s primary/unmapped records for %s reads.\n' "$reads_a" "$n"
	} >>"$results"
	echo "map.sh: $name: seedpipe $na hits, razers3 $nb, common $both, only seedpipe $only_a, only razers3 $only_b ($nocand without a candidate nearby); within $tol: $near_a of seedpipe's, $near_b of razers3's" >&2
	[ "$ONCE" = 1 ] || sh "$here/compare.sh" -n "map-$name" -r "$REPS" -w 1 \
		-N "$n reads ($(basename "$reads")), $THREADS threads; filter: $sens" -- "$cmd_a" "$cmd_b >/dev/null"
	if [ -n "$yargs" ] && [ "$ONCE" != 1 ]; then
		[ -x "$YARA_MAPPER" ] || die "'$YARA_MAPPER' not found (apt-get install seqan-apps)"
		yix=$work/$(basename "${ref%.fa}").yara
		[ -f "$yix.txt.size" ] || "$YARA_INDEXER" -o "$yix" "$ref" >/dev/null || die "yara_indexer failed"
		sh "$here/compare.sh" -n "map-$name-yara" -r "$REPS" -w 1 \
			-N "$n reads ($(basename "$reads")), $THREADS threads, both indexes prebuilt" -- \
			"$cmd_a" "$YARA_MAPPER -t $THREADS $yargs -o $work/$name.yara.sam $yix $reads >/dev/null"
	fi
	[ "$ONCE" = 1 ] || sh "$here/compare.sh" -n "map-$name-extend" -r "$REPS" -w 1 \
		-N "extend alone on the stored candidates ($n reads), $THREADS threads" -- \
		"extend -q -t $THREADS $eargs -o /dev/null $c"
	rm -f "$c"
}

n=${2:-200000}
seed=${3:-1}
ecoli() { sh "$here/datasets.sh" ecoli; }
schbath() { sh "$here/datasets.sh" schbath ecoli "$n" 40 "$1" "$seed"; }
mason() { sh "$here/datasets.sh" mason "$1" "$n" 100 "$seed"; }
run() {
	case $1 in
	h3) design h3 "$(ecoli)" "$(schbath 3)" "-u 10 -l 10" "-a -e 1 -s 20" "-e 3 --no-gaps" "-i 92 -ng" 0 ;;
	h0) design h0 "$(ecoli)" "$(schbath 0)" "-u 10 -l 10" "-e 0 -s 20" "-e 0" "-i 100 -ng" 0 ;;
	h3g) design h3g "$(ecoli)" "$(schbath 3)" "-u 5 -l 5" "-e 0 -s 10" "-e 3" "-i 92" 3 ;;
	mason) design mason "$(ecoli)" "$(mason ecoli)" "-u 10 -l 6" "-e 0 -s 16" "-e 5" "-i 95" 5 "-e 5" ;;
	chrx) design chrx "$(sh "$here/datasets.sh" chrx)" "$(mason chrx)" "-u 12 -l 15 -m general" "-m bpr -e 1 -s 14" "-e 5" "-i 95" 5 "-e 5" ;;
	*) echo "usage: sh bench/map.sh h3|h0|h3g|mason|chrx|all [N] [SEED]" >&2; exit 2 ;;
	esac
}
case ${1:-} in
all) for d in h3 h0 h3g mason; do run $d; done ;;
*) run "${1:-}" ;;
esac
