#!/bin/bash
test_description='record streams with valid checksums but hostile sizes: nothing is allocated before the input holds it, provenance of any size is carried in linear time'
. ./test-lib.sh

RESUM=$SEEDPIPE_BUILD/t/sp_resum

# stream KIND PROV_BYTES: a header of that many provenance bytes (distinct
# keys and repeated pg lines), no blocks, an end block; checksums right
stream() {
	python3 - "$@" <<-\PY
	import struct, sys
	kind, size = int(sys.argv[1]), int(sys.argv[2])
	lines, n, i = [], 0, 0
	while n < size:
	    l = (b"k%d=\n" % i) if i % 4 else (b"pg=stage\t0.1\tcmd %d\n" % (i % 64))
	    lines.append(l); n += len(l); i += 1
	prov = b"".join(lines)
	h = b"\x89SPR\r\n\x1a\n" + struct.pack("<HHII", 2, kind, len(prov), 0) + prov + b"\0" * 8
	sys.stdout.buffer.write(h + b"SPE1" + b"\0" * 36)
	PY
}

test_expect_success 'a 52-byte stream whose block declares 1 GiB: input truncated, no allocation' '
	python3 -c "
import struct, sys
h = b\"\\x89SPR\\r\\n\\x1a\\n\" + struct.pack(\"<HHII\", 2, 1, 0, 0) + b\"\\0\" * 8
b = b\"SPB1\" + struct.pack(\"<III\", 1 << 30, 1, 0) + b\"\\0\" * 8
sys.stdout.buffer.write(h + b)" >big.sp &&
	$RESUM big.sp &&
	test $(wc -c <big.sp) = 52 &&
	test_expect_code 1 recview -c big.sp 2>err &&
	test_grep "^recview: .big.sp.: input truncated in block 0 at byte 52 (did the upstream tool fail?)$" err &&
	if test -z "$ASAN_OPTIONS"; then
		(ulimit -v 300000 && test_expect_code 1 recview -c big.sp 2>err) &&
		test_grep "input truncated in block 0" err &&
		! grep "out of memory" err
	fi
'

test_expect_success 'a header that declares 16 MiB of provenance and ends: truncated' '
	python3 -c "
import struct, sys
sys.stdout.buffer.write(b\"\\x89SPR\\r\\n\\x1a\\n\" + struct.pack(\"<HHII\", 2, 1, 1 << 24, 0) + b\"k=v\\n\" * 10)" >hdr.sp &&
	test_expect_code 1 recview -c hdr.sp 2>err &&
	test_grep "input truncated in the stream header" err &&
	if test -z "$ASAN_OPTIONS"; then
		(ulimit -v 200000 && test_expect_code 1 recview -c hdr.sp 2>err) &&
		test_grep "input truncated in the stream header" err
	fi
'

test_expect_success 'a 615 KB provenance header, twice concatenated: recview -c and seedfilt carry it quickly (were 19 s and 40 s)' '
	stream 1 630000 >prov.sp && $RESUM prov.sp &&
	cat prov.sp prov.sp >prov2.sp &&
	printf ">c\nACGTTGCATGCATGCAAACCCGGGTTTACGATCGATCGTAGCTAGCTAGCTAGCATCGAT\n" >ref.fa &&
	seqidx -q -u 4 -l 8 ref.fa >ref.sx &&
	start=$(date +%s.%N) &&
	recview -c prov2.sp &&
	recview -H prov2.sp >view2 &&
	seedfilt -q -x ref.sx prov2.sp >c.sp &&
	end=$(date +%s.%N) &&
	recview -H prov.sp >view1 &&
	grep "^##k[0-9]" view1 >k1 && grep "^##k[0-9]" view2 >k2 &&
	test $(wc -l <k1) -gt 40000 &&
	test_cmp k1 k2 &&
	recview -H c.sp | grep "^##k[0-9]" >k3 &&
	test_cmp k1 k3 &&
	test $(recview -H c.sp | grep -c "^##pg=stage") = 16 &&
	python3 -c "import sys; t = float(sys.argv[2]) - float(sys.argv[1]); print(\"%.2f s\" % t); sys.exit(t > 15)" $start $end
'

test_done
