# SPDX-License-Identifier: MIT
# shellcheck shell=bash

# A fake RAPL powercap zone under SYSFS (package-0, +2 J every 100 ms: 20 W) with the real
# cgroup and CPU topology linked in; the writer runs in the background, its pid in
# E2E_FAKE_RAPL_PID. joulestat keeps energy_uj open and re-reads it, as on sysfs, so the
# value is rewritten in place with a fixed width (never renamed, never truncated).
e2e_fake_rapl_zone() {
    local sysfs=$1 zone=$1/class/powercap/intel-rapl:0
    mkdir -p "$zone"
    echo package-0 >"$zone/name"
    echo 1 >"$zone/enabled"
    echo 262143328850 >"$zone/max_energy_range_uj"
    printf '%20d\n' 1000000 >"$zone/energy_uj"
    ln -s /sys/fs "$sysfs/fs"
    ln -s /sys/devices "$sysfs/devices"
    (
        e=1000000
        while :; do
            e=$((e + 2000000))
            printf '%20d\n' "$e" 1<>"$zone/energy_uj"
            sleep 0.1
        done
    ) &
    # shellcheck disable=SC2034 # read by the caller
    E2E_FAKE_RAPL_PID=$!
}
