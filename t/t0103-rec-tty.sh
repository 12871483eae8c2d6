#!/bin/bash
test_description='recview: no binary stream to a terminal unless -f'
. ./test-lib.sh

test_lazy_prereq SCRIPT 'script -qec true /dev/null </dev/null'

test_expect_success 'setup' '
	printf "@r1\nACGT\n+\nIIII\n" >in.fq &&
	recview -i in.fq >in.sp
'

test_expect_success SCRIPT 'binary output to a terminal is refused' '
	test_expect_code 1 script -qec "recview -i in.fq" /dev/null </dev/null >out 2>&1 &&
	test_grep "recview: refusing to write a binary stream to a terminal (use -f to force" out &&
	test_must_fail test_grep "SPR" out &&
	test_expect_code 1 script -qec "recview --cat in.sp" /dev/null </dev/null >out 2>&1 &&
	test_grep "refusing to write a binary stream to a terminal" out
'

test_expect_success SCRIPT '-f writes it anyway' '
	script -qec "recview -f -i in.fq" /dev/null </dev/null >out 2>&1 &&
	test_grep -a "SPR" out &&
	test_must_fail test_grep "refusing" out
'

test_expect_success SCRIPT 'text output goes to a terminal' '
	script -qec "recview in.sp" /dev/null </dev/null >out 2>&1 &&
	test_grep "ACGT" out
'

test_done
