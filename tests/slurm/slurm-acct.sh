#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Energy in sacct, end to end: MariaDB and slurmdbd beside munged, slurmctld and slurmd (all
# Debian's, on loopback, in a temporary directory), AccountingStoreFlags=job_comment and
# deploy/slurm/joulestat-slurm-epilog as the Epilog. Two CPU-burning jobs (the second in
# two steps: its batch step, then an srun step) share the node with joulestat serving at
# its default intervals on a fake RAPL zone of exactly 20 W.
# Checks: `sacct -j N -o AdminComment` shows each job's energy as joulestat attributed it
# (final, not partial, and equal to joulestat's figure) and its steps' energies, which add
# up to it; the jobs' energies add up to at most the zone's energy (no job gets the whole
# node's).
#
# Usage: slurm-acct.sh BUILD_DIR SOURCE_DIR  (make slurm-acct; about a minute)
# Exits 77 (skip) with the reason when a daemon is missing or cannot start here.
set -euo pipefail

build=$1
src=$2
watts=20

# shellcheck source=tests/slurm/slurm-lib.sh
source "$src/tests/slurm/slurm-lib.sh"
slurm_require munged slurmctld slurmd slurmdbd sacct sacctmgr sbatch mariadbd mariadb-install-db curl python3

slurm_tmpdir acct
tmp=$SLURM_TMP

# MariaDB on a free loopback port, its own data directory, root by socket and TCP.
db_port=$(slurm_free_port)
mariadb-install-db --no-defaults --datadir="$tmp/db" --user=root \
    --auth-root-authentication-method=normal >"$tmp/mariadb-install.log" 2>&1 ||
    { echo "SKIP: mariadb-install-db failed"; tail -5 "$tmp/mariadb-install.log"; exit $SLURM_SKIP; }
mariadbd --no-defaults --datadir="$tmp/db" --user=root --bind-address=127.0.0.1 \
    --port="$db_port" --socket="$tmp/mysql.sock" --pid-file="$tmp/mariadb.pid" \
    --skip-log-bin --innodb-buffer-pool-size=32M >"$tmp/mariadb.log" 2>&1 &
SLURM_LAST_PIDS+=($!)
slurm_wait 60 test -S "$tmp/mysql.sock" || { echo "SKIP: MariaDB does not start"; exit $SLURM_SKIP; }

# The cluster's configuration with accounting through slurmdbd and the epilog.
slurm_write_config "$tmp" proctrack/cgroup task/cgroup jobacct_gather/cgroup
slurm_own_job_ids "$tmp"
dbd_port=$(slurm_free_port)
js_port=$(slurm_free_port)
sed -i "s|^AccountingStorageType=.*|AccountingStorageType=accounting_storage/slurmdbd\n\
AccountingStorageHost=127.0.0.1\nAccountingStoragePort=$dbd_port\n\
AccountingStoragePass=$tmp/munge.socket\n\
AccountingStoreFlags=job_comment\nEpilog=$tmp/epilog|" "$tmp/slurm.conf"
cat >"$tmp/slurmdbd.conf" <<CONF
AuthType=auth/munge
AuthInfo=socket=$tmp/munge.socket
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$dbd_port
SlurmUser=root
PidFile=$tmp/slurmdbd.pid
LogFile=$tmp/slurmdbd.log
DebugLevel=info
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$db_port
StorageUser=root
StorageLoc=joulestat_acct
CONF
chmod 0600 "$tmp/slurmdbd.conf"
cat >"$tmp/epilog" <<SH
#!/bin/sh
export SLURM_CONF=$tmp/slurm.conf JOULESTAT_URL=http://127.0.0.1:$js_port/metrics
exec $src/deploy/slurm/joulestat-slurm-epilog
SH
chmod 0755 "$tmp/epilog"

# slurmdbd between munged and slurmctld (which registers with it).
slurm_start_munge "$tmp" || fail "munged did not start"
slurmdbd -D >>"$tmp/slurmdbd.log" 2>&1 &
SLURM_PIDS+=($!)
slurm_wait 60 sacctmgr -i -n list cluster || fail "slurmdbd did not come up: $(sacctmgr -i -n list cluster 2>&1)"
sacctmgr -i add cluster joulestat-test >/dev/null 2>&1 || true
slurm_start_daemons "$tmp" || fail "slurmctld or slurmd did not start"

slurm_fake_rapl "$tmp" "$watts"
"$build/joulestat" serve --no-gpu --rapl-source powercap --path.sysfs "$tmp/sys" \
    --listen-address "127.0.0.1:$js_port" >"$tmp/joulestat.log" 2>&1 &
SLURM_OTHER_PIDS+=($!)
url=http://127.0.0.1:$js_port/metrics
slurm_wait 10 curl -sf "$url" || fail "joulestat did not come up"
sleep 1

# shellcheck disable=SC2016 # expanded by the job's bash
burn='end=$(( ${EPOCHREALTIME/./} + $1 * 1000000 )); while (( ${EPOCHREALTIME/./} < end )); do :; done'
jobs=()
j=$(sbatch --parsable -J burn3 -o /dev/null --wrap "bash -c '$burn' burn 3") || fail "sbatch failed"
jobs+=("$j")
# 6 s in two steps: the batch step's 3 s, then an srun step's
j=$(sbatch --parsable -J burn6 -o /dev/null \
    --wrap "bash -c '$burn' burn 3; srun -n1 bash -c '$burn' burn 3") || fail "sbatch failed"
jobs+=("$j")
has_comment() { [[ $(sacct -n -X -j "$1" -o AdminComment%100 2>/dev/null) == *joulestat* ]]; }
for j in "${jobs[@]}"; do
    slurm_wait 90 has_comment "$j" || fail "job $j has no joulestat AdminComment in sacct"
done
curl -sf "$url" >"$tmp/metrics.prom" || fail "scrape failed"
sacct -X -j "$(IFS=,; echo "${jobs[*]}")" -o JobID,JobName,Elapsed,TotalCPU,AdminComment%100
sacct -n -P -X -j "$(IFS=,; echo "${jobs[*]}")" -o JobID,AdminComment >"$tmp/sacct.txt"
python3 - "$tmp/sacct.txt" "$tmp/metrics.prom" <<'PY' || fail "sacct does not show joulestat's energy"
import re, sys
from decimal import Decimal
rows = dict(l.rstrip("\n").split("|", 1) for l in open(sys.argv[1]) if "|" in l)
metrics = open(sys.argv[2]).read()
rapl = sum(Decimal(v) for v in re.findall(r'^joulestat_rapl_energy_joules_total\{[^}]*\} (\S+)', metrics, re.M))
bad, total = [], Decimal(0)
for job, comment in rows.items():
    m = re.match(r'joulestat energy_j=(\S+) cpu_j=(\S+) gpu_j=(\S+) steps=(\S+)$', comment)
    if not m:
        bad.append("job %s: AdminComment %r" % (job, comment)); continue
    cpu = Decimal(m.group(2))
    # Each step's energy, each rounded to 1 mJ: they add up to the job's.
    steps = dict(x.rsplit(":", 1) for x in m.group(4).split(","))
    if "batch" not in steps or abs(sum(Decimal(v) for v in steps.values()) - Decimal(m.group(1))) > Decimal("0.001") * len(steps):
        bad.append("job %s: steps %s do not add up to %s J" % (job, steps, m.group(1)))
    js = re.search(r'^joulestat_slurm_job_energy_joules_total\{job_id="%s",component="cpu"\} (\S+)' % job, metrics, re.M)
    # The same figure (to 0.5 %: the scrape comes after the epilog's).
    if not js or abs(Decimal(js.group(1)) - cpu) > Decimal("0.005") * cpu + Decimal("0.001"):
        bad.append("job %s: sacct %s J, joulestat %s" % (job, cpu, js and js.group(1)))
    if cpu <= 0:
        bad.append("job %s: no energy" % job)
    total += Decimal(m.group(1))
print("jobs' energy in sacct: %s J; the zone over the whole run: %s J" % (total, rapl))
if total > rapl:
    bad.append("the jobs' energies add up to more than the node's")
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
echo "PASS: slurm-acct"
