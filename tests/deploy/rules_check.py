#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Checks deploy/prometheus: `promtool check rules` on the rule file, `promtool test
rules` on every tests/*.yaml beside it, and that the rules use only metrics documented
in docs/METRICS.md (plus Prometheus' own `up` and the rules' own records).

Usage: rules_check.py PROMETHEUS_DIR METRICS_MD
"""
import glob
import os
import re
import subprocess
import sys

import yaml

sys.dont_write_bytecode = True  # keep __pycache__ out of the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dashboard_check import documented_metrics, metric_names  # noqa: E402

RULES = "joulestat-rules.yaml"


def promtool(*args):
    r = subprocess.run(["promtool", *args], capture_output=True, text=True, check=False)
    return r.returncode, (r.stdout + r.stderr).strip()


def check(prom_dir, metrics_md):
    errors = []
    rules = os.path.join(prom_dir, RULES)
    rc, out = promtool("check", "rules", rules)
    if rc != 0:
        errors.append(f"promtool check rules: {out}")
    tests = sorted(glob.glob(os.path.join(prom_dir, "tests", "*.yaml")))
    if not tests:
        errors.append(f"no rule unit tests in {prom_dir}/tests")
    for t in tests:
        rc, out = promtool("test", "rules", t)
        if rc != 0:
            errors.append(f"promtool test rules {os.path.basename(t)}: {out}")
    known = documented_metrics(metrics_md, rules) | {"up"}
    with open(rules, encoding="utf-8") as f:
        groups = yaml.safe_load(f)["groups"]
    tested = set()
    for t in tests:
        with open(t, encoding="utf-8") as f:
            text = f.read()
        tested |= {n for g in groups for r in g["rules"]
                   for n in [r.get("record") or r.get("alert")]
                   if re.search(rf"(?<![\w:]){re.escape(n)}(?![\w:])", text)}
    for g in groups:
        for r in g["rules"]:
            name = r.get("record") or r.get("alert")
            for m in sorted(metric_names(r["expr"]) - known):
                errors.append(f"{name}: metric {m} is not in docs/METRICS.md")
            if name not in tested:
                errors.append(f"{name}: no unit test in {prom_dir}/tests mentions it")
    return errors


def main(argv):
    if len(argv) != 3:
        raise SystemExit(__doc__)
    errors = check(argv[1], argv[2])
    for e in errors:
        print(f"rules_check: {e}", file=sys.stderr)
    if errors:
        return 1
    print(f"rules_check: {argv[1]}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
