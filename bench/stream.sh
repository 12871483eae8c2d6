#!/bin/sh
# stream.sh - the record-stream layer on one core: a ~1 GB reads stream
# (STREAM_BYTES) read, checksum-verified and written again by `recview --cat`,
# against `cat` of the same file (the I/O floor, so the ratio is below 1:
# it says what fraction of cat's speed the stream layer keeps).
# Both run pinned to CPU 0 with taskset when it is available.
#
#   sh bench/stream.sh           env: BIN, REPS [5], STREAM_BYTES [1000000000]

set -eu
. "$(dirname "$0")/lib.sh"

need_tool recview
want=${STREAM_BYTES:-1000000000}
reps=${REPS:-5}
pin=
command -v taskset > /dev/null 2>&1 && pin='taskset -c 0 '

# Size the FASTQ so that its stream is about STREAM_BYTES: measure the
# stream bytes per read on a sample first.
sample=$(dataset fastq 100000 100 2)
per=$(recview --import "$sample" | wc -c | awk '{ printf "%.0f", $1 / 100000 }')
[ "$per" -gt 0 ] || bench_die "recview --import wrote nothing"
n=$(awk -v w="$want" -v p="$per" 'BEGIN { printf "%d", w / p }')
rec=$DATA/stream-${n}x100.rec
avail=$(df -Pk "$DATA" | awk 'NR == 2 { printf "%.0f", $4 * 1024 }')
# A stream left by an older build may not verify any more: rebuild it then.
if [ -s "$rec" ] && ! recview --check -q "$rec" > /dev/null 2>&1; then
	echo "stream: $rec does not verify with this recview, rebuilding it" >&2
	rm -f "$rec"
fi
if [ ! -s "$rec" ]; then
	[ "$avail" -gt $((want * 3)) ] || bench_die "not enough disk in $DATA for about 3 x $want bytes"
	fq=$(dataset fastq "$n" 100 2)
	echo "stream: importing $fq" >&2
	recview --import "$fq" > "$rec.tmp$$" && mv "$rec.tmp$$" "$rec" || { rm -f "$rec.tmp$$"; bench_die "import failed"; }
	rm -f "$fq"    # only the stream is needed from now on
	recview --check -q "$rec" || bench_die "the new stream $rec does not verify"
fi
size=$(fsize "$rec")

compare -n stream-cat -r "$reps" -w 1 -b "$size" -N "reads stream of $n x 100 bp ($size bytes), 1 core, B = cat (I/O floor)" -- \
	"${pin}recview --cat $rec > /dev/null" "${pin}cat $rec > /dev/null"
