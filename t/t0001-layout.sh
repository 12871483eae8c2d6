#!/bin/bash
test_description='the source layout holds its rules: file sizes, thin tools, no mutual calls in common/, nothing outside the repository'
. ./test-lib.sh

S=$SEEDPIPE_SRC

test_expect_success 'no source file is over 1,200 lines' '
	(cd "$S" && wc -l common/*.c common/*.h kernels/*.cl kernels/*.h tools/*.c fuzz/*.c fuzz/*.h t/unit/*.c) |
		awk "\$2 != \"total\" && \$1 > 1200 { print; bad = 1 } END { exit bad }"
'

test_expect_success 'each tool of tools/ is at most 300 lines' '
	(cd "$S" && wc -l tools/*.c) |
		awk "\$2 != \"total\" && \$1 > 300 { print; bad = 1 } END { exit bad }"
'

test_expect_success 'no code comment points to files outside the repository' '
	! (cd "$S" && grep -n -E "\.\./shared|shared/(sources|GPU|PEERS|DESIGN)|DESIGN\.md" \
		common/* kernels/* tools/* fuzz/*.c fuzz/*.h fuzz/*.sh Makefile)
'

# mutual FILE: FILE holds "D file symbol" (file defines symbol) and "U file
# symbol" (file refers to it); prints each pair of files that use each other
# and fails if there is one.
mutual() {
	awk '$1 == "D" { def[$3] = $2 } $1 == "U" { n++; uf[n] = $2; us[n] = $3 }
		END { for (i = 1; i <= n; i++) if ((us[i] in def) && def[us[i]] != uf[i]) e[uf[i] " " def[us[i]]] = 1;
			for (k in e) { split(k, p, " "); if ((p[2] " " p[1]) in e && p[1] < p[2]) { print p[1], "<->", p[2]; bad = 1 } }
			exit bad }' "$1"
}

# common/'s object files: a file uses another when it refers to a global symbol
# that the other defines.  No two files may use each other.
test_expect_success 'no two files of common/ call each other' '
	ls "$SEEDPIPE_BUILD"/common/*.o >objs &&
	test -s objs &&
	while read -r o; do
		f=$(basename "$o" .o)
		nm -g "$o" | awk -v f="$f" "NF == 3 && \$2 ~ /[TDBRVWC]/ { print \"D\", f, \$3 } NF == 2 && \$1 == \"U\" { print \"U\", f, \$2 }"
	done <objs >syms &&
	mutual syms &&
	grep -q "^U " syms
'

test_expect_success 'the checker sees a mutual call when there is one' '
	printf "D a f1\nD b f2\nU a f2\nU b f1\n" >fake &&
	! mutual fake
'

test_expect_success 'seedfilt and extend link no index builder' '
	nm "$SEEDPIPE_BIN"/seqidx | grep -q " T idx_build$" &&
	! nm "$SEEDPIPE_BIN"/seedfilt | grep -q " T idx_build$" &&
	! nm "$SEEDPIPE_BIN"/extend | grep -q " T idx_build$"
'

test_done
