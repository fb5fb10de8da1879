#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks a joulestat exposition scraped after real SLURM jobs ran.

  check_slurm_metrics.py METRICS_FILE JOB_ID...

Every JOB_ID, and no other, must have CPU energy (> 0); each job's CPU energy must equal the
sum of its processes' series (joulestat_cpu_process_energy_joules_total, package and dram)
plus its unseen part (joulestat_cpu_unseen_energy_joules_total), exactly in microjoules
(values are printed with six decimals, so they are parsed as decimals), and its steps'
series (joulestat_slurm_step_energy_joules_total) where every process names its step; the
zone's energy must equal every workload plus the unattributed parts.
"""
import re
import sys
from decimal import Decimal

LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(path):
    samples = []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            m = LINE.match(line)
            if not m:
                raise SystemExit("unparsable line: %r" % line)
            labels = dict(LABEL.findall(m.group(2) or ""))
            samples.append((m.group(1), labels, m.group(3)))
    return samples


def micro(value):
    """Exact microjoules of a value printed with six decimals."""
    d = Decimal(value) * 1000000
    if d != d.to_integral_value():
        raise SystemExit("value %s is not a whole number of microjoules" % value)
    return int(d)


def main():
    samples = parse(sys.argv[1])
    jobs = sys.argv[2:]
    failures = []

    job_cpu = {}
    for name, labels, value in samples:
        if name == "joulestat_slurm_job_energy_joules_total" and labels.get("component") == "cpu":
            job_cpu[labels["job_id"]] = micro(value)
    for job in jobs:
        if job_cpu.get(job, 0) <= 0:
            failures.append("job %s has no CPU energy (jobs seen: %s)" % (job, job_cpu))
    # A job this cluster never ran can only come from another process on the machine that
    # carries SLURM_JOB_ID in its environment (another test's): legitimate on a real node,
    # and still covered by the conservation checks below. A job this cluster ran under a
    # different id would show as a missing job above.
    extra = sorted(set(job_cpu) - set(jobs))
    if extra:
        print("note: jobs from other processes on this machine: %s" % extra)

    # Conservation: the zone's measured energy (a whole number of 2 J steps of the fake
    # zone) == every workload's CPU energy + the unattributed parts, exactly.
    rapl = sum(micro(v) for n, l, v in samples if n == "joulestat_rapl_energy_joules_total")
    unattributed = sum(micro(v) for n, l, v in samples
                       if n == "joulestat_cpu_unattributed_energy_joules_total")
    # (a job's steps are in its job's series: counted once)
    workloads = sum(micro(v) for n, l, v in samples
                    if n.endswith("_energy_joules_total") and l.get("component") == "cpu"
                    and not n.startswith("joulestat_slurm_step"))
    steps = {}
    for n, l, v in samples:
        if n == "joulestat_slurm_step_energy_joules_total" and l.get("component") == "cpu":
            steps[l["job_id"]] = steps.get(l["job_id"], 0) + micro(v)
    if rapl <= 0 or rapl % 2000000 != 0:
        failures.append("package energy %d uJ is not a positive multiple of 2 J" % rapl)
    if workloads + unattributed != rapl:
        failures.append("workloads %d + unattributed %d != package %d uJ"
                        % (workloads, unattributed, rapl))

    # Per job: CPU energy (component cpu = package + dram) == its processes' series of
    # those domains + its unseen part (cgroup CPU time no scan saw), exactly.
    cpu_domains = ("package", "dram")
    per_process = [(l, micro(v)) for n, l, v in samples
                   if n == "joulestat_cpu_process_energy_joules_total"]
    unseen = [(l, micro(v)) for n, l, v in samples
              if n == "joulestat_cpu_unseen_energy_joules_total"]
    if not per_process:
        failures.append("no joulestat_cpu_process_energy_joules_total series")
    for job in jobs:
        procs = [(l, v) for l, v in per_process
                 if l.get("job_id") == job and l.get("domain") in cpu_domains]
        mine = sum(v for l, v in procs)
        rest = sum(v for l, v in unseen if l.get("job_id") == job and l.get("domain") in cpu_domains)
        pids = sorted({l["pid"] for l, v in procs if v > 0})
        print("job %s: cpu %d uJ = processes %d (pids with energy: %s) + unseen %d"
              % (job, job_cpu.get(job, 0), mine, ",".join(pids), rest))
        if not pids:
            failures.append("job %s: no process of the job has CPU energy" % job)
        # Where every process of the job names its step, the steps add up to the job
        # (without Slurm cgroups a batch script has no step: its energy is the job's).
        if all(l.get("step") for l, v in procs) and steps.get(job, 0) != job_cpu.get(job, 0):
            failures.append("job %s: steps %d uJ != job %d uJ"
                            % (job, steps.get(job, 0), job_cpu.get(job, 0)))
        if mine + rest != job_cpu.get(job, 0):
            failures.append("job %s: %d uJ != processes %d + unseen %d"
                            % (job, job_cpu.get(job, 0), mine, rest))

    print("package %d uJ = workloads %d + unattributed %d" % (rapl, workloads, unattributed))
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
