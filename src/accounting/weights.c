/* SPDX-License-Identifier: MIT */
#include "weights.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "small_sort.h"

static inline bool sample_before(const struct util_sample *a, const struct util_sample *b) {
    return a->timestamp_us != b->timestamp_us ? a->timestamp_us < b->timestamp_us
                                              : a->consumer < b->consumer;
}

static int compare_samples(const void *a, const void *b) {
    return sample_before(a, b) ? -1 : sample_before(b, a) ? 1 : 0;
}

int window_weights(struct util_sample *samples, size_t n_samples, uint64_t t0_us, uint64_t t1_us,
                   uint64_t *last_seen_us, size_t n_consumers, uint64_t *weights,
                   uint64_t *mem_weights, struct weights_stats *ret_stats) {
    struct weights_stats stats = {0};
    uint64_t floor_us, prev_us, newest = *last_seen_us;

    if (t1_us < t0_us)
        return -EINVAL;

    if (n_consumers == 0)
        mem_weights = NULL;
    else
        memset(weights, 0, n_consumers * sizeof(*weights));
    if (mem_weights)
        memset(mem_weights, 0, n_consumers * sizeof(*mem_weights));
    if (n_samples <= SMALL_SORT_MAX)
        SMALL_SORT(samples, n_samples, sample_before);
    else
        qsort(samples, n_samples, sizeof(*samples), compare_samples);

    /* Samples must be newer than both the window start and the last one we used. */
    floor_us = t0_us > *last_seen_us ? t0_us : *last_seen_us;
    prev_us = floor_us;
    for (size_t i = 0; i < n_samples;) {
        uint64_t ts = samples[i].timestamp_us;
        size_t end = i;

        while (end < n_samples && samples[end].timestamp_us == ts)
            end++;
        if (ts <= floor_us) {
            stats.dropped_stale += end - i;
            i = end;
            continue;
        }
        if (ts > t1_us) {
            stats.deferred += end - i;
            i = end;
            continue;
        }
        /* All samples of one instant share the period that ended at that instant. */
        for (; i < end; i++) {
            const struct util_sample *s = &samples[i];

            if (s->sm_util > 100 || s->mem_util > 100 || s->consumer >= n_consumers) {
                stats.dropped_invalid++;
                continue;
            }
            weights[s->consumer] += (uint64_t)s->sm_util * (ts - prev_us);
            if (mem_weights)
                mem_weights[s->consumer] += (uint64_t)s->mem_util * (ts - prev_us);
            stats.accepted++;
        }
        prev_us = ts;
        newest = ts;
    }

    *last_seen_us = newest;
    if (ret_stats)
        *ret_stats = stats;
    return 0;
}
