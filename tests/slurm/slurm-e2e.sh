#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A real SLURM test: munged, slurmctld and slurmd for this one node (Debian's slurm-wlm),
# srun and sbatch jobs that burn CPU, and joulestat serving from the real /proc with a fake
# RAPL zone whose energy advances by a known amount. The exposition must give CPU energy
# to exactly those job ids, and every job's CPU energy must equal the sum of its processes'
# series plus its unseen part, to the microjoule.
#
# Usage: slurm-e2e.sh BUILD_DIR SOURCE_DIR MODE
#   MODE cgroup:    proctrack/cgroup + task/cgroup (cgroup/v1): jobs found from cgroup paths
#   MODE linuxproc: proctrack/linuxproc, no task plugin: jobs found from SLURM_JOB_ID in
#                   <procfs>/<pid>/environ (the identity fallback)
# Exits 77 (CTest skip) with the reason when the SLURM daemons cannot start here.
set -euo pipefail

build=$1
src=$2
mode=$3

# shellcheck source=tests/slurm/slurm-lib.sh
source "$src/tests/slurm/slurm-lib.sh"
slurm_require munged slurmctld slurmd srun sbatch sinfo squeue scontrol curl

slurm_tmpdir slurm
tmp=$SLURM_TMP

case $mode in
cgroup) slurm_write_config "$tmp" proctrack/cgroup task/cgroup jobacct_gather/cgroup ;;
linuxproc) slurm_write_config "$tmp" proctrack/linuxproc task/none jobacct_gather/none ;;
*) echo "unknown mode $mode" >&2; exit 2 ;;
esac

# The fake RAPL zone (20 W); cgroup files and CPU topology stay real.
# shellcheck source=tests/e2e/fake-rapl.sh
source "$src/tests/e2e/fake-rapl.sh"
e2e_fake_rapl_zone "$tmp/sys"
SLURM_OTHER_PIDS+=("$E2E_FAKE_RAPL_PID")
slurm_start_or_skip "$tmp" "$mode mode"

port=$(slurm_free_port)
"$build/joulestat" serve --no-gpu --rapl-source powercap --path.sysfs "$tmp/sys" \
    --process-scan-interval 500ms --sample-interval 100ms --cpu-process-metrics \
    --listen-address "127.0.0.1:$port" >"$tmp/joulestat.log" 2>&1 &
SLURM_OTHER_PIDS+=($!)
url=http://127.0.0.1:$port/metrics
slurm_wait 10 curl -sf "$url" || fail "joulestat did not come up"

# Each job burns one CPU for 4 s; its first process records its job id and cgroup.
burn='echo $SLURM_JOB_ID >'"$tmp"'/job.$0; cat /proc/self/cgroup >'"$tmp"'/cgroup.$0; '
burn+='end=$((SECONDS + 4)); while ((SECONDS < end)); do :; done'
srun -n1 -J burn-srun bash -c "$burn" srun >"$tmp/srun.out" 2>&1 &
srun_pid=$!
batch_job=$(sbatch --parsable -J burn-batch -o "$tmp/batch.out" --wrap "bash -c '$burn' batch") ||
    fail "sbatch failed"
wait "$srun_pid" || fail "srun failed"
slurm_wait 30 slurm_queue_empty || fail "jobs did not finish"
srun_job=$(cat "$tmp/job.srun")
[[ $(cat "$tmp/job.batch") == "$batch_job" ]] || fail "batch job id mismatch"
echo "jobs: srun $srun_job, sbatch $batch_job ($mode)"
if [[ $mode == cgroup ]]; then
    grep -q "/slurm[^/]*/uid_0/job_${srun_job}/step_0" "$tmp/cgroup.srun" ||
        fail "srun's process is not in a job cgroup: $(tr '\n' ' ' <"$tmp/cgroup.srun")"
fi

sleep 1.5 # three scans after the jobs ended: their last CPU time is in
curl -sf "$url" >"$tmp/metrics.txt" || fail "scrape failed"
python3 "$src/tests/slurm/check_slurm_metrics.py" "$tmp/metrics.txt" "$srun_job" "$batch_job" ||
    fail "SLURM attribution does not match"
echo "PASS: slurm-$mode"
