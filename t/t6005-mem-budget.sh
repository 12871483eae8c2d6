#!/bin/bash
test_description='seedfilt -m mem -M: passes over groups of partitions find what one pass finds, byte for byte'
. ./test-lib.sh

MEM_ORACLE=$SEEDPIPE_BUILD/t/mem_oracle

# three sequences of 2 Mbases in partitions of 1.5 Mbases (cut inside the
# sequences): the FM-index is 7.9 MiB, a partition's 2.5 MiB at most; and a
# small one for the brute-force oracle (five partitions of 40 kbases)
test_expect_success 'setup' '
	"$MEM_ORACLE" -G 41 3 2000000 >ref.fa &&
	"$MEM_ORACLE" -R 42 1500 150 ref.fa >reads.fa &&
	"$MEM_ORACLE" -R 43 1500 90 ref.fa >>reads.fa &&
	grep -q N reads.fa &&
	seqidx -q -m fm -r 4 -p 1500000 -o ref.sx ref.fa &&
	"$MEM_ORACLE" -G 44 3 60000 >small.fa &&
	"$MEM_ORACLE" -R 45 300 80 small.fa >sreads.fa &&
	seqidx -q -m fm -r 4 -p 40000 -o small.sx small.fa
'

# least INDEX 'SEEDFILT OPTIONS' MIB: the least budget the error names, plus MIB, in KiB ("NK")
least() {
	seedfilt -d none -x "$1" -m mem $2 -M 1K -O mummer reads.fa 2>&1 >/dev/null |
		sed -n "s/.* need \([0-9.]*\) MiB at least.*/\1/p" |
		awk -v a="$3" "NF { printf \"%dK\", (\$1 + a) * 1024 }"
}

test_expect_success 'the least budget: named by the error, and enough' '
	b=$(least ref.sx "-L 20" 0.1) &&
	test -n "$b" &&
	seedfilt -q -d none -x ref.sx -m mem -L 20 -M $b -O mummer reads.fa >got.txt &&
	test -s got.txt
'

# passes NAME 'SEEDFILT OPTIONS' MIB: at the least budget plus MIB, text and candidates as in one
# pass, and the summary says that there were passes over 2 groups or more (a partition each)
passes() {
	test_expect_success "$1" '
		b=$(least ref.sx "'"$2"'" '"$3"') &&
		seedfilt -q -d none -x ref.sx -m mem -O mummer '"$2"' reads.fa >one.txt &&
		seedfilt -d none -x ref.sx -m mem -O mummer -M $b '"$2"' reads.fa >got.txt 2>err &&
		test_cmp one.txt got.txt &&
		test $(grep -c -v "^>" got.txt) -gt 1000 &&
		grep "memory budget .* in [2-9] groups of .* passes (.* batch.* x [2-9] groups)" err &&
		seedfilt -q -d none -x ref.sx -m mem '"$2"' reads.fa >one.sp &&
		seedfilt -q -d none -x ref.sx -m mem -M $b '"$2"' reads.fa >got.sp &&
		recview one.sp >one.tsv && recview got.sp >got.tsv &&
		test_cmp one.tsv got.tsv
	'
}

passes 'groups of one partition, L 20' '-L 20' 0.1
passes 'a larger budget: larger batches, L 20' '-L 20' 3
passes 'L 20, 1 thread' '-L 20 -t 1' 0.1
passes 'L 30, -mum' '-L 30 -mum' 0.1
passes 'L 20, -mumreference' '-L 20 -mumreference' 0.1
passes 'batches of 7 reads' '-L 25 -B 7' 0.1
passes 'the reverse strand only, N matches nothing' '-L 20 -r -n' 0.1

test_expect_success 'in passes: the brute-force oracle (-maxmatch, -mum)' '
	b=$(least small.sx "-L 16" 0.1) &&
	"$MEM_ORACLE" -l 16 small.fa sreads.fa >want &&
	seedfilt -d none -x small.sx -m mem -L 16 -M $b -O mummer sreads.fa >got 2>err &&
	test_cmp want got &&
	grep "passes (.* x [2-9] groups)" err &&
	"$MEM_ORACLE" -mum -l 16 small.fa sreads.fa >want &&
	seedfilt -q -d none -x small.sx -m mem -mum -L 16 -M $b -O mummer sreads.fa >got &&
	test_cmp want got
'

test_expect_success 'a budget that holds it all: one pass, said with -v (2 threads)' '
	seedfilt -v -t 2 -d none -x ref.sx -m mem -L 20 -M 80M -O mummer reads.fa >got.txt 2>err &&
	grep "memory budget 80.0 MiB (-M): .*; 1 pass" err &&
	seedfilt -q -d none -x ref.sx -m mem -L 20 -O mummer reads.fa >one.txt &&
	test_cmp one.txt got.txt
'

test_expect_success 'a budget too small: exit 1, the least budget named' '
	test_expect_code 1 seedfilt -d none -x ref.sx -m mem -L 20 -M 3M -O mummer reads.fa >out 2>err &&
	grep "3.0 MiB is too small for this index with -m mem: .* need .* MiB at least" err &&
	! test -s out
'

test_expect_success 'a bad size: a usage error' '
	test_expect_code 2 seedfilt -x ref.sx -m mem -M 12Q reads.fa 2>err &&
	grep "option -M: .12Q. is not a size" err
'

test_expect_success OPENCL 'on the OpenCL device under -M: the same text' '
	seedfilt -q -d none -x ref.sx -m mem -L 20 -O mummer reads.fa >one.txt &&
	SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -q -t 2 -x ref.sx -m mem -L 20 -M 32M -O mummer reads.fa >got.txt &&
	test_cmp one.txt got.txt &&
	SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -v -t 2 -x ref.sx -m mem -L 20 -M 32M -O mummer reads.fa 2>err >/dev/null &&
	grep "memory budget 32.0 MiB (-M): the device holds the partitions" err
'

test_done
