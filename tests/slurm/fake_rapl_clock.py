#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A fake powercap RAPL zone whose energy follows the clock exactly.

  fake_rapl_clock.py SYSFS_DIR WATTS

Creates SYSFS_DIR/class/powercap/intel-rapl:0 (package-0) and rewrites its energy_uj in
place (fixed width, never renamed: joulestat keeps the file open) every 1 ms with
  energy = 1 J + WATTS * (time since start)
so a window's energy is WATTS times its length, whatever the load on the machine. The
writer runs at SCHED_FIFO where it may (root): at normal priority, with busy loops beside
it on 2 CPUs, its writes came 10-50 ms late, a few per cent of a 1 s window's energy.
Runs until killed.
"""
import os
import sys
import time


def main():
    zone = os.path.join(sys.argv[1], "class/powercap/intel-rapl:0")
    watts = float(sys.argv[2])
    os.makedirs(zone, exist_ok=True)
    for name, text in (("name", "package-0\n"), ("enabled", "1\n"),
                       ("max_energy_range_uj", "262143328850\n")):
        with open(os.path.join(zone, name), "w") as f:
            f.write(text)
    path = os.path.join(zone, "energy_uj")
    with open(path, "w") as f:
        f.write("%20d\n" % 1000000)
    fd = os.open(path, os.O_WRONLY)
    try:  # woken on time however busy the CPUs are: a late write is a stale zone
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
    except (AttributeError, OSError):
        try:
            os.nice(-10)
        except OSError:
            pass
    start = time.monotonic()
    while True:
        e = 1000000 + int(watts * (time.monotonic() - start) * 1e6)
        os.pwrite(fd, b"%20d\n" % e, 0)
        time.sleep(0.001)


if __name__ == "__main__":
    main()
