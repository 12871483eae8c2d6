#!/bin/bash
test_description='seedfilt paired-end input: two files (plain or gzip) or one interleaved, the same stream; every malformed pair an error naming the read; extend refuses broken pairs'
. ./test-lib.sh

. "$TEST_DIR"/lib-extend.sh
. "$TEST_DIR"/lib-pair.sh

test_expect_success 'setup: pairs, index' '
	gen_pairs 5 8000 60 50 2 1 250 25 &&
	seqidx -q -u 5 -l 8 -o ref.sx ref.fa &&
	paste - - - - <r1.fq >a4 && paste - - - - <r2.fq >b4 &&
	paste -d "\n" a4 b4 | tr "\t" "\n" >il.fq &&
	gzip -c r2.fq >r2.fq.gz
'

test_expect_success 'two files: a paired stream, mates in turn, numbered together' '
	seedfilt -q -x ref.sx r1.fq r2.fq >p.sp &&
	recview -H p.sp >p.txt &&
	grep "^##seedfilt.paired=files$" p.txt &&
	grep -v "^#" p.txt | cut -f1,2 >ids &&
	awk "NR % 4 == 1 { print substr(\$1, 2) }" il.fq | awk "{ print NR - 1 \"\t\" \$1 }" >expect &&
	test_cmp expect ids
'

test_expect_success 'one file gzip, the other plain: the same records' '
	seedfilt -q -x ref.sx r1.fq r2.fq.gz >gz.sp &&
	recview p.sp >a && recview gz.sp >b && test_cmp a b
'

test_expect_success '--interleaved: the same records, from a file and from stdin' '
	seedfilt -q -x ref.sx --interleaved il.fq >il.sp &&
	recview il.sp >b && test_cmp a b &&
	recview -H il.sp | grep "^##seedfilt.paired=interleaved$" &&
	seedfilt -q -x ref.sx --interleaved <il.fq >il2.sp &&
	recview il2.sp >b && test_cmp a b
'

test_expect_success '-1 R1 -2 R2 (as bowtie2): the records of the two arguments' '
	seedfilt -q -x ref.sx -1 r1.fq -2 r2.fq.gz >o.sp &&
	recview o.sp >b && test_cmp a b &&
	recview -H o.sp | grep "^##seedfilt.paired=files$" &&
	seedfilt -q -2 r2.fq -x ref.sx -1 r1.fq >o2.sp &&
	recview o2.sp >b && test_cmp a b
'

test_expect_success '-1 or -2 alone, or with READS arguments: usage errors' '
	for args in "-1 r1.fq" "-2 r2.fq" "-1 r1.fq r2.fq" "-1 r1.fq -2 r2.fq r2.fq" "-1 r1.fq -2 r2.fq --interleaved"; do
		test_expect_code 2 seedfilt -q -x ref.sx $args >out 2>err &&
		test $(wc -l <err) = 1 && ! test -s out || return 1
	done &&
	test_expect_code 2 seedfilt -q -x ref.sx -1 r1.fq r2.fq 2>err &&
	test_grep "^seedfilt: -1 and -2 go together, without READS arguments" err
'

test_expect_success 'a single-end stream has no paired provenance and the usual records' '
	seedfilt -q -x ref.sx r1.fq >s.sp &&
	! recview -H s.sp | grep "paired" &&
	recview s.sp | grep -v "^#" | cut -f2 >names &&
	awk "NR % 4 == 1 { print substr(\$1, 2) }" r1.fq >expect && test_cmp expect names
'

test_expect_success 'mate 2 file shorter: exit 1, naming the read without its mate 2' '
	head -n 40 r2.fq >short.fq &&
	test_expect_code 1 seedfilt -q -x ref.sx r1.fq short.fq >out 2>err &&
	echo "seedfilt: '"'"'short.fq'"'"' ends before '"'"'r1.fq'"'"': read '"'"'p10'"'"' (pair 11, line 41 of '"'"'r1.fq'"'"') has no mate 2" >expect &&
	test_cmp expect err
'

test_expect_success 'mate 1 file shorter: exit 1, naming the read without its mate 1' '
	head -n 40 r1.fq >short1.fq &&
	test_expect_code 1 seedfilt -q -x ref.sx short1.fq r2.fq.gz >out 2>err &&
	echo "seedfilt: '"'"'short1.fq'"'"' ends before '"'"'r2.fq.gz'"'"': read '"'"'p10/2'"'"' (pair 11, line 41 of '"'"'r2.fq.gz'"'"') has no mate 1" >expect &&
	test_cmp expect err
'

test_expect_success 'names that differ: exit 1, both reads named' '
	sed "s,^@p7/2\$,@p77/2," r2.fq >bad.fq &&
	test_expect_code 1 seedfilt -q -x ref.sx r1.fq bad.fq >out 2>err &&
	echo "seedfilt: the mates'"'"' names differ: '"'"'p7'"'"' (pair 8, line 29 of '"'"'r1.fq'"'"'), '"'"'p77/2'"'"' (pair 8, line 29 of '"'"'bad.fq'"'"')" >expect &&
	test_cmp expect err
'

test_expect_success 'names equal but for /1 /2, or equal: fine; /3 is not dropped' '
	sed "s,/[12]\$,," r2.fq >plain2.fq &&
	seedfilt -q -x ref.sx r1.fq plain2.fq >/dev/null &&
	sed "s,^@p3/2\$,@p3/3," r2.fq >three.fq &&
	test_expect_code 1 seedfilt -q -x ref.sx r1.fq three.fq >/dev/null 2>err &&
	test_grep "names differ: .p3. (pair 4" err
'

test_expect_success 'interleaved input with an odd number of reads: exit 1, naming the last read' '
	head -n 44 il.fq >odd.fq &&
	test_expect_code 1 seedfilt -q -x ref.sx --interleaved odd.fq >out 2>err &&
	echo "seedfilt: '"'"'odd.fq'"'"': odd number of reads in an interleaved input: read '"'"'p5'"'"' (pair 6, line 41 of '"'"'odd.fq'"'"') has no mate 2" >expect &&
	test_cmp expect err
'

test_expect_success 'interleaved input out of order: the names differ' '
	{ sed -n "1,8p" il.fq && sed -n "13,16p" il.fq && sed -n "9,12p" il.fq && sed -n "17,\$p" il.fq; } >swap.fq &&
	test_expect_code 1 seedfilt -q -x ref.sx --interleaved swap.fq >out 2>err &&
	test_grep "names differ: .p1/2. (pair 2, line 9 of .swap.fq.), .p1/1. (pair 2, line 13" err
'

test_expect_success 'usage errors: --interleaved with two files, three files, both stdin' '
	test_expect_code 2 seedfilt -q -x ref.sx --interleaved r1.fq r2.fq 2>err &&
	test_grep "interleaved takes one" err &&
	test_expect_code 2 seedfilt -q -x ref.sx r1.fq r2.fq r2.fq 2>err &&
	test_grep "too many arguments" err &&
	test_expect_code 2 seedfilt -q -x ref.sx - - 2>err &&
	test_grep "both mates" err
'

test_expect_success 'a malformed mate 2 record: exit 1, naming its file, line and read' '
	head -n 38 r2.fq >trunc2.fq &&
	test_expect_code 1 seedfilt -q -x ref.sx r1.fq trunc2.fq >out 2>err &&
	echo "seedfilt: trunc2.fq:39: truncated FASTQ record '"'"'p9/2'"'"': no '"'"'+'"'"' line" >expect &&
	test_cmp expect err &&
	head -n 8 r1.fq >q1.fq && head -n 8 r2.fq | sed "8s/.\$//" >q2.fq &&
	test_expect_code 1 seedfilt -q -x ref.sx q1.fq q2.fq >out 2>err &&
	test_grep "^seedfilt: q2.fq:8: quality length [0-9]* differs from sequence length [0-9]* in .p1/2.$" err
'

test_expect_success 'an empty mate 2 file: exit 1 at pair 1; both empty: no pairs, no error' '
	: >empty.fq &&
	test_expect_code 1 seedfilt -q -x ref.sx r1.fq empty.fq >out 2>err &&
	test_grep "^seedfilt: .empty.fq. ends before .r1.fq.: read .p0. (pair 1, line 1 of .r1.fq.) has no mate 2$" err &&
	seedfilt -q -x ref.sx empty.fq empty.fq >e.sp &&
	recview -H e.sp | grep "^##seedfilt.paired=files$" &&
	extend -q e.sp >e.sam &&
	test $(grep -vc "^@" e.sam) = 0
'

test_expect_success 'the mate 1 file given twice: the names differ at pair 1' '
	test_expect_code 1 seedfilt -q -x ref.sx r1.fq r1.fq >out 2>err &&
	test_grep "names differ: .p0. (pair 1, line 1 of .r1.fq.), .p0/1. (pair 1" err
'

test_expect_success 'extend refuses a stream whose pairs are broken, naming the read' '
	recview --cat p.sp s.sp >mix.sp &&
	test_expect_code 1 extend -q mix.sp >out.sam 2>err &&
	test_grep "read .p0/1. (number 0) is a single read in a paired stream" err
'

# broken_pairs FLAGS WHAT: a candidates stream of the first 5 reads of r1.fq
# with mate flags FLAGS (extend_mkcands -M: paired, -U: not marked paired);
# extend exits 1 with the one line WHAT, whatever -B and -t
broken_pairs() {
	head -n 20 r1.fq >five.fq &&
	"$T"/extend_mkcands ref.sx five.fq 50 $1 >bp.sp &&
	for o in "" "-B 1 -t 3"; do
		test_expect_code 1 extend -q $o bp.sp >out.sam 2>err &&
		echo "extend: 'bp.sp': $2" >expect &&
		test_cmp expect err || return 1
	done
}

test_expect_success 'extend: a mate in a stream not marked paired' '
	broken_pairs "-U 12" "read '"'"'p0/1'"'"' (number 0) is a mate of a pair, but the stream is not paired (no seedfilt.paired in its provenance)"
'

test_expect_success 'extend: a mate 1 after a mate 1' '
	broken_pairs "-M 1211" "read '"'"'p3/1'"'"' (number 3) is a mate 1 that follows a mate 1: a mate 2 is missing"
'

test_expect_success 'extend: a mate 2 first' '
	broken_pairs "-M 21" "read '"'"'p0/1'"'"' (number 0) is a mate 2 without its mate 1 before it"
'

test_expect_success 'extend: a single read between pairs' '
	broken_pairs "-M 120" "read '"'"'p2/1'"'"' (number 2) is a single read in a paired stream"
'

test_expect_success 'extend: the stream ends after a mate 1, naming it' '
	broken_pairs "-M 12121" "the stream ends after read '"'"'p4/1'"'"' (number 4), a mate 1, without its mate 2"
'

test_expect_success 'extend: the same five reads as whole pairs are fine (the tests above can pass)' '
	"$T"/extend_mkcands ref.sx five.fq 50 -M 1212 >ok.sp &&
	test_expect_code 1 extend -q ok.sp >/dev/null 2>err &&
	test_grep "read .p4/1. (number 4) is a single read" err &&
	head -n 16 r1.fq >four.fq &&
	"$T"/extend_mkcands ref.sx four.fq 50 -M 1212 >ok.sp &&
	extend -q ok.sp >ok.sam && test $(grep -vc "^@" ok.sam) -ge 4
'

test_expect_success 'Illumina comments (1:N:0:BC, 2:N:0:BC) after equal names: fine, the same records as /1 /2' '
	awk "NR % 4 == 1 { sub(/\/1\$/, \"\"); print \$0 \" 1:N:0:ACGT\"; next } { print }" r1.fq >i1.fq &&
	awk "NR % 4 == 1 { sub(/\/2\$/, \"\"); print \$0 \" 2:N:0:ACGT\"; next } { print }" r2.fq >i2.fq &&
	seedfilt -q -x ref.sx i1.fq i2.fq >i.sp &&
	extend -q i.sp >i.sam && extend -q p.sp >p.sam &&
	grep -v "^@" i.sam >a && grep -v "^@" p.sam >b && test_cmp b a &&
	sed "s,^@p4 2:N,@p5 2:N," i2.fq >bad.fq &&
	test_expect_code 1 seedfilt -q -x ref.sx i1.fq bad.fq >out 2>err &&
	test_grep "names differ: .p4. (pair 5, line 17 of .i1.fq.), .p5. (pair 5, line 17 of .bad.fq.)" err
'

test_done
