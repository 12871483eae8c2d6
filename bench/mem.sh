#!/bin/sh
# mem.sh - maximal exact matches: seedfilt -m mem against mummer -maxmatch
# (MUMmer 3.23, the Debian package), and on a GPU machine the device path
# against the native threads.
#
#   sh bench/mem.sh [REF...]     REF: ecoli, chrx (GRCh37 chrX, first 70 Mbp) or a
#                                FASTA path [ecoli chrx]
#
# Reads: NREADS mason reads of LEN bases (sh bench/datasets.sh mason REF N LEN 1;
# sequencing errors, some N), as FASTA for mummer.  For each REF and each L of
# LS the outputs of both programs are first compared byte for byte (any
# difference stops the script), then bench/compare.sh times them, one row per
# setting under "## mem-REF":
#   A = seedfilt -q -t T -d none -x IDX -m mem -L L -O mummer READS.fa > /dev/null
#   B = mummer -maxmatch -b -c -l L REF.fa READS.fa > /dev/null
# for T in THREADS (mummer is single-threaded).  IDX = seqidx -m fm -r 4 (the
# suffix array sampled every 4 rows: a repeat's thousands of matches are
# located in about 2 steps each instead of 16), built once (its build time
# goes into the note); one more row per REF times
# seqidx and seedfilt together against mummer (mummer builds its suffix tree
# on every run), L 20, the most threads.
#
# DEV=gpu (on the GPU machine: DEV=gpu GPU_BENCH=mem.sh bash bench/gpu.sh): the
# outputs of -d gpu and -d none are compared, then under "## mem-REF-gpu"
#   A = seedfilt -d gpu -t T ...   against   B = seedfilt -d none -t T ...
# with T the last of THREADS (the machine's 16 cores there), and with
# GPU_MUMMER=1 against mummer too (carry it: sh bench/gpu-carry.sh
# /usr/bin/mummer; a run on 1M reads takes minutes).
#
# Environment: BIN [bin], NREADS [100000; 1000000 with a DEV], CHRX_NREADS
# [20000; 200000 with a DEV] (on chrX, L 20 gives about 900 matches a read,
# 25 kB of text), LEN [100], LS [20 30 50], THREADS
# ["1 <cores>"], REPS [3], DEV [none], BENCH_RESULTS, BENCH_TSV, BENCH_DATA.
set -eu
. "$(dirname "$0")/lib.sh"

DEV=${DEV:-none}
if [ "$DEV" = none ]; then
	NREADS=${NREADS:-100000}
	CHRX_NREADS=${CHRX_NREADS:-20000}
else
	NREADS=${NREADS:-1000000}      # a device needs many reads to pass its fixed costs
	CHRX_NREADS=${CHRX_NREADS:-200000}
fi
LEN=${LEN:-100}
LS=${LS:-20 30 50}
THREADS=${THREADS:-1 $(nproc)}
REPS=${REPS:-3}
need_tool seedfilt
need_tool seqidx
have_mummer=0
if command -v mummer > /dev/null 2>&1; then
	have_mummer=1
elif [ "$DEV" = none ]; then
	need_peer mummer mummer
fi
tmax=
for t in $THREADS; do tmax=$t; done
work=$DATA/mem
mkdir -p "$work"

# fasta FQ OUT: the reads as FASTA (mummer reads no FASTQ)
fasta() {
	[ -s "$2" ] || awk 'NR % 4 == 1 { print ">" substr($1, 2) } NR % 4 == 2 { print }' "$1" > "$2.tmp$$" &&
		mv "$2.tmp$$" "$2"
}

# same WHAT FILE_A FILE_B: stop unless the outputs are identical
same() {
	cmp -s "$2" "$3" || bench_die "$1: the outputs differ ($2, $3)"
	echo "mem.sh: $1: identical output, $(grep -c -v '^>' "$2") matches" >&2
}

for ref in ${*:-ecoli chrx}; do
	fa=$(dataset "$ref")
	tag=$(basename "$fa" .fa)
	nr=$NREADS
	[ "$ref" = chrx ] && nr=$CHRX_NREADS
	fq=$(dataset mason "$ref" "$nr" "$LEN" 1)
	reads=$work/$(basename "$fq" .fq).fa
	fasta "$fq" "$reads"
	ix=$work/$tag-fm.sx
	if [ ! -s "$ix" ]; then
		t0=$(date +%s%N)
		seqidx -q -t "$tmax" -m fm -r 4 -o "$ix" "$fa" || bench_die "seqidx failed"
		echo $(( ($(date +%s%N) - t0) / 1000000 )) > "$ix.ms"
	fi
	ixs=$(awk '{ printf "%.1f", $1 / 1000 }' "$ix.ms" 2>/dev/null || echo "?")
	note="$nr mason ${LEN}-bp reads vs $tag, both strands, output checked identical; index: seqidx -m fm -r 4 -t $tmax, built once in $ixs s"
	for L in $LS; do
		sf="seedfilt -q -d none -x $ix -m mem -L $L -O mummer"
		mm="mummer -maxmatch -b -c -l $L $fa $reads"
		if [ "$DEV" = none ]; then
			$sf -t "$tmax" "$reads" > "$work/sf.txt"
			$mm > "$work/mm.txt" 2> /dev/null
			same "$tag L $L" "$work/sf.txt" "$work/mm.txt"
			for t in $THREADS; do
				compare -n "mem-$tag" -r "$REPS" -N "$note; L $L, seedfilt $t thread(s), mummer 1" \
					-- "$sf -t $t $reads > /dev/null" "$mm > /dev/null"
			done
		else
			sd="seedfilt -q -d $DEV -t $tmax -x $ix -m mem -L $L -O mummer $reads"
			$sd > "$work/sd.txt"
			$sf -t "$tmax" "$reads" > "$work/sf.txt"
			same "$tag L $L, -d $DEV and native" "$work/sd.txt" "$work/sf.txt"
			compare -n "mem-$tag-gpu" -r "$REPS" -w 1 \
				-N "$note; L $L, -d $DEV (A) against the native code (B), $tmax threads each" \
				-- "$sd > /dev/null" "$sf -t $tmax $reads > /dev/null"
			if [ $have_mummer = 1 ] && [ -n "${GPU_MUMMER:-}" ]; then
				$mm > "$work/mm.txt" 2> /dev/null
				same "$tag L $L, -d $DEV and mummer" "$work/sd.txt" "$work/mm.txt"
				compare -n "mem-$tag-gpu" -r "$REPS" \
					-N "$note; L $L, -d $DEV with $tmax threads (A) against mummer (B)" \
					-- "$sd > /dev/null" "$mm > /dev/null"
			fi
		fi
	done
	if [ "$DEV" = none ]; then
		tix=$work/$tag-fm-timed.sx
		compare -n "mem-$tag" -r "$REPS" \
			-N "$note; L 20, A builds the index too (seqidx -m fm -r 4, then seedfilt, $tmax threads), mummer 1 thread" \
			-- "seqidx -q -t $tmax -m fm -r 4 -o $tix $fa && seedfilt -q -d none -t $tmax -x $tix -m mem -L 20 -O mummer $reads > /dev/null" \
			"mummer -maxmatch -b -c -l 20 $fa $reads > /dev/null"
		rm -f "$tix"
	fi
done
