#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Helpers for kube-e2e.sh.

  monitor URL DIR   scrape every 0.3 s until DIR/stop exists; each scrape must conserve GPU
                    energy exactly and no counter may go down (series keyed without the
                    pod/namespace/container names, which fill in once); failures go to
                    DIR/errors, the scrape count to DIR/count
  has URL METRIC k=v ...   exit 0 when a METRIC series has all those label values
  none URL METRIC LABEL    exit 0 when no METRIC series has a non-empty LABEL
  backoff LOG TEXT         exit 0 when LOG has at least one line containing TEXT and each
                           repeat came no sooner than the daemon's rate limit allows (10 s
                           after the first, then at doubling intervals)
"""
import datetime
import os
import re
import sys
import time
import urllib.request
from collections import defaultdict
from decimal import Decimal

LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
NAMES = ("pod", "namespace", "container")


def scrape(url):
    with urllib.request.urlopen(url, timeout=5) as r:
        text = r.read().decode()
    out = []
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        m = LINE.match(line)
        if not m:
            raise SystemExit(f"unparsable line: {line!r}")
        out.append((m.group(1), dict(LABEL.findall(m.group(3) or "")), Decimal(m.group(4))))
    return out


def conservation(series):
    gpu, parts = {}, defaultdict(Decimal)
    for name, labels, value in series:
        if name == "joulestat_gpu_energy_joules_total":
            gpu[labels["gpu"]] = value
        elif name in ("joulestat_gpu_process_energy_joules_total",
                      "joulestat_gpu_unattributed_energy_joules_total"):
            parts[labels["gpu"]] += value
    if not gpu:
        return "no GPU energy series"
    for g, total in gpu.items():
        if total != parts[g]:
            return f"gpu {g}: measured {total} J != parts {parts[g]} J"
    return None


def monitor(url, outdir):
    last = {}
    count = 0
    while not os.path.exists(os.path.join(outdir, "stop")):
        try:
            series = scrape(url)
        except OSError:
            time.sleep(0.3)
            continue
        errors = []
        err = conservation(series)
        if err:
            errors.append(err)
        for name, labels, value in series:
            if not name.endswith("_total"):
                continue
            key = (name,) + tuple(sorted((k, v) for k, v in labels.items() if k not in NAMES))
            if key in last and value < last[key]:
                errors.append(f"{name}{labels} went down: {last[key]} -> {value}")
            last[key] = value
        if errors:
            with open(os.path.join(outdir, "errors"), "a") as f:
                f.write("\n".join(errors) + "\n")
        count += 1
        with open(os.path.join(outdir, "count"), "w") as f:
            f.write(str(count))
        time.sleep(0.3)


def has(url, metric, wanted):
    want = dict(w.split("=", 1) for w in wanted)
    for name, labels, _ in scrape(url):
        if name == metric and all(labels.get(k) == v for k, v in want.items()):
            return 0
    return 1


def none(url, metric, label):
    seen = False
    for name, labels, _ in scrape(url):
        if name == metric:
            seen = True
            if labels.get(label):
                print(f"{metric} has {label}={labels[label]!r}", file=sys.stderr)
                return 1
    return 0 if seen else 1


def backoff(log, text):
    stamps = []
    with open(log) as f:
        for line in f:
            if text in line:
                stamp = line.split(" ", 1)[0].rstrip("Z")
                stamps.append(datetime.datetime.fromisoformat(stamp).timestamp())
    if not stamps:
        print(f"no line with {text!r}", file=sys.stderr)
        return 1
    interval = 10.0
    for earlier, later in zip(stamps, stamps[1:]):
        # 0.1 s slack: the stamps are wall-clock time, the limiter counts monotonic time.
        if later - earlier < interval - 0.1:
            print(f"{len(stamps)} lines; a repeat came {later - earlier:.1f} s after the one "
                  f"before, the limit allows one every {interval:.0f} s", file=sys.stderr)
            return 1
        interval *= 2
    print(f"{len(stamps)} line(s) in {stamps[-1] - stamps[0]:.1f} s, rate-limited")
    return 0


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "monitor":
        monitor(sys.argv[2], sys.argv[3])
    elif cmd == "has":
        sys.exit(has(sys.argv[2], sys.argv[3], sys.argv[4:]))
    elif cmd == "none":
        sys.exit(none(sys.argv[2], sys.argv[3], sys.argv[4]))
    elif cmd == "backoff":
        sys.exit(backoff(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(f"unknown command {cmd}")
