#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A test of the deploy checkers: each one passes on a copy of deploy/ as committed and
fails, with the expected message, on copies broken one way at a time.

Usage: selftest.py SOURCE_DIR JOULESTAT_BINARY [all|nodocker]
(nodocker: skip the Dockerfile checker, for sanitizer builds whose binary links runtimes
the image does not carry)
"""
import json
import os
import shutil
import sys
import tempfile

import yaml

sys.dont_write_bytecode = True  # keep __pycache__ out of the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dashboard_check  # noqa: E402
import dockerfile_check  # noqa: E402
import k8s_check  # noqa: E402
import rules_check  # noqa: E402


def load(d, fn):
    with open(os.path.join(d, fn), encoding="utf-8") as f:
        return list(yaml.safe_load_all(f))


def save(d, fn, docs):
    with open(os.path.join(d, fn), "w", encoding="utf-8") as f:
        yaml.safe_dump_all(docs, f, sort_keys=False)


def edit_doc(fn, fun):
    """A mutation that loads one manifest file, changes its first document, saves it."""
    def apply(d):
        docs = load(d, fn)
        fun(docs)
        save(d, fn, docs)
    return apply


def edit_text(fn, old, new):
    def apply(d):
        path = os.path.join(d, fn)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if old not in text:
            raise SystemExit(f"selftest: {fn} no longer contains {old!r}")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace(old, new, 1))
    return apply


def pod(docs):
    return docs[0]["spec"]["template"]["spec"]


def ctr(docs):
    return pod(docs)["containers"][0]


DS = "daemonset.yaml"
K8S_BREAKS = [
    ("volume removed", edit_doc(DS, lambda d: pod(d)["volumes"].pop(0)),
     "refers to undeclared volume 'host-proc'"),
    ("unknown flag", edit_doc(DS, lambda d: ctr(d)["args"].append("--no-such-flag=1")),
     "flag --no-such-flag is not in `joulestat --help`"),
    ("write verb", edit_doc("rbac.yaml", lambda d: d[0]["rules"][0]["verbs"].append("delete")),
     "verbs beyond list/watch: ['delete']"),
    ("get verb", edit_doc("rbac.yaml", lambda d: d[0]["rules"][0]["verbs"].append("get")),
     "verbs beyond list/watch: ['get']"),
    ("secrets", edit_doc("rbac.yaml", lambda d: d[0]["rules"][0]["resources"].append("secrets")),
     "rule grants more than core pods"),
    ("service account", edit_doc(DS, lambda d: pod(d).update(serviceAccountName="js")),
     "serviceAccountName 'js' is not defined"),
    ("selector", edit_doc(DS, lambda d: d[0]["spec"]["template"]["metadata"]["labels"].update(
        {"app.kubernetes.io/name": "other"})), "does not match template labels"),
    ("service port", edit_doc("service.yaml", lambda d: d[0]["spec"]["ports"][0].update(port=19401)),
     "port 19401 differs from container port 19400"),
    ("monitor port", edit_doc("servicemonitor.yaml",
                              lambda d: d[0]["spec"]["endpoints"][0].update(port="http")),
     "endpoint port 'http' is no Service port name"),
    ("monitor path", edit_doc("servicemonitor.yaml",
                              lambda d: d[0]["spec"]["endpoints"][0].update(path="/metricz")),
     "path '/metricz' is not joulestat's /metrics"),
    ("typo key", edit_text(DS, "readOnlyRootFilesystem: true", "readOnlyRootFileSystem: true"),
     "unknown key 'readOnlyRootFileSystem' in securityContext"),
    ("extra capability", edit_doc(DS, lambda d: ctr(d)["securityContext"]["capabilities"].update(
        add=["SYS_ADMIN"])), "capabilities ['SYS_ADMIN'] added beyond"),
    ("listen port", edit_text(DS, "--listen-address=:19400", "--listen-address=:9500"),
     "is not the listen port 9500"),
    ("subject namespace", edit_doc("rbac.yaml", lambda d: d[1]["subjects"][0].update(
        namespace="other")), "is not the kustomization namespace"),
    ("old apiVersion", edit_text(DS, "apiVersion: apps/v1", "apiVersion: apps/v1beta2"),
     "unknown apiVersion/kind apps/v1beta2/DaemonSet"),
    ("yaml syntax", edit_text("service.yaml", "  ports:\n", "  ports: [\n"), "YAML does not parse"),
    ("node name", edit_doc(DS, lambda d: ctr(d)["env"].pop(0)),
     "NODE_NAME must come from the downward API"),
    ("own procfs", edit_text(DS, "--path.procfs=/host/proc", "--path.procfs=/proc"),
     "--path.procfs=/proc is not a mount of the host's /proc"),
    ("writable sysfs", edit_doc(DS, lambda d: ctr(d)["volumeMounts"][1].update(readOnly=False)),
     "/host/sys must be mounted readOnly"),
    ("no hostPID", edit_doc(DS, lambda d: pod(d).update(hostPID=False)), "hostPID must be true"),
    ("not listed", edit_text("kustomization.yaml", "  - service.yaml\n", ""),
     "service.yaml is not listed in resources"),
    ("missing socket mount", edit_doc(DS, lambda d: ctr(d)["volumeMounts"].pop(2)),
     "--pod-resources-socket=/var/lib/kubelet/pod-resources/kubelet.sock is not mounted"),
]

DF = "Dockerfile"
DOCKER_BREAKS = [
    ("runtime lib", edit_text(DF, "libmicrohttpd12 libisal2", "libmicrohttpd12"),
     "runtime stage lacks libisal2 (the binary links libisal.so.2)"),
    ("loaded lib", edit_text(DF, "libisal2 libyaml-0-2", "libisal2"),
     "runtime stage lacks libyaml-0-2 (the binary loads libyaml-0.so.2)"),
    ("build lib", edit_text(DF, "libmicrohttpd-dev zlib1g-dev", "zlib1g-dev"),
     "build stage lacks libmicrohttpd-dev (pkg-config module libmicrohttpd)"),
    ("base image", edit_text(DF, "FROM debian:12-slim AS build", "FROM ubuntu:24.04 AS build"),
     "base image must be debian:12-slim"),
    ("entrypoint", edit_text(DF, 'ENTRYPOINT ["/usr/local/bin/joulestat"]',
                             'ENTRYPOINT ["/usr/bin/joulestat"]'),
     "ENTRYPOINT is not the binary the build stage installs"),
]


def edit_dash(fun):
    def apply(d):
        path = os.path.join(d, "joulestat-dashboard.json")
        with open(path, encoding="utf-8") as f:
            dash = json.load(f)
        fun([p for p in dash["panels"] if p["type"] != "row"], dash)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(dash, f)
    return apply


def set_expr(expr):
    return edit_dash(lambda ps, _: ps[0]["targets"][0].update(expr=expr))


DASH_BREAKS = [
    ("syntax", set_expr('sum by (namespace (rate(joulestat_pod_energy_joules_total[5m]))'),
     "does not parse"),
    ("unknown metric", set_expr('rate(joulestat_gpu_energy_total{node=~"$node"}[$__rate_interval])'),
     "metric joulestat_gpu_energy_total is not in docs/METRICS.md"),
    ("unknown variable", set_expr('joulestat_series{node=~"$nodes"}'), "unknown variable $nodes"),
    ("datasource", edit_dash(lambda ps, _: ps[1].update(datasource={"uid": "prom-1"})),
     "datasource is not ${datasource}"),
    ("variable metric", edit_dash(lambda _, d: d["templating"]["list"][2]["query"].update(
        query="label_values(joulestat_namespace_info, namespace)")),
     "metric joulestat_namespace_info is not in docs/METRICS.md"),
    ("no gpu variable", edit_dash(lambda _, d: d["templating"]["list"].pop(4)),
     "template variable $gpu missing"),
]

RB = "joulestat-rules.yaml"
RULE_BREAKS = [
    ("metric typo", edit_text(RB, "rate(joulestat_gpu_energy_joules_total[5m])",
                              "rate(joulestat_gpu_energy_joule_total[5m])"),
     "metric joulestat_gpu_energy_joule_total is not in docs/METRICS.md"),
    ("wrong aggregation", edit_text(RB, "sum by (namespace, pod) (namespace_pod_component",
                                    "sum by (namespace) (namespace_pod_component"),
     "promtool test rules power.test.yaml"),
    ("expectation", edit_text("tests/power.test.yaml", "value: 50", "value: 51"),
     "promtool test rules power.test.yaml"),
    ("untested rule", edit_text(RB, "  - name: joulestat-alerts\n",
                                "  - name: joulestat-alerts\n    rules:\n"
                                "      - record: node:joulestat_series:max\n"
                                "        expr: max by (node) (joulestat_series)\n"
                                "  - name: joulestat-alerts-2\n"),
     "node:joulestat_series:max: no unit test"),
    ("bad syntax", edit_text(RB, "> 0.25", "> > 0.25"), "promtool check rules"),
]


def run_case(src, name, mutate, expect, check):
    with tempfile.TemporaryDirectory() as tmp:
        d = os.path.join(tmp, "copy")
        shutil.copytree(src, d)
        if mutate:
            mutate(d)
        errors = check(d)
    if mutate is None:
        if errors:
            print(f"FAIL {name}: the committed files do not pass: {errors}")
            return False
        print(f"ok   {name}: passes")
        return True
    if not any(expect in e for e in errors):
        print(f"FAIL {name}: expected an error containing {expect!r}, got {errors}")
        return False
    print(f"ok   {name}: caught ({expect})")
    return True


def main(argv):
    if len(argv) not in (3, 4) or (len(argv) == 4 and argv[3] not in ("all", "nodocker")):
        raise SystemExit(__doc__)
    src, binary = argv[1], argv[2]
    skip = {"docker"} if len(argv) == 4 and argv[3] == "nodocker" else set()
    flags = k8s_check.help_flags(binary)
    metrics = os.path.join(src, "docs", "METRICS.md")
    rules = os.path.join(src, "deploy", "prometheus", RB)
    suites = [
        ("k8s", os.path.join(src, "deploy", "kubernetes"), K8S_BREAKS,
         lambda d: k8s_check.check_dir(d, flags)),
        ("docker", os.path.join(src, "deploy", "kubernetes"), DOCKER_BREAKS,
         lambda d: dockerfile_check.check(os.path.join(d, DF), binary, src)),
        ("dashboard", os.path.join(src, "deploy", "grafana"), DASH_BREAKS,
         lambda d: dashboard_check.check(os.path.join(d, "joulestat-dashboard.json"),
                                         metrics, rules)),
        ("rules", os.path.join(src, "deploy", "prometheus"), RULE_BREAKS,
         lambda d: rules_check.check(d, metrics)),
    ]
    ok = True
    for suite, directory, breaks, check in suites:
        if suite in skip:
            print(f"skip {suite}")
            continue
        ok &= run_case(directory, f"{suite} as committed", None, None, check)
        for name, mutate, expect in breaks:
            ok &= run_case(directory, f"{suite} {name}", mutate, expect, check)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
