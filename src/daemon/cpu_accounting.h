/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

#include "attribution.h"
#include "ledger.h"
#include "procfs.h"
#include "rapl.h"

/*
 * CPU accounting: each process scan closes one window for every RAPL domain. The node's
 * /proc/stat says how much of the window the CPUs were busy; the busy part of each
 * domain's energy goes to workloads (containers, pods, SLURM jobs) by the CPU time of
 * their processes, the CPU time of everything else (system services, kernel) stays
 * unattributed as "system", and idle energy follows --cpu-idle-policy. Exact per domain:
 * workloads + unattributed == the domain's measured delta.
 */

struct cpu_accounting;

int cpu_accounting_new(enum idle_policy policy, struct cpu_accounting **ret);
struct cpu_accounting *cpu_accounting_free(struct cpu_accounting *c);

/*
 * One window. processes: this scan's rows (procfs_scan); stat_text: <procfs>/stat read
 * now; readings: RAPL read now. Returns 0 or -ENOMEM; a domain whose delta cannot be
 * split is kept as unattributed no_data.
 */
int cpu_accounting_tick(struct cpu_accounting *c, const struct procfs_process *processes,
                        size_t n_processes, const char *stat_text, size_t stat_len,
                        const struct rapl_reading *readings, size_t n_readings, uint64_t now_ns,
                        struct ledger *ledger);
