#!/bin/bash
test_description='extend: SAM lines written directly equal htslib'"'"'s for random records'
. ./test-lib.sh

test_unit ext_sam
