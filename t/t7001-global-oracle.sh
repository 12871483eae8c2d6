#!/bin/bash
test_description='extend --global against the full-matrix oracle: all against all, A against B, a list of pairs; edit distance and linear scores; the identity filter; threads, vector code, batches, pruning and OpenCL give the same bytes'
. ./test-lib.sh

ora=$SEEDPIPE_BUILD/t/galign_oracle

test_expect_success 'setup: two families of similar sequences (N, empty and random ones among them)' '
	"$ora" --gen 45 140 6 1 >a.fa &&
	"$ora" --gen 12 140 10 1 >b.fa &&
	test $(grep -c "^>" a.fa) = 45 &&
	printf "s3 s7\ns7 s3\ns0 s44\n\n# a comment\ns5\ts5\n" >list.txt
'

test_expect_success 'all against all, edit distance (the default): the oracle'"'"'s bytes' '
	"$ora" a.fa >expect &&
	extend --global a.fa >out 2>err &&
	test_cmp expect out &&
	test $(wc -l <out) = $((45 * 44 / 2 + 1)) &&
	head -1 out | tr "\t" "\n" >cols &&
	for c in query target score identity cigar; do grep -qx "#\{0,1\}$c" cols || exit 1; done &&
	test_grep "990 pairs" err
'

test_expect_success 'linear gaps, A against B, identity 80: the oracle'"'"'s bytes, pairs below not printed' '
	"$ora" --score 4,-5,-8 --identity 80 a.fa b.fa >expect &&
	extend --global --score 4,-5,-8 --identity 80 a.fa b.fa >out 2>err &&
	test_cmp expect out &&
	n=$(($(wc -l <out) - 1)) && test $n -gt 20 && test $n -lt 540 &&
	awk -F"\t" "NR > 1 && \$6 < 80 { bad = 1 } END { exit bad }" out &&
	test_grep "below 80% identity" err
'

for s in 1,-1,-1 2,-3,-5 5,-4,-10 3,0,-1 5,-20,-3 0,-1,-1; do
	test_expect_success "score set $s, identity 60: the oracle's bytes" "
		\"\$ora\" --score $s --identity 60 a.fa >expect &&
		extend --global -q --score $s --identity 60 a.fa >out &&
		test_cmp expect out
	"
done

test_expect_success 'a list of pairs (names, in list order, repeats and self pairs kept)' '
	"$ora" --score 2,-3,-5 --pairs list.txt a.fa >expect &&
	extend --global -q --score 2,-3,-5 --pairs list.txt a.fa >out &&
	test_cmp expect out && test $(wc -l <out) = 5 &&
	printf "s1 s2\ns11 s0\n" >list2.txt &&
	"$ora" --pairs list2.txt a.fa b.fa >expect &&
	extend --global -q --pairs list2.txt a.fa b.fa >out &&
	test_cmp expect out
'

test_expect_success 'a long list (read in pieces on all threads): its pairs in order; the first bad line reported' '
	awk "BEGIN { for (i = 0; i < 40000; i++) print \"s\" (i % 45) \"\\ts\" (i * 7 % 44) }" >long.txt &&
	extend --global -q -t 3 --pairs long.txt a.fa >lout &&
	sed 1d lout | cut -f1,2 >names && test_cmp long.txt names &&
	extend --global -q -t 1 --pairs long.txt a.fa >lout1 && test_cmp lout lout1 &&
	awk "NR == 30001 { print \"s1 nosuch\" } NR == 35000 { print \"nosuch s1\" }
		NR == 39000 { print \"s2\" } { print }" long.txt >lbad.txt &&
	test_must_fail extend --global -t 3 --pairs lbad.txt a.fa 2>err &&
	test_grep "line 30001: no sequence .nosuch." err &&
	sed 30001d lbad.txt >lbad2.txt &&
	test_must_fail extend --global -t 3 --pairs lbad2.txt a.fa 2>err &&
	test_grep "line 35000: no sequence .nosuch. in .a.fa." err &&
	sed 35000d lbad2.txt >lbad3.txt &&
	test_must_fail extend --global -t 3 --pairs lbad3.txt a.fa 2>err &&
	test_grep "line 39000: a query name without a target name" err
'

test_expect_success 'threads, batch sizes and the scalar code give the same bytes' '
	extend --global -q --score 4,-5,-8 --identity 70 a.fa >ref &&
	extend --global -q -t 1 --score 4,-5,-8 --identity 70 a.fa >out && test_cmp ref out &&
	extend --global -q -t 3 -B 7 --score 4,-5,-8 --identity 70 a.fa >out && test_cmp ref out &&
	SEEDPIPE_NO_SIMD=1 extend --global -q -t 2 -B 100 --score 4,-5,-8 --identity 70 a.fa >out &&
	test_cmp ref out &&
	extend --global -q -B 1 a.fa b.fa >ref2 &&
	SEEDPIPE_NO_SIMD=1 extend --global -q a.fa b.fa >out && test_cmp ref2 out
'

test_expect_success 'pruning by the score pass drops no pair that reaches the identity' '
	for id in 50 75 90 97.5; do
		extend --global --score 4,-5,-8 --identity $id a.fa >pruned 2>err1 &&
		extend --global --no-prune --score 4,-5,-8 --identity $id a.fa >all 2>err2 &&
		test_cmp all pruned || exit 1
	done &&
	test_grep -v "(0 pruned" err1 &&
	test_grep "(0 pruned" err2 &&
	for id in 60 95; do
		extend --global -q --identity $id a.fa b.fa >pruned &&
		extend --global -q --no-prune --identity $id a.fa b.fa >all &&
		test_cmp all pruned || exit 1
	done
'

test_expect_success OPENCL 'OpenCL (score pass by work items and by work groups, the traceback with --trace-device): the same bytes' '
	extend --global -q --score 4,-5,-8 --identity 70 a.fa >ref &&
	extend --global -q -d $TEST_OCL_DEVICE --score 4,-5,-8 --identity 70 a.fa >out &&
	test_cmp ref out &&
	extend --global -q -d $TEST_OCL_DEVICE -B 50 --trace-device --score 4,-5,-8 --identity 70 a.fa >out &&
	test_cmp ref out &&
	extend --global -q a.fa b.fa >ref &&
	extend --global -q -d $TEST_OCL_DEVICE --trace-device a.fa b.fa >out &&
	test_cmp ref out &&
	SEEDPIPE_GALIGN_WG=100 extend --global -q -d $TEST_OCL_DEVICE a.fa b.fa >out &&
	test_cmp ref out &&
	extend --global -q --score 2,-3,-5 a.fa >ref &&
	SEEDPIPE_GALIGN_WG=0 extend --global -q -d $TEST_OCL_DEVICE --score 2,-3,-5 a.fa >out &&
	test_cmp ref out
'

test_expect_success OPENCL 'OpenCL: many small batches in flight (every device slot and queue), each linear kernel, SEEDPIPE_DEBUG on: the same bytes' '
	extend --global -q --score 4,-5,-8 --identity 60 a.fa b.fa >ref &&
	for k in 0 1 2; do
		SEEDPIPE_DEBUG=1 SEEDPIPE_GALIGN_KERNEL=$k SEEDPIPE_GALIGN_LS=32 extend --global -q \
			-d $TEST_OCL_DEVICE -B 7 --score 4,-5,-8 --identity 60 a.fa b.fa >out 2>err &&
		test_cmp ref out &&
		test_grep "score passes on the device" err || return 1
	done
'

test_expect_success 'the pairs stream: recview prints the TSV bytes; strsort -B orders by identity' '
	extend --global -q --score 4,-5,-8 --identity 60 a.fa >tsv &&
	extend --global -q -O rec --score 4,-5,-8 --identity 60 a.fa >pairs.sp &&
	recview pairs.sp >view && test_cmp tsv view &&
	recview -c pairs.sp &&
	recview -k pairs pairs.sp >/dev/null &&
	strsort -B pairs.sp >sorted.sp &&
	recview sorted.sp >sview &&
	sed 1d tsv | sort >a1 && sed 1d sview | sort >a2 && test_cmp a1 a2 &&
	sed 1d sview | cut -f6 >ids && sort -s -g -r ids >ids2 && test_cmp ids2 ids &&
	test_must_fail recview -k hits pairs.sp 2>err && test_grep "expected hits, got pairs" err
'

test_expect_success 'errors: scores, identity, inputs, names, format' '
	test_expect_code 2 extend --global --score 4,5,-8 a.fa 2>err &&
	test_grep "mismatch 5 must lie" err &&
	test_expect_code 2 extend --global --score 4,-5,8 a.fa 2>err && test_grep "gap 8" err &&
	test_expect_code 2 extend --global --score 4,-5 a.fa 2>err && test_grep "MATCH,MISMATCH,GAP" err &&
	test_expect_code 2 extend --global --score 100,-5,-80 a.fa 2>err && test_grep "at most 255" err &&
	test_expect_code 2 extend --global --identity 101 a.fa 2>err && test_grep "0..100" err &&
	test_expect_code 2 extend --global --identity 8x a.fa 2>err && test_grep "not a percentage" err &&
	test_expect_code 2 extend --global 2>err && test_grep "no input" err &&
	test_expect_code 2 extend --global a.fa b.fa a.fa 2>err && test_grep "too many" err &&
	test_expect_code 2 extend --global -O sam a.fa 2>err && test_grep "tsv or rec" err &&
	test_must_fail extend --global nosuch.fa 2>err && test_grep "nosuch.fa" err &&
	printf "s1 nosuch\n" >bad.txt &&
	test_must_fail extend --global --pairs bad.txt a.fa 2>err &&
	test_grep "line 1: no sequence .nosuch." err &&
	printf ">x\nACGT\n>x\nAC\n" >dup.fa && printf "x x\n" >dl.txt &&
	test_must_fail extend --global --pairs dl.txt dup.fa 2>err && test_grep "more than one" err &&
	extend --global -q dup.fa >out && test $(wc -l <out) = 2 &&
	test_expect_code 3 extend --global -d 9:9 a.fa 2>err
'

test_expect_success 'full disk and a closed pipe: the write step reports once, from the main thread' '
	test -w /dev/full || { echo "no /dev/full"; exit 0; } &&
	for o in rec tsv; do
		test_expect_code 1 extend --global -q -t 3 -O $o -o /dev/full a.fa 2>err &&
		test_grep "^extend: cannot write" err &&
		test $(wc -l <err) = 1 || return 1
	done &&
	"$ora" --gen 150 100 6 1 >many.fa &&
	for o in rec tsv; do
		{ extend --global -q -t 3 -O $o -f many.fa 2>err; echo $? >st; } | head -c 10 >/dev/null &&
		test "$(cat st)" = 0 && test ! -s err || return 1
	done
'

test_done
