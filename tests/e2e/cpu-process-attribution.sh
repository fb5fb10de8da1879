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

fixture=$src/tests/e2e/cpu_process_fixture.py
node=$E2E_TMP/node
mkdir -p "$node"
python3 "$fixture" init "$node" || e2e_fail "cannot build the fake node"

port=$(e2e_free_port)
"$build/joulestat" serve --no-gpu --rapl-source powercap \
    --path.procfs "$node/proc" --path.sysfs "$node/sys" \
    --process-scan-interval 1s --sample-interval 100ms \
    --cpu-process-metrics --listen-address "127.0.0.1:$port" >"$E2E_TMP/joulestat.log" 2>&1 &
E2E_PIDS+=($!)

e2e_wait 10 curl -sf "http://127.0.0.1:$port/metrics" || e2e_fail "exporter did not come up"
python3 "$fixture" drive "$node" "http://127.0.0.1:$port/metrics" ||
    e2e_fail "per-process CPU attribution does not match the fixture"
# The per-process and unseen families must pass promtool's checks, lint included.
if command -v promtool >/dev/null; then
    curl -sf "http://127.0.0.1:$port/metrics" >"$E2E_TMP/metrics.prom"
    grep -q '^joulestat_cpu_process_energy_joules_total{' "$E2E_TMP/metrics.prom" ||
        e2e_fail "no per-process CPU series"
    out=$(promtool check metrics <"$E2E_TMP/metrics.prom" 2>&1) || e2e_fail "promtool: $out"
    [[ -z $out ]] || e2e_fail "promtool: $out"
fi
echo "PASS: cpu-process-attribution"
