#!/bin/bash
test_description='workflow/Snakefile: the scattered run (3 chunks x 3 partitions, local and Slurm profiles) equals the single-machine run (make workflow-check)'
# Skipped before test-lib.sh, which empties this file's trash directory:
# make check runs this file too (and skips it), and doing so while make
# workflow-check runs it deleted the live run's files (its test 2 failed)
if [ -z "$SEEDPIPE_WORKFLOW_CHECK" ]; then
	echo "1..0 # SKIP the workflow tests run by make workflow-check"
	exit 0
fi
. ./test-lib.sh

command -v snakemake >/dev/null || test_skip_all "no snakemake (apt-get install snakemake)"

WF=$SEEDPIPE_SRC/workflow
SL=$WF/slurm-local.sh
# Snakemake 7 waits 10 s between two looks at its cluster jobs, 1 s when CI=true
export CI=true

SLURM_DIR=$(mktemp -d /tmp/seedpipe-slurm.XXXXXX) || exit 1
export SEEDPIPE_SLURM_PORT=$((24000 + $$ % 4000 * 2))
stop_cluster() { sh "$SL" stop "$SLURM_DIR" >/dev/null 2>&1; rm -rf "$SLURM_DIR"; }
trap stop_cluster EXIT
trap 'stop_cluster; exit 130' INT TERM
sh "$SL" start "$SLURM_DIR" >slurm-env.sh 2>slurm-start.err
case $? in
0) . ./slurm-env.sh && test_set_prereq SLURM ;;
77) say "# Slurm: $(sed -n 's/^slurm-local: //p' slurm-start.err)" ;;
*) cat slurm-start.err >&2; echo "Bail out! slurm-local.sh start failed"; exit 1 ;;
esac

# The reference: E. coli (bowtie's example) cut into 7 contigs of uneven
# lengths, or (without bowtie-examples) a random genome of the same shape
# with a 6 kb stretch copied, so that some reads map twice (secondary
# records, as E. coli's repeats give); 3000 reads of 100 bases with up to 4
# edits (a few from elsewhere, a few with N), half reversed.
test_expect_success 'setup: reference, reads' '
	ec=/usr/share/doc/bowtie/examples/genomes/NC_008253.fna.gz &&
	{ if [ -r $ec ]; then gzip -dc $ec; else echo; fi; } | PYTHONPATH="$TEST_DIR" python3 -c "
import random, sys
from gen_genome import mutate_any
R = random.Random(9)
g = \"\".join(l.strip() for l in sys.stdin if not l.startswith(\">\")).upper()
if len(g) < 100000:
    g = \"\".join(R.choice(\"ACGT\") for _ in range(600000))
    g = g[:300000] + g[50000:56000] + g[300000:]
cuts = [0] + sorted(R.sample(range(1000, len(g) - 1000), 6)) + [len(g)]
seqs = [(\"ctg%d\" % i, g[cuts[i]:cuts[i + 1]]) for i in range(7)]
with open(\"ref.fa\", \"w\") as f:
    for n, s in seqs:
        f.write(\">%s\n\" % n)
        for i in range(0, len(s), 80): f.write(s[i:i + 80] + \"\n\")
comp = str.maketrans(\"ACGTN\", \"TGCAN\")
with open(\"reads.fq\", \"w\") as f:
    for i in range(3000):
        n, s = R.choice(seqs); p = R.randrange(0, len(s) - 110)
        r = mutate_any(R, s[p:p + 100], R.randrange(0, 5))
        if R.random() < 0.03: r = \"\".join(R.choice(\"ACGT\") for _ in range(100))
        if R.random() < 0.03: r = r[:10] + \"N\" + r[11:]
        if R.random() < 0.5: r = r.translate(comp)[::-1]
        f.write(\"@read%d\n%s\n+\n%s\n\" % (i, r, \"I\" * len(r)))
" &&
	test $(grep -c "^>" ref.fa) = 7 &&
	test $(wc -l <reads.fq) = 12000
'

CONFIG="ref=$PWD/ref.fa reads=$PWD/reads.fq chunks=3 partitions=3"

# run_wf PROFILE DIR [SNAKEMAKE ARGS]
run_wf() {
	p=$1 d=$2; shift 2
	snakemake --profile "$WF/profiles/$p" -s "$WF/Snakefile" --directory "$d" \
		--config $CONFIG "$@" >"$d.log" 2>&1 || { tail -40 "$d.log"; return 1; }
}

# records PREFIX BAM: the records of BAM, sorted, into PREFIX.txt
records() {
	samtools view "$2" | sort >"$1.txt"
}

# The local run meets a map job that fails after writing half its output
# (a wrapper around extend, the first time it writes hits/1.1.sp): the
# profile retries it, and the half file must leave no trace in the result.
test_expect_success 'the local profile, with a failing job retried' '
	mkdir -p fail/bin &&
	cat >fail/bin/extend <<-EOS &&
	#!/bin/sh
	case "\$*" in
	*"-o hits/1.1.sp.tmp"*)
		if [ ! -e "$PWD/fail/failed" ]; then
			touch "$PWD/fail/failed"
			head -c 100 /dev/urandom >hits/1.1.sp.tmp
			exit 1
		fi ;;
	esac
	exec "$SEEDPIPE_BIN/extend" "\$@"
	EOS
	chmod +x fail/bin/extend &&
	mkdir local &&
	PATH=$PWD/fail/bin:$PATH run_wf local local --cores 2 &&
	test -e fail/failed &&
	test_grep "Error in rule map" local.log &&
	samtools quickcheck local/mapped.bam &&
	test -s local/mapped.bam.bai &&
	samtools view -H local/mapped.bam | test_grep "^@HD.*SO:coordinate" - &&
	records local local/mapped.bam
'

test_expect_success 'the single-machine run with the same settings' '
	seqidx -q -u $(cat local/parts/ref.u) -o ref.sx ref.fa &&
	seedfilt -q -d none $(cat local/plan/seedfilt.opts) -x ref.sx reads.fq |
		extend -q -d none -O bam -o single.unsorted.bam &&
	samtools sort -o single.bam single.unsorted.bam &&
	records single single.bam &&
	test $(wc -l <single.txt) -gt 3000 &&
	cut -f 2 single.txt | sort -u | test_grep "^256$" -
'

test_expect_success 'local: the same records as the single-machine run' '
	test_cmp single.txt local.txt &&
	samtools view -H local/mapped.bam | grep "^@SQ" >got &&
	samtools view -H single.bam | grep "^@SQ" >want &&
	test_cmp want got &&
	samtools view single.bam >want && samtools view local/mapped.bam >got &&
	test_cmp want got
'

test_expect_success 'one partition: each chunk mapped and sorted in one job, the same records' '
	mkdir one &&
	run_wf local one partitions=1 --cores 2 &&
	grep "^rule map_sort:" one.log &&
	! grep "^rule merge" one.log &&
	! test -e one/parts/ref.0.fa &&
	test_grep "scatter.py cat .*reads.fq [0-9]* [0-9]* | seedfilt" one.log &&
	! test -e one/chunks &&
	seqidx -q -o ref1.sx ref.fa &&
	seedfilt -q -d none $(cat one/plan/seedfilt.opts) -x ref1.sx reads.fq |
		extend -q -d none -O bam -o one-single.unsorted.bam &&
	samtools sort -o one-single.bam one-single.unsorted.bam &&
	records one-single one-single.bam &&
	records one one/mapped.bam &&
	test_cmp one-single.txt one.txt &&
	samtools view -H one/mapped.bam | grep "^@SQ" >got &&
	samtools view -H one-single.bam | grep "^@SQ" >want &&
	test_cmp want got
'

test_expect_success 'one partition, one chunk: the map job writes the result, no gather' '
	mkdir one1 &&
	run_wf local one1 partitions=1 chunks=1 --cores 2 &&
	grep "^rule map_sort_all:" one1.log &&
	! grep "^rule gather:" one1.log &&
	! test -e one1/chunks &&
	samtools quickcheck one1/mapped.bam &&
	samtools index one1/mapped.bam one1.bai &&
	cmp one1.bai one1/mapped.bam.bai &&
	records one1 one1/mapped.bam &&
	test_cmp one-single.txt one1.txt
'

# No chunks given: the count from chunk_reads (reads per chunk, estimated
# from the file's size): 3000 reads are one chunk by default, 3 of 1000
test_expect_success 'no chunks given: one chunk for few reads, chunk_reads cuts finer' '
	snakemake --profile "$WF/profiles/local" -s "$WF/Snakefile" --directory dflt -n --cores 2 \
		--config ref=$PWD/ref.fa reads=$PWD/reads.fq partitions=1 >dflt.log 2>&1 &&
	grep -c "^rule map_sort_all:" dflt.log >n && test "$(cat n)" = 1 &&
	! grep "^rule map_sort:" dflt.log &&
	snakemake --profile "$WF/profiles/local" -s "$WF/Snakefile" --directory dflt3 -n --cores 2 \
		--config ref=$PWD/ref.fa reads=$PWD/reads.fq partitions=1 chunk_reads=1000 >dflt3.log 2>&1 &&
	grep -c "^rule map_sort:" dflt3.log >n && test "$(cat n)" = 3 &&
	test "$(python3 "$WF/scripts/scatter.py" chunks reads.fq 1000)" = 3
'

# The gather merges the sorted chunks (samtools merge) where that keeps the
# records: single reads end with their RG tag; with -C a read's comment
# comes after it, which samtools merge would put before RG: concatenated
# and sorted then.  Both equal the single-machine run with the same -R, -C
test_expect_success 'the gather: samtools merge with -R, cat | sort with -C; the single run'"'"'s records' '
	awk "NR % 4 == 1 && NR % 3 == 0 { \$0 = \$0 \" BC:Z:AC\" NR } { print }" reads.fq >rc.fq &&
	grep -c "BC:Z:" rc.fq >n && test $(cat n) -gt 900 &&
	for how in R RC; do
		c= && if [ $how = RC ]; then c=-C; fi &&
		mkdir gath$how &&
		snakemake --profile "$WF/profiles/local" -s "$WF/Snakefile" --directory gath$how --cores 2 \
			--config ref=$PWD/ref.fa reads=$PWD/rc.fq chunks=3 partitions=1 \
			"sam=$c -R \"@RG\\tID:g1\\tSM:s1\"" \
			>gath$how.log 2>&1 || { tail -40 gath$how.log; return 1; } &&
		seedfilt -q -d none $(cat gath$how/plan/seedfilt.opts) -x ref1.sx rc.fq |
			extend -q -d none $c -R "@RG\\tID:g1\\tSM:s1" -O bam -o gs$how.unsorted.bam &&
		samtools sort -o gs$how.bam gs$how.unsorted.bam &&
		records gs$how gs$how.bam && records gw$how gath$how/mapped.bam &&
		test_cmp gs$how.txt gw$how.txt || return 1
	done &&
	test_grep "samtools merge -c -p" gathR.log &&
	test_grep "samtools cat" gathRC.log &&
	test_grep "RG:Z:g1	BC:Z:AC" gwRC.txt &&
	test_grep "AS:i:[0-9-]*	RG:Z:g1$" gwR.txt
'

test_expect_success 'scatter=copy: the reads cut into chunk files, the same records' '
	mkdir copy &&
	run_wf local copy partitions=1 scatter=copy --cores 2 &&
	grep "^rule scatter_reads:" copy.log &&
	test -s copy/chunks/reads.2 &&
	records copy copy/mapped.bam &&
	test_cmp one-single.txt copy.txt
'

test_expect_success 'the @PG chain: every partition job, the merge, samtools' '
	samtools view -H local/mapped.bam | grep "^@PG" >pg &&
	test $(grep -c "PN:seedfilt" pg) = 3 &&
	test_grep "CL:[^ ]*extend --merge" pg &&
	test_grep "CL:samtools sort" pg
'

test_expect_success 'resumable: a second run has nothing to do; a lost chunk is made again alike' '
	run_wf local local --cores 2 &&
	test_grep "Nothing to be done" local.log &&
	rm local/mapped.bam local/merged/1.bam &&
	run_wf local local --cores 2 &&
	test $(grep -c "^rule merge:" local.log) = 1 &&
	test_grep -v "^rule map:" local.log &&
	records again local/mapped.bam &&
	test_cmp single.txt again.txt
'

# Paired-end reads: 10600 pairs (chunk 0 holds the first 10000, from which
# the insert size is estimated; the other two chunks get it as -I), mates of
# 100 bases from fragments of about 300 (the last 600 pairs about 520: a
# chunk that estimated its own insert size would pair them), up to 3 edits,
# a few random.
test_expect_success 'paired-end: pairs, insert size and read group equal the single-machine run' '
	PYTHONPATH="$TEST_DIR" python3 -c "
import random
from gen_genome import mutate_any
R = random.Random(5)
seqs, name = [], None
for l in open(\"ref.fa\"):
    if l.startswith(\">\"): seqs.append([l[1:].strip(), []])
    else: seqs[-1][1].append(l.strip())
seqs = [(n, \"\".join(s)) for n, s in seqs]
comp = str.maketrans(\"ACGTN\", \"TGCAN\")
def mut(r): return mutate_any(R, r, R.randrange(0, 4))
f1, f2 = open(\"p1.fq\", \"w\"), open(\"p2.fq\", \"w\")
for i in range(10600):
    n, s = R.choice(seqs); L = int(R.gauss(300, 30) if i < 10000 else R.gauss(520, 20))
    p = R.randrange(0, len(s) - L)
    a, b = s[p:p + 100], s[p + L - 100:p + L].translate(comp)[::-1]
    if R.random() < 0.5: a, b = b, a
    a, b = mut(a), mut(b)
    if R.random() < 0.02: b = \"\".join(R.choice(\"ACGT\") for _ in range(100))
    f1.write(\"@pr%d/1\n%s\n+\n%s\n\" % (i, a, \"I\" * len(a)))
    f2.write(\"@pr%d/2\n%s\n+\n%s\n\" % (i, b, \"I\" * len(b)))
" &&
	mkdir pe &&
	snakemake --profile "$WF/profiles/local" -s "$WF/Snakefile" --directory pe --cores 2 \
		--config ref=$PWD/ref.fa reads=$PWD/p1.fq reads2=$PWD/p2.fq chunks=3 partitions=3 \
		"sam=-R \"@RG\\tID:g1\\tSM:s1\"" >pe.log 2>&1 || { tail -40 pe.log; false; } &&
	test_grep "10600 pairs into 3 chunks of 10000, 300, 300" pe/logs/scatter_reads.log &&
	test_grep "^-I [0-9]*,[0-9]*$" pe/merged/0.ins &&
	seedfilt -q -d none $(cat pe/plan/seedfilt.opts) -x ref.sx p1.fq p2.fq |
		extend -d none -R "@RG\\tID:g1\\tSM:s1" -O bam -o pe-single.unsorted.bam 2>pe-single.err &&
	grep "insert size" pe-single.err &&
	grep "insert size" pe/logs/merge/0.log &&
	samtools sort -o pe-single.bam pe-single.unsorted.bam &&
	records pe-single pe-single.bam &&
	records pe-wf pe/mapped.bam &&
	test $(cut -f 2 pe-single.txt | grep -c "^99$") -gt 1000 &&
	test_cmp pe-single.txt pe-wf.txt &&
	samtools view -H pe/mapped.bam | grep "^@RG" >got &&
	printf "@RG\tID:g1\tSM:s1\n" >want &&
	test_cmp want got
'

# Pairs, one partition and (by default, few reads) one chunk: one job maps
# both mate files and sorts, as a single-machine run does (no copy of the
# reads, no merge, no gather)
test_expect_success 'paired-end, one chunk, one partition: one map job, the single run'"'"'s records' '
	mkdir pe1 &&
	snakemake --profile "$WF/profiles/local" -s "$WF/Snakefile" --directory pe1 --cores 2 \
		--config ref=$PWD/ref.fa reads=$PWD/p1.fq reads2=$PWD/p2.fq partitions=1 \
		>pe1.log 2>&1 || { tail -40 pe1.log; false; } &&
	grep "^rule map_sort_all:" pe1.log &&
	! grep "^rule merge" pe1.log && ! grep "^rule gather" pe1.log &&
	! test -e pe1/chunks &&
	seedfilt -q -d none $(cat pe1/plan/seedfilt.opts) -x ref1.sx p1.fq p2.fq |
		extend -q -d none -O bam -o pe1-single.unsorted.bam &&
	samtools sort -o pe1-single.bam pe1-single.unsorted.bam &&
	records pe1-single pe1-single.bam &&
	records pe1-wf pe1/mapped.bam &&
	test $(cut -f 2 pe1-single.txt | grep -c "^99$") -gt 1000 &&
	test_cmp pe1-single.txt pe1-wf.txt &&
	samtools flagstat pe1-single.bam >fs1-single &&
	samtools flagstat pe1/mapped.bam >fs1-wf &&
	test_cmp fs1-single fs1-wf
'

# One chunk over 3 partitions: chunk 0's merge writes the indexed result
# (no gather job), single reads and pairs (the merge estimates the insert
# size from all the pairs, as the single run does)
test_expect_success 'one chunk, partitions: the merge writes the result, the single run'"'"'s records' '
	for how in se pe; do
		if [ $how = pe ]; then r2=$PWD/p2.fq r1=$PWD/p1.fq; else r2= r1=$PWD/reads.fq; fi &&
		mkdir m1$how &&
		snakemake --profile "$WF/profiles/local" -s "$WF/Snakefile" --directory m1$how --cores 2 \
			--config ref=$PWD/ref.fa reads=$r1 ${r2:+reads2=$r2} chunks=1 partitions=3 \
			>m1$how.log 2>&1 || { tail -40 m1$how.log; return 1; } &&
		grep "^rule merge_all:" m1$how.log && ! grep "^rule gather:" m1$how.log &&
		samtools index m1$how/mapped.bam m1$how.bai && cmp m1$how.bai m1$how/mapped.bam.bai &&
		seedfilt -q -d none $(cat m1$how/plan/seedfilt.opts) -x ref.sx $r1 $r2 |
			extend -q -d none -O bam -o m1s$how.unsorted.bam &&
		samtools sort -o m1s$how.bam m1s$how.unsorted.bam &&
		records m1s$how m1s$how.bam && records m1w$how m1$how/mapped.bam &&
		test_cmp m1s$how.txt m1w$how.txt || return 1
	done &&
	test $(cut -f 2 m1wpe.txt | grep -c "^99$") -gt 1000
'

# mate fields of every record, sorted: NAME FLAG RNAME POS RNEXT PNEXT TLEN MC# mate fields of every record, sorted: NAME FLAG RNAME POS RNEXT PNEXT TLEN MC
mates() {
	samtools view "$1" | awk -F'\t' '{ mc = "-"
		for (i = 12; i <= NF; i++) if ($i ~ /^MC:Z:/) mc = $i
		print $1, $2, $3, $4, $7, $8, $9, mc }' | sort
}

test_expect_success 'paired-end: samtools fixmate finds nothing to fix, flagstat counts as the single run, markdup accepts it' '
	samtools flagstat pe-single.bam >fs-single &&
	samtools flagstat pe/mapped.bam >fs-wf &&
	test_cmp fs-single fs-wf &&
	test_grep "^[1-9][0-9]* + 0 properly paired" fs-wf &&
	samtools sort -n -o byname.bam pe/mapped.bam &&
	samtools fixmate byname.bam fixed.bam &&
	mates byname.bam >a && mates fixed.bam >b && test_cmp a b &&
	samtools fixmate -m byname.bam - | samtools sort -o fm.bam - &&
	samtools markdup fm.bam md.bam 2>mderr &&
	samtools quickcheck md.bam &&
	test $(samtools view -c md.bam) = $(samtools view -c pe/mapped.bam)
'

test_expect_success 'device=true: the map jobs ask Slurm for a GPU, the others do not' '
	mkdir dev &&
	snakemake --profile "$WF/profiles/slurm" -s "$WF/Snakefile" --directory dev -n \
		--config $CONFIG device=true >dev.log 2>&1 &&
	awk "/^rule /{ r = \$2 } /resources:/ && /gres=--gres=gpu:1/ { print r }" dev.log | sort | uniq -c >gpu &&
	test "$(cat gpu)" = "      9 map:" &&
	grep -c "^rule map:" dev.log >n && test "$(cat n)" = 9 &&
	test_grep "| seedfilt -q -d gpu" dev.log
'

# slurm-logs/RULE.JOBID.out: the rules that ran as cluster jobs, counted
jobs_of() {
	ls "$1/slurm-logs" | sed 's/\.[0-9]*\.out$//' | sort | uniq -c | awk '{ print $2, $1 }'
}

# E. coli's index and plan on this machine (a small reference), the reads
# read by range: only the map, merge and gather jobs go to Slurm
test_expect_success SLURM 'the Slurm profile (sbatch through the local cluster)' '
	mkdir slurm &&
	run_wf slurm slurm &&
	jobs_of slurm >got &&
	printf "gather 1\nmap 9\nmerge 2\nmerge_first 1\n" >want &&
	test_cmp want got &&
	test_grep "^localrule index_plan:" slurm.log &&
	test_grep "seedpipe-job end [0-9.]* 0$" slurm/slurm-logs/gather.*.out &&
	records slurm slurm/mapped.bam &&
	test_cmp single.txt slurm.txt
'

test_expect_success SLURM 'the Slurm profile, every step a cluster job (index_local=false scatter=copy)' '
	mkdir slurm2 &&
	run_wf slurm slurm2 chunks=2 partitions=2 index_local=false scatter=copy &&
	jobs_of slurm2 >got &&
	printf "gather 1\nindex 1\nindex_plan 1\nmap 4\nmerge 1\nmerge_first 1\nscatter_reads 1\nscatter_ref 1\n" >want &&
	test_cmp want got &&
	seqidx -q -u $(cat slurm2/parts/ref.u) -o ref2.sx ref.fa &&
	seedfilt -q -d none $(cat slurm2/plan/seedfilt.opts) -x ref2.sx reads.fq |
		extend -q -d none -O bam -o single2.unsorted.bam &&
	samtools sort -o single2.bam single2.unsorted.bam &&
	records single2 single2.bam &&
	records slurm2 slurm2/mapped.bam &&
	test_cmp single2.txt slurm2.txt
'

test_done
