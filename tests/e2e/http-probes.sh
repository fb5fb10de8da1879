#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The shipped DaemonSet's probes (deploy/kubernetes/daemonset.yaml) as the kubelet runs
# them (no credentials, certificates not verified, 200-399 within timeoutSeconds) against
# the exporter with basic auth, and with basic auth and TLS (scheme HTTPS, as
# docs/DEPLOY.md says to set with TLS): they pass. With auth on they used to get 401, and
# the liveness probe restarted the pod forever.
# Usage: http-probes.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
. "$src/tests/e2e/lib.sh"
export JOULESTAT_SIM_SCENARIO=$src/scenarios/two-process-80-20.scn

# "NAME PATH TIMEOUT SCHEME" per probe of the joulestat container.
python3 - "$src/deploy/kubernetes/daemonset.yaml" >"$E2E_TMP/probes" <<'EOP'
import sys, yaml
for doc in yaml.safe_load_all(open(sys.argv[1])):
    if not doc or doc.get("kind") != "DaemonSet":
        continue
    for c in doc["spec"]["template"]["spec"]["containers"]:
        for name in ("readinessProbe", "livenessProbe"):
            p = c.get(name)
            if p:
                g = p["httpGet"]
                print(name, g["path"], p.get("timeoutSeconds", 1), g.get("scheme", "HTTP"))
EOP
[[ $(wc -l <"$E2E_TMP/probes") == 2 ]] || e2e_fail "expected two probes: $(cat "$E2E_TMP/probes")"

hash=$("$build/tests/http-bcrypt-hash" 'probe-secret')
cp "$src/tests/http/tls/server.crt" "$src/tests/http/tls/server.key" "$E2E_TMP/"
printf 'basic_auth_users:\n  prometheus: %s\n' "$hash" >"$E2E_TMP/auth.yml"
printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\nbasic_auth_users:\n  prometheus: %s\n' \
    "$hash" >"$E2E_TMP/tls.yml"

serve() { # serve CONFIG SCHEME: sets $port
    port=$(e2e_free_port)
    "$build/joulestat" serve --nvml-library "$build/sim/libnvidia-ml.so.1" --rapl-source off \
        --listen-address "127.0.0.1:$port" --web.config.file "$1" >>"$E2E_TMP/joulestat.log" 2>&1 &
    E2E_PIDS+=($!)
    e2e_wait 20 curl -sk -o /dev/null "$2://127.0.0.1:$port/" ||
        e2e_fail "exporter did not come up with $1"
}
probe() { # probe SCHEME PATH TIMEOUT: the kubelet's way; prints the status
    local scheme=${1,,}
    curl -sk -o /dev/null --max-time "$3" -w '%{http_code}' "$scheme://127.0.0.1:$port$2" || true
}
run_probes() { # run_probes WHAT [SCHEME]: every probe passes, with the manifest's or this scheme
    local name path timeout scheme code
    while read -r name path timeout scheme; do
        scheme=${2:-$scheme}
        code=$(probe "$scheme" "$path" "$timeout")
        ((code >= 200 && code < 400)) || e2e_fail "$1: $name ($scheme $path) got $code"
        echo "ok: $1: $name ($scheme $path) $code"
    done <"$E2E_TMP/probes"
}

serve "$E2E_TMP/auth.yml" http
run_probes "basic auth"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/metrics" || true)
[[ $code == 401 ]] || e2e_fail "basic auth: /metrics without credentials got $code"

serve "$E2E_TMP/tls.yml" https
run_probes "basic auth and TLS" HTTPS
code=$(probe HTTP /healthz 5)
[[ $code == 000 ]] || e2e_fail "TLS: a plain HTTP probe got $code (scheme HTTPS is needed)"
echo "ok: with TLS the probes need scheme HTTPS, as docs/DEPLOY.md says"
