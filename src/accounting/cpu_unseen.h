/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * CPU time of a workload that no process scan saw: processes that started and exited
 * between two scans, and the last ticks of processes that exited, show only in the
 * workload cgroup's cumulative CPU time (cpu.stat usage_usec / cpuacct.usage).
 *
 * Per workload w in one window (all times in microseconds):
 *   unseen_w = max(0, cgroup_delta_w - seen_w)        (0 when cgroup_valid is false)
 * and then, so that weights never claim more CPU time than the node was busy,
 *   sum(unseen) <= cap = max(0, node_active - all_seen)
 * where all_seen is the CPU time of every process the scan saw (workloads and system).
 * When the sum is over the cap each unseen_w is scaled down to
 *   floor(unseen_w * cap / sum(unseen)),
 * which keeps the sum <= cap (the rounded-off microseconds stay with "system").
 */

struct cpu_unseen_group {
    uint64_t seen_us;         /* CPU time of the workload's processes in the window */
    uint64_t cgroup_delta_us; /* growth of the cgroup's usage in the window */
    bool cgroup_valid;        /* cgroup_delta_us is a real delta (two good reads) */
    uint64_t unseen_us;       /* out */
};

/*
 * Fills groups[i].unseen_us. Returns the total unseen time after the clamp (<= cap).
 * Pure; n may be 0 (groups may then be NULL).
 */
uint64_t cpu_unseen_compute(struct cpu_unseen_group *groups, size_t n, uint64_t node_active_us,
                            uint64_t all_seen_us);
