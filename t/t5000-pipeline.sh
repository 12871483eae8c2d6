#!/bin/bash
test_description='pipeline: seqidx, seedfilt | extend against the full-DP oracle (Rabema loci) on random genomes with repeats and planted reads'
. ./test-lib.sh

. "$TEST_DIR"/lib-extend.sh

test_expect_success SAMTOOLS 'setup: 60 bp reads with up to 3 edits (indels too), index' '
	gen 31 8000 300 60 60 3 1 &&
	seqidx -q -u 5 -l 8 -o ref.sx ref.fa
'

test_expect_success SAMTOOLS 'seedfilt -E 3 | extend -e 3: every locus of the oracle, once, at its best' '
	seedfilt -q -x ref.sx -e 1 -E 3 -v reads.fq 2>sens >c.sp &&
	seedfilt -x ref.sx -e 1 -E 3 -v reads.fq 2>&1 >/dev/null |
		test_grep "at most [3-9] edit operations yields a candidate" - &&
	extend -e 3 c.sp >o.sam 2>sum &&
	samtools quickcheck o.sam &&
	"$T"/ext_oracle ref.fa reads.fq 3 | sort >expect &&
	sam2lines o.sam >actual &&
	test_cmp expect actual &&
	test_grep "300 reads" sum &&
	samtools view -F 256 o.sam | cut -f1 >prim &&
	awk "NR % 4 == 1 { print substr(\$1, 2) }" reads.fq >names &&
	test_cmp names prim
'

test_expect_success SAMTOOLS 'seedfilt -e 1 | extend -e 3 --no-gaps: every diagonal of the oracle' '
	seedfilt -q -x ref.sx -e 1 reads.fq | extend -q -e 3 --no-gaps >g.sam &&
	samtools quickcheck g.sam &&
	"$T"/ext_oracle ref.fa reads.fq 3 -g | sort >expect &&
	sam2lines g.sam >actual &&
	test_cmp expect actual
'

test_expect_success SAMTOOLS 'whole pipeline in one line; the @PG chain names every stage' '
	seedfilt -q -x ref.sx -e 1 -E 3 reads.fq | extend -q -e 3 -O bam >o.bam &&
	samtools quickcheck o.bam &&
	samtools view -H o.bam | grep "^@PG" >pg &&
	test_grep "ID:seedfilt" pg && test_grep "ID:extend.*PP:seedfilt" pg &&
	samtools view o.bam >b.txt && samtools view o.sam >s.txt && test_cmp s.txt b.txt
'

test_expect_success SAMTOOLS 'setup: longer reads (90 bp), more edits' '
	mkdir long && (
		cd long &&
		gen 32 10000 200 90 90 5 1 &&
		seqidx -q -u 5 -l 8 -o ref.sx ref.fa
	)
'

test_expect_success SAMTOOLS 'seedfilt -E 5 | extend -e 5 on 90 bp reads equals the oracle' '
	(
		cd long &&
		seedfilt -x ref.sx -e 1 -E 5 -v reads.fq 2>sens >c.sp &&
		test_grep "at most [5-9] edit operations yields a candidate" sens &&
		extend -q -e 5 -t 2 c.sp >o.sam &&
		"$T"/ext_oracle ref.fa reads.fq 5 | sort >expect &&
		sam2lines o.sam >actual &&
		test_cmp expect actual
	)
'

test_expect_success OPENCL,SAMTOOLS 'the pipeline on the device (PoCL) gives the same SAM records' '
	seedfilt -q -d cpu -x ref.sx -e 1 -E 3 reads.fq | extend -q -d cpu -e 3 >d.sam &&
	samtools view d.sam >d.txt && samtools view o.sam >s.txt && test_cmp s.txt d.txt
'
test_done
