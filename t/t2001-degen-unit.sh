#!/bin/bash
test_description='degenerate patterns by item index equal a Hamming scan (C unit test)'
. ./test-lib.sh
test_unit degen_test
