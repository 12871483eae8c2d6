#!/bin/bash
test_description='mflBPR equals dynamic-programming edit distance; the AVX-512 scan equals the plain C scan (C unit test)'
. ./test-lib.sh
test_unit bpr_test
