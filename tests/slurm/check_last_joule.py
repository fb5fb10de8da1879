#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks SLURM jobs' CPU energy against their CPU time (slurm-last-joule.sh).

  check_last_joule.py WATTS DIR WATCH.prom NOWATCH.prom JOB_ID...

DIR/usage.<job> holds the job cgroup's cpuacct.usage (ns) read by the job's last command.
The fake zone draws WATTS all the time and the idle energy stays unattributed, so a job's
fair share is WATTS / CPUs x its CPU time (CPUs: the cpuN lines of /proc/stat). With the
watch, each job must be within 2 % of it, and the zone's energy must equal the workloads'
plus the unattributed parts, to the microjoule. The joulestat without the watch is only
reported.
"""
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


def main():
    watts = float(sys.argv[1])
    tmp, watch, nowatch = sys.argv[2], parse(sys.argv[3]), parse(sys.argv[4])
    jobs = sys.argv[5:]
    with open("/proc/stat") as f:
        cpus = sum(1 for line in f if re.match(r"cpu\d+ ", line))
    a, b = job_cpu(watch), job_cpu(nowatch)
    failures = []
    print("job      cpu time   fair (J)   watch (J)  error    no watch (J) error")
    for j in jobs:
        with open("%s/usage.%s" % (tmp, j)) as f:
            cpu_s = int(f.read()) / 1e9
        fair = watts / cpus * cpu_s
        got = a.get(j, 0) / 1e6
        old = b.get(j, 0) / 1e6
        err = got / fair - 1 if fair else 0
        old_err = old / fair - 1 if fair else 0
        print("%-8s %7.3f s  %9.3f  %9.3f  %+6.2f %%  %9.3f  %+6.2f %%"
              % (j, cpu_s, fair, got, 100 * err, old, 100 * old_err))
        if j not in a:
            failures.append("job %s has no CPU energy" % j)
        elif abs(err) > TOLERANCE:
            failures.append("job %s: %.3f J, fair share %.3f J (%+.2f %%)"
                            % (j, got, fair, 100 * err))

    rapl = sum(micro(v) for n, l, v in watch if n == "joulestat_rapl_energy_joules_total")
    unattributed = sum(micro(v) for n, l, v in watch
                       if n == "joulestat_cpu_unattributed_energy_joules_total")
    workloads = sum(micro(v) for n, l, v in watch
                    if n.endswith("_energy_joules_total") and l.get("component") == "cpu"
                    and not n.startswith("joulestat_slurm_step"))
    print("package %d uJ = workloads %d + unattributed %d" % (rapl, workloads, unattributed))
    if rapl <= 0 or workloads + unattributed != rapl:
        failures.append("conservation: workloads %d + unattributed %d != package %d uJ"
                        % (workloads, unattributed, rapl))
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
