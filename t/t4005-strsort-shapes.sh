#!/bin/bash
test_description='strsort: long shared prefixes, small alphabets (packed prefixes) and mapped input, against sort -s'
. ./test-lib.sh
# these cases compare with sort -s: strsort runs with -s (the last-resort
# comparison without -s is tested in t4020-strsort-keys*)
strsort() { command strsort -s "$@"; }

# same OPTS FILE...: strsort and sort -s give identical bytes
same() {
	_o=$1; shift
	sort -s ${_o#-j [0-9]} "$@" >expect.same &&
	strsort $_o "$@" >actual.same &&
	test_cmp expect.same actual.same
}

# shapes.py: inputs over 1 MB (the bucket pass, where the shared prefix and
# the alphabet are checked) and small ones
cat >shapes.py <<'PY'
import random
R = random.Random(7)
W = ["news", "sport", "tech", "music", "travel", "food", "sci", "s"]
def url():
    return "http://www.example-%d.com/%s/%s/%04d/item-%s.html" % (R.randrange(50),
        R.choice(W), R.choice(W), R.randrange(200),
        "".join(R.choice("abcXYZ09") for _ in range(R.randrange(0, 4))))
def dna(al, lo, hi):
    return "".join(R.choice(al) for _ in range(R.randrange(lo, hi + 1)))
def put(name, lines, end="\n", last=True):
    s = end.join(lines) + (end if last else "")
    open(name, "w", newline="").write(s)
u = [url() for _ in range(30000)]
u += u[:3000]                                      # duplicates
R.shuffle(u)
put("url", u)
put("url-short", u + ["http://www.exa", "", "http://www.example-"])
put("url-late", u[:20000] + ["http://www.examplf.com/"] + u[20000:], last=False)
put("url-k", ["%d/%s" % (R.randrange(5), x) for x in u])
d = [dna("ACGT", 0, 70) for _ in range(40000)]
d += d[:5000]
R.shuffle(d)
put("dna", d)
put("dna32", [dna("ACGT", 32, 32) for _ in range(40000)])
put("dna-n", [dna("ACGTNacgtn", 0, 50) for _ in range(50000)])
put("dna-odd", d + ["ACGTX"] + d[:100])
put("dna-z", d, end="\0")
put("dna-t", ["%s:%s:%s" % (dna("ACG", 0, 9), dna("ACG", 0, 30), dna("ACG", 0, 9)) for _ in range(60000)])
put("dna-small", [dna("ACGT", 0, 40) for _ in range(3000)])
PY

test_expect_success 'make the inputs' '
	python3 shapes.py &&
	test $(wc -c <url) -gt 1048576 &&
	test $(wc -c <dna) -gt 1048576
'

test_expect_success 'a long prefix shared by every line, with -r and -u' '
	strsort -v url 2>err >/dev/null &&
	test_grep "every key starts with the same 19 bytes: skipped" err &&
	strsort -v url-late 2>err >/dev/null &&
	test_must_fail grep -q "skipped" err &&
	same "" url && same -r url && same -u url && same "-j 1" url && same "-j 3" url
'

test_expect_success 'lines shorter than the shared prefix, and one that leaves it late' '
	same "" url-short && same -r url-short && same "" url-late && same -u url-late
'

test_expect_success 'a shared prefix inside a key (-t / -k)' '
	same "-t / -k2" url-k && same "-t / -k3,3" url-k && same "-t / -k2 -u" url-k &&
	same "-k1,1" url
'

test_expect_success 'DNA: packed prefixes, with -r, -u and duplicates' '
	strsort -v dna 2>err >/dev/null &&
	test_grep "keys of 4 byte values: 32 characters packed per prefix" err &&
	strsort -v dna-n 2>err >/dev/null &&
	test_grep "keys of 10 byte values: 16 characters packed per prefix" err &&
	strsort -v dna-odd 2>err >/dev/null &&
	test_must_fail grep -q "packed" err &&
	strsort -v --no-pack dna 2>err >/dev/null &&
	test_must_fail grep -q "packed" err &&
	same "" dna && same -r dna && same -u dna && same "" dna32 && same -u dna32 &&
	same "-j 1" dna && same "-j 3" dna32
'

test_expect_success 'DNA with N and lower case (16-character prefixes)' '
	same "" dna-n && same -r dna-n && same -u dna-n
'

test_expect_success 'a byte outside the sampled alphabet: byte prefixes' '
	same "" dna-odd && same -r dna-odd
'

test_expect_success 'packed keys with -z, -t and -k' '
	same -z dna-z && same "-z -r" dna-z &&
	same "-t : -k2" dna-t && same "-t : -k2,2 -u" dna-t && same "-t : -k3 -r" dna-t &&
	same "-t : -k1,1n" dna-t
'

test_expect_success 'small inputs (no bucket pass) and every algorithm' '
	same "" dna-small && same -r dna-small &&
	sort -s dna-small >expect &&
	for a in $(strsort --list-algorithms | cut -d" " -f1); do
		strsort --algorithm $a dna-small >out && test_cmp expect out &&
		strsort --algorithm $a dna >out.big && sort -s dna | test_cmp - out.big || return 1
	done
'

test_expect_success '--no-pack gives the same bytes' '
	strsort dna >packed &&
	strsort --no-pack dna >bytes &&
	test_cmp packed bytes &&
	strsort --no-pack -r dna-n >bytes && sort -s -r dna-n >expect && test_cmp expect bytes
'

test_expect_success 'mapped input: page-sized files without a last newline, standard input' '
	python3 -c "
import sys
sys.stdout.write((\"b\" * 4095 + \"\\na\") [:4096])" >page &&
	test $(wc -c <page) -eq 4096 &&
	same "" page &&
	printf "%8191s" x | tr " " y >page2 && same "" page2 &&
	head -c 1000000 url | tail -c 500000 >part && printf "zz" >>part && same "" part &&
	sort -s <url >expect && strsort <url >out && test_cmp expect out &&
	{ read -r first; sort -s; } <dna >expect &&
	{ read -r first; strsort; } <dna >out &&
	test_cmp expect out &&
	cat url | strsort >out && sort -s url | test_cmp - out
'

test_done
