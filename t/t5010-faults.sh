#!/bin/bash
test_description='fault injection: SIGKILL of each pipeline stage mid-stream, a full disk, a reader that closes early, and no temporary file left by a fatal signal'
. ./test-lib.sh

test_expect_success 'setup: reference, index, reads' '
	awk "BEGIN { srand(11); printf \">chr1\n\"; for (i = 0; i < 20000; i++) { printf \"%s\", substr(\"ACGT\", int(rand() * 4) + 1, 1); if (i % 60 == 59) print \"\" } print \"\" }" >ref.fa &&
	seqidx -q -u 6 -l 10 -o ref.sx ref.fa &&
	awk "BEGIN { srand(12) } /^>/ { next } { s = s \$0 } END { for (i = 0; i < 3000; i++) { p = int(rand() * (length(s) - 80)); q = sprintf(\"%80s\", \"\"); gsub(/ /, \"I\", q); printf \"@r%d\n%s\n+\n%s\n\", i, substr(s, p + 1, 80), q } }" ref.fa >reads.fq &&
	recview -i reads.fq >reads.sp &&
	seedfilt -q -x ref.sx reads.fq >cands.sp &&
	extend -q -O rec cands.sp >hits.sp &&
	recview -c hits.sp
'

# pipeline KILLED: recview -i | seedfilt | extend -O rec | strsort -B, each
# stage on named pipes, fed half the reads from a FIFO this shell keeps open;
# stage KILLED (a b c d) gets SIGKILL while the others wait for more input,
# then the input ends.  Statuses go to st.X, messages to err.X.
pipeline() {
	rm -f in.fifo ab.fifo bc.fifo cd.fifo out.sp st.* err.* &&
	mkfifo in.fifo ab.fifo bc.fifo cd.fifo || return 1
	{ recview -i -b 4k - <in.fifo >ab.fifo 2>err.a; echo $? >st.a; } &
	pa=$!
	{ seedfilt -q -x ref.sx - <ab.fifo >bc.fifo 2>err.b; echo $? >st.b; } &
	pb=$!
	{ extend -q -O rec - <bc.fifo >cd.fifo 2>err.c; echo $? >st.c; } &
	pc=$!
	{ strsort -B <cd.fifo >out.sp 2>err.d; echo $? >st.d; } &
	pd=$!
	exec 7>in.fifo
	head -n 4000 reads.fq >&7
	sleep 1
	# the stage itself is the child of its { } group
	eval "victim=\$(pgrep -P \$p$1)"
	test -n "$victim" && kill -KILL $victim
	exec 7>&-
	wait $pa $pb $pc $pd
	for s in a b c d; do printf "%s: status %s, %s\n" $s "$(cat st.$s)" "$(cat err.$s)"; done
}

# after KILLED: the stages before it end quietly (0, or SIGPIPE), the
# killed one shows 137, each after it fails (1) saying its input was cut
check_after() {
	killed=$1 seen= &&
	for s in a b c d; do
		st=$(cat st.$s) &&
		if test $s = $killed; then
			test "$st" = 137 || { echo "stage $s: status $st, not killed"; return 1; }
			seen=1
		elif test -z "$seen"; then
			{ test "$st" = 0 || test "$st" = 141; } && ! test -s err.$s ||
				{ echo "stage $s (upstream): status $st"; cat err.$s; return 1; }
		else
			test "$st" = 1 && grep "did the upstream tool fail?\|input truncated" err.$s ||
				{ echo "stage $s (downstream): status $st"; cat err.$s; return 1; }
		fi
	done
}

for stage in a b c; do
	test_expect_success "SIGKILL of stage $stage mid-stream: every stage after it fails, naming the cut" "
		pipeline $stage &&
		check_after $stage &&
		test_must_fail recview -c out.sp
	"
done

test_expect_success 'SIGKILL of the last stage: the stages before it end quietly' '
	pipeline d &&
	check_after d
'

test_expect_success 'a full disk: every tool fails with No space left on device' '
	test -w /dev/full || { echo "no /dev/full"; exit 0; } &&
	test_expect_code 1 seqidx -q -u 6 ref.fa >/dev/full 2>err &&
	test_grep "No space left on device" err &&
	test_expect_code 1 seedfilt -q -x ref.sx reads.fq >/dev/full 2>err &&
	test_grep "^seedfilt: cannot write to standard output: No space left on device$" err &&
	test_expect_code 1 extend -q -O rec cands.sp >/dev/full 2>err &&
	test_grep "No space left on device" err &&
	test_expect_code 1 extend -q cands.sp >/dev/full 2>err &&
	test_grep "No space left on device\|cannot write\|failed to write" err &&
	test_expect_code 1 strsort -B hits.sp >/dev/full 2>err &&
	test_grep "No space left on device" err &&
	test_expect_code 1 recview hits.sp >/dev/full 2>err &&
	test_grep "No space left on device" err
'

# the records are written on a pipeline thread while another may be inside
# the OpenCL platform: the write error must come back to the main thread,
# which exits after the pipeline has stopped (an exit on the writing thread
# could abort in the platform's destructors: status 134)
test_expect_success OPENCL 'a full disk with a device: seedfilt and extend fail with the message' '
	test -w /dev/full || { echo "no /dev/full"; exit 0; } &&
	test_expect_code 1 seedfilt -q -d "$TEST_OCL_DEVICE" -B 64 -t 3 -x ref.sx reads.fq >/dev/full 2>err &&
	test_grep "^seedfilt: cannot write to standard output: No space left on device$" err &&
	test_expect_code 1 extend -q -d "$TEST_OCL_DEVICE" -B 256 -O rec cands.sp >/dev/full 2>err &&
	test_grep "No space left on device" err
'

test_expect_success 'a reader that closes early: each writer ends quietly with status 0' '
	quiet() {
		"$@" 2>err | head -c 100 >/dev/null
		st=${PIPESTATUS[0]}
		test $st = 0 && ! test -s err ||
			{ echo "$*: status $st"; cat err; return 1; }
	} &&
	quiet seqidx -q -u 6 ref.fa &&
	quiet recview -i reads.fq &&
	quiet recview reads.sp &&
	quiet seedfilt -q -x ref.sx reads.fq &&
	quiet extend -q cands.sp &&
	quiet extend -q -O rec cands.sp &&
	quiet strsort -B hits.sp
'

# dfl CMD...: run CMD with every signal at its default action (the shell
# starts background commands with SIGINT and SIGQUIT ignored)
dfl() {
	exec python3 -c "import os, signal, sys
for s in (signal.SIGINT, signal.SIGQUIT, signal.SIGPIPE, signal.SIGHUP): signal.signal(s, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])" "$@"
}

test_expect_success 'seqidx -o: no FILE.tmp.* left by SIGTERM, SIGINT, SIGHUP, SIGQUIT' '
	awk "BEGIN { srand(13); printf \">big\n\"; for (i = 0; i < 3000000; i++) { printf \"%s\", substr(\"ACGT\", int(rand() * 4) + 1, 1); if (i % 60 == 59) print \"\" } print \"\" }" >big.fa &&
	for sig in TERM INT HUP QUIT; do
		rm -f big.sx big.sx.tmp.* &&
		{ dfl seqidx -q -t 1 -m all -o big.sx big.fa & } &&
		pid=$! && n=0 &&
		while kill -STOP $pid 2>/dev/null && ! ls big.sx.tmp.* >/dev/null 2>&1 && test $n -lt 3000; do
			kill -CONT $pid; sleep 0.01; n=$((n + 1))
		done &&
		ls big.sx.tmp.* &&
		kill -$sig $pid && kill -CONT $pid &&
		{ wait $pid; st=$?; } &&
		echo "$sig: status $st" &&
		test $st -gt 128 &&
		! ls big.sx.tmp.* 2>/dev/null &&
		! test -e big.sx || return 1
	done
'

test_done
