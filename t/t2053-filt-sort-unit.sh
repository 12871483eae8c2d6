#!/bin/bash
test_description='seedfilt sort of candidate keys (filt_sort_keys) against qsort on random inputs (C unit test)'
. ./test-lib.sh
test_unit filt_sort_test
