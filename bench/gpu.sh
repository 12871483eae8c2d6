#!/bin/bash
# gpu.sh - everything seedpipe does on the lent GPU machine, in one call:
# register NVIDIA's OpenCL, list devices, run the OpenCL tests against the GPU,
# then the GPU timings of each tool that has them.  Run there from the repo
# root with carry/ made by bench/gpu-carry.sh:  bash bench/gpu.sh
# Results go to $OUT (or ./gpu-out) as gpu-results.txt.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$top/gpu-out}
mkdir -p "$out"
log=$out/gpu-results.txt
exec > >(tee -a "$log") 2>&1
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export LD_LIBRARY_PATH=$top/carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$top/carry/bin:$PATH
export SEEDPIPE_BIN=$top/carry/bin SEEDPIPE_BUILD=$top/carry/build BIN=$top/carry/bin
# benchmark rows come back in $OUT; bench/gpu-merge.sh appends them to RESULTS.md
export BENCH_RESULTS=$out/RESULTS-gpu.md BENCH_TSV=$out/results-gpu.tsv
echo "== machine"; nproc; free -g | head -2; nvidia-smi -L 2>/dev/null
echo "== recview --devices"; recview --devices
echo "== OpenCL tests on the GPU where they take a device"
cd "$top/t"
# the backend-equality tests take SEEDPIPE_TEST_DEVICE (t/test-lib.sh), else PoCL
for s in ${GPU_TESTS:-t03*.sh t1010*.sh t2*.sh t3*.sh t4*.sh t6001*.sh t7*.sh}; do
	[ -f "$s" ] || continue
	echo "-- $s"
	SEEDPIPE_TEST_DEVICE=gpu bash "$s" 2>&1 | grep -v '^ok' | tail -15
done
cd "$top"
for b in ${GPU_BENCH:-}; do
	echo "== bench $b"
	bash "bench/$b" || echo "bench $b failed: $?"
done
echo "== gpu.sh done"
