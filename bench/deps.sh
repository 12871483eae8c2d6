#!/bin/sh
# deps.sh - apt-get install the peers and data sets the benchmarks need
# (only those missing; see shared PEERS.md for what each one is).
here=$(cd "$(dirname "$0")" && pwd)
exec sh "$here/../build-aux/deps.sh" time gnuplot-nox hyperfine seqtk seqan-apps \
	bwa bowtie bowtie2 bowtie-examples bowtie2-examples smalt-examples gzip coreutils util-linux \
	libedlib-dev edlib-aligner samtools minimap2 python3
