#!/bin/bash
test_description='the test library itself: test_must_fail, test_cmp, prerequisites'
. ./test-lib.sh

test_expect_success 'test_must_fail accepts an ordinary failure' '
	test_must_fail false &&
	test_must_fail sh -c "exit 1" &&
	test_must_fail sh -c "exit 2"
'

test_expect_success 'test_must_fail refuses success' '
	! test_must_fail true
'

test_expect_success 'test_must_fail treats a crash by a signal as a failure' '
	! test_must_fail sh -c "kill -SEGV \$\$" &&
	! test_must_fail sh -c "kill -ABRT \$\$"
'

test_expect_success 'test_must_fail refuses a missing command' '
	! test_must_fail no-such-command-seedpipe
'

test_expect_success 'test_expect_code checks the exact status' '
	test_expect_code 3 sh -c "exit 3" &&
	! test_expect_code 3 sh -c "exit 1"
'

test_expect_success 'test_cmp sees one differing byte' '
	printf "abc" >a && printf "abc" >b && printf "abd" >c &&
	test_cmp a b &&
	! test_cmp a c
'

test_set_prereq HAVE_IT
test_expect_success HAVE_IT 'a set prerequisite runs the test' '
	test_have_prereq HAVE_IT && ! test_have_prereq NOT_SET
'

test_lazy_prereq LAZY_NO 'false'
test_expect_success 'a lazy prerequisite that fails is absent' '
	! test_have_prereq LAZY_NO && test_have_prereq !LAZY_NO
'

# awk-rnd.sh: srand(N)/rand() the same numbers in every run and in every awk
# installed here (gawk and mawk on Debian with the project's packages); -F,
# -v and -- kept.
test_expect_success 'awk: srand(N) and rand() repeat, the same in every awk' '
	prog="BEGIN { srand(S); for (i = 0; i < 5; i++) printf \"%.9f \", rand(); print int(rand() * 1e6) }" &&
	awk -v S=3121 "$prog" >one && awk -v S=3121 "$prog" >two && test_cmp one two &&
	awk -v S=3122 "$prog" >other && ! test_cmp one other >/dev/null &&
	n=0 && for a in gawk mawk original-awk; do
		command -v $a >/dev/null || continue
		( eval "$(declare -f awk | sed "s/command awk/command $a/g")" &&
		  awk -v S=3121 "$prog" ) >by.$a && test_cmp one by.$a && n=$((n + 1)) || return 1
	done && test $n -ge 1 &&
	printf "a\tb\n" | awk -F "\t" -- "{ print \$2 }" >f && test "$(cat f)" = b
'

test_expect_success 'each script runs in its own trash directory' '
	case "$PWD" in */t/trash.*.t0000-harness) true ;; *) false ;; esac
'

test_done
