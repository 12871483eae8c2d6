# lib-pair.sh - paired-end helpers of the t8* tests, sourced after
# test-lib.sh and lib-extend.sh.

# gen_pairs SEED GENOME_LEN NPAIRS LEN MAXEDITS INDELS(0|1) INS_MEAN INS_SD
#   > ref.fa, r1.fq, r2.fq (mate 1 and 2 files, names pN/1 and pN/2)
# Genome: random with mutated copies (repeats), a tandem repeat, an N run,
# two sequences.  Pairs: a fragment of normal length, mate 1 its first LEN
# bases and mate 2 the reverse complement of its last (or the other way
# round, from the reverse strand), each with planted edits; a few mates
# random (no hit), a few fragments too long or short.
gen_pairs() {
	python3 - "$@" <<'PY'
import random, sys
seed, glen, npair, m, me, indel, imean, isd = map(int, sys.argv[1:9])
R = random.Random(seed)
def rnd(n): return ''.join(R.choice('ACGT') for _ in range(n))
def mutate(s, k, gaps):
    s = list(s)
    for _ in range(k):
        op = R.choice('SID') if gaps else 'S'
        j = R.randrange(len(s))
        if op == 'S': s[j] = R.choice('ACGT')
        elif op == 'I': s.insert(j, R.choice('ACGT'))
        elif len(s) > 1: del s[j]
    return ''.join(s)
g = rnd(glen)
for _ in range(6):
    a = R.randrange(0, glen - 500); b = R.randrange(0, glen - 500)
    g = g[:b] + mutate(g[a:a + 400], R.randrange(0, 3), indel) + g[b + 400:]
t = R.randrange(0, glen - 200)
g = g[:t] + ('ACG' * 30) + g[t + 90:]
n = R.randrange(0, glen - 100)
g = g[:n] + 'N' * 7 + g[n + 7:]
cut = glen * 2 // 3
seqs = [('s1', g[:cut]), ('s2', g[cut:])]
with open('ref.fa', 'w') as f:
    for name, s in seqs:
        f.write('>%s\n' % name)
        for i in range(0, len(s), 60): f.write(s[i:i + 60] + '\n')
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
