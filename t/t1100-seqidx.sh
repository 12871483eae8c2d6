#!/bin/bash
test_description='seqidx: building, --info, --verify, determinism, pipes, bad input'
. ./test-lib.sh

# random_fasta SEED NSEQ LEN: sequences with N runs, deterministic
random_fasta() {
	awk -v seed="$1" -v nseq="$2" -v len="$3" 'BEGIN {
		srand(seed)
		for (s = 0; s < nseq; s++) {
			printf ">chr%d some comment\n", s
			n = int(len / 2 + rand() * len)
			line = ""
			for (i = 0; i < n; i++) {
				if (rand() < 0.002) { k = int(rand() * 30) + 1; for (j = 0; j < k; j++) line = line "N"; i += k }
				line = line substr("ACGT", int(rand() * 4) + 1, 1)
				if (length(line) >= 60) { print line; line = "" }
			}
			if (line != "") print line
		}
	}'
}

test_expect_success 'setup' '
	random_fasta 1 5 3000 >ref.fa &&
	random_fasta 2 1 20000 >one.fa
'

test_expect_success 'build to stdout and to -o give the same file' '
	seqidx -q -u 6 -l 12 -m all ref.fa >a.sx &&
	seqidx -q -u 6 -l 12 -m all -o b.sx ref.fa &&
	test_cmp a.sx b.sx &&
	! ls b.sx.tmp.* 2>/dev/null
'

test_expect_success '--verify accepts a sound index' '
	seqidx --verify a.sx >out &&
	test_grep "a.sx: ok" out
'

test_expect_success '--info prints parameters, sections and fingerprint' '
	seqidx --info a.sx >info &&
	test_grep "^shape	######$" info &&
	test_grep "^l	12$" info &&
	test_grep "^sequences	5$" info &&
	test_grep "^structures	general,reduced,block,fm$" info &&
	test_grep "^fingerprint	[0-9a-f]\{16\}$" info &&
	test_grep "^format_version	5$" info &&
		test_grep "^bytes_per_base_section	blk.roff	0\.[0-9]\{3\}$" info &&
		test_grep "^bytes_per_base_section	blk.seed	0\.[0-9]\{3\}$" info &&
	test_grep "^section	red.nb	0	" info &&
	! grep "^section	gen\." info &&
	test_grep "^section	blk.g	0	" info &&
	test_grep "^bytes_per_base	general	" info &&
	test_grep "^bytes_per_base	block	" info &&
	test_grep "^section	fm.sa	0	" info &&
	test_grep "^tran_formula_bytes	" info
'

test_expect_success 'bit-identical across runs and thread counts' '
	seqidx -q -t 1 -u 5 -m all ref.fa >t1.sx &&
	seqidx -q -t 2 -u 5 -m all ref.fa >t2.sx &&
	seqidx -q -t 3 -u 5 -m all ref.fa >t3.sx &&
	seqidx -q -t 3 -u 5 -m all ref.fa >t3b.sx &&
	test_cmp t1.sx t2.sx &&
	test_cmp t1.sx t3.sx &&
	test_cmp t3.sx t3b.sx
'

test_expect_success 'reads stdin with - and gzip input' '
	cat ref.fa | seqidx -q -t 2 -u 5 -m all - >p.sx &&
	test_cmp t1.sx p.sx &&
	gzip -c ref.fa >ref.fa.gz &&
	seqidx -q -u 5 -m all ref.fa.gz >z.sx &&
	test_cmp t1.sx z.sx &&
	gzip -dc ref.fa.gz | seqidx -q -u 5 -m all - >zp.sx &&
	test_cmp t1.sx zp.sx
'

test_expect_success '--verify and --info read an index from a pipe' '
	cat t1.sx | seqidx --verify - >out &&
	test_grep "^-: ok" out &&
	cat t1.sx | seqidx --info - >info &&
	seqidx --info t1.sx >info2 &&
	grep -v "^index" info >a && grep -v "^index" info2 >b &&
	test_cmp a b &&
	head -c 3000 t1.sx | test_must_fail seqidx --verify - 2>err &&
	test_grep "truncated" err
'

test_expect_success 'the fingerprint depends on the parameters and the reference' '
	seqidx --info t1.sx | grep ^fingerprint >f1 &&
	seqidx -q -u 5 -m general t1.sx 2>/dev/null >/dev/null;
	seqidx -q -u 5 -m general ref.fa >g.sx &&
	seqidx --info g.sx | grep ^fingerprint >f2 &&
	! cmp -s f1 f2 &&
	seqidx -q -u 6 -m all ref.fa >u6.sx &&
	seqidx --info u6.sx | grep ^fingerprint >f3 &&
	! cmp -s f1 f3
'

test_expect_success 'spaced seeds, structure subsets, split partitions' '
	seqidx -q -S "##-#--##" -l 9 -m reduced one.fa >s.sx &&
	seqidx --info s.sx >info &&
	test_grep "^shape	##-#--##$" info &&
	test_grep "^weight	5$" info &&
	test_grep "^structures	reduced$" info &&
	! grep "^section	gen" info &&
	seqidx -q -u 4 -m block one.fa >blk.sx &&
	seqidx --info blk.sx | grep "^structures	reduced,block$" &&
	seqidx -q -m fm one.fa >fm.sx &&
	seqidx --info fm.sx >info &&
	test_grep "^structures	fm$" info &&
	! grep "^section	\(gen\|red\|blk\)" info &&
	test_grep "^section	fm.sa	0	" info &&
	seqidx -q -u 4 -l 10 -p 3000 -m all ref.fa >sp.sx &&
	seqidx --info sp.sx >info &&
	n=$(grep "^partitions	" info | cut -f2) &&
	test "$n" -gt 3 &&
	seqidx --verify sp.sx
'

test_expect_success '-v prints the chosen parameters and the default seed length' '
	seqidx -v -q one.fa >/dev/null 2>err &&
	test_must_fail test -s err &&
	seqidx -v one.fa >/dev/null 2>err &&
	n=$(grep -v "^>" one.fa | tr -d "\n" | wc -c) &&
	u=$(awk -v n=$n "BEGIN { u = 0; while (n >= 4) { n = int(n / 4); u++ } u -= 2; if (u < 4) u = 4; if (u > 12) u = 12; print u }") &&
	shape=$(printf "%${u}s" "" | tr " " "#") &&
	test_grep "seed $shape: weight $u, span $u (default for this genome size)" err &&
	test_grep "neighborhood l=16 (2 per 64-bit word)" err
'

test_expect_success 'a damaged section is refused, naming it' '
	for sec in seq.names ref.pack red.nb red.grp red.pos blk.g blk.rank fm.occ; do
		off=$(seqidx --info t1.sx >/dev/null && python3 - t1.sx $sec <<-\PY
		import sys, struct
		b = open(sys.argv[1], "rb").read(); off = 128
		while True:
		    name = b[off:off+16].split(b"\0")[0].decode(); n = struct.unpack("<Q", b[off+24:off+32])[0]
		    if name == sys.argv[2]:
		        print(off + 64 + n // 2); break
		    off += 64 + (n + 63) // 64 * 64
		PY
		) &&
		cp t1.sx bad.sx &&
		printf "\\377" | dd of=bad.sx bs=1 seek=$off conv=notrunc 2>/dev/null &&
		test_must_fail seqidx --verify bad.sx 2>err &&
		test_grep "checksum mismatch in section .$sec." err || return 1
	done
'

test_expect_success 'truncated and half-written indexes are refused' '
	size=$(wc -c <t1.sx) &&
	head -c $((size - 64)) t1.sx >trunc.sx &&
	test_must_fail seqidx --verify trunc.sx 2>err &&
	test_grep "truncated" err &&
	head -c $((size / 2)) t1.sx >half.sx &&
	test_must_fail seqidx --info half.sx 2>err &&
	test_grep "truncated in section\|truncated after section" err &&
	head -c 100 t1.sx >hdr.sx &&
	test_must_fail seqidx --verify hdr.sx 2>err &&
	test_grep "truncated in the header" err &&
	: >empty.sx &&
	test_must_fail seqidx --verify empty.sx 2>err &&
	test_grep "empty file" err &&
	test_must_fail seqidx --verify ref.fa 2>err &&
	test_grep "not a seedpipe index" err
'

test_expect_success 'empty input and input without sequences: exit 1' '
	: >empty.fa &&
	test_expect_code 1 seqidx empty.fa >o.sx 2>err &&
	test_grep "no sequence in .empty.fa." err &&
	printf "\n\n" >blank.fa &&
	test_expect_code 1 seqidx blank.fa >o.sx 2>err &&
	test_grep "no sequence" err
'

test_expect_success 'sequences shorter than a seed: a warning, an error when all are; longer ones are indexed' '
	printf ">a\nACG\n>b\nACGTA\n" >short.fa &&
	test_expect_code 1 seqidx -u 6 short.fa >o.sx 2>err &&
	test_grep "warning: sequence .a. (3 bases) is shorter than a seed (6 bases)" err &&
	test_grep "no seed position in the reference" err &&
	cat short.fa one.fa >mixed.fa &&
	seqidx -u 4 -l 8 mixed.fa >o.sx 2>err &&
	test_grep "warning: sequence .a. (3 bases) is shorter" err &&
	! grep "sequence .b." err &&
	seqidx --verify o.sx &&
	printf ">n\nNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN\n" >alln.fa &&
	test_expect_code 1 seqidx -u 4 -l 8 alln.fa >o.sx 2>err &&
	test_grep "no seed position" err
'

# b (5 bases) is shorter than u + l = 12 but holds two seed starts: reads
# of it are found (format 4)
test_expect_success 'a sequence shorter than seed + neighborhood: its seeds are indexed' '
	printf ">b\nACGTA\n" >b.fa && seqidx -q -u 4 -l 8 b.fa >b.sx &&
	seqidx --info b.sx | grep "^partition	0	" >info &&
	test_grep "seed_positions=2	" info
'

test_expect_success 'duplicate names, bad letters, FASTQ: exit 1' '
	printf ">a\nACGTACGTACGTACGTACGTACGTACGT\n>a\nACGT\n" >dup.fa &&
	test_expect_code 1 seqidx -u 4 dup.fa >o.sx 2>err &&
	test_grep "duplicate sequence name .a." err &&
	printf ">a\nACGT1ACGT\n" >bad.fa &&
	test_expect_code 1 seqidx bad.fa >o.sx 2>err &&
	test_grep "invalid character" err &&
	printf ">a\nACGTRYACGTACGTACGTACGT\n" >iupac.fa &&
	seqidx -u 4 -l 4 iupac.fa >o.sx 2>err &&
	test_grep "warning: 2 letters other than A, C, G, T and N" err &&
	printf "@r\nACGT\n+\nIIII\n" >r.fq &&
	test_expect_code 1 seqidx r.fq >o.sx 2>err &&
	test_grep "is FASTQ" err
'

test_expect_success 'a failed build with -o leaves no file behind' '
	seqidx -q -u 4 -o old.sx one.fa &&
	cp old.sx old.copy &&
	test_expect_code 1 seqidx -u 4 -o old.sx dup.fa 2>err &&
	test_cmp old.copy old.sx &&
	rm -f out.sx &&
	test_expect_code 1 seqidx -u 4 -o out.sx dup.fa 2>err &&
	! test -e out.sx &&
	! ls out.sx.tmp.* 2>/dev/null &&
	test_expect_code 1 seqidx -u 4 -o nodir/out.sx one.fa 2>err &&
	test_grep "cannot create .nodir/out.sx." err
'

test_expect_success 'full disk: /dev/full as stdout and as -o' '
	test_expect_code 1 seqidx -q -u 4 one.fa >/dev/full 2>err &&
	test_grep "No space left on device" err &&
	test_expect_code 1 seqidx -q -u 4 -o /dev/full one.fa 2>err &&
	test_grep "cannot write ./dev/full.: No space left on device" err
'

test_expect_success 'a write error in any section, at any thread count: one message, exit 1, no file' '
	seqidx -q -u 5 -m all -p 4000 ref.fa >parts.sx &&
	kb=$(( $(wc -c <parts.sx) / 1024 )) &&
	for t in 1 3; do
		for k in 0 1 2 3 5 8 13 21 34 55 89 144 233 377 610 987; do
			lim=$(( kb * k / 1000 + 1 )) &&
			{ (trap "" XFSZ; ulimit -f $lim; exec seqidx -q -t $t -u 5 -m all -p 4000 -o lim.sx ref.fa) 2>err; rc=$?; } &&
			echo "seqidx: cannot write '"'"'lim.sx'"'"': File too large" >expect &&
			test $rc = 1 && test_cmp expect err &&
			! test -e lim.sx && ! ls lim.sx.tmp.* 2>/dev/null || return 1
		done
	done
'

test_lazy_prereq TMPFS 'mkdir -p mnt && mount -t tmpfs -o size=256k tmpfs mnt && umount mnt'

test_expect_success TMPFS 'full disk with -o: no file is left that looks valid' '
	random_fasta 9 1 60000 >big.fa &&    # at least 30,000 bases: an index past 256k
	mkdir -p mnt && mount -t tmpfs -o size=256k tmpfs mnt &&
	{ seqidx -q -u 6 -m all -o mnt/big.sx big.fa 2>err; rc=$?; } &&
	ls mnt >left; umount mnt &&
	test $rc = 1 &&
	test_grep "No space left on device" err &&
	test_must_fail test -s left
'

test_expect_success 'an interrupted pipe leaves a file that is refused' '
	seqidx -q -u 6 -m all one.fa | head -c 5000 >cut.sx;
	test_must_fail seqidx --verify cut.sx 2>err &&
	test_grep "truncated" err
'

test_expect_success 'usage errors exit 2' '
	test_expect_code 2 seqidx -u 4 -S "##-#" one.fa 2>err &&
	test_grep "cannot be used together" err &&
	test_expect_code 2 seqidx -m general,xyz one.fa 2>err &&
	test_grep "unknown structure list" err &&
	test_expect_code 2 seqidx -S "#x#" one.fa 2>err &&
	test_grep "may hold only" err &&
	test_expect_code 2 seqidx -S "-##" one.fa 2>err &&
	test_grep "must begin and end" err &&
	test_expect_code 2 seqidx -l 33 one.fa 2>err &&
	test_expect_code 2 seqidx -u 14 one.fa 2>err &&
	test_expect_code 2 seqidx 2>err &&
	test_grep "no reference given.*; try .seqidx --help.$" err &&
	seqidx --help >out &&
	test_grep "^Usage: seqidx" out
'

test_done
