#!/usr/bin/env bash
# Restart-safe counters (--state-dir): joulestat serves the simulated node, is stopped
# (SIGTERM) and started again on the same running scenario (JOULESTAT_SIM_START_TIME).
# Every energy counter of the first run is there after the restart and none went back (the
# self-metrics, like process_cpu_seconds_total, are the running process's), the energy
# the GPU drew while joulestat was down is booked as unattributed downtime, and the GPU's
# energy is still exactly its processes' plus the unattributed parts. A corrupt state file
# is set aside and joulestat starts from zero. A RAPL zone (a fake powercap counter at 20 W)
# is bridged the same way across a short stop, and a stop longer than its range covers is
# booked as downtime of unknown energy. A GPU's measured idle power is kept too.
set -euo pipefail
build=$1 src=$2
. "$src/tests/e2e/lib.sh"

state=$E2E_TMP/state proc=$E2E_TMP/proc
mkdir -p "$state" "$proc"
e2e_fake_rapl_zone "$E2E_TMP/sys"
E2E_PIDS+=("$E2E_FAKE_RAPL_PID")
export JOULESTAT_SIM_SCENARIO=$src/scenarios/dcgm-three-pods.scn JOULESTAT_SIM_PROCFS=$proc
JOULESTAT_SIM_START_TIME=$(date +%s)
export JOULESTAT_SIM_START_TIME

# serve_once N SECONDS: serves for about SECONDS, saves /metrics to $E2E_TMP/mN, stops.
serve_once() {
    local port pid
    port=$(e2e_free_port)
    "$build/joulestat" serve --nvml-library "$build/sim/libnvidia-ml.so.1" \
        --path.procfs "$proc" --rapl-source powercap --path.sysfs "$E2E_TMP/sys" \
        --process-scan-interval 1s ${SERVE_ARGS:-} \
        --listen-address "127.0.0.1:$port" --state-dir "$state" >"$E2E_TMP/log$1" 2>&1 &
    pid=$!
    E2E_PIDS+=($pid)
    e2e_wait 10 curl -sf "http://127.0.0.1:$port/metrics" || e2e_fail "exporter $1 did not come up"
    sleep "$2"
    curl -sf "http://127.0.0.1:$port/metrics" >"$E2E_TMP/m$1" || e2e_fail "scrape $1"
    kill -TERM "$pid"
    wait "$pid" || e2e_fail "exporter $1 did not exit cleanly: $(tail -3 "$E2E_TMP/log$1")"
}

serve_once 1 3
[[ -s $state/joulestat.state ]] || e2e_fail "no state file after a clean stop"
sleep 2
serve_once 2 2
grep -q "counters restored" "$E2E_TMP/log2" || e2e_fail "nothing restored: $(cat "$E2E_TMP/log2")"

python3 - "$E2E_TMP/m1" "$E2E_TMP/m2" <<'EOP' || e2e_fail "counters across the restart"
import re, sys
from decimal import Decimal

def counters(path):
    out = {}
    for line in open(path):
        m = re.match(r'^(\w+_joules_total|\w+_split_windows_total)(\{[^}]*\})? (\S+)$', line)
        if m:
            out[m[1] + (m[2] or '')] = Decimal(m[3])
    return out

a, b = counters(sys.argv[1]), counters(sys.argv[2])
for k, v in a.items():
    assert k in b, f'{k} gone after the restart'
    assert b[k] >= v, f'{k} went back: {v} -> {b[k]}'
down = b['joulestat_gpu_unattributed_energy_joules_total{gpu="0",reason="downtime"}']
assert down > 0, 'no downtime booked'
gpu = [v for k, v in b.items() if k.startswith('joulestat_gpu_energy_joules_total')][0]
procs = sum(v for k, v in b.items() if k.startswith('joulestat_gpu_process_energy_joules_total'))
unattr = sum(v for k, v in b.items() if k.startswith('joulestat_gpu_unattributed_energy'))
assert procs + unattr == gpu, f'{procs} + {unattr} != {gpu}'
rapl = b['joulestat_rapl_energy_joules_total{package="0",domain="package"}']
rapl_down = b['joulestat_cpu_unattributed_energy_joules_total{package="0",domain="package",reason="downtime"}']
# about 20 W over the >= 2 s stop (the fake zone's loop slows down on a loaded machine)
assert rapl_down >= 10, f'RAPL downtime {rapl_down} J'
print(f'restart: GPU {gpu} J, downtime {down} J, processes {procs} J; RAPL {rapl} J, '
      f'downtime {rapl_down} J')
EOP

# A stop longer than the RAPL counter's range covers at 1000 W (262 kJ: 262 s): its energy
# is unknown, and the time is said, not guessed.
touch -d '-2 hours' "$state/joulestat.state"
serve_once 5 2
python3 - "$E2E_TMP/m2" "$E2E_TMP/m5" <<'EOP' || e2e_fail "RAPL downtime of unknown energy"
import re, sys
from decimal import Decimal
def value(path, name):
    for line in open(path):
        if line.startswith(name + ' '):
            return Decimal(line.split()[1])
    raise AssertionError(f'{name} missing in {path}')
key = '{package="0",domain="package"}'
unknown = value(sys.argv[2], 'joulestat_rapl_downtime_unknown_seconds_total' + key)
assert 7000 < unknown < 7400, f'unknown downtime {unknown} s'
down = 'joulestat_cpu_unattributed_energy_joules_total{package="0",domain="package",reason="downtime"}'
assert value(sys.argv[2], down) == value(sys.argv[1], down), 'a long stop was guessed'
print(f'restart: {unknown} s of RAPL downtime with unknown energy')
EOP

# A GPU's idle survives a restart: GPU 1 of podres-allocation never runs anything, and the
# 50 W it was seen idling at is in the state file. Sampled every 5 s, the restarted
# joulestat could not see a whole second of idle again before its first scrape, which has
# the idle all the same.
state=$E2E_TMP/state-idle JOULESTAT_SIM_SCENARIO=$src/scenarios/podres-allocation.scn
mkdir -p "$state"
serve_once 6 3
grep -q $'^gpu\tindex=1\t.*\tidle_mw=' "$state/joulestat.state" ||
    e2e_fail "no idle saved: $(cat "$state/joulestat.state")"
SERVE_ARGS="--sample-interval 5s" serve_once 7 0
idle6=$(grep '^joulestat_gpu_idle_power_watts{gpu="1"}' "$E2E_TMP/m6") || e2e_fail "no idle learned"
idle7=$(grep '^joulestat_gpu_idle_power_watts{gpu="1"}' "$E2E_TMP/m7") ||
    e2e_fail "idle not restored: $(grep idle_power "$E2E_TMP/m7")"
# an idle second may be seen between the scrape and the save at exit: the same within 1 W
awk -v a="${idle6##* }" -v b="${idle7##* }" 'BEGIN { exit !(a - b < 1 && b - a < 1) }' ||
    e2e_fail "idle $idle6 before the restart, $idle7 after"
echo "restart: $idle7 kept"

# A corrupt file is set aside, never fatal.
state=$E2E_TMP/state
printf 'joulestat-state 1\ngpu\tindex=zero\n' >"$state/joulestat.state"
serve_once 3 1
[[ -f $state/joulestat.state.bad ]] || e2e_fail "the corrupt state was not set aside"
grep -q "line 2 is not a joulestat state" "$E2E_TMP/log3" || e2e_fail "no clear message: $(cat "$E2E_TMP/log3")"
# A state directory that cannot be written: joulestat runs, says so once, and reports the
# state source down.
state=$E2E_TMP/not-a-directory
: >"$state"
serve_once 4 6
grep -q "cannot open --state-dir" "$E2E_TMP/log4" || e2e_fail "no warning: $(cat "$E2E_TMP/log4")"
grep -q 'state: cannot save the counters to --state-dir' "$E2E_TMP/log4" ||
    e2e_fail "no save error: $(cat "$E2E_TMP/log4")"
grep -q '^joulestat_source_up{source="state"} 0' "$E2E_TMP/m4" || e2e_fail "state not reported down"
grep -q '^joulestat_gpu_energy_joules_total' "$E2E_TMP/m4" || e2e_fail "no GPU energy without a state"
echo "restart: ok"
