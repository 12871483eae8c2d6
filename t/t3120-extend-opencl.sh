#!/bin/bash
test_description='extend on an OpenCL device (PoCL here) writes the same bytes as the CPU path'
. ./test-lib.sh

T=$SEEDPIPE_BUILD/t

test_expect_success 'setup: random reference with repeats, reads with indels and N' '
	awk "BEGIN { srand(21); for (s = 1; s <= 2; s++) { printf \">c%d\n\", s; x = \"\";
		for (i = 0; i < 4000; i++) x = x substr(\"ACGT\", int(rand() * 4) + 1, 1);
		x = x substr(x, 100, 400) substr(x, 900, 300) \"NNNNN\" substr(x, 2000, 500);
		print x; s2 = x } }" >ref.fa &&
	awk "NR % 2 == 0 { for (i = 0; i < 60; i++) { p = int(rand() * (length(\$0) - 80)); r = substr(\$0, p + 1, 30 + i % 50);
		if (i % 3 == 0) r = substr(r, 1, 10) substr(r, 12);
		if (i % 5 == 0) r = substr(r, 1, 15) \"A\" substr(r, 16);
		if (i % 7 == 0) r = substr(r, 1, 5) \"N\" substr(r, 7);
		q = r; gsub(/./, \"I\", q); printf \"@s%d_%d\n%s\n+\n%s\n\", NR, i, r, q } }" ref.fa >reads.fq &&
	seqidx -q -u 5 -l 8 -o ref.sx ref.fa &&
	"$T"/extend_mkcands ref.sx reads.fq 25 >c.sp
'

for opts in "-e 0" "-e 2" "-e 5" "-e 3 --no-gaps" "-e 9 --best" "-e 4 -k 2 -B 500" "-e 5 -t 6 -B 300"; do
	test_expect_success OPENCL "extend $opts: device output equals the CPU output" '
		extend -q -d none '"$opts"' c.sp | grep -v "^@PG" >cpu.sam &&
		extend -q -d $TEST_OCL_DEVICE '"$opts"' c.sp | grep -v "^@PG" >dev.sam &&
		test $(grep -vc "^@" cpu.sam) -gt 100 &&
		test_cmp cpu.sam dev.sam &&
		extend -q -d none -O rec '"$opts"' c.sp | recview >cpu.txt &&
		extend -q -d $TEST_OCL_DEVICE -O rec '"$opts"' c.sp | recview >dev.txt &&
		test_cmp cpu.txt dev.txt
	'
done

test_expect_success 'setup: reads of 150 to 1500 bases (the 16- and 32-word programs)' '
	awk "NR % 2 == 0 { for (i = 0; i < 30; i++) { n = 150 + (i * 37) % 1351;
		p = int(rand() * (length(\$0) - n)); r = substr(\$0, p + 1, n);
		if (i % 3 == 0) r = substr(r, 1, 50) substr(r, 52);
		if (i % 4 == 0) r = substr(r, 1, 90) \"C\" substr(r, 91);
		q = r; gsub(/./, \"I\", q); printf \"@l%d_%d\n%s\n+\n%s\n\", NR, i, r, q } }" ref.fa >long.fq &&
	"$T"/extend_mkcands ref.sx long.fq 25 >l.sp
'

for opts in "-e 6" "-e 4 --no-gaps"; do
	test_expect_success OPENCL "long reads, extend $opts: device output equals the CPU output" '
		extend -d none '"$opts"' l.sp 2>err | grep -v "^@PG" >cpu.sam &&
		test_must_fail test_grep "longer than" err &&
		extend -q -d $TEST_OCL_DEVICE '"$opts"' l.sp | grep -v "^@PG" >dev.sam &&
		test $(grep -v "^@" cpu.sam | awk "length(\$10) > 256 && \$3 != \"*\"" | wc -l) -gt 10 &&
		test_cmp cpu.sam dev.sam
	'
done

test_expect_success 'setup: reads over the reference N run, its N written as A' '
	awk "NR == 2 { for (i = 0; i < 60; i++) { r = substr(\$0, 4640 + 2 * i, 40 + i % 30);
		gsub(/N/, \"A\", r); if (i % 2) r = substr(r, 1, 8) \"G\" substr(r, 10);
		q = r; gsub(/./, \"I\", q); printf \"@n%d\n%s\n+\n%s\n\", i, r, q } }" ref.fa >nreads.fq &&
	grep -c NNNNN ref.fa &&
	"$T"/extend_mkcands ref.sx nreads.fq 25 >n.sp
'

for e in 5 8; do
	test_expect_success OPENCL "reads over an N run, -e $e: device output equals the CPU output" '
		extend -q -d none -e '$e' n.sp | grep -v "^@PG" >cpu.sam &&
		extend -q -d $TEST_OCL_DEVICE -e '$e' n.sp | grep -v "^@PG" >dev.sam &&
		test $(grep -v "^@" cpu.sam | grep -c "NM:i:[1-9]") -gt 20 &&
		test_cmp cpu.sam dev.sam
	'
done

for opts in "-e 5 c.sp" "-e 3 --no-gaps c.sp" "-e 8 n.sp"; do
	test_expect_success OPENCL "one kernel for every row (SEEDPIPE_ALIGN_ONE_KERNEL), extend $opts: as the CPU" '
		extend -q -d none '"$opts"' | grep -v "^@PG" >cpu.sam &&
		SEEDPIPE_DEBUG=1 SEEDPIPE_ALIGN_ONE_KERNEL=1 extend -q -d $TEST_OCL_DEVICE '"$opts"' \
			2>err | grep -v "^@PG" >dev.sam &&
		test_grep "device (one kernel, every row, [0-9] at once)" err &&
		test_cmp cpu.sam dev.sam
	'
done

test_expect_success OPENCL 'the former device path (SEEDPIPE_EXT_OLD_DEVICE: every pair and row through align_batch_ocl) as the CPU' '
	extend -q -d none -e 5 n.sp | grep -v "^@PG" >cpu.sam &&
	SEEDPIPE_DEBUG=1 SEEDPIPE_EXT_OLD_DEVICE=1 extend -q -d $TEST_OCL_DEVICE -e 5 n.sp 2>err |
		grep -v "^@PG" >dev.sam &&
	test_grep "^extend: align: [0-9]* pairs" err &&
	test_cmp cpu.sam dev.sam
'

test_expect_success OPENCL 'pass 1 stays on the device: one reference upload, only hit rows back' '
	SEEDPIPE_DEBUG=1 extend -q -d $TEST_OCL_DEVICE -e 5 -B 500 c.sp 2>err >/dev/null &&
	sed -n "s/.*device (.*): reference up once [0-9.]* s; \([0-9]*\) calls, [0-9]* kernel runs, \([0-9]*\) pairs, \([0-9]*\) with a hit.*/\1 \2 \3/p" err >n &&
	read calls pairs hits <n &&
	test_grep "device (score first, then the hits. rows, [0-9] at once)" err &&
	test $calls -gt 10 && test $hits -gt 0 && test $hits -lt $pairs
'

test_expect_success OPENCL 'the device short of memory: smaller kernel runs, the same output' '
	extend -q -d none -e 5 c.sp | grep -v "^@PG" >cpu.sam &&
	SEEDPIPE_DEBUG=1 SEEDPIPE_DEBUG_ALLOC_LIMIT=20000 extend -q -d $TEST_OCL_DEVICE -e 5 c.sp \
		2>err | grep -v "^@PG" >dev.sam &&
	test_grep "short of memory: runs of" err &&
	sed -n "s/.*device (.*): .* \([0-9]*\) calls, \([0-9]*\) kernel runs.*/\1 \2/p" err >n &&
	read calls runs <n && test $runs -gt $calls &&
	test_cmp cpu.sam dev.sam
'

test_expect_success OPENCL 'no room even for the reference on the device: a clear error, no crash' '
	test_expect_code 1 env SEEDPIPE_DEBUG_ALLOC_LIMIT=100 extend -q -d $TEST_OCL_DEVICE -e 5 \
		-o out.sam c.sp 2>err &&
	test_grep "^extend: the packed reference (.*) does not go on the device" err &&
	tail -1 out.sam | grep "output is incomplete"
'

test_expect_success OPENCL 'a paired stream: the device output equals the CPU output' '
	. "$TEST_DIR"/lib-pair.sh &&
	mkdir pr && (cd pr && gen_pairs 43 6000 150 60 3 1 300 30 &&
		seqidx -q -u 5 -l 8 -o ref.sx ref.fa &&
		seedfilt -q -x ref.sx -E 3 r1.fq r2.fq >c.sp &&
		extend -q -d none c.sp | grep -v "^@PG" >cpu.sam &&
		extend -q -d $TEST_OCL_DEVICE -B 2000 c.sp | grep -v "^@PG" >dev.sam &&
		test $(grep -vc "^@" cpu.sam) -gt 250 &&
		test_cmp cpu.sam dev.sam)
'

test_expect_success 'auto (the default) without a GPU is the native code (t3122: with one)' '
	SEEDPIPE_AUTO_DEVICE=none extend c.sp >/dev/null 2>err0 &&
	SEEDPIPE_AUTO_DEVICE=none SEEDPIPE_DEVICE=auto extend c.sp >/dev/null 2>err1 &&
	SEEDPIPE_AUTO_DEVICE=none extend -d auto c.sp >/dev/null 2>err2 &&
	test_grep "native C" err0 && test_grep "native C" err1 && test_grep "native C" err2 &&
	test_must_fail test_grep "d auto" err2
'

test_expect_success 'a device asked for but absent: exit 3' '
	if extend -q -d gpu c.sp >out 2>err; then
		: a GPU exists here
	else
		test $? = 3
	fi
'
test_done
