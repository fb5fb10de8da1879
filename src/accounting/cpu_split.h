/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "attribution.h"

/*
 * The exact split of one CPU energy delta (a RAPL package or DRAM domain, in uJ) over one
 * window among processes or cgroups, by CPU time.
 *
 *   active_uj = floor(energy_uj * active_ticks / total_ticks)   (node /proc/stat window)
 *   idle_uj   = energy_uj - active_uj
 *
 * Active energy is split by each consumer's CPU time. When the caller also gives the node's
 * busy CPU time in the same unit (node_cpu_time), CPU time nobody in the list used (kernel
 * threads, processes outside the cgroups asked for) keeps its share of active energy as
 * unattributed instead of inflating the consumers'. Idle energy follows the policy:
 *   IDLE_POLICY_UNATTRIBUTED (default)  kept at package level;
 *   IDLE_POLICY_EVEN                    split evenly among the consumers;
 *   IDLE_POLICY_SHARE                   split by the same weights as active energy.
 * Every division is distribute()'s largest-remainder rounding, so
 *   sum(parts) + unattributed_active_uj + unattributed_idle_uj == energy_uj exactly.
 * DRAM follows the same weights: call again with the DRAM delta and the same request.
 */

struct cpu_split_request {
    uint64_t energy_uj;
    uint64_t active_ticks;  /* node active ticks in the window (cpu_times_window) */
    uint64_t total_ticks;   /* node active + idle ticks; 0: no data, all energy is idle */
    uint64_t node_cpu_time; /* busy CPU time of the whole node in the consumers' unit; 0:
                               the consumers are everything that ran */
    enum idle_policy policy;
    size_t n;
    const uint64_t *keys;     /* stable identity per consumer, for tie-breaks */
    const uint64_t *cpu_time; /* CPU time per consumer in the window */
};

struct cpu_split_result {
    uint64_t active_uj;
    uint64_t idle_uj;
    uint64_t unattributed_active_uj; /* CPU time of nobody listed, or no consumers */
    uint64_t unattributed_idle_uj;   /* idle kept by policy, or no consumers */
};

/*
 * Splits req->energy_uj into parts[0..n). scratch must hold n + 1 consumers (one for the
 * untracked CPU time). Returns 0; -EINVAL for a policy other than the three above,
 * active_ticks > total_ticks, NULL arrays with n > 0 or n over SPLIT_MAX_CONSUMERS - 1;
 * -ENOBUFS when the scratch is too small. ret_result is written only on success.
 */
int cpu_split(const struct cpu_split_request *req, struct split_scratch *scratch, uint64_t *parts,
              struct cpu_split_result *ret_result);
