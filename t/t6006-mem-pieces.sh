#!/bin/bash
test_description='seedfilt -m mem: FM-MEMs cut into true matches (stage 2) at N runs of the reference and the read and at sequence ends, against the brute-force oracle'
. ./test-lib.sh

MEM_ORACLE=$SEEDPIPE_BUILD/t/mem_oracle

# Many short sequences (one empty, N runs at their ends and inside, poly-A
# and poly-N next to each other) and reads drawn from the sequences'
# concatenation: their FM-MEMs run across sequence ends and N runs (the
# text stores N as A), which stage 2 cuts letter stretch by stretch.
test_expect_success 'setup: sequences with N at their ends, reads across the ends with N runs' '
	python3 - <<-\PY &&
	import random
	R = random.Random(61)
	def rnd(n): return "".join(R.choice("ACGT") for _ in range(n))
	seqs = []
	for k in range(24):
	    parts = [rnd(R.randrange(1, 60))]
	    for _ in range(R.randrange(0, 4)):
	        parts.append(R.choice(["N" * R.randrange(1, 9), "A" * R.randrange(3, 12),
	                               "N" * R.randrange(1, 5) + "A" * R.randrange(1, 6)]))
	        parts.append(rnd(R.randrange(1, 40)))
	    s = "".join(parts)
	    if R.random() < 0.3: s = "N" * R.randrange(1, 6) + s
	    if R.random() < 0.3: s = s + "N" * R.randrange(1, 6)
	    seqs.append(s)
	seqs.insert(7, "")
	seqs.insert(12, seqs[3][5:] + seqs[4][:20])      # a repeat across an end
	with open("ref.fa", "w") as f:
	    for i, s in enumerate(seqs): f.write(">c%d\n%s\n" % (i, s))
	text = "".join(seqs)
	comp = str.maketrans("ACGTN", "TGCAN")
	with open("reads.fa", "w") as f:
	    for k in range(300):
	        m = R.choice([15, 30, 50, 80])
	        p = R.randrange(0, len(text) - m)
	        r = list(text[p:p + m])
	        for _ in range(R.choice([0, 0, 1, 2])):
	            q = R.randrange(0, m)
	            for j in range(q, min(m, q + R.choice([1, 1, 3, 6]))):
	                r[j] = R.choice("NNA")
	        r = "".join(r)
	        if R.random() < 0.4: r = r.translate(comp)[::-1]
	        f.write(">r%d\n%s\n" % (k, r))
	PY
	seqidx -q -m fm -u 4 -l 4 -o ref.sx ref.fa &&
	seqidx -q -m fm -u 4 -l 4 -p 150 -o p.sx ref.fa &&
	test $(seqidx --info p.sx | grep -c "^partition	") -gt 5 &&
	grep -q N reads.fa
'

for ix in ref.sx p.sx; do
	for L in 4 7 12; do
		test_expect_success "$ix, L $L" '
			"$MEM_ORACLE" -l '"$L"' ref.fa reads.fa >want &&
			seedfilt -q -x '"$ix"' -m mem -L '"$L"' -O mummer reads.fa >got &&
			test_cmp want got &&
			test $(grep -vc "^>" got) -gt 300
		'
	done
	test_expect_success "$ix, -n (N matches nothing), L 5" '
		"$MEM_ORACLE" -l 5 -n ref.fa reads.fa >want &&
		seedfilt -q -x '"$ix"' -m mem -L 5 -n -O mummer reads.fa >got &&
		test_cmp want got
	'
	test_expect_success "$ix, -mumreference, L 6" '
		"$MEM_ORACLE" -l 6 -mumreference ref.fa reads.fa >want &&
		seedfilt -q -x '"$ix"' -m mem -L 6 -mumreference -O mummer reads.fa >got &&
		test_cmp want got
	'
done

test_done
