#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# End to end: joulestat serve on the simulated GPU node (scenarios/podres-allocation.scn)
# with --gpu-idle-policy=allocation, and a kubelet pod-resources peer on the real gRPC stack
# (peer.py: grpcio serving src/kube/pod_resources.proto on a unix socket). Checks:
#   - an allocated-but-idle pod (idle-holder, GPU 1) gets the GPU's energy;
#   - per GPU, processes + allocations + unattributed == GPU energy, exactly, every scrape;
#   - the peer going away (and answering grpc-status 14 when back) loses nothing: every
#     counter keeps growing, the last allocations stay in use, conservation still holds;
#   - a restart with --state-dir keeps the allocation counters and conservation;
#   - the log names the failure and the fix; `joulestat check` reports missing socket and
#     a grpc error; promtool accepts the exposition.
# Usage: podres-e2e.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
. "$src/tests/e2e/lib.sh"
here="$src/tests/kube/podresources"
py=/usr/bin/python3
series() { "$py" "$here/series.py" "$@"; }

command -v curl >/dev/null || e2e_fail "curl not installed"
sock="$E2E_TMP/kubelet.sock"
fixture="$E2E_TMP/fixture.json"
cp "$here/fixtures/node.json" "$fixture"

start_peer() {
    rm -f "$E2E_TMP/ready"
    "$py" "$here/peer.py" "$sock" "$fixture" "$E2E_TMP/ready" >>"$E2E_TMP/peer.log" 2>&1 &
    peer_pid=$!
    E2E_PIDS+=("$peer_pid")
    e2e_wait 30 test -e "$E2E_TMP/ready" || e2e_fail "pod-resources peer did not start"
}
start_peer

port=$(e2e_free_port)
procfs="$E2E_TMP/proc"
mkdir -p "$procfs" "$E2E_TMP/state"
# The scenario's clock is the real one from now: a restarted joulestat finds it running on.
JOULESTAT_SIM_START_TIME=$(date +%s)
export JOULESTAT_SIM_START_TIME
url="http://127.0.0.1:$port/metrics"
start_joulestat() {
    JOULESTAT_SIM_SCENARIO="$src/scenarios/podres-allocation.scn" JOULESTAT_SIM_PROCFS="$procfs" \
        "$build/joulestat" serve --nvml-library "$build/sim/libnvidia-ml.so.1" \
        --listen-address "127.0.0.1:$port" --sample-interval 200ms --process-scan-interval 1s \
        --gpu-idle-policy allocation --gpu-idle-power 50 --pod-resources-socket "$sock" \
        --state-dir "$E2E_TMP/state" --path.procfs "$procfs" --rapl-source off \
        --log-level debug >>"$E2E_TMP/joulestat.log" 2>&1 &
    joulestat_pid=$!
    E2E_PIDS+=("$joulestat_pid")
    e2e_wait 20 curl -sf "$url" || e2e_fail "joulestat did not start serving"
}
start_joulestat
alloc=joulestat_gpu_allocation_energy_joules_total
has_holder() {
    curl -sf "$url" >"$E2E_TMP/probe.prom" &&
        series get "$E2E_TMP/probe.prom" "$alloc" gpu=1 pod=idle-holder >/dev/null
}
e2e_wait 20 has_holder || e2e_fail "no allocation series for idle-holder"

scrape() { # scrape N: into scrape-N.prom, checked for exact conservation
    curl -sf "$url" >"$E2E_TMP/scrape-$1.prom"
    "$py" "$src/tests/e2e/check_conservation.py" "$E2E_TMP/scrape-$1.prom" >"$E2E_TMP/cons.log" ||
        e2e_fail "conservation broken in scrape $1: $(cat "$E2E_TMP/cons.log")"
}
value() { series get "$E2E_TMP/scrape-$1.prom" "${@:2}"; }
gt() { "$py" -c 'import sys; from decimal import Decimal as D; sys.exit(0 if D(sys.argv[1]) > D(sys.argv[2]) else 1)' "$1" "$2"; }

# 1. Allocations while the peer answers.
scrape 1
sleep 2
scrape 2
series monotonic "$E2E_TMP/scrape-1.prom" "$E2E_TMP/scrape-2.prom" joulestat_ ||
    e2e_fail "a counter went down"
h1=$(value 1 "$alloc" gpu=1 pod=idle-holder)
h2=$(value 2 "$alloc" gpu=1 pod=idle-holder)
gt "$h2" "$h1" || e2e_fail "idle-holder (allocated, no process) got no idle energy: $h1 -> $h2"
gt "$(value 2 "$alloc" gpu=1 pod=legacy-mig)" 0 || e2e_fail "legacy MIG holder got nothing"
nb=$(value 2 "$alloc" gpu=0 pod=notebook)
ta=$(value 2 "$alloc" gpu=0 pod=train-a)
gt "$nb" 0 || e2e_fail "notebook (holds GPU 0, runs nothing) got no idle energy"
gt "$ta" "$nb" || e2e_fail "train-a (2 replicas) should get more idle energy than notebook (1)"
grep -q 'serving/infer' "$E2E_TMP/scrape-2.prom" && e2e_fail "new-form MIG id was charged"
grep -qx 'joulestat_source_up{source="pod_resources"} 1' "$E2E_TMP/scrape-2.prom" ||
    e2e_fail "source_up{pod_resources} should be 1 while the peer answers"
promtool check metrics <"$E2E_TMP/scrape-2.prom" >"$E2E_TMP/promtool.log" 2>&1 ||
    e2e_fail "promtool: $(cat "$E2E_TMP/promtool.log")"

# 2. The peer goes away: nothing is lost, the last allocations stay in use.
kill "$peer_pid"
wait "$peer_pid" 2>/dev/null || true
rm -f "$sock"
sleep 3
scrape 3
series monotonic "$E2E_TMP/scrape-2.prom" "$E2E_TMP/scrape-3.prom" joulestat_ ||
    e2e_fail "a counter went down while the peer was away"
grep -qx 'joulestat_source_up{source="pod_resources"} 0' "$E2E_TMP/scrape-3.prom" ||
    e2e_fail "source_up{pod_resources} should be 0 while the peer is away"
gt "$(value 3 "$alloc" gpu=1 pod=idle-holder)" "$h2" ||
    e2e_fail "idle-holder stopped getting energy while the kubelet was away"
grep -q 'pod-resources: cannot connect to .*kubelet.sock.*fix: mount the kubelet' \
    "$E2E_TMP/joulestat.log" || e2e_fail "no log line naming the socket and the fix"

# 3. Back, but answering an error first, then the list again.
cp "$here/fixtures/error.json" "$fixture"
start_peer
e2e_wait 10 grep -q 'grpc-status 14: kubelet is restarting' "$E2E_TMP/joulestat.log" ||
    e2e_fail "grpc-status error not logged"
scrape 4
cp "$here/fixtures/node.json" "$fixture"
e2e_wait 10 grep -q 'pod-resources: .* answers again' "$E2E_TMP/joulestat.log" ||
    e2e_fail "recovery not logged"
sleep 1
scrape 5
for i in 3 4; do
    series monotonic "$E2E_TMP/scrape-$i.prom" "$E2E_TMP/scrape-$((i + 1)).prom" joulestat_ ||
        e2e_fail "a counter went down (scrape $i -> $((i + 1)))"
done

# 4. A restart (--state-dir): the pods' allocation counters go on from where they were, and
#    each GPU's energy is still exactly its processes', allocations' and unattributed parts.
kill -TERM "$joulestat_pid"
wait "$joulestat_pid" || e2e_fail "joulestat did not exit cleanly on SIGTERM"
start_joulestat
sleep 1
scrape 6
for prefix in joulestat_gpu_ joulestat_pod_; do
    series monotonic "$E2E_TMP/scrape-5.prom" "$E2E_TMP/scrape-6.prom" "$prefix" ||
        e2e_fail "a $prefix counter went down across the restart"
done
gt "$(value 6 "$alloc" gpu=1 pod=idle-holder)" "$(value 5 "$alloc" gpu=1 pod=idle-holder)" ||
    e2e_fail "idle-holder got nothing after the restart"

# 5. joulestat check: the grpc error now is fine again; missing socket and error paths.
"$build/joulestat" check --no-gpu --rapl-source off --pod-resources-socket "$sock" \
    >"$E2E_TMP/check-ok.log" 2>&1 || true
grep -q '^podres  ok        List on .*: 6 pod(s), 5 GPU allocation(s), 1 MIG' "$E2E_TMP/check-ok.log" ||
    e2e_fail "check: $(cat "$E2E_TMP/check-ok.log")"
cp "$here/fixtures/error.json" "$fixture"
"$build/joulestat" check --no-gpu --rapl-source off --pod-resources-socket "$sock" \
    >"$E2E_TMP/check-err.log" 2>&1 || true
grep -q '^podres  down      grpc-status 14: kubelet is restarting' "$E2E_TMP/check-err.log" ||
    e2e_fail "check (grpc error): $(cat "$E2E_TMP/check-err.log")"
"$build/joulestat" check --no-gpu --rapl-source off --pod-resources-socket "$E2E_TMP/none.sock" \
    >"$E2E_TMP/check-missing.log" 2>&1 || true
grep -q '^podres  absent' "$E2E_TMP/check-missing.log" ||
    e2e_fail "check (missing): $(cat "$E2E_TMP/check-missing.log")"

echo "podres-e2e: ok (idle-holder $h2 J after 2 scrapes; conservation exact in 6 scrapes, one after a restart)"
