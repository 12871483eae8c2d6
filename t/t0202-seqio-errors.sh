#!/bin/bash
test_description='seqio: malformed input gives "TOOL: FILE:LINE: what" and exit 1'
. ./test-lib.sh

cat_() { "$SEEDPIPE_BUILD/t/seqio_cat" "$@"; }

# expect_error FILE 'message' : exit status 1 and exactly that message
expect_error() {
	test_expect_code 1 cat_ "$1" >out 2>err &&
	echo "seqio_cat: $2" >expect &&
	test_cmp expect err
}

test_expect_success 'missing file' '
	expect_error nosuch "cannot open '"'"'nosuch'"'"': No such file or directory"
'

test_expect_success 'a directory' '
	mkdir d && expect_error d "cannot read '"'"'d'"'"': Is a directory"
'

test_expect_success 'binary data (NUL byte)' '
	printf ">a\nAC\0GT\n" >bin && expect_error bin "bin:2: not FASTA or FASTQ (binary data)"
'

test_expect_success 'binary data (control byte)' '
	printf "\001\002\003" >ctl && expect_error ctl "ctl:1: not FASTA or FASTQ (binary data)"
'

test_expect_success 'text that is not FASTA or FASTQ' '
	printf "\n\nhello world\n" >txt &&
	expect_error txt "txt:3: not FASTA or FASTQ (a record must start with '"'"'>'"'"' or '"'"'@'"'"')"
'

test_expect_success 'quality length differs from sequence length' '
	printf "@r1\nACGT\n+\nIIII\n@r2\nACGT\n+\nIII\n" >q.fq &&
	expect_error q.fq "q.fq:8: quality length 3 differs from sequence length 4 in '"'"'r2'"'"'"
'

test_expect_success 'missing + line' '
	printf "@r1\nACGT\nIIII\n" >p.fq &&
	expect_error p.fq "p.fq:3: expected a '"'"'+'"'"' line after the sequence of '"'"'r1'"'"' (multi-line FASTQ is not supported)"
'

test_expect_success '+ line naming another record' '
	printf "@r1 x\nACGT\n+r2\nIIII\n" >n.fq &&
	expect_error n.fq "n.fq:3: the '"'"'+'"'"' line does not repeat the name of '"'"'r1'"'"'"
'

test_expect_success 'FASTQ record truncated after the header, the sequence, the + line' '
	printf "@r1\nACGT\n+\nIIII\n@r2\n" >t1.fq &&
	expect_error t1.fq "t1.fq:6: truncated FASTQ record '"'"'r2'"'"': no sequence line" &&
	printf "@r1\nACGT" >t2.fq &&
	expect_error t2.fq "t2.fq:3: truncated FASTQ record '"'"'r1'"'"': no '"'"'+'"'"' line" &&
	printf "@r1\nACGT\n+\n" >t3.fq &&
	expect_error t3.fq "t3.fq:4: truncated FASTQ record '"'"'r1'"'"': no quality line"
'

test_expect_success 'a FASTQ record not starting with @' '
	printf "@r1\nA\n+\nI\n>r2\nA\n" >h.fq &&
	expect_error h.fq "h.fq:5: expected '"'"'@'"'"' at the start of a FASTQ record"
'

test_expect_success 'digit and star in a FASTA sequence' '
	printf ">s1\nACGT\n>s2\nAC1GT\n" >d.fa &&
	expect_error d.fa "d.fa:4: invalid character '"'"'1'"'"' in the sequence of '"'"'s2'"'"'" &&
	printf ">s1\nAC*\n" >s.fa &&
	expect_error s.fa "s.fa:2: invalid character '"'"'*'"'"' in the sequence of '"'"'s1'"'"'"
'

test_expect_success 'blank inside a FASTQ sequence, bad quality byte' '
	printf "@r1\nAC GT\n+\nIIIII\n" >b.fq &&
	expect_error b.fq "b.fq:2: invalid character 0x20 in the sequence of '"'"'r1'"'"'" &&
	printf "@r1\nACGT\n+\nII I\n" >bq.fq &&
	expect_error bq.fq "bq.fq:4: invalid character 0x20 in the qualities of '"'"'r1'"'"'"
'

test_expect_success GZIP 'truncated gzip: records before the damage, then the error' '
	awk "BEGIN { for (i = 0; i < 20000; i++) printf \"@r%d\nACGTACGTAC\n+\nIIIIIIIIII\n\", i }" >big.fq &&
	gzip -c big.fq >big.fq.gz &&
	head -c 20000 big.fq.gz >cut.gz &&
	test_expect_code 1 cat_ cut.gz >out 2>err &&
	test_grep "^seqio_cat: cut.gz:[0-9]*: unexpected end of gzip data (truncated file?)$" err &&
	test $(wc -l <out) -gt 100
'

test_expect_success GZIP 'truncated gzip through a pipe' '
	cat cut.gz | test_expect_code 1 cat_ - >out 2>err &&
	test_grep "^seqio_cat: -:[0-9]*: unexpected end of gzip data" err
'

test_expect_success GZIP 'corrupt gzip data (bad CRC): all records, then the error' '
	cp big.fq.gz bad.gz &&
	size=$(wc -c <bad.gz) &&
	printf "\377\377\377\377" | dd of=bad.gz bs=1 seek=$((size - 8)) conv=notrunc 2>/dev/null &&
	test_expect_code 1 cat_ bad.gz >out 2>err &&
	echo "seqio_cat: bad.gz:80001: corrupt gzip data (zlib: incorrect data check)" >expect &&
	test_cmp expect err &&
	test $(wc -l <out) = 20000
'

test_expect_success GZIP 'corrupt gzip data (bad header)' '
	printf "\037\213\010\000garbagegarbage" >hdr.gz &&
	test_expect_code 1 cat_ hdr.gz >out 2>err &&
	test_grep "^seqio_cat: hdr.gz:1: corrupt gzip data (zlib: " err
'

test_expect_success GZIP 'trailing garbage after the gzip data' '
	printf ">a\nAC\n" | gzip -c >g.gz && printf "junk" >>g.gz &&
	test_expect_code 1 cat_ g.gz >out 2>err &&
	test_grep "^seqio_cat: g.gz:[0-9]*: trailing garbage after gzip data$" err
'

test_expect_success GZIP 'a gzip file that holds binary data' '
	printf "\0\0\0\0" | gzip -c >z.gz &&
	expect_error z.gz "z.gz:1: not FASTA or FASTQ (binary data)"
'

test_done
