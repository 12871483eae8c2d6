#!/bin/bash
test_description='seedfilt -m mem: the maximal exact matches of a brute-force oracle, byte for byte'
. ./test-lib.sh

MEM_ORACLE=$SEEDPIPE_BUILD/t/mem_oracle

test_expect_success 'the oracle: a small case worked out by hand (and by mummer 3.23)' '
	printf ">chr1 desc\nACGTACGTTTGACCATGACNNNNACGTACGTTTGACCAGGATTACAGATTACA\n>chr2\nGGGACGTACGTTTGACCATGACAAAA\n" >h.fa &&
	printf ">r1 x\nACGTACGTTTGACCATGAC\n>r2\nTGTAATCTGTAATCC\n>r3\nACGTACGTNTGACCATGAC\n" >hq.fa &&
	cat >want <<-\EOF &&
	> r1
	  chr1        24         1        15
	  chr2         4         1        19
	  chr1         1         1        19
	> r1 Reverse
	  chr1        24         8         8
	  chr2         4         8         8
	  chr1         1         8         8
	> r2
	> r2 Reverse
	  chr1        39        15        15
	  chr1        47        14         7
	  chr1        40         7         7
	> r3
	  chr1        24         1         8
	  chr2         4         1         8
	  chr1         1         1         8
	  chr1        33        10         6
	  chr2        13        10        10
	  chr1        10        10        10
	> r3 Reverse
	  chr1        23         9         9
	  chr2         4         8         8
	  chr1         1         8         8
	EOF
	"$MEM_ORACLE" -l 5 h.fa hq.fa >got &&
	test_cmp want got &&
	seqidx -q -m fm -u 2 -l 2 -o h.sx h.fa &&
	seedfilt -q -x h.sx -m mem -L 5 -O mummer hq.fa >got &&
	test_cmp want got
'

test_expect_success 'setup: references with repeats and N runs, reads with N' '
	"$MEM_ORACLE" -G 1 3 3000 >ref.fa &&
	"$MEM_ORACLE" -R 2 150 80 ref.fa >reads.fa &&
	"$MEM_ORACLE" -G 3 1 2500 >one.fa &&
	"$MEM_ORACLE" -R 4 120 70 one.fa >reads1.fa &&
	"$MEM_ORACLE" -G 5 2 1500 AC >rep.fa &&
	"$MEM_ORACLE" -R 6 60 50 rep.fa >readsr.fa &&
	seqidx -q -m fm -o ref.sx ref.fa &&
	seqidx -q -m fm -o one.sx one.fa &&
	seqidx -q -m fm -u 4 -l 4 -o rep.sx rep.fa &&
	grep -q N ref.fa && grep -q N reads.fa
'

# same NAME INDEX REF READS 'SEEDFILT OPTIONS' 'ORACLE OPTIONS'
same() {
	test_expect_success "$1" '
		"$MEM_ORACLE" '"$6"' '"$3"' '"$4"' >want &&
		seedfilt -q -x '"$2"' -m mem -O mummer '"$5"' '"$4"' >got &&
		test_cmp want got
	'
}

for L in 8 12 20 35; do
	same "three sequences, L $L" ref.sx ref.fa reads.fa "-L $L" "-l $L"
done
same 'one sequence (no name column), L 10' one.sx one.fa reads1.fa '-L 10' '-l 10'
same 'one sequence, -F (the name column)' one.sx one.fa reads1.fa '-L 10 -F' '-l 10 -F'
same 'window 1 (step L)' ref.sx ref.fa reads.fa '-L 15 -w 1' '-l 15'
same 'window L (step 1)' ref.sx ref.fa reads.fa '-L 15 -w 15' '-l 15'
same 'window 9, L 9' ref.sx ref.fa reads.fa '-l 9 -w 9 -c -b -maxmatch' '-l 9'
same '-mumreference' ref.sx ref.fa reads.fa '-L 10 -mumreference' '-l 10 -mumreference'
same '-mumcand is -mumreference' ref.sx ref.fa reads.fa '-L 10 -mumcand' '-l 10 -mumreference'
same '-mum' ref.sx ref.fa reads.fa '-L 10 -mum' '-l 10 -mum'
same '-r: reverse complement only' ref.sx ref.fa reads.fa '-L 12 -r' '-l 12 -r'
same '--forward: forward strand only' ref.sx ref.fa reads.fa '-L 12 --forward' '-l 12 --forward'
same '-n: N matches nothing' ref.sx ref.fa reads.fa '-L 6 -n' '-l 6 -n'
same 'repetitive (two letters), L 6' rep.sx rep.fa readsr.fa '-L 6' '-l 6'
same 'repetitive, L 6, -mum' rep.sx rep.fa readsr.fa '-L 6 -mum' '-l 6 -mum'
same 'repetitive, L 6, -mumreference' rep.sx rep.fa readsr.fa '-L 6 -mumreference' '-l 6 -mumreference'
same 'repetitive, L 3, window 2' rep.sx rep.fa readsr.fa '-L 3 -w 2' '-l 3'
same 'one thread, batches of 7 reads' ref.sx ref.fa reads.fa '-L 12 -t 1 -B 7' '-l 12'
same 'three threads' ref.sx ref.fa reads.fa '-L 12 -t 3' '-l 12'

test_expect_success 'partitions cut inside sequences: matches across the cuts' '
	seqidx -q -m fm -u 4 -l 4 -p 400 -o p.sx ref.fa &&
	test $(seqidx --info p.sx | grep -c "^partition	") -gt 10 &&
	for L in 6 15 40; do
		"$MEM_ORACLE" -l $L ref.fa reads.fa >want &&
		seedfilt -q -x p.sx -m mem -L $L -O mummer reads.fa >got &&
		test_cmp want got || return 1
	done &&
	"$MEM_ORACLE" -l 8 -mum ref.fa reads.fa >want &&
	seedfilt -q -x p.sx -m mem -L 8 -mum -O mummer reads.fa >got &&
	test_cmp want got
'

test_expect_success 'partitions on a repetitive reference' '
	seqidx -q -m fm -u 2 -l 2 -p 60 -o rp.sx rep.fa &&
	"$MEM_ORACLE" -l 5 rep.fa readsr.fa >want &&
	seedfilt -q -x rp.sx -m mem -L 5 -O mummer readsr.fa >got &&
	test_cmp want got
'

test_expect_success 'long runs of N (the deep rows), poly-A next to them, reads with A and N runs' '
	python3 - <<-\PY &&
	import random
	R = random.Random(7)
	def rnd(n): return "".join(R.choice("ACGT") for _ in range(n))
	seqs = [("s0", rnd(3000) + "N" * 3000 + "A" * 40 + rnd(2000) + "A" * 30 + "N" * 1500 + "A" * 3 + rnd(1000)),
	        ("s1", rnd(1500) + "N" * 1200),
	        ("s2", "N" * 2000 + "AAAAAAAAAAAAAAAAAAAAAAAAA" + rnd(800) + "N" * 600 + rnd(100))]
	with open("nref.fa", "w") as f:
	    for n, s in seqs: f.write(">%s\n%s\n" % (n, s))
	comp = str.maketrans("ACGTN", "TGCAN")
	with open("nreads.fa", "w") as f:
	    k = 0
	    for n, s in seqs:
	        for _ in range(40):
	            r = "N" * 99
	            while r.count("N") > 12:
	                m = R.choice([60, 100, 100, 150, 600, 700])
	                p = R.randrange(0, len(s) - m)
	                r = s[p:p + m]
	            if R.random() < 0.3: r = r.translate(comp)[::-1]
	            f.write(">r%d\n%s\n" % (k, r)); k += 1
	    for r in ["A" * 30 + rnd(70), rnd(40) + "A" * 35 + rnd(25), "N" * 25 + rnd(75), rnd(80) + "N" * 20,
	              "A" * 10 + "N" * 30 + "A" * 10 + rnd(30), rnd(20) + "T" * 40 + rnd(40)]:
	        f.write(">r%d\n%s\n" % (k, r)); k += 1
	PY
	seqidx -q -m fm -o n.sx nref.fa &&
	seqidx -q -m fm -u 4 -l 4 -p 2500 -o np.sx nref.fa &&
	for L in 15 40; do
		"$MEM_ORACLE" -l $L nref.fa nreads.fa >want &&
		seedfilt -q -x n.sx -m mem -L $L -O mummer nreads.fa >got &&
		test_cmp want got &&
		seedfilt -q -x np.sx -m mem -L $L -O mummer nreads.fa >got &&
		test_cmp want got || return 1
	done &&
	"$MEM_ORACLE" -l 20 -n nref.fa nreads.fa >want &&
	seedfilt -q -x n.sx -m mem -L 20 -n -O mummer nreads.fa >got &&
	test_cmp want got
'

test_expect_success 'the plain build of the search (SEEDPIPE_NO_SIMD) gives the same bytes' '
	seedfilt -q -x ref.sx -m mem -L 10 -O mummer reads.fa >a &&
	SEEDPIPE_NO_SIMD=1 seedfilt -q -x ref.sx -m mem -L 10 -O mummer reads.fa >b &&
	test_cmp a b
'

test_expect_success 'the order from the rows, checked by neighbours, is the full sort (SEEDPIPE_MEM_FULL_SORT)' '
	seqidx -q -m fm -u 4 -l 4 -p 400 -o repp.sx rep.fa &&
	for a in "ref.sx reads.fa -L 6" "rep.sx readsr.fa -L 4" "repp.sx readsr.fa -L 5"; do
		set -- $a &&
		seedfilt -q -x $1 -m mem $3 $4 -O mummer $2 >a &&
		SEEDPIPE_MEM_FULL_SORT=1 seedfilt -q -x $1 -m mem $3 $4 -O mummer $2 >b &&
		test_cmp a b &&
		test $(grep -vc "^>" a) -gt 100 || return 1
	done
'

test_done
