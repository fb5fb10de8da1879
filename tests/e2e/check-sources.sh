#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `joulestat check` samples the energy sources, twice --sample-interval apart:
#   - the simulated GPU node: energy and power per GPU, its processes with names and
#     per-process samples; processes missing from procfs and a GPU without an energy
#     counter are named as not working, each with its fix;
#   - the RAPL fixture trees, with --path.dev pointing nowhere (powercap needs sysfs only):
#     counters that move give watts, frozen ones are called so with the fix; MSRs without
#     a devices root say what they lack;
#   - serve reads powercap with sysfs alone as well.
# Usage: check-sources.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
. "$src/tests/e2e/lib.sh"
js=$build/joulestat
sim=$build/sim/libnvidia-ml.so.1

run() { # expected-status args...: check's output in $E2E_TMP/out
    local want=$1 got=0
    shift
    "$js" check --kubernetes-enabled=false "$@" >"$E2E_TMP/out" 2>"$E2E_TMP/err" || got=$?
    [[ $got == "$want" ]] || e2e_fail "check $* exited $got, expected $want: $(cat "$E2E_TMP/out" "$E2E_TMP/err")"
}
expect() { grep -qE -- "$1" "$E2E_TMP/out" || e2e_fail "no line '$1' in: $(cat "$E2E_TMP/out")"; }
absent() { grep -qE -- "$1" "$E2E_TMP/out" && e2e_fail "unexpected '$1' in: $(cat "$E2E_TMP/out")"; return 0; }

# The simulated node: two processes (train at 80 %, infer at 20 % SM) on a 70 W GPU.
mkdir -p "$E2E_TMP/proc"
JOULESTAT_SIM_SCENARIO=$src/scenarios/two-process-80-20.scn JOULESTAT_SIM_PROCFS=$E2E_TMP/proc \
    run 0 --nvml-library "$sim" --path.procfs "$E2E_TMP/proc" --rapl-source off --sample-interval 500ms
# (the sleep may run long on a loaded machine: at least the interval, any length after)
expect '^gpu     ok        1 GPU\(s\), sampled twice ([0]\.[5-9]|[1-9])[0-9.]* s apart$'
expect '^        GPU 0 NVIDIA A100-PCIE-40GB \(GPU-0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0\): energy counter \+[0-9]+\.[0-9]{3} J in [0-9.]+ s = [1-9][0-9]*\.[0-9] W; power [0-9.]+ W, then [0-9.]+ W$'
# The energy counter's watts are the GPU's 70 W, whatever the interval really was.
watts=$(sed -n 's/^        GPU 0 .*: energy counter .* = \([0-9.]*\) W; .*/\1/p' "$E2E_TMP/out")
awk -v w="$watts" 'BEGIN { exit !(w > 65 && w < 75) }' || e2e_fail "GPU 0 at $watts W, not 70 W"
expect '^        GPU 0: 2 process\(es\): (2001 train, 2002 infer|2002 infer, 2001 train)$'
expect '^        GPU 0: per-process utilisation: [1-9][0-9]* sample\(s\), for 2 of the 2 process\(es\)$'
expect '^        GPU 0: energy counter: works$'
absent 'does not work'
absent 'fix:'
expect '^rapl    off       --rapl-source=off given'

# The same processes, but not in this procfs (another PID namespace): named as the problem.
mkdir -p "$E2E_TMP/empty"
JOULESTAT_SIM_SCENARIO=$src/scenarios/two-process-80-20.scn \
    run 0 --nvml-library "$sim" --path.procfs "$E2E_TMP/empty" --rapl-source off --sample-interval 300ms
expect '^        GPU 0: 2 process\(es\): .*2001 \(not in procfs\)'
expect "^        does not work: GPU 0's processes are not in $E2E_TMP/empty"
expect '^        fix: run joulestat in the host PID namespace'

# No total-energy counter: energy from power, said so (nothing to fix but the estimate).
JOULESTAT_SIM_SCENARIO=$src/scenarios/fault-no-energy-counter.scn \
    run 0 --nvml-library "$sim" --path.procfs "$E2E_TMP/empty" --rapl-source off --sample-interval 300ms
expect '^        GPU 0 .*: no energy counter; power [0-9.]+ W, then [0-9.]+ W$'
expect '^        does not work: GPU 0 has no total-energy counter'

# MIG on an A100 (no GPM): the instances' activity from DCGM's nv-hostengine when the node
# runs one (the simulated node's library plays libdcgm too), else by their size, said why.
JOULESTAT_SIM_SCENARIO=$src/scenarios/mig-a100-dcgm.scn \
    run 0 --nvml-library "$sim" --dcgm-library "$sim" --path.procfs "$E2E_TMP/empty" \
    --rapl-source off --sample-interval 300ms
expect '^        GPU 0: MIG instance activity \(GPM\): not supported; the DCGM line says'
expect '^        GPU 0: MIG instance activity \(DCGM\): connected to nv-hostengine at 127\.0\.0\.1$'
JOULESTAT_SIM_SCENARIO=$src/scenarios/mig-two-instances.scn \
    run 0 --nvml-library "$sim" --dcgm-library "$sim" --path.procfs "$E2E_TMP/empty" \
    --rapl-source off --sample-interval 300ms
expect '^        GPU 0: MIG instance activity \(DCGM\): not available \(no nv-hostengine answers at the DCGM address\); instances are weighted by their size'
JOULESTAT_SIM_SCENARIO=$src/scenarios/mig-a100-dcgm.scn \
    run 0 --nvml-library "$sim" --dcgm-library "$sim" --dcgm=off --path.procfs "$E2E_TMP/empty" \
    --rapl-source off --sample-interval 300ms
expect '^        GPU 0: MIG instance activity \(DCGM\): off \(--dcgm=off\)'
JOULESTAT_SIM_SCENARIO=$src/scenarios/mig-a100-dcgm.scn \
    run 0 --nvml-library "$sim" --dcgm-library "$E2E_TMP/none.so" --path.procfs "$E2E_TMP/empty" \
    --rapl-source off --sample-interval 300ms
expect '^        GPU 0: MIG instance activity \(DCGM\): not available \(DCGM is not installed'

# RAPL through powercap on a copy of the Skylake-SP tree, no devices root at all.
tree=$E2E_TMP/skx
cp -r "$src/tests/trees/rapl-powercap-skx" "$tree"
rapl_flags=(--no-gpu --path.sysfs "$tree/sys" --path.procfs "$tree/proc" --path.dev "$E2E_TMP/no-dev")
run 1 "${rapl_flags[@]}" --sample-interval 300ms
expect '^rapl    frozen    auto: powercap: 4 zones'
expect '^        package 0 package: did not advance in [0-9]+\.[0-9]{2} s$'
expect '^        fix: a virtual machine may show RAPL counters that never move'

# The package-0 counter moves by 1 mJ every 10 ms (0.1 W); written in place at a fixed
# width, as the kernel's file would change under an open descriptor.
python3 - "$tree/sys/class/powercap/intel-rapl:0/energy_uj" "$E2E_TMP/writing" <<'EOP' &
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY)
for i in range(3000):
    os.pwrite(fd, b"%012d\n" % (100000000000 + 1000 * i), 0)
    if i == 1:
        open(sys.argv[2], "w").close()
    time.sleep(0.01)
EOP
writer=$!
E2E_PIDS+=($writer)
e2e_wait 10 test -e "$E2E_TMP/writing" || e2e_fail "the counter writer did not start"
run 0 "${rapl_flags[@]}" --sample-interval 1s
expect '^rapl    ok        auto: powercap: 4 zones'
expect '^        package 0 package: \+[0-9]+\.[0-9]{3} J in [0-9]+\.[0-9]{2} s = 0\.[0-9] W$'
expect '^        package 1 dram: did not advance'
absent 'does not work'

# serve: the same tree, sysfs alone; RAPL energy is counted and the source is up.
port=$(e2e_free_port)
"$js" serve "${rapl_flags[@]}" --kubernetes-enabled=false --process-scan-interval 200ms \
    --sample-interval 100ms --listen-address "127.0.0.1:$port" 2>"$E2E_TMP/serve.log" &
E2E_PIDS+=($!)
rapl_counted() {
    curl -sf "http://127.0.0.1:$port/metrics" >"$E2E_TMP/m.prom" &&
        grep -qx 'joulestat_source_up{source="rapl"} 1' "$E2E_TMP/m.prom" &&
        grep -qE '^joulestat_rapl_energy_joules_total\{package="0",domain="package"\} 0\.0*[1-9]' "$E2E_TMP/m.prom"
}
e2e_wait 15 rapl_counted || e2e_fail "serve counts no RAPL energy without --path.dev: $(cat "$E2E_TMP/m.prom" "$E2E_TMP/serve.log")"
grep -q 'source="nvml"' "$E2E_TMP/m.prom" && e2e_fail "--no-gpu still exports the nvml source"
# One counter stops reading (its zone gone with its package's CPUs) while the others go on:
# the source stays up, the log says which counter, and that it reads again; what it moved
# meanwhile is counted then (2.0 J -> 2.5 J).
dram=$tree/sys/class/powercap/intel-rapl:1:0/energy_uj
echo "not a number" >"$dram"
unreadable='rapl: 1 of 4 energy counters cannot be read (the first: package 1, die 0, dram)'
e2e_wait 10 grep -qF "$unreadable" "$E2E_TMP/serve.log" ||
    e2e_fail "no line for the unreadable counter: $(cat "$E2E_TMP/serve.log")"
# Scraped to a file: under pipefail, `curl | grep -q` fails whenever grep stops reading first.
curl -sf "http://127.0.0.1:$port/metrics" >"$E2E_TMP/m.prom" || e2e_fail "the scrape failed"
grep -qx 'joulestat_source_up{source="rapl"} 1' "$E2E_TMP/m.prom" ||
    e2e_fail "one unreadable counter took the RAPL source down: $(cat "$E2E_TMP/m.prom")"
echo 2500000 >"$dram"
e2e_wait 10 grep -q "rapl: every energy counter reads again" "$E2E_TMP/serve.log" ||
    e2e_fail "no line for the counter reading again: $(cat "$E2E_TMP/serve.log")"
dram_counted() {
    curl -sf "http://127.0.0.1:$port/metrics" >"$E2E_TMP/m.prom" &&
        grep -qx 'joulestat_rapl_energy_joules_total{package="1",domain="dram"} 0.500000' "$E2E_TMP/m.prom"
}
e2e_wait 10 dram_counted || e2e_fail "the 0.5 J the counter moved while unreadable is not counted"
((  $(grep -cF "$unreadable" "$E2E_TMP/serve.log") == 1 )) || e2e_fail "the unreadable counter was logged more than once"
# The zone registered anew (its package's CPUs back online): the file held open reads
# nothing more, the zone's new file does. That counter alone is opened again after 5 s, the
# others going on, and what it moved meanwhile is counted (2.5 J -> 2.75 J).
echo 2750000 >"$dram.new"
echo "not a number" >"$dram" # what the descriptor held open reads
mv "$dram.new" "$dram"       # what a new open reads
# (Unreadable again a few seconds after it was said: said again only once the backoff of
# that line has passed, 10 s; a counter failing and reading over and over is not a line
# each time.)
dram_again() {
    curl -sf "http://127.0.0.1:$port/metrics" >"$E2E_TMP/m.prom" &&
        grep -qx 'joulestat_rapl_energy_joules_total{package="1",domain="dram"} 0.750000' "$E2E_TMP/m.prom"
}
e2e_wait 20 dram_again || e2e_fail "the counter of the zone registered anew was not opened again: $(grep rapl "$E2E_TMP/m.prom"; cat "$E2E_TMP/serve.log")"
# Each failure said has its recovery said, and none more.
said=$(grep -cF "$unreadable" "$E2E_TMP/serve.log")
(($(grep -c "rapl: every energy counter reads again" "$E2E_TMP/serve.log") == said)) ||
    e2e_fail "not one recovery line for each failure line: $(cat "$E2E_TMP/serve.log")"

# Every counter stops reading while the files open anew (the driver reloaded: the files held
# open read nothing more): joulestat opens them again after 5 s, and what each moved
# meanwhile (1 J) is counted, as no data.
no_data() {
    awk -v want="joulestat_cpu_unattributed_energy_joules_total{package=\"$1\",domain=\"$2\",reason=\"no_data\"}" \
        '$1 == want { print $2 }' "$E2E_TMP/m.prom"
}
kill "$writer" 2>/dev/null || true # it may have ended on a slow run
wait "$writer" 2>/dev/null || true
sleep 0.5 # a scan reads the package counter's last value
curl -sf "http://127.0.0.1:$port/metrics" >"$E2E_TMP/m.prom" || e2e_fail "the scrape failed"
before=$(no_data 1 dram)
[[ -n $before ]] || e2e_fail "no no_data series for package 1 dram: $(cat "$E2E_TMP/m.prom")"
for zone in intel-rapl:0 intel-rapl:0:0 intel-rapl:1 intel-rapl:1:0; do
    f=$tree/sys/class/powercap/$zone/energy_uj
    echo "$(($(cat "$f") + 1000000))" >"$f.new"
    echo "not a number" >"$f" # what the descriptor held open reads
    mv "$f.new" "$f"          # what a new open reads
done
reopened() {
    grep -qE '^.{24} info: rapl: no energy counter has read for [0-9]+ s: opening them again$' \
        "$E2E_TMP/serve.log" && grep -q 'info: rapl: working again' "$E2E_TMP/serve.log"
}
e2e_wait 15 reopened || e2e_fail "the counters were not opened again: $(cat "$E2E_TMP/serve.log")"
grep -q 'warning: rapl: cannot read the energy counters' "$E2E_TMP/serve.log" ||
    e2e_fail "no line for the counters that stopped reading: $(cat "$E2E_TMP/serve.log")"
moved_counted() {
    curl -sf "http://127.0.0.1:$port/metrics" >"$E2E_TMP/m.prom" &&
        grep -qx 'joulestat_source_up{source="rapl"} 1' "$E2E_TMP/m.prom" &&
        grep -qx 'joulestat_rapl_energy_joules_total{package="1",domain="dram"} 1.750000' "$E2E_TMP/m.prom"
}
e2e_wait 10 moved_counted || e2e_fail "the 1 J moved while no counter read is not counted: $(cat "$E2E_TMP/m.prom")"
awk -v a="$before" -v b="$(no_data 1 dram)" 'BEGIN { exit !(b - a > 0.999999 && b - a < 1.000001) }' ||
    e2e_fail "the 1 J moved while no counter read is not no_data ($before J -> $(no_data 1 dram) J)"

# MSRs need the devices root: said so, with the way out.
run 1 "${rapl_flags[@]}" --rapl-source msr --sample-interval 100ms
expect '^rapl    down      msr: the devices root \(--path.dev\) cannot be opened'
expect '^        fix: load the msr module and give joulestat the host.s /dev \(--path.dev\), or use --rapl-source=powercap'
# No RAPL at the start (the module not loaded yet): said once, tried again quietly (5 s, then
# 10 s), and taken up when the zones appear, without a restart.
late=$E2E_TMP/late
mkdir -p "$late/sys/class"
cp -r "$src/tests/trees/rapl-powercap-skx/proc" "$late/proc"
mkdir "$late/sys/class/powercap" "$E2E_TMP/zones"
port=$(e2e_free_port)
"$js" serve --no-gpu --path.sysfs "$late/sys" --path.procfs "$late/proc" \
    --path.dev "$E2E_TMP/no-dev" --kubernetes-enabled=false --sample-interval 100ms \
    --process-scan-interval 200ms --log-level debug --listen-address "127.0.0.1:$port" \
    2>"$E2E_TMP/late.log" &
E2E_PIDS+=($!)
e2e_wait 15 grep -q 'debug: rapl: still cannot be opened' "$E2E_TMP/late.log" ||
    e2e_fail "RAPL was not tried again: $(cat "$E2E_TMP/late.log")"
# All at once, as the module makes them: a try between two copies would find some.
cp -r "$src/tests/trees/rapl-powercap-skx/sys/class/powercap/." "$E2E_TMP/zones/"
mv -T "$E2E_TMP/zones" "$late/sys/class/powercap"
rapl_up() {
    curl -sf "http://127.0.0.1:$port/metrics" >"$E2E_TMP/late.prom" &&
        grep -qx 'joulestat_source_up{source="rapl"} 1' "$E2E_TMP/late.prom"
}
e2e_wait 20 rapl_up || e2e_fail "RAPL was not taken up when its zones appeared: $(cat "$E2E_TMP/late.log")"
grep -q 'info: rapl: using powercap: powercap: 4 zones' "$E2E_TMP/late.log" ||
    e2e_fail "no line for RAPL taken up: $(cat "$E2E_TMP/late.log")"
(($(grep -Ec '(warning|info): rapl: .*no intel-rapl powercap zones' "$E2E_TMP/late.log") == 1)) ||
    e2e_fail "the missing RAPL was said more than once: $(cat "$E2E_TMP/late.log")"
# Opened again after the start, under the system-call filter: nothing it needs is refused.
! grep -h 'seccomp: refused' "$E2E_TMP/serve.log" "$E2E_TMP/late.log" ||
    e2e_fail "opening RAPL again needed a refused system call"
echo "check-sources: ok"
