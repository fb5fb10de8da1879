#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# End-to-end: per-process CPU energy (--cpu-process-metrics) and the unseen part of each
# workload from its cgroup cpu.stat, on a fake procfs + powercap + cgroup v2 node.
# Usage: cpu-process-attribution.sh BUILD_DIR SOURCE_DIR
set -euo pipefail

build=$1
src=$2
# shellcheck source=tests/e2e/lib.sh
source "$src/tests/e2e/lib.sh"

e2e_cpu_fixture "$build" "$src/tests/e2e/cpu_process_fixture.py" \
    "per-process CPU attribution" --cpu-process-metrics
# The per-process and unseen families must pass promtool's checks, lint included.
if command -v promtool >/dev/null; then
    curl -sf "$E2E_URL" >"$E2E_TMP/metrics.prom"
    grep -q '^joulestat_cpu_process_energy_joules_total{' "$E2E_TMP/metrics.prom" ||
        e2e_fail "no per-process CPU series"
    out=$(promtool check metrics <"$E2E_TMP/metrics.prom" 2>&1) || e2e_fail "promtool: $out"
    [[ -z $out ]] || e2e_fail "promtool: $out"
fi
echo "PASS: cpu-process-attribution"
