#!/bin/bash
test_description='parsers of untrusted input are linear: worst-case-shaped inputs under 1 MB are parsed quickly and scale with their size'
. ./test-lib.sh
test_unit parse_time
