#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Fake node for the per-process CPU energy end-to-end test (--cpu-process-metrics).

  cpu_process_fixture.py init ROOT         write ROOT/proc and ROOT/sys (powercap + cgroup v2)
  cpu_process_fixture.py drive ROOT URL    apply each step right after a scan, check the
                                           exposition of the next scan

Processes appear, exit and a pid is reused by a process of another container; one
container's work is done only by processes that live between two scans, so it shows only
in the container cgroup's cpu.stat (the workload's "unseen" part). Each step is checked
per RAPL domain and per workload, from the exposition alone:
  rapl{domain} == sum(process{domain}) + sum(unseen{domain}) + sum(unattributed{domain})
  workload{component="cpu"} == sum over package+dram of its processes and its unseen part
and every share against the exact rational value of the attribution rule (largest
remainder rounding: within 1 uJ per consumer).
"""
import re
import shutil
import sys
import time
import urllib.request
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

from fake_cpu_node import (ACTIVE_KEYS, FAILS, MODULUS, check, stat_line, write_atomic,
                           write_node)

USEC_PER_TICK = 10000  # USER_HZ 100
STIME = 10

POD_A = "2fc932ce-fdcc-454b-97bd-aadfdeb4c340"
POD_C = "7922aa99-d4aa-4885-a953-82976860b23a"
CID_A1 = "aaefb9d8feed2d453b543f6d928cede7a4dbefa6a0ae7c9b990dd234c56e93b9"
CID_A2 = "2b180104511194aab36fd295d3e217439f3ddb5bc88277f37b4952abee85c40e"
CID_C = "99f3a16ea25b7724cb56a4f0c0df1113ad9474fbf5545bead97fd5c7f61c13f4"
JOB = "4242"


def scope(uid, cid):
    return ("kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%s.slice/"
            "cri-containerd-%s.scope" % (uid.replace("-", "_"), cid))


JOB_DIR = "system.slice/slurmstepd.scope/job_%s" % JOB
# workload -> (cgroup dir under sys/fs/cgroup, pod uid, job id)
WORKLOADS = {
    CID_A1: (scope(POD_A, CID_A1), POD_A, ""),
    CID_A2: (scope(POD_A, CID_A2), POD_A, ""),
    CID_C: (scope(POD_C, CID_C), POD_C, ""),
    # the job's one step: its CPU group (a job is read through its steps' directories)
    "job": (JOB_DIR + "/step_0", "", JOB),
}
# process name -> (pid, comm, flags, starttime, cgroup line, workload or None)
PROCS = {
    "kthreadd": (2, "kthreadd", 0x208040, 1, "0::/\n", None),
    # a systemd service: a workload of its own, read without a cgroup (no unseen part)
    "sshd": (1200, "sshd", 0x400140, 900, "0::/system.slice/sshd.service\n", "service"),
    "python": (2001, "python3", 0x400100, 41000, "0::/%s\n" % scope(POD_A, CID_A1), CID_A1),
    "envoy": (2002, "envoy", 0x400100, 41010, "0::/%s\n" % scope(POD_A, CID_A2), CID_A2),
    "worker": (2003, "worker", 0x400100, 46000, "0::/%s\n" % scope(POD_A, CID_A1), CID_A1),
    # pid 2003 again, after "worker" exited: another container's process
    "reuse": (2003, "envoy-hot", 0x400100, 47500, "0::/%s\n" % scope(POD_A, CID_A2), CID_A2),
    "sh": (2201, "sh", 0x400100, 42000, "0::/%s\n" % scope(POD_C, CID_C), CID_C),
    "lmp": (3001, "lmp_mpi", 0x400000, 43000,
            "0::/%s/step_0/user/task_0\n" % JOB_DIR, "job"),
}

INIT = {
    "utime": {"kthreadd": 500, "sshd": 70, "python": 1000, "envoy": 300, "sh": 5, "lmp": 5000},
    "cpu": dict(user=100000, nice=200, system=30000, idle=900000, iowait=1000, irq=0,
                softirq=50, steal=0),
    "cg": {CID_A1: 11000000, CID_A2: 3100000, CID_C: 150000, "job": 50100000},
    "package": 262130000000,
    "dram": 77000000,
}

# utime: tick deltas of live processes (a new one brings utime + STIME); exit: processes
# gone after this step; short: cgroup CPU time (us) of processes no scan sees.
STEPS = [
    dict(name="busy", utime={"python": 20, "envoy": 10, "lmp": 10, "sshd": 5, "kthreadd": 15},
         short={CID_C: 150000}, cpu=dict(user=60, system=20, idle=20),
         package=10000000, dram=1000000),
    dict(name="new-and-short", utime={"python": 7, "worker": 13, "lmp": 29, "sshd": 3},
         short={CID_C: 90000, "job": 40000}, cpu=dict(user=50, system=10, irq=10, idle=25,
                                                       iowait=5),
         package=10000000, dram=3333333),
    dict(name="exit", utime={"python": 10, "worker": 4, "kthreadd": 30},
         exit=["worker"], short={CID_A1: 60000, CID_C: 20000},
         cpu=dict(user=80, nice=10, system=10, idle=10), package=9000000, dram=7),
    dict(name="pid-reuse", utime={"python": 2, "reuse": 8, "envoy": 1},
         short={CID_C: 300000}, cpu=dict(user=70, system=5, idle=25), package=4000001,
         dram=500000),
    # 6 busy ticks = 60 000 us, but container C's cgroup grew 90 000 us: clamped to 60 000
    dict(name="short-only", utime={}, short={CID_C: 90000},
         cpu=dict(user=4, system=2, idle=94), package=2000003, dram=11),
    dict(name="lmp-exits", utime={"python": 1}, exit=["lmp"], short={"job": 20000},
         cpu=dict(user=3, system=4, idle=2), package=1000003, dram=5),
]


def write_state(root, state, prev=None):
    proc, sys_ = root / "proc", root / "sys"
    live_pids = {PROCS[n][0]: n for n in state["utime"]}
    if prev:
        for name in prev["utime"]:
            pid = PROCS[name][0]
            if live_pids.get(pid) != name:
                shutil.rmtree(proc / str(pid), ignore_errors=True)
    for name, utime in state["utime"].items():
        d = proc / str(PROCS[name][0])
        write_atomic(d / "cgroup", PROCS[name][4])
        pid, comm, flags, start, _, _ = PROCS[name]
        write_atomic(d / "stat", stat_line(pid, comm, flags, start, utime, STIME))
    for w, usage in state["cg"].items():
        write_atomic(sys_ / "fs" / "cgroup" / WORKLOADS[w][0] / "cpu.stat",
                     "usage_usec %d\nuser_usec %d\nsystem_usec 0\n" % (usage, usage))
    write_node(proc, sys_, state["cpu"], state["package"], state["dram"])


def seen_ticks(step, prev_state):
    """Ticks each live process brings to this window (a new process: all of its time)."""
    out = {}
    for name, d in step["utime"].items():
        if name not in prev_state["utime"]:
            d += STIME
        out[name] = d
    return out


def advance(state, step):
    s = {"utime": dict(state["utime"]), "cpu": dict(state["cpu"]), "cg": dict(state["cg"])}
    for name, d in step["utime"].items():
        s["utime"][name] = s["utime"].get(name, 0) + d
    seen = seen_ticks(step, state)
    for name, t in seen.items():
        w = PROCS[name][5]
        if w in s["cg"]:
            s["cg"][w] += t * USEC_PER_TICK
    for w, us in step.get("short", {}).items():
        s["cg"][w] += us
    for name in step.get("exit", []):
        del s["utime"][name]
    for k, d in step["cpu"].items():
        s["cpu"][k] += d
    s["package"] = (state["package"] + step["package"]) % MODULUS
    s["dram"] = (state["dram"] + step["dram"]) % MODULUS
    return s


def expected(step, prev_state):
    """Exact rational shares of one window: processes (by name), unseen (by workload)."""
    active = sum(step["cpu"].get(k, 0) for k in ACTIVE_KEYS)
    total = sum(step["cpu"].values())
    active_us = active * USEC_PER_TICK
    ran = seen_ticks(step, prev_state)
    # A process that exits in this step is gone before the scan: its last ticks show only
    # in its cgroup, as unseen time (like the short-lived processes).
    gone = set(step.get("exit", []))
    seen = {n: t for n, t in ran.items() if n not in gone}
    procs = {n: t * USEC_PER_TICK for n, t in seen.items() if PROCS[n][5] and t}
    all_seen = sum(t * USEC_PER_TICK for t in seen.values())
    unseen = {}
    for w in WORKLOADS:
        # cgroup delta = time of its processes + short; unseen = what no scan saw
        unseen[w] = step.get("short", {}).get(w, 0) + sum(
            t * USEC_PER_TICK for n, t in ran.items() if n in gone and PROCS[n][5] == w)
    cap = max(active_us - all_seen, 0)
    if sum(unseen.values()) > cap:
        tot = sum(unseen.values())
        unseen = {w: u * cap // tot for w, u in unseen.items()}
    tracked = sum(procs.values()) + sum(unseen.values())
    untracked = max(active_us - tracked, 0)
    out = {}
    for domain in ("package", "dram"):
        e = step[domain]
        act = e * active // total
        res = {"rapl": e, "idle": e - act, "proc": {}, "unseen": {}}
        den = tracked + untracked
        for n, us in procs.items():
            res["proc"][n] = Fraction(act * us, den) if den else Fraction(0)
        for w, us in unseen.items():
            res["unseen"][w] = Fraction(act * us, den) if den else Fraction(0)
        res["system"] = Fraction(act * untracked, den) if den else Fraction(act)
        out[domain] = res
    return out


LINE = re.compile(r'^([a-z_]+)\{([^}]*)\} (\S+)$')
LABEL = re.compile(r'(\w+)="([^"]*)"')


def scrape(url):
    with urllib.request.urlopen(url, timeout=5) as r:
        text = r.read().decode()
    series = []
    seen = set()
    for line in text.splitlines():
        g = LINE.match(line)
        if not g:
            continue
        key = (g.group(1), g.group(2))
        if key in seen:
            sys.exit("FAIL: duplicate series %s{%s}" % key)
        seen.add(key)
        series.append((g.group(1), dict(LABEL.findall(g.group(2))), Decimal(g.group(3))))
    return series


def uj(d):
    return int(d * 1000000)


def view(series):
    """The numbers the checks need, in uJ."""
    v = {"rapl": {}, "unattr": {}, "proc": {}, "unseen": {}, "active": {}, "pod": {},
         "job": {}, "step": {}, "container": {}, "service": {}}
    for name, lb, val in series:
        dom = "package" if lb.get("domain", "").startswith("package") else lb.get("domain")
        if name == "joulestat_rapl_energy_joules_total":
            v["rapl"][dom] = uj(val)
        elif name == "joulestat_cpu_unattributed_energy_joules_total":
            v["unattr"][(dom, lb["reason"])] = uj(val)
        elif name == "joulestat_cpu_process_energy_joules_total":
            v["proc"][(lb["pid"], lb["process_name"], lb["container_id"], lb["pod_uid"],
                       lb["job_id"], dom)] = uj(val)
        elif name == "joulestat_cpu_process_active":
            v["active"][(lb["pid"], lb["process_name"])] = int(val)
        elif name == "joulestat_cpu_unseen_energy_joules_total":
            v["unseen"][(lb["container_id"], lb["pod_uid"], lb["job_id"], dom)] = uj(val)
        elif name == "joulestat_pod_energy_joules_total" and lb["component"] == "cpu":
            v["pod"][lb["pod_uid"]] = uj(val)
        elif name == "joulestat_slurm_job_energy_joules_total" and lb["component"] == "cpu":
            v["job"][lb["job_id"]] = uj(val)
        elif name == "joulestat_slurm_step_energy_joules_total" and lb["component"] == "cpu":
            v["step"][(lb["job_id"], lb["step"])] = uj(val)
        elif name == "joulestat_container_energy_joules_total" and lb["component"] == "cpu":
            v["container"][lb["container_id"]] = uj(val)
        elif name == "joulestat_systemd_service_energy_joules_total" and lb["component"] == "cpu":
            v["service"][lb["unit"]] = uj(val)
    return v


def proc_key(name):
    pid, comm, _, _, _, w = PROCS[name]
    if w == "service":
        return (str(pid), comm, "", "", "")
    _, pod, job = WORKLOADS[w]
    return (str(pid), comm, w if w != "job" else "", pod, job)


def unseen_key(w):
    _, pod, job = WORKLOADS[w]
    return (w if w != "job" else "", pod, job)


def identities(v, where):
    """Per domain conservation and workload == processes + unseen, exactly."""
    for dom in ("package", "dram"):
        procs = sum(x for k, x in v["proc"].items() if k[5] == dom)
        unseen = sum(x for k, x in v["unseen"].items() if k[3] == dom)
        unattr = sum(x for (d, _), x in v["unattr"].items() if d == dom)
        check(procs + unseen + unattr == v["rapl"].get(dom, 0),
              "%s %s: processes %d + unseen %d + unattributed %d != rapl %d" %
              (where, dom, procs, unseen, unattr, v["rapl"].get(dom, 0)))

    def parts(match):
        return (sum(x for k, x in v["proc"].items() if match(k[2], k[3], k[4])) +
                sum(x for k, x in v["unseen"].items() if match(k[0], k[1], k[2])))
    for uid, val in v["pod"].items():
        got = parts(lambda c, p, j: p == uid)
        check(val == got, "%s: pod %s cpu %d != processes + unseen %d" % (where, uid[:8], val, got))
    for cid, val in v["container"].items():
        got = parts(lambda c, p, j: c == cid)
        check(val == got, "%s: container %s cpu %d != processes + unseen %d" %
              (where, cid[:8], val, got))
    for job, val in v["job"].items():
        got = parts(lambda c, p, j: j == job)
        check(val == got, "%s: job %s cpu %d != processes + unseen %d" % (where, job, val, got))
        steps = sum(x for (j, _), x in v["step"].items() if j == job)
        check(val == steps, "%s: job %s cpu %d != its steps' %d" % (where, job, val, steps))
    # The service's processes are the only series naming no container, pod or job.
    for unit, val in v["service"].items():
        got = parts(lambda c, p, j: not c and not p and not j)
        check(val == got, "%s: service %s cpu %d != processes %d" % (where, unit, val, got))
    check(all(x >= 0 for part in ("proc", "unseen", "unattr") for x in v[part].values()),
          "%s: negative energy" % where)


def wait_scan(url, prev, deadline_s=10):
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        try:
            v = view(scrape(url))
        except OSError:
            v = None
        if v is not None and "package" in v["rapl"] and v["rapl"]["package"] != prev:
            return v
        time.sleep(0.02)
    sys.exit("FAIL: no scan published a new package counter within %d s" % deadline_s)


def drive(root, url):
    state = INIT
    prev = wait_scan(url, None)
    for step in STEPS:
        prev_state, state = state, advance(state, step)
        write_state(root, state, prev_state)
        cur = wait_scan(url, prev["rapl"]["package"])
        exp = expected(step, prev_state)
        print("step %s" % step["name"])
        for dom in ("package", "dram"):
            e = exp[dom]
            d_rapl = cur["rapl"][dom] - prev["rapl"].get(dom, 0)
            check(d_rapl == e["rapl"], "%s %s: rapl %d, want %d" % (step["name"], dom, d_rapl,
                                                                   e["rapl"]))
            d_idle = cur["unattr"][(dom, "idle")] - prev["unattr"].get((dom, "idle"), 0)
            check(d_idle == e["idle"], "%s %s: idle %d, want %d" % (step["name"], dom, d_idle,
                                                                   e["idle"]))
            d_sys = cur["unattr"][(dom, "system")] - prev["unattr"].get((dom, "system"), 0)
            check(abs(d_sys - e["system"]) < 1, "%s %s: system %d, want %s" %
                  (step["name"], dom, d_sys, float(e["system"])))
            for n, want in e["proc"].items():
                k = proc_key(n) + (dom,)
                got = cur["proc"].get(k, 0) - prev["proc"].get(k, 0)
                check(abs(got - want) < 1, "%s %s: process %s got %d uJ, want %s" %
                      (step["name"], dom, n, got, float(want)))
            for w, want in e["unseen"].items():
                k = unseen_key(w) + (dom,)
                got = cur["unseen"].get(k, 0) - prev["unseen"].get(k, 0)
                check(abs(got - want) < 1, "%s %s: unseen of %s got %d uJ, want %s" %
                      (step["name"], dom, w[:8], got, float(want)))
            print("  %-7s rapl %9d idle %9d system %8d unseen C %8d" %
                  (dom, d_rapl, d_idle, d_sys,
                   cur["unseen"].get(unseen_key(CID_C) + (dom,), 0) -
                   prev["unseen"].get(unseen_key(CID_C) + (dom,), 0)))
        identities(cur, step["name"])
        # exited processes keep their series with _active 0; live ones are 1
        for n in PROCS:
            pid, comm = str(PROCS[n][0]), PROCS[n][1]
            if (pid, comm) in cur["active"]:
                want = 1 if n in state["utime"] else 0
                check(cur["active"][(pid, comm)] == want, "%s: %s active %d, want %d" %
                      (step["name"], n, cur["active"][(pid, comm)], want))
        prev = cur
    last = prev
    check(last["rapl"]["package"] == sum(s["package"] for s in STEPS), "package total")
    check(("2003", "worker") in last["active"] and ("2003", "envoy-hot") in last["active"],
          "pid 2003 must have two series (worker, then envoy-hot)")
    check(last["proc"].get(proc_key("sh") + ("package",), 0) == 0,
          "sh never ran: 0 J")
    cu = last["unseen"].get(unseen_key(CID_C) + ("package",), 0)
    check(cu > 0 and last["container"][CID_C] == cu + last["unseen"].get(
        unseen_key(CID_C) + ("dram",), 0), "container C: all of its energy is unseen")
    if FAILS:
        sys.exit("%d check(s) failed" % len(FAILS))
    print("OK: %d steps; container C (short-lived processes only) %.6f J" %
          (len(STEPS), last["container"][CID_C] / 1e6))


def main():
    root = Path(sys.argv[2])
    if sys.argv[1] == "init":
        write_state(root, INIT)
    elif sys.argv[1] == "drive":
        drive(root, sys.argv[3])
    else:
        sys.exit("usage: cpu_process_fixture.py init|drive ROOT [URL]")


if __name__ == "__main__":
    main()
