#!/bin/bash
test_description='extend --global against its peers where they are installed: scores and CIGARs identical to parasail'"'"'s NW traceback (linear gaps, several score sets), edit distances identical to edlib'"'"'s NW mode'
. ./test-lib.sh

ora=$SEEDPIPE_BUILD/t/galign_oracle
test_lazy_prereq PARASAIL 'test -f /usr/include/parasail.h && ${CC:-cc} -O2 -o "$TRASH_DIRECTORY/parasail_nw" "$SEEDPIPE_SRC/bench/parasail_nw.c" -lparasail -lpthread'
test_lazy_prereq EDLIB 'test -f /usr/include/edlib.h && ${CC:-cc} -O2 -o "$TRASH_DIRECTORY/edlib_nw" "$SEEDPIPE_SRC/bench/edlib_nw.c" -ledlib -lpthread'

# query target score cigar of extend's TSV
cols() { awk -F'\t' 'NR > 1 { print $1 "\t" $2 "\t" $5 "\t" $10 }' "$1"; }

test_expect_success 'setup: families without N (the peers read ACGT only), held out from the other tests' '
	"$ora" --gen 60 300 5 11 | sed "/^>/!s/N/A/g" >a.fa &&
	"$ora" --gen 20 300 12 11 | sed "/^>/!s/N/A/g" >b.fa
'

for s in 4,-5,-8 1,-1,-1 2,-3,-5 5,-4,-10 0,-1,-1; do
	test_expect_success PARASAIL "parasail NW, score set $s: the same scores and CIGARs" "
		./parasail_nw -t 2 --score $s a.fa >p 2>/dev/null &&
		extend --global -q --score $s a.fa >e && cols e >x &&
		test \$(wc -l <p) = 1770 && test_cmp p x &&
		./parasail_nw --score $s --identity 85 a.fa b.fa >p 2>/dev/null &&
		extend --global -q --score $s --identity 85 a.fa b.fa >e && cols e >x &&
		test \$(wc -l <p) -gt 10 && test_cmp p x
	"
done

test_expect_success PARASAIL 'parasail'"'"'s other vector functions trace back the same way' '
	./parasail_nw -a nw_scan_16 -T nw_trace_striped_16 --score 4,-5,-8 a.fa b.fa >p 2>/dev/null &&
	extend --global -q --score 4,-5,-8 a.fa b.fa >e && cols e >x && test_cmp p x
'

test_expect_success EDLIB 'edlib NW: the same edit distances' '
	./edlib_nw -t 2 a.fa >d 2>/dev/null &&
	extend --global -q a.fa | awk -F"\t" "NR > 1 { print \$1 \"\t\" \$2 \"\t\" (-\$5) }" >x &&
	test $(wc -l <d) = 1770 && test_cmp d x &&
	./edlib_nw a.fa b.fa >d 2>/dev/null &&
	extend --global -q a.fa b.fa | awk -F"\t" "NR > 1 { print \$1 \"\t\" \$2 \"\t\" (-\$5) }" >x &&
	test_cmp d x
'

test_done
