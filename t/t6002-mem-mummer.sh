#!/bin/bash
test_description='seedfilt -m mem -O mummer prints what mummer -maxmatch -b -c prints (when mummer is installed)'
. ./test-lib.sh

MEM_ORACLE=$SEEDPIPE_BUILD/t/mem_oracle

test_lazy_prereq MUMMER 'command -v mummer >/dev/null'

test_expect_success MUMMER 'setup' '
	"$MEM_ORACLE" -G 21 3 20000 >ref.fa &&
	"$MEM_ORACLE" -R 22 400 100 ref.fa >reads.fa &&
	"$MEM_ORACLE" -G 23 1 30000 >one.fa &&
	"$MEM_ORACLE" -R 24 300 150 one.fa >reads1.fa &&
	"$MEM_ORACLE" -G 25 2 3000 AC >rep.fa &&
	"$MEM_ORACLE" -R 26 60 80 rep.fa >readsr.fa &&
	seqidx -q -m fm -o ref.sx ref.fa &&
	seqidx -q -m fm -o one.sx one.fa &&
	seqidx -q -m fm -u 4 -l 4 -o rep.sx rep.fa
'

# same NAME INDEX REF READS MODE L
same() {
	test_expect_success MUMMER "$1" '
		mummer -'"$5"' -b -c -l '"$6"' '"$3"' '"$4"' >want 2>/dev/null &&
		seedfilt -q -x '"$2"' -m mem -'"$5"' -L '"$6"' -O mummer '"$4"' >got &&
		test_cmp want got &&
		test $(grep -c -v "^>" got) -gt 20
	'
}

for L in 20 30 50; do
	same "three sequences, -maxmatch -l $L" ref.sx ref.fa reads.fa maxmatch $L
	same "one sequence, -maxmatch -l $L" one.sx one.fa reads1.fa maxmatch $L
done
same 'three sequences, -mum -l 20' ref.sx ref.fa reads.fa mum 20
same 'three sequences, -mumreference -l 20' ref.sx ref.fa reads.fa mumreference 20
same 'repetitive, -maxmatch -l 8' rep.sx rep.fa readsr.fa maxmatch 8
same 'repetitive, -mum -l 8' rep.sx rep.fa readsr.fa mum 8
same 'repetitive, -mumreference -l 8' rep.sx rep.fa readsr.fa mumreference 8

test_expect_success MUMMER 'the command of the documentation, word for word' '
	mummer -maxmatch -l 20 -b -c ref.fa reads.fa >want 2>/dev/null &&
	seedfilt -x ref.sx -m mem -L 20 -O mummer reads.fa >mems.txt 2>/dev/null &&
	test_cmp want mems.txt &&
	test $(grep -c -v "^>" mems.txt) -gt 300
'

test_done
