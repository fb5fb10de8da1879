/* SPDX-License-Identifier: MIT */
#include "testutil.h"

#include <pthread.h>
#include <time.h>

#include "clock.h"
#include "stopper.h"

/* A deadline already past returns at once, not stopping. */
static void test_past_deadline(void **state) {
    struct stopper st;

    stopper_init(&st);
    assert_false(stopper_sleep_until(&st, clock_monotonic_ns() - NSEC_PER_MSEC));
    assert_false(stopper_sleep_until(&st, 0));
    stopper_done(&st);
}

/* A short deadline is slept through (not cut short), and not stopping. */
static void test_sleeps_until_deadline(void **state) {
    struct stopper st;
    uint64_t t0 = clock_monotonic_ns(), deadline = t0 + 20 * NSEC_PER_MSEC;

    stopper_init(&st);
    assert_false(stopper_sleep_until(&st, deadline));
    assert_true(clock_monotonic_ns() >= deadline);
    stopper_done(&st);
}

static void *stop_later(void *userdata) {
    struct timespec ts = {0, 50 * 1000 * 1000};

    (void)nanosleep(&ts, NULL);
    stopper_stop(userdata);
    return NULL;
}

/* A stop from another thread ends a long sleep at once; later sleeps return at once too,
 * until rearmed. */
static void test_stop_wakes(void **state) {
    struct stopper st;
    pthread_t t;
    uint64_t t0;

    stopper_init(&st);
    t0 = clock_monotonic_ns();
    assert_int_equal(pthread_create(&t, NULL, stop_later, &st), 0);
    assert_true(stopper_sleep_until(&st, t0 + 3600 * NSEC_PER_SEC));
    assert_int_equal(pthread_join(t, NULL), 0);
    /* The hour-long deadline was cut short, soon after the stop 50 ms in. */
    assert_true(clock_monotonic_ns() - t0 < 10 * NSEC_PER_SEC);
    assert_true(stopper_stopping(&st));
    assert_true(stopper_sleep_until(&st, clock_monotonic_ns() + 3600 * NSEC_PER_SEC));

    stopper_rearm(&st);
    assert_false(stopper_stopping(&st));
    assert_false(stopper_sleep_until(&st, clock_monotonic_ns() + NSEC_PER_MSEC));
    stopper_done(&st);
}

static void *kick_later(void *userdata) {
    struct timespec ts = {0, 50 * 1000 * 1000};

    (void)nanosleep(&ts, NULL);
    stopper_kick(userdata);
    return NULL;
}

/* A kick ends one long sleep early, not stopping; one made while nobody sleeps ends the
 * next sleep at once, and only that one. */
static void test_kick_wakes_once(void **state) {
    struct stopper st;
    pthread_t t;
    uint64_t t0;

    stopper_init(&st);
    t0 = clock_monotonic_ns();
    assert_int_equal(pthread_create(&t, NULL, kick_later, &st), 0);
    assert_false(stopper_sleep_until(&st, UINT64_MAX));
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_true(clock_monotonic_ns() - t0 < 10 * NSEC_PER_SEC);
    assert_false(stopper_stopping(&st));

    stopper_kick(&st);
    t0 = clock_monotonic_ns();
    assert_false(stopper_sleep_until(&st, t0 + 3600 * NSEC_PER_SEC));
    assert_true(clock_monotonic_ns() - t0 < 10 * NSEC_PER_SEC);
    t0 = clock_monotonic_ns();
    assert_false(stopper_sleep_until(&st, t0 + 20 * NSEC_PER_MSEC));
    assert_true(clock_monotonic_ns() >= t0 + 20 * NSEC_PER_MSEC); /* the kick was used up */
    stopper_done(&st);
}

/* Fixed rate: one interval on, or one interval from now after an overrun. */
static void test_schedule_next(void **state) {
    uint64_t now = clock_monotonic_ns(), later;

    assert_int_equal(schedule_next(now + NSEC_PER_SEC, 100), now + NSEC_PER_SEC + 100);
    later = schedule_next(now - 10 * NSEC_PER_SEC, NSEC_PER_SEC);
    assert_true(later >= now + NSEC_PER_SEC);
    assert_true(later <= clock_monotonic_ns() + NSEC_PER_SEC);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_past_deadline), cmocka_unit_test(test_sleeps_until_deadline),
        cmocka_unit_test(test_stop_wakes),    cmocka_unit_test(test_kick_wakes_once),
        cmocka_unit_test(test_schedule_next),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
