#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Side by side with node_exporter's rapl collector on the same fake powercap tree:
#  1. node_exporter (Debian prometheus-node-exporter) with --path.sysfs=<tree>
#     --collector.disable-defaults --collector.rapl: prints its node_rapl_*_joules_total;
#  2. joulestat's RAPL source (rapl-probe): every zone joulestat reads must be one that
#     node_exporter exports with the same value; zones node_exporter exports and joulestat
#     does not (the intel-rapl-mmio mirror of package-0) are listed;
#  3. run <joulestat> serve on the same tree, advance the counters
#     across a wrap and compare joulestat_rapl_energy_joules_total with node_exporter's
#     increase (which misses the wrap: it sees a counter reset).
# Usage: compare-node-exporter.sh <source-dir> <rapl-probe> <joulestat>
set -euo pipefail
src=$1
probe=$2
joulestat=$3
ne=$(command -v prometheus-node-exporter || command -v node_exporter || true)

if [[ -z $ne ]]; then
    echo "compare-node-exporter: SKIP: prometheus-node-exporter not installed (scripts/install-deps)"
    exit 77
fi
command -v curl >/dev/null || { echo "compare-node-exporter: SKIP: no curl"; exit 77; }

# shellcheck source=tests/e2e/lib.sh
. "$src/tests/e2e/lib.sh"
tmp=$E2E_TMP

# Waits (bounded) until the URL answers, then prints the body.
scrape() {
    local url=$1
    for _ in $(seq 1 50); do
        if curl -fsS --max-time 2 "$url" 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    echo "compare-node-exporter: no answer from $url" >&2
    return 1
}

start_node_exporter() { # <sysfs>  -> sets ne_url
    local port
    port=$(e2e_free_port)
    "$ne" --path.sysfs="$1" --collector.disable-defaults --collector.rapl \
        --web.listen-address="127.0.0.1:$port" >"$tmp/ne.log" 2>&1 &
    E2E_PIDS+=($!)
    ne_url="http://127.0.0.1:$port/metrics"
}

fail=0
for tree in rapl-powercap-skx rapl-powercap-client; do
    root=$tmp/$tree
    cp -r "$src/tests/trees/$tree" "$root"
    start_node_exporter "$root/sys"
    scrape "$ne_url" | grep -E '^node_rapl_[a-z_]+joules_total' >"$tmp/ne.txt"
    kill "${E2E_PIDS[-1]}"; wait "${E2E_PIDS[-1]}" 2>/dev/null || true; unset 'E2E_PIDS[-1]'
    echo "== $tree: node_exporter"
    cat "$tmp/ne.txt"

    echo "== $tree: joulestat rapl source (powercap)"
    "$probe" --sysfs "$root/sys" --procfs "$root/proc" --dev "$root/dev" --mode powercap \
        | tee "$tmp/probe.txt" | grep -E '^(chosen|reading)'
    # Each joulestat reading (raw uJ) must appear in node_exporter as raw / 1e6 J.
    while read -r _ pkg die domain raw _; do
        want=$(printf '%d.%06d' $((raw / 1000000)) $((raw % 1000000)) | sed 's/0*$//; s/\.$//')
        if awk -v w="$want" '{ v = $2; if (v == w + 0 || sprintf("%.6f", v) == sprintf("%.6f", w)) f = 1 } END { exit !f }' "$tmp/ne.txt"; then
            echo "same: package $pkg die $die $domain = $want J"
        else
            echo "FAIL: package $pkg $domain = $want J not in node_exporter's output"
            fail=1
        fi
    done < <(grep '^reading' "$tmp/probe.txt")
    n_ne=$(wc -l <"$tmp/ne.txt")
    n_js=$(grep -c '^reading' "$tmp/probe.txt" || true)
    # No reading would make the comparison above vacuous.
    ((n_js > 0)) || { echo "FAIL: $tree: joulestat read no zone"; fail=1; }
    echo "node_exporter series: $n_ne, joulestat readings: $n_js" \
        "($((n_ne - n_js)) exported by node_exporter only: duplicates joulestat does not count twice)"
done

# 3. The daemon (CTest always passes its path; it has serve --path.sysfs --rapl-source).
root=$tmp/daemon
cp -r "$src/tests/trees/rapl-powercap-skx" "$root"
mkdir -p "$root/dev"
port=$(e2e_free_port)
"$joulestat" serve --path.sysfs="$root/sys" --path.procfs="$root/proc" --path.dev="$root/dev" \
    --rapl-source=powercap --sample-interval=200ms --process-scan-interval=200ms \
    --web.listen-address="127.0.0.1:$port" \
    >"$tmp/js.log" 2>&1 &
E2E_PIDS+=($!)
js_url="http://127.0.0.1:$port/metrics"
start_node_exporter "$root/sys"
# The first RAPL reading is the baseline: wait until the daemon has taken it.
for _ in $(seq 1 50); do
    scrape "$js_url" | grep '^joulestat_rapl_energy_joules_total{package="0"' >/dev/null && break
    sleep 0.1
done
ne_before=$(scrape "$ne_url" | awk '/^node_rapl_package_joules_total.*intel-rapl:0"/ { print $2 }')
# The worked example: package-0 wraps, DRAM advances by 30.081024 J.
echo 65999831 >"$root/sys/class/powercap/intel-rapl:0/energy_uj"
echo 4703005432 >"$root/sys/class/powercap/intel-rapl:0:0/energy_uj"
for _ in $(seq 1 50); do
    js=$(scrape "$js_url" | grep -E '^joulestat_rapl_energy_joules_total\{' || true)
    grep -q 'package="0",domain="dram"} 30.081024' <<<"$js" && break
    sleep 0.1
done
ne_after=$(scrape "$ne_url" | awk '/^node_rapl_package_joules_total.*intel-rapl:0"/ { print $2 }')
echo "== daemon"
echo "$js"
echo "node_exporter package-0: $ne_before -> $ne_after (a drop: PromQL increase() sees a reset)"
js_pkg=$(awk '/package="0"/ && /domain="package"/ { print $2 }' <<<"$js")
js_dram=$(awk '/package="0"/ && /domain="dram"/ { print $2 }' <<<"$js")
[[ $js_pkg == 129.999607 ]] || { echo "FAIL: joulestat package-0 $js_pkg, want 129.999607"; fail=1; }
[[ $js_dram == 30.081024 ]] || { echo "FAIL: joulestat dram $js_dram, want 30.081024"; fail=1; }
exit $fail
