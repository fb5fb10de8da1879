#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make install` (cmake --install with DESTDIR): the binary, joulestat(8), the systemd unit
# and the default options file land under the configured prefix, the unit names the
# installed binary and options file, the installed binary runs; the simulated GPU node is
# installed only when asked (component "sim"), in a directory of its own, and works there.
# Usage: install-check.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
src=$2
. "$src/tests/e2e/lib.sh"

prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")
sim_on=$(sed -n 's/^JOULESTAT_INSTALL_SIM:BOOL=//p' "$build/CMakeCache.txt")
dest=$E2E_TMP/dest
DESTDIR=$dest cmake --install "$build" >"$E2E_TMP/install.log" || e2e_fail "install: $(cat "$E2E_TMP/install.log")"

one() { # one PATTERN: the single installed file whose path matches, without DESTDIR
    local found
    found=$(cd "$dest" && find . -path "./$1" -type f | sed 's/^\.//')
    [[ -n $found && $(wc -l <<<"$found") == 1 ]] || e2e_fail "expected one installed $1, found: '$found'"
    echo "$found"
}
bin=$(one "*/bin/joulestat")
man=$(one "*/man8/joulestat.8")
unit=$(one "*/systemd/system/joulestat.service")
defaults=$(one "*/default/joulestat")
one "*/doc/joulestat/README.md" >/dev/null
epilog=$(one "*/lib/joulestat/joulestat-slurm-epilog")
[[ -x $dest$epilog ]] || e2e_fail "the SLURM epilog $epilog is not executable"
[[ $bin == "$prefix/bin/joulestat" ]] || e2e_fail "binary at $bin, not under $prefix"
[[ $unit == "$prefix/lib/systemd/system/joulestat.service" ]] || e2e_fail "unit at $unit"
[[ -x $dest$bin ]] || e2e_fail "$bin is not executable"
"$dest$bin" --version | grep "^joulestat " >/dev/null || e2e_fail "the installed binary does not run"

# The unit starts the installed binary with the options of the installed file.
grep -qx "ExecStart=$bin serve \$JOULESTAT_ARGS" "$dest$unit" ||
    e2e_fail "ExecStart does not name $bin: $(grep ExecStart "$dest$unit")"
grep -qx "EnvironmentFile=-$defaults" "$dest$unit" ||
    e2e_fail "EnvironmentFile does not name $defaults: $(grep EnvironmentFile "$dest$unit")"
grep -q '^JOULESTAT_ARGS=' "$dest$defaults" || e2e_fail "$defaults sets no JOULESTAT_ARGS"
grep -q '^\.TH JOULESTAT 8' "$dest$man" || e2e_fail "$man is not the man page"

# Not asked for: no simulated NVML anywhere (it would shadow the real one).
if [[ $sim_on != ON ]]; then
    found=$(cd "$dest" && find . -name 'libnvidia-ml*')
    [[ -z $found ]] || e2e_fail "the simulated GPU node was installed without being asked: $found"
fi

# Asked for: its own directory, with the scenarios, and it plays one.
simdest=$E2E_TMP/sim
DESTDIR=$simdest cmake --install "$build" --component sim >"$E2E_TMP/sim.log"
lib=$(cd "$simdest" && find . -name 'libnvidia-ml.so.1' | sed 's/^\.//')
[[ $lib == */joulestat/libnvidia-ml.so.1 ]] || e2e_fail "simulated NVML at '$lib', not in a joulestat directory"
scn=$(cd "$simdest" && find . -path '*/joulestat/scenarios/two-process-80-20.scn' | sed 's/^\.//')
[[ -n $scn ]] || e2e_fail "no scenarios installed with the simulated GPU node"
"$dest$bin" replay --nvml-library "$simdest$lib" --scenario "$simdest$scn" >"$E2E_TMP/replay.prom" ||
    e2e_fail "the installed simulator does not replay"
grep -q '^joulestat_gpu_energy_joules_total{' "$E2E_TMP/replay.prom" || e2e_fail "replay printed no GPU energy"
echo "install: ok ($prefix)"
