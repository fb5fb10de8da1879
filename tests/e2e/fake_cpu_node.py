# SPDX-License-Identifier: MIT
"""Shared pieces of the fake CPU nodes of cpu_fixture.py and cpu_process_fixture.py:
atomic and in-place file writes, a 52-field <pid>/stat line, /proc/stat + powercap zones,
and the failure collector."""

import os
import sys

MAX_RANGE = 262143328850  # max_energy_range_uj of a real package zone
MODULUS = MAX_RANGE + 1  # the daemon's documented wrap: (max - prev) + cur + 1
CPU_KEYS = ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"]
ACTIVE_KEYS = ["user", "nice", "system", "irq", "softirq", "steal"]
FAILS = []


def write_atomic(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name("." + path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def write_in_place(path, text):
    # The daemon keeps energy_uj open and re-reads it (as on sysfs), so a rename would go
    # unseen: one fixed-width pwrite (leading blanks) instead, never a shorter file.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.pwrite(fd, text.encode(), 0)
    finally:
        os.close(fd)


def stat_line(pid, comm, flags, start, utime, stime):
    fields = [str(pid), "(%s)" % comm, "S", "1", str(pid), str(pid), "0", "-1", str(flags),
              "120", "0", "3", "0", str(utime), str(stime), "0", "0", "20", "0", "1", "0",
              str(start), "12345678", "900", "18446744073709551615", "94000000000000",
              "94000000100000", "140000000000000"] + ["0"] * 9 + ["17", "1"] + ["0"] * 5 + [
                  "94000000200000", "94000000300000", "94000000400000", "140000000100000",
                  "140000000100010", "140000000100010", "140000000200000", "0"]
    assert len(fields) == 52, len(fields)
    return " ".join(fields) + "\n"


def write_node(proc, sys_, cpu, package, dram):
    """/proc/stat, /proc/uptime and the package-0 + dram powercap zones.

    /proc/stat has no per-CPU lines: the fixture's ticks do not follow the clock, and without
    them joulestat takes a window's busy time from the ticks (with them, from the ticks' busy
    fraction of CPUs x the window by the clock, which a real node's ticks follow)."""
    line = " ".join(str(cpu[k]) for k in CPU_KEYS)
    write_atomic(proc / "stat", "cpu  %s 0 0\nintr 1 0\nctxt 2\nbtime 1700000000\n"
                 "processes 3000\nprocs_running 1\nprocs_blocked 0\n" % line)
    write_atomic(proc / "uptime", "12345.67 23456.78\n")
    zones = {"intel-rapl:0": ("package-0", package), "intel-rapl:0:0": ("dram", dram)}
    for z, (name, energy) in zones.items():
        d = sys_ / "class" / "powercap" / z
        if not (d / "name").exists():
            write_atomic(d / "name", name + "\n")
            write_atomic(d / "max_energy_range_uj", "%d\n" % MAX_RANGE)
            write_atomic(d / "enabled", "1\n")
        write_in_place(d / "energy_uj", "%20d\n" % energy)


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL: " + msg, file=sys.stderr)
