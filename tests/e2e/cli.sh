#!/usr/bin/env bash
# The command line: my-gpu-exporter's flags are accepted (also Go-style single-dash),
# bad flags and values are rejected with usage and exit 2, an unusable listen address is
# a clear error with exit 1, SIGTERM stops cleanly, --metric-prefix=my_gpu_process gives
# my-gpu-exporter's names, serve --trace writes the windows, a reused pid is a new series, and retention keeps exited
# processes with _active 0 and then drops them.
# Usage: cli.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
. "$src/tests/e2e/lib.sh"
js=$build/joulestat
sim=$build/sim/libnvidia-ml.so.1

expect_exit() {
    local want=$1
    shift
    local got=0
    "$@" >"$E2E_TMP/out" 2>"$E2E_TMP/err" || got=$?
    [[ $got == "$want" ]] || e2e_fail "'$*' exited $got, expected $want: $(cat "$E2E_TMP/err")"
}

# my-gpu-exporter's flags, in both spellings.
expect_exit 0 "$js" version --dcgm-update-frequency=2s --process-scan-interval=10s \
    --kubernetes-enabled=false --pod-resources-socket=/run/x.sock --metric-retention=5m \
    --metric-prefix=my_gpu_process --listen-address=:9400 --metrics-path=/metrics \
    --log-level=debug --gpu-idle-power=60 --enable-energy-estimation=true
expect_exit 0 "$js" version -dcgm-update-frequency=2s -listen-address=:9400 -log-level=warn
grep -q "joulestat" "$E2E_TMP/out" || e2e_fail "version printed nothing"

# Rejections: unknown flag, bad values, unknown command; all with exit 2 and a reason.
expect_exit 2 "$js" serve --no-such-flag
grep -q "unknown or incomplete option" "$E2E_TMP/err" || e2e_fail "no reason for an unknown flag"
expect_exit 2 "$js" serve --sample-interval=fast
grep -q "invalid value 'fast' for --sample-interval" "$E2E_TMP/err" || e2e_fail "bad duration message"
expect_exit 2 "$js" serve --gpu-idle-policy=sometimes
expect_exit 2 "$js" serve --metric-prefix=9bad
expect_exit 2 "$js" serve --metric-prefix=joulestat_gpu
grep -q "joulestat_ names are the exporter's own" "$E2E_TMP/err" || e2e_fail "no reason for joulestat_gpu"
expect_exit 0 "$js" version --metric-prefix=joulestat_gpu_process
expect_exit 2 "$js" serve --metrics-path=metrics
# Paths the server could not serve are refused with the options, before any source starts.
for path in / /healthz '/m?x' '/a#b' '/<b>' '/a%20b'; do
    expect_exit 2 "$js" serve --metrics-path="$path"
    grep -q "must name a path other than" "$E2E_TMP/err" || e2e_fail "no reason for '$path'"
done
expect_exit 2 "$js" frobnicate
expect_exit 2 "$js" replay
# A scan interval over a RAPL counter's range (60 s) is refused while RAPL is read.
expect_exit 2 "$js" serve --process-scan-interval 5m
grep -q "may wrap more than once" "$E2E_TMP/err" || e2e_fail "no reason for a 5m scan interval"
# A scan comes at a tick: a long tick is a long scan interval too.
expect_exit 2 "$js" serve --sample-interval 2m
grep -q "may wrap more than once" "$E2E_TMP/err" || e2e_fail "no reason for a 2m sample interval"
expect_exit 2 "$js" serve --rapl-source off --sample-interval 2h
grep -q "must be at most 1h" "$E2E_TMP/err" || e2e_fail "no reason for a 2h interval"
# Below a millisecond an interval is a mistake (a replay would never move on).
expect_exit 2 "$js" replay --scenario "$src/scenarios/two-process-80-20.scn" --sample-interval 500ns
grep -q "must be at least 1ms" "$E2E_TMP/err" || e2e_fail "no reason for a sub-millisecond interval"
# Whatever is left after "--" is refused, except by run: nothing is dropped silently.
expect_exit 2 "$js" -- ps
grep -q "unexpected argument 'ps'" "$E2E_TMP/err" || e2e_fail "no reason for '-- ps'"
expect_exit 2 "$js" ps -- --all
expect_exit 0 "$js" --help
grep -q -- "--dcgm-update-frequency" "$E2E_TMP/out" || e2e_fail "usage does not list the flags"

# An unusable listen address is an error, not a hang.
expect_exit 1 timeout 10 "$js" serve --no-gpu --rapl-source off --listen-address 256.0.0.1:9400
grep -q "cannot listen on '256.0.0.1:9400'" "$E2E_TMP/err" || e2e_fail "no clear listen error: $(cat "$E2E_TMP/err")"

# my_gpu_process names, served live from the simulated node; SIGTERM stops with 0.
port=$(e2e_free_port)
mkdir -p "$E2E_TMP/proc"
JOULESTAT_SIM_SCENARIO="$src/scenarios/two-process-80-20.scn" JOULESTAT_SIM_PROCFS="$E2E_TMP/proc" \
    "$js" serve --nvml-library "$sim" --path.procfs "$E2E_TMP/proc" \
    --metric-prefix my_gpu_process --listen-address "127.0.0.1:$port" --rapl-source off \
    --sample-interval 200ms --trace "$E2E_TMP/serve.trace" >"$E2E_TMP/serve.log" 2>&1 &
pid=$!
E2E_PIDS+=($pid)
e2e_wait 20 curl -sf "http://127.0.0.1:$port/metrics" || e2e_fail "serve did not come up"
sleep 1
curl -sf "http://127.0.0.1:$port/metrics" >"$E2E_TMP/compat.prom"
for name in my_gpu_process_energy_joules my_gpu_process_sm_utilization_ratio \
    my_gpu_process_memory_utilization_ratio my_gpu_process_memory_used_bytes \
    my_gpu_process_start_time_seconds my_gpu_process_active; do
    grep -q "^$name{" "$E2E_TMP/compat.prom" || e2e_fail "no $name series in compat mode"
done
python3 "$src/tests/e2e/check_conservation.py" "$E2E_TMP/compat.prom" my_gpu_process >/dev/null ||
    e2e_fail "compat exposition does not conserve energy"
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
[[ $status == 0 ]] || e2e_fail "SIGTERM exit status $status"
grep -q "stopping" "$E2E_TMP/serve.log" || e2e_fail "no stop message"
# --trace on a live node: every window the split saw, whole lines, both processes in them,
# and at least the GPU energy the scrape showed (windows went on after it).
python3 - "$E2E_TMP/serve.trace" "$E2E_TMP/compat.prom" <<'EOP' || e2e_fail "serve --trace: $(head -3 "$E2E_TMP/serve.trace")"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
windows = [l.split() for l in lines]
assert len(windows) >= 5 and all(w[0] == "W" and w[1] == "0" for w in windows), lines[:3]
active = {p.split(":")[0] for w in windows for p in w[6:] if int(p.split(":")[2]) > 0}
assert active == {"2001", "2002"}, active
scraped = float(re.search(r'^joulestat_gpu_energy_joules_total\{[^}]*\} (\S+)$',
                          open(sys.argv[2]).read(), re.M).group(1))
traced = sum(int(w[4]) for w in windows) / 1e6
assert traced >= scraped - 1e-6, (traced, scraped)
EOP
# Not a Kubernetes node (no API, no kubelet socket at the default path, no flag): one info
# line each, no pod-resources warnings and no pod_resources source series.
if [[ ! -e /var/lib/kubelet/pod-resources/kubelet.sock ]]; then
    grep -q "pod-resources: no kubelet socket at /var/lib/kubelet" "$E2E_TMP/serve.log" ||
        e2e_fail "no info line about the absent kubelet socket"
    grep -q "pod-resources: cannot connect" "$E2E_TMP/serve.log" &&
        e2e_fail "pod-resources warns on a node without a kubelet"
    grep -q 'source="pod_resources"' "$E2E_TMP/compat.prom" &&
        e2e_fail "pod_resources source exported on a node without a kubelet"
fi

# --trace to a path that cannot be written: a clear error and exit 1, from replay and serve.
expect_exit 1 "$js" replay --scenario "$src/scenarios/two-process-80-20.scn" \
    --trace "$E2E_TMP/no/such/dir/trace.txt"
grep -q "^.*error: --trace: cannot write '$E2E_TMP/no/such/dir/trace.txt'" "$E2E_TMP/err" ||
    e2e_fail "replay --trace: no clear error: $(cat "$E2E_TMP/err")"
JOULESTAT_SIM_SCENARIO="$src/scenarios/two-process-80-20.scn" \
    expect_exit 1 timeout 20 "$js" serve --nvml-library "$sim" --rapl-source off \
    --listen-address "127.0.0.1:$(e2e_free_port)" --trace "$E2E_TMP/no/such/dir/trace.txt"
grep -q "error: --trace: cannot write" "$E2E_TMP/err" ||
    e2e_fail "serve --trace: no clear error: $(cat "$E2E_TMP/err")"

# Retention and pid reuse (virtual clock): pid 4242 ran twice, 5 s apart.
"$js" replay --scenario "$src/scenarios/pid-reuse.scn" >"$E2E_TMP/keep.prom" 2>/dev/null
n=$(grep -c '^joulestat_gpu_process_active{pid="4242"' "$E2E_TMP/keep.prom")
[[ $n == 2 ]] || e2e_fail "pid 4242 reused: expected 2 series, got $n"
grep -q '^joulestat_gpu_process_active{pid="4242",gpu="0",process_name="trainer".* 0$' "$E2E_TMP/keep.prom" ||
    e2e_fail "the exited trainer is not kept with _active 0"
"$js" replay --scenario "$src/scenarios/pid-reuse.scn" --metric-retention 10s >"$E2E_TMP/drop.prom" 2>/dev/null
! grep -q 'process_name="trainer"' "$E2E_TMP/drop.prom" ||
    e2e_fail "the trainer exited 40 s before the end but is still exported with 10 s retention"
grep -q '^joulestat_gpu_process_active{pid="4242",gpu="0",process_name="notebook".* 1$' "$E2E_TMP/drop.prom" ||
    e2e_fail "the live notebook process is missing"

# check: says what works and what does not, with the fix; exit 1 when no energy source works.
expect_exit 1 "$js" check --nvml-library /nonexistent/libnvidia-ml.so.1 --rapl-source off \
    --pod-resources-socket "$E2E_TMP/none.sock"
grep -q "^gpu     absent" "$E2E_TMP/out" || e2e_fail "check does not report the missing NVML"
grep -q "fix: install the NVIDIA driver" "$E2E_TMP/out" || e2e_fail "check names no fix for NVML"
grep -q "^kubelet absent .*No such file" "$E2E_TMP/out" || e2e_fail "check does not explain the kubelet socket"
JOULESTAT_SIM_SCENARIO="$src/scenarios/dcgm-three-pods.scn" \
    expect_exit 0 "$js" check --nvml-library "$sim" --rapl-source off
grep -q "^gpu     ok" "$E2E_TMP/out" || e2e_fail "check does not see the simulated GPU"

# The kubelet's pod-resources socket is asked while no GPU answers (NVML missing): its
# failure is said and counted on its own source; with --no-gpu it is not asked at all.
kubelet_serve() { # kubelet_serve NAME ARGS...: serves 2.5 s, scrapes into $E2E_TMP/NAME.prom
    local name=$1 port p
    shift
    port=$(e2e_free_port)
    "$js" serve --rapl-source off --kubernetes-enabled=true --process-scan-interval 1s \
        --pod-resources-socket "$E2E_TMP/none.sock" --listen-address "127.0.0.1:$port" "$@" \
        >"$E2E_TMP/$name.log" 2>&1 &
    p=$!
    E2E_PIDS+=($p)
    e2e_wait 20 curl -sf "http://127.0.0.1:$port/metrics" || e2e_fail "$name: serve did not come up"
    sleep 2.5
    curl -sf "http://127.0.0.1:$port/metrics" >"$E2E_TMP/$name.prom"
    kill -TERM "$p"
    wait "$p" || true
}
kubelet_serve no-nvml --nvml-library /nonexistent/libnvidia-ml.so.1
grep -Eq '^joulestat_source_errors_total\{source="pod_resources"\} [1-9]' "$E2E_TMP/no-nvml.prom" ||
    e2e_fail "pod-resources failures not counted without a GPU: $(grep pod_resources "$E2E_TMP/no-nvml.prom")"
grep -q "pod-resources: .*fix:" "$E2E_TMP/no-nvml.log" || e2e_fail "no pod-resources warning: $(cat "$E2E_TMP/no-nvml.log")"
kubelet_serve no-gpu --no-gpu
! grep -q 'source="pod_resources"' "$E2E_TMP/no-gpu.prom" ||
    e2e_fail "--no-gpu still asks the kubelet: $(grep pod_resources "$E2E_TMP/no-gpu.prom")"

# ps --json: one 3 s window of the simulated node (the pods start at 0, 1 and 2 s): valid
# JSON with the three processes.
mkdir -p "$E2E_TMP/psproc"
# (given the daemon's --state-dir, as `joulestat ps $JOULESTAT_ARGS` does: the daemon's
# counters are its own, neither read nor written)
mkdir "$E2E_TMP/daemon-state"
JOULESTAT_SIM_SCENARIO="$src/scenarios/dcgm-three-pods.scn" JOULESTAT_SIM_PROCFS="$E2E_TMP/psproc" \
    expect_exit 0 "$js" ps --json --nvml-library "$sim" --path.procfs "$E2E_TMP/psproc" \
    --rapl-source off --sample-interval 3s --state-dir "$E2E_TMP/daemon-state"
[[ -z $(ls -A "$E2E_TMP/daemon-state") ]] || e2e_fail "ps wrote the daemon's state"
python3 - "$E2E_TMP/out" <<'EOP' || e2e_fail "ps --json: $(cat "$E2E_TMP/out")"
import json, sys
rows = json.load(open(sys.argv[1]))
names = sorted(r["name"] for r in rows)
assert names == ["heavy", "light", "medium"], names
assert all(r["pod_uid"] and r["gpus"] == [0] for r in rows), rows
# heavy and medium were on the GPU the whole window; light may start at its edge
assert all(r["gpu_energy_measured_joules"] + r["gpu_energy_estimated_joules"] > 0
           for r in rows if r["name"] != "light"), rows
EOP

echo "cli: ok"
