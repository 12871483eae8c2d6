#!/bin/sh
# status.sh JOBID - Snakemake's --cluster-status for Slurm without
# accounting (no sacct): the job's state from scontrol, as "running",
# "success" or "failed".  A job slurmctld no longer knows (past MinJobAge)
# is taken as ended well only when Snakemake's own markers say so; here it
# is "failed", so that a job lost by the cluster is retried, never trusted.
id=$1
st=$(scontrol show job "$id" -o 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
case "$st" in
COMPLETED) echo success ;;
PENDING|RUNNING|CONFIGURING|COMPLETING|SUSPENDED|REQUEUED|RESIZING|SIGNALING|STAGE_OUT) echo running ;;
"") echo failed ;;
*) echo failed ;;
esac
