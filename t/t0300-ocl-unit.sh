#!/bin/bash
test_description='OpenCL layer unit tests: error names, device specs, pack kernels against the C code, cache, batching'
. ./test-lib.sh

# device tests inside skip themselves when no OpenCL device exists
test_unit ocl_test
