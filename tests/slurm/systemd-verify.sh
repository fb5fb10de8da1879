#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# deploy/systemd/joulestat.service: `systemd-analyze verify` reports nothing (unknown keys
# are only warnings there, so any output fails), joulestat accepts the flags of ExecStart,
# the ambient capabilities are the bounding set, and the hardening lines are present.
# Exits 77 (CTest skip) where systemd-analyze is not installed.
# Usage: systemd-verify.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
src=$2
unit=$src/deploy/systemd/joulestat.service

command -v systemd-analyze >/dev/null || { echo "SKIP: systemd-analyze not installed"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/joulestat-unit.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# verify needs ExecStart's binary to exist: point it at the build.
sed "s|/usr/local/bin/joulestat|$build/joulestat|" "$unit" >"$tmp/joulestat.service"
out=$(systemd-analyze verify "$tmp/joulestat.service" 2>&1) || fail "verify: $out"
[[ -z $out ]] || fail "verify is not silent: $out"

# The ExecStart command line (with its continuations), run with `version` instead of
# `serve`: the flags must parse.
exec_line=$(sed -n '/^ExecStart=/,/[^\\]$/p' "$unit" | tr -d '\\\n' | sed 's/^ExecStart=//')
read -r -a argv <<<"$exec_line"
[[ ${argv[0]} == /usr/local/bin/joulestat && ${argv[1]} == serve ]] || fail "ExecStart: $exec_line"
"$build/joulestat" version "${argv[@]:2}" >/dev/null || fail "joulestat rejects ${argv[*]:2}"

bounding=$(sed -n 's/^CapabilityBoundingSet=//p' "$unit")
ambient=$(sed -n 's/^AmbientCapabilities=//p' "$unit")
[[ -n $bounding && $bounding == "$ambient" ]] || fail "ambient '$ambient' != bounding '$bounding'"
for cap in $bounding; do
    case $cap in
    CAP_DAC_READ_SEARCH | CAP_SYS_RAWIO | CAP_PERFMON | CAP_SYS_PTRACE) ;;
    *) fail "capability $cap is not one the sources need" ;;
    esac
    grep -q "^# $cap: " "$unit" || fail "$cap is not explained"
done
for line in NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes PrivateTmp=yes \
    DevicePolicy=closed Restart=on-failure "ReadOnlyPaths=/proc /sys" \
    "DeviceAllow=char-nvidia-frontend rw" "DeviceAllow=char-cpu/msr r"; do
    grep -qx "$line" "$unit" || fail "missing: $line"
done
echo "PASS: systemd unit"
