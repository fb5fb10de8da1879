/* SPDX-License-Identifier: MIT */
/*
 * Per-process sample weighting: desynchronised sample phases (the case the common-window
 * rule gets ~49 % wrong), the cap at the sample period, a first sample, the early part,
 * stale / deferred / invalid samples, and the learned sample period.
 */
#include "testutil.h"

#include <errno.h>
#include <math.h>

#include "macro.h"
#include "process_weights.h"

#define MS UINT64_C(1000)
#define S UINT64_C(1000000)
#define T0 (UINT64_C(1700000000) * S)
#define P (167 * MS)

static struct util_sample smp(uint32_t c, uint32_t sm, uint64_t ts) {
    return (struct util_sample){
        .consumer = c, .sm_util = sm, .mem_util = sm / 2, .timestamp_us = ts};
}

/* The common-window rule, for comparison: each sample counts from the previous sample of
 * any consumer (samples sorted by time). */
static void common_window_weights(const struct util_sample *s, size_t n, uint64_t t0, uint64_t t1,
                                  uint64_t *prev, uint64_t *w) {
    w[0] = w[1] = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i].timestamp_us > t0 && s[i].timestamp_us <= t1) {
            w[s[i].consumer] += (uint64_t)s[i].sm_util * (s[i].timestamp_us - MAX(*prev, t0));
            *prev = s[i].timestamp_us;
        }
}

/* Error of a split by weights w against an even truth: sum |share - 1/2|. */
static double even_split_error(const uint64_t *w) {
    double total = (double)(w[0] + w[1]);

    return fabs((double)w[0] / total - 0.5) + fabs((double)w[1] / total - 0.5);
}

/*
 * Two processes at 50 % each, both all the time, sampled every 167 ms: A at phase 0, B
 * 42 ms later. Truth: half each. The common-window rule credits A with the 125 ms since
 * B's previous sample and B with the 42 ms since A's: a 75/25 split, about half of the
 * energy misplaced. Per process, each sample counts its own 167 ms.
 */
static void test_desynchronised_phases(void **state) {
    struct util_sample samples[64], copy[64];
    uint64_t w_common[2], w_own[2] = {0}, early[2], last[2] = {0}, last_seen = 0;
    struct sample_period sp;
    size_t n = 0;

    sample_period_init(&sp, 0);
    for (uint64_t k = 1; k <= 30; k++) {
        samples[n++] = smp(0, 50, T0 + k * P);
        samples[n++] = smp(1, 50, T0 + k * P + 42 * MS);
    }
    /* Five windows of 1 s; the split is by the weights summed over them. */
    for (unsigned wdw = 0; wdw < 5; wdw++) {
        uint64_t t0 = T0 + wdw * S, t1 = t0 + S, wc[2], wo[2];

        common_window_weights(samples, n, t0, t1, &last_seen, wc);
        memcpy(copy, samples, n * sizeof(*copy));
        ASSERT_OK(process_window_weights(copy, n, t0, t1, &sp, 2, last, wo, early, NULL, NULL));
        if (wdw == 0)
            memset(w_common, 0, sizeof(w_common));
        for (int i = 0; i < 2; i++) {
            w_common[i] += wc[i];
            w_own[i] += wo[i];
        }
    }
    /* Common rule: 125 : 42, except the first sample of each window, which counts from t0:
     * 44.7 % misplaced. */
    print_message("common window: %.1f %% misplaced, own intervals: %.2f %%\n",
                  100 * even_split_error(w_common), 100 * even_split_error(w_own));
    assert_true(even_split_error(w_common) > 0.44);
    assert_true(even_split_error(w_common) < 0.50);
    /* Own intervals: within 1 % (the first sample of each counts one period too). */
    assert_true(even_split_error(w_own) < 0.01);
    /* 29 samples each in the 5 s (A at 167 ms x k up to 4843 ms, B up to 4885 ms) plus A's
     * and B's first at one period: 50 % x 167 ms x 29. */
    assert_int_equal(w_own[0], 50 * P * 29);
    assert_int_equal(w_own[1], 50 * P * 29);
}

/* A process that reported nothing for 2 s (idle) covers one period with its next sample,
 * and a sample interval shorter than the period counts as it is. */
static void test_interval_capped_at_period(void **state) {
    struct util_sample s[] = {smp(0, 80, T0 + 100 * MS), smp(0, 60, T0 + 2100 * MS),
                              smp(0, 40, T0 + 2200 * MS)};
    uint64_t w[1], early[1], mw[1], last[1] = {0};
    struct sample_period sp;
    struct weights_stats st;

    sample_period_init(&sp, 0);
    ASSERT_OK(process_window_weights(s, 3, T0, T0 + 3 * S, &sp, 1, last, w, early, mw, &st));
    /* First: one period. Second: 2 s capped at 167 ms. Third: 100 ms since the second. */
    assert_int_equal(w[0], 80 * P + 60 * P + 40 * 100 * MS);
    assert_int_equal(mw[0], 40 * P + 30 * P + 20 * 100 * MS);
    /* The first sample's period reaches 67 ms before t0. */
    assert_int_equal(early[0], 80 * 67 * MS);
    assert_int_equal(last[0], T0 + 2200 * MS);
    assert_int_equal(st.accepted, 3);
}

/* The interval since the previous sample crosses the window start: the part before t0 is
 * the early part, still credited to this window's weight. */
static void test_early_part_across_windows(void **state) {
    struct util_sample a[] = {smp(0, 100, T0 + 900 * MS)};
    struct util_sample b[] = {smp(0, 50, T0 + 1050 * MS)};
    uint64_t w[1], early[1], last[1] = {0};
    struct sample_period sp;

    sample_period_init(&sp, 0);
    ASSERT_OK(process_window_weights(a, 1, T0, T0 + S, &sp, 1, last, w, early, NULL, NULL));
    assert_int_equal(w[0], 100 * P);
    assert_int_equal(early[0], 0);
    ASSERT_OK(process_window_weights(b, 1, T0 + S, T0 + 2 * S, &sp, 1, last, w, early, NULL, NULL));
    assert_int_equal(w[0], 50 * 150 * MS);
    assert_int_equal(early[0], 50 * 100 * MS);
}

/* Stale (at or before t0 or the consumer's last sample), deferred (after t1) and invalid
 * samples; each consumer's last sample is its own. */
static void test_stale_deferred_invalid(void **state) {
    struct util_sample s[] = {
        smp(0, 90, T0),             /* at t0: stale */
        smp(0, 90, T0 + 100 * MS),  /* at consumer 0's last sample: stale */
        smp(1, 70, T0 + 100 * MS),  /* consumer 1 has not seen it: counted */
        smp(0, 101, T0 + 200 * MS), /* invalid */
        smp(2, 50, T0 + 200 * MS),  /* unknown consumer */
        smp(0, 30, T0 + 300 * MS),  /* counted: 200 ms since its last, capped at 167 */
        smp(1, 30, T0 + 1500 * MS), /* after t1: deferred */
    };
    uint64_t w[2], last[2] = {T0 + 100 * MS, 0};
    struct sample_period sp;
    struct weights_stats st;

    sample_period_init(&sp, 0);
    ASSERT_OK(
        process_window_weights(s, ARRAY_SIZE(s), T0, T0 + S, &sp, 2, last, w, NULL, NULL, &st));
    assert_int_equal(w[0], 30 * P);
    assert_int_equal(w[1], 70 * P);
    assert_int_equal(st.accepted, 2);
    assert_int_equal(st.dropped_stale, 2);
    assert_int_equal(st.dropped_invalid, 2);
    assert_int_equal(st.deferred, 1);
    assert_int_equal(last[0], T0 + 300 * MS);
    assert_int_equal(last[1], T0 + 100 * MS);
}

/* The period is learned from each process's own intervals: multiples (idle periods) and
 * jitter do not move it off the single-period cluster; a stray short interval neither. */
static void test_period_learned(void **state) {
    static const uint64_t intervals[] = {100, 200, 101, 99, 300, 100, 98, 102, 400, 100, 1, 103};
    struct sample_period sp;

    sample_period_init(&sp, 0);
    assert_int_equal(sample_period_us(&sp), SAMPLE_PERIOD_DEFAULT_US);
    sample_period_observe(&sp, 0);      /* ignored */
    sample_period_observe(&sp, 11 * S); /* ignored: an idle process, not a period */
    for (size_t i = 0; i < 7; i++)
        sample_period_observe(&sp, intervals[i] * MS);
    assert_int_equal(sample_period_us(&sp), SAMPLE_PERIOD_DEFAULT_US); /* 7 < 8 seen */
    for (size_t i = 7; i < ARRAY_SIZE(intervals); i++)
        sample_period_observe(&sp, intervals[i] * MS);
    /* Sorted: 1, 98, 99, 100 x3, 101, 102, 103, 200, 300, 400 ms. The 10th percentile is
     * the 2nd value (98 ms); the cluster up to 147 ms is 98..103; its median 100 ms. */
    assert_int_equal(sample_period_us(&sp), 100 * MS);

    /* A period given by the caller is the default until enough is seen. */
    sample_period_init(&sp, 250 * MS);
    assert_int_equal(sample_period_us(&sp), 250 * MS);
}

/* The weighting learns the period from the samples it sees. */
static void test_period_learned_from_samples(void **state) {
    struct util_sample s[24];
    uint64_t w[2], last[2] = {0};
    struct sample_period sp;

    sample_period_init(&sp, 0);
    for (unsigned k = 0; k < 12; k++) {
        s[2 * k] = smp(0, 100, T0 + (k + 1) * 100 * MS);
        s[2 * k + 1] = smp(1, 100, T0 + (k + 1) * 100 * MS + 30 * MS);
    }
    ASSERT_OK(process_window_weights(s, 24, T0, T0 + 2 * S, &sp, 2, last, w, NULL, NULL, NULL));
    /* This window still used the default period for the first samples (167 ms). */
    assert_int_equal(w[0], 100 * (P + 11 * 100 * MS));
    assert_int_equal(sample_period_us(&sp), 100 * MS);
}

static void test_errors(void **state) {
    struct util_sample one = smp(0, 50, T0 + S);
    uint64_t w[1] = {5}, last[1] = {7};
    struct sample_period sp;

    sample_period_init(&sp, 0);
    ASSERT_ERRNO(process_window_weights(&one, 1, T0 + S, T0, &sp, 1, last, w, NULL, NULL, NULL),
                 EINVAL);
    ASSERT_ERRNO(process_window_weights(&one, 1, T0, T0 + S, &sp, 1, NULL, w, NULL, NULL, NULL),
                 EINVAL);
    ASSERT_ERRNO(process_window_weights(NULL, 1, T0, T0 + S, &sp, 1, last, w, NULL, NULL, NULL),
                 EINVAL);
    assert_int_equal(w[0], 5);
    assert_int_equal(last[0], 7);
    /* No consumers: every sample is for an unknown one. */
    ASSERT_OK(
        process_window_weights(&one, 1, T0, T0 + 2 * S, &sp, 0, NULL, NULL, NULL, NULL, NULL));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_desynchronised_phases),
        cmocka_unit_test(test_interval_capped_at_period),
        cmocka_unit_test(test_early_part_across_windows),
        cmocka_unit_test(test_stale_deferred_invalid),
        cmocka_unit_test(test_period_learned),
        cmocka_unit_test(test_period_learned_from_samples),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
