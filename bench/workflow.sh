#!/bin/sh
# workflow.sh - the workflow's overhead (issue 21): workflow/Snakefile through
# the local single-node Slurm cluster (workflow/slurm-local.sh, as root)
# against the plain single-machine run of the same data, where the
# workflow's time went, and a projection of its time on N nodes from its
# measured per-job times.
#
#   sh bench/workflow.sh [NREADS [CHUNKS [PARTITIONS [single|pairs]]]]
#                                              [1000000 - 1 single]
#   CHUNKS "-" (the default): the Snakefile's own count, from its chunk_reads
#   (scatter.py chunks: 1 for up to 2 million reads), no chunks= given
#   REPS=3 sh bench/workflow.sh ...    3 pairs of runs, interleaved (plain
#                                      then workflow, workflow then plain, ...)
#   SLOW_POLL=1 sh bench/workflow.sh ...   Snakemake looks at its jobs every
#                                          10 s (config poll=10), not every 1
#
# Data: E. coli (bowtie's example) cut into 8 contigs, NREADS reads of 100
# bases with up to 4 edit operations (3% random, half reverse-complemented),
# made once under $DATA/workflow/; pairs: NREADS / 2 pairs of such reads,
# fragments of about 300 bases (mate 1 and mate 2 files).
#
#   plain     seqidx -t 2, seedfilt -t 2 | extend -t 2 -O bam, samtools sort
#             -@ 2, samtools index: the same filter settings as the workflow's
#             jobs (its plan/seedfilt.opts) and the same seed length
#   workflow  snakemake --profile workflow/profiles/slurm, each job the
#             node's cores / CHUNKS threads (at least 1: 2 chunks, 1 thread
#             a job, 2 jobs at once on the 2-core node; 1 chunk, 2 threads),
#             the Snakefile's polling (it looks at its cluster jobs every
#             second), Snakemake started with SETUPTOOLS_USE_DISTUTILS=stdlib
#             where Python has its own distutils (as the Snakefile sets it for
#             the jobs: see there), everything else as the Snakefile and the
#             profile choose (single reads in an uncompressed file: no copy of
#             the reads, each map job reads its range; E. coli's index and
#             plan on this machine, not as a cluster job)
#
# Defaults: the workflow's own chunk count (one chunk of two threads for
# 1M reads: the map job writes the result, no gather) and 1 partition (E.
# coli's index fits a node: partitions only cost, every map job filtering
# its whole chunk).
#
# Both results are compared (samtools view, records sorted): the row is only
# written when they are equal.  Appends to bench/RESULTS.md and
# bench/results.tsv.  Where the workflow's time went: bench/wfparts.py (its
# critical path through the cluster jobs, from slurmctld's log, the job
# scripts' times and the rules' benchmark files; see there).  The projection
# assumes: the jobs of one step spread evenly over N nodes of this node's
# job slots each, as fast as measured here; the scatter of the reads (pairs,
# or gzip) and the gather do not scale; every cluster step, and every
# further wave of a step's jobs on the slots, costs the latency measured here (queue, launch, the job's own Snakemake, noticing
# its end: the mean over the critical path's jobs); Snakemake's start and
# the local jobs before the first submission as measured; a shared file
# system that is not the bottleneck; no more useful parallelism than the
# job count.
. "$(dirname "$0")/lib.sh"

N=${1:-1000000}
C=${2:--}
P=${3:-1}
MODE=${4:-single}
REPS=${REPS:-1}
case $MODE in single|pairs) ;; *) bench_die "the 4th argument is single or pairs, not '$MODE'" ;; esac
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

reads2=
if [ "$MODE" = pairs ]; then
	reads=$W/pairs-${N}_1.fq
	reads2=$W/pairs-${N}_2.fq
	if [ ! -s "$reads" ] || [ ! -s "$reads2" ]; then
		python3 -c "
import random, sys
R = random.Random(22)
n = int(sys.argv[1]) // 2
seqs = []
for l in open(sys.argv[2]):
    if l.startswith('>'): seqs.append([])
    else: seqs[-1].append(l.strip())
seqs = [''.join(s) for s in seqs]
w = [len(s) for s in seqs]
comp = str.maketrans('ACGTN', 'TGCAN')
def mut(r):
    r = list(r)
    for _ in range(R.randrange(0, 5)):
        j = R.randrange(len(r)); op = R.choice('SSID')
        if op == 'S': r[j] = R.choice('ACGT')
        elif op == 'I': r.insert(j, R.choice('ACGT'))
        else: del r[j]
    return ''.join(r)
with open(sys.argv[3], 'w') as f1, open(sys.argv[4], 'w') as f2:
    for i in range(n):
        while True:
            s = R.choices(seqs, weights=w)[0]
            L = max(100, int(R.gauss(300, 30)))
            if len(s) > L:
                break
        p = R.randrange(0, len(s) - L)
        a, b = s[p:p + 100], s[p + L - 100:p + L].translate(comp)[::-1]
        if R.random() < 0.5: a, b = b, a
        a, b = mut(a), mut(b)
        if R.random() < 0.03: b = ''.join(R.choice('ACGT') for _ in range(100))
        f1.write('@p%d/1\n%s\n+\n%s\n' % (i, a, 'I' * len(a)))
        f2.write('@p%d/2\n%s\n+\n%s\n' % (i, b, 'I' * len(b)))
" "$N" "$ref" "$reads.tmp" "$reads2.tmp" && mv "$reads.tmp" "$reads" && mv "$reads2.tmp" "$reads2" ||
			bench_die "cannot make the pairs"
	fi
fi

chunkcfg=chunks=$C chunknote=
if [ "$C" = - ]; then
	C=$(python3 "$ROOT/workflow/scripts/scatter.py" chunks "$reads" $reads2) ||
		bench_die "scatter.py chunks failed"
	chunkcfg= chunknote=" (the workflow's default)"
fi
tag=$N-$C-$P${reads2:+-pairs}
run=$W/run-$tag
now() { date +%s.%N; }
load() { cut -d' ' -f1 /proc/loadavg; }
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
# as the Snakefile sets it for its jobs (Snakemake's start without
# setuptools' distutils shim), where Python has a distutils of its own
if /usr/bin/env python3 -c 'import os, sysconfig, sys
sys.exit(not os.path.isfile(os.path.join(sysconfig.get_paths()["stdlib"], "distutils", "__init__.py")))' 2>/dev/null; then
	export SETUPTOOLS_USE_DISTUTILS=stdlib
fi
ncpu=$(nproc)
thr=$((ncpu / C))
[ $thr -ge 1 ] || thr=1
slots=$((ncpu / thr))

# run_wf: the workflow into $run; sets tw, lw (the load at its end)
run_wf() {
	rm -rf "$run"
	mkdir -p "$run"
	t0=$(now)
	snakemake --profile "$ROOT/workflow/profiles/slurm" -s "$ROOT/workflow/Snakefile" \
		--directory "$run" --config ref="$ref" reads="$reads" ${reads2:+reads2="$reads2"} \
		$chunkcfg partitions=$P threads=$thr $pollcfg \
		>"$run.log" 2>&1 || { tail -30 "$run.log"; bench_die "the workflow failed"; }
	t1=$(now)
	tw=$(echo "$t1 - $t0" | bc -l)
	lw=$(load)
	python3 "$HERE/wfparts.py" "$run" "$sdir/slurmctld.log" "$t0" "$t1" >"$run.parts" ||
		bench_die "wfparts.py failed"
}
# run_plain: the plain run into $run.plain (the workflow's settings: run_wf
# first); sets tp, lp
run_plain() {
	opts=$(cat "$run/plan/seedfilt.opts")
	u=$(cat "$run/parts/ref.u" 2>/dev/null || true)   # none with one partition: seqidx's own
	rm -rf "$run.plain"
	mkdir -p "$run.plain"
	t2=$(now)
	(cd "$run.plain" &&
		seqidx -q -t 2 ${u:+-u "$u"} -o ref.sx "$ref" &&
		seedfilt -q -t 2 $opts -x ref.sx "$reads" $reads2 | extend -q -t 2 -O bam -o unsorted.bam &&
		samtools sort -@ 2 -o mapped.bam unsorted.bam 2>/dev/null &&
		samtools index mapped.bam) || bench_die "the plain run failed"
	t3=$(now)
	tp=$(echo "$t3 - $t2" | bc -l)
	lp=$(load)
}
same() {
	samtools view "$run/mapped.bam" | sort | md5sum >"$run.md5"
	samtools view "$run.plain/mapped.bam" | sort | md5sum >"$run.plain.md5"
	cmp -s "$run.md5" "$run.plain.md5" || bench_die "the workflow's records differ from the plain run's"
}

# REPS pairs, the order alternating (the first pair: the workflow first, as
# the plain run takes the workflow's filter settings)
pairs_md=
sum_w=0 sum_p=0
r=1
while [ $r -le "$REPS" ]; do
	if [ $((r % 2)) = 1 ]; then
		l0w=$(load); run_wf; l0p=$(load); run_plain
	else
		l0p=$(load); run_plain; l0w=$(load); run_wf
	fi
	same
	o=$(echo "($tw / $tp - 1) * 100" | bc -l)
	pairs_md="$pairs_md$(printf '| %d | %.1f (load %s-%s) | %.1f (load %s-%s) | %.0f%% |\\n' \
		$r "$tp" "$l0p" "$lp" "$tw" "$l0w" "$lw" "$o")"
	[ "$REPS" -gt 1 ] && echo "pair $r: plain $tp s, workflow $tw s, $(sed -n 's/^latency.*/&/p' "$run.parts")" >&2
	sum_w=$(echo "$sum_w + $tw" | bc -l)
	sum_p=$(echo "$sum_p + $tp" | bc -l)
	r=$((r + 1))
done
tw=$(echo "$sum_w / $REPS" | bc -l)
tp=$(echo "$sum_p / $REPS" | bc -l)

# per-job wall seconds from Snakemake's benchmark files (the last workflow run)
jobs() { for f in "$run"/benchmarks/$1; do [ -f "$f" ] && sed -n 2p "$f" | cut -f 1; done; }
jstat() { jobs "$1" | awk -v what="$2" '{ s += $1; if ($1 > m) m = $1; n++ }
	END { if (what == "max") print m + 0; else if (what == "sum") print s + 0; else print (n ? s / n : 0) }'; }
sr=$(jstat scatter_reads.tsv max); sf=$(jstat scatter_ref.tsv max); ix=$(jstat 'index/*.tsv' max)
mp=$(jstat 'map/*.tsv' mean); nmap=$(jobs 'map/*.tsv' | wc -l)
mg=$(jstat 'merge/*.tsv' mean); nmerge=$(jobs 'merge/*.tsv' | wc -l); ga=$(jstat gather.tsv max)
set -- $(sed -n 's/^latency //p' "$run.parts")
lat=$1 first=$3 loc=$5 pre=$7 steps=$9
# cluster steps one after the other on the critical path (each costs lat):
# scatter or index where not local, map, merge (partitions or pairs), gather
proj() {
	awk -v n="$1" -v c=$C -v p=$P -v s1=$slots -v first=$first -v mp=$mp -v mg=$mg -v nmerge=$nmerge \
		-v pre=$pre -v ga=$ga -v lat="$lat" -v steps=$steps 'function ceil(x) { return x == int(x) ? x : int(x) + 1 }
		BEGIN { s = s1 * n
			wm = ceil(c * p / s); wg = nmerge ? ceil(c / s) : 0
			printf "%.1f", first + pre + wm * mp + wg * mg + ga + (steps + wm - 1 + (wg ? wg - 1 : 0)) * lat }'
}
# tput N: reads per second on N nodes, the reads cut into (slots x N)
# chunks of this run's chunk size (each slot one chunk per partition): the
# scatter of the reads (where copied: with the index, the path's steps
# before the map) and the gather grow with the reads (this run's time per
# read), the start and the local jobs, a map and a
# merge job take what they took here, each cluster step the latency
# measured here
tput() {
	awk -v n="$1" -v nr="$N" -v c=$C -v p=$P -v s1=$slots -v first=$first -v sr=$sr -v mp=$mp \
		-v mg=$mg -v nmerge=$nmerge -v ga=$ga -v pre=$pre -v lat="$lat" -v steps=$steps 'BEGIN {
			r = s1 * n * nr / c; f = r / nr
			t = first + (pre > sr ? pre - sr + sr * f : pre) + p * mp + (nmerge ? mg : 0) + ga * f + (steps + p - 1) * lat
			printf "%.0f reads in %.0f s, %.0f reads/s", r, t, r / t }'
}
over=$(echo "($tw / $tp - 1) * 100" | bc -l)
machine="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1 | cut -c1-40), $(nproc) cpu"
ld=$(load)
commit=$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo -)
what="$N reads x 100 bp"
[ -n "$reads2" ] && what="$((N / 2)) pairs of 100 bp reads (fragments of about 300)"
{
	echo
	echo "## workflow-overhead-$N${reads2:+-pairs} ($(date -u +%Y-%m-%dT%H:%MZ), $machine, load $ld, commit $commit)"
	echo
	echo "$what against E. coli in 8 contigs, $C chunks$chunknote x $P partitions through the"
	echo "local single-node Slurm (slurm-local.sh), $thr thread(s) a job, $poll; the same records as the plain"
	echo "run (sorted samtools view, md5 equal).  Noisy: a shared 2-core machine; the load"
	echo "(1-minute average) before and after each run."
	echo
	echo "| pair | plain s (seqidx, seedfilt \\| extend -O bam, sort, index; -t 2) | workflow s | overhead |"
	echo "|---|---|---|---|"
	printf '%b' "$pairs_md"
	[ "$REPS" -gt 1 ] && printf '| mean | %.1f | %.1f | %.0f%% |\n' "$tp" "$tw" "$over"
	echo
	printf 'Per job (s, the last workflow run): scatter reads %.1f, scatter reference %.1f, index and plan (max) %.1f, map (mean of %d) %.1f, merge (mean of %d) %.1f, gather %.1f; before the first submission %.1f (local jobs %.1f in all); latency per cluster step %.1f (%d steps on the critical path).\n' \
		"$sr" "$sf" "$ix" "$nmap" "$mp" "$nmerge" "$mg" "$ga" "$first" "$loc" "$lat" "$steps"
	echo
	sed '/^latency /d' "$run.parts"
	echo
	if [ "$C" = 1 ]; then
		echo "No projection: one chunk has no gather job to measure (the projection: 2 chunks or more, as in \`sh bench/workflow.sh $N 2 $P${reads2:+ pairs}\`)."
	else
		echo "Projected wall time of this job set on N nodes of $slots job slots (assumptions in bench/workflow.sh):"
		for n in 1 2 4 8; do printf '%d: %s s; ' $n "$(proj $n)"; done
		echo
		echo
		echo "Projected throughput on N nodes of $slots job slots, the reads in ${slots}N chunks of this run's chunk size ($((N / C)) reads; assumptions in bench/workflow.sh):"
		for n in 1 2 4 8 16; do printf '%d: %s; ' $n "$(tput $n)"; done
		echo
	fi
} | tee -a "$HERE/RESULTS.md"
printf '%s\t%s\t%s\t%s\t1\t%s\t%s\t%.3f\t%.3f\t%.2f\t-\t-\t-\t-\t-\t-\t%.3f\t%.3f\t%s\t%s\n' \
	"$(date -u +%Y-%m-%dT%H:%MZ)" "workflow-overhead-$N${reads2:+-pairs}" "$machine" "$commit" \
	"snakemake --profile workflow/profiles/slurm (chunks=$C partitions=$P threads=$thr)" \
	"seqidx; seedfilt | extend -O bam; samtools sort; samtools index" \
	"$tw" "$tp" "$(echo "$tp / $tw" | bc -l)" "$tw" "$tp" \
	"$what, E. coli in 8 contigs, local Slurm, $poll, $REPS pair(s); overhead $(printf %.0f "$over")%" "$ld" \
	>>"$HERE/results.tsv"
