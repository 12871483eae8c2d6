"""gen_genome.py - the random genome and the read mutations shared by the
test generators of lib-extend.sh (gen) and lib-pair.sh (gen_pairs), which
import it (PYTHONPATH=$TEST_DIR).  Every draw goes through the caller's
random.Random, so a seed gives the same files as ever.
"""


def rnd(R, n):
    """N random bases."""
    return ''.join(R.choice('ACGT') for _ in range(n))


def _edit(R, s, k, draw):
    """S with K edits, DRAW(len) giving each one's (op, place) in S, I, D;
    the new base of a substitution or an insertion drawn after them."""
    s = list(s)
    for _ in range(k):
        op, j = draw(len(s))
        if op == 'S':
            s[j] = R.choice('ACGT')
        elif op == 'I':
            s.insert(j, R.choice('ACGT'))
        elif len(s) > 1:
            del s[j]
    return ''.join(s)


def mutate(R, s, k, gaps):
    """S with K random edits: substitutions, or with GAPS any of S, I, D
    (for each the kind, then the place)."""
    def draw(n):
        op = R.choice('SID') if gaps else 'S'
        return op, R.randrange(n)
    return _edit(R, s, k, draw)


def genome(R, glen, copies, seg, maxedit, gaps, tandem=True):
    """GLEN random bases with COPIES mutated copies of SEG-base segments
    (up to MAXEDIT edits each), a tandem repeat (ACG x 30, unless not
    TANDEM) and a run of 7 N."""
    g = rnd(R, glen)
    for _ in range(copies):
        a = R.randrange(0, glen - seg - 100)
        b = R.randrange(0, glen - seg - 100)
        g = g[:b] + mutate(R, g[a:a + seg], R.randrange(0, maxedit + 1), gaps) + g[b + seg:]
    t = R.randrange(0, glen - 200)
    if tandem:
        g = g[:t] + ('ACG' * 30) + g[t + 90:]
    n = R.randrange(0, glen - 100)
    return g[:n] + 'N' * 7 + g[n + 7:]


def write_fasta(path, seqs):
    """SEQS (name, bases) as FASTA, 60 bases a line."""
    with open(path, 'w') as f:
        for name, s in seqs:
            f.write('>%s\n' % name)
            for i in range(0, len(s), 60):
                f.write(s[i:i + 60] + '\n')


def mutate_any(R, s, k):
    """S with K random edits: for each a place, then a substitution (half
    the time), an insertion or a deletion."""
    def draw(n):
        j = R.randrange(n)
        return R.choice('SSID'), j
    return _edit(R, s, k, draw)


def write_cuts(R, nseq, path):
    """A random partition of NSEQ sequences (1 to NSEQ parts): its cut
    points, 0 first and NSEQ last, on one line of PATH."""
    k = R.randrange(1, nseq + 1)
    cuts = sorted(R.sample(range(1, nseq), k - 1))
    with open(path, 'w') as f:
        f.write(' '.join(map(str, [0] + cuts + [nseq])) + '\n')
