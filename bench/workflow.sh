#!/bin/sh
# workflow.sh - the workflow's overhead (issue 21): workflow/Snakefile through
# the local single-node Slurm cluster (workflow/slurm-local.sh, as root)
# against the plain single-machine run of the same data, and a projection of
# the workflow's time on N nodes from its measured per-job times.
#
#   sh bench/workflow.sh [NREADS [CHUNKS [PARTITIONS]]]    [1000000 2 1]
#   SLOW_POLL=1 sh bench/workflow.sh ...   Snakemake looks at its jobs every
#                                          10 s (config poll=10), not every 1
#
# Data: E. coli (bowtie's example) cut into 8 contigs, NREADS reads of 100
# bases with up to 4 edit operations (3% random, half reverse-complemented),
# made once under $DATA/workflow/.
#
#   plain     seqidx -t 2, seedfilt -t 2 | extend -t 2 -O bam, samtools sort
#             -@ 2, samtools index: the same filter settings as the workflow's
#             jobs (its plan/seedfilt.opts) and the same seed length
#   workflow  snakemake --profile workflow/profiles/slurm, 1 thread a job
#             (the node's 2 cores run 2 jobs at once), the Snakefile's
#             polling (it looks at its cluster jobs every second)
#
# Defaults: 2 chunks (one per job slot of the node) and 1 partition (E.
# coli's index fits a node: partitions only cost, every map job filtering
# its whole chunk).
#
# Both results are compared (samtools view, records sorted): the row is only
# written when they are equal.  Appends to bench/RESULTS.md and
# bench/results.tsv.  The projection assumes: the jobs of one step spread
# evenly over N nodes of 2 job slots each, as fast as measured here; the
# scatter and gather steps do not scale; every step costs the
# latency measured here (the workflow's wall time minus its steps' job
# times, shared equally among its steps: scatter, index, map, merge,
# gather; with one partition scatter and index, map and sort, gather); a shared file system that is
# not the bottleneck; no more useful parallelism than the job count.
. "$(dirname "$0")/lib.sh"

N=${1:-1000000}
C=${2:-2}
P=${3:-1}
need_peer snakemake snakemake
need_peer samtools samtools
need_tool seqidx
need_tool seedfilt
need_tool extend
[ "$(id -u)" = 0 ] || bench_die "the local Slurm cluster needs root"

W=$DATA/workflow
mkdir -p "$W" || bench_die "cannot make $W"
ref=$W/ecoli8.fa
reads=$W/reads-$N.fq
ec=/usr/share/doc/bowtie/examples/genomes/NC_008253.fna.gz
[ -r $ec ] || bench_die "no $ec (apt-get install bowtie-examples)"
if [ ! -s "$ref" ] || [ ! -s "$reads" ]; then
	gzip -dc $ec | python3 -c "
import random, sys
R = random.Random(21)
n = int(sys.argv[1])
g = ''.join(l.strip() for l in sys.stdin if not l.startswith('>')).upper()
cuts = [0] + sorted(R.sample(range(1000, len(g) - 1000), 7)) + [len(g)]
seqs = [('ctg%d' % i, g[cuts[i]:cuts[i + 1]]) for i in range(8)]
with open(sys.argv[2], 'w') as f:
    for name, s in seqs:
        f.write('>%s\n' % name)
        for i in range(0, len(s), 80): f.write(s[i:i + 80] + '\n')
comp = str.maketrans('ACGTN', 'TGCAN')
w = [len(s) for _, s in seqs]
with open(sys.argv[3], 'w') as f:
    for i in range(n):
        name, s = R.choices(seqs, weights=w)[0]
        p = R.randrange(0, len(s) - 110)
        r = list(s[p:p + 100])
        for _ in range(R.randrange(0, 5)):
            j = R.randrange(len(r)); op = R.choice('SSID')
            if op == 'S': r[j] = R.choice('ACGT')
            elif op == 'I': r.insert(j, R.choice('ACGT'))
            else: del r[j]
        r = ''.join(r)
        if R.random() < 0.03: r = ''.join(R.choice('ACGT') for _ in range(100))
        if R.random() < 0.5: r = r.translate(comp)[::-1]
        f.write('@r%d\n%s\n+\n%s\n' % (i, r, 'I' * len(r)))
" "$N" "$ref" "$reads" || bench_die "cannot make the data"
fi

run=$W/run-$N-$C-$P
rm -rf "$run" "$run.plain"
mkdir -p "$run" "$run.plain"
now() { date +%s.%N; }
sdir=$(mktemp -d /tmp/seedpipe-slurm.XXXXXX)
trap 'sh "$ROOT/workflow/slurm-local.sh" stop "$sdir" >/dev/null 2>&1; rm -rf "$sdir"' EXIT
trap 'exit 130' INT TERM
eval "$(sh "$ROOT/workflow/slurm-local.sh" start "$sdir")" || bench_die "cannot start the local Slurm"

unset CI
poll="Snakemake polling every 1 s (the Snakefile's CI=true)"
pollcfg=
if [ -n "${SLOW_POLL:-}" ]; then
	poll="Snakemake's default 10 s polling (poll=10)"
	pollcfg=poll=10
fi
t0=$(now)
snakemake --profile "$ROOT/workflow/profiles/slurm" -s "$ROOT/workflow/Snakefile" \
	--directory "$run" --config ref="$ref" reads="$reads" chunks=$C partitions=$P threads=1 $pollcfg \
	>"$run.log" 2>&1 || { tail -30 "$run.log"; bench_die "the workflow failed"; }
t1=$(now)
opts=$(cat "$run/plan/seedfilt.opts")
u=$(cat "$run/parts/ref.u" 2>/dev/null || true)   # none with one partition: seqidx's own
t2=$(now)
(cd "$run.plain" &&
	seqidx -q -t 2 ${u:+-u "$u"} -o ref.sx "$ref" &&
	seedfilt -q -t 2 $opts -x ref.sx "$reads" | extend -q -t 2 -O bam -o unsorted.bam &&
	samtools sort -@ 2 -o mapped.bam unsorted.bam 2>/dev/null &&
	samtools index mapped.bam) || bench_die "the plain run failed"
t3=$(now)
samtools view "$run/mapped.bam" | sort | md5sum >"$run.md5"
samtools view "$run.plain/mapped.bam" | sort | md5sum >"$run.plain.md5"
cmp -s "$run.md5" "$run.plain.md5" || bench_die "the workflow's records differ from the plain run's"

tw=$(echo "$t1 - $t0" | bc -l)
tp=$(echo "$t3 - $t2" | bc -l)
# per-job wall seconds from Snakemake's benchmark files
jobs() { for f in "$run"/benchmarks/$1; do [ -f "$f" ] && sed -n 2p "$f" | cut -f 1; done; }
jstat() { jobs "$1" | awk -v what="$2" '{ s += $1; if ($1 > m) m = $1; n++ }
	END { if (what == "max") print m + 0; else if (what == "sum") print s + 0; else print (n ? s / n : 0) }'; }
sr=$(jstat scatter_reads.tsv max); sf=$(jstat scatter_ref.tsv max); ix=$(jstat 'index/*.tsv' max)
mp=$(jstat 'map/*.tsv' mean); mps=$(jstat 'map/*.tsv' sum)
mg=$(jstat 'merge/*.tsv' mean); mgs=$(jstat 'merge/*.tsv' sum); ga=$(jstat gather.tsv max)
pre=$(echo "if ($sr > $sf + $ix) $sr else $sf + $ix" | bc -l)
# steps one after the other: scatter (reads, and reference then index), map,
# merge, gather; one partition: scatter (reads, and index), map and sort, gather
if [ "$P" = 1 ]; then steps=3 njobs=$((C + 3)); else steps=5 njobs=$((2 + P + C * P + C + 1)); fi
lat=$(echo "($tw - ($pre + $mps / 2 + $mgs / 2 + $ga)) / $steps" | bc -l)
proj() {
	awk -v n="$1" -v c=$C -v p=$P -v sr=$sr -v sf=$sf -v ix=$ix -v mp=$mp -v mg=$mg \
		-v ga=$ga -v lat="$lat" -v steps=$steps 'function ceil(x) { return x == int(x) ? x : int(x) + 1 }
		BEGIN { s = 2 * n; pre = sr > sf + ix ? sr : sf + ix
			if (lat < 0) lat = 0
			printf "%.1f", pre + ceil(c * p / s) * mp + ceil(c / s) * mg + ga + steps * lat }'
}
# tput N: reads per second on N nodes of 2 job slots, the reads cut into 2N
# chunks of this run's chunk size (each slot one chunk per partition): the
# scatter of the reads and the gather grow with the reads (this run's time per
# read), the reference's scatter and index, a map and a merge job take what
# they took here, each step (3 or 5) the latency measured here
tput() {
	awk -v n="$1" -v nr="$N" -v c=$C -v p=$P -v sr=$sr -v sf=$sf -v ix=$ix -v mp=$mp \
		-v mg=$mg -v ga=$ga -v lat="$lat" -v steps=$steps 'BEGIN { r = 2 * n * nr / c; f = r / nr
			if (lat < 0) lat = 0
			pre = sr * f > sf + ix ? sr * f : sf + ix
			t = pre + p * mp + mg + ga * f + steps * lat
			printf "%.0f reads in %.0f s, %.0f reads/s", r, t, r / t }'
}
over=$(echo "($tw / $tp - 1) * 100" | bc -l)
machine="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1 | cut -c1-40), $(nproc) cpu"
load=$(cut -d' ' -f1 /proc/loadavg)
commit=$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo -)
{
	echo
	echo "## workflow-overhead-$N ($(date -u +%Y-%m-%dT%H:%MZ), $machine, load $load, commit $commit)"
	echo
	echo "$N reads x 100 bp against E. coli in 8 contigs, $C chunks x $P partitions through the"
	echo "local single-node Slurm (slurm-local.sh), $poll; the same records as the plain"
	echo "run (sorted samtools view, md5 equal).  Noisy: one run each on a shared, loaded"
	echo "2-core machine."
	echo
	echo "| run | wall s |"
	echo "|---|---|"
	printf '| plain (seqidx, seedfilt \\| extend -O bam, sort, index; -t 2) | %.1f |\n' "$tp"
	printf '| workflow (%d jobs, 1 thread each) | %.1f |\n' "$njobs" "$tw"
	printf '| overhead | %.0f%% |\n' "$over"
	echo
	printf 'Per job (s): scatter reads %.1f, scatter reference %.1f, index and plan (max) %.1f, map (mean of %d) %.1f, merge (mean of %d) %.1f, gather %.1f; latency per step %.1f.\n' \
		"$sr" "$sf" "$ix" $((C * P)) "$mp" "$C" "$mg" "$ga" "$lat"
	echo
	echo "Projected wall time of this job set on N nodes of 2 job slots (assumptions in bench/workflow.sh):"
	for n in 1 2 4 8; do printf '%d: %s s; ' $n "$(proj $n)"; done
	echo
	echo
	echo "Projected throughput on N nodes of 2 job slots, the reads in 2N chunks of this run's chunk size ($((N / C)) reads; assumptions in bench/workflow.sh):"
	for n in 1 2 4 8 16; do printf '%d: %s; ' $n "$(tput $n)"; done
	echo
} | tee -a "$HERE/RESULTS.md"
printf '%s\t%s\t%s\t%s\t1\t%s\t%s\t%.3f\t%.3f\t%.2f\t-\t-\t-\t-\t-\t-\t%.3f\t%.3f\t%s\t%s\n' \
	"$(date -u +%Y-%m-%dT%H:%MZ)" "workflow-overhead-$N" "$machine" "$commit" \
	"snakemake --profile workflow/profiles/slurm (chunks=$C partitions=$P)" \
	"seqidx; seedfilt | extend -O bam; samtools sort; samtools index" \
	"$tw" "$tp" "$(echo "$tp / $tw" | bc -l)" "$tw" "$tp" \
	"$N x 100 bp, E. coli in 8 contigs, local Slurm, $poll; overhead $(printf %.0f "$over")%" "$load" \
	>>"$HERE/results.tsv"
