#!/bin/sh
# pairs.sh - paired-end mapping (issue 16): seedpipe against yara (-e 5,
# default and full sensitivity) and bwa mem on mason_simulator pairs.
#
#   sh bench/pairs.sh [N] [LEN] [THREADS] [SEED]
#
# N (20000) pairs of LEN (100) bp simulated by mason_simulator from E. coli
# (NC_008253, its default fragment sizes); each mapper on THREADS (all
# cores) threads: wall time of the mapping (indexes built before, not
# timed), properly paired reads (samtools flagstat), and pairs found
# against the simulator's truth: a pair counts when a record of mate 1
# with flag 2 (primary or secondary) starts within 10 bases of mate 1's
# simulated position on its sequence and strand.  Results go to stdout as
# a table; put them into bench/RESULTS.md by hand (## pairs-ecoli-LEN).
#
# seedpipe: seqidx (defaults), seedfilt R1 R2 (its default bound, 5% of the
# read length) | extend (every concordant pair within the bound).
# yara_mapper -e 5 -t THREADS (-y full for full sensitivity); bwa mem -t.
set -e
. "$(dirname "$0")/lib.sh"
N=${1:-20000}
LEN=${2:-100}
T=${3:-$(nproc)}
SEED=${4:-1}
MASON=${MASON:-/usr/lib/seqan/bin/mason_simulator}
ECOLI_GZ=${ECOLI_GZ:-/usr/share/doc/bowtie/examples/genomes/NC_008253.fna.gz}
need_tool seqidx; need_tool seedfilt; need_tool extend
need_peer samtools samtools; need_peer "$MASON" seqan-apps
need_peer yara_mapper yara; need_peer bwa bwa
W=${BENCH_TMP:-$(mktemp -d)}
cd "$W"
[ -s ref.fa ] || zcat "$ECOLI_GZ" >ref.fa
"$MASON" -q -ir ref.fa -n "$N" --seed "$SEED" --illumina-read-length "$LEN" \
	-o r1.fq -or r2.fq -oa truth.sam >/dev/null 2>&1
seqidx -q ref.fa >ref.sx
yara_indexer -o yidx ref.fa >/dev/null 2>&1
bwa index ref.fa >/dev/null 2>&1

now() { date +%s.%N; }
# found SAM: pairs of the truth found (mate 1 records with flag 2 near the truth)
found() {
	samtools view -F 4 -f 64 truth.sam | awk -F'\t' '{ print $1 "\t" $3 "\t" $4 "\t" and($2, 16) }' >t.txt
	samtools view -f 66 "$1" | awk -F'\t' '{ n = $1; sub(/\/1$/, "", n); print n "\t" $3 "\t" $4 "\t" and($2, 16) }' |
	awk -F'\t' 'NR == FNR { t[$1] = $2 "\t" $3 "\t" $4; next }
		($1 in t) && !($1 in ok) { split(t[$1], f, "\t")
			if (f[1] == $2 && f[3] == $4 && $3 - f[2] <= 10 && f[2] - $3 <= 10) { ok[$1] = 1; n++ } }
		END { print n + 0 }' t.txt -
}
row() {   # NAME SECONDS SAM
	pp=$(samtools flagstat "$3" | sed -n 's/^\([0-9]*\) + 0 properly paired.*/\1/p')
	printf '%-22s %8.2f s %10s properly paired reads %8s of %s truth pairs\n' "$1" "$2" "$pp" \
		"$(found "$3")" "$N"
}

t0=$(now); seedfilt -q -t "$T" -x ref.sx r1.fq r2.fq | extend -t "$T" >sp.sam 2>sp.err; t1=$(now)
row seedpipe "$(echo "$t1 - $t0" | bc)" sp.sam
grep "pairs," sp.err | sed 's/^/  /'
t0=$(now); yara_mapper -e 5 -t "$T" -o y.sam yidx r1.fq r2.fq >/dev/null 2>&1; t1=$(now)
row "yara -e 5" "$(echo "$t1 - $t0" | bc)" y.sam
t0=$(now); yara_mapper -e 5 -y full -t "$T" -o yf.sam yidx r1.fq r2.fq >/dev/null 2>&1; t1=$(now)
row "yara -e 5 -y full" "$(echo "$t1 - $t0" | bc)" yf.sam
t0=$(now); bwa mem -t "$T" ref.fa r1.fq r2.fq >b.sam 2>/dev/null; t1=$(now)
row "bwa mem" "$(echo "$t1 - $t0" | bc)" b.sam
echo "($N pairs of $LEN bp, E. coli, $T threads on $(nproc) cores; work dir $W)"
