#!/bin/bash
test_description='strsort -d DEVICE: the device prefix sort (PoCL, else a GPU) against sort -s and the CPU path'
. ./test-lib.sh
# these cases compare with sort -s: strsort runs with -s (the last-resort
# comparison without -s is tested in t4020-strsort-keys*)
strsort() { command strsort -s "$@"; }

# the device under test: an OpenCL CPU device (PoCL) where there is one, else a GPU
dev=$("$SEEDPIPE_BUILD"/t/ocl_test --list 2>/dev/null |
	awk -F'\t' '$2 == "cpu" { c = 1 } $2 == "gpu" { g = 1 } END { print c ? "cpu" : g ? "gpu" : "none" }')

# gen.py SEED N: case.K.in and case.K.args for K in 0..N-1, shapes that
# matter to a sort on 8-byte prefixes: lengths around 8 and 16, NUL bytes
# (equal to the zero padding), long shared prefixes, few distinct lines,
# keys, -r, -u, -z, and a -n key (the CPU path).
cat >gen.py <<'PY'
import random, sys
seed, n = int(sys.argv[1]), int(sys.argv[2])
R = random.Random(seed)
ALNUM = b"abcdefghijklmnopqrstuvwxyz0123456789"
def word(a, lo, hi):
    return bytes(R.choice(a) for _ in range(R.randint(lo, hi)))
for k in range(n):
    shape = k % 8
    z = R.random() < 0.1
    nl = R.choice([0, 1, 2, 5, 100, 1000, 5000, 20000])
    a = R.choice([b"ab", b"ACGT", ALNUM, bytes(range(1, 256)), b"a\0b"])
    if not z:
        a = bytes(c for c in a if c != 10) or b"a"
    else:
        a = bytes(c for c in a if c != 0) or b"a"
    if shape == 0:      # random, lengths 0..20
        pool = [word(a, 0, 20) for _ in range(nl)]
    elif shape == 1:    # lengths 7..9 and 15..17
        pool = [word(a, *R.choice([(7, 9), (15, 17)])) for _ in range(nl)]
    elif shape == 2:    # a long shared prefix
        p = b"http://www.example.org/" * R.randint(1, 3)
        pool = [p + word(a, 0, 12) for _ in range(nl)]
    elif shape == 3:    # few distinct lines
        pool = [word(a, 0, 12) for _ in range(R.randint(1, 4))]
    elif shape == 4:    # all equal
        pool = [word(a, 0, 30)]
    elif shape == 5:    # prefixes equal up to the padding: x, x\0, x\0\0
        pool = [b"ab" + b"\0" * R.randint(0, 9) for _ in range(4)] if not z else [b"ab", b"abc"]
    elif shape == 6:    # fields
        pool = [b":".join(word(a.replace(b":", b""), 0, 10) for _ in range(3)) for _ in range(max(1, nl // 3))]
    else:               # sorted or reversed input
        pool = sorted(word(a, 0, 12) for _ in range(nl))
        if R.random() < 0.5:
            pool.reverse()
    lines = [R.choice(pool) for _ in range(nl)] if shape not in (7,) else pool
    d = b"\0" if z else b"\n"
    body = b"".join(l + d for l in lines)
    if body and R.random() < 0.2:
        body = body[:-1]
    open("case.%d.in" % k, "wb").write(body)
    args = []
    if shape == 6:
        args += ["-t", ":", "-k", R.choice(["2", "2,2", "1,1", "3", "2,2r", "1.3,2"])]
        if R.random() < 0.4: args += ["-k", "1,1"]
        if R.random() < 0.2: args += ["-k", "3n"]
    for f in ["-r", "-u"]:
        if R.random() < 0.25: args.append(f)
    if z: args.append("-z")
    open("case.%d.args" % k, "w").write(" ".join("'%s'" % x for x in args) + "\n")
    open("case.%d.extra" % k, "w").write("-j %d\n" % R.choice([1, 2, 3]))
PY

# run_cases FIRST LAST: strsort --device $dev against sort -s and strsort --device none
run_cases() {
	k=$1
	while [ $k -le $2 ]; do
		args=$(cat case.$k.args) && extra=$(cat case.$k.extra) &&
		eval "sort -s $args case.$k.in" >exp.$k &&
		eval "strsort --device none $extra $args case.$k.in" >cpu.$k &&
		eval "strsort -v --device $dev $extra $args case.$k.in" >out.$k 2>err.$k ||
			{ echo "case $k failed to run: $args"; return 1; }
		cmp -s exp.$k out.$k || { echo "case $k differs: strsort --device $dev $args"; return 1; }
		cmp -s cpu.$k out.$k || { echo "case $k differs from -d none: $args"; return 1; }
		rm -f exp.$k out.$k cpu.$k
		k=$((k + 1))
	done
}

test_expect_success OPENCL 'generate 160 random cases' '
	python3 "$PWD/gen.py" 4010 160 &&
	test -f case.159.args
'

for g in 0 1 2 3; do
	test_expect_success OPENCL "random cases $((g * 40))-$((g * 40 + 39)): -d $dev matches sort -s" "
		run_cases $((g * 40)) $((g * 40 + 39))
	"
done

test_expect_success OPENCL 'the device did the prefix sort (-v statistics)' '
	grep -l "device sort: [1-9][0-9]* entries in [1-9][0-9]* batches" err.* >sorted &&
	test $(wc -l <sorted) -ge 40
'

test_expect_success OPENCL 'a small device: many batches and oversized buckets, same output' '
	for k in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
		args=$(cat case.$k.args) &&
		eval "sort -s $args case.$k.in" >exp &&
		eval "SEEDPIPE_DEVICE_MEM=600K strsort -v --device $dev $args case.$k.in" >out 2>err &&
		test_cmp exp out || return 1
	done
'

# 3 MB of lines: the first radix pass is made while reading (bucketed input)
test_expect_success OPENCL 'a bucketed input in several batches' '
	python3 -c "
import random
R = random.Random(7)
out = []
for i in range(150000):
    k = R.randrange(3)
    if k == 0: out.append(\"\".join(R.choice(\"ab\") for _ in range(R.randint(0, 24))))
    elif k == 1: out.append(\"same line\")
    else: out.append(\"%08x\" % R.randrange(1 << 20))
print(\"\\n\".join(out))
" >big &&
	sort -s big >exp &&
	SEEDPIPE_DEVICE_MEM=1M strsort -v --device $dev big >out 2>err &&
	test_cmp exp out &&
	test_grep "device sort: [0-9]* entries in [1-9][0-9]* batches" err &&
	! grep -q "device sort: [0-9]* entries in 1 batches" err &&
	test_grep "CPU: [1-9][0-9]* entries of oversized buckets" err &&
	test_grep "passes, [0-9.]* s, [1-9][0-9]* pinned transfer pieces" err &&
	strsort -v --device $dev -r big >out 2>err &&
	sort -s -r big >exp &&
	test_cmp exp out &&
	test_grep "device sort: 150000 entries in 1 batches" err
'

# sizes around the tile (at most 256) and the block (4096 entries)
test_expect_success OPENCL 'sizes at tile and block boundaries' '
	for n in 255 256 257 4095 4096 4097 8192 8193; do
		python3 -c "
import random, sys
R = random.Random($n)
for i in range($n):
    print(\"\".join(R.choice(\"abc\") for _ in range(R.randint(0, 12))))
" >sz.$n &&
		sort -s sz.$n >exp &&
		strsort --device $dev sz.$n >out &&
		test_cmp exp out || return 1
	done
'

test_expect_success OPENCL 'packed DNA prefixes on the device (one batch and many)' '
	python3 -c "
import random
R = random.Random(3)
print(\"\\n\".join(\"\".join(R.choice(\"ACGT\") for _ in range(R.randint(0, 40))) for _ in range(60000)))
" >dna &&
	sort -s dna >exp &&
	strsort -v --device $dev dna >out 2>err &&
	test_cmp exp out &&
	test_grep "32 characters packed per prefix" err &&
	test_grep "device sort: 60000 entries in 1 batches" err &&
	SEEDPIPE_DEVICE_MEM=1M strsort --device $dev dna >out &&
	test_cmp exp out &&
	strsort --device $dev -r -u dna >out && sort -s -r -u dna | test_cmp - out
'

test_expect_success OPENCL 'external runs (-S): each run sorted on the device' '
	sort -s big >exp &&
	strsort -v --device $dev -S 300K -T . big >out 2>err &&
	test_cmp exp out &&
	test_grep "run [1-9][0-9]* written" err &&
	test_grep "device sort: 150000 entries in [1-9][0-9]* batches" err &&
	! ls strsort.* 2>/dev/null
'

test_expect_success OPENCL 'empty input, one line, all-equal lines' '
	: >empty &&
	strsort --device $dev empty >out && test ! -s out &&
	printf "x" | strsort --device $dev >out && printf "x\n" >exp && test_cmp exp out &&
	yes "the same long line of text" | head -5000 >same &&
	strsort --device $dev same >out && test_cmp same out
'

test_expect_success OPENCL 'a device that cannot hold a batch: the CPU sorts' '
	seq 5000 | sort -R >nums &&
	sort -s nums >exp &&
	SEEDPIPE_DEBUG_ALLOC_LIMIT=1K strsort -v --device $dev nums >out 2>err &&
	test_cmp exp out &&
	test_grep "cannot hold a batch; sorting on the CPU" err
'

test_expect_success OPENCL 'no pinned staging buffers: plain transfers' '
	seq 5000 | sort -R >nums &&
	sort -s nums >exp &&
	SEEDPIPE_DEBUG_ALLOC_LIMIT=512K strsort -v --device $dev nums >out 2>err &&
	test_cmp exp out &&
	test_grep "device sort: 5000 entries in 1 batches, [0-9]* passes, [0-9.]* s, 0 pinned" err
'

test_expect_success OPENCL 'SEEDPIPE_DEVICE is honoured, --device overrides it' '
	SEEDPIPE_DEVICE=$dev strsort -v case.1.in >out 2>err &&
	test_grep "using OpenCL device" err &&
	SEEDPIPE_DEVICE=$dev strsort -v --device none case.1.in >out 2>err &&
	! grep -q "OpenCL" err &&
	test_expect_code 2 env SEEDPIPE_DEVICE=bogus strsort case.1.in 2>err &&
	test_grep "^strsort: invalid device .bogus." err
'

test_expect_success OPENCL 'auto never takes an OpenCL CPU device; -c and -B use none' '
	strsort -v --device auto case.1.in >out 2>err &&
	! grep -q "using OpenCL device.*(cpu" err &&
	sort -s case.1.in >exp &&
	strsort -v --device $dev -c exp 2>err &&
	! grep -q "OpenCL" err &&
	test_expect_code 2 strsort --device bogus -c exp 2>err &&
	test_grep "^strsort: invalid device .bogus." err
'

test_lazy_prereq GPU '"$SEEDPIPE_BUILD"/t/ocl_test --list | grep -q "^[0-9]*:[0-9]*	gpu	"'

test_expect_success !GPU 'a requested GPU that is absent: exit 3' '
	printf "b\na\n" >in &&
	test_expect_code 3 strsort --device gpu in >out 2>err &&
	test_grep "^strsort: no OpenCL GPU found" err &&
	test ! -s out &&
	test_expect_code 3 env SEEDPIPE_DEVICE=gpu strsort in 2>err &&
	test_expect_code 3 strsort --device 99:0 in 2>err &&
	test_grep "^strsort: " err
'

test_expect_success GPU 'the GPU sorts as sort -s' '
	for k in 0 1 2 3 4 5 6 7 8 9; do
		args=$(cat case.$k.args) &&
		eval "sort -s $args case.$k.in" >exp &&
		eval "strsort --device gpu $args case.$k.in" >out &&
		test_cmp exp out || return 1
	done
'

# the calibration file of -d auto on the test device for -j J (ocl_auto.h)
autocal() {
	"$SEEDPIPE_BUILD"/t/ocl_test --list | awk -F "\t" -v d="$TEST_OCL_DEVICE" "\$1 == d || \$2 == d" | head -n 1 >dev.line &&
	"$SEEDPIPE_BUILD"/t/ocl_auto_test --path "$(cut -f4 dev.line)" "$(cut -f8 dev.line)" \
		"strsort 1 threads $1"
}
# fake costs DEV_FIXED DEV_UNIT NAT_FIXED NAT_UNIT for -j J into the calibration file
autofake() {
	f=$(autocal $1) && shift &&
	printf "seedpipe-auto 1\ndevice %s\ndriver %s\nkey strsort 1 threads %s\n" \
		"$(cut -f4 dev.line)" "$(cut -f8 dev.line)" "$J" >"$f" &&
	printf "dev_fixed %s\ndev_unit %s\nnat_fixed %s\nnat_unit %s\n" "$@" >>"$f"
}

test_expect_success '-d auto without a GPU: the CPU, same bytes' '
	awk "BEGIN { srand(7); for (i = 0; i < 20000; i++) printf \"%x%s\\n\", int(rand() * 1e9), i % 3 ? \"a\" : \"\" }" >auto.in &&
	LC_ALL=C sort -s auto.in >auto.want &&
	SEEDPIPE_AUTO_DEVICE=none strsort -j 1 -v auto.in >auto.out 2>auto.err &&
	test_cmp auto.want auto.out &&
	test_grep "d auto: native code: no OpenCL GPU" auto.err
'

test_expect_success OPENCL '-d auto follows its calibration: the input size decides, same bytes' '
	J=1 && autofake 1 0 1e-12 0 1e-3 &&
	SEEDPIPE_AUTO_DEVICE=$TEST_OCL_DEVICE strsort --device auto -j 1 -v auto.in >auto.out 2>auto.err &&
	test_cmp auto.want auto.out &&
	test_grep "d auto: cached calibration of .*: device: predicted" auto.err &&
	test_grep "using OpenCL device" auto.err &&
	s=$(wc -c <auto.in) &&
	J=1 && autofake 1 100 0 0 $(awk "BEGIN { printf \"%.9g\", 50 / $s }") &&
	SEEDPIPE_AUTO_DEVICE=$TEST_OCL_DEVICE strsort --device auto -j 1 -v auto.in >auto.out 2>auto.err &&
	test_cmp auto.want auto.out &&
	test_grep "native code: predicted 100 s on the device, 50 s native" auto.err &&
	! grep -q "using OpenCL device" auto.err &&
	cat auto.in auto.in auto.in auto.in >auto4.in && LC_ALL=C sort -s auto4.in >auto4.want &&
	SEEDPIPE_AUTO_DEVICE=$TEST_OCL_DEVICE strsort --device auto -j 1 -v auto4.in >auto.out 2>auto.err &&
	test_cmp auto4.want auto.out &&
	test_grep "device: predicted 100 s on the device, 200 s native" auto.err &&
	test_grep "using OpenCL device" auto.err
'

test_expect_success OPENCL '-d auto: one calibration per thread count' '
	J=2 && autofake 2 1 1e-3 0 1e-12 &&
	SEEDPIPE_AUTO_DEVICE=$TEST_OCL_DEVICE strsort --device auto -j 2 -v auto.in >auto.out 2>auto.err &&
	test_cmp auto.want auto.out &&
	test_grep "d auto: cached calibration of .*: native code: predicted" auto.err &&
	! grep -q "using OpenCL device" auto.err
'

# the device cache of auto (ocl_auto.h) for SEEDPIPE_AUTO_DEVICE=SPEC, made to say LINES
autodev() {
	g=$(grep -l "^spec $1$" "$XDG_CACHE_HOME"/seedpipe/autodev-*.txt) &&
	{ echo "seedpipe-autodev 1" && printf "$2\n" && sed -n "/^fingerprint$/,\$p" "$g"; } >g.tmp &&
	mv g.tmp "$g"
}

test_expect_success OPENCL '-d auto: the device from the cache, without a probe; a stale one is probed again' '
	SEEDPIPE_AUTO_DEVICE=$TEST_OCL_DEVICE strsort --device auto -j 2 -v auto.in >auto.out 2>auto.err &&
	test_cmp auto.want auto.out &&
	test_grep "device known from the cache of this system.s OpenCL setup, OpenCL not loaded" auto.err &&
	autodev "$TEST_OCL_DEVICE" "none $(date +%s)" &&
	SEEDPIPE_AUTO_DEVICE=$TEST_OCL_DEVICE strsort --device auto -j 2 -v auto.in >auto.out 2>auto.err &&
	test_cmp auto.want auto.out &&
	test_grep "d auto: native code: no OpenCL GPU (known from the cache" auto.err &&
	autodev "$TEST_OCL_DEVICE" "device Ghost GPU\ndriver 9.9" &&
	p=$("$SEEDPIPE_BUILD"/t/ocl_auto_test --path "Ghost GPU" 9.9 "strsort 1 threads 2") &&
	printf "seedpipe-auto 1\ndevice Ghost GPU\ndriver 9.9\nkey strsort 1 threads 2\n" >"$p" &&
	printf "dev_fixed 0\ndev_unit 1e-12\nnat_fixed 1\nnat_unit 1e-3\n" >>"$p" &&
	SEEDPIPE_AUTO_DEVICE=$TEST_OCL_DEVICE strsort --device auto -j 2 -v auto.in >auto.out 2>auto.err &&
	test_cmp auto.want auto.out &&
	test_grep "d auto: the cached device .Ghost GPU. (driver 9.9) is now .*; sorting on the CPU" auto.err &&
	! grep -q "device sort:" auto.err &&
	SEEDPIPE_AUTO_DEVICE=$TEST_OCL_DEVICE strsort --device auto -j 2 -v auto.in >auto.out 2>auto.err &&
	test_cmp auto.want auto.out &&
	test_grep "d auto: cached calibration of .*: native code: predicted" auto.err &&
	! grep -q "known from the cache" auto.err
'

test_expect_success OPENCL '-d auto: a cached device on a machine without one: the CPU' '
	SEEDPIPE_AUTO_DEVICE=7:0 strsort --device auto -j 2 -v auto.in >auto.out 2>auto.err &&
	test_grep "d auto: native code: no OpenCL GPU$" auto.err &&
	autodev 7:0 "device Ghost GPU\ndriver 9.9" &&
	SEEDPIPE_AUTO_DEVICE=7:0 strsort --device auto -j 2 -v auto.in >auto.out 2>auto.err &&
	test_cmp auto.want auto.out &&
	test_grep "d auto: the cached device .Ghost GPU. (driver 9.9) is now not there; sorting on the CPU" auto.err &&
	SEEDPIPE_AUTO_DEVICE=7:0 strsort --device auto -j 2 -v auto.in >auto.out 2>auto.err &&
	test_cmp auto.want auto.out &&
	test_grep "d auto: native code: no OpenCL GPU$" auto.err
'

test_expect_success GPU '-d auto calibrates a GPU once, then uses the cached calibration' '
	rm -f "$XDG_CACHE_HOME"/seedpipe/auto-*.txt &&
	strsort --device auto -j 2 -v auto.in >auto.out 2>auto.err &&
	test_cmp auto.want auto.out &&
	test_grep "d auto: new calibration of" auto.err &&
	strsort --device auto -j 2 -v auto.in >auto.out 2>auto.err &&
	test_cmp auto.want auto.out &&
	test_grep "d auto: cached calibration of" auto.err
'

test_done
