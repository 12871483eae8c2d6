#!/bin/bash
test_description='seedfilt -M planner and candidates store against brute-force oracles (C unit test)'
. ./test-lib.sh
test_unit filt_mplan_test
