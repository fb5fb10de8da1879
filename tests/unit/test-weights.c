/* SPDX-License-Identifier: MIT */
/*
 * Time-weighted utilisation over a window (t0, t1]: what is accepted, dropped, deferred,
 * and how the period of each sample is measured. Weights are percent x microseconds.
 */
#include "testutil.h"

#include <errno.h>

#include "macro.h"
#include "weights.h"

#define S UINT64_C(1000000) /* one second in microseconds */
#define T0 (UINT64_C(7200) * S)

static struct util_sample sm(uint32_t consumer, uint32_t sm_util, uint32_t mem_util, uint64_t ts) {
    return (struct util_sample){
        .consumer = consumer, .sm_util = sm_util, .mem_util = mem_util, .timestamp_us = ts};
}

/* Two consumers sampled together every second for 10 s. */
static void test_regular_samples(void **state) {
    struct util_sample samples[20];
    uint64_t w[2], mw[2], last_seen = 0;
    struct weights_stats st;

    for (unsigned i = 0; i < 10; i++) {
        samples[2 * i] = sm(0, 80, 30, T0 + (i + 1) * S);
        samples[2 * i + 1] = sm(1, 20, 5, T0 + (i + 1) * S);
    }
    ASSERT_OK(window_weights(samples, 20, T0, T0 + 10 * S, &last_seen, 2, w, mw, &st));
    assert_int_equal(w[0], 80 * 10 * S);
    assert_int_equal(w[1], 20 * 10 * S);
    assert_int_equal(mw[0], 30 * 10 * S);
    assert_int_equal(mw[1], 5 * 10 * S);
    assert_int_equal(st.accepted, 20);
    assert_int_equal(st.dropped_invalid + st.dropped_stale + st.deferred, 0);
    assert_int_equal(last_seen, T0 + 10 * S);
}

/* Irregular sampling: each sample covers the time since the previous device instant. */
static void test_irregular_periods(void **state) {
    /* Given out of order on purpose: the function sorts. */
    struct util_sample samples[] = {
        sm(0, 50, 0, T0 + 1000000), /* covers 600 ms */
        sm(0, 10, 0, T0 + 100000),  /* covers 100 ms, from t0 */
        sm(1, 40, 0, T0 + 400000),  /* covers 300 ms */
        sm(0, 20, 0, T0 + 400000),  /* same instant: also 300 ms */
    };
    uint64_t w[2] = {99, 99}, last_seen = T0 - 5 * S;
    struct weights_stats st;

    ASSERT_OK(
        window_weights(samples, ARRAY_SIZE(samples), T0, T0 + S, &last_seen, 2, w, NULL, &st));
    /* 10 x 100 000 + 20 x 300 000 + 50 x 600 000 = 1 000 000 + 6 000 000 + 30 000 000 */
    assert_int_equal(w[0], 37000000);
    assert_int_equal(w[1], 40 * 300000);
    assert_int_equal(st.accepted, 4);
    assert_int_equal(last_seen, T0 + S);
    /* Sorted in place by timestamp, then consumer. */
    assert_int_equal(samples[0].timestamp_us, T0 + 100000);
    assert_int_equal(samples[1].consumer, 0);
    assert_int_equal(samples[2].consumer, 1);
}

/* Three processes reported at the same instants share each period; nobody gets it twice. */
static void test_same_instant_shares_period(void **state) {
    struct util_sample samples[9];
    uint64_t w[3], last_seen = 0;
    struct weights_stats st;

    for (unsigned i = 0; i < 3; i++) {
        uint64_t ts = T0 + (i + 1) * 10 * S;

        samples[3 * i] = sm(2, 0, 1, ts);
        samples[3 * i + 1] = sm(0, 39, 20, ts);
        samples[3 * i + 2] = sm(1, 1, 2, ts);
    }
    ASSERT_OK(window_weights(samples, 9, T0, T0 + 30 * S, &last_seen, 3, w, NULL, &st));
    assert_int_equal(w[0], 39 * 30 * S);
    assert_int_equal(w[1], 1 * 30 * S);
    assert_int_equal(w[2], 0);
    assert_int_equal(st.accepted, 9);
}

/* Utilisation over 100 % (either field) and unknown consumers are dropped, not clamped. */
static void test_invalid_dropped(void **state) {
    struct util_sample samples[] = {
        sm(0, 101, 0, T0 + S),       sm(1, 50, 0, T0 + S),     sm(0, 60, 250, T0 + 2 * S),
        sm(1, 100, 100, T0 + 2 * S), sm(5, 70, 0, T0 + 2 * S), sm(0, UINT32_MAX, 0, T0 + 3 * S),
        sm(1, 100, 0, T0 + 3 * S),
    };
    uint64_t w[2], mw[2], last_seen = 0;
    struct weights_stats st;

    ASSERT_OK(
        window_weights(samples, ARRAY_SIZE(samples), T0, T0 + 3 * S, &last_seen, 2, w, mw, &st));
    assert_int_equal(w[0], 0);
    assert_int_equal(w[1], (50 + 100 + 100) * S);
    assert_int_equal(mw[0], 0);
    assert_int_equal(mw[1], 100 * S);
    assert_int_equal(st.accepted, 3);
    assert_int_equal(st.dropped_invalid, 4);
    assert_int_equal(last_seen, T0 + 3 * S);
}

/* Samples at or before last_seen, or at or before t0, are not counted again. */
static void test_stale_dropped(void **state) {
    struct util_sample samples[] = {
        sm(0, 90, 0, T0 - S), /* before the window */
        sm(0, 90, 0, T0),     /* at t0: belongs to the previous window */
        sm(0, 90, 0, T0 + S), /* at last_seen: already used */
        sm(0, 30, 0, T0 + 3 * S),
    };
    uint64_t w[1], last_seen = T0 + S;
    struct weights_stats st;

    ASSERT_OK(
        window_weights(samples, ARRAY_SIZE(samples), T0, T0 + 5 * S, &last_seen, 1, w, NULL, &st));
    /* The first fresh sample's period starts at last_seen, not at t0: 30 % x 2 s. */
    assert_int_equal(w[0], 30 * 2 * S);
    assert_int_equal(st.dropped_stale, 3);
    assert_int_equal(st.accepted, 1);
    assert_int_equal(last_seen, T0 + 3 * S);

    /* The same samples again: all stale now, and last_seen does not move back. */
    ASSERT_OK(
        window_weights(samples, ARRAY_SIZE(samples), T0, T0 + 5 * S, &last_seen, 1, w, NULL, &st));
    assert_int_equal(w[0], 0);
    assert_int_equal(st.dropped_stale, 4);
    assert_int_equal(last_seen, T0 + 3 * S);
}

/* Samples after t1 wait for the next window, and are counted there exactly once. */
static void test_deferred_to_next_window(void **state) {
    struct util_sample samples[] = {
        sm(0, 40, 0, T0 + 2 * S),  sm(1, 60, 0, T0 + 2 * S), /* in window 1 */
        sm(0, 40, 0, T0 + 4 * S),  sm(1, 60, 0, T0 + 4 * S), /* at t1: in window 1 */
        sm(0, 10, 0, T0 + 5 * S),  sm(1, 90, 0, T0 + 5 * S), /* after t1: window 2 */
        sm(0, 100, 0, T0 + 9 * S),                           /* after t2: window 3 */
    };
    uint64_t t1 = T0 + 4 * S, t2 = T0 + 8 * S, w[2], last_seen = 0;
    struct weights_stats st;

    ASSERT_OK(window_weights(samples, ARRAY_SIZE(samples), T0, t1, &last_seen, 2, w, NULL, &st));
    assert_int_equal(w[0], 40 * 4 * S);
    assert_int_equal(w[1], 60 * 4 * S);
    assert_int_equal(st.accepted, 4);
    assert_int_equal(st.deferred, 3);
    assert_int_equal(last_seen, t1);

    /* The source hands the same buffer again (it keeps samples until they are used). */
    ASSERT_OK(window_weights(samples, ARRAY_SIZE(samples), t1, t2, &last_seen, 2, w, NULL, &st));
    assert_int_equal(w[0], 10 * 1 * S);
    assert_int_equal(w[1], 90 * 1 * S);
    assert_int_equal(st.accepted, 2);
    assert_int_equal(st.dropped_stale, 4);
    assert_int_equal(st.deferred, 1);
    assert_int_equal(last_seen, T0 + 5 * S);

    /* Window 3: the period is clipped to the window: it starts at t2, which is later than
     * the last sample used (t0 + 5 s), so the sample counts 1 s, not 4 s. */
    ASSERT_OK(
        window_weights(samples, ARRAY_SIZE(samples), t2, T0 + 12 * S, &last_seen, 2, w, NULL, &st));
    assert_int_equal(w[0], 100 * 1 * S);
    assert_int_equal(w[1], 0);
    assert_int_equal(st.accepted, 1);
    assert_int_equal(last_seen, T0 + 9 * S);
}

static void test_empty_and_errors(void **state) {
    struct util_sample one = sm(0, 50, 0, T0 + S);
    uint64_t w[2] = {5, 5}, mw[2] = {5, 5}, last_seen = 42;
    struct weights_stats st = {.accepted = 77};

    /* No samples: weights zeroed, last_seen kept. */
    ASSERT_OK(window_weights(NULL, 0, T0, T0 + S, &last_seen, 2, w, mw, &st));
    assert_int_equal(w[0] + w[1] + mw[0] + mw[1], 0);
    assert_int_equal(last_seen, 42);
    assert_int_equal(st.accepted, 0);

    /* An empty window (t0 == t1) accepts nothing. */
    ASSERT_OK(window_weights(&one, 1, T0 + S, T0 + S, &last_seen, 2, w, NULL, NULL));
    assert_int_equal(w[0], 0);

    /* No consumers at all (weights may be NULL): every sample is for an unknown consumer,
     * but the device instant still moves last_seen, so it is not looked at again. */
    mw[0] = 5;
    ASSERT_OK(window_weights(&one, 1, T0, T0 + S, &last_seen, 0, NULL, mw, &st));
    assert_int_equal(st.dropped_invalid, 1);
    assert_int_equal(st.accepted, 0);
    assert_int_equal(last_seen, T0 + S);
    assert_int_equal(mw[0], 5); /* no consumers: mem_weights is not touched */
    last_seen = 42;

    /* t1 before t0: refused, nothing written. */
    w[0] = 5;
    ASSERT_ERRNO(window_weights(&one, 1, T0 + S, T0, &last_seen, 2, w, NULL, &st), EINVAL);
    assert_int_equal(w[0], 5);
    assert_int_equal(last_seen, 42);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_regular_samples),
        cmocka_unit_test(test_irregular_periods),
        cmocka_unit_test(test_same_instant_shares_period),
        cmocka_unit_test(test_invalid_dropped),
        cmocka_unit_test(test_stale_dropped),
        cmocka_unit_test(test_deferred_to_next_window),
        cmocka_unit_test(test_empty_and_errors),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
