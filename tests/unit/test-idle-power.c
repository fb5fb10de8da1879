/* SPDX-License-Identifier: MIT */
/*
 * The learned idle power: a low percentile of the power of windows with nothing on the GPU.
 * Windows are joined into stretches of a second while nothing runs, so an energy counter that
 * moves in 100 ms steps, read every 50 ms, still gives the idle power, not 0 W.
 */
#include "testutil.h"

#include <math.h>

#include "idle_power.h"

static void test_second_windows_each_count(void **state) {
    struct idle_power ip;

    idle_power_init(&ip, -1);
    assert_false(idle_power_known(&ip));
    idle_power_observe(&ip, 70000000, 1000000); /* 70 J in 1 s */
    assert_true(idle_power_known(&ip));
    assert_true(fabs(idle_power_watts(&ip) - 70.0) < 1e-9);
    assert_int_equal(idle_power_energy_uj(&ip, 2000000), 140000000);
}

static void test_short_windows_are_joined(void **state) {
    struct idle_power ip;

    idle_power_init(&ip, -1);
    /* 70 W read every 50 ms from a counter that moves every 100 ms: 0 J, 7 J, 0 J, ... */
    for (int k = 0; k < 200; k++)
        idle_power_observe(&ip, k % 2 ? 7000000 : 0, 50000);
    assert_true(idle_power_known(&ip));
    assert_true(idle_power_watts(&ip) > 0.95 * 70 && idle_power_watts(&ip) < 1.05 * 70);
}

/* A window with a process in it ends the stretch: the joined part before it is dropped
 * (its counter steps do not cancel out with the ones after). */
static void test_a_busy_window_ends_the_stretch(void **state) {
    struct idle_power ip;

    idle_power_init(&ip, -1);
    for (int k = 0; k < 18; k++)
        idle_power_observe(&ip, 3500000, 50000); /* 0.9 s at 70 W: not yet a second */
    idle_power_interrupt(&ip);
    for (int k = 0; k < 19; k++)
        idle_power_observe(&ip, 5000000, 50000); /* 0.95 s at 100 W */
    assert_false(idle_power_known(&ip));
    idle_power_observe(&ip, 5000000, 50000); /* now a second of it */
    assert_true(idle_power_known(&ip));
    assert_true(fabs(idle_power_watts(&ip) - 100.0) < 1e-9);
}

static void test_configured_wins(void **state) {
    struct idle_power ip;

    idle_power_init(&ip, 42);
    idle_power_observe(&ip, 70000000, 1000000);
    assert_true(idle_power_known(&ip));
    assert_true(fabs(idle_power_watts(&ip) - 42.0) < 1e-9);
}

/* What a GPU's idle windows taught survives a restart: the saved observations, oldest
 * first, give a new estimator the same estimate, and both go on alike from there. The ring
 * has wrapped (70 observations of 40..109 W): the oldest 6 are gone from both. */
static void test_history_restores_the_estimate(void **state) {
    struct idle_power before, after, configured;
    uint64_t saved[IDLE_POWER_HISTORY];
    unsigned n;

    idle_power_init(&before, -1);
    for (unsigned i = 0; i < 70; i++) /* 40..109 W, shuffled by a stride coprime to 70 */
        idle_power_observe(&before, (40 + (i * 23) % 70) * 1000000ull, 1000000);
    n = idle_power_history(&before, saved);
    assert_int_equal(n, IDLE_POWER_HISTORY);
    idle_power_init(&after, -1);
    idle_power_restore(&after, saved, n);
    assert_true(idle_power_known(&after));
    assert_true(fabs(idle_power_watts(&after) - idle_power_watts(&before)) < 1e-12);
    for (unsigned i = 0; i < 10; i++) {
        idle_power_observe(&before, 30000000, 1000000);
        idle_power_observe(&after, 30000000, 1000000);
        assert_true(fabs(idle_power_watts(&after) - idle_power_watts(&before)) < 1e-12);
    }
    assert_true(fabs(idle_power_watts(&after) - 30.0) < 1e-9); /* 10 of 64 at 30 W */

    idle_power_init(&configured, 55.0);
    idle_power_restore(&configured, saved, n);
    assert_int_equal(idle_power_history(&configured, saved), 0);
    assert_true(fabs(idle_power_watts(&configured) - 55.0) < 1e-9);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_second_windows_each_count),
        cmocka_unit_test(test_short_windows_are_joined),
        cmocka_unit_test(test_a_busy_window_ends_the_stretch),
        cmocka_unit_test(test_configured_wins),
        cmocka_unit_test(test_history_restores_the_estimate),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
