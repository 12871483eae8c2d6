#!/bin/sh
# map.sh - the whole mapper (seedfilt | extend) against RazerS 3 (issue 5).
#
#   sh bench/map.sh h3 [N] [SEED]   Schbath et al.'s H3 design as MAROSE used it:
#                                   N (200000) reads of 40 bp from E. coli 536,
#                                   exactly 3 substitutions each, half reverse-
#                                   complemented; seqidx -u 10 -l 10;
#                                   seedfilt -e 1 | extend -e 3 --no-gaps
#                                   against razers3 -i 92 -ng -m 100000
#   sh bench/map.sh h0 [N] [SEED]   the same with exact reads (extend -e 0)
#   sh bench/map.sh h3x [N] [SEED]  H3 with filter parameters seedfilt states
#                                   lossless for 3 substitutions in 40 bp:
#                                   seqidx -u 5 -l 5, seedfilt -e 0 (every
#                                   exact 10-mer), extend -e 3 --no-gaps
#   sh bench/map.sh h3g [N] [SEED]  h3x with indels allowed: extend -e 3 (no
#                                   --no-gaps) against razers3 -i 92 (no -ng);
#                                   a hit of one counts as found by the other
#                                   when the other has a hit of the same read
#                                   and strand within 3 positions (the same
#                                   locus, perhaps shifted by an indel)
#   sh bench/map.sh all             h3, h0, h3x and h3g
#
# For each design: the hit sets are compared (every read, every location:
# read name, strand, 1-based position) and summarised in bench/RESULTS.md
# under "## map-NAME-hits" (hits of each tool, common, only seedpipe, only
# razers3, and how many of razers3's extra hits had no seedfilt candidate
# within 3 positions, i.e. were lost by the filter, not by extend); then
# both commands are timed with bench/compare.sh ("## map-NAME"), and
# extend alone on the stored candidates ("## map-NAME-extend").
# Environment: BIN (the seedpipe programs) [bin], THREADS [2], REPS [3],
# RAZERS3 [/usr/lib/seqan/bin/razers3], BENCH_DATA, BENCH_RESULTS.

set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
BIN=${BIN:-$root/bin}
THREADS=${THREADS:-2}
REPS=${REPS:-3}
RAZERS3=${RAZERS3:-/usr/lib/seqan/bin/razers3}
results=${BENCH_RESULTS:-$here/RESULTS.md}
data=${BENCH_DATA:-$here/data}
work=$data/map
PATH=$BIN:$PATH
export PATH

die() { echo "map.sh: $*" >&2; exit 1; }
[ -x "$BIN/seedfilt" ] && [ -x "$BIN/extend" ] && [ -x "$BIN/seqidx" ] ||
	die "no seedpipe programs in '$BIN' (make, or set BIN)"
[ -x "$RAZERS3" ] || die "'$RAZERS3' not found (apt-get install seqan-apps)"
command -v samtools >/dev/null || die "samtools not found (apt-get install samtools)"
mkdir -p "$work"

# keys SAM: "name strand pos" of every mapped record, sorted, unique
keys() { samtools view -F 4 "$1" | awk -F'\t' '{ print $1, int($2 / 16) % 2, $4 }' | LC_ALL=C sort -u; }

# near A B: how many keys of B have a key of A with the same read and strand within 3
near() {
	awk 'NR == FNR { c[$1 " " $2 " " $3] = 1; next }
		{ hit = 0; for (d = -3; d <= 3; d++) if (($1 " " $2 " " ($3 + d)) in c) hit = 1; n += hit }
		END { print n + 0 }' "$1" "$2"
}

design() { # NAME SUBS N SEED U_L FILTER_E [GAPS]
	name=$1 subs=$2 n=$3 seed=$4 ul=$5 fe=$6 gaps=${7:-0}
	ng=--no-gaps rng=-ng
	[ "$gaps" = 1 ] && ng= rng=
	ref=$(sh "$here/datasets.sh" ecoli)
	reads=$(sh "$here/datasets.sh" schbath ecoli "$n" 40 "$subs" "$seed")
	ix=$work/ecoli-u${ul}l${ul}.sx
	[ -f "$ix" ] || seqidx -q -t "$THREADS" -u "$ul" -l "$ul" -o "$ix" "$ref"
	a=$work/$name.seedpipe.sam b=$work/$name.razers3.sam c=$work/$name.cands.sp
	cmd_a="seedfilt -q -t $THREADS -x $ix -e $fe $reads | extend -q -t $THREADS -e $subs $ng -o $a"
	cmd_b="$RAZERS3 -tc $THREADS -i $((100 - (subs * 100 + 39) / 40)) $rng -m 100000 -o $b $ref $reads"
	[ "$subs" = 0 ] && cmd_b="$RAZERS3 -tc $THREADS -i 100 $rng -m 100000 -o $b $ref $reads"
	sh -c "$cmd_a" || die "seedpipe failed"
	sh -c "$cmd_b >/dev/null" || die "razers3 failed"
	seedfilt -q -t "$THREADS" -x "$ix" -e "$fe" "$reads" >"$c"
	keys "$a" >"$work/$name.a.k"
	keys "$b" >"$work/$name.b.k"
	na=$(wc -l <"$work/$name.a.k") nb=$(wc -l <"$work/$name.b.k")
	both=$(LC_ALL=C comm -12 "$work/$name.a.k" "$work/$name.b.k" | wc -l)
	LC_ALL=C comm -13 "$work/$name.a.k" "$work/$name.b.k" >"$work/$name.onlyb.k"
	only_a=$((na - both)) only_b=$((nb - both))
	near_b=$(near "$work/$name.a.k" "$work/$name.b.k") near_a=$(near "$work/$name.b.k" "$work/$name.a.k")
	# razers3's hits with none of ours near: was there a seedfilt candidate?
	nocand=0
	if [ "$near_b" -lt "$nb" ]; then   # some of razers3's hits have none of ours near
		recview "$c" | awk -F'\t' 'NR > 1 { n = split($7, c, ",");
			for (i = 1; i <= n; i++) { split(c[i], f, ":"); print $2, (f[4] == "-"), f[3] + 1 } }' |
			LC_ALL=C sort -u >"$work/$name.cand.k"
		nocand=$(awk 'NR == FNR { c[$0] = 1; next }
			{ hit = 0; for (d = -3; d <= 3; d++) if (($1 " " $2 " " ($3 + d)) in c) hit = 1; if (!hit) n++ }
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
		printf '| | seedpipe | razers3 |\n|---|---|---|\n'
		printf '| command | `%s` | `%s` |\n' "$cmd_a" "$cmd_b"
		printf '| hits (read, strand, position) | %s | %s |\n' "$na" "$nb"
		printf '| reads mapped | %s | %s |\n' "$mapped_a" "$mapped_b"
		printf '| hits in common | %s | %s |\n' "$both" "$both"
		printf '| hits only here | %s | %s |\n' "$only_a" "$only_b"
		printf '| hits with a hit of the other within 3 positions | %s | %s |\n' "$near_a" "$near_b"
		printf '| of razers3-only hits: no seedfilt candidate within 3 | | %s |\n' "$nocand"
		printf '\nRecords checked: %s primary/unmapped records for %s reads.\n' "$reads_a" "$n"
	} >>"$results"
	echo "map.sh: $name: seedpipe $na hits, razers3 $nb, common $both, only seedpipe $only_a, only razers3 $only_b ($nocand without a candidate nearby); within 3: $near_a of seedpipe's, $near_b of razers3's" >&2
	sh "$here/compare.sh" -n "map-$name" -r "$REPS" -w 1 \
		-N "$n x 40 bp, $subs substitutions, E. coli, $THREADS threads" -- "$cmd_a" "$cmd_b >/dev/null"
	sh "$here/compare.sh" -n "map-$name-extend" -r "$REPS" -w 1 \
		-N "extend alone on the stored candidates ($n reads), $THREADS threads" -- \
		"extend -q -t $THREADS -e $subs $ng -o /dev/null $c"
	rm -f "$c"    # large with small seeds
}

n=${2:-200000}
seed=${3:-1}
case ${1:-} in
h3) design h3 3 "$n" "$seed" 10 1 ;;
h0) design h0 0 "$n" "$seed" 10 1 ;;
h3x) design h3x 3 "$n" "$seed" 5 0 ;;
h3g) design h3g 3 "$n" "$seed" 5 0 1 ;;
all) design h3 3 "$n" "$seed" 10 1; design h0 0 "$n" "$seed" 10 1; design h3x 3 "$n" "$seed" 5 0
	design h3g 3 "$n" "$seed" 5 0 1 ;;
*) echo "usage: sh bench/map.sh h3|h0|h3x|h3g|all [N] [SEED]" >&2; exit 2 ;;
esac
