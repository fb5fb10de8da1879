#!/usr/bin/env bash
# The accuracy tools: scripts/gen-mixes writes the same mixes from the same seeds, each one
# replays and conserves energy; scripts/accuracy-score computes the documented error.
# Usage: accuracy-tools.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/joulestat-accuracy.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Deterministic: the same seeds give the same files, other seeds other files.
"$src/scripts/gen-mixes" "$tmp/a"
"$src/scripts/gen-mixes" "$tmp/b"
"$src/scripts/gen-mixes" --seed 77 --count 3 "$tmp/c"
n=$(find "$tmp/a" -name 'mix-*.scn' | wc -l)
[[ $n -ge 30 ]] || fail "gen-mixes wrote $n mixes, expected at least 30"
diff -r "$tmp/a" "$tmp/b" >/dev/null || fail "gen-mixes is not deterministic"
! cmp -s "$tmp/a/mix-01.scn" "$tmp/c/mix-01.scn" || fail "--seed does not change the mixes"
for key in sample-phase=spread util-entries=per-process context-idle= idle-drift= \
    slice-overhead= power-noise= no-energy-counter 'coef=[0-9]*W,'; do
    grep -q -- "$key" "$tmp"/a/*.scn || fail "no mix uses $key"
done

# Every mix loads and replays (its first 5 s), and every GPU conserves energy exactly.
mkdir "$tmp/replays"
for f in "$tmp"/a/*.scn; do
    "$build/joulestat" replay --scenario "$f" --duration 5s --gpu-idle-policy unattributed \
        >"$tmp/replays/$(basename "$f" .scn).prom" 2>"$tmp/err" ||
        fail "replay of $(basename "$f"): $(cat "$tmp/err")"
done
python3 - "$src/tests/e2e" "$tmp"/replays/*.prom <<'EOP' || fail "a mix does not conserve energy"
import sys
sys.path.insert(0, sys.argv[1])
from check_conservation import main
for path in sys.argv[2:]:
    sys.argv = ['check_conservation', path]
    try:
        main()
    except SystemExit as e:
        if e.code:
            raise SystemExit(f'{path}: does not conserve energy')
EOP

# The scorer's arithmetic on a known replay output: |12 - 10| + |0 - 5| (no series) over
# 40 J + 60 J of two GPUs = 7 %, one process unmatched.
cat >"$tmp/known.out" <<'EOF'
joulestat_gpu_energy_joules_total{gpu="0"} 40.000000
# gpu=0 truth_total_j=40.000000 truth_idle_j=25.000000 truth_active_j=15.000000 measured_j=40.000000
# gpu=1 truth_total_j=60.000000 truth_idle_j=60.000000 truth_active_j=0.000000 measured_j=60.000000 truth_context_j=0.000000 truth_drift_j=0.000000
# gpu=0 pid=1 comm=a truth_active_j=10.000000 attributed_j=12.000000 measured_j=0.000000 estimated_j=12.000000 error_j=+2.000000 error_pct=+20.00
# gpu=0 pid=2 comm=b truth_active_j=5.000000 attributed_j=none
EOF
python3 - "$src/scripts/accuracy-score" "$tmp/known.out" <<'EOP' || fail "accuracy-score arithmetic"
import json, subprocess, sys
out = json.loads(subprocess.run([sys.argv[1], '--json', sys.argv[2]], check=True,
                                capture_output=True, text=True).stdout)
s = out['scenarios'][0]
assert s['scenario'] == 'known' and s['processes'] == 2 and s['unmatched'] == 1, s
assert abs(s['error'] - 0.07) < 1e-12 and s['gpu_energy_j'] == 100.0, s
assert out['summary']['mean_error'] == s['error'] and out['summary']['unmatched'] == 1, out
EOP
"$src/scripts/accuracy-score" "$tmp/err" >/dev/null 2>&1 && fail "accuracy-score accepts a non-replay file"

# Whole replays through the scorer: every process matched to a series or counted as missed.
"$src/scripts/accuracy-score" --joulestat "$build/joulestat" "$tmp/a/mix-06.scn" \
    "$src/scenarios/busy-wait-collective.scn" >"$tmp/score" || fail "accuracy-score --joulestat"
grep -q '^mean error' "$tmp/score" || fail "no summary: $(cat "$tmp/score")"
cat "$tmp/score"

# accuracy-report --phases: each scenario again with the driver's grid at each phase. The
# counter's steps move, so the energy measured by the end of the replay does too.
"$src/scripts/accuracy-report" --joulestat "$build/joulestat" --json --phases 0,50 \
    "$src/scenarios/busy-wait-collective.scn" >"$tmp/phases.json" || fail "accuracy-report --phases"
python3 - "$tmp/phases.json" <<'EOP' || fail "accuracy-report --phases: $(head -c 300 "$tmp/phases.json")"
import json, sys
out = json.load(open(sys.argv[1]))
assert sorted(out['phases']) == ['0', '50'], out['phases'].keys()
at0, at50 = out['phases']['0'][0], out['phases']['50'][0]
assert at0['scenario'] == at50['scenario'] == 'busy-wait-collective', (at0, at50)
assert at0['gpu_energy_j'] != at50['gpu_energy_j'], 'the phase did not reach the simulator'
EOP
"$src/scripts/accuracy-report" --joulestat "$build/joulestat" --phases 100 \
    "$src/scenarios/busy-wait-collective.scn" >/dev/null 2>&1 && fail "--phases 100 accepted"

# accuracy-report --idle-scales: each scenario again with its GPUs' idle scaled, so the
# GPU's energy moves by the idle's change; one with no power left under its board's maximum
# (inference-bursts' L4 at 1.15) is named, not failed.
"$src/scripts/accuracy-report" --joulestat "$build/joulestat" --json --idle-scales 0.85,1.15 \
    "$src/scenarios/busy-wait-collective.scn" "$src/scenarios/inference-bursts.scn" \
    >"$tmp/idle.json" || fail "accuracy-report --idle-scales"
python3 - "$tmp/idle.json" <<'EOP' || fail "accuracy-report --idle-scales: $(head -c 300 "$tmp/idle.json")"
import json, sys
out = json.load(open(sys.argv[1]))
base = {r['scenario']: r for r in out['scenarios']}
low, high = out['idle_scales']['0.85'], out['idle_scales']['1.15']
assert [r['scenario'] for r in low['results']] == ['busy-wait-collective', 'inference-bursts']
assert low['left_out'] == [] and high['left_out'] == ['inference-bursts'], (low, high)
# busy-wait-collective: an H100 at 70 W idle for 120 s; 0.85 x takes 10.5 W off, 1.15 adds it.
b = base['busy-wait-collective']['gpu_energy_j']
for scaled, sign in ((low['results'][0], -1), (high['results'][0], 1)):
    moved = scaled['gpu_energy_j'] - b
    assert abs(moved - sign * 10.5 * 120) < 0.02 * 10.5 * 120, (moved, scaled)
EOP
"$src/scripts/accuracy-report" --joulestat "$build/joulestat" --idle-scales 0 \
    "$src/scenarios/busy-wait-collective.scn" >/dev/null 2>&1 && fail "--idle-scales 0 accepted"
echo "accuracy-tools: ok"
