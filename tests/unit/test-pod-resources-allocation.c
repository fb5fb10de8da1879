/* SPDX-License-Identifier: MIT */
/* The `allocation` idle policy of the exact split: idle energy to the pods holding a GPU. */
#include "testutil.h"

#include <errno.h>
#include <stdlib.h>

#include "attribution.h"

static int split(const struct split_request *req, uint64_t *parts, struct split_result *ret) {
    struct split_scratch s = {0};
    int r;

    r = split_scratch_reserve(&s, req->n > req->n_holders ? req->n : req->n_holders);
    if (r >= 0)
        r = split_energy(req, &s, parts, ret);
    split_scratch_done(&s);
    return r;
}

/* Nobody runs on the GPU: all of the window goes to the holders, by replicas. */
static void test_no_process_all_to_holders(void **state) {
    struct split_consumer holders[] = {{.key = 10, .weight = 2}, {.key = 11, .weight = 1}};
    uint64_t hparts[2];
    struct split_result res;
    struct split_request req = {
        .energy_uj = 1000000,
        .idle_uj = 400000,
        .policy = IDLE_POLICY_ALLOCATION,
        .n_holders = 2,
        .holders = holders,
        .holder_parts = hparts,
    };

    ASSERT_OK(split(&req, NULL, &res));
    assert_int_equal(hparts[0], 666667); /* 666 666.67: the larger remainder gets the unit */
    assert_int_equal(hparts[1], 333333);
    assert_int_equal(res.allocated_uj, 1000000);
    assert_int_equal(res.unattributed_no_consumer_uj, 0);
    assert_int_equal(res.unattributed_idle_uj, 0);
    assert_false(res.allocation_fallback);
}

/* 70 W for 10 s at 80 % / 20 % SM, 55 W idle: active 150 J by SM, idle 550 J by replicas. */
static void test_processes_and_holders(void **state) {
    struct split_consumer procs[] = {{.key = 1, .weight = 80}, {.key = 2, .weight = 20}};
    struct split_consumer holders[] = {
        {.key = 10, .weight = 2}, {.key = 11, .weight = 1}, {.key = 12, .weight = 1}};
    uint64_t parts[2], hparts[3];
    struct split_result res;
    struct split_request req = {
        .energy_uj = 700000000,
        .idle_uj = 550000000,
        .policy = IDLE_POLICY_ALLOCATION,
        .n = 2,
        .consumers = procs,
        .n_holders = 3,
        .holders = holders,
        .holder_parts = hparts,
    };

    ASSERT_OK(split(&req, parts, &res));
    assert_int_equal(parts[0], 120000000);
    assert_int_equal(parts[1], 30000000);
    assert_int_equal(hparts[0], 275000000);
    assert_int_equal(hparts[1], 137500000);
    assert_int_equal(hparts[2], 137500000);
    assert_int_equal(res.active_uj, 150000000);
    assert_int_equal(res.idle_uj, 550000000);
    assert_int_equal(res.allocated_uj, 550000000);
    assert_false(res.exclusive);
    assert_false(res.even_fallback);
}

/* One process: it keeps the active part; with no idle cut, the whole measured delta. */
static void test_single_process(void **state) {
    struct split_consumer proc = {.key = 1, .weight = 0};
    struct split_consumer holder = {.key = 10, .weight = 1};
    uint64_t part, hpart;
    struct split_result res;
    struct split_request req = {
        .energy_uj = 5000001,
        .idle_uj = 2000000,
        .policy = IDLE_POLICY_ALLOCATION,
        .n = 1,
        .consumers = &proc,
        .n_holders = 1,
        .holders = &holder,
        .holder_parts = &hpart,
    };

    ASSERT_OK(split(&req, &part, &res));
    assert_int_equal(part, 3000001);
    assert_int_equal(hpart, 2000000);
    assert_false(res.exclusive); /* the idle cut is an estimate */
    assert_true(res.even_fallback);

    req.idle_uj = 0;
    ASSERT_OK(split(&req, &part, &res));
    assert_int_equal(part, 5000001);
    assert_int_equal(hpart, 0);
    assert_int_equal(res.allocated_uj, 0);
    assert_true(res.exclusive);

    /* idle above the delta is capped: everything to the holder */
    req.idle_uj = 9000000;
    ASSERT_OK(split(&req, &part, &res));
    assert_int_equal(part, 0);
    assert_int_equal(hpart, 5000001);
}

/* No allocation data: the policy behaves as even and says so. */
static void test_fallback_to_even(void **state) {
    struct split_consumer procs[] = {{.key = 1, .weight = 3}, {.key = 2, .weight = 1}};
    uint64_t parts[2], even_parts[2];
    struct split_result res, even_res;
    struct split_request req = {
        .energy_uj = 1000003,
        .idle_uj = 500001,
        .policy = IDLE_POLICY_ALLOCATION,
        .n = 2,
        .consumers = procs,
    };

    ASSERT_OK(split(&req, parts, &res));
    assert_true(res.allocation_fallback);
    req.policy = IDLE_POLICY_EVEN;
    ASSERT_OK(split(&req, even_parts, &even_res));
    assert_false(even_res.allocation_fallback);
    assert_int_equal(parts[0], even_parts[0]);
    assert_int_equal(parts[1], even_parts[1]);
    /* active 500 002 by 3:1 = 375 001.5 / 125 000.5, idle 500 001 evenly = 250 000.5
     * each: equal remainders, so the smaller key gets the leftover unit both times */
    assert_int_equal(parts[0], 375002 + 250001);
    assert_int_equal(parts[1], 125000 + 250000);

    /* and with nobody at all the window is unattributed, as before */
    req.policy = IDLE_POLICY_ALLOCATION;
    req.n = 0;
    ASSERT_OK(split(&req, NULL, &res));
    assert_int_equal(res.unattributed_no_consumer_uj, 1000003);
    assert_int_equal(res.allocated_uj, 0);
}

static void test_errors(void **state) {
    struct split_consumer holder = {.key = 10, .weight = 1};
    struct split_scratch s = {0};
    uint64_t hpart = 0;
    struct split_result res = {.allocated_uj = 77};
    struct split_request req = {
        .energy_uj = 100,
        .policy = IDLE_POLICY_ALLOCATION,
        .n_holders = 1,
        .holders = NULL,
        .holder_parts = &hpart,
    };

    ASSERT_OK(split_scratch_reserve(&s, 1));
    ASSERT_ERRNO(split_energy(&req, &s, NULL, &res), EINVAL);
    req.holders = &holder;
    req.holder_parts = NULL;
    ASSERT_ERRNO(split_energy(&req, &s, NULL, &res), EINVAL);
    req.holder_parts = &hpart;
    req.n_holders = SPLIT_MAX_CONSUMERS + 1;
    ASSERT_ERRNO(split_energy(&req, &s, NULL, &res), EINVAL);
    req.n_holders = 2; /* scratch holds one */
    ASSERT_ERRNO(split_energy(&req, &s, NULL, &res), ENOBUFS);
    assert_int_equal(res.allocated_uj, 77); /* untouched on failure */
    split_scratch_done(&s);
}

/* Random windows: processes + holders + unattributed == delta, to the microjoule. */
static void test_conservation_property(void **state) {
    uint64_t seed = 0x9e3779b97f4a7c15ULL;

    for (int round = 0; round < 2000; round++) {
        size_t n = (size_t)test_rand_below(&seed, 6), h = (size_t)test_rand_below(&seed, 6);
        struct split_consumer procs[6], holders[6];
        uint64_t parts[6], hparts[6], sum = 0;
        struct split_result res;
        struct split_request req = {
            .energy_uj = test_rand_below(&seed, 1ULL << 40),
            .idle_uj = test_rand_below(&seed, 1ULL << 40),
            .policy = IDLE_POLICY_ALLOCATION,
            .n = n,
            .consumers = procs,
            .n_holders = h,
            .holders = holders,
            .holder_parts = hparts,
        };

        for (size_t i = 0; i < n; i++)
            procs[i] = (struct split_consumer){.key = i + 1, .weight = test_rand_below(&seed, 101)};
        for (size_t i = 0; i < h; i++)
            holders[i] =
                (struct split_consumer){.key = 100 + i, .weight = 1 + test_rand_below(&seed, 4)};
        ASSERT_OK(split(&req, parts, &res));
        for (size_t i = 0; i < n; i++)
            sum += parts[i];
        for (size_t i = 0; i < h; i++)
            sum += hparts[i];
        sum += res.unattributed_idle_uj + res.unattributed_no_consumer_uj;
        assert_int_equal(sum, req.energy_uj);
        if (h > 0) {
            uint64_t hsum = 0;

            for (size_t i = 0; i < h; i++)
                hsum += hparts[i];
            assert_int_equal(hsum, res.allocated_uj);
            assert_int_equal(res.allocated_uj, n == 0 ? req.energy_uj : res.idle_uj);
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_process_all_to_holders),
        cmocka_unit_test(test_processes_and_holders),
        cmocka_unit_test(test_single_process),
        cmocka_unit_test(test_fallback_to_even),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_conservation_property),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
