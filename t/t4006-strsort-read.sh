#!/bin/bash
test_description='strsort: a large file mapped or read in parallel pieces (SEEDPIPE_STRSORT_MAP=0), many thread counts, against LC_ALL=C sort'
. ./test-lib.sh

# big.py SEED SIZE: random lines (alphanumeric, 0-40 bytes, some empty, some
# with CR before the newline, a few of 5000 bytes) past SIZE bytes; the
# pieces of the parallel read (4 MiB) cut lines anywhere
cat >big.py <<'PY'
import random, sys
R = random.Random(int(sys.argv[1]))
size = int(sys.argv[2])
A = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
blob = R.randbytes(size + 10000).translate(bytes(A[i % len(A)] for i in range(256)))
out, pos = [], 0
while pos < size:
    k = R.random()
    n = 0 if k < 0.04 else 5000 if k < 0.041 else R.randrange(1, 41)
    s = blob[pos % size:pos % size + n]
    pos += n + 1
    out.append(s + (b"\r" if 0.04 < k < 0.09 else b""))
sys.stdout.buffer.write(b"\n".join(out) + b"\n")
PY

test_expect_success 'make the inputs (9 MB and more: the parallel read)' '
	python3 big.py 1 9500000 >big &&
	test $(wc -c <big) -gt 9437184 &&
	head -c -1 big >big-nonl &&
	python3 big.py 2 9000000 >big2 && head -c 4194303 big2 >>big2 &&
	LC_ALL=C sort big >big.sorted &&
	LC_ALL=C sort big-nonl >big-nonl.sorted &&
	LC_ALL=C sort big2 >big2.sorted
'

# sort_says J FILE TEXT [VAR=VALUE ...]: strsort -v -j J FILE, with VAR=VALUE
# in its environment, sorts and says TEXT (in ./err)
sort_says() {
	j=$1 f=$2 text=$3 && shift 3 &&
	env "$@" strsort -v -j $j $f 2>err >/dev/null &&
	test_grep "$text" err
}

test_expect_success 'the two ways are taken (-v)' '
	sort_says 4 big "mapped" &&
	sort_says 8 big "read in 3 pieces by 8 threads" &&
	sort_says 16 big "mapped" SEEDPIPE_STRSORT_MAP=1 &&
	sort_says 4 big "read in 3 pieces by 4 threads" SEEDPIPE_STRSORT_MAP=0 &&
	SEEDPIPE_STRSORT_MAP=0 strsort -v -j 1 big 2>err >/dev/null &&
	test_must_fail grep -q "pieces" err
'

test_expect_success 'whole lines, mapped and read, 1 to 16 threads' '
	for j in 1 2 3 4 7 16; do
		for m in 1 0; do
			SEEDPIPE_STRSORT_MAP=$m strsort -j $j big >out &&
			test_cmp big.sorted out &&
			SEEDPIPE_STRSORT_MAP=$m strsort -j $j big-nonl >out &&
			test_cmp big-nonl.sorted out &&
			SEEDPIPE_STRSORT_MAP=$m strsort -j $j big2 >out &&
			test_cmp big2.sorted out || return 1
		done
	done
'

# skew.py: 2.4 MB of lines, 300000 of them starting with "xy" (one bucket of
# the first radix pass far over the 65536 sorted by the threads together),
# the others spread
cat >skew.py <<'PY'
import random, sys
R = random.Random(5)
A = "abcdefghijklmnopqrstuvwxyz0123456789"
L = ["xy" + "".join(R.choice(A) for _ in range(R.randrange(0, 6))) for _ in range(300000)]
L += ["".join(R.choice(A) for _ in range(R.randrange(0, 9))) for _ in range(100000)]
R.shuffle(L)
sys.stdout.write("\n".join(L) + "\n")
PY

test_expect_success 'a bucket of most lines (sorted by every thread together)' '
	python3 skew.py >skew &&
	test $(grep -c ^xy skew) -ge 300000 &&
	LC_ALL=C sort skew >expect &&
	for j in 1 2 5 16; do
		strsort -j $j skew >out && test_cmp expect out || return 1
	done &&
	LC_ALL=C sort -r skew >expect && strsort -j 3 -r skew >out && test_cmp expect out &&
	LC_ALL=C sort -u skew >expect && strsort -j 3 -u skew >out && test_cmp expect out
'

test_expect_success 'read in pieces: -r, -u, -k and standard input' '
	for j in 2 5; do
		LC_ALL=C sort -r big >expect &&
		SEEDPIPE_STRSORT_MAP=0 strsort -j $j -r big >out && test_cmp expect out &&
		LC_ALL=C sort -u big >expect &&
		SEEDPIPE_STRSORT_MAP=0 strsort -j $j -u big >out && test_cmp expect out &&
		LC_ALL=C sort -k1.3,1.9 big2 >expect &&
		SEEDPIPE_STRSORT_MAP=0 strsort -j $j -k1.3,1.9 big2 >out && test_cmp expect out &&
		SEEDPIPE_STRSORT_MAP=0 strsort -j $j <big >out && test_cmp big.sorted out || return 1
	done
'

# more.py: inputs for the bucket scatter's shapes: DNA 24-mers (packed
# prefixes, 8-bit buckets), URL-like lines sharing a 23-byte start (the split
# skips it), and random bytes but the newline (nearly all 65536 buckets)
cat >more.py <<'PY'
import random, sys
R = random.Random(int(sys.argv[1]))
kind, n = sys.argv[2], int(sys.argv[3])
out = []
for i in range(n):
    if kind == "dna":
        out.append("".join(R.choice("ACGT") for _ in range(24)).encode())
    elif kind == "url":
        out.append(("http://www.example.com/%s/%d" % (R.choice(["a", "bb", "news", "x"]), R.randrange(100000))).encode())
    else:
        out.append(bytes(R.choice([b for b in range(256) if b != 10]) for _ in range(R.randrange(0, 12))))
sys.stdout.buffer.write(b"\n".join(out) + b"\n")
PY

test_expect_success 'the bucket scatter write-combined (SEEDPIPE_STRSORT_WC=1) or not (=0), and the heuristic (-v)' '
	python3 more.py 3 dna 120000 >dna &&
	python3 more.py 4 url 120000 >url &&
	python3 more.py 5 bin 200000 >bin &&
	sort_says 4 big "write-combined in 4 of 4 slices" &&
	sort_says 16 big "write-combined in 0 of 16 slices" &&
	sort_says 4 big "write-combined in 0 of 4 slices" SEEDPIPE_STRSORT_WC=0 &&
	sort_says 3 bin "write-combined in 3 of 3 slices" SEEDPIPE_STRSORT_WC=1 &&
	for f in big big-nonl big2 skew dna url bin; do
		LC_ALL=C sort $f >expect &&
		LC_ALL=C sort -s -k1.3,1.6 $f >expect-s &&
		for j in 1 3 16; do
			for w in 1 0; do
				SEEDPIPE_STRSORT_WC=$w strsort -j $j $f >out &&
				test_cmp expect out &&
				SEEDPIPE_STRSORT_WC=$w SEEDPIPE_STRSORT_MAP=0 strsort -j $j $f >out &&
				test_cmp expect out &&
				SEEDPIPE_STRSORT_WC=$w strsort -j $j -s -k1.3,1.6 $f >out &&
				test_cmp expect-s out || return 1
			done
		done
	done &&
	LC_ALL=C sort -r big2 >expect && SEEDPIPE_STRSORT_WC=1 strsort -j 5 -r big2 >out && test_cmp expect out &&
	LC_ALL=C sort -u big >expect && SEEDPIPE_STRSORT_WC=1 strsort -j 5 -u big >out && test_cmp expect out
'

test_done
