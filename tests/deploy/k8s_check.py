#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Checks the Kubernetes manifests in deploy/kubernetes without a cluster.

Every YAML document must have a known apiVersion/kind, the fields its kind requires, and
only keys this checker knows for the parts of a pod spec joulestat uses (so a typo such as
`readOnlyRootFileSystem` fails instead of being ignored by the API server). References must
resolve (volumes, ServiceAccount, ClusterRole, ports, selectors), RBAC may only read pods,
and every flag in the container args must appear in `joulestat --help` of the built binary.

Usage: k8s_check.py MANIFEST_DIR JOULESTAT_BINARY
"""
import os
import re
import subprocess
import sys

import yaml

KNOWN_KINDS = {
    ("v1", "ServiceAccount"),
    ("v1", "Service"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
    ("apps/v1", "DaemonSet"),
    ("monitoring.coreos.com/v1", "ServiceMonitor"),
}

# Keys allowed where joulestat's manifests write them (a subset of the API; extend as used).
ALLOWED_KEYS = {
    "metadata": {"name", "labels", "annotations"},
    "podSpec": {"serviceAccountName", "hostPID", "runtimeClassName", "tolerations",
                "terminationGracePeriodSeconds", "containers", "volumes", "nodeSelector",
                "affinity", "priorityClassName", "securityContext",
                "automountServiceAccountToken"},
    "container": {"name", "image", "imagePullPolicy", "args", "command", "env", "ports",
                  "readinessProbe", "livenessProbe", "startupProbe", "resources",
                  "securityContext", "volumeMounts"},
    "securityContext": {"runAsUser", "runAsGroup", "runAsNonRoot", "privileged",
                        "allowPrivilegeEscalation", "readOnlyRootFilesystem", "capabilities",
                        "seccompProfile"},
    "probe": {"httpGet", "initialDelaySeconds", "periodSeconds", "timeoutSeconds",
              "failureThreshold", "successThreshold"},
    "volumeMount": {"name", "mountPath", "readOnly", "mountPropagation", "subPath"},
    "volume": {"name", "hostPath", "configMap", "secret", "emptyDir"},
    "containerPort": {"name", "containerPort", "protocol"},
    "servicePort": {"name", "port", "targetPort", "protocol"},
    "endpoint": {"port", "path", "interval", "scrapeTimeout", "honorLabels", "relabelings",
                 "metricRelabelings", "scheme", "tlsConfig"},
}

# joulestat lists and watches its node's pods; it never gets one by name.
READ_VERBS = {"list", "watch"}
DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
# What each --rapl-source needs added beyond an all-dropped capability set (docs/DEPLOY.md).
RAPL_CAPS = {"powercap": set(), "perf": {"PERFMON"}, "msr": {"SYS_RAWIO"}, "off": set()}


class Checker:
    def __init__(self):
        self.errors = []

    def err(self, where, msg):
        self.errors.append(f"{where}: {msg}")

    def keys(self, where, obj, kind):
        if not isinstance(obj, dict):
            self.err(where, f"expected a mapping for {kind}")
            return False
        for k in sorted(set(obj) - ALLOWED_KEYS[kind]):
            self.err(where, f"unknown key {k!r} in {kind}")
        return True


def help_flags(binary):
    out = subprocess.run([binary, "--help"], capture_output=True, text=True, check=False)
    text = out.stdout + out.stderr
    flags = set(re.findall(r"(--[a-z][a-z0-9.-]*)", text))
    if "--listen-address" not in flags:
        raise SystemExit(f"{binary} --help lists no flags:\n{text}")
    return flags


def parse_args(args):
    """Returns {flag: value or None} from a container args list (both --f=v and --f v)."""
    out = {}
    i = 0
    while i < len(args):
        a = str(args[i])
        if a.startswith("--"):
            name, eq, val = a.partition("=")
            if not eq and i + 1 < len(args) and not str(args[i + 1]).startswith("-"):
                val = str(args[i + 1])
                i += 1
            out[name] = val if (eq or val) else None
        i += 1
    return out


def load_documents(directory, c):
    docs = []
    kust = None
    for fn in sorted(os.listdir(directory)):
        if not fn.endswith((".yaml", ".yml")):
            continue
        path = os.path.join(directory, fn)
        try:
            with open(path, encoding="utf-8") as f:
                loaded = [d for d in yaml.safe_load_all(f) if d is not None]
        except yaml.YAMLError as e:
            c.err(fn, f"YAML does not parse: {e}")
            continue
        if fn == "kustomization.yaml":
            kust = loaded[0] if loaded else {}
            continue
        for i, d in enumerate(loaded):
            docs.append((f"{fn}#{i}", fn, d))
    return docs, kust


def check_common(where, d, c):
    if not isinstance(d, dict):
        c.err(where, "document is not a mapping")
        return None
    pair = (d.get("apiVersion"), d.get("kind"))
    if pair not in KNOWN_KINDS:
        c.err(where, f"unknown apiVersion/kind {pair[0]}/{pair[1]}")
        return None
    md = d.get("metadata")
    if not c.keys(where + " metadata", md, "metadata"):
        return None
    name = md.get("name")
    if not isinstance(name, str) or not DNS1123.match(name):
        c.err(where, f"metadata.name missing or not a DNS-1123 label: {name!r}")
    if "namespace" in md:
        c.err(where, "metadata.namespace set: manifests stay namespace-agnostic")
    return pair[1]


def check_kustomization(kust, files, c):
    if kust is None:
        c.err("kustomization.yaml", "missing")
        return None
    listed = kust.get("resources") or []
    for fn in sorted(set(files) - set(listed)):
        c.err("kustomization.yaml", f"{fn} is not listed in resources")
    for fn in sorted(set(listed) - set(files)):
        c.err("kustomization.yaml", f"resource {fn} does not exist")
    ns = kust.get("namespace")
    if not isinstance(ns, str) or not DNS1123.match(ns):
        c.err("kustomization.yaml", "namespace missing")
    return ns


def check_rbac(by_kind, namespace, c):
    roles = {d["metadata"]["name"] for _, d in by_kind.get("ClusterRole", [])}
    sas = {d["metadata"]["name"] for _, d in by_kind.get("ServiceAccount", [])}
    for where, d in by_kind.get("ClusterRole", []):
        for rule in d.get("rules") or []:
            if rule.get("apiGroups") != [""] or rule.get("resources") != ["pods"]:
                c.err(where, f"rule grants more than core pods: {rule}")
            extra = set(rule.get("verbs") or []) - READ_VERBS
            if extra or not rule.get("verbs"):
                c.err(where, f"verbs beyond list/watch: {sorted(extra)}")
            for k in set(rule) - {"apiGroups", "resources", "verbs"}:
                c.err(where, f"unexpected rule key {k!r}")
    for where, d in by_kind.get("ClusterRoleBinding", []):
        ref = d.get("roleRef") or {}
        if ref.get("kind") != "ClusterRole" or ref.get("name") not in roles:
            c.err(where, f"roleRef names no ClusterRole defined here: {ref}")
        if ref.get("apiGroup") != "rbac.authorization.k8s.io":
            c.err(where, "roleRef.apiGroup must be rbac.authorization.k8s.io")
        subjects = d.get("subjects") or []
        if not subjects:
            c.err(where, "no subjects")
        for s in subjects:
            if s.get("kind") != "ServiceAccount" or s.get("name") not in sas:
                c.err(where, f"subject is no ServiceAccount defined here: {s}")
            elif s.get("namespace") != namespace:
                c.err(where, f"subject namespace {s.get('namespace')!r} is not the "
                      f"kustomization namespace {namespace!r}")
    return sas


def check_container(where, ct, flags, c):
    """Returns (args dict, {port name: number}, {mountPath: volume name and readOnly})."""
    if not c.keys(where, ct, "container"):
        return {}, {}, {}
    if not ct.get("name") or not ct.get("image"):
        c.err(where, "container without name or image")
    args = ct.get("args") or []
    for a in args:
        a = str(a)
        if a.startswith("--") and a.partition("=")[0] not in flags:
            c.err(where, f"flag {a.partition('=')[0]} is not in `joulestat --help`")
    ports = {}
    for p in ct.get("ports") or []:
        c.keys(where + " port", p, "containerPort")
        ports[p.get("name")] = p.get("containerPort")
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        pr = ct.get(probe)
        if pr is None:
            continue
        c.keys(f"{where} {probe}", pr, "probe")
        get = pr.get("httpGet") or {}
        if get.get("path") != "/healthz":
            c.err(where, f"{probe} must GET /healthz")
        if get.get("port") not in ports and get.get("port") not in ports.values():
            c.err(where, f"{probe} port {get.get('port')!r} is no container port")
    for probe in ("readinessProbe", "livenessProbe"):
        if probe not in ct:
            c.err(where, f"no {probe}")
    mounts = {}
    for m in ct.get("volumeMounts") or []:
        c.keys(where + " volumeMount", m, "volumeMount")
        mounts[m.get("mountPath")] = (m.get("name"), bool(m.get("readOnly")))
    return parse_args([str(a) for a in args]), ports, mounts


def check_security(where, ct, args, c):
    sc = ct.get("securityContext")
    if not c.keys(where + " securityContext", sc, "securityContext"):
        return
    if sc.get("privileged"):
        c.err(where, "privileged container")
    if sc.get("allowPrivilegeEscalation") is not False:
        c.err(where, "allowPrivilegeEscalation must be false")
    if sc.get("readOnlyRootFilesystem") is not True:
        c.err(where, "readOnlyRootFilesystem must be true")
    caps = sc.get("capabilities") or {}
    if caps.get("drop") != ["ALL"]:
        c.err(where, "capabilities must drop ALL")
    source = args.get("--rapl-source") or "auto"
    if source not in RAPL_CAPS:
        c.err(where, f"--rapl-source={source}: pick one source, so that only its "
              "capability is added")
        return
    extra = set(caps.get("add") or []) - RAPL_CAPS[source]
    if extra:
        c.err(where, f"capabilities {sorted(extra)} added beyond what "
              f"--rapl-source={source} needs")


def check_daemonset(where, d, sas, flags, c):
    """Returns (template labels, {container port name: number}, metrics path)."""
    spec = d.get("spec") or {}
    tmpl = spec.get("template") or {}
    labels = (tmpl.get("metadata") or {}).get("labels") or {}
    sel = (spec.get("selector") or {}).get("matchLabels") or {}
    if not sel or any(labels.get(k) != v for k, v in sel.items()):
        c.err(where, f"selector {sel} does not match template labels {labels}")
    ps = tmpl.get("spec")
    if not c.keys(where + " pod spec", ps, "podSpec"):
        return labels, {}, "/metrics"
    if ps.get("serviceAccountName") not in sas:
        c.err(where, f"serviceAccountName {ps.get('serviceAccountName')!r} is not defined")
    if ps.get("hostPID") is not True:
        c.err(where, "hostPID must be true (NVML reports host pids)")
    volumes = {}
    for v in ps.get("volumes") or []:
        c.keys(where + " volume", v, "volume")
        if v.get("name") in volumes:
            c.err(where, f"volume {v.get('name')} declared twice")
        volumes[v.get("name")] = v
    containers = ps.get("containers") or []
    if not containers:
        c.err(where, "no containers")
    all_ports, metrics_path = {}, "/metrics"
    for i, ct in enumerate(containers):
        cw = f"{where} container[{i}]"
        args, ports, mounts = check_container(cw, ct, flags, c)
        all_ports.update(ports)
        for path, (vname, _) in mounts.items():
            if vname not in volumes:
                c.err(cw, f"volumeMount {path} refers to undeclared volume {vname!r}")
        check_security(cw, ct, args, c)
        check_host_paths(cw, args, mounts, volumes, c)
        check_listen(cw, args, ports, c)
        check_env(cw, ct, c)
        metrics_path = args.get("--metrics-path") or metrics_path
    return labels, all_ports, metrics_path


def check_host_paths(where, args, mounts, volumes, c):
    """--path.procfs/--path.sysfs point at read-only mounts of the host's /proc and /sys,
    and the pod-resources socket lies inside a mounted directory."""
    for flag, host in (("--path.procfs", "/proc"), ("--path.sysfs", "/sys")):
        path = args.get(flag)
        if path is None:
            c.err(where, f"{flag} not given: the container's own {host} would be read")
            continue
        vname, ro = mounts.get(path, (None, False))
        hp = ((volumes.get(vname) or {}).get("hostPath") or {}).get("path")
        if hp != host:
            c.err(where, f"{flag}={path} is not a mount of the host's {host}")
        elif not ro:
            c.err(where, f"{path} must be mounted readOnly")
    sock = args.get("--pod-resources-socket")
    if sock and os.path.dirname(sock) not in mounts:
        c.err(where, f"the directory of --pod-resources-socket={sock} is not mounted")


def check_listen(where, args, ports, c):
    listen = args.get("--listen-address") or args.get("--web.listen-address") or ":19400"
    port = int(listen.rpartition(":")[2])
    if ports.get("metrics") != port:
        c.err(where, f"container port 'metrics' {ports.get('metrics')} is not the listen "
              f"port {port}")


def check_env(where, ct, c):
    env = {e.get("name"): e for e in ct.get("env") or []}
    ref = ((env.get("NODE_NAME") or {}).get("valueFrom") or {}).get("fieldRef") or {}
    if ref.get("fieldPath") != "spec.nodeName":
        c.err(where, "NODE_NAME must come from the downward API (spec.nodeName)")


def check_service(by_kind, pod_labels, pod_ports, metrics_path, c):
    svc_ports, svc_labels = {}, {}
    for where, d in by_kind.get("Service", []):
        spec = d.get("spec") or {}
        svc_labels.update(d["metadata"].get("labels") or {})
        sel = spec.get("selector") or {}
        if not sel or any(pod_labels.get(k) != v for k, v in sel.items()):
            c.err(where, f"selector {sel} selects no DaemonSet pods")
        if spec.get("clusterIP") != "None":
            c.err(where, "Service must be headless (clusterIP: None)")
        for p in spec.get("ports") or []:
            c.keys(where + " port", p, "servicePort")
            tp = p.get("targetPort", p.get("port"))
            num = pod_ports.get(tp) if isinstance(tp, str) else tp
            if num is None or num not in pod_ports.values():
                c.err(where, f"targetPort {tp!r} is no container port")
            elif p.get("port") != num:
                c.err(where, f"port {p.get('port')} differs from container port {num}")
            svc_ports[p.get("name")] = p.get("port")
    for where, d in by_kind.get("ServiceMonitor", []):
        spec = d.get("spec") or {}
        sel = (spec.get("selector") or {}).get("matchLabels") or {}
        if not sel or any(svc_labels.get(k) != v for k, v in sel.items()):
            c.err(where, f"selector {sel} selects no Service defined here")
        eps = spec.get("endpoints") or []
        if not eps:
            c.err(where, "no endpoints")
        for ep in eps:
            c.keys(where + " endpoint", ep, "endpoint")
            if ep.get("port") not in svc_ports:
                c.err(where, f"endpoint port {ep.get('port')!r} is no Service port name")
            if ep.get("path", "/metrics") != metrics_path:
                c.err(where, f"path {ep.get('path')!r} is not joulestat's {metrics_path}")
            if ep.get("interval") != "15s":
                c.err(where, "scrape interval must be 15s")


def check_dir(directory, flags):
    c = Checker()
    docs, kust = load_documents(directory, c)
    namespace = check_kustomization(kust, sorted({fn for _, fn, _ in docs}), c)
    by_kind, seen = {}, set()
    for where, _, d in docs:
        kind = check_common(where, d, c)
        if kind is None:
            continue
        key = (kind, d["metadata"].get("name"))
        if key in seen:
            c.err(where, f"{kind} {key[1]} defined twice")
        seen.add(key)
        by_kind.setdefault(kind, []).append((where, d))
    for kind in ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "DaemonSet",
                 "Service", "ServiceMonitor"):
        if kind not in by_kind:
            c.err(directory, f"no {kind}")
    sas = check_rbac(by_kind, namespace, c)
    labels, ports, path = {}, {}, "/metrics"
    for where, d in by_kind.get("DaemonSet", []):
        labels, ports, path = check_daemonset(where, d, sas, flags, c)
    check_service(by_kind, labels, ports, path, c)
    return c.errors


def main(argv):
    if len(argv) != 3:
        raise SystemExit(__doc__)
    errors = check_dir(argv[1], help_flags(argv[2]))
    for e in errors:
        print(f"k8s_check: {e}", file=sys.stderr)
    if errors:
        return 1
    print(f"k8s_check: {argv[1]}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
