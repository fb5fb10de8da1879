#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The pods of scenarios/dcgm-three-pods.scn as an API server would list them (a PodList),
so that joulestat names them: the pod UIDs and container ids are read from the scenario's
cgroup lines; the names are the ones my-gpu-exporter's README queries use.
Usage: compat_pods.py SCENARIO > podlist.json"""
import json
import re
import sys

NAMES = {  # process name -> (pod, namespace, container)
    'heavy': ('training-job-123', 'ml-workloads', 'trainer'),
    'medium': ('inference-api-7f9c', 'serving', 'server'),
    'light': ('notebook-alice', 'research', 'notebook'),
}
CGROUP = re.compile(r'pod([0-9a-f_]{36})\.slice/cri-containerd-([0-9a-f]{64})\.scope')


def main():
    text = open(sys.argv[1], encoding='utf-8').read()
    items = []
    for m in re.finditer(r'^process \d+ .*?name=(\w+).*?\n\s+.*?\n\s+cgroup="([^"]+)"', text,
                         re.M):
        name, cgroup = m.group(1), m.group(2)
        c = CGROUP.search(cgroup)
        if name not in NAMES or not c:
            continue
        pod, ns, container = NAMES[name]
        uid, cid = c.group(1).replace('_', '-'), c.group(2)
        items.append({
            'metadata': {'name': pod, 'namespace': ns, 'uid': uid, 'resourceVersion': '100'},
            'spec': {'nodeName': 'node-a', 'containers': [{'name': container}]},
            'status': {'phase': 'Running', 'containerStatuses': [
                {'name': container, 'containerID': 'containerd://' + cid}]},
        })
    if len(items) != len(NAMES):
        raise SystemExit(f'found {len(items)} of {len(NAMES)} pods in {sys.argv[1]}')
    json.dump({'kind': 'PodList', 'apiVersion': 'v1', 'metadata': {'resourceVersion': '100'},
               'items': items}, sys.stdout)


if __name__ == '__main__':
    main()
