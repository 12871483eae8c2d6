#!/bin/bash
test_description='strsort: external runs (-S, -T), their merge, and temporary-file hygiene'
. ./test-lib.sh
# these cases compare with sort -s: strsort runs with -s (the last-resort
# comparison without -s is tested in t4020-strsort-keys*)
strsort() { command strsort -s "$@"; }

test_expect_success 'setup' '
	python3 -c "
import random
r = random.Random(4003)
with open(\"in\", \"w\") as f:
    for i in range(20000):
        f.write(\"\".join(r.choice(\"abcde\") for _ in range(r.randrange(0, 12))) + \" \" + str(r.randrange(-50, 50)) + \"\\n\")
" &&
	mkdir tmp
'

for opts in "" "-u" "-r" "-k2,2n" "-k2,2n -u" "-k1,1 -r" "-r -u -k2"; do
	test_expect_success "-S 1K (over 64 runs, two merge passes) $opts" "
		sort -s $opts in >expect &&
		strsort -S 1K -T tmp $opts in >out &&
		test_cmp expect out &&
		test \$(ls -A tmp | wc -l) = 0
	"
done

test_expect_success '-S smaller than a line: a run per line' '
	head -300 in >small &&
	python3 -c "print(\"x\" * 5000)" >>small &&
	sort -s small >expect &&
	strsort -S 100b -T tmp small >out &&
	test_cmp expect out &&
	test $(ls -A tmp | wc -l) = 0
'

test_expect_success 'several inputs, stdin and -o onto an input' '
	head -5000 in >part1 && tail -n +5001 in >part2 &&
	sort -s part1 in part2 >expect &&
	strsort -S 2K -T tmp part1 - part2 <in >out &&
	test_cmp expect out &&
	cp in io &&
	sort -s io >expect &&
	strsort -S 2K -T tmp -o io io &&
	test_cmp expect io &&
	test $(ls -A tmp | wc -l) = 0
'

test_expect_success '-T that does not exist is an error' '
	test_expect_code 1 strsort -S 1K -T no/such/dir in 2>err &&
	test_grep "^strsort: cannot create a temporary file in .no/such/dir." err
'

test_expect_success 'a write error (file size limit) loses nothing and leaves no temporary files' '
	cp in keep && cp in io2 &&
	(
		trap "" XFSZ &&
		ulimit -f 64 &&
		test_expect_code 1 strsort -S 8K -T tmp -o io2 io2 2>err
	) &&
	test_grep "cannot write .*File too large" err &&
	test_cmp keep io2 &&
	test $(ls -A tmp | wc -l) = 0 &&
	test_must_fail ls .strsort-out.* &&
	(
		trap "" XFSZ &&
		ulimit -f 64 &&
		test_expect_code 1 strsort -o io2 io2 2>err
	) &&
	test_cmp keep io2 &&
	test_must_fail ls .strsort-out.*
'

# The feeder keeps the FIFO open (exec sleep) so that strsort is still
# reading, with runs on disk, when the signal comes; fds 3 and 4 (TAP) are
# closed so that the harness does not wait for the sleep.  Background jobs
# start with SIGINT ignored, so strsort is started through python3 with
# SIGINT and SIGHUP back to their defaults (strsort keeps an ignored signal
# ignored; SIGHUP is ignored when the suite runs under nohup).
test_expect_success 'SIGTERM, SIGINT, SIGHUP and SIGUSR1 during an external sort leave no temporary files' '
	for sig in TERM INT HUP USR1; do
		rm -f fifo && mkfifo fifo &&
		(cat in in && exec sleep 20) >fifo 3>&- 4>&- &
		feeder=$!
		python3 -c "import os, signal, sys; [signal.signal(s, signal.SIG_DFL) for s in (signal.SIGINT, signal.SIGHUP)]; os.execvp(sys.argv[1], sys.argv[1:])" \
			strsort -S 1K -T tmp fifo >/dev/null 2>err 3>&- 4>&- &
		pid=$!
		n=0
		while test $(ls -A tmp | wc -l) -lt 3 && test $n -lt 1200; do sleep 0.05; n=$((n + 1)); done
		test $(ls -A tmp | wc -l) -ge 3 || { echo "SIG$sig: no 3 runs after 60 s: $(cat err)"; kill $pid $feeder; return 1; }
		kill -$sig $pid
		n=0
		while kill -0 $pid 2>/dev/null && test $n -lt 600; do sleep 0.05; n=$((n + 1)); done
		kill -0 $pid 2>/dev/null && { kill -9 $pid $feeder; echo "strsort ignored SIG$sig"; return 1; }
		wait $pid
		rc=$?
		kill $feeder 2>/dev/null
		wait $feeder 2>/dev/null
		echo "SIG$sig: status $rc, $(ls -A tmp | wc -l) files left, stderr: $(cat err)"
		test $rc -gt 128 && test $(ls -A tmp | wc -l) = 0 || return 1
	done
'

# A reader of the output that goes away while the runs are merged: strsort
# removes its runs and ends with status 0, quietly (strsort(1), EXIT STATUS),
# whether SIGPIPE is at its default (| head) or blocked by the parent.
test_expect_success 'setup: input of many runs, larger than a pipe holds' '
	python3 -c "
import random
r = random.Random(40031)
with open(\"big\", \"w\") as f:
    for i in range(100000):
        f.write(\"%016x\\t%d\\n\" % (r.getrandbits(64), i))
"
'

for opts in "" "-k2,2n" "-u"; do
	test_expect_success "a reader that goes away (| head -1) leaves no temporary files $opts" "
		sort -s $opts big | head -1 >expect &&
		{ TMPDIR=\$PWD/tmp strsort -S 256K $opts big 2>err; echo \$? >rc; } | head -1 >out &&
		test_cmp expect out &&
		test \$(cat rc) = 0 &&
		test ! -s err &&
		test \$(ls -A tmp | wc -l) = 0
	"
done

test_expect_success 'EPIPE (SIGPIPE blocked): status 0, quietly, no temporary files' '
	for opts in "-S 256K -T tmp" "-j 1" "-j 2"; do
		python3 -c "
import signal, subprocess, sys
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGPIPE])
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=open(\"err\", \"wb\"))
p.stdout.read(100)
p.stdout.close()
sys.exit(p.wait())
" strsort $opts big &&
		test ! -s err &&
		test $(ls -A tmp | wc -l) = 0 || return 1
	done
'

test_done
