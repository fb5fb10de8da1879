#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# End-to-end: the real daemon on a fake node (procfs + powercap) whose CPU ticks and RAPL
# counters advance by known amounts; the exposition must split them exactly.
# Usage: cpu-attribution.sh BUILD_DIR SOURCE_DIR
set -euo pipefail

build=$1
src=$2
# shellcheck source=tests/e2e/lib.sh
source "$src/tests/e2e/lib.sh"

fixture=$src/tests/e2e/cpu_fixture.py
node=$E2E_TMP/node
mkdir -p "$node"
python3 "$fixture" init "$node" || e2e_fail "cannot build the fake node"

port=$(e2e_free_port)
"$build/joulestat" serve --no-gpu --rapl-source powercap \
    --path.procfs "$node/proc" --path.sysfs "$node/sys" \
    --process-scan-interval 1s --sample-interval 100ms \
    --listen-address "127.0.0.1:$port" >"$E2E_TMP/joulestat.log" 2>&1 &
E2E_PIDS+=($!)

e2e_wait 10 curl -sf "http://127.0.0.1:$port/metrics" || e2e_fail "exporter did not come up"
python3 "$fixture" drive "$node" "http://127.0.0.1:$port/metrics" ||
    e2e_fail "CPU attribution does not match the fixture"
echo "PASS: cpu-attribution"
