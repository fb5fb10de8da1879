/* SPDX-License-Identifier: MIT */
/*
 * Carried remainders: a hand-checked table, 120 small processes that each get their
 * energy, zero weights, the long-run bound per consumer, and a seeded property test over
 * 100 000 random cases (exact sum, floor or floor + 1, carries within their bound).
 */
#include "testutil.h"

#include <errno.h>
#include <math.h>

#include "attribution.h"
#include "macro.h"

#define ONE SPLIT_CARRY_ONE

/*
 * 1 uJ per window among three equal weights: without carries the smallest key gets it
 * every time; with carries each gets it once in three windows.
 *   window 1: fractions 1/3 each, carries 0 -> ranks equal, key 10 gets it (carry -2/3)
 *   window 2: carries -2/3 + 1/3, 1/3 + 1/3, 1/3 + 1/3 -> key 20 (smaller of the tie)
 *   window 3: key 30 (2/3 + 1/3 = 1 against 0 and 0)
 */
static void test_three_equal_take_turns(void **state) {
    static const uint64_t w[] = {1, 1, 1}, keys[] = {10, 20, 30};
    int64_t carries[3] = {0};
    uint64_t out[3], plain[3] = {0}, got[3] = {0};
    struct split_scratch s = {0};

    ASSERT_OK(split_scratch_reserve(&s, 3));
    for (int wdw = 0; wdw < 3; wdw++) {
        ASSERT_OK(distribute(1, 3, w, keys, &s, out));
        for (int i = 0; i < 3; i++)
            plain[i] += out[i];
        ASSERT_OK(distribute_carried(1, 3, w, keys, carries, &s, out));
        assert_int_equal(out[0] + out[1] + out[2], 1);
        assert_int_equal(out[wdw], 1); /* key 10, then 20, then 30 */
        for (int i = 0; i < 3; i++)
            got[i] += out[i];
    }
    assert_int_equal(plain[0], 3);
    assert_int_equal(plain[1] + plain[2], 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(got[i], 1);
    /* 1/3 in 2^-32 units is 1431655765 (floored): after three windows each carry is
     * 3 x that - 2^32 = -1. */
    for (int i = 0; i < 3; i++)
        assert_int_equal(carries[i], 3 * INT64_C(1431655765) - ONE);
    split_scratch_done(&s);
}

/*
 * A trainer beside 120 small processes: 100 uJ per window, weight 100 for the trainer and
 * 1 for each small one, so each small share is 100/220 = 0.4545 uJ per window. The floors
 * give the trainer 45 and the others 0; all 121 remainders are equal (100/220), so without
 * carries the 55 leftover units go to the smallest keys every window: the trainer and the
 * same 54 small processes, and 66 small processes get 0 J forever. With carries each gets
 * 454 or 455 uJ in 1000 windows, its exact share 454.5 within 1 uJ.
 */
static void test_120_small_processes(void **state) {
    enum { N = 121, WINDOWS = 1000 };
    uint64_t w[N], keys[N], out[N], plain[N] = {0}, got[N] = {0};
    int64_t carries[N] = {0};
    struct split_scratch s = {0};
    unsigned plain_zero = 0;

    ASSERT_OK(split_scratch_reserve(&s, N));
    w[0] = 100;
    keys[0] = 7;
    for (size_t i = 1; i < N; i++) {
        w[i] = 1;
        keys[i] = 1000 + i;
    }
    for (int wdw = 0; wdw < WINDOWS; wdw++) {
        uint64_t sum = 0;

        ASSERT_OK(distribute(100, N, w, keys, &s, out));
        for (size_t i = 0; i < N; i++)
            plain[i] += out[i];
        ASSERT_OK(distribute_carried(100, N, w, keys, carries, &s, out));
        for (size_t i = 0; i < N; i++) {
            got[i] += out[i];
            sum += out[i];
        }
        assert_int_equal(sum, 100);
    }
    for (size_t i = 1; i < N; i++) {
        plain_zero += plain[i] == 0;
        /* exact: 1000 x 100 / 220 = 454.54... */
        assert_true(got[i] == 454 || got[i] == 455);
    }
    assert_int_equal(plain_zero, 66);
    assert_int_equal(plain[0], 46 * WINDOWS);
    /* The trainer: 1000 x 100 x 100 / 220 = 45454.5 */
    assert_true(got[0] == 45454 || got[0] == 45455);
    split_scratch_done(&s);
}

/* A zero weight gets nothing, whatever it is owed; its carry waits for it. All weights
 * zero: an even split, everyone takes part. */
static void test_zero_weight_waits(void **state) {
    static const uint64_t w[] = {0, 3, 3}, zero[] = {0, 0, 0}, keys[] = {1, 2, 3};
    int64_t carries[3] = {ONE + ONE / 2, 0, 0};
    uint64_t out[3];
    struct split_scratch s = {0};

    ASSERT_OK(split_scratch_reserve(&s, 3));
    ASSERT_OK(distribute_carried(7, 3, w, keys, carries, &s, out));
    assert_int_equal(out[0], 0);
    assert_int_equal(out[1] + out[2], 7);
    assert_int_equal(carries[0], ONE + ONE / 2);
    /* Key 2 got the leftover (equal remainders, smaller key): 4 and 3; carries -1/2, +1/2. */
    assert_int_equal(out[1], 4);
    assert_int_equal(carries[1], -ONE / 2);
    assert_int_equal(carries[2], ONE / 2);

    /* All zero: 7 among three evenly; the carry of key 1 (1.5) wins the first unit. */
    ASSERT_OK(distribute_carried(7, 3, zero, keys, carries, &s, out));
    assert_int_equal(out[0], 3);
    assert_int_equal(out[1] + out[2], 4);

    ASSERT_ERRNO(distribute_carried(7, 3, w, keys, NULL, &s, out), EINVAL);
    ASSERT_ERRNO(distribute_carried(7, 0, w, keys, carries, &s, out), EINVAL);
    ASSERT_OK(distribute_carried(0, 0, NULL, NULL, carries, &s, NULL));
    ASSERT_ERRNO(distribute_carried(7, 4, w, keys, carries, &s, out), ENOBUFS);
    split_scratch_done(&s);
}

/* Over many windows with changing weights, every consumer's total stays within 2 uJ of
 * its exact share and no carry reaches the clamp. */
static void test_long_run_bound(void **state) {
    enum { N = 40, WINDOWS = 3000 };
    uint64_t w[N], keys[N], out[N], rng = 99;
    int64_t carries[N] = {0};
    double exact[N] = {0}, got[N] = {0};
    struct split_scratch s = {0};

    ASSERT_OK(split_scratch_reserve(&s, N));
    for (size_t i = 0; i < N; i++)
        keys[i] = test_rand_next(&rng);
    for (int wdw = 0; wdw < WINDOWS; wdw++) {
        uint64_t total = test_rand_below(&rng, 50), sum_w = 0;

        for (size_t i = 0; i < N; i++) {
            w[i] = test_rand_below(&rng, 4) == 0 ? 0 : 1 + test_rand_below(&rng, 1000);
            sum_w += w[i];
        }
        ASSERT_OK(distribute_carried(total, N, w, keys, carries, &s, out));
        for (size_t i = 0; i < N; i++) {
            got[i] += (double)out[i];
            exact[i] += sum_w ? (double)total * (double)w[i] / (double)sum_w : (double)total / N;
            assert_true(carries[i] < SPLIT_CARRY_MAX && carries[i] > -SPLIT_CARRY_MAX);
        }
    }
    for (size_t i = 0; i < N; i++)
        assert_true(fabs(got[i] - exact[i]) <= 2.0);
    split_scratch_done(&s);
}

/* 100 000 random cases: exact sum, floor or floor + 1 of the exact share, zero weight
 * gets zero, and each carry moves by its fraction minus the unit it got, within bounds. */
static void test_random_cases(void **state) {
    enum { MAX_N = 300 };
    uint64_t w[MAX_N], keys[MAX_N], out[MAX_N], rng = 20240518;
    int64_t carries[MAX_N], before[MAX_N];
    struct split_scratch s = {0};

    ASSERT_OK(split_scratch_reserve(&s, MAX_N));
    for (int c = 0; c < 100000; c++) {
        size_t n = test_rand_below(&rng, 10) == 0 ? 1 + test_rand_below(&rng, MAX_N)
                                                  : 1 + test_rand_below(&rng, 12);
        uint64_t total = test_rand_next(&rng) >> test_rand_below(&rng, 64);
        unsigned __int128 sum_w = 0, sum_out = 0;

        if (c % 2)
            total &= (UINT64_C(1) << 50) - 1; /* energies up to 2^50 uJ half the time */
        for (size_t i = 0; i < n; i++) {
            unsigned kind = (unsigned)test_rand_below(&rng, 4);

            w[i] = kind == 0 ? 0 : test_rand_next(&rng) >> test_rand_below(&rng, 64);
            keys[i] = test_rand_next(&rng);
            carries[i] =
                (int64_t)test_rand_below(&rng, 2 * (uint64_t)SPLIT_CARRY_MAX + 1) - SPLIT_CARRY_MAX;
            before[i] = carries[i];
            sum_w += w[i];
        }
        ASSERT_OK(distribute_carried(total, n, w, keys, carries, &s, out));
        for (size_t i = 0; i < n; i++) {
            bool even = sum_w == 0;
            unsigned __int128 q = (unsigned __int128)total * (even ? 1 : w[i]);
            unsigned __int128 d = even ? n : sum_w;
            uint64_t floor_share = (uint64_t)(q / d);
            int64_t frac = (int64_t)(((q % d) << 32) / d), expect;

            sum_out += out[i];
            assert_true(out[i] == floor_share || out[i] == floor_share + 1);
            if (!even && w[i] == 0) {
                assert_int_equal(out[i], 0);
                assert_int_equal(carries[i], before[i]);
                continue;
            }
            expect = before[i] + frac;
            expect = expect > SPLIT_CARRY_MAX ? SPLIT_CARRY_MAX : expect;
            expect -= out[i] == floor_share ? 0 : ONE;
            expect = expect < -SPLIT_CARRY_MAX ? -SPLIT_CARRY_MAX : expect;
            assert_int_equal(carries[i], expect);
        }
        assert_true(sum_out == total);
    }
    split_scratch_done(&s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_three_equal_take_turns), cmocka_unit_test(test_120_small_processes),
        cmocka_unit_test(test_zero_weight_waits),      cmocka_unit_test(test_long_run_bound),
        cmocka_unit_test(test_random_cases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
