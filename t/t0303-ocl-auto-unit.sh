#!/bin/bash
test_description='-d auto: the measured model (choice, fit, calibration files)'
. ./test-lib.sh
test_unit ocl_auto_test
