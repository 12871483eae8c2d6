#!/bin/bash
test_description='alignment prefilter: banded scalar and AVX-512 decisions against a DP oracle, align_batch output with and without it'
. ./test-lib.sh

test_unit align_pre_test
