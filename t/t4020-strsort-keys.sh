#!/bin/bash
test_description='strsort key types (-n -h -g -M -V -R -f -d -i, per-key flags, several keys), -m, -c and -o onto an input against LC_ALL=C sort, without and with -s'
. ./test-lib.sh

# gen.py SEED N: case.K.in and case.K.args for K in 0..N-1: fields of
# numbers (signs, fractions, zeros, units, garbage, the 0x80 separator),
# months, words of mixed case and punctuation, version-like names (dots,
# '~', suffixes, leading zeros), empty fields and blanks;
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
VER = [b"a", b"B", b"z", b"0", b"1", b"9", b"00", b"10", b".", b"~", b"-", b"_", b"..",
       b".tar", b".gz", b".1", b"~rc", b"\x80", b"\xff", b"\x01", b"x", b"2.0"]
def ver():
    return b"".join(R.choice(VER) for _ in range(R.randrange(0, 6)))
def field(kind):
    return {0: num, 1: word, 2: lambda: R.choice(MON), 3: ver}[kind]()
KT = [b"n", b"h", b"g", b"M", b"f", b"d", b"i", b"", b"fd", b"b", b"nr", b"hr", b"gr", b"Mr", b"fr", b"di", b"bn",
      b"V", b"Vr", b"fV", b"bV", b"R", b"Rr", b"dR", b"fR"]
GL = [b"-n", b"-h", b"-g", b"-M", b"-f", b"-d", b"-i", b"-fi", b"-b", b"", b"-V", b"-R", b"-Vf"]
for k in range(n):
    z = R.random() < 0.1
    delim = b"\0" if z else b"\n"
    sep = R.choice([b",", b":", None])
    nf = R.randrange(1, 5)
    kinds = [R.randrange(4) for _ in range(nf)]
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
    if any(b"R" in a for a in args if not a.startswith(b"-t")):
        args.append(b"--random-source=rs")
    open("case.%d.args" % k, "wb").write(b" ".join(b"'" + a + b"'" for a in args if a))
PY

# run_cases SEED N [OPTS]: strsort (with OPTS) and LC_ALL=C sort give the same bytes
run_cases () {
	python3 gen.py $1 $2 || return 1
	k=0
	while test $k -lt $2; do
		args=$(cat case.$k.args)
		eval "LC_ALL=C sort $args case.$k.in" >exp.$k 2>/dev/null || { k=$((k + 1)); continue; }
		eval "strsort -T . $3 $args case.$k.in" >out.$k || { echo "case $k failed to run: $args"; return 1; }
		cmp -s exp.$k out.$k || { echo "case $k differs: strsort $args case.$k.in"; return 1; }
		case $((k % 3)) in
		0)	# -m: the input in three parts sorted by sort, merged by both
			split -n l/3 case.$k.in part.$k. 2>/dev/null || { k=$((k + 1)); continue; }
			for p in part.$k.*; do eval "LC_ALL=C sort $args $p" >$p.s || return 1; done
			eval "LC_ALL=C sort -m $args part.$k.*.s" >mexp.$k &&
			eval "strsort -T . -m $args part.$k.*.s" >mout.$k &&
			cmp -s mexp.$k mout.$k || { echo "case $k: -m differs: strsort -m $args"; return 1; } ;;
		1)	# -o onto the input
			cp case.$k.in io.$k && eval "strsort -T . $args -o io.$k io.$k" &&
			cmp -s exp.$k io.$k || { echo "case $k: -o onto the input differs: $args"; return 1; } ;;
		2)	# -c and -C agree with sort -c on the input and on its sorted output
			for f in case.$k.in exp.$k; do
				eval "LC_ALL=C sort -C $args $f" 2>/dev/null; e=$?
				eval "strsort -C $args $f"; g=$?
				test $e = $g || { echo "case $k: -C on $f: status $g, sort says $e: $args"; return 1; }
			done ;;
		esac
		k=$((k + 1))
	done
}

printf "0123456789abcdef-a-random-seed\n" >rs

for g in 1 2 3; do
	test_expect_success "random key matrix $g: byte-identical to LC_ALL=C sort" "
		run_cases $g 70
	"
done

# the encoded keys in narrow slots: strings cut after 1, 2, 4 or 8 bytes,
# and the groups of equal cut windows sorted in slots again (from 2 or 8
# lines on) or whole; with threads, the slots are filled in slices
for sl in 2,2 3,8 5 9,4; do
	test_expect_success "random key matrix in slots of ${sl%%,*} bytes: byte-identical to sort" "
		(export SEEDPIPE_STRSORT_SLOT=$sl && run_cases 4${sl%%,*} 40 '-j 3')
	"
done

# the last-resort pass in tiny pieces: groups of tied keys that cross
# pieces, and big groups (8 lines on) sorted after the pieces with every
# thread
for lr in 1,2 3,8 16,4; do
	test_expect_success "random key matrix, last resort in pieces of ${lr%%,*} lines: byte-identical to sort" "
		(export SEEDPIPE_STRSORT_LR=$lr && run_cases 5${lr%%,*} 30 '-j 3')
	"
done

test_expect_success 'numbers: every order of -n, -h, -g agrees with sort on one list' '
	printf "%s\n" 0 -0 00 0.0 -0.000 .0 . - "" 1 01 1.0 1.00 1.000001 0.999 -1 -1.0 -01.5 \
		-1.5 -1.49 10 9.99 99 100 1000000000000000000000000 -1000000000000000000000000 \
		1K 1k 2K 1M 0.5M -1K -2M 0K 1e3 1E3 0x10 inf -inf nan -nan " 3" "	-4" 1x 1.5.5 \
		"1$(printf "\200")000" "$(printf "\200")1Z" "1$(printf "\200")1Z" 2Z 12345678901234567890.123 12345678901234567890.1229 >nums &&
	for o in -n -nr -h -hr -g -gr "-n -s" "-h -u" "-n -u -r"; do
		LC_ALL=C sort $o nums >exp && strsort $o nums >out && test_cmp exp out || return 1
	done
'

test_expect_success 'versions: -V on names with dots, suffixes, tildes and zeros agrees with sort' '
	printf "%s\n" "" . .. ... .a .A9 .~ .~rc- .~9 .tar.gz a a~ a0 a00 a01 a1 a1~ a1b a.b a.b~ \
		a.tar.gz a.tar a-1.2.gz a-1.10.gz a-1.2~rc1.gz 1.2 1.10 1.02 01.2 1.2.3 1.2a 1.2~ \
		x.A9 x.~rc- ~ ~~ "~1" 0 00 000 9 10 "a b" "a	b" "$(printf "a\200")" "$(printf "\377x")" \
		lib.so.1 lib.so.10 lib.so.9a foo-2.0.tgz foo-2.0~beta.tgz >vers &&
	for o in -V -Vr "-V -s" "-V -u" -Vf "-k1.2V" "-V -m"; do
		LC_ALL=C sort $o vers >exp && strsort $o vers >out && test_cmp exp out || return 1
	done
'

test_expect_success '-R: the order of sort -R with the same --random-source; errors' '
	printf "%s\n" b a c a B "" "a " b 10 9 a >r &&
	for o in -R -Rr "-R -u" "-R -s" -Rf "-k1,1R -k1,1r"; do
		LC_ALL=C sort $o --random-source=rs r >exp && strsort $o --random-source=rs r >out &&
		test_cmp exp out || return 1
	done &&
	printf short >rs.short &&
	test_expect_code 1 strsort -R --random-source=rs.short r 2>err && test_grep "end of file" err &&
	test_expect_code 1 strsort -R --random-source=nonexistent r 2>err &&
	test_grep "random source .nonexistent." err &&
	strsort -R r >o1 && strsort -R r >o2 && sort r >s1 && sort o1 | test_cmp s1 -
'

test_expect_success '-m: stdin, an input without its last newline, -u, -o onto an input' '
	printf "a\nc\ne" >m1 && printf "b\nc\nd\n" >m2 && printf "a\nf\n" >m3 &&
	LC_ALL=C sort -m m1 - m3 <m2 >exp && strsort -m m1 - m3 <m2 >out && test_cmp exp out &&
	LC_ALL=C sort -m -u m1 m2 m3 >exp && strsort -m -u m1 m2 m3 >out && test_cmp exp out &&
	cp m2 io && strsort -m -o io m1 io m3 && LC_ALL=C sort -m m1 m2 m3 | test_cmp - io &&
	test_expect_code 1 strsort -m m1 nonexistent 2>err && test_grep "nonexistent" err
'

test_expect_success '-m: more inputs than one merge takes (groups through runs), -u across them' '
	mkdir many && i=0 &&
	while test $i -lt 150; do
		printf "k%03d\nk%03d\n" $((i * 7 % 101)) $((i * 13 % 97)) | LC_ALL=C sort >many/f$i || return 1
		i=$((i + 1))
	done &&
	LC_ALL=C sort -m many/f* >exp && strsort -T . -m many/f* >out && test_cmp exp out &&
	LC_ALL=C sort -m -u many/f* >exp && strsort -T . -m -u many/f* >out && test_cmp exp out
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

test_expect_success 'options: incompatible orderings as sort; --files0-from; --batch-size' '
	printf "b\na\n" >f1 && printf "c\na\n" >f2 &&
	for o in -nV -nM -gh -dn "-k1,1nR" "-k1,1in" "-g -V"; do
		test_expect_code 2 strsort $o f1 2>err && test_must_fail sort $o f1 2>exp &&
		sed "s/^sort:/strsort:/" exp | test_cmp - err || return 1
	done &&
	printf "f1\0f2\0" >names && LC_ALL=C sort f1 f2 >exp &&
	strsort --files0-from=names >out && test_cmp exp out &&
	strsort --files0-from=- <names >out && test_cmp exp out &&
	test_expect_code 2 strsort --files0-from=names f1 &&
	printf "f1\0\0" >names0 && test_expect_code 1 strsort --files0-from=names0 2>err &&
	test_grep "zero-length" err &&
	strsort --batch-size=2 -m f1 f2 >out && LC_ALL=C sort -m f1 f2 | test_cmp - out &&
	test_expect_code 2 strsort --batch-size=1 f1
'

test_done
