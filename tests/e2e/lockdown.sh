#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# joulestat serve after start: every thread has no-new-privileges, the seccomp filter and
# at most the capabilities the steady state keeps (CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH with
# a web config), and it goes on serving under the filter through the end of the simulated
# 8-GPU node's scenario (processes starting and ending, the procfs scan, the state file
# written with fsync and rename), with TLS and basic auth on (GnuTLS, bcrypt off the
# serving threads), a password changed and a certificate rotated on SIGHUP (a new TLS
# server), and a clean stop. No system call is refused along the way (lib.sh fails the test
# on any "seccomp: refused" line). --no-seccomp and --keep-capabilities turn both off.
# Usage: lockdown.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
. "$src/tests/e2e/lib.sh"
command -v openssl >/dev/null || { echo "SKIP: openssl not installed"; exit 77; }

hashgen=$build/tests/http-bcrypt-hash
e2e_test_ca "$E2E_TMP"
web=$E2E_TMP/web.yml
log=$E2E_TMP/joulestat.log
procfs=$E2E_TMP/proc
mkdir -p "$procfs" "$E2E_TMP/state"
web_config() { # web_config PASSWORD
    printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n' >"$web.new"
    printf 'basic_auth_users:\n  prom: %s\n' "$("$hashgen" "$1")" >>"$web.new"
    mv "$web.new" "$web"
}
web_config first-secret

# The last 14 s of the 300 s scenario, then past its end (every process gone).
export JOULESTAT_SIM_SCENARIO=$src/scenarios/node-8gpu-64proc.scn
export JOULESTAT_SIM_PROCFS=$procfs
export JOULESTAT_SIM_START_TIME=$(($(date +%s) - 286))
port=$(e2e_free_port)
"$build/joulestat" serve --nvml-library "$build/sim/libnvidia-ml.so.1" --rapl-source off \
    --path.procfs "$procfs" --sample-interval 167ms --process-scan-interval 1s \
    --state-dir "$E2E_TMP/state" --web.config.file "$web" \
    --listen-address "127.0.0.1:$port" >"$log" 2>&1 &
pid=$!
E2E_PIDS+=($pid)
base=https://127.0.0.1:$port
get() { # get PASSWORD PATH: the HTTP code
    curl -s --cacert "$E2E_TMP/ca.crt" -o "$E2E_TMP/body" --max-time 10 -w '%{http_code}' \
        ${1:+-u "prom:$1"} "$base$2" || true
}
e2e_wait 20 curl -sf --cacert "$E2E_TMP/ca.crt" "$base/healthz" || e2e_fail "exporter did not come up"
# A sanitizer build cannot run under the filter and says so; the rest is checked all the same.
filtered=1
if grep -q "system-call filter not installed: this build" "$log"; then
    filtered=0
    echo "note: this build runs without the filter (AddressSanitizer)"
fi
((filtered == 0)) || grep -q "system-call filter installed" "$log" ||
    e2e_fail "no filter: $(grep -i "filter" "$log")"
grep -q "capabilities dropped" "$log" || e2e_fail "capabilities not dropped"

# Every thread: NoNewPrivs 1, Seccomp 2 (filter), CapEff within CAP_SYS_PTRACE (bit 19) and
# CAP_DAC_READ_SEARCH (bit 2); the same for the bounding set where root could drop it.
allowed=$(((1 << 19) | (1 << 2)))
threads=0
for status in /proc/"$pid"/task/*/status; do
    grep -qx $'NoNewPrivs:\t1' "$status" || e2e_fail "$status: no-new-privileges not set"
    ((filtered == 0)) || grep -qx $'Seccomp:\t2' "$status" || e2e_fail "$status: no seccomp filter"
    eff=$((16#$(sed -n 's/^CapEff:\t//p' "$status")))
    ((eff & ~allowed)) && e2e_fail "$status: capabilities $(printf %x "$eff") beyond the steady state"
    if ((EUID == 0)); then
        bnd=$((16#$(sed -n 's/^CapBnd:\t//p' "$status")))
        ((bnd & ~allowed)) && e2e_fail "$status: bounding set $(printf %x "$bnd")"
    fi
    threads=$((threads + 1))
done
echo "ok: $threads threads locked down"

# Scrapes until the scenario is over (with gzip, wrong passwords, /healthz without
# credentials), the password changed and the certificate rotated half-way.
deadline=$((SECONDS + 20))
scrapes=0 rotated=0
while ((SECONDS < deadline)); do
    password=first-secret
    ((rotated)) && password=second-secret
    [[ $(get "$password" /metrics) == 200 ]] || e2e_fail "scrape $scrapes refused"
    python3 "$src/tests/e2e/check_conservation.py" "$E2E_TMP/body" >/dev/null ||
        e2e_fail "conservation broken in scrape $scrapes"
    code=$(curl -s --compressed --cacert "$E2E_TMP/ca.crt" -o /dev/null -w '%{http_code}' \
        -u "prom:$password" "$base/metrics" || true)
    [[ $code == 200 ]] || e2e_fail "gzip scrape: $code"
    [[ $(get wrong-$scrapes /metrics) == 401 ]] || e2e_fail "a wrong password was not refused"
    [[ $(get "" /healthz) == 200 ]] || e2e_fail "/healthz without credentials"
    scrapes=$((scrapes + 1))
    if ((!rotated && SECONDS > deadline - 12)); then
        web_config second-secret
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
            -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout "$E2E_TMP/server.key" \
            -out "$E2E_TMP/server.crt" 2>/dev/null
        cp "$E2E_TMP/server.crt" "$E2E_TMP/ca.crt"
        kill -HUP "$pid"
        e2e_wait 10 grep -q "new TLS settings" "$log" || e2e_fail "no reload: $(tail -2 "$log")"
        [[ $(get first-secret /metrics) == 401 ]] || e2e_fail "the old password still works"
        rotated=1
    fi
    sleep 0.3
done
((rotated)) || e2e_fail "the reload did not happen"
echo "ok: $scrapes scrapes under the filter, through the reload and the scenario's end"

kill -TERM "$pid"
for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null && e2e_fail "did not stop on SIGTERM"
wait "$pid" || e2e_fail "exited with status $? under the filter"
[[ -s $E2E_TMP/state/joulestat.state ]] || e2e_fail "no state file written under the filter"
grep -q "seccomp: refused" "$log" && e2e_fail "refused: $(grep "seccomp: refused" "$log")"
echo "ok: stopped cleanly, state file written"

# Off switches: no filter and every capability kept.
port=$(e2e_free_port)
"$build/joulestat" serve --no-gpu --rapl-source off --no-seccomp --keep-capabilities \
    --listen-address "127.0.0.1:$port" >"$E2E_TMP/off.log" 2>&1 &
pid=$!
E2E_PIDS+=($pid)
e2e_wait 20 curl -sf "http://127.0.0.1:$port/healthz" || e2e_fail "--no-seccomp did not come up"
grep -qx $'Seccomp:\t0' "/proc/$pid/status" || e2e_fail "--no-seccomp still filters"
grep -q "capabilities dropped" "$E2E_TMP/off.log" && e2e_fail "--keep-capabilities dropped them"
echo "PASS: lockdown"
