#!/bin/bash
test_description='sp_md5 (strsort -R) against the RFC 1321 test suite'
. ./test-lib.sh
test_unit md5_test
