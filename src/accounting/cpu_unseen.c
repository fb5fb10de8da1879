/* SPDX-License-Identifier: MIT */
#include "cpu_unseen.h"

uint64_t cpu_unseen_compute(struct cpu_unseen_group *groups, size_t n, uint64_t node_active_us,
                            uint64_t all_seen_us) {
    unsigned __int128 sum = 0, clamped = 0;
    uint64_t cap = node_active_us > all_seen_us ? node_active_us - all_seen_us : 0;

    for (size_t i = 0; i < n; i++) {
        struct cpu_unseen_group *g = &groups[i];

        g->unseen_us = g->cgroup_valid && g->cgroup_delta_us > g->seen_us
                           ? g->cgroup_delta_us - g->seen_us
                           : 0;
        sum += g->unseen_us;
    }
    if (sum <= cap)
        return (uint64_t)sum;
    /* Over the node's busy time (clock skew between the reads, coarse ticks): scale down.
     * unseen_us * cap / sum <= unseen_us, so the quotient fits in 64 bits. */
    for (size_t i = 0; i < n; i++) {
        groups[i].unseen_us = (uint64_t)((unsigned __int128)groups[i].unseen_us * cap / sum);
        clamped += groups[i].unseen_us;
    }
    return (uint64_t)clamped;
}
