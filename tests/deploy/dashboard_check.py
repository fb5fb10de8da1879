#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Checks the Grafana dashboard: every PromQL expression (panel targets and template
variable queries) parses, once Grafana's variables are replaced by plain values, and
uses only metrics documented in docs/METRICS.md or recorded by deploy/prometheus; panels
have unique ids, a datasource taken from the $datasource variable and at least one target.

Parsing is promtool's: the expressions are written as recording rules into a temporary
file and given to `promtool check rules`, which reports the first one that fails.

Usage: dashboard_check.py DASHBOARD_JSON METRICS_MD RULES_YAML
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

# Grafana's built-in interval variables, and what a user variable stands for in a query.
BUILTINS = {"__rate_interval": "5m", "__interval": "1m", "__range": "1h",
            "__range_s": "3600", "__interval_ms": "60000"}
VARIABLE = re.compile(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)")
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or",
            "unless", "bool", "offset", "inf", "nan"}


def substitute(expr, variables):
    def repl(m):
        name = m.group(1) or m.group(2)
        if name in BUILTINS:
            return BUILTINS[name]
        if name in variables:
            return ".*"  # every user variable is a regex matcher (allValue .*)
        raise KeyError(name)
    return VARIABLE.sub(repl, expr)


def metric_names(expr):
    """Metric names in a PromQL expression: identifiers that are not functions, keywords,
    label names, label values, durations or numbers."""
    s = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'', '""', expr)
    s = re.sub(r"\{[^}]*\}", " ", s)
    s = re.sub(r"\[[^\]]*\]", " ", s)
    s = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", s)
    s = re.sub(r"(?<![\w:])\d+(\.\d+)?([eE][+-]?\d+)?", " ", s)
    names = set()
    for m in re.finditer(r"[a-zA-Z_:][a-zA-Z0-9_:]*", s):
        rest = s[m.end():].lstrip()
        if rest.startswith("(") or m.group(0).lower() in KEYWORDS:
            continue
        names.add(m.group(0))
    return names


def documented_metrics(metrics_md, rules_yaml):
    with open(metrics_md, encoding="utf-8") as f:
        text = f.read()
    names = set(re.findall(r"`(joulestat_[a-z_]+)", text))
    names |= {"joulestat_gpu_process" + s for s in re.findall(r"`<prefix>(_[a-z_]+)`", text)}
    with open(rules_yaml, encoding="utf-8") as f:
        for g in yaml.safe_load(f)["groups"]:
            names |= {r["record"] for r in g["rules"] if "record" in r}
    return names


def expressions(dash):
    """[(where, expr)] of every query in the dashboard, and the errors of its structure."""
    out, errors, ids = [], [], set()
    variables = [v for v in dash.get("templating", {}).get("list", [])]
    for v in variables:
        if v.get("type") == "query":
            q = v.get("query")
            q = q.get("query") if isinstance(q, dict) else q
            m = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", q or "")
            if not m:
                errors.append(f"variable {v.get('name')}: not label_values(selector, label)")
                continue
            out.append((f"variable {v['name']}", m.group(1)))
    for p in dash.get("panels", []):
        if p.get("type") == "row":
            continue
        where = f"panel {p.get('id')} {p.get('title')!r}"
        if p.get("id") in ids:
            errors.append(f"{where}: duplicate id")
        ids.add(p.get("id"))
        if (p.get("datasource") or {}).get("uid") != "${datasource}":
            errors.append(f"{where}: datasource is not ${{datasource}}")
        targets = p.get("targets") or []
        if not targets:
            errors.append(f"{where}: no targets")
        for t in targets:
            if not t.get("expr"):
                errors.append(f"{where}: target {t.get('refId')} without expr")
                continue
            out.append((f"{where} {t.get('refId')}", t["expr"]))
    return out, errors, {v["name"] for v in variables}


def promtool_parse(exprs):
    """Runs promtool check rules on the expressions; returns its error output or None."""
    rules = [{"record": f"dashboard:expr_{i}:check", "expr": e} for i, (_, e) in
             enumerate(exprs)]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "dashboard-exprs.yaml")
        with open(path, "w", encoding="utf-8") as f:
            yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}, f)
        r = subprocess.run(["promtool", "check", "rules", path], capture_output=True,
                           text=True, check=False)
    return None if r.returncode == 0 else (r.stdout + r.stderr)


def check(dashboard, metrics_md, rules_yaml):
    try:
        with open(dashboard, encoding="utf-8") as f:
            dash = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        return [f"{dashboard}: {e}"]
    exprs, errors, variables = expressions(dash)
    known = documented_metrics(metrics_md, rules_yaml)
    plain = []
    for where, e in exprs:
        try:
            p = substitute(e, variables)
        except KeyError as k:
            errors.append(f"{where}: unknown variable ${k.args[0]}")
            continue
        for name in sorted(metric_names(p) - known):
            errors.append(f"{where}: metric {name} is not in docs/METRICS.md")
        plain.append((where, p))
    out = promtool_parse(plain)
    if out:
        # Name the panel behind each failing rule, then give promtool's own words.
        for i in sorted({int(n) for n in re.findall(r"expr_(\d+)", out)}):
            errors.append(f"{plain[i][0]}: does not parse: {plain[i][1]}")
        errors.append("promtool: " + out.strip())
    for name in ("datasource", "namespace", "pod", "gpu"):
        if name not in variables:
            errors.append(f"template variable ${name} missing")
    return errors


def main(argv):
    if len(argv) != 4:
        raise SystemExit(__doc__)
    errors = check(*argv[1:4])
    for e in errors:
        print(f"dashboard_check: {e}", file=sys.stderr)
    if errors:
        return 1
    print(f"dashboard_check: {argv[1]}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
