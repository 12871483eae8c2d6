#!/bin/bash
test_description='index loader: files with valid checksums but broken structures are refused (seqidx --verify too), and no count is trusted before the file can hold it'
. ./test-lib.sh

# Each case damages one field of a sound index, then t/unit/sp_resum makes
# every checksum agree again: the file looks intact to a checksum, and only
# the structure checks stand between it and the tools.
D="python3 $SEEDPIPE_SRC/t/damage.py"
RESUM=$SEEDPIPE_BUILD/t/sp_resum

# damaged NAME 'damage commands' [SOURCE]: NAME.sx, a copy of SOURCE (a.sx)
# changed by the commands, with its checksums made right again
damaged() {
	_name=$1 _cmds=$2
	cp "${3:-a.sx}" "$_name.sx" && eval "$_cmds" && $RESUM "$_name.sx"
}

test_expect_success 'setup' '
	awk "BEGIN { srand(3); for (s = 0; s < 2; s++) { printf \">chr%d\n\", s;
		for (i = 0; i < 8000; i++) { printf \"%s\", substr(\"ACGT\", int(rand() * 4) + 1, 1); if (i % 60 == 59) print \"\" } print \"\" } }" >ref.fa &&
	awk "BEGIN { srand(5) } /^>/ { next } { s = s \$0 } END { for (i = 0; i < 40; i++) { p = int(rand() * (length(s) - 100)); printf \">r%d\n%s\n\", i, substr(s, p + 1, 100) } }" ref.fa >reads.fa &&
	seqidx -q -u 5 -l 12 -m all ref.fa >a.sx &&
	seqidx -q -u 5 -l 12 -m fm -r 1048576 ref.fa >r.sx &&
	seqidx --verify a.sx && seqidx --verify r.sx &&
	seedfilt -q -x a.sx -m fm reads.fa >fm.sp &&
	seedfilt -q -x a.sx reads.fa >cands.sp
'

test_expect_success 'FM occurrence counts out of range (was SIGSEGV in ffm_occ)' '
	damaged occ "set -- \$($D occ.sx sec fm.occ 0) && $D occ.sx put \$((\$1 + 32)) I 0xfffff000" &&
	test_expect_code 1 seedfilt -q -x occ.sx -m fm reads.fa >out 2>err &&
	test_grep "^seedfilt: index .occ.sx.: FM-index sections of partition 0 are inconsistent: occurrence counts of block 1 are wrong$" err &&
	test_expect_code 1 seedfilt -q -x occ.sx -m auto reads.fa >out 2>err &&
	test_expect_code 1 seqidx --verify occ.sx 2>err &&
	test_grep "occurrence counts of block 1 are wrong" err
'

test_expect_success 'FM counts that disagree with C[], a coded primary row, rows past the end' '
	damaged cnt "set -- \$($D cnt.sx sec fm.meta 0) && c1=\$($D cnt.sx get \$((\$1 + 24)) Q) && $D cnt.sx put \$((\$1 + 24)) Q \$((c1 + 1))" &&
	test_expect_code 1 seqidx --verify cnt.sx 2>err &&
	test_grep "inconsistent" err &&
	damaged pad "set -- \$($D pad.sx sec fm.occ 0) && $D pad.sx put \$((\$1 + \$2 - 8)) Q 0x8000000000000000" &&
	test_expect_code 1 seqidx --verify pad.sx 2>err &&
	test_grep "rows past the end are not empty\|occurrence counts" err
'

test_expect_success 'FM mark bits and ranks, samples (was a hang in fm_locate_row)' '
	damaged mark "set -- \$($D mark.sx sec fm.mark 0) && $D mark.sx put \$((\$1 + 16)) Q 0xffff" &&
	test_expect_code 1 seedfilt -q -x mark.sx -m fm reads.fa >out 2>err &&
	test_grep "mark rank of block 2 is wrong" err &&
	damaged samp "set -- \$($D samp.sx sec fm.sa 0) && $D samp.sx put \$((\$1 + 8)) I 7" &&
	test_expect_code 1 seqidx --verify samp.sx 2>err &&
	test_grep "suffix array sample 2 is wrong" err &&
	damaged dup "set -- \$($D dup.sx sec fm.sa 0) && v=\$($D dup.sx get \$((\$1 + 4)) I) && $D dup.sx put \$((\$1 + 8)) I \$v" &&
	test_expect_code 1 seqidx --verify dup.sx 2>err &&
	test_grep "suffix array sample 2 is wrong" err
'

test_expect_success 'the FM check in parallel chunks of 1, 2 and 3 blocks: the damage refused with the same message, a sound index read' '
	for f in occ cnt pad mark samp dup; do
		test_expect_code 1 seqidx --verify $f.sx 2>want &&
		for c in 1 2 3; do
			test_expect_code 1 env SEEDPIPE_FM_CHECK_CHUNK=$c seqidx --verify $f.sx 2>got &&
			test_cmp want got || return 1
		done
	done &&
	for c in 1 2 3; do
		SEEDPIPE_FM_CHECK_CHUNK=$c seqidx --verify a.sx &&
		SEEDPIPE_FM_CHECK_CHUNK=$c seedfilt -q -x a.sx -m fm reads.fa >p.sp &&
		cmp fm.sp p.sp || return 1
	done
'

test_expect_success 'an LF mapping with a cycle: --verify refuses it, seedfilt -m fm ends' '
	damaged cyc "$D cyc.sx bwtswap 0" r.sx &&
	test_expect_code 1 seqidx --verify cyc.sx 2>err &&
	test_grep "^seqidx: index .cyc.sx.: FM-index sections of partition 0 are inconsistent: " err &&
	timeout 300 seedfilt -q -x cyc.sx -m fm reads.fa >cyc.sp
'

test_expect_success 'sequence lengths and offsets that wrap modulo 2^64 (issue: extend read other sections as bases)' '
	damaged wrap "set -- \$($D wrap.sx sec seq.len) && L=\$1 && set -- \$($D wrap.sx sec seq.off) && O=\$1 &&
		l0=\$($D wrap.sx get \$L Q) && l1=\$($D wrap.sx get \$((L + 8)) Q) && o1=\$($D wrap.sx get \$((O + 8)) Q) &&
		$D wrap.sx put \$L QQ \$((l0 + 0x4000000000000000)) \$((l1 - 0x4000000000000000)) &&
		$D wrap.sx put \$((O + 8)) Q \$((o1 + 0x4000000000000000))" &&
	test_expect_code 1 seqidx --verify wrap.sx 2>err &&
	test_grep "section .seq.off. disagrees with .seq.len." err &&
	test_expect_code 1 extend -x wrap.sx cands.sp >out 2>err &&
	test_grep "^extend: index .wrap.sx.: section .seq.off. disagrees with .seq.len.$" err
'

test_expect_success '4 billion sequences in the header: refused before any allocation' '
	damaged nseq "$D nseq.sx put 56 I 4000000000" &&
	test_expect_code 1 seqidx --verify nseq.sx 2>err &&
	test_grep "^seqidx: index .nseq.sx.: section .seq.len. has a bad size (16 bytes, expected 32000000000)$" err &&
	if test -z "$ASAN_OPTIONS"; then
		(ulimit -v 1000000 && test_expect_code 1 seqidx --verify nseq.sx 2>err) &&
		test_grep "bad size" err
	fi
'

test_expect_success 'a run count whose size wraps (was SIGSEGV in idx_range_clean), runs out of order' '
	damaged nrun "$D nrun.sx put 104 Q 0x1000000000000000" &&
	test_expect_code 1 seedfilt -q -x nrun.sx -m fm reads.fa >out 2>err &&
	test_grep "section .ref.nrun. has a bad size" err &&
	printf ">n\nACGTNNNNACGTACGTACGTACGTACGTACGTACNNNNGTACGTACGTACGTTGCA\n" >n.fa &&
	seqidx -q -u 4 -l 8 n.fa >n.sx &&
	damaged nord "set -- \$($D nord.sx sec ref.nrun) && $D nord.sx swap \$1 \$((\$1 + 16)) 16" n.sx &&
	test_expect_code 1 seqidx --verify nord.sx 2>err &&
	test_grep "section .ref.nrun.: run 1 is out of order or range" err
'

test_expect_success 'a partition table other than the one the sequences make' '
	damaged part "set -- \$($D part.sx sec part) && $D part.sx put \$((\$1 + 8)) Q 15000" &&
	test_expect_code 1 seqidx --verify part.sx 2>err &&
	test_grep "section .part.: partition 0" err &&
	seqidx -q -u 4 -l 10 -p 3000 ref.fa >p.sx &&
	damaged pmove "set -- \$($D pmove.sx sec part) && $D pmove.sx put \$((\$1 + 32 + 8)) Q \$(( \$($D pmove.sx get \$((\$1 + 32 + 8)) Q) - 1 ))" p.sx &&
	test_expect_code 1 seqidx --verify pmove.sx 2>err &&
	test_grep "section .part.: partition 1 is not the one the sequences and the partition size make" err
'

# the last seed start of the 16,000 bases is 16000 - 5 (format 4: the
# neighborhood of the last 16 starts runs past the end)
test_expect_success 'positions past the last seed start, unsorted keys, empty names' '
	damaged rpos "set -- \$($D rpos.sx sec red.pos 0) && $D rpos.sx put \$1 I 15996" &&
	test_expect_code 1 seqidx --verify rpos.sx 2>err &&
	test_grep "section .red.pos. of partition 0 holds a position out of range" err &&
	seqidx -q -u 5 -l 12 -m general ref.fa >g.sx &&
	damaged gpos "set -- \$($D gpos.sx sec red.pos 0) && $D gpos.sx put \$1 I 15996" g.sx &&
	test_expect_code 1 seqidx --verify gpos.sx 2>err &&
	test_grep "section .red.pos. of partition 0 holds a position out of range" err &&
	damaged rnb "set -- \$($D rnb.sx sec red.nb 0) && $D rnb.sx swap \$1 \$((\$1 + 4)) 4" &&
	test_expect_code 1 seqidx --verify rnb.sx 2>err &&
	test_grep "section .red.nb. of partition 0 is not sorted within a SeedBlock" err &&
	damaged name "set -- \$($D name.sx sec seq.names) && $D name.sx put \$1 B 0" &&
	test_expect_code 1 seqidx --verify name.sx 2>err &&
	test_grep "section .seq.names.: name 0 is empty\|seq.names" err
'


test_expect_success 'format 2: a slot rank outside its block, compact first positions that do not add up' '
	damaged rank "set -- \$($D rank.sx sec blk.rank 0) && $D rank.sx put \$1 I 0xffffffff" &&
	test_expect_code 1 seqidx --verify rank.sx 2>err &&
	test_grep "section .blk.rank. of partition 0 holds an index out of its block" err &&
	damaged gbase "set -- \$($D gbase.sx sec red.grp 0) && $D gbase.sx put \$((\$1 + 16)) I 1" &&
	test_expect_code 1 seqidx --verify gbase.sx 2>err &&
	test_grep "section .red.grp. or .red.rep. of partition 0 is inconsistent" err &&
	damaged gflag "set -- \$($D gflag.sx sec red.grp 0) && $D gflag.sx put \$((\$1 + 8)) I 1" &&
	test_expect_code 1 seqidx --verify gflag.sx 2>err &&
	test_grep "section .red.grp. or .red.rep. of partition 0 is inconsistent" err
'

test_expect_success 'format 5: the rank words of each SeedBlock (blk.roff) checked against its slots and width' '
	set -- $($D a.sx sec blk.roff 0) && roff=$1 &&
	damaged roff0 "$D roff0.sx put $roff I 1" &&
	test_expect_code 1 seqidx --verify roff0.sx 2>err &&
	test_grep "section .blk.roff. of partition 0 is inconsistent" err &&
	test_expect_code 1 seedfilt -q -x roff0.sx -m ph reads.fa >out 2>err &&
	test_grep "^seedfilt: index .roff0.sx.: section .blk.roff. of partition 0 is inconsistent$" err &&
	w=$((4 ** 5)) && last=$($D a.sx get $((roff + 4 * w)) I) &&
	mid=$($D a.sx get $((roff + 2 * w)) I) &&
	for d in "roffm $((mid + 1))" "roffbig 0xfffffff0"; do
		set -- $d &&
		damaged $1 "$D $1.sx put $((roff + 2 * w)) I $2" &&
		test_expect_code 1 seqidx --verify $1.sx 2>err &&
		test_grep "section .blk.roff. of partition 0 is inconsistent" err || return 1
	done &&
	damaged rofflast "$D rofflast.sx put $((roff + 4 * w)) I $((last + 1))" &&
	test_expect_code 1 seqidx --verify rofflast.sx 2>err &&
	test_grep "section .blk.rank. of partition 0 has a bad size" err
'

test_expect_success 'a version-1 index is refused with a request to rebuild it' '
	damaged v1 "$D v1.sx put 8 I 1" &&
	test_expect_code 1 seqidx --info v1.sx >out 2>err &&
	test_grep "^seqidx: index .v1.sx.: format version 1 is no longer read.*rebuild the index with this seqidx" err &&
	test_expect_code 1 seedfilt -q -x v1.sx reads.fa >out 2>err &&
	test_grep "^seedfilt: index .v1.sx.: format version 1 .*rebuild the index" err
'

test_expect_success 'a version-2 index (gen.* sections) is refused with a request to rebuild it' '
	damaged v2 "$D v2.sx put 8 I 2" &&
	test_expect_code 1 seqidx --info v2.sx >out 2>err &&
	test_grep "^seqidx: index .v2.sx.: format version 2 is no longer read: rebuild the index with this seqidx (it writes version 5)$" err &&
	test_expect_code 1 seedfilt -q -x v2.sx -m bpr reads.fa >out 2>err &&
	test_grep "^seedfilt: index .v2.sx.: format version 2 .*rebuild the index" err &&
	damaged v6 "$D v6.sx put 8 I 6" &&
	test_expect_code 1 seqidx --info v6.sx >out 2>err &&
	test_grep "format version 6 is newer than this seedpipe reads (5)" err
'

# old_refused V REASON: an index of version V with the neighborhood
# structures is refused with REASON and a request to rebuild it; one with
# the FM-index alone (unchanged since) is read
old_refused() {
	damaged v$1 "$D v$1.sx put 8 I $1" &&
	test_expect_code 1 seqidx --info v$1.sx >out 2>err &&
	test_grep "^seqidx: index .v$1.sx.: format version $1 is no longer read: $2; rebuild the index with this seqidx (it writes version 5)$" err &&
	test_expect_code 1 seedfilt -q -x v$1.sx -m fm reads.fa >out 2>err &&
	test_grep "^seedfilt: index .v$1.sx.: format version $1 .*rebuild the index" err &&
	damaged v$1fm "$D v$1fm.sx put 8 I $1" r.sx &&
	seqidx --verify v$1fm.sx &&
	seedfilt -q -x v$1fm.sx -m fm reads.fa >v$1fm.sp &&
	seedfilt -q -x r.sx -m fm reads.fa >r.sp &&
	recview v$1fm.sp >v$1fm.tsv && recview r.sp >r.tsv &&
	test_cmp v$1fm.tsv r.tsv && test -s r.tsv
}

# format 3 lacked the seeds whose neighborhood runs past a sequence end or
# into N (the same layout)
test_expect_success 'a version-3 index with neighborhood structures is refused with the reason; an FM-only one is read' '
	old_refused 3 "its neighborhood structures lack the seeds near sequence ends and N runs (reads there can lose hits)"
'

# format 4 stored every rank at the largest block's width and a u32 seed per
# block
test_expect_success 'a version-4 index with the block structure is refused with the reason; an FM-only one is read' '
	old_refused 4 "its indexed-block structure stores every rank at the largest block.s width"
'

test_done
