#!/bin/bash
test_description='BDZ lookup and striped words through kernels/inc_*.h on an OpenCL device equal the CPU'
. ./test-lib.sh
test_unit bdz_ocl_test
