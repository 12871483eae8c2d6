#!/bin/bash
test_description='ThreadSanitizer: every threaded tool with several threads on small inputs (make tsan-check)'
# Not part of make check (no tNNNN name): make tsan-check runs it against the
# build-tsan/ tree with TSAN_OPTIONS set, so that any report fails the test
# it happens in (test-lib.sh reads the reports back).  Outputs are compared
# with one thread's, so the runs do real work.
. ./test-lib.sh

. "$TEST_DIR"/lib-extend.sh

test -n "$TSAN_OPTIONS" || test_skip_all 'TSAN_OPTIONS is not set (run it through make tsan-check)'

test_lazy_prereq OPENCL 'recview --devices | grep -q "^[0-9]*:[0-9]*	cpu"'

# same_records A B: the streams hold the same records (the provenance names
# each command line, so it differs)
same_records() { recview "$1" >"$1.txt" && recview "$2" >"$2.txt" && test_cmp "$1.txt" "$2.txt"; }
# same_sam A B: the same SAM/BAM records (the @PG header names the command line)
same_sam() { samtools view "$1" >"$1.txt" && samtools view "$2" >"$2.txt" && test_cmp "$1.txt" "$2.txt"; }

test_expect_success 'setup: a genome with repeats and an N run, 400 reads, gzip too' '
	gen 41 30000 400 60 100 3 1 &&
	gzip -c reads.fq >reads.fq.gz
'

test_expect_success 'seqidx -t 4, every structure, several partitions: the -t 1 file' '
	seqidx -q -t 1 -u 5 -l 10 -m all -p 8000 -o one.sx ref.fa &&
	seqidx -q -t 4 -u 5 -l 10 -m all -p 8000 -o x.sx ref.fa &&
	cmp one.sx x.sx &&
	seqidx -q -t 4 -u 5 -l 20 -m general,reduced,block ref.fa >def.sx &&
	seqidx -q -t 3 -u 5 -m fm -p 12000 ref.fa >fm.sx &&
	seqidx --verify def.sx && seqidx --verify fm.sx
'

for m in bpr bs ph fm; do
	test_expect_success "seedfilt -t 4 -m $m (native): the -t 1 stream" '
		seedfilt -q -x x.sx -m '$m' -e 1 -t 1 reads.fq >one.'$m'.sp &&
		seedfilt -q -x x.sx -m '$m' -e 1 -t 4 -B 50 reads.fq.gz >n.'$m'.sp &&
		same_records one.'$m'.sp n.'$m'.sp
	'
done

for m in bpr bs ph fm; do
	test_expect_success OPENCL "seedfilt -t 4 -m $m -d cpu (PoCL): the native stream" '
		seedfilt -q -x x.sx -m '$m' -e 1 -t 4 -B 50 -d cpu reads.fq >d.'$m'.sp &&
		same_records one.'$m'.sp d.'$m'.sp
	'
done

test_expect_success 'seedfilt -m mem -t 4 (native, several partitions): the -t 1 output' '
	seqidx -q -t 4 -m fm -u 4 -l 4 -p 8000 -o m.sx ref.fa &&
	seedfilt -q -x m.sx -m mem -L 15 -t 1 reads.fq >one.mem.sp &&
	seedfilt -q -x m.sx -m mem -L 15 -t 4 reads.fq.gz >n.mem.sp &&
	same_records one.mem.sp n.mem.sp &&
	seedfilt -q -x m.sx -m mem -L 12 -O mummer -t 1 reads.fq >one.mum &&
	seedfilt -q -x m.sx -m mem -L 12 -O mummer -t 4 reads.fq >n.mum &&
	test_cmp one.mum n.mum &&
	SEEDPIPE_MEM_AHEAD=1 SEEDPIPE_MEM_AHEAD_READS=3 SEEDPIPE_FM_CHECK_CHUNK=2 \
		seedfilt -q -x m.sx -m mem -L 12 -O mummer -t 4 -B 5 reads.fq >n.mum &&
	test_cmp one.mum n.mum
'

# (the budget from the error that names the least: an exit with the reads' threads alive, no leak reported)
test_expect_success 'seedfilt -m mem -t 4 -M: passes over groups of partitions (search and stage 2 at once), the -t 1 output' '
	b=$(TSAN_OPTIONS="$TSAN_OPTIONS:report_thread_leaks=0" \
		seedfilt -d none -x m.sx -m mem -L 12 -t 4 -M 1K -O mummer reads.fq 2>&1 >/dev/null |
		sed -n "s/.* need \([0-9.]*\) MiB at least.*/\1/p" | awk "NF { printf \"%dK\", (\$1 + 0.1) * 1024 }") &&
	seedfilt -d none -x m.sx -m mem -L 12 -O mummer -t 4 -B 9 -M $b reads.fq >n.mum 2>err &&
	grep "passes (.* x [2-9] groups)" err &&
	test_cmp one.mum n.mum
'

test_expect_success OPENCL 'seedfilt -m mem -t 4 -d cpu (PoCL): the native output' '
	seedfilt -q -x m.sx -m mem -L 15 -t 4 -d cpu reads.fq >d.mem.sp &&
	same_records one.mem.sp d.mem.sp &&
	seedfilt -q -x m.sx -m mem -L 12 -O mummer -t 4 -B 7 -d cpu reads.fq >d.mum &&
	test_cmp one.mum d.mum &&
	SEEDPIPE_MEM_HOLD_MS=2 seedfilt -q -x m.sx -m mem -L 12 -O mummer -t 4 -B 7 -d cpu reads.fq >d.mum &&
	test_cmp one.mum d.mum &&
	SEEDPIPE_MEM_AHEAD=1 SEEDPIPE_MEM_STAGE=100 seedfilt -q -x m.sx -m mem -L 12 -O mummer -t 4 -B 7 \
		-d cpu reads.fq >d.mum &&
	test_cmp one.mum d.mum
'

test_expect_success 'extend --global -t 4, all against all and A against B, text and records: the -t 1 output' '
	awk "NR % 4 == 1 { print \">\" substr(\$1, 2) } NR % 4 == 2" reads.fq | head -120 >a.fa &&
	awk "NR % 4 == 1 { print \">\" substr(\$1, 2) } NR % 4 == 2" reads.fq | sed -n 121,160p >b.fa &&
	extend --global -q -t 1 a.fa >one.g &&
	extend --global -q -t 4 a.fa >n.g &&
	test_cmp one.g n.g && test -s n.g &&
	extend --global -q -t 1 --score 2,-3,-5 --identity 50 a.fa b.fa >one.gs &&
	extend --global -q -t 4 --score 2,-3,-5 --identity 50 a.fa b.fa >n.gs &&
	test_cmp one.gs n.gs &&
	extend --global -q -t 1 -O rec -f a.fa >one.gr &&
	extend --global -q -t 4 -O rec -f a.fa >n.gr &&
	same_records one.gr n.gr
'

test_expect_success 'the pipeline and parallel-for themselves (thread_test)' '
	"$SEEDPIPE_BUILD"/t/thread_test >tt.out 2>&1 || { cat tt.out; false; }
'

test_expect_success SAMTOOLS 'extend -t 4, SAM, BAM and hits: the -t 1 output' '
	extend -q -e 3 -t 1 one.ph.sp >one.sam &&
	extend -q -e 3 -t 4 -B 16 one.ph.sp >n.sam &&
	same_sam one.sam n.sam &&
	extend -q -e 3 -t 1 -O bam one.ph.sp >one.bam &&
	extend -q -e 3 -t 4 -B 16 -O bam one.ph.sp >n.bam &&
	same_sam one.bam n.bam &&
	extend -q -e 3 -t 4 -B 16 -O rec one.ph.sp >hits.sp &&
	extend -q -e 3 -t 1 -O rec one.ph.sp >one.hits.sp &&
	same_records one.hits.sp hits.sp
'

test_expect_success SAMTOOLS,OPENCL 'extend -t 4 -d cpu (PoCL: three batches on the device at once): the -t 1 native output' '
	extend -q -e 3 -t 1 -d none one.ph.sp >one.n.sam &&
	extend -q -e 3 -t 4 -B 16 -d cpu one.ph.sp >d.sam &&
	same_sam one.n.sam d.sam
'

# extend -M: threads reserving scratch from the pool and waiting for it
# (reads of up to 115,000 candidates, a pool of one of them)
test_expect_success 'extend -t 4 -M 16M (the scratch pool, waits): the output without -M' '
	awk "BEGIN { srand(41); printf \">r\n\"; l = \"\"; for (k = 0; k < 60000; k++) { s = \"AATATTATAATAT\"; if (rand() < 0.8) { p = int(rand() * 13) + 1;
		s = substr(s, 1, p - 1) substr(\"ACGT\", int(rand() * 4) + 1, 1) substr(s, p + 1) } l = l s; if (length(l) >= 60) { print substr(l, 1, 60); l = substr(l, 61) } } print l }" >tr.fa &&
	awk "/^>/ { next } { s = s \$0 } END { srand(5); for (k = 0; k < 12; k++) { p = int(rand() * (length(s) - 100)) + 1; printf \">q%d\n%s\n\", k, substr(s, p, 100) } }" tr.fa >tr.reads &&
	seqidx -q -o tr.sx tr.fa &&
	SEEDPIPE_DEVICE=none seedfilt -q -t 4 -x tr.sx tr.reads >tr.sp &&
	SEEDPIPE_DEVICE=none extend -q -t 1 tr.sp >tr1.sam &&
	SEEDPIPE_DEVICE=none extend -q -t 4 -M 16M tr.sp >trm.sam &&
	same_sam tr1.sam trm.sam
'

test_expect_success 'strsort -j 4: in memory and in external runs (tiny -S), sort(1) order' '
	awk "NR % 4 == 2" reads.fq >lines &&
	cat lines lines ref.fa >in &&
	LC_ALL=C sort -s in >expect &&
	strsort -j 4 in >out && cmp expect out &&
	mkdir tmp && strsort -j 4 -S 4K -T tmp in >out2 && cmp expect out2 &&
	LC_ALL=C sort -s -k2,2 -t A in >expect3 &&
	strsort -j 4 -s -S 2K -T tmp -k2,2 -t A in >out3 && cmp expect3 out3
'

test_expect_success 'strsort -j 4: the emit over several blocks, the last resort in pieces and big groups' '
	awk "BEGIN { srand(7); for (i = 0; i < 500000; i++) printf \"%d\t%s\n\", int(rand() * 50), substr(\"abcdefghij\", 1 + int(rand() * 10)) }" >ties &&
	LC_ALL=C sort ties >expect && strsort -j 4 ties >out && cmp expect out &&
	LC_ALL=C sort -u ties >expect && strsort -j 4 -u ties >out && cmp expect out &&
	LC_ALL=C sort -t "	" -k1,1n ties >expect &&
	strsort -j 4 -t "	" -k1,1n ties >out && cmp expect out &&
	SEEDPIPE_STRSORT_LR=1000,5000 strsort -j 4 -t "	" -k1,1n ties >out && cmp expect out &&
	LC_ALL=C sort -t "	" -k1,1 ties >expect &&
	SEEDPIPE_STRSORT_LR=777,20000 strsort -j 4 -t "	" -k1,1 ties >out && cmp expect out
'

test_expect_success 'strsort -j 4: a file read in pieces, a bucket sorted by every thread together' '
	awk "BEGIN { srand(11); for (i = 0; i < 900000; i++) printf \"%s%d\n\", rand() < 0.4 ? \"xy\" : \"\", int(rand() * 1e12) }" >wide &&
	test $(wc -c <wide) -gt 9000000 &&
	LC_ALL=C sort wide >expect &&
	SEEDPIPE_STRSORT_MAP=0 strsort -j 4 wide >out && cmp expect out &&
	SEEDPIPE_STRSORT_MAP=1 strsort -j 4 wide >out && cmp expect out
'

test_expect_success 'strsort -B -j 4 on record streams: the -j 1 order' '
	recview -i reads.fq >reads.sp &&
	strsort -B -j 1 reads.sp >one.sorted.sp &&
	strsort -B -j 4 reads.sp >sorted.sp &&
	same_records one.sorted.sp sorted.sp &&
	strsort -B -j 1 hits.sp >one.hsorted.sp &&
	strsort -B -j 4 -r hits.sp >/dev/null &&
	strsort -B -j 4 hits.sp >hsorted.sp &&
	same_records one.hsorted.sp hsorted.sp
'

test_expect_success 'recview: import (gzip), cat, check, view' '
	recview -i reads.fq.gz >r.sp &&
	same_records reads.sp r.sp &&
	recview --cat r.sp sorted.sp >c.sp &&
	recview -c c.sp hits.sp &&
	recview -H c.sp >c.txt && test -s c.txt
'

test_done
