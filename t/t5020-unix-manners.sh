#!/bin/bash
test_description='Unix manners: a closed reader ends every tool with status 0, temporary files go on every signal, extend finds its index, one-line usage errors, -t defaults, recview hints, no empty @SQ'
. ./test-lib.sh

CR="python3 $SEEDPIPE_SRC/t/closed_reader.py"

test_expect_success 'setup: reference, index, reads, candidates, hits' '
	awk "BEGIN { srand(21); printf \">chr1\n\"; for (i = 0; i < 20000; i++) printf \"%s\", substr(\"ACGT\", int(rand() * 4) + 1, 1); print \"\" }" >ref.fa &&
	seqidx -q -u 6 -l 10 -o ref.sx ref.fa &&
	awk "NR == 2 { for (i = 0; i < 2000; i++) { p = (i * 97) % 19900; printf \"@r%d\n%s\n+\n%s\n\", i, substr(\$0, p + 1, 60), substr(\"IIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIII\", 1, 60) } }" ref.fa >reads.fq &&
	recview -i reads.fq >reads.sp &&
	seedfilt -q -x ref.sx reads.fq >cands.sp &&
	extend -q -O rec cands.sp >hits.sp &&
	for i in $(seq 3000); do echo "line $((i * 7919 % 3001))"; done >lines.txt
'

# every tool that writes, its output to a reader that is gone: status 0
for ign in "" --ignore; do
	test_expect_success "a closed reader: every tool exits 0 ${ign:-(SIGPIPE default)}" '
		for cmd in "seqidx -q -u 6 ref.fa" "recview -i reads.fq" "recview reads.sp" \
			"recview hits.sp" "seedfilt -q -x ref.sx reads.fq" "seedfilt -q -x ref.sx -f reads.fq" \
			"extend -q cands.sp" "extend -q -O rec cands.sp" "extend -q -O bam cands.sp" \
			"strsort lines.txt" "strsort -B hits.sp" "recview --devices" \
			"extend --global -q reads.fq"; do
			st=$($CR $ign $cmd) &&
			echo "$cmd: $st" &&
			test "$st" = 0 || return 1
		done
	'
done

test_expect_success 'a closed reader: the pipe of the man pages exits 0 at every stage' '
	{ seedfilt -q -x ref.sx reads.fq; echo $? >st.a; } | { extend -q; echo $? >st.b; } | head -1 >/dev/null &&
	test "$(cat st.a) $(cat st.b)" = "0 0"
'

# dfl CMD...: CMD with SIGINT and SIGQUIT at their default action (the shell
# starts background commands with them ignored)
dfl() {
	exec python3 -c "import os, signal, sys
for s in (signal.SIGINT, signal.SIGQUIT, signal.SIGPIPE, signal.SIGHUP): signal.signal(s, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])" "$@"
}

test_expect_success 'strsort: no temporary run left by SIGINT, SIGTERM, SIGHUP or a closed reader' '
	mkdir -p tmp &&
	for sig in INT TERM HUP PIPE; do
		rm -rf tmp/* in.fifo out.fifo && mkfifo in.fifo out.fifo &&
		{ dfl strsort -S 64k -T tmp in.fifo >out.fifo & } &&
		pid=$! &&
		exec 9<out.fifo 8>in.fifo &&
		for i in $(seq 40); do cat lines.txt lines.txt lines.txt; done >&8 &&
		n=0 &&
		while test -z "$(ls tmp)" && test $n -lt 3000; do sleep 0.01; n=$((n + 1)); done &&
		ls tmp | grep -q . &&
		if test $sig = PIPE; then
			exec 9<&- 8>&-
		else
			kill -$sig $pid && exec 9<&- 8>&-
		fi &&
		{ wait $pid; st=$?; } &&
		echo "$sig: status $st, $(ls tmp | wc -l) files left" &&
		case $sig in PIPE) test $st = 0 ;; *) test $st -gt 128 ;; esac &&
		test -z "$(ls tmp)" || return 1
	done
'

test_expect_success 'extend finds the index from another directory (the stream records its absolute path)' '
	mkdir -p sub &&
	seedfilt -q -x ref.sx reads.fq >sub/c.sp &&
	extend -q -O rec cands.sp >want.sp &&
	(cd sub && extend -q -O rec c.sp >../got.sp) &&
	recview got.sp >got.txt && recview want.sp >want.txt && test_cmp want.txt got.txt &&
	recview -H sub/c.sp | grep "^##index=/"
'

test_expect_success 'extend looks next to the candidates file, says so, and names what it tried' '
	mkdir -p moved &&
	cp ref.sx moved/ref.sx && cp sub/c.sp moved/c.sp &&
	mv ref.sx ref.sx.away &&
	extend -O rec moved/c.sp >got2.sp 2>err &&
	mv ref.sx.away ref.sx &&
	test_grep "next to the candidates" err &&
	recview got2.sp >got2.txt && test_cmp want.txt got2.txt &&
	mv ref.sx ref.sx.away &&
	rm moved/ref.sx &&
	test_expect_code 1 extend moved/c.sp >out 2>err &&
	mv ref.sx.away ref.sx &&
	test_grep "tried .*/ref.sx. (No such file or directory), .moved/ref.sx. (No such file or directory); give it with -x FILE" err &&
	extend -q -x ref.sx -O rec moved/c.sp >got3.sp &&
	recview got3.sp >got3.txt && test_cmp want.txt got3.txt
'

test_expect_success 'seedfilt -m mem records the absolute path too; the sub-modes print the common version line' '
	seqidx -q -u 6 -l 10 -m all -o fm.sx ref.fa &&
	seedfilt -q -x fm.sx -m mem -L 20 reads.fq >sub/m.sp &&
	recview -H sub/m.sp | grep "^##index=/.*/fm.sx$" &&
	(cd sub && extend -q -O rec m.sp >/dev/null) &&
	seedfilt -m mem --version | grep "^seedfilt (seedpipe) [0-9]" &&
	extend --global --version | grep "^extend (seedpipe) [0-9]"
'

test_expect_success 'seedfilt -x <(...): extend asks for -x' '
	seedfilt -q -x <(cat ref.sx) reads.fq >p.sp &&
	test_expect_code 1 extend p.sp >out 2>err &&
	test_grep "give it with -x FILE" err &&
	extend -q -x ref.sx -O rec p.sp | recview >p.txt && test_cmp want.txt p.txt
'

test_expect_success 'usage errors: one line, exit 2, also for values out of range' '
	for cmd in "extend -e 16 cands.sp" "extend -O cram cands.sp" "seedfilt -x ref.sx -e 99 reads.fq" \
		"seedfilt -x ref.sx -m nosuch reads.fq" "seqidx -l 40 ref.fa" "seqidx" "recview -k nosuch" \
		"recview -b 1 reads.sp" "strsort -j 0 lines.txt" "seedfilt -x" "extend -t 0 cands.sp"; do
		test_expect_code 2 $cmd >out 2>err &&
		tool=${cmd%% *} &&
		echo "$cmd: $(cat err)" &&
		test $(wc -l <err) = 1 &&
		grep -q "^$tool: .*; try .$tool --help.$" err || return 1
	done
'

test_expect_success '-t defaults to every online processor' '
	n=$(getconf _NPROCESSORS_ONLN) &&
	seedfilt -x ref.sx reads.fq 2>err >/dev/null && test_grep " $n threads" err &&
	extend cands.sp 2>err >/dev/null && test_grep " $n threads" err &&
	seedfilt -h | grep "^  -t INT .*\[$n\]" &&
	extend -h | grep "^  -t INT .*\[$n\]" &&
	seqidx -h | grep "^  -t INT .*\[$n\]"
'

test_expect_success 'recview on FASTA or FASTQ suggests -i' '
	test_expect_code 1 recview reads.fq 2>err &&
	test_grep "looks like FASTQ.*recview -i reads.fq" err &&
	test_expect_code 1 recview ref.fa 2>err &&
	test_grep "looks like FASTA.*recview -i ref.fa" err
'

test_expect_success 'an empty FASTA record is left out of the index with a warning: no @SQ LN:0' '
	printf ">empty\n>x\nACGTACGTTTGACCAGTAGGACCATTAGCAAGT\n>e2\n\n" >e.fa &&
	seqidx -u 4 -l 6 -o e.sx e.fa 2>err &&
	test_grep "2 empty sequences in .e.fa. (the first .empty.) were left out of the index" err &&
	printf ">r\nACGTACGTTTGACCAGTAGG\n" >er.fa &&
	seedfilt -q -x e.sx er.fa | extend -q >e.sam &&
	! grep "LN:0" e.sam &&
	test $(grep -c "^@SQ" e.sam) = 1
'

test_done
