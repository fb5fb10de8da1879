#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turns bench/run's results file into docs/PERFORMANCE.md, with the budget checked.

Each results line: RECORD [MODE] key=value ... (see bench/run). Exits 1 when a number the
run should have produced is missing or not positive (the smoke test's check); the budget
itself only decides the "meets" column.
"""
import argparse
import os
import platform
import subprocess
import sys
from pathlib import Path

MIB = 1024.0


def parse(path):
    recs = []
    for line in Path(path).read_text().splitlines():
        tok = line.split()
        if not tok:
            continue
        r = {"record": tok[0], "mode": None}
        for t in tok[1:]:
            if "=" in t:
                k, v = t.split("=", 1)
                try:
                    r[k] = float(v)
                except ValueError:
                    r[k] = v
            else:
                r["mode"] = t
        recs.append(r)
    return recs


def find(recs, record, procs=None, mode=None):
    for r in recs:
        if r["record"] == record and (procs is None or r.get("procs") == procs) and (
                mode is None or r["mode"] == mode):
            return r
    return None


def cmd(args):
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def machine():
    model, cores = "", os.cpu_count()
    for line in cmd(["lscpu"]).splitlines():
        if line.startswith("Model name:"):
            model = line.split(":", 1)[1].strip()
    ne = cmd(["prometheus-node-exporter", "--version"]).splitlines()
    return [("CPU", "%s, %s cores (`lscpu`)" % (model or platform.processor(), cores)),
            ("Kernel", platform.release()),
            ("Compiler", (cmd(["cc", "--version"]).splitlines() or ["?"])[0]),
            ("node_exporter", ne[0] if ne else "not installed")]


def fmt(v, spec="%.2f"):
    return "—" if v is None else spec % v


def meets(ok):
    return "yes" if ok else "**no**"


def real_budget(o, recs, procs):
    """The floor: 2 000 real processes, and 10 000 series scraped within 5 ms."""
    r = find(recs, "real-joulestat-node", 2000)
    scr = [(find(recs, pre + "joulestat-scrape", n, "plain"),
             find(recs, pre + "joulestat-scrape", n, "gzip"))
           for pre in ("", "real-") for n in procs + sorted(
               {int(x["procs"]) for x in recs if x["record"] == "real-joulestat-node"})]
    scr = [x for x in scr if x[0] and x[1] and x[0].get("series", 0) >= 10000]
    if not r and not scr:
        return
    o.append("## Budget: the floor, on the kernel's own /proc\n")
    o.append("| budget | measured | meets |")
    o.append("|---|---|---|")
    if r:
        c = r["cpu_s_per_s"] * 100
        sim = r.get("sim_cpu_s_per_s")
        sim = sim * 100 if isinstance(sim, float) else 0.0
        o.append("| this machine's /proc, 2 000 real processes + 8 × 64 GPU node at 10 Hz + 1 Hz"
                 " scan: < 0.5 %% of one core | %.3f %% in all − %.3f %% in the simulated NVML"
                 " library = %.3f %% | %s (in all: %s) |" % (
                     c, sim, c - sim, meets(c - sim < 0.5), meets(c < 0.5)))
        m = r["hwm_kib"] / MIB
        o.append("| same: peak RSS < 8 MiB | %.2f MiB | %s |" % (m, meets(m < 8)))
    if scr:
        pl, gz = min(scr, key=lambda x: x[0]["series"])
        o.append("| /metrics with 10 000 series: p99 < 5 ms plain and gzip (back to back: most"
                 " scrapes are served the snapshot's one rendering) | %d series: %.2f /"
                 " %.2f ms (CPU per scrape %.3f / %.3f ms) | %s |" % (
                     pl["series"], pl["p99_ms"], gz["p99_ms"], pl["cpu_ms_per_scrape"],
                     gz["cpu_ms_per_scrape"], meets(pl["p99_ms"] < 5 and gz["p99_ms"] < 5)))
    fresh = [(pre, n, find(recs, pre + "joulestat-fresh", n, "plain"),
              find(recs, pre + "joulestat-fresh", n, "gzip"))
             for pre in ("", "real-") for n in sorted({int(x["procs"]) for x in recs
                                                       if x["record"] == pre + "joulestat-fresh"})]
    for pre, n, pl, gz in fresh:
        if not pl or not gz:
            continue
        o.append("| same, each scrape of a new snapshot (%d scrapes 1.1 s apart: every one"
                 " renders), %s, %d processes | %d series: p50 %.2f / %.2f ms, max %.2f / %.2f ms"
                 " plain / gzip (CPU per scrape %.3f / %.3f ms) | %s |" % (
                     pl["scrapes"], "this machine's /proc" if pre else "synthetic procfs", n,
                     pl["series"], pl["p50_ms"], gz["p50_ms"], pl["max_ms"], gz["max_ms"],
                     pl["cpu_ms_per_scrape"], gz["cpu_ms_per_scrape"],
                     meets(pl["max_ms"] < 5 and gz["max_ms"] < 5 and pl["series"] >= 10000)
                     if pl["series"] >= 10000 else "(%d series)" % pl["series"]))
    o.append("")


def check_budgets(recs, path):
    """Prints every budgeted figure beside its limit; returns the ones over it."""
    over = []
    for line in Path(path).read_text().splitlines():
        line = line.split("#", 1)[0].split()
        if not line:
            continue
        record, procs, key, limit = line[0], float(line[1]), line[2], float(line[3])
        record, _, mode = record.partition("/")
        r = find(recs, record, procs, mode or None)
        got = r.get(key) if r else None
        if r is None and record.startswith("real-") and find(recs, "real-skipped", procs):
            print("budget: %-28s %6d %-12s      —  limit %g  skipped (no room for the"
                  " processes)" % (record + ("/" + mode if mode else ""), procs, key, limit))
            continue
        if not isinstance(got, float):
            over.append("%s %s %d: not measured" % (record, key, procs))
            print("budget: %-28s %6d %-12s      —  limit %g  MISSING" % (
                record + ("/" + mode if mode else ""), procs, key, limit))
            continue
        ok = got <= limit
        print("budget: %-28s %6d %-12s %9.4g  limit %g  %s" % (
            record + ("/" + mode if mode else ""), procs, key, got, limit,
            "ok" if ok else "OVER"))
        if not ok:
            over.append("%s %s %d: %g > %g" % (record, key, procs, got, limit))
    return over


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cpu-source", default="ticks")
    ap.add_argument("--period", default="30")
    ap.add_argument("--scrapes", default="1000")
    ap.add_argument("--build", default="")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--budgets", default="", help="fail when a figure is over its limit here")
    a = ap.parse_args()
    recs = parse(a.results)
    procs = sorted({int(r["procs"]) for r in recs if r["record"] == "joulestat-node"})
    missing = []

    def need(r, key, what):
        if r is None or not isinstance(r.get(key), float) or r[key] <= 0:
            missing.append(what)
            return None
        return r[key]

    fs_rec = find(recs, "node-fs")
    node_fs = "a tmpfs (`/dev/shm`)" if fs_rec and fs_rec.get("type") == "tmpfs" else (
        "`%s` (no tmpfs at /dev/shm)" % fs_rec["type"] if fs_rec else "an unrecorded filesystem")
    o = []
    o.append("# Performance\n")
    o.append("What joulestat costs on a node, measured by `make bench` (which runs `bench/run`"
             " and rewrites this file; numbers below are from the last run). The budget comes"
             " from issue #8 and `shared/facts/perf-anchors.md`.\n")
    o.append("## Machine\n")
    o.append("| | |\n|---|---|")
    for k, v in machine():
        o.append("| %s | %s |" % (k, v))
    o.append("")
    o.append("This is a small shared VM: other builds run beside the benchmark, so latency"
             " maxima are noisy; CPU time is the exporter's own (utime + stime).\n")
    o.append("## How it is measured\n")
    o.append("```sh\nmake bench            # = bench/run: Release build in build-bench/,"
             " then everything below\nbench/run --quick      # smoke run (CTest `bench-smoke`,"
             " label bench): 100 synthetic + 2 000 real processes, 3 s, bench/budgets\n```\n")
    o.append("- **Node**: `bench/gen-node.py` builds a fake procfs with N processes (~90 %% in"
             " N/10 containers of N/20 pods, kubelet cgroup lines of both drivers; system"
             " services; kernel threads), cgroup `cpu.stat` files, `/proc/stat` and a powercap"
             " tree with two packages (package + dram zones). While the exporter runs it"
             " advances RAPL energy at 10 Hz and, every second, `/proc/stat`, the utime/stime of"
             " every 4th process and their containers' `cpu.stat`, rewriting these files in"
             " place as the kernel's change (never replaced). The GPUs are the simulated"
             " node `scenarios/node-8gpu-64proc.scn` (8 H100 × 64 time-sliced processes), loaded"
             " as `--nvml-library build/sim/libnvidia-ml.so.1`, its processes in the same"
             " procfs (so the scanner sees N + the ~480 GPU processes alive at a time). The"
             " trees live on %s: /proc and sysfs are in-memory filesystems, and on a disk"
             " filesystem each read of a file rewritten the second before would dirty its"
             " inode (atime) and each rewrite go through the journal, costs no real node"
             " has." % node_fs)
    o.append("- **joulestat**: `serve --sample-interval 100ms --process-scan-interval 1s"
             " --rapl-source powercap --procfs-keep-fds=on`; after 3 s warm-up, CPU seconds per second from"
             " `/proc/PID/stat` (utime + stime) over %s s, peak RSS from `VmHWM`." % a.period)
    o.append("- **Scrapes**: `bench-scrape` (C, `bench/scrape.c`): %s GET requests over one"
             " keep-alive connection, timed from the first byte sent to the last body byte;"
             " nearest-rank p50/p99; series = sample lines of the body. CPU per scrape ="
             " exporter CPU during the scrapes (from `%s`) minus its background rate, divided by"
             " the count." % (a.scrapes, "perf stat -e task-clock -p PID" if a.cpu_source ==
                              "perf" else "/proc/PID/stat ticks"))
    o.append("- **node_exporter** on the same trees: `--collector.disable-defaults"
             " --collector.processes --path.procfs=<fake>` (200 scrapes, 50 above 2 000"
             " processes) and `--collector.disable-defaults --collector.rapl"
             " --path.sysfs=<fake>`; joulestat's RAPL-only line is `serve --no-gpu"
             " --rapl-source powercap` on the same sysfs.")
    o.append("- **The kernel's own /proc** (`bench/run --real-procs`): `bench-spawn-procs`"
             " (`bench/spawn-procs.c`) starts N real processes: every 20th busy (about 0.5 ms"
             " of CPU a second), every 10th with four sleeping threads, the rest asleep; ten"
             " to a cgroup v2 scope of their own named as a docker container's (where cgroup"
             " v2 is writable: here the hybrid mount `/sys/fs/cgroup/unified`), so every other"
             " container has a busy process. joulestat runs as above with `--path.procfs"
             " /proc` (the eBPF task iterator where the kernel lets it load, else kept fds:"
             " the defaults on a real procfs; the table says which; `--joulestat-args"
             " --process-bpf=off` forces the listing) and the same simulated GPU node,"
             " whose ~500 pids are not in /proc (it keeps no fake procfs for them there:"
             " nothing would read it); its sysfs is the synthetic powercap tree with"
             " `fs/cgroup` a link to `/sys/fs/cgroup`. node_exporter's processes collector"
             " reads the same /proc. The machine's own processes (and other users') are in"
             " /proc too: the pid directories counted are given below the tables.")
    o.append("- **Fresh scrapes**: /metrics is rendered once per snapshot (published once a"
             " second) and every scraper is served that rendering, so back-to-back scrapes"
             " mostly measure the cached body. On the nodes named in the budget lines, 20 more"
             " scrapes of each kind are made 1.1 s apart: each one renders, as every scrape of"
             " a Prometheus scraping every 15 s does.")
    o.append("- **GPU shapes** (`--gpu-shapes`): 100 real processes, the simulated node cut to"
             " or grown to G GPUs × P processes each (`bench/gpu-shape.py`; grown processes"
             " are copies under new pids), 10 s each; CPU and peak RSS only.")
    o.append("- **Curves**: `bench/plot.py` (matplotlib) draws `docs/performance-curves.png`"
             " from the same results.\n")
    o.append("![CPU and peak RSS against processes and against the GPU node's shape]"
             "(performance-curves.png)\n")

    o.append("## Results\n")
    def node_tables(pre, procs, where):
        o.append("### joulestat: 8 GPUs × 64 processes at 10 Hz + process scan at 1 Hz%s\n" % where)
        scans = sorted({str(r.get("scan")) for r in recs
                        if r["record"] == pre + "joulestat-node" and r.get("scan")})
        if scans:
            names = {"eBPF": "the eBPF task iterator", "listing": "listing /proc"}
            o.append("Processes read by: %s.\n" % ", ".join(names.get(x, x) for x in scans))
        o.append("| processes | CPU (% of one core) | of which simulated NVML | sampler thread / exec watcher"
                 " | µs CPU per process per scan | peak RSS"
                 " (MiB) | RSS anon / file (MiB) | series | body (KiB) | plain p50 / p99 (ms) | gzip p50 / p99 (ms) |"
                 " gzip body (KiB) | CPU per scrape plain / gzip (ms) | peak RSS after scrapes"
                 " (MiB) |")
        o.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        base = find(recs, pre + "joulestat-node", procs[0]) if procs else None
        for n in procs:
            node = find(recs, pre + "joulestat-node", n)
            pl = find(recs, pre + "joulestat-scrape", n, "plain")
            gz = find(recs, pre + "joulestat-scrape", n, "gzip")
            after = find(recs, pre + "joulestat-after-scrapes", n)
            cpu = need(node, "cpu_s_per_s", "%scpu %d" % (pre, n))
            need(node, "hwm_kib", "%srss %d" % (pre, n))
            need(pl, "series", "%sseries %d" % (pre, n))
            need(pl, "p99_ms", "%splain p99 %d" % (pre, n))
            need(gz, "p99_ms", "%sgzip p99 %d" % (pre, n))
            per_proc = None
            if n != procs[0] and cpu is not None and base and base.get("cpu_s_per_s") is not None:
                per_proc = (cpu - base["cpu_s_per_s"]) / (n - procs[0]) * 1e6
            sim = node.get("sim_cpu_s_per_s") if node else None
            th = [node.get(k) if node else None for k in ("sampler_cpu_s_per_s", "exec_watch_cpu_s_per_s")]
            o.append("| %d | %s | %s | %s / %s | %s | %s | %s / %s | %s | %s | %s / %s | %s / %s | %s | %s / %s | %s |" % (
                n, fmt(cpu * 100 if cpu is not None else None, "%.3f"),
                fmt(sim * 100 if isinstance(sim, float) else None, "%.3f"),
                fmt(th[0] * 100 if isinstance(th[0], float) else None, "%.2f"),
                fmt(th[1] * 100 if isinstance(th[1], float) else None, "%.2f"),
                fmt(per_proc, "%.1f") if per_proc is not None else "(base)",
                fmt(node["hwm_kib"] / MIB if node else None),
                fmt(node["anon_kib"] / MIB if node and "anon_kib" in node else None),
                fmt(node["file_kib"] / MIB if node and "file_kib" in node else None),
                fmt(pl.get("series") if pl else None, "%d"),
                fmt(pl["bytes"] / 1024 if pl else None, "%.0f"),
                fmt(pl.get("p50_ms") if pl else None), fmt(pl.get("p99_ms") if pl else None),
                fmt(gz.get("p50_ms") if gz else None), fmt(gz.get("p99_ms") if gz else None),
                fmt(gz["bytes"] / 1024 if gz else None, "%.0f"),
                fmt(pl.get("cpu_ms_per_scrape") if pl else None, "%.3f"),
                fmt(gz.get("cpu_ms_per_scrape") if gz else None, "%.3f"),
                fmt(after["hwm_kib"] / MIB if after else None)))
        o.append("\n“Of which simulated NVML”: thread CPU time spent inside the simulated"
                 " library's calls (its model and its fake procfs files), which it measures itself"
                 " (`$JOULESTAT_SIM_CPU_FILE`), plus one reading of its meter's clock per call (a"
                 " system call, of which about one per call falls outside the measured interval;"
                 " its back-to-back cost, a lower bound); on a real node the NVIDIA library's own"
                 " cost takes its place.")
        o.append("\n“Sampler thread / exec watcher”: the CPU time of the thread that samples, scans"
                 " and splits (simulated NVML included), and of the one that reads each program"
                 " the node starts (`src/proc/exec_watch.c`; it follows the machine's whole exec"
                 " rate, here other users' builds and tests too), from /proc ticks (10 ms).")
        o.append("\nRSS anon / file: at the end of the sampling period; file-backed pages are the"
                 " shared libraries' (clean, shared with other processes, but counted in RSS).")
        o.append("\n“µs CPU per process per scan” is the growth over the smallest node: (CPU/s at N −"
                 " CPU/s at %d) / (N − %d), with one scan per second.\n" % (procs[0], procs[0])
                 if procs else "")

        o.append("### node_exporter processes collector on the same procfs%s\n" % where)
        o.append("| processes | CPU per scrape (ms) | p50 / p99 (ms) | peak RSS (MiB) |"
                 " joulestat's whole second of work (10 GPU ticks + 1 scan) vs one node_exporter"
                 " scrape |")
        o.append("|---:|---:|---:|---:|---:|")
        for n in procs:
            ne = find(recs, pre + "ne-processes", n, "plain")
            rss = find(recs, pre + "ne-processes-rss", n)
            node = find(recs, pre + "joulestat-node", n)
            if not ne:
                continue
            ratio = None
            if node and ne.get("cpu_ms_per_scrape"):
                ratio = node["cpu_s_per_s"] * 1000 / ne["cpu_ms_per_scrape"]
            o.append("| %d | %s | %s / %s | %s | %s |" % (
                n, fmt(ne.get("cpu_ms_per_scrape"), "%.3f"), fmt(ne.get("p50_ms")),
                fmt(ne.get("p99_ms")), fmt(rss["hwm_kib"] / MIB if rss else None),
                fmt(ratio, "%.2f×")))
        o.append("")

    node_tables("", procs, " (synthetic procfs)")
    real_procs = sorted({int(r["procs"]) for r in recs if r["record"] == "real-joulestat-node"})
    if real_procs:
        node_tables("real-", real_procs, ", on this machine's /proc")
        o.append("On this machine's /proc, “processes” are the ones `bench-spawn-procs` started;"
                 " the pid directories /proc held during the measurement, these and the"
                 " machine's own: %s.\n" % ", ".join(
                     "%d → %d" % (n, find(recs, "real-joulestat-node", n).get("live", 0))
                     for n in real_procs))
    shapes = sorted((r["gpus"] * r["per_gpu"], r) for r in recs
                    if r["record"] == "gpu-joulestat-node")
    if shapes:
        o.append("### joulestat against the GPU node's shape, 100 real processes, this machine's"
                 " /proc\n")
        o.append("| GPUs × processes | CPU (% of one core) | of which simulated NVML | peak RSS"
                 " (MiB) |")
        o.append("|---|---:|---:|---:|")
        for _, r in shapes:
            o.append("| %d × %d | %.3f | %.3f | %.2f |" % (
                r["gpus"], r["per_gpu"], r["cpu_s_per_s"] * 100,
                r.get("sim_cpu_s_per_s", 0.0) * 100, r["hwm_kib"] / MIB))
        o.append("\nCPU over %d s from /proc ticks (10 ms): ±0.1 %% of a core.\n" %
                 shapes[0][1]["period_s"])

    o.append("### Reading a process: µs per process (`bench/procfs-syscalls.c`, best pass)\n")
    o.append("| procfs | processes | dir + stat | one path open | kept-open fd, `pread` |"
             " kept-open `schedstat`, `pread` | listing (`readdir`) |")
    o.append("|---|---:|---:|---:|---:|---:|---:|")
    for r in recs:
        if r["record"] != "procfs-syscalls":
            continue
        o.append("| %s | %d | %.2f | %.2f | %.2f | %s | %s |" % (
            "this machine's /proc" if r.get("tree") == "real" else "synthetic (regular files)",
            r.get("processes", 0), r.get("dir+stat_us", 0), r.get("path_us", 0),
            r.get("kept_open_us", 0), fmt(r.get("schedstat_us")), fmt(r.get("listing_us"))))
    o.append("")

    o.append("### RAPL only, same powercap tree (2 packages × package + dram)\n")
    o.append("| exporter | series | plain CPU per scrape (ms) | plain p50 / p99 (ms) |"
             " gzip CPU per scrape (ms) | gzip p99 (ms) | peak RSS (MiB) |")
    o.append("|---|---:|---:|---:|---:|---:|---:|")
    rows = {}
    for name, rec, rss in (("joulestat", "joulestat-rapl", "joulestat-rapl-rss"),
                           ("node_exporter", "ne-rapl", "ne-rapl-rss")):
        pl, gz, m = find(recs, rec, None, "plain"), find(recs, rec, None, "gzip"), find(
            recs, rss)
        if not pl:
            continue
        rows[name] = (pl, gz, m)
        o.append("| %s | %s | %s | %s / %s | %s | %s | %s |" % (
            name, fmt(pl.get("series"), "%d"), fmt(pl.get("cpu_ms_per_scrape"), "%.4f"),
            fmt(pl.get("p50_ms"), "%.3f"), fmt(pl.get("p99_ms"), "%.3f"),
            fmt(gz.get("cpu_ms_per_scrape") if gz else None, "%.4f"),
            fmt(gz.get("p99_ms") if gz else None, "%.3f"),
            fmt(m["hwm_kib"] / MIB if m else None)))
    need(rows.get("joulestat", (None,))[0], "series", "rapl series")
    # Scrapers keep their connection; joulestat must not close it after each reply.
    for r in recs:
        if r["record"].startswith("joulestat") and r.get("reconnects", 0) > 0:
            missing.append("keep-alive (%s %s reconnected %d times)" % (
                r["record"], r["mode"], r["reconnects"]))
    o.append("")

    o.append("## Budget (issue #8)\n")
    scrape_note = None
    o.append("| budget | measured | meets |")
    o.append("|---|---|---|")
    n2k = find(recs, "joulestat-node", 2000) or (find(recs, "joulestat-node", procs[-1])
                                                  if procs else None)
    if n2k:
        c = n2k["cpu_s_per_s"] * 100
        sim = n2k.get("sim_cpu_s_per_s")
        if isinstance(sim, float):
            own = c - sim * 100
            o.append("| 10 Hz GPU (8 × 64) + 1 Hz scan of %d processes: < 1 %% of one core for"
                     " the exporter itself | %.3f %% in all − %.3f %% in the simulated NVML"
                     " library = %.3f %% | %s |" % (n2k["procs"], c, sim * 100, own,
                                                    meets(own < 1)))
        else:
            o.append("| 10 Hz GPU (8 × 64) + 1 Hz scan of %d processes: < 1 %% of one core |"
                     " %.3f %% | %s |" % (n2k["procs"], c, meets(c < 1)))
        m = n2k["hwm_kib"] / MIB
        o.append("| same: peak RSS < 10 MiB | %.2f MiB | %s |" % (m, meets(m < 10)))
    scr = [(find(recs, "joulestat-scrape", n, "plain"), find(recs, "joulestat-scrape", n,
                                                            "gzip")) for n in procs]
    scr = [s for s in scr if s[0] and s[1]]
    if scr:
        # The node closest above 10 000 series; the largest when none reaches it.
        big = [s for s in scr if s[0]["series"] >= 10000]
        pl, gz = (min(big, key=lambda s: s[0]["series"]) if big else
                  max(scr, key=lambda s: s[0]["series"]))
        o.append("| /metrics with 10 000 series: p99 < 10 ms plain | %d series: %.2f ms | %s |"
                 % (pl["series"], pl["p99_ms"], meets(pl["p99_ms"] < 10 and
                                                       pl["series"] >= 10000)))
        o.append("| same, gzip: p99 < 15 ms | %.2f ms | %s |" % (
            gz["p99_ms"], meets(gz["p99_ms"] < 15 and pl["series"] >= 10000)))
        others = ["%d series: %.2f / %.2f ms" % (p["series"], p["p99_ms"], g["p99_ms"])
                  for p, g in scr if p is not pl]
        if others:
            scrape_note = ("The scrape lines use the smallest node with at least 10 000"
                           " series (its 1 Hz process scan competes with the scrapes for the"
                           " CPU); p99 plain / gzip on the other nodes: " + ", ".join(others)
                           + ".")
    if "joulestat" in rows and "node_exporter" in rows:
        j, ne = rows["joulestat"][0]["cpu_ms_per_scrape"], rows["node_exporter"][0][
            "cpu_ms_per_scrape"]
        ratio = j / ne if ne else float("inf")
        o.append("| RAPL-only scrape CPU ≤ ¼ of node_exporter's | %.4f ms vs %.4f ms = %.2f |"
                 " %s |" % (j, ne, ratio, meets(ratio <= 0.25)))
    o.append("")
    if scrape_note:
        o.append(scrape_note + "\n")
    real_budget(o, recs, procs)
    # The soak's section (scripts/soak writes bench/soak.md), kept across bench runs.
    soak = Path(__file__).with_name("soak.md")
    if soak.exists():
        o.append("<!-- soak: scripts/soak writes this section -->\n" + soak.read_text().rstrip()
                 + "\n<!-- end of soak -->\n")
    notes = Path(__file__).with_name("notes.md")
    if notes.exists():
        o.append(notes.read_text())
    if a.quick:
        o.insert(1, "*Smoke run (`bench/run --quick`): short and small, not the budget.*\n")
    Path(a.out).write_text("\n".join(o).rstrip() + "\n")
    over = check_budgets(recs, a.budgets) if a.budgets else []
    if missing:
        print("bench: missing or zero: " + ", ".join(missing), file=sys.stderr)
    if over:
        print("bench: over budget (%s): %s" % (a.budgets, "; ".join(over)), file=sys.stderr)
    if missing or over:
        sys.exit(1)


if __name__ == "__main__":
    main()
