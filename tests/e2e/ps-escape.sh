#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `joulestat ps` prints names from processes escaped: a process named with terminal escape
# sequences (set the window title, clear the screen) is shown as \x1b...\x07, and not one
# control byte reaches the terminal; the JSON output escapes it as JSON.
# Usage: ps-escape.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
. "$src/tests/e2e/lib.sh"
proc=$E2E_TMP/proc
mkdir -p "$proc"
cp -r "$src"/tests/trees/procfs-kubepods/1001 "$src"/tests/trees/procfs-kubepods/stat "$proc/"
# comm "evil ESC ]0;pwn BEL ESC [2J": 15 bytes, as long as a comm can be.
python3 - "$proc/1001/stat" <<'EOP'
import sys
p = sys.argv[1]
text = open(p, "rb").read()
open(p, "wb").write(text.replace(b"(python3)", b"(evil\x1b]0;pwn\x07\x1b[2J)"))
EOP
ps=("$build/joulestat" ps --all --no-gpu --rapl-source off --sample-interval 100ms
    --path.procfs "$proc")
"${ps[@]}" >"$E2E_TMP/out" 2>"$E2E_TMP/err" || e2e_fail "ps exited $?: $(cat "$E2E_TMP/err")"
if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$E2E_TMP/out"; then
    e2e_fail "ps printed control characters: $(od -c "$E2E_TMP/out" | head -20)"
fi
grep -qF '1001     evil\x1b]0;pwn   pod' "$E2E_TMP/out" ||
    e2e_fail "the name is not shown escaped: $(cat -v "$E2E_TMP/out")"
"${ps[@]}" --json >"$E2E_TMP/json" 2>"$E2E_TMP/err" || e2e_fail "ps --json exited $?"
python3 - "$E2E_TMP/json" <<'EOP' || e2e_fail "ps --json: $(cat "$E2E_TMP/json")"
import json, sys
raw = open(sys.argv[1], "rb").read()
assert b"\x1b" not in raw and b"\x07" not in raw, raw
rows = {r["pid"]: r for r in json.loads(raw)}
assert rows[1001]["name"] == "evil\x1b]0;pwn\x07\x1b[2J", rows[1001]["name"]
EOP
echo "ok: ps shows $(grep -o 'evil[^ ]*' "$E2E_TMP/out") and no control character"

# A name in UTF-8 with wide characters ("café日本": 11 bytes, 8 columns) is padded by the
# columns it takes, so the next column lines up with the header's.
python3 - "$proc/1001/stat" <<'EOP'
import sys
p = sys.argv[1]
text = open(p, "rb").read()
open(p, "wb").write(text.replace(b"(evil\x1b]0;pwn\x07\x1b[2J)", "(café日本)".encode()))
EOP
LC_ALL=C.UTF-8 "${ps[@]}" >"$E2E_TMP/out" 2>"$E2E_TMP/err" || e2e_fail "ps exited $?"
python3 - "$E2E_TMP/out" <<'EOP' || e2e_fail "ps: the UTF-8 name does not line up: $(cat "$E2E_TMP/out")"
import sys, unicodedata
def columns(s):
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
row = next(l for l in lines if l.startswith("1001 "))
want = lines[0].index("KIND")
got = columns(row[:row.index(" pod ") + 1])
assert "café日本" in row and got == want, (row, got, want)
EOP
echo "ok: a UTF-8 name with wide characters lines up"

# `check` on the simulated node, whose GPU and one process carry escape sequences in their
# names: shown escaped, no control character printed.
python3 - "$src/scenarios/two-process-80-20.scn" "$E2E_TMP/evil.scn" <<'EOP'
import sys
text = open(sys.argv[1], "rb").read()
text = text.replace(b"name=train", b'name="ev\x1b]0;x\x07il"')
text = text.replace(b'name="NVIDIA A100-PCIE-40GB"', b'name="NVIDIA\x1b[2J A100"')
open(sys.argv[2], "wb").write(text)
EOP
mkdir -p "$E2E_TMP/simproc"
JOULESTAT_SIM_SCENARIO=$E2E_TMP/evil.scn JOULESTAT_SIM_PROCFS=$E2E_TMP/simproc \
    "$build/joulestat" check --kubernetes-enabled=false --nvml-library "$build/sim/libnvidia-ml.so.1" \
    --path.procfs "$E2E_TMP/simproc" --rapl-source off --sample-interval 200ms \
    >"$E2E_TMP/check" 2>&1 || true
if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$E2E_TMP/check"; then
    e2e_fail "check printed control characters: $(cat -v "$E2E_TMP/check")"
fi
grep -qF '2001 ev\x1b]0;x\x07il' "$E2E_TMP/check" ||
    e2e_fail "check: the process name is not shown escaped: $(cat -v "$E2E_TMP/check")"
grep -qF 'GPU 0 NVIDIA\x1b[2J A100 (' "$E2E_TMP/check" ||
    e2e_fail "check: the GPU name is not shown escaped: $(cat -v "$E2E_TMP/check")"
echo "ok: check shows the GPU and process names escaped"
