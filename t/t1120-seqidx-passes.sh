#!/bin/bash
test_description='seqidx -M, -T: a build in passes through temporary files equals the one in memory; the peak RSS within the budget; budgets too small, temporary directories that fail'
. ./test-lib.sh

# The fixed part of a build of FASTA $1 (KiB; options $2...): what
# seqidx's message for a budget too small names (the program, its
# reference, the start lists and counts), as measured in this environment
# (a sanitizer's shadow memory makes it larger).  Budgets below are this
# plus the room their passes want.
floor_of() {
	f=$1 && shift &&
	test_expect_code 1 seqidx -q -u 6 -l 12 "$@" -M 1K -T tmp -o floor.sx "$f" 2>floor.err &&
	# "N KiB", or "N.N MiB" from 10 MiB on (a sanitizer's build): rounded up
	sed -n "s/^seqidx: memory budget .* partition 0 needs \([0-9.]*\) \([KM]\)iB for .*/\1 \2/p" floor.err |
	awk "{ print \$2 == \"M\" ? int(\$1 * 1024 + 103) : \$1 }"
}

# ref.fa: three random sequences (200 kb in all) with N runs, and a 3 kb
# segment copied 40 times into the last one (large SeedBlocks)
test_expect_success 'setup' '
	awk "BEGIN { srand(7); for (s = 0; s < 3; s++) { printf \">c%d\n\", s; n = 60000 + s * 10000; line = \"\";
		for (i = 0; i < n; i++) { if (rand() < 0.0005) { for (j = 0; j < 20; j++) line = line \"N\"; i += 20 }
			line = line substr(\"ACGT\", int(rand() * 4) + 1, 1); if (length(line) >= 60) { print line; line = \"\" } }
		if (line != \"\") print line }
		srand(8); rep = \"\"; for (i = 0; i < 3000; i++) rep = rep substr(\"ACGT\", int(rand() * 4) + 1, 1);
		print \">rep\"; for (k = 0; k < 40; k++) print rep }" >ref.fa &&
	mkdir tmp &&
	seqidx -q -u 6 -l 12 -m all -o all.sx ref.fa &&
	seqidx -q -u 6 -l 12 -o def.sx ref.fa &&
	seqidx -q -u 6 -l 20 -m general -o g20.sx ref.fa &&
	floor_of ref.fa >floor &&
	test "$(cat floor)" -gt 0
'

test_expect_success 'a budget that forces many passes gives the same index, every structure, any thread count' '
	F=$(cat floor) &&
	seqidx -v -t 2 -u 6 -l 12 -m all -M $((F + 2400))K -T tmp -o m.sx ref.fa 2>err &&
	test_grep "partition 0: pass 6, " err &&
	test_grep " passes through tmp; writing" err &&
	test_cmp all.sx m.sx &&
	seqidx -q -t 1 -u 6 -l 12 -M $((F + 500))K -T tmp -o m1.sx ref.fa &&
	seqidx -v -t 3 -u 6 -l 12 -M $((F + 500))K -T tmp -o m3.sx ref.fa 2>err &&
	test_grep "partition 0: pass 9, " err &&
	test_cmp def.sx m1.sx &&
	test_cmp def.sx m3.sx &&
	seqidx -q -u 6 -l 20 -m general -M $((F + 700))K -T tmp -o g.sx ref.fa &&
	test_cmp g20.sx g.sx &&
	seqidx -q -u 6 -l 12 -m reduced -o r.sx ref.fa &&
	seqidx -q -u 6 -l 12 -m reduced -M $((F + 500))K -T tmp -o rm.sx ref.fa &&
	test_cmp r.sx rm.sx &&
	seqidx -q -u 6 -l 12 -m block -o b.sx ref.fa &&
	seqidx -q -u 6 -l 12 -m block -M $((F + 500))K -T tmp -o bm.sx ref.fa &&
	test_cmp b.sx bm.sx &&
	seqidx -q -u 6 -l 12 -p 90000 -o p.sx ref.fa &&
	seqidx -q -u 6 -l 12 -p 90000 -M $((F + 500))K -T tmp -o pm.sx ref.fa &&
	test_cmp p.sx pm.sx &&
	seqidx -q -u 6 -l 12 -M $((F + 500))K -T tmp ref.fa | cat >pipe.sx &&
	test_cmp def.sx pipe.sx &&
	seqidx --verify m3.sx &&
	test -z "$(ls tmp)"
'

# The budget holds the whole process: a 1.5 Mbp reference built in passes
# under budgets a few MiB over the fixed part keeps its peak RSS (getrusage)
# (VmHWM, which -v reports) within -M.  Before the program's own memory
# (its libraries, the reader's leftovers) was counted and freed pass arrays
# were given back, a 20 MiB run of this peaked at 21.9 MB.
test_expect_success 'the peak RSS of a build in passes stays within -M' '
	awk "BEGIN { srand(11); for (s = 0; s < 2; s++) { printf \">s%d\n\", s;
		for (i = 0; i < 12500; i++) { l = \"\"; for (j = 0; j < 60; j++) l = l substr(\"ACGT\", int(rand() * 4) + 1, 1); print l } } }" >big.fa &&
	seqidx -q -t 2 -u 8 -o big.sx big.fa &&
	f=$(floor_of big.fa -t 2 -u 8) && test "$f" -gt 0 &&
	for extra in 2048 8192 16384; do
		m=$((f + extra)) &&
		seqidx -v -t 2 -u 8 -M ${m}K -T tmp -o bm.sx big.fa 2>bm.err &&
		kb=$(sed -n "s/^seqidx: done in .*; peak RSS \([0-9]*\) KiB$/\1/p" bm.err) &&
		echo "-M ${m}K: peak RSS $kb KiB" &&
		test_grep "partition 0: pass 2, " bm.err &&
		test_cmp big.sx bm.sx &&
		if test -z "$ASAN_OPTIONS"; then   # sanitizer shadow memory is no part of -M
			test "$kb" -le "$m" || return 1
		fi
	done &&
	test -z "$(ls tmp)"
'

test_expect_success 'a large budget builds in memory, and the default budget is half the memory' '
	seqidx -v -u 6 -l 12 -M 1G -T tmp -o big.sx ref.fa 2>err &&
	test_cmp def.sx big.sx &&
	test_grep " 1 pass; writing" err &&
	seqidx -v -u 6 -l 12 -o d.sx ref.fa 2>err &&
	test_grep "memory budget [0-9.]* MiB (-M); temporary files, if passes need them, in .*(-T)" err &&
	test_cmp def.sx d.sx
'

test_expect_success 'a budget too small for one pass is an error (exit 1), no output left' '
	F=$(cat floor) &&
	test_expect_code 1 seqidx -q -u 6 -l 12 -M 100K -T tmp -o small.sx ref.fa 2>err &&
	test_grep "^seqidx: memory budget -M 100 KiB is too small: partition 0 needs [0-9.]* [KM]iB for the program, its reference, start lists and counts, and [0-9]* KiB for one pass over [0-9]* of its seed positions; raise -M (or lower -p)$" err &&
	test ! -e small.sx &&
	test -z "$(ls tmp)" &&
	test -z "$(ls | grep small.sx.tmp)" &&
	test_expect_code 1 seqidx -q -u 6 -l 12 -m all -M 1M -T tmp -o small.sx ref.fa 2>err &&
	test_grep "^seqidx: memory budget -M 1024 KiB is too small: the FM-index of partition 0 ([0-9]* bases) needs [0-9.]* [KM]iB to build; raise -M (or lower -p)$" err &&
	test_expect_code 1 seqidx -q -u 6 -l 12 -m fm -M 1M -T tmp -o small.sx ref.fa 2>err &&
	test_grep "the FM-index of partition 0 ([0-9]* bases) needs" err &&
	seqidx -q -u 6 -l 12 -m fm -M $((F + 841))K -p 60000 -T tmp -o fmp.sx ref.fa &&
	seqidx -q -u 6 -l 12 -m fm -p 60000 -o fmp2.sx ref.fa &&
	test_cmp fmp2.sx fmp.sx &&
	test ! -e small.sx
'

test_expect_success 'bad -M values are usage errors' '
	test_expect_code 2 seqidx -M 0 ref.fa 2>err &&
	test_grep "option -M: .0. is not a size" err &&
	test_expect_code 2 seqidx -M 12Q ref.fa 2>err &&
	test_grep "option -M: .12Q. is not a size (bytes, or with K, M, G, T)" err
'

test_expect_success 'a temporary directory that cannot be used is a clear error, nothing left behind' '
	F=$(cat floor) &&
	test_expect_code 1 seqidx -q -u 6 -l 12 -M $((F + 500))K -T nodir -o x.sx ref.fa 2>err &&
	test_grep "^seqidx: cannot create the temporary file .nodir/seqidx.XXXXXX.: No such file or directory" err &&
	test ! -e x.sx &&
	# a full disk: writes past a file size limit fail (SIGXFSZ ignored)
	( trap "" XFSZ && ulimit -f 256 && seqidx -q -u 6 -l 12 -M $((F + 500))K -T tmp -o x.sx ref.fa ) 2>err;
	test $? = 1 &&
	test_grep "^seqidx: cannot write the temporary file .tmp/seqidx\.[A-Za-z0-9]*. (seqidx -T tmp): File too large" err &&
	test -z "$(ls tmp)" &&
	test ! -e x.sx &&
	# killed by the signal (its default action): the handler removes the files
	( ulimit -f 256 && exec seqidx -q -u 6 -l 12 -M $((F + 500))K -T tmp -o x.sx ref.fa ) 2>err;
	test $? = 153 &&
	test -z "$(ls tmp)" &&
	test -z "$(ls | grep x.sx)"
'

test_expect_success 'a full file system (a 64 KiB tmpfs, where one can be mounted) is a clear error' '
	F=$(cat floor) &&
	mkdir full &&
	if mount -t tmpfs -o size=64k tmpfs full 2>/dev/null; then
		seqidx -q -u 6 -l 12 -M $((F + 500))K -T full -o x.sx ref.fa 2>err;
		rc=$? && ls full >left; umount full;
		test $rc = 1 &&
		test_grep "^seqidx: cannot write the temporary file .full/seqidx\.[A-Za-z0-9]*. (seqidx -T full): No space left on device" err &&
		test ! -s left && test ! -e x.sx
	else
		echo "# cannot mount a tmpfs here: skipped" >&4
	fi
'

test_done
