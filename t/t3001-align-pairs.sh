#!/bin/bash
test_description='alignment core on generated pairs (the bench driver): every planted read aligns within its edits, threads and packed windows agree, OpenCL agrees, errors'
. ./test-lib.sh

ab=$SEEDPIPE_BUILD/t/align_bench

# summary fields: pairs N hits H sum_dist S sum_end E cigar_hash X seconds ...
fields() { awk '{ print $2, $4, $6, $8, $10 }' "$1"; }

test_expect_success 'setup: 3000 reads of 100 bp with up to 5 edits, 2000 of 150 bp with up to 3' '
	"$ab" --gen 3000 100 5 7 >p100.txt &&
	"$ab" --gen 2000 150 3 8 >p150.txt &&
	test $(wc -l <p100.txt) = 3000 &&
	test $(awk -F"\t" "length(\$1) != 100 || length(\$2) != 110" p100.txt | wc -l) = 0
'

test_expect_success 'every planted read aligns to its window within its edits' '
	"$ab" -e 5 p100.txt >a1 &&
	test "$(awk "{ print \$2, \$4 }" a1)" = "3000 3000" &&
	"$ab" -e 3 p150.txt >b1 &&
	test "$(awk "{ print \$2, \$4 }" b1)" = "2000 2000"
'

test_expect_success 'with a bound below the edits some reads no longer align' '
	"$ab" -e 1 p100.txt >a0 &&
	hits=$(awk "{ print \$4 }" a0) &&
	test "$hits" -lt 3000 && test "$hits" -gt 0
'

test_expect_success 'results do not depend on the threads or on packing the windows' '
	"$ab" -e 5 -t 3 p100.txt >a3 &&
	"$ab" -e 5 -p p100.txt >ap &&
	"$ab" -e 5 -g -t 2 p100.txt >ag2 &&
	"$ab" -e 5 -g p100.txt >ag1 &&
	fields a1 >expect &&
	fields a3 >actual && test_cmp expect actual &&
	fields ap >actual && test_cmp expect actual &&
	fields ag1 >expect && fields ag2 >actual && test_cmp expect actual
'

test_expect_success OPENCL 'OpenCL gives the same alignments and CIGARs' '
	"$ab" -e 5 -d cpu p100.txt >ao 2>/dev/null || "$ab" -e 5 -d 0:0 p100.txt >ao 2>/dev/null &&
	fields a1 >expect && fields ao >actual && test_cmp expect actual
'

test_expect_success 'errors: no file, a line without a tab, A beyond the limit, bad option' '
	test_must_fail "$ab" nosuch.txt 2>err && test_grep "cannot open .nosuch.txt." err &&
	printf "ACGT\n" >bad.txt &&
	test_must_fail "$ab" bad.txt 2>err && test_grep "line 1: no tab" err &&
	test_must_fail "$ab" -e 16 p100.txt 2>err && test_grep "at most 15" err &&
	test_expect_code 2 "$ab" -Z p100.txt 2>err && test_grep "usage" err
'

test_done
