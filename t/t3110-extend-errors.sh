#!/bin/bash
test_description='extend: wrong input, truncated streams, index mismatch, limits, | head, hits streams'
. ./test-lib.sh

T=$SEEDPIPE_BUILD/t

test_expect_success 'setup: two references, reads, candidates' '
	awk "BEGIN { srand(5); printf \">a\n\"; for (i = 0; i < 3000; i++) printf \"%s\", substr(\"ACGT\", int(rand() * 4) + 1, 1); printf \"\n\" }" >ref.fa &&
	awk "BEGIN { srand(6); printf \">b\n\"; for (i = 0; i < 9000; i++) printf \"%s\", substr(\"ACGT\", int(rand() * 4) + 1, 1); printf \"\n\" }" >big.fa &&
	awk "NR == 2 { for (i = 0; i < 40; i++) printf \"@q%d\n%s\n+\n%s\n\", i, substr(\$0, 50 * i + 1, 45), substr(\"IIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIII\", 1, 45) }" ref.fa >reads.fq &&
	seqidx -q -u 5 -l 8 -o ref.sx ref.fa &&
	seqidx -q -u 5 -l 8 -o big.sx big.fa &&
	"$T"/extend_mkcands ref.sx reads.fq 30 >c.sp &&
	extend -q c.sp >ok.sam &&
	test $(grep -v "^@" ok.sam | wc -l) = 40
'

test_expect_success 'a reads stream instead of candidates: did you forget seedfilt?' '
	recview -i reads.fq >reads.sp &&
	test_expect_code 1 extend reads.sp 2>err &&
	test_grep "expected candidates, got reads: did you forget seedfilt?" err
'

test_expect_success 'FASTA instead of a stream' '
	test_expect_code 1 extend <ref.fa 2>err &&
	test_grep "not a seedpipe stream" err
'

test_expect_success 'a hits stream (extend twice)' '
	extend -q -O rec c.sp >h.sp &&
	test_expect_code 1 extend h.sp 2>err &&
	test_grep "expected candidates, got hits" err
'

test_expect_success 'a truncated stream (the upstream tool died)' '
	size=$(wc -c <c.sp) &&
	head -c $((size - 100)) c.sp >cut.sp &&
	test_expect_code 1 extend cut.sp >out 2>err &&
	test_grep "truncated" err &&
	test_grep "upstream" err
'

test_expect_success 'a damaged block' '
	cp c.sp bad.sp &&
	printf "ZZZZ" | dd of=bad.sp bs=1 seek=500 conv=notrunc 2>/dev/null &&
	test_expect_code 1 extend bad.sp >out 2>err &&
	test_grep -i "checksum" err
'

test_expect_success '-x with another index: error names both fingerprints' '
	fa=$(seqidx --info ref.sx | awk "\$1 == \"fingerprint\" { print \$2 }") &&
	fb=$(seqidx --info big.sx | awk "\$1 == \"fingerprint\" { print \$2 }") &&
	test -n "$fa" && test -n "$fb" &&
	test_expect_code 1 extend -x big.sx c.sp >out 2>err &&
	test_grep "$fa" err && test_grep "$fb" err
'

test_expect_success 'the stream names an index whose fingerprint differs' '
	"$T"/extend_mkcands ref.sx reads.fq 30 -f 0123456789abcdef >fp.sp &&
	test_expect_code 1 extend fp.sp >out 2>err &&
	test_grep "0123456789abcdef" err &&
	test_grep "fingerprint" err
'

test_expect_success 'the stream names no index: -x is needed, and enough' '
	"$T"/extend_mkcands ref.sx reads.fq 30 -z >z.sp &&
	test_expect_code 1 extend z.sp >out 2>err &&
	test_grep "give -x" err &&
	test_expect_code 1 extend -x ref.sx z.sp >out 2>err &&
	test_grep "no index fingerprint" err
'

test_expect_success 'the index named by the stream is missing' '
	"$T"/extend_mkcands ref.sx reads.fq 30 -n gone.sx >gone.sp &&
	test_expect_code 1 extend gone.sp >out 2>err &&
	test_grep "gone.sx" err &&
	extend -q -x ref.sx gone.sp >x.sam &&
	grep -v "^@PG" ok.sam >a && grep -v "^@PG" x.sam >b && test_cmp a b
'

# byte offset of the middle of section $2 of index $1 (sections in file order:
# a 128-byte file header, then a 64-byte header and the payload padded to 64 each)
sec_mid() {
	seqidx --info "$1" | awk -v n="$2" -v o=128 '$1 == "section" {
		if ($2 == n) { print o + 64 + int($4 / 2); exit }
		o += 64 + int(($4 + 63) / 64) * 64 }'
}

# copy index $1 to $3 with one byte of section $2 changed
damage() {
	cp "$1" "$3" &&
	off=$(sec_mid "$1" "$2") && test -n "$off" &&
	printf '\377' | dd of="$3" bs=1 seek="$off" conv=notrunc 2>/dev/null
}

test_expect_success 'the index sections extend reads are checked, the others not read' '
	damage ref.sx ref.pack dp.sx &&
	test_expect_code 1 extend -x dp.sx c.sp >out 2>err &&
	test_grep "index .dp.sx.: checksum mismatch in section .ref.pack." err &&
	damage ref.sx seq.names dn.sx &&
	test_expect_code 1 extend -x dn.sx c.sp >out 2>err &&
	test_grep "checksum mismatch in section .seq.names." err &&
	damage ref.sx blk.rank db.sx &&
	test_must_fail seqidx --verify db.sx 2>/dev/null >/dev/null &&
	extend -q -x db.sx c.sp >db.sam &&
	grep -v "^@PG" ok.sam >a && grep -v "^@PG" db.sam >b && test_cmp a b
'

test_expect_success 'reads of 2048 bases are mapped; longer ones are unmapped, with a warning -q does not hide' '
	awk "NR == 2 { q = substr(\$0, 101, 2100); gsub(/./, \"I\", q);
		printf \"@long\n%s\n+\n%s\n@ok\n%s\n+\n%s\n@mid\n%s\n+\n%s\n\", substr(\$0, 101, 2100), q,
			substr(\$0, 3001, 2048), substr(q, 1, 2048), substr(\$0, 6001, 1500), substr(q, 1, 1500) }" big.fa >long.fq &&
	"$T"/extend_mkcands big.sx long.fq 30 >long.sp &&
	extend long.sp >long.sam 2>err &&
	test_grep "extend: warning: 1 reads longer than 2048 bases were left unmapped" err &&
	grep "^long	4	\*" long.sam &&
	grep "^ok	0	b	3001	60	2048M	" long.sam &&
	grep "^mid	0	b	6001	60	1500M	" long.sam &&
	extend -q long.sp >long.sam 2>err &&
	test_grep "extend: warning: 1 reads longer than 2048 bases were left unmapped" err
'

test_expect_success 'candidates outside the index' '
	fa=$(seqidx --info ref.sx | awk "\$1 == \"fingerprint\" { print \$2 }") &&
	"$T"/extend_mkcands big.sx reads.fq 30 -n ref.sx -f $fa >out.sp &&
	test_expect_code 1 extend out.sp >out 2>err &&
	test_grep "outside the index" err
'

test_expect_success '-e above the band: exit 1 with the limit' '
	test_expect_code 2 extend -e 16 c.sp >out 2>err &&
	test_grep "^extend: option -e: .16. is not an integer in 0..15; try .extend --help.$" err &&
	extend -q -e 15 c.sp >out
'

test_expect_success 'usage errors exit 2' '
	test_expect_code 2 extend -O cram c.sp 2>err &&
	test_grep "unknown format" err &&
	test_expect_code 2 extend -k 0 c.sp 2>err &&
	test_expect_code 2 extend -e x c.sp 2>err &&
	test_expect_code 2 extend c.sp c.sp 2>err
'

test_expect_success '| head ends quietly' '
	for i in 1 2 3 4 5 6 7 8; do cat reads.fq; done | awk "NR % 4 == 1 { \$0 = \$0 \"_\" NR } { print }" >many.fq &&
	for i in 1 2 3 4 5 6 7 8 9 10; do cat many.fq; done >more.fq &&
	"$T"/extend_mkcands ref.sx more.fq 30 >m.sp &&
	{ extend m.sp 2>err; echo $? >rc; } | head -2 >/dev/null &&
	case $(cat rc) in 0|141) ;; *) false ;; esac &&
	test ! -s err
'

# A truncated input (the upstream tool died) must not leave an output that
# looks complete: SAM ends with a line that is no SAM record and names the
# error, BAM without its end-of-file marker block, a hits stream without its
# end block; besides the message and exit 1.
test_expect_success 'setup: a stream cut in the middle (batches were written before the cut)' '
	size=$(wc -c <m.sp) &&
	head -c $((size / 2)) m.sp >half.sp
'

test_expect_success SAMTOOLS 'truncated input, SAM: the last line names the error and is no record' '
	test_expect_code 1 extend -B 50 half.sp >half.sam 2>err &&
	test_grep "input truncated" err &&
	tail -n 1 half.sam >last &&
	test_grep "^extend: error: .*input truncated.*(the output is incomplete)\$" last &&
	test_must_fail samtools view half.sam >/dev/null 2>&1 &&
	head -n -1 half.sam >recs.sam &&
	test $(samtools view -c recs.sam) -gt 0 &&
	extend -q m.sp >full.sam &&
	samtools view full.sam >/dev/null
'

test_expect_success SAMTOOLS 'truncated input, BAM: no end-of-file marker, samtools quickcheck fails' '
	test_expect_code 1 extend -B 50 -O bam half.sp >half.bam 2>err &&
	test_grep "input truncated" err &&
	test_must_fail samtools quickcheck half.bam &&
	test_expect_code 1 extend -t 3 -B 50 -O bam -o half3.bam half.sp 2>err &&
	test_must_fail samtools quickcheck half3.bam &&
	test $(samtools view -c half3.bam 2>/dev/null) -gt 0 &&
	extend -q -O bam m.sp >full.bam &&
	samtools quickcheck full.bam
'

test_expect_success 'truncated input, hits stream: no end block, its reader reports it truncated' '
	test_expect_code 1 extend -B 50 -O rec half.sp >half.rec 2>err &&
	test_grep "input truncated" err &&
	test_expect_code 1 recview half.rec >/dev/null 2>err &&
	test_grep "truncated" err
'

test_expect_success SAMTOOLS 'truncated before the first batch: SAM header and the error line, BAM unfinished' '
	head -c 300 m.sp >early.sp &&
	test_expect_code 1 extend early.sp >early.sam 2>err &&
	test_grep "truncated" err &&
	grep -v "^@" early.sam >rest &&
	test $(wc -l <rest) = 1 &&
	test_grep "^extend: error: " rest &&
	test_must_fail samtools view early.sam >/dev/null 2>&1 &&
	test_expect_code 1 extend -O bam early.sp >early.bam 2>err &&
	test_must_fail samtools quickcheck early.bam
'

# (-t 1: on a write error htslib's BAM compression threads lose a result,
# which LeakSanitizer reports; the error is the same with threads)
test_expect_success 'a full disk: every format fails with exit 1 and the file named' '
	test -w /dev/full || { echo "no /dev/full"; exit 0; } &&
	for f in sam bam rec; do
		test_expect_code 1 extend -q -t 1 -O $f -o /dev/full m.sp 2>err &&
		test_grep "^extend: cannot write ./dev/full." err || return 1
	done &&
	test_expect_code 1 extend -q -O rec m.sp >/dev/full 2>err &&
	test_grep "^extend: cannot write to standard output: No space left on device$" err
'

# Found by UBSan (make asan; the NULL + 0 one by clang's): each is also
# checked in t3101's unit test.
test_expect_success 'a record with an empty body: malformed, exit 1' '
	"$T"/extend_mkcands ref.sx reads.fq 30 -E >empty-body.sp &&
	test_expect_code 1 extend empty-body.sp >out 2>err &&
	test_grep "malformed candidates record" err
'

test_expect_success 'a batch without any hit: its reads unmapped' '
	printf "@none\nACGTTGCAACGTTGCAACGTTGCAACGTTGCA\n+\nIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIII\n" >none.fq &&
	"$T"/extend_mkcands ref.sx none.fq 30 >none.sp &&
	extend -q -e 0 none.sp >none.sam &&
	grep -v "^@" none.sam >recs &&
	test $(wc -l <recs) = 1 &&
	test_grep "^none	4	\*" recs
'

test_expect_success 'a hits stream holds the same hits as the SAM output' '
	recview h.sp | awk -F"\t" "NR > 1 && \$6 > 0 { print \$2, \$7 }" | sort >rec.txt &&
	grep -v "^@" ok.sam | awk -F"\t" "{ s = int(\$2 / 16) % 2 ? \"-\" : \"+\"; print \$1, (\$3 == \"a\" ? 0 : 1) \":\" \$4 - 1 \":\" s }" |
		sort >sam.txt &&
	sed "s/:[^:]*:[^:]*:[^:]*:[^:]*\$//" rec.txt >rec2.txt &&
	test_cmp sam.txt rec2.txt &&
	recview -H h.sp | test_grep "pg=extend" - &&
	recview -H h.sp | test_grep "pg=extend_mkcands" -
'

test_expect_success 'an empty candidates stream: header only; summary on stderr' '
	: >empty.fq &&
	"$T"/extend_mkcands ref.sx empty.fq 30 >e.sp &&
	extend e.sp >e.sam 2>err &&
	test $(grep -vc "^@" e.sam) = 0 &&
	test_grep "^@SQ	SN:a	LN:3000" e.sam &&
	test_grep "0 reads" err &&
	extend -q e.sp >e.sam 2>err && test ! -s err
'

test_lazy_prereq SCRIPT 'script -qec true /dev/null </dev/null'

test_expect_success SCRIPT 'BAM and hits streams are not written to a terminal without -f' '
	test_expect_code 1 script -qec "extend -O bam c.sp" /dev/null </dev/null >out 2>&1 &&
	test_grep "extend: refusing to write BAM to a terminal (use -f to force" out &&
	test_expect_code 1 script -qec "extend -O rec c.sp" /dev/null </dev/null >out 2>&1 &&
	test_grep "extend: refusing to write a binary stream to a terminal" out &&
	script -qec "extend -q -f -O bam c.sp" /dev/null </dev/null >out 2>&1 &&
	test_must_fail test_grep "refusing" out &&
	script -qec "extend -q c.sp" /dev/null </dev/null >out 2>&1 &&
	test_grep "^@HD" out
'

test_expect_success '-O bam to a file or a pipe needs no -f' '
	extend -q -O bam -o b.bam c.sp &&
	extend -q -O bam c.sp | cat >b2.bam &&
	gzip -dc <b.bam | head -c 4 | test_grep -a "BAM" - &&
	gzip -dc <b.bam | tail -c 1000 >t1 &&
	gzip -dc <b2.bam | tail -c 1000 >t2 &&
	test_cmp t1 t2
'

test_expect_success 'BAM compressed by threads holds the same records' '
	extend -q -t 1 -O bam m.sp >m1.bam &&
	extend -q -t 4 -O bam m.sp >m4.bam &&
	gzip -dc <m1.bam >t1 && gzip -dc <m4.bam >t4 &&
	test $(wc -c <t1) -gt 200000 &&
	test $(cmp -l t1 t4 | wc -l) = 1 &&
	cmp -l t1 t4 | test_grep " 61 " -
'

test_expect_success '@PG chain: every stage with its command line' '
	grep "^@PG" ok.sam >pg &&
	test $(wc -l <pg) = 2 &&
	test_grep "ID:extend_mkcands" pg &&
	test_grep "PP:extend_mkcands" pg &&
	test_grep "CL:.*extend -q c.sp" pg
'
test_done
