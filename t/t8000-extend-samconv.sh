#!/bin/bash
test_description='extend SAM conventions: -R read group, -C comments, /1 /2 dropped, --secondary tag|record, MAPQ 0 for equally good loci, the same in BAM'
. ./test-lib.sh

. "$TEST_DIR"/lib-extend.sh

test_expect_success SAMTOOLS 'setup: reads with comments and /1 /2 names, candidates' '
	gen 81 6000 200 30 60 3 1 &&
	awk "NR % 4 == 1 { i = (NR - 1) / 4; s = \$1;
		if (i % 4 == 0) s = s \"/1 BC:Z:ACGT\tXY:i:-7\";
		else if (i % 4 == 1) s = s \"/2 1:N:0:ATCACG\";
		else if (i % 4 == 2) s = s \" NM:i:3\";
		print s; next } { print }" reads.fq >c.fq &&
	seqidx -q -u 5 -l 8 -o ref.sx ref.fa &&
	"$T"/extend_mkcands ref.sx c.fq 20 >all.sp &&
	grep -c "/1 BC" c.fq >n1 && test $(cat n1) -ge 40
'

test_expect_success SAMTOOLS '-R: the @RG line in the header, RG:Z on every record; bam the same' '
	extend -q -e 3 -R "@RG\tID:run1\tSM:s1\tPL:ILLUMINA" all.sp >rg.sam &&
	samtools quickcheck rg.sam &&
	samtools view -H rg.sam | grep "^@RG" >rgl &&
	printf "@RG\tID:run1\tSM:s1\tPL:ILLUMINA\n" >expect && test_cmp expect rgl &&
	samtools view -H rg.sam | awk "/^@SQ/ { sq = NR } /^@RG/ { rg = NR } /^@PG/ && !pg { pg = NR }
		END { exit !(sq < rg && rg < pg) }" &&
	samtools view rg.sam | grep -v -c "	RG:Z:run1$" >n; test $(cat n) = 0 &&
	test $(samtools view -c -r run1 rg.sam) = $(samtools view -c rg.sam) &&
	extend -q -e 3 -R "@RG	ID:run1	SM:s1	PL:ILLUMINA" -O bam -o rg.bam all.sp &&
	samtools view -h rg.bam >b.txt && samtools view -h rg.sam >s.txt &&
	grep -v "^@PG" b.txt >b && grep -v "^@PG" s.txt >s && test_cmp s b
'

for bad in "ID:x" "@RG\tSM:x" "@RG" "@CO\tID:x" "@RG\tID:"; do
	test_expect_success "-R '$bad' is a usage error (exit 2, one line)" '
		test_expect_code 2 extend -q -R "$bad" all.sp >out 2>err &&
		test $(wc -l <err) = 1 && test_grep "^extend: option -R: " err &&
		! test -s out
	'
done

test_expect_success SAMTOOLS '/1 and /2 are dropped from names, with or without -C' '
	samtools view rg.sam | cut -f1 | grep -c "/[12]$" >n; test $(cat n) = 0 &&
	samtools view rg.sam | cut -f1 | sort -u >names &&
	awk "NR % 4 == 1 { print substr(\$1, 2) }" c.fq | sed "s,/[12]\$,," | sort -u >expect &&
	test_cmp expect names
'

test_expect_success SAMTOOLS '-C: SAM tags appended as they are, other comments as XC:Z; valid SAM and BAM' '
	extend -q -e 3 -C all.sp >c.sam &&
	samtools quickcheck c.sam &&
	samtools view -b -o c1.bam c.sam &&
	samtools view c.sam | awk -F"\t" "
		{ i = substr(\$1, 2) % 4; t = \$0 }
		i == 0 && t !~ /\tBC:Z:ACGT\tXY:i:-7$/ { bad++ }
		i == 1 && t !~ /\tXC:Z:1:N:0:ATCACG$/ { bad++ }
		i == 2 && t !~ /\tXC:Z:NM:i:3$/ { bad++ }
		i == 3 && t ~ /\tX[CY]:/ { bad++ }
		END { exit bad > 0 }" &&
	extend -q -e 3 -C -O bam -o c.bam all.sp &&
	samtools view c.bam >b && samtools view c.sam >s && test_cmp s b &&
	extend -q -e 3 all.sp >noc.sam &&
	samtools view noc.sam | grep -c "XC:Z\|BC:Z" >n; test $(cat n) = 0
'

test_expect_success SAMTOOLS 'MAPQ 0 for a read with several loci at its least distance, else above 0' '
	samtools view rg.sam | awk -F"\t" "
		!and(\$2, 4) { for (i = 12; i <= NF; i++) if (\$i ~ /^NM:i:/) d = substr(\$i, 6) + 0
		  if (!(\$1 in best) || d < best[\$1]) { best[\$1] = d; n[\$1] = 0 }
		  if (d == best[\$1]) n[\$1]++
		  if (!and(\$2, 256)) q[\$1] = \$5 }
		END { for (r in q) { if (n[r] > 1) { rep++; if (q[r] != 0) bad++ }
		                     else { uni++; if (q[r] == 0) bad++ } }
		      print rep, uni, bad + 0 > \"mq\"; exit bad > 0 || rep < 3 || uni < 50 }" &&
	cat mq
'

test_expect_success SAMTOOLS '--secondary tag: no secondary records, XA lists what record mode writes as secondary records' '
	extend -q -e 3 --secondary tag all.sp >xa.sam &&
	samtools quickcheck xa.sam &&
	test $(samtools view -c -f 256 xa.sam) = 0 &&
	test $(samtools view -c -f 256 rg.sam) -ge 20 &&
	samtools view -f 256 rg.sam | awk -F"\t" "{
		for (i = 12; i <= NF; i++) if (\$i ~ /^NM:i:/) d = substr(\$i, 6)
		print \$1 \"\t\" \$3 \",\" (and(\$2, 16) ? \"-\" : \"+\") \$4 \",\" \$6 \",\" d \";\" }" |
		awk -F"\t" "{ x[\$1] = x[\$1] \$2 } END { for (r in x) print r \"\t\" x[r] }" | sort >expect &&
	samtools view xa.sam | awk -F"\t" "{ for (i = 12; i <= NF; i++) if (\$i ~ /^XA:Z:/) print \$1 \"\t\" substr(\$i, 6) }" |
		sort >actual &&
	test_cmp expect actual &&
	samtools view -F 256 rg.sam | cut -f1-11 >p.rec &&
	samtools view xa.sam | cut -f1-11 >p.tag && test_cmp p.rec p.tag &&
	extend -q -e 3 --secondary tag -O bam -o xa.bam all.sp &&
	samtools view xa.bam >b && samtools view xa.sam >s && test_cmp s b &&
	extend -q -e 3 --secondary record all.sp >rec.sam &&
	samtools view rec.sam >a && samtools view noc.sam >b && test_cmp b a
'

test_expect_success '--secondary with another mode is a usage error' '
	test_expect_code 2 extend --secondary xa all.sp 2>err &&
	test_grep "unknown mode" err
'

test_done
