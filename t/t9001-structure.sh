#!/bin/bash
test_description='structure: no two files of common/ call each other (nm of the objects), no source file over 1,200 lines, tools/NAME.c at most 300, no comment names a document outside the repository (build-aux/structure.sh)'
. ./test-lib.sh

S="sh $SEEDPIPE_SRC/build-aux/structure.sh"

test_expect_success 'the tree keeps the structural rules' '
	$S "$SEEDPIPE_SRC" "$SEEDPIPE_BUILD" >out 2>&1 || { cat out >&2; false; }
'

# The checker finds each kind of breach (so that the test above can fail):
# a copy of the tree's objects and sources with one planted breach each.
test_expect_success 'the checker finds two objects that call each other' '
	mkdir -p b/common &&
	printf "int x_a(void);\nint x_b(void) { return x_a(); }\n" >b.c &&
	printf "int x_b(void);\nint x_a(void) { return 1; }\nint x_c(void) { return x_b(); }\n" >a.c &&
	cc -c -o b/common/one.o b.c && cc -c -o b/common/two.o a.c &&
	test_must_fail $S "$SEEDPIPE_SRC" b >out &&
	test_grep "common/one.c and common/two.c call each other\|common/two.c and common/one.c call each other" out
'

test_expect_success 'the checker finds a long file, a long tool and a document from outside' '
	mkdir -p src/common src/tools src/kernels &&
	(cd src && git init -q . &&
	 seq 1 1201 | sed "s/.*/int v&;/" >common/long.c &&
	 seq 1 301 | sed "s/.*/int w&;/" >tools/big.c &&
	 printf "/* see shared/DESIGN.md */\nint z;\n" >common/doc.c &&
	 git add . ) &&
	mkdir -p e/common && printf "int q(void) { return 0; }\n" >q.c && cc -c -o e/common/q.o q.c &&
	test_must_fail $S "$PWD/src" e >out &&
	test_grep "common/long.c: 1201 lines" out &&
	test_grep "tools/big.c: 301 lines" out &&
	test_grep "shared/DESIGN.md" out
'

test_done
