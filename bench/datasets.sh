#!/bin/sh
# datasets.sh - build benchmark data sets under bench/data/ (gitignored).
#
#   sh bench/datasets.sh ecoli                        bench/data/ecoli.fa (E. coli 536)
#   sh bench/datasets.sh chrx                         bench/data/chrx.fa (GRCh37 chrX, first 70 Mbp)
#   sh bench/datasets.sh mason REF N LEN SEED         mason_simulator Illumina reads + truth SAM
#   sh bench/datasets.sh schbath REF N LEN SUBS SEED  reads with exactly SUBS substitutions
#   sh bench/datasets.sh fastq N LEN SEED             uniformly random reads (I/O benchmarks)
#   sh bench/datasets.sh gz FILE                      FILE.gz next to FILE
#   sh bench/datasets.sh human-proxy [SCALE]          bench/data/human-proxy[-SCALE].fa: 24
#                        sequences with GRCh38's chromosome sizes (3.1 Gbp; times SCALE),
#                        from chrX, the contigs assembly, P. falciparum and E. coli with
#                        mutated copies (bench/proxygen.c says how, and what it does not model)
#                        With PROXY_POOL="FILE..." the sources are those files instead:
#                        the four packed by proxy-pool give the same proxy, byte for byte
#   sh bench/datasets.sh proxy-pool                   bench/data/proxy-sources.pool.gz: the
#                        four sources' bases 2 bits each, gzip -9 (proxygen -P; 50 MB
#                        instead of 64 MB of FASTA.gz: what the GPU machine is carried)
#   sh bench/datasets.sh family16s N SEED             a 16S-like family of N sequences
#
# family16s (bench/rrnafam.c, compiled on first use): the 16S rRNA genes of
# E. coli 536's rRNA operons (7 copies of ~1535 bases), then mutated copies
# along a random tree (substitutions and 1-3 base indels, 0.2-1.8 % a
# branch), written to bench/data/family16s-N-sSEED.fa.
#
# REF is a FASTA path or one of the names ecoli, chrx (built on demand).
# Every builder is idempotent: an existing output is kept (outputs are written
# to a temporary name and renamed, so an interrupted build leaves nothing).
# Each prints the path of what it made (the reads file for mason) on stdout.
# BENCH_DATA overrides the directory [bench/data]; ECOLI_GZ, CHRX_GZ and MASON
# the inputs' and the simulator's paths (the GPU machine carries its own);
# MASON_THREADS the simulator's threads (other threads give other reads under
# the same file name: use it only where the set is made afresh, as on the GPU
# machine).

set -eu

here=$(cd "$(dirname "$0")" && pwd)
data=${BENCH_DATA:-$here/data}
ECOLI_GZ=${ECOLI_GZ:-/usr/share/doc/bowtie/examples/genomes/NC_008253.fna.gz}
CHRX_GZ=${CHRX_GZ:-/usr/share/doc/smalt/test/data/hs37chrXtrunc.fa.gz}
MASON=${MASON:-/usr/lib/seqan/bin/mason_simulator}
CONTIGS_GZ=${CONTIGS_GZ:-/usr/share/doc/smalt/test/data/contigs.fa.gz}
PF_GZ=${PF_GZ:-/usr/share/doc/smalt/test/data/genome_1.fa.gz}

die() { echo "datasets: $*" >&2; exit 1; }
note() { echo "datasets: $*" >&2; }
need_file() { # FILE PACKAGE
	[ -r "$1" ] || die "'$1' not found (apt-get install $2, or sh bench/deps.sh)"
}
is_uint() { case $1 in ''|*[!0-9]*) return 1 ;; esac; }

mkdir -p "$data"

# gunzip_to SRC.gz DEST
gunzip_to() {
	if [ ! -s "$2" ]; then
		note "building $2"
		gzip -dc "$1" > "$2.tmp$$" && mv "$2.tmp$$" "$2" || { rm -f "$2.tmp$$"; die "cannot unpack '$1'"; }
	fi
	echo "$2"
}

# ref_path REF: a file path, or a named reference built on demand.
ref_path() {
	case $1 in
	ecoli) need_file "$ECOLI_GZ" bowtie-examples; gunzip_to "$ECOLI_GZ" "$data/ecoli.fa" ;;
	chrx) need_file "$CHRX_GZ" smalt-examples; gunzip_to "$CHRX_GZ" "$data/chrx.fa" ;;
	*) [ -r "$1" ] || die "cannot read reference '$1'"; echo "$1" ;;
	esac
}

# ref_tag REF: a short name for file names.
ref_tag() { b=$(basename "$1"); echo "${b%.*}"; }

# schbath_bin: compile bench/schbath.c once (rebuilt when the source changes).
schbath_bin() {
	bin=$data/.schbath
	if [ ! -x "$bin" ] || [ -n "$(find "$here/schbath.c" -newer "$bin")" ]; then
		command -v "${CC:-cc}" > /dev/null || die "no C compiler (apt-get install build-essential)"
		${CC:-cc} -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -o "$bin.tmp$$" "$here/schbath.c" \
			&& mv "$bin.tmp$$" "$bin" || die "cannot compile bench/schbath.c"
	fi
	echo "$bin"
}

# tool_bin NAME LIBS: compile bench/NAME.c once (rebuilt when the source changes;
# a machine with no compiler, as the GPU machine, uses the one carried in).
tool_bin() {
	bin=$data/.$1
	if [ ! -x "$bin" ] || [ -n "$(find "$here/$1.c" -newer "$bin")" ]; then
		if ! command -v "${CC:-cc}" > /dev/null; then
			[ -x "$bin" ] && { echo "$bin"; return; }
			die "no C compiler (apt-get install build-essential)"
		fi
		${CC:-cc} -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -o "$bin.tmp$$" "$here/$1.c" $2 \
			&& mv "$bin.tmp$$" "$bin" || die "cannot compile bench/$1.c"
	fi
	echo "$bin"
}

cmd=${1-}
[ $# -gt 0 ] && shift
case $cmd in
ecoli|chrx)
	[ $# -eq 0 ] || die "usage: datasets.sh $cmd"
	ref_path "$cmd" ;;
mason)
	[ $# -eq 4 ] || die "usage: datasets.sh mason REF N LEN SEED"
	is_uint "$2" && is_uint "$3" && is_uint "$4" || die "N, LEN and SEED must be integers"
	[ -x "$MASON" ] || die "$MASON not found (apt-get install seqan-apps)"
	ref=$(ref_path "$1")
	out=$data/mason-$(ref_tag "$ref")-${2}x$3-s$4
	if [ ! -s "$out.fq" ] || [ ! -s "$out.sam" ]; then
		note "simulating $out.fq"
		# mason writes its own temporaries next to the output: use a
		# scratch name and rename both files at the end.
		t=$out.tmp$$
		"$MASON" -ir "$ref" -n "$2" --illumina-read-length "$3" --seed "$4" \
			${MASON_THREADS:+--num-threads "$MASON_THREADS"} \
			-o "$t.fq" -oa "$t.sam" > "$t.log" 2>&1 \
			|| { tail -n 20 "$t.log" >&2; rm -f "$t.fq" "$t.sam" "$t.log"; die "mason_simulator failed"; }
		mv "$t.sam" "$out.sam" && mv "$t.fq" "$out.fq" && rm -f "$t.log"
	fi
	echo "$out.fq" ;;
schbath)
	[ $# -eq 5 ] || die "usage: datasets.sh schbath REF N LEN SUBS SEED"
	is_uint "$2" && is_uint "$3" && is_uint "$4" && is_uint "$5" || die "N, LEN, SUBS and SEED must be integers"
	ref=$(ref_path "$1")
	out=$data/schbath-$(ref_tag "$ref")-${2}x$3-e$4-s$5.fq
	if [ ! -s "$out" ]; then
		bin=$(schbath_bin)
		note "generating $out"
		"$bin" "$ref" "$2" "$3" "$4" "$5" > "$out.tmp$$" && mv "$out.tmp$$" "$out" \
			|| { rm -f "$out.tmp$$"; die "schbath failed"; }
	fi
	echo "$out" ;;
fastq)
	[ $# -eq 3 ] || die "usage: datasets.sh fastq N LEN SEED"
	is_uint "$1" && is_uint "$2" && is_uint "$3" || die "N, LEN and SEED must be integers"
	out=$data/random-${1}x$2-s$3.fq
	if [ ! -s "$out" ]; then
		bin=$(schbath_bin)
		note "generating $out"
		"$bin" -r "$1" "$2" "$3" > "$out.tmp$$" && mv "$out.tmp$$" "$out" \
			|| { rm -f "$out.tmp$$"; die "schbath -r failed"; }
	fi
	echo "$out" ;;
gz)
	[ $# -eq 1 ] || die "usage: datasets.sh gz FILE"
	[ -r "$1" ] || die "cannot read '$1'"
	if [ ! -s "$1.gz" ] || [ -n "$(find "$1" -newer "$1.gz")" ]; then
		note "compressing $1"
		gzip -c "$1" > "$1.gz.tmp$$" && mv "$1.gz.tmp$$" "$1.gz" || { rm -f "$1.gz.tmp$$"; die "gzip failed"; }
	fi
	echo "$1.gz" ;;
human-proxy)
	[ $# -le 1 ] || die "usage: datasets.sh human-proxy [SCALE]"
	scale=${1:-1}
	case $scale in 1) out=$data/human-proxy.fa ;; *) out=$data/human-proxy-$scale.fa ;; esac
	if [ ! -s "$out" ]; then
		if [ -n "${PROXY_POOL:-}" ]; then
			# shellcheck disable=SC2086
			set -- $PROXY_POOL
			for f in "$@"; do need_file "$f" "sh bench/datasets.sh proxy-pool"; done
		else
			need_file "$CHRX_GZ" smalt-examples
			need_file "$CONTIGS_GZ" smalt-examples
			need_file "$PF_GZ" smalt-examples
			need_file "$ECOLI_GZ" bowtie-examples
			set -- "$CHRX_GZ" "$CONTIGS_GZ" "$PF_GZ" "$ECOLI_GZ"
		fi
		bin=$(tool_bin proxygen "-lz -lm")
		note "generating $out"
		"$bin" -s "$scale" "$@" > "$out.tmp$$" \
			&& mv "$out.tmp$$" "$out" || { rm -f "$out.tmp$$"; die "proxygen failed"; }
	fi
	echo "$out" ;;
proxy-pool)
	[ $# -eq 0 ] || die "usage: datasets.sh proxy-pool"
	out=$data/proxy-sources.pool.gz
	if [ ! -s "$out" ]; then
		need_file "$CHRX_GZ" smalt-examples
		need_file "$CONTIGS_GZ" smalt-examples
		need_file "$PF_GZ" smalt-examples
		need_file "$ECOLI_GZ" bowtie-examples
		bin=$(tool_bin proxygen "-lz -lm")
		note "packing the proxy's sources into $out"
		"$bin" -P "$out.raw$$" "$CHRX_GZ" "$CONTIGS_GZ" "$PF_GZ" "$ECOLI_GZ" \
			&& gzip -9 -c "$out.raw$$" > "$out.tmp$$" && rm -f "$out.raw$$" && mv "$out.tmp$$" "$out" \
			|| { rm -f "$out.raw$$" "$out.tmp$$"; die "proxygen -P failed"; }
	fi
	echo "$out" ;;
family16s)
	[ $# -eq 2 ] || die "usage: datasets.sh family16s N SEED"
	is_uint "$1" && is_uint "$2" || die "N and SEED must be integers"
	ref=$(ref_path ecoli)
	out=$data/family16s-$1-s$2.fa
	if [ ! -s "$out" ]; then
		bin=$(tool_bin rrnafam "")
		note "generating $out"
		"$bin" "$ref" "$1" "$2" > "$out.tmp$$" && mv "$out.tmp$$" "$out" \
			|| { rm -f "$out.tmp$$"; die "rrnafam failed"; }
	fi
	echo "$out" ;;
-h|--help|'')
	sed -n '2,/^$/s/^# \{0,1\}//p' "$0"
	[ -n "$cmd" ] || exit 2 ;;
*)
	die "unknown subcommand '$cmd' (ecoli, chrx, mason, schbath, fastq, gz, human-proxy, proxy-pool, family16s)" ;;
esac
