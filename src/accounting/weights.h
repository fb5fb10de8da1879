/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

/*
 * Utilisation samples, such as NVML's per-process samples: "consumer c used util % of the
 * device in the sampling period that ended at timestamp", and what became of them in a
 * window. process_weights.h turns them into weights.
 */
struct util_sample {
    uint32_t consumer;     /* index into the weights array */
    uint32_t sm_util;      /* percent, 0..100 */
    uint32_t mem_util;     /* percent, 0..100 */
    uint64_t timestamp_us; /* in the device's sample clock */
};

struct weights_stats {
    size_t accepted;
    size_t dropped_invalid; /* util > 100 or consumer out of range */
    size_t dropped_stale;   /* not newer than last seen, or not after t0 */
    size_t deferred;        /* after t1: left for the next window */
};
