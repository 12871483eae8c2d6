#!/bin/bash
test_description='reads flush with either end of every sequence, and with the edges of N runs, keep every hit within the bound that seedfilt -v states, with every method: bpr finds the windows whose neighborhood runs past the sequence end or into N (index format 4)'
. ./test-lib.sh

. "$TEST_DIR"/lib-extend.sh

# ends_data SEED M A: ref.fa (five sequences of 90 to 3000 bases; N runs
# in two of them, one 20 bases from an end) and reads.fq: reads of M bases
# flush with both ends of every sequence and with both edges of every N
# run, on both strands, with 0..A substitutions placed at the outer bases
# (next to the end), at the inner bases (in the read's first patterns) or at
# random; and one with a deletion, an insertion and A - 2 substitutions
# (names end in "g"; length M too), which only edit distance counts.
ends_data() {
	python3 - "$@" <<'PY'
import random, sys
seed, m, a = map(int, sys.argv[1:4])
R = random.Random(seed)
rnd = lambda n: ''.join(R.choice('ACGT') for _ in range(n))
lens = [3000, 1200, 90, 2000, 700]
seqs = []
for i, n in enumerate(lens):
    s = rnd(n)
    if i == 1: s = s[:500] + 'N' * 12 + s[512:]
    if i == 3: s = s[:n - 20 - 9] + 'N' * 9 + s[n - 20:]
    seqs.append(('c%d' % i, s))
with open('ref.fa', 'w') as f:
    for name, s in seqs:
        f.write('>%s\n' % name)
        for i in range(0, len(s), 70): f.write(s[i:i + 70] + '\n')
comp = str.maketrans('ACGTN', 'TGCAN')
sub = lambda c: R.choice([b for b in 'ACGT' if b != c])
out = open('reads.fq', 'w')
k = 0
def emit(r, tag):
    global k
    if R.random() < 0.5: r = r.translate(comp)[::-1]
    out.write('@r%d_%s\n%s\n+\n%s\n' % (k, tag, r, 'I' * len(r)))
    k += 1
for name, s in seqs:
    # stretches free of N and their edges: (start, end) of each
    st, i = [], 0
    while i < len(s):
        if s[i] == 'N': i += 1; continue
        j = i
        while j < len(s) and s[j] != 'N': j += 1
        st.append((i, j)); i = j
    for b, e in st:
        if e - b < m: continue
        for side in ('start', 'end'):
            r0 = s[b:b + m] if side == 'start' else s[e - m:e]
            for ne in range(a + 1):
                for where in ('outer', 'inner', 'random'):
                    r = list(r0)
                    if where == 'random': pos = R.sample(range(m), ne)
                    else:
                        near_end = (side == 'end') == (where == 'outer')
                        pos = [m - 1 - 2 * t for t in range(ne)] if near_end else [2 * t for t in range(ne)]
                    for p in pos: r[p] = sub(r[p])
                    emit(''.join(r), '%s_%s_%d%s' % (name, side, ne, where[0]))
            # a deletion and an insertion (the length stays m), a - 2 substitutions
            r = list(r0)
            del r[R.randrange(1, m - 1)]
            r.insert(R.randrange(1, m - 1), R.choice('ACGT'))
            for p in R.sample(range(m), max(a - 2, 0)): r[p] = sub(r[p])
            emit(''.join(r), '%s_%s_g' % (name, side))
PY
}

# the bounds seedfilt -v states: "K J" (substitutions, edit operations)
stated() {
	sed -n "s/.*every occurrence with at most \([0-9]*\) substitutions and at most \([0-9]*\) edit operations yields a candidate.*/\1 \2/p" "$1" | head -n 1
}

# check NAME INDEX SEEDFILT_OPTIONS: the hits of seedfilt OPTIONS | extend
# within the stated bounds equal the oracle's (Hamming with K, edit
# distance with J); N substitution-only reads of the ends checked at least
check() {
	seedfilt -v -x $2 $3 -L $(awk "NR == 2 { print length(\$0) }" reads.fq) </dev/null 2>sens.$1 >/dev/null &&
	set -- $1 $2 "$3" $(stated sens.$1) &&
	test -n "$4" && test -n "$5" &&
	echo "$1: seedfilt $3 guarantees $4 substitutions, $5 edit operations" &&
	seedfilt -q -x $2 $3 reads.fq >c.$1.sp &&
	extend -q -e $4 --no-gaps c.$1.sp >g.$1.sam 2>err && ! grep warning err &&
	"$T"/ext_oracle ref.fa reads.fq $4 -g | sort >want.g.$1 &&
	sam2lines g.$1.sam >got.g.$1 &&
	test_cmp want.g.$1 got.g.$1 &&
	extend -q -e $5 c.$1.sp >e.$1.sam 2>err && ! grep warning err &&
	"$T"/ext_oracle ref.fa reads.fq $5 | sort >want.e.$1 &&
	sam2lines e.$1.sam >got.e.$1 &&
	test_cmp want.e.$1 got.e.$1
}

# a read of the last 40 bases of a 300-base sequence with substitutions at
# its bases 3, 12 and 31: of bpr -e 12 -s 9's four patterns per strand, the
# two whose seeds are exact start at 18 and 27, and their windows (seed 9 +
# neighborhood 16) run past the sequence end
test_expect_success SAMTOOLS 'the minimal case: a 40-bp read ending at the last base, 3 substitutions, bpr -e 12 -s 9 on u 9 l 16' '
	python3 -c "
import random
R = random.Random(7)
g = \"\".join(R.choice(\"ACGT\") for _ in range(300))
r = list(g[-40:])
for j in (2, 11, 30): r[j] = {\"A\": \"C\", \"C\": \"G\", \"G\": \"T\", \"T\": \"A\"}[r[j]]
open(\"one.fa\", \"w\").write(\">s\\n\" + g + \"\\n\")
open(\"one.fq\", \"w\").write(\"@end\\n\" + \"\".join(r) + \"\\n+\\n\" + \"I\" * 40 + \"\\n\")
" &&
	seqidx -q -u 9 -l 16 -o one.sx one.fa &&
	seedfilt -q -x one.sx -m bpr -e 12 -s 9 one.fq | extend -q -e 3 --no-gaps >one.sam &&
	samtools view one.sam | cut -f 1-4,6 >got &&
	printf "end\t0\ts\t261\t40M\n" >want &&
	test_cmp want got
'

test_expect_success 'the data: five sequences, N runs, 40-bp reads flush with every end' '
	ends_data 71 40 3 &&
	test $(grep -c "^@" reads.fq) -ge 150 &&
	seqidx -q -u 9 -l 16 -m all -o x16.sx ref.fa &&
	seqidx -q -u 5 -l 8 -m all -p 2600 -o x8.sx ref.fa &&
	seqidx --info x8.sx | grep -q "^partitions	[2-9]"
'

for m in "bpr16 x16.sx -m bpr -e 12 -s 9" "bpr16b x16.sx -m bpr -e 6 -s 4" "bpr8 x8.sx -m bpr -e 2 -s 5" \
	"bs8 x8.sx -m bs -e 2 -s 1" "ph8 x8.sx -m ph -e 3 -s 2" "fm8 x8.sx -m fm -e 2 -s 1" \
	"bs16 x16.sx -m bs -e 3 -s 1" "ph16 x16.sx -m ph -e 3 -s 1" "fm16 x16.sx -m fm -e 3 -s 1" \
	"auto16 x16.sx -E 3" "auto8 x8.sx -E 3" "default16 x16.sx" "default8 x8.sx"
do
	set -- $m
	name=$1 ix=$2
	shift 2
	test_expect_success SAMTOOLS "$name: seedfilt -x $ix $* | extend within the stated bounds equals the oracle" '
		check '"$name $ix \"$*\""'
	'
done

test_done
