#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `joulestat check`, the identity lines: the cgroup version of a (fake) sysfs root (v2,
# v1, hybrid, none), and whether other users' environ can be read (CAP_SYS_PTRACE: as
# root yes, as nobody no, with the fix; a procfs without self/status: unknown).
# Usage: check-identity.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
. "$src/tests/e2e/lib.sh"
js=$build/joulestat

check() { # check SYSFS [runner...]: the output of check (its exit status is about GPU/RAPL)
    local sys=$1
    shift
    "$@" "$js" check --no-gpu --rapl-source off --kubernetes-enabled=false \
        --path.sysfs "$sys" >"$E2E_TMP/out" 2>&1 || true
}
expect() { grep -qE "$1" "$E2E_TMP/out" || e2e_fail "no line '$1' in: $(cat "$E2E_TMP/out")"; }

s=$E2E_TMP/sys
mkdir -p "$s/v2/fs/cgroup" "$s/v1/fs/cgroup/cpuacct" "$s/hybrid/fs/cgroup/cpu,cpuacct" \
    "$s/hybrid/fs/cgroup/unified" "$s/none/fs"
touch "$s/v2/fs/cgroup/cgroup.controllers" "$s/hybrid/fs/cgroup/unified/cgroup.controllers"
check "$s/v2"
expect '^cgroup  ok        v2 \(unified hierarchy\)$'
check "$s/v1"
expect '^cgroup  ok        v1 \(cpuacct\)$'
check "$s/hybrid"
expect '^cgroup  ok        v1 \(cpuacct\) \+ v2 at fs/cgroup/unified \(hybrid\)$'
check "$s/none"
expect '^cgroup  absent    no cgroup hierarchy'

if [[ $(id -u) == 0 ]] && grep -qE '^CapEff:\s*[0-9a-f]*[0-9a-f]{4}[8-9a-f][0-9a-f]{4}$' /proc/self/status; then
    check "$s/v2"
    expect '^environ ok        CAP_SYS_PTRACE'
fi
if [[ $(id -u) == 0 ]] && command -v setpriv >/dev/null; then
    chmod o+rx "$E2E_TMP" # nobody must reach the fake sysfs
    check "$s/v2" setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all
    expect '^environ denied    no CAP_SYS_PTRACE'
    expect '^        fix: add CAP_SYS_PTRACE'
else
    echo "note: not root or no setpriv: the denied case is not checked"
fi
"$js" check --no-gpu --rapl-source off --kubernetes-enabled=false \
    --path.procfs "$src/tests/trees/procfs-basic" >"$E2E_TMP/out" 2>&1 || true
expect '^environ unknown   no CapEff line'
echo "check-identity: ok"
