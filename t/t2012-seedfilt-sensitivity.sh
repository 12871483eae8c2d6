#!/bin/bash
test_description='seedfilt: the stated sensitivity holds (every occurrence with k errors gives a candidate)'
. ./test-lib.sh
. "$TEST_DIR"/t2999-filt-lib.sh

test_expect_success 'setup' '
	"$FILT_ORACLE" -G 51 3 6000 >ref.fa &&
	awk "/^>/ { printf \"%s%d\", n++ ? \",\" : \"\", t; next } { t += length(\$0) } END { print \"\" }" ref.fa >offsets &&
	test_grep "^0,[0-9]*,[0-9]*$" offsets
'

# check NAME SEQIDX_OPTS METHOD E STEP LEN
check() {
	test_expect_success "$1" '
		seqidx -q '"$2"' -m all -o x.sx ref.fa &&
		seedfilt -x x.sx -m '"$3"' -e '"$4"' -s '"$5"' -v -L '"$6"' </dev/null 2>err >/dev/null &&
		ks=$(sed -n "s/.*at most \([0-9-]*\) substitutions.*/\1/p" err) &&
		ke=$(sed -n "s/.*at most \([0-9-]*\) edit operations.*/\1/p" err) &&
		test -n "$ks" && test -n "$ke" && test "$ks" -ge 0 && test "$ke" -ge 0 &&
		say "# '"$1"': k_sub=$ks k_edit=$ke" &&
		"$FILT_ORACLE" -K 52 200 '"$6"' $ks s ref.fa >sub.fa &&
		"$FILT_ORACLE" -K 53 200 '"$6"' $ke e ref.fa >edit.fa &&
		seedfilt -q -x x.sx -m '"$3"' -e '"$4"' -s '"$5"' sub.fa >sub.sp &&
		seedfilt -q -x x.sx -m '"$3"' -e '"$4"' -s '"$5"' edit.fa >edit.sp &&
		for t in sub:0 edit:$ke; do
			f=${t%%:*} tol=${t#*:} &&
			recview $f.sp | awk -F "\t" -v tol=$tol -v O=$(cat offsets) "
				BEGIN { split(O, off, \",\") }
				!/^#/ { split(\$2, r, \":\"); ok = 0; n = split(\$7, c, \",\")
				  for (i = 1; i <= n; i++) { split(c[i], x, \":\"); d = x[3] - off[x[2] + 1] - r[3]
				    if (x[2] == r[2] && x[4] == r[4] && d <= tol && d >= -tol) ok = 1 }
				  if (!ok) { bad++; print \"missed: \" \$2 }
				  tot++ }
				END { exit !(tot == 200 && bad == 0) }" >missed.$f || { cat missed.$f; return 1; }
		done
	'
}

check 'ph u=5 l=8 e=1 step 1, 40 bp'      '-u 5 -l 8'   ph  1 1 40
check 'bs ##-## l=10 e=2 step 2, 60 bp'   '-S ##-## -l 10' bs 2 2 60
check 'fm u=5 l=8 e=0 step 4, 50 bp'      '-u 5 -l 8'   fm  0 4 50
check 'bpr u=4 l=8 e=2 step 1, 40 bp'     '-u 4 -l 8'   bpr 2 1 40
check 'bpr u=6 l=12 e=1 step 3, 80 bp'    '-u 6 -l 12'  bpr 1 3 80
check 'bpr u=5 l=10 e=3 step 2, 100 bp'   '-u 5 -l 10'  bpr 3 2 100
check 'bpr chained u=6 l=9 e=1 step 8, 60 bp'   '-u 6 -l 9'   bpr 1 8 60
check 'bpr chained u=12 l=15 e=1 step 14, 100 bp' '-u 12 -l 15' bpr 1 14 100
check 'ph chained u=5 l=6 e=1 step 6, 50 bp'    '-u 5 -l 6'   ph  1 6 50

test_expect_success 'chained patterns (step = q length) state P - 1 errors' '
	seqidx -q -u 12 -l 15 -m general -o c.sx ref.fa &&
	seedfilt -x c.sx -m bpr -e 1 -s 14 -v -L 100 </dev/null 2>err >/dev/null &&
	test_grep "6 patterns per strand; every occurrence with at most 5 substitutions and at most 5 edit operations" err &&
	seedfilt -x c.sx -m bpr -e 1 -s 13 -v -L 100 </dev/null 2>err >/dev/null &&
	! grep -q "at most 5 edit operations" err
'

# bpr: an N in q costs one error (a mismatch), an N in the seed skips the
# pattern as a substitution there kills it: with the chained design (6
# patterns of 26 bases at 0, 14, .., 70) 5 errors, N among them, are found.
# 4 edit operations plus one N anywhere; 2 edit operations plus N at 20, 48
# and 76 (29, 51, 79 on the reverse strand), each in the q of one pattern and
# the seed of the next (skipping every window with an N would lose them all)
test_expect_success 'bpr chained: 5 errors, N among them, are still found' '
	seqidx -q -u 12 -l 15 -m general -o c.sx ref.fa &&
	"$FILT_ORACLE" -K 56 300 100 4 e ref.fa |
		awk "BEGIN { srand(57) } /^>/ { print; next }
			{ p = int(rand() * length(\$0)) + 1; print substr(\$0, 1, p - 1) \"N\" substr(\$0, p + 1) }" >n1.fa &&
	"$FILT_ORACLE" -K 58 300 100 2 e ref.fa |
		awk "/^>/ { print; next } { s = \$0; for (p = 21; p <= 77; p += 28) s = substr(s, 1, p - 1) \"N\" substr(s, p + 1); print s }" >n3.fa &&
	test $(grep -c N n1.fa) = 300 && test $(grep -c "^.\{20\}N.\{27\}N.\{27\}N" n3.fa) = 300 &&
	for f in n1 n3; do
		seedfilt -q -x c.sx -m bpr -e 1 -s 14 $f.fa >$f.sp &&
		recview $f.sp | awk -F "\t" -v O=$(cat offsets) "
			BEGIN { split(O, off, \",\") }
			!/^#/ { split(\$2, r, \":\"); ok = 0; n = split(\$7, c, \",\")
			  for (i = 1; i <= n; i++) { split(c[i], x, \":\"); d = x[3] - off[x[2] + 1] - r[3]
			    if (x[2] == r[2] && x[4] == r[4] && d <= 5 && d >= -5) ok = 1 }
			  if (!ok) { bad++; print \"missed: \" \$2 }
			  tot++ }
			END { exit !(tot == 300 && bad == 0) }" >missed.$f || { cat missed.$f; return 1; }
	done
'

test_expect_success 'the statement for reads shorter than a pattern' '
	seedfilt -x x.sx -m bpr -e 1 -v -L 5 </dev/null 2>err >/dev/null &&
	test_grep "shorter than a pattern" err
'

test_expect_success '-m auto -E A -L LEN chooses a setting that guarantees A' '
	seqidx -q -u 5 -l 10 -m all -o a.sx ref.fa &&
	for A in 0 2 4 6; do
		seedfilt -x a.sx -e 0 -s 4 -E $A -L 60 -v </dev/null >/dev/null 2>err &&
		ke=$(sed -n "s/.*at most \([0-9-]*\) edit operations.*/\1/p" err) &&
		test -n "$ke" && test "$ke" -ge $A || return 1
	done &&
	test_grep "using -m" err &&
	"$FILT_ORACLE" -K 55 100 60 6 e ref.fa >k6.fa &&
	seedfilt -q -x a.sx -e 0 -s 4 -E 6 -L 60 k6.fa >k6.sp &&
	recview k6.sp | awk -F "\t" -v O=$(cat offsets) "
		BEGIN { split(O, off, \",\") }
		!/^#/ { split(\$2, r, \":\"); ok = 0; n = split(\$7, c, \",\")
		  for (i = 1; i <= n; i++) { split(c[i], x, \":\"); d = x[3] - off[x[2] + 1] - r[3]
		    if (x[2] == r[2] && x[4] == r[4] && d <= 6 && d >= -6) ok = 1 }
		  if (!ok) bad++; tot++ }
		END { exit !(tot == 100 && bad == 0) }"
'

test_expect_success '-E warns when the bound is not guaranteed' '
	seqidx -q -u 5 -l 8 -o x.sx ref.fa &&
	"$FILT_ORACLE" -K 54 10 30 0 s ref.fa >r.fa &&
	seedfilt -x x.sx -m ph -e 1 -E 20 r.fa >/dev/null 2>err &&
	test_grep "warning: -E 20: reads of 30 bases are only guaranteed" err &&
	test_grep "warning: -E 20: 10 of 10 reads are not guaranteed a candidate" err &&
	seedfilt -x x.sx -m ph -e 1 -E 0 r.fa >/dev/null 2>err &&
	! grep -q warning err
'

test_done
