/* SPDX-License-Identifier: MIT */
#include "cpu_split.h"

#include <errno.h>

/* Key of the pseudo-consumer that stands for CPU time nobody in the list used. */
#define UNTRACKED_KEY UINT64_MAX

static uint64_t scale_down(uint64_t energy, uint64_t num, uint64_t den) {
    /* energy * num / den with num <= den: fits in 64 bits after the 128-bit product. */
    return (uint64_t)((unsigned __int128)energy * num / den);
}

int cpu_split(const struct cpu_split_request *req, struct split_scratch *scratch, uint64_t *parts,
              struct cpu_split_result *ret_result) {
    struct cpu_split_result res = {0};
    unsigned __int128 tracked = 0;
    uint64_t untracked = 0, *weights, *keys, *shares;
    size_t n = req->n, m;
    int r;

    if (req->policy != IDLE_POLICY_UNATTRIBUTED && req->policy != IDLE_POLICY_EVEN &&
        req->policy != IDLE_POLICY_SHARE)
        return -EINVAL;
    if (req->active_ticks > req->total_ticks || n >= SPLIT_MAX_CONSUMERS)
        return -EINVAL;
    if (n > 0 && (!req->keys || !req->cpu_time || !parts))
        return -EINVAL;
    if (scratch->cap < n + 1)
        return -ENOBUFS;

    res.active_uj =
        req->total_ticks == 0 ? 0 : scale_down(req->energy_uj, req->active_ticks, req->total_ticks);
    res.idle_uj = req->energy_uj - res.active_uj;

    for (size_t i = 0; i < n; i++) {
        parts[i] = 0;
        tracked += req->cpu_time[i];
    }
    if (req->node_cpu_time > tracked)
        untracked = req->node_cpu_time - (uint64_t)tracked;

    if (n == 0 || (tracked == 0 && untracked == 0)) {
        /* Nobody used the CPU: active energy has no owner; only "even" still gives the
         * listed consumers the idle part. */
        res.unattributed_active_uj = res.active_uj;
        if (n > 0 && req->policy == IDLE_POLICY_EVEN) {
            r = distribute(res.idle_uj, n, NULL, req->keys, scratch, parts);
            if (r < 0)
                return r;
        } else {
            res.unattributed_idle_uj = res.idle_uj;
        }
        *ret_result = res;
        return 0;
    }

    /* Weights: the consumers' CPU time, plus one slot for untracked time (may be zero). */
    m = n + 1;
    weights = scratch->weights;
    keys = scratch->keys;
    shares = scratch->shares;
    for (size_t i = 0; i < n; i++) {
        weights[i] = req->cpu_time[i];
        keys[i] = req->keys[i];
    }
    weights[n] = untracked;
    keys[n] = UNTRACKED_KEY;

    r = distribute(res.active_uj, m, weights, keys, scratch, shares);
    if (r < 0)
        return r;
    for (size_t i = 0; i < n; i++)
        parts[i] = shares[i];
    res.unattributed_active_uj = shares[n];

    switch (req->policy) {
    case IDLE_POLICY_SHARE:
        r = distribute(res.idle_uj, m, weights, keys, scratch, shares);
        if (r < 0)
            return r;
        for (size_t i = 0; i < n; i++)
            parts[i] += shares[i];
        res.unattributed_idle_uj = shares[n];
        break;
    case IDLE_POLICY_EVEN:
        r = distribute(res.idle_uj, n, NULL, keys, scratch, shares);
        if (r < 0)
            return r;
        for (size_t i = 0; i < n; i++)
            parts[i] += shares[i];
        break;
    default:
        res.unattributed_idle_uj = res.idle_uj;
        break;
    }
    *ret_result = res;
    return 0;
}
