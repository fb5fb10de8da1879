#!/usr/bin/env bash
# src/accounting and src/parse are pure: no I/O, no clock, no threads, no dynamic loading.
set -u
root=${1:-.}
bad=$(grep -nE '#include <(stdio|unistd|fcntl|dirent|dlfcn|pthread|time|sys/[a-z]+)\.h>' \
    "$root"/src/accounting/*.[ch] "$root"/src/parse/*.[ch] 2>/dev/null)
if [[ -n $bad ]]; then
    echo "check-purity: I/O headers in pure code:"
    echo "$bad"
    exit 1
fi
echo "check-purity: src/accounting and src/parse include no I/O headers"
