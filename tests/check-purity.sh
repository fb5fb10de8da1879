#!/usr/bin/env bash
# src/accounting and src/parse are pure: no I/O, no clock, no threads, no dynamic loading,
# neither from the C library nor through the project's own I/O helpers (file reading,
# logging, clocks, the stopper, the dlopen resolver). So are a few files of other folders:
# the workload kinds table and the pod-resources decoder and GPU table.
set -u
root=${1:-.}
pure=("$root"/src/accounting/*.[ch] "$root"/src/parse/*.[ch] "$root"/src/store/workload_kind.[ch]
    "$root"/src/kube/pod_resources_decode.[ch] "$root"/src/kube/pod_resources_gpu.[ch])
bad=$(
    grep -nE '#include <(stdio|unistd|fcntl|dirent|dlfcn|pthread|time|sys/[a-z]+)\.h>' "${pure[@]}"
    grep -nE '#include "(fileio|log|clock|stopper|dl_symbols)\.h"' "${pure[@]}"
)
if [[ -n $bad ]]; then
    echo "check-purity: I/O headers in pure code:"
    echo "$bad"
    exit 1
fi
echo "check-purity: src/accounting, src/parse and the pure files elsewhere include no I/O headers"
