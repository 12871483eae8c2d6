#!/bin/bash
test_description='OpenCL program cache: one file per build input set, reused, rebuilt silently when damaged'
. ./test-lib.sh

OCL=$SEEDPIPE_BUILD/t/ocl_test
CACHE=$XDG_CACHE_HOME/seedpipe
# PoCL keeps its own cache under XDG_CACHE_HOME and gives no device when that
# is unusable; keep it apart so that the tests below break only ours
POCL_CACHE_DIR=$XDG_CACHE_HOME/pocl
export POCL_CACHE_DIR

# number of entries (dot files too: no temporary may be left behind)
count_cache() { ls -A "${1:-$CACHE}" 2>/dev/null | wc -l | tr -d ' '; }

test_expect_success OPENCL 'the first build writes one cache file' '
	"$OCL" --build "" >out 2>err &&
	test_grep "^hits=0 builds=1 writes=1$" out &&
	test_grep "^pack2 ok$" out &&
	test "$(count_cache)" = 1 &&
	f=$(sed -n "s/^path=//p" out) && test -f "$f" &&
	case "$f" in "$CACHE"/*.bin) true ;; *) false ;; esac &&
	test ! -s err
'

test_expect_success OPENCL 'the second run reuses it (no new file)' '
	SEEDPIPE_DEBUG=1 "$OCL" --build "" >out 2>err &&
	test_grep "^hits=1 builds=0 writes=0$" out &&
	test_grep "^pack2 ok$" out &&
	test_grep "ocl: program cache hit .pack." err &&
	test "$(count_cache)" = 1
'

test_expect_success OPENCL 'a corrupted cache file is rebuilt silently, the result still right' '
	f=$(ls "$CACHE"/*.bin) &&
	size=$(wc -c <"$f") &&
	printf "\377\377\377\377" | dd of="$f" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null &&
	"$OCL" --build "" >out 2>err &&
	test_grep "^hits=0 builds=1 writes=1$" out &&
	test_grep "^pack2 ok$" out &&
	test ! -s err &&
	"$OCL" --build "" >out &&
	test_grep "^hits=1 builds=0" out &&
	test "$(count_cache)" = 1
'

test_expect_success OPENCL 'SEEDPIPE_DEBUG names the checksum mismatch' '
	f=$(ls "$CACHE"/*.bin) &&
	printf "\377\377\377\377" | dd of="$f" bs=1 seek=100 conv=notrunc 2>/dev/null &&
	SEEDPIPE_DEBUG=1 "$OCL" --build "" >out 2>err &&
	test_grep "checksum mismatch" err &&
	test_grep "^pack2 ok$" out
'

test_expect_success OPENCL 'a truncated cache file and a foreign file are rebuilt silently' '
	f=$(ls "$CACHE"/*.bin) &&
	truncate -s 30 "$f" &&
	"$OCL" --build "" >out 2>err &&
	test_grep "^hits=0 builds=1 writes=1$" out && test ! -s err &&
	echo "not a program" >"$f" &&
	"$OCL" --build "" >out 2>err &&
	test_grep "^hits=0 builds=1 writes=1$" out && test ! -s err &&
	test_grep "^pack2 ok$" out &&
	"$OCL" --build "" >out &&
	test_grep "^hits=1 builds=0" out
'

test_expect_success OPENCL 'the key changes when the build options change' '
	"$OCL" --build "" >out1 &&
	"$OCL" --build "-DSP_UNUSED_OPTION=1" >out2 &&
	test_grep "^hits=0 builds=1 writes=1$" out2 &&
	test_grep "^pack2 ok$" out2 &&
	test "$(count_cache)" = 2 &&
	p1=$(sed -n "s/^path=//p" out1) && p2=$(sed -n "s/^path=//p" out2) &&
	test "$p1" != "$p2" && test -f "$p1" && test -f "$p2"
'

test_expect_success OPENCL 'an unusable cache directory still works, quietly' '
	echo file >not-a-dir &&
	XDG_CACHE_HOME=$PWD/not-a-dir "$OCL" --build "" >out 2>err &&
	test_grep "^hits=0 builds=1 writes=0$" out &&
	test_grep "^pack2 ok$" out &&
	test ! -s err &&
	mkdir -p blocked && echo file >blocked/seedpipe &&
	XDG_CACHE_HOME=$PWD/blocked "$OCL" --build "" >out 2>err &&
	test_grep "^hits=0 builds=1 writes=0$" out &&
	test ! -s err
'

test_lazy_prereq NOT_ROOT 'test "$(id -u)" != 0'
test_expect_success OPENCL,NOT_ROOT 'a read-only cache directory still works, quietly' '
	mkdir -p ro/seedpipe && chmod 555 ro/seedpipe &&
	XDG_CACHE_HOME=$PWD/ro "$OCL" --build "" >out 2>err &&
	chmod 755 ro/seedpipe &&
	test_grep "^hits=0 builds=1 writes=0$" out &&
	test ! -s err
'

test_expect_success OPENCL 'SEEDPIPE_NO_CACHE=1 neither reads nor writes the cache' '
	before=$(count_cache) &&
	SEEDPIPE_NO_CACHE=1 "$OCL" --build "-DSP_OTHER_OPTION=2" >out &&
	test_grep "^hits=0 builds=1 writes=0$" out &&
	test_grep "^path=(none)$" out &&
	test "$(count_cache)" = "$before"
'

test_expect_success OPENCL 'without XDG_CACHE_HOME (or with a relative one) the cache is ~/.cache/seedpipe' '
	mkdir home &&
	HOME=$PWD/home XDG_CACHE_HOME=relative/dir "$OCL" --build "" >out &&
	test_grep "builds=1 writes=1$" out &&
	test "$(count_cache home/.cache/seedpipe)" = 1 &&
	test ! -e relative &&
	(unset XDG_CACHE_HOME && HOME=$PWD/home "$OCL" --build "" >out) &&
	test_grep "^hits=1 builds=0" out
'

test_done
