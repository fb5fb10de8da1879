#!/usr/bin/env bash
# src/accounting and src/parse are pure: no I/O, no clock, no threads, no dynamic loading,
# neither from the C library nor through the project's own I/O helpers (file reading,
# logging, clocks, the stopper, the dlopen resolver).
set -u
root=${1:-.}
pure=("$root"/src/accounting/*.[ch] "$root"/src/parse/*.[ch])
bad=$(
    grep -nE '#include <(stdio|unistd|fcntl|dirent|dlfcn|pthread|time|sys/[a-z]+)\.h>' "${pure[@]}"
    grep -nE '#include "(fileio|log|clock|stopper|dl_symbols)\.h"' "${pure[@]}"
)
if [[ -n $bad ]]; then
    echo "check-purity: I/O headers in pure code:"
    echo "$bad"
    exit 1
fi
echo "check-purity: src/accounting and src/parse include no I/O headers"
