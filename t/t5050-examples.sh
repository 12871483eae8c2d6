#!/bin/bash
test_description='every documented example runs on small data: the EXAMPLES of each man page (.EX blocks, strsort(1)'"'"'s indented .B lines) and the README blocks marked <!-- example -->; every mapping example finds every hit of the full-DP oracle, or extend says how many reads may lack some'
. ./test-lib.sh

. "$TEST_DIR"/lib-extend.sh
. "$TEST_DIR"/lib-pair.sh

# The command lines of an example source, one a line (troff escapes undone:
# \- minus, \(aq quote, \e and \(rs backslash)
man_examples() {
	awk '
		/^\.SH / { ex = ($0 ~ /^\.SH EXAMPLES?$/); next }
		!ex { next }
		/^\.EX/ { inex = 1; next }
		/^\.EE/ { inex = 0; next }
		/^\.RS/ { inrs = 1; next }
		/^\.RE/ { inrs = 0; next }
		inex || (inrs && /^\.B [a-z]/) { sub(/^\.B /, ""); print }
	' "$1" | sed -e 's/\\e/\x01/g' -e 's/\\(rs/\x01/g' -e 's/\\-/-/g' -e "s/\\\\(aq/'/g" -e 's/\x01/\\/g'
}

readme_examples() {
	awk '
		/^<!-- example -->$/ { blk = 1; next }
		blk && /^    / { sub(/^    /, ""); sub(/[ \t]+# .*$/, ""); print; next }
		blk && /^$/ { next }
		{ blk = 0 }
	' "$1"
}

# The small data every example runs on: a random reference with repeats,
# 200 reads of 80 to 120 bases with up to 3 edit operations (some with N),
# 300 pairs of 100-base mates of that reference (R1.fq.gz, R2.fq.gz, plain
# r1.fq and r2.fq for the oracle), and the files the examples name.
test_expect_success 'the data' '
	gen 61 8000 200 80 120 3 1 &&
	gzip -c ref.fa >ref.fa.gz &&
	gzip -c reads.fq >reads.fq.gz &&
	awk "NR % 4 == 1 { print \">\" substr(\$0, 2) } NR % 4 == 2" reads.fq >reads.fa &&
	mate_pairs 62 300 100 3 <ref.fa &&
	gzip -c r1.fq >R1.fq.gz && gzip -c r2.fq >R2.fq.gz &&
	seqidx -q -o fix.sx ref.fa &&
	seedfilt -q -x fix.sx -o cands.sp reads.fq &&
	head -n 400 reads.fq | seedfilt -q -x fix.sx -o a.sp &&
	tail -n 400 reads.fq | seedfilt -q -x fix.sx -o b.sp &&
	extend -q -O rec -o hits.sp cands.sp &&
	awk "NR % 4 == 2 { print substr(\$0, 1, 8) \"\t\" NR }" reads.fq >pairs.tsv &&
	awk "NR % 4 == 2 { print substr(\$0, 1, 6) \":\" NR % 97 \":x\" }" reads.fq >data.txt &&
	awk "NR % 4 == 2" reads.fq | LC_ALL=C sort >reads.txt &&
	awk "NR % 4 == 2 { print substr(\$0, 3, 12) }" reads.fq >words.txt &&
	cp words.txt lines &&
	mkdir fixture && mv ref.fa ref.fa.gz reads.fq reads.fq.gz reads.fa cands.sp a.sp b.sp \
		hits.sp pairs.tsv data.txt reads.txt words.txt lines \
		r1.fq r2.fq R1.fq.gz R2.fq.gz fixture/
'

# oracle lines of the hits of line $1 (its bound: extend -e, else seedfilt
# -E A, else extend's default 3; --no-gaps: Hamming; --best: least NM only)
bound_of() {
	a=3
	case $1 in
	*"seedfilt "*" -E "[0-9]*) a=$(echo "$1" | sed -n "s/.*seedfilt .* -E \([0-9][0-9]*\)\( .*\)*$/\1/p") ;;
	esac
	case $1 in
	*"extend "*" -e "[0-9]*|*"extend -e "[0-9]*)
		a=$(echo "$1" | sed -n "s/.*extend.* -e \([0-9][0-9]*\).*/\1/p") ;;
	esac
	g=
	case $1 in *--no-gaps*) g=-g ;; esac
}

oracle_for() {
	bound_of "$1"
	"$T"/ext_oracle ../fixture/ref.fa ../fixture/reads.fq $a $g | sort |
	case $1 in
	*--best*) awk -F "\t" "{ l[NR] = \$0; n[NR] = \$1; d[NR] = \$2 == \"*\" ? -1 : \$5
			if (\$2 != \"*\" && (!(\$1 in m) || \$5 < m[\$1])) m[\$1] = \$5 }
		END { for (i = 1; i <= NR; i++) if (d[i] < 0 || d[i] == m[n[i]]) print l[i] }" ;;
	*) cat ;;
	esac
}

# run the examples of source $1 (lines in file $2) in a fresh directory
# holding the data; after each line that writes hits.sam or hits.bam, its
# hits against the oracle: identical, or extend warned that at least as
# many reads as differ may lack hits
run_examples() {
	lf=$(pwd)/$2 &&
	rm -rf run && mkdir run && cp fixture/* run/ && (cd run &&
	i=0 &&
	while IFS= read -r line; do
		i=$((i + 1))
		[ -n "$line" ] || continue
		# no GPU here: strsort --device gpu runs with auto (the C code)
		cmd=$(printf "%s\n" "$line" | sed -e "s/--device gpu/--device auto/" -e "s/| less$/| cat/")
		echo "example $1:$i: $cmd"
		sh -c "$cmd" >out.$i 2>err.$i || { cat err.$i; echo "failed: $cmd"; return 1; }
		case $cmd in
		*R1.fq*extend*)
			# paired: the output file of extend (-o F or > F), its
			# concordant pairs and every mate's loci against the oracle
			f=$(printf "%s\n" "$cmd" | sed -n -e "s/.*extend.* -o \([^ ]*\).*/\1/p" \
				-e "s/.*extend.*> *\([^ ]*\).*/\1/p" | head -n 1) &&
			test -s "$f" &&
			bound_of "$cmd" &&
			lo=$(sed -n "s/.*insert size \([0-9]*\)\.\.\([0-9]*\) .*/\1/p" err.$i) &&
			hi=$(sed -n "s/.*insert size \([0-9]*\)\.\.\([0-9]*\) .*/\2/p" err.$i) &&
			test -n "$lo" && test -n "$hi" &&
			oracle_loci $a $g >ol.$i &&
			oracle_pairs $lo $hi <ol.$i >expect.$i &&
			sam_pairs $f >actual.$i &&
			sam_loci $f >loci.$i &&
			test $(wc -l <actual.$i) -ge 100 &&
			if ! cmp -s ol.$i loci.$i || ! cmp -s expect.$i actual.$i; then
				diff ol.$i loci.$i | sed -n "s/^[<>] \([^\t]*\)\t.*/\1/p" | sort -u >dm.$i
				nd=$(wc -l <dm.$i)
				nw=$(sed -n "s/^extend: warning: \([0-9]*\) of [0-9]* reads may have hits.*/\1/p" err.$i)
				echo "example $1:$i: $nd mates differ from the oracle, extend warned of ${nw:-none}"
				# a pair may differ only through a mate that does
				diff expect.$i actual.$i | sed -n "s/^[<>] \([^\t]*\)\t.*/\1/p" | sort -u >dp.$i
				sed "s|/[12]$||" dm.$i | sort -u | comm -23 dp.$i - >bad.$i
				test -n "$nw" && test "$nd" -le "$nw" && ! test -s bad.$i || {
					diff ol.$i loci.$i | head; diff expect.$i actual.$i | head; return 1; }
			fi ;;
		*hits.sam*|*hits.bam*)
			f=hits.sam
			case $cmd in *hits.bam*) f=hits.bam ;; esac
			oracle_for "$cmd" >expect.$i &&
			sam2lines $f >actual.$i &&
			if ! cmp -s expect.$i actual.$i; then
				nd=$(diff expect.$i actual.$i | sed -n "s/^[<>] \([^\t]*\)\t.*/\1/p" | sort -u | wc -l)
				nw=$(sed -n "s/^extend: warning: \([0-9]*\) of [0-9]* reads may have hits.*/\1/p" err.$i)
				echo "example $1:$i: $nd reads differ from the oracle, extend warned of ${nw:-none}"
				test -n "$nw" && test "$nd" -le "$nw" || { diff expect.$i actual.$i | head; return 1; }
			fi ;;
		esac
	done <"$lf"
	)
}

for src in seedpipe.7 seedfilt.1 extend.1 seqidx.1 strsort.1 recview.1; do
	test_expect_success SAMTOOLS "man/$src: every example runs; no hit lost unseen" '
		man_examples "$TEST_DIR/../man/'$src'" >lines.'$src' &&
		test -s lines.'$src' &&
		run_examples '$src' lines.'$src'
	'
done

test_expect_success SAMTOOLS 'README.md: every example block runs; no hit lost unseen' '
	readme_examples "$TEST_DIR/../README.md" >lines.readme &&
	test $(wc -l <lines.readme) -ge 8 &&
	run_examples README lines.readme
'

# the checker itself: a lossy pipeline without the warning fails it
test_expect_success SAMTOOLS 'a pipeline that loses hits silently is caught' '
	printf "%s\n" "seqidx -q -o ref.sx ref.fa" \
		"seedfilt -q -x ref.sx -m ph -e 0 -s 60 reads.fq | extend -q -e 3 2>/dev/null > hits.sam" >lossy &&
	! run_examples lossy lossy
'

test_done
