#!/bin/sh
# proxy.sh - issue 13 item 6: the human-scale proxy campaign, step by step.
#
#   sh bench/proxy.sh [-s SCALE] [-p ws|gpu] [-n READS] [-k SAMPLE] [STEP...]
#
# The proxy (sh bench/datasets.sh human-proxy SCALE: 3.1 Gbp times SCALE [1])
# is indexed by seqidx, bwa index and yara_indexer (time, peak RSS, disk);
# READS [1000000] mason reads of 100 bp are mapped by seedfilt -E 5 | extend
# -e 5 (every hit within 5 edit operations), and the first SAMPLE [5000] of
# them by razers3 -i 95 -m 100000 and yara_mapper -e 5 -s 5 -y full, whose
# hits are compared with seedpipe's on that sample.  Profiles:
#   ws   the 2-core 24 GB machine: 2 threads, seqidx, seedfilt and extend
#        with -M 16G (-T in the work directory); seedpipe native (-d none)
#   gpu  the H100 machine: 16 threads, the default -M; seedpipe native
#        (-d none) and -d gpu; the peers from the carried tarball; every
#        command must end within PROXY_LIMIT_S [540] (the 600-s command limit)
# STEPs, in order (all, the default: the profile's list):
#   pack    (ws) what the GPU machine is carried: datasets.sh proxy-pool
#           (the four sources, 2 bits a base, gzip -9) and DATA/proxy-peers.tgz
#           (mason_simulator, razers3, yara_indexer, yara_mapper, bwa and their
#           libraries); their sizes
#   peers   (gpu) unpack proxy-peers.tgz into DATA/proxy-peers
#   ref     the proxy FASTA (from PROXY_POOL where set: the same bytes)
#   seqidx  seqidx -t T [-M 16G -T DIR]: time, RSS, bytes per base
#   bwa     bwa index;  yara  yara_indexer (its peak disk is polled)
#   reads   mason reads, and the sample (the first SAMPLE reads)
#   map     seedpipe on all the reads and on the sample (each device; seedfilt's
#           summary in seedpipe.DEV.SET.sam.filt.log)
#   razers3, yaramap   the peers on the sample
#   partmap where yara indexed only a part: seqidx of that part, seedpipe
#           (each device) and yara_mapper on the first PROXY_PART_READS reads
#           (gpu: all; ws: 200000) against it: the per-read time ratio on
#           the same reference, and the hits compared (part-compare)
#   compare hits on the sample (read, strand, start within 5 bases) and the
#           per-read time ratios razers3/seedpipe and yara/seedpipe
# Each step runs once: its outputs are written under temporary names and
# renamed, and DATA/proxy-SCALE/done.PROFILE.STEP records it; a run cut off
# (the GPU machine's 600-s limit) starts again at the first step not done.
# Each prints and writes a row (## proxy-campaign in bench/RESULTS.md; a line
# in results.tsv): wall s, peak RSS (GNU time, the largest process of a
# pipeline), disk of its outputs and the work directory's peak (du every 0.5 s;
# and the file system's growth, df, which sees files deleted while open),
# the machine, the commit, the load, PROXY_NOTE (e.g. "dry run").
# Where a peer's index of the whole proxy would not fit 90% of the free disk
# (yara_indexer: YARA_DISK [37] bytes a base of files open at its peak, most
# deleted while open: 36.8 at 0.03, 18.6 at 0.01; the issue said 25), 80%
# of the memory (YARA_RAM [17] bytes a base of peak RSS: 0.03; bwa: 2) or the
# command limit (bwa index and yara_indexer run on one thread: BWA_S_MBP,
# YARA_S_MBP seconds a Mbase, set below), the step says so and indexes the
# largest prefix of whole sequences (chr1, chr2, ...) that fits, or chr1's
# first bases; yara's sample is mapped against that part and compared with
# seedpipe's hits on it (its time: a part's).
# Below scale 0.07 the proxy is a prefix of the sources (chrX first: no
# mutated copies; proxygen writes the 215 Mbp of sources first): small-scale
# runs check the script, not the speeds of scale 1.
#
# THE PLAN AT SCALE 1 (3.09 Gbp).  Every time here is EXTRAPOLATED, not run:
# linearly in bases from the dry run at 0.01 (2-core machine, load 7-16,
# bench/RESULTS.md ## proxy-campaign) and from the scale-0.2 device rows
# (idx4, idx6, idx7).
#   2-core 24 GB machine, sh bench/proxy.sh (ws; no command limit; ~4 h):
#     pack 1 min; ref 2-3 min; seqidx -M 16G 21 min (0.01 x 100) to 54 min
#     (the 0.05 idx6 row x 20; the target is 45), index ~9.8 bytes/base =
#     30 GB; bwa index 116 min (69.9 s at 0.01); yara_indexer: the whole
#     would need ~32-53 GB of memory (RSS 955 MB at 0.01, 1,587 MB at 0.03)
#     and >=114 GB of disk (36.8 bytes a base at 0.03, growing with the
#     size): a prefix of ~1 Gbp (chr1-chr4, disk bound beside the seqidx
#     index), ~40 min (212.8 s at 0.03); reads (1M) 2-3 min; map: 90 s at
#     0.01, not extrapolable (the mutated families multiply candidates);
#     razers3 -tc 2 on 5,000 reads ~24 min (14.5 s at 0.01); yaramap minutes.
#     Disk peak ~40 GB (proxy 3.2, seqidx 30, bwa 5, yara part), RAM: -M 16G.
#   H100 machine (gpu), calls one after another, <30 s apart (files are kept
#   only so), each command <=600 s, <=30 min in all, <=~55 MiB carried a
#   call (the pool alone is 50.2 MB: two calls carry):
#     call 1  carry bin/, bench/data/.proxygen, bench/data/proxy-sources.pool.gz
#             sh bench/proxy.sh -p gpu ref seqidx      ~4 min (proxygen at
#             0.2: 6.6 s x 5; seqidx -t 16: 6.2 s at 0.05 x 20, 25-34 s at
#             0.2 x 5; the default -p, one 3.1 Gbp partition, not run)
#     call 2  carry bench/data/proxy-peers.tgz (6.4 MB)
#             sh bench/proxy.sh -p gpu peers reads     ~2 min (mason, 16
#             threads: 200k reads 10.8 s at 0.05)
#     call 3  sh bench/proxy.sh -p gpu map             ~4 min (4 runs, each
#             loading the ~30 GB index: 0.2's 7.8 GB took 5 s)
#     call 4  sh bench/proxy.sh -p gpu razers3         ~3.2 min (0.2: 37.8 s
#             for 5,000 reads, x 5)
#     call 5  PROXY_LIMIT_S=300 sh bench/proxy.sh -p gpu yara yaramap   ~5.5 min
#             (the whole proxy cannot fit 64 GB beside the seqidx index: a
#             part, chr1's first 300 Mbase at most: all of chr1)
#     call 6  PROXY_LIMIT_S=300 sh bench/proxy.sh -p gpu bwa compare    ~5 min
#             (a part of 214 Mbase at most: chr1's first bases)
#     ~24 min in all; a call cut off is run again (steps done are skipped);
#     disk peak ~45 of 64 GB (proxy 3.2, index 30, reads and SAMs ~3, parts);
#     RAM peak: seqidx's at the default -M (64 GB), or yara's part.
#   The device check of this profile (scale 0.05 from chrX and E. coli, 200k
#   reads, PROXY_LIMIT_S=30; H100 host, bench/RESULTS.md) ran every step in
#   63 s: seqidx 6.2 s, 4.0 GB, 9.50 bytes/base; map 1.69 s native, 3.20 s
#   -d gpu (identical SAM but @PG); razers3 -tc 16, 2,000 reads 9.74 s.
#
# Environment: BIN, BENCH_DATA, BENCH_RESULTS, BENCH_TSV, PROXY_NOTE, COMMIT
# (a copy without git), PROXY_POOL (gpu: DATA/proxy-sources.pool.gz),
# PROXY_LIMIT_S, PROXY_PART (seqidx -p; ws: 1000000000, so that a partition
# of ~8.6 GiB fits seedfilt -M 16G beside a batch of reads: at the default
# -p 3000000000 partition 0 alone is 25.7 GiB and seedfilt -M 16G refuses;
# gpu: the default), PROXY_THREADS, PROXY_DEVS (seedpipe's -d values), PEERS (the
# peers' directory; ws: the Debian paths), MASON_THREADS (gpu: 16), YARA_DISK,
# YARA_RAM, BWA_S_MBP, YARA_S_MBP, SEED [1].

set -eu

. "$(dirname "$0")/lib.sh"

scale=1 profile=ws nreads=1000000 nsample=5000
while getopts s:p:n:k:h opt; do
	case $opt in
	s) scale=$OPTARG ;;
	p) profile=$OPTARG ;;
	n) nreads=$OPTARG ;;
	k) nsample=$OPTARG ;;
	h) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
case $profile in
ws) T=2 MOPT="-M 16G" DEVS=none LIMIT=${PROXY_LIMIT_S:-0} PART=${PROXY_PART-1000000000}
    steps_all="pack ref seqidx bwa yara reads map razers3 yaramap partmap compare" PART_READS=200000
    PEERS=${PEERS:-} ;;
gpu) T=16 MOPT="" DEVS="none gpu" LIMIT=${PROXY_LIMIT_S:-540} PART=${PROXY_PART-}
    PROXY_POOL=${PROXY_POOL:-$DATA/proxy-sources.pool.gz} MASON_THREADS=${MASON_THREADS:-16}
    export PROXY_POOL MASON_THREADS
    steps_all="peers ref seqidx reads map razers3 yara yaramap partmap bwa compare" PART_READS=$nreads
    PEERS=${PEERS:-$DATA/proxy-peers/bin}
    [ -d "$DATA/proxy-peers/lib" ] && export LD_LIBRARY_PATH="$DATA/proxy-peers/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;;
*) die "profile '$profile': ws or gpu" ;;
esac
T=${PROXY_THREADS:-$T} DEVS=${PROXY_DEVS:-$DEVS}
peer() { # NAME: the peer's path
	if [ -n "$PEERS" ]; then echo "$PEERS/$1"
	elif [ "$1" = bwa ]; then echo bwa
	else echo "/usr/lib/seqan/bin/$1"; fi
}
YARA_DISK=${YARA_DISK:-37} YARA_RAM=${YARA_RAM:-17}
# one-thread index rates, s a Mbase: ws as measured at 0.01/0.03 (load 7-8);
# gpu twice the H100 host's at 0.05 (bwa 0.70 on 24.6 Mbase, yara 0.49 on
# 12.4): both grow with the size
case $profile in
ws) BWA_S_MBP=${BWA_S_MBP:-2.3} YARA_S_MBP=${YARA_S_MBP:-2.3} ;;
*) BWA_S_MBP=${BWA_S_MBP:-1.4} YARA_S_MBP=${YARA_S_MBP:-1.0} ;;
esac
SEED=${SEED:-1}
work=$DATA/proxy-$scale
mkdir -p "$work"
results=${BENCH_RESULTS:-$HERE/RESULTS.md}
tsv=${BENCH_TSV:-$HERE/results.tsv}
[ $# -gt 0 ] || set -- $steps_all
[ -x /usr/bin/time ] || echo "proxy: no GNU time at /usr/bin/time: peak RSS not measured (-)" >&2

cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || uname -m)
machine="$cpu, $(nproc) cpu, $(awk '/^MemTotal:/ { printf "%.0f", $2 / 1048576 }' /proc/meminfo) GiB"
# COMMIT: where the tree is a copy without git of its own (the GPU machine's
# copy lies inside another repository's work tree: not that one's HEAD)
if [ "$(git -C "$ROOT" rev-parse --show-toplevel 2>/dev/null)" = "$ROOT" ] &&
	commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null); then
	git -C "$ROOT" diff --quiet HEAD -- 2>/dev/null || commit="$commit-dirty"
else
	commit=${COMMIT:--}
fi

# mb KB: megabytes, or - for -
mb() { case $1 in -) echo - ;; *) echo $(($1 / 1024)) ;; esac; }
# row STEP CMD WALL RSS_KB DISK_KB PEAK_KB NOTE: print, and append to the table
# and the TSV (- where not measured); paths shown relative to the repository
row() {
	load=$(cut -d' ' -f1 /proc/loadavg)
	note="${PROXY_NOTE:+$PROXY_NOTE; }$7; load $load"
	c=$(printf '%s' "$2" | sed "s#$ROOT/##g")
	line="| $(date -u +%Y-%m-%dT%H:%MZ) | $machine | $commit | $profile | $scale | $1 | \`$(printf '%s' "$c" | tr '`' "'" | sed 's/|/\\|/g')\` | $3 | $(mb "$4") | $(mb "$5") / $(mb "$6") | $(printf '%s' "$note" | sed 's/|/\\|/g') |"
	echo "proxy: $1: $3 s, peak RSS $(mb "$4") MB, disk $(mb "$5") MB (work dir peak $(mb "$6") MB); $7" >&2
	h='## proxy-campaign'
	[ -f "$results" ] || : >"$results"
	if ! grep -qxF "$h" "$results"; then
		printf '\n%s\n\n%s\n%s\n' "$h" \
			'| date | machine | commit | profile | scale | step | command | wall s | peak RSS MB | disk MB (outputs / work dir peak) | note |' \
			'|---|---|---|---|---|---|---|---|---|---|---|' >>"$results"
	fi
	H=$h ROW=$line awk '$0 == ENVIRON["H"] { s = 1 } s && /^\|/ { t = 1 } s && t && !/^\|/ && !d { print ENVIRON["ROW"]; d = 1; s = 0 }
		{ print } END { if (s && !d) print ENVIRON["ROW"] }' "$results" >"$results.tmp$$" && mv "$results.tmp$$" "$results"
	printf '%s\tproxy-%s\t%s\t%s\t1\t%s\t-\t%s\t-\t-\t%s\t-\t-\t-\t-\t-\t%s\t-\t%s\t%s\n' "$(date -u +%Y-%m-%dT%H:%MZ)" \
		"$1" "$machine" "$commit" "$(printf '%s' "$c" | tr '\t' ' ')" "$3" "$(mb "$4")" "$3" "$note" "$load" >>"$tsv"
}

# timed STEP OUTPUTS NOTE CMD: run CMD under GNU time with the work dir's disk
# polled; OUTPUTS (paths, du) measured after; one row
timed() {
	st=$1 outs=$2 tnote=$3 cmd=$4
	echo "proxy: $st: $cmd" >&2
	peakf=$work/.peak.$st
	d0=$(du -sk "$work" | cut -f1) f0=$(fsused)
	echo "$d0" >"$peakf"; echo "$f0" >"$peakf.fs"
	# du misses files deleted while open (yara's external strings): df too
	( while :; do d=$(du -sk "$work" 2>/dev/null | cut -f1) f=$(fsused)
		[ "${d:-0}" -gt "$(cat "$peakf")" ] && echo "$d" >"$peakf.n" && mv "$peakf.n" "$peakf"
		[ "${f:-0}" -gt "$(cat "$peakf.fs")" ] && echo "$f" >"$peakf.m" && mv "$peakf.m" "$peakf.fs"; sleep 0.5; done ) &
	poll=$!
	t0=$(date +%s%N)
	rc=0
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f '%M' -o "$work/.time.$st" sh -c "$cmd" || rc=$?
	else
		echo - >"$work/.time.$st"; sh -c "$cmd" || rc=$?
	fi
	t1=$(date +%s%N)
	kill "$poll" 2>/dev/null; wait "$poll" 2>/dev/null || true
	[ $rc -eq 0 ] || die "$st failed (exit $rc): $cmd"
	d=$(du -sk "$work" | cut -f1); p=$(cat "$peakf"); [ "$d" -gt "$p" ] && p=$d
	# shellcheck disable=SC2086
	o=$(du -skc $outs 2>/dev/null | tail -n 1 | cut -f1)
	row "$st" "$cmd" "$(awk -v n=$((t1 - t0)) 'BEGIN { printf "%.2f", n / 1e9 }')" \
		"$(tail -n 1 "$work/.time.$st")" "$o" "$p" "$tnote; the work dir grew by up to $(((p - d0) / 1024)) MB during the step, the file system's use (df: other writers included) by $((($(cat "$peakf.fs") - f0) / 1024)) MB"
	awk -v n=$((t1 - t0)) 'BEGIN { printf "%.3f\n", n / 1e9 }' >"$work/wall.$profile.$st"
}

fsused() { df -Pk "$work" | awk 'NR == 2 { print $3 }'; }
done_file() { echo "$work/done.$profile.$1"; }
bases() { awk '!/^>/ { n += length($0) } END { print n + 0 }' "$1"; }

# part STEP S_PER_MBP DISK_PER_BASE RAM_PER_BASE: the reference STEP indexes:
# the proxy, or the largest prefix of its sequences that fits the command
# limit, 90% of the free disk and 80% of the memory
part() {
	n=$(bases "$ref")
	free=$(df -Pk "$work" | awk 'NR == 2 { print $4 * 1024 }')
	mem=$(awk '/^MemTotal:/ { print $2 * 1024 }' /proc/meminfo)
	fit=$(awk -v n="$n" -v r="$2" -v f="$3" -v ram="$4" -v lim="$LIMIT" -v free="$free" -v mem="$mem" 'BEGIN {
		m = n; if (f > 0 && m * f > 0.9 * free) m = 0.9 * free / f
		if (ram > 0 && m * ram > 0.8 * mem) m = 0.8 * mem / ram
		if (lim > 0 && m / 1e6 * r > lim) m = lim / r * 1e6; printf "%.0f", m }')
	if [ "$fit" -ge "$n" ]; then echo "$ref"; return; fi
	echo "proxy: $1: the whole proxy ($n bases) does not fit (free disk $free bytes at $3 a base; memory $mem bytes at $4 a base; limit ${LIMIT}s at $2 s/Mbase): the largest prefix of whole sequences up to $fit bases instead (or the first sequence's first $fit bases)" >&2
	# (no whole sequence fits: the first one's first FIT bases)
	awk -v m="$fit" 'NR == FNR { if (/^>/) k++; else len[k] += length($0); next }
		FNR == 1 { for (i = 1; i <= k && tot + len[i] <= m; i++) tot += len[i]; keep = i - 1 }
		/^>/ { j++ } keep > 0 && j <= keep { print }
		keep == 0 && j == 1 && (/^>/ || got < m) { print; if (!/^>/) got += length($0) }' "$ref" "$ref" >"$work/$1-part.fa"
	echo "$work/$1-part.fa"
}

# keys SAM [NAMES]: "read strand sequence pos" of every mapped record (no
# samtools: awk); with NAMES (a file, one sequence name a line), those on them only
keys() {
	awk -F'\t' 'FILENAME == "-" { want[$1] = 1; w = 1; next }
		!/^@/ && int($2 / 4) % 2 == 0 && (!w || ($3 in want)) { print $1, int($2 / 16) % 2, $3, $4 }' \
		${2:+-} "$1" <"${2:-/dev/null}" | LC_ALL=C sort -u
}
# far A B: of B's records with none of A's (same read, strand, sequence)
# within 5 bases: how many, of how many reads, how many of them within 100
far() {
	awk 'NR == FNR { k = $1 " " $2 " " $3; p[k] = p[k] " " $4; next }
		{ k = $1 " " $2 " " $3; n = split(p[k], a, " "); b = -1
		  for (i = 1; i <= n; i++) { d = a[i] - $4; if (d < 0) d = -d; if (b < 0 || d < b) b = d }
		  if (b < 0 || b > 5) { f++; if (!($1 in r)) { r[$1] = 1; nr++ } if (b >= 0 && b <= 100) w++ } }
		END { printf "%d (of %d reads; %d of them within 100 bases of one)", f, nr, w }' "$1" "$2"
}
# near A B: records of B with a record of A (same read, strand, sequence) starting within 5 bases
near() { awk 'NR == FNR { s[$1 " " $2 " " $3 " " $4] = 1; next } { h = 0; for (d = -5; d <= 5; d++) if (($1 " " $2 " " $3 " " ($4 + d)) in s) h = 1; n += h } END { print n + 0 }' "$1" "$2"; }

ref=$DATA/human-proxy-$scale.fa
[ "$scale" = 1 ] && ref=$DATA/human-proxy.fa
ix=$work/proxy.sx
reads=$work/reads.fq sample=$work/sample.fq

step() {
	case $1 in
	pack)
		pool=$(dataset proxy-pool)
		pt=$DATA/proxy-peers.tgz
		if [ ! -s "$pt" ]; then
			rm -rf "$work/peers.tmp"; mkdir -p "$work/peers.tmp/bin" "$work/peers.tmp/lib"
			for p in mason_simulator razers3 yara_indexer yara_mapper bwa; do
				x=$(command -v "$(peer $p)") || die "peer $p not found (sh bench/deps.sh)"
				cp "$x" "$work/peers.tmp/bin/"
			done
			ldd "$work"/peers.tmp/bin/* | awk '$3 ~ /^\// { print $3 }' | sort -u | while read -r l; do
				case $(basename "$l") in libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*) ;;
				*) cp -L "$l" "$work/peers.tmp/lib/" ;; esac
			done
			tar -C "$work/peers.tmp" -czf "$pt.tmp" bin lib && mv "$pt.tmp" "$pt"
			rm -rf "$work/peers.tmp"
		fi
		row pack "datasets.sh proxy-pool; tar czf proxy-peers.tgz" - - $(( ($(fsize "$pool") + $(fsize "$pt")) / 1024 )) - \
			"carried to the GPU machine: proxy-sources.pool.gz $(fsize "$pool") bytes, proxy-peers.tgz $(fsize "$pt") bytes"
		;;
	peers)
		[ -x "$DATA/proxy-peers/bin/razers3" ] || { mkdir -p "$DATA/proxy-peers" && tar -C "$DATA/proxy-peers" -xzf "$DATA/proxy-peers.tgz"; }
		for p in mason_simulator razers3 yara_indexer yara_mapper bwa; do
			"$(peer $p)" --version >/dev/null 2>&1 || [ $p = bwa ] || die "peer $p does not run here"
		done ;;
	ref)
		timed ref "$ref" "proxy FASTA${PROXY_POOL:+ from $(for f in $PROXY_POOL; do basename "$f"; done | tr '\n' ' ' | sed 's/ $//')}" \
			"BENCH_DATA=$DATA sh $HERE/datasets.sh human-proxy $scale >/dev/null"
		;;
	seqidx)
		rm -rf "$work/seqidx.tmp"; mkdir -p "$work/seqidx.tmp"
		timed seqidx "$ix" "$(bases "$ref") bases" \
			"seqidx -q -t $T $MOPT${PART:+ -p $PART} -T $work/seqidx.tmp -o $ix $ref"
		rm -rf "$work/seqidx.tmp"
		row seqidx-size "seqidx --info $ix" - - $(( $(fsize "$ix") / 1024 )) - \
			"$(fsize "$ix") bytes = $(awk -v a="$(fsize "$ix")" -v b="$(bases "$ref")" 'BEGIN { printf "%.2f", a / b }') bytes per base; --info: $(seqidx --info "$ix" | awk -F'\t' '$1 == "partitions" || $1 == "weight" { printf "%s %s, ", $1, $2 } $1 == "bytes_per_base" { printf "%s %s%s, ", $2, $3, ($4 == "" ? "" : " (" $4 ")") }' | sed 's/, $//')"
		;;
	bwa)
		r=$(part bwa "$BWA_S_MBP" 0 2)
		rm -rf "$work/bwa.tmp" "$work/bwa"; mkdir -p "$work/bwa.tmp"
		timed bwa "$work/bwa.tmp" "bwa index of $(basename "$r") ($(bases "$r") bases)" \
			"$(peer bwa) index -p $work/bwa.tmp/proxy $r 2>$work/bwa.log"
		mv "$work/bwa.tmp" "$work/bwa" ;;
	yara)
		r=$(part yara "$YARA_S_MBP" "$YARA_DISK" "$YARA_RAM")
		rm -rf "$work/yara.tmp" "$work/yara"; mkdir -p "$work/yara.tmp"
		timed yara "$work/yara.tmp" "yara_indexer of $(basename "$r") ($(bases "$r") bases); disk peak: the work dir's" \
			"TMPDIR=$work/yara.tmp $(peer yara_indexer) -o $work/yara.tmp/proxy -td $work/yara.tmp $r >$work/yara.log 2>&1"
		mv "$work/yara.tmp" "$work/yara"; echo "$r" >"$work/yara.ref" ;;
	reads)
		timed reads "$work/mason-*" "$nreads mason reads of 100 bp, seed $SEED" \
			"MASON=$(peer mason_simulator) BENCH_DATA=$work sh $HERE/datasets.sh mason $ref $nreads 100 $SEED >$work/reads.path"
		ln -sf "$(cat "$work/reads.path")" "$reads"
		head -n $((4 * nsample)) "$reads" >"$sample.tmp" && mv "$sample.tmp" "$sample" ;;
	map)
		for dev in $DEVS; do for set in all sample; do
			r=$reads; [ $set = sample ] && r=$sample
			out=$work/seedpipe.$dev.$set.sam
			# each run once (a call cut off between them goes on with the next)
			[ -f "$(done_file "map-$dev-$set")" ] && continue
			timed "map-$dev-$set" "$out" "seedpipe -d $dev, $(($(wc -l <"$r") / 4)) reads" \
				"seedfilt -t $T -d $dev $MOPT -T $work -x $ix $r 2>$out.filt.log | extend -q -t $T -d $dev -e 5 $MOPT -o $out.tmp && mv $out.tmp $out"
			date -u +%Y-%m-%dT%H:%MZ >"$(done_file "map-$dev-$set")"
		done; done ;;
	razers3)
		timed razers3 "$work/razers3.sam" "$nsample reads (the sample)" \
			"$(peer razers3) -tc $T -i 95 -m 100000 -o $work/razers3.tmp.sam $ref $sample >/dev/null && mv $work/razers3.tmp.sam $work/razers3.sam" ;;
	yaramap)
		[ -d "$work/yara" ] || die "yaramap: run the yara step first"
		timed yaramap "$work/yara.sam" "$nsample reads (the sample), index of $(basename "$(cat "$work/yara.ref")")" \
			"$(peer yara_mapper) -t $T -e 5 -s 5 -y full -sa record -o $work/yara.tmp.sam $work/yara/proxy $sample && mv $work/yara.tmp.sam $work/yara.sam" ;;
	partmap)
		# yara indexed a part: seedpipe and yara timed on that same reference
		[ -s "$work/yara.ref" ] || die "partmap: run the yara step first"
		rp=$(cat "$work/yara.ref")
		if [ "$rp" = "$ref" ]; then echo "proxy: partmap: yara indexed the whole proxy (compare times it)" >&2; return 0; fi
		pn=${PROXY_PART_READS:-$PART_READS}
		head -n $((4 * pn)) "$reads" >"$work/part-reads.fq.tmp" && mv "$work/part-reads.fq.tmp" "$work/part-reads.fq"
		pn=$(($(wc -l <"$work/part-reads.fq") / 4))
		timed part-seqidx "$work/part.sx" "seqidx of $(basename "$rp") ($(bases "$rp") bases): seedpipe and yara on the same part" \
			"seqidx -q -t $T $MOPT -T $work -o $work/part.sx $rp"
		for dev in $DEVS; do
			timed "part-map-$dev" "$work/part.$dev.sam" "seedpipe -d $dev, $pn reads (all reads' first), against $(basename "$rp")" \
				"seedfilt -q -t $T -d $dev $MOPT -T $work -x $work/part.sx $work/part-reads.fq | extend -q -t $T -d $dev -e 5 $MOPT -o $work/part.$dev.sam.tmp && mv $work/part.$dev.sam.tmp $work/part.$dev.sam"
		done
		timed part-yaramap "$work/part.yara.sam" "yara_mapper full sensitivity, $pn reads, against $(basename "$rp")" \
			"$(peer yara_mapper) -t $T -e 5 -s 5 -y full -sa record -o $work/part.yara.tmp.sam $work/yara/proxy $work/part-reads.fq && mv $work/part.yara.tmp.sam $work/part.yara.sam"
		keys "$work/part.none.sam" >"$work/pa.k"; keys "$work/part.yara.sam" >"$work/py.k"
		msg="$pn reads against $(basename "$rp") ($(bases "$rp") bases): seedpipe $(wc -l <"$work/pa.k") hits ($(cut -d' ' -f1 "$work/pa.k" | uniq | wc -l) reads), yara $(wc -l <"$work/py.k") hits ($(cut -d' ' -f1 "$work/py.k" | uniq | wc -l) reads), $(LC_ALL=C comm -12 "$work/pa.k" "$work/py.k" | wc -l) identical, $(near "$work/pa.k" "$work/py.k") of yara's within 5 of one of seedpipe's, $(near "$work/py.k" "$work/pa.k") of seedpipe's within 5 of yara's; yara's with none of seedpipe's within 5: $(far "$work/pa.k" "$work/py.k"); seedpipe's with none of yara's: $(far "$work/py.k" "$work/pa.k")"
		for dev in $DEVS; do
			if [ "$dev" != none ]; then
				if [ "$(grep -v '^@PG' "$work/part.none.sam" | cksum)" = "$(grep -v '^@PG' "$work/part.$dev.sam" | cksum)" ]; then msg="$msg; -d $dev SAM = -d none SAM but @PG"
				else msg="$msg; -d $dev SAM DIFFERS from -d none"; fi
			fi
			msg="$msg; yara/seedpipe -d $dev: $(awk -v a="$(cat "$work/wall.$profile.part-map-$dev")" -v b="$(cat "$work/wall.$profile.part-yaramap")" 'BEGIN { printf "%.2fx", b / a }')"
		done
		row part-compare "keys of the part's SAMs" - - - - "$msg" ;;
	compare)
		keys "$work/seedpipe.none.sample.sam" >"$work/a.k"
		na=$(wc -l <"$work/a.k")
		truth=$(cat "$work/reads.path"); truth=${truth%.fq}.sam
		msg="mason's truth: $(awk -F'\t' '!/^@/ { for (i = 12; i <= NF; i++) if ($i ~ /^NM:i:/ && substr($i, 6) + 0 > 5) n++ } END { print n + 0 }' "$truth") of $nreads reads with more than 5 edits (NM)"
		msg="$msg; sample of $nsample reads: seedpipe $na hits ($(cut -d' ' -f1 "$work/a.k" | uniq | wc -l) reads)"
		for p in razers3 yara; do
			[ -s "$work/$p.sam" ] || continue
			keys "$work/$p.sam" >"$work/$p.k"
			cp "$work/a.k" "$work/ap.k"
			if [ $p = yara ] && [ "$(cat "$work/yara.ref")" != "$ref" ]; then
				# yara indexed a part: seedpipe's hits on that part only
				sed -n 's/^>\([^ ]*\).*/\1/p' "$(cat "$work/yara.ref")" >"$work/part.names"
				keys "$work/seedpipe.none.sample.sam" "$work/part.names" >"$work/ap.k"
				msg="$msg; yara's index holds $(wc -l <"$work/part.names") sequences (a part), seedpipe's $(wc -l <"$work/ap.k") hits there"
			fi
			nb=$(wc -l <"$work/$p.k")
			msg="$msg; $p $nb hits ($(cut -d' ' -f1 "$work/$p.k" | uniq | wc -l) reads), $(LC_ALL=C comm -12 "$work/ap.k" "$work/$p.k" | wc -l) identical, $(near "$work/ap.k" "$work/$p.k") of $p's within 5 of one of seedpipe's, $(near "$work/$p.k" "$work/ap.k") of seedpipe's within 5 of $p's; $p's with none of seedpipe's within 5: $(far "$work/ap.k" "$work/$p.k"); seedpipe's with none of $p's: $(far "$work/$p.k" "$work/ap.k")"
		done
		[ -s "$work/yara.ref" ] && [ "$(cat "$work/yara.ref")" != "$ref" ] && msg="$msg (yara indexed a part: its time per read is compared in part-compare, on that part)"
		for dev in $DEVS; do
			if [ "$dev" != none ]; then   # identical but the @PG lines (their command lines)
				grep -v '^@PG' "$work/seedpipe.none.all.sam" | cksum >"$work/sam.none.ck"
				grep -v '^@PG' "$work/seedpipe.$dev.all.sam" | cksum >"$work/sam.$dev.ck"
				if cmp -s "$work/sam.none.ck" "$work/sam.$dev.ck"; then msg="$msg; -d $dev SAM = -d none SAM but @PG (cksum $(cat "$work/sam.none.ck"))"
				else msg="$msg; -d $dev SAM DIFFERS from -d none (cksums $(cat "$work/sam.none.ck") / $(cat "$work/sam.$dev.ck"))"; fi
			fi
			for p in razers3 yaramap; do
				[ -s "$work/wall.$profile.$p" ] || continue
				# yara against a part, seedpipe against the whole: no ratio (partmap's)
				[ $p = yaramap ] && [ "$(cat "$work/yara.ref")" != "$ref" ] && continue
				msg="$msg; $p/seedpipe -d $dev per read: $(awk -v a="$(cat "$work/wall.$profile.map-$dev-all")" -v na="$nreads" \
					-v b="$(cat "$work/wall.$profile.$p")" -v nb="$nsample" 'BEGIN { printf "%.2fx", (b / nb) / (a / na) }')"
			done
		done
		row compare "keys of the sample's SAMs" - - - - "$msg" ;;
	*) die "unknown step '$1'" ;;
	esac
}

for s in "$@"; do
	if [ -f "$(done_file "$s")" ]; then echo "proxy: $s: done before" >&2; continue; fi
	step "$s"
	date -u +%Y-%m-%dT%H:%MZ >"$(done_file "$s")"
done
