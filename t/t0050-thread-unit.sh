#!/bin/bash
test_description='sp_for and sp_pipeline against serial oracles (C unit test)'
. ./test-lib.sh
test_unit thread_test
