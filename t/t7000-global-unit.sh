#!/bin/bash
test_description='global alignment core: score passes (scalar, vector, threads), banded traceback and the identity bound against a full-matrix DP oracle with the documented tie rule; OpenCL against the CPU'
. ./test-lib.sh

# the device tests inside skip themselves when no OpenCL device exists
test_unit galign_test
