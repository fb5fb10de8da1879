#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# deploy/systemd/joulestat.service: `systemd-analyze verify` reports nothing (unknown keys
# are only warnings there, so any output fails), its exposure in `systemd-analyze security`
# is "OK" or better (below 5.0), joulestat accepts the options of the default file the unit
# reads (deploy/systemd/joulestat.default), the ambient capabilities are the bounding set,
# each is explained, and the hardening lines are present.
# Exits 77 (CTest skip) where systemd-analyze is not installed.
# Usage: systemd-verify.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
src=$2
unit=$src/deploy/systemd/joulestat.service
defaults=$src/deploy/systemd/joulestat.default

command -v systemd-analyze >/dev/null || { echo "SKIP: systemd-analyze not installed"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/joulestat-unit.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# verify needs ExecStart's binary to exist: point it at the build. The man page it names is
# not installed here.
sed "s|/usr/local/bin/joulestat|$build/joulestat|" "$unit" >"$tmp/joulestat.service"
out=$(systemd-analyze verify --man=no "$tmp/joulestat.service" 2>&1) || fail "verify: $out"
[[ -z $out ]] || fail "verify is not silent: $out"

# The exposure score: "→ Overall exposure level for joulestat.service: 2.7 OK 🙂".
out=$(systemd-analyze security --offline=true "$tmp/joulestat.service" 2>&1) || true
level=$(sed -n 's/.*Overall exposure level for joulestat.service: \([0-9.]*\) \([A-Z]*\).*/\1 \2/p' <<<"$out")
[[ -n $level ]] || fail "no exposure level in: $(tail -3 <<<"$out")"
read -r score word <<<"$level"
case $word in
PERFECT | SAFE | OK) ;;
*) fail "exposure $score $word: the unit must score OK or better" ;;
esac
echo "exposure: $score $word"

# ExecStart runs `serve $JOULESTAT_ARGS` from the default file; run its options with
# `version` instead of `serve`: they must parse.
grep -qx 'EnvironmentFile=-/etc/default/joulestat' "$unit" || fail "no EnvironmentFile line"
grep -qx 'ExecStart=/usr/local/bin/joulestat serve $JOULESTAT_ARGS' "$unit" ||
    fail "ExecStart is not 'joulestat serve \$JOULESTAT_ARGS'"
args=$(bash -c 'set -a; . "$1"; echo "$JOULESTAT_ARGS"' _ "$defaults")
[[ $args == *--listen-address=:19400* ]] || fail "the default file does not listen on :19400: $args"
read -r -a argv <<<"$args"
"$build/joulestat" version "${argv[@]}" >/dev/null || fail "joulestat rejects $args"

bounding=$(sed -n 's/^CapabilityBoundingSet=//p' "$unit")
ambient=$(sed -n 's/^AmbientCapabilities=//p' "$unit")
[[ -n $bounding && $bounding == "$ambient" ]] || fail "ambient '$ambient' != bounding '$bounding'"
for cap in $bounding; do
    case $cap in
    CAP_DAC_READ_SEARCH | CAP_SYS_RAWIO | CAP_PERFMON | CAP_SYS_PTRACE | CAP_NET_ADMIN) ;;
    *) fail "capability $cap is not one the sources need" ;;
    esac
    grep -q "^# $cap: " "$unit" || fail "$cap is not explained"
done
for line in NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes PrivateTmp=yes \
    PrivateMounts=yes DevicePolicy=closed Restart=on-failure "ReadOnlyPaths=/proc /sys" \
    "DeviceAllow=char-nvidia rw" "DeviceAllow=char-nvidia-frontend rw" "DeviceAllow=char-cpu/msr r" \
    "SystemCallFilter=@system-service perf_event_open seccomp" \
    "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK"; do
    grep -qx "$line" "$unit" || fail "missing: $line"
done
echo "PASS: systemd unit"
