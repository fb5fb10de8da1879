#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Helpers for podres-e2e.sh on Prometheus text (values with six decimals: microjoules).

series.py get FILE NAME LABEL=VALUE...        prints the value of the one matching series
series.py monotonic OLD NEW PREFIX            fails if a counter under PREFIX went down or vanished
"""
import re
import sys
from decimal import Decimal

LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(path):
    out = {}
    for line in open(path):
        if line.startswith('#') or not line.strip():
            continue
        m = LINE.match(line)
        labels = tuple(sorted(LABEL.findall(m.group(3) or '')))
        out[(m.group(1), labels)] = Decimal(m.group(4))
    return out


def main():
    cmd = sys.argv[1]
    if cmd == 'get':
        want = dict(a.split('=', 1) for a in sys.argv[4:])
        hits = [v for (name, labels), v in parse(sys.argv[2]).items()
                if name == sys.argv[3] and all(dict(labels).get(k) == v for k, v in want.items())]
        if len(hits) != 1:
            raise SystemExit(f"{len(hits)} series match {sys.argv[3]} {want}")
        print(hits[0])
    elif cmd == 'monotonic':
        old, new = parse(sys.argv[2]), parse(sys.argv[3])
        bad = [(k, v, new.get(k)) for k, v in old.items()
               if k[0].startswith(sys.argv[4]) and k[0].endswith('_total')
               and (k not in new or new[k] < v)]
        for k, v, n in bad:
            print(f"counter went down or vanished: {k}: {v} -> {n}")
        sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main()
