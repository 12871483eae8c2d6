# lib-pair.sh - paired-end helpers of the t8* tests, sourced after
# test-lib.sh and lib-extend.sh.

# gen_pairs SEED GENOME_LEN NPAIRS LEN MAXEDITS INDELS(0|1) INS_MEAN INS_SD [REPEATS(1|0)]
#   > ref.fa, r1.fq, r2.fq (mate 1 and 2 files, names pN/1 and pN/2)
# Genome: random with mutated copies (repeats), a tandem repeat, an N run,
# two sequences (REPEATS 0: random only, but for the N run).  Pairs: a fragment of normal length, mate 1 its first LEN
# bases and mate 2 the reverse complement of its last (or the other way
# round, from the reverse strand), each with planted edits; a few mates
# random (no hit), a few fragments too long or short.
gen_pairs() {
	PYTHONPATH="$TEST_DIR" python3 - "$@" <<'PY'
import random, sys
from gen_genome import rnd as rnd_, mutate as mutate_, genome, write_fasta
seed, glen, npair, m, me, indel, imean, isd = map(int, sys.argv[1:9])
reps = int(sys.argv[9]) if len(sys.argv) > 9 else 1
R = random.Random(seed)
rnd = lambda n: rnd_(R, n)
mutate = lambda s, k, gaps: mutate_(R, s, k, gaps)
g = genome(R, glen, 6 if reps else 0, 400, 2, indel, tandem=reps)
cut = glen * 2 // 3
seqs = [('s1', g[:cut]), ('s2', g[cut:])]
write_fasta('ref.fa', seqs)
comp = str.maketrans('ACGTN', 'TGCAN')
rc = lambda s: s.translate(comp)[::-1]
qual = lambda r: ''.join(chr(33 + R.randrange(2, 41)) for _ in r)
f1 = open('r1.fq', 'w'); f2 = open('r2.fq', 'w')
for i in range(npair):
    name, s = R.choice(seqs)
    L = max(m, int(R.gauss(imean, isd)))
    if R.random() < 0.03: L = imean * 4
    if L > len(s): L = len(s)
    p = R.randrange(0, len(s) - L + 1)
    frag = s[p:p + L]
    a, b = frag[:m], rc(frag[-m:])
    if R.random() < 0.5: a, b = b, a
    a = mutate(a, R.randrange(0, me + 1), indel)
    b = mutate(b, R.randrange(0, me + 1), indel)
    if R.random() < 0.03: a = rnd(m)
    if R.random() < 0.03: b = rnd(m)
    f1.write('@p%d/1\n%s\n+\n%s\n' % (i, a, qual(a)))
    f2.write('@p%d/2\n%s\n+\n%s\n' % (i, b, qual(b)))
PY
}

# oracle_loci A [-g]: every locus of every mate within A (ext_oracle, full
# DP), one line NAME/MATE STRAND SEQ POS NM CIGAR MD, sorted (no unmapped)
oracle_loci() {
	{ "$T"/ext_oracle ref.fa r1.fq "$@" && "$T"/ext_oracle ref.fa r2.fq "$@"; } |
		awk -F'\t' '$2 != "*"' | sort
}

# oracle_pairs LO HI < loci: every concordant pair of those loci (one
# sequence, opposite strands, forward first base <= reverse last base,
# insert = reverse last - forward first + 1 in LO..HI):
# NAME SEQ POS1 STRAND1 POS2 STRAND2, sorted
oracle_pairs() {
	python3 -c '
import sys, re, collections
lo, hi = int(sys.argv[1]), int(sys.argv[2])
loci = collections.defaultdict(lambda: ([], []))
for l in sys.stdin:
    f = l.rstrip("\n").split("\t")
    name, mate = f[0][:-2], int(f[0][-1])
    rl = sum(int(n) for n, op in re.findall(r"(\d+)([MIDNSHP=X])", f[5]) if op in "MDN=X")
    loci[name][mate - 1].append((f[2], int(f[1]), int(f[3]), int(f[3]) + rl - 1))
out = []
for name, (a, b) in loci.items():
    for s1, t1, p1, e1 in a:
        for s2, t2, p2, e2 in b:
            if s1 != s2 or t1 == t2: continue
            fp, re_ = (p1, e2) if t1 == 0 else (p2, e1)
            if fp > re_: continue
            ins = re_ - fp + 1
            if lo <= ins <= hi:
                out.append("%s\t%s\t%d\t%d\t%d\t%d" % (name, s1, p1, t1, p2, t2))
print("\n".join(sorted(out)) if out else "", end="\n" if out else "")
' "$@"
}

# sam_pairs SAM: the concordant pairs of extend's output (mate 1's records
# with flag 2): NAME SEQ POS1 STRAND1 POS2 STRAND2, sorted
sam_pairs() {
	samtools view -f 66 "$1" | awk -F'\t' '{
		print $1 "\t" $3 "\t" $4 "\t" (and($2, 16) ? 16 : 0) "\t" $8 "\t" (and($2, 32) ? 16 : 0) }' | sort
}

# sam_loci SAM: every mapped record as NAME/MATE STRAND SEQ POS NM CIGAR MD, sorted, unique
sam_loci() {
	samtools view -F 4 "$1" | awk -F'\t' '{
		nm = ""; md = ""
		for (i = 12; i <= NF; i++) {
			if ($i ~ /^NM:i:/) nm = substr($i, 6)
			if ($i ~ /^MD:Z:/) md = substr($i, 6)
		}
		print $1 "/" (and($2, 64) ? 1 : 2) "\t" (and($2, 16) ? 16 : 0) "\t" $3 "\t" $4 "\t" nm "\t" $6 "\t" md
	}' | sort -u
}

# mate_pairs SEED NPAIRS LEN MAXEDITS < ref.fa > r1.fq, r2.fq: pairs of an
# existing reference (sequences of 600 bases or more), fragments of 300 +-
# 30 bases, mates as in gen_pairs (names pN/1, pN/2, up to MAXEDITS
# substitutions or indels each, either orientation), a few mates random
mate_pairs() {
	PYTHONPATH="$TEST_DIR" python3 -c '
import random, sys
from gen_genome import mutate as mutate_
seed, npair, m, me = map(int, sys.argv[1:5])
R = random.Random(seed)
seqs, name = [], None
for l in sys.stdin:
    l = l.strip()
    if l.startswith(">"): seqs.append([l[1:].split()[0], ""])
    elif seqs: seqs[-1][1] += l.upper()
seqs = [s for n, s in seqs if len(s) >= 600]
mutate = lambda s, k: mutate_(R, s, k, 1)
comp = str.maketrans("ACGTN", "TGCAN")
rc = lambda s: s.translate(comp)[::-1]
qual = lambda r: "".join(chr(33 + R.randrange(2, 41)) for _ in r)
f1, f2 = open("r1.fq", "w"), open("r2.fq", "w")
for i in range(npair):
    s = R.choice(seqs)
    L = min(len(s), max(m, int(R.gauss(300, 30))))
    p = R.randrange(0, len(s) - L + 1)
    a, b = s[p:p + m], rc(s[p + L - m:p + L])
    if R.random() < 0.5: a, b = b, a
    a, b = mutate(a, R.randrange(0, me + 1)), mutate(b, R.randrange(0, me + 1))
    if R.random() < 0.03: a = "".join(R.choice("ACGT") for _ in range(m))
    f1.write("@p%d/1\n%s\n+\n%s\n" % (i, a, qual(a)))
    f2.write("@p%d/2\n%s\n+\n%s\n" % (i, b, qual(b)))
' "$@"
}
