/*
 * fuzz.h - shared by the fuzz targets of fuzz/ (one file per parser of
 * untrusted input, each defining LLVMFuzzerTestOneInput).
 *
 * Each target is built twice:
 *  - by `make fuzz` with clang and libFuzzer into build-fuzz/bin/NAME, with
 *    -DSP_FUZZ (parse errors return to the harness instead of exiting) and
 *    -DSP_FUZZ_NO_CHECKSUM (stored checksums are taken as right, so mutated
 *    inputs reach the structure checks: sp_csum.h);
 *  - by the normal build into build/fuzz/NAME with fuzz/replay.c as main,
 *    which runs the target on files (each in a child process, so an input
 *    that a tool would reject with exit 1 is fine and a crash or a hang is
 *    reported): make check replays fuzz/regress/NAME/ with it.
 *
 * A target checks more than "no crash": decoders are checked against their
 * encoders (decode, encode, compare), two decoders of one format against
 * each other, parsed records against the format's rules.  A broken check
 * calls fuzz_fail, which aborts so that libFuzzer keeps the input.
 */
#ifndef SP_FUZZ_H
#define SP_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken invariant: say which and abort (the input is the reproducer). */
#define fuzz_fail(...) do { fprintf(stderr, "fuzz: " __VA_ARGS__); \
	fputc('\n', stderr); abort(); } while (0)

/* An in-memory file holding DATA, positioned at 0 (close it after use). */
static inline int fuzz_memfd(const void *data, size_t size)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);
	size_t off = 0;

	if (fd < 0)
		fuzz_fail("memfd_create failed");
	while (off < size) {
		ssize_t k = write(fd, (const char *)data + off, size - off);

		if (k <= 0)
			fuzz_fail("write to memfd failed");
		off += (size_t)k;
	}
	if (lseek(fd, 0, SEEK_SET) != 0)
		fuzz_fail("lseek failed");
	return fd;
}

#endif
