#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks a joulestat exposition scraped after real SLURM jobs ran.

  check_slurm_metrics.py METRICS_FILE JOB_ID...

Every JOB_ID must have CPU energy (> 0). When the per-process CPU family is exported, each
job's CPU energy must equal the sum of its processes' series plus its unseen part, exactly
in microjoules (values are printed with six decimals, so they are parsed as decimals).
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
    if set(job_cpu) != set(jobs):
        failures.append("jobs exported %s, ran %s" % (sorted(job_cpu), sorted(jobs)))

    # Conservation: the zone's measured energy (a whole number of 2 J steps of the fake
    # zone) == every workload's CPU energy + the unattributed parts, exactly.
    rapl = sum(micro(v) for n, l, v in samples if n == "joulestat_rapl_energy_joules_total")
    unattributed = sum(micro(v) for n, l, v in samples
                       if n == "joulestat_cpu_unattributed_energy_joules_total")
    workloads = sum(micro(v) for n, l, v in samples
                    if n.endswith("_energy_joules_total") and l.get("component") == "cpu")
    if rapl <= 0 or rapl % 2000000 != 0:
        failures.append("package energy %d uJ is not a positive multiple of 2 J" % rapl)
    if workloads + unattributed != rapl:
        failures.append("workloads %d + unattributed %d != package %d uJ"
                        % (workloads, unattributed, rapl))

    per_process = [(l, micro(v)) for n, l, v in samples
                   if n == "joulestat_cpu_process_energy_joules_total"]
    if not per_process:
        print("note: no joulestat_cpu_process_energy_joules_total series; "
              "the per-process sum is not checked")
    print("package %d uJ = workloads %d + unattributed %d" % (rapl, workloads, unattributed))
    for job in jobs:
        print("job %s: cpu %d uJ" % (job, job_cpu.get(job, 0)))
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
