#!/bin/bash
test_description='seedfilt -m mem: a candidates stream of the matches (one per diagonal, support = summed lengths) that extend aligns'
. ./test-lib.sh

MEM_ORACLE=$SEEDPIPE_BUILD/t/mem_oracle

test_expect_success 'setup' '
	"$MEM_ORACLE" -G 31 3 4000 >ref.fa &&
	"$MEM_ORACLE" -R 32 200 100 ref.fa >reads.fa &&
	seqidx -q -m fm -o ref.sx ref.fa &&
	seqidx -q -m fm -u 4 -l 4 -p 700 -o p.sx ref.fa
'

# want_cands REF READS ORACLE_OUTPUT: READ SEQ GLOBAL_DIAGONAL STRAND SUPPORT, sorted
want_cands() {
	python3 - "$@" <<-\PY
	import sys
	def fa(p):
	    r = []
	    for l in open(p):
	        l = l.rstrip("\n")
	        if l.startswith(">"): r.append([l[1:].split()[0] if l[1:].split() else "", ""])
	        else: r[-1][1] += l
	    return r
	ref, reads = fa(sys.argv[1]), fa(sys.argv[2])
	off, sid, o = {}, {}, 0
	for k, (n, s) in enumerate(ref): off[n], sid[n], o = o, k, o + len(s)
	c, r, strand = {}, -1, 0
	for l in open(sys.argv[3]):
	    f = l.split()
	    if l.startswith(">"):
	        strand = 1 if f[-1] == "Reverse" else 0
	        r += strand == 0
	        continue
	    m = len(reads[r][1])
	    g = off[f[0]] + int(f[1]) - 1
	    i = m - int(f[2]) if strand else int(f[2]) - 1
	    d = max(g - i, off[f[0]])
	    key = (r, sid[f[0]], d, "-" if strand else "+")
	    c[key] = c.get(key, 0) + int(f[3])
	for k in sorted(c): print("%d\t%d\t%d\t%s\t%d" % (k + (c[k],)))
	PY
}

# got_cands INDEX STREAM: the same lines from a candidates stream
got_cands() {
	recview "$2" | awk -v P="$(seqidx --info "$1" | awk '$1 == "partition" { printf "%s%s", n++ ? "," : "", $3 } END { print "" }')" '
	BEGIN { n = split(P, b, ","); for (i = 1; i <= n; i++) beg[i - 1] = b[i] }
	/^#/ || $6 == 0 { next }
	{ m = split($7, c, ","); for (i = 1; i <= m; i++) { split(c[i], f, ":")
	  printf "%d\t%d\t%d\t%s\t%d\n", $1, f[2], beg[f[1]] + f[3], f[4], f[5] } }' |
	sort -k1,1n -k2,2n -k3,3n -k4,4
}

for ix in ref.sx p.sx; do
	for L in 15 30; do
		test_expect_success "candidates = the oracle's matches by diagonal ($ix, L $L)" '
			"$MEM_ORACLE" -F -l '$L' ref.fa reads.fa >mm &&
			want_cands ref.fa reads.fa mm | sort -k1,1n -k2,2n -k3,3n -k4,4 >want &&
			seedfilt -q -x '$ix' -m mem -L '$L' reads.fa >c.sp &&
			got_cands '$ix' c.sp >got &&
			test -s want &&
			test_cmp want got
		'
	done
done

test_expect_success 'the stream names the method and the index' '
	recview -H c.sp | grep "^##" >prov &&
	test_grep "seedfilt.method=mem" prov &&
	test_grep "seedfilt.mem_L=30" prov &&
	test_grep "index_fp=" prov
'

# (extend counts N against N as an edit: reads with N are left out)
test_expect_success 'seedfilt -m mem | extend: every read without N that matches whole is aligned there with no edit' '
	"$MEM_ORACLE" -F -l 20 ref.fa reads.fa >mm &&
	seedfilt -q -x ref.sx -m mem -L 20 reads.fa | extend -q -e 3 >hits.sam &&
	python3 - reads.fa mm hits.sam <<-\PY
	import sys
	seq, name = {}, None
	for l in open(sys.argv[1]):
	    if l.startswith(">"): name = l[1:].split()[0]; seq[name] = ""
	    else: seq[name] += l.strip()
	want, strand = set(), 0
	for l in open(sys.argv[2]):
	    f = l.split()
	    if l.startswith(">"):
	        name, strand = f[1], 16 if f[-1] == "Reverse" else 0
	        continue
	    if int(f[3]) == len(seq[name]) and "N" not in seq[name]:
	        want.add((name, f[0], int(f[1]), strand))
	got = set()
	for l in open(sys.argv[3]):
	    if l.startswith("@"): continue
	    f = l.rstrip("\n").split("\t")
	    if "NM:i:0" in f[11:]: got.add((f[0], f[2], int(f[3]), int(f[1]) & 16))
	miss = sorted(want - got)
	print("%d whole-length matches, %d missing" % (len(want), len(miss)))
	if len(want) < 25 or miss: print(miss[:10]); sys.exit(1)
	PY
'

test_done
