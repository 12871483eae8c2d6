#!/usr/bin/env python3
"""repeats.py - is any read's seedfilt time out of proportion to its candidates?

Issue 4: "Highly repeated seeds (Alu, L1) must not make any read slow out of
proportion to the candidates it really has."  seedfilt has no per-read
timer, so for each method:

  1. one run of seedfilt over the sample reads, its stream printed by recview,
     gives each read's candidates and matches (the sum of the supports); the
     index's start lists give each read's SeedBlock neighborhoods (the sum,
     over its patterns, of the SeedBlock sizes: what bpr scans);
  2. the reads are split into strata by candidates (0, 1, 2-9, 10-99,
     100-999, >= 1000), plus the TOP reads with the most candidates and the
     TOP with the largest SeedBlock sums; each stratum is written as a FASTQ
     of PER reads (a small stratum is cycled) and seedfilt's filter stage is
     timed on it REPS times (median), whole (-v "searched in X s") and as
     the matching stage alone (-N: no positions, diagonals, sort, records);
  3. a model t = a + b * candidates per read is fitted to the candidate
     strata (least squares on relative errors) and every stratum's time is
     divided by the model's prediction (> 3: out of proportion);
  4. the SLOW reads most likely to be slowest (most candidates, most
     matches, largest SeedBlock sums) are timed alone: COPIES copies of the
     read in one file, time / COPIES (a read repeated finds its index lines
     in the cache: a lower bound for a cold read).

Prints a text table; with --rows FILE also writes markdown rows for the
"## filt-repeats" section of bench/RESULTS.md (bench/filt.sh repeats).
"""

import argparse
import mmap
import os
import re
import statistics
import struct
import subprocess
import sys
from array import array

STRATA = [("0", 0, 0), ("1", 1, 1), ("2-9", 2, 9), ("10-99", 10, 99),
          ("100-999", 100, 999), (">=1000", 1000, None)]


def die(msg):
    sys.stderr.write("repeats.py: %s\n" % msg)
    sys.exit(1)


# ---- index ---------------------------------------------------------------

def nbpos(grp, rep, j):
    """First position index of unique neighborhood J (red.grp, red.rep: seedpipe-index(5))."""
    g = 4 * (j >> 6)
    flags = grp[g + 2] | grp[g + 3] << 32
    r = bin(flags & ((1 << (j & 63)) - 1)).count("1")
    return j + grp[g] + (rep[grp[g + 1] + r - 1] if r else 0)


class Index:
    """The parameters and start lists of a seqidx index (seedpipe-index(5))."""

    def __init__(self, path):
        self.f = open(path, "rb")
        self.mm = mmap.mmap(self.f.fileno(), 0, access=mmap.ACCESS_READ)
        mm = self.mm
        if mm[0:8] != b"\x89SPX\r\n\x1a\n":
            die("%s: not a seedpipe index" % path)
        hlen = struct.unpack_from("<I", mm, 12)[0]
        self.w, self.span, self.l = struct.unpack_from("<III", mm, 24)
        shape = mm[72:104].split(b"\0")[0].decode()
        self.shape_pos = [i for i, c in enumerate(shape) if c == "#"]
        self.sec = {}   # name -> [(offset, length)] per partition
        off = (hlen + 63) // 64 * 64
        while off + 64 <= len(mm):
            name = mm[off:off + 16].split(b"\0")[0].decode()
            plen = struct.unpack_from("<Q", mm, off + 24)[0]
            self.sec.setdefault(name, []).append((off + 64, plen))
            if name == "end":
                break
            off = (off + 64 + plen + 63) // 64 * 64
        self.start = []
        if "gen.start" in self.sec:
            for o, n in self.sec["gen.start"]:
                a = array("I")
                a.frombytes(mm[o:o + n])
                self.start.append(a)
        elif "red.start" in self.sec:
            for (o, n), (o2, n2), (o3, n3) in zip(self.sec["red.start"], self.sec["red.grp"],
                                                  self.sec["red.rep"]):
                rs, grp, rep = array("I"), array("I"), array("I")
                rs.frombytes(mm[o:o + n])
                grp.frombytes(mm[o2:o2 + n2])
                rep.frombytes(mm[o3:o3 + n3])
                self.start.append(array("I", (nbpos(grp, rep, s) for s in rs)))
        else:
            die("%s: no general or reduced structure" % path)

    def block(self, code):
        """Neighborhoods in SeedBlock(code), all partitions (filt_cut.c block_size)."""
        return sum(a[code + 1] - a[code] for a in self.start)


DIG = bytes.maketrans(b"ACGTacgtNn", b"0123012344")
COMP = bytes.maketrans(b"0123", b"3210")


def seed_block_sum(ix, seq, v, skip_n_in_q):
    """Sum of the SeedBlock sizes of the patterns of SEQ (filt_cut), q length V."""
    d = seq.translate(DIG)
    n = len(d)
    win = ix.span + v
    if n < win:
        return 0
    rc = d.translate(COMP)[::-1]
    contiguous = ix.shape_pos == list(range(ix.w))
    w, span, one = ix.w, ix.span, ix.start[0] if len(ix.start) == 1 else None
    has_n = b"4" in d
    tot = 0
    for s in (d, rc):
        for o in range(0, n - win + 1):
            if has_n and b"4" in s[o:o + win]:
                if skip_n_in_q or b"4" in s[o:o + span]:
                    continue
            if contiguous:
                code = int(s[o:o + w][::-1], 4)
            else:
                code = int(bytes(s[o + p] for p in reversed(ix.shape_pos)), 4)
            tot += one[code + 1] - one[code] if one is not None else ix.block(code)
    return tot


# ---- reads ---------------------------------------------------------------

def read_fastq(path, limit):
    """The first LIMIT records of a 4-line FASTQ as (header, seq, qual)."""
    out = []
    with open(path, "rb") as f:
        while limit <= 0 or len(out) < limit:
            h = f.readline()
            if not h:
                break
            s, _, q = f.readline().rstrip(b"\n"), f.readline(), f.readline().rstrip(b"\n")
            if not h.startswith(b"@") or not q:
                die("%s: not a 4-line FASTQ (record %d)" % (path, len(out) + 1))
            out.append((h.rstrip(b"\n"), s, q))
    return out


def write_fastq(path, recs, n):
    """N records of RECS, cycled."""
    with open(path, "wb") as f:
        for i in range(n):
            h, s, q = recs[i % len(recs)]
            f.write(b"%s\n%s\n+\n%s\n" % (h, s, q))


# ---- seedfilt ------------------------------------------------------------

class Run:
    pass


def seedfilt(a, method, path, count_only=False):
    cmd = [os.path.join(a.bin, "seedfilt"), "-v", "-x", a.index, "-m", method,
           "-e", str(a.e), "-t", str(a.threads), "-d", a.dev]
    if count_only:
        cmd.append("-N")
    cmd.append(path)
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.decode(errors="replace")
    if p.returncode != 0:
        sys.stderr.write(err)
        die("seedfilt failed: %s" % " ".join(cmd))
    r = Run()
    m = re.search(r"SeedBlocks searched in ([0-9.]+) s", err)
    m2 = re.search(r"^seedfilt: (\d+) reads \(", err, re.M)
    m3 = re.search(r" (\d+) matches, (\d+) candidates", err)
    m4 = re.search(r"^seedfilt: (\d+) neighborhoods in the SeedBlocks", err, re.M)
    m5 = re.search(r"step \d+, (.*), \d+ threads;", err)
    if not (m and m2 and m3 and m4):
        sys.stderr.write(err)
        die("cannot parse the summary of %s" % " ".join(cmd))
    r.secs = float(m.group(1))
    r.reads = int(m2.group(1))
    r.matches, r.cands = int(m3.group(1)), int(m3.group(2))
    r.nbs = int(m4.group(1))
    r.dev = re.sub(r" \(.*", "", m5.group(1)) if m5 else a.dev
    return r


def timed(a, method, path, count_only=False):
    """Median filter seconds of REPS runs, and the last run."""
    runs = [seedfilt(a, method, path, count_only) for _ in range(a.reps)]
    return statistics.median(r.secs for r in runs), runs[-1]


def per_read_counts(a, method, path, n):
    """Candidates and matches of each read of PATH (one run, recview)."""
    sf = subprocess.Popen([os.path.join(a.bin, "seedfilt"), "-v", "-x", a.index,
                           "-m", method, "-e", str(a.e), "-t", str(a.threads),
                           "-d", a.dev, path], stdout=subprocess.PIPE,
                          stderr=open(os.path.join(a.work, "sample.err"), "wb"))
    rv = subprocess.Popen([os.path.join(a.bin, "recview"), "-"], stdin=sf.stdout,
                          stdout=subprocess.PIPE)
    sf.stdout.close()
    # candidates, then matches = the sum of the supports (last field of each)
    aw = subprocess.Popen(["awk", "-F", "\t", 'NR > 1 { n = split($7, c, ","); s = 0; '
                           'for (i = 1; i <= n; i++) { m = split(c[i], f, ":"); s += f[m] } '
                           'print $6, s }'], stdin=rv.stdout, stdout=subprocess.PIPE)
    rv.stdout.close()
    out = aw.communicate()[0].split(b"\n")
    if sf.wait() or rv.wait() or aw.returncode:
        die("seedfilt | recview failed on %s" % path)
    cand, mat = array("l"), array("l")
    for ln in out:
        if ln:
            c, m = ln.split()
            cand.append(int(c))
            mat.append(int(m))
    if len(cand) != n:
        die("%d reads in, %d candidate records out" % (n, len(cand)))
    with open(os.path.join(a.work, "sample.err")) as f:
        m = re.search(r"^seedfilt: (\d+) neighborhoods in the SeedBlocks", f.read(), re.M)
    return cand, mat, int(m.group(1)) if m else -1


def fit(points):
    """a, b of t = a + b c minimising the squared relative error (t, c pairs)."""
    # weights 1/t^2: minimise sum ((a + b c - t) / t)^2
    sw = swc = swcc = swt = swct = 0.0
    for c, t in points:
        w = 1.0 / (t * t)
        sw += w
        swc += w * c
        swcc += w * c * c
        swt += w * t
        swct += w * c * t
    det = sw * swcc - swc * swc
    if len(points) < 2 or det <= 0:
        return (points[0][1] if points else 0.0), 0.0
    b = (sw * swct - swc * swt) / det
    a = (swt - b * swc) / sw
    return a, b


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-x", "--index", required=True)
    ap.add_argument("-r", "--reads", required=True, help="4-line FASTQ")
    ap.add_argument("--nreads", type=int, default=0, help="first N reads [all]")
    ap.add_argument("--bin", default="bin")
    ap.add_argument("--methods", default="ph bs bpr")
    ap.add_argument("-e", type=int, default=1)
    ap.add_argument("-t", "--threads", type=int, default=2)
    ap.add_argument("-d", "--dev", default="none")
    ap.add_argument("--per", type=int, default=20000, help="reads per stratum file")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--top", type=int, default=1000)
    ap.add_argument("--slow", type=int, default=5, help="reads per list timed alone (0: none)")
    ap.add_argument("--copies", type=int, default=200)
    ap.add_argument("--work", default="/tmp/repeats")
    ap.add_argument("--rows", help="append markdown rows here")
    ap.add_argument("--prefix", default="", help="first cells of each row (date | machine)")
    ap.add_argument("--ref", default="-", help="reference tag of the rows")
    a = ap.parse_args()

    os.makedirs(a.work, exist_ok=True)
    ix = Index(a.index)
    recs = read_fastq(a.reads, a.nreads)
    if not recs:
        die("no reads in %s" % a.reads)
    sample = a.reads
    if a.nreads > 0:
        sample = os.path.join(a.work, "sample.fq")
        write_fastq(sample, recs, len(recs))
    rows = []
    print("# %d reads of %s, index %s (w %d, l %d), e = %d, -t %d, -d %s, %d reads per "
          "stratum, median of %d" % (len(recs), a.reads, a.index, ix.w, ix.l, a.e,
                                     a.threads, a.dev, a.per, a.reps))
    nb_cache = {}
    for method in a.methods.split():
        v = ix.l - a.e if method == "bpr" else ix.l
        cand, mat, nb_tot = per_read_counts(a, method, sample, len(recs))
        if v not in nb_cache:
            nb_cache[v] = array("q", (seed_block_sum(ix, s, v, method != "bpr")
                                      for _, s, _ in recs))
        nbs = nb_cache[v]
        if sum(nbs) != nb_tot:   # the per-read SeedBlock sums are filt_cut's
            die("%s: SeedBlock neighborhoods %d here, %d by seedfilt" % (method, sum(nbs), nb_tot))
        idx = range(len(recs))
        strata = []
        for name, lo, hi in STRATA:
            strata.append((name, [i for i in idx if cand[i] >= lo and (hi is None or cand[i] <= hi)], 1))
        top = min(a.top, len(recs))
        strata.append(("top %d cands" % top, sorted(idx, key=lambda i: -cand[i])[:top], 0))
        strata.append(("top %d SeedBlocks" % top, sorted(idx, key=lambda i: -nbs[i])[:top], 0))
        res = []
        for name, sel, is_bin in strata:
            if not sel:
                continue
            path = os.path.join(a.work, "stratum.fq")
            n = a.per
            # a big stratum: a spread sample, not its first reads
            pick = [recs[sel[k * len(sel) // n]] for k in range(n)] if len(sel) >= n \
                else [recs[i] for i in sel]
            write_fastq(path, pick, n)
            t, r = timed(a, method, path)
            tn, rn = timed(a, method, path, count_only=True)
            res.append(dict(name=name, distinct=min(len(sel), n), bin=is_bin, n=r.reads,
                            c=r.cands / r.reads, m=r.matches / r.reads, nb=r.nbs / r.reads,
                            t=t / r.reads, tn=tn / r.reads, dev=r.dev))
        a_, b_ = fit([(x["c"], x["t"]) for x in res if x["bin"]])
        dev = res[0]["dev"] if res else a.dev
        print("\n## %s (%s): model t = %.3g us + %.3g us x candidates (fit on the candidate "
              "strata)" % (method, dev, a_ * 1e6, b_ * 1e6))
        print("%-18s %8s %10s %10s %12s %10s %10s %10s %10s %8s" % (
            "stratum", "reads", "cand/read", "match/read", "SB nb/read", "us/read",
            "us (-N)", "us/(c+1)", "model us", "t/model"))
        for x in res:
            pred = a_ + b_ * x["c"]
            ratio = x["t"] / pred if pred > 0 else float("inf")
            x["pred"], x["ratio"] = pred, ratio
            print("%-18s %8d %10.1f %10.1f %12.0f %10.2f %10.2f %10.4f %10.2f %8.2f" % (
                x["name"], x["distinct"], x["c"], x["m"], x["nb"], x["t"] * 1e6,
                x["tn"] * 1e6, x["t"] * 1e6 / (x["c"] + 1), pred * 1e6, ratio))
            rows.append("| %s | %s, %d threads | %s | %s | %s | %d | %.1f | %.1f | %.0f | %.2f | "
                        "%.2f | %.4f | %.2f | %.2f |" % (
                            a.prefix, dev, a.threads, a.ref, method, x["name"], x["distinct"],
                            x["c"], x["m"], x["nb"], x["t"] * 1e6, x["tn"] * 1e6,
                            x["t"] * 1e6 / (x["c"] + 1), pred * 1e6, ratio))
        rows.append("| %s | %s, %d threads | %s | %s | model: a + b x cand | - | - | - | - | "
                    "a = %.3g | - | b = %.3g | - | - |" % (a.prefix, dev, a.threads, a.ref,
                                                        method, a_ * 1e6, b_ * 1e6))
        if a.slow <= 0:
            continue
        pick = []
        for key in (cand, mat, nbs):
            for i in sorted(idx, key=lambda i: -key[i])[:a.slow]:
                if i not in pick:
                    pick.append(i)
        slow = []
        for i in pick:
            path = os.path.join(a.work, "read.fq")
            write_fastq(path, [recs[i]], a.copies)
            t, r = timed(a, method, path)
            pred = a_ + b_ * cand[i]
            slow.append((t / r.reads, i, pred))
        slow.sort(reverse=True)
        print("slowest of %d reads timed alone (%d copies each):" % (len(pick), a.copies))
        for t, i, pred in slow[:3]:
            name = recs[i][0][1:].split()[0].decode()
            print("  %s %s: %.1f us, %d cands, %d matches, %d SeedBlock nbs, model %.1f us, "
                  "t/model %.2f" % (name, recs[i][1].decode(), t * 1e6, cand[i], mat[i],
                                    nbs[i], pred * 1e6, t / pred if pred > 0 else 0))
        t, i, pred = slow[0]
        rows.append("| %s | %s, %d threads | %s | %s | slowest read %s | 1 | %d | %d | %d | "
                    "%.2f | - | %.4f | %.2f | %.2f |" % (
                        a.prefix, dev, a.threads, a.ref, method,
                        recs[i][0][1:].split()[0].decode(), cand[i], mat[i], nbs[i],
                        t * 1e6, t * 1e6 / (cand[i] + 1), pred * 1e6,
                        t / pred if pred > 0 else 0))
    if a.rows:
        with open(a.rows, "a") as f:
            for r in rows:
                f.write(r + "\n")


if __name__ == "__main__":
    main()
