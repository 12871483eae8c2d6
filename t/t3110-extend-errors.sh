#!/bin/bash
test_description='extend: wrong input, truncated streams, index mismatch, limits, | head, hits streams'
. ./test-lib.sh

T=$SEEDPIPE_BUILD/t

test_expect_success 'setup: two references, reads, candidates' '
	awk "BEGIN { srand(5); printf \">a\n\"; for (i = 0; i < 3000; i++) printf \"%s\", substr(\"ACGT\", int(rand() * 4) + 1, 1); printf \"\n\" }" >ref.fa &&
	awk "BEGIN { srand(6); printf \">b\n\"; for (i = 0; i < 9000; i++) printf \"%s\", substr(\"ACGT\", int(rand() * 4) + 1, 1); printf \"\n\" }" >big.fa &&
	awk "NR == 2 { for (i = 0; i < 40; i++) printf \"@q%d\n%s\n+\n%s\n\", i, substr(\$0, 50 * i + 1, 45), substr(\"IIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIII\", 1, 45) }" ref.fa >reads.fq &&
	seqidx -q -u 5 -l 8 -o ref.sx ref.fa &&
	seqidx -q -u 5 -l 8 -o big.sx big.fa &&
	"$T"/extend_mkcands ref.sx reads.fq 30 >c.sp &&
	extend -q c.sp >ok.sam &&
	test $(grep -v "^@" ok.sam | wc -l) = 40
'

test_expect_success 'a reads stream instead of candidates: did you forget seedfilt?' '
	recview -i reads.fq >reads.sp &&
	test_expect_code 1 extend reads.sp 2>err &&
	test_grep "expected candidates, got reads: did you forget seedfilt?" err
'

test_expect_success 'FASTA instead of a stream' '
	test_expect_code 1 extend <ref.fa 2>err &&
	test_grep "not a seedpipe stream" err
'

test_expect_success 'a hits stream (extend twice)' '
	extend -q -O rec c.sp >h.sp &&
	test_expect_code 1 extend h.sp 2>err &&
	test_grep "expected candidates, got hits" err
'

test_expect_success 'a truncated stream (the upstream tool died)' '
	size=$(wc -c <c.sp) &&
	head -c $((size - 100)) c.sp >cut.sp &&
	test_expect_code 1 extend cut.sp >out 2>err &&
	test_grep "truncated" err &&
	test_grep "upstream" err
'

test_expect_success 'a damaged block' '
	cp c.sp bad.sp &&
	printf "ZZZZ" | dd of=bad.sp bs=1 seek=500 conv=notrunc 2>/dev/null &&
	test_expect_code 1 extend bad.sp >out 2>err &&
	test_grep -i "checksum" err
'

test_expect_success '-x with another index: error names both fingerprints' '
	fa=$(seqidx --info ref.sx | awk "\$1 == \"fingerprint\" { print \$2 }") &&
	fb=$(seqidx --info big.sx | awk "\$1 == \"fingerprint\" { print \$2 }") &&
	test -n "$fa" && test -n "$fb" &&
	test_expect_code 1 extend -x big.sx c.sp >out 2>err &&
	test_grep "$fa" err && test_grep "$fb" err
'

test_expect_success 'the stream names an index whose fingerprint differs' '
	"$T"/extend_mkcands ref.sx reads.fq 30 -f 0123456789abcdef >fp.sp &&
	test_expect_code 1 extend fp.sp >out 2>err &&
	test_grep "0123456789abcdef" err &&
	test_grep "fingerprint" err
'

test_expect_success 'the stream names no index: -x is needed, and enough' '
	"$T"/extend_mkcands ref.sx reads.fq 30 -z >z.sp &&
	test_expect_code 1 extend z.sp >out 2>err &&
	test_grep "give -x" err &&
	test_expect_code 1 extend -x ref.sx z.sp >out 2>err &&
	test_grep "no index fingerprint" err
'

test_expect_success 'the index named by the stream is missing' '
	"$T"/extend_mkcands ref.sx reads.fq 30 -n gone.sx >gone.sp &&
	test_expect_code 1 extend gone.sp >out 2>err &&
	test_grep "gone.sx" err &&
	extend -q -x ref.sx gone.sp >x.sam &&
	grep -v "^@PG" ok.sam >a && grep -v "^@PG" x.sam >b && test_cmp a b
'

test_expect_success 'candidates outside the index' '
	fa=$(seqidx --info ref.sx | awk "\$1 == \"fingerprint\" { print \$2 }") &&
	"$T"/extend_mkcands big.sx reads.fq 30 -n ref.sx -f $fa >out.sp &&
	test_expect_code 1 extend out.sp >out 2>err &&
	test_grep "outside the index" err
'

test_expect_success '-e above the band: exit 1 with the limit' '
	test_expect_code 1 extend -e 16 c.sp >out 2>err &&
	test_grep "at most 15" err &&
	extend -q -e 15 c.sp >out
'

test_expect_success 'usage errors exit 2' '
	test_expect_code 2 extend -O cram c.sp 2>err &&
	test_grep "unknown format" err &&
	test_expect_code 2 extend -k 0 c.sp 2>err &&
	test_expect_code 2 extend -e x c.sp 2>err &&
	test_expect_code 2 extend c.sp c.sp 2>err
'

test_expect_success '| head ends quietly' '
	for i in 1 2 3 4 5 6 7 8; do cat reads.fq; done | awk "NR % 4 == 1 { \$0 = \$0 \"_\" NR } { print }" >many.fq &&
	for i in 1 2 3 4 5 6 7 8 9 10; do cat many.fq; done >more.fq &&
	"$T"/extend_mkcands ref.sx more.fq 30 >m.sp &&
	{ extend m.sp 2>err; echo $? >rc; } | head -2 >/dev/null &&
	case $(cat rc) in 0|141) ;; *) false ;; esac &&
	test ! -s err
'

test_expect_success 'a hits stream holds the same hits as the SAM output' '
	recview h.sp | awk -F"\t" "NR > 1 && \$6 > 0 { print \$2, \$7 }" | sort >rec.txt &&
	grep -v "^@" ok.sam | awk -F"\t" "{ s = int(\$2 / 16) % 2 ? \"-\" : \"+\"; print \$1, (\$3 == \"a\" ? 0 : 1) \":\" \$4 - 1 \":\" s }" |
		sort >sam.txt &&
	sed "s/:[^:]*:[^:]*:[^:]*:[^:]*\$//" rec.txt >rec2.txt &&
	test_cmp sam.txt rec2.txt &&
	recview -H h.sp | test_grep "pg=extend" - &&
	recview -H h.sp | test_grep "pg=extend_mkcands" -
'

test_expect_success 'an empty candidates stream: header only; summary on stderr' '
	: >empty.fq &&
	"$T"/extend_mkcands ref.sx empty.fq 30 >e.sp &&
	extend e.sp >e.sam 2>err &&
	test $(grep -vc "^@" e.sam) = 0 &&
	test_grep "^@SQ	SN:a	LN:3000" e.sam &&
	test_grep "0 reads" err &&
	extend -q e.sp >e.sam 2>err && test ! -s err
'

test_expect_success '@PG chain: every stage with its command line' '
	grep "^@PG" ok.sam >pg &&
	test $(wc -l <pg) = 2 &&
	test_grep "ID:extend_mkcands" pg &&
	test_grep "PP:extend_mkcands" pg &&
	test_grep "CL:.*extend -q c.sp" pg
'
test_done
