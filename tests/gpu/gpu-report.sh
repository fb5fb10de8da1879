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

# What gpu-validate notes of the run heads the report.
printf 'driver: 550.90.07\naccounting-mode-before: Disabled\naccounting-mode-used: Enabled\n' \
    >"$out/conditions.txt"
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
grep -qx -- "- accounting-mode-used: Enabled" "$E2E_TMP/report.md" ||
    e2e_fail "conditions: $(head -8 "$E2E_TMP/report.md")"

# The same data with runs.jsonl (and probe.csv) changed: what must be refused, what must
# still be found.
python3 - "$src/scripts/gpu-report" "$out" "$E2E_TMP/variants" <<'EOP' || e2e_fail "variants"
import json, os, shutil, subprocess, sys
report, out, top = sys.argv[1:4]
runs = [json.loads(line) for line in open(os.path.join(out, 'runs.jsonl'))]

def run(name, lines, *flags, probe=None):
    d = os.path.join(top, name)
    shutil.copytree(out, d)
    with open(os.path.join(d, 'runs.jsonl'), 'w') as f:
        f.writelines(json.dumps(r) + '\n' for r in lines)
    if probe is not None:
        with open(os.path.join(d, 'probe.csv'), 'w') as f:
            f.write(probe)
    p = subprocess.run([report, d, '--json', *flags], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr

def refused(name, lines, *why):
    rc, _, err = run(name, lines)
    assert rc == 3 and 'refused' in err and all(w in err for w in why), (name, rc, err)
    lines = err.strip().splitlines()
    print(f'{name}: refused: {lines[min(1, len(lines) - 1)].strip()}')

def pair_spin(r):
    return r['phase'] == 'pair-gemm-spin' and r['mode'] == 'spin'

# A member that failed (gpu-validate's line for it: its exit status, no result).
failed = [{'phase': r['phase'], 'mode': r['mode'], 'status': 1, 'error': 'exit status 1'}
          if pair_spin(r) else r for r in runs]
refused('failed', failed, 'phase pair-gemm-spin: 1 of 2 members completed (spin: exit status 1)')
# One member's line missing, one not run at all, no runs, no solo run, a strange phase.
refused('short', [r for r in runs if not pair_spin(r)], '1 of 2 members completed (spin: no line)')
notrun = [dict(r, status=None, error='not run: no solo work') if r['phase'] == 'pair-gemm-spin'
          else r for r in runs]
refused('not-run', notrun, '0 of 2 members completed')
refused('empty', [], 'runs.jsonl has no runs')
refused('no-solo', [r for r in runs if not r['phase'].startswith('solo-')],
        'no solo run completed', 'phase pair-gemm-spin: no solo reference for gemm, spin')
refused('twice', runs + [r for r in runs if pair_spin(r)], 'spin: 2 lines')
refused('odd-phase', [dict(r, phase='pair-gemm') if r['phase'] == 'pair-gemm-spin' else r
                      for r in runs], "phase 'pair-gemm': not a phase")

# --partial scores the complete phases, lists the rest and exits 1.
rc, stdout, err = run('partial', failed, '--partial')
res = json.loads(stdout)
assert rc == 1 and {r['phase'] for r in res['rows']} == {'hold', 'solo-gemm', 'solo-spin'}, \
    (rc, res['rows'], err)
assert any('pair-gemm-spin' in p for p in res['left_out']), res['left_out']

# Another pid namespace: pids unknown to joulestat. Found by name and launch time; and by
# name and a start long after the process's (the CUDA context can take that long) for a
# line without "launched" (an earlier kit's).
for name, change in (('launched', lambda r: dict(r, pid=r['pid'] + 5000, launched=r['start'],
                                                 start=r['start'] + 4, end=r['end'] + 4)),
                     ('slow-context', lambda r: dict(r, pid=r['pid'] + 5000,
                                                     start=r['start'] + 30, end=r['end'] + 30))):
    rc, stdout, err = run(name, [change(r) if r['phase'] == 'pair-gemm-spin' else r
                                 for r in runs])
    res = json.loads(stdout)
    got = {r['mode']: r['pid'] for r in res['rows'] if r['phase'] == 'pair-gemm-spin'}
    assert rc == 0 and got == {'gemm': '104', 'spin': '105'}, (name, rc, got, res['missing'])

# Per-process samples read twice (the same timestamp): no period of 0, no division by it.
head = 'label,kind,t_us,power_mw,instant_mw,instant_t_us,energy_mj,pid,sample_t_us,sm,mem\n'
rc, stdout, err = run('same-sample', runs, probe=head + 'dup,util,1000,,,,,7,500,90,0\n' * 2)
assert rc == 0 and json.loads(stdout)['rows'], (rc, err)
EOP
echo "gpu-report: ok"
