#!/bin/sh
# structure.sh - the structural rules of the source tree (README, Hacking):
#
#   sh build-aux/structure.sh SRC BUILD
#
# 1. no two files of common/ call each other: from `nm` of BUILD/common/*.o,
#    file A calls file B when A uses a symbol that B defines; a pair that
#    calls both ways is listed;
# 2. no source file (C, OpenCL, headers, shell, Python, Makefile) over 1,200
#    lines;
# 3. tools/NAME.c (options, usage, provenance, one call into common/) at
#    most 300 lines, a part tools/NAME_PART.c too;
# 4. no comment or text in common/, tools/, kernels/ names a .md, .txt or
#    .pdf document that is not in the repository.
# Prints one line per breach and exits 1 if there is any, else exits 0.
set -u
src=${1:?usage: structure.sh SRC BUILD}
build=${2:?usage: structure.sh SRC BUILD}
bad=0
tmp=${TMPDIR:-/tmp}/structure.$$
mkdir -p "$tmp" || exit 2
trap 'rm -rf "$tmp"' EXIT

ls "$build"/common/*.o >/dev/null 2>&1 || { echo "structure: no objects in '$build/common'" >&2; exit 2; }
# FILE SYMBOL lines: what each object defines, and what it uses
for o in "$build"/common/*.o; do
	f=$(basename "$o" .o)
	nm --defined-only -g "$o" | awk -v f="$f" 'NF == 3 { print f, $3 }' >> "$tmp/def"
	nm -u "$o" | awk -v f="$f" '{ print f, $NF }' >> "$tmp/use"
done
# A B: A uses a symbol B defines (A != B), once per pair
awk 'NR == FNR { owner[$2] = $1; next }
     ($2 in owner) && owner[$2] != $1 { print $1, owner[$2] }' "$tmp/def" "$tmp/use" | sort -u > "$tmp/calls"
awk '{ e[$1 " " $2] = 1 } END { for (k in e) { split(k, p, " "); if (p[1] < p[2] && (p[2] " " p[1]) in e) print p[1], p[2] } }' \
	"$tmp/calls" | sort > "$tmp/mutual"
while read -r a b; do
	echo "common/$a.c and common/$b.c call each other"
	bad=1
done < "$tmp/mutual"

cd "$src" || exit 2
files=$(git ls-files 2>/dev/null | grep -E '\.(c|h|cl|sh|py)$|(^|/)Makefile$')
[ -n "$files" ] || files=$(find common tools kernels t bench fuzz build-aux -type f \( -name '*.[ch]' -o -name '*.cl' -o -name '*.sh' -o -name '*.py' \) 2>/dev/null)
for f in $files; do
	n=$(wc -l < "$f")
	if [ "$n" -gt 1200 ]; then
		echo "$f: $n lines (over 1,200)"
		bad=1
	fi
done
for f in tools/*.c; do
	n=$(wc -l < "$f")
	if [ "$n" -gt 300 ]; then
		echo "$f: $n lines (a tool's file holds at most 300)"
		bad=1
	fi
done
# comment lines (a C comment's lines, // or # comments) only
for d in $(grep -hE '^[[:space:]]*(/\*|\*|//|#)|/\*' common/* tools/* kernels/* |
		grep -oE '[A-Za-z0-9_./-]+\.(md|txt|pdf)\b' | sort -u); do
	case $d in
	*/*) p=$d ;;
	*) p=$(git ls-files 2>/dev/null | grep -E "(^|/)$d\$" | head -1) ;;
	esac
	if [ -z "$p" ] || [ ! -e "$p" ]; then
		echo "a comment names '$d', which is not in the repository: $(grep -lF "$d" common/* tools/* kernels/* | tr '\n' ' ')"
		bad=1
	fi
done
exit $bad
