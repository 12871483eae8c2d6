#!/bin/bash
test_description='seedfilt: bad input, bad options and absent devices'
. ./test-lib.sh
. "$TEST_DIR"/t2999-filt-lib.sh

test_expect_success 'setup' '
	"$FILT_ORACLE" -G 31 2 3000 >ref.fa &&
	"$FILT_ORACLE" -R 32 20 50 ref.fa >reads.fa &&
	seqidx -q -u 5 -l 8 -o x.sx ref.fa &&
	seqidx -q -u 5 -l 8 -m general -o gen.sx ref.fa
'

test_expect_success 'no index: usage error' '
	test_expect_code 2 seedfilt reads.fa >out 2>err &&
	test_grep "no index: give -x FILE or set SEEDPIPE_INDEX; try .seedfilt --help." err &&
	test $(wc -l <err) = 1
'

test_expect_success 'SEEDPIPE_INDEX names the index' '
	SEEDPIPE_INDEX=x.sx seedfilt -q reads.fa >a.sp &&
	seedfilt -q -x x.sx reads.fa >b.sp &&
	recview a.sp >a.tsv && recview b.sp >b.tsv && test_cmp a.tsv b.tsv
'

test_expect_success 'missing index' '
	test_expect_code 1 seedfilt -x nope.sx reads.fa >out 2>err &&
	test_grep "^seedfilt: index .nope.sx.: No such file or directory" err
'

test_expect_success 'a FASTA file given as the index' '
	test_expect_code 1 seedfilt -x ref.fa reads.fa >out 2>err &&
	test_grep "^seedfilt: index .ref.fa.: not a seedpipe index" err
'

test_expect_success 'corrupt index: checksum' '
	cp x.sx bad.sx &&
	printf "XXXX" | dd of=bad.sx bs=1 seek=3000 conv=notrunc 2>/dev/null &&
	test_expect_code 1 seedfilt -x bad.sx reads.fa >out 2>err &&
	test_grep "^seedfilt: index .bad.sx.: .*damaged" err
'

test_expect_success 'truncated index' '
	head -c 5000 x.sx >short.sx &&
	test_expect_code 1 seedfilt -x short.sx reads.fa >out 2>err &&
	test_grep "^seedfilt: index .short.sx.: truncated" err
'

test_expect_success 'method whose structure the index lacks' '
	test_expect_code 2 seedfilt -x gen.sx -m ph reads.fa >out 2>err &&
	test_grep "^seedfilt: method ph needs the reduced structure" err &&
	test_expect_code 2 seedfilt -x x.sx -m fm reads.fa >out 2>err &&
	test_grep "^seedfilt: method fm needs the fm structure" err
'

test_expect_success 'auto falls back to bpr on a general-only index' '
	seedfilt -x gen.sx -e 1 reads.fa >out 2>err &&
	test_grep "method bpr, e = 1" err
'

test_expect_success 'e out of range for bs and ph (e > 3) and for bpr (e >= l)' '
	test_expect_code 2 seedfilt -x x.sx -m bs -e 4 reads.fa >out 2>err &&
	test_grep "^seedfilt: -e 4 is out of range for bs: 0..3" err &&
	test_expect_code 2 seedfilt -x x.sx -m ph -e 4 reads.fa >out 2>err &&
	test_grep "^seedfilt: -e 4 is out of range for ph" err &&
	test_expect_code 2 seedfilt -x x.sx -m bpr -e 8 reads.fa >out 2>err &&
	test_grep "^seedfilt: -e 8 is out of range for bpr: it needs e < l = 8" err &&
	seedfilt -q -x x.sx -m bpr -e 7 reads.fa >out
'

test_expect_success 'bad options' '
	test_expect_code 2 seedfilt -x x.sx -m nope reads.fa >out 2>err &&
	test_grep "unknown method .nope." err &&
	test_expect_code 2 seedfilt -x x.sx -s 0 reads.fa >out 2>err &&
	test_grep "option -s: .0. is not an integer" err &&
	test_expect_code 2 seedfilt -x x.sx -e -1 reads.fa >out 2>err &&
	test_expect_code 2 seedfilt -x x.sx --bogus reads.fa >out 2>err &&
	test_expect_code 2 seedfilt -x x.sx reads.fa reads.fa reads.fa >out 2>err &&
	test_grep "too many arguments" err
'

test_expect_success 'help and version' '
	seedfilt -h >out && test_grep "^Usage: seedfilt" out &&
	seedfilt --help >out && test_grep "^  -x FILE" out &&
	seedfilt --version >out && test_grep "^seedfilt (seedpipe) [0-9]" out
'

test_expect_success 'a requested GPU that is absent: exit 3' '
	if "$SEEDPIPE_BUILD"/t/ocl_test --open gpu >/dev/null 2>&1; then
		say "# skipped: a GPU is present"
	else
		test_expect_code 3 seedfilt -x x.sx -d gpu reads.fa >out 2>err &&
		test_grep "^seedfilt: no OpenCL GPU" err
	fi
'

test_expect_success 'a device spec that does not parse: exit 2' '
	test_expect_code 2 seedfilt -x x.sx -d banana reads.fa >out 2>err
'

test_expect_success 'malformed reads: FILE:LINE, exit 1' '
	printf ">a\nACGTACGT\n@b\nACGT\n+\nIIII\n" >bad.fa &&
	test_expect_code 1 seedfilt -x x.sx bad.fa >out 2>err &&
	test_grep "^seedfilt: bad.fa:[0-9]*:" err &&
	printf "@a\nACGT\n+\nII\n" >bad.fq &&
	test_expect_code 1 seedfilt -x x.sx <bad.fq >out 2>err &&
	test_grep "^seedfilt: -:4:" err
'

test_expect_success 'missing reads file' '
	test_expect_code 1 seedfilt -x x.sx nope.fa >out 2>err &&
	test_grep "^seedfilt: cannot open .nope.fa.: No such file" err
'

test_expect_success 'a candidates stream is not reads' '
	seedfilt -q -x x.sx reads.fa >c.sp &&
	test_expect_code 1 seedfilt -x x.sx c.sp >out 2>err &&
	test_grep "expected reads, got candidates" err &&
	test_expect_code 1 seedfilt -x x.sx <c.sp >out 2>err &&
	test_grep "expected reads, got candidates" err
'

test_expect_success 'a truncated reads stream' '
	seedfilt -q -x x.sx reads.fa >c.sp &&
	head -c 100 c.sp >t.sp &&
	test_expect_code 1 seedfilt -x x.sx t.sp >out 2>err
'

# the input ends while other batches are filtered and written (sp_pipeline):
# the run stops, the message comes once, from a file or a pipe
test_expect_success 'a reads stream truncated mid-way: one message, exit 1' '
	"$FILT_ORACLE" -R 33 2000 50 ref.fa >many.fa &&
	recview -i -b 4K many.fa >many.sp &&
	head -c $(($(wc -c <many.sp) * 2 / 3)) many.sp >half.sp &&
	for t in 1 3; do
		test_expect_code 1 seedfilt -x x.sx -t $t -B 37 half.sp >out 2>err &&
		test_grep "^seedfilt: .half.sp.: input truncated in block" err &&
		test $(wc -l <err) = 1 &&
		cat half.sp | test_expect_code 1 seedfilt -x x.sx -t $t -B 37 >out 2>err &&
		test_grep "^seedfilt: standard input: input truncated in block" err &&
		test $(wc -l <err) = 1 || return 1
	done
'

test_expect_success 'refuses to write a stream to a terminal unless -f' '
	if test -t 1 || ! command -v script >/dev/null; then
		say "# skipped: no way to fake a terminal"
	else
		test_expect_code 1 script -qec "seedfilt -x x.sx reads.fa" /dev/null >out 2>&1;
		test_grep "refusing to write a binary stream to a terminal" out
	fi
'

test_expect_success 'short reads are passed through without candidates, and counted' '
	printf ">s\nACGT\n>t\n\n" >short.fa &&
	seedfilt -x x.sx short.fa >s.sp 2>err &&
	test_grep "2 reads (2 shorter than a pattern, 2 without candidates)" err &&
	recview s.sp >s.tsv && test $(grep -vc "^#" s.tsv) = 2
'

test_expect_success 'quiet mode prints nothing' '
	seedfilt -q -x x.sx reads.fa >out 2>err &&
	test ! -s err
'

test_done
