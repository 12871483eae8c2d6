#!/bin/bash
test_description='seedfilt: the OpenCL backend writes the same bytes as the native C code'
. ./test-lib.sh
. "$TEST_DIR"/t2999-filt-lib.sh

test_expect_success OPENCL 'setup' '
	"$FILT_ORACLE" -G 41 3 4000 >ref.fa &&
	"$FILT_ORACLE" -R 42 300 60 ref.fa >reads.fa
'

# same NAME SEQIDX_OPTS SEEDFILT_OPTS: streams from -d none and -d $TEST_OCL_DEVICE
# are equal, with the units gathered by the host (the default for these
# seeds of weight <= 8, in seed-code order) and on the device (pat_items,
# pat_compact in filt.cl)
same() {
	test_expect_success OPENCL "$1" '
		seqidx -q '"$2"' -m all -o x.sx ref.fa &&
		for m in bpr bs ph; do
			SEEDPIPE_DEVICE=none seedfilt -q -x x.sx -m $m '"$3"' reads.fa >n.sp &&
			for g in host device; do
				SEEDPIPE_FILT_GATHER=$g SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -q -x x.sx -m $m '"$3"' reads.fa >d.sp &&
				cmp n.sp d.sp || return 1
			done
		done
	'
}

same 'u=5 l=8 e=1, 3 partitions'       '-u 5 -l 8 -p 3000'  '-e 1'
same 'u=4 l=4 (h=8) e=0 step 2'         '-u 4 -l 4'          '-e 0 -s 2'
same 'u=4 l=5 (h=6) e=2'                '-u 4 -l 5'          '-e 2'
same 'spaced ##-## l=20 (u64 keys) e=3' '-S ##-## -l 20'     '-e 3 -s 3'
same 'u=6 l=32 e=2'                     '-u 6 -l 32'         '-e 2'

test_expect_success OPENCL 'seeds of weight 9: the units gathered on the device by default, same bytes' '
	seqidx -q -u 9 -l 12 -m all -o x.sx ref.fa &&
	for m in bpr bs ph fm; do
		SEEDPIPE_DEVICE=none seedfilt -q -x x.sx -m $m -e 1 reads.fa >n.sp &&
		SEEDPIPE_PROFILE=1 SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -q -x x.sx -m $m -e 1 reads.fa >d.sp 2>err &&
		test_grep "profile: gather kernels" err &&
		cmp n.sp d.sp || return 1
	done
'

test_expect_success OPENCL 'bpr: reads with N in q (nmask on the device), same bytes' '
	seqidx -q -u 4 -l 8 -m general -o x.sx ref.fa &&
	awk "BEGIN { srand(43) } /^>/ { print; next }
		{ s = \$0; for (i = 0; i < 3; i++) { p = int(rand() * length(s)) + 1
		  s = substr(s, 1, p - 1) \"N\" substr(s, p + 1) }; print s }" reads.fa >rn.fa &&
	for e in 1 2; do
		SEEDPIPE_DEVICE=none seedfilt -x x.sx -m bpr -e $e rn.fa >n.sp 2>n.err &&
		SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -x x.sx -m bpr -e $e rn.fa >d.sp 2>d.err &&
		cmp n.sp d.sp &&
		SEEDPIPE_FILT_GATHER=device SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -x x.sx -m bpr -e $e rn.fa >g.sp 2>/dev/null &&
		cmp n.sp g.sp &&
		SEEDPIPE_DEVICE=$TEST_OCL_DEVICE SEEDPIPE_DEBUG_ALLOC_LIMIT=64K seedfilt -x x.sx -m bpr -e $e rn.fa >s.sp 2>/dev/null &&
		cmp n.sp s.sp &&
		sed -n "s/.* \([0-9]*\) matches.*/\1/p" n.err >mn &&
		sed -n "s/.* \([0-9]*\) matches.*/\1/p" d.err >md &&
		test -s mn && test_cmp mn md &&
		"$FILT_ORACLE" -S "####" -l 8 -e $e -s 1 -M bpr -P "$(filt_parts x.sx)" ref.fa rn.fa |
			LC_ALL=C sort >want &&
		filt_tsv x.sx d.sp >got && test_cmp want got || return 1
	done
'

test_expect_success OPENCL 'tiny device memory: many slices, same bytes' '
	seqidx -q -u 4 -l 8 -m all -o x.sx ref.fa &&
	for m in bpr bs ph; do
		SEEDPIPE_DEVICE=none seedfilt -q -x x.sx -m $m -e 1 reads.fa >n.sp &&
		SEEDPIPE_DEVICE=$TEST_OCL_DEVICE SEEDPIPE_DEBUG_ALLOC_LIMIT=64K seedfilt -q -x x.sx -m $m -e 1 reads.fa >d.sp &&
		cmp n.sp d.sp || return 1
	done
'

# gathered on the device, the units come to the host when one slice cannot
# take them all (the output buffer does not fit: halved slices), or stay
# with the host when the patterns do not fit
test_expect_success OPENCL 'units gathered on the device, tiny device memory: same bytes' '
	seqidx -q -u 4 -l 8 -m all -p 3000 -o x.sx ref.fa &&
	for m in bpr bs ph fm; do
		SEEDPIPE_DEVICE=none seedfilt -q -B 8 -x x.sx -m $m -e 1 reads.fa >n.sp &&
		for lim in 16K 64K 256K; do
			SEEDPIPE_FILT_GATHER=device SEEDPIPE_DEVICE=$TEST_OCL_DEVICE SEEDPIPE_DEBUG_ALLOC_LIMIT=$lim \
				seedfilt -q -B 8 -x x.sx -m $m -e 1 reads.fa >d.sp &&
			cmp n.sp d.sp || return 1
		done
	done
'

test_expect_success OPENCL 'partitions that do not fit together go one at a time' '
	seqidx -q -u 4 -l 8 -m all -p 1500 -o p.sx ref.fa &&
	for m in bpr ph; do
		SEEDPIPE_DEVICE=none seedfilt -q -x p.sx -m $m -e 1 reads.fa >n.sp &&
		SEEDPIPE_DEVICE=$TEST_OCL_DEVICE SEEDPIPE_DEVICE_MEM=40K seedfilt -q -x p.sx -m $m -e 1 reads.fa >d.sp &&
		cmp n.sp d.sp || return 1
	done
'

test_expect_success OPENCL 'a partition larger than the device: a warning, then the native code' '
	seqidx -q -u 4 -l 8 -m all -o x.sx ref.fa &&
	SEEDPIPE_DEVICE=$TEST_OCL_DEVICE SEEDPIPE_DEBUG_ALLOC_LIMIT=1K seedfilt -x x.sx -m bs reads.fa >d.sp 2>err &&
	test_grep "warning: index partition 0 does not fit the OpenCL device" err &&
	SEEDPIPE_DEVICE=none seedfilt -x x.sx -m bs reads.fa >n.sp 2>err2 &&
	cmp n.sp d.sp
'

# bpr work groups build their units' block-mask tables in local memory when
# they fit (large SeedBlocks: u = 1 on 24 kbp), else compose the masks (the
# small blocks above); l = 4, 6, 8, 16 give h = 8, 5, 4, 2 slices a word;
# some reads have an N
test_expect_success OPENCL 'bpr: large SeedBlocks (block-mask tables in local memory), same bytes' '
	"$FILT_ORACLE" -G 45 1 24000 >big.fa &&
	"$FILT_ORACLE" -R 46 60 40 big.fa >bigr0.fa &&
	awk "BEGIN { srand(47) } /^>/ { print; next }
		{ s = \$0; if (rand() < 0.3) { p = int(rand() * length(s)) + 1
		  s = substr(s, 1, p - 1) \"N\" substr(s, p + 1) }; print s }" bigr0.fa >bigr.fa &&
	grep -q N bigr.fa &&
	for l in 4 6 8 16; do
		seqidx -q -u 1 -l $l -m general -o big.sx big.fa &&
		for e in 0 2; do
			SEEDPIPE_DEVICE=none seedfilt -q -x big.sx -m bpr -e $e bigr.fa >n.sp &&
			SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -q -x big.sx -m bpr -e $e bigr.fa >d.sp &&
			recview n.sp | grep -v "^#" >n.tsv &&
			recview d.sp | grep -v "^#" >d.tsv &&
			test -s n.tsv && test_cmp n.tsv d.tsv || return 1
		done
	done
'

# the device matches batch i while the threads finish batch i-1 (filt_run.c):
# many batches, several threads, same records
test_expect_success OPENCL 'many batches (-B) and threads (-t): same records on the device' '
	seqidx -q -u 4 -l 8 -m all -o x.sx ref.fa &&
	for m in bpr ph fm; do
		SEEDPIPE_DEVICE=none seedfilt -q -x x.sx -m $m -e 1 reads.fa >n.sp &&
		recview n.sp | grep -v "^#" >n.tsv &&
		for tb in "1 1" "3 7" "2 64"; do
			set -- $tb &&
			SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -q -x x.sx -m $m -e 1 -t $1 -B $2 \
				reads.fa >d.sp &&
			recview d.sp | grep -v "^#" >d.tsv &&
			test_cmp n.tsv d.tsv || return 1
		done
	done
'

# the input ends while the device matches other batches and the threads cut
# and finish theirs: the run stops, the message comes once
test_expect_success OPENCL 'a reads stream truncated mid-way on the device: one message, exit 1' '
	seqidx -q -u 4 -l 8 -m all -o x.sx ref.fa &&
	"$FILT_ORACLE" -R 49 2000 50 ref.fa >many.fa &&
	recview -i -b 4K many.fa >many.sp &&
	head -c $(($(wc -c <many.sp) * 2 / 3)) many.sp >half.sp &&
	for m in bpr ph fm; do
		test_expect_code 1 env SEEDPIPE_DEVICE=$TEST_OCL_DEVICE \
			seedfilt -x x.sx -m $m -t 3 -B 37 half.sp >out 2>err &&
		test_grep "^seedfilt: .half.sp.: input truncated in block" err &&
		test $(wc -l <err) = 1 || return 1
	done
'

# a batch of more than 65536 patterns is gathered by up to 4 threads
# (gather_units in filt_ocl_match.c, for seeds of weight > 8), bounded by -t;
# reads sampled without errors, so most units have matches
test_expect_success OPENCL 'a large batch (threads gather its patterns): same records' '
	seqidx -q -u 9 -l 8 -m all -o x9.sx ref.fa &&
	"$FILT_ORACLE" -K 48 1500 60 0 s ref.fa >many.fa &&
	for m in ph bpr; do
		SEEDPIPE_DEVICE=none seedfilt -q -x x9.sx -m $m -e 1 many.fa >n.sp &&
		recview n.sp | grep -v "^#" >n.tsv &&
		SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -v -x x9.sx -m $m -e 1 -t 3 many.fa \
			>d.sp 2>d.err &&
		pats=$(sed -n "s/.*), \([0-9]*\) patterns (.*/\1/p" d.err) &&
		test "$pats" -gt 65536 &&
		recview d.sp | grep -v "^#" >d.tsv &&
		test_cmp n.tsv d.tsv &&
		SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -q -x x9.sx -m $m -e 1 -t 1 many.fa >d.sp &&
		recview d.sp | grep -v "^#" >d.tsv &&
		test_cmp n.tsv d.tsv || return 1
	done
'

test_expect_success OPENCL 'a read that occurs 100,000 times: same on the device' '
	R=ACGTTGCAAGGCTTACCGATGCATTCGAGCTAGGCTAACCGTTAGCAT &&
	awk -v R=$R "BEGIN { srand(7); print \">rep\"; for (i = 0; i < 100000; i++) { s = R; for (j = 0; j < 12; j++) s = s substr(\"ACGT\", int(rand() * 4) + 1, 1); print s } }" >rep.fa &&
	seqidx -q -u 10 -l 12 -o rep.sx rep.fa &&
	printf ">r\n%s\n" $R >r.fa &&
	for m in bpr bs ph; do
		SEEDPIPE_DEVICE=none seedfilt -q -x rep.sx -m $m -e 1 r.fa >n.sp &&
		SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -q -x rep.sx -m $m -e 1 r.fa >d.sp &&
		cmp n.sp d.sp || return 1
	done &&
	recview d.sp | awk -F "\t" "!/^#/ { print (\$6 >= 100000) }" >got &&
	echo 1 >want && test_cmp want got
'

test_expect_success OPENCL '-N: the count pass alone finds the same matches' '
	seqidx -q -u 5 -l 8 -m all -o x.sx ref.fa &&
	for m in bpr bs ph; do
		SEEDPIPE_DEVICE=none seedfilt -x x.sx -m $m -e 2 -N reads.fa 2>n.err >n.sp &&
		SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -x x.sx -m $m -e 2 -N reads.fa 2>d.err >d.sp &&
		cmp n.sp d.sp &&
		sed -n "s/.* \([0-9]*\) matches.*/\1/p" n.err >mn &&
		sed -n "s/.* \([0-9]*\) matches.*/\1/p" d.err >md &&
		test -s mn && test_cmp mn md || return 1
	done
'

test_expect_success OPENCL 'bs, ph: -N and full runs agree with the native code for e = 0..3' '
	seqidx -q -u 4 -l 6 -m all -o x.sx ref.fa &&
	for m in bs ph; do
		for e in 0 1 2 3; do
			SEEDPIPE_DEVICE=none seedfilt -x x.sx -m $m -e $e reads.fa 2>n.err >n.sp &&
			SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -x x.sx -m $m -e $e reads.fa 2>d.err >d.sp &&
			cmp n.sp d.sp &&
			SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -x x.sx -m $m -e $e -N reads.fa 2>dn.err >/dev/null &&
			sed -n "s/.* \([0-9]*\) matches.*/\1/p" n.err >mn &&
			sed -n "s/.* \([0-9]*\) matches.*/\1/p" d.err >md &&
			sed -n "s/.* \([0-9]*\) matches.*/\1/p" dn.err >mdn &&
			test -s mn && test_cmp mn md && test_cmp mn mdn || return 1
		done
	done
'

test_expect_success OPENCL 'bs, ph with -a (window words, seed code below q): same bytes' '
	seqidx -q -u 4 -l 6 -m all -p 3000 -o x.sx ref.fa &&
	for m in bs ph; do
		for e in 1 2; do
			SEEDPIPE_DEVICE=none seedfilt -q -x x.sx -m $m -a -e $e reads.fa >n.sp &&
			SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -q -x x.sx -m $m -a -e $e reads.fa >d.sp &&
			cmp n.sp d.sp || return 1
		done
	done
'

test_expect_success OPENCL 'ph: words that are no key, with and without their fingerprint, same bytes as bs' '
	seqidx -q -u 3 -l 12 -m all -o x.sx ref.fa &&
	"$FILT_ORACLE" -R 44 200 40 ref.fa >far.fa &&
	for e in 2 3; do
		SEEDPIPE_DEVICE=none seedfilt -q -x x.sx -m bs -e $e far.fa >n.sp &&
		SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -q -x x.sx -m ph -e $e far.fa >d.sp 2>/dev/null &&
		recview n.sp | grep -v "^#" >n.tsv &&
		recview d.sp | grep -v "^#" >d.tsv &&
		test -s n.tsv && test_cmp n.tsv d.tsv || return 1
	done
'

test_expect_success OPENCL 'SEEDPIPE_PROFILE: device times of each command on stderr, same bytes' '
	seqidx -q -u 4 -l 8 -m all -o x.sx ref.fa &&
	for m in bpr ph; do
		SEEDPIPE_DEVICE=none seedfilt -q -x x.sx -m $m -e 1 reads.fa >n.sp &&
		SEEDPIPE_DEVICE=$TEST_OCL_DEVICE SEEDPIPE_PROFILE=1 seedfilt -q -x x.sx -m $m -e 1 reads.fa >d.sp 2>err &&
		cmp n.sp d.sp &&
		test_grep "profile: count kernel *[1-9][0-9]* commands" err &&
		test_grep "profile: write kernel" err &&
		test_grep "profile: .* match calls" err || return 1
	done &&
	SEEDPIPE_DEVICE=$TEST_OCL_DEVICE SEEDPIPE_PROFILE=0 seedfilt -q -x x.sx -m ph -e 1 reads.fa >d.sp 2>err &&
	! test -s err
'

test_expect_success OPENCL 'fm on the device: same bytes (contiguous and spaced seeds)' '
	for sh in "-u 5 -l 8" "-S ##-#-## -l 20"; do
		seqidx -q $sh -m all -p 3000 -o f.sx ref.fa &&
		for e in 0 2; do
			SEEDPIPE_DEVICE=none seedfilt -x f.sx -m fm -e $e reads.fa >n.sp 2>n.err &&
			SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -x f.sx -m fm -e $e reads.fa >d.sp 2>d.err &&
			cmp n.sp d.sp &&
			SEEDPIPE_FILT_GATHER=device SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -x f.sx -m fm -e $e reads.fa >d.sp 2>d.err &&
			cmp n.sp d.sp &&
			SEEDPIPE_DEVICE=none seedfilt -x f.sx -m fm -e $e -N reads.fa >n.sp 2>n.err &&
			SEEDPIPE_DEVICE=$TEST_OCL_DEVICE seedfilt -x f.sx -m fm -e $e -N reads.fa >d.sp 2>d.err &&
			sed -n "s/.* \([0-9]*\) matches.*/\1/p" n.err >mn &&
			sed -n "s/.* \([0-9]*\) matches.*/\1/p" d.err >md &&
			test_cmp mn md || return 1
		done
	done
'

test_expect_success OPENCL 'tens of MB of positions: several pinned pieces, or plain reads, same bytes' '
	"$FILT_ORACLE" -G 61 1 1000 >one.fa &&
	awk "NR == 1 { next } { s = s \$0 } END { print \">rep\"; for (i = 0; i < 200; i++) print s }" one.fa >rep.fa &&
	"$FILT_ORACLE" -R 62 2000 60 rep.fa >rr.fa &&
	seqidx -q -u 5 -l 10 -m general -o rep.sx rep.fa &&
	SEEDPIPE_DEVICE=none seedfilt -q -t 2 -x rep.sx -m bpr -e 1 rr.fa >n.sp &&
	SEEDPIPE_DEVICE=$TEST_OCL_DEVICE SEEDPIPE_PROFILE=1 seedfilt -q -t 2 -x rep.sx -m bpr -e 1 rr.fa >d.sp 2>prof &&
	cmp n.sp d.sp &&
	b=$(sed -n "s/.*device->host *\([0-9]*\) commands .* \([0-9]*\) bytes$/\2/p" prof) &&
	test "$b" -gt 20000000 &&
	SEEDPIPE_DEVICE=$TEST_OCL_DEVICE SEEDPIPE_DEBUG_ALLOC_LIMIT=1M seedfilt -q -t 2 -x rep.sx -m bpr -e 1 rr.fa >d.sp &&
	cmp n.sp d.sp
'

test_done
