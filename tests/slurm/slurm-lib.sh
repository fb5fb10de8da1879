# SPDX-License-Identifier: MIT
# A one-node SLURM cluster in a temporary directory: munged with its own key and socket,
# slurmctld and slurmd in the foreground (so $! is the daemon's PID), all state, spool,
# logs and pid files under that directory. slurm_tmpdir makes it and stops everything by
# PID at exit.
# shellcheck shell=bash

SLURM_PIDS=()       # the cluster's daemons, in order of start
SLURM_OTHER_PIDS=() # the test's own (joulestat, the fake RAPL zone): stopped first
SLURM_LAST_PIDS=()  # stopped after the cluster (the database slurmdbd writes to)
SLURM_SKIP=77
SLURM_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# slurm_tmpdir NAME: a private temporary directory (munged refuses a socket directory
# others can write to) in SLURM_TMP, and slurm_cleanup at exit.
slurm_tmpdir() {
    SLURM_TMP=$(mktemp -d "${TMPDIR:-/tmp}/joulestat-$1.XXXXXX")
    chmod 0700 "$SLURM_TMP"
    trap slurm_cleanup EXIT
}

# Stops the test's processes, the cluster, then SLURM_LAST_PIDS, and removes SLURM_TMP
# (kept when KEEP_TMP is set).
slurm_cleanup() {
    local pid
    for pid in "${SLURM_OTHER_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${SLURM_OTHER_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    slurm_stop "$SLURM_TMP"
    for pid in "${SLURM_LAST_PIDS[@]}"; do slurm_kill_pid "$pid"; done
    [[ -n ${KEEP_TMP:-} ]] || rm -rf "$SLURM_TMP"
}

# fail MESSAGE: slurm_fail in SLURM_TMP.
fail() { slurm_fail "$SLURM_TMP" "$@"; }

# slurm_require TOOL...: exits 77 (CTest skip) unless every tool is there and we are root.
slurm_require() {
    local tool
    for tool in "$@"; do
        command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed"; exit $SLURM_SKIP; }
    done
    [[ $(id -u) == 0 ]] || { echo "SKIP: SlurmUser=root needs root"; exit $SLURM_SKIP; }
}

# slurm_fail DIR MESSAGE: says what failed and the end of every log and job output in DIR.
slurm_fail() {
    local dir=$1 f
    shift
    echo "FAIL: $*" >&2
    for f in "$dir"/*.log "$dir"/*.out; do
        [[ -s $f ]] || continue
        echo "--- $f (last 20 lines)" >&2
        tail -20 "$f" >&2
    done
    exit 1
}

# Prints a free TCP port on 127.0.0.1.
slurm_free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# slurm_write_config DIR PROCTRACK TASK JOBACCT: slurm.conf + cgroup.conf for this host.
slurm_write_config() {
    local dir=$1 proctrack=$2 task=$3 jobacct=$4
    local host ctld_port slurmd_port cpus
    host=$(hostname -s)
    ctld_port=$(slurm_free_port)
    slurmd_port=$(slurm_free_port)
    while [[ $slurmd_port == "$ctld_port" ]]; do slurmd_port=$(slurm_free_port); done
    cpus=$(nproc)
    mkdir -p "$dir/state" "$dir/spool"
    cat >"$dir/slurm.conf" <<CONF
ClusterName=joulestat-test
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$dir/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=$proctrack
TaskPlugin=$task
JobAcctGatherType=$jobacct
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
    cat >"$dir/cgroup.conf" <<CONF
CgroupPlugin=cgroup/v1
CgroupMountpoint=/sys/fs/cgroup
ConstrainCores=no
ConstrainRAMSpace=no
ConstrainDevices=no
CONF
}

# slurm_own_job_ids DIR: job ids of this cluster's own. Another test cluster on this host
# (same node name, so the same cgroup paths) numbers its jobs from 1.
slurm_own_job_ids() {
    echo "FirstJobId=$((100000 + RANDOM * 10))" >>"$1/slurm.conf"
}

# slurm_start_munge DIR: munged with a new key; sets SLURM_CONF to DIR's slurm.conf.
# Returns non-zero if it does not come up.
slurm_start_munge() {
    local dir=$1
    export SLURM_CONF=$dir/slurm.conf

    dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 status=none
    chmod 0400 "$dir/munge.key"
    munged --foreground --force --socket="$dir/munge.socket" --key-file="$dir/munge.key" \
        --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" \
        --seed-file="$dir/munged.seed" >>"$dir/munged.log" 2>&1 &
    SLURM_PIDS+=($!)
    slurm_wait 10 test -S "$dir/munge.socket"
}

# slurm_start_daemons DIR: slurmctld, then slurmd, after munged; returns non-zero if one
# does not come up.
slurm_start_daemons() {
    local dir=$1

    slurmctld -D -i -f "$SLURM_CONF" >>"$dir/slurmctld.out" 2>&1 &
    SLURM_PIDS+=($!)
    slurm_wait 30 scontrol ping || return 1
    slurmd -D -f "$SLURM_CONF" >>"$dir/slurmd.out" 2>&1 &
    SLURM_PIDS+=($!)
    slurm_wait 30 slurm_node_idle
}

# slurm_start DIR: munged, slurmctld, slurmd; returns non-zero if one does not come up.
slurm_start() {
    slurm_start_munge "$1" && slurm_start_daemons "$1"
}

# slurm_start_or_skip DIR [WHAT]: slurm_start, or exits 77 (CTest skip) with the end of the
# daemons' logs.
slurm_start_or_skip() {
    local dir=$1
    slurm_start "$dir" && return 0
    echo "SKIP: the SLURM daemons do not start here${2:+ ($2)}:"
    tail -5 "$dir"/slurmctld.log "$dir"/slurmd.log "$dir"/munged.log 2>/dev/null || true
    exit $SLURM_SKIP
}

# slurm_fake_rapl DIR WATTS: DIR/sys, a sysfs root with the real cgroups and CPUs and a fake
# RAPL zone whose energy is exactly WATTS x time (fake_rapl_clock.py, in SLURM_OTHER_PIDS).
slurm_fake_rapl() {
    local dir=$1 watts=$2
    mkdir -p "$dir/sys"
    ln -s /sys/fs "$dir/sys/fs"
    ln -s /sys/devices "$dir/sys/devices"
    python3 "$SLURM_LIB_DIR/fake_rapl_clock.py" "$dir/sys" "$watts" &
    SLURM_OTHER_PIDS+=($!)
    slurm_wait 10 test -s "$dir/sys/class/powercap/intel-rapl:0/energy_uj" ||
        slurm_fail "$dir" "the fake RAPL zone did not appear"
}

slurm_queue_empty() {
    local q
    q=$(squeue -h -o %i 2>/dev/null) || return 1
    [[ -z $q ]]
}

slurm_node_idle() {
    [[ $(sinfo -h -N -o '%t' 2>/dev/null) == idle ]]
}

# slurm_wait SECONDS cmd...: until cmd succeeds, or fail after SECONDS.
slurm_wait() {
    local limit=$1
    shift
    local deadline=$((SECONDS + limit))
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < deadline)) || return 1
        sleep 0.3
    done
}

# PIDs of the slurmstepd processes of this cluster: they daemonise away from slurmd, and
# are told apart from any other cluster's by the SLURM_CONF they inherited.
slurm_stepd_pids() {
    local dir=$1 p
    for p in /proc/[0-9]*; do
        [[ $(cat "$p/comm" 2>/dev/null) == slurmstepd ]] || continue
        tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -qx "SLURM_CONF=$dir/slurm.conf" &&
            echo "${p#/proc/}"
    done
    return 0
}

slurm_no_stepd() {
    [[ -z $(slurm_stepd_pids "$1") ]]
}

# slurm_kill_pid PID: TERM, up to 5 s, then KILL.
slurm_kill_pid() {
    local pid=$1
    kill "$pid" 2>/dev/null || return 0
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

# slurm_stop DIR: cancels what is left, lets the step daemons finish, stops the daemons in
# reverse order of start by PID, kills any step daemon still there by PID, and removes
# the cgroup directories of this node that no process uses any more.
slurm_stop() {
    local dir=$1 i pid
    if ((${#SLURM_PIDS[@]} > 0)); then
        scancel --full --quiet -u root 2>/dev/null || true
        slurm_wait 15 slurm_queue_empty || true
        slurm_wait 15 slurm_no_stepd "$dir" || true
    fi
    for ((i = ${#SLURM_PIDS[@]} - 1; i >= 0; i--)); do
        slurm_kill_pid "${SLURM_PIDS[i]}"
    done
    SLURM_PIDS=()
    for pid in $(slurm_stepd_pids "$dir"); do
        slurm_kill_pid "$pid"
    done
    # A cgroup directory is never empty of files; rmdir succeeds once it has no tasks.
    find /sys/fs/cgroup/*/"slurm_$(hostname -s)" -depth -type d -exec rmdir {} \; 2>/dev/null || true
}
