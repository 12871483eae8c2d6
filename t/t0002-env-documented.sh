#!/bin/bash
test_description='every environment variable the tools read is documented in a man page'
. ./test-lib.sh

S=$SEEDPIPE_SRC

# names as the code spells them in getenv("..."); a man page names each as a
# word once roff's font escapes are taken out
test_expect_success 'each SEEDPIPE_ variable read by common/ or tools/ is in man/' '
	(cd "$S" && grep -ho "getenv(\"SEEDPIPE_[A-Z0-9_]*\")" common/*.c tools/*.c) |
		sed "s/getenv(\"//; s/\")//" | sort -u >vars &&
	test $(wc -l <vars) -gt 10 &&
	sed "s/\\\\f[BIRP]//g" "$S"/man/* >pages &&
	: >missing &&
	while read -r v; do
		grep -q -F -w -- "$v" pages || echo "$v" >>missing
	done <vars &&
	cat missing &&
	test ! -s missing
'

test_done
