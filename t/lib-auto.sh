# lib-auto.sh - what the -d auto tests of seedfilt and extend (t2031,
# t3122) share, sourced after test-lib.sh: the calibration cache of the
# test's home, PoCL's kernel cache beside it, and two helpers.

CAL=$XDG_CACHE_HOME/seedpipe
POCL_CACHE_DIR=$XDG_CACHE_HOME/pocl
export POCL_CACHE_DIR

# the calibration file (one per device, driver and run options; only one here)
cal() { ls "$CAL"/auto-*.txt; }
# fake COSTS (dev_fixed dev_unit nat_fixed nat_unit) into the calibration file
fake() {
	f=$(cal) && head -n 4 "$f" >f.tmp &&
	printf "dev_fixed %s\ndev_unit %s\nnat_fixed %s\nnat_unit %s\n" "$@" >>f.tmp &&
	mv f.tmp "$f"
}
