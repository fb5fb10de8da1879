/* SPDX-License-Identifier: MIT */
#include "process_weights.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "small_sort.h"

/* An interval longer than this is a process that was idle, not a period. */
#define PERIOD_MAX_US UINT64_C(10000000)

void sample_period_init(struct sample_period *sp, uint64_t default_us) {
    memset(sp, 0, sizeof(*sp));
    sp->default_us = default_us ? default_us : SAMPLE_PERIOD_DEFAULT_US;
    sp->estimate_us = sp->default_us;
}

void sample_period_observe(struct sample_period *sp, uint64_t interval_us) {
    if (interval_us == 0 || interval_us > PERIOD_MAX_US)
        return;
    sp->history_us[sp->next] = (uint32_t)interval_us;
    sp->next = (sp->next + 1) % SAMPLE_PERIOD_HISTORY;
    if (sp->count < SAMPLE_PERIOD_HISTORY)
        sp->count++;
    sp->fresh++;
}

static inline bool u32_before(const uint32_t *a, const uint32_t *b) {
    return *a < *b;
}

uint64_t sample_period_us(struct sample_period *sp) {
    uint32_t sorted[SAMPLE_PERIOD_HISTORY];
    unsigned n = sp->count, lo, hi;
    uint64_t limit;

    if (n < SAMPLE_PERIOD_MIN_SEEN)
        return sp->default_us;
    if (sp->fresh == 0)
        return sp->estimate_us;
    sp->fresh = 0;
    memcpy(sorted, sp->history_us, n * sizeof(*sorted));
    SMALL_SORT(sorted, n, u32_before);
    /* The single-period cluster: from the 10th percentile up to 1.5 times it. */
    lo = (n - 1) / 10;
    limit = (uint64_t)sorted[lo] * 3 / 2;
    hi = lo;
    while (hi + 1 < n && sorted[hi + 1] <= limit)
        hi++;
    sp->estimate_us = sorted[lo + (hi - lo) / 2];
    return sp->estimate_us;
}

static inline bool sample_before(const struct util_sample *a, const struct util_sample *b) {
    return a->timestamp_us != b->timestamp_us ? a->timestamp_us < b->timestamp_us
                                              : a->consumer < b->consumer;
}

static int compare_samples(const void *a, const void *b) {
    return sample_before(a, b) ? -1 : sample_before(b, a) ? 1 : 0;
}

int process_window_weights(struct util_sample *samples, size_t n_samples, uint64_t t0_us,
                           uint64_t t1_us, struct sample_period *period, size_t n_consumers,
                           uint64_t *last_sample_us, uint64_t *weights, uint64_t *early,
                           uint64_t *mem_weights, struct weights_stats *ret_stats) {
    struct weights_stats stats = {0};
    uint64_t cap_us;

    if (t1_us < t0_us || (n_samples > 0 && !samples))
        return -EINVAL;
    if (n_consumers > 0 && (!weights || !last_sample_us))
        return -EINVAL;

    cap_us = sample_period_us(period);
    if (n_consumers > 0) {
        memset(weights, 0, n_consumers * sizeof(*weights));
        if (early)
            memset(early, 0, n_consumers * sizeof(*early));
        if (mem_weights)
            memset(mem_weights, 0, n_consumers * sizeof(*mem_weights));
    }
    if (n_samples <= SMALL_SORT_MAX)
        SMALL_SORT(samples, n_samples, sample_before);
    else
        qsort(samples, n_samples, sizeof(*samples), compare_samples);

    for (size_t i = 0; i < n_samples; i++) {
        const struct util_sample *s = &samples[i];
        uint64_t ts = s->timestamp_us, last, interval, before_t0;

        if (s->sm_util > 100 || s->mem_util > 100 || s->consumer >= n_consumers) {
            stats.dropped_invalid++;
            continue;
        }
        last = last_sample_us[s->consumer];
        if (ts <= t0_us || ts <= last) {
            stats.dropped_stale++;
            continue;
        }
        if (ts > t1_us) {
            stats.deferred++;
            continue;
        }
        if (last != 0) {
            sample_period_observe(period, ts - last);
            interval = ts - last < cap_us ? ts - last : cap_us;
        } else
            interval = cap_us;
        last_sample_us[s->consumer] = ts;

        weights[s->consumer] += (uint64_t)s->sm_util * interval;
        if (mem_weights)
            mem_weights[s->consumer] += (uint64_t)s->mem_util * interval;
        /* The interval is (ts - interval, ts]; what of it lies at or before t0. */
        before_t0 = interval > ts - t0_us ? interval - (ts - t0_us) : 0;
        if (early)
            early[s->consumer] += (uint64_t)s->sm_util * before_t0;
        stats.accepted++;
    }

    if (ret_stats)
        *ret_stats = stats;
    return 0;
}
