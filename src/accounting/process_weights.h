/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "weights.h"

/*
 * Per-process sample weighting. The driver samples each process at its own phase within
 * its sample period: a sample says "this process used util % of the period that ended at
 * timestamp". Measured from the previous sample instant of *any* process on the device,
 * two processes sampled 42 ms apart in a 167 ms period would be credited 125 ms and 42 ms
 * per sample: a 3:1 split of two equal loads. Here each sample counts the interval since the same
 * process's own previous sample, capped at the device's sample period (a process that was idle for
 * a while, and so reported nothing, still covers one period only). A process's first sample counts
 * one period.
 *
 * A sample's interval is not clipped to the window: its whole interval is credited to the
 * window it arrives in, so over many windows every process's weight sums to its utilisation
 * x time. The part of it that lies at or before the window start is reported separately
 * (`early`), so a learner can put that activity in the window where it happened.
 */

/* The driver's per-process sample period on recent GPUs (1/6 s). */
#define SAMPLE_PERIOD_DEFAULT_US UINT64_C(167000)
#define SAMPLE_PERIOD_HISTORY 64
/* Intervals seen before the learned period replaces the default. */
#define SAMPLE_PERIOD_MIN_SEEN 8

/*
 * The device's sample period, learned from the intervals between consecutive samples of
 * the same process: the median of the recent intervals that lie within 1.5 x their 10th
 * percentile. Processes with idle periods report nothing for them, so their intervals are
 * multiples of the period; the low percentile finds the single-period cluster and the
 * median within it its centre, robust against jitter and a stray short interval.
 */
struct sample_period {
    uint64_t default_us;
    unsigned count; /* intervals stored (up to SAMPLE_PERIOD_HISTORY) */
    unsigned next;
    unsigned fresh; /* intervals stored since the estimate was computed */
    uint32_t history_us[SAMPLE_PERIOD_HISTORY];
    uint64_t estimate_us;
};

/* default_us == 0: SAMPLE_PERIOD_DEFAULT_US. A known period (e.g. from the driver) can be
 * given as the default and is used until enough intervals are seen. */
void sample_period_init(struct sample_period *sp, uint64_t default_us);
/* Records one interval between two consecutive samples of one process. Intervals of 0 or
 * over 10 s say nothing about the period and are ignored. */
void sample_period_observe(struct sample_period *sp, uint64_t interval_us);
/* The period in use: learned once SAMPLE_PERIOD_MIN_SEEN intervals were seen, else the
 * default. Recomputes the estimate if intervals arrived since the last call. */
uint64_t sample_period_us(struct sample_period *sp);

/*
 * Fills weights[0..n_consumers) with sum(util x min(interval since the consumer's own
 * previous sample, period)), in percent-microseconds; early[] (if non-NULL) with the part
 * of each weight whose time lies at or before t0_us; mem_weights[] (if non-NULL) with the
 * same as weights for memory utilisation. Sorts `samples` in place by timestamp.
 *
 * last_sample_us[0..n_consumers) is the caller's per-consumer state, kept between windows
 * with the consumer's identity (0 = no sample seen yet): a sample at or before
 * max(t0_us, last_sample_us[c]) is stale and dropped; after t1_us it is deferred (left for
 * the next window); otherwise counted, and last_sample_us[c] moves to it. Samples over
 * 100 % or for a consumer >= n_consumers are dropped. The period is taken from `period`
 * once, at the start, and the intervals seen are recorded into it for the next window.
 *
 * Returns 0 or -EINVAL (t1_us < t0_us, or n_consumers > 0 with NULL weights or
 * last_sample_us); nothing is written on error.
 */
int process_window_weights(struct util_sample *samples, size_t n_samples, uint64_t t0_us,
                           uint64_t t1_us, struct sample_period *period, size_t n_consumers,
                           uint64_t *last_sample_us, uint64_t *weights, uint64_t *early,
                           uint64_t *mem_weights, struct weights_stats *ret_stats);
