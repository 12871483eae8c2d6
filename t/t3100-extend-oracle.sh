#!/bin/bash
test_description='extend end to end on small random genomes with planted reads: the hits equal a full-DP oracle (Rabema loci), with and without gaps, threads, formats'
. ./test-lib.sh

. "$TEST_DIR"/lib-extend.sh

# every read once as primary or unmapped, in input order
primaries() {
	samtools view -F 256 "$1" | cut -f1 >prim &&
	awk 'NR % 4 == 1 { print substr($1, 2) }' reads.fq >names &&
	test_cmp names prim
}

test_expect_success SAMTOOLS 'setup: substitution reads, index, exhaustive candidates' '
	gen 11 6000 150 30 70 3 0 &&
	seqidx -q -u 5 -l 8 -o ref.sx ref.fa &&
	"$T"/extend_mkcands ref.sx reads.fq 25 >all.sp
'

for a in 0 1 3 5; do
	test_expect_success SAMTOOLS "--no-gaps -e $a: hits equal the oracle" '
		extend -q -e '$a' --no-gaps all.sp >g'$a'.sam &&
		samtools quickcheck g'$a'.sam &&
		"$T"/ext_oracle ref.fa reads.fq '$a' -g | sort >expect &&
		sam2lines g'$a'.sam >actual &&
		test_cmp expect actual &&
		primaries g'$a'.sam
	'
	test_expect_success SAMTOOLS "edit -e $a: hits equal the oracle" '
		extend -q -e '$a' all.sp >e'$a'.sam &&
		samtools quickcheck e'$a'.sam &&
		"$T"/ext_oracle ref.fa reads.fq '$a' | sort >expect &&
		sam2lines e'$a'.sam >actual &&
		test_cmp expect actual &&
		primaries e'$a'.sam
	'
done

test_expect_success SAMTOOLS 'the same SAM without the vector prefilter (SEEDPIPE_NO_SIMD: every window through the core)' '
	for a in 1 5 7; do
		SEEDPIPE_NO_SIMD=1 extend -q -e $a all.sp >plain$a.sam &&
		extend -q -e $a all.sp >simd$a.sam &&
		test_cmp plain$a.sam simd$a.sam || return 1
	done
'

test_expect_success SAMTOOLS 'secondary records store no sequence (SEQ and QUAL *), primary ones do' '
	test $(samtools view -c -f 256 e5.sam) -gt 0 &&
	samtools view -f 256 e5.sam | awk -F "\t" "\$10 != \"*\" || \$11 != \"*\"" >bad &&
	samtools view -F 260 e5.sam | awk -F "\t" "\$10 == \"*\" || \$11 == \"*\"" >>bad &&
	! test -s bad &&
	extend -q -e 5 -O bam -o e5.bam all.sp &&
	samtools view e5.bam >bam.txt &&
	samtools view e5.sam >sam.txt &&
	test_cmp sam.txt bam.txt
'

test_expect_success SAMTOOLS 'setup: indel reads' '
	mkdir ind && (
		cd ind &&
		gen 12 5000 150 25 90 4 1 &&
		seqidx -q -u 5 -l 8 -p 1500 -o ref.sx ref.fa &&
		"$T"/extend_mkcands ref.sx reads.fq 20 >all.sp
	)
'

for a in 2 4 7; do
	test_expect_success SAMTOOLS "indel reads, -e $a: loci equal the oracle" '
		(
			cd ind &&
			extend -q -e '$a' all.sp >e'$a'.sam &&
			samtools quickcheck e'$a'.sam &&
			"$T"/ext_oracle ref.fa reads.fq '$a' | sort >expect &&
			sam2lines e'$a'.sam >actual &&
			test_cmp expect actual &&
			primaries e'$a'.sam
		)
	'
done

test_expect_success SAMTOOLS 'the data is not trivial: gapped CIGARs, several loci per read, unmapped reads, N' '
	(
		cd ind &&
		samtools view e4.sam | awk -F"\t" "\$6 ~ /[ID]/" >gapped &&
		test $(wc -l <gapped) -ge 10 &&
		test $(samtools view -c -f 256 e4.sam) -ge 5 &&
		test $(samtools view -c -f 4 e4.sam) -ge 3 &&
		samtools view e7.sam | awk -F"\t" "\$10 ~ /N/ && !(int(\$2 / 4) % 2)" | grep . >/dev/null
	) &&
	test $(samtools view -c -f 256 g3.sam) -ge 5
'

test_expect_success SAMTOOLS 'reads of 200 to 2048 bases with indels: loci equal the oracle' '
	mkdir long && (
		cd long &&
		gen 13 9000 40 200 2048 7 1 &&
		seqidx -q -u 5 -l 8 -o ref.sx ref.fa &&
		"$T"/extend_mkcands ref.sx reads.fq 30 >all.sp &&
		extend -e 9 all.sp >e9.sam 2>err &&
		test_must_fail test_grep "longer than" err &&
		samtools quickcheck e9.sam &&
		"$T"/ext_oracle ref.fa reads.fq 9 | sort >expect &&
		sam2lines e9.sam >actual &&
		test_cmp expect actual &&
		test $(wc -l <actual) -ge 30 &&
		primaries e9.sam &&
		extend -q -e 4 --no-gaps all.sp >g4.sam &&
		"$T"/ext_oracle ref.fa reads.fq 4 -g | sort >expect &&
		sam2lines g4.sam >actual &&
		test_cmp expect actual
	)
'

test_expect_success SAMTOOLS 'threads, batch sizes and BAM give the same records' '
	(
		cd ind &&
		extend -q -e 4 -t 1 all.sp >t1.sam &&
		extend -q -e 4 -t 3 -B 1000 all.sp >t3.sam &&
		grep -v "^@PG" t1.sam >a && grep -v "^@PG" t3.sam >b && test_cmp a b &&
		extend -q -e 4 -t 2 -B 1 all.sp >b1.sam &&
		grep -v "^@PG" b1.sam >b && test_cmp a b &&
		extend -q -e 4 -t 8 -B 7 all.sp >b7.sam &&
		grep -v "^@PG" b7.sam >b && test_cmp a b &&
		extend -q -e 4 -O bam -o t.bam all.sp &&
		samtools quickcheck t.bam &&
		samtools view t.bam >bv && samtools view t1.sam >sv && test_cmp sv bv
	)
'

test_expect_success SAMTOOLS '--best and -k select from the sorted hits; secondary flags' '
	(
		cd ind &&
		extend -q -e 4 all.sp >all.sam &&
		extend -q -e 4 --best all.sp >best.sam &&
		extend -q -e 4 -k 1 all.sp >k1.sam &&
		extend -q -e 4 -k 2 all.sp >k2.sam &&
		samtools view -F 256 all.sam >p.all &&
		samtools view k1.sam >p.k1 && test_cmp p.all p.k1 &&
		samtools view -F 256 best.sam >p.best && test_cmp p.all p.best &&
		samtools view all.sam | awk -F"\t" "{ n[\$1]++; if (n[\$1] <= 2) print }" >e.k2 &&
		samtools view k2.sam >a.k2 && test_cmp e.k2 a.k2 &&
		samtools view -f 256 all.sam | awk -F"\t" "int(\$2 / 4) % 2 { bad = 1 } END { exit bad }" &&
		test $(samtools view -c -f 256 all.sam) -gt 0 &&
		samtools view best.sam | awk -F"\t" "
			{ for (i = 12; i <= NF; i++) if (\$i ~ /^NM:i:/) d = substr(\$i, 6) }
			!(\$1 in b) { b[\$1] = d } d != b[\$1] { bad = 1 } END { exit bad }"
	)
'

test_expect_success SAMTOOLS 'reverse-strand records: sequence reverse-complemented, qualities reversed' '
	(
		cd ind &&
		samtools view -F 260 all.sam | awk -F"\t" "int(\$2 / 16) % 2 { print \$1, \$10, \$11 }" >rev &&
		test -s rev &&
		awk "NR % 4 == 1 { n = substr(\$1, 2) } NR % 4 == 2 { s[n] = \$1 } NR % 4 == 0 { q[n] = \$1 }
		     END { while ((getline l < \"rev\") > 0) { split(l, f, \" \");
			r = \"\"; rq = \"\"; x = s[f[1]]; y = q[f[1]];
			for (i = length(x); i >= 1; i--) { c = substr(x, i, 1);
				r = r (c == \"A\" ? \"T\" : c == \"C\" ? \"G\" : c == \"G\" ? \"C\" : c == \"T\" ? \"A\" : \"N\");
				rq = rq substr(y, i, 1) }
			if (r != f[2] || rq != f[3]) { print \"bad \" f[1]; bad = 1 } }
			exit bad }" reads.fq
	)
'

test_expect_success SAMTOOLS 'MAPQ: unique hits 60, repeated best loci low' '
	(
		cd ind &&
		samtools view -F 260 all.sam | awk -F"\t" "{ print \$1, \$5 }" | sort >mq &&
		samtools view -F 4 all.sam | cut -f1 | sort | uniq -c | awk "{ print \$2, \$1 }" >cnt &&
		join mq cnt | awk "\$3 == 1 && \$2 != 60 { bad = 1 } END { exit bad }"
	)
'
test_done
