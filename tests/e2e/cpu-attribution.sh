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

e2e_cpu_fixture "$build" "$src/tests/e2e/cpu_fixture.py" "CPU attribution"
echo "PASS: cpu-attribution"
