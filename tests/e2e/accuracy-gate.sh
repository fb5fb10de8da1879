#!/usr/bin/env bash
# A part of `make accuracy` with its thresholds: the accuracy scenarios of kinds where SM
# time is not energy (busy-wait beside a trainer, ETL beside tensor cores, an idle holder,
# phases, bursts, short jobs, MIG instances with GPM) and four generated mixes, against the
# simulator's truth.
# Fails when joulestat's mean error is above 10 %, a scenario above 25 %, a process is
# unmatched, or the learned split is worse than SM share by more than one point anywhere;
# when loads that never vary apart are split otherwise than by SM share at any phase of the
# energy counter's steps; and when short jobs beside a trainer are not split on their own
# (below).
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/joulestat-accuracy.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

"$src/scripts/gen-mixes" --count 4 "$tmp"
"$src/scripts/accuracy-report" --joulestat "$build/joulestat" --max-mean 10 --max-worst 25 \
    --max-over-sm 1 \
    "$src"/scenarios/{busy-wait-collective,etl-beside-tensor,idle-holder,trainer-phases}.scn \
    "$src"/scenarios/{inference-bursts,short-jobs,mig-h100-gpm}.scn "$tmp"/mix-0[1-4].scn
echo "accuracy-gate: scenarios ok"

# Constant loads (nothing tells their intensities or the context uplift apart) at four
# phases of the counter's 100 ms steps against the ticks: the split stays within a point of
# SM share. Taking their common power for uplift, handed out by time held, once cost
# driver-535-abi 15.6 % at phase 0 (SM share: 0.5 %).
mkdir "$tmp/phases"
for scn in driver-535-abi desync-phases fault-list-grows; do
    for ph in 0 25 50 75; do
        sed "/^gpu [0-9]* /a\    driver-phase=${ph}ms" "$src/scenarios/$scn.scn" \
            >"$tmp/phases/$scn-$ph.scn"
    done
done
# And 120 steady processes, more than the rows, on an A100 whose idle is 15 % below its
# model's typical: the fit put their common power in the uplift (160 W), handed evenly to
# all, until an uplift beyond any board's was refused (36.3 % against SM share's 30.2 %).
sed 's/ idle=60W / idle=51W /' "$src/scenarios/stress-120-processes.scn" >"$tmp/phases/stress-51w.scn"
grep -q ' idle=51W ' "$tmp/phases/stress-51w.scn"
"$src/scripts/accuracy-report" --joulestat "$build/joulestat" --max-over-sm 1 "$tmp"/phases/*.scn
echo "accuracy-gate: constant loads ok"

# Short jobs, each on its own: the 30 jobs of 40-120 ms of short-lived-processes beside a
# steady trainer, with accounting mode on (docs/ATTRIBUTION.md, "A newcomer beside known
# workloads"): at least 28 within 10 % of their truth and a mean |error| under 3.8 % (29 and
# 3.2 % today; 27 and 4.7 % while a job started on a tick lost its first sample's edge to
# the window before), where SM share gives none within 10 % (mean 17.7 %).
sed '/^gpu 0 /a\    accounting=on' "$src/scenarios/short-lived-processes.scn" >"$tmp/short.scn"
"$build/joulestat" replay --scenario "$tmp/short.scn" --gpu-idle-policy unattributed \
    2>"$tmp/short.log" >"$tmp/short.prom"
python3 - "$tmp/short.prom" <<'PY'
import sys

errors = []
for line in open(sys.argv[1]):
    if not line.startswith("# gpu=") or " pid=31" not in line:
        continue
    kv = dict(f.split("=", 1) for f in line[2:].split() if "=" in f)
    truth = float(kv["truth_active_j"])
    got = 0.0 if kv["attributed_j"] == "none" else float(kv["attributed_j"])
    errors.append(abs(got - truth) / truth * 100)
within = sum(e <= 10 for e in errors)
mean = sum(errors) / len(errors) if errors else 100
print(f"short jobs: {len(errors)} jobs, {within} within 10 %, mean |error| {mean:.1f} %")
sys.exit(0 if len(errors) == 30 and within >= 28 and mean < 3.8 else 1)
PY
echo "accuracy-gate: short jobs ok"

# MIG on an A100 (no GPM): with DCGM's nv-hostengine on the node, each instance's activity
# comes from its profiling module and the split is within 10 % of the GPU's energy (7.2 %
# today); without it the instances can only be split by their size (47.2 %).
mig_error() { # scenario, options...: the scenario's error in % of the GPU's energy
    local scn=$1
    shift
    "$build/joulestat" replay --scenario "$scn" --gpu-idle-policy unattributed "$@" 2>/dev/null |
        python3 -c '
import sys
total, err = 0.0, 0.0
for line in sys.stdin:
    if not line.startswith("# gpu="):
        continue
    kv = dict(f.split("=", 1) for f in line[2:].split() if "=" in f)
    if "pid" not in kv:
        total += float(kv["truth_total_j"])
    else:
        got = 0.0 if kv["attributed_j"] == "none" else float(kv["attributed_j"])
        err += abs(got - float(kv["truth_active_j"]))
print(f"{err / total * 100:.1f}")'
}
with=$(mig_error "$src/scenarios/mig-a100-dcgm.scn")
without=$(mig_error "$src/scenarios/mig-a100-dcgm.scn" --dcgm=off)
echo "MIG A100: ${with} % with DCGM, ${without} % by instance size"
awk -v a="$with" -v b="$without" 'BEGIN { exit !(a <= 10 && b >= 30) }' ||
    { echo "accuracy-gate: MIG with DCGM at ${with} % (by size ${without} %)" >&2; exit 1; }
# Said once in the log, after the first windows (which have no samples yet).
"$build/joulestat" replay --scenario "$src/scenarios/mig-a100-dcgm.scn" >/dev/null 2>"$tmp/mig.log"
"$build/joulestat" replay --scenario "$src/scenarios/mig-a100-dcgm.scn" --dcgm=off \
    >/dev/null 2>"$tmp/mig-off.log"
[[ $(grep -c "MIG instances split" "$tmp/mig.log") == 1 ]] &&
    grep -q "GPU 0: MIG instances split by their activity, from DCGM's nv-hostengine" \
        "$tmp/mig.log" &&
    [[ $(grep -c "MIG instances split" "$tmp/mig-off.log") == 1 ]] &&
    grep -q "GPU 0: MIG instances split by their size: nothing measures" "$tmp/mig-off.log" ||
    { echo "accuracy-gate: the MIG split is not said once: $(cat "$tmp"/mig*.log)" >&2; exit 1; }
echo "accuracy-gate: MIG with DCGM ok"
