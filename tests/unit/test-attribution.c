/* SPDX-License-Identifier: MIT */
/*
 * The attribution split: the documented cases as exact tables, the error paths, and a
 * seeded property test over 100 000 random cases (conservation, bounds, monotonicity,
 * order independence, every policy).
 */
#include "testutil.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "attribution.h"
#include "process_weights.h"
#include "counter.h"
#include "hashmap.h"
#include "macro.h"

#define UJ_PER_J UINT64_C(1000000)
#define US_PER_S UINT64_C(1000000)
#define MIB UINT64_C(1048576)

/* Runs split_energy with a fresh scratch sized for the request. */
static int split(const struct split_request *req, uint64_t *parts, struct split_result *ret) {
    struct split_scratch s = {0};
    int r;

    r = split_scratch_reserve(&s, req->n);
    if (r < 0)
        return r;
    r = split_energy(req, &s, parts, ret);
    split_scratch_done(&s);
    return r;
}

static void test_policy_names(void **state) {
    static const char *const names[] = {"even", "share", "memory", "unattributed", "allocation"};

    for (int p = 0; p < _IDLE_POLICY_MAX; p++) {
        assert_string_equal(idle_policy_to_string((enum idle_policy)p), names[p]);
        assert_int_equal(idle_policy_from_string(names[p]), p);
    }
    assert_null(idle_policy_to_string(_IDLE_POLICY_MAX));
    assert_null(idle_policy_to_string((enum idle_policy) - 1));
    ASSERT_ERRNO(idle_policy_from_string("Even"), EINVAL);
    ASSERT_ERRNO(idle_policy_from_string(""), EINVAL);
    ASSERT_ERRNO(idle_policy_from_string("unattributed "), EINVAL);
}

/*
 * 70 W for 10 s is 700 J = 700 000 000 uJ, read as two NVML total-energy readings in mJ.
 * Two processes at 80 % and 20 % SM, sampled every second for the whole window. Policy
 * `share` gives the whole delta by weight: 700 J x 0.8 = 560 J, 700 J x 0.2 = 140 J, no
 * matter what the idle power is.
 */
static void test_doc_80_20_share(void **state) {
    struct energy_counter c;
    struct util_sample samples[20];
    uint64_t t0 = 5000 * US_PER_S, t1 = t0 + 10 * US_PER_S, last_sample[2] = {0};
    uint64_t weights[2], delta_uj = 0, parts[2];
    struct sample_period period;
    struct weights_stats stats;
    struct split_result res;

    ASSERT_OK(energy_counter_init(&c, 0, ENERGY_UNIT_MJ, 0));
    assert_int_equal(energy_counter_update(&c, 123456789, &delta_uj), COUNTER_FIRST);
    assert_int_equal(energy_counter_update(&c, 123456789 + 700000, &delta_uj), COUNTER_ADVANCED);
    assert_int_equal(delta_uj, 700 * UJ_PER_J);

    for (unsigned i = 0; i < 10; i++) {
        uint64_t ts = t0 + (i + 1) * US_PER_S;

        samples[2 * i] = (struct util_sample){.consumer = 0, .sm_util = 80, .timestamp_us = ts};
        samples[2 * i + 1] = (struct util_sample){.consumer = 1, .sm_util = 20, .timestamp_us = ts};
    }
    /* Sampled once a second: a driver whose sample period is 1 s. */
    sample_period_init(&period, US_PER_S);
    ASSERT_OK(process_window_weights(samples, 20, t0, t1, &period, 2, last_sample, weights, NULL,
                                     NULL, &stats));
    assert_int_equal(stats.accepted, 20);
    /* 80 % for 10 s = 800 000 000 percent-microseconds. */
    assert_int_equal(weights[0], 800000000);
    assert_int_equal(weights[1], 200000000);

    const struct split_consumer consumers[2] = {
        {.key = 1001, .weight = weights[0], .memory = 8 * 1024 * MIB},
        {.key = 1002, .weight = weights[1], .memory = 2 * 1024 * MIB},
    };
    /* The idle power must not matter under `share`: none, 50 W, and more than measured. */
    const uint64_t idle_values[] = {0, 50 * 10 * UJ_PER_J, 1000 * UJ_PER_J};

    for (size_t k = 0; k < ARRAY_SIZE(idle_values); k++) {
        struct split_request req = {.energy_uj = delta_uj,
                                    .idle_uj = idle_values[k],
                                    .policy = IDLE_POLICY_SHARE,
                                    .n = 2,
                                    .consumers = consumers};

        ASSERT_OK(split(&req, parts, &res));
        assert_int_equal(parts[0], 560 * UJ_PER_J);
        assert_int_equal(parts[1], 140 * UJ_PER_J);
        assert_int_equal(res.unattributed_idle_uj, 0);
        assert_int_equal(res.unattributed_no_consumer_uj, 0);
        assert_false(res.exclusive);
        assert_false(res.even_fallback);
    }
}

/*
 * The DCGM case: one GPU measured 2071 J in a 30 s window shared by three processes at
 * 39 %, 1 % and 0 % SM, using 20 000, 1 500 and 500 MiB of memory. Idle power 60 W, so
 *   E_idle   = 60 W x 30 s     = 1800 J = 1 800 000 000 uJ
 *   E_active = 2071 J - 1800 J =  271 J =   271 000 000 uJ
 * Active energy by SM weight 39 : 1 : 0 (sum 40):
 *   271 000 000 x 39/40 = 264 225 000, x 1/40 = 6 775 000, x 0/40 = 0 (no remainder).
 * Idle energy by policy:
 *   even:   1 800 000 000 / 3 = 600 000 000 each (no remainder).
 *   share:  no separate idle part: 2 071 000 000 x 39/40 = 2 019 225 000, x 1/40 = 51 775 000.
 *   memory: by 20000 : 1500 : 500 MiB = 40 : 3 : 1 (sum 44):
 *           1 800 000 000 x 40/44 = 1 636 363 636 remainder 16/44
 *           1 800 000 000 x  3/44 =   122 727 272 remainder 32/44
 *           1 800 000 000 x  1/44 =    40 909 090 remainder 40/44
 *           floors add up to 1 799 999 998; the 2 uJ left go to the two largest
 *           remainders (40/44 and 32/44): 1 636 363 636, 122 727 273, 40 909 091.
 *   unattributed: the 1 800 000 000 uJ stay at device level.
 * Every row adds up to 2 071 000 000 uJ, and nobody gets the whole 2071 J.
 */
static void test_doc_2071_three_processes(void **state) {
    static const struct {
        enum idle_policy policy;
        uint64_t parts[3];
        uint64_t unattributed_idle;
    } rows[] = {
        {IDLE_POLICY_EVEN, {864225000, 606775000, 600000000}, 0},
        {IDLE_POLICY_SHARE, {2019225000, 51775000, 0}, 0},
        {IDLE_POLICY_MEMORY, {264225000 + 1636363636, 6775000 + 122727273, 40909091}, 0},
        {IDLE_POLICY_UNATTRIBUTED, {264225000, 6775000, 0}, 1800000000},
    };
    const uint64_t window_us = 30 * US_PER_S;
    const struct split_consumer consumers[3] = {
        {.key = 4101, .weight = 39 * window_us, .memory = 20000 * MIB},
        {.key = 4102, .weight = 1 * window_us, .memory = 1500 * MIB},
        {.key = 4103, .weight = 0, .memory = 500 * MIB},
    };

    for (size_t k = 0; k < ARRAY_SIZE(rows); k++) {
        struct split_request req = {.energy_uj = 2071 * UJ_PER_J,
                                    .idle_uj = 60 * 30 * UJ_PER_J,
                                    .policy = rows[k].policy,
                                    .n = 3,
                                    .consumers = consumers};
        uint64_t parts[3], sum = 0;
        struct split_result res;

        ASSERT_OK(split(&req, parts, &res));
        assert_int_equal(res.idle_uj, 1800000000);
        assert_int_equal(res.active_uj, 271000000);
        assert_int_equal(res.unattributed_idle_uj, rows[k].unattributed_idle);
        assert_int_equal(res.unattributed_no_consumer_uj, 0);
        assert_false(res.exclusive);
        assert_false(res.even_fallback);
        for (size_t i = 0; i < 3; i++) {
            assert_int_equal(parts[i], rows[k].parts[i]);
            assert_true(parts[i] < req.energy_uj);
            sum += parts[i];
        }
        assert_int_equal(sum + res.unattributed_idle_uj, 2071 * UJ_PER_J);
        /* Three different values, the largest to the 39 % process. */
        assert_true(parts[0] > parts[1]);
        assert_true(parts[1] > parts[2] || (parts[2] == 0 && parts[1] > 0));
    }
}

/* Largest remainder by hand: each row's expected parts are worked out in the comment. */
static void test_distribute_table(void **state) {
    static const struct {
        uint64_t total;
        size_t n;
        uint64_t weights[4];
        uint64_t keys[4];
        uint64_t expected[4];
    } rows[] = {
        /* 7 x 5/10 = 3.5, 7 x 3/10 = 2.1, 7 x 2/10 = 1.4: floors 6, one left for .5. */
        {7, 3, {5, 3, 2}, {1, 2, 3}, {4, 2, 1}},
        /* 10 evenly by three equal weights: 3 each, the 1 left to the smallest key. */
        {10, 3, {1, 1, 1}, {30, 10, 20}, {3, 4, 3}},
        /* All weights zero: even. 11 / 3 = 3 rest 2, to keys 10 and 20. */
        {11, 3, {0, 0, 0}, {30, 10, 20}, {3, 4, 4}},
        /* Zero weight gets zero even when units are left over: 5 x 1/2 = 2.5 each. */
        {5, 3, {1, 0, 1}, {9, 1, 8}, {2, 0, 3}},
        /* Nothing to distribute. */
        {0, 2, {3, 1}, {1, 2}, {0, 0}},
        /* One unit among four: it goes to the largest weight. */
        {1, 4, {1, 2, 4, 3}, {1, 2, 3, 4}, {0, 0, 1, 0}},
        /* Weights at 2^64-1 do not overflow: UINT64_MAX x (2^64-1) / (2 x (2^64-1)). */
        {UINT64_MAX, 2, {UINT64_MAX, UINT64_MAX}, {2, 1}, {UINT64_MAX / 2, UINT64_MAX / 2 + 1}},
    };
    struct split_scratch s = {0};

    ASSERT_OK(split_scratch_reserve(&s, 4));
    for (size_t k = 0; k < ARRAY_SIZE(rows); k++) {
        uint64_t out[4] = {0};

        ASSERT_OK(distribute(rows[k].total, rows[k].n, rows[k].weights, rows[k].keys, &s, out));
        for (size_t i = 0; i < rows[k].n; i++)
            assert_int_equal(out[i], rows[k].expected[i]);
    }

    /* NULL weights: even; NULL keys: ties broken by position. */
    uint64_t out[3];
    ASSERT_OK(distribute(8, 3, NULL, NULL, &s, out));
    assert_int_equal(out[0], 3);
    assert_int_equal(out[1], 3);
    assert_int_equal(out[2], 2);
    split_scratch_done(&s);
}

/* The reference for the largest remainder rule: every consumer ranked by a full sort. */
struct ref_rank {
    unsigned __int128 rem;
    uint64_t key;
    uint32_t index;
};

static int compare_ref_rank(const void *a, const void *b) {
    const struct ref_rank *x = a, *y = b;

    if (x->rem != y->rem)
        return x->rem > y->rem ? -1 : 1;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->index < y->index ? -1 : (x->index > y->index);
}

static void reference_distribute(uint64_t total, size_t n, const uint64_t *w, const uint64_t *keys,
                                 uint64_t *out) {
    _cleanup_(freep) struct ref_rank *rank = calloc(n, sizeof(*rank));
    unsigned __int128 sum = 0;
    uint64_t assigned = 0;

    assert_non_null(rank);
    for (size_t i = 0; i < n; i++)
        sum += w[i];
    for (size_t i = 0; i < n; i++) {
        unsigned __int128 q = (unsigned __int128)total * (sum ? w[i] : 1);
        unsigned __int128 d = sum ? sum : n;

        out[i] = (uint64_t)(q / d);
        assigned += out[i];
        rank[i] = (struct ref_rank){q % d, keys[i], (uint32_t)i};
    }
    qsort(rank, n, sizeof(*rank), compare_ref_rank);
    for (uint64_t k = 0; k < total - assigned; k++)
        out[rank[k].index]++;
}

/* Random consumers, with many equal remainders and keys (small weights, few keys) and
 * sizes past the 64 of a GPU: the same parts as ranking everyone by a full sort. */
static void test_distribute_matches_full_ranking(void **state) {
    static const size_t sizes[] = {1, 2, 3, 7, 64, 65, 300, 5000};
    struct split_scratch s = {0};
    uint64_t seed = 42;

    ASSERT_OK(split_scratch_reserve(&s, 5000));
    for (size_t z = 0; z < ARRAY_SIZE(sizes); z++)
        for (unsigned round = 0; round < 40; round++) {
            size_t n = sizes[z];
            _cleanup_(freep) uint64_t *w = calloc(n, 8), *keys = calloc(n, 8);
            _cleanup_(freep) uint64_t *got = calloc(n, 8), *want = calloc(n, 8);
            uint64_t total = test_rand_below(&seed, round % 2 ? 1000 : UINT64_C(1) << 40);
            uint64_t wmax = round % 4 == 0 ? 2 : round % 4 == 1 ? 10 : UINT64_C(1) << 32;

            assert_true(w && keys && got && want);
            for (size_t i = 0; i < n; i++) {
                /* Rounds 4k+3: weights already in rank order, the classic bad case. */
                w[i] = round % 4 == 3 ? (uint64_t)i + 1 : test_rand_below(&seed, wmax);
                keys[i] = test_rand_below(&seed, round % 3 == 0 ? 3 : 1000000);
            }
            ASSERT_OK(distribute(total, n, w, keys, &s, got));
            reference_distribute(total, n, w, keys, want);
            assert_memory_equal(got, want, n * sizeof(*got));
        }
    split_scratch_done(&s);
}

static void test_distribute_errors(void **state) {
    struct split_scratch s = {0};
    uint64_t w[3] = {1, 2, 3}, out[3] = {7, 7, 7};

    /* Nothing to give and nobody to give it to is fine; energy with nobody is not. */
    ASSERT_OK(distribute(0, 0, NULL, NULL, &s, NULL));
    ASSERT_ERRNO(distribute(1, 0, NULL, NULL, &s, out), EINVAL);
    ASSERT_ERRNO(distribute(5, 3, w, NULL, &s, NULL), EINVAL);
    ASSERT_ERRNO(distribute(5, 3, w, NULL, &s, out), ENOBUFS);
    ASSERT_ERRNO(distribute(5, SPLIT_MAX_CONSUMERS + 1, w, NULL, &s, out), EINVAL);
    assert_int_equal(out[0], 7);

    ASSERT_ERRNO(split_scratch_reserve(&s, SPLIT_MAX_CONSUMERS + 1), EINVAL);
    assert_int_equal(s.cap, 0);
    ASSERT_OK(split_scratch_reserve(&s, 3));
    assert_int_equal(s.cap, 3);
    /* A smaller request keeps the buffers. */
    ASSERT_OK(split_scratch_reserve(&s, 1));
    assert_int_equal(s.cap, 3);
    split_scratch_done(&s);
    assert_null(s.order);
    assert_int_equal(s.cap, 0);
    /* Done twice is harmless. */
    split_scratch_done(&s);
}

static void test_split_errors(void **state) {
    const struct split_consumer consumers[2] = {{.key = 1, .weight = 1}, {.key = 2, .weight = 3}};
    struct split_result res = {.active_uj = 99, .exclusive = true};
    struct split_scratch s = {0};
    uint64_t parts[2];
    struct split_request req = {
        .energy_uj = 100, .policy = IDLE_POLICY_EVEN, .n = 2, .consumers = consumers};

    ASSERT_ERRNO(split_energy(&req, &s, parts, &res), ENOBUFS);
    ASSERT_OK(split_scratch_reserve(&s, 2));
    req.policy = _IDLE_POLICY_MAX;
    ASSERT_ERRNO(split_energy(&req, &s, parts, &res), EINVAL);
    req.policy = (enum idle_policy) - 1;
    ASSERT_ERRNO(split_energy(&req, &s, parts, &res), EINVAL);
    req.policy = IDLE_POLICY_EVEN;
    ASSERT_ERRNO(split_energy(&req, &s, NULL, &res), EINVAL);
    req.consumers = NULL;
    ASSERT_ERRNO(split_energy(&req, &s, parts, &res), EINVAL);
    req.consumers = consumers;
    req.n = SPLIT_MAX_CONSUMERS + 1;
    ASSERT_ERRNO(split_energy(&req, &s, parts, &res), EINVAL);
    /* ret_result is written only on success. */
    assert_int_equal(res.active_uj, 99);
    assert_true(res.exclusive);

    req.n = 2;
    ASSERT_OK(split_energy(&req, &s, parts, &res));
    assert_int_equal(parts[0], 25);
    assert_int_equal(parts[1], 75);
    assert_false(res.exclusive);

    /* n = 0 needs neither consumers nor parts. */
    req = (struct split_request){.energy_uj = 5, .policy = IDLE_POLICY_SHARE};
    ASSERT_OK(split_energy(&req, &s, NULL, &res));
    assert_int_equal(res.unattributed_no_consumer_uj, 5);
    split_scratch_done(&s);
}

/* n = 0, n = 1, all-zero weights and idle above the measured energy, under every policy. */
static void test_split_edges(void **state) {
    const struct split_consumer one = {.key = 7, .weight = 0, .memory = 0};
    const struct split_consumer zero_w[3] = {
        {.key = 3, .memory = 100}, {.key = 1, .memory = 300}, {.key = 2, .memory = 0}};

    for (int p = 0; p < _IDLE_POLICY_MAX; p++) {
        struct split_request req = {.energy_uj = 1000, .idle_uj = 400, .policy = p};
        struct split_result res;
        uint64_t parts[3] = {0};

        /* Nobody on the device: all of it is unattributed, reason no_consumer. */
        ASSERT_OK(split(&req, parts, &res));
        assert_int_equal(res.unattributed_no_consumer_uj, 1000);
        assert_int_equal(res.unattributed_idle_uj, 0);
        assert_int_equal(res.idle_uj, 400);
        assert_int_equal(res.active_uj, 600);
        assert_false(res.exclusive);

        /* Alone: all of it, measured, whatever the idle power; under unattributed the
         * idle part stays at device level and the rest is an estimate. */
        req.n = 1;
        req.consumers = &one;
        ASSERT_OK(split(&req, parts, &res));
        if (p == IDLE_POLICY_UNATTRIBUTED) {
            assert_int_equal(parts[0], 600);
            assert_false(res.exclusive);
            assert_int_equal(res.unattributed_idle_uj, 400);
        } else {
            assert_int_equal(parts[0], 1000);
            assert_true(res.exclusive);
            assert_int_equal(res.unattributed_idle_uj, 0);
        }
        assert_int_equal(res.unattributed_no_consumer_uj, 0);

        /* Idle above the measurement is capped: everything is idle. Weights all zero. */
        req.n = 3;
        req.consumers = zero_w;
        req.idle_uj = 5000;
        ASSERT_OK(split(&req, parts, &res));
        assert_int_equal(res.idle_uj, 1000);
        assert_int_equal(res.active_uj, 0);
        assert_true(res.even_fallback);
        switch (p) {
        case IDLE_POLICY_EVEN:
        case IDLE_POLICY_ALLOCATION: /* no holders given: as even */
        case IDLE_POLICY_SHARE:      /* zero weights: even; 1000/3 = 333 rest 1, to key 1 */
            assert_int_equal(parts[0], 333);
            assert_int_equal(parts[1], 334);
            assert_int_equal(parts[2], 333);
            break;
        case IDLE_POLICY_MEMORY: /* 100 : 300 : 0 */
            assert_int_equal(parts[0], 250);
            assert_int_equal(parts[1], 750);
            assert_int_equal(parts[2], 0);
            break;
        default:
            assert_int_equal(parts[0] + parts[1] + parts[2], 0);
            assert_int_equal(res.unattributed_idle_uj, 1000);
        }

        /* Weights all zero, no idle: the active energy is split evenly (7 / 3). */
        req.idle_uj = 0;
        req.energy_uj = 7;
        ASSERT_OK(split(&req, parts, &res));
        assert_true(res.even_fallback);
        assert_int_equal(parts[0], 2);
        assert_int_equal(parts[1], 3);
        assert_int_equal(parts[2], 2);
    }
}

/* ---- property test ---- */

#define PROPERTY_CASES 100000
#define PROPERTY_BIG_N 4096

struct prop_ctx {
    uint64_t rng;
    struct split_scratch scratch;
    struct split_consumer *consumers, *permuted;
    uint64_t *parts, *parts2, *active, *weights, *keys, *perm;
};

static uint64_t rand_energy(uint64_t *rng) {
    switch (test_rand_below(rng, 6)) {
    case 0:
        return test_rand_below(rng, 4);
    case 1:
        return test_rand_below(rng, 100000);
    case 2: /* realistic windows: up to about 1 MJ */
        return test_rand_below(rng, UINT64_C(1) << 40);
    case 3: /* near the top of the range */
        return (UINT64_C(1) << 63) - test_rand_below(rng, 1000);
    default: /* anything up to 2^63 inclusive */
        return test_rand_below(rng, (UINT64_C(1) << 63) + 1);
    }
}

static size_t rand_n(uint64_t *rng, unsigned case_no) {
    uint64_t r = test_rand_below(rng, 100);

    if (case_no % 10000 == 0)
        return PROPERTY_BIG_N;
    if (r < 5)
        return (size_t)test_rand_below(rng, 2); /* n = 0 and n = 1 */
    if (r < 75)
        return 2 + (size_t)test_rand_below(rng, 7);
    if (r < 97)
        return 9 + (size_t)test_rand_below(rng, 56);
    return 65 + (size_t)test_rand_below(rng, 448);
}

static uint64_t rand_weight(uint64_t *rng, unsigned mode) {
    switch (mode) {
    case 0: /* SM percentages: many ties */
        return test_rand_below(rng, 101);
    case 1: /* time-weighted percent-microseconds */
        return test_rand_below(rng, 100 * 60 * US_PER_S);
    case 2: /* the whole 64-bit range */
        return test_rand_next(rng);
    case 3: /* at the top */
        return UINT64_MAX - test_rand_below(rng, 3);
    case 4: /* mostly idle consumers */
        return test_rand_below(rng, 4) == 0 ? test_rand_next(rng) >> test_rand_below(rng, 64) : 0;
    default: /* nobody used the device: even fallback */
        return 0;
    }
}

/* Checks that `out` is the largest-remainder split of total by w (all zero: even), ties
 * by key: each part is the floor or the floor plus one, and every consumer that got the
 * extra unit ranks before every consumer that did not. */
static void check_largest_remainder(uint64_t total, size_t n, const uint64_t *w,
                                    const uint64_t *keys, const uint64_t *out) {
    unsigned __int128 sum_w = 0, sum_out = 0;
    unsigned __int128 worst_rem = 0, best_rem = 0;
    uint64_t worst_key = 0, best_key = 0;
    bool any_bumped = false, any_plain = false, even;

    for (size_t i = 0; i < n; i++)
        sum_w += w[i];
    even = sum_w == 0;
    if (even)
        sum_w = n;
    for (size_t i = 0; i < n; i++) {
        unsigned __int128 q = (unsigned __int128)total * (even ? 1 : w[i]);
        unsigned __int128 fl = q / sum_w, rem = q % sum_w;

        sum_out += out[i];
        assert_true(out[i] == fl || out[i] == fl + 1);
        if (out[i] == fl + 1) {
            assert_true(rem > 0);
            /* The lowest-ranked consumer that got an extra unit. */
            if (!any_bumped || rem < worst_rem || (rem == worst_rem && keys[i] > worst_key)) {
                worst_rem = rem;
                worst_key = keys[i];
            }
            any_bumped = true;
        } else {
            /* The highest-ranked consumer that did not. */
            if (!any_plain || rem > best_rem || (rem == best_rem && keys[i] < best_key)) {
                best_rem = rem;
                best_key = keys[i];
            }
            any_plain = true;
        }
    }
    assert_true(sum_out == total);
    if (any_bumped && any_plain)
        assert_true(worst_rem > best_rem || (worst_rem == best_rem && worst_key < best_key));
}

static int compare_by_weight(const void *a, const void *b, void *userdata) {
    const uint64_t *w = userdata;
    uint64_t x = w[*(const uint64_t *)a], y = w[*(const uint64_t *)b];

    return x < y ? -1 : x > y;
}

/* A larger weight never gets less than any smaller weight; equal weights differ by one
 * unit at most. Uses ctx->perm as scratch for the order by weight. */
static void check_monotone(struct prop_ctx *ctx, size_t n, uint64_t *w, const uint64_t *got) {
    uint64_t below_max = 0, group_min = 0, group_max = 0;

    for (size_t i = 0; i < n; i++)
        ctx->perm[i] = i;
    qsort_r(ctx->perm, n, sizeof(*ctx->perm), compare_by_weight, w);
    for (size_t k = 0; k < n; k++) {
        uint64_t i = ctx->perm[k];

        if (k == 0 || w[i] != w[ctx->perm[k - 1]]) {
            /* A new, strictly larger weight: everything so far had a smaller one. */
            below_max = group_max > below_max ? group_max : below_max;
            group_min = group_max = got[i];
        }
        group_min = got[i] < group_min ? got[i] : group_min;
        group_max = got[i] > group_max ? got[i] : group_max;
        assert_true(got[i] >= below_max);
        assert_true(group_max - group_min <= 1);
    }
}

static void check_one_policy(struct prop_ctx *ctx, size_t n, uint64_t energy, uint64_t idle,
                             enum idle_policy policy) {
    struct split_request req = {.energy_uj = energy,
                                .idle_uj = idle,
                                .policy = policy,
                                .n = n,
                                .consumers = ctx->consumers};
    struct split_result res, res2;
    unsigned __int128 sum = 0;
    uint64_t capped_idle = idle < energy ? idle : energy;
    bool all_zero = true;

    ASSERT_OK(split_energy(&req, &ctx->scratch, ctx->parts, &res));
    assert_int_equal(res.idle_uj, capped_idle);
    assert_int_equal(res.active_uj, energy - capped_idle);
    for (size_t i = 0; i < n; i++) {
        assert_true(ctx->parts[i] <= energy);
        sum += ctx->parts[i];
        all_zero = all_zero && ctx->consumers[i].weight == 0;
    }
    /* Conservation, to the microjoule, without wrapping. */
    assert_true(sum + res.unattributed_idle_uj + res.unattributed_no_consumer_uj == energy);

    if (n == 0) {
        assert_int_equal(res.unattributed_no_consumer_uj, energy);
        return;
    }
    assert_int_equal(res.unattributed_no_consumer_uj, 0);
    if (n == 1) {
        bool keep = policy == IDLE_POLICY_UNATTRIBUTED && capped_idle > 0;

        assert_true(res.exclusive == !keep);
        assert_int_equal(ctx->parts[0], keep ? energy - capped_idle : energy);
        assert_int_equal(res.unattributed_idle_uj, keep ? capped_idle : 0);
        return;
    }
    assert_false(res.exclusive);
    assert_int_equal(res.even_fallback, all_zero);
    assert_int_equal(res.unattributed_idle_uj,
                     policy == IDLE_POLICY_UNATTRIBUTED ? res.idle_uj : 0);

    for (size_t i = 0; i < n; i++) {
        ctx->weights[i] = ctx->consumers[i].weight;
        ctx->keys[i] = ctx->consumers[i].key;
    }
    if (policy == IDLE_POLICY_SHARE) {
        /* One largest-remainder split of the whole delta by weight. */
        check_largest_remainder(energy, n, ctx->weights, ctx->keys, ctx->parts);
        check_monotone(ctx, n, ctx->weights, ctx->parts);
    } else {
        /* Active energy: a largest-remainder split by weight, monotone in weight. */
        ASSERT_OK(
            distribute(res.active_uj, n, ctx->weights, ctx->keys, &ctx->scratch, ctx->active));
        check_largest_remainder(res.active_uj, n, ctx->weights, ctx->keys, ctx->active);
        check_monotone(ctx, n, ctx->weights, ctx->active);
        /* What is left of each part is its idle share. */
        for (size_t i = 0; i < n; i++) {
            assert_true(ctx->parts[i] >= ctx->active[i]);
            ctx->parts2[i] = ctx->parts[i] - ctx->active[i];
            if (policy == IDLE_POLICY_MEMORY)
                ctx->weights[i] = ctx->consumers[i].memory;
            else
                ctx->weights[i] = 0; /* even */
        }
        if (policy == IDLE_POLICY_UNATTRIBUTED)
            for (size_t i = 0; i < n; i++)
                assert_int_equal(ctx->parts2[i], 0);
        else
            check_largest_remainder(res.idle_uj, n, ctx->weights, ctx->keys, ctx->parts2);
    }

    /* Order independence: the same consumers listed in another order get the same parts. */
    for (size_t i = 0; i < n; i++)
        ctx->perm[i] = i;
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t)test_rand_below(&ctx->rng, i + 1);
        uint64_t t = ctx->perm[i];

        ctx->perm[i] = ctx->perm[j];
        ctx->perm[j] = t;
    }
    for (size_t i = 0; i < n; i++)
        ctx->permuted[i] = ctx->consumers[ctx->perm[i]];
    req.consumers = ctx->permuted;
    ASSERT_OK(split_energy(&req, &ctx->scratch, ctx->parts2, &res2));
    for (size_t i = 0; i < n; i++)
        assert_int_equal(ctx->parts2[i], ctx->parts[ctx->perm[i]]);
    assert_int_equal(res2.active_uj, res.active_uj);
    assert_int_equal(res2.idle_uj, res.idle_uj);
    assert_int_equal(res2.unattributed_idle_uj, res.unattributed_idle_uj);
    assert_int_equal(res2.even_fallback, res.even_fallback);
}

static void test_split_properties(void **state) {
    struct prop_ctx ctx = {.rng = UINT64_C(0x6a6f756c65737461)};
    size_t cap = PROPERTY_BIG_N;
    uint64_t **arrays[] = {&ctx.parts,   &ctx.parts2, &ctx.active,
                           &ctx.weights, &ctx.keys,   &ctx.perm};
    size_t n_big = 0, n_top_energy = 0, n_huge_weight = 0;

    ASSERT_OK(split_scratch_reserve(&ctx.scratch, cap));
    ctx.consumers = calloc(cap, sizeof(*ctx.consumers));
    ctx.permuted = calloc(cap, sizeof(*ctx.permuted));
    assert_non_null(ctx.consumers);
    assert_non_null(ctx.permuted);
    for (size_t i = 0; i < ARRAY_SIZE(arrays); i++) {
        *arrays[i] = calloc(cap, sizeof(uint64_t));
        assert_non_null(*arrays[i]);
    }

    for (unsigned c = 0; c < PROPERTY_CASES; c++) {
        size_t n = rand_n(&ctx.rng, c);
        uint64_t energy = c % 10000 == 0 ? (UINT64_C(1) << 63) - c / 10000 : rand_energy(&ctx.rng);
        unsigned wmode = (unsigned)test_rand_below(&ctx.rng, 6);
        unsigned mmode = (unsigned)test_rand_below(&ctx.rng, 3);
        uint64_t salt = test_rand_next(&ctx.rng), idle;

        if (c % 10000 == 0)
            wmode = c % 20000 == 0 ? 2 : 3;
        for (size_t i = 0; i < n; i++) {
            /* hash_u64 is a bijection: distinct indices give distinct keys. */
            ctx.consumers[i] = (struct split_consumer){
                .key = hash_u64(salt + i),
                .weight = rand_weight(&ctx.rng, wmode),
                .memory = mmode == 0 ? 0 : test_rand_below(&ctx.rng, UINT64_C(80) << 30),
            };
            n_huge_weight += ctx.consumers[i].weight > UINT64_MAX / 2;
        }
        switch (test_rand_below(&ctx.rng, 4)) {
        case 0:
            idle = 0;
            break;
        case 1: /* more than measured: capped */
            idle = energy + test_rand_below(&ctx.rng, 1000);
            break;
        default:
            idle = energy == 0 ? 0 : test_rand_below(&ctx.rng, energy);
        }
        n_big += n == PROPERTY_BIG_N;
        n_top_energy += energy > (UINT64_C(1) << 62);

        for (int p = 0; p < _IDLE_POLICY_MAX; p++)
            check_one_policy(&ctx, n, energy, idle, (enum idle_policy)p);
    }
    /* The generator really reached the corners it is meant to reach. */
    assert_int_equal(n_big, PROPERTY_CASES / 10000);
    assert_true(n_top_energy > PROPERTY_CASES / 10);
    assert_true(n_huge_weight > 1000);

    for (size_t i = 0; i < ARRAY_SIZE(arrays); i++)
        free(*arrays[i]);
    free(ctx.consumers);
    free(ctx.permuted);
    split_scratch_done(&ctx.scratch);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policy_names),
        cmocka_unit_test(test_doc_80_20_share),
        cmocka_unit_test(test_doc_2071_three_processes),
        cmocka_unit_test(test_distribute_table),
        cmocka_unit_test(test_distribute_matches_full_ranking),
        cmocka_unit_test(test_distribute_errors),
        cmocka_unit_test(test_split_errors),
        cmocka_unit_test(test_split_edges),
        cmocka_unit_test(test_split_properties),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
