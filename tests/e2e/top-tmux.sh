#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `joulestat top` in a real terminal (tmux): against the simulated three-pod node, with pod
# names from a fake API server and one process named with an escape sequence, then
# against a running exporter's /metrics URL. Each time the pane is captured and read as a
# user would: the scenario's processes and pods are there, powers are plausible for the
# simulated A100 (idle 55 W, at most 400 W), energy grows, and the keys do what the
# footer says (group, sort, filter, quit). TERM=dumb, no terminal, no ncursesw and a URL
# that does not answer are clear errors.
# Usage: top-tmux.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
. "$src/tests/e2e/lib.sh"
command -v tmux >/dev/null || e2e_fail "tmux not installed (scripts/install-deps test installs it)"
js=$build/joulestat
sim=$build/sim/libnvidia-ml.so.1
d=$E2E_TMP
scn=$src/scenarios/dcgm-three-pods.scn
# Every wait has a deadline, generous for a loaded machine and sanitizer builds.
limit=${TOP_TEST_WAIT:-60}

# The fake API server names the scenario's pods (plain HTTP on loopback, as in the demo).
python3 "$src/scripts/scenario-pods" "$scn" node-a >"$d/pods.json"
echo "token-$RANDOM$RANDOM" >"$d/token"
api_port=$(e2e_free_port)
python3 "$src/tests/kube/fake_apiserver.py" --port "$api_port" --token-file "$d/token" \
    --pods "$d/pods.json" --node node-a >"$d/apiserver.log" 2>&1 &
E2E_PIDS+=($!)
kube=(--kubernetes-api-url "http://127.0.0.1:$api_port" --kubernetes-token-file "$d/token"
    --node-name node-a)

# The same node, with the process "light" named l ESC [2J t (clear the screen).
python3 - "$scn" "$d/evil.scn" <<'EOP'
import sys
text = open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(text.replace(b"name=light", b'name="l\x1b[2Jt"'))
EOP

# A tmux server of the test's own; its panes are 200 x 50.
sock=$d/tmux.sock
tmx() { tmux -S "$sock" "$@"; }
tmx -f /dev/null new-session -d -s top -x 200 -y 50 -n idle "sleep 3600"
E2E_PIDS+=("$(tmx display-message -p '#{pid}')")

# Runs a command in a new window NAME through a script that says how it ended and stays
# open, so the pane can be read after the command exits.
#   window NAME VAR=VALUE... -- CMD ARGS...
window() {
    local name=$1 script=$d/$1.sh
    shift
    {
        echo '#!/usr/bin/env bash'
        while [[ $1 != -- ]]; do printf 'export %q\n' "$1"; shift; done
        shift
        printf '%q ' "$@"
        printf '2>%q\necho "top exited $?"\nexec sleep 3600\n' "$d/$name.stderr"
    } >"$script"
    chmod +x "$script"
    tmx new-window -d -n "$name" "$script"
}

# Captures the pane of window NAME until every pattern (grep -E) is in one capture;
# PANE holds the last capture.
PANE=
wait_pane() {
    local name=$1 deadline=$((SECONDS + limit)) p ok
    shift
    while :; do
        PANE=$(tmx capture-pane -p -t "top:$name" 2>/dev/null || true)
        ok=1
        for p in "$@"; do grep -qE -- "$p" <<<"$PANE" || { ok=0; break; }; done
        ((ok)) && return 0
        ((SECONDS < deadline)) || e2e_fail "window $name never showed '$p'; the pane:
$PANE
stderr: $(cat "$d/$name.stderr" 2>/dev/null)"
        sleep 0.3
    done
}

# Field F of the row of the last capture whose text matches REGEX (fixed string).
field() {
    awk -v want="$1" -v f="$2" 'index($0, want) && !done { print $f; done = 1 }' <<<"$PANE"
}

# a <= x <= b, in awk's floating point.
between() {
    awk -v a="$1" -v x="$2" -v b="$3" 'BEGIN { exit !(x != "" && x != "-" && a <= x + 0 && x + 0 <= b) }'
}

t0=$SECONDS

# An exporter of a node whose two workloads differ in power intensity (scenarios/
# etl-beside-tensor.scn: gemm-bench at 300 W per 100 % SM, etl-decode at 90 W), started
# first: learning takes it some 25 s of samples.
mkdir -p "$d/proc-learn"
learn_port=$(e2e_free_port)
JOULESTAT_SIM_SCENARIO=$src/scenarios/etl-beside-tensor.scn JOULESTAT_SIM_PROCFS=$d/proc-learn \
    "$js" serve --nvml-library "$sim" --path.procfs "$d/proc-learn" --rapl-source off \
    --kubernetes-enabled=false --listen-address "127.0.0.1:$learn_port" \
    >"$d/serve-learn.log" 2>&1 &
E2E_PIDS+=($!)

# 1. Local: top opens the simulated node itself.
mkdir -p "$d/proc-local"
window local JOULESTAT_SIM_SCENARIO="$d/evil.scn" JOULESTAT_SIM_PROCFS="$d/proc-local" -- \
    "$js" top --nvml-library "$sim" --path.procfs "$d/proc-local" --rapl-source off "${kube[@]}"
wait_pane local 'joulestat top - local sources' 'processes: 3 of 3' \
    'heavy +pod ml-workloads/training-job-123' 'medium +pod serving/inference-api-7f9c' \
    'Node GPU [0-9.]+ W  CPU n/a'
# ncursesw is loaded by top (src/top/curses_loader.c): the binary does not link it, so
# `serve` never maps it, and the running top has it mapped.
ldd "$js" | grep -E 'libncurses|libtinfo' && e2e_fail "joulestat links ncurses"
pane_pid=$(tmx display-message -p -t top:local '#{pane_pid}')
top_pid=
for f in /proc/[0-9]*/stat; do # the window's shell runs top as its one child
    s=$(cat "$f" 2>/dev/null) || continue
    read -r _ ppid _ <<<"${s##*) }"
    [[ $ppid == "$pane_pid" ]] && { top_pid=${f//[^0-9]/}; break; }
done
grep -q 'libncursesw\.so\.6' "/proc/$top_pid/maps" || e2e_fail "top (pid '$top_pid') has no ncursesw"
# The name is shown escaped: the sequence never reached the terminal.
wait_pane local 'l\\x1b\[2Jt +pod research/notebook-alice'
# Process row: PID POWER_W GPU_W CPU_W ENERGY_J GPU_J CPU_J INTENSITY_W GPUS NAME WORKLOAD
wait_pane local 'heavy +pod ml-workloads/training-job-123'
e1=$(field training-job-123 5)
s1=$SECONDS
node=$(grep -oE 'Node GPU [0-9.]+' <<<"$PANE" | awk '{print $3}')
between 55 "$node" 401 || e2e_fail "node GPU power $node W is not an A100's (55..400 W)"
for pod in training-job-123 inference-api-7f9c notebook-alice; do
    w=$(field "$pod" 2)
    between 0 "$w" 400 || e2e_fail "power of $pod is '$w'"
    [[ $(field "$pod" 9) == 0 ]] || e2e_fail "$pod is not on GPU 0: $PANE"
    [[ $(field "$pod" 7) == 0.0 ]] || e2e_fail "$pod has CPU energy without RAPL: $PANE"
done
# Energy grows, by no more than the board can draw: a later frame, 2 s on at least.
sleep 2
deadline=$((SECONDS + limit))
while :; do
    wait_pane local 'heavy +pod ml-workloads/training-job-123'
    e2=$(field training-job-123 5)
    [[ $e2 != "$e1" ]] && break
    ((SECONDS < deadline)) || e2e_fail "heavy's energy stays at $e1 J: $PANE"
    sleep 0.3
done
elapsed=$((SECONDS - s1 + 2)) # the frames may be a refresh older than the captures
awk -v a="$e1" -v b="$e2" -v t="$elapsed" 'BEGIN { exit !(b > a + 10 && b - a <= 400 * t) }' ||
    e2e_fail "heavy's energy went from $e1 J to $e2 J in about $elapsed s"
echo "ok: local: heavy $e1 J -> $e2 J, node GPU $node W"

# Group: containers, then pods.
tmx send-keys -t top:local g
wait_pane local 'containers: 3 of 3' ' \(pod ml-workloads/training-job-123\)$' 'CONTAINER'
tmx send-keys -t top:local g
wait_pane local 'pods: 3 of 3' ' POD$|POD +$' 'ml-workloads/training-job-123$' \
    'serving/inference-api-7f9c$' 'research/notebook-alice$'
# Pod row: POWER_W GPU_W CPU_W ENERGY_J GPU_J CPU_J INTENSITY_W PROCS GPUS POD
[[ $(field training-job-123 8) == 1 ]] || e2e_fail "training-job-123 should have one process: $PANE"

# Sort by name: the pods in order of their names.
tmx send-keys -t top:local N
wait_pane local 'sort: NAME \|'
order=$(grep -oE '(training-job-123|inference-api-7f9c|notebook-alice)$' <<<"$PANE" | tr '\n' ' ')
[[ $order == "inference-api-7f9c notebook-alice training-job-123 " ]] ||
    e2e_fail "sorted by name: '$order': $PANE"
tmx send-keys -t top:local r
wait_pane local 'sort: NAME \(reversed\)'
order=$(grep -oE '(training-job-123|inference-api-7f9c|notebook-alice)$' <<<"$PANE" | tr '\n' ' ')
[[ $order == "training-job-123 notebook-alice inference-api-7f9c " ]] ||
    e2e_fail "sorted by name, reversed: '$order': $PANE"
# > steps to the next sort column (NAME wraps round to POWER_W), E sorts by energy.
tmx send-keys -t top:local '>'
wait_pane local 'sort: POWER_W \|'
tmx send-keys -t top:local E
wait_pane local 'sort: ENERGY_J \|'
first=$(grep -A1 -E 'POWER_W +GPU_W' <<<"$PANE" | tail -1)
[[ $first == *training-job-123 ]] || e2e_fail "the pod with most energy is not first: $PANE"

# Filter: / then text, Enter keeps it; Esc clears it.
tmx send-keys -t top:local / n o t e
wait_pane local '^Filter: note_'
tmx send-keys -t top:local Enter
wait_pane local 'pods: 1 of 3' 'filter: note' 'research/notebook-alice'
grep -q training-job-123 <<<"$PANE" && e2e_fail "the filter left other pods: $PANE"
tmx send-keys -t top:local Escape
wait_pane local 'pods: 3 of 3' 'filter: -'

# A terminal resized: the view follows.
tmx resize-window -t top:local -x 120 -y 20 2>/dev/null || tmx resize-pane -t top:local -x 120 -y 20
wait_pane local 'pods: 3 of 3'
[[ $(wc -l <<<"$PANE") -le 20 ]] || e2e_fail "resize: $(wc -l <<<"$PANE") lines in a 20-line pane"
grep -q '^q Quit' <<<"$PANE" || e2e_fail "resize: no key bar at the bottom: $PANE"

# q quits, with status 0 (and, under ASan, no leak).
tmx send-keys -t top:local q
wait_pane local 'top exited 0'
echo "ok: local: groups, sort, filter, resize and quit"

# The CPU side: the real /proc and a RAPL package zone that draws 20 W (lib.sh).
e2e_fake_rapl_zone "$d/sys"
E2E_PIDS+=("$E2E_FAKE_RAPL_PID")
window cpu -- "$js" top --no-gpu --rapl-source powercap --path.sysfs "$d/sys"
wait_pane cpu 'Node GPU n/a  CPU [0-9.]+ W'
sleep 1.5
wait_pane cpu 'Node GPU n/a  CPU [0-9.]+ W'
cpu=$(grep -oE 'CPU [0-9.]+ W' <<<"$PANE" | awk '{print $2}')
# The zone's writer adds 2 J per 100 ms sleep, less often on a loaded machine.
between 3 "$cpu" 21 || e2e_fail "node CPU power $cpu W, the fake zone draws at most 20 W: $PANE"
tmx send-keys -t top:cpu q
wait_pane cpu 'top exited 0'
echo "ok: CPU: the node's package zone at $cpu W"

# 2. Remote: a running exporter's /metrics.
mkdir -p "$d/proc-serve"
port=$(e2e_free_port)
JOULESTAT_SIM_SCENARIO=$scn JOULESTAT_SIM_PROCFS=$d/proc-serve \
    "$js" serve --nvml-library "$sim" --path.procfs "$d/proc-serve" --rapl-source off \
    --listen-address "127.0.0.1:$port" --process-scan-interval 1s "${kube[@]}" \
    >"$d/serve.log" 2>&1 &
E2E_PIDS+=($!)
url=http://127.0.0.1:$port/metrics
e2e_wait "$limit" curl -sf "$url" || e2e_fail "the exporter did not come up"
window remote -- "$js" top --sample-interval 500ms "$url"
wait_pane remote "joulestat top - $url" 'processes: 3 of 3' \
    'heavy +pod ml-workloads/training-job-123' 'light +pod research/notebook-alice'
# What top shows lies between two scrapes of the exporter taken around the capture.
counter() {
    curl -sf "$url" | awk -F'} ' '/^joulestat_pod_energy_joules_total\{.*pod="training-job-123".*component="gpu"/ { print $2 }'
}
tmx send-keys -t top:remote g g
wait_pane remote 'pods: 3 of 3'
# Scrapes before and after a capture, once the exporter has moved on and top has read a
# later sample: what top shows lies between them.
before=$(counter)
deadline=$((SECONDS + limit))
while :; do
    wait_pane remote 'pods: 3 of 3'
    shown=$(field training-job-123 5)
    after=$(counter)
    awk -v a="$before" -v x="$shown" -v b="$after" 'BEGIN { exit !(a < b && x >= a - 0.05) }' && break
    ((SECONDS < deadline)) || e2e_fail "top shows $shown J for training-job-123, the exporter $before..$after J"
    sleep 0.3
done
awk -v x="$shown" -v b="$after" 'BEGIN { exit !(x <= b + 0.05) }' ||
    e2e_fail "top shows $shown J for training-job-123, more than the exporter's $after J"
w=$(field training-job-123 1)
between 1 "$w" 400 || e2e_fail "remote: power of training-job-123 is '$w'"
tmx send-keys -t top:remote / t r a i n Enter
wait_pane remote 'pods: 1 of 3' 'ml-workloads/training-job-123'
tmx send-keys -t top:remote q
wait_pane remote 'top exited 0'
echo "ok: remote: $shown J shown for training-job-123 (exporter $before..$after J), $w W"

# 3. Learned intensity, from the exporter started first, sorted by it (I).
window learn -- "$js" top "http://127.0.0.1:$learn_port/metrics"
wait_pane learn 'processes: 2 of 2' 'gemm-bench' 'etl-decode'
tmx send-keys -t top:learn I
# Twice the usual wait: on a machine loaded by other tests, ticks come late and the windows
# are less alike, and etl-decode was once still unlearned after 80 s.
deadline=$((SECONDS + 2 * limit))
while :; do
    wait_pane learn 'sort: INTENSITY_W \|'
    gemm=$(field gemm-bench 8) etl=$(field etl-decode 8)
    [[ $gemm == - || $etl == - ]] || break
    ((SECONDS < deadline)) || e2e_fail "no intensity learned in $((2 * limit)) s: $PANE"
    sleep 1
done
between 240 "$gemm" 360 || e2e_fail "gemm-bench's intensity is $gemm W (300 W in the scenario)"
between 55 "$etl" 135 || e2e_fail "etl-decode's intensity is $etl W (90 W in the scenario)"
first=$(grep -A1 -E 'PID +POWER_W' <<<"$PANE" | tail -1)
[[ $first == *gemm-bench* ]] || e2e_fail "the most intense is not first: $PANE"
tmx send-keys -t top:learn q
wait_pane learn 'top exited 0'
echo "ok: intensity: gemm-bench $gemm W, etl-decode $etl W"

# 4. What cannot work says why.
window dumb TERM=dumb -- "$js" top --no-gpu --rapl-source off
wait_pane dumb 'top exited 1'
grep -q "TERM=dumb cannot move the cursor" "$d/dumb.stderr" ||
    e2e_fail "TERM=dumb: $(cat "$d/dumb.stderr")"
# Without ncursesw (JOULESTAT_CURSES_LIBRARY, the tests-only override, names a missing file):
# the library and the package to install, before anything is sampled.
window nolib JOULESTAT_CURSES_LIBRARY="$d/missing/libncursesw.so.6" -- \
    "$js" top --no-gpu --rapl-source off
wait_pane nolib 'top exited 1'
grep -qx "joulestat top: libncursesw.so.6 not found: install libncursesw6 (Debian) .*" \
    "$d/nolib.stderr" || e2e_fail "without ncursesw: $(cat "$d/nolib.stderr")"
[[ $(wc -l <"$d/nolib.stderr") == 1 ]] ||
    e2e_fail "without ncursesw, more than one line: $(cat "$d/nolib.stderr")"
window down -- "$js" top "http://127.0.0.1:$(e2e_free_port)/metrics"
wait_pane down 'top exited 1'
grep -qE "joulestat top: http://127.0.0.1:[0-9]+/metrics: .*(onnect|refused)" "$d/down.stderr" ||
    e2e_fail "a URL that does not answer: $(cat "$d/down.stderr")"
# A host that answers once, then holds every later request: each fetch now takes the 5 s
# timeout, ten intervals. The screen still says what is wrong, and 'q' still quits (both
# were lost while the fetches ran back to back).
stall_port=$(e2e_free_port)
python3 - "$stall_port" <<'EOP' &
import socket, sys, threading, time
body = (b'joulestat_gpu_process_energy_joules_total{pid="42",gpu="0",process_name="stall"} 12.5\n')
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", int(sys.argv[1])))
srv.listen(16)
held, answered = [], False
while True:
    c, _ = srv.accept()
    if not c.recv(65536):  # the test's probe of the port
        c.close()
        continue
    if answered:
        held.append(c)  # read, never answered
        continue
    answered = True
    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n"
              b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
    c.close()
EOP
E2E_PIDS+=($!)
e2e_wait 10 python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $stall_port)).close()" ||
    e2e_fail "the stalling server did not start"
window stall -- "$js" top --sample-interval 500ms "http://127.0.0.1:$stall_port/metrics"
wait_pane stall "joulestat top - http://127.0.0.1:$stall_port/metrics"
sleep 1.5 # inside the first fetch that is not answered
tmx send-keys -t top:stall q
wait_pane stall 'top exited 0'
echo "ok: a host that stops answering: 'q' quits"

status=0
"$js" top --no-gpu </dev/null >"$d/notty.out" 2>"$d/notty.err" || status=$?
if [[ $status != 1 ]] || ! grep -q "top needs a terminal" "$d/notty.err"; then
    e2e_fail "without a terminal: status $status, $(cat "$d/notty.err")"
fi
echo "ok: TERM=dumb, no ncursesw, a dead URL and no terminal are clear errors"
echo "top-tmux: ok in $((SECONDS - t0)) s"
