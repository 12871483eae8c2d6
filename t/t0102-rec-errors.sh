#!/bin/bash
test_description='recview: each damaged or mismatched input fails with status 1 and names the problem'
. ./test-lib.sh

test_expect_success 'setup' '
	awk "BEGIN { for (i = 0; i < 2000; i++) printf \"@q%d c\nACGTACGTACGGT\n+\nIIIIIIIIIIIII\n\", i }" >in.fq &&
	recview -i -b 4k in.fq >in.sp &&
	recview -c in.sp &&
	size=$(wc -c <in.sp) && echo $size >size
'

test_expect_success 'a stream with one flipped payload byte: checksum mismatch' '
	python3 -c "
import sys
d = bytearray(open(\"in.sp\", \"rb\").read())
d[len(d) // 2] ^= 0x01
open(\"bad.sp\", \"wb\").write(d)" &&
	test_expect_code 1 recview bad.sp >/dev/null 2>err &&
	test_grep "^recview: .bad.sp.: checksum mismatch in block [0-9]* (payload at bytes [0-9]*\.\.[0-9]*)$" err &&
	test_expect_code 1 recview -c bad.sp 2>err &&
	test_grep "checksum mismatch in block" err
'

test_expect_success 'a stream cut in the middle: truncated' '
	head -c $(( $(cat size) / 2 )) in.sp >cut.sp &&
	test_expect_code 1 recview cut.sp >/dev/null 2>err &&
	test_grep "^recview: .cut.sp.: input truncated in block [0-9]* at byte [0-9]* (did the upstream tool fail?)$" err &&
	test_expect_code 1 recview -c <cut.sp 2>err &&
	test_grep "^recview: standard input: input truncated" err
'

test_expect_success 'a stream without its end block: truncated, no end block' '
	head -c $(( $(cat size) - 40 )) in.sp >noend.sp &&
	test_expect_code 1 recview -c noend.sp 2>err &&
	test_grep "input truncated after block [0-9]* at byte [0-9]*: no end block (did the upstream tool fail?)" err
'

test_expect_success 'a FASTA file piped where a stream is expected' '
	printf ">chr1\nACGT\n" >ref.fa &&
	test_expect_code 1 recview <ref.fa 2>err &&
	test_grep "^recview: standard input: looks like FASTA, not a seedpipe stream: to import FASTA or FASTQ, run .recview -i -.$" err &&
	test_expect_code 1 recview in.fq 2>err &&
	test_grep "looks like FASTQ, not a seedpipe stream" err
'

test_expect_success 'a stream of the wrong kind' '
	test_expect_code 1 recview --kind candidates in.sp 2>err &&
	test_grep "^recview: .in.sp.: expected candidates, got reads: did you forget seedfilt?$" err &&
	test_expect_code 1 recview -c -k hits <in.sp 2>err &&
	test_grep "expected hits, got reads" err &&
	recview -k reads in.sp >/dev/null
'

test_expect_success 'an empty input' '
	test_expect_code 1 recview </dev/null 2>err &&
	test_grep "empty input, not a seedpipe stream (did the upstream tool fail?)" err
'

test_expect_success 'data after the end block' '
	{ cat in.sp && echo junk; } >trail.sp &&
	test_expect_code 1 recview -c trail.sp 2>err &&
	test_grep "unexpected data after the end block" err
'

test_expect_success '--cat stops at a damaged input and names it' '
	test_expect_code 1 recview --cat -b 1k in.sp bad.sp >out.sp 2>err &&
	test_grep "bad.sp.: checksum mismatch" err &&
	test_expect_code 1 recview -c out.sp 2>err2 &&
	test_grep "truncated" err2
'

test_expect_success 'a full disk: cannot write, No space left on device' '
	test -w /dev/full || { echo "no /dev/full"; exit 0; } &&
	test_expect_code 1 recview -i -o /dev/full in.fq 2>err &&
	test_grep "^recview: cannot write ./dev/full.: No space left on device$" err &&
	test_expect_code 1 recview --cat in.sp >/dev/full 2>err &&
	test_grep "^recview: cannot write to standard output: No space left on device$" err &&
	test_expect_code 1 recview in.sp >/dev/full 2>err &&
	test_grep "No space left on device" err
'

test_expect_success 'a missing file' '
	test_expect_code 1 recview no-such.sp 2>err &&
	test_grep "^recview: cannot open .no-such.sp.: No such file or directory$" err &&
	test_expect_code 1 recview -i no-such.fq 2>err &&
	test_grep "no-such.fq" err
'

test_done
