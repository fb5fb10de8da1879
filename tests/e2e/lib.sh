# Shared helpers for end-to-end tests: free ports, bounded waits, cleanup by PID.
# shellcheck shell=bash

E2E_PIDS=()
E2E_TMP=$(mktemp -d "${TMPDIR:-/tmp}/joulestat-e2e.XXXXXX")

e2e_cleanup() {
    local pid
    for pid in "${E2E_PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${E2E_PIDS[@]}"; do
        # bounded wait: 5 s, then SIGKILL
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    done
    rm -rf "$E2E_TMP"
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
