#!/bin/bash
test_description='extend paired-end SAM: flags 0x1 0x2 0x8 0x20 0x40 0x80, RNEXT, PNEXT, TLEN and MC that samtools fixmate leaves as they are; flagstat, sort, index, markdup accept it; MAPQ per pair; --secondary tag; BAM, threads and batch sizes give the same records'
. ./test-lib.sh

. "$TEST_DIR"/lib-extend.sh
. "$TEST_DIR"/lib-pair.sh

# mate fields of every record: NAME FLAG RNAME POS RNEXT PNEXT TLEN MC
mates() {
	samtools view "$1" | awk -F'\t' '{ mc = "-"
		for (i = 12; i <= NF; i++) if ($i ~ /^MC:Z:/) mc = $i
		print $1, $2, $3, $4, $7, $8, $9, mc }'
}

test_expect_success SAMTOOLS 'setup: pairs with repeats, unmappable mates and odd inserts' '
	gen_pairs 41 12000 400 60 3 1 300 30 &&
	seqidx -q -u 5 -l 8 -o ref.sx ref.fa &&
	seedfilt -q -x ref.sx -E 3 r1.fq r2.fq >c.sp &&
	extend c.sp >p.sam 2>err &&
	samtools quickcheck p.sam &&
	sed -n "s/^extend: \([0-9]*\) pairs, \([0-9]*\) with a concordant pair (\([0-9]*\) concordant.*/\1 \2 \3/p" err >counts &&
	read np nconc ncp <counts && test $np = 400 && test $nconc -ge 300 && test $ncp -gt $nconc
'

test_expect_success SAMTOOLS 'flags: every record paired, mate 1 or mate 2; primary records one per mate, in pairs' '
	samtools view p.sam | awk -F"\t" "!and(\$2, 1) || and(\$2, 64) == and(\$2, 128) / 2 { bad++ } END { exit bad > 0 }" &&
	test $(samtools view -c -F 256 -f 64 p.sam) = 400 &&
	test $(samtools view -c -F 256 -f 128 p.sam) = 400 &&
	samtools view -F 256 p.sam | cut -f1 | uniq -c | awk "\$1 != 2 { bad++ } END { exit bad > 0 }"
'

test_expect_success SAMTOOLS 'samtools fixmate finds nothing to fix: every record as ours (flags, mate fields, TLEN, MQ and MC)' '
	samtools fixmate -O sam p.sam fm.sam &&
	samtools view p.sam >a && samtools view fm.sam >b && test_cmp a b &&
	samtools view -F 4 -f 1 p.sam | grep -c "	MQ:i:[0-9]*	MC:Z:[^	]*$" >n && test $(cat n) -gt 400 &&
	samtools view -f 8 p.sam | grep . >/dev/null &&
	samtools view -f 4 -F 8 p.sam | grep . >/dev/null &&
	samtools view -f 32 p.sam | grep . >/dev/null
'

test_expect_success SAMTOOLS 'the test can fail: a wrong TLEN is fixed by fixmate' '
	samtools view -h p.sam | awk -F"\t" -v OFS="\t" "/^@/ { print; next } NR % 7 == 0 && \$9 != 0 { \$9 = \$9 + 1 } { print }" >w.sam &&
	samtools fixmate -O sam w.sam wf.sam &&
	mates w.sam >a && mates wf.sam >b && ! test_cmp a b >/dev/null
'

test_expect_success SAMTOOLS 'flagstat: properly paired = 2 x pairs with a concordant pair; read1 = read2 = pairs' '
	read np nconc ncp <counts &&
	samtools flagstat p.sam >fs &&
	grep "^$((2 * nconc)) + 0 properly paired" fs &&
	grep "^$np + 0 read1" fs && grep "^$np + 0 read2" fs &&
	grep "^$((2 * np)) + 0 paired in sequencing" fs &&
	test $(samtools view -c -f 2 -F 256 p.sam) = $((2 * nconc)) &&
	test $(samtools view -c -f 66 p.sam) = $ncp
'

test_expect_success SAMTOOLS 'every record with flag 2 is a FR pair within the insert size, its mate record there' '
	lo=$(sed -n "s/.*insert size \([0-9]*\)\.\.\([0-9]*\) .*/\1/p" err) &&
	hi=$(sed -n "s/.*insert size \([0-9]*\)\.\.\([0-9]*\) .*/\2/p" err) &&
	samtools view -f 2 p.sam | awk -F"\t" -v lo=$lo -v hi=$hi "
		\$7 != \"=\" || and(\$2, 16) == and(\$2, 32) / 2 { bad++ }
		{ t = \$9 < 0 ? -\$9 : \$9; if (t < lo || t > hi) bad++
		  k = \$1 SUBSEP and(\$2, 64) SUBSEP \$4 SUBSEP \$8; seen[k] = 1
		  want[\$1 SUBSEP (and(\$2, 64) ? 0 : 64) SUBSEP \$8 SUBSEP \$4] = 1 }
		END { for (k in want) if (!(k in seen)) bad++; exit bad > 0 }"
'

test_expect_success SAMTOOLS 'sort, index and markdup accept it' '
	samtools sort -o s.bam p.sam &&
	samtools index s.bam &&
	samtools quickcheck s.bam &&
	samtools idxstats s.bam >/dev/null &&
	samtools sort -n p.sam | samtools fixmate -m - - | samtools sort -o fm.bam - &&
	samtools markdup fm.bam md.bam 2>mderr &&
	samtools quickcheck md.bam &&
	test $(samtools view -c md.bam) = $(samtools view -c p.sam)
'

test_expect_success SAMTOOLS 'MAPQ per pair: 0 when the best pairs put the mate at two places, else above 0' '
	samtools view -f 2 p.sam | awk -F"\t" "{
		for (i = 12; i <= NF; i++) if (\$i ~ /^NM:i:/) d = substr(\$i, 6) + 0
		m = and(\$2, 64) ? 1 : 2
		nm[\$1, m, \$4, \$8] = d
		if (!and(\$2, 256)) q[\$1, m] = \$5
		if (m == 1) pr[\$1, \$4, \$8] = 1 }
		END {
		for (k in pr) { split(k, f, SUBSEP); s = nm[f[1], 1, f[2], f[3]] + nm[f[1], 2, f[3], f[2]]
			if (!(f[1] in best) || s < best[f[1]]) best[f[1]] = s; sum[k] = s }
		for (k in pr) { split(k, f, SUBSEP); if (sum[k] != best[f[1]]) continue
			if (!((f[1], 1, f[2]) in l1)) { l1[f[1], 1, f[2]] = 1; n1[f[1]]++ }
			if (!((f[1], 2, f[3]) in l1)) { l1[f[1], 2, f[3]] = 1; n2[f[1]]++ } }
		for (r in best) { if (n1[r] > 1) { rep++; if (q[r, 1] != 0) bad++ } else { uni++; if (q[r, 1] == 0) bad++ }
		                  if (n2[r] > 1) { if (q[r, 2] != 0) bad++ } else if (q[r, 2] == 0) bad++ }
		print rep + 0, uni + 0, bad + 0 >\"mq\"; exit bad > 0 || rep < 2 || uni < 100 }"
'

test_expect_success SAMTOOLS '--secondary tag: the primary records of record mode, every other hit of a mate in its XA' '
	extend -q --secondary tag c.sp >t.sam &&
	test $(samtools view -c -f 256 t.sam) = 0 &&
	samtools view -F 256 p.sam | cut -f1-11 >a && samtools view t.sam | cut -f1-11 >b && test_cmp a b &&
	samtools view p.sam | awk -F"\t" "{ k = \$1 \"/\" (and(\$2, 64) ? 1 : 2) }
		!and(\$2, 256) { prim[k] = \$3 \",\" \$4 \",\" and(\$2, 16); next }
		!and(\$2, 4) { x = \$3 \",\" \$4 \",\" and(\$2, 16); if (x != prim[k] && !((k, x) in s)) { s[k, x] = 1; print k, x } }" | sort >expect &&
	samtools view t.sam | awk -F"\t" "{ k = \$1 \"/\" (and(\$2, 64) ? 1 : 2)
		for (i = 12; i <= NF; i++) if (\$i ~ /^XA:Z:/) { n = split(substr(\$i, 6), e, \";\")
			for (j = 1; j < n; j++) { split(e[j], f, \",\"); print k, f[1] \",\" substr(f[2], 2) \",\" (substr(f[2], 1, 1) == \"-\" ? 16 : 0) } } }" | sort >actual &&
	test -s expect && test_cmp expect actual &&
	samtools fixmate -O sam t.sam tf.sam && samtools view t.sam >a && samtools view tf.sam >b &&
	test_cmp a b
'

test_expect_success SAMTOOLS 'BAM, threads and batch sizes: the same records' '
	samtools view p.sam >ref.txt &&
	extend -q -O bam -o p.bam c.sp && samtools view p.bam >b && test_cmp ref.txt b &&
	extend -q -t 1 c.sp | samtools view >b && test_cmp ref.txt b &&
	extend -q -t 3 -B 7 c.sp | samtools view >b && test_cmp ref.txt b &&
	extend -q -t 2 -B 1 c.sp | samtools view >b && test_cmp ref.txt b
'

test_expect_success OPENCL,SAMTOOLS 'the device (PoCL) gives the same records as the native code' '
	extend -q -d cpu c.sp >ocl.sam &&
	samtools view ocl.sam >b && test_cmp ref.txt b
'

test_expect_success SAMTOOLS '-R and -C on pairs: RG on every record, names without /1 /2, fixmate finds nothing to fix' '
	extend -q -R "@RG\tID:g1\tSM:x" -C c.sp >rg.sam &&
	test $(samtools view -c -r g1 rg.sam) = $(samtools view -c rg.sam) &&
	samtools view rg.sam | cut -f1 | grep "/" >slash; ! test -s slash &&
	samtools fixmate -O sam rg.sam rgf.sam && samtools view rg.sam >a && samtools view rgf.sam >b &&
	test_cmp a b
'

test_expect_success SAMTOOLS '--best and -k 1 choose among the concordant pairs' '
	extend -q -k 1 c.sp >k1.sam &&
	test $(samtools view -c -f 258 k1.sam) = 0 &&
	samtools view -F 256 k1.sam >a && samtools view -F 256 p.sam >b && test_cmp b a &&
	extend -q --best c.sp >b.sam &&
	samtools quickcheck b.sam
'

test_done
