#!/bin/bash
test_description='extend library (common/ext.c): windows with N runs, MAPQ, CIGAR text, batches by hand'
. ./test-lib.sh

test_unit ext_test
