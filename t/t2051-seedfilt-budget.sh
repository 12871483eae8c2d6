#!/bin/bash
test_description='seedfilt -M / -T: an index larger than the budget, mapped in passes over its partitions, gives the same records'
. ./test-lib.sh
. "$TEST_DIR"/t2999-filt-lib.sh

test_expect_success 'setup: 9 partitions, reads' '
	"$FILT_ORACLE" -G 21 4 5000 >ref.fa &&
	"$FILT_ORACLE" -R 22 500 60 ref.fa >reads.fa &&
	seqidx -q -u 5 -l 10 -m all -p 3000 -o x.sx ref.fa &&
	test "$(seqidx --info x.sx | awk "\$1 == \"partitions\" { print \$2 }")" = 9 &&
	mkdir tmp
'

# same SEEDFILT_OPTS: -M 3.2M with 3 threads makes many batches, passes over
# groups of partitions, and (SEEDPIPE_DEBUG_STORE) candidates spilled to tmp; the
# records and the counters equal those of the run with the index whole
same() {
	test_expect_success "-M, many passes: $1 gives the records and counts of the whole index" '
		SEEDPIPE_DEVICE=none seedfilt -x x.sx '"$1"' -t 2 reads.fa >a.sp 2>a.err &&
		SEEDPIPE_DEVICE=none SEEDPIPE_DEBUG_STORE=48 seedfilt -v -x x.sx '"$1"' -t 3 -M 3.2M -T tmp reads.fa >b.sp 2>b.err &&
		recview a.sp >a.tsv && recview b.sp >b.tsv &&
		test_cmp a.tsv b.tsv &&
		test $(grep -vc "^#" a.tsv) = 500 &&
		grep "^seedfilt: [0-9]* reads (" a.err >a.sum && grep "^seedfilt: [0-9]* reads (" b.err >b.sum && test_cmp a.sum b.sum &&
		test_grep "does not fit .*: [2-9] passes of at most .* per batch of [0-9]* reads" b.err &&
		test_grep "passes ([1-9][0-9]* batches x [2-9])" b.err &&
		test -z "$(ls tmp)"
	'
}

same '-m bpr -e 1'
same '-m bpr -e 2 -c 3'
same '-m bs -e 2'
same '-m ph -e 1 -s 3'
same '-m ph -e 2 -c 1'
same '-m fm -e 1'
same '-m bs -e 2 -a'
same '-m fm -e 1 -a'
same '-m ph -e 1 -N'

# little room in -T (SEEDPIPE_DEBUG_TMP_ROOM): a batch makes several rounds of
# passes, each over the reads whose candidates fit; the same records and counts
rounds() {
	test_expect_success "-M, little room in -T: $1 makes rounds of passes, the same records" '
		SEEDPIPE_DEVICE=none seedfilt -x x.sx '"$1"' -t 2 reads.fa >a.sp 2>a.err &&
		SEEDPIPE_DEVICE=none SEEDPIPE_DEBUG_STORE=48 SEEDPIPE_DEBUG_TMP_ROOM=0 seedfilt -v -x x.sx '"$1"' -t 3 -M 3.2M -T tmp reads.fa >b.sp 2>b.err &&
		recview a.sp >a.tsv && recview b.sp >b.tsv &&
		test_cmp a.tsv b.tsv &&
		grep "^seedfilt: [0-9]* reads (" a.err >a.sum && grep "^seedfilt: [0-9]* reads (" b.err >b.sum && test_cmp a.sum b.sum &&
		test_grep "passes ([1-9][0-9]* batches x [2-9]); [0-9]* rounds of passes, not [0-9]*: a round takes the reads whose candidates fit" b.err &&
		test -z "$(ls tmp)"
	'
}

rounds '-m bpr -e 2'
rounds '-m fm -e 1 -a'
rounds '-m ph -e 2 -c 1'

test_expect_success 'the summary says the passes without -v, nothing with -q' '
	SEEDPIPE_DEVICE=none seedfilt -x x.sx -m bpr -e 1 -t 3 -M 3.2M -T tmp reads.fa >c.sp 2>c.err &&
	test_grep "^seedfilt: memory budget 3.2 MiB (-M): the index (.* in 9 partitions) does not fit .*; [0-9]* passes ([0-9]* batches x [2-9])" c.err &&
	! grep "peak RSS" c.err &&
	SEEDPIPE_DEVICE=none seedfilt -q -x x.sx -m bpr -e 1 -t 3 -M 3.2M -T tmp reads.fa >d.sp 2>d.err &&
	! test -s d.err &&
	SEEDPIPE_DEVICE=none seedfilt -x x.sx -m bpr -e 1 -t 2 reads.fa >e.sp 2>e.err &&
	! grep "memory budget" e.err
'

test_expect_success 'candidates spilled to -T come back' '
	SEEDPIPE_DEVICE=none SEEDPIPE_DEBUG_STORE=48 seedfilt -v -x x.sx -m bpr -e 2 -t 3 -M 3.2M -T tmp reads.fa >b.sp 2>b.err &&
	test_grep "candidates between passes: [1-9][0-9]* bytes spilled" b.err &&
	SEEDPIPE_DEVICE=none seedfilt -q -x x.sx -m bpr -e 2 reads.fa >a.sp &&
	recview a.sp >a.tsv && recview b.sp >b.tsv && test_cmp a.tsv b.tsv
'

test_expect_success 'paired reads and -B with -M: same records' '
	"$FILT_ORACLE" -R 24 200 60 ref.fa >m1.fa &&
	"$FILT_ORACLE" -R 25 200 60 ref.fa >m2.fa &&
	SEEDPIPE_DEVICE=none seedfilt -q -x x.sx -m ph -e 1 m1.fa m2.fa >a.sp &&
	SEEDPIPE_DEVICE=none seedfilt -q -x x.sx -m ph -e 1 -t 2 -B 7 -M 2.4M -T tmp m1.fa m2.fa >b.sp &&
	recview a.sp >a.tsv && recview b.sp >b.tsv && test_cmp a.tsv b.tsv
'

# Reads of mixed lengths (36 to 140 bases, and shorter ones cut at the
# reference's ends), interleaved: the -E plan (the default, and -E 3, -E 8%)
# gives them several (method, e) pairs and steps; each read keeps its own
# setting in every pass, and the records, the counters and the -E warning
# equal those of the whole index.  On the device the first read's pair runs
# there and the reads of the other pairs are filtered on the host, in passes.
test_expect_success 'setup: reads of mixed lengths' '
	for L in 36 50 75 100 140; do "$FILT_ORACLE" -R $L 60 $L ref.fa >r$L.fa || return 1; done &&
	awk "FNR == 1 { f++ } !/^>/ { i[f]++; printf \"%06d %d %s\n\", i[f], f, \$0 }" \
		r36.fa r100.fa r50.fa r140.fa r75.fa | sort | awk "{ printf \">m%d\n%s\n\", NR, \$3 }" >mix.fa &&
	test $(grep -c "^>" mix.fa) = 300
'

mixed() {   # DEVICE OPTIONS [PREREQ]
	test_expect_success $3 "mixed lengths, -E plan ($2), -d $1: -M with many passes equals the whole index" '
		SEEDPIPE_DEVICE=none seedfilt -v -x x.sx -t 2 '"$2"' mix.fa >a.sp 2>a.err &&
		sed -n -e "s/^seedfilt: -E: reads of [0-9]* bases: using -m \([a-z]*\) -e \([0-9]*\) .*/\1\2/p" \
			-e "s/^seedfilt: -E: reads of [0-9]* bases: using [0-9]* patterns per strand with their own q and e (\([^)]*\)).*/scheme \1/p" a.err |
			sort -u >pairs &&
		test $(wc -l <pairs) -ge 2 &&
		grep -q "^scheme" pairs && grep -qv "^scheme" pairs &&
		SEEDPIPE_DEVICE='"$1"' SEEDPIPE_DEBUG_STORE=48 seedfilt -v -x x.sx -t 3 -M 3.2M -T tmp '"$2"' mix.fa >b.sp 2>b.err &&
		test_grep "passes ([1-9][0-9]* batches x [2-9])" b.err &&
		recview a.sp >a.tsv && recview b.sp >b.tsv && test_cmp a.tsv b.tsv &&
		grep -E "^seedfilt: ([0-9]* reads \(|warning: -E|cap -c|-E: measured cost)" a.err >a.sum &&
		grep -E "^seedfilt: ([0-9]* reads \(|warning: -E|cap -c|-E: measured cost)" b.err >b.sum &&
		test_cmp a.sum b.sum &&
		test -z "$(ls tmp)"
	'
}

for o in "-c 1" "-E 3" "-E 8%"; do
	mixed none "$o"
	mixed "$TEST_OCL_DEVICE" "$o" OPENCL
done

test_expect_success 'a budget that holds the index whole: one pass, said so' '
	SEEDPIPE_DEVICE=none seedfilt -v -x x.sx -m ph -e 1 -t 2 -M 1G reads.fa >b.sp 2>b.err &&
	test_grep "memory budget 1.00 GiB (-M): the index fits whole; 1 pass" b.err &&
	SEEDPIPE_DEVICE=none seedfilt -v -x x.sx -m ph -e 1 -t 2 -M 2.8M reads.fa >c.sp 2>c.err &&
	test_grep "fits the budget beside a batch: loaded once; 1 pass" c.err &&
	recview b.sp >b.tsv && recview c.sp >c.tsv && test_cmp b.tsv c.tsv
'

test_expect_success OPENCL '-M on the device: the same records as the native code' '
	for m in bpr ph; do
		SEEDPIPE_DEVICE=none seedfilt -q -x x.sx -m $m -e 1 reads.fa >a.sp &&
		SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -v -x x.sx -m $m -e 1 -t 2 -M 2.2M -T tmp reads.fa >b.sp 2>b.err &&
		recview a.sp >a.tsv && recview b.sp >b.tsv && test_cmp a.tsv b.tsv &&
		test_grep "passes ([1-9][0-9]* batches x 9); on the device" b.err || return 1
	done
'

test_expect_success 'extend -M: same SAM from the -M candidates, batches made smaller; too small: exit 1' '
	SEEDPIPE_DEVICE=none seedfilt -q -x x.sx -m ph -e 2 reads.fa >a.sp &&
	SEEDPIPE_DEVICE=none seedfilt -q -x x.sx -m ph -e 2 -t 3 -M 3.2M -T tmp reads.fa >b.sp &&
	SEEDPIPE_DEVICE=none extend -q -x x.sx -t 2 a.sp | grep -v "^@PG" >a.sam &&
	SEEDPIPE_DEVICE=none extend -x x.sx -t 2 -M 6M b.sp 2>err | grep -v "^@PG" >b.sam &&
	test_cmp a.sam b.sam &&
	test $(grep -vc "^@" a.sam) -ge 500 &&
	test_grep "memory budget 6.0 MiB (-M): the reference .* (the index.s partition structures are not read: 1 pass); 6 batches in flight of [0-9]* candidates (made smaller to fit); the threads. scratch 1.0 MiB each, and a pool of .* for larger batches" err &&
	test_expect_code 1 env SEEDPIPE_DEVICE=none extend -q -x x.sx -t 2 -M 2M b.sp >o.sam 2>err &&
	test_grep "^extend: -M: a memory budget of 2.0 MiB is too small: the reference takes .*, and 6 batches in flight of one candidate with the threads. scratch need more (give at least -M [0-9]*K)$" err
'

# -d auto's first calibration under -M times the runs on the index's largest
# partition alone (with batches of at most 512 reads), not on the whole
# index: with the kernels built, the run's peak RSS stays within the budget
# plus what the OpenCL runtime takes by itself (measured on the small index,
# its kernels built by a first run).  Reading the whole index (149 MB and a
# device copy of it) or calibrating with 6 batches of 16384 reads on PoCL
# (1.5 GB) fails this.
# The index is 11 partitions of about 13 MB (-u 10: 4^10 start entries a
# partition), 149 MB in all, the budget 60 MiB.
test_expect_success OPENCL '-d auto under a small -M: the calibration keeps the peak RSS within the budget' '
	POCL_CACHE_DIR=$XDG_CACHE_HOME/pocl && export POCL_CACHE_DIR &&
	"$FILT_ORACLE" -G 71 8 125000 >big.fa &&
	"$FILT_ORACLE" -R 72 1000 100 big.fa >big.reads &&
	seqidx -q -u 10 -p 125000 -o big.sx big.fa &&
	test $(wc -c <big.sx) -gt 100000000 &&
	SEEDPIPE_DEVICE=none seedfilt -q -t 2 -x big.sx -m bpr -e 1 big.reads >n.sp &&
	SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -q -t 2 -x big.sx -m bpr -e 1 -M 60M big.reads >d.sp &&
	recview n.sp >n.tsv && recview d.sp >d.tsv && test_cmp n.tsv d.tsv &&
	SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -q -t 2 -x x.sx -m bpr -e 1 reads.fa >o.sp &&
	rt=$(peak_rss o.sp o.err env SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -q -t 2 -x x.sx -m bpr -e 1 reads.fa) &&
	rm -f "$XDG_CACHE_HOME"/seedpipe/auto-*.txt &&
	kb=$(peak_rss a.sp a.err env SEEDPIPE_DEVICE=auto SEEDPIPE_AUTO_DEVICE=$TEST_OCL_DEVICE \
		seedfilt -v -t 2 -x big.sx -m bpr -e 1 -M 60M big.reads) &&
	test_grep "d auto: new calibration of" a.err &&
	test_grep "passes (1 batch x [1-9][0-9]*)" a.err &&
	recview a.sp >a.tsv && test_cmp n.tsv a.tsv &&
	say_rss="peak RSS $kb KB, budget 61440 KB, OpenCL runtime $rt KB" &&
	echo "$say_rss" &&
	if test -z "$ASAN_OPTIONS"; then   # sanitizer shadow memory is no part of -M
		test "$kb" -le $((61440 + rt))
	fi
'

# The run on a CPU OpenCL device (PoCL) under -M: its buffers are host
# memory, so the device's memory is the budget (filt_budget_device) and its
# partitions go to it one at a time instead of all staying resident.  The
# peak RSS (-v) stays within -M plus what the OpenCL runtime takes by
# itself (the small index, -v).  Before: 201,608 KB here against 61,440 +
# 96,000 (the 149 MB index resident in PoCL's buffers).
test_expect_success OPENCL 'a CPU OpenCL device under -M: partitions one at a time, the peak RSS within the budget' '
	POCL_CACHE_DIR=$XDG_CACHE_HOME/pocl && export POCL_CACHE_DIR &&
	SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -v -t 2 -x x.sx -m bpr -e 1 -M 1G reads.fa >o.sp 2>o.err &&
	rt=$(sed -n "s/^seedfilt: peak RSS \([0-9]*\) KiB .*/\1/p" o.err) && test "$rt" -gt 0 &&
	SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -v -t 2 -x big.sx -m bpr -e 1 -M 60M big.reads >d.sp 2>d.err &&
	test_grep "passes ([1-9][0-9]* batch.* x [1-9][0-9]*); on the device" d.err &&
	recview d.sp >d.tsv && test_cmp n.tsv d.tsv &&
	kb=$(sed -n "s/^seedfilt: peak RSS \([0-9]*\) KiB .*/\1/p" d.err) &&
	echo "peak RSS $kb KiB, budget 61440 KiB, OpenCL runtime $rt KiB" &&
	if test -z "$ASAN_OPTIONS"; then   # sanitizer shadow memory is no part of -M
		# 16 MiB of room: the peak of the OpenCL runtime itself (the compiler and
		# arenas of PoCL) varies by some MB between two runs (CI: 155,456 KiB against
		# 61,440 + 89,152); main before the device budget peaked at 201,608 KiB here
		test "$kb" -le $((61440 + rt + 16384))
	fi
'

# Reads with many candidates (1,500 each: a 300-base family copied 1,500
# times with a few substitutions): a batch's records, gathered after the
# passes, are written as they come in runs of the plan's size, so the peak
# RSS (VmHWM, which -v reports) stays within -M plus what the program takes
# by itself (a run on a one-read index).  Before, a batch's records were
# all held until the write step: 16.3 MB at -M 8M here.
test_expect_success 'many candidates a read: the peak RSS stays within -M plus the program' '
	awk "BEGIN { srand(31); printf \">u\n\"; for (i = 0; i < 3000; i++) { l = \"\"; for (j = 0; j < 60; j++) l = l substr(\"ACGT\", int(rand() * 4) + 1, 1); print l }
		rep = \"\"; for (i = 0; i < 300; i++) rep = rep substr(\"ACGT\", int(rand() * 4) + 1, 1);
		printf \">r\n\"; for (k = 0; k < 1500; k++) { s = rep; for (m = 0; m < 6; m++) { p = int(rand() * 300) + 1;
			s = substr(s, 1, p - 1) substr(\"ACGT\", int(rand() * 4) + 1, 1) substr(s, p + 1) } print s }
		for (k = 0; k < 2000; k++) { p = int(rand() * 200) + 1; printf \">q%d\n%s\n\", k, substr(rep, p, 100) > \"rep.reads\" } }" >rep.fa &&
	seqidx -q -u 8 -p 100000 -o rep.sx rep.fa &&
	head -2 rep.reads >one.fa && seqidx -q -u 8 -o one.sx one.fa &&
	SEEDPIPE_DEVICE=none seedfilt -v -t 2 -x one.sx -M 1G one.fa >o.sp 2>o.err &&
	floor=$(sed -n "s/^seedfilt: peak RSS \([0-9]*\) KiB .*/\1/p" o.err) && test "$floor" -gt 0 &&
	SEEDPIPE_DEVICE=none seedfilt -v -t 2 -x rep.sx -m bpr -e 1 -s 15 rep.reads >a.sp 2>a.err &&
	test_grep "^seedfilt: 2000 reads .*, [1-9][0-9]\{6\} candidates$" a.err &&
	recview a.sp >a.tsv &&
	for m in 6 8; do
		SEEDPIPE_DEVICE=none seedfilt -v -t 2 -x rep.sx -m bpr -e 1 -s 15 -M ${m}M -T tmp rep.reads >b.sp 2>b.err &&
		test_grep "passes ([1-9][0-9]* batches x [2-9])" b.err &&
		recview b.sp >b.tsv && test_cmp a.tsv b.tsv &&
		kb=$(sed -n "s/^seedfilt: peak RSS \([0-9]*\) KiB .*/\1/p" b.err) &&
		echo "-M ${m}M: peak RSS $kb KiB, the program alone $floor KiB" &&
		if test -z "$ASAN_OPTIONS"; then   # sanitizer shadow memory is no part of -M
			test "$kb" -le $((m * 1024 + floor)) || return 1
		fi
	done &&
	test -z "$(ls tmp)"
'

test_expect_success 'a budget too small for one partition: clear message, exit 1' '
	test_expect_code 1 seedfilt -q -x x.sx -m ph -t 3 -M 2.2M reads.fa >o.sp 2>err &&
	test_grep "^seedfilt: -M: a memory budget of 2.2 MiB is too small: the reference and workspaces take .* and partition [0-9]* alone .*, with no room left for reads (give at least -M [0-9]*K, or index the reference in smaller partitions: seqidx -p)$" err &&
	test_expect_code 2 seedfilt -x x.sx -M 12Q reads.fa 2>err &&
	test_grep "option -M: .12Q. is not a size" err
'

test_expect_success 'a damaged partition is found when loaded in parts' '
	cp x.sx bad.sx &&
	sz=$(wc -c <bad.sx) &&
	printf "\377\377\377\377" | dd of=bad.sx bs=1 seek=$((sz / 2)) conv=notrunc 2>/dev/null &&
	test_expect_code 1 seedfilt -q -x bad.sx -m ph -t 3 -M 3.2M reads.fa >o.sp 2>err &&
	test_grep "^seedfilt: index .bad.sx.: checksum mismatch in section" err
'

test_expect_success 'a full temporary directory: clear message, exit 1, nothing left' '
	( trap "" XFSZ && ulimit -f 16 && SEEDPIPE_DEVICE=none SEEDPIPE_DEBUG_STORE=4K exec seedfilt -q -x x.sx -m bpr -e 2 -t 3 -M 3.2M -T tmp reads.fa >/dev/null ) 2>err;
	test $? = 1 &&
	test_grep "^seedfilt: cannot write the temporary file .tmp/seedfilt\.[A-Za-z0-9]*. (seedfilt -T tmp): File too large" err &&
	test -z "$(ls tmp)" &&
	test_expect_code 1 env SEEDPIPE_DEVICE=none SEEDPIPE_DEBUG_STORE=48 seedfilt -q -x x.sx -m bpr -e 2 -t 3 -M 3.2M -T nodir reads.fa >/dev/null 2>err &&
	test_grep "^seedfilt: cannot create the temporary file .nodir/seedfilt.XXXXXX. (seedfilt -T nodir): No such file or directory" err
'

test_done
