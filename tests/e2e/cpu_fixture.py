#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Fake node for the CPU attribution end-to-end test.

  cpu_fixture.py init ROOT            write ROOT/proc and ROOT/sys in their initial state
  cpu_fixture.py drive ROOT URL       apply every step right after a scan, scrape after the
                                      next one, and check the exposition exactly

Every step is applied right after the exporter published the previous scan (the scan is
periodic), with atomic writes (temp + rename), so one scan sees one whole step.
"""
import re
import sys
import time
import urllib.request
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

from fake_cpu_node import (ACTIVE_KEYS, FAILS, MODULUS, check, stat_line, write_atomic,
                           write_node)


POD_A = "2fc932ce-fdcc-454b-97bd-aadfdeb4c340"
POD_B = "3cae2e45-052c-4b11-80d3-4d7b2d2d3464"
JOB = "4242"
SERVICE = "sshd.service"


def kubepods(uid, cid):
    return ("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%s.slice/"
            "cri-containerd-%s.scope\n" % (uid.replace("-", "_"), cid))


CID_A1 = "aaefb9d8feed2d453b543f6d928cede7a4dbefa6a0ae7c9b990dd234c56e93b9"
CID_A2 = "2b180104511194aab36fd295d3e217439f3ddb5bc88277f37b4952abee85c40e"
CID_B1 = "99f3a16ea25b7724cb56a4f0c0df1113ad9474fbf5545bead97fd5c7f61c13f4"

# pid -> (comm, flags, starttime, cgroup, workload or None, container count key)
PROCS = {
    2: ("kthreadd", 0x208040, 1, "0::/\n", None),
    1200: ("sshd", 0x400140, 900, "0::/system.slice/sshd.service\n", ("service", SERVICE)),
    2001: ("python3", 0x400100, 41000, kubepods(POD_A, CID_A1), ("pod", POD_A)),
    2002: ("envoy", 0x400100, 41010, kubepods(POD_A, CID_A2), ("pod", POD_A)),
    2101: ("nginx", 0x400100, 42000, kubepods(POD_B, CID_B1), ("pod", POD_B)),
    2102: ("nginx: worker", 0x400040, 47000, kubepods(POD_B, CID_B1), ("pod", POD_B)),
    3001: ("lmp_mpi", 0x400000, 43000,
           "0::/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0\n", ("job", JOB)),
}

# Initial state. utime per pid (absent: process not started yet), node cpu line, energy.
INIT = {
    "utime": {2: 500, 1200: 70, 2001: 1000, 2002: 300, 2101: 800, 3001: 5000},
    "cpu": dict(user=100000, nice=200, system=30000, idle=900000, iowait=1000, irq=0,
                softirq=50, steal=0),
    "package": 262130000000,
    "dram": 77000000,
}

STIME = 10  # stime of every process, constant: a new process brings utime + STIME ticks
# Each step: utime deltas (a new pid counts its whole utime + stime), node cpu deltas, energy deltas
# (package of step 2 crosses max_energy_range_uj).
STEPS = [
    dict(name="busy", utime={2001: 20, 2002: 10, 2101: 20, 3001: 10, 1200: 5, 2: 15},
         cpu=dict(user=60, system=20, idle=20), package=10000000, dram=1000000),
    dict(name="wrap", utime={2001: 7, 2101: 13, 3001: 29, 1200: 3, 2: 18},
         cpu=dict(user=50, system=10, irq=10, idle=25, iowait=5), package=10000000,
         dram=3333333),
    dict(name="new-process", utime={2001: 10, 2102: 40, 1200: 10, 2: 30},
         cpu=dict(user=80, nice=10, system=10, idle=10), package=9000000, dram=0),
    dict(name="idle", utime={}, cpu=dict(idle=97, iowait=3), package=2000001, dram=500000),
    dict(name="uneven", utime={2001: 1, 2002: 1, 2101: 1, 3001: 1},
         cpu=dict(user=3, system=4, idle=2), package=1000003, dram=7),
]


def write_state(root, state):
    proc, sys_ = root / "proc", root / "sys"
    for pid, utime in state["utime"].items():
        d = proc / str(pid)
        if not (d / "cgroup").exists():
            write_atomic(d / "cgroup", PROCS[pid][3])
        comm, flags, start, _, _ = PROCS[pid]
        write_atomic(d / "stat", stat_line(pid, comm, flags, start, utime, STIME))
    write_node(proc, sys_, state["cpu"], state["package"], state["dram"])


def advance(state, step):
    s = {"utime": dict(state["utime"]), "cpu": dict(state["cpu"])}
    for pid, d in step["utime"].items():
        s["utime"][pid] = s["utime"].get(pid, 0) + d
    for k, d in step["cpu"].items():
        s["cpu"][k] += d
    s["package"] = (state["package"] + step["package"]) % MODULUS
    s["dram"] = (state["dram"] + step["dram"]) % MODULUS
    return s


def expected(step, prev_state):
    """Exact expectation of one window, as rationals: the attribution rule of DESIGN.md."""
    active = sum(step["cpu"].get(k, 0) for k in ACTIVE_KEYS)
    total = sum(step["cpu"].values())
    work, n_containers = {}, {}
    for pid, d in step["utime"].items():
        if pid not in prev_state["utime"]:
            d += STIME  # first seen in this window: all its CPU time is new
        w = PROCS[pid][4]
        if w and d:
            work[w] = work.get(w, 0) + d
            n_containers.setdefault(w, set()).add(PROCS[pid][3])
    tracked = sum(work.values())
    out = {}
    for domain in ("package", "dram"):
        e = step[domain]
        act = e * active // total
        res = {"rapl": Fraction(e), "idle": Fraction(e - act)}
        untracked = max(active - tracked, 0)  # busy time of no workload: "system"
        if tracked + untracked == 0:
            res["system"] = Fraction(act)
        else:
            for w, t in work.items():
                res[w] = Fraction(act * t, tracked + untracked)
            res["system"] = Fraction(act * untracked, tracked + untracked)
        out[domain] = res
    return out, {w: len(c) for w, c in n_containers.items()}


LINE = re.compile(r'^([a-z_]+)\{([^}]*)\} (\S+)$')
LABEL = re.compile(r'(\w+)="([^"]*)"')


def scrape(url):
    with urllib.request.urlopen(url, timeout=5) as r:
        text = r.read().decode()
    m = {}
    for line in text.splitlines():
        g = LINE.match(line)
        if not g:
            continue
        labels = dict(LABEL.findall(g.group(2)))
        name = g.group(1)
        v = Decimal(g.group(3))
        dom = "package" if labels.get("domain", "").startswith("package") else labels.get("domain")
        if name == "joulestat_rapl_energy_joules_total":
            m[(dom, "rapl")] = v
        elif name == "joulestat_cpu_unattributed_energy_joules_total":
            m[(dom, labels["reason"])] = v
        elif name == "joulestat_pod_energy_joules_total" and labels["component"] == "cpu":
            m[("cpu", ("pod", labels["pod_uid"]))] = v
        elif name == "joulestat_slurm_job_energy_joules_total" and labels["component"] == "cpu":
            m[("cpu", ("job", labels["job_id"]))] = v
        elif name == "joulestat_systemd_service_energy_joules_total" and labels["component"] == "cpu":
            m[("cpu", ("service", labels["unit"]))] = v
        elif name == "joulestat_container_energy_joules_total" and labels["component"] == "cpu":
            m[("container", labels["container_id"])] = v
    return m, text


def wait_scan(url, prev, deadline_s=10):
    """Polls until the package counter differs from prev; returns the new scrape."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        try:
            m, text = scrape(url)
        except OSError:
            m = None
        if m is not None and ("package", "rapl") in m and m[("package", "rapl")] != prev:
            return m, text
        time.sleep(0.02)
    sys.exit("FAIL: no scan published a new package counter within %d s" % deadline_s)


def uj(d):
    return int(d * 1000000)


def conservation(m, where):
    """Per domain: pods + jobs + services + every unattributed reason == RAPL. Returns the
    sums."""
    for domain in ("package", "dram"):
        reasons = sum(v for (d, r), v in m.items()
                      if d == domain and r != "rapl" and not r.startswith("_"))
        # Workload series carry no domain: check package + dram together below.
        m[(domain, "_unattr")] = reasons
    work = sum(v for (k, w), v in m.items() if k == "cpu")
    rapl = m.get(("package", "rapl"), 0) + m.get(("dram", "rapl"), 0)
    unattr = m[("package", "_unattr")] + m[("dram", "_unattr")]
    check(work + unattr == rapl,
          "%s: workloads %s + unattributed %s != rapl %s" % (where, work, unattr, rapl))
    return work, unattr, rapl


def drive(root, url):
    state = prev_state = INIT
    m0, _ = wait_scan(url, None)  # first scan: the baseline, counter 0
    check(m0[("package", "rapl")] == 0, "first scan must count 0, got %s" % m0[("package", "rapl")])
    scrapes = [m0]
    for step in STEPS:
        prev_state, state = state, advance(state, step)
        t0 = time.monotonic()
        write_state(root, state)
        wrote = time.monotonic() - t0
        m, text = wait_scan(url, scrapes[-1][("package", "rapl")])
        scrapes.append(m)
        prev = scrapes[-2]
        exp, ncont = expected(step, prev_state)
        print("step %-12s written in %.3f s" % (step["name"], wrote))
        for domain in ("package", "dram"):
            e = exp[domain]
            d_rapl = uj(m.get((domain, "rapl"), 0) - prev.get((domain, "rapl"), 0))
            d_idle = uj(m.get((domain, "idle"), 0) - prev.get((domain, "idle"), 0))
            d_sys = uj(m.get((domain, "system"), 0) - prev.get((domain, "system"), 0))
            check(d_rapl == e["rapl"], "%s %s: rapl delta %d uJ, want %s" %
                  (step["name"], domain, d_rapl, e["rapl"]))
            check(d_idle == e["idle"], "%s %s: idle %d uJ, want %s" %
                  (step["name"], domain, d_idle, e["idle"]))
            check(abs(d_sys - e["system"]) < 1, "%s %s: system %d uJ, want %s" %
                  (step["name"], domain, d_sys, float(e["system"])))
            print("  %-7s rapl %9d  idle %8d  system %8d uJ" % (domain, d_rapl, d_idle, d_sys))
        for w in [("pod", POD_A), ("pod", POD_B), ("job", JOB), ("service", SERVICE)]:
            got = uj(m.get(("cpu", w), 0) - prev.get(("cpu", w), 0))
            want = sum(exp[d].get(w, 0) for d in ("package", "dram"))
            tol = 2 * ncont.get(w, 0)  # largest remainder: < 1 uJ per container and domain
            check(abs(got - want) <= tol if tol else got == 0,
                  "%s: %s %s got %d uJ, want %s (+-%d)" %
                  (step["name"], w[0], w[1][:8], got, float(want), tol))
            print("  %s %-8s %9d uJ (exact share %.3f)" % (w[0], w[1][:8], got, float(want)))
        conservation(m, step["name"])
        # Containers are inside their pods: their cpu energy sums to the pod's.
        ca = sum(m.get(("container", c), 0) for c in (CID_A1, CID_A2))
        check(ca == m.get(("cpu", ("pod", POD_A)), 0),
              "%s: containers of pod A sum %s != pod %s" % (step["name"], ca, m.get(("cpu", ("pod", POD_A)))))
    # Cumulative: the wrap is counted exactly, nothing lost, nothing negative.
    last = scrapes[-1]
    total_pkg = sum(s["package"] for s in STEPS)
    total_dram = sum(s["dram"] for s in STEPS)
    check(uj(last[("package", "rapl")]) == total_pkg,
          "package total %s J, want %d uJ (wrap lost or doubled)" % (last[("package", "rapl")], total_pkg))
    check(uj(last[("dram", "rapl")]) == total_dram,
          "dram total %s J, want %d uJ" % (last[("dram", "rapl")], total_dram))
    check(all(v >= 0 for v in last.values()), "negative series")
    work, unattr, rapl = conservation(last, "cumulative")
    check(last.get(("package", "no_data"), 0) == 0, "no_data must stay 0 with a readable stat")
    print("cumulative: rapl %s J = workloads %s J + unattributed %s J" % (rapl, work, unattr))
    if FAILS:
        sys.exit("%d check(s) failed" % len(FAILS))
    print("OK: %d steps" % len(STEPS))


def main():
    root = Path(sys.argv[2])
    if sys.argv[1] == "init":
        write_state(root, INIT)
    elif sys.argv[1] == "drive":
        drive(root, sys.argv[3])
    else:
        sys.exit("usage: cpu_fixture.py init|drive ROOT [URL]")


if __name__ == "__main__":
    main()
