#!/bin/bash
test_description='record streams: unit tests of common/rec.c and common/rec_kinds.c'
. ./test-lib.sh
test_unit rec_test
