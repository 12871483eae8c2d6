#!/bin/bash
test_description='the msd sort registry against a qsort oracle'
. ./test-lib.sh
test_unit msd_test
