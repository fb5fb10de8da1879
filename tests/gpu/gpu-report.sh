#!/usr/bin/env bash
# scripts/gpu-report on data whose truth is known: scripts/gpu-validate's protocol played on
# the simulated node (tests/gpu/validation-protocol.scn), the two joulestat instances
# replaced by replays at 1 s and 100 ms with --trace, and gpu-probe reading the simulated
# library. The solo references must come out as the simulator's truth of the solo runs, and
# in the shared run joulestat must be near them where SM share is far off.
# Usage: gpu-report.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
. "$src/tests/e2e/lib.sh"
scn=$src/tests/gpu/validation-protocol.scn
out=$E2E_TMP/out
mkdir -p "$out"

for spec in 1s:1s 100ms:100ms; do
    "$build/joulestat" replay --scenario "$scn" --gpu-idle-policy unattributed \
        --sample-interval "${spec#*:}" --trace "$out/trace-${spec%%:*}.txt" \
        >"$out/metrics-${spec%%:*}.prom" 2>>"$E2E_TMP/replay.log" ||
        e2e_fail "replay failed: $(tail -3 "$E2E_TMP/replay.log")"
done
# The runs as gpu-validate writes them: Unix seconds on the simulator's virtual clock.
python3 - "$scn" "$out/runs.jsonl" <<'EOP'
import json, re, sys
epoch = 1700000000
phase = {101: 'hold', 102: 'solo-gemm', 103: 'solo-spin', 104: 'pair-gemm-spin',
         105: 'pair-gemm-spin'}
with open(sys.argv[2], 'w') as out:
    secs = lambda v, unit: int(v) / (1000 if unit == 'ms' else 1)  # noqa: E731
    for m in re.finditer(r'^process (\d+) gpu=0 name=wl-(\w+) start=(\d+)(ms|s) '
                         r'stop=(\d+)(ms|s)', open(sys.argv[1]).read(), re.M):
        pid, mode = int(m[1]), m[2]
        start, stop = secs(m[3], m[4]), secs(m[5], m[6])
        out.write(json.dumps({'phase': phase[pid], 'mode': mode, 'pid': pid, 'iterations': 1,
                              'start': epoch + start, 'end': epoch + stop,
                              'seconds': stop - start}) + '\n')
EOP
# gpu-probe reads the simulated library through ctypes, except in the sanitizer build,
# whose library needs the sanitizer's runtime that python3 does not carry: the probe's
# part is skipped there, and the report goes without it.
probe=yes
# (grep reads all of nm's output: leaving early, it would end nm with SIGPIPE, which
# pipefail reports as no match)
if nm -D --undefined-only "$build/sim/libnvidia-ml.so.1" 2>/dev/null | grep __asan_ >/dev/null; then
    probe=
    echo "gpu-report: gpu-probe skipped (the sanitizer build's simulated library)"
else
    LD_LIBRARY_PATH=$build/sim JOULESTAT_SIM_SCENARIO=$scn \
        python3 "$src/scripts/gpu-probe" --seconds 1 --label sim >"$out/probe.csv" ||
        e2e_fail "gpu-probe failed on the simulated library"
fi

"$src/scripts/gpu-report" "$out" --json --markdown "$E2E_TMP/report.md" >"$E2E_TMP/report.json" ||
    e2e_fail "gpu-report failed: $(cat "$E2E_TMP/report.json")"
python3 - "$E2E_TMP/report.json" <<'EOP' || e2e_fail "gpu-report: $(cat "$E2E_TMP/report.md")"
import json, sys
r = json.load(open(sys.argv[1]))
near = lambda got, want, tol: abs(got - want) <= tol * want  # noqa: E731
# No-context idle 70 W; the solo references are the simulator's truth of the solo runs:
# the context uplift (50 W x 12 s) plus 95 % x 560 W and 100 % x 160 W for 12 s.
assert near(r['idle_w'], 70, 0.01), r['idle_w']
assert near(r['solo_j']['hold'], 600, 0.10), r['solo_j']
assert near(r['solo_j']['gemm'], 6984, 0.03), r['solo_j']
assert near(r['solo_j']['spin'], 2520, 0.03), r['solo_j']
assert not r['missing'], r['missing']
pair = {row['mode']: row for row in r['rows'] if row['phase'] == 'pair-gemm-spin'}
assert set(pair) == {'gemm', 'spin'}, pair
for mode, row in pair.items():
    # each did about its solo work: joulestat within 20 %, SM share's spin more than +50 %
    assert near(row['joulestat_1s'], row['solo_j'], 0.20), (mode, row)
    assert near(row['joulestat_100ms'], row['solo_j'], 0.20), (mode, row)
assert pair['spin']['sm-share'] > 1.5 * pair['spin']['solo_j'], pair['spin']
EOP
grep -q "^| pair-gemm-spin | spin |" "$E2E_TMP/report.md" || e2e_fail "no table row: $(cat "$E2E_TMP/report.md")"
# The probe's row: the simulated board's 70 W and its counter's steps of about 100 ms.
if [[ -n $probe ]]; then
    grep -Eq '^\| sim \| 70\.0 \| - \| - \| (9[0-9]|1[01][0-9])\.[0-9] \|' "$E2E_TMP/report.md" ||
        e2e_fail "probe row: $(grep '^| sim' "$E2E_TMP/report.md")"
fi
echo "gpu-report: ok"
