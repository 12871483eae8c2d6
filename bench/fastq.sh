#!/bin/sh
# fastq.sh - FASTQ parsing: seedpipe's import of FASTQ into a reads stream
# (recview --import) against `seqtk seq -A` (FASTQ -> FASTA) on the same file,
# plain and gzip.  Data: FASTQ_READS (2,000,000) random reads of 100 bp.
# Throughput is FASTQ text bytes per second (the uncompressed size, for gzip too).
#
#   sh bench/fastq.sh            env: BIN, REPS [5], FASTQ_READS, BENCH_RESULTS, BENCH_TSV

set -eu
. "$(dirname "$0")/lib.sh"

need_peer seqtk seqtk
need_tool recview
n=${FASTQ_READS:-2000000}
reps=${REPS:-5}

fq=$(dataset fastq "$n" 100 1)
gz=$(dataset gz "$fq")
size=$(fsize "$fq")

# Time only an import whose output is a valid stream.
for f in "$fq" "$gz"; do
	recview --import "$f" | recview --check -q > /dev/null \
		|| bench_die "recview --import $f does not give a stream that verifies"
done
got=$(recview --import "$fq" | recview | grep -vc '^#')
[ "$got" = "$n" ] || bench_die "recview --import $fq gave $got records, not $n"

compare -n fastq-import -r "$reps" -w 1 -b "$size" -N "$n x 100 bp random FASTQ, 1 thread" -- \
	"recview --import $fq > /dev/null" "seqtk seq -A $fq > /dev/null"
compare -n fastq-import-gz -r "$reps" -w 1 -b "$size" -N "$n x 100 bp random FASTQ, gzip -6, MB/s of uncompressed FASTQ" -- \
	"recview --import $gz > /dev/null" "seqtk seq -A $gz > /dev/null"
