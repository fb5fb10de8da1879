#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A scenario of another shape, cut from or grown out of a larger one (bench/run --gpu-shapes).

  gpu-shape.py SRC GPUS PER_GPU OUT

Keeps the first GPUS gpus of SRC and the first PER_GPU processes of each. A GPU with fewer
processes than PER_GPU gets copies of its own, each under a new pid (the original plus a
multiple of 1 000 000, so still below the kernel's 2^22) with a phase moved so that the
copies do not run in step.
"""
import re
import sys
from pathlib import Path

PID_STEP = 1000000


def blocks(text):
    """(head lines before the first block, [(kind, [lines])]) where a block is a gpu or
    process line with its indented continuation lines."""
    head, out = [], []
    for line in text.splitlines():
        if line.startswith((" ", "\t")) and out:
            out[-1][1].append(line)
        elif line.startswith(("gpu ", "process ")):
            out.append((line.split()[0], [line]))
        elif out:
            out.append(("other", [line]))
        else:
            head.append(line)
    return head, out


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: gpu-shape.py SRC GPUS PER_GPU OUT")
    src, gpus, per_gpu, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    head, bl = blocks(Path(src).read_text())
    head = [re.sub(r"name=\S+", "name=shape-%dx%d" % (gpus, per_gpu), l, count=1)
            if l.startswith("scenario ") else l for l in head]
    kept_gpus = [b for k, b in bl if k == "gpu" and int(b[0].split()[1]) < gpus]
    procs = {}
    for k, b in bl:
        if k == "process":
            g = int(re.search(r"\bgpu=(\d+)", b[0]).group(1))
            if g < gpus:
                procs.setdefault(g, []).append(b)
    lines = head[:]
    for b in kept_gpus:
        lines += b
    for g in range(gpus):
        own = procs.get(g, [])
        if not own:
            sys.exit("gpu-shape: gpu %d has no process in %s" % (g, src))
        for i in range(per_gpu):
            b = list(own[i % len(own)])
            copy = i // len(own)
            if copy:
                pid = int(b[0].split()[1]) + copy * PID_STEP
                b[0] = re.sub(r"^process \d+", "process %d" % pid, b[0])
                b = [re.sub(r"phase=(\d+)ms", lambda m: "phase=%dms" % (
                    int(m.group(1)) + 37 * copy), l) for l in b]
            lines += b
    Path(out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
