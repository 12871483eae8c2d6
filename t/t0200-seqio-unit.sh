#!/bin/bash
test_description='seqio: reader and 2-bit packing against oracles (C unit test)'
. ./test-lib.sh
test_unit seqio_test
