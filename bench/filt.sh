#!/bin/sh
# filt.sh - seedfilt benchmarks (issue 4).
#
#   sh bench/filt.sh nps   [REF]   neighborhoods per second of bpr, bs, ph (Tran's
#                                  Table 5.2 / Fig. 5.9): u = 4, l = 4, 8, 16,
#                                  e = 0..2 (bpr also 3), the matching stage
#                                  alone (seedfilt -N), one row per setting in
#                                  bench/RESULTS.md under "## filt-nps-dev"
#                                  (the older rows, filter stage only, are
#                                  under "## filt-nps")
#   sh bench/filt.sh reads [REF]   reads per second of the filter stage for 40 bp
#                                  reads with e = 1 ("## filt-rps"), and of the
#                                  whole command (bench/compare.sh, A only)
#   sh bench/filt.sh repeats [REF] issue 4's "repeated seeds must not make a read
#                                  slow out of proportion to its candidates"
#                                  ("## filt-repeats", bench/repeats.py): the
#                                  REP_NREADS reads are split into strata by
#                                  their candidates (0, 1, 2-9, 10-99,
#                                  100-999, >= 1000, the REP_TOP with the most
#                                  candidates, the REP_TOP with the largest
#                                  SeedBlock sums); the filter stage is timed
#                                  on REP_PER reads of each (whole, and the
#                                  matching stage alone with -N), median of
#                                  REP_REPS, for each of METHODS with e = 1,
#                                  next to a fitted model a + b x candidates;
#                                  then the REP_SLOW likeliest slowest reads
#                                  of each kind are timed alone (REP_COPIES
#                                  copies of one read)
#   sh bench/filt.sh all           nps and reads, on ecoli and chrx
#
# REF: ecoli or chrx (GRCh37 chrX, first 70 Mbp) [chrx]; Tran used the first
# 100 Mbp of chr1.  Environment: BIN (the seedpipe programs) [bin], DEV (the
# seedfilt -d device: none = the native C code, gpu, cpu = PoCL) [none],
# METHODS (of nps) [bpr bs ph], ES (the e of nps) [0 1 2 3], THREADS [2], NQ (query reads for nps) [2000; use 500000 or more for a GPU,
# whose fixed costs per batch are large], NQ_BPR (query reads for bpr,
# which reads every neighborhood of a SeedBlock) [NQ], BATCH (seedfilt -B, reads per
# batch) [seedfilt's default], NREADS (for reads/s) [1000000], READS (a reads
# file to use instead of generating NREADS; skips compare.sh; for repeats a
# 4-line FASTQ instead of REP_NREADS).  repeats: REP_NREADS [200000],
# REP_PER [20000], REP_REPS [3], REP_TOP [1000], REP_SLOW [5; 0 with a DEV
# other than none, whose per-read times would be a batch's fixed costs],
# REP_COPIES [200].
# SEEDPIPE_PROFILE=1 in the environment makes each OpenCL run print the
# device time of each kind of command and the host's matching time.
#
# nps = neighborhoods in the SeedBlocks of the patterns (general structure)
# / seconds, as the thesis counts it (section 5.1: for bs and ph it
# measures the index information processed, not the words compared), with
# three kinds of seconds:
#   filter s   seedfilt's own "filter" stage, wall clock: cutting patterns,
#              matching, transfers, host work (without -N also positions,
#              diagonals, sort).  Index loading is not in it.
#   T_dev s    (OpenCL only) Tran's T_dev: the device time of the commands
#              of the matching stage, from OpenCL event profiling
#              (SEEDPIPE_PROFILE=1): patterns host->device, buffer fills,
#              kernels, counts device->host.  Index upload is not in it.
#   kernels s  (OpenCL only) the kernels alone (count pass and, for bpr,
#              the per-unit sums; -N runs no write pass).
# For bs and ph the matching stage with -N is the approximate matching
# (the lookups and the count of positions per pattern), no position
# retrieval, as in the thesis (page 64, 79; section 5.1).

set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
BIN=${BIN:-$root/bin}
DEV=${DEV:-none}
THREADS=${THREADS:-2}
NQ=${NQ:-2000}
METHODS=${METHODS:-bpr bs ph}
BATCH=${BATCH:-}
bopt=${BATCH:+-B $BATCH}
NREADS=${NREADS:-1000000}
results=${BENCH_RESULTS:-$here/RESULTS.md}
data=${BENCH_DATA:-$here/data}
ixdir=$data/filt-bench
PATH=$BIN:$PATH
export PATH

die() { echo "filt.sh: $*" >&2; exit 1; }
# ref_of REF: a FASTA path, or a data set name of datasets.sh
ref_of() { if [ -r "$1" ]; then echo "$1"; else sh "$here/datasets.sh" "$1"; fi; }
mkdir -p "$ixdir"

# add_row SECTION ROW: insert ROW after the last table line of "## SECTION"
# (other benchmarks append their own sections after it)
add_row() {
	awk -v sec="## $1" -v row="$2" '
		$0 == sec { in_sec = 1 }
		in_sec && /^\|/ { seen = 1 }
		in_sec && seen && !/^\|/ { print row; in_sec = 0; done = 1 }
		{ print }
		END { if (in_sec && !done) print row }' "$results" > "$results.tmp$$" &&
	mv "$results.tmp$$" "$results"
}

machine() {
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1 | sed 's/ [0-9]*-Core.*//; s/(R)//g; s/(TM)//g')
	echo "$cpu, $(nproc) cpu"
}

# prof_sum TEXT KIND...: the device seconds of the profile lines of the
# given kinds (filt_ocl.c, SEEDPIPE_PROFILE=1), or - without a profile
prof_sum() {
	t=$1
	shift
	echo "$t" | awk -v kinds="$*" '
		BEGIN { n = split(kinds, k, ","); for (i = 1; i <= n; i++) want[k[i]] = 1 }
		/^seedfilt: profile: / && / commands / {
			s = $0; sub(/^seedfilt: profile: /, "", s)
			name = s; sub(/ +[0-9]+ commands .*/, "", name)
			split(substr(s, length(name) + 1), f, " ")
			if (name in want) { tot += f[3]; seen = 1 }
		}
		END { if (seen) printf "%.6f", tot; else print "-" }'
}

# rate N S: N / S, or - when S is not a positive number
rate_of() {
	awk -v n="$1" -v t="$2" 'BEGIN { if (t == "-" || t + 0 <= 0) print "-"; else printf "%.3g", n / t }'
}

# index REF L: build (once) the u = 4 index of REF with neighborhood length L
index() {
	ix=$ixdir/$(basename "$1" .fa)-u4-l$2.sx
	if [ ! -s "$ix" ]; then
		echo "filt.sh: building $ix" >&2
		seqidx -q -t "$THREADS" -u 4 -l "$2" -m general,reduced,block -o "$ix" "$1" || die "seqidx failed"
	fi
	echo "$ix"
}

# default_index REF TAG: build (once) the index of REF with seqidx's default u and l
default_index() {
	dix=$ixdir/$2-default.sx
	[ -s "$dix" ] || seqidx -q -t "$THREADS" -m general,reduced,block -o "$dix" "$1" ||
		die "seqidx failed"
	echo "$dix"
}

# section NAME TEXT HEAD: start "## NAME" in the results (once) with the
# paragraph TEXT and the table header HEAD (its separator row made from it)
section() {
	grep -q "^## $1\$" "$results" 2>/dev/null && return 0
	{
		echo
		echo "## $1"
		echo
		echo "$2"
		echo
		echo "$3"
		echo "$3" | sed 's/[^|][^|]*/---/g'
	} >> "$results"
}

# Tran's GTX 480 range for method M (Table 5.2, nps)
thesis() {
	case $1 in bpr) echo "1e7-1e10" ;; bs) echo "1e10-1e12" ;; ph) echo "1e11-1e12" ;; esac
}

# issue 4's goal for method M on the H100: 10x the top of the thesis's range
goal() {
	case $1 in bpr) echo "1e11" ;; bs|ph) echo "1e13" ;; esac
}

nps_header() {
	section filt-nps-dev \
		"Neighborhoods per second (nps) of seedfilt's matching stage (\`seedfilt -N\`: for bs and ph the approximate matching alone, no position retrieval), u = 4 on the reference below, next to the thesis's GTX 480 range (Table 5.2). nps = neighborhoods in the SeedBlocks of the patterns (general structure, Tran 2012 section 5.1) / seconds, three ways: **filter s** = seedfilt's whole filter stage, wall clock (host pattern cutting, transfers, kernels, host work); **T_dev s** = Tran's T_dev, the OpenCL event-profiled device time of the stage's commands (patterns host->device, fills, kernels, counts device->host; no index upload); **kernels s** = the event-profiled kernel time alone. T_dev and kernels are - for the native C code. Goal (issue 4, on the H100): 10x the top of the thesis's range. Written by bench/filt.sh." \
		"| date | machine | device | reference | method | l | e | patterns | neighborhoods | matches | filter s | nps (filter s) | T_dev s | nps (T_dev) | kernels s | nps (kernels) | thesis GPU nps | goal |"
}

nps() {
	ref=$(ref_of "${1:-chrx}")
	tag=$(basename "$ref" .fa)
	nps_header
	date=$(date -u +%Y-%m-%dT%H:%MZ)
	mach=$(machine)
	prof=
	[ "$DEV" != none ] && prof=1
	for l in 4 8 16; do
		ix=$(index "$ref" $l)
		for m in $METHODS; do
			nq=$NQ
			[ $m = bpr ] && nq=${NQ_BPR:-$NQ}
			q=$(sh "$here/datasets.sh" schbath "$ref" "$nq" $((4 + l)) 0 7)
			for e in ${ES:-0 1 2 3}; do
				[ $e -eq 3 ] && [ $m != bpr ] && continue
				[ $m = bpr ] && [ $e -ge $l ] && continue
				# shellcheck disable=SC2086
				err=$(SEEDPIPE_PROFILE=$prof seedfilt -v -N -x "$ix" -m $m -e $e -t "$THREADS" $bopt -d "$DEV" "$q" 2>&1 >/dev/null) ||
					{ echo "$err" >&2; die "seedfilt failed"; }
				dev=$(echo "$err" | sed -n 's/.*step [0-9]*, \(.*\), [0-9]* threads;.*/\1/p' | sed 's/ (.*//')
				pat=$(echo "$err" | sed -n 's/.*), \([0-9]*\) patterns (.*/\1/p' | head -1)
				mat=$(echo "$err" | sed -n 's/.* \([0-9]*\) matches, .*/\1/p' | head -1)
				nbs=$(echo "$err" | sed -n 's/^seedfilt: \([0-9]*\) neighborhoods in the SeedBlocks.*/\1/p' | head -1)
				fs=$(echo "$err" | sed -n 's/.*SeedBlocks searched in \([0-9.]*\) s:.*/\1/p' | head -1)
				[ -n "$pat" ] && [ -n "$nbs" ] && [ -n "$fs" ] || { echo "$err" >&2; die "cannot parse the summary"; }
				tdev=$(prof_sum "$err" "host->device,device->host,fill,count kernel,unit sum,scan,write kernel")
				tker=$(prof_sum "$err" "count kernel,unit sum,scan,write kernel")
				rate=$(rate_of "$nbs" "$fs")
				rdev=$(rate_of "$nbs" "$tdev")
				rker=$(rate_of "$nbs" "$tker")
				printf '%s\tl=%s\te=%s\t%s nps (filter %s s)\t%s nps (T_dev %s s)\t%s nps (kernels %s s)\t%s patterns\n' \
					$m $l $e "$rate" "$fs" "$rdev" "$tdev" "$rker" "$tker" "$pat"
				echo "$err" | grep 'profile:' >&2 || true
				add_row filt-nps-dev "| $date | $mach | $dev, $THREADS threads${BATCH:+, -B $BATCH} | $tag | $m | $l | $e | $pat | $nbs | $mat | $fs | $rate | $tdev | $rdev | $tker | $rker | $(thesis $m) | $(goal $m) |"
			done
		done
	done
}

rps_header() {
	section filt-rps \
		"Reads per second of seedfilt's filter stage alone (patterns, matching, positions, diagonals, sort; not reading, writing or loading the index: seedfilt -v), 40 bp reads with 1 substitution, e = 1, the index's default u. Written by bench/filt.sh." \
		"| date | machine | device | reference | index | method | reads | patterns | matches | candidates | filter s | reads/s |"
}

reads() {
	ref=$(ref_of "${1:-chrx}")
	tag=$(basename "$ref" .fa)
	ix=$(default_index "$ref" "$tag")
	rd=${READS:-$(sh "$here/datasets.sh" schbath "$ref" "$NREADS" 40 1 3)}
	rps_header
	date=$(date -u +%Y-%m-%dT%H:%MZ)
	mach=$(machine)
	u=$(seqidx --info "$ix" | awk '$1 == "weight" { print $2 }')
	l=$(seqidx --info "$ix" | awk '$1 == "l" { print $2 }')
	for m in ph bs bpr; do
		err=$(seedfilt -v -x "$ix" -m $m -e 1 -t "$THREADS" -d "$DEV" "$rd" 2>&1 >/dev/null) ||
			{ echo "$err" >&2; die "seedfilt failed"; }
		dev=$(echo "$err" | sed -n 's/.*step [0-9]*, \(.*\), [0-9]* threads;.*/\1/p' | sed 's/ (.*//')
		nr=$(echo "$err" | sed -n 's/^seedfilt: \([0-9]*\) reads (.*/\1/p' | head -1)
		pat=$(echo "$err" | sed -n 's/.*), \([0-9]*\) patterns (.*/\1/p' | head -1)
		mat=$(echo "$err" | sed -n 's/.* \([0-9]*\) matches, .*/\1/p' | head -1)
		cand=$(echo "$err" | sed -n 's/.* \([0-9]*\) candidates$/\1/p' | head -1)
		fs=$(echo "$err" | sed -n 's/.*SeedBlocks searched in \([0-9.]*\) s:.*/\1/p' | head -1)
		[ -n "$nr" ] && [ -n "$fs" ] || { echo "$err" >&2; die "cannot parse the summary"; }
		rate=$(awk -v n="$nr" -v t="$fs" 'BEGIN { printf "%.4g", (t > 0 ? n / t : 0) }')
		printf '%s\t%s\t%s reads/s\t(%s)\n' "$tag" $m "$rate" "$dev"
		add_row filt-rps "| $date | $mach | $dev, $THREADS threads | $tag | u=$u l=$l | $m | $nr | $pat | $mat | $cand | $fs | $rate |"
	done
	if [ -x /usr/bin/time ] && [ -z "${READS:-}" ]; then
		for m in ph bs bpr; do
			sh "$here/compare.sh" -n "filt-reads-$tag" -r 3 -w 1 -b "$rd" \
				-N "$NREADS x 40 bp reads with 1 substitution, e = 1, method $m, -d $DEV, -t $THREADS; whole command with index loading; reads/s = $NREADS / A s" \
				-- "seedfilt -q -x '$ix' -m $m -e 1 -t $THREADS -d $DEV '$rd' > /dev/null"
		done
	fi
}

repeats_header() {
	section filt-repeats \
		"Issue 4: do repeated seeds make a read slow out of proportion to its candidates? 40 bp reads with 1 substitution, e = 1, the index's default u, split into strata by their candidates (and the top reads by candidates and by SeedBlock neighborhoods, the sum over a read's patterns of its SeedBlock sizes, which bpr scans); each stratum's reads (a small stratum cycled) go through seedfilt -v, median of several runs: **us/read** = the filter stage's wall seconds / reads (threads share the work), **us (-N)** = the matching stage alone (no positions, diagonals, sort, records), **model us** = a + b x candidates per read fitted to the candidate strata (least squares on relative errors; the model row gives a and b in us); **time/model** above 3 would be out of proportion. The slowest-read row: that read's copies timed alone (cache-warm: a lower bound). Written by bench/filt.sh repeats (bench/repeats.py)." \
		"| date | machine | device | reference | method | stratum | reads | candidates/read | matches/read | SeedBlock nbs/read | us/read | us/read (-N) | us/(cand+1) | model us | time/model |"
}

repeats() {
	ref=$(ref_of "${1:-chrx}")
	tag=$(basename "$ref" .fa)
	ix=$(default_index "$ref" "$tag")
	rd=${READS:-$(sh "$here/datasets.sh" schbath "$ref" "${REP_NREADS:-200000}" 40 1 3)}
	slow=${REP_SLOW:-5}
	[ "$DEV" = none ] || slow=${REP_SLOW:-0}
	repeats_header
	date=$(date -u +%Y-%m-%dT%H:%MZ)
	mach=$(machine)
	rows=$ixdir/repeats-rows.$$
	: > "$rows"
	python3 "$here/repeats.py" -x "$ix" -r "$rd" --bin "$BIN" --methods "$METHODS" \
		-t "$THREADS" -d "$DEV" --per "${REP_PER:-20000}" --reps "${REP_REPS:-3}" \
		--top "${REP_TOP:-1000}" --slow "$slow" --copies "${REP_COPIES:-200}" \
		--work "$ixdir/repeats" --rows "$rows" --prefix "$date | $mach" --ref "$tag" ||
		{ rm -f "$rows"; die "repeats.py failed"; }
	while IFS= read -r row; do
		add_row filt-repeats "$row"
	done < "$rows"
	rm -f "$rows"
}

case ${1:-all} in
nps) nps "${2:-chrx}" ;;
reads) reads "${2:-chrx}" ;;
repeats) repeats "${2:-chrx}" ;;
all) nps chrx; reads ecoli; reads chrx ;;
*) echo "usage: sh bench/filt.sh [nps|reads|repeats|all] [ecoli|chrx]" >&2; exit 2 ;;
esac
