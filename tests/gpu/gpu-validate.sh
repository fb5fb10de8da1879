#!/usr/bin/env bash
# scripts/gpu-validate on a machine with no GPU. The bundle it runs from holds the fake
# workload (tests/gpu/fake-workload.c: the real workloads' command line and result line,
# no CUDA) under the four wl-MODE names, a fake joulestat (serves /metrics, writes its
# trace) and a fake gpu-probe; nvidia-smi and nvidia-cuda-mps-control are fakes on PATH
# that keep the accounting mode and the MPS daemon in files. Checked:
#   - every command line the script gives a workload is taken by the workloads' parser,
#     with CUDA_DEVICE_ORDER=PCI_BUS_ID; all phases complete, exit 0;
#   - accounting mode: read, turned on, turned back off, written to conditions.txt;
#   - an OUT that is not empty is refused;
#   - a failing workload: recorded with its exit status, the phases needing it not run,
#     the probe it was in left out, exit 1, and gpu-report refuses the runs;
#   - workloads that cannot run at all (an old driver): the smoke run stops it at once,
#     naming the CUDA and driver versions, before any setting is changed;
#   - TERM during the MPS phase: the MPS daemon stopped, accounting mode set back;
#   - where nvcc is: the real workloads.cu takes every one of those command lines (it gets
#     as far as CUDA, no device being visible, and not a usage error), and its smoke run
#     failing under an old driver's version is reported so.
# Usage: gpu-validate.sh FAKE_WORKLOAD SOURCE_DIR
set -euo pipefail
fake_wl=$1
src=$2
. "$src/tests/e2e/lib.sh"

bundle=$E2E_TMP/bundle
fakes=$E2E_TMP/bin
state=$E2E_TMP/state
mkdir -p "$bundle/lib" "$fakes" "$state"
cp "$src/scripts/gpu-validate" "$bundle/"
for mode in gemm stream spin hold; do
    cp "$fake_wl" "$bundle/wl-$mode"
done
printf 'nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 13.0, V13.0.88\n' \
    >"$bundle/nvcc-version.txt"

# joulestat: `version`, and `serve` answering /metrics and writing its --trace file.
cat >"$bundle/joulestat" <<'EOF'
#!/usr/bin/env python3
import http.server, os, sys
if sys.argv[1:2] == ['version']:
    print('joulestat (fake)')
    sys.exit(0)
args = sys.argv[2:]
host, port = args[args.index('--listen-address') + 1].rsplit(':', 1)
open(args[args.index('--trace') + 1], 'w').close()
with open(os.environ['FAKE_JS_LOG'], 'a') as f:
    f.write(f'{os.getpid()} {" ".join(sys.argv[1:])}\n')
class Metrics(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b'joulestat_up 1\n'
        self.send_response(200)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
http.server.HTTPServer((host, int(port)), Metrics).serve_forever()
EOF
# gpu-probe: its header and one row.
cat >"$bundle/gpu-probe" <<'EOF'
import sys
label = sys.argv[sys.argv.index('--label') + 1]
print('label,kind,t_us,power_mw,instant_mw,instant_t_us,energy_mj,pid,sample_t_us,sm,mem')
print(f'{label},power,1000,70000,,,5000000,,,,')
EOF
# nvidia-smi: the accounting mode in $FAKE_STATE/accounting, every call in $FAKE_STATE/smi.log.
cat >"$fakes/nvidia-smi" <<'EOF'
#!/usr/bin/env bash
set -eu
echo "$*" >>"$FAKE_STATE/smi.log"
while (($#)); do
    case $1 in
    --query-gpu=accounting.mode) cat "$FAKE_STATE/accounting" ;;
    --query-gpu=driver_version) echo "${FAKE_DRIVER:-580.65.06}" ;;
    --query-gpu=name) echo "NVIDIA H100 80GB HBM3 (fake)" ;;
    -am)
        case $2 in 1) echo Enabled ;; 0) echo Disabled ;; esac >"$FAKE_STATE/accounting"
        shift
        ;;
    esac
    shift
done
EOF
# nvidia-cuda-mps-control: -d starts "the daemon" ($FAKE_STATE/mps), "quit" stops it.
cat >"$fakes/nvidia-cuda-mps-control" <<'EOF'
#!/usr/bin/env bash
set -eu
echo "${1:-stdin} pipe=${CUDA_MPS_PIPE_DIRECTORY:-}" >>"$FAKE_STATE/mps.log"
if [[ ${1:-} == -d ]]; then
    touch "$FAKE_STATE/mps"
elif [[ $(cat) == quit ]]; then
    rm -f "$FAKE_STATE/mps"
fi
EOF
chmod +x "$bundle/joulestat" "$fakes/nvidia-smi" "$fakes/nvidia-cuda-mps-control"

export PATH=$fakes:$PATH FAKE_STATE=$state FAKE_JS_LOG=$state/joulestat.log
export GPU_VALIDATE_SECONDS=1 GPU_VALIDATE_STAGGER=0 GPU_VALIDATE_IDLE=0
unset CUDA_DEVICE_ORDER FAKE_WL_FAIL FAKE_WL_HANG_MPS FAKE_DRIVER
# A fresh start: accounting mode off, no logs.
reset_state() {
    rm -f "$state"/*
    echo Disabled >"$state/accounting"
}
port() { GPU_VALIDATE_PORT=$(($(e2e_free_port) - 1)); }
runs_py() { python3 -c 'import json, sys; runs = [json.loads(l) for l in open(sys.argv[1])]
'"$2" "$1"; }

# 1. Everything completes.
reset_state
port
out=$E2E_TMP/ok
rc=0
OUT=$out GPU_VALIDATE_PORT=$GPU_VALIDATE_PORT FAKE_WL_LOG=$state/wl.log \
    "$bundle/gpu-validate" 2>"$E2E_TMP/ok.log" || rc=$?
((rc == 0)) || e2e_fail "exit status $rc: $(tail -5 "$E2E_TMP/ok.log")"
# Every command line (sorted: a probe's or a phase's workloads start together): the smoke
# run, the probes, then the phases, the shared ones with the 25 iterations the fake did in
# each 1 s solo run.
expect=$(sort <<<"wl-hold 1
wl-spin 1
wl-hold 4
wl-gemm --seconds 4
wl-gemm --seconds 4
wl-spin --seconds 4
wl-hold 1
wl-gemm --seconds 1
wl-stream --seconds 1
wl-spin --seconds 1
wl-gemm 25
wl-spin 25
wl-gemm 25
wl-stream 25
wl-stream 25
wl-spin 25
wl-gemm 25
wl-stream 25
wl-spin 25
wl-gemm 25
wl-stream 25
wl-spin 25")
[[ $(cut -f1 "$state/wl.log" | sort) == "$expect" ]] ||
    e2e_fail "command lines: $(diff <(echo "$expect") <(cut -f1 "$state/wl.log" | sort))"
[[ $(cut -f2 "$state/wl.log" | sort -u) == PCI_BUS_ID ]] ||
    e2e_fail "CUDA_DEVICE_ORDER: $(cut -f2 "$state/wl.log" | sort -u)"
cut -f1 "$state/wl.log" | sort -u >"$E2E_TMP/lines"
runs_py "$out/runs.jsonl" '
phases = [(r["phase"], r["mode"]) for r in runs]
assert len(runs) == 16 and all(r["status"] == 0 and "error" not in r for r in runs), runs
assert phases[-3:] == [("mps", "gemm"), ("mps", "stream"), ("mps", "spin")], phases
assert all(r["launched"] <= r["start"] < r["end"] for r in runs), runs' ||
    e2e_fail "runs.jsonl: $(cat "$out/runs.jsonl")"
grep -qx "accounting-mode-before: Disabled" "$out/conditions.txt" &&
    grep -qx "accounting-mode-used: Enabled" "$out/conditions.txt" &&
    grep -qx "accounting-mode-after: Disabled" "$out/conditions.txt" &&
    grep -qx "workloads-cuda: 13.0" "$out/conditions.txt" &&
    grep -qx "driver: 580.65.06" "$out/conditions.txt" &&
    grep -qx "result: complete" "$out/conditions.txt" ||
    e2e_fail "conditions.txt: $(cat "$out/conditions.txt")"
[[ $(cat "$state/accounting") == Disabled ]] || e2e_fail "accounting mode left on"
[[ $(grep -c -- "-am" "$state/smi.log") == 2 ]] || e2e_fail "nvidia-smi calls: $(cat "$state/smi.log")"
[[ ! -e $state/mps ]] || e2e_fail "the MPS daemon was left running"
[[ $(grep -c ^label, "$out/probe.csv") == 1 &&
    $(cut -d, -f1 "$out/probe.csv" | tail -n +2 | tr '\n' ' ') == "idle context gemm gemm+spin " ]] ||
    e2e_fail "probe.csv: $(cat "$out/probe.csv")"
for f in metrics-1s.prom metrics-100ms.prom trace-1s.txt trace-100ms.txt log.txt; do
    [[ -e $out/$f ]] || e2e_fail "no $f"
done
grep -q "^joulestat_up 1" "$out/metrics-100ms.prom" || e2e_fail "metrics: $(cat "$out/metrics-100ms.prom")"
grep -q "all complete" "$E2E_TMP/ok.log" || e2e_fail "last line: $(tail -1 "$E2E_TMP/ok.log")"

# 2. The same OUT again: refused, nothing written.
before=$(md5sum "$out"/* | md5sum)
rc=0
OUT=$out "$bundle/gpu-validate" 2>"$E2E_TMP/again.log" || rc=$?
((rc == 1)) && grep -q "not an empty folder" "$E2E_TMP/again.log" ||
    e2e_fail "a used OUT: exit status $rc: $(cat "$E2E_TMP/again.log")"
[[ $(md5sum "$out"/* | md5sum) == "$before" ]] || e2e_fail "a used OUT was written to"

# 3. A workload fails (a CUDA error, exit 1) wherever it runs. spin: already in the smoke
# run, which stops everything; gpu-report then has no runs.
reset_state
out=$E2E_TMP/spin-fails
rc=0
OUT=$out FAKE_WL_FAIL=spin "$bundle/gpu-validate" 2>"$E2E_TMP/spin-fails.log" || rc=$?
((rc == 1)) && grep -q "smoke run (wl-spin 1) failed" "$E2E_TMP/spin-fails.log" ||
    e2e_fail "spin failing in the smoke run: exit status $rc: $(tail -5 "$E2E_TMP/spin-fails.log")"
[[ ! -s $out/runs.jsonl ]] || e2e_fail "the smoke run failed, yet runs: $(cat "$out/runs.jsonl")"
rc=0
"$src/scripts/gpu-report" "$out" >/dev/null 2>"$E2E_TMP/report-empty.log" || rc=$?
((rc == 3)) && grep -q "refused: runs.jsonl has no runs" "$E2E_TMP/report-empty.log" ||
    e2e_fail "gpu-report on no runs: exit status $rc: $(cat "$E2E_TMP/report-empty.log")"

# stream: it runs on; what needs stream is recorded as not run.
reset_state
port
out=$E2E_TMP/stream-fails
rc=0
OUT=$out GPU_VALIDATE_PORT=$GPU_VALIDATE_PORT FAKE_WL_FAIL=stream \
    "$bundle/gpu-validate" 2>"$E2E_TMP/stream-fails.log" || rc=$?
((rc == 1)) || e2e_fail "stream failing: exit status $rc: $(tail -5 "$E2E_TMP/stream-fails.log")"
runs_py "$out/runs.jsonl" '
by = {(r["phase"], r["mode"]): r for r in runs}
assert len(runs) == 16, runs
assert by["solo-stream", "stream"]["status"] == 1, by["solo-stream", "stream"]
assert "exit status 1" in by["solo-stream", "stream"]["error"]
for phase in ("pair-gemm-stream", "pair-stream-spin", "triple", "mps"):
    members = [r for r in runs if r["phase"] == phase]
    assert members and all(r["status"] is None and "not run" in r["error"] for r in members), members
ok = [r for r in runs if r["status"] == 0]
assert sorted({r["phase"] for r in ok}) == ["hold", "pair-gemm-spin", "solo-gemm", "solo-spin"], ok' ||
    e2e_fail "runs.jsonl: $(cat "$out/runs.jsonl")"
grep -q "^result: incomplete: solo-stream/stream pair-gemm-stream (not run)" "$out/conditions.txt" ||
    e2e_fail "conditions.txt: $(cat "$out/conditions.txt")"
[[ $(cat "$state/accounting") == Disabled ]] || e2e_fail "accounting mode left on after a failure"
rc=0
"$src/scripts/gpu-report" "$out" >/dev/null 2>"$E2E_TMP/report-fail.log" || rc=$?
((rc == 3)) && grep -q "phase solo-stream: 0 of 1 members completed (stream: exit status 1)" \
    "$E2E_TMP/report-fail.log" || e2e_fail "gpu-report: exit status $rc: $(cat "$E2E_TMP/report-fail.log")"

# 4. The workloads cannot run at all (a driver too old for CUDA 13): stopped at once.
reset_state
out=$E2E_TMP/old-driver
rc=0
OUT=$out FAKE_WL_FAIL=all FAKE_DRIVER=550.54.15 "$bundle/gpu-validate" 2>"$E2E_TMP/old.log" ||
    rc=$?
((rc == 1)) && grep -q "smoke run (wl-hold 1) failed" "$E2E_TMP/old.log" &&
    grep -q "built with CUDA 13.0 .*this driver is 550.54.15" "$E2E_TMP/old.log" &&
    grep -q "CUDA 13.x needs driver 580 or later" "$E2E_TMP/old.log" ||
    e2e_fail "old driver: exit status $rc: $(cat "$E2E_TMP/old.log")"
[[ ! -e $FAKE_JS_LOG ]] || e2e_fail "joulestat was started after a failed smoke run"
! grep -q -- "-am" "$state/smi.log" || e2e_fail "accounting mode touched after a failed smoke run"

# 5. TERM while the MPS clients run: the daemon stopped, accounting mode set back.
reset_state
port
out=$E2E_TMP/term
OUT=$out GPU_VALIDATE_PORT=$GPU_VALIDATE_PORT FAKE_WL_HANG_MPS=1 \
    "$bundle/gpu-validate" 2>"$E2E_TMP/term.log" &
pid=$!
E2E_PIDS+=("$pid")
e2e_wait 60 grep -q "phase mps" "$E2E_TMP/term.log" || e2e_fail "no MPS phase: $(cat "$E2E_TMP/term.log")"
[[ -e $state/mps ]] || e2e_fail "the fake MPS daemon is not running"
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
((rc == 143)) || e2e_fail "TERM: exit status $rc: $(tail -5 "$E2E_TMP/term.log")"
[[ ! -e $state/mps ]] || e2e_fail "the MPS daemon was left running after TERM"
[[ $(cat "$state/accounting") == Disabled ]] || e2e_fail "accounting mode left on after TERM"
grep -qx "accounting-mode-after: Disabled" "$out/conditions.txt" ||
    e2e_fail "conditions.txt after TERM: $(cat "$out/conditions.txt")"
while read -r jpid _; do
    ! kill -0 "$jpid" 2>/dev/null || e2e_fail "joulestat $jpid left running after TERM"
done <"$FAKE_JS_LOG"

# 6. The real workloads, where nvcc is.
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if [[ ! -x $nvcc ]]; then
    echo "gpu-validate: no nvcc, the real workloads not built (the fake's checks passed)"
    echo "gpu-validate: ok"
    exit 0
fi
real=$E2E_TMP/real
mkdir -p "$real/lib"
"$nvcc" -O2 -gencode arch=compute_90,code=sm_90 -o "$real/workloads" \
    "$src/bench/gpu/workloads.cu" 2>"$E2E_TMP/nvcc.log" || e2e_fail "nvcc: $(cat "$E2E_TMP/nvcc.log")"
"$nvcc" --version >"$real/nvcc-version.txt"
for mode in gemm stream spin hold; do
    cp "$real/workloads" "$real/wl-$mode"
done
# No device visible (also where there is one): past the arguments, CUDA fails, exit 1.
[[ $(wc -l <"$E2E_TMP/lines") == 11 ]] || e2e_fail "command lines: $(cat "$E2E_TMP/lines")"
while read -r name args; do
    rc=0
    # shellcheck disable=SC2086 # the arguments are words
    CUDA_VISIBLE_DEVICES='' "$real/$name" $args >/dev/null 2>"$E2E_TMP/real.err" || rc=$?
    ((rc == 1)) && grep -q "^workloads: cudaFree(0): " "$E2E_TMP/real.err" ||
        e2e_fail "$name $args: exit status $rc: $(cat "$E2E_TMP/real.err")"
done <"$E2E_TMP/lines"
# ...and a line it must refuse, exit 2 before any CUDA call.
rc=0
"$real/wl-gemm" gemm --seconds 1 2>"$E2E_TMP/real.err" || rc=$?
((rc == 2)) && grep -q "^usage:" "$E2E_TMP/real.err" || e2e_fail "a bad line: exit status $rc"
rc=0
CUDA_VISIBLE_DEVICES='' "$real/workloads" spin --seconds 1 2>"$E2E_TMP/real.err" || rc=$?
((rc == 1)) || e2e_fail "workloads spin --seconds 1: exit status $rc: $(cat "$E2E_TMP/real.err")"
# gpu-validate run from the real bundle under an old driver's version: the smoke run.
cp "$src/scripts/gpu-validate" "$bundle/joulestat" "$bundle/gpu-probe" "$real/"
reset_state
cuda=$(sed -n 's/.*release \([0-9][0-9.]*\).*/\1/p' "$real/nvcc-version.txt")
rc=0
OUT=$E2E_TMP/real-out CUDA_VISIBLE_DEVICES='' FAKE_DRIVER=450.80.02 "$real/gpu-validate" \
    2>"$E2E_TMP/real-old.log" || rc=$?
((rc == 1)) && grep -q "smoke run (wl-hold 1) failed, exit status 1: workloads: cudaFree(0)" \
    "$E2E_TMP/real-old.log" && grep -q "built with CUDA $cuda .*this driver is 450.80.02" \
    "$E2E_TMP/real-old.log" || e2e_fail "real workloads, old driver: $(cat "$E2E_TMP/real-old.log")"
echo "gpu-validate: ok (the real workloads built with nvcc $cuda)"
