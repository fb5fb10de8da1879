#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# End to end: joulestat serve on the simulated GPU node gets pod, namespace and container
# names from a fake Kubernetes API server over HTTPS (tests/kube/fake_apiserver.py).
#   - processes get their names; a pod deleted and recreated under the same name (new UID)
#     is a new series, the old one keeps its names, even behind a watch event no one can
#     read (the watcher lists again);
#   - the API server goes away and comes back: no energy is lost (every scrape conserves
#     exactly, no counter goes down), a pod that started meanwhile gets its names after
#     the re-list (the restarted server answers the old resourceVersion with 410);
#   - a second joulestat with a wrong token: one clear log line (repeated only at the rate
#     limit's doubling intervals), names empty, energy intact.
# Usage: kube-e2e.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
. "$src/tests/e2e/lib.sh"

for tool in openssl curl python3; do
    command -v "$tool" >/dev/null || e2e_fail "$tool not installed"
done
d=$E2E_TMP
kube=$src/tests/kube
check() { python3 "$kube/kube_e2e_check.py" "$@"; }
metric=joulestat_gpu_process_energy_joules_total

# A CA and a server certificate for 127.0.0.1 that only this test trusts.
e2e_test_ca "$d"
echo "good-token-$RANDOM$RANDOM" >"$d/token"
echo "not-the-token" >"$d/bad-token"
: >"$d/control"

api_port=$(e2e_free_port)
api_pid=
start_api() {
    python3 "$kube/fake_apiserver.py" --port "$api_port" --cert "$d/server.crt" \
        --key "$d/server.key" --token-file "$d/token" --control "$d/control" \
        --state "$d/state.json" --log "$d/api-requests.log" --node node-a "$@" \
        >>"$d/apiserver.log" 2>&1 &
    api_pid=$!
    E2E_PIDS+=("$api_pid")
    e2e_wait 15 curl -sf --cacert "$d/ca.crt" -H "Authorization: Bearer $(cat "$d/token")" \
        "https://127.0.0.1:$api_port/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-a" ||
        e2e_fail "the fake API server did not start"
}
start_api --pods "$kube/podlist.json" --rv-start 48000

start_joulestat() { # name token-file port
    mkdir -p "$d/proc-$1"
    JOULESTAT_SIM_SCENARIO="$kube/kube-e2e.scn" JOULESTAT_SIM_PROCFS="$d/proc-$1" \
        "$build/joulestat" serve --nvml-library "$build/sim/libnvidia-ml.so.1" \
        --listen-address "127.0.0.1:$3" --sample-interval 200ms --process-scan-interval 500ms \
        --path.procfs "$d/proc-$1" --rapl-source off --kubernetes-api-url "https://127.0.0.1:$api_port" \
        --kubernetes-token-file "$2" --kubernetes-ca-file "$d/ca.crt" --node-name node-a \
        >"$d/joulestat-$1.log" 2>&1 &
    E2E_PIDS+=($!)
    js_pids[$1]=$!
}
declare -A js_pids
port=$(e2e_free_port)
bad_port=$(e2e_free_port)
t0=$SECONDS
start_joulestat good "$d/token" "$port"
start_joulestat bad "$d/bad-token" "$bad_port"
url="http://127.0.0.1:$port/metrics"
bad_url="http://127.0.0.1:$bad_port/metrics"
e2e_wait 20 curl -sf "$url" || e2e_fail "joulestat did not start serving"
e2e_wait 20 curl -sf "$bad_url" || e2e_fail "joulestat (wrong token) did not start serving"
mkdir -p "$d/mon-good" "$d/mon-bad"
# Not through check(): killing that function's subshell on a failure would leave its python
# running, and the test would hang on it until its timeout.
python3 "$kube/kube_e2e_check.py" monitor "$url" "$d/mon-good" &
E2E_PIDS+=($!)
python3 "$kube/kube_e2e_check.py" monitor "$bad_url" "$d/mon-bad" &
E2E_PIDS+=($!)
at() { while ((SECONDS - t0 < $1)); do sleep 0.2; done; }

# 1. Names from the API server.
e2e_wait 15 check has "$url" $metric pid=4101 pod=infer-5c9f7d6b8-x2kq4 namespace=serving \
    container=server pod_uid=2fc932ce-fdcc-454b-97bd-aadfdeb4c340 ||
    e2e_fail "process 4101 never got pod/namespace/container labels"
check has "$url" $metric pid=4201 pod=trainer namespace=ml container=pytorch \
    pod_uid=6e311cce-9b94-ca94-f353-b9546b1a9c19 || e2e_fail "process 4201 has no names"
check has "$url" joulestat_pod_energy_joules_total pod=infer-5c9f7d6b8-x2kq4 namespace=serving ||
    e2e_fail "the pod series has no names"
check has "$url" joulestat_container_energy_joules_total container=server pod=infer-5c9f7d6b8-x2kq4 ||
    e2e_fail "the container series has no names"
source_up() { curl -sf "$1" | grep -x "joulestat_source_up{source=\"kubernetes_api\"} $2" >/dev/null; }
e2e_wait 10 source_up "$url" 1 || e2e_fail "source_up{kubernetes_api} should be 1"
e2e_wait 10 source_up "$bad_url" 0 || e2e_fail "source_up{kubernetes_api} should be 0 (wrong token)"
# To a file first: under pipefail, `curl | grep -q` fails whenever grep stops reading first.
curl -sf "$bad_url" >"$E2E_TMP/bad.prom" || e2e_fail "the scrape failed"
grep -Eq '^joulestat_source_errors_total\{source="kubernetes_api"\} [1-9]' "$E2E_TMP/bad.prom" ||
    e2e_fail "wrong token: source_errors_total{kubernetes_api} should count the failures"
echo "step 1: names filled at t=$((SECONDS - t0)) s"

# `joulestat check` says whether the API server is reachable and accepts the token.
kube_flags=(--kubernetes-api-url "https://127.0.0.1:$api_port" --kubernetes-ca-file "$d/ca.crt"
    --node-name node-a --no-gpu --rapl-source off)
out=$("$build/joulestat" check "${kube_flags[@]}" --kubernetes-token-file "$d/token" 2>&1 || true)
grep -q "kubeapi ok .*reachable, auth OK, 5 pods on node node-a" <<<"$out" ||
    e2e_fail "check (good token): $out"
out=$("$build/joulestat" check "${kube_flags[@]}" --kubernetes-token-file "$d/bad-token" 2>&1 || true)
grep -q "kubeapi down .*auth failed (HTTP 401: Unauthorized)" <<<"$out" ||
    e2e_fail "check (wrong token): $out"
out=$("$build/joulestat" check "${kube_flags[@]}" --kubernetes-token-file "$d/token" \
    --kubernetes-ca-file /dev/null 2>&1 || true)
grep -q "kubeapi down .*unreachable" <<<"$out" || e2e_fail "check (untrusted CA): $out"
# A token over plain http is said (the https server does not answer it), and only then.
out=$("$build/joulestat" check --kubernetes-api-url "http://127.0.0.1:$api_port" \
    --node-name node-a --no-gpu --rapl-source off --kubernetes-token-file "$d/token" 2>&1 || true)
grep -q "kubeapi warning .*plain http: the token .* is sent unencrypted" <<<"$out" ||
    e2e_fail "check (token over http): $out"
out=$("$build/joulestat" check "${kube_flags[@]}" --kubernetes-token-file "$d/token" 2>&1 || true)
! grep -q "kubeapi warning" <<<"$out" || e2e_fail "check (https) warned: $out"
# serve says it once at start, as a warning.
"$build/joulestat" serve --no-gpu --rapl-source off --listen-address "127.0.0.1:$(e2e_free_port)" \
    --kubernetes-api-url "http://127.0.0.1:$api_port" --node-name node-a \
    --kubernetes-token-file "$d/token" >"$d/joulestat-http.log" 2>&1 &
http_pid=$!
E2E_PIDS+=($http_pid)
e2e_wait 10 grep -q "is plain http, and the token .* is sent with every request unencrypted" \
    "$d/joulestat-http.log" || e2e_fail "serve (token over http) did not warn: $(cat "$d/joulestat-http.log")"
kill "$http_pid"
wait "$http_pid" || true

# 2. The trainer pod is deleted (its process stopped at 10 s) and recreated: same name, new UID.
#    Before it, an event no one can read: the watcher lists again rather than resume the
#    watch from the same version, which would bring the same event back for ever.
at 11
printf '%s\n' '{"op":"garbage"}' '{"op":"delete","uid":"6e311cce-9b94-ca94-f353-b9546b1a9c19"}' \
    "{\"op\":\"add\",\"file\":\"$kube/pod-trainer-v2.json\"}" >>"$d/control"
e2e_wait 15 check has "$url" $metric pid=4301 pod=trainer namespace=ml container=pytorch \
    pod_uid=7922aa99-d4aa-4885-a953-82976860b23a || e2e_fail "the recreated pod has no names"
check has "$url" $metric pid=4201 pod=trainer pod_uid=6e311cce-9b94-ca94-f353-b9546b1a9c19 ||
    e2e_fail "the deleted pod's series lost its names"
check has "$url" joulestat_pod_energy_joules_total pod=trainer \
    pod_uid=6e311cce-9b94-ca94-f353-b9546b1a9c19 || e2e_fail "old trainer pod series missing"
check has "$url" joulestat_pod_energy_joules_total pod=trainer \
    pod_uid=7922aa99-d4aa-4885-a953-82976860b23a || e2e_fail "new trainer pod series missing"
echo "step 2: recreated pod is a new series at t=$((SECONDS - t0)) s"
grep -q "not a pod event" "$d/joulestat-good.log" || e2e_fail "the unreadable event was not said"

# 3. The API server goes away; solver (pod late-job) starts at 22 s while it is down.
at 15
kill "$api_pid"
wait "$api_pid" 2>/dev/null || true
at 23
e2e_wait 5 check has "$url" $metric pid=4401 pod= container_id=65d752a38e1db784d521f48c3f1956f4f9a74ebb923377144f253f3aca9fa028 ||
    e2e_fail "solver should be there without names while the API server is down"
check has "$url" $metric pid=4101 pod=infer-5c9f7d6b8-x2kq4 ||
    e2e_fail "names must survive the API server going away"
e2e_wait 10 source_up "$url" 0 || e2e_fail "source_up{kubernetes_api} should be 0 while it is away"

# 4. It comes back (knowing the late pod); our old resourceVersion is unknown to it: 410.
start_api --pods "$d/state.json" --add "$kube/pod-late.json" --rv-start 100000
e2e_wait 45 check has "$url" $metric pid=4401 pod=late-job-q7w2z namespace=ml container=solver ||
    e2e_fail "names did not come back after the API server returned"
e2e_wait 10 source_up "$url" 1 || e2e_fail "source_up{kubernetes_api} should be 1 again"
echo "step 4: names back at t=$((SECONDS - t0)) s"
grep -q "WATCH .* gone=1" "$d/api-requests.log" || e2e_fail "the 410 re-list path was not taken"
# joulestat's first LIST from the API server's cache (resourceVersion=0; the test's own
# readiness probes send none), the one after the 410 a read of every pod anew.
awk '/WATCH/ { exit } /LIST .*resourceVersion=0/ { ok = 1; exit } END { exit !ok }' "$d/api-requests.log" ||
    e2e_fail "the first LIST was not from the cache: $(grep -E 'LIST|WATCH' "$d/api-requests.log")"
awk '/gone=1/ { gone = 1; next } gone && /LIST/ { ok = $0 !~ /resourceVersion/; exit } END { exit !ok }' \
    "$d/api-requests.log" || e2e_fail "the LIST after the 410 was from the cache: $(grep -E 'LIST|gone' "$d/api-requests.log")"

# 4b. It goes away again and comes back knowing our resourceVersion: the watch resumes
#     without a LIST, and that alone must bring the source back up (it stayed 0 for good),
#     on a quiet node too: no event, and bookmarks a minute apart as a real server's.
kill "$api_pid"
wait "$api_pid" 2>/dev/null || true
e2e_wait 10 source_up "$url" 0 || e2e_fail "source_up{kubernetes_api} should be 0 in the 2nd outage"
lists=$(grep -c "LIST" "$d/api-requests.log")
reconnects=$(grep -c "reconnected to API server" "$d/joulestat-good.log" || true)
start_api --pods "$d/state.json" --rv-start 100000 --bookmark-interval 60
e2e_wait 15 source_up "$url" 1 ||
    e2e_fail "source_up{kubernetes_api} should be 1 once a watch resumed without a LIST"
(($(grep -c "reconnected to API server" "$d/joulestat-good.log") == reconnects + 1)) ||
    e2e_fail "a watch resumed without a LIST: no reconnect line"
# The good instance did not LIST again (the probe of start_api is the one new LIST).
(($(grep -c "LIST" "$d/api-requests.log") == lists + 1)) ||
    e2e_fail "the watch should have resumed without a LIST: $(tail -5 "$d/api-requests.log")"
echo "step 4b: a resumed watch is up again at t=$((SECONDS - t0)) s"

# 4c. The server refuses every watch from our version (504, as after an etcd restore): after
#     three refusals in a row the watcher asks for the whole list again, and is up again.
lists=$(grep -c "LIST" "$d/api-requests.log")
echo '{"op": "refuse", "count": 1000}' >>"$d/control"
echo '{"op": "close"}' >>"$d/control"
e2e_wait 30 grep -q "WATCH .* refused" "$d/api-requests.log" || e2e_fail "no watch was refused"
relisted() { (($(grep -c "LIST" "$d/api-requests.log") > lists)); }
e2e_wait 45 relisted || e2e_fail "refused watches never led to a new LIST"
echo '{"op": "refuse", "count": 0}' >>"$d/control"
e2e_wait 30 source_up "$url" 1 || e2e_fail "source_up{kubernetes_api} should be 1 after the LIST"
# The refusal's message carries a terminal escape: the log has it escaped, never raw.
grep -qE 'Too large resource version: [0-9]+\\x1b\]0;owned\\x07; retrying' "$d/joulestat-good.log" ||
    e2e_fail "the refusal's message is not in the log, escaped: $(grep -a 'HTTP 504' "$d/joulestat-good.log")"
! grep -q $'\x1b' "$d/joulestat-good.log" || e2e_fail "a raw escape reached the log"
echo "step 4c: refused watches, then a LIST, at t=$((SECONDS - t0)) s"

# 4d. A watch event larger than joulestat takes (17 MiB): the same watch would stop at it
#     again, so it lists again, once, and goes on watching from the list.
lists=$(grep -c "LIST" "$d/api-requests.log")
echo '{"op": "huge"}' >>"$d/control"
e2e_wait 15 grep -q "response larger than the limit" "$d/joulestat-good.log" ||
    e2e_fail "the oversized event was not said"
e2e_wait 15 relisted || e2e_fail "an oversized event did not lead to a new LIST"
e2e_wait 15 source_up "$url" 1 || e2e_fail "source_up{kubernetes_api} should be 1 after the LIST"
sleep 2
(($(grep -c "LIST" "$d/api-requests.log") == lists + 1)) ||
    e2e_fail "one LIST after the oversized event: $(grep -E 'LIST|WATCH' "$d/api-requests.log" | tail)"
check has "$url" $metric pid=4101 pod=infer-5c9f7d6b8-x2kq4 || e2e_fail "names lost after it"
echo "step 4d: an oversized event, then one LIST, at t=$((SECONDS - t0)) s"

# 4e. A server that answers every watch 410 at once: LIST and WATCH again, but not in a
#     spin: at most one round a second.
gone_before=$(grep -c "gone=1" "$d/api-requests.log")
answered_gone() { (($(grep -c "gone=1" "$d/api-requests.log") > gone_before)); }
echo '{"op": "gone", "on": true}' >>"$d/control"
echo '{"op": "close"}' >>"$d/control"
e2e_wait 10 answered_gone || e2e_fail "no 410 answer"
rounds=$(grep -c "gone=1" "$d/api-requests.log")
sleep 5
rounds=$(($(grep -c "gone=1" "$d/api-requests.log") - rounds))
echo '{"op": "gone", "on": false}' >>"$d/control"
((rounds >= 2 && rounds <= 6)) || e2e_fail "watches answered 410 in 5 s: $rounds (want 2-6)"
e2e_wait 15 source_up "$url" 1 || e2e_fail "source_up{kubernetes_api} should be 1 after the 410s"
echo "step 4e: $rounds rounds of 410 in 5 s, at t=$((SECONDS - t0)) s"

# 5. The wrong token: names empty, one clear log line, energy intact (monitor below).
check none "$bad_url" $metric pod || e2e_fail "wrong token: names must stay empty"
# The failure repeats every second or so; its line repeats only at the rate limit's doubling
# intervals (10 s, 20 s, 40 s ...), never sooner.
check backoff "$d/joulestat-bad.log" "refused our token (HTTP 401" ||
    e2e_fail "wrong token: the log line is not rate-limited"
n=$(grep -c "cannot reach the API server" "$d/joulestat-good.log" || true)
((n >= 2 && n <= 4)) || e2e_fail "two outages: expected a 'cannot reach' line each, got $n"
grep -q "reconnected to API server" "$d/joulestat-good.log" || e2e_fail "no reconnect line"
grep -q "connected to API server .*: 5 pods on node node-a" "$d/joulestat-good.log" ||
    e2e_fail "no first-connect line with 5 pods"

# 6. Every scrape of both instances conserved energy exactly; no counter went down.
touch "$d/mon-good/stop" "$d/mon-bad/stop"
sleep 1
for m in good bad; do
    [[ ! -s $d/mon-$m/errors ]] || e2e_fail "$m: $(head -5 "$d/mon-$m/errors")"
    c=$(cat "$d/mon-$m/count")
    ((c >= 40)) || e2e_fail "$m: only $c scrapes checked"
    echo "$m: $c scrapes, each conserving exactly, counters monotonic"
done

# 7. Both stop promptly on SIGTERM while their watcher is inside a request or a backoff,
#    with exit status 0 and (in sanitizer builds) no report.
for m in good bad; do
    kill -TERM "${js_pids[$m]}"
    status=0
    timeout 10 tail --pid="${js_pids[$m]}" -f /dev/null || e2e_fail "$m: did not stop in 10 s"
    wait "${js_pids[$m]}" || status=$?
    ((status == 0)) || e2e_fail "$m: exit status $status"
    if grep -E "Sanitizer|runtime error" "$d/joulestat-$m.log"; then
        e2e_fail "$m: sanitizer report"
    fi
done
echo "kube-e2e: ok"
