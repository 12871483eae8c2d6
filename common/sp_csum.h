/*
 * sp_csum.h - how the readers of untrusted files compare a stored checksum
 * with the one they computed (record streams in rec.c, the index in
 * idx_load.c).
 *
 * A fuzzing build (make fuzz compiles with -DSP_FUZZ_NO_CHECKSUM) takes every
 * stored checksum as right, so that mutated inputs get past the checksums to
 * the structure checks behind them, which must hold on their own: a file can
 * carry valid checksums of invalid contents.  Every other build compares.
 */
#ifndef SP_CSUM_H
#define SP_CSUM_H

#ifdef SP_FUZZ_NO_CHECKSUM
#define SP_SUM_BAD(got, want) ((void)(got), (void)(want), 0)
#else
#define SP_SUM_BAD(got, want) ((got) != (want))
#endif

#endif
