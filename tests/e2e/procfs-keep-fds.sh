#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --procfs-keep-fds: a bad value is refused with exit 2; on a fixture procfs tree `auto`
# and `off` keep no <pid>/stat fd open and `on` keeps one per process (counted in
# /proc/PID/fd); on the real /proc `auto` keeps fds and `off` none.
# Usage: procfs-keep-fds.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
. "$src/tests/e2e/lib.sh"
js=$build/joulestat
nprocs=12

"$js" serve --procfs-keep-fds=sometimes >"$E2E_TMP/out" 2>"$E2E_TMP/err" && rc=0 || rc=$?
[[ $rc == 2 ]] || e2e_fail "--procfs-keep-fds=sometimes exited $rc, expected 2"
grep -q "invalid value 'sometimes' for --procfs-keep-fds: expected auto, on or off" \
    "$E2E_TMP/err" || e2e_fail "no clear reason: $(cat "$E2E_TMP/err")"
# (into a file: grep -q leaving a pipe early would end joulestat's longer output with
# SIGPIPE, which pipefail reports as a failure)
"$js" --help >"$E2E_TMP/help"
grep -q -- "--procfs-keep-fds M" "$E2E_TMP/help" || e2e_fail "--help does not list the flag"

# A fixture procfs: btime, and NPROCS processes with a valid stat each.
tree=$E2E_TMP/tree
mkdir -p "$tree/proc" "$tree/sys"
printf 'cpu  100 0 50 1000 0 0 0 0 0 0\nbtime 1700000000\n' >"$tree/proc/stat"
for ((i = 0; i < nprocs; i++)); do
    pid=$((400000 + i))
    mkdir -p "$tree/proc/$pid"
    echo "0::/system.slice/fixture-$i.service" >"$tree/proc/$pid/cgroup"
    echo "$pid (fixture) S 1 $pid $pid 0 -1 4194560 0 0 0 0 $((100 + i)) 7 0 0 20 0 1 0 5000 0 0" \
        >"$tree/proc/$pid/stat"
done

# Starts joulestat on PROCFS with a 100 ms scan and prints the number of fds it holds on
# PROCFS/<pid>/stat after a few scans: kept_stat_fds PROCFS MODE [BPF]
kept_stat_fds() {
    local procfs=$1 mode=$2 bpf=${3:-off} port pid n
    port=$(e2e_free_port)
    "$js" serve --no-gpu --rapl-source off --kubernetes-enabled=false \
        --path.procfs "$procfs" --path.sysfs "$tree/sys" --process-scan-interval 100ms \
        --listen-address "127.0.0.1:$port" --procfs-keep-fds="$mode" --process-bpf="$bpf" \
        >>"$E2E_TMP/serve-$mode-$bpf.log" 2>&1 &
    pid=$!
    E2E_PIDS+=($pid)
    e2e_wait 20 curl -sf "http://127.0.0.1:$port/metrics" || e2e_fail "serve ($mode) did not come up"
    sleep 0.5
    n=$(find "/proc/$pid/fd" -mindepth 1 -printf '%l\n' 2>/dev/null |
        grep -cE "^${procfs//./\\.}/[0-9]+/stat\$" || true)
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    echo "$n"
}

n=$(kept_stat_fds "$tree/proc" auto)
[[ $n == 0 ]] || e2e_fail "auto kept $n stat fds on a fixture tree, expected 0"
n=$(kept_stat_fds "$tree/proc" off)
[[ $n == 0 ]] || e2e_fail "off kept $n stat fds on a fixture tree, expected 0"
n=$(kept_stat_fds "$tree/proc" on)
[[ $n == "$nprocs" ]] || e2e_fail "on kept $n stat fds on a fixture tree, expected $nprocs"

# The real /proc (if this is one), listed (--process-bpf=off): auto keeps fds (at least
# joulestat's own), off none. With the eBPF task iterator (where the kernel allows it) no
# process file stays open: one read gives every process.
if [[ $(stat -f -c %T /proc) == proc ]]; then
    n=$(kept_stat_fds /proc auto)
    ((n >= 1)) || e2e_fail "auto kept no stat fd on the real /proc"
    grep -q "process scan: listing '/proc' (eBPF task iterator: turned off)" \
        "$E2E_TMP/serve-auto-off.log" || e2e_fail "--process-bpf=off did not say it lists /proc"
    n=$(kept_stat_fds /proc off)
    [[ $n == 0 ]] || e2e_fail "off kept $n stat fds on the real /proc, expected 0"
    n=$(kept_stat_fds /proc auto auto)
    if grep -q "process scan: eBPF task iterator" "$E2E_TMP/serve-auto-auto.log"; then
        [[ $n == 0 ]] || e2e_fail "kept $n stat fds while reading the task iterator, expected 0"
        # Scans after the capabilities were dropped and the system-call filter installed
        # still read it (bpf(BPF_ITER_CREATE) allowed, CAP_BPF kept where held).
        ! grep -q "reading the task iterator failed" "$E2E_TMP/serve-auto-auto.log" ||
            e2e_fail "the task iterator stopped working after the lock-down"
        if grep -q "system-call filter installed" "$E2E_TMP/serve-auto-auto.log"; then
            grep -q "kept: .*CAP_BPF" "$E2E_TMP/serve-auto-auto.log" ||
                e2e_fail "CAP_BPF was not kept while the task iterator is read"
        fi
    else
        grep -q "process scan: listing '/proc'" "$E2E_TMP/serve-auto-auto.log" ||
            e2e_fail "serve said neither how it reads processes nor why not the iterator"
        echo "procfs-keep-fds: no eBPF task iterator here: $(grep -o "process scan: .*" \
            "$E2E_TMP/serve-auto-auto.log" | head -1)"
    fi
fi
echo "procfs-keep-fds: ok"
