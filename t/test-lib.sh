# test-lib.sh - a small TAP test library in the style of git's t/test-lib.sh.
#
# A test script:
#
#     test_description='what this script covers'
#     . ./test-lib.sh
#     test_expect_success 'name' '
#         cmd1 &&
#         cmd2
#     '
#     test_expect_success OPENCL 'needs a device' '...'
#     test_done
#
# Each script runs in its own trash directory t/trash.SCRIPT (removed when every
# test passed), with the freshly built tools first on PATH.  Output is TAP, so
# prove (or any TAP runner) can run the suite.  Set TEST_VERBOSE=1 (or pass -v)
# to see each test's commands and output.
#
# Helpers: test_must_fail (a crash by a signal is a failure, not "failed as
# expected"), test_expect_code, test_cmp, test_grep, test_set_prereq,
# test_lazy_prereq, test_have_prereq, test_unit (run a C unit test that prints
# its own TAP), test_skip_all, peak_rss (a command's peak RSS in KB).

TEST_DIR=$(cd "$(dirname "$0")" && pwd)
TEST_NAME=$(basename "$0" .sh)
: "${SEEDPIPE_BIN:=$TEST_DIR/../bin}"
: "${SEEDPIPE_BUILD:=$TEST_DIR/../build}"
SEEDPIPE_SRC=$(cd "$TEST_DIR/.." && pwd)
export SEEDPIPE_BIN SEEDPIPE_BUILD SEEDPIPE_SRC
PATH=$SEEDPIPE_BIN:$PATH
export PATH
LC_ALL=C
export LC_ALL
# deterministic program cache per script; never the user's
# trash directories are per build tree, so concurrent runs of different builds
# (make check and make asan-check) never share one
TEST_TAG=$(basename "$SEEDPIPE_BUILD")
XDG_CACHE_HOME=$TEST_DIR/trash.$TEST_TAG.$TEST_NAME.cache
export XDG_CACHE_HOME
# PoCL's own kernel cache (the code it compiles for each kernel and
# work-group size: ~20 s for mem.cl when cold, minutes under a sanitizer)
# is one for every script and every build tree of the run, t/pocl-cache.  Our
# program cache stays per script (XDG_CACHE_HOME); t0301, lib-auto.sh and the
# -M tests of t2051 put PoCL's beside it again, where they measure or break it.
POCL_CACHE_DIR=$TEST_DIR/pocl-cache
export POCL_CACHE_DIR
unset SEEDPIPE_DEVICE SEEDPIPE_INDEX
# awk's srand(N) and rand() the same in every awk (awk-rnd.sh)
. "$TEST_DIR"/awk-rnd.sh

case "$1" in -v|--verbose) TEST_VERBOSE=1 ;; esac

test_count=0
test_failed=0
test_skipped=0
test_prereqs=" "
test_lazy_done=" "

TRASH_DIRECTORY=$TEST_DIR/trash.$TEST_TAG.$TEST_NAME
rm -rf "$TRASH_DIRECTORY" "$XDG_CACHE_HOME"
mkdir -p "$TRASH_DIRECTORY" || { echo "Bail out! cannot make $TRASH_DIRECTORY"; exit 1; }
cd "$TRASH_DIRECTORY" || exit 1

# Sanitizer runs (make asan-check sets ASAN_OPTIONS, make tsan-check
# TSAN_OPTIONS): every process writes its reports to a file under
# $TEST_ASAN_LOGS, which test_expect_success reads back.
TEST_ASAN_LOGS=
if [ -n "$ASAN_OPTIONS" ] || [ -n "$TSAN_OPTIONS" ]; then
	TEST_ASAN_LOGS=$TEST_DIR/asanlog.$TEST_TAG.$TEST_NAME
	rm -rf "$TEST_ASAN_LOGS" && mkdir -p "$TEST_ASAN_LOGS" || exit 1
	[ -z "$ASAN_OPTIONS" ] || export ASAN_OPTIONS="$ASAN_OPTIONS:log_path=$TEST_ASAN_LOGS/log"
	[ -z "$TSAN_OPTIONS" ] || export TSAN_OPTIONS="$TSAN_OPTIONS:log_path=$TEST_ASAN_LOGS/log"
fi

# fd 3: TAP on the real stdout; fd 4: test output (hidden unless verbose)
exec 3>&1
if [ -n "$TEST_VERBOSE" ]; then exec 4>&2; else exec 4>/dev/null; fi

say() { printf '%s\n' "$*" >&3; }

test_set_prereq() { test_prereqs="$test_prereqs$1 "; }

# test_lazy_prereq NAME 'script': NAME holds if the script succeeds, evaluated
# the first time it is asked for.
test_lazy_prereq() { eval "test_lazy_script_$1=\$2"; }

# peak_rss OUT ERR CMD...: run CMD (stdout to OUT, stderr to ERR), print its
# peak RSS in KB (getrusage of the children) and exit with its status.
peak_rss() {
	python3 -c '
import resource, subprocess, sys
with open(sys.argv[1], "wb") as o, open(sys.argv[2], "wb") as e:
    r = subprocess.call(sys.argv[3:], stdout=o, stderr=e)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(r)' "$@"
}

test_have_prereq() {
	_p=$1
	case "$_p" in !*) _neg=1; _p=${_p#!} ;; *) _neg= ;; esac
	case "$test_lazy_done" in *" $_p "*) ;; *)
		test_lazy_done="$test_lazy_done$_p "
		eval "_s=\${test_lazy_script_$_p}"
		if [ -n "$_s" ] && ( eval "$_s" ) >&4 2>&1; then
			test_set_prereq "$_p"
		fi ;;
	esac
	case "$test_prereqs" in *" $_p "*) _have=1 ;; *) _have= ;; esac
	if [ -n "$_neg" ]; then [ -z "$_have" ]; else [ -n "$_have" ]; fi
}

test_ok_() { test_count=$((test_count + 1)); say "ok $test_count - $1"; }
test_failure_() {
	test_count=$((test_count + 1)); test_failed=$((test_failed + 1))
	say "not ok $test_count - $1"
	printf '%s\n' "$2" | sed 's/^/#	/' >&3
}
test_skip_() {
	test_count=$((test_count + 1)); test_skipped=$((test_skipped + 1))
	say "ok $test_count # skip $1 (missing $2)"
}

# test_expect_success [PREREQ[,PREREQ]] 'name' 'script'
test_expect_success() {
	if [ $# = 3 ]; then _pre=$1; shift; else _pre=; fi
	_missing=
	for _q in $(printf '%s' "$_pre" | tr ',' ' '); do
		test_have_prereq "$_q" || _missing="$_missing$_q "
	done
	if [ -n "$_missing" ]; then test_skip_ "$1" "$_missing"; return; fi
	[ -n "$TEST_VERBOSE" ] && printf 'expecting success: %s\n' "$2" >&4
	if test_run_ "$2"; then
		test_ok_ "$1"
	else
		test_failure_ "$1" "$2"
	fi
}

# test_run_ SCRIPT: runs a test body.  Under the sanitizers, a report from any
# process fails it, even one that test_must_fail expected to fail.
test_run_() {
	[ -n "$TEST_ASAN_LOGS" ] || { ( cd "$TRASH_DIRECTORY" && eval "$1" ) >&4 2>&1; return; }
	rm -f "$TEST_ASAN_LOGS"/log.*
	( cd "$TRASH_DIRECTORY" && eval "$1" ) >&4 2>&1
	_rc=$?
	_log=$(cat "$TEST_ASAN_LOGS"/log.* 2>/dev/null)
	[ -n "$_log" ] && printf '%s\n' "$_log" >&4
	case "$_log" in
	*Sanitizer*|*"runtime error"*)
		say "# sanitizer report:"; printf '%s\n' "$_log" | head -40 | sed 's/^/# /' >&3
		return 1 ;;
	esac
	return $_rc
}

# test_must_fail CMD...: succeeds when CMD exits 1..125 (but not 126/127 -
# command not found or not executable) and fails when CMD succeeded or was
# killed by a signal (a crash is never an expected failure).
test_must_fail() {
	"$@"
	_rc=$?
	if [ $_rc = 0 ]; then
		echo >&2 "test_must_fail: command succeeded: $*"; return 1
	elif [ $_rc -gt 128 ] && [ $_rc -le 192 ]; then
		echo >&2 "test_must_fail: died by signal $((_rc - 128)): $*"; return 1
	elif [ $_rc = 126 ] || [ $_rc = 127 ]; then
		echo >&2 "test_must_fail: command not found or not executable: $*"; return 1
	fi
	return 0
}

# test_expect_code CODE CMD...: CMD must exit exactly with CODE.
test_expect_code() {
	_want=$1; shift
	"$@"
	_rc=$?
	[ $_rc = "$_want" ] && return 0
	echo >&2 "test_expect_code: command exited $_rc, wanted $_want: $*"
	return 1
}

# test_cmp EXPECTED ACTUAL: the files are byte-identical (diff shown if not).
test_cmp() {
	cmp -s "$1" "$2" && return 0
	diff -u "$1" "$2" | head -50 >&2
	echo >&2 "test_cmp: $1 and $2 differ"
	return 1
}

# test_grep [-v] [grep options] PATTERN FILE: like grep, with the file shown
# on failure.
test_grep() {
	if [ "$1" = "-v" ]; then
		shift
		grep "$@" >/dev/null || return 0
		echo >&2 "test_grep: unexpected match: $*"; return 1
	fi
	grep "$@" >/dev/null && return 0
	eval "_f=\${$#}"
	echo >&2 "test_grep: no match for: $* -- file contents:"; head -20 "$_f" >&2
	return 1
}

# test_unit NAME [ARGS]: run the C unit test build/t/NAME (which prints its
# own TAP plan and results) in place of this script.
test_unit() {
	_u=$SEEDPIPE_BUILD/t/$1; shift
	if [ ! -x "$_u" ]; then echo "Bail out! $_u not built"; exit 1; fi
	cd "$TRASH_DIRECTORY" || exit 1
	"$_u" "$@"
	_rc=$?
	if [ -n "$TEST_ASAN_LOGS" ] && [ $_rc != 0 ]; then
		cat "$TEST_ASAN_LOGS"/log.* 2>/dev/null | head -40 | sed 's/^/# /'
	fi
	cd "$TEST_DIR" && rm -rf "$TRASH_DIRECTORY" "$XDG_CACHE_HOME"
	[ $_rc = 0 ] && rm -rf "$TEST_ASAN_LOGS"
	exit $_rc
}

test_skip_all() { say "1..0 # SKIP $1"; cd "$TEST_DIR" && rm -rf "$TRASH_DIRECTORY" "$XDG_CACHE_HOME" "$TEST_ASAN_LOGS"; exit 0; }

test_done() {
	say "1..$test_count"
	if [ $test_failed = 0 ]; then
		cd "$TEST_DIR" && rm -rf "$TRASH_DIRECTORY" "$XDG_CACHE_HOME" "$TEST_ASAN_LOGS"
		exit 0
	fi
	say "# failed $test_failed among $test_count test(s)"
	exit 1
}

# The OpenCL device the backend-equality tests run on: $SEEDPIPE_TEST_DEVICE,
# else a CPU device (PoCL, as in CI) where there is one, else a GPU.
TEST_OCL_DEVICE=${SEEDPIPE_TEST_DEVICE:-$("$SEEDPIPE_BUILD"/t/ocl_test --list 2>/dev/null |
	awk -F'\t' '$2 == "cpu" { c = 1 } $2 == "gpu" { g = 1 } END { print c ? "cpu" : g ? "gpu" : "cpu" }')}

# Prerequisites every script may ask for.
test_lazy_prereq OPENCL '"$SEEDPIPE_BUILD"/t/ocl_test --probe'
test_lazy_prereq GZIP 'command -v gzip'
test_lazy_prereq SAMTOOLS 'command -v samtools'
test_lazy_prereq MANDOC 'command -v mandoc'
