#!/usr/bin/env python3
"""wfparts.py RUN SLURMCTLD_LOG T0 T1 - where a workflow run's wall time went
(bench/workflow.sh): its critical path through the cluster jobs, from

  SLURMCTLD_LOG           each job's submission, allocation and end
                          (slurmctld's log, millisecond times)
  RUN/slurm-logs/*.out    each job's start and end (the Slurm profile's
                          jobscript.sh) and its rule's benchmark file (the
                          job's own Snakemake names it)
  RUN/benchmarks/         each rule's own wall time
  T0, T1                  Snakemake's start and end (seconds since the epoch)

The path: from the end back, each job's predecessor is the job that ended
last before it was allocated (before its submission: a job it needed; after:
the job waited for the cores that one freed).  Its wall time is cut into: Snakemake's start
(and the local jobs, run before the first submission), and per job: queue
(submission to allocation), launch (allocation to the job script's start,
and its end to slurmctld's), the job's own Snakemake (the job script's time
less its rule's), the rule, noticed (the job's end to the next submission,
or to Snakemake's end: the status poll and the next sbatch).  Prints lines
for the bench's report and, last, "latency MEAN" (queue + launch + the job's
Snakemake + noticed, the mean over the path's jobs), and the path's rule
time before its map jobs (scatter, index: where they are cluster jobs), and
the steps (the path's jobs less those that waited for cores).
"""
import datetime
import glob
import os
import re
import sys


def stamp(s):
    return datetime.datetime.fromisoformat(s).timestamp()


def bench_s(run, path):
    try:
        with open(os.path.join(run, path)) as f:
            f.readline()
            return float(f.readline().split('\t')[0])
    except (OSError, ValueError, IndexError):
        return None


def main(run, log, t0, t1):
    ev = {}
    with open(log) as f:
        for line in f:
            m = re.match(r'\[([0-9T:.-]+)\] (.*)', line)
            j = m and re.search(r'JobId=(\d+)', m.group(2))
            if not j:
                continue
            e = ev.setdefault(int(j.group(1)), {})
            msg = m.group(2)
            if '_slurm_rpc_submit_batch_job' in msg:
                e['submit'] = stamp(m.group(1))
            elif 'sched: Allocate' in msg:
                e['alloc'] = stamp(m.group(1))
            elif '_job_complete' in msg and msg.endswith(' done'):
                e['done'] = stamp(m.group(1))
    jobs = []
    for out in glob.glob(os.path.join(run, 'slurm-logs', '*.out')):
        m = re.match(r'(.*)\.(\d+)\.out$', os.path.basename(out))
        if not m:
            continue
        jid = int(m.group(2))
        j = dict(ev.get(jid, {}), id=jid, rule=m.group(1))
        with open(out, errors='replace') as f:
            for line in f:
                w = line.split()
                if line.startswith('seedpipe-job start'):
                    j['start'] = float(w[2])
                elif line.startswith('seedpipe-job end'):
                    j['end'] = float(w[2])
                elif line.strip().startswith('benchmark:'):
                    j['bench'] = w[1]
        if 'bench' in j:
            j['rule_s'] = bench_s(run, j['bench'])
        if all(k in j for k in ('submit', 'alloc', 'done', 'start', 'end')) and j.get('rule_s'):
            jobs.append(j)
    if not jobs:
        print('no cluster job with all its times (slurmctld log, job logs, benchmarks)')
        return
    # the critical path, from the last job to end back: a job's predecessor
    # ended last before the job was allocated: before its submission (a job
    # it needed: Snakemake submitted it when it saw that end) or after (the
    # job waited in the queue for the cores that one freed)
    path = [max(jobs, key=lambda j: j['done'])]
    while True:
        before = [j for j in jobs if j['done'] <= path[-1]['alloc'] and j is not path[-1]]
        if not before:
            break
        path.append(max(before, key=lambda j: j['done']))
    path.reverse()
    local = sum(bench_s(run, p) or 0 for p in
                [os.path.relpath(b, run) for b in glob.glob(os.path.join(run, 'benchmarks', '**', '*.tsv'),
                                                            recursive=True)]
                if not any(j.get('bench') == p for j in jobs))
    first = path[0]['submit'] - t0
    parts = []
    lat = []
    steps = 0
    for i, j in enumerate(path):
        prev = path[i - 1]['done'] if i else t0
        nxt = path[i + 1] if i + 1 < len(path) else None
        waited = i > 0 and prev > j['submit']
        steps += not waited
        q = j['alloc'] - max(j['submit'], prev)
        la = (j['start'] - j['alloc']) + (j['done'] - j['end'])
        sm = (j['end'] - j['start']) - j['rule_s']
        # to the next job's submission, or to its allocation where it waited
        # for these cores (that part is the next job's queue), or to the end
        no = (max(nxt['submit'], j['done']) if nxt else t1) - j['done']
        lat.append(q + la + sm + no)
        parts.append('%s (job %d%s): queue %.2f, launch %.2f, its Snakemake %.2f, rule %.2f, noticed %.2f'
                     % (j['rule'], j['id'], ', waited for cores' if waited else '', q, la, sm,
                        j['rule_s'], no))
    print('Critical path (s, %.1f in all): before the first sbatch %.2f (Snakemake\'s start and '
          'the local jobs before it; the local jobs took %.2f in all); %s.'
          % (t1 - t0, first, local, '; '.join(parts)))
    allq = [j['alloc'] - j['submit'] for j in jobs]
    alls = [(j['end'] - j['start']) - j['rule_s'] for j in jobs]
    print('All %d cluster jobs (s): submission to allocation mean %.2f (max %.2f; waits for cores too), the job\'s own Snakemake mean %.2f '
          '(max %.2f).' % (len(jobs), sum(allq) / len(allq), max(allq), sum(alls) / len(alls), max(alls)))
    pre = sum(j['rule_s'] for j in path if not j['rule'].startswith(('map', 'merge', 'gather')))
    print('latency %.3f first %.3f local %.3f pre %.3f steps %d' % (sum(lat) / len(lat), first, local,
                                                                   pre, steps))


if __name__ == '__main__':
    if len(sys.argv) != 5:
        sys.exit('usage: wfparts.py RUN SLURMCTLD_LOG T0 T1')
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]))
