#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# SLURM jobs and their steps to their last joule, on a real one-node cluster (munged,
# slurmctld, slurmd from Debian's slurm-wlm; proctrack/cgroup, cgroup/v1, PrologFlags=contain)
# shared by jobs of 2 s, 8 s and LONG s (the last in steps: batch, two srun steps, extern)
# plus a three-element array job of 2 s, each burning CPU until its time is up, all at once
# on this node's CPUs. joulestat serves at its default intervals (10 s scans, 1 s ticks)
# from the real /proc and cgroups and a fake RAPL zone whose energy is exactly WATTS x time
# (fake_rapl_clock.py), so a fair CPU share is WATTS / CPUs x CPU time. Each srun step reads
# its own step cgroup's CPU time as its last command, the batch script its step's and the
# job's: that is the truth.
#
# Checks (check_last_joule.py): every job is there, shorter-than-a-scan ones included, with
# its extern and batch steps; each job's and each step's CPU energy is within 2 % of
# WATTS / CPUs x its CPU time; a job's steps add up to the job to the microjoule; the
# array's elements carry array_job_id and array_task_id; the zone's energy equals the
# workloads' plus the unattributed parts to the microjoule. A second joulestat with
# --slurm-watch=false runs beside it, and its figures are printed for comparison.
#
# Usage: slurm-last-joule.sh BUILD_DIR SOURCE_DIR [LONG_SECONDS]   (default 20, at least 12)
# Exits 77 (CTest skip) with the reason when the SLURM daemons cannot start here.
set -euo pipefail

build=$1
src=$2
long=${3:-20}
watts=20

# shellcheck source=tests/slurm/slurm-lib.sh
source "$src/tests/slurm/slurm-lib.sh"
slurm_require munged slurmctld slurmd sbatch sinfo squeue scontrol curl python3

slurm_tmpdir lastjoule
tmp=$SLURM_TMP
slurm_fake_rapl "$tmp" "$watts"

slurm_write_config "$tmp" proctrack/cgroup task/cgroup jobacct_gather/cgroup
echo "PrologFlags=contain" >>"$tmp/slurm.conf" # every job gets an extern step
slurm_own_job_ids "$tmp"
slurm_start_or_skip "$tmp"

start_joulestat() { # NAME FLAGS...: sets url_NAME
    local name=$1 port
    shift
    port=$(slurm_free_port)
    "$build/joulestat" serve --no-gpu --rapl-source powercap --path.sysfs "$tmp/sys" \
        --listen-address "127.0.0.1:$port" "$@" >"$tmp/joulestat-$name.log" 2>&1 &
    SLURM_OTHER_PIDS+=($!)
    printf -v "url_$name" 'http://127.0.0.1:%s/metrics' "$port"
}
# At debug level, so that a failure shows what the watch saw of each job.
start_joulestat watch --log-level debug
start_joulestat nowatch --slurm-watch=false
# shellcheck disable=SC2154 # url_watch and url_nowatch are set by start_joulestat
{
    slurm_wait 10 curl -sf "$url_watch" || fail "joulestat did not come up"
    slurm_wait 10 curl -sf "$url_nowatch" || fail "joulestat (no watch) did not come up"
}
sleep 1 # a first scan: the jobs start after joulestat's baseline

# burn.sh SECS: burns CPU for SECS s of wall time; in an srun step it then writes its step
# cgroup's CPU time (ns) to usage.<job>.<step>, with shell builtins only (a cat's fork and
# exec after its read is CPU time the truth would leave out: 10-40 ms on a loaded node).
# finish.sh, the batch script's last commands: the batch step's and the whole job's
# (usage.<job>.batch, usage.<job>), and an array element's SLURM_ARRAY_JOB_ID and
# SLURM_ARRAY_TASK_ID (array.<job>).
h=$(hostname -s)
cg=/sys/fs/cgroup/cpuacct/slurm_$h/uid_0
cat >"$tmp/burn.sh" <<EOF
end=\$(( \${EPOCHREALTIME/./} + \$1 * 1000000 ))
while (( \${EPOCHREALTIME/./} < end )); do :; done
[[ -z \${SLURM_STEP_ID:-} ]] || {
    read -r u <$cg/job_\$SLURM_JOB_ID/step_\$SLURM_STEP_ID/cpuacct.usage
    echo "\$u" >$tmp/usage.\$SLURM_JOB_ID.\$SLURM_STEP_ID
}
EOF
cat >"$tmp/finish.sh" <<EOF
read -r u <$cg/job_\$SLURM_JOB_ID/step_batch/cpuacct.usage
echo "\$u" >$tmp/usage.\$SLURM_JOB_ID.batch
read -r u <$cg/job_\$SLURM_JOB_ID/cpuacct.usage
echo "\$u" >$tmp/usage.\$SLURM_JOB_ID
[[ -z \${SLURM_ARRAY_JOB_ID:-} ]] ||
    echo "\$SLURM_ARRAY_JOB_ID \$SLURM_ARRAY_TASK_ID" >$tmp/array.\$SLURM_JOB_ID
EOF
jobs=()
for secs in 2 8; do
    j=$(sbatch --parsable -J "burn$secs" -o /dev/null \
        --wrap "bash $tmp/burn.sh $secs; bash $tmp/finish.sh") || fail "sbatch failed"
    jobs+=("$j")
done
# The long job: its batch step, two srun steps and the extern step (PrologFlags=contain).
steps="bash $tmp/burn.sh 3; srun -n1 bash $tmp/burn.sh $((long - 10)); srun -n1 bash $tmp/burn.sh 5"
j=$(sbatch --parsable -J "burn$long" -o /dev/null --wrap "$steps; bash $tmp/finish.sh") ||
    fail "sbatch failed"
jobs+=("$j")
array=$(sbatch --parsable -J burn-array --array=0-2 -o /dev/null \
    --wrap "bash $tmp/burn.sh 2; bash $tmp/finish.sh") || fail "sbatch --array failed"
slurm_wait $((long + 60)) slurm_queue_empty || fail "jobs did not finish"
# The array's elements: their own job ids, found from the files they wrote.
for f in "$tmp"/array.*; do
    [[ -e $f ]] && jobs+=("${f##*.}")
done
((${#jobs[@]} == 6)) || fail "expected 6 jobs (3 + an array of 3), have ${jobs[*]}"
echo "jobs: ${jobs[*]} (array $array; long job $long s: steps batch, 0, 1, extern)"

# The watching joulestat marks a job inactive once its last CPU time is booked.
all_ended() {
    local m j
    m=$(curl -sf "$url_watch") || return 1
    for j in "${jobs[@]}"; do
        grep -Eq "^joulestat_slurm_job_active\{job_id=\"$j\"[,}].* 0$" <<<"$m" || return 1
    done
}
# What each job's series says, for a failure: still active, ended, or never seen.
job_states() {
    local m j line
    m=$(curl -sf "$url_watch") || { echo "(scrape failed)"; return; }
    for j in "${jobs[@]}"; do
        line=$(grep -E "^joulestat_slurm_job_active\{job_id=\"$j\"[,}]" <<<"$m" | head -1)
        echo "job $j: ${line:-no series}"
    done
    echo "--- every job and step series:"
    grep -E '^joulestat_slurm_(job|step)_active' <<<"$m"
    echo "--- what the watch said:"
    grep -E 'slurm' "$tmp/joulestat-watch.log" | tail -60
}
slurm_wait 30 all_ended || fail "joulestat did not book every job's end: $(job_states)"
# The other one: until a scan after the jobs ended (the zone is read at scans only).
rapl_of() { curl -sf "$1" | awk '/^joulestat_rapl_energy_joules_total/ {print $2}'; }
before=$(rapl_of "$url_nowatch")
rapl_moved() { [[ $(rapl_of "$url_nowatch") != "$before" ]]; }
slurm_wait 30 rapl_moved || fail "joulestat (no watch) did not scan"
curl -sf "$url_watch" >"$tmp/watch.prom" || fail "scrape failed"
curl -sf "$url_nowatch" >"$tmp/nowatch.prom" || fail "scrape failed"

# On a failure, what the daemons said of RAPL and their warnings, beside their logs' ends.
said() { grep -hE 'Z (warning|error): |rapl' "$tmp"/joulestat-*.log | grep -v 'Z debug: ' | tail -40; }
python3 "$src/tests/slurm/check_last_joule.py" "$watts" "$tmp" "$tmp/watch.prom" \
    "$tmp/nowatch.prom" "$array" "${jobs[@]}" ||
    fail "SLURM jobs are not booked to their last joule; the daemons said: $(said)"
echo "PASS: slurm-last-joule (long job $long s)"
