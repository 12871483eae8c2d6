#!/bin/bash
test_description='strsort: edge inputs, options and error paths'
. ./test-lib.sh
# these cases compare with sort -s: strsort runs with -s (the last-resort
# comparison without -s is tested in t4020-strsort-keys*)
strsort() { command strsort -s "$@"; }

# same OPTS FILE...: strsort and sort -s give identical bytes
same() {
	_o=$1; shift
	sort -s $_o "$@" >expect.same &&
	strsort $_o "$@" >actual.same &&
	test_cmp expect.same actual.same
}

test_expect_success 'empty input gives empty output' '
	: >empty &&
	strsort empty >out &&
	test_must_fail test -s out &&
	strsort </dev/null >out &&
	test_must_fail test -s out
'

test_expect_success 'a last line without newline gets one, in every file' '
	printf "b\na" >f1 && printf "d\nc" >f2 &&
	strsort f1 f2 >out &&
	printf "a\nb\nc\nd\n" >expect &&
	test_cmp expect out
'

test_expect_success 'empty lines, NUL bytes, CRLF and high bytes' '
	printf "b\r\n\na\0b\na\n\na\0\n\377x\n\200\n\001\na\r\n" >mixed &&
	same "" mixed && same -r mixed && same -u mixed
'

test_expect_success 'a 1 MB line among short ones' '
	python3 -c "import sys; sys.stdout.write(\"x\"*1048576 + \"\\nb\\nx\\n\" + \"x\"*1048575 + \"y\\n\")" >long &&
	same "" long && same -r long
'

test_expect_success 'all-equal, sorted and reversed inputs (100k lines)' '
	python3 -c "
import random
r = random.Random(5)
l = [\"%08d\" % r.randrange(10**8) for _ in range(100000)]
open(\"eq\", \"w\").write(\"same line\\n\" * 100000)
open(\"up\", \"w\").write(\"\".join(x + \"\\n\" for x in sorted(l)))
open(\"down\", \"w\").write(\"\".join(x + \"\\n\" for x in sorted(l, reverse=True)))
" &&
	same "" eq && same -u eq && same "" up && same "" down && same -r up
'

test_expect_success 'inputs over 1 MB (first radix pass made while scanning)' '
	python3 -c "
import random
r = random.Random(11)
al = bytes(range(0, 256)).replace(b\"\\n\", b\"\")
with open(\"big1\", \"wb\") as f:
    for _ in range(150000):
        k = r.randrange(4)
        if k == 0: f.write(b\"\\n\")
        elif k == 1: f.write(bytes(r.choice(b\"ab\\0\") for _ in range(r.randrange(1, 4))) + b\"\\n\")
        else: f.write(bytes(r.choice(al) for _ in range(r.randrange(1, 30))) + b\"\\n\")
with open(\"big2\", \"wb\") as f:
    for _ in range(120000):
        f.write(b\"http://www.example.com/\" + bytes(r.choice(b\"ACGT\") for _ in range(r.randrange(0, 24))) + b\"\\n\")
" &&
	test $(wc -c <big1) -gt 1100000 &&
	same "" big1 && same -r big1 && same -u big1 && same "-r -u" big1 &&
	same "-k2" big1 && same "-t a -k2,2r" big1 && same "-u -k1.3" big2 &&
	same "" big2 && same -u big2 &&
	sort -s big2 >e.j1 && strsort -j 1 big2 >out.j1 && test_cmp e.j1 out.j1
'

test_expect_success 'files over 8 MB (read in parallel slices), the last line unterminated' '
	python3 -c "
import random
r = random.Random(12)
with open(\"big3\", \"w\") as f:
    f.write(\"\\n\".join(\"%x-%d\" % (r.getrandbits(64), r.randrange(1000)) for _ in range(450000)))
" &&
	test $(wc -c <big3) -gt 8400000 &&
	printf "zz\nab" >tail3 &&
	sort -s big3 tail3 big3 >expect &&
	strsort -j 3 big3 tail3 big3 >out &&
	test_cmp expect out
'

test_expect_success 'several files and - for standard input' '
	printf "m\nz\n" >a && printf "b\ny\n" >b &&
	printf "c\n" | strsort a - b >out &&
	printf "b\nc\nm\ny\nz\n" >expect &&
	test_cmp expect out
'

test_expect_success '-o FILE may be an input' '
	printf "3\n1\n2\n" >io &&
	strsort -o io io &&
	printf "1\n2\n3\n" >expect &&
	test_cmp expect io
'

test_expect_success '-z sorts NUL-terminated records with newlines inside' '
	printf "b\nx\0a\0c\n\0a\n\0" >z &&
	same -z z && same "-z -r" z
'

test_expect_success 'keys, separators and flags as sort -s' '
	printf "b:2:x\na:10:y\nc:1:z\na:2:w\n:3:\nb:-1:v\n" >kv &&
	same "-t : -k2,2n" kv && same "-t : -k2n -k1,1r" kv &&
	same "-t : -k1,1 -k3" kv && same "-t : -k1.2" kv && same "-t : -u -k1,1" kv &&
	same "-t : -r -k2,2" kv && same "-n -t :" kv
'

test_expect_success 'a bare -k is the first field (-k1,1)' '
	printf "b\t1\na\t2\nb\t0\na b\t9\n" >tab &&
	sort -s -k1,1 tab >expect &&
	strsort -k tab >out &&
	test_cmp expect out &&
	strsort tab -k >out2 &&
	test_cmp expect out2 &&
	sort -s -r -k1,1 tab >expect &&
	strsort -k -r tab >out &&
	test_cmp expect out
'

test_expect_success 'every registered algorithm gives the same bytes' '
	python3 -c "
import random
r = random.Random(7)
a = b\"ACGT\"
with open(\"alg\", \"wb\") as f:
    for _ in range(60000):
        f.write(bytes(r.choice(a) for _ in range(r.randrange(0, 40))) + b\"\\n\")
" &&
	sort -s alg >expect &&
	strsort --list-algorithms >algs &&
	test $(wc -l <algs) -ge 4 &&
	for a in $(cut -d" " -f1 algs); do
		strsort --algorithm $a -j 2 alg >out.$a && test_cmp expect out.$a || return 1
	done
'

test_expect_success '-c and -C check the order' '
	printf "a\nc\nb\n" >unsorted &&
	test_expect_code 1 strsort -c unsorted 2>err &&
	echo "strsort: unsorted:3: disorder: b" >expect &&
	test_cmp expect err &&
	test_expect_code 1 strsort -c <unsorted 2>err &&
	test_grep "^strsort: -:3: disorder: b$" err &&
	test_expect_code 1 strsort -C unsorted 2>err &&
	test_must_fail test -s err &&
	printf "a\nb\nb\n" >sorted &&
	strsort -c sorted &&
	test_expect_code 1 strsort -c -u sorted 2>err &&
	test_grep "sorted:3: disorder: b" err
'

test_expect_success 'bad KEYDEF and bad options exit 2' '
	test_expect_code 2 strsort -k 0 empty 2>err &&
	test_grep "^strsort: invalid key .0.: field number is zero; try .strsort --help.$" err &&
	test_expect_code 2 strsort -k 1.0 empty 2>err &&
	test_grep "character offset is zero" err &&
	test_expect_code 2 strsort -k 1x empty 2>err &&
	test_grep "stray character" err &&
	test_expect_code 2 strsort -k 2Vn empty 2>err &&
	test_grep "^strsort: options .-nV. are incompatible$" err &&
	test_expect_code 2 strsort -k 1,0 empty &&
	test_expect_code 2 strsort -t ab empty &&
	test_expect_code 2 strsort -S 10Q empty &&
	test_expect_code 2 strsort -j 0 empty &&
	test_expect_code 2 strsort --algorithm nosuch empty &&
	test_expect_code 2 strsort --no-such-option empty 2>err &&
	test_grep "^strsort: unrecognized option .--no-such-option.; try .strsort --help.$" err &&
	test_expect_code 2 strsort -c a b
'

test_expect_success 'an unreadable file is a data error' '
	test_expect_code 1 strsort nosuch 2>err &&
	echo "strsort: cannot read '"'"'nosuch'"'"': No such file or directory" >expect &&
	test_cmp expect err &&
	mkdir adir &&
	test_expect_code 1 strsort adir 2>err &&
	test_grep "cannot read .adir.: Is a directory" err
'

test_expect_success 'a device that cannot be used: exit 3; a bad spec: exit 2' '
	test_expect_code 3 strsort --device 99:0 empty 2>err &&
	test_grep "^strsort: " err &&
	test_expect_code 2 strsort --device bogus empty &&
	strsort --device none empty && strsort --device auto empty
'

test_expect_success 'help, version, a closed pipe and a full disk' '
	strsort --help >out && test_grep "^Usage: strsort" out &&
	strsort --version >out && test_grep "^strsort " out &&
	seq 200000 >many &&
	strsort many | head -1 >out 2>err &&
	test_must_fail test -s err &&
	if test -w /dev/full; then
		test_expect_code 1 strsort many >/dev/full 2>err &&
		test_grep "cannot write" err
	fi
'

test_expect_success 'a -S size that is not a number (nan, a sign, junk) is a usage error' '
	for v in nan NaN -1 -nan 12x ""; do
		echo b | test_expect_code 2 strsort -S "$v" >out 2>err &&
		test_grep "invalid size" err || return 1
	done
'

test_done
