#!/usr/bin/env bash
# my-gpu-exporter's users, unchanged: joulestat serves the simulated three-pod node with
# --metric-prefix=my_gpu_process and pod names from a fake Kubernetes API server; a real
# Prometheus scrapes it with honor_labels, and each query of my-gpu-exporter's README (and
# of its dashboard, on the names it serves: _total, exported_pod) is run through
# Prometheus' HTTP API and compared with the scenario's truth: each process's
# mean active power, from `joulestat replay` of the same scenario (idle kept at device
# level in both).
set -euo pipefail
build=$1 src=$2
. "$src/tests/e2e/lib.sh"

for tool in prometheus openssl curl python3; do
    command -v "$tool" >/dev/null || e2e_fail "$tool not installed (scripts/install-deps installs it)"
done
d=$E2E_TMP
mkdir -p "$d/proc"

# The fake API server, over HTTPS with a CA only this test trusts.
e2e_test_ca "$d"
echo "token-$RANDOM$RANDOM" >"$d/token"
: >"$d/control"
python3 "$src/scripts/scenario-pods" "$src/scenarios/dcgm-three-pods.scn" >"$d/pods.json"
api_port=$(e2e_free_port)
python3 "$src/tests/kube/fake_apiserver.py" --port "$api_port" --cert "$d/server.crt" \
    --key "$d/server.key" --token-file "$d/token" --control "$d/control" \
    --state "$d/state.json" --log "$d/api-requests.log" --node node-a --pods "$d/pods.json" \
    >"$d/apiserver.log" 2>&1 &
E2E_PIDS+=($!)

port=$(e2e_free_port)
JOULESTAT_SIM_SCENARIO="$src/scenarios/dcgm-three-pods.scn" JOULESTAT_SIM_PROCFS="$d/proc" \
    "$build/joulestat" serve --nvml-library "$build/sim/libnvidia-ml.so.1" \
    --listen-address "127.0.0.1:$port" --metric-prefix my_gpu_process \
    --gpu-idle-policy unattributed --process-scan-interval 1s --path.procfs "$d/proc" \
    --rapl-source off --kubernetes-api-url "https://127.0.0.1:$api_port" \
    --kubernetes-token-file "$d/token" --kubernetes-ca-file "$d/ca.crt" --node-name node-a \
    >"$d/joulestat.log" 2>&1 &
E2E_PIDS+=($!)
e2e_wait 20 curl -sf "http://127.0.0.1:$port/metrics" || e2e_fail "joulestat did not start"

# As the shipped scrape configs do: honor_labels keeps the workload's pod and namespace.
prom_port=$(e2e_free_port)
cat >"$d/prometheus.yml" <<EOC
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: joulestat
    honor_labels: true
    static_configs:
      - targets: ['127.0.0.1:$port']
        labels: {namespace: monitoring, pod: joulestat-x7k2p}
EOC
prometheus --config.file="$d/prometheus.yml" --storage.tsdb.path="$d/tsdb" \
    --web.listen-address="127.0.0.1:$prom_port" >"$d/prometheus.log" 2>&1 &
E2E_PIDS+=($!)
api="http://127.0.0.1:$prom_port/api/v1"
query() { curl -sf --get "$api/query" --data-urlencode "query=$1"; }
named() { query 'my_gpu_process_energy_joules{pod="training-job-123"}' | grep training-job-123 >/dev/null; }
e2e_wait 40 named || e2e_fail "no named series in Prometheus: $(tail -3 "$d/joulestat.log")"
# rate(...[1m]) needs a minute of samples behind it.
sleep 65

# The truth: each process's active energy over its life in the replay, as mean power.
"$build/joulestat" replay --scenario "$src/scenarios/dcgm-three-pods.scn" \
    --gpu-idle-policy unattributed >"$d/replay.out" 2>/dev/null || e2e_fail "replay failed"

# The README's queries verbatim (their 5m and 1h windows reach back before the data, so
# those answer for the shape), then the numbers on windows the data covers.
for q in 'rate(my_gpu_process_energy_joules[1m])' \
    'sum by (namespace) (rate(my_gpu_process_energy_joules[1m]))' \
    'increase(my_gpu_process_energy_joules{pod="training-job-123"}[1h])' \
    'topk(10, sum by (pod) (rate(my_gpu_process_energy_joules[5m])))' \
    'sum(my_gpu_process_active)' \
    'sum by (pod) (rate(my_gpu_process_energy_joules[5m])) / sum by (pod) (my_gpu_process_sm_utilization_ratio)' \
    'my_gpu_process_start_time_seconds' 'my_gpu_process_memory_used_bytes' \
    'sum by (namespace) (rate(my_gpu_process_energy_joules[5m]))' \
    'rate(my_gpu_process_energy_joules_total[1m]) and on(pid, instance) (my_gpu_process_active == 1)' \
    'sum by (exported_pod) (rate(my_gpu_process_energy_joules_total[1m]))'; do
    query "$q" >>"$d/answers.jsonl" || e2e_fail "query failed: $q"
    echo >>"$d/answers.jsonl"
done
split_counters() { curl -s "http://127.0.0.1:$port/metrics" | grep '^joulestat_gpu_split_windows'; }
failed() { e2e_fail "README queries: $(cat "$d/answers.jsonl"); split: $(split_counters)"; }
python3 - "$d/answers.jsonl" "$d/replay.out" <<'EOP' || failed
import json, re, sys
ans = [json.loads(l)["data"]["result"] for l in open(sys.argv[1]) if l.strip()]
rate, by_ns, incr, top, active, ratio, start, mem, by_ns_5m, dash, by_exported = ans
assert {r["metric"]["namespace"] for r in by_ns_5m} == {"ml-workloads", "serving", "research"}
pods = {"heavy": "training-job-123", "medium": "inference-api-7f9c", "light": "notebook-alice"}
truth = {}
for line in open(sys.argv[2]):
    m = re.match(r'# gpu=0 pid=\d+ comm=(\w+) truth_active_j=([0-9.]+) .* start_us=(\d+)\b', line)
    if m:  # the scenario runs 120 s from 1700000000 s; the load is periodic
        truth[pods[m[1]]] = float(m[2]) / (120 - (int(m[3]) / 1e6 - 1700000000))
truth = dict(sorted(truth.items(), key=lambda kv: -kv[1]))
ns = {"training-job-123": "ml-workloads", "inference-api-7f9c": "serving",
      "notebook-alice": "research"}

off = []

def near(got, want, what):
    print(f"{what}: {got:.2f} W (truth {want:.2f} W)")
    if abs(got - want) > 0.05 * want:
        off.append(f"{what}: {got:.2f} W, truth {want:.2f} W")

# 1. rate() per process: both energy_estimated series, summed per pod.
per_pod = {}
for r in rate:
    per_pod[r["metric"]["pod"]] = per_pod.get(r["metric"]["pod"], 0) + float(r["value"][1])
    assert r["metric"]["namespace"] == ns[r["metric"]["pod"]], r["metric"]
for pod, w in truth.items():
    near(per_pod[pod], w, f"rate {pod}")
# 2. by namespace: the workloads' namespaces, not the exporter's.
got = {r["metric"]["namespace"]: float(r["value"][1]) for r in by_ns}
assert "monitoring" not in got, got
for pod, w in truth.items():
    near(got[ns[pod]], w, f"namespace {ns[pod]}")
# 2b. The exporter's own names, as its dashboard queries them: _total, exported_pod.
per_pod = {}
for r in dash:
    per_pod[r["metric"]["pod"]] = per_pod.get(r["metric"]["pod"], 0) + float(r["value"][1])
got = {r["metric"]["exported_pod"]: float(r["value"][1]) for r in by_exported}
for pod, w in truth.items():
    near(per_pod[pod], w, f"dashboard rate {pod}")
    near(got[pod], w, f"exported_pod {pod}")
# Every figure printed before failing: which pods moved says what went wrong.
assert not off, "; ".join(off)
# 3. increase() of one pod: its power over the seconds Prometheus saw (at least 30).
assert incr and all(r["metric"]["pod"] == "training-job-123" for r in incr), incr
assert sum(float(r["value"][1]) for r in incr) > truth["training-job-123"] * 30, incr
# 4. topk: heavy first.
order = sorted(top, key=lambda r: -float(r["value"][1]))
assert [r["metric"]["pod"] for r in order] == list(truth), order
# 5. three processes active.
assert float(active[0]["value"][1]) == 3, active
# 6. watts per unit of SM time: finite and positive for the pods computing now.
eff = {r["metric"]["pod"]: float(r["value"][1]) for r in ratio}
assert 0 < eff["training-job-123"] < 1000, eff
assert len(start) == 3 and len(mem) == 3, (start, mem)
print("compat queries: ok")
EOP
echo "compat-queries: ok"
