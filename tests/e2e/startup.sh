#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Starting `serve`: the listen address is parsed and bound before any source starts, so a
# bad or taken address fails at once (exit 1, the address in the message, no source ever
# opened); and log lines are plain (time, level, message) on a terminal or in a file, with
# syslog "<N>" prefixes only when stderr is the journal (JOURNAL_STREAM names it).
# Usage: startup.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
. "$src/tests/e2e/lib.sh"
js=$build/joulestat
sim=$build/sim/libnvidia-ml.so.1
export JOULESTAT_SIM_SCENARIO=$src/scenarios/two-process-80-20.scn
unset JOURNAL_STREAM

# serve ADDRESS: every source asked for (the simulated GPU, RAPL auto, Kubernetes), stderr
# to $E2E_TMP/err; sets $status and $took (milliseconds).
serve() {
    local start=$(date +%s%N)
    status=0
    timeout 20 "$js" serve --nvml-library "$sim" --rapl-source auto --kubernetes-enabled=true \
        --listen-address "$1" 2>"$E2E_TMP/err" >/dev/null || status=$?
    took=$((($(date +%s%N) - start) / 1000000))
}
expect_refused() { # ADDRESS WHY [MAX_MS]: host names go to DNS, so no time limit for them
    serve "$1"
    [[ $status == 1 ]] || e2e_fail "serve --listen-address '$1' exited $status, expected 1"
    grep -qF "cannot listen on '$1': $2" "$E2E_TMP/err" ||
        e2e_fail "no clear error naming '$1': $(cat "$E2E_TMP/err")"
    # Nothing else was started: the error is the only line (no nvml, rapl, procfs,
    # Kubernetes or pod-resources line before it).
    [[ $(wc -l <"$E2E_TMP/err") == 1 ]] || e2e_fail "sources started before the address failed: $(cat "$E2E_TMP/err")"
    [[ -z ${3:-} ]] || ((took < $3)) || e2e_fail "'$1' took ${took} ms to fail"
}
expect_refused "127.0.0.1:99999" "not an address of the form" 2000
expect_refused "[::1" "not an address of the form" 2000
expect_refused "no-such-host.invalid:19400" "unknown host"
# Taken: a port this script holds.
port=$(e2e_free_port)
python3 -c 'import socket,sys,time
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(); print("ready", flush=True); time.sleep(30)' "$port" >"$E2E_TMP/holder" &
E2E_PIDS+=($!)
e2e_wait 10 grep -q ready "$E2E_TMP/holder" || e2e_fail "could not hold port $port"
expect_refused "127.0.0.1:$port" "Address already in use" 2000

# Log format. A file: plain lines.
expect_plain() {
    grep -qE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z error: cannot listen on' "$1" ||
        e2e_fail "not a plain line: $(cat "$1")"
    grep -q '^<[0-7]>' "$1" && e2e_fail "a priority prefix outside the journal: $(cat "$1")"
    return 0
}
"$js" serve --no-gpu --listen-address nonsense 2>"$E2E_TMP/file.log" || true
expect_plain "$E2E_TMP/file.log"
# The journal: JOURNAL_STREAM is stderr's device and inode.
: >"$E2E_TMP/journal.log"
JOURNAL_STREAM=$(stat -c %d:%i "$E2E_TMP/journal.log") \
    "$js" serve --no-gpu --listen-address nonsense 2>>"$E2E_TMP/journal.log" || true
grep -qx "<3>cannot listen on 'nonsense': not an address of the form :PORT, HOST:PORT or \[IPv6\]:PORT" \
    "$E2E_TMP/journal.log" || e2e_fail "no <3> prefix for the journal: $(cat "$E2E_TMP/journal.log")"
# Inherited from a unit but redirected elsewhere (another file): plain again.
JOURNAL_STREAM=$(stat -c %d:%i "$E2E_TMP/journal.log") \
    "$js" serve --no-gpu --listen-address nonsense 2>"$E2E_TMP/other.log" || true
expect_plain "$E2E_TMP/other.log"
# A terminal (script(1) gives a pseudo-terminal), with a JOURNAL_STREAM of another file.
if command -v script >/dev/null; then
    JOURNAL_STREAM=$(stat -c %d:%i "$E2E_TMP/journal.log") script -qec \
        "$js serve --no-gpu --listen-address nonsense" /dev/null >"$E2E_TMP/tty.log" 2>&1 || true
    tr -d '\r' <"$E2E_TMP/tty.log" >"$E2E_TMP/tty-clean.log"
    expect_plain "$E2E_TMP/tty-clean.log"
fi
echo "startup: ok"
