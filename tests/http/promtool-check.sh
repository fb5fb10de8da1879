#!/usr/bin/env bash
# Runs `promtool check metrics` on the sample exposition with each prefix. Any output
# (lint warnings included) fails the test, with two documented exceptions: the compat
# families my_gpu_process_gpu_process_count and my_gpu_process_energy_joules keep the names
# my-gpu-exporter's users query, which promtool's lint dislikes ("_count" suffix on a
# gauge, a counter without "_total"). Drop-in compatibility wins for those names.
set -euo pipefail
writer=$1
command -v promtool >/dev/null || { echo "promtool not installed (Debian package prometheus)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
allowed='^(my_gpu_process_gpu_process_count non-histogram and non-summary metrics should not have "_count" suffix|my_gpu_process_energy_joules counter metrics should have "_total" suffix)$'
for prefix in joulestat_gpu_process my_gpu_process; do
    "$writer" "$prefix" >"$tmp/$prefix.prom"
    lines=$(grep -vc '^#' "$tmp/$prefix.prom")
    rc=0
    out=$(promtool check metrics <"$tmp/$prefix.prom" 2>&1) || rc=$?
    if [[ $prefix == my_gpu_process ]]; then
        [[ $(grep -Ec "$allowed" <<<"$out") == 2 ]] || { echo "expected the two known lints of the compat names: $out"; exit 1; }
        out=$(grep -Ev "$allowed" <<<"$out" || true)
        # promtool exits 3 for lint findings only; anything else is a parse error.
        [[ $rc == 0 || $rc == 3 ]] && rc=0
    fi
    if [[ $rc == 0 && -z $out ]]; then
        echo "promtool: $prefix: $lines series, clean"
    else
        echo "promtool: $prefix: problems (rc $rc):"
        echo "$out"
        exit 1
    fi
done
# The check itself must catch a broken exposition.
printf 'bad_metric{a="1"} 1\nbad_metric{a="1"} 2\n' >"$tmp/dup.prom"
if promtool check metrics <"$tmp/dup.prom" >/dev/null 2>&1; then
    echo "promtool accepted a duplicate series; the check would prove nothing"
    exit 1
fi
