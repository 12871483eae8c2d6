#!/bin/bash
test_description='fuzz regressions: every input under fuzz/regress/TARGET/ (crashes, hangs and broken invariants the fuzzers found, minimised) replays through its target without a crash or a hang'
. ./test-lib.sh

# The fuzzers ran with checksum comparison off; the replay build compares,
# so stream and index inputs get their checksums made right first
# (t/unit/sp_resum), as a file the released tools would take as intact.
test_expect_success 'every regression input replays cleanly' '
	for d in "$SEEDPIPE_SRC"/fuzz/regress/*/; do
		t=$(basename "$d") &&
		rm -rf in && mkdir in && cp "$d"* in/ &&
		case $t in rec_*|idx_load)
			for f in in/*; do "$SEEDPIPE_BUILD"/t/sp_resum -t "$f" 2>/dev/null; done ;;
		esac &&
		"$SEEDPIPE_BUILD"/fuzz/$t in >out.$t || { cat out.$t; return 1; }
	done
'

test_expect_success 'a NUL in a FASTA header past the first KiB is refused (was a name cut short)' '
	tail -c +2 "$SEEDPIPE_SRC"/fuzz/regress/seqio/nul-in-header-after-1k >nul.fa &&
	test_expect_code 1 recview -i nul.fa >out.sp 2>err &&
	test_grep "^recview: nul.fa:37: invalid character 0x00 in a header line$" err &&
	{ printf "@a\nACGT\n+\nIIII\n"; head -c 2000 /dev/zero | tr "\\0" x | sed "s/^/@/"; printf "\\0b\nA\n+\nI\n"; } >nul.fq &&
	test_expect_code 1 recview -i nul.fq >out.sp 2>err &&
	test_grep "invalid character 0x00 in a header line" err
'

test_done
