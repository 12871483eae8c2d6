#!/bin/bash
test_description='alignment core: bit-parallel semi-global alignment and CIGAR against a DP oracle, --no-gaps, threads, OpenCL against the CPU'
. ./test-lib.sh

# device tests inside skip themselves when no OpenCL device exists
test_unit align_test
