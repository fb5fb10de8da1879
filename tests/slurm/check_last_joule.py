#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks SLURM jobs' and steps' CPU energy against their CPU time (slurm-last-joule.sh).

  check_last_joule.py WATTS DIR WATCH.prom NOWATCH.prom ARRAY_ID JOB_ID...

DIR/usage.<job> holds the job cgroup's cpuacct.usage (ns) read by the job's last command,
DIR/usage.<job>.<step> a step cgroup's, read by the step's last command, DIR/array.<job>
an array element's "SLURM_ARRAY_JOB_ID SLURM_ARRAY_TASK_ID". The fake zone draws WATTS
all the time and the idle energy stays unattributed, so a fair share is WATTS / CPUs x the
CPU time (CPUs: the cpuN lines of /proc/stat). With the watch, each job and each step must
be within 2 % of it; every job has its batch and extern steps (PrologFlags=contain), and
its steps add up to it to the microjoule; array elements carry array_job_id and
array_task_id; the zone's energy equals the workloads' plus the unattributed parts, to the
microjoule. The joulestat without the watch is only reported.
"""
import glob
import os
import re
import sys
from decimal import Decimal

LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
TOLERANCE = 0.02


def parse(path):
    out = []
    with open(path) as f:
        for line in f:
            m = LINE.match(line.rstrip("\n"))
            if m and not line.startswith("#"):
                out.append((m.group(1), dict(LABEL.findall(m.group(2) or "")), m.group(3)))
    return out


def micro(v):
    return int(Decimal(v) * 1000000)


def job_cpu(samples):
    return {l["job_id"]: micro(v) for n, l, v in samples
            if n == "joulestat_slurm_job_energy_joules_total" and l.get("component") == "cpu"}


def job_labels(samples):
    return {l["job_id"]: l for n, l, v in samples
            if n == "joulestat_slurm_job_energy_joules_total" and l.get("component") == "cpu"}


def step_cpu(samples):
    return {(l["job_id"], l["step"]): micro(v) for n, l, v in samples
            if n == "joulestat_slurm_step_energy_joules_total" and l.get("component") == "cpu"}


def read_usage(path):
    with open(path) as f:
        return int(f.read()) / 1e9


def main():
    watts = float(sys.argv[1])
    tmp, watch, nowatch = sys.argv[2], parse(sys.argv[3]), parse(sys.argv[4])
    array, jobs = sys.argv[5], sys.argv[6:]
    with open("/proc/stat") as f:
        cpus = sum(1 for line in f if re.match(r"cpu\d+ ", line))
    a, b, steps = job_cpu(watch), job_cpu(nowatch), step_cpu(watch)
    labels = job_labels(watch)
    failures = []

    def compare(name, cpu_s, got, old):
        fair = watts / cpus * cpu_s
        err = got / fair - 1 if fair else 0
        old_err = old / fair - 1 if fair else 0
        print("%-15s %7.3f s  %9.3f  %9.3f  %+6.2f %%  %9.3f  %+6.2f %%"
              % (name, cpu_s, fair, got, 100 * err, old, 100 * old_err))
        if abs(err) > TOLERANCE:
            failures.append("%s: %.3f J, fair share %.3f J (%+.2f %%)" % (name, got, fair, 100 * err))

    print("job/step        cpu time   fair (J)   watch (J)  error    no watch (J) error")
    for j in jobs:
        compare(j, read_usage("%s/usage.%s" % (tmp, j)), a.get(j, 0) / 1e6, b.get(j, 0) / 1e6)
        if j not in a:
            failures.append("job %s has no CPU energy" % j)
        for path in sorted(glob.glob("%s/usage.%s.*" % (tmp, j))):
            step = path.rsplit(".", 1)[1]
            if (j, step) not in steps:
                failures.append("job %s has no step %s" % (j, step))
                continue
            compare("%s.%s" % (j, step), read_usage(path), steps[(j, step)] / 1e6, 0)
        mine = {s: v for (k, s), v in steps.items() if k == j}
        for s in ("batch", "extern"):
            if s not in mine:
                failures.append("job %s has no %s step (has %s)" % (j, s, sorted(mine)))
        print("%-15s steps %s = %d uJ, job %d uJ" % (j, sorted(mine), sum(mine.values()), a.get(j, 0)))
        if sum(mine.values()) != a.get(j, 0):
            failures.append("job %s: steps %d uJ != job %d uJ" % (j, sum(mine.values()), a.get(j, 0)))
        element = "%s/array.%s" % (tmp, j)
        want = ("", "")
        if os.path.exists(element):
            with open(element) as f:
                want = tuple(f.read().split())
            if want[0] != array:
                failures.append("job %s: SLURM_ARRAY_JOB_ID %s, sbatch said %s" % (j, want[0], array))
        lb = labels.get(j, {})
        got = (lb.get("array_job_id", ""), lb.get("array_task_id", ""))
        if got != want:
            failures.append("job %s: array labels %s, want %s" % (j, got, want))

    rapl = sum(micro(v) for n, l, v in watch if n == "joulestat_rapl_energy_joules_total")
    unattributed = sum(micro(v) for n, l, v in watch
                       if n == "joulestat_cpu_unattributed_energy_joules_total")
    workloads = sum(micro(v) for n, l, v in watch
                    if n.endswith("_energy_joules_total") and l.get("component") == "cpu"
                    and not n.startswith("joulestat_slurm_step"))
    print("package %d uJ = workloads %d + unattributed %d" % (rapl, workloads, unattributed))
    for n, l, v in watch:  # by reason: system, no data, downtime, ...
        if n == "joulestat_cpu_unattributed_energy_joules_total":
            print("  unattributed %s: %d uJ" % (",".join("%s=%s" % kv for kv in sorted(l.items())),
                                              micro(v)))
    if rapl <= 0 or workloads + unattributed != rapl:
        failures.append("conservation: workloads %d + unattributed %d != package %d uJ"
                        % (workloads, unattributed, rapl))
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
