#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# libcurl and libjansson are loaded only when the Kubernetes API is configured
# (src/kube/curl_loader.c, jansson_loader.c); libyaml and libcrypt only with a web
# configuration (src/http/yaml_loader.c, crypt_loader.c):
#   - the binary links none of them (ldd);
#   - `serve` with --kubernetes-enabled=false, and with default flags and no in-cluster
#     environment, maps none of them (nor libssl/libcrypto, unless ldd shows the binary links
#     them by another route) in /proc/PID/maps;
#   - `serve` pointed at a fake HTTPS API server maps libcurl and libjansson once connected;
#   - with the library missing (JOULESTAT_CURL_LIBRARY, the tests-only override) the source
#     is down with one install-hint line, `check` says the same, and GPU energy still counts.
# Usage: curl-maps.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
. "$src/tests/e2e/lib.sh"

for tool in openssl curl python3 ldd; do
    command -v "$tool" >/dev/null || e2e_fail "$tool not installed"
done
d=$E2E_TMP
kube=$src/tests/kube
js=$build/joulestat
hint="libcurl.so.4 not found: install libcurl4 (Debian) to get pod names from the Kubernetes API"

ldd "$js" >"$d/ldd.txt"
lazy='libcurl\.so|libjansson\.so|libyaml-0\.so|libcrypt\.so'
grep -qE "$lazy" "$d/ldd.txt" && e2e_fail "joulestat links: $(grep -E "$lazy" "$d/ldd.txt")"
# The TLS libraries libcurl pulls in; assert their absence only when nothing else links them.
absent=$lazy
grep -qE 'libssl\.so|libcrypto\.so' "$d/ldd.txt" || absent="$lazy|libssl\.so|libcrypto\.so"

pid=
start() { # log-name port args...
    local name=$1 port=$2
    shift 2
    "$@" --listen-address "127.0.0.1:$port" >"$d/$name.log" 2>&1 &
    pid=$!
    E2E_PIDS+=("$pid")
    e2e_wait 20 curl -sf "http://127.0.0.1:$port/metrics" || e2e_fail "$name did not start serving"
}
stop() { kill "$pid" && wait "$pid" 2>/dev/null || true; }

# Without Kubernetes: serve, scrape a few times, then look at what is mapped.
for mode in disabled default; do
    port=$(e2e_free_port)
    if [[ $mode == disabled ]]; then
        start "$mode" "$port" "$js" serve --no-gpu --rapl-source off --kubernetes-enabled=false
    else
        start "$mode" "$port" env -u KUBERNETES_SERVICE_HOST -u KUBERNETES_SERVICE_PORT \
            "$js" serve --no-gpu --rapl-source off
    fi
    for _ in 1 2 3; do curl -sf "http://127.0.0.1:$port/metrics" >/dev/null; sleep 0.3; done
    grep -qE "$absent" "/proc/$pid/maps" &&
        e2e_fail "$mode: mapped without Kubernetes: $(grep -oE "[^ ]*($absent)[^ ]*" "/proc/$pid/maps" | sort -u)"
    grep -q 'libmicrohttpd' "/proc/$pid/maps" || e2e_fail "$mode: maps not as expected (no libmicrohttpd)"
    stop
done

# With the API: a fake HTTPS API server, trusted through a throwaway CA.
e2e_test_ca "$d"
echo "token-$RANDOM$RANDOM" >"$d/token"
: >"$d/control"
api_port=$(e2e_free_port)
python3 "$kube/fake_apiserver.py" --port "$api_port" --cert "$d/server.crt" --key "$d/server.key" \
    --token-file "$d/token" --control "$d/control" --state "$d/state.json" \
    --log "$d/api-requests.log" --node node-a --pods "$kube/podlist.json" --rv-start 100 \
    >"$d/apiserver.log" 2>&1 &
E2E_PIDS+=($!)
e2e_wait 15 curl -sf --cacert "$d/ca.crt" -H "Authorization: Bearer $(cat "$d/token")" \
    "https://127.0.0.1:$api_port/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-a" ||
    e2e_fail "the fake API server did not start"
kube_flags=(--kubernetes-api-url "https://127.0.0.1:$api_port" --kubernetes-token-file "$d/token"
    --kubernetes-ca-file "$d/ca.crt" --node-name node-a)
up() { curl -sf "$1" | grep -x "joulestat_source_up{source=\"kubernetes_api\"} $2" >/dev/null; }

port=$(e2e_free_port)
start api "$port" "$js" serve --no-gpu --rapl-source off "${kube_flags[@]}"
e2e_wait 20 up "http://127.0.0.1:$port/metrics" 1 || e2e_fail "never connected to the API server"
grep -q 'libcurl\.so\.4' "/proc/$pid/maps" || e2e_fail "connected, yet libcurl is not mapped"
grep -q 'libjansson\.so\.4' "/proc/$pid/maps" || e2e_fail "connected, yet libjansson is not mapped"
# libcurl's own TLS library comes with it.
tls=$(ldd "$(grep -o '/[^ ]*libcurl\.so\.4[^ ]*' "/proc/$pid/maps" | head -1)" |
    grep -oE 'libssl\.so[^ ]*|libgnutls\.so[^ ]*' | head -1)
[[ -n $tls ]] && { grep -q "$tls" "/proc/$pid/maps" || e2e_fail "libcurl without its $tls"; }
stop

# libcurl missing: one line, source down, energy from the simulated GPU node unaffected.
port=$(e2e_free_port)
mkdir -p "$d/proc-sim"
start missing "$port" env JOULESTAT_CURL_LIBRARY=/nonexistent/libcurl.so.4 \
    JOULESTAT_SIM_SCENARIO="$kube/kube-e2e.scn" JOULESTAT_SIM_PROCFS="$d/proc-sim" \
    "$js" serve --nvml-library "$build/sim/libnvidia-ml.so.1" --path.procfs "$d/proc-sim" \
    --sample-interval 200ms --process-scan-interval 500ms --rapl-source off "${kube_flags[@]}"
url="http://127.0.0.1:$port/metrics"
positive='^joulestat_gpu_process_energy_joules_total\{[^}]*pid="4101"[^}]*\} [0-9.]*[1-9]'
e2e_wait 20 bash -c "curl -sf '$url' | grep -Eq '$positive'" ||
    e2e_fail "no GPU energy for pid 4101 without libcurl"
sleep 2 # several watcher periods: a retrying watcher would log and count again
up "$url" 0 || e2e_fail "the Kubernetes source should be down without libcurl"
curl -sf "$url" | grep -x 'joulestat_source_errors_total{source="kubernetes_api"} 1' >/dev/null ||
    e2e_fail "expected exactly one error: $(curl -sf "$url" | grep 'errors_total{source="kube')"
n=$(grep -cF "$hint" "$d/missing.log" || true)
[[ $n == 1 ]] || e2e_fail "expected the install hint once in the log, found it $n times"
grep -q 'libcurl\.so' "/proc/$pid/maps" && e2e_fail "libcurl mapped although it is missing"
stop
out=$(JOULESTAT_CURL_LIBRARY=/nonexistent/libcurl.so.4 "$js" check --no-gpu --rapl-source off \
    "${kube_flags[@]}" 2>&1 || true)
grep -qxF "kubeapi down      $hint" <<<"$out" || e2e_fail "check without libcurl: $out"
echo "PASS: libcurl and libjansson are mapped only when the Kubernetes API is configured, libyaml and libcrypt never without a web configuration"
