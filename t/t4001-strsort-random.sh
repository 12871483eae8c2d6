#!/bin/bash
test_description='strsort against LC_ALL=C sort -s on seeded random inputs of many shapes'
. ./test-lib.sh
# these cases compare with sort -s: strsort runs with -s (the last-resort
# comparison without -s is tested in t4020-strsort-keys*)
strsort() { command strsort -s "$@"; }

# gen.py SEED N: write case.K.in (one or more files: case.K.in, case.K.in2)
# and case.K.args for K in 0..N-1; inputs of many shapes: lengths, alphabets
# with NUL and bytes 0x01-0xff, CRLF, duplicates, unterminated last lines,
# numbers, separators and key definitions.
cat >gen.py <<'PY'
import random, sys
seed, n = int(sys.argv[1]), int(sys.argv[2])
R = random.Random(seed)
ALNUM = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
NUMS = [b"0", b"-0", b"0.0", b"-.5", b".5", b"12", b"012", b"1.50", b"1.5", b"abc", b"",
        b"-", b"--1", b"1e3", b"+5", b"-12", b"3.", b"-3.0001", b"99", b"100", b"1.05", b"-0.0", b" 7", b"\t-2", b"1\x80000", b"\x805", b"-\x800.5"]
def alphabet(z):
    k = R.randrange(7)
    if k == 0: a = b"ab"
    elif k == 1: a = b"abc \t:,"
    elif k == 2: a = ALNUM
    elif k == 3: a = b"0123456789-. "
    elif k == 4: a = bytes(range(1, 256))
    elif k == 5: a = bytes(range(0, 256))
    else: a = b"ACGT"
    bad = 0 if z else 10
    return bytes(c for c in a if c != bad)
def word(a, maxlen):
    return bytes(R.choice(a) for _ in range(R.randrange(maxlen + 1)))
def line(a, maxlen, numeric, seps):
    if numeric and R.random() < 0.7:
        f = [R.choice(NUMS) if R.random() < 0.6 else word(a, 4) for _ in range(R.randrange(1, 4))]
        return R.choice(seps).join(f)
    if seps and R.random() < 0.6:
        return R.choice(seps).join(word(a, maxlen // 3 + 1) for _ in range(R.randrange(1, 5)))
    return word(a, maxlen)
def keydef():
    f1 = R.randrange(1, 4)
    s = str(f1)
    if R.random() < 0.3: s += "." + str(R.randrange(1, 4))
    s += "".join(R.sample("bnr", R.randrange(0, 3))) if R.random() < 0.5 else ""
    if R.random() < 0.7:
        f2 = R.randrange(f1, 5)
        s += "," + str(f2)
        if R.random() < 0.3: s += "." + str(R.randrange(0, 4))
        s += "".join(R.sample("bnr", R.randrange(0, 3))) if R.random() < 0.3 else ""
    return s
for k in range(n):
    z = R.random() < 0.1
    a = alphabet(z)
    nlines = R.choice([0, 1, 2, 3, 10, 50, 200, 1000, 3000]) if R.random() < 0.97 else 40000
    maxlen = R.choice([0, 1, 3, 10, 30, 100])
    numeric = R.random() < 0.3
    tab = None
    args = []
    if R.random() < 0.4:
        tab = R.choice([b":", b",", b" ", b"\t"]); seps = [tab]
        args += ["-t", tab.decode()]
    else:
        seps = [b" ", b"\t", b"  "]
    pool = [line(a, maxlen, numeric, seps) for _ in range(max(1, nlines // R.choice([1, 2, 10, 100])))]
    lines = [R.choice(pool) for _ in range(nlines)]
    if R.random() < 0.05 and nlines:
        lines[R.randrange(nlines)] = bytes(R.choice(ALNUM) for _ in range(20000))
    if R.random() < 0.1:
        lines = sorted(lines, reverse=R.random() < 0.5)
    crlf = R.random() < 0.1 and not z
    d = b"\0" if z else b"\n"
    body = b"".join(l + (b"\r" if crlf else b"") + d for l in lines)
    if body and R.random() < 0.2:
        body = body[:-1]
    files = ["case.%d.in" % k]
    if R.random() < 0.15 and len(body) > 4:
        cut = body.index(d) + 1 if d in body else len(body)
        open("case.%d.in2" % k, "wb").write(body[cut:])
        body = body[:cut]
        files.append("case.%d.in2" % k)
    open(files[0], "wb").write(body)
    for _ in range(R.choice([0, 0, 1, 1, 2, 3])):
        args += ["-k", keydef()]
    for f in ["-r", "-u", "-n", "-b"]:
        if R.random() < (0.2 if f != "-n" else (0.3 if numeric else 0.05)):
            args.append(f)
    if z: args.append("-z")
    extra = ["-j", str(R.choice([1, 2, 3]))]
    if R.random() < 0.3:
        extra += ["--algorithm", R.choice(["msd_par", "msd16", "msd8", "mkqs"])]
    open("case.%d.args" % k, "w").write(" ".join("'%s'" % x for x in args) + "\n")
    open("case.%d.extra" % k, "w").write(" ".join(extra) + "\n")
    open("case.%d.files" % k, "w").write(" ".join(files) + "\n")
PY

# run_cases FIRST LAST: every case against sort -s, byte for byte
run_cases() {
	k=$1
	while [ $k -le $2 ]; do
		args=$(cat case.$k.args) && extra=$(cat case.$k.extra) && files=$(cat case.$k.files) &&
		eval "sort -s $args $files" >exp.$k &&
		eval "strsort $extra $args $files" >out.$k || { echo "case $k failed to run: $args"; return 1; }
		cmp -s exp.$k out.$k || { echo "case $k differs: strsort $extra $args $files"; return 1; }
		rm -f exp.$k out.$k
		k=$((k + 1))
	done
}

test_expect_success 'generate 400 random cases' '
	python3 gen.py 4001 400 &&
	test -f case.399.args
'

for g in 0 1 2 3 4 5 6 7; do
	test_expect_success "random cases $((g * 50))-$((g * 50 + 49)) match sort -s" "
		run_cases $((g * 50)) $((g * 50 + 49))
	"
done

test_done
