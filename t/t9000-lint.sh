#!/bin/bash
test_description='lint: each tool documents the same options in usage() and its man page; man pages are clean'
. ./test-lib.sh

# Option column of a listing: lines starting (after indentation) with '-',
# cut at the first run of two blanks; every -x / --long token in it.
opt_tokens() {
	sed -n 's/^[[:space:]]*\(-.*\)$/\1/p' |
	sed 's/  .*//' |
	grep -o -E '(^|[ ,/|[])--?[A-Za-z0-9?][-A-Za-z0-9]*' |
	sed 's/^[ ,/|[]//' | sort -u
}

# The OPTIONS section of a man page, rendered, tag lines only.
man_tokens() {
	mandoc -T ascii "$1" | col -b |
	awk '/^[A-Z][A-Z ]*$/ { sect = $0; next }
	     sect == "OPTIONS" && /^       -/ { print }' |
	opt_tokens
}

tools=$(cd "$SEEDPIPE_SRC/tools" 2>/dev/null && ls *.c 2>/dev/null | grep -v _ | sed 's/\.c$//')   # NAME_PART.c: a part of NAME

test_expect_success 'there is at least one tool' '
	test -n "$tools"
'

for t in $tools; do
	test_expect_success MANDOC "$t: usage and man page list the same options" '
		test -f "$SEEDPIPE_SRC/man/$t.1" &&
		"$t" --help >usage.$t &&
		opt_tokens <usage.$t >u.$t &&
		man_tokens "$SEEDPIPE_SRC/man/$t.1" >m.$t &&
		test -s u.$t &&
		test_cmp u.$t m.$t
	'
	test_expect_success "$t: a bad option is a usage error (exit 2)" '
		test_expect_code 2 "$t" --no-such-option-xyz 2>err &&
		test_grep -i "usage" err
	'
	test_expect_success "$t: --version names the tool" '
		"$t" --version >out && test_grep "$t" out
	'
done

for m in "$SEEDPIPE_SRC"/man/*.[157]; do
	[ -f "$m" ] || continue
	n=$(basename "$m")
	test_expect_success MANDOC "man page $n passes mandoc -Tlint" '
		mandoc -T lint -W warning "$m" >lint.out 2>&1
		test ! -s lint.out || { cat lint.out >&2; false; }
	'
done

test_expect_success 'every tool has a man page and every man page section exists' '
	for t in $tools; do test -f "$SEEDPIPE_SRC/man/$t.1" || exit 1; done &&
	test -f "$SEEDPIPE_SRC/man/seedpipe.7" &&
	test -f "$SEEDPIPE_SRC/man/seedpipe-rec.5"
'

test_done
