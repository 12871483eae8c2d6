#!/bin/bash
test_description='seqio: reading FASTA/FASTQ files, gzip and pipes (seqio_cat driver)'
. ./test-lib.sh

cat_() { "$SEEDPIPE_BUILD/t/seqio_cat" "$@"; }

test_expect_success 'FASTA: empty record, case, IUPAC, comments, CRLF' '
	printf ">a\n>b  some  comment \r\nacgtRYN\r\nAC\n>c\tx\n\nG T\n" >in.fa &&
	printf "a\t\t\t\nb\tsome  comment\tACGTNNNAC\t\nc\tx\tGT\t\n# format=fasta records=3 mapped=2\n" >expect &&
	cat_ -s in.fa >actual &&
	test_cmp expect actual
'

test_expect_success 'FASTQ: +line repeating the name, empty read, no final newline' '
	printf "@r1 c1\nACGT\n+r1 c1\nIIII\n\n@r2\n\n+\n\n@r3\nn\n+r3\n#" >in.fq &&
	printf "r1\tc1\tACGT\tIIII\nr2\t\t\t\nr3\t\tN\t#\n# format=fastq records=3 mapped=0\n" >expect &&
	cat_ -s in.fq >actual &&
	test_cmp expect actual
'

test_expect_success GZIP 'gzip, concatenated members, stdin pipe' '
	gzip -c in.fa >a.gz && gzip -1 -c in.fa >b.gz && cat a.gz b.gz >ab.gz &&
	cat_ in.fa in.fa >expect &&
	cat_ ab.gz >actual && test_cmp expect actual &&
	cat ab.gz | cat_ - >actual && test_cmp expect actual &&
	cat in.fa in.fa | cat_ - >actual && test_cmp expect actual
'

test_expect_success GZIP 'NUL padding after the last gzip member is ignored' '
	gzip -c in.fa >p.gz && head -c 100 /dev/zero >>p.gz &&
	cat_ in.fa >expect && cat_ p.gz >actual && test_cmp expect actual
'

test_expect_success 'empty input and blank lines only' '
	: >empty && printf "\n \n\r\n" >blank &&
	cat_ -s empty blank - </dev/null >actual &&
	printf "# format=empty records=0 mapped=0\n# format=empty records=0 mapped=0\n# format=empty records=0 mapped=0\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'the format is sniffed, not taken from the file name' '
	cp in.fq reads.fa && cat_ in.fq >expect && cat_ reads.fa >actual && test_cmp expect actual
'

test_expect_success '-A prints FASTA like seqtk seq -A' '
	printf ">b some comment\nACGTNNNAC\n" >expect &&
	printf ">b some comment\nacgtRYN\nAC\n" | cat_ -A - >actual &&
	test_cmp expect actual
'

test_lazy_prereq SEQTK 'command -v seqtk'
test_expect_success SEQTK 'same FASTA as seqtk seq -AU on clean input' '
	awk "BEGIN { srand(7); for (i = 0; i < 2000; i++) { s = \"\"; q = \"\";
		n = int(rand() * 150); for (j = 0; j < n; j++) { s = s substr(\"ACGTacgt\", int(rand() * 8) + 1, 1);
		q = q sprintf(\"%c\", 33 + int(rand() * 40)) }
		printf \"@read%d c%d\n%s\n+\n%s\n\", i, i, s, q } }" >r.fq &&
	seqtk seq -AU r.fq >expect &&
	cat_ -A r.fq >actual &&
	test_cmp expect actual
'

test_done
