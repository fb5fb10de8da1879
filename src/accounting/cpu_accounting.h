/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "attribution.h"
#include "cpu_groups.h"
#include "ledger.h"
#include "procfs.h"
#include "rapl.h"

/*
 * CPU accounting: each process scan closes one window for every RAPL domain. The node's
 * /proc/stat says how much of the window the CPUs were busy; the busy part of each
 * domain's energy is split among
 *   - the processes of workloads (containers, pods, SLURM jobs), keyed (pid, start time),
 *     by their CPU time in the window (ticks of /proc/<pid>/stat, in microseconds), and
 *   - per workload, an "unseen" consumer: CPU time its cgroup used beyond what its seen
 *     processes used (processes that lived between two scans), see cpu_unseen.h;
 * the CPU time of everything else (system services, the kernel) stays unattributed as
 * "system", and idle energy follows --cpu-idle-policy. Per domain and window, exactly:
 *   sum(processes) + sum(unseen) + unattributed == the domain's measured delta,
 * and each workload gets exactly the sum of its processes' parts and its unseen part.
 * A workload's component="cpu" energy is its package + dram energy (the domains that do
 * not overlap); every domain is kept per process and unseen.
 */

struct cpu_accounting_options {
    enum idle_policy policy;
    unsigned long clk_tck; /* ticks per second of /proc time fields (sysconf) */
    bool process_metrics;  /* --cpu-process-metrics: keep per-process series */
};

struct cpu_accounting;

/* Returns 0, -EINVAL (no clk_tck, a policy other than unattributed, even, share), -ENOMEM. */
int cpu_accounting_new(const struct cpu_accounting_options *o, struct cpu_accounting **ret);
struct cpu_accounting *cpu_accounting_free(struct cpu_accounting *c);

/* What the node said at one instant: /proc/stat and the RAPL counters, read back to back
 * right after the workloads' cgroups, so that they all close the same window. */
struct cpu_node_reading {
    const char *stat_text; /* <procfs>/stat; NULL when it could not be read */
    size_t stat_len;
    uint64_t stat_ns; /* CLOCK_MONOTONIC when it was read */
    const struct rapl_reading *rapl;
    size_t n_rapl;
};

/* The RAPL counters were closed and opened again: their readings may come in another order
 * or number. Each counter starts again from its die's last reading kept in the ledger
 * (rapl_resume()), so what it moved between is booked as unattributed no_data, or its
 * time as of unknown energy where the counter may have wrapped more than once. */
void cpu_accounting_rapl_reopened(struct cpu_accounting *c, struct ledger *ledger);

/* A scan with no energy to split (RAPL unread): the processes it saw exit still end their
 * CPU series (the scan reports an exit once; cpu_accounting_tick() does this itself). */
void cpu_accounting_exits(const struct cpu_accounting *c, const struct procfs_process *rows,
                          size_t n_rows, uint64_t now_ns, struct ledger *ledger);

/*
 * One window. groups: the workloads' CPU groups, tracked for this scan
 * (cpu_groups_track(); their seen time is written here); processes: this scan's rows
 * (procfs_scan); node: /proc/stat and RAPL read now. Pure: no I/O.
 * Returns 0 or -ENOMEM; a domain whose delta cannot be split is kept as unattributed
 * no_data.
 */
int cpu_accounting_tick(struct cpu_accounting *c, struct cpu_groups *groups,
                        const struct procfs_process *processes, size_t n_processes,
                        const struct cpu_node_reading *node, uint64_t now_ns,
                        struct ledger *ledger);
