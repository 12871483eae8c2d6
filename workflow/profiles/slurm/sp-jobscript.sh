#!/bin/sh
# properties = {properties}
# The Slurm profile's job script: Snakemake's own (the job run by a
# Snakemake of its own), with the job's start and end in its
# Slurm log (slurm-logs/RULE.JOBID.out) as seconds since the epoch, which
# bench/workflow.sh reads to tell the job's own Snakemake from its rule.
echo "seedpipe-job start $(date +%s.%N)"
( {exec_job} )
rc=$?
echo "seedpipe-job end $(date +%s.%N) $rc"
exit $rc
