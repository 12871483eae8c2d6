#!/bin/sh
# gpu-carry.sh - pack what a run on the lent GPU machine needs into carry/
# (gitignored): the built tools and C unit tests, and every shared library
# they link that is not part of the base system (the GPU machine has no
# Debian -dev packages and no network).  Usage: sh bench/gpu-carry.sh [EXTRA_BINARY...]
# Environment: SRC_BIN, SRC_BUILD: the build to pack (make's BIN and B)
# [bin, build], e.g. SRC_BIN=build-x/bin SRC_BUILD=build-x.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
c=$top/carry
src_bin=${SRC_BIN:-$top/bin}
src_build=${SRC_BUILD:-$top/build}
rm -rf "$c"
mkdir -p "$c/bin" "$c/build/t" "$c/lib"
cp "$src_bin"/* "$c/bin/"
for f in "$src_build"/t/*; do
	[ -x "$f" ] && [ -f "$f" ] && cp "$f" "$c/build/t/"
done
for x in "$@"; do cp "$x" "$c/bin/"; done
# libraries: everything ldd resolves except the C runtime and the OpenCL
# loader (the GPU machine has its own, which knows the NVIDIA driver)
for f in "$c"/bin/* "$c"/build/t/*; do
	ldd "$f" 2>/dev/null | awk '$3 ~ /^\// { print $3 }'
done | sort -u | while read -r lib; do
	case $(basename "$lib") in
	libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libOpenCL.so*) ;;
	*) cp -L "$lib" "$c/lib/" ;;
	esac
done
du -sh "$c"
