#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# deploy/slurm/joulestat-slurm-epilog without a cluster: curl and sacctmgr are stubs on PATH
# (slurm-acct runs it against real slurmdbd). It always exits 0 (a failing Epilog drains
# the node), a timeout that is not a number included; the job's figure is written once its
# joulestat_slurm_job_active is 0; a job still active at the timeout is written "partial";
# and where joulestat does not answer at all, or has no series of the job, nothing is
# written (no false 0 J) and the job is not held for the whole timeout; a sacctmgr that
# hangs is given 10 s, once.
# Usage: epilog-check.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
src=$2
. "$src/tests/e2e/lib.sh"
epilog=$src/deploy/slurm/joulestat-slurm-epilog
bin=$E2E_TMP/bin
mkdir -p "$bin"
# curl: prints $E2E_TMP/metrics, or fails as on a closed port when it does not exist.
cat >"$bin/curl" <<EOS
#!/bin/sh
[ -f "$E2E_TMP/metrics" ] || exit 7
cat "$E2E_TMP/metrics"
EOS
# sacctmgr: records its arguments, answers as a modification does; with $E2E_TMP/hang, it
# never answers (slurmdbd behind a firewall that drops its packets).
cat >"$bin/sacctmgr" <<EOS
#!/bin/sh
printf '%s\n' "\$*" >>"$E2E_TMP/sacctmgr.log"
[ ! -e "$E2E_TMP/hang" ] || exec sleep 600
echo " Modified jobs..."
EOS
chmod +x "$bin/curl" "$bin/sacctmgr"

run() { # run TIMEOUT: the epilog for job 42; its exit status must be 0
    rm -f "$E2E_TMP/sacctmgr.log"
    PATH=$bin:$PATH SLURM_JOB_ID=42 JOULESTAT_EPILOG_TIMEOUT=$1 sh "$epilog" ||
        e2e_fail "epilog exited $? (timeout '$1')"
}
metrics() { # metrics ACTIVE
    cat >"$E2E_TMP/metrics" <<EOM
joulestat_slurm_job_active{job_id="42",user="u"} $1
joulestat_slurm_job_active{job_id="420",user="u"} 0
joulestat_slurm_job_energy_joules_total{job_id="42",user="u",component="cpu"} 12.5
joulestat_slurm_job_energy_joules_total{job_id="42",user="u",component="gpu"} 100.25
joulestat_slurm_step_energy_joules_total{job_id="42",step="batch",user="u",component="cpu"} 12.5
joulestat_slurm_step_energy_joules_total{job_id="42",step="batch",user="u",component="gpu"} 100.25
EOM
}

metrics 0
for timeout in 08 99999999999999999999; do # octal to the shell; too large for it
    run "$timeout"
    grep -q 'energy_j=112.750 .*steps=batch:112.750$' "$E2E_TMP/sacctmgr.log" ||
        e2e_fail "timeout '$timeout': $(cat "$E2E_TMP/sacctmgr.log")"
done
run 30s # not a number: the default, not a shell error
grep -qx -- '-i modify job where jobid=42 set AdminComment=joulestat energy_j=112.750 cpu_j=12.500 gpu_j=100.250 steps=batch:112.750' \
    "$E2E_TMP/sacctmgr.log" || e2e_fail "final figure: $(cat "$E2E_TMP/sacctmgr.log")"
echo "ok: the figure once the job is booked, whatever the timeout says"

metrics 1
run 1
grep -q 'energy_j=112.750 .* partial$' "$E2E_TMP/sacctmgr.log" ||
    e2e_fail "partial figure: $(cat "$E2E_TMP/sacctmgr.log")"
echo "ok: a job still active at the timeout is partial"

touch "$E2E_TMP/hang"
metrics 0
start=$(date +%s)
run 30
(($(date +%s) - start < 20)) || e2e_fail "held the job $(($(date +%s) - start)) s on a hung sacctmgr"
(($(wc -l <"$E2E_TMP/sacctmgr.log") == 1)) || e2e_fail "a hung sacctmgr was retried"
rm "$E2E_TMP/hang"
echo "ok: a hung sacctmgr is given 10 s, once"

grep -v 'job_id="42"' "$E2E_TMP/metrics" >"$E2E_TMP/metrics.other"
mv "$E2E_TMP/metrics.other" "$E2E_TMP/metrics"
start=$(date +%s)
run 30
(($(date +%s) - start < 15)) || e2e_fail "held the job $(($(date +%s) - start)) s, never seen"
[[ ! -e $E2E_TMP/sacctmgr.log ]] || e2e_fail "wrote a job never seen: $(cat "$E2E_TMP/sacctmgr.log")"
echo "ok: a job joulestat has no series of: nothing written, the job not held"

rm -f "$E2E_TMP/metrics"
start=$(date +%s)
run 30
(($(date +%s) - start < 15)) || e2e_fail "held the job $(($(date +%s) - start)) s with joulestat down"
[[ ! -e $E2E_TMP/sacctmgr.log ]] || e2e_fail "wrote with joulestat down: $(cat "$E2E_TMP/sacctmgr.log")"
echo "ok: joulestat down: nothing written, the job not held"
echo "PASS: epilog"
