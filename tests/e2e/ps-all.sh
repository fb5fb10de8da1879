#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `joulestat ps --all`: every process with its identity, even idle ones, GPU and CPU
# energy of one window next to each other; table and JSON.
#   1. fixture tree (procfs-slurm-environ + procfs-kubepods pids): exact identities, pid
#      order, kernel threads, jobs from cgroup and from environ, zero energy;
#   2. the simulated GPU node: GPU energy on the processes the simulator runs;
#   3. the real /proc with a fake RAPL zone (+2 J per 100 ms) and a CPU burner: the burner
#      gets CPU energy, and no more is handed out than the zone measured;
#   4. errors: an unusable --path.procfs exits 1 with the reason.
# Usage: ps-all.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
. "$src/tests/e2e/lib.sh"
js=$build/joulestat
sim=$build/sim/libnvidia-ml.so.1

run() {
    local got=0
    "$@" >"$E2E_TMP/out" 2>"$E2E_TMP/err" || got=$?
    [[ $got == 0 ]] || e2e_fail "'$*' exited $got: $(cat "$E2E_TMP/err")"
}

# 1. Fixture identities.
proc=$E2E_TMP/proc
mkdir -p "$proc"
cp -r "$src"/tests/trees/procfs-slurm-environ/* "$proc/"
cp -r "$src"/tests/trees/procfs-kubepods/100[0-9] "$proc/"
run "$js" ps --all --json --no-gpu --rapl-source off --sample-interval 100ms --path.procfs "$proc"
python3 - "$E2E_TMP/out" <<'EOP' || e2e_fail "ps --all --json (fixture): $(cat "$E2E_TMP/out")"
import json, sys
rows = json.load(open(sys.argv[1]))
pids = [r["pid"] for r in rows]
assert pids == sorted(pids) and pids == [1001, 1002, 1003, 1004, 1005] + list(range(3001, 3011)), pids
by = {r["pid"]: r for r in rows}
def has(pid, **want):
    got = {k: by[pid][k] for k in want}
    assert got == want, (pid, got, want)
has(3001, name="lmp_mpi", kind="slurm_job", slurm_job="77", slurm_step="0", slurm_job_source="environ")
has(3002, kind="slurm_job", slurm_job="78", slurm_step="", slurm_job_source="environ",
    systemd_unit="slurmd.service")
has(3003, kind="systemd_service", slurm_job="", systemd_unit="sshd.service")
has(3007, kind="none", kernel_thread=True, name="kworker/0:1")
has(3008, kind="slurm_job", slurm_job="4824887", slurm_step="0", slurm_job_source="cgroup")
has(3010, kind="none", slurm_job="", systemd_unit="slurmstepd.scope")
for r in rows:
    assert r["live"] and r["state"] == "S" and r["gpus"] == [], r
    assert r["gpu_energy_measured_joules"] == 0 and r["cpu_energy_joules"] == 0, r
    assert r["cpu_energy_by_domain_joules"] == {}, r   # RAPL off: no domains
pods = [r for r in rows if r["kind"] == "pod"]
assert len(pods) >= 3 and all(r["pod_uid"] and r["qos"] for r in pods), pods
assert all(r["runtime"] for r in pods if r["container_id"]), pods
EOP
run "$js" ps --all --no-gpu --rapl-source off --sample-interval 100ms --path.procfs "$proc"
head -1 "$E2E_TMP/out" | grep -q "^PID .*KIND .*POD_UID .*JOB .*GPU_J .*CPU_J$" ||
    e2e_fail "ps --all table header: $(head -1 "$E2E_TMP/out")"
[[ $(wc -l <"$E2E_TMP/out") == 16 ]] || e2e_fail "ps --all table: not 15 rows"
grep -qE "^3001 +lmp_mpi +slurm_job +- +- +- +77 +- +0\.000000 +0\.000000$" "$E2E_TMP/out" ||
    e2e_fail "ps --all table row 3001: $(grep ^3001 "$E2E_TMP/out")"
grep -qE "^3007 +kworker/0:1 +kernel " "$E2E_TMP/out" || e2e_fail "kernel thread row"

# 2. The simulated GPU node (its fake procfs holds only its own processes).
mkdir -p "$E2E_TMP/simproc"
JOULESTAT_SIM_SCENARIO="$src/scenarios/dcgm-three-pods.scn" JOULESTAT_SIM_PROCFS="$E2E_TMP/simproc" \
    run "$js" ps --all --json --nvml-library "$sim" --path.procfs "$E2E_TMP/simproc" \
    --rapl-source off --sample-interval 3s
python3 - "$E2E_TMP/out" <<'EOP' || e2e_fail "ps --all --json (sim): $(cat "$E2E_TMP/out")"
import json, sys
rows = json.load(open(sys.argv[1]))
assert [r["name"] for r in rows] == ["heavy", "medium", "light"], rows
for r in rows:
    assert r["gpus"] == [0] and r["kind"] == "pod" and r["runtime"] == "containerd", r
assert rows[0]["gpu_energy_measured_joules"] + rows[0]["gpu_energy_estimated_joules"] > 0, rows
EOP

# 3. Real /proc, fake RAPL zone, one process burning a CPU. CPU energy goes to workloads'
#    processes only (the rest is "system"), so the burner is a SLURM job by its
#    environment (the fallback for nodes without Slurm cgroups; this VM's cgroups are "/").
e2e_fake_rapl_zone "$E2E_TMP/sys"
E2E_PIDS+=("$E2E_FAKE_RAPL_PID")
SLURM_JOB_ID=4242 bash -c 'while :; do :; done' &
burner=$!
E2E_PIDS+=($burner)
run "$js" ps --all --json --no-gpu --rapl-source powercap --path.sysfs "$E2E_TMP/sys" \
    --sample-interval 1s
python3 - "$E2E_TMP/out" "$burner" <<'EOP' || e2e_fail "ps --all --json (real /proc): $(grep -c pid "$E2E_TMP/out") rows"
import json, sys
from decimal import Decimal
rows = json.load(open(sys.argv[1]), parse_float=Decimal)
burner = [r for r in rows if r["pid"] == int(sys.argv[2])]
assert len(burner) == 1 and burner[0]["live"], burner
b = burner[0]
assert b["kind"] == "slurm_job" and b["slurm_job"] == "4242", b
assert b["slurm_job_source"] == "environ", b
assert b["cpu_energy_joules"] > 0, b
assert b["cpu_energy_by_domain_joules"]["package"] == b["cpu_energy_joules"], b
total = sum(r["cpu_energy_joules"] for r in rows)
# One window of ~1 s at 20 W: what was handed out cannot exceed what the zone measured
# across the window (a few 2 J steps; 1.3 s of slack for the two ticks' timing).
assert 0 < total <= Decimal(26), total
assert len(rows) > 10 and any(r["kernel_thread"] for r in rows), len(rows)
EOP

# Plain ps lists only what used a GPU or the CPU in the window: the burner, not an idle
# process of the same job.
SLURM_JOB_ID=4242 sleep 600 &
sleeper=$!
E2E_PIDS+=($sleeper)
run "$js" ps --json --no-gpu --rapl-source powercap --path.sysfs "$E2E_TMP/sys" \
    --sample-interval 1s
python3 - "$E2E_TMP/out" "$burner" "$sleeper" <<'EOP' || e2e_fail "ps --json (real /proc): $(cat "$E2E_TMP/out")"
import json, sys
rows = json.load(open(sys.argv[1]))
pids = {r["pid"] for r in rows}
assert int(sys.argv[2]) in pids, "the burner is missing"
assert int(sys.argv[3]) not in pids, "an idle process is listed"
assert all(r["cpu_energy_joules"] > 0 or r["gpus"] for r in rows), rows
EOP
run "$js" ps --no-gpu --rapl-source powercap --path.sysfs "$E2E_TMP/sys" --sample-interval 1s
grep -Eq "^$burner +bash .* 4242 " "$E2E_TMP/out" || e2e_fail "ps table: $(cat "$E2E_TMP/out")"

# 4. Errors.
got=0
"$js" ps --all --no-gpu --rapl-source off --sample-interval 100ms \
    --path.procfs "$E2E_TMP/no-such-dir" >"$E2E_TMP/out" 2>"$E2E_TMP/err" || got=$?
[[ $got == 1 ]] || e2e_fail "ps --all on a missing procfs exited $got"
grep -q "no-such-dir" "$E2E_TMP/err" || e2e_fail "no reason: $(cat "$E2E_TMP/err")"
echo "ps-all: ok"
