#!/usr/bin/env bash
# A part of `make accuracy` with its thresholds: the accuracy scenarios of kinds where SM
# time is not energy (busy-wait beside a trainer, ETL beside tensor cores, an idle holder,
# phases, bursts, short jobs, MIG instances with GPM) and four generated mixes, against the
# simulator's truth.
# Fails when joulestat's mean error is above 10 %, a scenario above 25 %, a process is
# unmatched, or the learned split is worse than SM share by more than one point anywhere.
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/joulestat-accuracy.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

"$src/scripts/gen-mixes" --count 4 "$tmp"
"$src/scripts/accuracy-report" --joulestat "$build/joulestat" --max-mean 10 --max-worst 25 \
    --max-over-sm 1 \
    "$src"/scenarios/{busy-wait-collective,etl-beside-tensor,idle-holder,trainer-phases}.scn \
    "$src"/scenarios/{inference-bursts,short-jobs,mig-h100-gpm}.scn "$tmp"/mix-0[1-4].scn
echo "accuracy-gate: ok"
