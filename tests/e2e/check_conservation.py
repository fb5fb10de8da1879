#!/usr/bin/env python3
"""Checks, in one exposition, that per GPU the processes' energy plus the energy charged
to pods for holding the GPU (policy allocation) plus the unattributed energy equals the GPU's measured energy exactly (values have six decimals: microjoules)."""
import re
import sys
from collections import defaultdict
from decimal import Decimal

LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(path):
    for line in open(path):
        if line.startswith('#') or not line.strip():
            continue
        m = LINE.match(line)
        if not m:
            raise SystemExit(f"unparsable line: {line!r}")
        labels = dict(LABEL.findall(m.group(3) or ''))
        yield m.group(1), labels, Decimal(m.group(4))


def main():
    path = sys.argv[1]
    prefix = sys.argv[2] if len(sys.argv) > 2 else 'joulestat_gpu_process'
    gpu = {}
    parts = defaultdict(Decimal)
    totals, bare = {}, {}
    for name, labels, value in parse(path):
        if name == 'joulestat_gpu_energy_joules_total':
            gpu[labels['gpu']] = value
        elif name in (prefix + '_energy_joules_total', 'joulestat_gpu_unattributed_energy_joules_total',
                      'joulestat_gpu_allocation_energy_joules_total'):
            parts[labels['gpu']] += value
        if name == prefix + '_energy_joules_total':
            totals[tuple(sorted(labels.items()))] = value
        elif name == prefix + '_energy_joules':  # my-gpu-exporter's README name: the same
            bare[tuple(sorted(labels.items()))] = value
    if not gpu:
        raise SystemExit("no joulestat_gpu_energy_joules_total series")
    ok = not bare or bare == totals
    if not ok:
        print(f"{prefix}_energy_joules differs from {prefix}_energy_joules_total")
    for g, total in sorted(gpu.items()):
        diff = total - parts[g]
        print(f"gpu {g}: measured {total} J, attributed+unattributed {parts[g]} J, diff {diff} J")
        ok = ok and diff == 0
    sys.exit(0 if ok else 1)


if __name__ == '__main__':
    main()
