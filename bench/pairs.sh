#!/bin/sh
# pairs.sh - paired-end mapping (issue 16): seedpipe against yara (-e 5, and
# full sensitivity -e 5 -s 5 -y full), razers3's paired mode and bwa mem on
# mason_simulator pairs.
#
#   sh bench/pairs.sh [N] [LEN] [THREADS] [SEED]
#
# N (20000) pairs of LEN (100) bp simulated by mason_simulator (its default
# fragment sizes: mean 300, sd 30) from REF_GZ (E. coli NC_008253; GENOME
# names it in the table); each mapper on THREADS (all cores) threads.
# Environment: PEERS (the mappers to run besides seedpipe: any of yara,
# yara-full, razers3, bwa; default all), REF_GZ, GENOME, BENCH_TMP (work
# directory: reference, indexes and reads are kept there and reused when
# present), REPS (runs of each mapper, the best wall time is shown; 1),
# SP_CPU (set: a second seedpipe row with seedfilt -d none), PREPARE_ONLY
# (set: make the data and indexes, time nothing), PEER_TIMEOUT (seconds: a
# peer still running then is stopped, its row marked "stopped at N s" and
# scored on what it wrote).
#
# The bound is B = 5% of LEN edit operations (5 for 100 bp, 7 for 150 bp),
# what yara -e 5 and razers3 -i 95 allow; seedpipe is given it as
# seedfilt -E B (extend takes it from the stream).  Columns:
#   wall s       the mapping alone (indexes built before, not timed),
#                index loading included
#   prop.paired  properly paired reads by samtools flagstat (primary records)
#   conc.        concordant pairs reported: mate-1 records with flag 0x2,
#                primary and secondary (pairs in XA tags not counted)
#   found        truth pairs found: both mates have a locus with flag 0x2
#                (a record, or an XA entry of a flag-0x2 record: yara and
#                bwa put alternative loci there) on the simulated sequence
#                and strand, starting within 10 bases of the simulated start
#   found<=B     the same among the truth pairs whose two mates were
#                simulated with at most B errors (mason's NM): every mapper
#                that finds every pair within the bound finds all of them
#                (insert sizes aside: mason's tail beyond mean +- 4 sd)
# Nothing is written to bench/RESULTS.md: copy the table by hand
# (## pairs-GENOME-LEN).
#
# seedpipe: seqidx (defaults), seedfilt -E B R1 R2 | extend (every
# concordant pair within the bound, insert size estimated).
# yara_mapper -e 5 [-s 5 -y full] -t T; razers3 -i 95 -rr 100 -tc T -ll 300
# -le 120 (mean +- 4 sd, the interval seedpipe estimates); bwa mem -t T.
set -e
. "$(dirname "$0")/lib.sh"
N=${1:-20000}
LEN=${2:-100}
T=${3:-$(nproc)}
SEED=${4:-1}
B=$((LEN * 5 / 100))
REPS=${REPS:-1}
PEERS=${PEERS:-yara yara-full razers3 bwa}
MASON=${MASON:-/usr/lib/seqan/bin/mason_simulator}
REF_GZ=${REF_GZ:-${ECOLI_GZ:-/usr/share/doc/bowtie/examples/genomes/NC_008253.fna.gz}}
GENOME=${GENOME:-ecoli}
SEQAN=$(dirname "$MASON")
PATH=$PATH:$SEQAN
need_tool seqidx; need_tool seedfilt; need_tool extend
need_peer samtools samtools; need_peer "$MASON" seqan-apps
for p in $PEERS; do
	case $p in
	yara|yara-full) need_peer yara_mapper seqan-apps; need_peer yara_indexer seqan-apps ;;
	razers3) need_peer razers3 razers3 ;;
	bwa) need_peer bwa bwa ;;
	*) bench_die "unknown peer '$p' (yara, yara-full, razers3, bwa)" ;;
	esac
done
W=${BENCH_TMP:-$(mktemp -d)}
mkdir -p "$W"
cd "$W"
now() { date +%s.%N; }
t0=$(now)
[ -s ref.fa ] || zcat "$REF_GZ" >ref.fa
R=r-$N-$LEN-$SEED
[ -s $R.truth.sam ] || "$MASON" -q -ir ref.fa -n "$N" --seed "$SEED" --illumina-read-length "$LEN" \
	--num-threads "$T" -o $R.1.fq -or $R.2.fq -oa $R.truth.sam >/dev/null 2>&1
t1=$(now); echo "# reads simulated in $(awk "BEGIN { print $t1 - $t0 }") s" >&2
# indexes, in parallel; each one's last file (bwa: .sa) or a stamp written
# after it succeeded (yidx.ok) says it is complete: one cut short by a
# timeout is made again
[ -s ref.sx ] || { seqidx -q -t "$T" ref.fa >ref.sx.tmp && mv ref.sx.tmp ref.sx; } &
case " $PEERS " in *" yara"*) [ -e yidx.ok ] ||
	{ yara_indexer -o yidx ref.fa >/dev/null 2>&1 && touch yidx.ok; } & ;; esac
case " $PEERS " in *" bwa "*) [ -s ref.fa.sa ] || bwa index ref.fa >/dev/null 2>&1 & ;; esac
wait
t0=$(now); echo "# indexes built in $(awk "BEGIN { print $t0 - $t1 }") s" >&2

# the truth: name, then per mate sequence, start, strand, and whether both
# mates are within the bound
samtools view -F 4 $R.truth.sam | awk -F'\t' -v b="$B" '
	function bit(x, v) { return int(x / v) % 2 }   # no and(): mawk
	{ m = bit($2, 64) ? 1 : 2; nm = 0
	  for (i = 12; i <= NF; i++) if ($i ~ /^NM:i:/) nm = substr($i, 6) + 0
	  s[$1, m] = $3 "\t" $4 "\t" (bit($2, 16) ? "-" : "+"); e[$1] = (e[$1] > nm ? e[$1] : nm)
	  if (m == 1) k[++n] = $1 }
	END { for (i = 1; i <= n; i++) if ((k[i], 2) in s)
		print k[i] "\t" s[k[i], 1] "\t" s[k[i], 2] "\t" (e[k[i]] <= b) }' >$R.truth.txt
inb=$(awk '$8 == 1' $R.truth.txt | wc -l)
# PREPARE_ONLY=1: the reads, the truth and the indexes only (a device job
# makes them for every data set first, then times the mappers)
[ -z "$PREPARE_ONLY" ] || exit 0

# score SAM: "conc found found<=B"
score() {
	awk -F'\t' 'NR == FNR { t[$1, 1] = $2 "\t" $3 "\t" $4; t[$1, 2] = $5 "\t" $6 "\t" $7
			ib[$1] = $8; next }
		function bit(x, v) { return int(x / v) % 2 }
		function near(nm, m, c, p, st,   f) {
			if (!((nm, m) in t)) return 0
			split(t[nm, m], f, "\t")
			return f[1] == c && f[3] == st && p - f[2] <= 10 && f[2] - p <= 10 }
		/^@/ { next }
		bit($2, 2) && !bit($2, 4) {
			m = bit($2, 64) ? 1 : 2; nm = $1; sub(/\/[12]$/, "", nm)
			if (m == 1) conc++
			if (near(nm, m, $3, $4, bit($2, 16) ? "-" : "+")) h[nm, m] = 1
			for (i = 12; i <= NF; i++) if ($i ~ /^XA:Z:/) {
				na = split(substr($i, 6), xa, ";")
				for (j = 1; j <= na; j++) {
					if (split(xa[j], x, ",") < 4) continue
					if (x[2] ~ /^[+-]/) { st = substr(x[2], 1, 1); p = substr(x[2], 2) + 0 }
					else { st = x[4]; p = x[2] + 0 }   # yara: name,begin,end,strand,NM
					if (near(nm, m, x[1], p, st) || near(nm, m, x[1], p + 1, st)) h[nm, m] = 1
				}
			}
		}
		END { for (k in h) { split(k, q, SUBSEP); if (q[2] == 1 && ((q[1], 2) in h)) {
				f++; if (ib[q[1]]) fb++ } }
			print conc + 0, f + 0, fb + 0 }' $R.truth.txt "$1"
}
printf '%-34s %8s %12s %9s %8s %9s\n' "mapper ($GENOME, $N x $LEN bp, B $B)" "wall s" \
	"prop.paired" "conc." "found" "found<=B"
row() {   # NAME SAM SECONDS...
	name=$1 sam=$2; shift 2
	best=$(for s in "$@"; do echo "$s"; done | sort -g | head -1)
	pp=$(samtools flagstat "$sam" 2>/dev/null | sed -n 's/^\([0-9]*\) + 0 properly paired.*/\1/p')
	set -- $(score "$sam")
	printf '%-34s %8.2f %12s %9s %8s %9s\n' "$name" "$best" "$pp" "$1" "$2" "$3"
}
# run NAME SAM CMD...: REPS timed runs of CMD (its stdout to SAM)
run() {
	name=$1 sam=$2; shift 2
	ts=
	for r in $(seq "$REPS"); do
		rm -f "$sam"
		a=$(now); "$@" >"$sam.out" 2>"$sam.err" || [ $? != 124 ] ||
			name="$name, stopped at $PEER_TIMEOUT s"; z=$(now)
		[ -s "$sam" ] || mv "$sam.out" "$sam"
		ts="$ts $(awk "BEGIN { print $z - $a }")"
	done
	row "$name" "$sam" $ts
}
sp() { seedfilt -q -t "$T" -E "$B" "$@" -x ref.sx $R.1.fq $R.2.fq | extend -t "$T"; }
run "seedpipe (seedfilt -E $B | extend)" sp.sam sp
# SP_CPU=1: seedpipe again with the filter on the CPU (-d none), where the
# default device is a GPU: the same cores as the peers, nothing more
[ -z "$SP_CPU" ] || run "seedpipe, seedfilt -d none" spc.sam sp -d none
# peer CMD...: CMD, stopped after PEER_TIMEOUT seconds when set
peer() { if [ -n "${PEER_TIMEOUT:-}" ]; then timeout "$PEER_TIMEOUT" "$@"; else "$@"; fi; }
for p in $PEERS; do
	case $p in
	yara) run "yara -e 5" y.sam peer yara_mapper -e 5 -t "$T" yidx $R.1.fq $R.2.fq ;;
	yara-full) run "yara -e 5 -s 5 -y full" yf.sam \
		peer yara_mapper -e 5 -s 5 -y full -t "$T" yidx $R.1.fq $R.2.fq ;;
	razers3) run "razers3 -i 95 (paired)" rz.sam \
		peer razers3 -i 95 -rr 100 -tc "$T" -ll 300 -le 120 -o rz.sam ref.fa $R.1.fq $R.2.fq ;;
	bwa) run "bwa mem" b.sam peer bwa mem -t "$T" ref.fa $R.1.fq $R.2.fq ;;
	esac
done
echo "truth: $(wc -l <$R.truth.txt) pairs, $inb with both mates within $B errors (mason NM)"
grep "pairs," sp.sam.err | sed 's/^/seedpipe: /'
echo "($GENOME, $N pairs of $LEN bp, seed $SEED, $T threads on $(nproc) cores, best of $REPS; work dir $W)"
