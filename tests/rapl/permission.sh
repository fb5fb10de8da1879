#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The permission errors a real node gives, as an unprivileged user (the fixture tests run
# as root, which reads everything): energy_uj mode 0400 (Linux >= 5.10) and a 0600 MSR
# device must be reported as EACCES with the fix named, and the same tree must work as root.
# Usage: permission.sh <rapl-probe> <source-dir>
set -euo pipefail
probe=$1
src=$2

if ((EUID != 0)) || ! command -v setpriv >/dev/null; then
    echo "permission.sh: SKIP: needs root and setpriv to switch to an unprivileged user"
    exit 77
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 0755 "$tmp"
cp -r "$src/tests/trees/rapl-powercap-skx" "$tmp/node"
root=$tmp/node
mkdir -p "$root/dev/cpu/0" "$root/dev/cpu/2"
: >"$root/dev/cpu/0/msr"
: >"$root/dev/cpu/2/msr"
cp -r "$src/tests/trees/rapl-skx-msr/sys/devices" "$root/sys/"
find "$root" -type d -exec chmod 0755 {} +
find "$root" -type f -exec chmod 0444 {} +
# What the kernel does since the PLATYPUS fix, and the usual mode of /dev/cpu/N/msr.
find "$root" -name energy_uj -exec chmod 0400 {} +
chmod 0600 "$root"/dev/cpu/*/msr

as_nobody=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
args=(--sysfs "$root/sys" --procfs "$root/proc" --dev "$root/dev")
fail=0

expect() { # <description> <expected exit> <pattern...> -- <command...>
    local what=$1 want_rc=$2 out rc
    shift 2
    local patterns=()
    while [[ $1 != -- ]]; do patterns+=("$1"); shift; done
    shift
    set +e
    out=$("$@" 2>&1)
    rc=$?
    set -e
    if ((rc != want_rc)); then
        echo "FAIL: $what: exit $rc, want $want_rc"; echo "$out"; fail=1; return
    fi
    for p in "${patterns[@]}"; do
        if ! grep -qF -- "$p" <<<"$out"; then
            echo "FAIL: $what: output lacks '$p'"; echo "$out"; fail=1; return
        fi
    done
    echo "ok: $what"
}

expect "powercap as nobody" 1 "error Permission denied" "intel-rapl:0/energy_uj" "udev rule" \
    -- "${as_nobody[@]}" "$probe" "${args[@]}" --mode powercap
expect "msr as nobody" 1 "error Permission denied" "/dev/cpu/0/msr" "CAP_SYS_RAWIO" \
    -- "${as_nobody[@]}" "$probe" "${args[@]}" --mode msr
expect "auto as nobody reports the permission problem" 1 "error Permission denied" \
    "chosen off" "udev rule" "CAP_SYS_RAWIO" \
    -- "${as_nobody[@]}" "$probe" "${args[@]}" --mode auto
expect "powercap as root" 0 "chosen powercap" "reading 0 0 package 262079329075 262143328851 1/1 1" \
    -- "$probe" "${args[@]}" --mode powercap
exit $fail
