#!/bin/bash
test_description='seedfilt -E schemes for short reads (per-pattern q and e) against brute force (C unit test)'
. ./test-lib.sh
test_unit filt_scheme_test
