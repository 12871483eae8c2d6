# lib-extend.sh - helpers shared by the extend and pipeline tests (t3100,
# t5000), sourced after test-lib.sh: gen (random genome with repeats and
# planted reads) and sam2lines (SAM to oracle lines).

T=$SEEDPIPE_BUILD/t

# gen SEED GENOME_LEN NREADS MINLEN MAXLEN MAXEDITS INDELS(0|1) > ref.fa, reads.fq
# Genome: random, with mutated copies (repeats), a tandem repeat, an N run,
# two sequences plus a short one.  Reads: sampled anywhere (also over the
# sequence ends), half reverse-complemented, with planted substitutions
# (and indels), a few N.
gen() {
	python3 - "$@" <<'PY'
import random, sys
seed, glen, nr, lo, hi, me, indel = map(int, sys.argv[1:8])
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
# mutated copies of a few segments, and a short tandem repeat
for _ in range(4):
    a = R.randrange(0, glen - 300); b = R.randrange(0, glen - 300)
    g = g[:b] + mutate(g[a:a + 200], R.randrange(0, 4), indel) + g[b + 200:]
t = R.randrange(0, glen - 200)
g = g[:t] + ('ACG' * 30) + g[t + 90:]
n = R.randrange(0, glen - 100)
g = g[:n] + 'N' * 7 + g[n + 7:]
cut = glen * 2 // 3
seqs = [('s1', g[:cut]), ('s2', g[cut:]), ('tiny', rnd(30))]
with open('ref.fa', 'w') as f:
    for name, s in seqs:
        f.write('>%s\n' % name)
        for i in range(0, len(s), 60): f.write(s[i:i + 60] + '\n')
comp = str.maketrans('ACGTN', 'TGCAN')
with open('reads.fq', 'w') as f:
    for i in range(nr):
        m = R.randrange(lo, hi + 1)
        name, s = R.choice(seqs[:2])
        p = R.randrange(-5, len(s) - m + 5)
        r = s[max(p, 0):p + m]
        r = mutate(r, R.randrange(0, me + 1), indel) if r else rnd(m)
        if R.random() < 0.05: r = r[:3] + 'N' + r[4:]
        if R.random() < 0.5: r = r.translate(comp)[::-1]
        q = ''.join(chr(33 + R.randrange(2, 41)) for _ in r)
        f.write('@r%d\n%s\n+\n%s\n' % (i, r, q))
PY
}

# SAM (or BAM) to oracle lines: NAME STRAND SEQ POS NM CIGAR MD, or NAME *
sam2lines() {
	samtools view "$1" | awk -F'\t' '{
		f = $2
		if (int(f / 4) % 2) { print $1 "\t*"; next }
		nm = ""; md = ""
		for (i = 12; i <= NF; i++) {
			if ($i ~ /^NM:i:/) nm = substr($i, 6)
			if ($i ~ /^MD:Z:/) md = substr($i, 6)
		}
		print $1 "\t" (int(f / 16) % 2) * 16 "\t" $3 "\t" $4 "\t" nm "\t" $6 "\t" md
	}' | sort
}
