#!/bin/bash
test_description='index structures against a brute-force oracle (C unit test)'
. ./test-lib.sh
test_unit idx_test
test_unit idx_check_test
test_unit idx_rank_test
