# Shared helpers for end-to-end tests: free ports, bounded waits, cleanup by PID.
# shellcheck shell=bash

E2E_PIDS=()
E2E_TMP=$(mktemp -d "${TMPDIR:-/tmp}/joulestat-e2e.XXXXXX")

e2e_cleanup() {
    local pid status=$? f
    for pid in "${E2E_PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${E2E_PIDS[@]}"; do
        # bounded wait: 5 s, then SIGKILL
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    done
    # A system call the seccomp allow-list misses fails every test that made it.
    for f in "$E2E_TMP"/*.log; do
        [[ -f $f ]] && grep -H "seccomp: refused" "$f" >&2 && status=1
    done
    rm -rf "$E2E_TMP"
    exit "$status"
}
trap e2e_cleanup EXIT

e2e_fail() {
    echo "FAIL: $*" >&2
    for f in "$E2E_TMP"/*.log; do
        [[ -f $f ]] || continue
        echo "--- $f (last 30 lines)" >&2
        tail -30 "$f" >&2
    done
    exit 1
}

# A free TCP port on 127.0.0.1 (asks the kernel, then releases it).
e2e_free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# Waits until a command succeeds: e2e_wait SECONDS cmd...
e2e_wait() {
    local limit=$1
    shift
    local deadline=$((SECONDS + limit))
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < deadline)) || return 1
        sleep 0.2
    done
}

# The CPU fixtures' run: builds the fake node of FIXTURE (tests/e2e/*_fixture.py), serves it
# with joulestat (no GPU, powercap, 1 s scan, 100 ms ticks, then FLAGS) and has the fixture
# drive it and check /metrics. Sets E2E_URL to that /metrics.
#   e2e_cpu_fixture BUILD_DIR FIXTURE WHAT [FLAGS...]
e2e_cpu_fixture() {
    local build=$1 fixture=$2 what=$3 node=$E2E_TMP/node port
    shift 3
    mkdir -p "$node"
    python3 "$fixture" init "$node" || e2e_fail "cannot build the fake node"
    port=$(e2e_free_port)
    "$build/joulestat" serve --no-gpu --rapl-source powercap \
        --path.procfs "$node/proc" --path.sysfs "$node/sys" \
        --process-scan-interval 1s --sample-interval 100ms \
        --listen-address "127.0.0.1:$port" "$@" >"$E2E_TMP/joulestat.log" 2>&1 &
    E2E_PIDS+=($!)
    E2E_URL=http://127.0.0.1:$port/metrics
    e2e_wait 10 curl -sf "$E2E_URL" || e2e_fail "exporter did not come up"
    python3 "$fixture" drive "$node" "$E2E_URL" || e2e_fail "$what does not match the fixture"
}

# A throwaway CA and a server certificate for 127.0.0.1 under DIR (ca.crt, server.crt,
# server.key), trusted by nothing but the test that asks for it.
e2e_test_ca() {
    local d=$1
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$d/ca.key" -out "$d/ca.crt" \
        -subj /CN=joulestat-test-ca -days 2 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout "$d/server.key" -out "$d/server.csr" \
        -subj /CN=127.0.0.1 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$d/san.ext"
    openssl x509 -req -in "$d/server.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
        -out "$d/server.crt" -days 2 -extfile "$d/san.ext" 2>/dev/null
}

# shellcheck source=tests/e2e/fake-rapl.sh
source "$(dirname "${BASH_SOURCE[0]}")/fake-rapl.sh"
