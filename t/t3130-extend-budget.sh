#!/bin/bash
test_description='extend -M: reads with 10^5 candidates each; the peak RSS stays within the budget plus the program, the SAM equals the run without -M'
. ./test-lib.sh

# A 3.1 Mbp tandem repeat of a 13-base AT-rich unit, most copies with a
# substitution (as P. falciparum's low-complexity regions), beside 120 kb
# of random sequence; 24 reads from the repeat: 5.4 M candidates, 100,000
# to 330,000 a read, few loci each.
test_expect_success 'setup: a tandem repeat, 24 reads with 10^5 candidates each' '
	awk "BEGIN { srand(41); printf \">u\n\"; for (i = 0; i < 2000; i++) { l = \"\"; for (j = 0; j < 60; j++) l = l substr(\"ACGT\", int(rand() * 4) + 1, 1); print l }
		unit = \"AATATTATAATAT\"; printf \">r\n\"; l = \"\"; for (k = 0; k < 240000; k++) { s = unit; if (rand() < 0.8) { p = int(rand() * 13) + 1;
			s = substr(s, 1, p - 1) substr(\"ACGT\", int(rand() * 4) + 1, 1) substr(s, p + 1) } l = l s; if (length(l) >= 60) { print substr(l, 1, 60); l = substr(l, 61) } } print l }" >rep.fa &&
	awk "/^>r/ { on = 1; next } on { s = s \$0 } END { srand(5); for (k = 0; k < 24; k++) { p = int(rand() * (length(s) - 100)) + 1; printf \">q%d\n%s\n\", k, substr(s, p, 100) } }" rep.fa >reads.fa &&
	seqidx -q -t 2 -o rep.sx rep.fa &&
	SEEDPIPE_DEVICE=none seedfilt -t 2 -x rep.sx reads.fa >c.sp 2>c.err &&
	test_grep "^seedfilt: 24 reads .*, [1-9][0-9]\{6\} candidates$" c.err &&
	SEEDPIPE_DEVICE=none extend -q -t 2 c.sp | grep -v "^@PG" >a.sam &&
	test $(grep -vc "^@" a.sam) -ge 24 &&
	head -2 reads.fa >one.fa && seqidx -q -o one.sx one.fa &&
	SEEDPIPE_DEVICE=none seedfilt -q -x one.sx one.fa >one.sp
'

# What -M bounds (the batches in flight, the threads' scratch; the scratch
# of a batch with a read of 330,000 candidates reserved from a pool, one
# such batch at a time) beside the program itself (code, libraries, the
# one-read run's peak).  main (8490e89) peaked at 64 MB here at -M 32M
# and -M 1G alike: each aligning thread held a whole read's pass-1 ends
# rows, and every part its largest read's buffers.  (At -M 32M the largest
# read's batch fits the pool only while the estimate stays near 64 bytes a
# candidate: on the H100 machine it learned more and was refused.)
# The budgets are those of the data as t/awk-rnd.sh draws it: its largest
# read (327,985 candidates) needs about 52 MiB.
test_expect_success 'many candidates a read: the peak RSS within -M plus the program, the same SAM' '
	floor=$(peak_rss o.sam o.err env SEEDPIPE_DEVICE=none extend -q -t 2 -M 1G one.sp) &&
	test "$floor" -gt 0 &&
	for m in 56 60; do
		kb=$(peak_rss b.sam b.err env SEEDPIPE_DEVICE=none extend -t 2 -M ${m}M c.sp) &&
		echo "-M ${m}M: peak RSS $kb KB, the program alone $floor KB" &&
		if test -z "$ASAN_OPTIONS"; then   # sanitizer shadow memory is no part of -M
			test "$kb" -le $((m * 1024 + floor)) || return 1
		fi &&
		grep -v "^@PG" b.sam >b.nopg && test_cmp a.sam b.nopg &&
		test_grep "^extend: memory budget ${m}.0 MiB (-M): .*; 6 batches in flight of [0-9]* candidates (made smaller to fit); the threads. scratch .* each, and a pool of .* for larger batches$" b.err &&
		test_grep "^extend: -M: the largest batch.s scratch estimated" b.err || return 1
	done
'

test_expect_success 'a budget too small for one read: clear message naming the floor, exit 1' '
	test_expect_code 1 env SEEDPIPE_DEVICE=none extend -q -t 2 -M 16M c.sp >o.sam 2>err &&
	test_grep "^extend: -M: a memory budget of 16.0 MiB is too small for the reads from .q[0-9]*. on (a part of [0-9]* candidates, [0-9]* of one read): aligning it takes about .* of scratch (give at least -M [0-9]*K)$" err &&
	# the budget named holds that read (another, larger one may ask for more:
	# which batch fails first depends on the threads): each named budget is
	# larger than the one refused, and within a few steps one holds them all
	m=16384 && i=0 &&
	while need=$(sed -n "s/.*give at least -M \([0-9]*\)K)$/\1/p" err) && test -n "$need"; do
		test "$need" -gt "$m" && test $i -lt 4 || return 1
		m=$need && i=$((i + 1)) &&
		SEEDPIPE_DEVICE=none extend -q -t 2 -M ${m}K c.sp >n.sam 2>err || test $? = 1 || return 1
	done &&
	test $i -ge 1 &&
	grep -v "^@PG" n.sam >n.nopg && test_cmp a.sam n.nopg &&
	test_expect_code 1 env SEEDPIPE_DEVICE=none extend -q -t 2 -M 2M c.sp >o.sam 2>err &&
	test_grep "^extend: -M: a memory budget of 2.0 MiB is too small: the reference takes .*, and 6 batches in flight of one candidate with the threads. scratch need more (give at least -M [0-9]*K)$" err
'

test_expect_success 'one thread, and -B: the same SAM under -M' '
	SEEDPIPE_DEVICE=none extend -q -t 1 -M 56M c.sp | grep -v "^@PG" >t1.sam &&
	test_cmp a.sam t1.sam &&
	SEEDPIPE_DEVICE=none extend -q -t 3 -B 100 -M 56M c.sp | grep -v "^@PG" >t3.sam &&
	test_cmp a.sam t3.sam
'

test_done
