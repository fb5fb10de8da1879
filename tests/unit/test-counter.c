/* SPDX-License-Identifier: MIT */
/*
 * Energy counters: first reading, wrap at the exact modulus, resets, glitches, and the
 * unit conversion whose carried remainder makes a million small deltas add up exactly.
 */
#include "testutil.h"

#include <errno.h>

#include "counter.h"
#include "macro.h"

/* powercap's max_energy_range_uj on a common server package; the counter wraps at +1. */
#define POWERCAP_MAX_RANGE_UJ UINT64_C(262143328850)
#define MSR_MODULUS (UINT64_C(1) << 32)

static uint64_t update(struct energy_counter *c, uint64_t raw, int expected_event) {
    uint64_t delta = UINT64_MAX;

    assert_int_equal(energy_counter_update(c, raw, &delta), expected_event);
    return delta;
}

static void test_units(void **state) {
    struct energy_unit u14 = energy_unit_from_esu(14), u16 = energy_unit_from_esu(16);
    uint64_t rem = 0;

    assert_int_equal(u14.num, 1000000);
    assert_int_equal(u14.den, 16384);
    assert_int_equal(u16.den, 65536);
    assert_int_equal(energy_unit_from_esu(0).den, 1);
    assert_int_equal(energy_unit_from_esu(31).den, UINT64_C(1) << 31);

    /* 2^-14 J = 61.03515625 uJ: one unit is 61 uJ and 0.03515625 x 16384 = 576 carried. */
    assert_int_equal(energy_convert(u14, 1, &rem), 61);
    assert_int_equal(rem, 576);
    /* 10^6 / 16384 = 15625 / 256: 256 units are exactly 15 625 uJ. 255 more units give
     * 15 625 - 61 = 15 564 uJ and nothing left to carry. */
    assert_int_equal(energy_convert(u14, 255, &rem), 15564);
    assert_int_equal(rem, 0);
    /* 16384 units are exactly one joule. */
    assert_int_equal(energy_convert(u14, 16384, &rem), 1000000);
    assert_int_equal(rem, 0);
    /* 2^-16 J = 15.2587890625 uJ. */
    assert_int_equal(energy_convert(u16, 1, &rem), 15);
    assert_int_equal(rem, 16960); /* 0.2587890625 x 65536 */
    rem = 0;
    assert_int_equal(energy_convert(u16, 65536 * UINT64_C(1000), &rem), 1000000000);
    /* A unit that is not a power of two: 1/3 uJ, three deltas of one. */
    struct energy_unit third = {1, 3};
    rem = 0;
    assert_int_equal(energy_convert(third, 1, &rem), 0);
    assert_int_equal(energy_convert(third, 1, &rem), 0);
    assert_int_equal(energy_convert(third, 1, &rem), 1);
    assert_int_equal(rem, 0);
    /* 2^50 units x 10^6 overflows 64 bits on the way; the 128-bit product does not. */
    rem = 0;
    assert_int_equal(energy_convert(u14, UINT64_C(1) << 50, &rem), (UINT64_C(1) << 36) * 1000000);
    assert_int_equal(rem, 0);
}

static void test_init(void **state) {
    struct energy_counter c = {.total_uj = 5};

    ASSERT_ERRNO(energy_counter_init(&c, 0, (struct energy_unit){0, 1}, 0), EINVAL);
    ASSERT_ERRNO(energy_counter_init(&c, 0, (struct energy_unit){1, 0}, 0), EINVAL);
    assert_int_equal(c.total_uj, 5);
    ASSERT_OK(energy_counter_init(&c, 10, ENERGY_UNIT_UJ, 3));
    assert_false(c.primed);
    assert_int_equal(c.total_uj, 0);
    assert_int_equal(c.remainder, 0);
    assert_int_equal(c.modulus, 10);
    assert_int_equal(c.max_delta_raw, 3);
}

/* The first reading is only a baseline. */
static void test_first_reading(void **state) {
    struct energy_counter c;

    ASSERT_OK(energy_counter_init(&c, 0, ENERGY_UNIT_MJ, 0));
    assert_int_equal(update(&c, 987654321, COUNTER_FIRST), 0);
    assert_true(c.primed);
    assert_int_equal(c.total_uj, 0);
    assert_int_equal(update(&c, 987654321, COUNTER_ADVANCED), 0);
    assert_int_equal(update(&c, 987654322, COUNTER_ADVANCED), 1000);
    assert_int_equal(c.total_uj, 1000);
}

/* powercap: wraps at max_energy_range_uj + 1, so 0 follows max_energy_range_uj. */
static void test_powercap_wrap(void **state) {
    const uint64_t modulus = POWERCAP_MAX_RANGE_UJ + 1;
    struct energy_counter c;
    uint64_t delta = 12345;

    ASSERT_OK(energy_counter_init(&c, modulus, ENERGY_UNIT_UJ, 0));
    /* A reading equal to the modulus cannot come from this counter, not even the first. */
    ASSERT_ERRNO(energy_counter_update(&c, modulus, &delta), ERANGE);
    assert_false(c.primed);
    assert_int_equal(delta, 12345);

    update(&c, POWERCAP_MAX_RANGE_UJ - 1000, COUNTER_FIRST);
    /* One below the modulus: the highest value, no wrap. */
    assert_int_equal(update(&c, POWERCAP_MAX_RANGE_UJ, COUNTER_ADVANCED), 1000);
    /* At and one above the modulus: refused, baseline kept, delta not written. */
    ASSERT_ERRNO(energy_counter_update(&c, modulus, &delta), ERANGE);
    ASSERT_ERRNO(energy_counter_update(&c, modulus + 1, &delta), ERANGE);
    ASSERT_ERRNO(energy_counter_update(&c, UINT64_MAX, &delta), ERANGE);
    assert_int_equal(delta, 12345);
    assert_int_equal(c.last_raw, POWERCAP_MAX_RANGE_UJ);
    /* max -> 0 is one microjoule, not zero. */
    assert_int_equal(update(&c, 0, COUNTER_WRAPPED), 1);
    /* Over the boundary from 1000 below the top to 500: 1000 + 1 + 500. */
    update(&c, POWERCAP_MAX_RANGE_UJ - 1000, COUNTER_ADVANCED);
    assert_int_equal(update(&c, 500, COUNTER_WRAPPED), 1501);
    /* Total of the valid deltas: (max - 1000) - 0 was one big advance in between. */
    assert_int_equal(c.total_uj, 1000 + 1 + (POWERCAP_MAX_RANGE_UJ - 1000) + 1501);
}

/* RAPL MSR: 32-bit counter in 2^-14 J units. */
static void test_msr_wrap(void **state) {
    struct energy_counter c;
    uint64_t delta;

    ASSERT_OK(energy_counter_init(&c, MSR_MODULUS, energy_unit_from_esu(14), 0));
    update(&c, 0xFFFFFF00, COUNTER_FIRST);
    /* 0x100 units to the top, then 0x100 more: 512 units = 31 250 uJ exactly. */
    assert_int_equal(update(&c, 0x100, COUNTER_WRAPPED), 31250);
    assert_int_equal(c.remainder, 0);
    /* Equal to 2^32: not a 32-bit value. */
    ASSERT_ERRNO(energy_counter_update(&c, MSR_MODULUS, &delta), ERANGE);
    /* From 0x100 all the way round to 0xFF: 2^32 - 1 units, the longest possible delta:
     * (2^32 - 1) x 10^6 / 16384 = 262 143 999 938.96... uJ, the fraction carried. */
    assert_int_equal(update(&c, 0xFF, COUNTER_WRAPPED), 262143999938);
    assert_int_equal(c.remainder, 16384 - 1000000 % 16384);
    /* One more unit collects the carried fraction: 61.03515625 + 0.96484375 = 62. */
    assert_int_equal(update(&c, 0x100, COUNTER_ADVANCED), 62);
    assert_int_equal(c.remainder, 0);
}

/* NVML: modulus 0, never wraps; a decrease means the driver restarted the count. */
static void test_nvml_reset(void **state) {
    struct energy_counter c;

    ASSERT_OK(energy_counter_init(&c, 0, ENERGY_UNIT_MJ, 0));
    update(&c, 5000000, COUNTER_FIRST);
    assert_int_equal(update(&c, 5000100, COUNTER_ADVANCED), 100000);
    /* Reset: what was counted since the reset (1234 mJ) is the delta. */
    assert_int_equal(update(&c, 1234, COUNTER_RESET), 1234000);
    assert_int_equal(update(&c, 2234, COUNTER_ADVANCED), 1000000);
    /* A reset to exactly zero gives zero. */
    assert_int_equal(update(&c, 0, COUNTER_RESET), 0);
    /* Values near 2^64 are fine without a modulus. */
    update(&c, UINT64_MAX - 10, COUNTER_ADVANCED);
    assert_int_equal(update(&c, UINT64_MAX, COUNTER_ADVANCED), 10000);
}

/* perf's RAPL count: 64 bits in units of 2^-32 J, wrapping after 2^32 J (142 days of one
 * package at 350 W). Past 2^64 is a wrap, exact; a reset was booked as the new value alone,
 * losing what was drawn before the wrap. */
static void test_64_bit_wrap(void **state) {
    const struct energy_unit perf = {.num = 1000000, .den = UINT64_C(1) << 32};
    const uint64_t joule = UINT64_C(1) << 32;
    struct energy_counter c;

    ASSERT_OK(energy_counter_init(&c, 0, perf, 0));
    update(&c, UINT64_MAX - 1750 * joule + 1, COUNTER_FIRST);
    /* 1750 J up to 2^64, 1750 J after */
    assert_int_equal(update(&c, 1750 * joule, COUNTER_WRAPPED), 3500000000);
    assert_int_equal(update(&c, 1751 * joule, COUNTER_ADVANCED), 1000000);
    /* Down, and nearer back than forward across 2^64: a reset. */
    assert_int_equal(update(&c, 5 * joule, COUNTER_RESET), 5000000);
}

/* A jump beyond max_delta_raw is not energy: nothing is given, and the baseline stays, so a
 * spike costs nothing; two readings in a row that agree are the counter's new level. */
static void test_glitch(void **state) {
    struct energy_counter c;

    ASSERT_OK(energy_counter_init(&c, MSR_MODULUS, energy_unit_from_esu(14), 16384));
    update(&c, 100, COUNTER_FIRST);
    /* Exactly the bound is allowed: 16384 units = 1 J. */
    assert_int_equal(update(&c, 100 + 16384, COUNTER_ADVANCED), 1000000);
    /* One unit more than the bound: a glitch, delta 0, the baseline kept. */
    assert_int_equal(update(&c, 100 + 16384 + 16385, COUNTER_GLITCH), 0);
    assert_int_equal(c.last_raw, 100 + 16384);
    assert_int_equal(c.total_uj, 1000000);
    /* The next reading is plausible against the baseline: the spike was garbage, and the
     * energy of both windows is counted. */
    assert_int_equal(update(&c, 100 + 16384 + 16384, COUNTER_ADVANCED), 1000000);
    /* A new level, confirmed by the reading after it: counted from there. */
    assert_int_equal(update(&c, 200000, COUNTER_GLITCH), 0);
    assert_int_equal(update(&c, 200000 + 8192, COUNTER_RELEVELED), 500000);
    assert_int_equal(c.last_raw, 200000 + 8192);
    /* A wrap whose size is implausible is a glitch too: from 0x32D40 down to 0x10 means
     * almost 2^32 units went by. */
    assert_int_equal(update(&c, 0x10, COUNTER_GLITCH), 0);
    update(&c, 0xFFFFFFFF, COUNTER_GLITCH);
    /* A plausible wrap from the new level confirms it. */
    assert_int_equal(update(&c, 0x3FFF, COUNTER_RELEVELED), 1000000);
    assert_int_equal(c.total_uj, 3500000);

    /* NVML with a bound: a reset to a huge value is a glitch as well; the reading after it,
     * one mJ on, confirms the new level. */
    ASSERT_OK(energy_counter_init(&c, 0, ENERGY_UNIT_MJ, 1000000));
    update(&c, 50000000, COUNTER_FIRST);
    assert_int_equal(update(&c, 40000000, COUNTER_GLITCH), 0);
    assert_int_equal(update(&c, 40000001, COUNTER_RELEVELED), 1000);
    /* A spike between two good readings: the pair's energy is counted in full. */
    assert_int_equal(update(&c, 90000000, COUNTER_GLITCH), 0);
    assert_int_equal(update(&c, 40000500, COUNTER_ADVANCED), 499000);
}

/*
 * A million deltas of random size through a wrapping MSR counter, in 2^-14 J and in
 * 2^-16 J units: the microjoules handed out add up to exactly the conversion of the
 * summed raw count, and the carried remainder is the same too. No drift.
 */
static void check_no_drift(unsigned esu, uint64_t seed) {
    struct energy_unit unit = energy_unit_from_esu(esu);
    struct energy_counter c;
    uint64_t rng = seed, raw = test_rand_next(&rng) & 0xFFFFFFFF;
    uint64_t sum_raw = 0, sum_uj = 0, once_rem = 0, once_uj;
    unsigned wraps = 0;

    ASSERT_OK(energy_counter_init(&c, MSR_MODULUS, unit, 0));
    update(&c, raw, COUNTER_FIRST);
    for (unsigned i = 0; i < 1000000; i++) {
        /* Sizes from 0 to about 64 J of raw units, biased towards small ones. */
        uint64_t step = test_rand_below(&rng, UINT64_C(1) << test_rand_below(&rng, 23));
        uint64_t delta = UINT64_MAX;
        int r;

        raw += step;
        if (raw >= MSR_MODULUS) {
            raw -= MSR_MODULUS;
            wraps++;
        }
        r = energy_counter_update(&c, raw, &delta);
        assert_true(r == COUNTER_ADVANCED || r == COUNTER_WRAPPED);
        sum_raw += step;
        sum_uj += delta;
    }
    once_uj = energy_convert(unit, sum_raw, &once_rem);
    assert_int_equal(sum_uj, once_uj);
    assert_int_equal(c.total_uj, once_uj);
    assert_int_equal(c.remainder, once_rem);
    assert_true(wraps > 10); /* the wrap path was exercised many times */
}

static void test_unit_remainder_no_drift(void **state) {
    check_no_drift(14, UINT64_C(0x1414141414141414));
    check_no_drift(16, UINT64_C(0x1616161616161616));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_units),
        cmocka_unit_test(test_init),
        cmocka_unit_test(test_first_reading),
        cmocka_unit_test(test_powercap_wrap),
        cmocka_unit_test(test_msr_wrap),
        cmocka_unit_test(test_nvml_reset),
        cmocka_unit_test(test_64_bit_wrap),
        cmocka_unit_test(test_glitch),
        cmocka_unit_test(test_unit_remainder_no_drift),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
