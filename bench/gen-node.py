#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A synthetic node for the benchmarks: fake procfs, cgroup cpu.stat and RAPL powercap.

  gen-node.py sys ROOT                 write ROOT/sys: two RAPL packages (package + dram
                                       zones each), cgroup root; and ROOT/proc-min (a procfs
                                       with no processes, for RAPL-only runs)
  gen-node.py run ROOT --procs N       wait for ROOT/proc/stat (the simulated GPU node
                                       writes it at nvmlInit and clears pid directories
                                       then; not with N = 0, where the library keeps no
                                       procfs), create N processes, then advance the node
                                       until SIGTERM: RAPL energy at 10 Hz, /proc/stat,
                                       the busy processes' utime/stime and their
                                       containers' cpu.stat at 1 Hz.

Shape: ~90 % of the processes sit in N/10 containers of N/20 pods (two containers per pod;
cgroup lines in the systemd-driver and cgroupfs-driver shapes kubelet writes, with
containerd, CRI-O and docker ids); the rest are system services and kernel threads.
Every 4th process is busy: its CPU time advances every second (the others are idle, as on
a real node), so the scanner sees real deltas. Files are created once (temp + rename) and
then rewritten in place, as the kernel's never are replaced: the busy processes' `stat`,
/proc/stat, cpu.stat and energy_uj get their new content with one pwrite() at offset 0,
padded with trailing spaces (before the final newline) so that it is never shorter than
before; no truncate, so a reader never sees an empty or shortened file, and an exporter
may keep these files open and pread() them as it does on a real /proc and sysfs.
Pids start at 300000, above the GPU scenario's (100245 .. 199841). Deterministic (seed).
"""
import argparse
import os
import random
import resource
import signal
import sys
import time
from pathlib import Path

MAX_RANGE = 262143328850
PID_BASE = 300000
NCPU = 16
CLK_TCK = 100
PACKAGE_W = (180.0, 160.0)  # watts per package
DRAM_W = (22.0, 19.0)


def write_in_place(fd, value):
    os.pwrite(fd, b"%20d\n" % value, 0)


# Trailing spaces added when a file is created, so that counters gaining digits rarely make
# the content longer than the file (longer is fine, it only grows the file).
PAD_SLACK = 16


class InPlaceFiles:
    """Files created once and then rewritten in place, never shorter than before.

    The parsers read trailing whitespace as the end of the last line (<pid>/stat after
    field 22, /proc/stat's softirq line, cpu.stat's last key), so padding is invisible.
    Writable fds stay open up to a budget under RLIMIT_NOFILE (10 000 processes need
    ~3 500); beyond it each rewrite opens and closes its file."""

    def __init__(self):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if hard != resource.RLIM_INFINITY and soft < hard:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        self.fd_budget = max(soft - 64, 0) if soft != resource.RLIM_INFINITY else 1 << 20
        self.width = {}  # path -> bytes the file has now
        self.fds = {}  # path -> open O_WRONLY fd

    @staticmethod
    def _padded(text, width):
        body = text.encode()
        if len(body) < width:
            body = body[:-1] + b" " * (width - len(body)) + b"\n"
        return body

    def create(self, path, text):
        data = self._padded(text, len(text.encode()) + PAD_SLACK)
        tmp = path.with_name("." + path.name + ".tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
        self.width[path] = len(data)

    def rewrite(self, path, text):
        data = self._padded(text, self.width[path])
        fd = self.fds.get(path)
        if fd is None and len(self.fds) < self.fd_budget:
            fd = self.fds[path] = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
        if fd is not None:
            os.pwrite(fd, data, 0)
        else:
            fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
            try:
                os.pwrite(fd, data, 0)
            finally:
                os.close(fd)
        self.width[path] = max(self.width[path], len(data))


def hexid(rng, n):
    return "%0*x" % (n, rng.getrandbits(4 * n))


def pod_uid(rng):
    h = hexid(rng, 32)
    return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])


def container_cgroup(rng, uid, cid, style):
    u = uid.replace("-", "_")
    qos = ("burstable", "besteffort", "guaranteed")[style % 3]
    runtime = ("cri-containerd", "crio", "docker")[style % 3]
    if style % 4 == 3:  # cgroupfs driver
        qdir = "" if qos == "guaranteed" else qos + "/"
        return "/kubepods/%spod%s/%s" % (qdir, uid, cid)
    if qos == "guaranteed":
        return "/kubepods.slice/kubepods-pod%s.slice/%s-%s.scope" % (u, runtime, cid)
    return "/kubepods.slice/kubepods-%s.slice/kubepods-%s-pod%s.slice/%s-%s.scope" % (
        qos, qos, u, runtime, cid)


def stat_line(pid, comm, flags, ppid, start, utime, stime):
    f = [str(pid), "(%s)" % comm, "S", str(ppid), str(pid), str(pid), "0", "-1", str(flags),
         "120", "0", "3", "0", str(utime), str(stime), "0", "0", "20", "0", "1", "0",
         str(start), "123456789", "3000", "18446744073709551615", "94000000000000",
         "94000000100000", "140000000000000"] + ["0"] * 9 + ["17", str(pid % NCPU)] + [
             "0"] * 5 + ["94000000200000", "94000000300000", "94000000400000",
                         "140000000100000", "140000000100010", "140000000100010",
                         "140000000200000", "0"]
    return " ".join(f) + "\n"


class Node:
    def __init__(self, root, nprocs, seed=8):
        self.root = Path(root)
        self.proc = self.root / "proc"
        self.cg = self.root / "sys" / "fs" / "cgroup"
        rng = random.Random(seed)
        n_containers = max(nprocs // 10, 2)
        pods = [pod_uid(rng) for _ in range(max(n_containers // 2, 1))]
        self.containers = []  # (cgroup path, usage_us)
        for i in range(n_containers):
            self.containers.append([container_cgroup(rng, pods[i // 2 % len(pods)],
                                                     hexid(rng, 64), i), 0])
        self.procs = []  # dict per process
        comms = ("python3", "torchrun", "java", "nginx", "envoy", "node", "postgres", "redis")
        n_kernel = max(nprocs // 50, 1)
        n_system = max(nprocs // 10 - n_kernel, 1)
        for i in range(nprocs):
            pid = PID_BASE + i
            if i < n_kernel:
                p = dict(comm="kworker/%d:1" % (i % NCPU), flags=0x208040, ppid=2,
                         cgroup="0::/\n", container=None)
            elif i < n_kernel + n_system:
                p = dict(comm="svc-%d" % i, flags=0x400140, ppid=1,
                         cgroup="0::/system.slice/svc-%d.service\n" % i, container=None)
            else:
                c = (i - n_kernel - n_system) % n_containers
                p = dict(comm=comms[i % len(comms)], flags=0x400100, ppid=1,
                         cgroup="0::%s\n" % self.containers[c][0], container=c)
            p.update(pid=pid, start=rng.randrange(100, 8000000), utime=rng.randrange(0, 10**6),
                     stime=rng.randrange(0, 10**5), busy=(i % 4 == 0))
            self.procs.append(p)
        self.cpu = [10**6] * 10  # user nice system idle iowait irq softirq steal guest gn
        self.tick = 0
        self.files = InPlaceFiles()

    def btime(self):
        if not (self.proc / "stat").exists():
            return 1700000000
        for line in (self.proc / "stat").read_text().splitlines():
            if line.startswith("btime "):
                return int(line.split()[1])
        return 1700000000

    def write_proc_stat(self, btime, first):
        line = " ".join(str(v) for v in self.cpu)
        per = " ".join(str(v // NCPU) for v in self.cpu)
        text = "cpu  %s\n" % line + "".join("cpu%d %s\n" % (i, per) for i in range(NCPU))
        text += ("intr 123456 0 0\nctxt 987654321\nbtime %d\nprocesses %d\nprocs_running 3\n"
                 "procs_blocked 0\nsoftirq 1 0 0\n" % (btime, PID_BASE + len(self.procs)))
        self.write_file(self.proc / "stat", text, first)

    def write_file(self, path, text, first):
        if first:
            self.files.create(path, text)
        else:
            self.files.rewrite(path, text)

    def write_process(self, p, first):
        d = self.proc / str(p["pid"])
        if first:
            (d / "task" / str(p["pid"])).mkdir(parents=True, exist_ok=True)
            (d / "cgroup").write_text(p["cgroup"])
            (d / "comm").write_text(p["comm"] + "\n")
            (d / "cmdline").write_bytes(p["comm"].encode() + b"\0")
            (d / "status").write_text("Name:\t%s\nState:\tS (sleeping)\nThreads:\t1\n" % p["comm"])
            (d / "task" / str(p["pid"]) / "stat").symlink_to("../../stat")
        self.write_file(d / "stat", stat_line(p["pid"], p["comm"], p["flags"], p["ppid"],
                                              p["start"], p["utime"], p["stime"]), first)

    def write_cgroups(self, first):
        for path, usage in self.containers:
            d = self.cg / path.lstrip("/")
            if first:
                d.mkdir(parents=True, exist_ok=True)
            text = "usage_usec %d\nuser_usec %d\nsystem_usec %d\nnr_periods 0\n" % (
                usage, usage * 9 // 10, usage - usage * 9 // 10)
            self.write_file(d / "cpu.stat", text, first)

    def create(self):
        btime = self.btime()
        (self.proc / "sys" / "kernel").mkdir(parents=True, exist_ok=True)
        (self.proc / "sys" / "kernel" / "pid_max").write_text("4194304\n")
        (self.proc / "sys" / "kernel" / "threads-max").write_text("1000000\n")
        for p in self.procs:
            self.write_process(p, True)
        self.write_cgroups(True)
        self.write_proc_stat(btime, True)
        return btime

    def advance_second(self, btime, rng):
        for p in self.procs:
            if not p["busy"]:
                continue
            du, ds = rng.randrange(1, 40), rng.randrange(0, 5)
            p["utime"] += du
            p["stime"] += ds
            if p["container"] is not None:
                self.containers[p["container"]][1] += (du + ds) * 10000
            self.write_process(p, False)
        self.write_cgroups(False)
        for k, d in zip(range(4), (900, 5, 150, 500)):
            self.cpu[k] += d
        self.write_proc_stat(btime, False)


def rapl_zones(root):
    return [("intel-rapl:%d" % p, "package-%d" % p, PACKAGE_W[p]) for p in (0, 1)] + [
        ("intel-rapl:%d:0" % p, "dram", DRAM_W[p]) for p in (0, 1)]


def cmd_sys(root):
    base = Path(root) / "sys" / "class" / "powercap"
    for zone, name, _ in rapl_zones(root):
        d = base / zone
        d.mkdir(parents=True, exist_ok=True)
        (d / "name").write_text(name + "\n")
        (d / "max_energy_range_uj").write_text("%d\n" % MAX_RANGE)
        (d / "enabled").write_text("1\n")
        (d / "energy_uj").write_text("%20d\n" % 123456789)
    (Path(root) / "sys" / "fs" / "cgroup").mkdir(parents=True, exist_ok=True)
    pm = Path(root) / "proc-min"
    pm.mkdir(parents=True, exist_ok=True)
    node = Node(root, 0)
    node.proc = pm
    node.procs = []
    node.write_proc_stat(1700000000, True)
    (pm / "uptime").write_text("86400.00 170000.00\n")


def cmd_run(root, nprocs, stat_wait_s):
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    proc = Path(root) / "proc"
    deadline = time.monotonic() + stat_wait_s
    # With no processes (a run on the kernel's /proc) nothing reads this tree, and the
    # simulated library keeps no procfs there: only RAPL energy is advanced.
    while nprocs > 0 and not (proc / "stat").exists():
        if time.monotonic() > deadline:
            sys.exit("gen-node: %s/stat never appeared" % proc)
        time.sleep(0.05)
    node = Node(root, nprocs)
    btime = node.create()
    (proc / ".bench-ready").write_text("%d\n" % nprocs)
    zones = rapl_zones(root)
    fds = [os.open(Path(root) / "sys" / "class" / "powercap" / z / "energy_uj", os.O_WRONLY)
           for z, _, _ in zones]
    energy = [123456789] * len(zones)
    rng = random.Random(1)
    t_next = time.monotonic()
    tick = 0
    while not stop:
        for i, (_, _, watts) in enumerate(zones):
            energy[i] = (energy[i] + int(watts * 100000)) % (MAX_RANGE + 1)
            write_in_place(fds[i], energy[i])
        tick += 1
        if tick % 10 == 0:
            node.advance_second(btime, rng)
        t_next += 0.1
        time.sleep(max(t_next - time.monotonic(), 0))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=("sys", "run"))
    ap.add_argument("root")
    ap.add_argument("--procs", type=int, default=2000)
    ap.add_argument("--stat-wait", type=float, default=30)
    a = ap.parse_args()
    if a.cmd == "sys":
        cmd_sys(a.root)
    else:
        cmd_run(a.root, a.procs, a.stat_wait)


if __name__ == "__main__":
    main()
