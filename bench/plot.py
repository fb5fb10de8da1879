#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The cost curves of docs/PERFORMANCE.md from a bench/run results file.

  plot.py RESULTS OUT.png

Left: CPU against processes, joulestat's whole second of work (10 GPU ticks + 1 scan) beside
one scrape of node_exporter's processes collector, on the synthetic procfs and on this
machine's /proc. Middle: peak RSS of both. Right: joulestat's CPU and peak RSS against the
simulated GPU node's shape (GPUs x processes per GPU), 100 real processes beside it.
Needs matplotlib (python3-matplotlib, `scripts/install-deps bench`).
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from report import parse  # noqa: E402

MIB = 1024.0


def series(recs, record, key, scale, mode=None):
    pts = sorted((r["procs"], r[key] * scale) for r in recs
                 if r["record"] == record and (mode is None or r["mode"] == mode)
                 and isinstance(r.get(key), float))
    return [p[0] for p in pts], [p[1] for p in pts]


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: plot.py RESULTS OUT.png")
    recs = parse(sys.argv[1])
    fig, ax = plt.subplots(1, 3, figsize=(15, 4.6))

    lines = [("joulestat, 1 s of work, synthetic procfs", "joulestat-node", "cpu_s_per_s",
              1000, None, "C0", "-"),
             ("joulestat, 1 s of work, this machine's /proc", "real-joulestat-node",
              "cpu_s_per_s", 1000, None, "C0", "--"),
             ("node_exporter, 1 scrape, synthetic procfs", "ne-processes", "cpu_ms_per_scrape",
              1, "plain", "C3", "-"),
             ("node_exporter, 1 scrape, this machine's /proc", "real-ne-processes",
              "cpu_ms_per_scrape", 1, "plain", "C3", "--")]
    for label, rec, key, scale, mode, color, style in lines:
        x, y = series(recs, rec, key, scale, mode)
        if x:
            ax[0].plot(x, y, style, color=color, marker="o", label=label)
    ax[0].set_xscale("log")
    ax[0].set_yscale("log")
    ax[0].set_xlabel("processes")
    ax[0].set_ylabel("CPU time (ms)")
    ax[0].set_title("CPU: joulestat per second vs node_exporter per scrape")
    ax[0].legend(fontsize=7)
    ax[0].grid(True, which="both", alpha=0.3)

    for label, rec, color, style in (
            ("joulestat, synthetic procfs", "joulestat-node", "C0", "-"),
            ("joulestat, this machine's /proc", "real-joulestat-node", "C0", "--"),
            ("node_exporter, synthetic procfs", "ne-processes-rss", "C3", "-"),
            ("node_exporter, this machine's /proc", "real-ne-processes-rss", "C3", "--")):
        x, y = series(recs, rec, "hwm_kib", 1 / MIB)
        if x:
            ax[1].plot(x, y, style, color=color, marker="o", label=label)
    ax[1].set_xscale("log")
    ax[1].set_ylim(bottom=0)
    ax[1].set_xlabel("processes")
    ax[1].set_ylabel("peak RSS (MiB)")
    ax[1].set_title("Memory")
    ax[1].legend(fontsize=7)
    ax[1].grid(True, which="both", alpha=0.3)

    shapes = sorted((r["gpus"] * r["per_gpu"], r) for r in recs
                    if r["record"] == "gpu-joulestat-node")
    if shapes:
        names = ["%d×%d" % (r["gpus"], r["per_gpu"]) for _, r in shapes]
        cpu = [r["cpu_s_per_s"] * 100 for _, r in shapes]
        own = [(r["cpu_s_per_s"] - r.get("sim_cpu_s_per_s", 0.0)) * 100 for _, r in shapes]
        rss = [r["hwm_kib"] / MIB for _, r in shapes]
        ax[2].plot(names, cpu, "-o", color="C0", label="CPU, in all")
        ax[2].plot(names, own, "--o", color="C0", label="CPU, less the simulated NVML")
        ax[2].set_ylabel("% of one core")
        ax[2].set_ylim(bottom=0)
        ax[2].set_xlabel("GPUs × processes per GPU (10 Hz), 100 real processes")
        tw = ax[2].twinx()
        tw.plot(names, rss, ":s", color="C2", label="peak RSS")
        tw.set_ylabel("peak RSS (MiB)")
        tw.set_ylim(bottom=0)
        h1, l1 = ax[2].get_legend_handles_labels()
        h2, l2 = tw.get_legend_handles_labels()
        ax[2].legend(h1 + h2, l1 + l2, fontsize=7, loc="upper left")
        ax[2].set_title("joulestat against the GPU node's shape")
        ax[2].grid(True, alpha=0.3)
    else:
        ax[2].set_visible(False)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
