#!/bin/bash
test_description='strsort -B: sorting seedpipe record streams by their key'
. ./test-lib.sh

test_expect_success 'keys and hits streams against the oracle (-r, -u)' '
	"$SEEDPIPE_BUILD"/t/msd_rec_test >tap &&
	! grep "^not ok" tap &&
	test_grep "^ok" tap
'

test_expect_success 'a reads stream sorts by sequence, stable, a valid stream' '
	printf "@r1\nTTGA\n+\nIIII\n@r2\nACGT\n+\nIIII\n@r3\nACG\n+\nIII\n@r4\nTTGA\n+\nIIII\n" >x.fq &&
	recview -i x.fq >x.sp &&
	strsort -B -o y.sp x.sp &&
	recview -c y.sp &&
	recview y.sp | cut -f2 >names &&
	printf "name\nr3\nr2\nr1\nr4\n" >expect &&
	test_cmp expect names &&
	strsort -B -u -r x.sp | recview | cut -f2 >names &&
	printf "name\nr1\nr2\nr3\n" >expect &&
	test_cmp expect names
'

test_expect_success '-B refuses line options, and damaged input is a data error' '
	test_expect_code 2 strsort -B -k1 x.sp &&
	test_expect_code 2 strsort -B -n x.sp &&
	head -c 100 x.sp >cut.sp &&
	test_expect_code 1 strsort -B cut.sp >/dev/null 2>err &&
	test_grep "^strsort: " err &&
	printf "not a stream\n" >text &&
	test_expect_code 1 strsort -B text >/dev/null 2>err &&
	test_grep "^strsort: " err
'

test_done
