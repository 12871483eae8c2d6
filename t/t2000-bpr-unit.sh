#!/bin/bash
test_description='mflBPR equals dynamic-programming edit distance (C unit test)'
. ./test-lib.sh
test_unit bpr_test
