#!/bin/bash
test_description='seedfilt -E with patterns of their own q and e (short reads) on an OpenCL device: the scheme reads run on the host beside the device'"'"'s pair reads, and the stream equals the native one byte for byte'
. ./test-lib.sh

. "$TEST_DIR"/lib-extend.sh

# reads of 30 to 120 bases: those up to 64 bases take a scheme (host), the
# longer ones a pair (on the device when the first read's length has one)
test_expect_success OPENCL 'mixed lengths, -E 3 and the default bound: device and native streams equal' '
	gen 61 12000 400 30 120 3 1 &&
	seqidx -q -u 5 -l 10 -o ref.sx ref.fa &&
	seedfilt -v -d none -x ref.sx -E 3 reads.fq 2>sens >n.sp &&
	test_grep "patterns per strand with their own q and e" sens &&
	test_grep "bases: using -m" sens &&
	recview n.sp | grep -v "^#" >n.tsv &&
	test $(grep -c . n.tsv) -eq 400 &&
	for b in "-E 3" "-E 2" ""; do
		SEEDPIPE_DEVICE=none seedfilt -q -x ref.sx $b reads.fq >n.sp &&
		SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -q -x ref.sx $b reads.fq >d.sp &&
		recview n.sp | grep -v "^#" >n.tsv &&
		recview d.sp | grep -v "^#" >d.tsv &&
		test_cmp n.tsv d.tsv || return 1
	done
'

# the first read long (a pair, so the device opens), then short ones (schemes)
test_expect_success OPENCL 'a long first read opens the device; the short reads after it still equal native' '
	awk "NR % 4 == 2 { l = length(\$0) } { r[NR % 4] = \$0 } NR % 4 == 0 && l > 80 && !done { print r[1]; print r[2]; print r[3]; print \$0; done = 1 }" reads.fq >long1.fq &&
	cat long1.fq reads.fq >lr.fq &&
	SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -v -x ref.sx -E 3 lr.fq 2>dsens >d.sp &&
	test_grep "using OpenCL device" dsens &&
	SEEDPIPE_DEVICE=none seedfilt -q -x ref.sx -E 3 lr.fq >n.sp &&
	recview n.sp | grep -v "^#" >n.tsv &&
	recview d.sp | grep -v "^#" >d.tsv &&
	test_cmp n.tsv d.tsv
'

test_done
