#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The shipped JoulestatSourceDown alert against what joulestat really exports: sources
# switched off by flag (--no-gpu, --rapl-source=off, --kubernetes-enabled=false) have no
# joulestat_source_up series, so nothing fires; a source that is asked for but fails
# (NVML missing) is exported as 0 and fires. The scraped series become the input of
# `promtool test rules` on deploy/prometheus/joulestat-rules.yaml.
# Usage: source-alert.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$(cd "$2" && pwd)
. "$src/tests/e2e/lib.sh"
js=$build/joulestat
command -v promtool >/dev/null || e2e_fail "promtool is missing (Debian package prometheus)"

scrape() { # NAME flags...: serves with the flags, writes $E2E_TMP/NAME.prom after a tick
    local name=$1 port pid
    shift
    port=$(e2e_free_port)
    "$js" serve --kubernetes-enabled=false --listen-address "127.0.0.1:$port" "$@" \
        >/dev/null 2>"$E2E_TMP/$name.log" &
    pid=$!
    E2E_PIDS+=($pid)
    e2e_wait 10 curl -sf -o "$E2E_TMP/$name.prom" "http://127.0.0.1:$port/metrics" ||
        e2e_fail "$name: no scrape"
    kill "$pid"
}
scrape disabled --no-gpu --rapl-source=off
scrape down --nvml-library "$E2E_TMP/no/libnvidia-ml.so.1" --rapl-source=off

grep -q '^joulestat_source_' "$E2E_TMP/disabled.prom" &&
    e2e_fail "sources switched off are exported: $(grep '^joulestat_source_' "$E2E_TMP/disabled.prom")"
grep -qx 'joulestat_source_up{source="nvml"} 0' "$E2E_TMP/down.prom" ||
    e2e_fail "NVML asked for but missing is not source_up 0: $(grep source_ "$E2E_TMP/down.prom")"

# Each scrape's source_up series, held for 20 minutes on node n1.
series() {
    local line any=0
    while read -r line; do
        any=1
        echo "      - series: '${line% *}'"
        echo "        values: '${line##* }x20'"
        done < <(grep '^joulestat_source_up{' "$1" | sed 's/{/{node="n1",/')
    ((any)) || echo "      []"
}
cat >"$E2E_TMP/alerts.test.yaml" <<EOT
rule_files:
  - $src/deploy/prometheus/joulestat-rules.yaml
evaluation_interval: 1m
tests:
  - name: switched off by flag
    interval: 1m
    input_series:
$(series "$E2E_TMP/disabled.prom")
    alert_rule_test:
      - alertname: JoulestatSourceDown
        eval_time: 15m
        exp_alerts: []
  - name: asked for but down
    interval: 1m
    input_series:
$(series "$E2E_TMP/down.prom")
    alert_rule_test:
      - alertname: JoulestatSourceDown
        eval_time: 15m
        exp_alerts:
          - exp_labels:
              severity: warning
              node: n1
              source: nvml
            exp_annotations:
              summary: "joulestat source nvml on n1 is down"
              description: "Run \`joulestat check\` in the pod to see why (driver, permissions, capabilities)."
EOT
promtool test rules "$E2E_TMP/alerts.test.yaml" >"$E2E_TMP/promtool.out" 2>&1 ||
    e2e_fail "promtool test rules: $(cat "$E2E_TMP/promtool.out" "$E2E_TMP/alerts.test.yaml")"
echo "source-alert: ok"
