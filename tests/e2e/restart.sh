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
mkdir -p "$state" "$proc/sys/kernel/random"
# The boot the node is in, as the kernel names it: the state is saved with it.
echo 6d0f7a52-2f4e-4c1b-9a0e-boot-one >"$proc/sys/kernel/random/boot_id"
e2e_fake_rapl_zone "$E2E_TMP/sys"
E2E_PIDS+=("$E2E_FAKE_RAPL_PID")
export JOULESTAT_SIM_SCENARIO=$src/scenarios/dcgm-three-pods.scn JOULESTAT_SIM_PROCFS=$proc
JOULESTAT_SIM_START_TIME=$(date +%s)
export JOULESTAT_SIM_START_TIME

# serve_once N SECONDS: serves for about SECONDS, saves /metrics to $E2E_TMP/mN, stops
# (with SIGTERM, or the signal in STOP_SIGNAL).
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
    kill "-${STOP_SIGNAL:-TERM}" "$pid"
    if [[ ${STOP_SIGNAL:-TERM} == TERM ]]; then
        wait "$pid" || e2e_fail "exporter $1 did not exit cleanly: $(tail -3 "$E2E_TMP/log$1")"
    else
        wait "$pid" || true
    fi
}

# Every energy counter of the scrape in $1 is in $2, none lower; then the Python in $3, if
# any, on the counters of $2 (b, a dict by series).
none_went_back() {
    python3 - "$1" "$2" "${3:-}" <<'EOP'
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
exec(sys.argv[3])
EOP
}

# The RAPL zone of the scrape in $2 was not bridged since the one in $1 (its downtime
# energy is the same) and its time unknown grew by more than $3 s and less than $4 s.
rapl_not_bridged() {
    python3 - "$@" <<'EOP'
import sys
from decimal import Decimal
def value(path, name, missing=None):
    for line in open(path):
        if line.startswith(name + ' '):
            return Decimal(line.split()[1])
    if missing is not None:
        return missing
    raise AssertionError(f'{name} missing in {path}')
before, after, low, high = sys.argv[1], sys.argv[2], Decimal(sys.argv[3]), Decimal(sys.argv[4])
key = '{package="0",domain="package"}'
down = 'joulestat_cpu_unattributed_energy_joules_total{package="0",domain="package",reason="downtime"}'
assert value(after, down) == value(before, down), 'a stop was bridged, its energy guessed'
unknown = 'joulestat_rapl_downtime_unknown_seconds_total' + key
grew = value(after, unknown) - value(before, unknown, Decimal(0))
assert low < grew < high, f'unknown downtime grew {grew} s'
print(f'restart: {grew} s more of RAPL downtime with unknown energy')
EOP
}

serve_once 1 3
[[ -s $state/joulestat.state ]] || e2e_fail "no state file after a clean stop"
sleep 2
serve_once 2 2
grep -q "counters restored" "$E2E_TMP/log2" || e2e_fail "nothing restored: $(cat "$E2E_TMP/log2")"

none_went_back "$E2E_TMP/m1" "$E2E_TMP/m2" "$(cat <<'EOP'
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
)" || e2e_fail "counters across the restart"

# A stop longer than the RAPL counter's range covers at 1000 W (262 kJ: 262 s): its energy
# is unknown, and the time is said, not guessed. Where the boot cannot be told, the wall
# clock says how long: the state is made 2 hours older by it (the boot clock's case, which
# the machine's uptime may not allow, is test-ledger-state's).
mv "$proc/sys/kernel/random/boot_id" "$E2E_TMP/boot_id"
python3 - "$state/joulestat.state" <<'EOP'
import re, sys
path = sys.argv[1]
text = open(path).read()
text = re.sub(r'^(host\t.*\twall_us=)(\d+)', lambda m: m[1] + str(int(m[2]) - 7200 * 10**6),
              text, count=1, flags=re.M)
# the end line's sum: FNV-1a (64 bits) of everything before the end line
body = text[:text.index('\nend\t') + 1]
h = 0xcbf29ce484222325
for byte in body.encode():
    h = ((h ^ byte) * 0x100000001b3) % 2**64
text = re.sub(r'\tsum=[0-9a-f]{16}$', f'\tsum={h:016x}', text, count=1, flags=re.M)
open(path, 'w').write(text)
EOP
serve_once 5 2
mv "$E2E_TMP/boot_id" "$proc/sys/kernel/random/boot_id"
rapl_not_bridged "$E2E_TMP/m2" "$E2E_TMP/m5" 7000 7400 || e2e_fail "RAPL downtime of unknown energy"

# A GPU's idle survives a restart: GPU 1 of podres-allocation never runs anything, and the
# 50 W it was seen idling at is in the state file. Sampled every 5 s, the restarted
# joulestat could not see a whole second of idle again before its first scrape, which has
# the idle all the same: the 10th percentile of the observations the file holds (those of
# the first run up to its exit, which may be more than its last scrape had).
state=$E2E_TMP/state-idle JOULESTAT_SIM_SCENARIO=$src/scenarios/podres-allocation.scn
mkdir -p "$state"
serve_once 6 3
saved=$(grep $'^gpu\tindex=1\t' "$state/joulestat.state" | tr '\t' '\n' | sed -n 's/^idle_mw=//p')
[[ -n $saved ]] || e2e_fail "no idle saved: $(cat "$state/joulestat.state")"
SERVE_ARGS="--sample-interval 5s" serve_once 7 0
idle7=$(grep '^joulestat_gpu_idle_power_watts{gpu="1"}' "$E2E_TMP/m7") ||
    e2e_fail "idle not restored: $(grep idle_power "$E2E_TMP/m7")"
python3 - "$saved" "${idle7##* }" <<'EOP' || e2e_fail "idle $idle7 after the restart, saved $saved mW"
import sys
mw = sorted(int(v) for v in sys.argv[1].split(','))
want = mw[(len(mw) - 1) * 10 // 100] / 1000
assert abs(float(sys.argv[2]) - want) < 0.001, f'{sys.argv[2]} W, {want} W saved'
EOP
echo "restart: $idle7 kept"

# Killed (an OOM kill, SIGKILL after the grace period): nothing a scrape got was ahead of
# the last save, so no counter goes back when it comes back.
state=$E2E_TMP/state
STOP_SIGNAL=KILL serve_once 8 4
serve_once 9 0
none_went_back "$E2E_TMP/m8" "$E2E_TMP/m9" || e2e_fail "counters across a SIGKILL"

# A reboot: RAPL's counters started again, so none is bridged over the stop (its time is
# said, unknown), and the GPU's counter counts since the driver loaded, all of it downtime.
echo 6d0f7a52-2f4e-4c1b-9a0e-boot-two >"$proc/sys/kernel/random/boot_id"
serve_once 10 2
grep -q "raw counters are not continued" "$E2E_TMP/log10" || e2e_fail "reboot not seen: $(cat "$E2E_TMP/log10")"
rapl_not_bridged "$E2E_TMP/m9" "$E2E_TMP/m10" 0 1e9 || e2e_fail "RAPL across a reboot"

# A corrupt file is set aside, never fatal; so is one that cannot be read (here a
# directory in its place), which the next save would otherwise overwrite.
printf 'joulestat-state 1\ngpu\tindex=zero\n' >"$state/joulestat.state"
serve_once 3 1
[[ -f $state/joulestat.state.bad ]] || e2e_fail "the corrupt state was not set aside"
grep -q "line 2 is not a whole joulestat state" "$E2E_TMP/log3" || e2e_fail "no clear message: $(cat "$E2E_TMP/log3")"
rm -rf "$state"/joulestat.state*
mkdir "$state/joulestat.state"
serve_once 11 1
[[ -d $state/joulestat.state.bad && -f $state/joulestat.state ]] ||
    e2e_fail "an unreadable state was not set aside: $(ls -l "$state")"
grep -q "cannot read .*set aside" "$E2E_TMP/log11" || e2e_fail "no clear message: $(cat "$E2E_TMP/log11")"
# A save that fails after others succeeded (here the temporary file cannot be made): the
# last saved state goes, or a restart would take the counters down to it.
rm -rf "$state"/joulestat.state*
serve_once 12 1
[[ -f $state/joulestat.state ]] || e2e_fail "no state saved"
serve_once 13 2 &
sleep 1.5
mkdir "$state/joulestat.state.tmp"
wait $! || e2e_fail "exporter 13"
[[ ! -e $state/joulestat.state ]] || e2e_fail "the state left behind by failed saves is kept"
grep -q 'cannot save the counters to --state-dir (a last saved file that this one did not replace is removed' \
    "$E2E_TMP/log13" || e2e_fail "no save error: $(cat "$E2E_TMP/log13")"
rm -rf "$state/joulestat.state.tmp"

# Two at once on one state directory (a second one started by hand beside the unit): the
# second says so, reports the state down, and neither reads nor writes the first's file.
serve_once 14 4 &
first=$!
e2e_wait 10 test -f "$state/joulestat.state" || e2e_fail "the first saved nothing"
serve_once 15 1
wait $first || e2e_fail "exporter 14"
grep -q "state: --state-dir $state is in use by another joulestat" "$E2E_TMP/log15" ||
    e2e_fail "the second did not say: $(cat "$E2E_TMP/log15")"
grep -q '^joulestat_source_up{source="state"} 0' "$E2E_TMP/m15" || e2e_fail "state not down (second)"
grep -q '^joulestat_source_up{source="state"} 1' "$E2E_TMP/m14" || e2e_fail "state down (first)"
! grep -q 'state: .* counters restored' "$E2E_TMP/log15" || e2e_fail "the second read the first's state"
# The first gone, the second, still running, takes the directory over at its next save.
serve_once 16 1 &
second=$!
e2e_wait 10 grep -q 'state: .* counters restored' "$E2E_TMP/log16" || e2e_fail "exporter 16 restored nothing"
serve_once 17 6
wait $second || e2e_fail "exporter 16"
grep -q "state: --state-dir $state is in use by another joulestat" "$E2E_TMP/log17" ||
    e2e_fail "the second did not wait: $(cat "$E2E_TMP/log17")"
grep -q "state: --state-dir $state is free now" "$E2E_TMP/log17" ||
    e2e_fail "the second never took the directory over: $(cat "$E2E_TMP/log17")"
grep -q '^joulestat_source_up{source="state"} 1' "$E2E_TMP/m17" || e2e_fail "state still down"

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
