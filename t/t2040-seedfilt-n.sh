#!/bin/bash
test_description='seedfilt: an N in a read costs one error with every method (bs, ph, fm as bpr), natively and on the device'
. ./test-lib.sh
. "$TEST_DIR"/t2999-filt-lib.sh

test_expect_success 'setup: a reference without N, 40-bp reads with one N' '
	awk "BEGIN { srand(51); printf \">c\n\"; for (i = 0; i < 20000; i++) printf \"%s\", substr(\"ACGT\", int(rand() * 4) + 1, 1); print \"\" }" >ref.fa &&
	seqidx -q -u 5 -l 16 -m all -o x.sx ref.fa &&
	awk "NR == 2 { for (i = 0; i < 20; i++) { s = substr(\$0, 500 * i + 1, 40);
		printf \">n%d\n%sN%s\n\", i, substr(s, 1, 19 + i % 3), substr(s, 21 + i % 3) } }" ref.fa >n.fa
'

# every pattern window (span 5 + l 16 = 21 bases, offsets 0..19) covers
# bases 19..21, so before, bs, ph and fm skipped every pattern of these reads
for m in bs ph fm bpr; do
	test_expect_success "$m: a 40-bp read with one N is placed (-e 1)" '
		seedfilt -q -x x.sx -m '$m' -e 1 n.fa | extend -q -e 3 >out.sam &&
		awk "!/^@/ && \$2 != 4 { print \$1, \$4, \$6 }" out.sam | sort >got &&
		for i in $(seq 0 19); do echo "n$i $((500 * i + 1)) 40M"; done | sort >want &&
		test_cmp want got
	'
done

for m in bs ph fm; do
	test_expect_success "$m -a -s 20: a 40-bp read with one N in each half is placed" '
		seqidx -q -u 10 -l 10 -m all -o h.sx ref.fa &&
		awk "NR == 2 { s = substr(\$0, 1001, 40); print \">h\"; print substr(s, 1, 5) \"N\" substr(s, 7, 20) \"N\" substr(s, 28) }" ref.fa >h.fa &&
		seedfilt -q -x h.sx -a -m '$m' -e 1 -s 20 h.fa | extend -q -e 3 --no-gaps >h.sam &&
		test "$(awk "!/^@/ { print \$2, \$4, \$6 }" h.sam)" = "0 1001 40M"
	'
done

test_expect_success 'an N in the seed of every window kills them without -a (as a substitution there)' '
	awk "NR == 2 { s = substr(\$0, 1001, 40); print \">k\"; print substr(s, 1, 20) \"N\" substr(s, 22) }" ref.fa >k.fa &&
	seqidx -q -u 10 -l 10 -m all -o h.sx ref.fa &&
	seedfilt -x h.sx -m bs -e 1 -s 20 k.fa 2>err | recview >k.txt &&
	test_grep "1 skipped over N" err &&
	seedfilt -x h.sx -m bs -e 1 -s 20 -a k.fa 2>err | recview >k.txt &&
	test_grep "0 skipped over N" err
'

test_expect_success OPENCL 'reads with N: the device writes the same bytes (bs, ph, fm, with and without -a)' '
	"$FILT_ORACLE" -G 53 3 4000 >r.fa &&
	"$FILT_ORACLE" -R 54 200 60 r.fa >reads.fa &&
	awk "BEGIN { srand(55) } /^>/ { print; next }
		{ s = \$0; for (i = 0; i < 2; i++) { p = int(rand() * length(s)) + 1
		  s = substr(s, 1, p - 1) \"N\" substr(s, p + 1) }; print s }" reads.fa >rn.fa &&
	seqidx -q -u 5 -l 8 -m all -o y.sx r.fa &&
	for opt in "-m bs -e 1" "-m ph -e 2" "-m fm -e 2" "-m bs -a -e 2" "-m ph -a -e 1" "-m fm -a -e 1"; do
		SEEDPIPE_DEVICE=none seedfilt -q -x y.sx $opt rn.fa >n.sp &&
		SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -q -x y.sx $opt rn.fa >d.sp &&
		cmp n.sp d.sp &&
		SEEDPIPE_FILT_GATHER=device SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -q -x y.sx $opt rn.fa >d.sp &&
		cmp n.sp d.sp || return 1
	done
'

test_done
