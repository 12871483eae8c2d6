#!/bin/sh
# slurm-local.sh start|stop|status [DIR] - a real single-node Slurm cluster on
# this machine, for the workflow's tests (make workflow-check): munged,
# slurmctld and slurmd on localhost, as root, without systemd, everything
# (munge key, slurm.conf, state, spool, logs, pid files, sockets) under DIR
# [$SEEDPIPE_SLURM_DIR, else /tmp/seedpipe-slurm].
#
#   start   write the key and the configuration, start the three daemons and
#           wait until sinfo shows the node idle; prints
#           "export SLURM_CONF=DIR/slurm.conf" (eval it to use sbatch, srun).
#           Exits 77 (the test suites' "skipped") with the reason on stderr
#           where a cluster cannot be started: not root, binaries missing.
#   stop    stop the daemons started from DIR (SIGTERM, then SIGKILL after
#           10 s), by the pids in DIR only; removes DIR.
#   status  exit 0 when the node answers, else 1.
#
# The node has this machine's CPUs and 90% of its memory, one partition
# "local"; memory is a consumable resource (select/cons_tres, CR_Core_Memory),
# so per-rule mem_mb requests are scheduled as on a real cluster.  Batch jobs
# are scheduled at slurmctld's next tick after their submission (once a
# second; batch_sched_delay=0): with Slurm's default of 3 s a job submitted
# just after another was scheduled waited up to 3 s, on every step of the
# workflow.  The ports
# are SEEDPIPE_SLURM_PORT and the next one [16817], away from Slurm's own.
set -u

cmd=${1:-}
dir=${2:-${SEEDPIPE_SLURM_DIR:-/tmp/seedpipe-slurm}}
port=${SEEDPIPE_SLURM_PORT:-16817}

skip() { echo "slurm-local: skipped: $*" >&2; exit 77; }
die() { echo "slurm-local: $*" >&2; exit 1; }

# stop_pid NAME: SIGTERM the daemon whose pid DIR/NAME.pid holds, wait for it
stop_pid() {
	[ -f "$dir/$1.pid" ] || return 0
	pid=$(cat "$dir/$1.pid" 2>/dev/null)
	case "$pid" in ''|*[!0-9]*) return 0 ;; esac
	kill -TERM "$pid" 2>/dev/null || return 0
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1; i=$((i + 1))
	done
	kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
	rm -f "$dir/$1.pid"
}

do_stop() {
	[ -d "$dir" ] || return 0
	stop_pid slurmd
	stop_pid slurmctld
	stop_pid munged
	case "$dir" in /tmp/*|"${TMPDIR:-/tmp}"/*) rm -rf "$dir" ;; esac
}

do_status() {
	[ -f "$dir/slurm.conf" ] || return 1
	SLURM_CONF=$dir/slurm.conf sinfo -h -N -o '%T' 2>/dev/null | grep -q '^idle\|^mixed\|^allocated'
}

do_start() {
	[ "$(id -u)" = 0 ] || skip "not root (munged, slurmctld and slurmd run as root here)"
	for b in munged slurmctld slurmd sinfo sbatch srun; do
		command -v $b >/dev/null 2>&1 || [ -x /usr/sbin/$b ] ||
			skip "no $b (apt-get install slurm-wlm munge)"
	done
	PATH=$PATH:/usr/sbin
	if do_status; then
		echo "export SLURM_CONF=$dir/slurm.conf"
		return 0
	fi
	do_stop
	mkdir -p "$dir/state" "$dir/spool" || die "cannot make '$dir'"
	chmod 700 "$dir"
	host=$(hostname -s 2>/dev/null || hostname)
	cpus=$(nproc)
	mem=$(awk '/^MemTotal:/ { printf "%d", $2 / 1024 * 0.9 }' /proc/meminfo)

	# munge: a fresh key, its own socket
	dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 2>/dev/null &&
		chmod 400 "$dir/munge.key" || die "cannot write the munge key"
	munged --force --socket="$dir/munge.socket" --key-file="$dir/munge.key" \
		--pid-file="$dir/munged.pid" --log-file="$dir/munged.log" \
		--seed-file="$dir/munged.seed" 2>"$dir/munged.err" ||
		{ cat "$dir/munged.err" >&2; do_stop; skip "munged does not start"; }

	cat >"$dir/slurm.conf" <<EOF
# made by seedpipe's workflow/slurm-local.sh: one node, localhost
ClusterName=seedpipe
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/builtin
SchedulerParameters=batch_sched_delay=0
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
MinJobAge=60
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
	export SLURM_CONF="$dir/slurm.conf"
	slurmctld -i 2>"$dir/slurmctld.err" ||
		{ cat "$dir/slurmctld.err" "$dir/slurmctld.log" >&2; do_stop; die "slurmctld does not start"; }
	slurmd 2>"$dir/slurmd.err" ||
		{ cat "$dir/slurmd.err" "$dir/slurmd.log" >&2; do_stop; die "slurmd does not start"; }
	i=0
	while ! do_status; do
		i=$((i + 1))
		if [ $i -gt 300 ]; then
			tail -20 "$dir/slurmctld.log" "$dir/slurmd.log" >&2
			do_stop
			die "the node did not come up idle in 30 s"
		fi
		sleep 0.1
	done
	echo "export SLURM_CONF=$dir/slurm.conf"
}

case "$cmd" in
start) do_start ;;
stop) do_stop ;;
status) do_status ;;
*) echo "usage: slurm-local.sh start|stop|status [DIR]" >&2; exit 2 ;;
esac
