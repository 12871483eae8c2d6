#!/bin/bash
test_description='strsort key types (-n -h -g -M -f -d -i, per-key flags, several keys) against LC_ALL=C sort, without and with -s'
. ./test-lib.sh

# gen.py SEED N: case.K.in and case.K.args for K in 0..N-1: fields of
# numbers (signs, fractions, zeros, units, garbage, the 0x80 separator),
# months, words of mixed case and punctuation, empty fields and blanks;
# options drawn from a matrix of key types, flags, -b -r -u -s -z, -t and
# tiny -S (external runs)
cat >gen.py <<'PY'
import random, sys
seed, n = int(sys.argv[1]), int(sys.argv[2])
R = random.Random(seed)
NUMS = [b"0", b"-0", b"0.0", b"-.5", b".5", b"12", b"012", b"1.50", b"1.5", b"abc", b"",
        b"-", b"1e3", b"+5", b"-12", b"3.", b"-3.0001", b"99", b"100", b"1.05", b"-0.0",
        b" 7", b"\t-2", b"1\x80000", b"-\x800.5", b"0x1A", b"inf", b"-inf", b"1.5e-3",
        b"2K", b"2k", b"1M", b"-3G", b"0K", b"1.5T", b"7Y", b"1Q", b"00.000"]
MON = [b"jan", b"FEB", b"Mar", b" apr", b"may1", b"jun", b"jul", b"AUG", b"sep", b"oct",
       b"nov", b"dec", b"ja", b"", b"xyz", b"\tDec"]
def num():
    c = R.random()
    if c < 0.3:
        return R.choice(NUMS)
    s = R.choice([b"", b"-", b"", b" "])
    s += bytes(R.choice(b"0123456789") for _ in range(R.randrange(0, 25 if R.random() < 0.05 else 7)))
    if R.random() < 0.4:
        s += b"." + bytes(R.choice(b"0123456789") for _ in range(R.randrange(0, 5)))
    if R.random() < 0.2:
        s += R.choice([b"K", b"M", b"G", b"k", b"e2", b"x", b" y"])
    return s
def word():
    a = R.choice([b"abAB", b"aB-c.d ", b"xyz\x01\x7f\xe9", b"abc"])
    return bytes(R.choice(a) for _ in range(R.randrange(0, 6)))
def field(kind):
    return {0: num, 1: word, 2: lambda: R.choice(MON)}[kind]()
KT = [b"n", b"h", b"g", b"M", b"f", b"d", b"i", b"", b"fd", b"b", b"nr", b"hr", b"gr", b"Mr", b"fr", b"di", b"bn"]
GL = [b"-n", b"-h", b"-g", b"-M", b"-f", b"-d", b"-i", b"-fi", b"-b", b""]
for k in range(n):
    z = R.random() < 0.1
    delim = b"\0" if z else b"\n"
    sep = R.choice([b",", b":", None])
    nf = R.randrange(1, 5)
    kinds = [R.randrange(3) for _ in range(nf)]
    lines = []
    pool = []
    for _ in range(R.randrange(0, 400)):
        if pool and R.random() < 0.15:
            lines.append(R.choice(pool)); continue
        f = [field(kd) for kd in kinds]
        if sep is None:
            l = b"".join(R.choice([b" ", b"  ", b"\t"]) + x.replace(b" ", b"").replace(b"\t", b"") for x in f)
        else:
            l = sep.join(x.replace(sep, b"") for x in f)
        if R.random() < 0.05:
            l = l[:R.randrange(len(l) + 1)]
        lines.append(l); pool.append(l)
    data = delim.join(lines) + (delim if lines and R.random() < 0.9 else b"")
    open("case.%d.in" % k, "wb").write(data)
    args = []
    if sep is not None:
        args.append(b"-t" + sep)
    if R.random() < 0.25:
        args.append(R.choice(GL))
    else:
        for _ in range(R.randrange(1, 4)):
            f1 = R.randrange(1, nf + 2)
            spec = b"%d" % f1
            if R.random() < 0.2:
                spec += b".%d" % R.randrange(1, 3)
            spec += R.choice(KT)
            if R.random() < 0.7:
                spec += b",%d" % R.randrange(f1, nf + 2)
                if R.random() < 0.15:
                    spec += b".%d" % R.randrange(0, 3)
                spec += R.choice([b"", b"", b"b", b"n", b"r"])
            args.append(b"-k" + spec)
    for o, p in ((b"-r", 0.3), (b"-u", 0.25), (b"-s", 0.3), (b"-b", 0.15)):
        if R.random() < p:
            args.append(o)
    if z:
        args.append(b"-z")
    if R.random() < 0.15:
        args.append(b"-S" + R.choice([b"1K", b"2K", b"4K"]))
    open("case.%d.args" % k, "wb").write(b" ".join(b"'" + a + b"'" for a in args if a))
PY

# run_cases SEED N: strsort and LC_ALL=C sort give the same bytes
run_cases () {
	python3 gen.py $1 $2 || return 1
	k=0
	while test $k -lt $2; do
		args=$(cat case.$k.args)
		eval "LC_ALL=C sort $args case.$k.in" >exp.$k 2>/dev/null || { k=$((k + 1)); continue; }
		eval "strsort -T . $args case.$k.in" >out.$k || { echo "case $k failed to run: $args"; return 1; }
		cmp -s exp.$k out.$k || { echo "case $k differs: strsort $args case.$k.in"; return 1; }
		k=$((k + 1))
	done
}

for g in 1 2 3; do
	test_expect_success "random key matrix $g: byte-identical to LC_ALL=C sort" "
		run_cases $g 70
	"
done

test_expect_success 'numbers: every order of -n, -h, -g agrees with sort on one list' '
	printf "%s\n" 0 -0 00 0.0 -0.000 .0 . - "" 1 01 1.0 1.00 1.000001 0.999 -1 -1.0 -01.5 \
		-1.5 -1.49 10 9.99 99 100 1000000000000000000000000 -1000000000000000000000000 \
		1K 1k 2K 1M 0.5M -1K -2M 0K 1e3 1E3 0x10 inf -inf nan -nan " 3" "	-4" 1x 1.5.5 \
		"1$(printf "\200")000" 12345678901234567890.123 12345678901234567890.1229 >nums &&
	for o in -n -nr -h -hr -g -gr "-n -s" "-h -u" "-n -u -r"; do
		LC_ALL=C sort $o nums >exp && strsort $o nums >out && test_cmp exp out || return 1
	done
'

test_expect_success 'BED-like -k5,5nr -k1,1 and -o onto an input, in runs' '
	awk "BEGIN { srand(3); for (i = 0; i < 3000; i++) printf \"chr%d\\t%d\\t%d\\tx%d\\t%d\\t+\\n\", int(rand()*20), i, i+5, i%7, int(rand()*200) - 50 }" >bed &&
	LC_ALL=C sort -t "	" -k5,5nr -k1,1 bed >exp &&
	strsort -t "	" -k5,5nr -k1,1 bed >out && test_cmp exp out &&
	cp bed io && strsort -S 8K -T . -t "	" -k5,5nr -k1,1 -o io io && test_cmp exp io &&
	LC_ALL=C sort -s -t "	" -k5,5nr -k1,1 bed >exp &&
	strsort -s -j 2 -t "	" -k5,5nr -k1,1 bed >out && test_cmp exp out
'

test_expect_success 'options: -h is human-numeric, long options, -k FILE, --check' '
	printf "2K\n1M\n3\n" >h &&
	strsort -h h >out && printf "3\n2K\n1M\n" >exp && test_cmp exp out &&
	strsort --human-numeric-sort --reverse h >out && LC_ALL=C sort -hr h | test_cmp - out &&
	printf "b 2\na 10\n" >2024.tsv &&
	strsort --key=2,2n --field-separator=" " 2024.tsv >out && printf "b 2\na 10\n" | test_cmp - out &&
	strsort -k 2024.tsv >out && LC_ALL=C sort -k1,1 2024.tsv | test_cmp - out &&
	strsort --human-numeric-sort -c exp &&
	test_expect_code 1 strsort --check=quiet h &&
	test_expect_code 1 strsort -n -c h 2>err && test_grep "disorder: 1M" err
'

test_done
