#!/bin/bash
test_description='seedfilt -m mem: inputs (FASTQ, gzip, reads streams, pipes, empty), usage and errors'
. ./test-lib.sh

MEM_ORACLE=$SEEDPIPE_BUILD/t/mem_oracle

test_expect_success 'setup' '
	"$MEM_ORACLE" -G 41 2 3000 >ref.fa &&
	"$MEM_ORACLE" -R 42 80 70 ref.fa >reads.fa &&
	seqidx -q -m fm -o ref.sx ref.fa &&
	seqidx -q -o nofm.sx ref.fa &&
	seedfilt -q -x ref.sx -m mem -L 15 -O mummer reads.fa >want &&
	test $(grep -c -v "^>" want) -gt 50
'

test_expect_success 'FASTQ, gzip, stdin, a reads stream (file and pipe) and -o give the same matches' '
	awk "/^>/ { n = substr(\$1, 2); next } { q = \$0; gsub(/./, \"I\", q); print \"@\" n; print; print \"+\"; print q }" reads.fa >reads.fq &&
	seedfilt -q -x ref.sx -m mem -L 15 -O mummer reads.fq >got && test_cmp want got &&
	gzip -c reads.fq >reads.fq.gz &&
	seedfilt -q -x ref.sx -m mem -L 15 -O mummer reads.fq.gz >got && test_cmp want got &&
	seedfilt -q -x ref.sx -m mem -L 15 -O mummer <reads.fa >got && test_cmp want got &&
	cat reads.fa | seedfilt -q -x ref.sx -m mem -L 15 -O mummer - >got && test_cmp want got &&
	recview -i reads.fq >reads.sp &&
	seedfilt -q -x ref.sx -m mem -L 15 -O mummer reads.sp >got && test_cmp want got &&
	cat reads.sp | seedfilt -q -x ref.sx -m mem -L 15 -O mummer >got && test_cmp want got &&
	seedfilt -q -x ref.sx -m mem -L 15 -O mummer -o out.txt reads.fa && test_cmp want out.txt &&
	SEEDPIPE_INDEX=ref.sx seedfilt -q -mmem -l15 -O mummer reads.fa >got && test_cmp want got
'

test_expect_success 'the reads parsed ahead in tiny chunks, held back or not: the same matches' '
	for a in "1 1" "1 3" "3000 2" "100000 7"; do
		set -- $a &&
		for f in reads.fa reads.fq.gz reads.sp; do
			SEEDPIPE_MEM_AHEAD=$1 SEEDPIPE_MEM_AHEAD_READS=$2 timeout 120 \
				seedfilt -q -t 3 -B 5 -x ref.sx -m mem -L 15 -O mummer $f >got &&
			test_cmp want got || return 1
		done &&
		cat reads.fq | SEEDPIPE_MEM_AHEAD=$1 SEEDPIPE_MEM_AHEAD_READS=$2 timeout 120 \
			seedfilt -q -t 2 -x ref.sx -m mem -L 15 -O mummer >got &&
		test_cmp want got || return 1
	done &&
	SEEDPIPE_MEM_FREE=1 seedfilt -q -x ref.sx -m mem -L 15 -O mummer reads.fa >got &&
	test_cmp want got
'

test_expect_success 'a bad read after good ones: the error of the parsing thread, once, exit 1' '
	{ cat reads.fa && printf ">bad\nACG*T\n" && cat reads.fa; } >badtail.fa &&
	for a in "1 1" "100000 4096"; do
		set -- $a &&
		test_expect_code 1 env SEEDPIPE_MEM_AHEAD=$1 SEEDPIPE_MEM_AHEAD_READS=$2 timeout 120 \
			seedfilt -q -t 3 -B 7 -x ref.sx -m mem -L 15 -O mummer badtail.fa >got 2>err &&
		test_grep "^seedfilt: .*badtail.fa.*invalid character" err &&
		test $(wc -l <err) = 1 || return 1
	done
'

test_expect_success 'a reads stream keeps its provenance and the read ids in the candidates' '
	seedfilt -q -x ref.sx -m mem -L 15 reads.sp >c.sp &&
	recview -H c.sp >c.tsv &&
	test_grep "recview" c.tsv &&
	test_grep "seedfilt.method=mem" c.tsv
'

test_expect_success 'no reads, reads shorter than L, empty reads: headers only' '
	: >empty.fa &&
	seedfilt -q -x ref.sx -m mem -O mummer empty.fa >got &&
	test ! -s got &&
	printf ">a\nACGT\n>b\n\n>c d\nAC\n" >short.fa &&
	printf "> a\n> a Reverse\n> b\n> b Reverse\n> c\n> c Reverse\n" >hdr &&
	seedfilt -q -x ref.sx -m mem -L 5 -O mummer short.fa >got &&
	test_cmp hdr got
'

test_expect_success 'an index without the FM-index: a usage error that says how to build one' '
	test_expect_code 2 seedfilt -x nofm.sx -m mem reads.fa >out 2>err &&
	test_grep "seqidx -m fm" err &&
	test ! -s out
'

test_expect_success 'bad options are usage errors' '
	test_expect_code 2 seedfilt -x ref.sx -m mem -O sam reads.fa 2>err &&
	test_grep "unknown format" err &&
	test_expect_code 2 seedfilt -x ref.sx -m mem -L 10 -w 11 reads.fa 2>err &&
	test_grep "window" err &&
	test_expect_code 2 seedfilt -x ref.sx -m mem -L 0 reads.fa 2>err &&
	test_expect_code 2 seedfilt -x ref.sx -m mem -e 1 reads.fa 2>err &&
	test_grep "try .seedfilt --help." err &&
	test_expect_code 2 seedfilt -m mem reads.fa 2>err &&
	test_grep "no index" err &&
	test_expect_code 2 seedfilt -x ref.sx -m mem a.fa b.fa 2>err
'

test_expect_success 'a missing reads file and a damaged index are errors' '
	test_must_fail seedfilt -x ref.sx -m mem no-such.fa 2>err &&
	test_grep "no-such.fa" err &&
	head -c 1000 ref.sx >bad.sx &&
	test_must_fail seedfilt -x bad.sx -m mem reads.fa 2>err &&
	test_grep "bad.sx" err
'

test_expect_success 'the help of -m mem, and seedfilt --help points to it' '
	seedfilt -m mem --help >help &&
	test_grep -- "-mumreference" help &&
	test_grep -- "-O FORMAT" help &&
	seedfilt --help >help2 &&
	test_grep "seedfilt -m mem --help" help2
'

test_expect_success 'full disk and a closed pipe: one message from the main thread, exit 0 after head' '
	test -w /dev/full || { echo "no /dev/full"; exit 0; } &&
	test_expect_code 1 seedfilt -q -t 3 -x ref.sx -m mem -L 15 -o /dev/full reads.fa 2>err &&
	test_grep "^seedfilt: cannot write ./dev/full." err && test $(wc -l <err) = 1 &&
	test_expect_code 1 seedfilt -q -t 3 -x ref.sx -m mem -L 15 -O mummer -o /dev/full reads.fa 2>err &&
	test_grep "^seedfilt: cannot write ./dev/full.: No space left on device$" err &&
	test $(wc -l <err) = 1 &&
	test_expect_code 1 seedfilt -q -t 3 -x ref.sx -m mem -L 15 -O mummer reads.fa >/dev/full 2>err &&
	test_grep "^seedfilt: cannot write to standard output: No space left on device$" err &&
	test $(wc -l <err) = 1 &&
	for i in $(seq 1 32); do cat reads.fa; done >many.fa &&
	{ seedfilt -q -t 3 -B 64 -x ref.sx -m mem -L 12 -f many.fa 2>err; echo $? >st; } | head -c 10 >/dev/null &&
	test "$(cat st)" = 0 && test ! -s err
'

test_done
