#!/bin/bash
test_description='seedfilt -m mem: the OpenCL kernel finds what the native threads find, byte for byte'
. ./test-lib.sh

MEM_ORACLE=$SEEDPIPE_BUILD/t/mem_oracle

test_expect_success OPENCL 'setup' '
	"$MEM_ORACLE" -G 11 3 3000 >ref.fa &&
	"$MEM_ORACLE" -R 12 200 90 ref.fa >reads.fa &&
	"$MEM_ORACLE" -G 13 2 1200 AC >rep.fa &&
	"$MEM_ORACLE" -R 14 50 60 rep.fa >readsr.fa &&
	seqidx -q -m fm -o ref.sx ref.fa &&
	seqidx -q -m fm -u 4 -l 4 -p 500 -o p.sx ref.fa &&
	seqidx -q -m fm -u 4 -l 4 -o rep.sx rep.fa
'

# same NAME INDEX READS 'SEEDFILT OPTIONS': text and candidates, -d none = the device
same() {
	test_expect_success OPENCL "$1" '
		SEEDPIPE_DEVICE=none seedfilt -q -x '"$2"' -m mem -O mummer '"$4"' '"$3"' >n.txt &&
		SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -q -x '"$2"' -m mem -O mummer '"$4"' '"$3"' >d.txt &&
		test_cmp n.txt d.txt &&
		test -s n.txt &&
		SEEDPIPE_DEVICE=none seedfilt -q -x '"$2"' -m mem '"$4"' '"$3"' >n.sp &&
		SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -q -x '"$2"' -m mem '"$4"' '"$3"' >d.sp &&
		recview n.sp >n.tsv && recview d.sp >d.tsv &&
		test_cmp n.tsv d.tsv
	'
}

same 'three sequences, L 12' ref.sx reads.fa '-L 12'
same 'L 30, -mum' ref.sx reads.fa '-L 30 -mum'
same 'window 1' ref.sx reads.fa '-L 14 -w 1'
same 'partitions cut inside sequences' p.sx reads.fa '-L 10'
same 'repetitive: more matches than the first output holds (a second run)' rep.sx readsr.fa '-L 4'
same 'batches of 5 reads' ref.sx reads.fa '-L 12 -B 5'

test_expect_success OPENCL 'long runs of N: the deep rows left out on the device too' '
	python3 -c "
import random
R = random.Random(3)
def rnd(n): return \"\".join(R.choice(\"ACGT\") for _ in range(n))
s = rnd(2000) + \"N\" * 2500 + \"A\" * 30 + rnd(1500)
open(\"nref.fa\", \"w\").write(\">s0\\n\" + s + \"\\n\")
f = open(\"nreads.fa\", \"w\")
for k in range(60):
    p = R.randrange(1800, 4300)
    f.write(\">r%d\\n%s\\n\" % (k, s[p:p + 100]))
f.write(\">a\\n\" + \"A\" * 40 + rnd(60) + \"\\n>n\\n\" + \"N\" * 30 + rnd(70) + \"\\n\")
" &&
	seqidx -q -m fm -o n.sx nref.fa &&
	"$MEM_ORACLE" -l 20 nref.fa nreads.fa >want &&
	SEEDPIPE_DEVICE=none seedfilt -q -x n.sx -m mem -L 20 -O mummer nreads.fa >n.txt &&
	SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -q -x n.sx -m mem -L 20 -O mummer nreads.fa >d.txt &&
	test_cmp want n.txt &&
	test_cmp want d.txt
'

test_expect_success OPENCL 'poly-A next to N runs: the shallow rows of a window in the kernel mem_shal, the order kept' '
	python3 -c "
import random
R = random.Random(7)
def rnd(n): return \"\".join(R.choice(\"ACGT\") for _ in range(n))
s = rnd(2000) + \"A\" * 700 + \"N\" * 2000 + rnd(1500) + \"N\" * 1200 + \"A\" * 300 + rnd(500)
open(\"sref.fa\", \"w\").write(\">s0\\n\" + s + \"\\n\")
f = open(\"sreads.fa\", \"w\")
for k in range(8):
    f.write(\">a%d\\n%s\\n\" % (k, rnd(1 + k) + \"C\" + \"A\" * (25 + 3 * k) + \"G\" + rnd(50)))
for k in range(20):
    p = R.randrange(1900, 2800)
    f.write(\">r%d\\n%s\\n\" % (k, s[p:p + 100].replace(\"N\", \"A\")))
" &&
	seqidx -q -m fm -o s.sx sref.fa &&
	"$MEM_ORACLE" -l 20 sref.fa sreads.fa >want &&
	test $(wc -l <want) -gt 10000 &&
	for v in "0 7" "0 1" "64 0" "1000000 0"; do
		set -- $v &&
		SEEDPIPE_DEVICE=$TEST_OCL_DEVICE SEEDPIPE_MEM_SHAL_MIN=$1 SEEDPIPE_MEM_SHAL_WG=$2 \
			SEEDPIPE_MEM_WIDE_MIN=0 seedfilt -v -x s.sx -m mem -L 20 -O mummer sreads.fa >d.txt 2>err &&
		test_cmp want d.txt &&
		if test $1 = 1000000; then test_grep "shallow rows of 0 windows" err
		else test_grep "shallow rows of [1-9][0-9]* windows" err; fi || return 1
	done &&
	# deep windows whose rows beside the deep ones are many: all of it in mem_wide (shallow rows too)
	for v in "1 7" "1 1" "50 128" "1000000 0"; do
		set -- $v &&
		SEEDPIPE_DEVICE=$TEST_OCL_DEVICE SEEDPIPE_MEM_WIDE_MIN=$1 SEEDPIPE_MEM_WIDE_WG=$2 \
			seedfilt -v -x s.sx -m mem -L 20 -O mummer sreads.fa >d.txt 2>err &&
		test_cmp want d.txt &&
		if test $1 = 1000000; then test_grep "left steps of 0 in mem_wide" err
		else test_grep "left steps of [1-9][0-9]* in mem_wide" err; fi || return 1
	done
'

test_expect_success OPENCL 'wide row ranges (a repeat-rich reference): the device scans them ahead' '
	python3 -c "
import random
R = random.Random(5)
s = \"\".join(R.choice(\"AAAAAAAC\") for _ in range(20000)) + \"\".join(R.choice(\"ACGT\") for _ in range(3000))
open(\"wide.fa\", \"w\").write(\">w0\\n\" + s + \"\\n\")
f = open(\"wreads.fa\", \"w\")
for k in range(12):
    p = R.randrange(0, len(s) - 80)
    r = list(s[p:p + 80])
    for j in range(2):
        r[R.randrange(80)] = R.choice(\"ACGT\")
    f.write(\">r%d\\n%s\\n\" % (k, \"\".join(r)))
" &&
	seqidx -q -m fm -o wide.sx wide.fa &&
	"$MEM_ORACLE" -l 12 wide.fa wreads.fa >want &&
	SEEDPIPE_DEVICE=none seedfilt -q -x wide.sx -m mem -L 12 -O mummer wreads.fa >n.txt &&
	SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -q -x wide.sx -m mem -L 12 -O mummer wreads.fa >d.txt &&
	test_cmp want n.txt &&
	test_cmp want d.txt
'

test_expect_success OPENCL 'wide windows: their left steps by a work-group each (mem_wide), every lane a half-block, the order kept' '
	for L in 4 8; do
		SEEDPIPE_DEVICE=none seedfilt -q -x rep.sx -m mem -L $L -O mummer readsr.fa >n.txt &&
		for a in "1 1" "2 3" "16 128" "100 2" "0 128"; do
			set -- $a &&
			SEEDPIPE_DEVICE=$TEST_OCL_DEVICE SEEDPIPE_MEM_WIDE_MIN=$1 SEEDPIPE_MEM_WIDE_WG=$2 \
				SEEDPIPE_MEM_TRACE=1 seedfilt -B 7 -x rep.sx -m mem -L $L -O mummer readsr.fa \
				>d.txt 2>err &&
			test_cmp n.txt d.txt &&
			if test $1 = 0; then
				test_grep -v "[1-9][0-9]* windows. left steps in mem_wide" err
			else
				test_grep "[1-9][0-9]* windows. left steps in mem_wide" err
			fi || return 1
		done
	done &&
	SEEDPIPE_DEVICE=none seedfilt -q -x rep.sx -m mem -L 6 readsr.fa >n.sp &&
	SEEDPIPE_DEVICE=$TEST_OCL_DEVICE SEEDPIPE_MEM_WIDE_MIN=8 seedfilt -q -x rep.sx -m mem -L 6 readsr.fa >d.sp &&
	recview n.sp >n.tsv && recview d.sp >d.tsv &&
	test_cmp n.tsv d.tsv
'

test_expect_success OPENCL 'the device path against the oracle' '
	"$MEM_ORACLE" -l 12 ref.fa reads.fa >want &&
	SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -q -x p.sx -m mem -L 12 -O mummer reads.fa >got &&
	test_cmp want got
'

test_expect_success OPENCL 'partitions that do not fit together go one at a time' '
	SEEDPIPE_DEVICE=none seedfilt -q -x p.sx -m mem -L 10 -O mummer reads.fa >n.txt &&
	SEEDPIPE_DEVICE=$TEST_OCL_DEVICE SEEDPIPE_DEVICE_MEM=16K seedfilt -v -B 20 -x p.sx -m mem \
		-L 10 -O mummer reads.fa >d.txt 2>err &&
	test_cmp n.txt d.txt &&
	test_grep "one partition at a time" err
'

test_expect_success OPENCL 'matches down into page-locked arrays, or through small staging buffers; the strands up through them' '
	SEEDPIPE_DEVICE=none seedfilt -q -x rep.sx -m mem -L 4 -O mummer readsr.fa >n.txt &&
	SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -q -B 7 -x rep.sx -m mem -L 4 -O mummer readsr.fa \
		>d.txt &&
	test_cmp n.txt d.txt &&
	SEEDPIPE_DEVICE=$TEST_OCL_DEVICE SEEDPIPE_MEM_NO_PIN=1 SEEDPIPE_MEM_STAGE=1000 seedfilt -q \
		-x rep.sx -m mem -L 4 -O mummer readsr.fa >d.txt &&
	test_cmp n.txt d.txt &&
	# each batch fills one of two sets of results while the other comes down: held (tests) until
	# the next batch has filled its set, a download from the same set would bring that one down
	SEEDPIPE_DEVICE=$TEST_OCL_DEVICE SEEDPIPE_MEM_HOLD_MS=20 seedfilt -q -B 3 -x rep.sx -m mem -L 4 \
		-O mummer readsr.fa >d.txt &&
	test_cmp n.txt d.txt &&
	SEEDPIPE_DEVICE=$TEST_OCL_DEVICE SEEDPIPE_MEM_SYNC=1 seedfilt -q -B 3 -x rep.sx -m mem -L 4 \
		-O mummer readsr.fa >d.txt &&
	test_cmp n.txt d.txt &&
	for pm in 64 4096; do   # small page-locked arrays, grown often
		SEEDPIPE_DEVICE=$TEST_OCL_DEVICE SEEDPIPE_MEM_PIN_MIN=$pm seedfilt -q -B 3 -x rep.sx \
			-m mem -L 4 -O mummer readsr.fa >d.txt &&
		test_cmp n.txt d.txt || return 1
	done &&
	SEEDPIPE_DEVICE=none seedfilt -q -x p.sx -m mem -L 10 -O mummer reads.fa >n.txt &&
	for pin in 0 1; do
		if test $pin = 0; then export SEEDPIPE_MEM_NO_PIN=1; else unset SEEDPIPE_MEM_NO_PIN; fi &&
		SEEDPIPE_DEVICE=$TEST_OCL_DEVICE SEEDPIPE_DEVICE_MEM=16K SEEDPIPE_MEM_STAGE=100 \
			seedfilt -q -B 20 -x p.sx -m mem -L 10 -O mummer reads.fa >d.txt &&
		test_cmp n.txt d.txt &&
		SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -q -B 20 -x p.sx -m mem -L 10 -O mummer \
			reads.fa >d.txt &&
		test_cmp n.txt d.txt || return 1
	done &&
	SEEDPIPE_DEVICE=$TEST_OCL_DEVICE SEEDPIPE_MEM_PIN_MIN=64 seedfilt -q -B 9 -x p.sx -m mem \
		-L 10 -O mummer reads.fa >d.txt &&
	test_cmp n.txt d.txt
'

test_expect_success OPENCL 'the short matches left out by work-groups of 1 and 3 (many tiles a window)' '
	for L in 12 30; do
		SEEDPIPE_DEVICE=none seedfilt -q -x ref.sx -m mem -L $L -O mummer reads.fa >n.txt &&
		for wg in 1 3; do
			SEEDPIPE_DEVICE=$TEST_OCL_DEVICE SEEDPIPE_MEM_COMPACT_WG=$wg seedfilt -q -x ref.sx \
				-m mem -L $L -O mummer reads.fa >d.txt &&
			test_cmp n.txt d.txt || return 1
		done
	done
'

test_expect_success OPENCL 'the windows prefix sums on the device in work-groups of 1, 2 and 3 (many tiles, many rounds of the tiles sums) or on the host' '
	for L in 12 30; do
		SEEDPIPE_DEVICE=none seedfilt -q -x ref.sx -m mem -L $L -O mummer reads.fa >n.txt &&
		for wg in 1 2 3; do
			SEEDPIPE_DEVICE=$TEST_OCL_DEVICE SEEDPIPE_MEM_SCAN_WG=$wg seedfilt -q -x ref.sx \
				-m mem -L $L -O mummer reads.fa >d.txt &&
			test_cmp n.txt d.txt || return 1
		done &&
		SEEDPIPE_DEVICE=$TEST_OCL_DEVICE SEEDPIPE_MEM_HOST_SCAN=1 seedfilt -q -x ref.sx -m mem -L $L \
			-O mummer reads.fa >d.txt &&
		test_cmp n.txt d.txt || return 1
	done &&
	SEEDPIPE_DEVICE=none seedfilt -q -x rep.sx -m mem -L 4 -O mummer readsr.fa >n.txt &&
	SEEDPIPE_DEVICE=$TEST_OCL_DEVICE SEEDPIPE_MEM_SCAN_WG=2 seedfilt -q -B 7 -x rep.sx -m mem -L 4 \
		-O mummer readsr.fa >d.txt &&
	test_cmp n.txt d.txt
'

test_expect_success OPENCL 'no page-locked memory (every such allocation refused): the pageable paths, the same output' '
	SEEDPIPE_DEVICE=none seedfilt -q -x ref.sx -m mem -L 12 -O mummer reads.fa >n.txt &&
	SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -v -x ref.sx -m mem -L 12 -O mummer reads.fa \
		>d.txt 2>err &&
	test_cmp n.txt d.txt &&
	test_grep -v "page-locked arrays 0 MB, allocated" err &&
	SEEDPIPE_DEVICE=$TEST_OCL_DEVICE SEEDPIPE_DEBUG_ALLOC_LIMIT=1M seedfilt -v -x ref.sx -m mem \
		-L 12 -B 40 -O mummer reads.fa >d.txt 2>err &&
	test_cmp n.txt d.txt &&
	test_grep "page-locked arrays 0 MB, allocated" err
'

test_expect_success OPENCL 'reads parsed ahead in tiny chunks; the device released before the exit or left to it' '
	SEEDPIPE_DEVICE=none seedfilt -q -x rep.sx -m mem -L 4 -O mummer readsr.fa >n.txt &&
	for a in "1 1" "1 4" "100000 3"; do
		set -- $a &&
		SEEDPIPE_DEVICE=$TEST_OCL_DEVICE SEEDPIPE_MEM_AHEAD=$1 SEEDPIPE_MEM_AHEAD_READS=$2 \
			timeout 120 seedfilt -q -B 3 -x rep.sx -m mem -L 4 -O mummer readsr.fa >d.txt &&
		test_cmp n.txt d.txt || return 1
	done &&
	for rp in 0 1; do   # read batches arrays kept for the next ones: none, one (default two)
		SEEDPIPE_DEVICE=$TEST_OCL_DEVICE SEEDPIPE_MEM_READS_POOL=$rp seedfilt -q -B 3 -x rep.sx \
			-m mem -L 4 -O mummer readsr.fa >d.txt &&
		test_cmp n.txt d.txt || return 1
	done &&
	SEEDPIPE_DEVICE=$TEST_OCL_DEVICE SEEDPIPE_MEM_FREE=1 seedfilt -v -B 3 -x rep.sx -m mem -L 4 \
		-O mummer readsr.fa >d.txt 2>err &&
	test_cmp n.txt d.txt &&
	test_grep -v "left to the exit" err &&
	SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -v -B 3 -x rep.sx -m mem -L 4 -O mummer readsr.fa \
		>d.txt 2>err &&
	test_cmp n.txt d.txt &&
	test_grep "left to the exit" err
'

test_expect_success OPENCL 'batches finished by a crew of threads (no barrier a batch), by sp_for, and on one thread: the same text' '
	SEEDPIPE_DEVICE=none seedfilt -q -t 1 -x rep.sx -m mem -L 4 -O mummer readsr.fa >n.txt &&
	for a in "1 1" "2 1" "5 1" "5 0" "3 0"; do
		set -- $a &&
		SEEDPIPE_DEVICE=$TEST_OCL_DEVICE SEEDPIPE_MEM_CREW=$2 timeout 120 seedfilt -q -t $1 -B 3 \
			-x rep.sx -m mem -L 4 -O mummer readsr.fa >d.txt &&
		test_cmp n.txt d.txt || return 1
	done &&
	SEEDPIPE_DEVICE=$TEST_OCL_DEVICE timeout 120 seedfilt -q -t 4 -B 3 -x rep.sx -m mem -L 4 \
		readsr.fa >d.sp &&
	SEEDPIPE_DEVICE=none seedfilt -q -t 1 -x rep.sx -m mem -L 4 readsr.fa >n.sp &&
	recview n.sp >n.tsv && recview d.sp >d.tsv &&
	test_cmp n.tsv d.tsv
'

test_expect_success OPENCL 'a write that fails while the crew finishes later batches: an error, no hang' '
	test -w /dev/full || { echo "no /dev/full"; exit 0; } &&
	test_expect_code 1 env SEEDPIPE_DEVICE=$TEST_OCL_DEVICE timeout 120 seedfilt -q -t 4 -B 3 \
		-x rep.sx -m mem -L 4 -O mummer readsr.fa >/dev/full 2>err &&
	test_grep "cannot write" err
'

test_expect_success OPENCL '-v names the device' '
	SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -v -x ref.sx -m mem -L 20 reads.fa >/dev/null 2>err &&
	test_grep -v "native C" err
'

test_done
