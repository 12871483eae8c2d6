#!/bin/bash
test_description='workflow/slurm-local.sh: a single-node Slurm cluster on localhost (make workflow-check)'
# Skipped before test-lib.sh, which empties this file's trash directory:
# make check runs this file too (and skips it), and doing so while make
# workflow-check runs it deleted the live run's files (its test 2 failed)
if [ -z "$SEEDPIPE_WORKFLOW_CHECK" ]; then
	echo "1..0 # SKIP the Slurm tests run by make workflow-check"
	exit 0
fi
. ./test-lib.sh


SL=$SEEDPIPE_SRC/workflow/slurm-local.sh
SLURM_DIR=$(mktemp -d /tmp/seedpipe-slurm.XXXXXX) || exit 1
export SEEDPIPE_SLURM_PORT=$((20000 + $$ % 4000 * 2))
stop_cluster() { sh "$SL" stop "$SLURM_DIR" >/dev/null 2>&1; rm -rf "$SLURM_DIR"; }
trap stop_cluster EXIT
trap 'stop_cluster; exit 130' INT TERM

sh "$SL" start "$SLURM_DIR" >env.sh 2>start.err
rc=$?
if [ $rc = 77 ]; then
	test_skip_all "$(sed -n 's/^slurm-local: skipped: //p' start.err)"
fi
[ $rc = 0 ] || { cat start.err >&2; echo "Bail out! slurm-local.sh start failed ($rc)"; exit 1; }
. ./env.sh

test_expect_success 'the node is idle, with the CPUs of this machine' '
	sinfo -h -N -o "%T %c" >info &&
	test "$(cat info)" = "idle $(nproc)"
'

test_expect_success 'srun hostname runs on it' '
	srun -t 1 hostname >out &&
	test "$(cat out)" = "$(hostname -s 2>/dev/null || hostname)"
'

test_expect_success 'sbatch --wrap runs a batch job with the memory it asks for' '
	id=$(sbatch --parsable --mem=100 -c 1 -o job.out --wrap "echo job \$SLURM_JOB_ID \$SLURM_MEM_PER_NODE") &&
	i=0 && while [ ! -s job.out ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done &&
	test "$(cat job.out)" = "job $id 100"
'

test_expect_success 'a job asking for more memory than the node has is refused' '
	test_must_fail sbatch --mem=100000000 --wrap true 2>err &&
	test_grep -i "memory\|node configuration" err
'

test_expect_success 'start again: the running cluster is kept' '
	sh "$SL" start "$SLURM_DIR" >env2.sh &&
	test_cmp env.sh env2.sh
'

test_expect_success 'stop ends every daemon it started' '
	pids=$(cat "$SLURM_DIR"/munged.pid "$SLURM_DIR"/slurmctld.pid "$SLURM_DIR"/slurmd.pid) &&
	test $(echo $pids | wc -w) = 3 &&
	sh "$SL" stop "$SLURM_DIR" &&
	for p in $pids; do ! kill -0 $p 2>/dev/null || return 1; done &&
	test ! -e "$SLURM_DIR" &&
	test_must_fail sh "$SL" status "$SLURM_DIR"
'

test_expect_success 'not root: skipped (77) with the reason' '
	if command -v setpriv >/dev/null; then
		test_expect_code 77 setpriv --reuid=65534 --regid=65534 --clear-groups \
			sh "$SL" start /tmp/seedpipe-slurm-nobody.$$ 2>err &&
		test_grep "skipped: not root" err
	fi
'

test_done
