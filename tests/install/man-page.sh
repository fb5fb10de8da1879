#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# joulestat(8) cannot drift from --help: the build writes it with `joulestat --help-man`
# from the table that prints --help. Checks that every option and command --help lists is
# in the man page, that the built page is what the binary writes now, and (where groff is
# installed) that it formats without warnings.
# Usage: man-page.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
. "$src/tests/e2e/lib.sh"
js=$build/joulestat
man=$build/joulestat.8

[[ -s $man ]] || e2e_fail "$man was not built"
"$js" --help-man >"$E2E_TMP/now.8"
cmp -s "$man" "$E2E_TMP/now.8" || e2e_fail "$man differs from what joulestat --help-man writes"
"$js" --help >"$E2E_TMP/help.txt"
# The page as text: roff's \- is a hyphen, font changes go.
sed 's/\\-/-/g; s/\\f[BIRP]//g' "$man" >"$E2E_TMP/man.txt"

mapfile -t options < <(grep -oE -- '--[a-z][a-z0-9.-]*[a-z0-9]' "$E2E_TMP/help.txt" | sort -u)
((${#options[@]} >= 30)) || e2e_fail "only ${#options[@]} options found in --help"
for opt in "${options[@]}"; do
    grep -qF -- "$opt" "$E2E_TMP/man.txt" || e2e_fail "--help lists $opt, the man page does not"
done
for cmd in serve check ps replay version; do
    grep -q "^  $cmd" "$E2E_TMP/help.txt" || e2e_fail "--help lists no command $cmd"
    grep -qx "$cmd.*" <(grep -A1 '^\.TP' "$E2E_TMP/man.txt") || e2e_fail "the man page lists no command $cmd"
done
grep -q -- '--help-man' "$E2E_TMP/help.txt" && e2e_fail "--help lists the hidden --help-man"
if command -v groff >/dev/null; then
    warnings=$(groff -man -ww -z "$man" 2>&1)
    [[ -z $warnings ]] || e2e_fail "groff: $warnings"
fi
echo "man-page: ${#options[@]} options of --help, all in joulestat(8)"
