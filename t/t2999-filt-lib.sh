#!/bin/bash
# t2999-filt-lib.sh - helpers of the seedfilt tests (t2xxx): sourced by them
# after test-lib.sh as "$TEST_DIR"/t2999-filt-lib.sh.  Run on its own (as the
# test suite does) it checks the helpers themselves.

FILT_ORACLE=$SEEDPIPE_BUILD/t/filt_oracle

# filt_parts INDEX: the partitions of INDEX as BEG-END,BEG-END,... (filt_oracle -P)
filt_parts() {
	seqidx --info "$1" | awk '$1 == "partition" { printf "%s%s-%s", n++ ? "," : "", $3, $4 } END { print "" }'
}

# filt_tsv INDEX STREAM: the candidates of STREAM as sorted lines
# READ SEQ GLOBAL_DIAGONAL STRAND SUPPORT (the oracle's output form)
filt_tsv() {
	recview "$2" >"$2.tsv" &&
	awk -v P="$(filt_parts "$1")" '
	BEGIN { n = split(P, a, ","); for (i = 1; i <= n; i++) { split(a[i], b, "-"); beg[i - 1] = b[1] } }
	/^#/ { next }
	{ if ($6 == 0) next
	  m = split($7, c, ",")
	  for (i = 1; i <= m; i++) { split(c[i], f, ":"); printf "%s\t%s\t%d\t%s\t%s\n", $1, f[2], beg[f[1]] + f[3], f[4], f[5] } }' "$2.tsv" | LC_ALL=C sort
}

if [ "$(basename "$0")" = t2999-filt-lib.sh ] && [ -z "$FILT_LIB_SELF" ]; then
	FILT_LIB_SELF=1
	test_description='seedfilt test helpers'
	. ./test-lib.sh
	FILT_ORACLE=$SEEDPIPE_BUILD/t/filt_oracle
	test_expect_success 'filt_parts lists the partitions of an index' '
		"$FILT_ORACLE" -G 5 2 3000 >ref.fa &&
		seqidx -q -u 4 -l 8 -p 1500 -o x.sx ref.fa &&
		filt_parts x.sx >parts &&
		test_grep "^0-1500,1489-" parts
	'
	test_expect_success 'filt_tsv turns a candidates stream into global diagonals' '
		printf ">a\n" >r.fa && sed -n 2,3p ref.fa | tr -d "\n" | cut -c1-40 >>r.fa &&
		seedfilt -q -x x.sx -e 0 r.fa >c.sp &&
		filt_tsv x.sx c.sp >c.tsv &&
		test_grep "^0	0	0	+	" c.tsv
	'
	test_done
fi
