/* SPDX-License-Identifier: MIT */
/* A RAPL counter across a restart: bridged from its saved reading when it cannot have wrapped
 * more than once since that reading, its time booked as unknown otherwise (and after a
 * reboot, which reset it). */
#include "testutil.h"

#include "macro.h"
#include "rapl_resume.h"

/* An MSR-style counter: 32 bits of 2^-14 J (262 kJ before it wraps). */
#define UNIT ((struct energy_unit){1000000, 16384})
#define MODULUS (UINT64_C(1) << 32)
/* This run's monotonic clock at the counter's first reading. */
#define NOW_NS (INT64_C(7) * 1000000000)

/* Resumes die's counter read since_us before now, on the same boot. */
static bool resume(struct energy_counter *c, struct ledger_rapl *lr, uint32_t die,
                   uint64_t since_us) {
    if (die < LEDGER_RAPL_MAX_DIES)
        lr->raw_read_ns[die] = NOW_NS - (int64_t)since_us * 1000;
    return rapl_resume(c, lr, die, (uint64_t)NOW_NS);
}

static struct ledger_rapl restored(uint64_t raw) {
    return (struct ledger_rapl){.raw_valid = 1,
                                .restored = 1,
                                .raw = {raw},
                                .modulus = MODULUS,
                                .unit_num = UNIT.num,
                                .unit_den = UNIT.den};
}

static void test_bridged_across_a_wrap(void **state _unused_) {
    struct ledger_rapl lr = restored(MODULUS - 16384 * 100); /* 100 J before the wrap */
    struct energy_counter c;
    uint64_t delta;

    ASSERT_OK(energy_counter_init(&c, MODULUS, UNIT, 0));
    /* 60 s down: at most 60 kJ at 1000 W, within the 262 kJ range */
    assert_true(resume(&c, &lr, 0, 60 * UINT64_C(1000000)));
    assert_int_equal(lr.restored, 0);
    /* it wrapped once while down: 100 J + 150 J */
    assert_int_equal(energy_counter_update(&c, 16384 * 150, &delta), COUNTER_WRAPPED);
    assert_int_equal(delta, 250000000);
    assert_int_equal(lr.downtime_unknown_us, 0);
}

static void test_unknown_when_it_may_wrap_twice(void **state _unused_) {
    struct ledger_rapl lr = restored(1000);
    struct energy_counter c;
    uint64_t delta;

    ASSERT_OK(energy_counter_init(&c, MODULUS, UNIT, 0));
    /* 300 s down: 300 kJ possible at 1000 W, more than the range */
    assert_false(resume(&c, &lr, 0, 300 * UINT64_C(1000000)));
    assert_int_equal(lr.downtime_unknown_us, 300 * UINT64_C(1000000));
    assert_int_equal(energy_counter_update(&c, 5000, &delta), COUNTER_FIRST);
    assert_int_equal(delta, 0); /* a new baseline, nothing guessed */
    /* consumed: the next run of this entry does not count it again */
    assert_false(resume(&c, &lr, 0, 300 * UINT64_C(1000000)));
    assert_int_equal(lr.downtime_unknown_us, 300 * UINT64_C(1000000));
}

static void test_unknown_when_the_counter_changed(void **state _unused_) {
    struct ledger_rapl lr = restored(1000);
    struct energy_counter c;

    /* perf counts from its open (no modulus), or another unit: cannot continue */
    ASSERT_OK(energy_counter_init(&c, 0, (struct energy_unit){1, 4295}, 0));
    assert_false(resume(&c, &lr, 0, 1000000));
    assert_int_equal(lr.downtime_unknown_us, 1000000);
    lr = restored(1000);
    ASSERT_OK(energy_counter_init(&c, MODULUS, (struct energy_unit){1000000, 65536}, 0));
    assert_false(resume(&c, &lr, 0, 1000000));
    lr = (struct ledger_rapl){0}; /* nothing restored: a first start */
    ASSERT_OK(energy_counter_init(&c, MODULUS, UNIT, 0));
    assert_false(resume(&c, &lr, 0, 1000000));
    assert_int_equal(lr.downtime_unknown_us, 0);
}

/* Two dies of one package, each with its own counter: each continues from its own
 * reading, and the time down is booked for each. */
static void test_each_die_from_its_own_reading(void **state _unused_) {
    struct ledger_rapl lr = restored(1000);
    struct energy_counter die0, die1;
    uint64_t delta;

    lr.raw[1] = 90000000;
    lr.raw_valid = lr.restored = 3;
    ASSERT_OK(energy_counter_init(&die0, MODULUS, UNIT, 0));
    ASSERT_OK(energy_counter_init(&die1, MODULUS, UNIT, 0));
    assert_true(resume(&die0, &lr, 0, 1000000));
    assert_int_equal(lr.restored, 2);
    assert_true(resume(&die1, &lr, 1, 1000000));
    assert_int_equal(lr.restored, 0);
    /* 10 J drawn by each die while down */
    assert_int_equal(energy_counter_update(&die0, 1000 + 16384 * 10, &delta), COUNTER_ADVANCED);
    assert_int_equal(delta, 10000000);
    assert_int_equal(energy_counter_update(&die1, 90000000 + 16384 * 10, &delta), COUNTER_ADVANCED);
    assert_int_equal(delta, 10000000);
    /* a die beyond those kept has no reading of its own */
    lr.restored = UINT32_MAX;
    assert_false(resume(&die0, &lr, LEDGER_RAPL_MAX_DIES, 1000000));
}

/* A reading restored, never read again in a run and saved again with its old time: the
 * time since it is what bounds the wraps, not the last stop's few seconds. */
static void test_bound_from_the_reading_not_the_restart(void **state _unused_) {
    struct ledger_rapl lr = restored(1000);
    struct energy_counter c;

    ASSERT_OK(energy_counter_init(&c, MODULUS, UNIT, 0));
    /* read 2 days ago (restored read_ns before this run's clock began) */
    lr.raw_read_ns[0] = NOW_NS - INT64_C(2) * 86400 * 1000000000;
    assert_false(rapl_resume(&c, &lr, 0, (uint64_t)NOW_NS));
    assert_int_equal(lr.downtime_unknown_us, UINT64_C(2) * 86400 * 1000000);
}

/* A reading from before a reboot (restored stale: the counter started again from zero) is
 * not bridged over even a short stop; the die's next reading is fresh. */
static void test_not_after_a_reboot(void **state _unused_) {
    struct ledger_rapl lr = restored(MODULUS - 5);
    struct energy_counter c;
    uint64_t delta;

    lr.raw_stale = 1;
    ASSERT_OK(energy_counter_init(&c, MODULUS, UNIT, 0));
    assert_false(resume(&c, &lr, 0, 10 * UINT64_C(1000000)));
    assert_int_equal(lr.downtime_unknown_us, 10 * UINT64_C(1000000));
    /* a new baseline: not 62 kJ of a wrap that never was */
    assert_int_equal(energy_counter_update(&c, 1000, &delta), COUNTER_FIRST);
    assert_int_equal(delta, 0);
    rapl_keep_raw(&lr,
                  &(struct rapl_reading){.die = 0, .raw = 1000, .modulus = MODULUS, .unit = UNIT},
                  (uint64_t)NOW_NS);
    assert_int_equal(lr.raw_stale, 0);
}

/* Both dies of a package stalled 600 s: the package's time of unknown energy is 600 s, not
 * 1200 (it was added once per die). */
static void test_unknown_time_once_per_package(void **state _unused_) {
    struct ledger_rapl lr = restored(1000);
    struct energy_counter die0, die1;
    uint64_t delta;

    lr.raw[1] = 2000;
    lr.raw_valid = 3;
    lr.restored = 0;
    ASSERT_OK(energy_counter_init(&die0, MODULUS, UNIT, 0));
    ASSERT_OK(energy_counter_init(&die1, MODULUS, UNIT, 0));
    assert_int_equal(energy_counter_update(&die0, 1000, &delta), COUNTER_FIRST);
    assert_int_equal(energy_counter_update(&die1, 2000, &delta), COUNTER_FIRST);
    lr.raw_read_ns[0] = lr.raw_read_ns[1] = NOW_NS - INT64_C(600) * 1000000000;
    assert_true(rapl_gap_unknown(&die0, &lr, 0, (uint64_t)NOW_NS));
    assert_true(rapl_gap_unknown(&die1, &lr, 1, (uint64_t)NOW_NS));
    assert_int_equal(lr.downtime_unknown_us, 600 * UINT64_C(1000000));
    /* at a later instant it counts again */
    assert_int_equal(energy_counter_update(&die0, 1000, &delta), COUNTER_FIRST);
    lr.raw_read_ns[0] = NOW_NS;
    assert_true(rapl_gap_unknown(&die0, &lr, 0, (uint64_t)NOW_NS + UINT64_C(600) * 1000000000));
    assert_int_equal(lr.downtime_unknown_us, 1200 * UINT64_C(1000000));
}

/* A counter that steps back without wrapping (reset at a resume from suspend, a bogus
 * reading) is taken by the counter for a wrap of nearly its whole range: 162 kJ in 10 s.
 * More than 1000 W can draw is not booked; its time is said to be of unknown energy, and
 * the reading is the new baseline. A true wrap in the same time is booked. */
static void test_implausible_step(void **state _unused_) {
    const uint64_t pc_modulus = UINT64_C(262143328851) + 1; /* powercap, in uJ */
    struct ledger_rapl lr = {.raw_valid = 1, .raw_read_ns = {NOW_NS}};
    struct energy_counter c;
    uint64_t delta, later = (uint64_t)NOW_NS + UINT64_C(10) * 1000000000;

    ASSERT_OK(energy_counter_init(&c, pc_modulus, (struct energy_unit){1, 1}, 0));
    assert_int_equal(energy_counter_update(&c, 100001300000, &delta), COUNTER_FIRST);
    assert_int_equal(energy_counter_update(&c, 5000000, &delta), COUNTER_WRAPPED);
    assert_true(delta > UINT64_C(162000000000));
    assert_true(rapl_implausible(&lr, 0, later, delta));
    assert_int_equal(lr.downtime_unknown_us, 10 * UINT64_C(1000000));
    /* a real wrap: 2 kJ in 10 s */
    ASSERT_OK(energy_counter_init(&c, pc_modulus, (struct energy_unit){1, 1}, 0));
    assert_int_equal(energy_counter_update(&c, pc_modulus - 1000000000, &delta), COUNTER_FIRST);
    lr.raw_read_ns[0] = (int64_t)later;
    assert_int_equal(energy_counter_update(&c, 1000000000, &delta), COUNTER_WRAPPED);
    assert_int_equal(delta, 2000000000);
    assert_false(rapl_implausible(&lr, 0, later + UINT64_C(10) * 1000000000, delta));
    assert_int_equal(lr.downtime_unknown_us, 10 * UINT64_C(1000000));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bridged_across_a_wrap),
        cmocka_unit_test(test_unknown_when_it_may_wrap_twice),
        cmocka_unit_test(test_unknown_when_the_counter_changed),
        cmocka_unit_test(test_each_die_from_its_own_reading),
        cmocka_unit_test(test_bound_from_the_reading_not_the_restart),
        cmocka_unit_test(test_not_after_a_reboot),
        cmocka_unit_test(test_unknown_time_once_per_package),
        cmocka_unit_test(test_implausible_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
