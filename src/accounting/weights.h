/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

/*
 * Per-consumer weights for one device and one window (t0, t1], from utilisation samples
 * such as NVML's per-process samples. A sample says "consumer c used util % of the device
 * in the sampling period that ended at timestamp". The device samples all its consumers at
 * the same instants, so the period a sample covers is the time since the previous distinct
 * sample timestamp on the device (or since the window start / last seen sample, for the
 * first one). The weight is the sum of util x period, in percent-microseconds.
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

/*
 * Fills weights[0..n_consumers) with time-weighted SM utilisation (and mem_weights with
 * the same for memory utilisation, if non-NULL). Sorts `samples` in place by timestamp.
 * *last_seen_us: samples at or before it are dropped; it is advanced to the newest
 * accepted sample. Returns 0 or -EINVAL (t1 < t0).
 */
int window_weights(struct util_sample *samples, size_t n_samples, uint64_t t0_us, uint64_t t1_us,
                   uint64_t *last_seen_us, size_t n_consumers, uint64_t *weights,
                   uint64_t *mem_weights, struct weights_stats *ret_stats);
