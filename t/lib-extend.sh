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
	PYTHONPATH="$TEST_DIR" python3 - "$@" <<'PY'
import random, sys
from gen_genome import rnd as rnd_, mutate as mutate_, genome, write_fasta
seed, glen, nr, lo, hi, me, indel = map(int, sys.argv[1:8])
R = random.Random(seed)
rnd = lambda n: rnd_(R, n)
mutate = lambda s, k, gaps: mutate_(R, s, k, gaps)
g = genome(R, glen, 4, 200, 3, indel)
cut = glen * 2 // 3
seqs = [('s1', g[:cut]), ('s2', g[cut:]), ('tiny', rnd(30))]
write_fasta('ref.fa', seqs)
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

# same_as_oracle A SAM [-g]: the hits of SAM are every hit of the full-DP
# oracle (-g: Hamming) within A for every read of reads.fq against ref.fa
same_as_oracle() {
	"$T"/ext_oracle ref.fa reads.fq $1 $3 | sort >expect &&
	sam2lines "$2" >actual &&
	test_cmp expect actual
}
