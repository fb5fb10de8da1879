/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

#include "workload_kind.h"

/*
 * Who a pid is, for the GPU accounting: NVML reports bare pids, and a new one is resolved
 * once into its start time (so a reused pid is a new process) and its labels.
 */

/* What the process table knows about a pid; filled by a resolver (procfs scanner). */
struct process_info {
    uint64_t start_ticks; /* 0 when unknown */
    double start_time_seconds;
    struct snap_identity id;
};

/* Returns 0 and fills *ret, or -ESRCH when the pid is unknown (the process is then
 * accounted with what NVML says alone). */
typedef int (*process_resolve_fn)(void *userdata, uint32_t pid, struct process_info *ret);

/* process_resolve_fn over a procfs scanner (userdata: struct procfs_scanner). */
int identity_resolve_pid(void *scanner, uint32_t pid, struct process_info *ret);

/* The same, and for a pid gone from /proc what the exec watcher read while it lived
 * (userdata: struct identity_resolver). */
struct procfs_scanner;
struct exec_watch;
struct identity_resolver {
    struct procfs_scanner *scanner;
    struct exec_watch *watch; /* NULL: the scanner alone */
};
int identity_resolve_watched(void *resolver, uint32_t pid, struct process_info *ret);
