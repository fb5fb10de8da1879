#!/usr/bin/env bash
# Replays every scenario on the virtual clock and checks what each must show:
#   - all: the replay succeeds and every GPU conserves energy exactly
#     (processes + unattributed == measured, to the microjoule);
#   - dcgm-three-pods: three different energies, heavy > medium > light, all estimated;
#   - single-exclusive: the process gets exactly the GPU's energy, all measured;
#   - two-process-80-20 with --gpu-idle-policy=share: 80/20 of the GPU's energy.
# Usage: replay-scenarios.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/joulestat-replay.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

replay() {
    local scn=$1
    shift
    "$build/joulestat" replay --scenario "$src/scenarios/$scn.scn" "$@" >"$tmp/$scn.prom" 2>"$tmp/$scn.log" ||
        { cat "$tmp/$scn.log" >&2; echo "FAIL: replay of $scn exited non-zero" >&2; return 1; }
    python3 "$src/tests/e2e/check_conservation.py" "$tmp/$scn.prom" >"$tmp/$scn.cons" ||
        { cat "$tmp/$scn.cons" >&2; echo "FAIL: $scn does not conserve energy" >&2; return 1; }
}

# energy NAME ESTIMATED: a process's energy (J) in the last replay of the scenario.
energy() {
    python3 - "$tmp/$1.prom" "$2" "$3" <<'EOP'
import re, sys
path, name, est = sys.argv[1:]
for line in open(path):
    if line.startswith("joulestat_gpu_process_energy_joules_total{") and \
       f'process_name="{name}"' in line and f'energy_estimated="{est}"' in line:
        print(line.rsplit(" ", 1)[1].strip())
        break
else:
    print("missing")
EOP
}

# value SCENARIO SERIES_PREFIX: the value of the first series starting with that text.
value() {
    grep -F -m1 "$2" "$tmp/$1.prom" | awk '{print $NF}'
}

failed=0
for f in "$src"/scenarios/*.scn; do
    scn=$(basename "$f" .scn)
    if replay "$scn"; then
        echo "ok: $scn ($(grep -c '^gpu' "$tmp/$scn.cons") GPUs conserve exactly)"
    else
        failed=1
    fi
done

# The DCGM time-slicing case: three different values, ordered, none measured.
h=$(energy dcgm-three-pods heavy true)
m=$(energy dcgm-three-pods medium true)
l=$(energy dcgm-three-pods light true)
python3 -c "import sys; h,m,l=map(float,sys.argv[1:]); sys.exit(0 if h>m>l>0 else 1)" "$h" "$m" "$l" ||
    { echo "FAIL: dcgm-three-pods: expected heavy > medium > light > 0, got $h $m $l"; failed=1; }
for p in heavy medium light; do
    [[ $(energy dcgm-three-pods $p false) == 0.000000 ]] ||
        { echo "FAIL: dcgm-three-pods: $p has measured energy in shared windows"; failed=1; }
done
echo "dcgm-three-pods: heavy $h J > medium $m J > light $l J (all estimated)"

# Exclusive: while the process ran it got everything the GPU measured, as a measurement;
# the rest is the GPU idling before it started and after it stopped, with nobody on it.
excl_name=$(grep -m1 -o 'process_name="[^"]*"' "$tmp/single-exclusive.prom" | cut -d'"' -f2)
e=$(energy single-exclusive "$excl_name" false)
est=$(energy single-exclusive "$excl_name" true)
g=$(value single-exclusive 'joulestat_gpu_energy_joules_total{gpu="0"')
nc=$(value single-exclusive 'joulestat_gpu_unattributed_energy_joules_total{gpu="0",reason="no_consumer"}')
python3 -c "
import sys
from decimal import Decimal as D
e, est, g, nc = map(D, sys.argv[1:])
sys.exit(0 if est == 0 and e + nc == g and e > 0 else 1)" "$e" "$est" "$g" "$nc" ||
    { echo "FAIL: single-exclusive: process $e J (+$est estimated) + idle-alone $nc J != GPU $g J"; failed=1; }
echo "single-exclusive: $excl_name measured $e J + GPU alone $nc J == GPU $g J"

# A GPU lost for a while on the newer paths (GPM samples of MIG instances, DCGM's samples
# of them on an A100, the accounting buffer of finished processes): the replay goes on, every GPU still conserves exactly,
# and the lost stretch is booked as no_data, not to anyone.
lost() {
    local scn=$1 variant=$2 gpu_keys=$3 from=$4 until=$5
    sed "/^gpu 0 /a\\    $gpu_keys" "$src/scenarios/$scn.scn" >"$src_tmp/$variant.scn"
    echo "fault gpu-lost gpu=0 at=$from until=$until" >>"$src_tmp/$variant.scn"
    "$build/joulestat" replay --scenario "$src_tmp/$variant.scn" >"$tmp/$variant.prom" 2>"$tmp/$variant.log" ||
        { cat "$tmp/$variant.log" >&2; echo "FAIL: replay of $variant exited non-zero"; return 1; }
    python3 "$src/tests/e2e/check_conservation.py" "$tmp/$variant.prom" >"$tmp/$variant.cons" ||
        { cat "$tmp/$variant.cons" >&2; echo "FAIL: $variant does not conserve energy"; return 1; }
    nd=$(value "$variant" 'joulestat_gpu_unattributed_energy_joules_total{gpu="0",reason="no_data"}')
    python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) > 0 else 1)" "${nd:-0}" ||
        { echo "FAIL: $variant: the lost stretch was not booked as no_data ($nd J)"; return 1; }
    echo "ok: $variant conserves exactly, $nd J no_data while the GPU was lost"
}
src_tmp=$tmp/scn
mkdir -p "$src_tmp"
lost mig-h100-gpm mig-gpm-lost "gpm=on" 20s 40s || failed=1
lost mig-a100-dcgm mig-dcgm-lost "mig=on" 20s 40s || failed=1
# ... and DCGM measures the instances again once the GPU is back
grep -q 'joulestat_gpu_mig_activity{gpu="0",source="dcgm"} 1' "$tmp/mig-dcgm-lost.prom" ||
    { echo "FAIL: mig-dcgm-lost: DCGM's activity not back after the GPU returned"; failed=1; }
lost short-lived-processes accounting-lost "accounting=on" 10s 20s || failed=1

exit $failed
