#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The web configuration is re-read on SIGHUP and when the file changes: a password changed
# in the file works after the signal and the old one no longer does; a file that does not
# load is logged and the running configuration kept; a file changed with no signal is
# picked up within a few seconds (the file is looked at every 3 s). libcrypt is loaded only
# once a file names users: here by a reload, after the system-call filter is installed.
# Usage: http-reload.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
. "$src/tests/e2e/lib.sh"
export JOULESTAT_SIM_SCENARIO=$src/scenarios/two-process-80-20.scn
hashgen=$build/tests/http-bcrypt-hash
web=$E2E_TMP/web.yml
log=$E2E_TMP/joulestat.log
printf 'http_server_config:\n  http2: false\n' >"$web"
port=$(e2e_free_port)
"$build/joulestat" serve --nvml-library "$build/sim/libnvidia-ml.so.1" --rapl-source off \
    --listen-address "127.0.0.1:$port" --web.config.file "$web" >"$log" 2>&1 &
pid=$!
E2E_PIDS+=($pid)
url=http://127.0.0.1:$port/metrics
e2e_wait 20 curl -sf "http://127.0.0.1:$port/healthz" || e2e_fail "exporter did not come up"

code() { curl -s -o /dev/null --max-time 10 -w '%{http_code}' -u "prom:$1" "$url" || true; }
expect() { # expect PASSWORD CODE WHAT
    local got
    got=$(code "$1")
    [[ $got == "$2" ]] || e2e_fail "$3: HTTP $got, expected $2"
    echo "ok: $3 ($got)"
}
# hup PATTERN: sends SIGHUP and waits (bounded) for the log line that answers it.
hup() {
    local before
    before=$(grep -c "SIGHUP" "$log" || true)
    kill -HUP "$pid"
    for _ in $(seq 50); do
        (($(grep -c "SIGHUP" "$log" || true) > before)) && break
        sleep 0.1
    done
    tail -1 "$log" | grep -q "$1" || e2e_fail "no '$1' after SIGHUP: $(tail -1 "$log")"
}

[[ $(curl -s -o /dev/null --max-time 10 -w '%{http_code}' "$url") == 200 ]] ||
    e2e_fail "no users yet, yet /metrics is refused"
grep -q 'libyaml-0\.so' "/proc/$pid/maps" || e2e_fail "a web config read without libyaml mapped"
grep -q 'libcrypt\.so' "/proc/$pid/maps" && e2e_fail "libcrypt mapped with no users configured"
printf 'basic_auth_users:\n  prom: %s\n' "$("$hashgen" first-secret)" >"$web"
hup "reloaded --web.config.file"
grep -q 'libcrypt\.so' "/proc/$pid/maps" || e2e_fail "users configured, yet libcrypt is not mapped"
expect first-secret 200 "the first password"
expect second-secret 401 "the second password before the change"
printf 'basic_auth_users:\n  prom: %s\n' "$("$hashgen" second-secret)" >"$web"
hup "reloaded --web.config.file"
expect second-secret 200 "the second password after SIGHUP"
expect first-secret 401 "the first password after SIGHUP"

# A broken file: logged, and the configuration in use stays.
printf 'basic_auth_users:\n  prom: not-a-hash\n' >"$web"
hup "keeping the previous configuration"
grep -q "web.yml:2: basic_auth_users.prom: not a bcrypt hash" "$log" ||
    e2e_fail "the bad file's error does not name file, line and key"
expect second-secret 200 "the second password after a bad file"
expect first-secret 401 "the first password after a bad file"
# A connection that asks nothing is closed at its header deadline: counted, and the count
# goes on across the new server below (a counter of the same process never goes down).
closed() { # closed CURL_FLAGS...: header_deadline closures in a scrape
    curl -s --max-time 10 -u prom:second-secret "$@" |
        awk '/^joulestat_http_connections_closed_total\{reason="header_deadline"\}/ { print $2 }'
}
exec 3<>"/dev/tcp/127.0.0.1/$port"
sleep 5.5
exec 3<&-
closed_before=$(closed "$url")
((closed_before >= 1)) || e2e_fail "the silent connection was not counted: '$closed_before'"
# TLS switched on: a new server on the same socket, HTTPS from the next connection on.
cp "$src/tests/http/tls/server.crt" "$src/tests/http/tls/server.key" "$E2E_TMP/"
printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\nbasic_auth_users:\n  prom: %s\n' \
    "$("$hashgen" second-secret)" >"$web"
hup "reloaded --web.config.file"
grep -q "new TLS settings from --web.config.file" "$log" || e2e_fail "no new server for TLS"
url=https://127.0.0.1:$port/metrics
code() { curl -sk -o /dev/null --max-time 10 -w '%{http_code}' -u "prom:$1" "$url" || true; }
expect second-secret 200 "the second password over TLS after SIGHUP"
closed_after=$(closed -k "$url")
((closed_after >= closed_before)) ||
    e2e_fail "connections closed went down across the new server: $closed_before -> '$closed_after'"
echo "ok: the HTTP counters go on across the new server ($closed_before -> $closed_after)"
plain=$(curl -s -o /dev/null --max-time 5 -w '%{http_code}' "http://127.0.0.1:$port/healthz" || true)
[[ $plain == 000 ]] || e2e_fail "plain HTTP still answered ($plain) after TLS was switched on"

# A rotated certificate (same file names, SIGHUP): new connections get it.
subject() {
    timeout 10 openssl s_client -connect "127.0.0.1:$port" </dev/null 2>/dev/null |
        openssl x509 -noout -subject 2>/dev/null || true
}
[[ $(subject) == *CN*=*localhost* ]] || e2e_fail "served certificate: $(subject)"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=rotated \
    -keyout "$E2E_TMP/server.key" -out "$E2E_TMP/server.crt" 2>/dev/null
hup "reloaded --web.config.file"
[[ $(subject) == *CN*=*rotated* ]] || e2e_fail "after rotation the certificate is $(subject)"
echo "ok: a rotated certificate is served after SIGHUP"
expect second-secret 200 "the second password after the rotation"

# No signal: a changed file is seen by itself.
reloads=$(grep -c "file changed: reloaded" "$log" || true)
printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\nbasic_auth_users:\n  prom: %s\n' \
    "$("$hashgen" third-secret)" >"$web"
for _ in $(seq 100); do
    (($(grep -c "file changed: reloaded" "$log" || true) > reloads)) && break
    sleep 0.1
done
(($(grep -c "file changed: reloaded" "$log" || true) > reloads)) ||
    e2e_fail "a changed file was not reloaded by itself"
expect third-secret 200 "the third password, written with no signal"
expect second-secret 401 "the second password after the file changed"
kill -0 "$pid" || e2e_fail "the exporter died"
echo "ok: SIGHUP and file changes reload the web configuration, TLS included; bad files keep the old one"
