#!/bin/bash
test_description='recview: import FASTA/FASTQ, print streams as TSV, --cat, --check'
. ./test-lib.sh

test_expect_success 'setup' '
	printf "@r1 first read\nACGTN\n+\nIIIII\n@r2\nGGa\n+\n!#\$\n@r3 x\ty\n\n+\n\n" >in.fq &&
	printf ">s1 desc\nACGT\nTTR\n>s2\nGG\n" >in.fa
'

test_expect_success 'TSV of an imported FASTQ is the expected text' '
	recview -i in.fq >in.sp &&
	recview in.sp >actual &&
	printf "#id\tname\tcomment\tseq\tqual\n" >expect &&
	printf "0\tr1\tfirst read\tACGTN\tIIIII\n" >>expect &&
	printf "1\tr2\t*\tGGA\t!#\$\n" >>expect &&
	printf "2\tr3\tx\\\\ty\t*\t*\n" >>expect &&
	test_cmp expect actual
'

test_expect_success 'TSV of an imported multi-line FASTA has no qualities' '
	recview -i in.fa | recview >actual &&
	printf "#id\tname\tcomment\tseq\tqual\n0\ts1\tdesc\tACGTTTN\t*\n1\ts2\t*\tGG\t*\n" >expect &&
	test_cmp expect actual
'

test_expect_success GZIP 'gzip input is imported the same' '
	gzip -c in.fq >in.fq.gz &&
	recview -i in.fq.gz | recview >actual &&
	recview in.sp >expect &&
	test_cmp expect actual
'

test_expect_success 'several inputs make one stream with running ids' '
	recview -i in.fq in.fa | recview >actual &&
	test $(grep -vc "^#" actual) = 5 &&
	test "$(tail -1 actual | cut -f1,2)" = "$(printf "4\ts2")"
'

test_expect_success '-H prints the provenance with the pg line' '
	recview -H in.sp >actual &&
	test_grep "^##kind=reads$" actual &&
	test_grep "^##pg=recview	" actual &&
	test_grep "recview -i in.fq$" actual &&
	test_grep "^##recview.source=in.fq$" actual
'

test_expect_success '--cat of two streams holds the records of both, in order' '
	recview -i in.fa >two.sp &&
	recview --cat in.sp two.sp >cat.sp &&
	{ recview in.sp && recview two.sp | grep -v "^#"; } >expect &&
	recview cat.sp >actual &&
	test_cmp expect actual &&
	recview -H cat.sp >prov &&
	test $(grep -c "^##pg=" prov) = 3
'

test_expect_success 'a concatenation by cat(1) reads as one stream' '
	cat in.sp two.sp | recview >actual &&
	test_cmp expect actual
'

test_expect_success '--check prints a one-line summary' '
	recview -c cat.sp >actual &&
	test_grep "^cat.sp: ok, reads, 1 blocks, 5 records, [0-9]* bytes$" actual &&
	recview -c -q cat.sp >actual &&
	test_must_fail test -s actual
'

test_expect_success 'many small blocks give the same records' '
	awk "BEGIN { for (i = 0; i < 3000; i++) printf \"@q%d\nACGTACGTAC\n+\nIIIIIIIIII\n\", i }" >many.fq &&
	recview -i -b 1k many.fq >small.sp &&
	recview -i many.fq >large.sp &&
	recview -c small.sp >sum &&
	test_grep "ok, reads, [0-9][0-9][0-9]* blocks, 3000 records" sum &&
	recview small.sp >a && recview large.sp >b && test_cmp a b &&
	recview --cat -b 64k small.sp >re.sp &&
	recview -c re.sp >sum2 && test_grep "ok, reads, 3 blocks, 3000 records" sum2
'

test_expect_success '-o writes to a file' '
	recview -i -o out.sp in.fq &&
	recview -o out.tsv out.sp &&
	recview in.sp >expect &&
	test_cmp expect out.tsv
'

test_expect_success '| head -1 ends quietly' '
	recview -i many.fq >m.sp &&
	{ recview m.sp 2>err; echo $? >rc; } | head -1 >first &&
	test_must_fail test -s err &&
	test "$(cat first)" = "$(printf "#id\tname\tcomment\tseq\tqual")" &&
	{ recview -i many.fq 2>err2; } | head -c 10 >/dev/null &&
	test_must_fail test -s err2
'

test_expect_success 'the byte example of seedpipe-rec(5) reads as documented' '
	sed -n "/^89 53 50 52 0d 0a 1a 0a  01/,/^9b 0f 68/p" "$SEEDPIPE_SRC/man/seedpipe-rec.5" >hex &&
	test $(wc -l <hex) = 11 &&
	cut -c1-50 hex | tr -d " \n" | python3 -c "import sys; sys.stdout.buffer.write(bytes.fromhex(sys.stdin.read()))" >ex.sp &&
	test $(wc -c <ex.sp) = 122 &&
	recview -c ex.sp >sum &&
	test_grep "^ex.sp: ok, reads, 1 blocks, 1 records, 122 bytes$" sum &&
	recview ex.sp >actual &&
	printf "#id\tname\tcomment\tseq\tqual\n0\tr\t*\tA\t*\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'an empty FASTA input makes an empty, valid stream' '
	recview -i </dev/null >empty.sp &&
	recview -c empty.sp >sum &&
	test_grep "ok, reads, 0 blocks, 0 records" sum
'

test_expect_success '--devices lists the OpenCL devices and exits 0' '
	recview --devices >dev &&
	test -s dev &&
	head -1 dev | grep "^#device	type	platform	name	"
'

test_expect_success '-h, --version and a bad option' '
	recview -h >help && test_grep "^Usage: recview" help &&
	recview --version >v && test_grep "^recview (seedpipe) [0-9]" v &&
	test_expect_code 2 recview --no-such-option 2>err &&
	test_grep "^recview: unrecognized option .--no-such-option.; try .recview --help.$" err &&
	test_expect_code 2 recview -c -i in.fq 2>err &&
	test_expect_code 2 recview -k nonsense in.sp 2>err &&
	test_grep "unknown stream kind" err &&
	test_expect_code 2 recview -i -b 3 in.fq 2>err &&
	test_grep "bad block size" err
'

test_done
